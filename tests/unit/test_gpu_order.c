/*
 * test_gpu_order.c - the fast paths of a GPU-heavy trace give what the slow
 * ones gave (issue 33): the correlation id -> launch map (a dense array for
 * ids that count up, a hash for the rest), the GPU events' sort (insertion
 * for a nearly sorted trace, qsort past a budget of moves) and the step of
 * each kernel (binary searches over ordered steps, a scan over overlapping
 * ones).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_trace.h"
#include "aggregate.h"
#include "tt_support.h"

static void read_text(tl_profile *p, const char *text)
{
    tl_profile_init(p, "gpu-order.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(p, tt_mem_read, &m, &opt), 0);
}

static const tl_gpu_event *kernel_at(const tl_profile *p, int64_t ts_ns)
{
    for (size_t i = 0; i < p->ngpu; i++)
        if (p->gpu[i].ts_ns == ts_ns)
            return &p->gpu[i];
    fail_msg("no GPU event at %lld ns", (long long)ts_ns);
    return NULL;
}

#define TEXT_MAX ((size_t)8 << 20) /* ~20,000 launches of ~130 bytes */

/* Launches with ids that count up (the dense array), one id launched twice
 * (the earlier wins), ids below the first (the hash), far beyond it (the
 * hash), negative, and one the array grows over after the hash took it. */
static void test_launch_map(void **state)
{
    (void)state;
    char *text = malloc(TEXT_MAX);
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, TEXT_MAX, "{\"traceEvents\":[");
    /* ids 1000..1099 launched at ts 10 + id */
    for (int id = 1000; id < 1100; id++)
        n += (size_t)snprintf(text + n, TEXT_MAX - n,
                              "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%d}},",
                              10 + id, id);
    static const struct {
        long long id, ts;
    } odd[] = {
        { 1050, 5 },            /* a second launch of 1050, earlier: it wins */
        { 1060, 9000 },         /* a second launch of 1060, later: the first wins */
        { 500, 7 },             /* below the dense array's base */
        { 1000000000000LL, 8 }, /* far beyond its end */
        { -3, 11 },             /* negative */
        { 70000, 12 },          /* beyond what the array may take now: the hash */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        n += (size_t)snprintf(text + n, TEXT_MAX - n,
                              "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%lld,\"dur\":1,\"args\":{\"correlation\":%lld}},",
                              odd[i].ts, odd[i].id);
    /* enough ids to grow the array over 70000, one of them 70000 again, later */
    for (int id = 1100; id < 20000; id++)
        n += (size_t)snprintf(text + n, TEXT_MAX - n,
                              "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%d}},",
                              20000 + id, id);
    n += (size_t)snprintf(text + n, TEXT_MAX - n,
                          "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                          "\"tid\":1,\"ts\":13,\"dur\":1,\"args\":{\"correlation\":70000}},");
    /* kernels, each at its own ts (in ms, apart from every launch) */
    static const long long kid[] = { 1000, 1050, 1060, 1099, 500, 1000000000000LL, -3, 70000, 19999, 123456789 };
    for (size_t i = 0; i < sizeof kid / sizeof kid[0]; i++)
        n += (size_t)snprintf(text + n, TEXT_MAX - n,
                              "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%zu000,"
                              "\"dur\":1,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%lld}}",
                              i ? "," : "", i + 100, kid[i]);
    snprintf(text + n, TEXT_MAX - n, "]}");
    tl_profile p;
    read_text(&p, text);
    free(text);
    /* launch_ns in ns; the kernel correlation -1 is "none" (a negative id) */
    static const long long want[] = { 1010, 5, 1070, 1109, 7, 8, -1, 12, 39999, -1 };
    for (size_t i = 0; i < sizeof kid / sizeof kid[0]; i++) {
        const tl_gpu_event *e = kernel_at(&p, (int64_t)(i + 100) * 1000000);
        if (want[i] < 0)
            assert_true(e->launch_ns == INT64_MIN || kid[i] < 0);
        else
            assert_int_equal(e->launch_ns, want[i] * 1000);
    }
    tl_profile_release(&p);
}

/* GPU events nearly in order (two streams interleaved) and in reverse order
 * (past the insertion budget: qsort): both end sorted by start, and events
 * alike in start, duration, stream and name keep the file's order (their
 * launches tell them apart). */
static void sort_case(int reverse)
{
    enum { N = 200 };
    char *text = malloc(1 << 20);
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, 1 << 20, "{\"traceEvents\":[");
    for (int k = 0; k < N; k++) {
        int i = reverse ? N - 1 - k : k;
        /* stream 7 at 10 µs steps; stream 20 lags by up to 25 µs; pairs of twins */
        int stream = i % 2 ? 20 : 7;
        int ts = stream == 7 ? (i / 4) * 20 : (i / 2) * 10 + 25; /* stream 7 in twins */
        n += (size_t)snprintf(text + n, (1 << 20) - n,
                              "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%d}},"
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":%d,\"ts\":%d,"
                              "\"dur\":5,\"args\":{\"device\":0,\"stream\":%d,\"correlation\":%d}}",
                              k ? "," : "", k, k + 1, stream, stream == 20 && i % 4 == 1 ? ts - 25 : ts, stream, k + 1);
    }
    snprintf(text + n, (1 << 20) - n, "]}");
    tl_profile p;
    read_text(&p, text);
    free(text);
    assert_int_equal(p.ngpu, N);
    for (size_t i = 1; i < p.ngpu; i++) {
        const tl_gpu_event *a = &p.gpu[i - 1], *b = &p.gpu[i];
        assert_true(a->ts_ns <= b->ts_ns);
        if (a->ts_ns == b->ts_ns && a->dur_ns == b->dur_ns && a->stream == b->stream && a->name == b->name)
            assert_true(a->launch_ns < b->launch_ns); /* file order: launches count up with it */
    }
    tl_profile_release(&p);
}

static void test_sort_nearly_sorted(void **state)
{
    (void)state;
    sort_case(0);
}

static void test_sort_reversed(void **state)
{
    (void)state;
    sort_case(1);
}

/* Kernels to steps: ordered steps that touch (a launch at the boundary
 * belongs to the earlier step), a zero-length step, and the same kernels
 * with overlapping steps (the scan): each step's compute by hand. */
static void step_case(const char *steps, const int64_t *want, size_t nwant)
{
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"traceEvents\":[%s", steps);
    /* launches at 100, 200, 200 (a boundary), 250, 300, 399 µs; kernels 10 µs each */
    static const int launch[] = { 100, 200, 250, 300, 399, 450 };
    for (size_t i = 0; i < sizeof launch / sizeof launch[0]; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%zu}},"
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":%d,"
                              "\"dur\":10,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%zu}}",
                              launch[i], i + 1, launch[i] + 5 + (int)i * 20, i + 1);
    snprintf(text + n, sizeof text - n, "]}");
    tl_profile p;
    read_text(&p, text);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_int_equal(s.nsteps, nwant);
    for (size_t k = 0; k < nwant; k++)
        assert_int_equal(s.steps[k].compute_ns, want[k]);
    tl_session_release(&s);
    tl_profile_release(&p);
}

#define STEP(n, ts, dur)                                                                                               \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"pid\":1,\"tid\":1,\"ts\":" #ts       \
    ",\"dur\":" #dur "}"

static void test_steps_ordered(void **state)
{
    (void)state;
    /* [100,200] [200,300] [300,300] [300,400]: 100 and 200 in step 1, 250
     * in 2, 300 in 2 (it ends there), 399 in 4, 450 in none */
    const int64_t want[] = { 20000, 20000, 0, 10000 };
    step_case(STEP(1, 100, 100) "," STEP(2, 200, 100) "," STEP(3, 300, 0) "," STEP(4, 300, 100), want, 4);
}

static void test_steps_overlapping(void **state)
{
    (void)state;
    /* [100,350] [200,300] [300,460]: the first step (by number) holding the
     * launch: 100, 200, 250, 300 in 1; 399, 450 in 3 */
    const int64_t want[] = { 40000, 0, 20000 };
    step_case(STEP(1, 100, 250) "," STEP(2, 200, 100) "," STEP(3, 300, 160), want, 3);
}

/* The operator a kernel name's launches ran in (tl_kernel_launch.op), or "-". */
static const char *launched_by(const tl_profile *p, const char *kernel)
{
    for (size_t i = 0; i < p->nklaunch; i++)
        if (strcmp(tl_strtab_get(&p->strs, p->klaunch[i].name), kernel) == 0)
            return p->klaunch[i].op == UINT32_MAX ? "-" : tl_strtab_get(&p->strs, p->klaunch[i].op);
    return "-";
}

#define OP(name, ts, dur, tid)                                                                                         \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"ts\":" #ts ",\"dur\":" #dur ",\"pid\":1,\"tid\":" #tid   \
    "},"
#define LAUNCH(corr, ts, tid)                                                                                          \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":" #ts ",\"dur\":1,\"pid\":1,"         \
    "\"tid\":" #tid ",\"args\":{\"correlation\":" #corr "}},"
#define KERNEL(name, corr, ts)                                                                                         \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"ts\":" #ts ",\"dur\":5,\"pid\":0,\"tid\":7,"             \
    "\"args\":{\"correlation\":" #corr ",\"stream\":7,\"device\":0}},"

/* Each kernel's launching operator (kernel_ops.c, issue 33: a launch kept as
 * its time and thread by correlation id, found in its thread's operators by a
 * binary search and a walk up their nesting): the innermost operator open at
 * the launch on the launch's thread, whatever the order of the file. Thread
 * 10: outer [0,100) holds inner1 [10,30) and inner2 [40,60); straddle
 * [50,120) starts inside inner2 and ends after outer. Thread 11's operator
 * comes after its launch in the file. */
static void test_launching_operator(void **state)
{
    (void)state;
    tl_profile p;
    read_text(&p, "[" OP("outer", 0, 100, 10) OP("inner1", 10, 20, 10) OP("inner2", 40, 20, 10)
                      OP("straddle", 50, 70, 10) LAUNCH(1, 20, 10) LAUNCH(2, 35, 10) LAUNCH(3, 55, 10)
                          LAUNCH(4, 110, 10) LAUNCH(5, 130, 10) LAUNCH(6, 20, 11) OP("other_thread", 0, 200, 11)
                              LAUNCH(7, 45, 10) KERNEL("k1", 1, 300) KERNEL("k2", 2, 310) KERNEL("k3", 3, 320)
                                  KERNEL("k4", 4, 330) KERNEL("k5", 5, 340) KERNEL("k6", 6, 350) KERNEL("k7", 7, 360)
                                      KERNEL("k8", 99, 370) "{\"ph\":\"M\",\"name\":\"x\"}]");
    assert_string_equal(launched_by(&p, "k1"), "inner1");       /* inside inner1, inside outer */
    assert_string_equal(launched_by(&p, "k2"), "outer");        /* inner1 ended: its parent */
    assert_string_equal(launched_by(&p, "k3"), "straddle");     /* the last started, still open */
    assert_string_equal(launched_by(&p, "k4"), "straddle");     /* outer ended, straddle not */
    assert_string_equal(launched_by(&p, "k5"), "-");            /* after every operator */
    assert_string_equal(launched_by(&p, "k6"), "other_thread"); /* its own thread's */
    assert_string_equal(launched_by(&p, "k7"), "inner2");       /* inner2 open, straddle not yet */
    assert_string_equal(launched_by(&p, "k8"), "-");            /* no launch with its id */
    /* and each event's launch time, in place of its correlation id */
    assert_int_equal(kernel_at(&p, 300000)->launch_ns, 20000);
    assert_int_equal(kernel_at(&p, 350000)->launch_ns, 20000);
    assert_int_equal(kernel_at(&p, 370000)->launch_ns, INT64_MIN);
    tl_profile_release(&p);
}

/* A kernel's launch configuration (kernel_ops.c): a launch whose grid and
 * block repeat the first launch's text takes its values without reading
 * them; the same values in another text are the same configuration; other
 * values make it vary. */
static const tl_kernel_launch *launch_of(const tl_profile *p, const char *kernel)
{
    for (size_t i = 0; i < p->nklaunch; i++)
        if (strcmp(tl_strtab_get(&p->strs, p->klaunch[i].name), kernel) == 0)
            return &p->klaunch[i];
    fail_msg("no launch entry for %s", kernel);
    return NULL;
}

#define KARGS(name, ts, grid, block)                                                                                   \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"ts\":" #ts ",\"dur\":5,\"pid\":0,\"tid\":7,"             \
    "\"args\":{\"stream\":7,\"device\":0,\"grid\":" grid ",\"block\":" block "}},"

static void test_launch_config_repeated(void **state)
{
    (void)state;
    tl_profile p;
    read_text(&p, "[" KARGS("same", 10, "[8, 2, 1]", "[128, 1, 1]") KARGS("same", 20, "[8, 2, 1]", "[128, 1, 1]")
                      KARGS("same", 30, "[8,2,1]", "[128,1,1]") KARGS("other", 40, "[8, 2, 1]", "[128, 1, 1]")
                          KARGS("other", 50, "[8, 2, 1]", "[128, 1, 1]") KARGS("other", 60, "[9, 2, 1]", "[128, 1, 1]")
                              KARGS("other", 70, "[8, 2, 1]", "[128, 1, 1]") "{\"ph\":\"M\",\"name\":\"x\"}]");
    const tl_kernel_launch *a = launch_of(&p, "same"), *b = launch_of(&p, "other");
    assert_int_equal(a->grid[0], 8);
    assert_int_equal(a->grid[1], 2);
    assert_int_equal(a->block[0], 128);
    assert_false(a->varies);
    assert_int_equal(b->grid[0], 8);
    assert_true(b->varies);
    tl_profile_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_map),
        cmocka_unit_test(test_sort_nearly_sorted),
        cmocka_unit_test(test_sort_reversed),
        cmocka_unit_test(test_steps_ordered),
        cmocka_unit_test(test_steps_overlapping),
        cmocka_unit_test(test_launching_operator),
        cmocka_unit_test(test_launch_config_repeated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
