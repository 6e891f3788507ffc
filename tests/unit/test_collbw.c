/*
 * test_collbw.c - collective bytes and bandwidth (tools/analyze/collbw.c, run
 * by tl_aggregate_finish after the waits), on synthetic session results:
 *  - 4 ranks of NCCL kernels without sizes, each after its nccl:all_reduce
 *    annotation (4 MiB of float, as older Kineto writes it); rank 2 arrives
 *    1 ms late: the kernels are sized from the annotations and timed after
 *    the last arrival (0.5 ms), so bus bandwidth = 4 MiB / 0.5 ms x 2(n-1)/n,
 *    not the whole duration's;
 *  - one rank whose all_gather kernels carry their own size, dtype and group
 *    size (newer Kineto): S is the gathered whole, (n-1)/n, no waits;
 *  - as many annotations as kernels or none: unsized kernels stay unsized;
 *  - the args as a trace carries them (dtype, Group size, Input type), read
 *    into the profile's collectives and the session's instances;
 *  - the kind of a name, the bus factors and the size of a dtype.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "read_trace.h"
#include "tt_support.h"

#define MS(x) ((int64_t)((x)*1e6 + 0.5))
#define NR 4
#define NC 6

static void make(tl_session *s, int rank, int world)
{
    tl_session_init(s);
    char path[64];
    snprintf(path, sizeof path, "rank%d.pt.trace.json", rank);
    s->id.path = tt_xstrdup(path);
    s->id.rank_detail = tt_xstrdup("distributedInfo.rank");
    s->id.format = TL_FMT_KINETO;
    s->id.rank = rank;
    s->id.world_size = world;
    s->id.rank_source = TL_RANK_CONTENT;
    s->start_ns = 0;
    s->span_ns = MS(33.0 * NC);
}

static tl_aggregate *finish(tl_session *s, int n)
{
    tl_aggregate *a = malloc(sizeof *a);
    assert_non_null(a);
    tl_aggregate_init(a, NULL);
    for (int r = 0; r < n; r++)
        assert_int_equal(tl_aggregate_add_session(a, &s[r]), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
    return a;
}

static void done(tl_aggregate *a)
{
    tl_aggregate_release(a);
    free(a);
}

/* Rank r: NC all-reduces; the kernel starts at 10 ms into its slot (11 ms on
 * the late rank) and every rank's ends at 11.5 ms; an annotation precedes
 * each kernel unless annotations is 0. */
static void allreduce_rank(tl_session *s, int r, int late, int annotations)
{
    make(s, r, NR);
    s->coll_names = calloc(3, sizeof *s->coll_names);
    s->insts = calloc(2 * NC + 1, sizeof *s->insts);
    assert_true(s->coll_names != NULL && s->insts != NULL);
    s->coll_names[s->ncoll_names++] = tt_xstrdup("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    s->coll_names[s->ncoll_names++] = tt_xstrdup("nccl:all_reduce");
    for (int c = 0; c < NC; c++) {
        double arrive = 33.0 * c + 10.0 + (r == late ? 1.0 : 0), release = 33.0 * c + 11.5;
        if (annotations)
            s->insts[s->ninsts++] =
                (tl_scoll){ 1, TL_COLL_ENQUEUE, MS(arrive - 0.05), MS(0.04), -1, 1048576, -1, 4, -1 };
        s->insts[s->ninsts++] = (tl_scoll){ 0, TL_COLL_GPU, MS(arrive), MS(release - arrive), -1, -1, -1, -1, -1 };
    }
}

static void test_allreduce_after_last_arrival(void **state)
{
    (void)state;
    tl_session s[NR];
    for (int r = 0; r < NR; r++)
        allreduce_rank(&s[r], r, 2, 1);
    tl_aggregate *a = finish(s, NR);
    assert_int_equal(a->waits.matched, NC);
    const tl_collbw *bw = &a->collbw;
    assert_int_equal(bw->source, TL_WAITS_GPU);
    assert_int_equal(bw->instances, NR * NC);
    assert_int_equal(bw->sized, NR * NC);
    assert_int_equal(bw->paired, NR * NC);
    assert_int_equal(bw->after_arrival, NR * NC);
    assert_int_equal(bw->nrows, 1);
    const tl_collbw_row *row = &bw->rows[0];
    assert_int_equal(row->kind, TL_CK_ALL_REDUCE);
    assert_int_equal(row->bucket, tl_collbw_bucket_of(4194304.0));
    assert_int_equal(row->bucket, 2); /* [1, 16 MiB) */
    assert_int_equal(row->nranks, NR);
    /* 4 MiB in 0.5 ms after the last arrival: 8.39 GB/s; x 2(4-1)/4 = 12.58 GB/s */
    assert_true(fabs(tl_collbw_algbw(&row->all) - 4194304.0 / 0.0005) < 1e3);
    assert_true(fabs(tl_collbw_busbw(&row->all) - 1.5 * 4194304.0 / 0.0005) < 1e3);
    assert_true(fabs(row->busbw_min - row->busbw_max) < 1e3);
    /* the late rank waited nothing, the others 1 ms: every rank has 0.5 ms left */
    for (int r = 0; r < NR; r++)
        assert_int_equal(bw->ranks[r].time_ns, NC * MS(0.5));
    assert_true(fabs(bw->ranks[0].bytes - NC * 4194304.0) < 1);
    done(a);
}

static void test_allreduce_unsized_without_annotations(void **state)
{
    (void)state;
    tl_session s[NR];
    for (int r = 0; r < NR; r++)
        allreduce_rank(&s[r], r, 2, r != 1); /* rank 1: kernels only */
    tl_aggregate *a = finish(s, NR);
    const tl_collbw *bw = &a->collbw;
    assert_int_equal(bw->instances, NR * NC);
    assert_int_equal(bw->sized, (NR - 1) * NC);
    assert_int_equal(bw->ranks[1].count, 0);
    assert_int_equal(bw->rows[0].nranks, NR - 1);
    done(a);
}

static void test_allgather_own_args_one_rank(void **state)
{
    (void)state;
    tl_session s;
    make(&s, 0, 16);
    s.coll_names = calloc(2, sizeof *s.coll_names);
    s.insts = calloc(3, sizeof *s.insts);
    assert_true(s.coll_names != NULL && s.insts != NULL);
    s.coll_names[s.ncoll_names++] = tt_xstrdup("ncclDevKernel_AllGather_RING_LL");
    /* 8192 bf16 per rank over a group of 8 (the world is 16): S = 128 KiB */
    s.insts[s.ninsts++] = (tl_scoll){ 0, TL_COLL_GPU, MS(1), MS(0.1), 3, 8192, -1, 2, 8 };
    s.insts[s.ninsts++] = (tl_scoll){ 0, TL_COLL_GPU, MS(2), MS(0.3), 4, 8192, -1, 2, 8 };
    tl_aggregate *a = finish(&s, 1);
    const tl_collbw *bw = &a->collbw;
    assert_int_equal(bw->source, TL_WAITS_GPU);
    assert_int_equal(bw->sized, 2);
    assert_int_equal(bw->paired, 0);
    assert_int_equal(bw->after_arrival, 0);
    assert_int_equal(bw->nrows, 1);
    assert_int_equal(bw->rows[0].kind, TL_CK_ALL_GATHER);
    assert_int_equal(bw->rows[0].bucket, 1); /* [64 KiB, 1 MiB) */
    double S = 8192.0 * 2 * 8;
    assert_true(fabs(tl_collbw_algbw(&bw->rows[0].all) - 2 * S / 0.0004) < 1);
    assert_true(fabs(tl_collbw_busbw(&bw->rows[0].all) - 7.0 / 8.0 * 2 * S / 0.0004) < 1);
    done(a);
}

/* The args read from a trace: a kernel with newer Kineto's "In msg nelems",
 * "dtype" and "Group size"; an annotation with older Kineto's "Input Dims"
 * and "Input type"; a c10d op whose first input is a TensorList: no size. */
static void test_args_read(void **state)
{
    (void)state;
    static const char text[] =
        "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 16}, \"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c10d::allreduce_\",\"pid\":1,\"tid\":1,\"ts\":90,"
        "\"dur\":30,\"args\":{\"Input Dims\":[[], []],\"Input type\":[\"TensorList\", \"\"]}},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"nccl:all_reduce\",\"pid\":1,\"tid\":1,\"ts\":100,"
        "\"dur\":10,\"args\":{\"Input Dims\":[[4, 256]],\"Input type\":[\"c10::BFloat16\"]}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllGather_RING_LL\",\"pid\":0,\"tid\":7,"
        "\"ts\":120,\"dur\":50,\"args\":{\"device\":0,\"stream\":7,\"In msg nelems\":1024,\"Out msg nelems\":8192,"
        "\"Group size\":8,\"dtype\":\"Float\",\"Seq\":3}}"
        "]}";
    tl_profile p;
    tl_profile_init(&p, "colls.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &opt), 0);
    assert_int_equal(p.ncolls, 3);
    int seen = 0;
    for (size_t i = 0; i < p.ncolls; i++) {
        const tl_prof_coll *c = &p.colls[i];
        const char *name = tl_strtab_get(&p.strs, c->name);
        if (strcmp(name, "c10d::allreduce_") == 0) {
            assert_int_equal(c->elem_bytes, -1);
            seen |= 1;
        } else if (strcmp(name, "nccl:all_reduce") == 0) {
            assert_int_equal(c->nelems, 1024);
            assert_int_equal(c->elem_bytes, 2);
            assert_int_equal(c->group_size, -1);
            seen |= 2;
        } else {
            assert_int_equal(c->side, TL_COLL_GPU);
            assert_int_equal(c->nelems, 1024);
            assert_int_equal(c->elem_bytes, 4);
            assert_int_equal(c->group_size, 8);
            assert_int_equal(c->seq, 3);
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    /* and on into the session's instances */
    tl_analyze_options aopt;
    tl_analyze_options_init(&aopt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &aopt), 0);
    int gpu = 0;
    for (size_t i = 0; i < s.ninsts; i++)
        if (s.insts[i].side == TL_COLL_GPU) {
            assert_int_equal(s.insts[i].elem_bytes, 4);
            assert_int_equal(s.insts[i].group_size, 8);
            gpu++;
        }
    assert_int_equal(gpu, 1);
    tl_session_release(&s);
    tl_profile_release(&p);
}

static void test_kinds_factors_dtypes(void **state)
{
    (void)state;
    assert_int_equal(tl_coll_kind_of("nccl:all_reduce"), TL_CK_ALL_REDUCE);
    assert_int_equal(tl_coll_kind_of("gloo:all_reduce"), TL_CK_ALL_REDUCE);
    assert_int_equal(tl_coll_kind_of("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
                     TL_CK_ALL_REDUCE);
    assert_int_equal(tl_coll_kind_of("nccl:_reduce_scatter_base"), TL_CK_REDUCE_SCATTER);
    assert_int_equal(tl_coll_kind_of("nccl:all_gather_into_tensor_coalesced"), TL_CK_ALL_GATHER);
    assert_int_equal(tl_coll_kind_of("nccl:all_to_all"), TL_CK_ALL_TO_ALL);
    assert_int_equal(tl_coll_kind_of("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"), TL_CK_SEND_RECV);
    assert_int_equal(tl_coll_kind_of("nccl:broadcast"), TL_CK_BROADCAST);
    assert_int_equal(tl_coll_kind_of("nccl:reduce"), TL_CK_REDUCE);
    assert_int_equal(tl_coll_kind_of("barrier"), TL_CK_OTHER);
    assert_true(fabs(tl_coll_bus_factor(TL_CK_ALL_REDUCE, 8) - 1.75) < 1e-12);
    assert_true(fabs(tl_coll_bus_factor(TL_CK_ALL_TO_ALL, 8) - 0.875) < 1e-12);
    assert_true(fabs(tl_coll_bus_factor(TL_CK_BROADCAST, 8) - 1) < 1e-12);
    assert_true(isnan(tl_coll_bus_factor(TL_CK_OTHER, 8)));
    assert_int_equal(tl_dtype_bytes("float", 5), 4);
    assert_int_equal(tl_dtype_bytes("c10::BFloat16", 13), 2);
    assert_int_equal(tl_dtype_bytes("Long", 4), 8);
    assert_int_equal(tl_dtype_bytes("long int", 8), 8);
    assert_int_equal(tl_dtype_bytes("TensorList", 10), -1);
    assert_int_equal(tl_collbw_bucket_of(65535), 0);
    assert_int_equal(tl_collbw_bucket_of(65536), 1);
    assert_int_equal(tl_collbw_bucket_of(1e12), TL_COLLBW_BUCKETS - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_after_last_arrival),
        cmocka_unit_test(test_allreduce_unsized_without_annotations),
        cmocka_unit_test(test_allgather_own_args_one_rank),
        cmocka_unit_test(test_args_read),
        cmocka_unit_test(test_kinds_factors_dtypes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
