#!/usr/bin/env python3
"""gen_traces.py OUTDIR [CORPUS] - small, deterministic PyTorch-profiler (Kineto) traces for the
judgment set: each is a situation tally has got wrong before (tests/judgment/README.md). Also
libtally reports built from tests/fixtures/tally-report-v1.json (sampled GPU telemetry, repeated
snapshots) and, with CORPUS, Inferix reports made from the corpus' rank 0 report with one thing
changed (the corpus itself is never written).

The traces are written the way Kineto writes them (object form, distributedInfo,
deviceProperties, baseTimeNanoseconds, cpu_op / user_annotation / cuda_runtime / kernel /
gpu_memcpy categories, correlation ids, [memory] instants with Device Type / Device Id), with
every time in microseconds. Each function below builds one situation; the numbers are chosen so
that the finding that must (or must not) appear does not sit on a threshold."""
import json
import os
import random
import sys

H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85021163520}
B200 = {"id": 0, "name": "NVIDIA B200", "totalGlobalMem": 191468650496}
MI300X = {"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992}
BASE_US = 1_700_000_000_000_000  # µs since the epoch


class Trace:
    def __init__(self, rank=0, world=1, device=H100, base_us=BASE_US, pid=4242):
        self.events = []
        self.rank, self.world, self.device, self.base = rank, world, device, base_us
        self.pid, self.tid = pid, pid + 1
        self.corr = 1000
        self.meta = {}

    def cpu(self, name, ts, dur, cat="cpu_op", tid=None):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": tid or self.tid,
                            "ts": self.base + ts, "dur": dur, "args": {}})

    def step(self, n, ts, dur):
        self.cpu(f"ProfilerStep#{n}", ts, dur, cat="user_annotation")

    def launch(self, name, launch_ts, start, dur, stream=7, cat="kernel", api="cudaLaunchKernel", launch_dur=4):
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": self.pid, "tid": self.tid,
                            "ts": self.base + launch_ts, "dur": launch_dur, "args": {"correlation": self.corr}})
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": self.base + start,
                            "dur": dur, "args": {"device": 0, "stream": stream, "correlation": self.corr}})

    def runtime(self, name, ts, dur):
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": self.pid, "tid": self.tid,
                            "ts": self.base + ts, "dur": dur, "args": {"correlation": self.corr}})

    def memory(self, ts, allocated, reserved, device_type=1, device_id=0):
        self.events.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": self.pid,
                            "tid": self.tid, "ts": self.base + ts,
                            "args": {"Device Type": device_type, "Device Id": device_id, "Addr": 1, "Bytes": 1,
                                     "Total Allocated": allocated, "Total Reserved": reserved}})

    def write(self, path):
        doc = {"schemaVersion": 1, "deviceProperties": [self.device],
               "distributedInfo": {"backend": "nccl", "rank": self.rank, "world_size": self.world},
               "baseTimeNanoseconds": 0, "traceEvents": self.events}
        doc.update(self.meta)
        for k in [k for k, v in doc.items() if v is None]:
            del doc[k]  # a key the producer does not write
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f)


def training_rank(rank, world, steps, compute_us, rng, noise=0.02, comm_kernel="ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                  step_gap=200, device=H100, backward=True):
    """A data-parallel training rank: per step forward/backward ops launching compute kernels on
    stream 7, then an all-reduce on stream 20 that ends when the slowest rank arrives."""
    t = Trace(rank, world, device)
    ts = 0
    for n in range(steps):
        c = compute_us[n] if isinstance(compute_us, list) else compute_us
        c *= 1 + noise * (2 * rng.random() - 1)
        slowest = max(compute_us[n] if isinstance(compute_us, list) else compute_us for _ in [0]) * 1.35
        step_dur = int(slowest + 3000 + step_gap)
        t.step(100 + n, ts, step_dur)
        t.cpu("## forward ##", ts + 10, int(c * 0.4) + 100, cat="user_annotation")
        t.cpu("aten::linear", ts + 20, int(c * 0.4), cat="cpu_op")
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 30, ts + 50, int(c * 0.4))
        if backward:
            t.cpu("## backward ##", ts + int(c * 0.4) + 120, int(c * 0.6) + 100, cat="user_annotation")
            t.cpu("autograd::engine::evaluate_function: MmBackward0", ts + int(c * 0.4) + 130, int(c * 0.6), cat="cpu_op")
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", ts + int(c * 0.4) + 140,
                 ts + int(c * 0.4) + 60, int(c * 0.6))
        # the all-reduce: starts when this rank is done, ends when the slowest is
        arrive = ts + 60 + int(c)
        end = ts + 60 + int(slowest) + 2500
        t.launch(comm_kernel, ts + int(c) + 20, arrive, end - arrive, stream=20)
        ts += step_dur
    return t


def ddp_rank(rank, world, steps, loader_us, rng, backend="gloo", skew_us=0, arrivals=None, seq=False, jitter=0.02):
    """A DDP training rank the way PyTorch records one: per step data_loading, forward and
    backward (kernels on stream 7), the gradient all-reduce, optimizer_step. The all-reduce ends
    on every rank at the release: the last arrival plus 2 ms of transfer; arrivals[n][r] is when
    rank r arrives in step n (computed by ddp_job for every rank first). gloo: the CPU range
    gloo:all_reduce on a worker thread holds the wait; nccl: the kernel on stream 20 does. Every
    time is shifted by skew_us (another host's clock)."""
    t = Trace(rank, world)
    if backend == "gloo":
        t.meta["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": world}
    worker = t.tid + 7
    for n in range(steps):
        start, arrive, release, load = arrivals[n][rank]
        sk = skew_us
        t.step(200 + n, start + sk, release + 3000 - start)
        t.cpu("data_loading", start + sk, load, cat="user_annotation")
        t.cpu("aten::randn", start + 10 + sk, 900)
        fwd = (arrive - start - load) * 0.4
        t.cpu("forward", start + load + sk, int(fwd), cat="user_annotation")
        t.cpu("aten::linear", start + load + 10 + sk, int(fwd) - 20)
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", start + load + 20 + sk,
                 start + load + 40 + sk, int(fwd) - 60)
        b0 = start + load + int(fwd)
        t.cpu("backward", b0 + sk, arrive - b0, cat="user_annotation")
        t.cpu("autograd::engine::evaluate_function: MmBackward0", b0 + 10 + sk, arrive - b0 - 20)
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", b0 + 20 + sk, b0 + 40 + sk,
                 arrive - b0 - 60)
        if backend == "gloo":
            t.cpu("c10d::allreduce_", arrive - 150 + sk, 120)
            t.events.append({"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": t.pid,
                             "tid": worker, "ts": t.base + arrive + sk, "dur": release - arrive,
                             "args": {"Input Dims": [[1059850]], "Input type": ["float"]}})
        else:
            t.cpu("nccl:all_reduce", arrive - 40 + sk, 30, cat="user_annotation")
            t.corr += 1
            t.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": t.pid,
                             "tid": t.tid, "ts": t.base + arrive - 30 + sk, "dur": 5,
                             "args": {"correlation": t.corr}})
            args = {"device": 0, "stream": 20, "correlation": t.corr}
            if seq:
                args.update({"Seq": n, "Process Group Name": "0", "In msg nelems": 1059850})
            t.events.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0,
                             "tid": 20, "ts": t.base + arrive + sk, "dur": release - arrive, "args": args})
        t.cpu("optimizer_step", release + 100 + sk, 2500, cat="user_annotation")
        t.launch("multi_tensor_apply_kernel", release + 200 + sk, release + 220 + sk, 2000)
    return t


def ddp_job(out, name, world, steps=8, slow=None, extra_us=30000, backend="gloo", skews=None, truncated=(),
            seq=False, seed=11):
    """A DDP job of world ranks; rank slow's data loading takes extra_us longer every step.
    truncated: ranks whose trace stops after 2 steps (the profiler cut short)."""
    rng = random.Random(seed)
    arrivals, start = [], 0
    for n in range(steps):
        row = {}
        for r in range(world):
            load = int(4000 * (1 + 0.05 * rng.random())) + (extra_us if r == slow else 0)
            work = int(30000 * (1 + 0.04 * (2 * rng.random() - 1)))
            row[r] = [start + int(200 * rng.random()), 0, 0, load]
            row[r][1] = row[r][0] + load + work
        release = max(v[1] for v in row.values()) + 2000
        for r in range(world):
            row[r][2] = release
        arrivals.append(row)
        start = release + 3500
    for r in range(world):
        skew = skews[r] if skews else 0
        t = ddp_rank(r, world, 2 if r in truncated else steps, 0, rng, backend, skew, arrivals, seq)
        t.write(f"{out}/{name}/rank{r}.pt.trace.json")


def case_mpi_ranges(out, name="mpi-allreduce-slow-rank", slow=2):
    """3 MPI ranks as a plain Chrome trace (the ranges Nsight Systems' MPI trace and PMPI tools
    write): each of 6 iterations computes, sends to its neighbour (MPI_Send/MPI_Recv, which are no
    collective) and joins an MPI_Allreduce; rank slow computes 20 ms longer each time."""
    rng = random.Random(3)
    t0 = 0
    events = {r: [] for r in range(3)}
    for i in range(6):
        ends = {}
        for r in range(3):
            work = 10000 + int(300 * rng.random()) + (20000 if r == slow else 0)
            events[r].append({"name": "compute", "ph": "X", "pid": r, "tid": 1, "ts": t0, "dur": work})
            events[r].append({"name": "MPI_Send" if r % 2 == 0 else "MPI_Recv", "ph": "X", "pid": r, "tid": 1,
                              "ts": t0 + work, "dur": 50})
            ends[r] = t0 + work + 60
        release = max(ends.values()) + 100
        for r in range(3):
            events[r].append({"name": "MPI_Allreduce", "ph": "X", "pid": r, "tid": 1, "ts": ends[r],
                              "dur": release - ends[r]})
        t0 = release + 500
    os.makedirs(f"{out}/{name}", exist_ok=True)
    for r in range(3):
        with open(f"{out}/{name}/rank{r}.json", "w") as f:
            json.dump({"traceEvents": events[r], "displayTimeUnit": "ms"}, f)


def case_truncated_compute(out):
    """64 ranks, rank 9's GPU compute 1.3x, rank 5's trace cut after 2 steps: the short rank is left
    out of the per-step comparison (it used to switch it off for the whole job)."""
    rng = random.Random(5)
    for r in range(64):
        c = 20000 * (1.30 if r == 9 else 1.0)
        training_rank(r, 64, 2 if r == 5 else 8, c, rng).write(f"{out}/ranks64-truncated-slow-compute/rank{r}.pt.trace.json")


def case_no_steps_inference(out):
    """Inference (no ProfilerStep), the same work on two ranks, one profile 15 ms longer."""
    for rank, extra in ((0, 0), (1, 15000)):
        t = Trace(rank, 2)
        ts = 0
        for i in range(40):
            t.cpu("aten::linear", ts, 300)
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 5, ts + 20, 280)
            ts += 400
        t.cpu("aten::empty", ts + extra, 1)  # the longer profile: an op 15 ms later
        t.write(f"{out}/no-steps-inference/rank{rank}.pt.trace.json")


def case_balanced(out, slow_rank=None):
    rng = random.Random(7)
    name = "balanced-4ranks" if slow_rank is None else "slow-rank2"
    for r in range(4):
        c = 20000 * (1.30 if r == slow_rank else 1.0)
        training_rank(r, 4, 8, c, rng).write(f"{out}/{name}/rank{r}.pt.trace.json")


def case_graph_replay(out):
    """A decode loop replaying a CUDA graph: one cudaGraphLaunch per step and long host gaps
    between replays. Launch-bound, but never "use CUDA graphs"."""
    t = Trace(0, 1)
    ts = 0
    for n in range(8):
        t.step(n, ts, 3000)
        t.cpu("CUDAGraph::replay", ts + 10, 40, cat="cpu_op")
        t.launch("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>", ts + 2000, ts + 2020, 900,
                 api="cudaGraphLaunch")
        t.cpu("python_sampling", ts + 100, 1800, cat="user_annotation")
        ts += 3000
    t.write(f"{out}/graph-replay/rank0.pt.trace.json")


def case_eager_launch_bound(out):
    """Eager small kernels with the host behind: the same gaps, no graphs: "use CUDA graphs"."""
    t = Trace(0, 1)
    ts = 0
    for n in range(8):
        t.step(n, ts, 3000)
        for k in range(10):
            t.launch("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
                     ts + 100 + 290 * k, ts + 110 + 290 * k, 60)
        ts += 3000
    t.write(f"{out}/eager-launch-bound/rank0.pt.trace.json")


def case_side_stream_blocking(out):
    """The real work on stream 7 waits while the host sits in synchronous cudaMemcpy; a side
    stream has two tiny kernels 465 ms apart (its 'host wait' means nothing)."""
    t = Trace(0, 1)
    ts = 0
    for n in range(6):
        t.step(n, ts, 100000)
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 10, ts + 20, 30000)
        # the host blocks in a synchronous copy for 60 ms: the GPU idles meanwhile
        t.runtime("cudaMemcpy", ts + 30100, 60000)
        t.events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0,
                         "tid": 7, "ts": t.base + ts + 89900, "dur": 80,
                         "args": {"device": 0, "stream": 7, "correlation": t.corr}})
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", ts + 90050, ts + 90100, 9000)
        ts += 100000
    t.launch("void at::native::fill_kernel<float>", 1000, 1005, 3, stream=13)
    t.launch("void at::native::fill_kernel<float>", 466000, 466005, 3, stream=13)
    t.write(f"{out}/side-stream-blocking/rank0.pt.trace.json")


def case_queued_gpu(out):
    """SGLang's decode shape: each step's kernels are launched at once but start ~60 ms later (the
    GPU is busy outside the trace's window), while the host sits in a synchronous copy: the GPU had
    work queued, no host call blocked it."""
    t = Trace(0, 1)
    ts = 0
    for n in range(6):
        t.step(n, ts, 100000)
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 10, ts + 20, 30000)
        # launched at +30.05 ms, starts at +90.1 ms: queued behind work the trace does not show
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", ts + 30050, ts + 90100, 9000)
        t.runtime("cudaMemcpy", ts + 30100, 60000)
        ts += 100000
    t.write(f"{out}/queued-gpu-blocking-call/rank0.pt.trace.json")


def case_busy_gpu(out):
    """The GPU is 89 % busy; the small gaps are host waits. Not launch-bound."""
    t = Trace(0, 1)
    ts = 0
    for n in range(8):
        t.step(n, ts, 10000)
        for k in range(10):
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 1000 * k + 100,
                     ts + 1000 * k + 110, 890)
        ts += 10000
    t.write(f"{out}/busy-gpu/rank0.pt.trace.json")


def case_symm_mem(out):
    """Tensor parallel on 2 GPUs with symmetric-memory and vLLM custom all-reduce kernels."""
    for r in range(2):
        t = Trace(r, 2)
        ts = 0
        for n in range(6):
            t.step(n, ts, 5000)
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 10, ts + 20, 2500)
            t.launch("void c10d::symmetric_memory::multimem_all_reduce_kernel<__nv_bfloat16, 16, 8>", ts + 30,
                     ts + 2530, 900)
            t.launch("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>", ts + 40, ts + 3450, 700)
            ts += 5000
        t.write(f"{out}/symm-mem-allreduce/rank{r}.pt.trace.json")


def case_recursion(out):
    """aten::copy_ inside aten::copy_ (and _call_impl in itself): inclusive counts once."""
    t = Trace(0, 1)
    ts = 0
    for n in range(4):
        t.step(n, ts, 1000)
        t.cpu("_call_impl", ts + 10, 900, cat="python_function")
        t.cpu("_call_impl", ts + 20, 800, cat="python_function")
        t.cpu("aten::copy_", ts + 30, 700)
        t.cpu("aten::copy_", ts + 40, 600)
        t.cpu("aten::copy_", ts + 50, 500)
        t.cpu("aten::to", ts + 60, 100)
        ts += 1000
    t.write(f"{out}/nested-recursion/rank0.pt.trace.json")


def case_parent_stage(out):
    """A "model" section whose time is its children's: the dominant stage is a child."""
    t = Trace(0, 1)
    ts = 0
    for n in range(4):
        t.step(n, ts, 10000)
        t.cpu("model", ts + 10, 9900, cat="user_annotation")
        t.cpu("encoder", ts + 20, 2000, cat="user_annotation")
        t.cpu("decoder", ts + 2100, 7700, cat="user_annotation")
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 30, ts + 40, 9800)
        ts += 10000
    t.write(f"{out}/parent-stage/rank0.pt.trace.json")


def case_memory(out):
    """An inference server reserving 94 % of the GPU for its KV cache (no backward), with CPU
    allocator events far below; and a training run at 95 % allocated."""
    t = Trace(0, 1)
    gib = 1 << 30
    for i in range(20):
        t.cpu("aten::linear", 1000 * i, 500)
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 1000 * i + 5, 1000 * i + 20, 480)
        t.memory(1000 * i + 1, 20 * gib + i * gib // 10, int(0.94 * 85021163520))  # GPU: 94 % reserved
        t.memory(1000 * i + 2, 40 * gib, 41 * gib, device_type=0, device_id=-1)    # CPU allocator, larger
    t.write(f"{out}/kv-cache-inference/rank0.pt.trace.json")
    rng = random.Random(3)
    t = training_rank(0, 1, 6, 20000, rng)
    for i in range(6):
        t.memory(20000 * i + 5, int(0.95 * 85021163520), int(0.96 * 85021163520))
    t.write(f"{out}/training-memory-full/rank0.pt.trace.json")
    # A process that sees two GPUs of different sizes and uses the small one:
    # 15 GiB reserved on device 1 (16 GiB) is 93.75 %, not 18.75 % of device 0's 80 GiB.
    t = training_rank(0, 1, 6, 20000, rng)
    t.meta["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 80 * gib},
                                  {"id": 1, "name": "Tesla V100-SXM2-16GB", "totalGlobalMem": 16 * gib}]
    for i in range(6):
        t.memory(20000 * i + 5, 14 * gib, 15 * gib, device_id=1)
    t.write(f"{out}/memory-on-the-small-gpu/rank0.pt.trace.json")


def case_vllm_capture(out):
    """vLLM's CUDA-graph capture at start-up (issue 28 class 3): graphs captured and instantiated,
    none replayed, so the kernels it records did not run there (1 us each, far apart); 170.5 of
    178.3 GiB allocated (the KV cache's reservation); a Python frame named save_for_backward; no
    autograd operator."""
    t = Trace(0, 1, device=B200)
    gib = 1 << 30
    t.runtime("cudaStreamBeginCapture", 100, 5)
    for i in range(40):
        t.cpu("aten::linear", 1000 * i + 200, 500)
        t.launch("sm100_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 1000 * i + 205, 1000 * i + 220, 1)
        t.memory(1000 * i + 201, int(170.5 * gib), int(172 * gib))
    t.events.append({"ph": "X", "cat": "python_function", "name": "torch/autograd/function.py(40): save_for_backward",
                     "pid": t.pid, "tid": t.tid, "ts": t.base + 300, "dur": 10, "args": {}})
    t.runtime("cudaGraphInstantiate", 41000, 300)
    t.write(f"{out}/vllm-capture/rank0.pt.trace.json")


def case_stack_late(out):
    """A with_stack trace (issue 28 class 6a): 20,000 operators in time order, then the
    python_function events, written last and newest first -- more than the 16,384-event reorder
    window late. Only the Python frames lose their self time; the operators keep theirs."""
    t = Trace(0, 1)
    for i in range(20000):
        t.cpu("aten::add", 100 * i, 40)
        t.cpu("aten::mul", 100 * i + 50, 30)
    for i in reversed(range(200)):
        t.events.append({"ph": "X", "cat": "python_function", "name": f"model.py({i}): forward", "pid": t.pid,
                         "tid": t.tid, "ts": t.base + 10000 * i, "dur": 9000, "args": {}})
    t.write(f"{out}/stack-late/rank0.pt.trace.json")


def case_long_names(out):
    """Two 2,000-character operator names that differ at character 1,344 (issue 28 class 6b): two
    names everywhere, not one."""
    t = Trace(0, 1)
    base = "x" * 1343
    for i, c in enumerate("ab"):
        t.cpu("op_" + base + c + "y" * 653, 1000 * i, 100 * (i + 1))
    t.write(f"{out}/long-names/rank0.pt.trace.json")


def case_inference_runs_apart(out):
    """Two single-GPU inference runs of different processes, without distributedInfo, recorded
    39 s apart, in one folder (issue 28 class 1); the second 2.5x slower per request. And two
    unranked traces that did record together (they overlap): still one job."""
    for k, (start, slow) in enumerate(((0, 1.0), (39_000_000, 2.5))):
        t = Trace(0, 1, pid=5000 + k)
        t.meta["distributedInfo"] = None
        ts = start
        for n in range(6):
            d = int(20000 * slow)
            t.step(n, ts, d + 500)
            t.cpu("aten::linear", ts + 10, d - 100)
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 20, ts + 40, d - 200)
            ts += d + 500
        t.write(f"{out}/inference-runs-apart/run{k}.pt.trace.json")
    for k in range(2):
        t = Trace(0, 1, pid=6000 + k)
        t.meta["distributedInfo"] = None
        ts = 300 * k
        for n in range(6):
            d = int(20000 * (1.3 if k else 1.0))
            t.step(n, ts, d + 500)
            t.cpu("aten::linear", ts + 10, d - 100)
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 20, ts + 40, d - 200)
            ts += d + 500
        t.write(f"{out}/unranked-together/worker{k}.pt.trace.json")


def case_two_gpus(out):
    """One process driving two GPUs, each busy half the time, in turn (issue 28 class 7): the union
    across devices read 'idle 0 %'; per device it is 50 %."""
    t = Trace(0, 1)
    t.meta["deviceProperties"] = [H100, dict(H100, id=1)]
    for n in range(6):
        ts = n * 20000
        t.step(n, ts, 20000)
        for dev in (0, 1):
            t.corr += 1
            t.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": t.pid, "tid": t.tid,
                             "ts": t.base + ts + 5 + dev, "dur": 4, "args": {"correlation": t.corr}})
            t.events.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                             "pid": dev, "tid": 7, "ts": t.base + ts + 10 + dev * 10000, "dur": 10000,
                             "args": {"device": dev, "stream": 7, "correlation": t.corr}})
    t.write(f"{out}/two-gpus/rank0.pt.trace.json")


def case_two_threads(out):
    """A section that runs on two threads at once, each 45 % of the wall clock (issue 28 class 5):
    its share of the rank's time is a sum over the threads, and says so."""
    t = Trace(0, 1)
    for n in range(6):
        ts = n * 10000
        t.step(n, ts, 10000)
        for tid in (t.tid, t.tid + 1):
            t.cpu("decode_worker", ts + 1000, 4500, cat="user_annotation", tid=tid)
            t.cpu("aten::mm", ts + 1100, 1000, tid=tid)
    t.write(f"{out}/two-threads/rank0.pt.trace.json")


def case_unrelated_runs(out):
    """One folder: a B200 trace and two MI300X traces (recorded at the same time), each rank 0."""
    rng = random.Random(11)
    training_rank(0, 1, 5, 20000, rng, device=B200).write(f"{out}/unrelated-runs/b200/rank0.pt.trace.json")
    for i in (1, 2):
        t = training_rank(0, 1, 5, 24000, rng, device=MI300X)
        t.pid += i
        t.write(f"{out}/unrelated-runs/mi300x-{i}/rank0.pt.trace.json")


def case_missing_ranks(out):
    rng = random.Random(5)
    training_rank(3, 8, 5, 20000, rng).write(f"{out}/one-of-eight/rank3.pt.trace.json")


def case_data_loading(out):
    rng = random.Random(9)
    t = training_rank(0, 1, 6, 20000, rng)
    for n in range(6):
        t.cpu("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", n * 23200 + 1, 3000)
    t.write(f"{out}/data-loading/rank0.pt.trace.json")


GIB = 1 << 30


def case_allocator_growth(out):
    """Training steps whose allocator floor rises 512 MiB a step (a tensor kept across steps), and
    the same steps whose floor stays put while each step's peak comes and goes."""
    for name, leak in (("allocator-leak", 512 << 20), ("allocator-steady", 0)):
        rng = random.Random(13)
        t = training_rank(0, 1, 9, 20000, rng)
        for n in range(9):
            t0 = n * 23200  # the step length of training_rank at 20 ms of compute
            floor = 10 * GIB + n * leak
            t.memory(t0 + 100, floor + 2 * GIB, 16 * GIB + n * leak)   # activations
            t.memory(t0 + 9000, floor + 4 * GIB, 16 * GIB + n * leak)  # the peak
            t.memory(t0 + 20000, floor, 16 * GIB + n * leak)           # freed back to the floor
        t.write(f"{out}/{name}/rank0.pt.trace.json")


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def libtally_report(path, rank, world, host, gpus, snapshots=(), n=40, rss=2e9):
    """A libtally report (the fixture's shape) with a sampler of n points every 0.5 s: gpus is a
    list of functions i -> the GPU reading at point i, snapshots (label, t_s, allocated, rss); rss
    None: the sampler's RSS is null (not read)."""
    with open(os.path.join(FIXTURES, "tally-report-v1.json")) as f:
        d = json.load(f)
    d["rank"], d["world_size"] = rank, world
    d["start_time_unix_ns"] = 1750000000000000000
    d["system"]["hostname"] = host
    d["system"]["gpus"] = [dict(g(0), name="NVIDIA H100 80GB HBM3") for g in gpus]
    d["sampler"]["series"] = [{"time_ns": i * 500000000, "cpu_pct": 100.0, "rss_bytes": rss,
                               "system_available_bytes": 6e10, "load1": 1.0, "gpus": [g(i) for g in gpus]}
                              for i in range(n)]
    d["memory_snapshots"] = [{"label": lab, "time_ns": int(t * 1e9), "tid": 1, "rss_bytes": rss,
                              "peak_rss_bytes": rss, "system_total_bytes": 68719476736,
                              "system_available_bytes": 60000000000,
                              "providers": {"cuda.allocated": alloc, "cuda.reserved": alloc + GIB}, "gpus": []}
                             for lab, t, alloc, rss in snapshots]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(d, f)


def gpu(index, util, temp, power, limit=400.0, reasons=0, used=20e9, own=None, sm=None, base=None):
    """A GPU reading function: each argument a number or a function of the point index; own: the
    program's own memory on the GPU (NVML's per-process process_used_bytes), None for none; sm:
    the SM clock (memory clock 2619 MHz beside it) and base the base clock, MHz, None for none."""
    v = lambda x, i: x(i) if callable(x) else x  # noqa: E731

    def reading(i):
        r = {"index": index, "used_bytes": v(used, i), "total_bytes": 85520809984,
             "utilization_pct": v(util, i), "memory_utilization_pct": 40, "temperature_c": v(temp, i),
             "power_w": v(power, i), "power_limit_w": limit, "throttle_reasons": v(reasons, i)}
        if own is not None:
            r["process_used_bytes"] = v(own, i)
        if sm is not None:
            r["sm_clock_mhz"], r["memory_clock_mhz"] = v(sm, i), 2619
        if base is not None:
            r["base_sm_clock_mhz"] = base
        return r
    return reading


def case_libtally_telemetry(out):
    """Two ranks on one node, each sampling both GPUs: GPU 0 hot (up to 92 C) at its 400 W limit with
    NVML's power-cap reason; GPU 1 cool at half its limit. A cool, busy node. A node whose GPUs sit
    mostly without kernels (sampled utilization 20-35 %)."""
    hot = [gpu(0, 97, lambda i: 84 + (i % 9), lambda i: 392 + (i % 5), reasons=lambda i: 0x4),
           gpu(1, 95, 66, 200)]
    for r in (0, 1):
        libtally_report(f"{out}/libtally-hot/rank{r}.report.json", r, 2, "node1", hot)
    cool = [gpu(0, lambda i: 80 + (i % 10), lambda i: 60 + (i % 8), 250), gpu(1, 85, 64, 260)]
    for r in (0, 1):
        libtally_report(f"{out}/libtally-cool/rank{r}.report.json", r, 2, f"node{r}", cool)
    idle = [gpu(0, lambda i: 20 + (i % 16), 55, 120)]
    libtally_report(f"{out}/libtally-idle/rank0.report.json", 0, 1, "node0", idle)


def case_libtally_snapshots(out):
    """A snapshot taken after every step: allocated rises 300 MiB a step (leak-like); and a
    loop whose allocated memory goes up and down by a few MiB around 8 GiB."""
    cool = [gpu(0, 90, 60, 250)]
    leak = [(f"after_step_{k}", 1 + k, 8 * GIB + k * (300 << 20), 3e9) for k in range(10)]
    libtally_report(f"{out}/libtally-leak/rank0.report.json", 0, 1, "node0", cool, leak)
    steady = [(f"after_step_{k}", 1 + k, 8 * GIB + ((k * 37) % 5) * (4 << 20), 3e9) for k in range(10)]
    libtally_report(f"{out}/libtally-steady/rank0.report.json", 0, 1, "node0", cool, steady)


def case_libtally_own_memory(out):
    """Issue 28 item 2. The program's own GPU memory (NVML per process) flat at 6 GiB while another
    process on the GPU allocates 973 MiB once (device-wide used 8 GiB, then 8 GiB + 973 MiB from the
    20th of 40 samples: +11.9 %, the shape libtally's sampler read on an H200); the program's own
    memory growing 64 MiB a sample (device-wide with it); and device-wide used memory alone
    (no own figure, no RSS) with the same 973 MiB step."""
    jump = lambda i: 8 * GIB + (973 << 20) * (i >= 20)  # noqa: E731
    other = [gpu(0, 90, 60, 250, used=jump, own=6 * GIB)]
    libtally_report(f"{out}/libtally-other-process/rank0.report.json", 0, 1, "node0", other)
    grow = [gpu(0, 90, 60, 250, used=lambda i: 8 * GIB + i * (64 << 20), own=lambda i: 6 * GIB + i * (64 << 20))]
    libtally_report(f"{out}/libtally-own-leak/rank0.report.json", 0, 1, "node0", grow)
    wide = [gpu(0, 90, 60, 250, used=jump)]
    libtally_report(f"{out}/libtally-device-wide-only/rank0.report.json", 0, 1, "node0", wide, rss=None)


def case_libtally_clocks(out):
    """Issue 36. A busy H100 (base clock 1095 MHz) whose SM clock drops to 810 MHz in every other
    sample with NVML's software power cap (0x4) while its neighbour boosts at 1755 MHz; and the
    healthy shape: boost clocks while busy, the clock parked at 345 MHz while idle (the first and
    last quarter of the run, utilization 0), which is not a slow-down."""
    slow = [gpu(0, 96, 70, 380, sm=lambda i: 810 if i % 2 else 1755, base=1095, reasons=lambda i: 0x4 if i % 2 else 0),
            gpu(1, 95, 66, 300, sm=1755, base=1095)]
    libtally_report(f"{out}/libtally-slow-clocks/rank0.report.json", 0, 1, "node0", slow)
    busy = lambda i: 10 <= i < 30  # noqa: E731
    healthy = [gpu(0, lambda i: 97 if busy(i) else 0, 60, lambda i: 350 if busy(i) else 70,
                   sm=lambda i: 1755 - (i % 3) * 15 if busy(i) else 345, base=1095)]
    libtally_report(f"{out}/libtally-boost-clocks/rank0.report.json", 0, 1, "node0", healthy)


def case_inferix(out, corpus):
    """Inferix reports made from the corpus' rank 0 report with one thing changed."""
    import copy
    import glob
    src = sorted(glob.glob(os.path.join(corpus, "inferix/generated/multi_rank_reports/rank_0/profiling_report_*.json")))
    if not src:
        return
    with open(src[0]) as f:
        base = json.load(f)

    def write(name, d):
        os.makedirs(f"{out}/{name}", exist_ok=True)
        with open(f"{out}/{name}/profiling_report_t2v.json", "w") as f:
            json.dump(d, f)

    d = copy.deepcopy(base)
    for p in d["gpu_metrics"]["timeline"]:
        p["utilization"] = 30
    write("inferix-low-util", d)
    d = copy.deepcopy(base)
    for i, p in enumerate(d["gpu_metrics"]["timeline"]):
        p["temperature"] = 86 + i  # 86..93 C
    write("inferix-hot", d)
    d = copy.deepcopy(base)
    d["computation_analysis"] = {"layer_performance": {
        name: {"avg_time_ms": t / 28, "min_time_ms": t / 28, "max_time_ms": t / 28, "total_time_ms": t,
               "call_count": 28}
        for name, t in (("self_attn", 4200.0), ("cross_attn", 1500.0), ("ffn", 1800.0), ("norm", 900.0))}}
    write("inferix-layers", d)
    d = copy.deepcopy(d)
    for v in d["computation_analysis"]["layer_performance"].values():
        v["total_time_ms"] = 2100.0
        v["avg_time_ms"] = v["min_time_ms"] = v["max_time_ms"] = 75.0
    write("inferix-layers-balanced", d)
    d = copy.deepcopy(base)
    blocks = d["block_analysis"]["blocks"]
    for k, b in enumerate(blocks):
        b["block_size"] = 12
        b["computation_time_ms"] = 450.0 if k == 0 else 400.0
    write("inferix-fast-blocks", d)
    d = copy.deepcopy(base)
    for k, b in enumerate(d["block_analysis"]["blocks"]):
        b["memory_usage_mb"] = 20480 + 600 * k  # max_memory_allocated(), never reset: +18 %
    write("inferix-block-peak-rises", d)


def case_reserved_jumps(out):
    """Issue 36: training steps whose allocated memory comes and goes over the same floor and peak
    (10 and 14 GiB) while the allocator reserves 2 GiB more at steps 3 and 6 (reserved 16, 18,
    20 GiB: +12.5 % and +11 %): fragmentation; and the same steps with reserved rising only with a
    new, larger peak each time (a bigger batch: allocated's peak +2.5 GiB): explained."""
    for name, explained in (("reserved-jumps", False), ("reserved-follows-peak", True)):
        rng = random.Random(17)
        t = training_rank(0, 1, 9, 20000, rng)
        reserved, peak = 16 * GIB, 14 * GIB
        for n in range(9):
            t0 = n * 23200
            before = reserved
            if n in (3, 6):
                reserved += 2 * GIB
                if explained:
                    peak += 2 * GIB + GIB // 2
            # the segment is reserved by the allocation that needs it: the peak's, when there is one
            t.memory(t0 + 100, 12 * GIB, before if explained else reserved)
            t.memory(t0 + 9000, peak, reserved)
            t.memory(t0 + 20000, 10 * GIB, reserved)
        t.write(f"{out}/{name}/rank0.pt.trace.json")


def attention_rank(device, dtype, path, fused=False, steps=6):
    """Issue 36: a transformer's steps whose attention is computed op by op (bmm, softmax over
    [8, 16, 1024, 1024] scores, bmm) with record_shapes, or by SDPA's flash kernel (fused)."""
    t = Trace(0, 1, device)
    ts = 0
    for n in range(steps):
        t.step(100 + n, ts, 20000)
        t.cpu("aten::linear", ts + 20, 6000)
        t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 30, ts + 50, 5900)
        if fused:
            t.cpu("aten::scaled_dot_product_attention", ts + 6100, 3000)
            t.cpu("aten::_scaled_dot_product_flash_attention", ts + 6110, 2900)
            t.events[-1]["args"] = {"Input Dims": [[8, 16, 1024, 64], [8, 16, 1024, 64], [8, 16, 1024, 64]],
                                    "Input type": [dtype, dtype, dtype]}
            t.launch("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >", ts + 6120,
                     ts + 6130, 2800)
        else:
            t.cpu("aten::matmul", ts + 6100, 2000)
            t.cpu("aten::bmm", ts + 6110, 1900)
            t.events[-1]["args"] = {"Input Dims": [[128, 1024, 64], [128, 64, 1024]], "Input type": [dtype, dtype]}
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64", ts + 6120, ts + 6130, 1900)
            t.cpu("aten::softmax", ts + 8200, 3000)
            t.cpu("aten::_softmax", ts + 8210, 2900)
            t.events[-1]["args"] = {"Input Dims": [[8, 16, 1024, 1024], [], []], "Input type": [dtype, "Scalar", "Scalar"]}
            t.launch("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float>", ts + 8220,
                     ts + 8230, 2800)
            t.cpu("aten::bmm", ts + 11300, 1900)
            t.events[-1]["args"] = {"Input Dims": [[128, 1024, 1024], [128, 1024, 64]], "Input type": [dtype, dtype]}
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", ts + 11310, ts + 11320, 1900)
        ts += 20200
    t.write(path)


def case_eager_attention(out):
    attention_rank(H100, "c10::BFloat16", f"{out}/eager-attention/rank0.pt.trace.json")
    attention_rank(H100, "c10::BFloat16", f"{out}/fused-attention/rank0.pt.trace.json", fused=True)
    attention_rank(H100, "float", f"{out}/eager-attention-fp32/rank0.pt.trace.json")
    attention_rank(MI300X, "c10::BFloat16", f"{out}/eager-attention-mi300x/rank0.pt.trace.json")


def main():
    out = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else None
    case_allocator_growth(out)
    case_libtally_telemetry(out)
    case_libtally_snapshots(out)
    case_libtally_own_memory(out)
    case_libtally_clocks(out)
    if corpus:
        case_inferix(out, corpus)
    case_no_steps_inference(out)
    case_balanced(out)
    case_balanced(out, slow_rank=2)
    case_graph_replay(out)
    case_eager_launch_bound(out)
    case_side_stream_blocking(out)
    case_busy_gpu(out)
    case_symm_mem(out)
    case_recursion(out)
    case_parent_stage(out)
    case_memory(out)
    case_unrelated_runs(out)
    case_missing_ranks(out)
    case_data_loading(out)
    ddp_job(out, "gloo-slow-loader", 4, slow=3)
    ddp_job(out, "gloo-balanced", 4)
    ddp_job(out, "nccl-skewed-slow-host", 4, slow=1, extra_us=20000, backend="nccl", skews=[0, 7000, -4000, 2500],
            seq=True)
    ddp_job(out, "nccl-balanced-skewed", 4, backend="nccl", skews=[0, 7000, -4000, 2500])
    ddp_job(out, "ranks64-truncated", 64, slow=40, backend="nccl", truncated=(5,))
    ddp_job(out, "ranks512", 512, steps=4, slow=300, backend="nccl")
    case_truncated_compute(out)
    case_mpi_ranges(out)
    case_mpi_ranges(out, "mpi-allreduce-balanced", slow=None)
    case_queued_gpu(out)
    case_vllm_capture(out)
    case_stack_late(out)
    case_long_names(out)
    case_inference_runs_apart(out)
    case_two_gpus(out)
    case_two_threads(out)
    case_reserved_jumps(out)
    case_eager_attention(out)


if __name__ == "__main__":
    main()
