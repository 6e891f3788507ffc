/*
 * gen_kineto_trace.c - bench_gen_kineto_trace: synthetic PyTorch profiler (Kineto) traces
 * that look like real ones, as large as asked, fast and deterministic for a seed.
 *
 * The trace is a data-parallel (DDP) training run of a GPT-style transformer in bf16 (batch 8,
 * sequence 1024, hidden 1024, 24 layers by default), written the way Kineto writes it: the
 * object form with schemaVersion, deviceProperties, distributedInfo and baseTimeNanoseconds;
 * ProfilerStep#N user annotations; nested cpu_op events with External id, Record function id,
 * Ev Idx, Sequence number and record_shapes args (Concrete Inputs, Input type, Input Strides,
 * Input Dims); cudaLaunchKernel / cudaMemcpyAsync / cudaMemsetAsync / cudaStreamSynchronize
 * runtime calls and cuLaunchKernelEx driver calls with their correlation ids; kernels on
 * stream 7 (compute), ncclDevKernel_AllReduce_* on stream 20 (communication) and copies on
 * stream 24, each with Kineto's args; cuda_sync events; ac2g flow events (s/f);
 * gpu_user_annotation; [memory] instants with Total Allocated / Total Reserved; M metadata;
 * fractional-microsecond timestamps.
 *
 * The one idea: every rank of the run is simulated in lock step (CPU threads issuing work,
 * GPU streams as queues), and only the rank being written is recorded. Collectives end when
 * the last rank arrives, so a slow rank (--slow-rank/--slow-factor) shows as long compute on
 * that rank and as long NCCL kernels (waiting) on the others, in every file, whichever rank
 * a given call writes. Each rank draws from its own random stream, so rank r's file is the
 * same whether it is written alone or with --ranks.
 *
 * Timestamps: by default "ts" is absolute (microseconds since the Unix epoch, three decimals,
 * e.g. 1694128201545123.456) and baseTimeNanoseconds is 0, so ts + base is the wall clock
 * either way; --relative-ts writes what newer Kineto writes: ts relative to a
 * baseTimeNanoseconds rounded to the second.
 *
 * Speed: each step is simulated into a compact record array, then formatted with memcpy of
 * pre-rendered fragments and a hand-written integer formatter into a large buffer that is
 * written (or deflated with zlib) in big blocks.
 *
 * This file is also compiled into bench_ingest with BENCH_GEN_NO_MAIN, which calls
 * bench_gen_main() in a child process to make its data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

int bench_gen_main(int argc, char **argv);

/* ---- the model: kernels -------------------------------------------------- */

enum { ST_COMPUTE = 0, ST_COMM = 1, ST_COPY = 2, ST_COUNT = 3 };
static const int stream_ids[ST_COUNT] = { 7, 20, 24 };

enum kind {
    KK_KERNEL = 1, /* compute kernel (cat "kernel") */
    KK_COMM,       /* NCCL collective kernel (cat "kernel"), ends when the last rank arrives */
    KK_MEMCPY,     /* cat "gpu_memcpy" */
    KK_MEMSET,     /* cat "gpu_memset" */
    KK_WAIT,       /* cudaStreamWaitEvent: stream `stream` waits for stream `other` (cuda_sync) */
    KK_SYNC,       /* cudaStreamSynchronize: the CPU waits for `stream` (cuda_sync) */
    KK_RUNTIME,    /* a runtime call without GPU activity (cudaEventRecord) */
};

typedef struct kernel_def {
    const char *key;
    int kind;
    int stream;       /* ST_* */
    int other;        /* KK_WAIT: the stream waited for */
    double base_us;   /* duration on the reference GPU */
    const char *name; /* kernel / copy / sync name */
    int grid[3], block[3];
    int regs, smem;
    const char *bps, *wps; /* "blocks per SM", "warps per SM" as Kineto prints them */
    int occupancy;
    int64_t bytes; /* copies, sets, collectives */
} kernel_def;

#define GEMM_ARGS(gx, gy, r, sm, b, w, o) { gx, gy, 1 }, { 256, 1, 1 }, r, sm, b, w, o, 0

static const kernel_def kernel_table[] = {
    /* forward */
    { "emb_fwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      28,
      "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
      "true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
      "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
      "int, long)",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      30,
      0,
      "62.061",
      "248.242",
      100,
      0 },
    { "ln_fwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      42,
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
      "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
      { 8192, 1, 1 },
      { 32, 4, 1 },
      40,
      0,
      "75.852",
      "303.409",
      100,
      0 },
    { "gemm_qkv", KK_KERNEL, ST_COMPUTE, 0, 215,
      "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x32_stage3_warpsize4x2x1_tensor16x8x16_kernel",
      GEMM_ARGS(24, 32, 230, 98304, "5.818", "46.545", 12) },
    { "flash_fwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      290,
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
      "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
      "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
      { 8, 8, 16 },
      { 128, 1, 1 },
      255,
      49152,
      "7.758",
      "31.030",
      6,
      0 },
    { "copy",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      38,
      "void at::native::elementwise_kernel<128, 4, "
      "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
      "operator()() const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, "
      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
      "const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, "
      "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
      "operator()() const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, "
      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
      "const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
      { 16384, 1, 1 },
      { 128, 1, 1 },
      26,
      0,
      "124.121",
      "496.485",
      100,
      0 },
    { "gemm_proj", KK_KERNEL, ST_COMPUTE, 0, 78, "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn",
      GEMM_ARGS(8, 64, 238, 196608, "3.879", "31.030", 12) },
    { "dropout",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      31,
      "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, 8, "
      "bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
      "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, "
      "unsigned int, float, at::PhiloxCudaState)",
      { 864, 1, 1 },
      { 256, 1, 1 },
      32,
      0,
      "6.545",
      "52.364",
      100,
      0 },
    { "add",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      26,
      "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      24,
      0,
      "62.061",
      "248.242",
      100,
      0 },
    { "gemm_fc1", KK_KERNEL, ST_COMPUTE, 0, 285,
      "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x32_stage3_warpsize4x2x1_tensor16x8x16_kernel",
      GEMM_ARGS(32, 32, 230, 98304, "7.758", "62.061", 12) },
    { "gelu",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      58,
      "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
      "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
      "const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, "
      "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
      "const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
      { 32768, 1, 1 },
      { 128, 1, 1 },
      28,
      0,
      "248.242",
      "992.970",
      100,
      0 },
    { "gemm_fc2", KK_KERNEL, ST_COMPUTE, 0, 282, "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn",
      GEMM_ARGS(4, 64, 240, 196608, "1.939", "15.515", 12) },
    { "lm_head", KK_KERNEL, ST_COMPUTE, 0, 3400,
      "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x32_stage3_warpsize4x2x1_tensor16x8x16_kernel",
      GEMM_ARGS(393, 32, 230, 98304, "95.273", "762.182", 12) },
    { "softmax",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      820,
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
      "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
      { 8192, 1, 1 },
      { 1024, 1, 1 },
      37,
      64,
      "62.061",
      "1985.939",
      100,
      0 },
    { "nll",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      35,
      "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, "
      "long>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, "
      "long, long, long)",
      { 1, 1, 1 },
      { 32, 1, 1 },
      32,
      256,
      "0.008",
      "0.008",
      0,
      0 },
    { "fill",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      3,
      "void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, "
      "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1>)",
      { 1, 1, 1 },
      { 128, 1, 1 },
      16,
      0,
      "0.008",
      "0.030",
      0,
      0 },
    { "fill_f32",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      9,
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> "
      ">(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      16,
      0,
      "62.061",
      "248.242",
      100,
      0 },
    /* backward */
    { "nll_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      12,
      "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, "
      "long>(c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, c10::BFloat16 const*, bool, int, "
      "int, long, long)",
      { 1, 1, 1 },
      { 32, 1, 1 },
      30,
      0,
      "0.008",
      "0.008",
      0,
      0 },
    { "softmax_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      990,
      "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16, "
      "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, "
      "c10::BFloat16 const*, int)",
      { 8192, 1, 1 },
      { 1024, 1, 1 },
      40,
      64,
      "62.061",
      "1985.939",
      100,
      0 },
    { "lm_dgrad", KK_KERNEL, ST_COMPUTE, 0, 3450,
      "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize256x128x32_stage3_warpsize4x2x1_tensor16x8x16_kernel",
      GEMM_ARGS(8, 32, 230, 98304, "1.939", "15.515", 12) },
    { "lm_wgrad", KK_KERNEL, ST_COMPUTE, 0, 3500,
      "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x32_stage3_warpsize2x4x1_tensor16x8x16_kernel",
      GEMM_ARGS(8, 393, 230, 98304, "23.818", "190.545", 12) },
    { "dropout_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      30,
      "void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::masked_scale_kernel<bool, "
      "c10::BFloat16, float>(at::Tensor&, at::Tensor const&, at::Tensor const&, float)::{lambda(c10::BFloat16, "
      "bool)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::masked_scale_kernel<bool, "
      "c10::BFloat16, float>(at::Tensor&, at::Tensor const&, at::Tensor const&, float)::{lambda(c10::BFloat16, "
      "bool)#1}, at::detail::Array<char*, 3>)",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      26,
      0,
      "62.061",
      "248.242",
      100,
      0 },
    { "fc2_dgrad", KK_KERNEL, ST_COMPUTE, 0, 280, "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn",
      GEMM_ARGS(16, 64, 240, 196608, "7.758", "62.061", 12) },
    { "fc2_wgrad", KK_KERNEL, ST_COMPUTE, 0, 296, "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt",
      GEMM_ARGS(16, 8, 238, 196608, "0.970", "7.758", 12) },
    { "bias_grad",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      22,
      "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, "
      "at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, "
      "c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4> "
      ">(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, "
      "at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, "
      "float)#1}>, unsigned int, c10::BFloat16, 4>)",
      { 8, 64, 1 },
      { 32, 16, 1 },
      32,
      16,
      "3.879",
      "62.061",
      48,
      0 },
    { "gelu_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      72,
      "void at::native::vectorized_elementwise_kernel<8, "
      "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
      "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
      "const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, "
      "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
      "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
      "const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3>)",
      { 32768, 1, 1 },
      { 128, 1, 1 },
      30,
      0,
      "248.242",
      "992.970",
      100,
      0 },
    { "fc1_dgrad", KK_KERNEL, ST_COMPUTE, 0, 283, "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn",
      GEMM_ARGS(4, 64, 238, 196608, "1.939", "15.515", 12) },
    { "fc1_wgrad", KK_KERNEL, ST_COMPUTE, 0, 301, "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nt",
      GEMM_ARGS(4, 16, 240, 196608, "0.485", "3.879", 12) },
    { "ln_bwd_in",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      55,
      "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, "
      "float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, "
      "c10::BFloat16*, int)",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      38,
      1024,
      "62.061",
      "248.242",
      100,
      0 },
    { "ln_bwd_gb",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      40,
      "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, "
      "c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
      { 32, 1, 1 },
      { 32, 32, 1 },
      40,
      8448,
      "0.242",
      "7.758",
      6,
      0 },
    { "proj_dgrad", KK_KERNEL, ST_COMPUTE, 0, 75, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn",
      GEMM_ARGS(8, 64, 236, 131072, "3.879", "15.515", 12) },
    { "proj_wgrad", KK_KERNEL, ST_COMPUTE, 0, 81, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nt",
      GEMM_ARGS(8, 8, 236, 131072, "0.485", "1.939", 12) },
    { "flash_bwd_dot",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      18,
      "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, "
      "4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, "
      "cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)",
      { 8, 8, 16 },
      { 256, 1, 1 },
      32,
      0,
      "7.758",
      "62.061",
      100,
      0 },
    { "flash_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      720,
      "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, "
      "128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, "
      "cutlass::bfloat16_t> >, true, false, false, false, false, true, false, false>(pytorch_flash::Flash_bwd_params)",
      { 8, 8, 16 },
      { 256, 1, 1 },
      255,
      98304,
      "7.758",
      "62.061",
      12,
      0 },
    { "flash_bwd_dq",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      14,
      "void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, "
      "2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> "
      ">, true, false>(pytorch_flash::Flash_bwd_params, int)",
      { 8, 8, 16 },
      { 256, 1, 1 },
      40,
      16384,
      "7.758",
      "62.061",
      100,
      0 },
    { "cat",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      48,
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous "
      "namespace)::OpaqueType<2u>, unsigned int, 4, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, "
      "at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, "
      "unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned "
      "int)",
      { 1056, 3, 1 },
      { 512, 1, 1 },
      32,
      0,
      "24.000",
      "384.000",
      100,
      0 },
    { "qkv_dgrad", KK_KERNEL, ST_COMPUTE, 0, 212, "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn",
      GEMM_ARGS(4, 64, 238, 196608, "1.939", "15.515", 12) },
    { "qkv_wgrad", KK_KERNEL, ST_COMPUTE, 0, 231, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nt",
      GEMM_ARGS(8, 24, 236, 131072, "1.455", "5.818", 12) },
    { "emb_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      160,
      "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long "
      "const*, c10::BFloat16 const*, float*, int, long, int, int)",
      { 32, 1, 1 },
      { 32, 32, 1 },
      40,
      8448,
      "0.242",
      "7.758",
      6,
      0 },
    /* optimizer */
    { "adam",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      420,
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
      "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, "
      "float*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous "
      "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, "
      "double, double, bool, float*, float*)",
      { 320, 1, 1 },
      { 512, 1, 1 },
      96,
      0,
      "2.424",
      "38.788",
      50,
      0 },
    { "foreach_add",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      6,
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::UnaryOpScalarFunctor<float, 1, 1, 0>, "
      "std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous "
      "namespace)::UnaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, float)",
      { 2, 1, 1 },
      { 512, 1, 1 },
      30,
      0,
      "0.015",
      "0.242",
      0,
      0 },
    /* communication */
    { "ar_bf16",
      KK_COMM,
      ST_COMM,
      0,
      310,
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
      { 24, 1, 1 },
      { 544, 1, 1 },
      96,
      0,
      "0.182",
      "3.091",
      3,
      26214400 },
    { "ar_f32",
      KK_COMM,
      ST_COMM,
      0,
      21,
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
      { 2, 1, 1 },
      { 544, 1, 1 },
      96,
      0,
      "0.015",
      "0.258",
      0,
      4 },
    /* copies and sets */
    { "h2d",
      KK_MEMCPY,
      ST_COPY,
      0,
      7,
      "Memcpy HtoD (Pinned -> Device)",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      131072 },
    { "d2h",
      KK_MEMCPY,
      ST_COMPUTE,
      0,
      2,
      "Memcpy DtoH (Device -> Pageable)",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      4 },
    { "memset",
      KK_MEMSET,
      ST_COMPUTE,
      0,
      118,
      "Memset (Device)",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      205852672 },
    { "memset_small",
      KK_MEMSET,
      ST_COMPUTE,
      0,
      2,
      "Memset (Device)",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      4 },
    /* synchronization and runtime-only calls */
    { "wait_copy",
      KK_WAIT,
      ST_COMPUTE,
      ST_COPY,
      0,
      "Stream Wait Event",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      0 },
    { "wait_compute",
      KK_WAIT,
      ST_COMM,
      ST_COMPUTE,
      0,
      "Stream Wait Event",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      0 },
    { "wait_comm",
      KK_WAIT,
      ST_COMPUTE,
      ST_COMM,
      0,
      "Stream Wait Event",
      { 0, 0, 0 },
      { 0, 0, 0 },
      0,
      0,
      NULL,
      NULL,
      0,
      0 },
    { "sync", KK_SYNC, ST_COMPUTE, 0, 0, "Stream Sync", { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, NULL, NULL, 0, 0 },
    { "event_record", KK_RUNTIME, ST_COMPUTE, 0, 0, NULL, { 0, 0, 0 }, { 0, 0, 0 }, 0, 0, NULL, NULL, 0, 0 },
    /* the GPU-heavy shape (--shape gpu): Inductor's fused Triton kernels between the GEMMs */
    { "tri_ln",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      14,
      "triton_per_fused_add_native_layer_norm_0",
      { 8192, 1, 1 },
      { 256, 1, 1 },
      24,
      0,
      "18.963",
      "151.704",
      100,
      0 },
    { "tri_split",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      11,
      "triton_poi_fused_clone_split_view_1",
      { 24576, 1, 1 },
      { 128, 1, 1 },
      20,
      0,
      "227.556",
      "910.222",
      100,
      0 },
    { "tri_rope",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      9,
      "triton_poi_fused_add_cat_mul_neg_slice_2",
      { 16384, 1, 1 },
      { 128, 1, 1 },
      26,
      0,
      "151.704",
      "606.815",
      100,
      0 },
    { "tri_gelu",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      22,
      "triton_poi_fused_gelu_3",
      { 32768, 1, 1 },
      { 128, 1, 1 },
      22,
      0,
      "303.407",
      "1213.630",
      100,
      0 },
    { "tri_add",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      6,
      "triton_poi_fused_add_4",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      16,
      0,
      "75.852",
      "303.407",
      100,
      0 },
    { "tri_drop",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      8,
      "triton_poi_fused_native_dropout_5",
      { 8192, 1, 1 },
      { 128, 1, 1 },
      30,
      0,
      "75.852",
      "303.407",
      100,
      0 },
    { "tri_ln_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      18,
      "triton_red_fused_native_layer_norm_backward_6",
      { 8192, 1, 1 },
      { 64, 1, 1 },
      40,
      0,
      "75.852",
      "151.704",
      100,
      0 },
    { "tri_gelu_bwd",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      24,
      "triton_poi_fused_gelu_backward_7",
      { 32768, 1, 1 },
      { 128, 1, 1 },
      26,
      0,
      "303.407",
      "1213.630",
      100,
      0 },
    { "tri_sum",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      12,
      "triton_red_fused_sum_8",
      { 1024, 1, 1 },
      { 64, 8, 1 },
      32,
      0,
      "9.481",
      "151.704",
      100,
      0 },
    { "tri_cast",
      KK_KERNEL,
      ST_COMPUTE,
      0,
      5,
      "triton_poi_fused__to_copy_9",
      { 4096, 1, 1 },
      { 128, 1, 1 },
      14,
      0,
      "37.926",
      "151.704",
      100,
      0 },
};
#define NKERNELS ((int)(sizeof kernel_table / sizeof kernel_table[0]))

/* The runtime (or driver) call that issues each kind of GPU work. */
static const struct {
    const char *name, *cat;
    int cbid;
    double us;
} launch_calls[] = {
    [KK_KERNEL] = { "cudaLaunchKernel", "cuda_runtime", 211, 4.6 },
    [KK_COMM] = { "cuLaunchKernelEx", "cuda_driver", 652, 6.8 },
    [KK_MEMCPY] = { "cudaMemcpyAsync", "cuda_runtime", 41, 8.9 },
    [KK_MEMSET] = { "cudaMemsetAsync", "cuda_runtime", 51, 5.2 },
    [KK_WAIT] = { "cudaStreamWaitEvent", "cuda_runtime", 146, 2.1 },
    [KK_SYNC] = { "cudaStreamSynchronize", "cuda_runtime", 131, 3.0 },
    [KK_RUNTIME] = { "cudaEventRecord", "cuda_runtime", 135, 2.4 },
};

/* ---- the model: operator trees ------------------------------------------- */

/*
 * Operator trees in a small line format: one operator per line, one leading space per level
 * of nesting, then the name and optional fields separated by " | ":
 *   k=KEY,KEY   GPU work issued at the end of the operator (kernel_table keys)
 *   m=BYTES     the operator allocates BYTES of device memory (a [memory] instant)
 *   t=CODES     "Input type", one letter per input: B c10::BFloat16, F float, L long int,
 *               S Scalar, l ScalarList, D Device, b bool, T TensorList, _ ""
 *   d=DIMS      "Input Dims": comma-separated entries, each "AxBxC" or empty
 *   c=US        CPU time of the operator itself (default from the name)
 *   s           the operator has a "Sequence number" (autograd records it)
 *   u           a user annotation (record_function), not a cpu_op
 *   =BLOCK      (instead of a name) include another block at this depth
 * Operators without t= get their name's default inputs (op_defaults) or none.
 */
typedef struct block_def {
    const char *name, *text;
} block_def;

static const block_def blocks[] = {
    { "tr", "aten::transpose | t=BSS | d=8x1024x16x64,,\n"
            " aten::as_strided | t=B___ | d=8x1024x16x64,,,\n" },
    { "tw", "aten::t | t=B | d=1024x1024\n"
            " aten::transpose | t=BSS | d=1024x1024,,\n"
            "  aten::as_strided | t=B___ | d=1024x1024,,,\n" },
    { "ln", "aten::layer_norm | s | t=BlBBSb | d=8x1024x1024,,1024,1024,,\n"
            " aten::native_layer_norm | k=ln_fwd | t=BlBBS | d=8x1024x1024,,1024,1024,\n"
            "  aten::empty_like\n"
            "   aten::empty | m=16777216\n"
            "  aten::empty | m=32768\n"
            "  aten::empty | m=32768\n" },
    { "lin_qkv", "aten::linear | s | t=BBB | d=8x1024x1024,3072x1024,3072\n"
                 " =tw\n"
                 " aten::view | t=Bl | d=8x1024x1024,\n"
                 " aten::addmm | k=gemm_qkv | m=50331648 | t=BBBSS | d=3072,8192x1024,1024x3072,,\n"
                 " aten::view | t=Bl | d=8192x3072,\n" },
    { "lin_proj", "aten::linear | s | t=BBB | d=8x1024x1024,1024x1024,1024\n"
                  " =tw\n"
                  " aten::view | t=Bl | d=8x1024x1024,\n"
                  " aten::addmm | k=gemm_proj | m=16777216 | t=BBBSS | d=1024,8192x1024,1024x1024,,\n"
                  " aten::view | t=Bl | d=8192x1024,\n" },
    { "lin_fc1", "aten::linear | s | t=BBB | d=8x1024x1024,4096x1024,4096\n"
                 " =tw\n"
                 " aten::view | t=Bl | d=8x1024x1024,\n"
                 " aten::addmm | k=gemm_fc1 | m=67108864 | t=BBBSS | d=4096,8192x1024,1024x4096,,\n"
                 " aten::view | t=Bl | d=8192x4096,\n" },
    { "lin_fc2", "aten::linear | s | t=BBB | d=8x1024x4096,1024x4096,1024\n"
                 " =tw\n"
                 " aten::view | t=Bl | d=8x1024x4096,\n"
                 " aten::addmm | k=gemm_fc2 | m=16777216 | t=BBBSS | d=1024,8192x4096,4096x1024,,\n"
                 " aten::view | t=Bl | d=8192x1024,\n" },
    { "drop", "aten::dropout | s | t=BFb | d=8x1024x1024,,\n"
              " aten::native_dropout | k=dropout | t=BF_ | d=8x1024x1024,,\n"
              "  aten::empty_like\n"
              "   aten::empty | m=16777216\n"
              "  aten::empty_like | t=B_____ | d=8x1024x1024,,,,,\n"
              "   aten::empty | m=8388608\n" },
    { "slice", "aten::narrow | t=BSSS | d=8x1024x3072,,,\n"
               " aten::slice | t=BSSSS | d=8x1024x3072,,,,\n"
               "  aten::as_strided | t=B___ | d=8x1024x3072,,,\n" },
    { "layer_fwd",
      "=ln\n"
      "=lin_qkv\n"
      "aten::view | t=Bl | d=8x1024x3072,\n"
      "aten::split | s | t=BSS | d=8x1024x3072,,\n"
      " =slice\n =slice\n =slice\n"
      "aten::view | t=Bl | d=8x1024x1024,\n"
      "aten::view | t=Bl | d=8x1024x1024,\n"
      "aten::view | t=Bl | d=8x1024x1024,\n"
      "=tr\n=tr\n=tr\n"
      "aten::scaled_dot_product_attention | s | t=BBB_Fb_b | d=8x16x1024x64,8x16x1024x64,8x16x1024x64,,,,,\n"
      " aten::_scaled_dot_product_flash_attention | t=BBBFbb_ | d=8x16x1024x64,8x16x1024x64,8x16x1024x64,,,,\n"
      "  =tr\n  =tr\n  =tr\n"
      "  aten::_flash_attention_forward | k=flash_fwd | t=BBB____Fbb___ | "
      "d=8x1024x16x64,8x1024x16x64,8x1024x16x64,,,,,,,,,,\n"
      "   aten::empty_like\n"
      "    aten::empty | m=16777216\n"
      "   aten::empty | m=524288\n"
      "   aten::empty | m=16\n"
      "  =tr\n"
      "=tr\n"
      "aten::reshape | t=Bl | d=8x1024x16x64,\n"
      " aten::clone | t=B_ | d=8x1024x16x64,\n"
      "  aten::empty_like\n"
      "   aten::empty | m=16777216\n"
      "  aten::copy_ | k=copy | t=BBb | d=8x1024x16x64,8x1024x16x64,\n"
      " aten::_unsafe_view | t=Bl | d=8x1024x16x64,\n"
      "=lin_proj\n"
      "=drop\n"
      "aten::add | s | k=add | m=16777216 | t=BBS | d=8x1024x1024,8x1024x1024,\n"
      "=ln\n"
      "=lin_fc1\n"
      "aten::gelu | s | k=gelu | m=67108864 | t=B_ | d=8x1024x4096,\n"
      "=lin_fc2\n"
      "=drop\n"
      "aten::add | s | k=add | m=16777216 | t=BBS | d=8x1024x1024,8x1024x1024,\n" },
    { "ev", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad | s\n"
            " torch::autograd::AccumulateGrad\n"
            "  aten::detach | t=B | d=1024x1024\n"
            "   detach | t=B | d=1024x1024\n" },
    { "bw_add", "autograd::engine::evaluate_function: AddBackward0 | s\n"
                " AddBackward0\n" },
    { "bw_drop",
      "autograd::engine::evaluate_function: NativeDropoutBackward0 | s\n"
      " NativeDropoutBackward0\n"
      "  aten::native_dropout_backward | k=dropout_bwd | m=16777216 | t=BBF | d=8x1024x1024,8x1024x1024,\n" },
    { "bw_t", "autograd::engine::evaluate_function: TBackward0 | s\n"
              " TBackward0\n"
              "  =tw\n" },
    { "bw_view", "autograd::engine::evaluate_function: ViewBackward0 | s\n"
                 " ViewBackward0\n"
                 "  aten::reshape | t=Bl | d=8192x1024,\n"
                 "   aten::view | t=Bl | d=8192x1024,\n" },
    { "bw_fc2", "autograd::engine::evaluate_function: AddmmBackward0 | s\n"
                " AddmmBackward0\n"
                "  =tw\n"
                "  aten::mm | k=fc2_dgrad | m=67108864 | t=BB | d=8192x1024,1024x4096\n"
                "  =tw\n"
                "  aten::mm | k=fc2_wgrad | m=8388608 | t=BB | d=1024x8192,8192x4096\n"
                "  =tw\n"
                "  aten::sum | k=bias_grad | m=2048 | t=Bl__ | d=8192x1024,,,\n"
                "  aten::view | t=Bl | d=1x1024,\n" },
    { "bw_fc1", "autograd::engine::evaluate_function: AddmmBackward0 | s\n"
                " AddmmBackward0\n"
                "  =tw\n"
                "  aten::mm | k=fc1_dgrad | m=16777216 | t=BB | d=8192x4096,4096x1024\n"
                "  =tw\n"
                "  aten::mm | k=fc1_wgrad | m=8388608 | t=BB | d=4096x8192,8192x1024\n"
                "  =tw\n"
                "  aten::sum | k=bias_grad | m=8192 | t=Bl__ | d=8192x4096,,,\n"
                "  aten::view | t=Bl | d=1x4096,\n" },
    { "bw_proj", "autograd::engine::evaluate_function: AddmmBackward0 | s\n"
                 " AddmmBackward0\n"
                 "  =tw\n"
                 "  aten::mm | k=proj_dgrad | m=16777216 | t=BB | d=8192x1024,1024x1024\n"
                 "  =tw\n"
                 "  aten::mm | k=proj_wgrad | m=2097152 | t=BB | d=1024x8192,8192x1024\n"
                 "  =tw\n"
                 "  aten::sum | k=bias_grad | m=2048 | t=Bl__ | d=8192x1024,,,\n"
                 "  aten::view | t=Bl | d=1x1024,\n" },
    { "bw_qkv", "autograd::engine::evaluate_function: AddmmBackward0 | s\n"
                " AddmmBackward0\n"
                "  =tw\n"
                "  aten::mm | k=qkv_dgrad | m=16777216 | t=BB | d=8192x3072,3072x1024\n"
                "  =tw\n"
                "  aten::mm | k=qkv_wgrad | m=6291456 | t=BB | d=3072x8192,8192x1024\n"
                "  =tw\n"
                "  aten::sum | k=bias_grad | m=6144 | t=Bl__ | d=8192x3072,,,\n"
                "  aten::view | t=Bl | d=1x3072,\n" },
    { "bw_ln", "autograd::engine::evaluate_function: NativeLayerNormBackward0 | s\n"
               " NativeLayerNormBackward0\n"
               "  aten::native_layer_norm_backward | k=ln_bwd_in,ln_bwd_gb | m=16777216 | t=BBlBBBB_ | "
               "d=8x1024x1024,8x1024x1024,,8192x1,8192x1,1024,1024,\n"
               "   aten::empty_like\n"
               "    aten::empty\n"
               "   aten::empty | m=4096\n"
               "   aten::empty | m=4096\n" },
    { "bw_tr", "autograd::engine::evaluate_function: TransposeBackward0 | s\n"
               " TransposeBackward0\n"
               "  =tr\n" },
    { "layer_bwd",
      "=bw_add\n=bw_drop\n=bw_view\n=bw_fc2\n=bw_t\n=ev\n=ev\n"
      "autograd::engine::evaluate_function: GeluBackward0 | s\n"
      " GeluBackward0\n"
      "  aten::gelu_backward | k=gelu_bwd | m=67108864 | t=BB_ | d=8x1024x4096,8x1024x4096,\n"
      "=bw_view\n=bw_fc1\n=bw_t\n=ev\n=ev\n"
      "=bw_ln\n=ev\n=ev\n"
      "=bw_add\n=bw_drop\n=bw_view\n=bw_proj\n=bw_t\n=ev\n=ev\n"
      "autograd::engine::evaluate_function: UnsafeViewBackward0 | s\n"
      " UnsafeViewBackward0\n"
      "  aten::view | t=Bl | d=8x1024x1024,\n"
      "autograd::engine::evaluate_function: CloneBackward0 | s\n"
      " CloneBackward0\n"
      "=bw_tr\n"
      "autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0 | s\n"
      " ScaledDotProductFlashAttentionBackward0\n"
      "  aten::_scaled_dot_product_flash_attention_backward | t=BBBBBB________Fb_b | "
      "d=8x16x1024x64,8x16x1024x64,8x16x1024x64,8x16x1024x64,8x16x1024x64,8x16x1024,,,,,,,,,,,,\n"
      "   =tr\n   =tr\n   =tr\n   =tr\n   =tr\n"
      "   aten::_flash_attention_backward | k=flash_bwd_dot,flash_bwd,flash_bwd_dq | m=50331648 | t=BBBBBB__________ | "
      "d=8x1024x16x64,8x1024x16x64,8x1024x16x64,8x1024x16x64,8x1024x16x64,8x16x1024,,,,,,,,,,\n"
      "    aten::empty_like\n     aten::empty\n"
      "    aten::empty_like\n     aten::empty\n"
      "    aten::empty_like\n     aten::empty\n"
      "    aten::empty | m=524288\n"
      "    aten::zeros | t=lS_DS | d=,,,,\n"
      "     aten::empty | m=33554432\n"
      "     aten::zero_ | t=F | d=8x16x1024x64\n"
      "      aten::fill_ | k=fill_f32 | t=FS | d=8x16x1024x64,\n"
      "   =tr\n   =tr\n   =tr\n"
      "=bw_tr\n=bw_tr\n=bw_tr\n"
      "autograd::engine::evaluate_function: SplitBackward0 | s\n"
      " SplitBackward0\n"
      "  aten::cat | k=cat | m=50331648 | t=TS | d=,\n"
      "=bw_view\n=bw_qkv\n=bw_t\n=ev\n=ev\n"
      "=bw_ln\n=ev\n=ev\n" },
    { "data", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ | u | c=380\n"
              " aten::stack | t=TS | d=, | c=12\n"
              "  aten::unsqueeze | t=LS | d=1024, | c=2\n"
              "   aten::as_strided | t=L___ | d=1024,,, | c=1\n"
              "  aten::cat | t=TS | d=, | c=24\n"
              " aten::stack | t=TS | d=, | c=12\n"
              "  aten::unsqueeze | t=LS | d=1024, | c=2\n"
              "   aten::as_strided | t=L___ | d=1024,,, | c=1\n"
              "  aten::cat | t=TS | d=, | c=24\n"
              "aten::to | t=LD____ | d=8x1024,,,,, \n"
              " aten::_to_copy | t=L_D____ | d=8x1024,,,,,,\n"
              "  aten::empty_strided | t=ll_D__ | d=,,,,,\n"
              "  aten::copy_ | k=h2d | t=LLb | d=8x1024,8x1024,\n"
              "aten::record_stream | t=L_ | d=8x1024, | k=wait_copy\n" },
    { "embed_fwd", "aten::embedding | s | t=BLSbb | d=50304x1024,8x1024,,,\n"
                   " aten::reshape | t=Ll | d=8x1024,\n"
                   "  aten::view | t=Ll | d=8x1024,\n"
                   " aten::index_select | k=emb_fwd | m=16777216 | t=BSL | d=50304x1024,,8192\n"
                   "  aten::empty | m=16777216\n"
                   " aten::view | t=Bl | d=8192x1024,\n"
                   "aten::embedding | s | t=BLSbb | d=1024x1024,1024,,,\n"
                   " aten::index_select | k=emb_fwd | m=2097152 | t=BSL | d=1024x1024,,1024\n"
                   "aten::add | s | k=add | m=16777216 | t=BBS | d=8x1024x1024,1x1024x1024,\n"
                   "=drop\n" },
    { "head_fwd", "=ln\n"
                  "aten::linear | s | t=BB_ | d=8x1024x1024,50304x1024,\n"
                  " =tw\n"
                  " aten::matmul | t=BB | d=8x1024x1024,1024x50304\n"
                  "  aten::view | t=Bl | d=8x1024x1024,\n"
                  "  aten::mm | k=lm_head | m=824180736 | t=BB | d=8192x1024,1024x50304\n"
                  "  aten::_unsafe_view | t=Bl | d=8192x50304,\n"
                  "aten::view | t=Bl | d=8x1024x50304,\n"
                  "aten::cross_entropy_loss | s | t=BL_SSF | d=8192x50304,8192,,,,\n"
                  " aten::log_softmax | t=BS_ | d=8192x50304,,\n"
                  "  aten::_log_softmax | k=softmax | m=824180736 | t=BSb | d=8192x50304,,\n"
                  " aten::nll_loss_nd | t=BL_SS | d=8192x50304,8192,,,\n"
                  "  aten::nll_loss | t=BL_SS | d=8192x50304,8192,,,\n"
                  "   aten::nll_loss_forward | k=nll | m=4 | t=BL_SS | d=8192x50304,8192,,,\n" },
    { "bwd_start", "aten::ones_like | t=B_____ | d=,,,,,\n"
                   " aten::empty_like | t=B_____ | d=,,,,,\n"
                   "  aten::empty_strided | t=ll_D__ | d=,,,,,\n"
                   " aten::fill_ | k=fill | t=BS | d=,\n" },
    { "head_bwd",
      "autograd::engine::evaluate_function: NllLossBackward0 | s\n"
      " NllLossBackward0\n"
      "  aten::nll_loss_backward | k=nll_bwd | m=824180736 | t=BBL_SSB | d=,8192x50304,8192,,,,\n"
      "   aten::zero_ | t=B | d=8192x50304\n"
      "    aten::fill_ | k=fill | t=BS | d=8192x50304,\n"
      "autograd::engine::evaluate_function: LogSoftmaxBackward0 | s\n"
      " LogSoftmaxBackward0\n"
      "  aten::_log_softmax_backward_data | k=softmax_bwd | m=824180736 | t=BBSS | d=8192x50304,8192x50304,,\n"
      "=bw_view\n"
      "autograd::engine::evaluate_function: MmBackward0 | s\n"
      " MmBackward0\n"
      "  =tw\n"
      "  aten::mm | k=lm_dgrad | m=16777216 | t=BB | d=8192x50304,50304x1024\n"
      "  =tw\n"
      "  aten::mm | k=lm_wgrad | m=103022592 | t=BB | d=1024x8192,8192x50304\n"
      "=bw_t\n=ev\n"
      "=bw_ln\n=ev\n=ev\n" },
    { "embed_bwd", "=bw_drop\n"
                   "=bw_add\n"
                   "autograd::engine::evaluate_function: EmbeddingBackward0 | s\n"
                   " EmbeddingBackward0\n"
                   "  aten::embedding_backward | t=BLSSbb | d=8x1024x1024,8x1024,,,,\n"
                   "   aten::embedding_dense_backward | k=emb_bwd | t=BLSSb | d=8x1024x1024,8x1024,,,\n"
                   "    aten::zeros | t=lS_DS | d=,,,,\n"
                   "     aten::empty | m=205852672\n"
                   "     aten::zero_ | t=B | d=50304x1024 | k=memset\n"
                   "=ev\n"
                   "autograd::engine::evaluate_function: EmbeddingBackward0 | s\n"
                   " EmbeddingBackward0\n"
                   "  aten::embedding_backward | t=BLSSbb | d=8x1024x1024,1024,,,,\n"
                   "   aten::embedding_dense_backward | k=emb_bwd | t=BLSSb | d=8x1024x1024,1024,,,\n"
                   "=ev\n" },
    { "ddp_allreduce", "nccl:all_reduce | u | c=14\n"
                       " record_param_comms | t=T____SS__ | d=,,,,,,,, | c=9 | k=event_record,wait_compute,ar_bf16\n" },
    { "optim", "Optimizer.step#AdamW.step | u | c=90\n"
               " aten::_foreach_add_ | t=TS | d=, | k=foreach_add\n"
               " aten::_fused_adamw_ | t=TTTTTTFFFFFbb__ | d=,,,,,,,,,,,,,, | c=140 | "
               "k=adam,adam,adam,adam,adam,adam,adam,adam\n"
               "Optimizer.zero_grad#AdamW.zero_grad | u | c=310\n" },
    { "loss_allreduce", "nccl:all_reduce | u | c=14\n"
                        " record_param_comms | t=T____SS__ | d=,,,,,,,, | c=9 | k=event_record,wait_compute,ar_f32\n" },
    { "loss_item", "aten::item | t=F | d=\n"
                   " aten::_local_scalar_dense | t=F | d= | k=d2h,sync\n" },
    /* The GPU-heavy shape (--shape gpu): a torch.compile'd layer is a handful of CPU-side
     * operators, each launching many fused kernels (40 forward, 60 backward), no record_shapes.
     * At 24 layers a step is ~2,400 kernels, ~2,400 launches, ~4,800 flow events and ~430
     * CPU-side events: the proportions of a real GPU-heavy training profile. */
    { "g_layer_fwd", "CompiledFunction | s | c=18\n"
                     " ## Call CompiledFxGraph fwd ## | u | c=9\n"
                     "  triton_per_fused_add_native_layer_norm | "
                     "k=tri_ln,tri_cast,gemm_qkv,tri_split,tri_rope,tri_rope,tri_cast,tri_cast | c=3\n"
                     "  aten::_scaled_dot_product_flash_attention | "
                     "k=flash_fwd,tri_cast,tri_add,tri_cast,gemm_proj,tri_drop,tri_add,tri_cast | c=4\n"
                     "  triton_per_fused_native_layer_norm | "
                     "k=tri_ln,tri_cast,gemm_fc1,tri_gelu,tri_cast,gemm_fc2,tri_drop,tri_add | c=3\n"
                     "  aten::mm | k=tri_cast,tri_cast,tri_add,tri_split,tri_cast,tri_cast,tri_add,tri_cast | c=3\n"
                     "  aten::addmm | k=tri_cast,tri_add,tri_cast,tri_cast,tri_add,tri_cast,tri_cast,tri_add | c=3\n" },
    { "g_layer_bwd",
      "CompiledFunctionBackward | s | c=16\n"
      " ## Call CompiledFxGraph bwd ## | u | c=9\n"
      "  aten::mm | k=tri_add,tri_drop,fc2_dgrad,fc2_wgrad,tri_sum,tri_gelu_bwd,tri_cast,tri_cast | c=3\n"
      "  aten::mm | k=fc1_dgrad,fc1_wgrad,tri_sum,tri_cast,tri_ln_bwd,tri_sum,tri_add,tri_cast | c=3\n"
      "  aten::mm | k=tri_drop,proj_dgrad,proj_wgrad,tri_sum,tri_cast,tri_cast,tri_add,tri_cast | c=3\n"
      "  aten::_scaled_dot_product_flash_attention_backward | "
      "k=flash_bwd_dot,flash_bwd,flash_bwd_dq,tri_cast,tri_rope,tri_rope,tri_split,tri_cast | c=4\n"
      "  aten::mm | k=qkv_dgrad,qkv_wgrad,tri_sum,tri_cast,tri_ln_bwd,tri_sum,tri_add,tri_cast | c=3\n"
      "  aten::mm | k=tri_cast,tri_cast,tri_add,tri_cast,tri_cast,tri_add,tri_cast,tri_cast | c=3\n"
      "  aten::mm | k=tri_add,tri_cast,tri_cast,tri_add,tri_cast,tri_cast,tri_add,tri_cast | c=3\n"
      "  aten::sum | k=tri_sum,tri_sum,tri_cast,tri_add | c=3\n" },
};
#define NBLOCKS ((int)(sizeof blocks / sizeof blocks[0]))

/* Default inputs of operators that appear without t= (what record_shapes shows for them). */
static const struct {
    const char *name, *types, *dims;
} op_defaults[] = {
    { "aten::empty", "lS_DS_", ",,,,," },
    { "aten::empty_like", "B_____", "8x1024x1024,,,,," },
    { "aten::empty_strided", "ll_D__", ",,,,," },
    { "aten::as_strided", "B___", "8x1024x1024,,," },
    { "aten::view", "Bl", "8x1024x1024," },
    { "aten::detach", "B", "1024x1024" },
    { "detach", "B", "1024x1024" },
};

/* A parsed operator. */
typedef struct node {
    const char *name; /* points into a block's text; name_len bytes */
    int name_len;
    int first_child, next; /* node indices, -1 = none */
    int kernels[8], nk;
    int64_t mem;
    double cpu_us;
    int seq, annotation;
    char *args; /* pre-rendered args members after "Record function id", with a trailing ", " */
    size_t args_len;
    char *head; /* pre-rendered event text up to the pid (name and category) */
    size_t head_len;
} node;

/* ---- options ------------------------------------------------------------ */

typedef struct kernel_scale {
    const char *name; /* a key or a full kernel name: NAME of NAME=F in argv, */
    int len;          /* not NUL-terminated there (no copy to leak) */
    double factor;
} kernel_scale;

static int scale_names(const kernel_scale *s, const char *name)
{
    return name && strlen(name) == (size_t)s->len && memcmp(name, s->name, (size_t)s->len) == 0;
}

typedef struct gen_options {
    const char *out, *dir;
    const char *trace_name; /* "traceName"; in --ranks mode the directory shown */
    int rank, world, ranks;
    int steps, first_step, layers;
    double size_mb;
    uint64_t seed;
    int slow_rank;
    double slow_factor;
    int data_rank; /* --data-rank: this rank's DataLoader next() takes data_ms more a step */
    double data_ms;
    kernel_scale scales[16];
    int nscales;
    int gzip, level;
    int cpu_mult;
    int gpu_shape; /* --shape gpu: the GPU-heavy training shape (see the g_* blocks) */
    int relative_ts;
    int jobs;
    int quiet;
} gen_options;

/* ---- output ------------------------------------------------------------- */

#define OUT_CAP (8u << 20)
#define OUT_SLACK (64u << 10) /* every event is shorter than this */

typedef struct out {
    char *buf;
    size_t len;
    int fd;
    int gzip;
    z_stream zs;
    unsigned char *zbuf;
    uint64_t raw_bytes, file_bytes;
    int failed;
    const char *path;
} out;

static int write_all(out *o, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(o->fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "bench_gen_kineto_trace: %s: %s\n", o->path, strerror(errno));
            o->failed = 1;
            return -1;
        }
        c += w;
        n -= (size_t)w;
        o->file_bytes += (uint64_t)w;
    }
    return 0;
}

static int deflate_out(out *o, int flush)
{
    int rc;
    do {
        o->zs.next_out = o->zbuf;
        o->zs.avail_out = OUT_CAP;
        rc = deflate(&o->zs, flush);
        if (rc == Z_STREAM_ERROR) {
            fprintf(stderr, "bench_gen_kineto_trace: %s: deflate failed\n", o->path);
            o->failed = 1;
            return -1;
        }
        if (write_all(o, o->zbuf, OUT_CAP - o->zs.avail_out) != 0)
            return -1;
    } while (o->zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}

static void out_flush(out *o)
{
    if (o->len == 0 || o->failed) {
        o->len = 0;
        return;
    }
    o->raw_bytes += o->len;
    if (o->gzip) {
        o->zs.next_in = (unsigned char *)o->buf;
        o->zs.avail_in = (uInt)o->len;
        deflate_out(o, Z_NO_FLUSH);
    } else {
        write_all(o, o->buf, o->len);
    }
    o->len = 0;
}

static int out_open(out *o, const char *path, int gzip, int level)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->gzip = gzip;
    o->buf = malloc(OUT_CAP + OUT_SLACK);
    if (o->buf == NULL)
        return -1;
    if (strcmp(path, "-") == 0) {
        o->fd = 1;
    } else {
        o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o->fd < 0) {
            fprintf(stderr, "bench_gen_kineto_trace: %s: %s\n", path, strerror(errno));
            free(o->buf);
            return -1;
        }
    }
    if (gzip) {
        o->zbuf = malloc(OUT_CAP);
        /* windowBits 15 + 16: a gzip wrapper, as gzip(1) and Python's gzip module write. */
        if (o->zbuf == NULL || deflateInit2(&o->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            fprintf(stderr, "bench_gen_kineto_trace: %s: cannot start zlib\n", path);
            return -1;
        }
    }
    return 0;
}

static int out_close(out *o)
{
    out_flush(o);
    if (o->gzip) {
        if (!o->failed) {
            o->zs.next_in = NULL;
            o->zs.avail_in = 0;
            deflate_out(o, Z_FINISH);
        }
        deflateEnd(&o->zs);
        free(o->zbuf);
    }
    if (o->fd > 2 && close(o->fd) != 0 && !o->failed) {
        fprintf(stderr, "bench_gen_kineto_trace: %s: %s\n", o->path, strerror(errno));
        o->failed = 1;
    }
    free(o->buf);
    o->buf = NULL;
    return o->failed ? -1 : 0;
}

/* Make sure an event of up to OUT_SLACK bytes fits: the hot path then never checks. */
static inline char *out_reserve(out *o)
{
    if (o->len >= OUT_CAP)
        out_flush(o);
    return o->buf + o->len;
}

static inline char *put_mem(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

#define PUT(p, lit) put_mem((p), (lit), sizeof(lit) - 1)

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

static inline char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--q = digit_pairs[d + 1];
        *--q = digit_pairs[d];
    }
    if (v >= 10) {
        unsigned d = (unsigned)v * 2;
        *--q = digit_pairs[d + 1];
        *--q = digit_pairs[d];
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(e - q);
    memcpy(p, q, n);
    return p + n;
}

static inline char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

/* Nanoseconds as microseconds with three decimals, as Kineto writes "ts" and "dur". */
static inline char *put_us(char *p, int64_t ns)
{
    if (ns < 0) {
        *p++ = '-';
        ns = -ns;
    }
    p = put_u64(p, (uint64_t)ns / 1000);
    unsigned f = (unsigned)((uint64_t)ns % 1000);
    p[0] = '.';
    p[1] = (char)('0' + f / 100);
    p[2] = digit_pairs[(f % 100) * 2];
    p[3] = digit_pairs[(f % 100) * 2 + 1];
    return p + 4;
}

/* ---- a small growable string for pre-rendering -------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (q == NULL) {
            fprintf(stderr, "bench_gen_kineto_trace: out of memory\n");
            exit(1);
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(sbuf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* ---- random numbers ------------------------------------------------------ */

static inline uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double uniform(uint64_t *s)
{
    return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* A duration around `base_ns`: about normal with relative spread `sigma`, and with
 * probability `spike_p` an outlier 2-6x longer (OS noise, allocator stalls, clocks). */
static inline int64_t jitter(uint64_t *s, double base_ns, double sigma, double spike_p)
{
    double n = uniform(s) + uniform(s) + uniform(s) - 1.5; /* sd 0.5 */
    double v = base_ns * (1.0 + 2.0 * sigma * n);
    if (spike_p > 0 && uniform(s) < spike_p)
        v *= 2.0 + 4.0 * uniform(s);
    if (v < 500)
        v = 500 + 200 * uniform(s);
    return (int64_t)v;
}

/* ---- records: one step of the rank being written -------------------------- */

enum rec_kind { R_CPU = 1, R_ANN, R_MEM, R_RT, R_GPU, R_GPU_ANN };

typedef struct rec {
    uint8_t kind;
    uint8_t thread; /* 0 main, 1 autograd */
    uint8_t flow;   /* R_RT: launched GPU work (write an ac2g start) */
    int32_t ref;    /* node (R_CPU, R_ANN), kernel (R_RT, R_GPU), step number (R_ANN < 0) */
    int64_t ts, dur;
    int64_t ext, corr;
    int64_t a, b, c, d; /* R_CPU/R_ANN: ev idx, seq; R_MEM: bytes, allocated, reserved, addr */
} rec;

/* ---- the simulation ------------------------------------------------------ */

typedef struct alloc_entry {
    int64_t bytes, addr;
} alloc_entry;

typedef struct sim {
    int rank;
    uint64_t rng;
    int64_t cpu[2];             /* clocks of the main and autograd threads */
    int64_t gpu_free[ST_COUNT]; /* when each stream finishes its queued work */
    int64_t ext, corr, evidx, seq;
    double slow; /* compute kernel factor */
    int64_t allocated, reserved, next_addr;
    alloc_entry *live;
    size_t nlive, live_cap;
    int64_t arrival;  /* of the pending collective on this rank */
    int64_t comm_rec; /* its record index (the written rank only) */
    int64_t step_gpu_first, step_gpu_last;
    int emit;
} sim;

typedef struct gen {
    gen_options opt;
    node *nodes;
    int nnodes, nodes_cap;
    int block_root[NBLOCKS]; /* first top-level node of each parsed block */
    int data_node;           /* the DataLoader's next() (--data-rank) */
    double kscale[NKERNELS];
    char *kernel_args[NKERNELS]; /* pre-rendered constant args of each kernel */
    size_t kernel_args_len[NKERNELS];
    sim *sims;
    int nsims;
    int target; /* index into sims of the rank written */
    rec *recs;
    size_t nrec, rec_cap;
    int step; /* current step number */
    int pid, tid_main, tid_bwd, device;
    int64_t t0;      /* trace start, ns since the epoch */
    int64_t base_ns; /* baseTimeNanoseconds */
    out o;
    int first_event;
    uint64_t events;
    /* pre-rendered pieces that depend on the rank */
    char pid_str[24], dev_str[24], tid_str[2][24];
    size_t pid_len, dev_len, tid_len[2];
} gen;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("bench_gen_kineto_trace: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static rec *new_rec(gen *g)
{
    if (g->nrec == g->rec_cap) {
        size_t cap = g->rec_cap ? g->rec_cap * 2 : 16384;
        rec *r = realloc(g->recs, cap * sizeof *r);
        if (r == NULL)
            die("out of memory");
        g->recs = r;
        g->rec_cap = cap;
    }
    rec *r = &g->recs[g->nrec++];
    memset(r, 0, sizeof *r);
    return r;
}

/* ---- parsing the operator trees ---------------------------------------- */

static int kernel_index(const char *key, size_t len)
{
    for (int i = 0; i < NKERNELS; i++)
        if (strlen(kernel_table[i].key) == len && memcmp(kernel_table[i].key, key, len) == 0)
            return i;
    return -1;
}

static int block_index(const char *name, size_t len)
{
    for (int i = 0; i < NBLOCKS; i++)
        if (strlen(blocks[i].name) == len && memcmp(blocks[i].name, name, len) == 0)
            return i;
    return -1;
}

static const char *type_name(char c)
{
    switch (c) {
    case 'B':
        return "c10::BFloat16";
    case 'F':
        return "float";
    case 'L':
        return "long int";
    case 'S':
        return "Scalar";
    case 'l':
        return "ScalarList";
    case 'D':
        return "Device";
    case 'b':
        return "bool";
    case 'T':
        return "TensorList";
    default:
        return "";
    }
}

/* The record_shapes args of an operator: Concrete Inputs, Input type, Input Strides,
 * Input Dims (the order newer Kineto writes them in). */
static void render_inputs(sbuf *b, const char *types, size_t ntypes, const char *dims, size_t dims_len)
{
    /* split dims into entries */
    const char *ent[32];
    size_t ent_len[32];
    size_t ne = 0;
    const char *p = dims, *end = dims + dims_len;
    while (ne < 32) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        const char *e = c ? c : end;
        ent[ne] = p;
        ent_len[ne] = (size_t)(e - p);
        ne++;
        if (c == NULL)
            break;
        p = c + 1;
    }
    if (ntypes > 32)
        ntypes = 32;
    sb_str(b, "\"Concrete Inputs\": [");
    for (size_t i = 0; i < ntypes; i++) {
        sb_str(b, i ? ", " : "");
        if (types[i] == 'S')
            sb_fmt(b, "\"%d\"", (int)(i % 3) + (i > 2 ? 0 : 1));
        else if (types[i] == 'b')
            sb_str(b, "\"False\"");
        else
            sb_str(b, "\"\"");
    }
    sb_str(b, "], \"Input type\": [");
    for (size_t i = 0; i < ntypes; i++)
        sb_fmt(b, "%s\"%s\"", i ? ", " : "", type_name(types[i]));
    for (int pass = 0; pass < 2; pass++) {
        sb_str(b, pass == 0 ? "], \"Input Strides\": [" : "], \"Input Dims\": [");
        for (size_t i = 0; i < ntypes; i++) {
            int64_t d[8];
            int nd = 0;
            if (i < ne && ent_len[i] > 0) {
                const char *q = ent[i], *qe = ent[i] + ent_len[i];
                while (q < qe && nd < 8) {
                    d[nd++] = strtoll(q, NULL, 10);
                    const char *x = memchr(q, 'x', (size_t)(qe - q));
                    if (x == NULL)
                        break;
                    q = x + 1;
                }
            }
            sb_str(b, i ? ", [" : "[");
            if (pass == 0) {
                /* contiguous strides */
                int64_t st = 1, strides[8];
                for (int k = nd - 1; k >= 0; k--) {
                    strides[k] = st;
                    st *= d[k];
                }
                for (int k = 0; k < nd; k++)
                    sb_fmt(b, "%s%" PRId64, k ? ", " : "", strides[k]);
            } else {
                for (int k = 0; k < nd; k++)
                    sb_fmt(b, "%s%" PRId64, k ? ", " : "", d[k]);
            }
            sb_str(b, "]");
        }
    }
    sb_str(b, "], ");
}

static int add_node(gen *g)
{
    if (g->nnodes == g->nodes_cap) {
        int cap = g->nodes_cap ? g->nodes_cap * 2 : 256;
        node *n = realloc(g->nodes, (size_t)cap * sizeof *n);
        if (n == NULL)
            die("out of memory");
        g->nodes = n;
        g->nodes_cap = cap;
    }
    node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->first_child = n->next = -1;
    return g->nnodes++;
}

static double default_cpu_us(const char *name, size_t len)
{
    static const struct {
        const char *name;
        double us;
    } t[] = {
        { "aten::empty", 2.1 },   { "aten::as_strided", 1.1 }, { "aten::view", 1.6 },   { "aten::transpose", 2.4 },
        { "aten::t", 1.9 },       { "aten::detach", 1.7 },     { "detach", 0.9 },       { "aten::empty_like", 1.8 },
        { "aten::reshape", 2.0 }, { "aten::slice", 2.2 },      { "aten::narrow", 1.5 }, { "aten::_unsafe_view", 1.4 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strlen(t[i].name) == len && memcmp(t[i].name, name, len) == 0)
            return t[i].us;
    if (len > 9 && memcmp(name, "autograd:", 9) == 0)
        return 6.5;
    return 5.5;
}

/* Parse block `bi` at nesting offset `base`, appending its nodes; returns the first
 * top-level node. Top-level nodes of the block become siblings. */
static int parse_block(gen *g, int bi, int depth_guard);

typedef struct parse_frame {
    int node, depth;
} parse_frame;

static int parse_text(gen *g, const char *text, int depth_guard)
{
    if (depth_guard > 16)
        die("block nesting too deep");
    parse_frame stack[64];
    int sp = 0;
    int first = -1, last_top = -1;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        if (eol == NULL)
            eol = p + strlen(p);
        int depth = 0;
        while (p < eol && *p == ' ') {
            depth++;
            p++;
        }
        const char *bar = strstr(p, " | ");
        const char *name_end = (bar && bar < eol) ? bar : eol;
        while (name_end > p && name_end[-1] == ' ')
            name_end--;
        /* the nodes this line adds (a block include may add several siblings) */
        int head, tail;
        if (*p == '=') {
            int bi = block_index(p + 1, (size_t)(name_end - p - 1));
            if (bi < 0)
                die("unknown block %.*s", (int)(name_end - p - 1), p + 1);
            head = parse_block(g, bi, depth_guard + 1);
            tail = head;
            while (g->nodes[tail].next >= 0)
                tail = g->nodes[tail].next;
        } else {
            head = tail = add_node(g);
            node *n = &g->nodes[head];
            n->name = p;
            n->name_len = (int)(name_end - p);
            n->cpu_us = default_cpu_us(p, (size_t)(name_end - p));
            const char *types = NULL, *dims = NULL;
            size_t types_len = 0, dims_len = 0;
            for (const char *f = bar; f && f < eol; f = strstr(f, " | ")) {
                f += 3;
                const char *fe = strstr(f, " | ");
                if (fe == NULL || fe > eol)
                    fe = eol;
                size_t fl = (size_t)(fe - f);
                while (fl > 0 && f[fl - 1] == ' ')
                    fl--;
                if (fl >= 2 && f[0] == 'k' && f[1] == '=') {
                    const char *k = f + 2, *ke = f + fl;
                    while (k < ke) {
                        const char *c = memchr(k, ',', (size_t)(ke - k));
                        const char *e = c ? c : ke;
                        int ki = kernel_index(k, (size_t)(e - k));
                        if (ki < 0)
                            die("unknown kernel key %.*s", (int)(e - k), k);
                        if (n->nk < 8)
                            n->kernels[n->nk++] = ki;
                        k = c ? c + 1 : ke;
                    }
                } else if (fl >= 2 && f[0] == 'm' && f[1] == '=') {
                    n->mem = strtoll(f + 2, NULL, 10);
                } else if (fl >= 2 && f[0] == 'c' && f[1] == '=') {
                    n->cpu_us = strtod(f + 2, NULL);
                } else if (fl >= 2 && f[0] == 't' && f[1] == '=') {
                    types = f + 2;
                    types_len = fl - 2;
                } else if (fl >= 2 && f[0] == 'd' && f[1] == '=') {
                    dims = f + 2;
                    dims_len = fl - 2;
                } else if (fl == 1 && f[0] == 's') {
                    n->seq = 1;
                } else if (fl == 1 && f[0] == 'u') {
                    n->annotation = 1;
                } else {
                    die("bad field \"%.*s\"", (int)fl, f);
                }
                f = fe;
            }
            if (types == NULL) {
                for (size_t i = 0; i < sizeof op_defaults / sizeof op_defaults[0]; i++) {
                    if (strlen(op_defaults[i].name) == (size_t)n->name_len &&
                        memcmp(op_defaults[i].name, n->name, (size_t)n->name_len) == 0) {
                        types = op_defaults[i].types;
                        types_len = strlen(types);
                        dims = op_defaults[i].dims;
                        dims_len = strlen(dims);
                    }
                }
            }
            sbuf b = { 0 };
            if (types != NULL && !n->annotation)
                render_inputs(&b, types, types_len, dims ? dims : "", dims ? dims_len : 0);
            if (b.p == NULL)
                sb_add(&b, "", 0);
            n->args = b.p;
            n->args_len = b.len;
        }
        /* attach at `depth` */
        while (sp > 0 && stack[sp - 1].depth >= depth)
            sp--;
        if (sp == 0) {
            if (depth != 0)
                die("bad indentation in operator tree near \"%.*s\"", (int)(eol - p), p);
            if (first < 0)
                first = head;
            else
                g->nodes[last_top].next = head;
            last_top = tail;
        } else {
            int parent = stack[sp - 1].node;
            int c = g->nodes[parent].first_child;
            if (c < 0) {
                g->nodes[parent].first_child = head;
            } else {
                while (g->nodes[c].next >= 0)
                    c = g->nodes[c].next;
                g->nodes[c].next = head;
            }
        }
        if (sp < 64 && head == tail) {
            stack[sp].node = tail;
            stack[sp].depth = depth;
            sp++;
        }
        p = *eol ? eol + 1 : eol;
    }
    return first;
}

static int parse_block(gen *g, int bi, int depth_guard)
{
    return parse_text(g, blocks[bi].text, depth_guard);
}

static void render_node_heads(gen *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        node *n = &g->nodes[i];
        sbuf b = { 0 };
        sb_fmt(&b, "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%.*s\", \"pid\": %d, \"tid\": ",
               n->annotation ? "user_annotation" : "cpu_op", n->name_len, n->name, g->pid);
        n->head = b.p;
        n->head_len = b.len;
    }
}

static void render_kernel_args(gen *g)
{
    for (int i = 0; i < NKERNELS; i++) {
        const kernel_def *k = &kernel_table[i];
        sbuf b = { 0 };
        if ((k->kind == KK_KERNEL || k->kind == KK_COMM) && g->opt.gpu_shape) {
            /* the GPU-heavy shape: the launch geometry only (~175 bytes an event on average) */
            sb_fmt(&b, ", \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d]", k->grid[0], k->grid[1], k->grid[2],
                   k->block[0], k->block[1], k->block[2]);
        } else if (k->kind == KK_KERNEL || k->kind == KK_COMM) {
            sb_fmt(&b,
                   ", \"registers per thread\": %d, \"shared memory\": %d, \"blocks per SM\": %s, "
                   "\"warps per SM\": %s, \"grid\": [%d, %d, %d], \"block\": [%d, %d, %d], "
                   "\"est. achieved occupancy %%\": %d",
                   k->regs, k->smem, k->bps, k->wps, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
                   k->block[2], k->occupancy);
        } else if (k->kind == KK_MEMCPY || k->kind == KK_MEMSET) {
            double gbps = (double)k->bytes / (k->base_us * 1e3);
            sb_fmt(&b, ", \"bytes\": %" PRId64 ", \"memory bandwidth (GB/s)\": %.6g", k->bytes, gbps);
        } else {
            sb_add(&b, "", 0);
        }
        g->kernel_args[i] = b.p;
        g->kernel_args_len[i] = b.len;
    }
}

/* ---- simulation of one rank ---------------------------------------------- */

static void mem_event(gen *g, sim *s, int thread, int64_t bytes, int64_t addr)
{
    s->allocated += bytes;
    if (s->allocated > s->reserved) {
        /* the caching allocator grows in 20 MiB segments */
        int64_t seg = 20971520;
        s->reserved = (s->allocated + seg - 1) / seg * seg;
    }
    if (!s->emit)
        return;
    rec *r = new_rec(g);
    r->kind = R_MEM;
    r->thread = (uint8_t)thread;
    r->ts = s->cpu[thread];
    r->a = bytes;
    r->b = s->allocated;
    r->c = s->reserved;
    r->d = addr;
    r->ext = s->evidx++;
}

static void alloc(gen *g, sim *s, int thread, int64_t bytes)
{
    if (s->nlive == s->live_cap) {
        size_t cap = s->live_cap ? s->live_cap * 2 : 1024;
        alloc_entry *l = realloc(s->live, cap * sizeof *l);
        if (l == NULL)
            die("out of memory");
        s->live = l;
        s->live_cap = cap;
    }
    int64_t addr = s->next_addr;
    s->next_addr += (bytes + 511) / 512 * 512;
    if (s->next_addr > 139900000000000 + ((int64_t)80 << 30))
        s->next_addr = 139900000000000;
    s->live[s->nlive].bytes = bytes;
    s->live[s->nlive].addr = addr;
    s->nlive++;
    mem_event(g, s, thread, bytes, addr);
}

/* Free the most recent `n` live allocations (activations die in reverse order). */
static void free_some(gen *g, sim *s, int thread, size_t n)
{
    while (n-- > 0 && s->nlive > 0) {
        alloc_entry e = s->live[--s->nlive];
        s->cpu[thread] += 300 + (int64_t)(splitmix(&s->rng) % 400);
        mem_event(g, s, thread, -e.bytes, e.addr);
    }
}

static double kernel_factor(const gen *g, const sim *s, int ki)
{
    double f = g->kscale[ki];
    if (kernel_table[ki].kind == KK_KERNEL)
        f *= s->slow;
    return f;
}

/* Issue GPU work `ki` from `thread` at the current CPU time. */
static void launch(gen *g, sim *s, int thread, int ki, int64_t ext)
{
    const kernel_def *k = &kernel_table[ki];
    int64_t t = s->cpu[thread];
    int64_t rt_dur = jitter(&s->rng, launch_calls[k->kind].us * 1000.0, 0.15, 0.004);
    int64_t corr = ++s->corr;
    int st = k->stream;
    int64_t gstart = 0, gdur = 0;
    int gpu = 0;

    switch (k->kind) {
    case KK_KERNEL:
    case KK_MEMCPY:
    case KK_MEMSET: {
        int64_t ready = t + 2500 + (int64_t)(splitmix(&s->rng) % 3000);
        int64_t gap = 1200 + (int64_t)(splitmix(&s->rng) % 1500);
        gstart = ready > s->gpu_free[st] + gap ? ready : s->gpu_free[st] + gap;
        double sigma = k->kind == KK_KERNEL ? 0.02 : 0.08;
        gdur = jitter(&s->rng, k->base_us * 1000.0 * kernel_factor(g, s, ki), sigma, 0);
        s->gpu_free[st] = gstart + gdur;
        gpu = 1;
        if (st == ST_COMPUTE) {
            if (s->step_gpu_first == INT64_MIN)
                s->step_gpu_first = gstart;
            s->step_gpu_last = gstart + gdur;
        }
        break;
    }
    case KK_COMM: {
        int64_t ready = t + 3000 + (int64_t)(splitmix(&s->rng) % 3000);
        int64_t gap = 1500 + (int64_t)(splitmix(&s->rng) % 1500);
        gstart = ready > s->gpu_free[st] + gap ? ready : s->gpu_free[st] + gap;
        s->arrival = gstart;
        gdur = 0; /* set when the collective is resolved */
        gpu = 1;
        break;
    }
    case KK_WAIT: {
        /* the event was recorded on `other` just before: the waiting stream is blocked
         * until that stream's queued work is done */
        int64_t ready = t + 2000;
        gstart = ready > s->gpu_free[st] ? ready : s->gpu_free[st];
        gdur = 1000 + (int64_t)(splitmix(&s->rng) % 2000);
        if (s->gpu_free[k->other] > gstart + gdur)
            s->gpu_free[st] = s->gpu_free[k->other];
        else
            s->gpu_free[st] = gstart + gdur;
        gpu = 1;
        break;
    }
    case KK_SYNC: {
        /* the CPU blocks until the stream is idle */
        int64_t done = s->gpu_free[st];
        gstart = done > t ? done : t;
        gdur = 1000 + (int64_t)(splitmix(&s->rng) % 1500);
        if (done > t)
            rt_dur += done - t;
        gpu = 1;
        break;
    }
    default:
        break;
    }
    if (s->emit) {
        rec *r = new_rec(g);
        r->kind = R_RT;
        r->thread = (uint8_t)thread;
        r->ref = ki;
        r->ts = t;
        r->dur = rt_dur;
        r->ext = ext;
        r->corr = corr;
        r->flow = (uint8_t)(gpu && (k->kind != KK_WAIT && k->kind != KK_SYNC));
        if (gpu) {
            r = new_rec(g);
            r->kind = R_GPU;
            r->ref = ki;
            r->ts = gstart;
            r->dur = gdur;
            r->ext = ext;
            r->corr = corr;
            if (k->kind == KK_COMM)
                s->comm_rec = (int64_t)(g->nrec - 1);
        }
    }
    s->cpu[thread] = t + rt_dur;
}

/* Run operator `ni` and its children on `thread`. cpu_only: a replica without GPU work
 * or memory events (--cpu-mult). */
static void run_node(gen *g, sim *s, int thread, int ni, int cpu_only)
{
    const node *n = &g->nodes[ni];
    int64_t start = s->cpu[thread];
    int64_t ext = ++s->ext;
    size_t ri = 0;
    if (s->emit) {
        rec *r = new_rec(g);
        ri = g->nrec - 1;
        r->kind = n->annotation ? R_ANN : R_CPU;
        r->thread = (uint8_t)thread;
        r->ref = ni;
        r->ts = start;
        r->ext = ext;
        r->a = s->evidx++;
        r->b = n->seq ? s->seq : -1;
    }
    if (n->seq)
        s->seq++;
    int64_t self = jitter(&s->rng, n->cpu_us * 1000.0, 0.2, 0.003);
    if (ni == g->data_node && s->rank == g->opt.data_rank)
        self += jitter(&s->rng, g->opt.data_ms * 1e6, 0.05, 0); /* a slow input pipeline on one rank */
    s->cpu[thread] += self / 2;
    if (n->mem > 0 && !cpu_only)
        alloc(g, s, thread, n->mem);
    for (int c = n->first_child; c >= 0; c = g->nodes[c].next)
        run_node(g, s, thread, c, cpu_only);
    if (!cpu_only)
        for (int k = 0; k < n->nk; k++)
            launch(g, s, thread, n->kernels[k], ext);
    s->cpu[thread] += self - self / 2;
    if (s->emit)
        g->recs[ri].dur = s->cpu[thread] - start;
}

/* Run every top-level operator of block `bi`; with --cpu-mult K, each operator tree is
 * followed by K-1 replicas on the CPU alone. `free_each`: after each top-level operator,
 * free that many of the most recent allocations (the backward pass releasing activations). */
static void run_block(gen *g, sim *s, int thread, int bi, size_t free_each)
{
    if (bi < 0) /* a block the shape does not have */
        return;
    for (int ni = g->block_root[bi]; ni >= 0; ni = g->nodes[ni].next) {
        run_node(g, s, thread, ni, 0);
        for (int k = 1; k < g->opt.cpu_mult; k++)
            run_node(g, s, thread, ni, 1);
        if (free_each)
            free_some(g, s, thread, free_each);
        s->cpu[thread] += 800 + (int64_t)(splitmix(&s->rng) % 2500); /* Python between ops */
    }
}

static int block_id(const char *name)
{
    int bi = block_index(name, strlen(name));
    if (bi < 0)
        die("internal: no block %s", name);
    return bi;
}

/* The collective every rank just issued ends when the last rank has arrived, plus the
 * transfer itself (the same on every rank: drawn from the run's seed, not a rank's). */
static void resolve_collective(gen *g, int ki, int bucket)
{
    int64_t last = INT64_MIN;
    for (int i = 0; i < g->nsims; i++)
        if (g->sims[i].arrival > last)
            last = g->sims[i].arrival;
    uint64_t h = g->opt.seed * 0x2545f4914f6cdd1dull + (uint64_t)g->step * 1000003u + (uint64_t)bucket * 7919u;
    double scale = g->opt.world > 1 ? 2.0 * (g->opt.world - 1) / g->opt.world / 1.75 : 0.1;
    int64_t xfer = jitter(&h, kernel_table[ki].base_us * 1000.0 * scale * g->kscale[ki], 0.06, 0.01);
    int64_t end = last + xfer;
    for (int i = 0; i < g->nsims; i++) {
        sim *s = &g->sims[i];
        s->gpu_free[ST_COMM] = end;
        if (s->emit && s->comm_rec >= 0)
            g->recs[s->comm_rec].dur = end - g->recs[s->comm_rec].ts;
        s->comm_rec = -1;
    }
}

/* ---- writing events ----------------------------------------------------- */

static inline char *event_start(gen *g, char *p)
{
    if (g->first_event) {
        g->first_event = 0;
        return PUT(p, "\n");
    }
    return PUT(p, ",\n");
}

static inline char *put_ts(gen *g, char *p, int64_t t)
{
    return put_us(p, t - g->base_ns);
}

static char *put_tid(gen *g, char *p, int thread)
{
    return put_mem(p, g->tid_str[thread], g->tid_len[thread]);
}

static void write_cpu(gen *g, const rec *r)
{
    const node *n = &g->nodes[r->ref];
    char *p = event_start(g, out_reserve(&g->o));
    p = put_mem(p, n->head, n->head_len);
    p = put_tid(g, p, r->thread);
    p = PUT(p, ",\n    \"ts\": ");
    p = put_ts(g, p, r->ts);
    p = PUT(p, ", \"dur\": ");
    p = put_us(p, r->dur);
    p = PUT(p, ",\n    \"args\": {\n      \"External id\": ");
    p = put_i64(p, r->ext);
    p = PUT(p, ",\"Record function id\": 0, ");
    p = put_mem(p, n->args, n->args_len);
    if (r->b >= 0) {
        p = PUT(p, "\"Fwd thread id\": 0, \"Sequence number\": ");
        p = put_i64(p, r->b);
        p = PUT(p, ", ");
    }
    p = PUT(p, "\"Ev Idx\": ");
    p = put_i64(p, r->a);
    p = PUT(p, "\n    }\n  }");
    g->o.len = (size_t)(p - g->o.buf);
    g->events++;
}

static void write_step_annotation(gen *g, const rec *r)
{
    char *p = event_start(g, out_reserve(&g->o));
    p = PUT(p, "  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#");
    p = put_i64(p, -(int64_t)r->ref - 1);
    p = PUT(p, "\", \"pid\": ");
    p = put_mem(p, g->pid_str, g->pid_len);
    p = PUT(p, ", \"tid\": ");
    p = put_tid(g, p, r->thread);
    p = PUT(p, ",\n    \"ts\": ");
    p = put_ts(g, p, r->ts);
    p = PUT(p, ", \"dur\": ");
    p = put_us(p, r->dur);
    p = PUT(p, ",\n    \"args\": {\n      \"External id\": ");
    p = put_i64(p, r->ext);
    p = PUT(p, ",\"Record function id\": 0, \"Ev Idx\": ");
    p = put_i64(p, r->a);
    p = PUT(p, "\n    }\n  }");
    g->o.len = (size_t)(p - g->o.buf);
    g->events++;
}

static void write_mem(gen *g, const rec *r)
{
    char *p = event_start(g, out_reserve(&g->o));
    p = PUT(
        p,
        "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
    p = put_mem(p, g->pid_str, g->pid_len);
    p = PUT(p, ", \"tid\": ");
    p = put_tid(g, p, r->thread);
    p = PUT(p, ",\n    \"ts\": ");
    p = put_ts(g, p, r->ts);
    p = PUT(p, ",\n    \"args\": {\n      \"Total Reserved\": ");
    p = put_i64(p, r->c);
    p = PUT(p, ", \"Total Allocated\": ");
    p = put_i64(p, r->b);
    p = PUT(p, ", \"Bytes\": ");
    p = put_i64(p, r->a);
    p = PUT(p, ", \"Addr\": ");
    p = put_i64(p, r->d);
    p = PUT(p, ", \"Device Id\": ");
    p = put_mem(p, g->dev_str, g->dev_len);
    p = PUT(p, ", \"Device Type\": 1, \"Ev Idx\": ");
    p = put_i64(p, r->ext);
    p = PUT(p, "\n    }\n  }");
    g->o.len = (size_t)(p - g->o.buf);
    g->events++;
}

static void write_runtime(gen *g, const rec *r)
{
    const kernel_def *k = &kernel_table[r->ref];
    char *p = event_start(g, out_reserve(&g->o));
    p = PUT(p, "  {\n    \"ph\": \"X\", \"cat\": \"");
    p = put_mem(p, launch_calls[k->kind].cat, strlen(launch_calls[k->kind].cat));
    p = PUT(p, "\", \"name\": \"");
    p = put_mem(p, launch_calls[k->kind].name, strlen(launch_calls[k->kind].name));
    p = PUT(p, "\", \"pid\": ");
    p = put_mem(p, g->pid_str, g->pid_len);
    p = PUT(p, ", \"tid\": ");
    p = put_tid(g, p, r->thread);
    p = PUT(p, ",\n    \"ts\": ");
    p = put_ts(g, p, r->ts);
    p = PUT(p, ", \"dur\": ");
    p = put_us(p, r->dur);
    p = PUT(p, ",\n    \"args\": {\n      \"External id\": ");
    p = put_i64(p, r->ext);
    p = PUT(p, ", \"cbid\": ");
    p = put_i64(p, launch_calls[k->kind].cbid);
    p = PUT(p, ", \"correlation\": ");
    p = put_i64(p, r->corr);
    p = PUT(p, "\n    }\n  }");
    if (r->flow) {
        p = PUT(p, ",\n  {\n    \"ph\": \"s\", \"id\": ");
        p = put_i64(p, r->corr);
        p = PUT(p, ", \"pid\": ");
        p = put_mem(p, g->pid_str, g->pid_len);
        p = PUT(p, ", \"tid\": ");
        p = put_tid(g, p, r->thread);
        p = PUT(p, ", \"ts\": ");
        p = put_ts(g, p, r->ts);
        p = PUT(p, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }");
        g->events++;
    }
    g->o.len = (size_t)(p - g->o.buf);
    g->events++;
}

static void write_gpu(gen *g, const rec *r)
{
    const kernel_def *k = &kernel_table[r->ref];
    int sid = stream_ids[k->stream];
    char *p = event_start(g, out_reserve(&g->o));
    const char *cat = "kernel";
    switch (k->kind) {
    case KK_MEMCPY:
        cat = "gpu_memcpy";
        break;
    case KK_MEMSET:
        cat = "gpu_memset";
        break;
    case KK_WAIT:
    case KK_SYNC:
        cat = "cuda_sync";
        break;
    default:
        break;
    }
    p = PUT(p, "  {\n    \"ph\": \"X\", \"cat\": \"");
    p = put_mem(p, cat, strlen(cat));
    p = PUT(p, "\", \"name\": \"");
    p = put_mem(p, k->name, strlen(k->name));
    p = PUT(p, "\", \"pid\": ");
    p = put_mem(p, g->dev_str, g->dev_len);
    p = PUT(p, ", \"tid\": ");
    p = put_i64(p, sid);
    p = PUT(p, ",\n    \"ts\": ");
    p = put_ts(g, p, r->ts);
    p = PUT(p, ", \"dur\": ");
    p = put_us(p, r->dur);
    p = PUT(p, ",\n    \"args\": {\n      \"External id\": ");
    p = put_i64(p, r->ext);
    if (k->kind == KK_WAIT || k->kind == KK_SYNC) {
        p = PUT(p, ", \"cuda_sync_kind\": \"");
        p = put_mem(p, k->name, strlen(k->name));
        p = PUT(p, "\"");
        if (k->kind == KK_WAIT) {
            p = PUT(p, ", \"wait_on_stream\": ");
            p = put_i64(p, stream_ids[k->other]);
            p = PUT(p, ", \"wait_on_cuda_event_record_corr_id\": ");
            p = put_i64(p, r->corr - 1);
        }
        p = PUT(p, ", \"stream\": ");
        p = put_i64(p, sid);
        p = PUT(p, ", \"correlation\": ");
        p = put_i64(p, r->corr);
        p = PUT(p, ", \"device\": ");
        p = put_mem(p, g->dev_str, g->dev_len);
        p = PUT(p, ", \"context\": 1\n    }\n  }");
    } else {
        if (k->kind != KK_MEMCPY && k->kind != KK_MEMSET && !g->opt.gpu_shape)
            p = PUT(p, ", \"queued\": 0");
        p = PUT(p, ", \"device\": ");
        p = put_mem(p, g->dev_str, g->dev_len);
        p = PUT(p, ", \"context\": 1, \"stream\": ");
        p = put_i64(p, sid);
        p = PUT(p, ", \"correlation\": ");
        p = put_i64(p, r->corr);
        p = put_mem(p, g->kernel_args[r->ref], g->kernel_args_len[r->ref]);
        p = PUT(p, "\n    }\n  },\n  {\n    \"ph\": \"f\", \"id\": ");
        p = put_i64(p, r->corr);
        p = PUT(p, ", \"pid\": ");
        p = put_mem(p, g->dev_str, g->dev_len);
        p = PUT(p, ", \"tid\": ");
        p = put_i64(p, sid);
        p = PUT(p, ", \"ts\": ");
        p = put_ts(g, p, r->ts);
        p = PUT(p, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }");
        g->events++;
    }
    g->o.len = (size_t)(p - g->o.buf);
    g->events++;
}

static void write_gpu_annotation(gen *g, const rec *r)
{
    char *p = event_start(g, out_reserve(&g->o));
    p = PUT(p, "  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#");
    p = put_i64(p, r->a);
    p = PUT(p, "\", \"pid\": ");
    p = put_mem(p, g->dev_str, g->dev_len);
    p = PUT(p, ", \"tid\": 7,\n    \"ts\": ");
    p = put_ts(g, p, r->ts);
    p = PUT(p, ", \"dur\": ");
    p = put_us(p, r->dur);
    p = PUT(p, ",\n    \"args\": {\n      \"External id\": ");
    p = put_i64(p, r->ext);
    p = PUT(p, ", \"device\": ");
    p = put_mem(p, g->dev_str, g->dev_len);
    p = PUT(p, ", \"stream\": 7\n    }\n  }");
    g->o.len = (size_t)(p - g->o.buf);
    g->events++;
}

/* The GPU-heavy shape writes each event on one line (its "\n    " indents dropped; an event
 * still starts a line): about 175 bytes an event on average, as in the traces of that shape. */
static void squeeze(gen *g, size_t from)
{
    char *b = g->o.buf;
    size_t w = from, n = g->o.len;
    for (size_t r = from; r < n; r++) {
        if (b[r] == '\n' && r > from) {
            size_t e = r + 1;
            while (e < n && b[e] == ' ')
                e++;
            if (e >= n || b[e] != '{') {
                r = e - 1;
                continue;
            }
        }
        b[w++] = b[r];
    }
    g->o.len = w;
}

/* Kineto writes the CPU side of a step first, then the GPU activity with its launches. */
static void write_step(gen *g)
{
    out_reserve(&g->o);
    size_t from = g->o.len;
    for (size_t i = 0; i < g->nrec; i++) {
        const rec *r = &g->recs[i];
        if (g->opt.gpu_shape) {
            squeeze(g, from);
            out_reserve(&g->o); /* flush here, so that `from` stays in the buffer */
            from = g->o.len;
        }
        switch (r->kind) {
        case R_CPU:
            write_cpu(g, r);
            break;
        case R_ANN:
            if (r->ref < 0)
                write_step_annotation(g, r);
            else
                write_cpu(g, r);
            break;
        case R_MEM:
            write_mem(g, r);
            break;
        default:
            break;
        }
    }
    for (size_t i = 0; i < g->nrec; i++) {
        const rec *r = &g->recs[i];
        if (g->opt.gpu_shape) {
            squeeze(g, from);
            out_reserve(&g->o); /* flush here, so that `from` stays in the buffer */
            from = g->o.len;
        }
        switch (r->kind) {
        case R_RT:
            write_runtime(g, r);
            break;
        case R_GPU:
            write_gpu(g, r);
            break;
        case R_GPU_ANN:
            write_gpu_annotation(g, r);
            break;
        default:
            break;
        }
    }
    if (g->opt.gpu_shape)
        squeeze(g, from);
    g->nrec = 0;
}

/* ---- one training step on every simulated rank --------------------------- */

static void run_step(gen *g)
{
    int bi_data = block_id("data"), bi_embed = block_id("embed_fwd"), bi_layer = block_id("layer_fwd");
    int bi_head = block_id("head_fwd"), bi_bstart = block_id("bwd_start"), bi_hbwd = block_id("head_bwd");
    int bi_lbwd = block_id("layer_bwd"), bi_ebwd = block_id("embed_bwd"), bi_ddp = block_id("ddp_allreduce");
    if (g->opt.gpu_shape) {
        /* the compiled model: its layers, the DDP buckets, the optimizer and the loss */
        bi_data = bi_embed = bi_head = bi_bstart = bi_hbwd = bi_ebwd = -1;
        bi_layer = block_id("g_layer_fwd");
        bi_lbwd = block_id("g_layer_bwd");
    }
    int bi_optim = block_id("optim"), bi_lar = block_id("loss_allreduce"), bi_item = block_id("loss_item");
    int ki_ar_bf16 = kernel_index("ar_bf16", 7), ki_ar_f32 = kernel_index("ar_f32", 6);
    int layers = g->opt.layers;
    int per_bucket = 4;
    int nbuckets = (layers + per_bucket - 1) / per_bucket;
    size_t step_rec = 0;

    /* forward, loss and the start of backward */
    for (int i = 0; i < g->nsims; i++) {
        sim *s = &g->sims[i];
        s->step_gpu_first = INT64_MIN;
        s->step_gpu_last = INT64_MIN;
        s->cpu[0] += 40000 + (int64_t)(splitmix(&s->rng) % 30000);
        if (s->emit) {
            rec *r = new_rec(g);
            step_rec = g->nrec - 1;
            r->kind = R_ANN;
            r->ref = -g->step - 1;
            r->ts = s->cpu[0];
            r->ext = ++s->ext;
            r->a = s->evidx++;
        } else {
            ++s->ext;
        }
        s->cpu[0] += 9000 + (int64_t)(splitmix(&s->rng) % 3000);
        run_block(g, s, 0, bi_data, 0);
        run_block(g, s, 0, bi_embed, 0);
        for (int l = 0; l < layers; l++)
            run_block(g, s, 0, bi_layer, 0);
        run_block(g, s, 0, bi_head, 0);
        run_block(g, s, 0, bi_bstart, 0);
        /* loss.backward(): the autograd engine's device thread does the work */
        s->cpu[1] = s->cpu[0] + 25000 + (int64_t)(splitmix(&s->rng) % 10000);
        run_block(g, s, 1, bi_hbwd, 1);
    }
    /* backward, one DDP bucket at a time, each ending in an all-reduce */
    for (int b = 0; b < nbuckets; b++) {
        for (int i = 0; i < g->nsims; i++) {
            sim *s = &g->sims[i];
            for (int l = b * per_bucket; l < layers && l < (b + 1) * per_bucket; l++)
                run_block(g, s, 1, bi_lbwd, 1);
            if (b == nbuckets - 1)
                run_block(g, s, 1, bi_ebwd, 1);
            run_block(g, s, 1, bi_ddp, 0);
        }
        resolve_collective(g, ki_ar_bf16, b);
    }
    /* the optimizer waits for the gradients, then the loss is averaged and read */
    for (int i = 0; i < g->nsims; i++) {
        sim *s = &g->sims[i];
        int64_t back = s->cpu[1] + 30000 + (int64_t)(splitmix(&s->rng) % 20000);
        s->cpu[0] = back > s->cpu[0] ? back : s->cpu[0];
        launch(g, s, 0, kernel_index("wait_comm", 9), s->ext);
        run_block(g, s, 0, bi_optim, 0);
        free_some(g, s, 0, s->nlive > 64 ? s->nlive - 64 : 0);
        run_block(g, s, 0, bi_lar, 0);
    }
    resolve_collective(g, ki_ar_f32, nbuckets);
    for (int i = 0; i < g->nsims; i++) {
        sim *s = &g->sims[i];
        run_block(g, s, 0, bi_item, 0);
        free_some(g, s, 0, s->nlive);
        s->cpu[0] += 15000 + (int64_t)(splitmix(&s->rng) % 10000);
        if (s->emit) {
            rec *r = &g->recs[step_rec];
            r->dur = s->cpu[0] - r->ts;
            if (s->step_gpu_first != INT64_MIN) {
                rec *a = new_rec(g);
                a->kind = R_GPU_ANN;
                a->ts = s->step_gpu_first;
                a->dur = s->step_gpu_last - s->step_gpu_first;
                a->ext = r->ext;
                a->a = g->step;
            }
        }
    }
}

/* ---- the file ----------------------------------------------------------- */

static void put_str(gen *g, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        char *p = out_reserve(&g->o);
        size_t k = n < OUT_SLACK ? n : OUT_SLACK;
        memcpy(p, s, k);
        g->o.len += k;
        s += k;
        n -= k;
    }
}

static void put_fmt(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(gen *g, const char *fmt, ...)
{
    char *p = out_reserve(&g->o);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, OUT_SLACK, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->o.len += (size_t)n < OUT_SLACK ? (size_t)n : OUT_SLACK - 1;
}

static void write_header(gen *g)
{
    const gen_options *o = &g->opt;
    put_str(g, "\n{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (int d = 0; d < 8; d++) {
        put_fmt(g,
                "    {\n      \"id\": %d, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85031714816,\n"
                "      \"computeMajor\": 8, \"computeMinor\": 0,\n"
                "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
                "      \"sharedMemPerBlock\": 49152, \"numSms\": 108\n"
                "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 166912, "
                "\"sharedMemPerMultiprocessor\": 167936\n    }%s\n",
                d, d < 7 ? "," : "");
    }
    put_str(g, "  ],\n  \"cupti_version\": 24,\n  \"cuda_runtime_version\": 12010,\n"
               "  \"cuda_driver_version\": 12020,\n");
    put_fmt(g,
            "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d, "
            "\"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
            "\"backend_config\": \"cuda:nccl\", \"pg_size\": %d, \"ranks\": [",
            o->rank, o->world, o->world);
    for (int r = 0; r < o->world; r++)
        put_fmt(g, "%s%d", r ? ", " : "", r);
    put_str(g, "]}], \"nccl_version\": \"2.18.5\"},\n");
    put_str(g, g->opt.gpu_shape ? "  \"record_shapes\": 0,\n  \"profile_memory\": 0,\n"
                                : "  \"record_shapes\": 1,\n  \"profile_memory\": 1,\n");
    put_fmt(g, "  \"trace_id\": \"%016" PRIX64 "\",\n",
            (uint64_t)(o->seed * 0x9e3779b97f4a7c15ull + (uint64_t)o->rank));
    put_str(g, "  \"displayTimeUnit\": \"ms\",\n");
    put_fmt(g, "  \"baseTimeNanoseconds\": %" PRId64 ",\n  \"traceEvents\": [", g->base_ns);
    /* process metadata, as Kineto writes it first */
    char *p;
    const char *pm[][2] = { { "process_name", "\"name\": \"python3\"" }, { "process_labels", "\"labels\": \"CPU\"" } };
    for (int i = 0; i < 2; i++) {
        p = event_start(g, out_reserve(&g->o));
        g->o.len = (size_t)(p - g->o.buf);
        put_fmt(g, "  {\n    \"name\": \"%s\", \"ph\": \"M\", \"ts\": ", pm[i][0]);
        p = put_ts(g, g->o.buf + g->o.len, g->t0);
        g->o.len = (size_t)(p - g->o.buf);
        put_fmt(g, ", \"pid\": %d, \"tid\": 0,\n    \"args\": {\n      %s\n    }\n  }", g->pid, pm[i][1]);
        g->events++;
    }
    for (int i = 0; i < 3; i++) {
        static const char *names[] = { "process_name", "process_labels", "process_sort_index" };
        p = event_start(g, out_reserve(&g->o));
        g->o.len = (size_t)(p - g->o.buf);
        put_fmt(g, "  {\n    \"name\": \"%s\", \"ph\": \"M\", \"ts\": ", names[i]);
        p = put_ts(g, g->o.buf + g->o.len, g->t0);
        g->o.len = (size_t)(p - g->o.buf);
        if (i == 0)
            put_fmt(g, ", \"pid\": %d, \"tid\": 0,\n    \"args\": {\n      \"name\": \"python3\"\n    }\n  }",
                    g->device);
        else if (i == 1)
            put_fmt(g, ", \"pid\": %d, \"tid\": 0,\n    \"args\": {\n      \"labels\": \"GPU %d\"\n    }\n  }",
                    g->device, g->device);
        else
            put_fmt(g, ", \"pid\": %d, \"tid\": 0,\n    \"args\": {\n      \"sort_index\": %d\n    }\n  }", g->device,
                    5000000 + g->device);
        g->events++;
    }
}

static void write_trailer(gen *g, int64_t end)
{
    char *p;
    struct {
        int pid, tid;
        const char *name; /* CPU threads: "thread <tid> (<name>)" */
    } threads[] = {
        { g->pid, g->tid_main, "python3" }, { g->pid, g->tid_bwd, "pt_autograd_0" }, { g->device, 7, "stream 7 " },
        { g->device, 20, "stream 20 " },    { g->device, 24, "stream 24 " },
    };
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        for (int kind = 0; kind < 2; kind++) {
            p = event_start(g, out_reserve(&g->o));
            g->o.len = (size_t)(p - g->o.buf);
            put_fmt(g,
                    "  {\n    \"name\": \"%s\", \"ph\": \"M\", \"ts\": ", kind ? "thread_sort_index" : "thread_name");
            p = put_ts(g, g->o.buf + g->o.len, g->t0);
            g->o.len = (size_t)(p - g->o.buf);
            put_fmt(g, ", \"pid\": %d, \"tid\": %d,\n    \"args\": {\n      ", threads[i].pid, threads[i].tid);
            if (kind) {
                put_fmt(g, "\"sort_index\": %d\n    }\n  }", threads[i].tid);
            } else {
                char name[64];
                if (threads[i].pid == g->pid)
                    snprintf(name, sizeof name, "thread %d (%s)", threads[i].tid, threads[i].name);
                else
                    snprintf(name, sizeof name, "%s", threads[i].name);
                put_fmt(g, "\"name\": \"%s\"\n    }\n  }", name);
            }
            g->events++;
        }
    }
    p = event_start(g, out_reserve(&g->o));
    g->o.len = (size_t)(p - g->o.buf);
    put_str(g, "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    p = put_ts(g, g->o.buf + g->o.len, g->t0);
    p = PUT(p, ", \"dur\": ");
    p = put_us(p, end - g->t0);
    g->o.len = (size_t)(p - g->o.buf);
    put_str(g, ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n"
               "    \"args\": {\n      \"Op count\": 0\n    }\n  },\n"
               "  {\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
    p = put_ts(g, g->o.buf + g->o.len, g->t0);
    g->o.len = (size_t)(p - g->o.buf);
    put_str(g, ",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": 536870912\n    }\n  },\n"
               "  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
               "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    p = put_ts(g, g->o.buf + g->o.len, g->t0);
    g->o.len = (size_t)(p - g->o.buf);
    put_str(g, "\n  },\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
               "    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    p = put_ts(g, g->o.buf + g->o.len, end + 1000);
    g->o.len = (size_t)(p - g->o.buf);
    put_str(g, "\n  }\n  ],\n  \"traceName\": \"");
    /* the name of the uncompressed trace, so that a .gz holds the same text */
    char name[4096];
    const char *tn = g->opt.trace_name;
    if (tn && g->opt.ranks > 0)
        snprintf(name, sizeof name, "%s/rank%d.pt.trace.json", tn, g->opt.rank);
    else
        snprintf(name, sizeof name, "%s", tn ? tn : g->o.path);
    size_t nl = strlen(name);
    if (nl > 3 && strcmp(name + nl - 3, ".gz") == 0)
        name[nl - 3] = '\0';
    for (char *c = name; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
            *c = '_';
    put_str(g, name);
    put_str(g, "\"\n}\n");
    g->events += 4;
}

/* ---- one file ----------------------------------------------------------- */

static void sim_init(gen *g, sim *s, int rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->rng = g->opt.seed * 0xd1b54a32d192ed03ull + (uint64_t)rank * 0x9e3779b97f4a7c15ull + 1;
    /* ranks start within a few ms of each other and their clocks disagree by a few us */
    int64_t start = g->t0 + (int64_t)(splitmix(&s->rng) % 3000000);
    s->cpu[0] = s->cpu[1] = start;
    for (int i = 0; i < ST_COUNT; i++)
        s->gpu_free[i] = start;
    s->ext = 1 + (int64_t)(splitmix(&s->rng) % 1000);
    s->corr = 100000 + (int64_t)(splitmix(&s->rng) % 100000);
    s->seq = 1000 + (int64_t)(splitmix(&s->rng) % 1000);
    s->slow = rank == g->opt.slow_rank ? g->opt.slow_factor : 1.0;
    /* weights, gradients and AdamW state of a ~350M-parameter model */
    s->allocated = 6015680512 + (int64_t)(splitmix(&s->rng) % 4096) * 512;
    s->reserved = (s->allocated / 20971520 + 1) * 20971520;
    s->next_addr = 139900000000000 + (int64_t)(splitmix(&s->rng) % 1024) * 2097152;
    s->comm_rec = -1;
}

static int generate_one(const gen_options *opt, const char *path, int rank)
{
    gen *g = calloc(1, sizeof *g);
    if (g == NULL)
        die("out of memory");
    g->opt = *opt;
    g->opt.rank = rank;
    /* parse the operator trees and find the kernel scales */
    for (int b = 0; b < NBLOCKS; b++)
        g->block_root[b] = parse_block(g, b, 0);
    g->data_node = g->block_root[block_id("data")];
    for (int i = 0; i < NKERNELS; i++)
        g->kscale[i] = 1.0;
    for (int j = 0; j < opt->nscales; j++) {
        int hit = 0;
        for (int i = 0; i < NKERNELS; i++) {
            const kernel_def *k = &kernel_table[i];
            if (scale_names(&opt->scales[j], k->key) || scale_names(&opt->scales[j], k->name)) {
                g->kscale[i] *= opt->scales[j].factor;
                hit = 1;
            }
        }
        if (!hit)
            die("--kernel-scale: no kernel named \"%.*s\" (see --list-kernels)", opt->scales[j].len,
                opt->scales[j].name);
    }
    g->pid = 2146000 + rank * 37 + (int)(opt->seed % 1000);
    g->tid_main = g->pid;
    g->tid_bwd = g->pid + 211;
    g->device = rank % 8;
    g->pid_len = (size_t)snprintf(g->pid_str, sizeof g->pid_str, "%d", g->pid);
    g->dev_len = (size_t)snprintf(g->dev_str, sizeof g->dev_str, "%d", g->device);
    g->tid_len[0] = (size_t)snprintf(g->tid_str[0], sizeof g->tid_str[0], "%d", g->tid_main);
    g->tid_len[1] = (size_t)snprintf(g->tid_str[1], sizeof g->tid_str[1], "%d", g->tid_bwd);
    render_node_heads(g);
    render_kernel_args(g);
    g->t0 = 1694128201545123456LL + (int64_t)(opt->seed % 1000) * 1000000000LL;
    g->base_ns = opt->relative_ts ? g->t0 / 1000000000 * 1000000000 : 0;

    /* the ranks simulated: all of a small world, else the first 16, the slow one and us */
    int max_sims = opt->world <= 16 ? opt->world : 18;
    g->sims = calloc((size_t)max_sims, sizeof *g->sims);
    if (g->sims == NULL)
        die("out of memory");
    g->target = -1;
    for (int r = 0; r < opt->world && g->nsims < max_sims; r++) {
        if (opt->world > 16 && r >= 16 && r != opt->slow_rank && r != rank)
            continue;
        if (r == rank)
            g->target = g->nsims;
        sim_init(g, &g->sims[g->nsims++], r);
    }
    g->sims[g->target].emit = 1;

    if (out_open(&g->o, path, opt->gzip, opt->level) != 0)
        exit(1);
    g->first_event = 1;
    write_header(g);
    uint64_t limit = opt->size_mb > 0 ? (uint64_t)(opt->size_mb * 1e6) : 0;
    int nsteps = 0;
    for (;;) {
        if (limit) {
            /* stop at the step count that comes closest to the size asked for */
            uint64_t sofar = g->o.raw_bytes + g->o.len;
            if (sofar >= limit || (nsteps > 0 && sofar + sofar / (uint64_t)nsteps / 2 >= limit))
                break;
        } else if (nsteps >= opt->steps) {
            break;
        }
        g->step = opt->first_step + nsteps;
        run_step(g);
        write_step(g);
        nsteps++;
    }
    sim *t = &g->sims[g->target];
    int64_t end = t->cpu[0] > t->gpu_free[ST_COMPUTE] ? t->cpu[0] : t->gpu_free[ST_COMPUTE];
    write_trailer(g, end);
    uint64_t raw = g->o.raw_bytes + g->o.len;
    int rc = out_close(&g->o);
    if (rc == 0 && !opt->quiet)
        fprintf(stderr, "%s: rank %d/%d, %d steps, %" PRIu64 " events, %.1f MB%s\n", path, rank, opt->world, nsteps,
                g->events, (double)raw / 1e6, opt->gzip ? " before gzip" : "");
    for (int i = 0; i < g->nnodes; i++) {
        free(g->nodes[i].args);
        free(g->nodes[i].head);
    }
    for (int i = 0; i < NKERNELS; i++)
        free(g->kernel_args[i]);
    for (int i = 0; i < g->nsims; i++)
        free(g->sims[i].live);
    free(g->sims);
    free(g->nodes);
    free(g->recs);
    free(g);
    return rc;
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f)
{
    fputs("usage: bench_gen_kineto_trace [options]\n"
          "Write synthetic PyTorch profiler (Kineto) traces of a DDP transformer training run.\n"
          "  --out FILE           output file; a .gz suffix writes gzip (default: stdout)\n"
          "  --rank R --world W   the rank written and the number of ranks (default 0 of 8)\n"
          "  --ranks N --dir D    write ranks 0..N-1 (world N) as D/rank{r}.pt.trace.json[.gz]\n"
          "  --gzip               gzip output in --dir mode (or with --out -)\n"
          "  --level L            gzip level, 1..9 (default 1)\n"
          "  --steps N            training steps (default 4)\n"
          "  --size-mb M          keep adding steps until the file is about M MB (uncompressed)\n"
          "  --first-step N       number of the first ProfilerStep (default 2)\n"
          "  --layers N           transformer layers (default 24)\n"
          "  --seed S             random seed (default 1)\n"
          "  --data-rank R --data-ms MS\n"
          "                       rank R's DataLoader next() takes MS ms more in every step\n"
          "  --slow-rank R --slow-factor F\n"
          "                       rank R's compute kernels take F x longer (stragglers)\n"
          "  --kernel-scale NAME=F\n"
          "                       the kernel NAME (a key from --list-kernels or a full kernel\n"
          "                       name) takes F x longer on every rank; may be repeated\n"
          "  --cpu-mult K         each CPU operator tree also runs K-1 more times on the CPU alone\n"
          "                       (more CPU-side events, same names and GPU events)\n"
          "  --shape ops|gpu      ops (default): record_shapes, nested operators, ~350 bytes an\n"
          "                       event; gpu: the GPU-heavy training shape (torch.compile'd layers:\n"
          "                       ~2,400 kernels, launches and 4,800 flows a step, ~175 bytes an\n"
          "                       event, no shapes, relative ts; 300 steps ~ 526 MB, 3.0 M events)\n"
          "  --relative-ts        ts relative to baseTimeNanoseconds (newer Kineto)\n"
          "  --trace-name NAME    the \"traceName\" written (default: the output path)\n"
          "  --jobs N             processes in --ranks mode (default 1)\n"
          "  --quiet              no summary on stderr\n"
          "  --list-kernels       print the kernel keys and names\n",
          f);
}

static const char *need_arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        die("%s needs a value", argv[*i]);
    return argv[++*i];
}

static int parse_int(const char *s, const char *what)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno || *e || e == s || v < 0 || v > 1000000000)
        die("%s: bad number \"%s\"", what, s);
    return (int)v;
}

static double parse_double(const char *s, const char *what)
{
    char *e;
    double v = strtod(s, &e);
    if (*e || e == s || !(v > 0) || v > 1e9)
        die("%s: bad number \"%s\"", what, s);
    return v;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int bench_gen_main(int argc, char **argv)
{
    gen_options o;
    memset(&o, 0, sizeof o);
    o.out = "-";
    o.world = 8;
    o.steps = 4;
    o.first_step = 2;
    o.layers = 24;
    o.seed = 1;
    o.slow_rank = -1;
    o.data_rank = -1;
    o.slow_factor = 1.0;
    o.level = 1;
    o.cpu_mult = 1;
    o.jobs = 1;
    int rank_given = 0, world_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--out")) {
            o.out = need_arg(argc, argv, &i);
        } else if (!strcmp(a, "--trace-name")) {
            o.trace_name = need_arg(argc, argv, &i);
        } else if (!strcmp(a, "--dir")) {
            o.dir = need_arg(argc, argv, &i);
        } else if (!strcmp(a, "--rank")) {
            o.rank = parse_int(need_arg(argc, argv, &i), a);
            rank_given = 1;
        } else if (!strcmp(a, "--world")) {
            o.world = parse_int(need_arg(argc, argv, &i), a);
            world_given = 1;
        } else if (!strcmp(a, "--ranks")) {
            o.ranks = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--steps")) {
            o.steps = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--first-step")) {
            o.first_step = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--layers")) {
            o.layers = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--size-mb")) {
            o.size_mb = parse_double(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--seed")) {
            o.seed = (uint64_t)strtoull(need_arg(argc, argv, &i), NULL, 10);
        } else if (!strcmp(a, "--slow-rank")) {
            o.slow_rank = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--data-rank")) {
            o.data_rank = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--data-ms")) {
            o.data_ms = parse_double(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--slow-factor")) {
            o.slow_factor = parse_double(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--kernel-scale")) {
            const char *v = need_arg(argc, argv, &i);
            const char *eq = strrchr(v, '=');
            if (eq == NULL || eq == v)
                die("--kernel-scale wants NAME=FACTOR, not \"%s\"", v);
            if (o.nscales == (int)(sizeof o.scales / sizeof o.scales[0]))
                die("too many --kernel-scale options");
            o.scales[o.nscales].name = v;
            o.scales[o.nscales].len = (int)(eq - v);
            o.scales[o.nscales].factor = parse_double(eq + 1, a);
            o.nscales++;
        } else if (!strcmp(a, "--cpu-mult")) {
            o.cpu_mult = parse_int(need_arg(argc, argv, &i), a);
            if (o.cpu_mult < 1)
                die("--cpu-mult must be at least 1");
        } else if (!strcmp(a, "--shape")) {
            const char *v = need_arg(argc, argv, &i);
            if (!strcmp(v, "gpu"))
                o.gpu_shape = o.relative_ts = 1; /* newer Kineto's relative ts, as such traces have */
            else if (strcmp(v, "ops") != 0)
                die("--shape wants ops or gpu, not \"%s\"", v);
        } else if (!strcmp(a, "--gzip")) {
            o.gzip = 1;
        } else if (!strcmp(a, "--level")) {
            o.level = parse_int(need_arg(argc, argv, &i), a);
            if (o.level < 1 || o.level > 9)
                die("--level must be 1..9");
        } else if (!strcmp(a, "--relative-ts")) {
            o.relative_ts = 1;
        } else if (!strcmp(a, "--jobs") || !strcmp(a, "-j")) {
            o.jobs = parse_int(need_arg(argc, argv, &i), a);
        } else if (!strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--list-kernels")) {
            for (int k = 0; k < NKERNELS; k++)
                if (kernel_table[k].name)
                    printf("%-14s %s\n", kernel_table[k].key, kernel_table[k].name);
            return 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            die("unknown option %s", a);
        }
    }
    if (o.layers < 1)
        die("--layers must be at least 1");
    if (o.ranks > 0) {
        if (o.dir == NULL)
            die("--ranks needs --dir");
        if (world_given && o.world != o.ranks)
            die("--ranks N writes a world of N ranks; drop --world");
        o.world = o.ranks;
        if (mkdir(o.dir, 0755) != 0 && errno != EEXIST)
            die("%s: %s", o.dir, strerror(errno));
        int jobs = o.jobs < 1 ? 1 : o.jobs;
        int failed = 0;
        /* --jobs: ranks are independent files, so each worker process takes every jobs-th rank */
        pid_t kids[64];
        int nk = 0;
        for (int j = 0; j < jobs && j < 64; j++) {
            pid_t pid = jobs > 1 ? fork() : 0;
            if (pid < 0)
                die("fork: %s", strerror(errno));
            if (pid == 0) {
                int rc = 0;
                for (int r = j; r < o.ranks; r += jobs) {
                    char path[4096];
                    snprintf(path, sizeof path, "%s/rank%d.pt.trace.json%s", o.dir, r, o.gzip ? ".gz" : "");
                    if (generate_one(&o, path, r) != 0)
                        rc = 1;
                }
                if (jobs > 1)
                    _exit(rc);
                failed |= rc;
            } else {
                kids[nk++] = pid;
            }
        }
        for (int k = 0; k < nk; k++) {
            int st;
            if (waitpid(kids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                failed = 1;
        }
        return failed ? 1 : 0;
    }
    if (!world_given && rank_given && o.rank >= o.world)
        o.world = o.rank + 1;
    if (o.world < 1 || o.rank >= o.world)
        die("--rank must be below --world");
    if (strcmp(o.out, "-") != 0 && ends_with(o.out, ".gz"))
        o.gzip = 1;
    return generate_one(&o, o.out, o.rank) == 0 ? 0 : 1;
}

#ifndef BENCH_GEN_NO_MAIN
int main(int argc, char **argv)
{
    return bench_gen_main(argc, argv);
}
#endif
