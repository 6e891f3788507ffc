/*
 * test_partial.c - the partial aggregate format (tools/ingest/partial_fields.c),
 * its reader (tools/ingest/read_partial.c) and its writer
 * (tools/render/partial_json.c):
 *   - a session's problems come back with their text, byte offset and kind
 *     (the kind follows from the identity: tl_identity_kinds_from_words);
 *   - write -> read -> write is byte-identical for a session that uses every
 *     field (every array non-empty, every optional object present), for
 *     sessions analyzed from samples/traces/dlrm-8rank, and for the fuzz
 *     seeds; version 1 seeds (enums as integers) read to what version 2 says;
 *   - every field of every table, changed to something hostile (out of its
 *     range, of the wrong type, missing), is refused with an error naming the
 *     field and where it is -- and a missing optional field is not refused;
 *   - the dedicated readers (histograms, bins, calls, ...) refuse theirs;
 *   - schema/tally-partial.schema.json says what the tables say (keys,
 *     required, tuple lengths, enum names and the integers of version 1,
 *     ranges, limits), so the schema and the code cannot drift apart.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <math.h>

#include "aggregate.h"
#include "ingest.h"
#include "partial.h"
#include "render.h"
#include "tt_support.h"

/* ---- helpers ------------------------------------------------------------------- */

typedef struct sink {
    char *data;
    size_t len, cap;
} sink;

/* Whether v is the JSON string s (json_equal with a temporary json_string leaks it). */
static int json_str_is(const json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *s = ctx;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->data = realloc(s->data, s->cap);
        assert_non_null(s->data);
    }
    memcpy(s->data + s->len, buf, len);
    s->len += len;
    s->data[s->len] = '\0';
    return 0;
}

/* The partial of a, as tally writes it (malloc'd). */
static char *partial_of(const tl_aggregate *a, const char *producer)
{
    sink s = { 0 };
    tl_json *j = malloc(sizeof *j);
    assert_non_null(j);
    tl_json_init(j, sink_write, &s);
    tl_partial_write(j, a, producer);
    assert_int_equal(tl_json_finish(j), 0);
    free(j);
    return s.data;
}

/* Read text into a fresh aggregate as tally merge does; fails the test with the reader's error. */
static void read_into(tl_aggregate *a, const char *text, const char *what)
{
    char err[512] = "";
    tl_partial p;
    tl_partial_init(&p);
    tl_aggregate_init(a, NULL);
    if (tl_partial_read_buffer(&p, text, strlen(text), err, sizeof err) != 0)
        fail_msg("%s: %s", what, err);
    assert_int_equal(tl_aggregate_add_partial(a, &p, err, sizeof err), 0);
    assert_int_equal(p.nsessions, 0);
    tl_partial_release(&p);
}

/* Refused or not: 0 when it reads, else -1 with err. */
static int try_read(const char *text, char *err, size_t errlen)
{
    tl_partial p;
    tl_partial_init(&p);
    int rc = tl_partial_read_buffer(&p, text, strlen(text), err, errlen);
    if (rc != 0)
        assert_int_equal(p.nsessions, 0); /* nothing half read stays */
    tl_partial_release(&p);
    return rc;
}

/* write(read(text)) == write(read(write(read(text)))); the first write is returned. */
static char *round_trip(const char *text, const char *producer, const char *what)
{
    tl_aggregate a, b;
    read_into(&a, text, what);
    char *first = partial_of(&a, producer);
    read_into(&b, first, what);
    char *second = partial_of(&b, producer);
    if (strcmp(first, second) != 0)
        fail_msg("%s: a partial written, read and written again differs", what);
    free(second);
    tl_aggregate_release(&a);
    tl_aggregate_release(&b);
    return first;
}

/* src's sessions through tally-mpi's wire (partial_wire.c) into a fresh dst,
 * as process 0 takes another process's: packed, unpacked, added. */
static void wire_into(tl_aggregate *dst, const tl_aggregate *src)
{
    tl_partial view = tl_partial_options_of(&src->opt);
    tl_wire w = { 0 };
    assert_int_equal(tl_partial_wire_pack(&w, &view, src->sessions, src->nsessions), 0);
    char err[512] = "";
    tl_partial p;
    /* cut short anywhere, the bytes are refused and nothing half read stays */
    static const size_t cuts[] = { 0, 7, 8, 9, 100, 1000 };
    for (size_t k = 0; k <= sizeof cuts / sizeof cuts[0]; k++) {
        size_t len = k < sizeof cuts / sizeof cuts[0] ? cuts[k] : w.len / 2;
        if (len >= w.len)
            continue;
        tl_partial_init(&p);
        assert_int_equal(tl_partial_wire_unpack(&p, w.p, len, err, sizeof err), -1);
        assert_int_equal(p.nsessions, 0);
        tl_partial_release(&p);
    }
    /* a byte changed anywhere: read back or refused, never a read past the
     * bytes or a leak (the sanitizer build runs this) */
    size_t step = w.len / 300 > 61 ? w.len / 300 | 1 : 61; /* about 300 places, odd strides */
    for (size_t at = 8; at < w.len; at += step) {
        char *bent = malloc(w.len);
        assert_non_null(bent);
        memcpy(bent, w.p, w.len);
        bent[at] = (char)(bent[at] ^ 0x5a);
        tl_partial_init(&p);
        (void)tl_partial_wire_unpack(&p, bent, w.len, err, sizeof err);
        tl_partial_release(&p);
        free(bent);
    }
    tl_partial_init(&p);
    if (tl_partial_wire_unpack(&p, w.p, w.len, err, sizeof err) != 0)
        fail_msg("the wire: %s", err);
    /* each session's bulk size, taken while unpacking, is what measuring it says (the
     * spill's budget reads it instead: spill.h) */
    for (size_t i = 0; i < p.nsessions; i++) {
        assert_true(p.sessions[i].spill.wire_size > 0);
        assert_int_equal(p.sessions[i].spill.wire_size, tl_partial_wire_bulk_size(&p.sessions[i]));
    }
    free(w.p);
    tl_aggregate_init(dst, &src->opt);
    assert_int_equal(tl_aggregate_add_partial(dst, &p, err, sizeof err), 0);
    tl_partial_release(&p);
}

/* ---- the identity's problems: words, offsets, and kinds that follow ------------------- */

/* Inputs of every standing (identity.h): a trace with a problem at a byte
 * and no rank and a second trace without one (ranks by input order: the only
 * input of a run is not told it), a file that is not JSON, a path that does
 * not exist. Their sessions are written and read back with every
 * problem's text, kind and byte; an unreadable input's reads back as
 * skipped (both: not read), the one difference partial.h states. */
static void test_round_trip_problems(void **state)
{
    (void)state;
    char dir[128], trace[256], other[256], notjson[256], missing[256];
    snprintf(dir, sizeof dir, "/tmp/tally-test-partial-%d", (int)getpid());
    tt_rmtree(dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    snprintf(other, sizeof other, "%s/other.json", dir);
    snprintf(notjson, sizeof notjson, "%s/profile.json", dir);
    snprintf(missing, sizeof missing, "%s/gone: rank1.json", dir);
    tt_write_file(trace, "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":1},\n"
                         " {\"ph\":\"X\",\"name\":\"b\",\"ts\":9,\"pid\":1,\"tid\":1}]");
    tt_write_file(other, "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":1}]");
    tt_write_file(notjson, "# not a profile\n");
    const char *paths[] = { trace, other, notjson, missing };
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_ingest_options o;
    tl_ingest_options_init(&o);
    tl_run run;
    tl_run_init(&run);
    assert_int_equal(tl_run_ingest(&run, paths, 4, &o), 2);
    tl_aggregate a;
    tl_aggregate_init(&a, &opt);
    for (size_t i = 0; i < run.n; i++) {
        tl_profile *p = run.profiles[i];
        tl_session s;
        if (p->skipped) {
            assert_int_equal(tl_session_from_identity(&s, &p->id), 0);
        } else {
            assert_int_equal(tl_session_analyze(&s, p, &opt), 0);
            assert_int_equal(tl_identity_take_settled(&s.id, &p->id), 0);
        }
        assert_int_equal(tl_aggregate_add_session(&a, &s), 0);
    }
    assert_int_equal(run.nunreadable, 1);
    tl_session u;
    assert_int_equal(tl_session_from_identity(&u, &run.unreadable[0]), 0);
    assert_int_equal(tl_aggregate_add_session(&a, &u), 0);
    tl_run_release(&run);
    assert_int_equal(a.nsessions, 4);

    char *text = partial_of(&a, "test");
    tt_assert_contains(text, "\"offsets\":[[0,", "the partial");
    tl_aggregate b;
    read_into(&b, text, "problems");
    assert_int_equal(b.nsessions, 4);
    int kinds_seen = 0;
    for (size_t i = 0; i < 4; i++) {
        const tl_identity *x = &a.sessions[i].id, *y = &b.sessions[i].id;
        assert_string_equal(x->path, y->path);
        assert_int_equal(x->problems.n, y->problems.n);
        for (size_t k = 0; k < x->problems.n; k++) {
            const tl_problem *px = &x->problems.v[k], *py = &y->problems.v[k];
            assert_string_equal(px->text, py->text);
            assert_int_equal(px->offset, py->offset);
            assert_int_equal(px->kind == TL_PROBLEM_UNREADABLE ? TL_PROBLEM_SKIPPED : px->kind, py->kind);
            kinds_seen |= 1 << px->kind;
        }
    }
    assert_int_equal(kinds_seen, (1 << TL_PROBLEM_WARNING) | (1 << TL_PROBLEM_SKIPPED) | (1 << TL_PROBLEM_UNREADABLE) |
                                     (1 << TL_PROBLEM_RANK_ORDER));
    char *again = partial_of(&b, "test");
    assert_string_equal(text, again);
    free(again);
    free(text);
    tl_aggregate_release(&a);
    tl_aggregate_release(&b);
    tt_rmtree(dir);
}

/* ---- a session that uses every field ---------------------------------------------- */

static void stat_of(tl_dur_stat *d, uint64_t base)
{
    memset(d, 0, sizeof *d);
    for (uint64_t i = 1; i <= 5; i++)
        tl_dur_stat_add(d, base * i, 1000);
}

/* Every array non-empty, every optional object present, every enum off its
 * zero value where it can be, every "unknown" both ways somewhere. */
static void full_session(tl_session *s, const char *path, int rank)
{
    tl_session_init(s);
    s->id.path = tt_xstrdup(path);
    s->id.format = TL_FMT_KINETO;
    s->id.rank = rank;
    s->id.world_size = 8;
    s->id.rank_source = TL_RANK_NAME;
    s->id.rank_detail = tt_xstrdup("file name: rank-1.json");
    s->start_ns = 1700000000000000000LL;
    s->span_ns = 5000000;
    s->truncated = 1;
    s->id.companion_of = tt_xstrdup("report.json");
    assert_int_equal(
        tl_problems_add_text(&s->id.problems, TL_PROBLEM_WARNING, 17, "offset 17: an event without \"cat\""), 0);

    s->names = calloc(2, sizeof *s->names);
    s->names[0] = (tl_sname){ TL_GROUP_GPU_ANNOTATIONS, tt_xstrdup("forward"), 1, 700, 400, NAN, NAN, NAN, { 0 }, 2 };
    stat_of(&s->names[0].d, 100);
    s->names[1] = (tl_sname){ TL_GROUP_SECTIONS, tt_xstrdup("load"), 0, -1, -1, 300.5, 900, 12.25, { 0 }, 0 };
    stat_of(&s->names[1].d, 300);
    s->nnames = 2;
    s->kernels = calloc(2, sizeof *s->kernels);
    s->kernels[0] = (tl_skernel){ tt_xstrdup("ncclDevKernel_AllReduce"), TL_KT_COMM, { 0 } };
    stat_of(&s->kernels[0].d, 2000);
    s->kernels[1] = (tl_skernel){ tt_xstrdup("Memcpy HtoD"), TL_KT_MEMORY, { 0 } };
    stat_of(&s->kernels[1].d, 50);
    s->nkernels = 2;
    s->steps = calloc(2, sizeof *s->steps);
    s->steps[s->nsteps++] = (tl_sstep){ 12, 2000000, 1500000, 1000, 0 };
    s->steps[s->nsteps++] = (tl_sstep){ 13, 1000000, -1, INT64_MIN, 1 };

    tl_gpu_breakdown *g = &s->gpu;
    g->present = 1;
    g->steps_in_window = 1;
    g->window_start = 1000;
    g->window_end = 2001000;
    g->events = 42;
    g->kernel_time = 1900000;
    g->busy = 1500000;
    g->idle = 400000;
    g->compute = 1000000;
    g->non_compute = 500000;
    g->comm = 300000;
    g->comm_compute = 100000;
    for (int m = 0; m < 8; m++)
        g->by_mask[m] = 1000 * m;
    g->streams = calloc(1, sizeof *g->streams);
    g->streams[g->nstreams++] = (tl_stream_idle){ 0, 7, 100000, 200000, 100000, 12, 1500000, 3, 80000, 400000 };
    g->blocked_idle = 50000;
    snprintf(g->blocking_call, sizeof g->blocking_call, "cudaStreamSynchronize");
    g->blocking_call_ns = 40000;

    s->colls = calloc(2, sizeof *s->colls);
    s->colls[s->ncolls++] = (tl_collective){ 0, 300000 };
    s->colls[s->ncolls++] = (tl_collective){ 0, 250000 };
    s->coll_names = calloc(3, sizeof *s->coll_names);
    s->coll_names[s->ncoll_names++] = tt_xstrdup("ncclDevKernel_AllReduce");
    s->coll_names[s->ncoll_names++] = tt_xstrdup("gloo:all_reduce");
    s->coll_names[s->ncoll_names++] = tt_xstrdup("0");
    s->insts = calloc(2, sizeof *s->insts);
    s->insts[s->ninsts++] = (tl_scoll){ 0, TL_COLL_GPU, 1700000000000001000LL, 300000, 7, 1059850, 2, 4, 8 };
    s->insts[s->ninsts++] = (tl_scoll){ 1, TL_COLL_RUN, 1700000000000400000LL, 250000, -1, -1, -1, -1, -1 };
    s->insts_dropped = 3;
    s->snaps = calloc(2, sizeof *s->snaps);
    s->snaps[s->nsnaps++] = (tl_ssnap){ tt_xstrdup("after_load"), 1e9, 2e9, 1.5e9, 3e9, 4e9, 5000 };
    s->snaps[s->nsnaps++] = (tl_ssnap){ tt_xstrdup("end"), NAN, NAN, NAN, 3e9, NAN, INT64_MIN };

    tl_timeline *t = &s->timeline;
    t->start_ns = 0;
    t->end_ns = 5000000;
    t->lanes = calloc(2, sizeof *t->lanes);
    t->lanes[0].kind = TL_LANE_GPU;
    t->lanes[0].a = 0;
    t->lanes[0].b = 7;
    t->lanes[0].label = tt_xstrdup("GPU 0 stream 7");
    for (int i = 0; i < TL_TIMELINE_BINS; i += 3)
        tl_lane_busy_row(&t->lanes[0], TL_KT_COMM)[i] = 0.25f;
    t->lanes[1].kind = TL_LANE_CPU;
    t->lanes[1].a = 1234;
    t->lanes[1].b = 1235;
    t->lanes[1].label = tt_xstrdup("thread 1235 main");
    tl_lane_busy_row(&t->lanes[1], TL_KT_COMPUTE)[5] = 1.0f;
    assert_int_equal(tl_strtab_intern(&t->names, "forward", 7), 0);
    assert_int_equal(tl_strtab_intern(&t->names, "step", 4), 1);
    t->lanes[1].calls = calloc(2, sizeof *t->lanes[1].calls);
    t->lanes[1].calls[0] = (tl_lane_call){ .ts_ns = 100, .dur_ns = 4000, .row = 1, .name = 0 };
    t->lanes[1].calls[1] = (tl_lane_call){ .ts_ns = 200, .dur_ns = 1000, .row = 0, .name = 1 };
    t->lanes[1].ncalls = 2;
    t->lanes[1].calls_left = 17;
    t->nlanes = 2;

    s->mem = calloc(2, sizeof *s->mem);
    s->mem[s->nmem++] = (tl_mem_sample){ 0, 1e9, 2e9 };
    s->mem[s->nmem++] = (tl_mem_sample){ 1000, NAN, 2.5e9 };
    s->device_name = tt_xstrdup("NVIDIA H100 80GB HBM3");
    s->peak_allocated = 1.5e9;
    s->peak_reserved = 2.5e9;
    s->device_total = 8.5e10;
    s->peak_rss = 3e9;
    s->peak_device_used = 4e9;
    s->gpu_util_mean = 87.5;
    s->abs_time = 1;
    s->pid = 4242;
    s->graph_launches = 9;
    s->devices = calloc(2, sizeof *s->devices);
    s->devices[s->ndevices++] = (tl_sdevice){ 0, tt_xstrdup("NVIDIA H100 80GB HBM3"), 8.5e10 };
    s->devices[s->ndevices++] = (tl_sdevice){ 1, tt_xstrdup(""), NAN };
    s->series = calloc(1, sizeof *s->series);
    tl_tseries *ts = &s->series[s->nseries++];
    ts->kind = TL_SERIES_GPU_POWER;
    ts->device = 0;
    ts->n = 3;
    ts->start_ns = 0;
    ts->end_ns = 2000;
    ts->min = 300;
    ts->max = 450.5;
    ts->mean = 400;
    ts->energy_j = 0.0008;
    ts->nbins = 3;
    ts->bmin[0] = ts->bmean[0] = ts->bmax[0] = 300;
    ts->bmin[1] = ts->bmean[1] = ts->bmax[1] = NAN;
    ts->bmin[2] = 400;
    ts->bmean[2] = 425.25;
    ts->bmax[2] = 450.5;

    s->events = calloc(2, sizeof *s->events);
    s->events[s->nevents++] = (tl_sevent){ 10, tt_xstrdup("checkpoint_loaded"), tt_xstrdup("{\"use_ema\":true}") };
    s->events[s->nevents++] = (tl_sevent){ INT64_MIN, tt_xstrdup("done"), tt_xstrdup("") };
    s->events_total = 3;
    s->tags = calloc(2, sizeof *s->tags);
    s->tags[s->ntags++] = tt_xstrdup("model=dlrm");
    s->counters = calloc(3, sizeof *s->counters);
    s->counters[s->ncounters++] = (tl_scounter){ tt_xstrdup("loss"), TL_COUNTER_USER, 2, -1, -0.75, -0.5 };
    s->counters[s->ncounters++] = (tl_scounter){ tt_xstrdup("queue.depth"), TL_COUNTER_TRACE, 4, 0, 1.5, 3 };
    s->counters[s->ncounters++] = (tl_scounter){ tt_xstrdup("kv.hit_rate"), TL_COUNTER_RATE, 1, 0.75, 0.75, 0.75 };
    s->counters_total = 6;
    s->sys = (tl_ssystem){ tt_xstrdup("node7"), tt_xstrdup("Linux 6.1"), 96, 1.1e12 };
    s->diff = (tl_sdiffusion){ 7,    6,     18,    3,    3,  10000, 9000,
                               2000, 1400,  28,    8000, 30, 7000,  tt_xstrdup("blocks.3.attn"),
                               900,  5.5e9, 2.25e9 /* block memory: GPU and RSS peaks */ };
    s->health = calloc(1, sizeof *s->health);
    s->health[s->nhealth++] = (tl_shealth){ 0, 8, 2, 2000, 88, 8, 3, 700, 699, 8, 1, 2 };
    s->clocks = calloc(1, sizeof *s->clocks);
    s->clocks[s->nclocks++] = (tl_sclock){ 0, 8, 3, 2, 1095, 810 };
    s->devmem = calloc(2, sizeof *s->devmem);
    s->devmem[s->ndevmem++] = (tl_sdevmem){ 0, 6e9, 8e9, 9e9 };
    s->devmem[s->ndevmem++] = (tl_sdevmem){ 1, 7e9, 8.5e9, NAN };
    s->growth = calloc(1, sizeof *s->growth);
    s->growth[s->ngrowth++] =
        (tl_sgrowth){ tt_xstrdup("rss at each step"), TL_GROWTH_RSS, 6, 1, 1e9, 2e9, 2.1e9, 5000, 4e8 };
    s->shapes = calloc(2, sizeof *s->shapes);
    s->shapes[s->nshapes++] = (tl_sshape){ tt_xstrdup("aten::addmm"),
                                           tt_xstrdup("[[1024],[512,1024],[1024,1024],[],[]]"),
                                           tt_xstrdup("float,float,float,Scalar,Scalar"),
                                           8,
                                           800000,
                                           90000,
                                           120000,
                                           8 * 1073741824.0,
                                           8,
                                           560000,
                                           8 };
    s->shapes[s->nshapes++] = (tl_sshape){
        tt_xstrdup("aten::relu"), tt_xstrdup("[[512,1024]]"), tt_xstrdup("float"), 8, 40000, 4000, 6000, NAN, 0, 0, 0
    };
    s->shapes_dropped_keys = 3;
    s->shapes_dropped_calls = 12;
    s->stepcats = calloc(2, sizeof *s->stepcats);
    s->stepcats[s->nstepcats++] = (tl_sstepcat){ 12, { 900000, 100000, 2000, 300000, 150000, 200000, 248000, 100000 } };
    s->stepcats[s->nstepcats++] = (tl_sstepcat){ 13, { 0, 0, 0, 0, 0, 0, 600000, 400000 } };
    s->stepcats_cut = 1;
    s->kinfo = calloc(1, sizeof *s->kinfo);
    s->kinfo[s->nkinfo++] = (tl_skinfo){ tt_xstrdup("volta_sgemm_128x32_nt"),
                                         tt_xstrdup("aten::mm"),
                                         2,
                                         470000,
                                         540000,
                                         { 4, 8, 1 },
                                         { 256, 1, 1 },
                                         57,
                                         16384,
                                         4.04,
                                         1 };
    s->memops = calloc(2, sizeof *s->memops);
    s->memops[s->nmemops++] = (tl_smemop){ tt_xstrdup("aten::empty_strided"), 24, 3221225472, 1073741824 };
    s->memops[s->nmemops++] = (tl_smemop){ tt_xstrdup(""), 2, 4096, -1 };
    s->memops_dropped = 5;
    s->memops_peak = 7516192768;
    s->coll_windows = calloc(1, sizeof *s->coll_windows);
    s->coll_windows[s->ncoll_windows++] = (tl_sstepcat){ 1, { 50000, 0, 0, 0, 12000, 30000000, 9000, 1000 } };
    s->memcats = calloc(2, sizeof *s->memcats);
    s->memcats[s->nmemcats++] = (tl_memcat_point){ 1764000000000000000, { 2147483648, 0, 0, 0, 0, 0, 0, 0 } };
    s->memcats[s->nmemcats++] =
        (tl_memcat_point){ 1764000000003000000,
                           { 2147483648, 4294967296, 67108864, 0, 536870912, 2147483648, 16777216, -4194304 } };

    tl_calltree *c = &s->calltree;
    assert_int_equal(tl_strtab_intern(&c->names, "operators (cpu_op)", 18), 0);
    assert_int_equal(tl_strtab_intern(&c->names, "aten::mm", 8), 1);
    uint32_t root = tl_calltree_child(c, TL_CALLTREE_NONE, 0), mm = tl_calltree_child(c, root, 1);
    c->nodes[root].incl_ns = 900;
    c->nodes[root].count = 2;
    c->nodes[mm].incl_ns = 900;
    c->nodes[mm].self_ns = 800;
    c->nodes[mm].count = 2;
    c->nodes[root].kind = c->nodes[mm].kind = TL_CTK_OPS;
    /* an operator under an annotation: the kinds written out ("kinds") */
    assert_int_equal(tl_strtab_intern(&c->names, "annotations and sections", 24), 2);
    assert_int_equal(tl_strtab_intern(&c->names, "ProfilerStep#1", 14), 3);
    uint32_t ann = tl_calltree_child(c, TL_CALLTREE_NONE, 2), step = tl_calltree_child(c, ann, 3);
    uint32_t mm2 = tl_calltree_child(c, step, 1);
    c->nodes[ann].kind = c->nodes[step].kind = TL_CTK_ANNOTATIONS;
    c->nodes[mm2].kind = TL_CTK_OPS;
    c->nodes[ann].incl_ns = c->nodes[step].incl_ns = 700;
    c->nodes[ann].count = c->nodes[step].count = 1;
    c->nodes[step].self_ns = 200;
    c->nodes[mm2].incl_ns = c->nodes[mm2].self_ns = 500;
    c->nodes[mm2].count = 1;
    c->dropped = 1;
}

static char *full_partial(void)
{
    /* every recorded option away from its default, so that each travels too */
    tl_kernel_classes *kc = tl_kernel_classes_new();
    assert_non_null(kc);
    assert_int_equal(tl_kernel_classes_add(kc, "*fused_ar*=communication"), 0);
    assert_int_equal(tl_kernel_classes_add(kc, "my?copy*=memory"), 0);
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    opt.whole_trace = 1;
    opt.kernel_wait_ns = 12345;
    opt.kernel_classes = kc;
    opt.max_names = 5000;
    opt.max_events = 123456;
    opt.max_input_bytes = 1u << 30;
    tl_aggregate a;
    tl_aggregate_init(&a, &opt);
    tl_session s;
    full_session(&s, "rank-1.json", 1);
    assert_int_equal(tl_aggregate_add_session(&a, &s), 0);
    full_session(&s, "rank-2.json", 2);
    assert_int_equal(tl_aggregate_add_session(&a, &s), 0);
    char *text = partial_of(&a, "test");
    tl_aggregate_release(&a);
    tl_kernel_classes_free(kc);
    return text;
}

/* ---- round trips ------------------------------------------------------------------- */

static void test_round_trip_every_field(void **state)
{
    (void)state;
    char *text = full_partial();
    /* enums by name, the unknowns as the format says them */
    static const char *const said[] = {
        "\"version\":2,",
        /* the options, the window by its name */
        "\"options\":{\"window\":\"whole-trace\",\"kernel_wait_ns\":12345,"
        "\"kernel_classes\":\"*fused_ar*=communication; my?copy*=memory\","
        "\"max_names\":5000,\"max_events\":123456,\"max_input_bytes\":1073741824}",
        "\"format\":\"pytorch-profiler\"",
        "\"rank_source\":\"name\"",
        "\"group\":\"gpu annotations\"",
        "\"type\":\"communication\"",
        "\"kind\":\"cpu\"",
        "[\"loss\",\"user\",",
        "[\"queue.depth\",\"trace\",",
        "[\"rss at each step\",\"rss\",",
        "\"series\":\"gpu_power_w\"",
        "[13,1000000,-1,-9223372036854775808,1]",
        "\"ts_ns\":null",
        "[null,\"done\",\"\"]",
        "\"calls_left\":17",
        "\"names\":[\"forward\",\"step\"]",
        "\"top_layer\":\"blocks.3.attn\"",
        "\"hostname\":\"node7\"",
        "\"blocking_call\":\"cudaStreamSynchronize\"",
        "[300,300,300],null,[400,425.25,450.5]",
        "\"kinds\":[1,1,2,2,1]",
    };
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
        if (strstr(text, said[i]) == NULL)
            fail_msg("the partial does not say %s", said[i]);
    char *again = round_trip(text, "test", "every field");
    assert_string_equal(text, again);
    free(again);
    free(text);
}

/* Every field, and sessions as the analysis makes them, cross the wire
 * unchanged: the partial written after it is the partial written before. */
static void test_wire_every_field(void **state)
{
    (void)state;
    tl_aggregate a, b;
    char *text = full_partial();
    read_into(&a, text, "every field");
    wire_into(&b, &a);
    char *after = partial_of(&b, "test");
    assert_string_equal(text, after);
    free(after);
    free(text);
    tl_aggregate_release(&a);
    tl_aggregate_release(&b);
}

/* Sessions as the analysis makes them: two ranks of the in-repo DLRM traces
 * (kernels, streams, collectives, GPU lanes, a call tree). */
static void test_round_trip_analyzed(void **state)
{
    (void)state;
    static const char *const files[] = { "worker0_step_12.1694128201545.pt.trace.json.gz",
                                         "worker5_step_12.1694128201549.pt.trace.json.gz" };
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    tl_aggregate a;
    tl_aggregate_init(&a, &opt);
    for (size_t i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/samples/traces/dlrm-8rank/%s", TALLY_SOURCE_DIR, files[i]);
        const char *paths[] = { path };
        tl_ingest_options o;
        tl_ingest_options_init(&o);
        o.jobs = 1;
        tl_run run;
        tl_run_init(&run);
        assert_int_equal(tl_run_ingest(&run, paths, 1, &o), 1);
        tl_session s;
        assert_int_equal(tl_session_analyze(&s, run.profiles[0], &opt), 0);
        assert_true(s.nkernels > 0 && s.ncolls > 0 && s.gpu.nstreams > 0 && s.timeline.nlanes > 0);
        assert_int_equal(tl_aggregate_add_session(&a, &s), 0);
        tl_run_release(&run);
    }
    char *text = partial_of(&a, "test");
    char *again = round_trip(text, "test", "dlrm");
    assert_string_equal(text, again);
    /* and the aggregate of the sessions read back (from the partial, and from
     * tally-mpi's wire) is the aggregate of the analyzed ones */
    tl_aggregate b, c;
    read_into(&b, text, "dlrm");
    wire_into(&c, &a);
    char *wired = partial_of(&c, "test");
    assert_string_equal(text, wired);
    free(wired);
    assert_int_equal(tl_aggregate_finish(&a), 0);
    assert_int_equal(tl_aggregate_finish(&b), 0);
    assert_int_equal(tl_aggregate_finish(&c), 0);
    sink x = { 0 }, y = { 0 }, z = { 0 };
    tl_json *j = malloc(sizeof *j);
    tl_json_init(j, sink_write, &x);
    tl_aggregate_write(j, &a, "test", 0);
    tl_json_finish(j);
    tl_json_init(j, sink_write, &y);
    tl_aggregate_write(j, &b, "test", 0);
    tl_json_finish(j);
    tl_json_init(j, sink_write, &z);
    tl_aggregate_write(j, &c, "test", 0);
    tl_json_finish(j);
    assert_string_equal(x.data, y.data);
    assert_string_equal(x.data, z.data);
    free(j);
    free(x.data);
    free(y.data);
    free(z.data);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c);
    free(again);
    free(text);
    tl_aggregate_release(&a);
}

/* tests/fuzz/seeds/partial: what older and this tally wrote loads and
 * round-trips; version 1 (integers) reads to what version 2 (names) says;
 * the hostile ones are refused. */
/* A byte order mark before the document: read as without it, from a buffer
 * and from a file (tally compare and tally merge read files). */
static void test_bom(void **state)
{
    (void)state;
    char path[2048], err[512] = "";
    snprintf(path, sizeof path, "%s/tests/fuzz/seeds/partial/inferix.v2.partial.json", TALLY_SOURCE_DIR);
    size_t len;
    char *text = tt_read_file(path, &len);
    assert_non_null(text);
    char *bom = malloc(len + 4);
    assert_non_null(bom);
    memcpy(bom, "\xef\xbb\xbf", 3);
    memcpy(bom + 3, text, len + 1);
    tl_partial p, q;
    tl_partial_init(&p);
    tl_partial_init(&q);
    assert_int_equal(tl_partial_read_buffer(&p, text, len, err, sizeof err), 0);
    assert_int_equal(tl_partial_read_buffer(&q, bom, len + 3, err, sizeof err), 0);
    assert_true(p.nsessions > 0 && p.nsessions == q.nsessions);
    tl_partial_release(&q);
    char tmp[] = "/tmp/tally-bom-XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bom, len + 3), (ssize_t)(len + 3));
    close(fd);
    tl_partial_init(&q);
    assert_int_equal(tl_partial_read(&q, tmp, err, sizeof err), 0);
    assert_int_equal(q.nsessions, p.nsessions);
    unlink(tmp);
    tl_partial_release(&p);
    tl_partial_release(&q);
    free(bom);
    free(text);
}

static void test_seeds(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/seeds/partial", TALLY_SOURCE_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int good = 0, hostile = 0, v1_to_v2 = 0;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        if (len < 5 || strcmp(name + len - 5, ".json") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *text = tt_read_file(path, NULL);
        assert_non_null(text);
        if (strstr(name, "hostile") != NULL) {
            char err[512] = "";
            if (try_read(text, err, sizeof err) == 0)
                fail_msg("%s: a hostile seed reads", name);
            assert_non_null(strstr(err, "(session "));
            hostile++;
            free(text);
            continue;
        }
        json_t *doc = json_loads(text, 0, NULL);
        assert_non_null(doc);
        const char *producer = json_string_value(json_object_get(doc, "producer"));
        json_int_t version = json_integer_value(json_object_get(doc, "version"));
        int partial = strcmp(json_string_value(json_object_get(doc, "format")), "tally-partial") == 0;
        char *written = round_trip(text, producer ? producer : "", name);
        if (strstr(name, ".v2.partial.json") != NULL)
            assert_string_equal(written, text); /* what tally wrote, byte for byte */
        char *dot = strstr(name, ".partial.json");
        if (partial && version == 1 && dot != NULL) {
            char v2[2048];
            snprintf(v2, sizeof v2, "%s/%.*s.v2.partial.json", dir, (int)(dot - name), name);
            char *other = tt_read_file(v2, NULL);
            if (other != NULL) {
                assert_string_equal(written, other);
                v1_to_v2++;
            }
            free(other);
        }
        good++;
        json_decref(doc);
        free(written);
        free(text);
    }
    closedir(d);
    assert_true(good >= 10 && hostile >= 4 && v1_to_v2 >= 4);
}

/* ---- hostile fields, by the table ---------------------------------------------------- */

#define MAX_SEEN 512
typedef struct walk {
    json_t *doc;                /* {"format": "tally-partial", "version": 2, "sessions": [session]} */
    const char *seen[MAX_SEEN]; /* "table.key" of the fields changed */
    size_t nseen;
    int cases;
} walk;

static void saw(walk *w, const tl_fields *t, const tl_field *f)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", t->what, f->key);
    for (size_t i = 0; i < w->nseen; i++)
        if (strcmp(w->seen[i], key) == 0)
            return;
    assert_true(w->nseen < MAX_SEEN);
    w->seen[w->nseen++] = strdup(key);
}

/* holder[f] (an object's member or a tuple's item i) set to v (stolen;
 * NULL: removed), the document read, holder restored. want NULL: must read;
 * else the error must be exactly want. */
static void expect(walk *w, json_t *holder, const tl_fields *t, size_t i, json_t *v, const char *want)
{
    const tl_field *f = &t->f[i];
    json_t *old = t->tuple ? json_array_get(holder, i) : json_object_get(holder, f->key);
    json_incref(old);
    json_t *rest = NULL; /* a tuple cut at i keeps what came after it here */
    if (t->tuple && v == NULL) {
        rest = json_array();
        while (json_array_size(holder) > i) {
            json_array_append(rest, json_array_get(holder, i));
            json_array_remove(holder, i);
        }
    } else if (t->tuple) {
        json_array_set_new(holder, i, v);
    } else if (v == NULL) {
        json_object_del(holder, f->key);
    } else {
        json_object_set_new(holder, f->key, v);
    }
    char *text = json_dumps(w->doc, JSON_COMPACT);
    char err[512] = "";
    int rc = try_read(text, err, sizeof err);
    if (want == NULL && rc != 0)
        fail_msg("%s.%s: refused (%s), expected to read", t->what, f->key, err);
    if (want != NULL && (rc == 0 || strcmp(err, want) != 0))
        fail_msg("%s.%s:\n   got \"%s\"\n  want \"%s\"", t->what, f->key, rc ? err : "(read)", want);
    free(text);
    if (rest != NULL) {
        for (size_t k = 0; k < json_array_size(rest); k++)
            json_array_append(holder, json_array_get(rest, k));
        json_decref(rest);
    } else if (t->tuple) {
        json_array_set(holder, i, old);
    } else {
        json_object_set(holder, f->key, old);
    }
    json_decref(old);
    w->cases++;
}

static char *message(const tl_field *f, const char *what, const char *where)
{
    char *m = NULL;
    assert_true(asprintf(&m, "\"%s\": %s (session 0%s%s)", f->key, what, where[0] ? ", in " : "", where) > 0);
    return m;
}

static void expect_msg(walk *w, json_t *holder, const tl_fields *t, size_t i, json_t *v, const char *what,
                       const char *where)
{
    char *m = message(&t->f[i], what, where);
    expect(w, holder, t, i, v, m);
    free(m);
}

static void walk_fields(walk *w, const tl_fields *t, json_t *holder, const char *where);

/* What the reader says of a required field that is missing. */
static const char *missing_what(const tl_field *f)
{
    switch (f->type) {
    case TL_F_INT:
    case TL_F_TS:
        return "expected an integer";
    case TL_F_TS_NULL:
        return "expected an integer or null";
    case TL_F_STR_NULL:
        return "expected a string or null";
    case TL_F_NUM:
        return "expected a number or null";
    case TL_F_STR:
    case TL_F_STR_BUF:
        return "expected a string";
    case TL_F_ENUM:
        return "expected one of its names";
    case TL_F_STRINGS: {
        static char what[64];
        snprintf(what, sizeof what, "expected an array of at most %zu strings", f->max);
        return f->max ? what : "expected an array";
    }
    case TL_F_OBJECT:
        return (f->flags & TL_FF_NULLABLE) ? "expected an object or null" : "expected an object";
    default:
        return "expected an array";
    }
}

/* Another field's range or count is bounded by this one: without it, that one may not read. */
static int bounds_another(const tl_fields *t, const tl_field *f)
{
    for (size_t i = 0; i < t->n; i++) {
        const tl_field *g = &t->f[i];
        if ((g->lo_key && !strcmp(g->lo_key, f->key)) || (g->hi_key && !strcmp(g->hi_key, f->key)) ||
            (g->max_key && !strcmp(g->max_key, f->key)))
            return 1;
    }
    return 0;
}

/* The value of an earlier field of the same struct in the document. */
static json_int_t earlier(const tl_fields *t, json_t *holder, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->f[i].key, key) == 0)
            return json_integer_value(t->tuple ? json_array_get(holder, i) : json_object_get(holder, key));
    fail_msg("%s: no field %s", t->what, key);
    return 0;
}

static void walk_field(walk *w, const tl_fields *t, size_t i, json_t *holder, const char *where)
{
    const tl_field *f = &t->f[i];
    json_t *v = t->tuple ? json_array_get(holder, i) : json_object_get(holder, f->key);
    if (v == NULL && f->type == TL_F_CUSTOM)
        return; /* a dedicated field written only when there is something (a GPU lane's calls) */
    if (v == NULL)
        fail_msg("%s.%s: not written (the session must use every field)", t->what, f->key);
    /* missing: refused unless older partials may lack it (then it reads, unless another
     * field's bound needs it; the calls' name ids need the timeline's names) */
    if (!(f->flags & TL_FF_OPTIONAL))
        expect_msg(w, holder, t, i, NULL, missing_what(f), where);
    else if (!bounds_another(t, f) && !(f->type == TL_F_CUSTOM && f->custom == TL_FC_TIMELINE_NAMES))
        expect(w, holder, t, i, NULL, NULL);
    switch (f->type) {
    case TL_F_INT: {
        expect_msg(w, holder, t, i, json_string("1"), "expected an integer", where);
        if (f->lo_key)
            expect_msg(w, holder, t, i, json_integer(earlier(t, holder, f->lo_key) - 1), "out of range", where);
        else if (f->lo > INT64_MIN)
            expect_msg(w, holder, t, i, json_integer(f->lo - 1), "out of range", where);
        if (f->hi_key)
            expect_msg(w, holder, t, i, json_integer(earlier(t, holder, f->hi_key) + 1), "out of range", where);
        else if (f->hi < INT64_MAX)
            expect_msg(w, holder, t, i, json_integer(f->hi + 1), "out of range", where);
        break;
    }
    case TL_F_ENUM:
        expect_msg(w, holder, t, i, json_string("no-such-name"), "not one of its names", where);
        expect_msg(w, holder, t, i, json_real(1.5), "expected one of its names", where);
        expect_msg(w, holder, t, i, json_integer(f->hi + 1),
                   (f->flags & TL_FF_ENUM_INT) ? "out of range" : "expected one of its names", where);
        if (f->flags & TL_FF_ENUM_INT) /* the integer of a version 1 partial reads */
            expect(w, holder, t, i, json_integer(f->lo), NULL);
        break;
    case TL_F_TS:
    case TL_F_TS_NULL:
        expect_msg(w, holder, t, i, json_integer(TL_PARTIAL_MAX_TS + 1), "timestamp out of range", where);
        expect_msg(w, holder, t, i, json_integer(INT64_MIN + 1), "timestamp out of range", where);
        expect_msg(w, holder, t, i, json_string("1"),
                   f->type == TL_F_TS ? "expected an integer" : "expected an integer or null", where);
        break;
    case TL_F_NUM:
        expect_msg(w, holder, t, i, json_string("1"), "expected a number or null", where);
        if (t->check == TL_FK_NONE) /* (a statistic's mean, the frames of sized blocks must be known) */
            expect(w, holder, t, i, json_null(), NULL);
        break;
    case TL_F_STR:
    case TL_F_STR_BUF:
        expect_msg(w, holder, t, i, json_integer(1), "expected a string", where);
        break;
    case TL_F_STR_NULL:
        expect_msg(w, holder, t, i, json_integer(1), "expected a string or null", where);
        expect(w, holder, t, i, json_null(), NULL);
        break;
    case TL_F_STRINGS:
        expect_msg(w, holder, t, i, json_pack("[i]", 1), "expected strings", where);
        expect_msg(w, holder, t, i, json_integer(1), missing_what(f), where);
        break;
    case TL_F_OBJECT: {
        expect_msg(w, holder, t, i, json_integer(1),
                   (f->flags & TL_FF_NULLABLE) ? "expected an object or null" : "expected an object", where);
        if (f->flags & TL_FF_NULLABLE)
            expect(w, holder, t, i, json_null(), NULL);
        char inner[256];
        snprintf(inner, sizeof inner, "%s%s%s", where, where[0] ? "." : "", f->key);
        walk_fields(w, f->sub, v, inner);
        break;
    }
    case TL_F_ARRAY: {
        expect_msg(w, holder, t, i, json_integer(1), "expected an array", where);
        if (f->max && f->max <= 1000) {
            json_t *many = json_array();
            for (size_t k = 0; k <= f->max; k++)
                json_array_append(many, json_array_get(v, 0));
            char what[96];
            snprintf(what, sizeof what, "more than %zu (the limit)%s%s", f->max, f->max_key ? " or " : "",
                     f->max_key ? f->max_key : "");
            expect_msg(w, holder, t, i, many, what, where);
        }
        assert_true(json_array_size(v) > 0);
        char inner[256];
        snprintf(inner, sizeof inner, "%s%s%s[0]", where, where[0] ? "." : "", f->key);
        /* an item of the wrong kind */
        char *m = NULL;
        assert_true(asprintf(&m, "expected %s %s (session 0, in %s)", f->sub->tuple ? "an array, a" : "an object, a",
                             f->sub->what, inner) > 0);
        json_t *item = json_array_get(v, 0);
        json_incref(item);
        json_array_set_new(v, 0, json_integer(1));
        char *text = json_dumps(w->doc, JSON_COMPACT), err[512] = "";
        assert_int_not_equal(try_read(text, err, sizeof err), 0);
        if (strcmp(err, m) != 0)
            fail_msg("%s.%s[0]: got \"%s\", want \"%s\"", t->what, f->key, err, m);
        json_array_set_new(v, 0, item);
        free(text);
        free(m);
        walk_fields(w, f->sub, item, inner);
        break;
    }
    default:
        return; /* TL_F_CUSTOM: test_custom_hostile */
    }
    saw(w, t, f);
}

static void walk_fields(walk *w, const tl_fields *t, json_t *holder, const char *where)
{
    for (size_t i = 0; i < t->n; i++)
        walk_field(w, t, i, holder, where);
}

/* Every field reachable from the session, by table and key. */
static size_t reachable(const tl_fields *t, const char **out, size_t n)
{
    for (size_t i = 0; i < t->n; i++) {
        const tl_field *f = &t->f[i];
        if (f->type == TL_F_CUSTOM)
            continue;
        char key[128];
        snprintf(key, sizeof key, "%s.%s", t->what, f->key);
        size_t k;
        for (k = 0; k < n && strcmp(out[k], key) != 0; k++)
            ;
        if (k == n) {
            assert_true(n < MAX_SEEN);
            out[n++] = strdup(key);
        }
        if (f->sub != NULL)
            n = reachable(f->sub, out, n);
    }
    return n;
}

static void test_hostile_fields(void **state)
{
    (void)state;
    char *text = full_partial();
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    json_t *sessions = json_object_get(doc, "sessions");
    json_array_remove(sessions, 1);
    walk w = { .doc = doc };
    walk_fields(&w, &tl_partial_session_fields, json_array_get(sessions, 0), "");
    /* the options: a field of the document, not of a session */
    json_t *opt = json_object_get(doc, "options");
    json_object_set_new(opt, "window", json_string("all"));
    char *bad = json_dumps(doc, JSON_COMPACT), err[512] = "";
    assert_int_not_equal(try_read(bad, err, sizeof err), 0);
    assert_string_equal(err, "\"window\": not one of its names (in options)");
    free(bad);
    /* every field of every table was changed */
    const char *all[MAX_SEEN];
    size_t n = reachable(&tl_partial_session_fields, all, 0);
    for (size_t i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < w.nseen && strcmp(w.seen[k], all[i]) != 0; k++)
            ;
        if (k == w.nseen)
            fail_msg("%s: no hostile value tried", all[i]);
        free((char *)all[i]);
    }
    assert_true(n >= 150 && w.cases >= 500);
    for (size_t k = 0; k < w.nseen; k++)
        free((char *)w.seen[k]);
    json_decref(doc);
    free(text);
}

/* The dedicated readers and the checks across fields, each with its words. */
static void test_custom_hostile(void **state)
{
    (void)state;
    char *text = full_partial();
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        { "\"hist\":[[", "\"hist\":[[-1,1],[",
          "\"hist\": bucket out of range (expected [bucket, count]) (session 0, in names[0].stat)" },
        { "\"hist\":[[", "\"hist\":[[3776,1],[",
          "\"hist\": bucket out of range (expected [bucket, count]) (session 0, in names[0].stat)" },
        { "\"hist\":[[", "\"hist\":[[5,100],[", "\"hist\": more values than \"count\" (session 0, in names[0].stat)" },
        { "\"samples\":[", "\"samples\":[-1,", "\"samples\": a duration out of range (session 0, in names[0].stat)" },
        { "\"count\":5,\"total\":1500,\"min\":100,\"max\":500", "\"count\":5,\"total\":1500,\"min\":600,\"max\":500",
          "\"stat\": min, max, mean and m2 do not agree (session 0, in names[0].stat)" },
        /* issue 26: a mean outside [min, max] was believed */
        { "\"count\":5,\"total\":1500,\"min\":100,\"max\":500", "\"count\":5,\"total\":1500,\"min\":400,\"max\":500",
          "\"stat\": mean 300 ns lies outside [min, max] = [400, 500] ns (session 0, in names[0].stat)" },
        { "\"by_mask\":[0,", "\"by_mask\":[", "\"by_mask\": expected 8 times (session 0, in gpu)" },
        { "\"by_mask\":[0,", "\"by_mask\":[-1,", "\"by_mask\": a time out of range (session 0, in gpu)" },
        { "\"busy\":[[]", "\"busy\":[[1]",
          "\"busy\": expected 0 or TL_TIMELINE_BINS values (session 0, in timeline.lanes[0])" },
        { "\"busy\":[[]", "\"busy\":[[],[],[],[],[]",
          "\"busy\": expected an array of at most one per kernel type (session 0, in timeline.lanes[0])" },
        { "\"calls\":[[100,", "\"calls\":[[300,", "\"calls\": not in start order (session 0, in timeline.lanes[1])" },
        { "\"calls\":[[100,4000,1,0]", "\"calls\":[[100,4000,8,0]",
          "\"calls\": expected [ts, dur, row, name id] in range (session 0, in timeline.lanes[1])" },
        { "\"calls\":[[100,4000,1,0]", "\"calls\":[[100,4000,1,2]",
          "\"calls\": a call's name id out of range of the timeline's names (session 0, in timeline)" },
        { "\"calls_left\":17", "\"calls_left\":-1",
          "\"calls_left\": expected an integer in range (session 0, in timeline.lanes[1])" },
        { "\"names\":[\"forward\",\"step\"]", "\"names\":[\"forward\",\"forward\"]",
          "\"names\": a name given twice (session 0, in timeline)" },
        { "\"bins\":[", "\"bins\":[[1,2,\"x\"],",
          "\"bins\": expected [min, mean, max] or null (session 0, in telemetry[0])" },
        { "\"collectives\":[[0,", "\"collectives\":[[2,", "\"collectives\": kernel index out of range (session 0)" },
        /* each step's time by category: one per step, its numbers, not more than the step's time */
        { "\"step_categories\":[[12,", "\"step_categories\":[[12,1,0,0,0,0,0,0,0],[12,",
          "\"step_categories\": not one per step (session 0)" },
        { "\"step_categories\":[[12,", "\"step_categories\":[[11,",
          "\"step_categories\": not the steps' numbers, or more time than the step's (session 0)" },
        { "\"step_categories\":[[12,900000,", "\"step_categories\":[[12,900001,",
          "\"step_categories\": not the steps' numbers, or more time than the step's (session 0)" },
        { "\"frames\":18", "\"frames\":-1", "\"frames\": expected a number >= 0 (session 0, in diffusion)" },
        { "\"nodes\":[[-1,", "\"nodes\":[[0,",
          "\"nodes\": a node's parent must come before it (session 0, in calltree)" },
        { "\"dropped\":1", "\"dropped\":-1", "\"dropped\": out of range (session 0, in calltree)" },
        { "\"kinds\":[1,1,2,2,1]", "\"kinds\":[1,1,2,9,1]", "\"kinds\": a kind out of range (session 0, in calltree)" },
        { "\"kinds\":[1,1,2,2,1]", "\"kinds\":[1,1,2,2]",
          "\"kinds\": expected an array of one kind per node (session 0, in calltree)" },
        { "\"version\":2", "\"version\":3",
          "partial aggregate version 3 is not supported (this tally reads versions 1 to 2)" },
        { "\"format\":\"pytorch-profiler\"", "\"format\":\"tally-aggregate\"",
          "\"format\": not one of its names (session 0)" },
        { "\"format\":\"pytorch-profiler\"", "\"format\":11", "\"format\": out of range (session 0)" },
        { "\"offsets\":[[0,17]]", "\"offsets\":[[1,17]]",
          "\"offsets\": an index out of order or beyond \"warnings\" (session 0)" },
        { "\"offsets\":[[0,17]]", "\"offsets\":[[0,17],[0,18]]",
          "\"offsets\": an index out of order or beyond \"warnings\" (session 0)" },
        { "\"offsets\":[[0,17]]", "\"offsets\":[[0,-1]]", "\"offsets\": expected [index, byte] (session 0)" },
        { "\"offsets\":[[0,17]]", "\"offsets\":{}", "\"offsets\": expected an array (session 0)" },
        { "\"warnings\":[\"offset", "\"warnings\":[1,\"offset", "\"warnings\": expected strings (session 0)" },
        { "\"source\"", "\"source\"", NULL }, /* (a placeholder the loop skips) */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (cases[k].want == NULL)
            continue;
        const char *at = strstr(text, cases[k].from);
        if (at == NULL)
            fail_msg("case %zu: \"%s\" is not in the partial", k, cases[k].from);
        char *bad = NULL;
        assert_true(asprintf(&bad, "%.*s%s%s", (int)(at - text), text, cases[k].to, at + strlen(cases[k].from)) > 0);
        char err[512] = "";
        assert_int_not_equal(try_read(bad, err, sizeof err), 0);
        if (strcmp(err, cases[k].want) != 0)
            fail_msg("case %zu:\n   got \"%s\"\n  want \"%s\"", k, err, cases[k].want);
        free(bad);
    }
    /* a counter of the readers' own (derived) is not one a partial holds */
    const char *at = strstr(text, "[\"loss\",\"user\"");
    assert_non_null(at);
    char *bad = NULL;
    assert_true(
        asprintf(&bad, "%.*s[\"loss\",\"derived\"%s", (int)(at - text), text, at + strlen("[\"loss\",\"user\"")) > 0);
    char err[512] = "";
    assert_int_not_equal(try_read(bad, err, sizeof err), 0);
    assert_string_equal(err, "\"source\": not one of its names (session 0, in counters[0])");
    free(bad);
    /* an aggregate's own version */
    assert_int_not_equal(try_read("{\"format\":\"tally-aggregate\",\"version\":2,\"sessions\":[]}", err, sizeof err),
                         0);
    assert_string_equal(err, "aggregate version 2 is not supported (this tally reads versions 1 to 1)");
    free(text);
}

/* ---- the schema says what the tables say -------------------------------------------- */

static json_t *g_schema;

static json_t *def_of(const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "%s", what);
    for (char *c = name; *c; c++)
        if (*c == ' ')
            *c = '_';
    json_t *d = json_object_get(json_object_get(g_schema, "$defs"), name);
    if (d == NULL)
        fail_msg("schema: no $defs/%s", name);
    return d;
}

static const char *ref_of(json_t *s)
{
    const char *r = json_string_value(json_object_get(s, "$ref"));
    return r && strncmp(r, "#/$defs/", 8) == 0 ? r + 8 : NULL;
}

static void check_range(const char *ctx, json_t *s, int64_t lo, int64_t hi)
{
    const char *r = ref_of(s);
    int64_t slo = INT64_MIN, shi = INT64_MAX;
    if (r != NULL) {
        json_t *d = json_object_get(json_object_get(g_schema, "$defs"), r);
        if (strcmp(r, "flag") == 0) {
            slo = 0;
            shi = 1;
        } else {
            s = d;
        }
    }
    if (r == NULL || strcmp(r, "flag") != 0) {
        if (json_object_get(s, "minimum"))
            slo = json_integer_value(json_object_get(s, "minimum"));
        if (json_object_get(s, "maximum"))
            shi = json_integer_value(json_object_get(s, "maximum"));
    }
    if (slo != lo || shi != hi)
        fail_msg("schema %s: range [%lld, %lld], the table's [%lld, %lld]", ctx, (long long)slo, (long long)shi,
                 (long long)lo, (long long)hi);
}

static void check_table(const tl_fields *t);

static void check_field(const tl_fields *t, const tl_field *f, json_t *s)
{
    char ctx[128];
    snprintf(ctx, sizeof ctx, "%s.%s", t->what, f->key);
    const char *r = ref_of(s);
    json_t *type = json_object_get(s, "type");
    switch (f->type) {
    case TL_F_INT:
        if (!f->lo_key && !f->hi_key)
            check_range(ctx, s, f->lo, f->hi);
        else if (r == NULL && !json_str_is(type, "integer"))
            fail_msg("schema %s: not an integer", ctx);
        break;
    case TL_F_TS:
        if (r == NULL || strcmp(r, "ts") != 0)
            fail_msg("schema %s: not a ts", ctx);
        break;
    case TL_F_TS_NULL:
        if (r == NULL || strcmp(r, "ts_or_null") != 0)
            fail_msg("schema %s: not a ts_or_null", ctx);
        break;
    case TL_F_NUM: {
        json_t *want = json_pack("[ss]", "number", "null");
        if (!json_equal(type, want))
            fail_msg("schema %s: not a number or null", ctx);
        json_decref(want);
        break;
    }
    case TL_F_STR:
    case TL_F_STR_BUF:
        if (strcmp(json_string_value(type) ? json_string_value(type) : "", "string") != 0)
            fail_msg("schema %s: not a string", ctx);
        break;
    case TL_F_STR_NULL: {
        json_t *want = json_pack("[ss]", "string", "null");
        if (!json_equal(type, want))
            fail_msg("schema %s: not a string or null", ctx);
        json_decref(want);
        break;
    }
    case TL_F_ENUM: {
        json_t *names = json_object_get(s, "enum");
        const char *desc = json_string_value(json_object_get(s, "description"));
        char v1[96];
        snprintf(v1, sizeof v1, "version 1 partials wrote %lld-%lld", (long long)f->lo, (long long)f->hi);
        if (!(f->flags & TL_FF_ENUM_INT) != !(desc && strstr(desc, v1)))
            fail_msg("schema %s: %s \"%s\"", ctx, (f->flags & TL_FF_ENUM_INT) ? "does not say" : "says", v1);
        if (json_array_size(names) != (size_t)(f->hi - f->lo + 1))
            fail_msg("schema %s: %zu names, the table %lld", ctx, json_array_size(names),
                     (long long)(f->hi - f->lo + 1));
        for (int64_t v = f->lo; v <= f->hi; v++)
            if (strcmp(json_string_value(json_array_get(names, (size_t)(v - f->lo))), f->name((int)v)) != 0)
                fail_msg("schema %s: name %lld is not \"%s\"", ctx, (long long)v, f->name((int)v));
        break;
    }
    case TL_F_STRINGS:
    case TL_F_ARRAY: {
        if (strcmp(json_string_value(type) ? json_string_value(type) : "", "array") != 0)
            fail_msg("schema %s: not an array", ctx);
        json_t *mx = json_object_get(s, "maxItems");
        if ((size_t)(mx ? json_integer_value(mx) : 0) != f->max)
            fail_msg("schema %s: maxItems %lld, the table's limit %zu", ctx,
                     mx ? (long long)json_integer_value(mx) : 0LL, f->max);
        json_t *items = json_object_get(s, "items");
        if (f->type == TL_F_STRINGS) {
            if (!json_str_is(json_object_get(items, "type"), "string"))
                fail_msg("schema %s: not an array of strings", ctx);
        } else {
            const char *ir = ref_of(items);
            def_of(f->sub->what);
            char want[64];
            snprintf(want, sizeof want, "%s", f->sub->what);
            for (char *c = want; *c; c++)
                *c = *c == ' ' ? '_' : *c;
            if (ir == NULL || strcmp(ir, want) != 0)
                fail_msg("schema %s: items are not $defs/%s", ctx, want);
            check_table(f->sub);
        }
        break;
    }
    case TL_F_OBJECT: {
        const char * or = ref_of(s);
        if ((f->flags & TL_FF_NULLABLE) && or == NULL)
            or = ref_of(json_array_get(json_object_get(s, "anyOf"), 1));
        char want[64];
        snprintf(want, sizeof want, "%s", f->sub->what);
        if (or == NULL || strcmp(or, want) != 0)
            fail_msg("schema %s: not $defs/%s", ctx, want);
        check_table(f->sub);
        break;
    }
    default:
        break; /* custom: its def is checked by key only */
    }
}

static void check_table(const tl_fields *t)
{
    json_t *d = def_of(t->what);
    if (t->tuple) {
        json_t *items = json_object_get(d, "prefixItems");
        size_t required = 0;
        for (size_t i = 0; i < t->n; i++)
            required += !(t->f[i].flags & TL_FF_OPTIONAL);
        if (json_array_size(items) != t->n || (size_t)json_integer_value(json_object_get(d, "minItems")) != required)
            fail_msg("schema %s: %zu items (%lld required), the table %zu (%zu)", t->what, json_array_size(items),
                     (long long)json_integer_value(json_object_get(d, "minItems")), t->n, required);
        for (size_t i = 0; i < t->n; i++)
            check_field(t, &t->f[i], json_array_get(items, i));
        return;
    }
    json_t *props = json_object_get(d, "properties"), *req = json_object_get(d, "required"), *x;
    const char *key;
    if (!json_is_false(json_object_get(d, "additionalProperties")))
        fail_msg("schema %s: additional properties allowed", t->what);
    json_object_foreach(props, key, x)
    {
        size_t i;
        for (i = 0; i < t->n && strcmp(t->f[i].key, key) != 0; i++)
            ;
        /* calls_left is written by the calls' dedicated writer */
        if (i == t->n && strcmp(key, "calls_left") != 0)
            fail_msg("schema %s: property %s is not in the table", t->what, key);
    }
    size_t required = 0;
    for (size_t i = 0; i < t->n; i++) {
        const tl_field *f = &t->f[i];
        json_t *s = json_object_get(props, f->key);
        if (s == NULL)
            fail_msg("schema %s: no property %s", t->what, f->key);
        int in_req = 0;
        for (size_t k = 0; k < json_array_size(req); k++)
            in_req |= strcmp(json_string_value(json_array_get(req, k)), f->key) == 0;
        if (in_req == !!(f->flags & TL_FF_OPTIONAL))
            fail_msg("schema %s.%s: %s, the table says %s", t->what, f->key, in_req ? "required" : "optional",
                     in_req ? "optional" : "required");
        required += in_req;
        check_field(t, f, s);
    }
    assert_int_equal(required, json_array_size(req));
}

static void test_schema_matches_table(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/schema/tally-partial.schema.json", TALLY_SOURCE_DIR);
    json_error_t je;
    g_schema = json_load_file(path, 0, &je);
    if (g_schema == NULL)
        fail_msg("%s: %s", path, je.text);
    json_t *props = json_object_get(g_schema, "properties");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(props, "version"), "const")),
                     TL_PARTIAL_VERSION);
    check_table(&tl_partial_options_fields);
    check_table(&tl_partial_session_fields);
    json_decref(g_schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_field),
        cmocka_unit_test(test_round_trip_analyzed),
        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_hostile_fields),
        cmocka_unit_test(test_custom_hostile),
        cmocka_unit_test(test_schema_matches_table),
        cmocka_unit_test(test_round_trip_problems),
        cmocka_unit_test(test_wire_every_field),
        cmocka_unit_test(test_bom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
