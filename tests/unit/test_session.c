/*
 * test_session.c - one profile into one session result
 * (tools/analyze/session_analysis.c: tl_session_analyze).
 *
 * Small profiles are built by hand (tl_profile_add_gpu/add_step/stream) and
 * every number of the GPU temporal breakdown is compared with values worked
 * out on paper in the comments: the ProfilerStep window (the last step is
 * dropped, GPU events launched inside the window are kept even when they run
 * past its end), kernel_time, busy, idle, compute, non-compute,
 * communication and its overlap with compute, the kernel-type sweep, the
 * per-stream idle categories (host_wait, kernel_wait, other), the per-step
 * compute, the kernel and name statistics, the whole-trace option and memory.
 * Times below are in µs; US() turns them into ns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "read_trace.h"
#include "str_pool.h"
#include "tt_support.h"

#define US(x) ((int64_t)(x)*1000)
#define NO_LAUNCH INT64_MIN

/* Add one GPU event; its kernel type comes from its name and category, as in ingest. */
static void gpu(tl_profile *p, uint16_t stream, const char *name, int cat_class, int64_t ts_us, int64_t dur_us,
                int64_t launch_us)
{
    tl_gpu_event e;
    memset(&e, 0, sizeof e);
    e.ts_ns = US(ts_us);
    e.dur_ns = US(dur_us);
    e.launch_ns = launch_us == NO_LAUNCH ? NO_LAUNCH : US(launch_us);
    e.name = tl_strtab_intern(&p->strs, name, strlen(name));
    e.stream = stream;
    e.cat_class = (uint8_t)cat_class;
    e.type = (uint8_t)tl_kernel_type_of(NULL, name, strlen(name), cat_class);
    assert_int_equal(tl_profile_add_gpu(p, &e), 0);
    tl_profile_span(p, e.ts_ns, e.ts_ns + e.dur_ns);
}

static void name_dur(tl_profile *p, const char *cat, const char *name, int64_t dur_us)
{
    assert_int_equal(tl_profile_add_duration(p, cat, strlen(cat), name, strlen(name), US(dur_us)), 0);
}

static void base(tl_profile *p, const char *path)
{
    tl_profile_init(p, path);
    p->id.format = TL_FMT_KINETO;
    p->id.rank = 0;
    p->id.world_size = 1;
    p->id.rank_source = TL_RANK_CONTENT;
}

/*
 * Three ProfilerSteps of 1000 µs (added out of order: the profile sorts them),
 * the window is steps 1 and 2: [0, 2000].
 *
 * stream 7 (compute)
 *   C1 gemm_a       [100,300)   launched   50
 *   C2 elementwise  [310,400)   launched  200  (before C1 ended; gap 10 < 30: kernel_wait)
 *   C3 gemm_a       [600,800)   launched  350  (before C2 ended; gap 200: other)
 *   C4 gemm_b       [1900,2200) launched 1800  (after C3 ended: host_wait 1100; in step 2,
 *                                              kept although it ends after the window)
 *   C5 gemm_b       [2300,2400) launched 2050  (in step 3: outside the window)
 * stream 20 (communication)
 *   N1 ncclKernel_AllReduce [250,650)   launched 240
 *   N2 ncclKernel_AllReduce [1000,1200) launched 900 (after N1 ended: host_wait 350)
 * stream 24 (memory, sync)
 *   M1 Memcpy HtoD  [280,320)   launched 270
 *   S1 Stream Sync  [1500,1510) launched 1490 (after M1 ended: host_wait 1180); type other
 *
 * In the window (8 events): first start 100, last end 2200: kernel_time 2100.
 * union of all: [100,800) 700 + [1000,1200) 200 + [1500,1510) 10 + [1900,2200) 300 = 1210
 * idle 2100 - 1210 = 890; compute C1+C2+C3+C4 = 200+90+200+300 = 790; non-compute 420;
 * comm 400+200 = 600; comm ∩ compute = [250,300) 50 + [310,400) 90 + [600,650) 50 = 190.
 * Sweep: [100,250) c 150 | [250,280) c+n 30 | [280,300) c+n+m 20 | [300,310) n+m 10 |
 * [310,320) c+n+m 10 | [320,400) c+n 80 | [400,600) n 200 | [600,650) c+n 50 |
 * [650,800) c 150 | [1000,1200) n 200 | [1900,2200) c 300 (the sync event is in no kind)
 * -> compute 600, comm 400, compute+comm 160, comm+memory 10, all three 30.
 * Per step compute (kernels launched in the step): step 1 C1+C2+C3 = 490, step 2 C4 = 300,
 * step 3 C5 = 100.
 */
static void build_window_profile(tl_profile *p)
{
    base(p, "window.json");
    uint16_t s7 = tl_profile_stream(p, 0, 7);
    uint16_t s20 = tl_profile_stream(p, 0, 20);
    uint16_t s24 = tl_profile_stream(p, 0, 24);
    assert_int_equal(tl_profile_add_step(p, 3, US(2000), US(1000)), 0);
    assert_int_equal(tl_profile_add_step(p, 1, US(0), US(1000)), 0);
    assert_int_equal(tl_profile_add_step(p, 2, US(1000), US(1000)), 0);
    gpu(p, s7, "gemm_b", TL_CC_KERNEL, 2300, 100, 2050);
    gpu(p, s7, "gemm_a", TL_CC_KERNEL, 100, 200, 50);
    gpu(p, s7, "elementwise", TL_CC_KERNEL, 310, 90, 200);
    gpu(p, s7, "gemm_a", TL_CC_KERNEL, 600, 200, 350);
    gpu(p, s7, "gemm_b", TL_CC_KERNEL, 1900, 300, 1800);
    gpu(p, s20, "ncclKernel_AllReduce", TL_CC_KERNEL, 250, 400, 240);
    gpu(p, s20, "ncclKernel_AllReduce", TL_CC_KERNEL, 1000, 200, 900);
    gpu(p, s24, "Memcpy HtoD (Pinned -> Device)", TL_CC_MEMCPY, 280, 40, 270);
    gpu(p, s24, "Stream Sync", TL_CC_SYNC, 1500, 10, 1490);
    name_dur(p, "cpu_op", "aten::mm", 10);
    name_dur(p, "cpu_op", "aten::mm", 30);
    name_dur(p, "user_annotation", "ProfilerStep#1", 1000);
    name_dur(p, "user_annotation", "ProfilerStep#2", 1000);
    name_dur(p, "user_annotation", "forward", 300);
    tl_profile_span(p, US(0), US(3000));
    tl_profile_finish(p);
}

static const tl_skernel *kernel(const tl_session *s, const char *name)
{
    for (size_t i = 0; i < s->nkernels; i++)
        if (strcmp(s->kernels[i].name, name) == 0)
            return &s->kernels[i];
    fail_msg("no kernel %s", name);
    return NULL;
}

static const tl_sname *sname(const tl_session *s, int group, const char *name)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (s->names[i].group == group && strcmp(s->names[i].name, name) == 0)
            return &s->names[i];
    return NULL;
}

static const tl_stream_idle *stream_idle(const tl_gpu_breakdown *g, int64_t stream)
{
    for (size_t i = 0; i < g->nstreams; i++)
        if (g->streams[i].stream == stream)
            return &g->streams[i];
    fail_msg("no stream %lld", (long long)stream);
    return NULL;
}

static void test_window_and_breakdown(void **state)
{
    (void)state;
    tl_profile p;
    build_window_profile(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    assert_int_equal(opt.kernel_wait_ns, 30000);
    assert_int_equal(opt.whole_trace, 0);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);

    assert_string_equal(s.id.path, "window.json");
    assert_int_equal(s.id.rank, 0);
    assert_int_equal(s.span_ns, US(3000));

    const tl_gpu_breakdown *g = &s.gpu;
    assert_true(g->present);
    assert_false(g->whole_trace);
    assert_int_equal(g->steps_in_window, 2);
    assert_int_equal(g->window_start, US(0));
    assert_int_equal(g->window_end, US(2000));
    assert_int_equal(g->events, 8);
    assert_int_equal(g->kernel_time, US(2100));
    assert_int_equal(g->busy, US(1210));
    assert_int_equal(g->idle, US(890));
    assert_int_equal(g->compute, US(790));
    assert_int_equal(g->non_compute, US(420));
    assert_int_equal(g->comm, US(600));
    assert_int_equal(g->comm_compute, US(190));
    assert_int_equal(g->by_mask[0], 0);
    assert_int_equal(g->by_mask[TL_MASK_COMPUTE], US(600));
    assert_int_equal(g->by_mask[TL_MASK_COMM], US(400));
    assert_int_equal(g->by_mask[TL_MASK_COMPUTE | TL_MASK_COMM], US(160));
    assert_int_equal(g->by_mask[TL_MASK_MEMORY], 0);
    assert_int_equal(g->by_mask[TL_MASK_COMPUTE | TL_MASK_MEMORY], 0);
    assert_int_equal(g->by_mask[TL_MASK_COMM | TL_MASK_MEMORY], US(10));
    assert_int_equal(g->by_mask[TL_MASK_COMPUTE | TL_MASK_COMM | TL_MASK_MEMORY], US(30));

    /* idle per stream */
    assert_int_equal(g->nstreams, 3);
    const tl_stream_idle *st = stream_idle(g, 7);
    assert_int_equal(st->device, 0);
    assert_int_equal(st->kernel_wait, US(10));
    assert_int_equal(st->other, US(200));
    assert_int_equal(st->host_wait, US(1100));
    assert_int_equal(st->host_part, US(1000)); /* C4: launched 1000 after C3 ended, started 100 later */
    assert_int_equal(st->comm_busy, 0);
    assert_int_equal(st->gaps, 3);
    st = stream_idle(g, 20);
    assert_int_equal(st->host_wait, US(350));
    assert_int_equal(st->host_part, US(250));
    assert_int_equal(st->comm_busy, US(600)); /* N1 and N2: a collectives' stream */
    assert_int_equal(st->kernel_wait + st->other, 0);
    assert_int_equal(st->gaps, 1);
    st = stream_idle(g, 24);
    assert_int_equal(st->host_wait, US(1180));
    assert_int_equal(st->host_part, US(1170));
    assert_int_equal(st->kernel_wait + st->other, 0);
    assert_int_equal(st->gaps, 1);

    /* kernels of the window only, sorted by name */
    assert_int_equal(s.nkernels, 6);
    for (size_t i = 0; i + 1 < s.nkernels; i++)
        assert_true(strcmp(s.kernels[i].name, s.kernels[i + 1].name) < 0);
    assert_int_equal(kernel(&s, "gemm_a")->d.count, 2);
    assert_int_equal(kernel(&s, "gemm_a")->d.total, (uint64_t)US(400));
    assert_int_equal(kernel(&s, "gemm_b")->d.count, 1); /* C5 is outside the window */
    assert_int_equal(kernel(&s, "gemm_b")->d.total, (uint64_t)US(300));
    assert_int_equal(kernel(&s, "gemm_b")->type, TL_KT_COMPUTE);
    assert_int_equal(kernel(&s, "ncclKernel_AllReduce")->type, TL_KT_COMM);
    assert_int_equal(kernel(&s, "Memcpy HtoD (Pinned -> Device)")->type, TL_KT_MEMORY);
    assert_int_equal(kernel(&s, "Stream Sync")->type, TL_KT_OTHER);

    /* collectives in launch order, pointing at the (sorted) kernel of their name */
    assert_int_equal(s.ncolls, 2);
    assert_string_equal(s.kernels[s.colls[0].kernel].name, "ncclKernel_AllReduce");
    assert_string_equal(s.kernels[s.colls[1].kernel].name, "ncclKernel_AllReduce");
    assert_int_equal(s.colls[0].dur_ns, US(400));
    assert_int_equal(s.colls[1].dur_ns, US(200));

    /* steps, sorted by number, with the compute of the kernels launched in each */
    assert_int_equal(s.nsteps, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(s.steps[i].number, (int64_t)i + 1);
        assert_int_equal(s.steps[i].dur_ns, US(1000));
    }
    assert_int_equal(s.steps[0].compute_ns, US(490));
    assert_int_equal(s.steps[1].compute_ns, US(300));
    assert_int_equal(s.steps[2].compute_ns, US(100));

    /* names: ProfilerStep#N are the steps, not sections */
    assert_null(sname(&s, TL_GROUP_SECTIONS, "ProfilerStep#1"));
    assert_null(sname(&s, TL_GROUP_SECTIONS, "ProfilerStep#2"));
    const tl_sname *mm = sname(&s, TL_GROUP_OPS, "aten::mm");
    assert_non_null(mm);
    assert_true(mm->exact);
    assert_int_equal(mm->d.count, 2);
    assert_int_equal(mm->d.total, (uint64_t)US(40));
    const tl_sname *fw = sname(&s, TL_GROUP_SECTIONS, "forward");
    assert_non_null(fw);
    assert_int_equal(fw->d.total, (uint64_t)US(300));

    tl_session_release(&s);
    tl_profile_release(&p);
}

/* --whole-trace: C5 is in too. first 100, last end 2400: kernel_time 2300; union 1210 + 100;
 * compute 790 + 100; stream 7 gets one more gap of 100 (C5 launched at 2050, before C4
 * ended at 2200: other). */
static void test_whole_trace_option(void **state)
{
    (void)state;
    tl_profile p;
    build_window_profile(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    opt.whole_trace = 1;
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    const tl_gpu_breakdown *g = &s.gpu;
    assert_true(g->present);
    assert_true(g->whole_trace);
    assert_int_equal(g->steps_in_window, 0);
    assert_int_equal(g->events, 9);
    assert_int_equal(g->kernel_time, US(2300));
    assert_int_equal(g->busy, US(1310));
    assert_int_equal(g->idle, US(990));
    assert_int_equal(g->compute, US(890));
    assert_int_equal(g->non_compute, US(420));
    assert_int_equal(g->comm, US(600));
    assert_int_equal(g->comm_compute, US(190));
    assert_int_equal(g->by_mask[TL_MASK_COMPUTE], US(700));
    const tl_stream_idle *st = stream_idle(g, 7);
    assert_int_equal(st->other, US(300));
    assert_int_equal(st->gaps, 4);
    assert_int_equal(kernel(&s, "gemm_b")->d.count, 2);
    /* the per-step compute does not depend on the window */
    assert_int_equal(s.steps[0].compute_ns, US(490));
    assert_int_equal(s.steps[2].compute_ns, US(100));
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* One ProfilerStep only: nothing to drop, the window is the whole trace. */
static void test_single_step_is_whole_trace(void **state)
{
    (void)state;
    tl_profile p;
    base(&p, "one-step.json");
    uint16_t s1 = tl_profile_stream(&p, 0, 7);
    assert_int_equal(tl_profile_add_step(&p, 5, US(0), US(100)), 0);
    gpu(&p, s1, "k", TL_CC_KERNEL, 10, 20, 5);
    gpu(&p, s1, "k", TL_CC_KERNEL, 150, 50, 120); /* after the step: still counted */
    tl_profile_finish(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_true(s.gpu.whole_trace);
    assert_int_equal(s.gpu.events, 2);
    assert_int_equal(s.gpu.kernel_time, US(190));
    assert_int_equal(s.gpu.idle, US(120));
    assert_int_equal(s.gpu.compute, US(70));
    assert_int_equal(s.nsteps, 1);
    assert_int_equal(s.steps[0].number, 5);
    assert_int_equal(s.steps[0].compute_ns, US(20));
    tl_session_release(&s);
    tl_profile_release(&p);
}

/*
 * Idle categories on one stream, no steps (whole trace):
 *   E1 [0,10)                launched  -5
 *   E2 [20,30)   gap 10      launched  15 > 10 (previous end)  host_wait
 *   E3 [35,40)   gap  5      launched  25 < 30                 kernel_wait (< 30 µs)
 *   E4 [100,110) gap 60      launched  30 < 40                 other
 *   E5 [140,150) gap 30      launched 110 = 110 (not after)    other (30 is not < 30)
 *   E6 [170,180) gap 20      launch unknown                    kernel_wait
 *   E7 [300,310) gap 120     launch unknown                    other
 *   E8 [310,320) no gap      launched 305
 * host_wait 10, kernel_wait 25, other 210, 6 gaps; with one stream they add up to idle.
 */
static void build_idle_profile(tl_profile *p)
{
    base(p, "idle.json");
    uint16_t s = tl_profile_stream(p, 1, 3);
    gpu(p, s, "k", TL_CC_KERNEL, 0, 10, -5);
    gpu(p, s, "k", TL_CC_KERNEL, 20, 10, 15);
    gpu(p, s, "k", TL_CC_KERNEL, 35, 5, 25);
    gpu(p, s, "k", TL_CC_KERNEL, 100, 10, 30);
    gpu(p, s, "k", TL_CC_KERNEL, 140, 10, 110);
    gpu(p, s, "k", TL_CC_KERNEL, 170, 10, NO_LAUNCH);
    gpu(p, s, "k", TL_CC_KERNEL, 300, 10, NO_LAUNCH);
    gpu(p, s, "k", TL_CC_KERNEL, 310, 10, 305);
    tl_profile_finish(p);
}

static void test_idle_categories(void **state)
{
    (void)state;
    tl_profile p;
    build_idle_profile(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    const tl_gpu_breakdown *g = &s.gpu;
    assert_int_equal(g->kernel_time, US(320));
    assert_int_equal(g->busy, US(75));
    assert_int_equal(g->idle, US(245));
    assert_int_equal(g->nstreams, 1);
    const tl_stream_idle *st = &g->streams[0];
    assert_int_equal(st->device, 1);
    assert_int_equal(st->stream, 3);
    assert_int_equal(st->host_wait, US(10));
    assert_int_equal(st->kernel_wait, US(25));
    assert_int_equal(st->other, US(210));
    assert_int_equal(st->gaps, 6);
    assert_int_equal(st->host_wait + st->kernel_wait + st->other, g->idle);
    /* steps are absent: no per-step compute */
    assert_int_equal(s.nsteps, 0);
    tl_session_release(&s);

    /* the kernel_wait threshold is an option: at 7 µs, E6's 20 µs gap becomes other */
    opt.kernel_wait_ns = 7000;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    st = &s.gpu.streams[0];
    assert_int_equal(st->host_wait, US(10));
    assert_int_equal(st->kernel_wait, US(5));
    assert_int_equal(st->other, US(230));
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* No GPU events in the window: no breakdown (not a breakdown of zeros). */
static void test_no_gpu(void **state)
{
    (void)state;
    tl_profile p;
    base(&p, "cpu-only.json");
    assert_int_equal(tl_profile_add_step(&p, 1, US(0), US(10)), 0);
    assert_int_equal(tl_profile_add_step(&p, 2, US(10), US(12)), 0);
    name_dur(&p, "cpu_op", "aten::add", 4);
    tl_profile_span(&p, 0, US(22));
    tl_profile_finish(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_false(s.gpu.present);
    assert_int_equal(s.gpu.events, 0);
    assert_int_equal(s.nkernels, 0);
    assert_int_equal(s.nsteps, 2);
    assert_int_equal(s.steps[0].compute_ns, -1);
    assert_int_equal(s.steps[1].dur_ns, US(12));
    assert_int_equal(s.span_ns, US(22));
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* Timeline lanes beside GPU events (session.h): the CPU threads that carry
 * work first (a data loader busy 30 %, not a thread busy 0.5 %), then the
 * streams that matter: stream 7 (40 kernels), stream 84 (two long NCCL
 * kernels: most of the busy time), and 6 side streams of one copy each
 * folded into one "other streams" lane, which holds their work. */
static void test_timeline_lanes_with_gpu(void **state)
{
    (void)state;
    tl_profile p;
    base(&p, "lanes.json");
    uint16_t s7 = tl_profile_stream(&p, 0, 7), s84 = tl_profile_stream(&p, 0, 84);
    for (int i = 0; i < 40; i++)
        gpu(&p, s7, "gemm", TL_CC_KERNEL, 100 + 20 * i, 10, NO_LAUNCH);
    gpu(&p, s84, "ncclKernel_AllReduce", TL_CC_KERNEL, 0, 400, NO_LAUNCH);
    gpu(&p, s84, "ncclKernel_AllReduce", TL_CC_KERNEL, 500, 400, NO_LAUNCH);
    for (int k = 0; k < 6; k++)
        gpu(&p, tl_profile_stream(&p, 0, 100 + k), "Memcpy HtoD", TL_CC_MEMCPY, 100 * k, 5, NO_LAUNCH);
    tl_cpu_lane *main_thread = tl_profile_cpu_lane(&p, 1, 1), *idle = tl_profile_cpu_lane(&p, 1, 3);
    tl_cpu_lane *loader = tl_profile_cpu_lane(&p, 1, 2);
    assert_non_null(main_thread);
    assert_non_null(idle);
    assert_non_null(loader);
    tl_binner_add(&main_thread->bins, 0, US(900));
    main_thread->events = 10;
    tl_binner_add(&loader->bins, US(100), US(370));
    loader->events = 3;
    tl_binner_add(&idle->bins, US(10), US(14));
    idle->events = 20;
    tl_profile_finish(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    const tl_timeline *t = &s.timeline;
    assert_int_equal(t->nlanes, 5);
    assert_int_equal(t->lanes[0].kind, TL_LANE_CPU);
    assert_int_equal(t->lanes[0].b, 1);
    assert_int_equal(t->lanes[1].kind, TL_LANE_CPU);
    assert_int_equal(t->lanes[1].b, 2);
    int seen7 = 0, seen84 = 0;
    for (int k = 2; k < 4; k++) {
        assert_int_equal(t->lanes[k].kind, TL_LANE_GPU);
        seen7 += t->lanes[k].b == 7;
        seen84 += t->lanes[k].b == 84;
    }
    assert_int_equal(seen7, 1);
    assert_int_equal(seen84, 1);
    const tl_lane *other = &t->lanes[4];
    assert_int_equal(other->kind, TL_LANE_GPU);
    assert_true(other->b == TL_LANE_OTHER_STREAMS);
    assert_string_equal(other->label, "GPU 0, 6 other streams");
    double work = 0;
    for (int i = 0; i < TL_TIMELINE_BINS; i++)
        work += tl_lane_busy(other, TL_KT_MEMORY, (size_t)i);
    /* 6 copies of 5 us over a span of 0..900 us in 1024 bins */
    assert_true(fabs(work * (US(900) / (double)TL_TIMELINE_BINS) - US(30)) < US(1));
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* Memory: peaks over the series, snapshots and monitor samples; the device's capacity;
 * the mean utilization of the samples. */
static void test_memory(void **state)
{
    (void)state;
    tl_profile p;
    base(&p, "mem.json");
    tl_mem_point m1 = { .ts_ns = 0, .device = 0, .allocated = 1e9, .reserved = 2e9 };
    tl_mem_point m2 = { .ts_ns = 10, .device = 0, .allocated = 3e9, .reserved = 2.5e9 };
    assert_int_equal(tl_profile_add_mem(&p, &m1), 0);
    assert_int_equal(tl_profile_add_mem(&p, &m2), 0);
    tl_mem_snapshot snap = { .label = tl_strtab_intern(&p.strs, "after_load", 10),
                             .ts_ns = 5,
                             .allocated = 2e9,
                             .reserved = 4e9,
                             .peak_allocated = 3.5e9,
                             .rss = 1e8,
                             .peak_rss = 2e8 };
    assert_int_equal(tl_profile_add_snapshot(&p, &snap), 0);
    tl_gpu_sample g1 = {
        .ts_ns = 0, .mem_used = 1e9, .mem_total = 80e9, .util_pct = 40.0, .temperature_c = NAN, .power_w = NAN
    };
    tl_gpu_sample g2 = {
        .ts_ns = 1, .mem_used = 2e9, .mem_total = 80e9, .util_pct = 60.0, .temperature_c = NAN, .power_w = NAN
    };
    tl_gpu_sample g3 = {
        .ts_ns = 2, .mem_used = NAN, .mem_total = NAN, .util_pct = NAN, .temperature_c = NAN, .power_w = NAN
    };
    assert_int_equal(tl_profile_add_gpu_sample(&p, &g1), 0);
    assert_int_equal(tl_profile_add_gpu_sample(&p, &g2), 0);
    assert_int_equal(tl_profile_add_gpu_sample(&p, &g3), 0);
    tl_profile_finish(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_true(s.peak_allocated == 3.5e9); /* the snapshot's peak beats the series' 3e9 */
    assert_true(s.peak_reserved == 4e9);
    assert_true(s.peak_rss == 2e8);
    assert_true(s.device_total == 80e9);
    assert_true(fabs(s.gpu_util_mean - 50.0) < 1e-9); /* NaN samples are not counted */
    assert_int_equal(s.nsnaps, 1);
    assert_string_equal(s.snaps[0].label, "after_load");
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* Blocking host calls as read from a trace: the synchronous ones whatever
 * their length, an asynchronous copy only when it blocked (50 us or more:
 * pageable memory), not the microsecond ones a training step makes by the
 * thousand. */
static void test_blocking_calls_read(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":8},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":"
        "140000},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":1,\"tid\":1,\"ts\":140300,"
        "\"dur\":5}"
        "]}";
    tl_profile p;
    tl_profile_init(&p, "blocking.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &opt), 0);
    assert_int_equal(p.nblocking, 2);
    assert_int_equal(p.blocking[0].dur_ns, 140000000);
    assert_int_equal(p.blocking[1].dur_ns, 5000);
    tl_profile_release(&p);
}

/* Step time by category (docs/analysis.md), read from a trace (and the kernel's
 * launching operator and launch configuration, at the end): each instant
 * to the first category active, GPU work first. Step 1 [0,1000) µs:
 *   cpu_op aten::linear [50,450), cudaLaunchKernel [100,120), kernel gemm
 *   [110,310), Memcpy [320,340), Memset [330,360), ncclDevKernel [500,600),
 *   the DataLoader's __next__ (a user annotation, named as data loading)
 *   [600,700), the annotation "forward" [0,900) (labels only).
 *   -> kernel 200, memcpy 20, memset [340,360) 20, communication 100,
 *   runtime [100,110) 10, data loading 100, CPU exec 400 - 10 - 200 - 40 =
 *   150, other 1000 - 600 = 400.
 * Step 2 [1000,2000): gloo:all_reduce (runs in place) [1100,1400), a Python
 *   frame [1000,1900), kernel gemm [1950,2100) (past the step's end).
 *   -> communication 300, CPU exec 600, kernel 50, other 50. */
static void test_step_categories(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":"
        "1000},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":900},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":400},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":"
        "20,"
        "\"args\":{\"correlation\":5}},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__"
        "next__\","
        "\"pid\":1,\"tid\":1,\"ts\":600,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":110,\"dur\":200,"
        "\"args\":{\"device\":0,\"stream\":7,\"correlation\":5,\"grid\":[32, 2, 1],\"block\":[128, 1, 1],"
        "\"registers per thread\":72,\"shared memory\":13824,\"est. achieved occupancy %\":5}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> "
        "Device)\",\"pid\":0,\"tid\":7,\"ts\":320,"
        "\"dur\":20,\"args\":{\"device\":0,\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,\"ts\":330,\"dur\":30,"
        "\"args\":{\"device\":0,\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\",\"pid\":0,\"tid\":20,"
        "\"ts\":500,\"dur\":100,\"args\":{\"device\":0,\"stream\":20}},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":1000,\"dur\":"
        "1000},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(12): step\",\"pid\":1,\"tid\":1,\"ts\":1000,"
        "\"dur\":900},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"gloo:all_reduce\",\"pid\":1,\"tid\":2,\"ts\":1100,\"dur\":300},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":1950,\"dur\":150,"
        "\"args\":{\"device\":0,\"stream\":7}}"
        "]}";
    tl_profile p;
    tl_profile_init(&p, "stepcats.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options topt;
    tl_trace_options_init(&topt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &topt), 0);
    p.id.rank = 0;
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_int_equal(s.nsteps, 2);
    assert_int_equal(s.nstepcats, 2);
    static const int64_t want[2][TL_SC_COUNT] = {
        { 200, 20, 20, 100, 10, 100, 150, 400 },
        { 50, 0, 0, 300, 0, 0, 600, 50 },
    };
    for (int k = 0; k < 2; k++) {
        assert_int_equal(s.stepcats[k].number, k + 1);
        int64_t sum = 0;
        for (int c = 0; c < TL_SC_COUNT; c++) {
            if (s.stepcats[k].ns[c] != US(want[k][c]))
                fail_msg("step %d %s: %lld ns, want %lld", k + 1, tl_stepcat_name(c), (long long)s.stepcats[k].ns[c],
                         (long long)US(want[k][c]));
            sum += s.stepcats[k].ns[c];
        }
        assert_int_equal(sum, s.steps[k].dur_ns);
    }
    assert_false(s.stepcats_cut);
    /* the kernel's launching operator (the innermost cpu_op around the runtime
     * call of its correlation id) and launch configuration (kernel_ops.h); the
     * second gemm (no correlation, no args) adds nothing */
    assert_int_equal(s.nkinfo, 1);
    assert_string_equal(s.kinfo[0].name, "gemm");
    assert_string_equal(s.kinfo[0].op, "aten::linear");
    assert_int_equal(s.kinfo[0].ops, 1);
    assert_int_equal(s.kinfo[0].linked_ns, US(200));
    assert_int_equal(s.kinfo[0].grid[0], 32);
    assert_int_equal(s.kinfo[0].grid[1], 2);
    assert_int_equal(s.kinfo[0].block[0], 128);
    assert_int_equal(s.kinfo[0].regs, 72);
    assert_int_equal(s.kinfo[0].smem, 13824);
    assert_true(fabs(s.kinfo[0].occupancy - 5) < 1e-9);
    assert_false(s.kinfo[0].varies);
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* A trace without ProfilerStep#N whose loop's iterations have times
 * (libtally's trace: category iteration) has them as its steps, numbered
 * from 0, at their real times; the loop is the iteration name with the most
 * time (train_step, not the shorter inner one). Its steps split by category:
 * step 0 [0,1000) µs: the section data_loading [0,200) is data loading,
 * forward [200,700) CPU exec, 300 other; step 1 [1000,2000): forward
 * [1000,1500) CPU exec, 500 other. */
static void test_step_categories_iterations(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"section\",\"name\":\"data_loading\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":200},"
        "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":300,\"dur\":50},"
        "{\"ph\":\"X\",\"cat\":\"section\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":500},"
        "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":\"train_step\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000},"
        "{\"ph\":\"X\",\"cat\":\"section\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":1000,\"dur\":500},"
        "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":\"train_step\",\"pid\":1,\"tid\":1,\"ts\":1000,\"dur\":1000}"
        "]}";
    tl_profile p;
    tl_profile_init(&p, "loop.trace.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options topt;
    tl_trace_options_init(&topt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &topt), 0);
    assert_int_equal(p.nsteps, 2);
    assert_int_equal(p.steps[1].number, 1);
    assert_int_equal(p.steps[1].ts_ns, US(1000));
    assert_int_equal(p.steps[1].dur_ns, US(1000));
    p.id.rank = 0;
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_int_equal(s.nsteps, 2);
    assert_int_equal(s.nstepcats, 2);
    static const int64_t want[2][TL_SC_COUNT] = { { 0, 0, 0, 0, 0, 200, 500, 300 }, { 0, 0, 0, 0, 0, 0, 500, 500 } };
    for (int k = 0; k < 2; k++) {
        assert_int_equal(s.stepcats[k].number, k);
        assert_false(s.steps[k].partial); /* libtally writes whole iterations */
        for (int c = 0; c < TL_SC_COUNT; c++)
            if (s.stepcats[k].ns[c] != US(want[k][c]))
                fail_msg("step %d %s: %lld ns, want %lld", k, tl_stepcat_name(c), (long long)s.stepcats[k].ns[c],
                         (long long)US(want[k][c]));
    }
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* A report's loop has no events to split: no categories, not steps of "other". */
static void test_step_categories_none_without_events(void **state)
{
    (void)state;
    tl_profile p;
    base(&p, "loop.json");
    assert_int_equal(tl_profile_add_step(&p, 1, US(0), US(10)), 0);
    tl_profile_finish(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &opt), 0);
    assert_int_equal(s.nsteps, 1);
    assert_int_equal(s.nstepcats, 0);
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* baseTimeNanoseconds = INT64_MAX (issue 26, item 9): the base time plus
 * the trace's first time overflowed (UBSan; in Release a start in 1677).
 * A base time past 2065 is not believed: warned, and times stay relative. */
static void test_base_time_extreme(void **state)
{
    (void)state;
    static const char text[] =
        "{\"baseTimeNanoseconds\": 9223372036854775807, \"distributedInfo\": {\"rank\": 0, \"world_size\": 1},"
        "\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":8},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":8}"
        "]}";
    tl_profile p;
    tl_profile_init(&p, "base.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &opt), 0);
    assert_int_equal(p.base_time_ns, INT64_MIN);
    int warned = 0;
    for (size_t i = 0; i < p.id.problems.n; i++)
        warned |= strstr(p.id.problems.v[i].text, "base time 9223372036854775807 ns is not a time") != NULL;
    assert_true(warned);
    tl_analyze_options aopt;
    tl_analyze_options_init(&aopt);
    tl_session s;
    assert_int_equal(tl_session_analyze(&s, &p, &aopt), 0);
    assert_int_equal(s.start_ns, 100000);
    assert_false(s.abs_time);
    tl_session_release(&s);
    tl_profile_release(&p);
}

/* The names budget keeps the names that matter by time (issue 26, item 8):
 * 1,500 rare names (1 us each) under --max-names 1000, then one op with
 * 99.5 % of the time. A fold by first appearance closed the table at the
 * 1,000th name and counted the op in "(other names)": the top-ops table
 * showed only that. */
static void test_names_budget_keeps_late_heavy_name(void **state)
{
    (void)state;
    enum { RARE = 1500, HOT = 300 };
    size_t cap = (size_t)(RARE + HOT) * 120 + 64, o = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    o += (size_t)snprintf(text + o, cap - o, "{\"traceEvents\":[");
    for (int i = 0; i < RARE; i++)
        o += (size_t)snprintf(text + o, cap - o,
                              "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"rare_%d\",\"pid\":1,\"tid\":1,"
                              "\"ts\":%d,\"dur\":1}",
                              i ? "," : "", i, 2 * i);
    for (int i = 0; i < HOT; i++) /* 300 x 1000 us = 99.5 % of 301.5 ms */
        o += (size_t)snprintf(text + o, cap - o,
                              ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::hot\",\"pid\":1,\"tid\":1,"
                              "\"ts\":%d,\"dur\":1000}",
                              10000 + 1001 * i);
    o += (size_t)snprintf(text + o, cap - o, "]}");
    assert_true(o < cap);
    tl_profile p;
    tl_profile_init(&p, "names.json");
    p.max_names = 1000;
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &opt), 0);
    const tl_name_stat *hot = NULL, *other = NULL;
    uint64_t count = 0;
    for (uint32_t i = 0; i < p.nstats; i++) {
        const char *name = tl_strtab_get(&p.strs, p.stats[i].name);
        if (strcmp(name, "aten::hot") == 0)
            hot = &p.stats[i];
        else if (strcmp(name, "(other names)") == 0)
            other = &p.stats[i];
        count += p.stats[i].d.count;
    }
    assert_int_equal(count, RARE + HOT); /* nothing dropped */
    assert_non_null(hot);
    assert_int_equal(hot->d.count, HOT);
    assert_int_equal(hot->d.total, (uint64_t)HOT * 1000000);
    assert_non_null(other);
    assert_true(p.nstats <= 1000);
    int said = 0;
    for (size_t i = 0; i < p.id.problems.n; i++)
        said |= strstr(p.id.problems.v[i].text, "kept the names with the most time") != NULL;
    assert_true(said);
    tl_profile_release(&p);
    free(text);
}

/* An event of a timed phase without "ts" (issue 26, item 10) is malformed,
 * counted and said: an X without ts was dropped silently, and validate
 * called the file clean. */
static void test_event_without_ts(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"no_ts\",\"pid\":1,\"tid\":1,\"dur\":5},"
        "{\"ph\":\"B\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":1},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ok\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":5}"
        "]}";
    tl_profile p;
    tl_profile_init(&p, "nots.json");
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &opt), 0);
    assert_int_equal(p.malformed, 2);
    assert_int_equal(p.id.problems.n, 1);
    assert_non_null(strstr(p.id.problems.v[0].text, "2 events without \"ts\" skipped as malformed; the first at "
                                                    "offset 16: \"no_ts\" (phase X)"));
    tl_profile_release(&p);
}

/* Two sessions of one rank, each with n GPU streams, half of them on both
 * (streams n/2 .. n-1 of device 0): the rank's streams are sorted by
 * (device, stream), each once, the shared ones summed. */
static void gpu_streams_session(tl_session *s, const char *path, size_t first, size_t n)
{
    memset(s, 0, sizeof *s);
    s->id.path = tt_xstrdup(path);
    s->id.format = TL_FMT_KINETO;
    s->id.rank = 0;
    s->id.world_size = 1;
    s->id.rank_source = TL_RANK_CONTENT;
    s->peak_allocated = s->peak_reserved = s->device_total = s->peak_rss = s->gpu_util_mean = NAN;
    s->peak_device_used = NAN;
    s->gpu.present = 1;
    s->gpu.streams = calloc(n, sizeof *s->gpu.streams);
    assert_non_null(s->gpu.streams);
    s->gpu.nstreams = n;
    for (size_t i = 0; i < n; i++) { /* descending: the merge must sort */
        tl_stream_idle *x = &s->gpu.streams[i];
        x->device = 0;
        x->stream = (int64_t)(first + n - 1 - i);
        x->host_wait = 10;
        x->busy = 100;
        x->gaps = 1;
        x->host_part = 5;
        x->comm_busy = 0;
    }
}

static void merged_streams(size_t n)
{
    tl_session v[2];
    gpu_streams_session(&v[0], "a.pt.trace.json", 0, n);
    gpu_streams_session(&v[1], "b.pt.trace.json", n / 2, n);
    tl_aggregate a;
    tl_aggregate_init(&a, NULL);
    assert_int_equal(tl_aggregate_add_session(&a, &v[0]), 0);
    assert_int_equal(tl_aggregate_add_session(&a, &v[1]), 0);
    assert_int_equal(tl_aggregate_finish(&a), 0);
    assert_int_equal(a.nranks, 1);
    const tl_gpu_breakdown *g = &a.ranks[0].gpu;
    assert_int_equal(g->nstreams, n + n / 2);
    for (size_t i = 0; i < g->nstreams; i++) {
        int both = i >= n / 2 && i < n;
        assert_int_equal(g->streams[i].stream, (int64_t)i);
        assert_int_equal(g->streams[i].busy, both ? 200 : 100);
        assert_int_equal(g->streams[i].gaps, both ? 2 : 1);
        assert_int_equal(g->streams[i].host_part, both ? 10 : 5);
    }
    tl_aggregate_release(&a);
}

/* The merge of a rank's streams is O(n log n): a search per stream and a
 * realloc by one took 112 s for 200,000 streams (the test's TIMEOUT catches
 * it; benchmarks time it). */
static void test_gpu_streams_merge(void **state)
{
    (void)state;
    merged_streams(4);
    merged_streams(200000);
}

/* Sessions of the same program share their names (issue 33: each rank's own
 * copies were ~33 KB of every extra rank): two ranks analyzed from the same
 * profile hold the same pointer for each name and kernel, each stays readable
 * when the other is released, the last release frees them, and a session
 * holding a name of its own (a test's strdup, a companion's lent name) is
 * released as before. Histograms hold only the buckets they count. */
static void test_sessions_share_names(void **state)
{
    (void)state;
    unsigned long before = tl_str_pool_count();
    tl_profile p;
    build_window_profile(&p);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_session a, b;
    assert_int_equal(tl_session_analyze(&a, &p, &opt), 0);
    assert_int_equal(tl_session_analyze(&b, &p, &opt), 0);
    assert_true(a.nnames > 0 && a.nkernels > 0);
    assert_int_equal(a.nnames, b.nnames);
    for (size_t i = 0; i < a.nnames; i++) {
        assert_ptr_equal(a.names[i].name, b.names[i].name);
        const tl_hist *h = &a.names[i].d.hist;
        if (h->counts != NULL) { /* first and last bucket held both count */
            assert_true(h->n > 0);
            assert_true(h->counts[0] > 0 && h->counts[h->n - 1] > 0);
        }
    }
    for (size_t i = 0; i < a.nkernels; i++)
        assert_ptr_equal(a.kernels[i].name, b.kernels[i].name);
    assert_true(tl_str_pool_count() > before);
    /* summary's drop of the timeline's bins (tl_session_drop_bins): lanes,
     * labels and calls stay, every bin reads 0 */
    size_t lanes = b.timeline.nlanes;
    assert_true(lanes > 0);
    tl_session_drop_bins(&b);
    assert_int_equal(b.timeline.nlanes, lanes);
    for (size_t l = 0; l < lanes; l++) {
        assert_non_null(b.timeline.lanes[l].label);
        for (int k = 0; k < TL_KT_COUNT; k++) {
            assert_null(b.timeline.lanes[l].busy[k]);
            assert_true(tl_lane_busy(&b.timeline.lanes[l], k, 7) == 0.0f);
        }
    }
    char *kept = strdup(b.names[0].name);
    tl_session_release(&a);
    assert_string_equal(b.names[0].name, kept); /* still b's */
    /* a name of its own beside pooled ones */
    tl_str_pool_free(b.names[0].name);
    b.names[0].name = kept;
    tl_session_release(&b);
    assert_int_equal(tl_str_pool_count(), before);
    tl_profile_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking_calls_read),
        cmocka_unit_test(test_window_and_breakdown),
        cmocka_unit_test(test_sessions_share_names),
        cmocka_unit_test(test_whole_trace_option),
        cmocka_unit_test(test_single_step_is_whole_trace),
        cmocka_unit_test(test_idle_categories),
        cmocka_unit_test(test_no_gpu),
        cmocka_unit_test(test_timeline_lanes_with_gpu),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_gpu_streams_merge),
        cmocka_unit_test(test_base_time_extreme),
        cmocka_unit_test(test_names_budget_keeps_late_heavy_name),
        cmocka_unit_test(test_event_without_ts),
        cmocka_unit_test(test_step_categories),
        cmocka_unit_test(test_step_categories_none_without_events),
        cmocka_unit_test(test_step_categories_iterations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
