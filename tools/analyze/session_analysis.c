/*
 * session_analysis.c - the analysis of one input: its profile into its session
 * result (tl_session_analyze; the type is ingest/session.h, the declarations
 * aggregate.h).
 *
 * The GPU numbers follow Holistic Trace Analysis' temporal breakdown (see
 * docs/analysis.md): over the GPU events of the window, kernel_time is the
 * span from the first start to the last end, idle is kernel_time minus the
 * union of all GPU events, compute is the union of compute kernels and
 * non-compute the rest of the union. The default window drops the last
 * ProfilerStep when there are two or more (it is usually cut short) and keeps
 * the GPU events launched inside the remaining steps.
 */
#define _GNU_SOURCE
#include "memops.h"
#include "session_analysis.h"
#include "intervals.h"
#include "names.h"
#include "telemetry.h"
#include "array.h"
#include "shape_table.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tl_analyze_options_init(tl_analyze_options *o)
{
    memset(o, 0, sizeof *o);
    o->kernel_wait_ns = 30000; /* HTA's consecutive_kernel_delay default */
    o->spill_after = SIZE_MAX;
    o->spill_after_bytes = UINT64_MAX;
    o->output_jobs = 1;
}

static char *dupstr(const char *s)
{
    return strdup(s ? s : "");
}

/* ---- names ---------------------------------------------------------------- */

/* Merge the profile's (category, name) statistics into (group, name) rows. */
static int take_names(tl_session *s, const tl_profile *p)
{
    tl_strtab keys;
    tl_strtab_init(&keys);
    s->names = calloc(p->nstats ? p->nstats : 1, sizeof *s->names);
    if (s->names == NULL)
        return -1;
    for (uint32_t i = 0; i < p->nstats; i++) {
        const tl_name_stat *st = &p->stats[i];
        const char *name = tl_strtab_get(&p->strs, st->name);
        if (strncmp(name, "ProfilerStep#", 13) == 0)
            continue; /* the steps, not a section */
        int group = tl_group_of(st->cat_class);
        /* the whole name in the key: two 2,000-character kernel names that
         * differ at character 1,344 are two names (a fixed key merged them) */
        char small[256], *key = small;
        size_t need = strlen(name) + 16;
        if (need > sizeof small && (key = malloc(need)) == NULL)
            goto fail;
        int klen = snprintf(key, need > sizeof small ? need : sizeof small, "%d\x1f%s", group, name);
        uint32_t before = keys.n;
        uint32_t id = klen < 0 ? UINT32_MAX : tl_strtab_intern(&keys, key, (size_t)klen);
        if (key != small)
            free(key);
        if (id == UINT32_MAX)
            goto fail;
        tl_sname *n = &s->names[id];
        if (id == before) {
            n->group = group;
            n->name = dupstr(name);
            n->exact = 1;
            n->median_ns = n->p95_ns = n->std_ns = NAN;
            n->incl_ns = n->self_ns = p->nesting == TL_NEST_DONE ? 0 : -1;
            s->nnames++;
        }
        int threads = __builtin_popcountll(st->thread_bits);
        if (threads > n->threads)
            n->threads = threads;
        if (st->nest_lost) /* its kind of event came too far out of order (nesting.h) */
            n->incl_ns = n->self_ns = -1;
        if (n->incl_ns >= 0) {
            n->incl_ns += st->incl_ns;
            n->self_ns += st->self_ns;
        }
        tl_dur_stat_merge(&n->d, &st->d, TL_PROFILE_MAX_SAMPLES);
        if (st->from_summary) {
            n->exact = 0;
            n->median_ns = st->median_ns;
            n->p95_ns = st->p95_ns;
            n->std_ns = st->std_ns;
        }
    }
    tl_strtab_release(&keys);
    /* one row per (group, name): fewer than the profile's (category, name) rows */
    if (s->nnames > 0 && s->nnames < p->nstats) {
        tl_sname *n = realloc(s->names, s->nnames * sizeof *n);
        if (n != NULL)
            s->names = n;
    }
    return 0;
fail:
    tl_strtab_release(&keys);
    return -1;
}

/* ---- the GPU window -------------------------------------------------------- */

static int in_window(const tl_gpu_event *e, int64_t ws, int64_t we)
{
    int64_t t = e->launch_ns != INT64_MIN ? e->launch_ns : e->ts_ns;
    return t >= ws && t <= we;
}

/* Whether the breakdown counts GPU event e: every event, or those launched in
 * the window. Asked again where needed rather than kept in a flag per event:
 * the analysis reads the sorted GPU events in place (issue 33). */
static int counted(const tl_gpu_breakdown *g, const tl_gpu_event *e)
{
    return g->whole_trace || in_window(e, g->window_start, g->window_end);
}

static void choose_window(tl_session *s, const tl_profile *p, const tl_analyze_options *opt)
{
    tl_gpu_breakdown *g = &s->gpu;
    g->whole_trace = 1;
    g->window_start = INT64_MIN;
    g->window_end = INT64_MAX;
    if (opt->whole_trace || p->nsteps < 2)
        return;
    /* Steps are sorted by number: the last one is dropped. */
    int64_t ws = INT64_MAX, we = INT64_MIN;
    for (size_t i = 0; i + 1 < p->nsteps; i++) {
        if (p->steps[i].ts_ns < ws)
            ws = p->steps[i].ts_ns;
        if (p->steps[i].ts_ns + p->steps[i].dur_ns > we)
            we = p->steps[i].ts_ns + p->steps[i].dur_ns;
    }
    g->whole_trace = 0;
    g->steps_in_window = (int)(p->nsteps - 1);
    g->window_start = ws;
    g->window_end = we;
}

static int kind_of(int type)
{
    return type == TL_KT_COMPUTE ? 0 : type == TL_KT_COMM ? 1 : type == TL_KT_MEMORY ? 2 : -1;
}

/* The length of [a, b) inside a union (sorted, disjoint): a binary search
 * for the first interval that ends after a. */
static int64_t covered(const tl_ivset *u, int64_t a, int64_t b)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->v[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t len = 0;
    for (size_t i = lo; i < u->n && u->v[i].start < b; i++) {
        int64_t s = u->v[i].start > a ? u->v[i].start : a, e = u->v[i].end < b ? u->v[i].end : b;
        if (e > s)
            len += e - s;
    }
    return len;
}

/* What the host did in the host-wait gaps of the streams that carry real
 * work (docs/analysis.md, "Host gaps"): each gap's host part, from the
 * stream draining to the launch, weighted by its length -- in a collective
 * that runs on the CPU (waiting for the other ranks), in a data-loading
 * range (the CPU lanes' longest calls), and whether the gap is short enough
 * to be launch overhead. */
static int host_gaps(tl_session *s, const tl_profile *p)
{
    tl_gpu_breakdown *g = &s->gpu;
    g->host_gap_ns = g->host_short_ns = g->host_coll_ns = g->host_load_ns = 0;
    int64_t busy = 0;
    for (size_t k = 0; k < g->nstreams; k++)
        busy = tl_ns_add(busy, g->streams[k].busy);
    uint8_t *real = calloc(g->nstreams + 1, 1), *loading = NULL;
    int64_t *prev_end = malloc((g->nstreams + 1) * sizeof *prev_end);
    tl_ivset coll, load;
    tl_ivset_init(&coll);
    tl_ivset_init(&load);
    int rc = -1;
    if (real == NULL || prev_end == NULL)
        goto out;
    for (size_t k = 0; k < g->nstreams; k++) {
        const tl_stream_idle *st = &g->streams[k];
        real[k] =
            busy > 0 && 100.0 * (double)st->busy / (double)busy >= TL_REAL_WORK_PCT && 2 * st->comm_busy <= st->busy;
        prev_end[k] = INT64_MIN;
    }
    for (size_t i = 0; i < p->ncolls; i++)
        if (p->colls[i].side == TL_COLL_RUN &&
            tl_ivset_add(&coll, p->colls[i].ts_ns, p->colls[i].ts_ns + p->colls[i].dur_ns) != 0)
            goto out;
    /* Whether a name is data loading, asked once a name (0 not asked, 1 no,
     * 2 yes): every top call of every lane asked it, three case-blind
     * substring searches each, 2-3 % of a report's CPU. */
    loading = calloc((size_t)p->strs.n + 1, 1);
    if (loading == NULL)
        goto out;
    for (uint32_t l = 0; l < p->ncpu_lanes; l++) {
        const tl_cpu_lane *lane = p->cpu_lanes[l];
        for (uint32_t k = 0; lane->top != NULL && k < lane->ntop; k++) {
            uint32_t id = lane->top[k].name;
            if (id < p->strs.n && loading[id] == 0)
                loading[id] = tl_is_data_loading(tl_strtab_get(&p->strs, id)) ? 2 : 1;
            if ((id < p->strs.n ? loading[id] == 2 : tl_is_data_loading(tl_strtab_get(&p->strs, id))) &&
                tl_ivset_add(&load, lane->top[k].ts_ns, lane->top[k].ts_ns + lane->top[k].dur_ns) != 0)
                goto out;
        }
    }
    tl_ivset_union(&coll);
    tl_ivset_union(&load);
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *e = &p->gpu[i];
        if (!counted(g, e) || e->stream >= g->nstreams || !real[e->stream])
            continue;
        int64_t prev = prev_end[e->stream];
        prev_end[e->stream] = e->ts_ns + e->dur_ns;
        if (prev == INT64_MIN || e->ts_ns <= prev || e->launch_ns == INT64_MIN || e->launch_ns <= prev)
            continue;
        int64_t host_end = e->launch_ns < e->ts_ns ? e->launch_ns : e->ts_ns, len = host_end - prev;
        g->host_gap_ns += len;
        if (len <= TL_LAUNCH_GAP_NS)
            g->host_short_ns += len;
        g->host_coll_ns += covered(&coll, prev, host_end);
        g->host_load_ns += covered(&load, prev, host_end);
    }
    rc = 0;
out:
    free(real);
    free(loading);
    free(prev_end);
    tl_ivset_release(&coll);
    tl_ivset_release(&load);
    return rc;
}

/* Idle gaps per stream, in HTA's categories. Events are sorted by start. */
static int idle_by_stream(tl_session *s, const tl_profile *p, const tl_analyze_options *opt)
{
    tl_gpu_breakdown *g = &s->gpu;
    g->streams = calloc(p->nstreams ? p->nstreams : 1, sizeof *g->streams);
    int64_t *prev_end = malloc((p->nstreams ? p->nstreams : 1) * sizeof *prev_end);
    if (g->streams == NULL || prev_end == NULL) {
        free(prev_end);
        return -1;
    }
    for (uint32_t k = 0; k < p->nstreams; k++) {
        g->streams[k].device = p->streams[k].device;
        g->streams[k].stream = p->streams[k].stream;
        prev_end[k] = INT64_MIN;
    }
    g->nstreams = p->nstreams;
    for (size_t i = 0; i < p->ngpu; i++) {
        if (!counted(g, &p->gpu[i]) || p->gpu[i].stream >= p->nstreams)
            continue;
        const tl_gpu_event *e = &p->gpu[i];
        tl_stream_idle *st = &g->streams[e->stream];
        int64_t end = e->ts_ns + e->dur_ns;
        st->busy += e->dur_ns > 0 ? e->dur_ns : 0;
        if (e->type == TL_KT_COMM)
            st->comm_busy += e->dur_ns > 0 ? e->dur_ns : 0;
        if (prev_end[e->stream] != INT64_MIN) {
            int64_t gap = e->ts_ns - prev_end[e->stream];
            if (gap > 0) {
                st->gaps++;
                if (e->launch_ns != INT64_MIN && e->launch_ns > prev_end[e->stream]) {
                    st->host_wait += gap; /* the CPU launched after the stream drained */
                    st->host_gaps++;
                    /* the host's part: up to the launch; a kernel that then
                     * starts milliseconds later waited on the GPU side */
                    int64_t host = e->launch_ns - prev_end[e->stream];
                    st->host_part += host < gap ? host : gap;
                } else if (gap < opt->kernel_wait_ns)
                    st->kernel_wait += gap; /* launch overhead between back-to-back kernels */
                else
                    st->other += gap;
            }
        }
        /* HTA measures from the previous event's end (not the latest end so
         * far); within one stream events do not overlap, so the two agree
         * except around sync events. */
        prev_end[e->stream] = end;
    }
    free(prev_end);
    return host_gaps(s, p);
}

static int by_kernel_name(const void *a, const void *b, void *ctx)
{
    const tl_skernel *k = ctx;
    return strcmp(k[*(const uint32_t *)a].name, k[*(const uint32_t *)b].name);
}

/* Kernels in name order (deterministic output); collectives refer to kernels
 * by index, so they are renumbered through the same permutation. */
static int sort_kernels(tl_session *s)
{
    size_t n = s->nkernels;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    uint32_t *new_index = malloc((n ? n : 1) * sizeof *new_index);
    tl_skernel *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (order == NULL || new_index == NULL || sorted == NULL) {
        free(order);
        free(new_index);
        free(sorted);
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        order[k] = (uint32_t)k;
    qsort_r(order, n, sizeof *order, by_kernel_name, s->kernels);
    for (size_t k = 0; k < n; k++) {
        sorted[k] = s->kernels[order[k]];
        new_index[order[k]] = (uint32_t)k;
    }
    for (size_t c = 0; c < s->ncolls; c++)
        s->colls[c].kernel = new_index[s->colls[c].kernel];
    memcpy(s->kernels, sorted, n * sizeof *sorted);
    free(order);
    free(new_index);
    free(sorted);
    return 0;
}

/* Per-step compute: the union of the compute kernels launched in each step
 * (a running union per step: the kernels come in start order). */
static int step_compute(tl_session *s, const tl_profile *p)
{
    if (s->nsteps == 0 || p->nsteps == 0)
        return 0;
    tl_ivrun *per = calloc(s->nsteps, sizeof *per); /* zeroed: empty */
    if (per == NULL)
        return -1;
    /* A kernel belongs to the first step (in number order) whose [start, end]
     * holds its launch. When the steps are also in time order and do not
     * overlap (they touch at most), that is the first of the steps starting
     * at or before the launch that ends at or after it: two binary
     * searches, not a scan of every step for every kernel (O(kernels x steps),
     * 28 % of a 300-step trace's analysis). Otherwise the scan. */
    int ordered = 1;
    for (size_t k = 0; k + 1 < p->nsteps && ordered; k++)
        ordered = tl_ns_add(p->steps[k].ts_ns, p->steps[k].dur_ns) <= p->steps[k + 1].ts_ns && p->steps[k].dur_ns >= 0;
    if (p->nsteps > 0 && p->steps[p->nsteps - 1].dur_ns < 0)
        ordered = 0;
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *e = &p->gpu[i];
        if (e->type != TL_KT_COMPUTE)
            continue;
        int64_t t = e->launch_ns != INT64_MIN ? e->launch_ns : e->ts_ns;
        size_t found = p->nsteps;
        if (ordered) {
            size_t lo = 0, hi = p->nsteps; /* the first step that starts after t */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (p->steps[mid].ts_ns <= t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t a = 0, b = lo; /* the first of them that ends at t or later (ends ascend too) */
            while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (tl_ns_add(p->steps[mid].ts_ns, p->steps[mid].dur_ns) < t)
                    a = mid + 1;
                else
                    b = mid;
            }
            found = a < lo ? a : p->nsteps;
        } else {
            for (size_t k = 0; k < p->nsteps; k++)
                if (t >= p->steps[k].ts_ns && t <= tl_ns_add(p->steps[k].ts_ns, p->steps[k].dur_ns)) {
                    found = k;
                    break;
                }
        }
        int64_t gap_from;
        if (found < p->nsteps && found < s->nsteps)
            (void)tl_ivrun_add(&per[found], e->ts_ns, e->ts_ns + e->dur_ns, &gap_from);
    }
    for (size_t k = 0; k < s->nsteps; k++)
        s->steps[k].compute_ns = p->ngpu ? tl_ivrun_length(&per[k]) : -1;
    free(per);
    return 0;
}

/* GPU idle time (the gaps of the union of GPU events) covered by blocking
 * host calls, in total and for the call name that covers most: each gap is
 * met once, as the union of the GPU events is made (gpu_analysis), so no
 * list of the gaps is kept.
 *
 * The part of a gap during which the GPU had work queued (a kernel launched
 * before it that starts only after the gap: the device was busy outside the
 * trace's window or its streams) is not idle for want of the host: no host
 * call blocked it (SGLang's decode: kernels launched at +0.04 ms start 463 ms
 * later). suffix[k]: the earliest launch of the kernels k.. by start. Not
 * with graph replays: a graph's nodes all carry the graph launch's time,
 * however late each runs. */
#define COVER_NAMES 16

typedef struct idle_cover {
    int on;          /* there are blocking calls */
    int64_t *suffix; /* per GPU event (8 bytes each, the only per-event memory here) */
    tl_ivset calls;  /* the blocking calls' union */
    tl_ivset one[COVER_NAMES];
    uint32_t names[COVER_NAMES]; /* the first distinct names of the calls, in order */
    size_t nnames, gaps;
    int64_t blocked, cov[COVER_NAMES];
} idle_cover;

static void idle_cover_release(idle_cover *c)
{
    free(c->suffix);
    tl_ivset_release(&c->calls);
    for (size_t k = 0; k < COVER_NAMES; k++)
        tl_ivset_release(&c->one[k]);
}

static int idle_cover_init(idle_cover *c, const tl_profile *p)
{
    memset(c, 0, sizeof *c);
    if (p->nblocking == 0 || p->ngpu == 0)
        return 0;
    c->on = 1;
    if ((c->suffix = malloc((p->ngpu + 1) * sizeof *c->suffix)) == NULL)
        return -1;
    c->suffix[p->ngpu] = INT64_MAX;
    for (size_t k = p->ngpu; k-- > 0;) {
        /* kernels only: a copy that a synchronous call issued starts late
         * because the host stages it (pageable memory), not because the GPU
         * was busy elsewhere */
        int64_t l = p->gpu[k].launch_ns != INT64_MIN && p->gpu[k].cat_class == TL_CC_KERNEL && !p->graph_launches
                        ? p->gpu[k].launch_ns
                        : INT64_MAX;
        c->suffix[k] = l < c->suffix[k + 1] ? l : c->suffix[k + 1];
    }
    for (size_t i = 0; i < p->nblocking; i++)
        if (tl_ivset_add(&c->calls, p->blocking[i].ts_ns, p->blocking[i].ts_ns + p->blocking[i].dur_ns) != 0)
            return -1;
    tl_ivset_union(&c->calls);
    /* the names: few distinct ones, a union each */
    for (size_t i = 0; i < p->nblocking && c->nnames < COVER_NAMES; i++) {
        uint32_t name = p->blocking[i].name;
        size_t k = 0;
        while (k < c->nnames && c->names[k] != name)
            k++;
        if (k < c->nnames)
            continue;
        c->names[c->nnames++] = name;
        for (size_t j = i; j < p->nblocking; j++)
            if (p->blocking[j].name == name &&
                tl_ivset_add(&c->one[k], p->blocking[j].ts_ns, p->blocking[j].ts_ns + p->blocking[j].dur_ns) != 0)
                return -1;
        tl_ivset_union(&c->one[k]);
    }
    return 0;
}

/* The gap [a, b) between two components of the union of the GPU events, b
 * the start of event `at`. The gaps come in order and are disjoint, so the sum
 * of their parts inside a union is the length of its intersection with the
 * gaps' union. */
static void idle_cover_gap(idle_cover *c, tl_gpu_breakdown *g, const tl_profile *p, int64_t a, size_t at)
{
    /* b: the start of event `at`, which opened the component after the gap;
     * lo: the first event that starts at b or later -- `at`, or one before it
     * at the same time (the events are in start order) */
    int64_t b = p->gpu[at].ts_ns;
    size_t lo = at;
    while (lo > 0 && p->gpu[lo - 1].ts_ns >= b)
        lo--;
    /* from the earliest launch of a kernel that starts after the gap, the
     * GPU had that kernel queued */
    int64_t q = c->suffix[lo] > a ? c->suffix[lo] : a;
    if (q < b) {
        g->queued_idle += b - q;
        b = q;
    }
    c->gaps++;
    if (b <= a)
        return;
    c->blocked += covered(&c->calls, a, b);
    for (size_t k = 0; k < c->nnames; k++)
        c->cov[k] += covered(&c->one[k], a, b);
}

static void idle_cover_finish(idle_cover *c, tl_gpu_breakdown *g, const tl_profile *p)
{
    if (!c->on || c->gaps == 0)
        return;
    g->blocked_idle = c->blocked;
    for (size_t k = 0; k < c->nnames; k++)
        if (c->cov[k] > g->blocking_call_ns) {
            g->blocking_call_ns = c->cov[k];
            snprintf(g->blocking_call, sizeof g->blocking_call, "%s", tl_strtab_get(&p->strs, c->names[k]));
        }
}

/* The unions a breakdown measures, made as the events come in start order:
 * all events, compute, communication, and compute or communication (for the
 * overlap of the two: |comp n comm| = |comp| + |comm| - |comp u comm|), and
 * the sweep over the kinds. */
typedef struct gpu_unions {
    tl_ivrun all, comp, comm, either;
    tl_kindsweep kinds;
    int64_t first, last;
} gpu_unions;

static void unions_init(gpu_unions *u)
{
    tl_ivrun_init(&u->all);
    tl_ivrun_init(&u->comp);
    tl_ivrun_init(&u->comm);
    tl_ivrun_init(&u->either);
    tl_kindsweep_init(&u->kinds);
    u->first = INT64_MAX;
    u->last = INT64_MIN;
}

/* Add e; 1 when it starts a component of all after a gap (from *gap_from to e's start). */
static int unions_add(gpu_unions *u, const tl_gpu_event *e, int64_t *gap_from)
{
    int64_t end = e->ts_ns + (e->dur_ns > 0 ? e->dur_ns : 0), from;
    if (e->ts_ns < u->first)
        u->first = e->ts_ns;
    if (end > u->last)
        u->last = end;
    int gap = tl_ivrun_add(&u->all, e->ts_ns, end, gap_from);
    if (e->type == TL_KT_COMPUTE) {
        (void)tl_ivrun_add(&u->comp, e->ts_ns, end, &from);
        (void)tl_ivrun_add(&u->either, e->ts_ns, end, &from);
    } else if (e->type == TL_KT_COMM) {
        (void)tl_ivrun_add(&u->comm, e->ts_ns, end, &from);
        (void)tl_ivrun_add(&u->either, e->ts_ns, end, &from);
    }
    tl_kindsweep_add(&u->kinds, e->ts_ns, end, kind_of(e->type));
    return gap;
}

/* A process that drives several GPUs: the breakdown is each device's, added
 * up (kernel time, busy, idle, compute, communication and the kinds' sweep
 * are sums over the devices), so two GPUs busy half the time each read 50 %
 * busy, not 100 % (a union across devices hid one device's idle time behind
 * the other's work). One device: the figures stand as computed. */
static void per_device(tl_gpu_breakdown *g, const tl_profile *p)
{
    int64_t devs[16];
    size_t nd = 0;
    for (uint32_t k = 0; k < p->nstreams && nd < 16; k++) {
        size_t j = 0;
        while (j < nd && devs[j] != p->streams[k].device)
            j++;
        if (j == nd)
            devs[nd++] = p->streams[k].device;
    }
    if (nd < 2)
        return;
    tl_gpu_breakdown sum = *g;
    sum.kernel_time = sum.busy = sum.idle = sum.compute = sum.non_compute = sum.comm = sum.comm_compute = 0;
    memset(sum.by_mask, 0, sizeof sum.by_mask);
    for (size_t d = 0; d < nd; d++) {
        gpu_unions u;
        int64_t by_mask[8], gap_from;
        unions_init(&u);
        for (size_t i = 0; i < p->ngpu; i++) {
            const tl_gpu_event *e = &p->gpu[i];
            if (!counted(g, e) || e->stream >= p->nstreams || p->streams[e->stream].device != devs[d])
                continue;
            (void)unions_add(&u, e, &gap_from);
        }
        if (u.first > u.last)
            continue;
        int64_t busy = tl_ivrun_length(&u.all), compute = tl_ivrun_length(&u.comp), comm = tl_ivrun_length(&u.comm);
        sum.kernel_time += u.last - u.first;
        sum.busy += busy;
        sum.idle += (u.last - u.first) - busy;
        sum.compute += compute;
        sum.non_compute += busy - compute;
        sum.comm += comm;
        sum.comm_compute += compute - (tl_ivrun_length(&u.either) - comm);
        tl_kindsweep_finish(&u.kinds, by_mask);
        for (int m = 0; m < 8; m++)
            sum.by_mask[m] += by_mask[m];
    }
    sum.devices = (int)nd;
    *g = sum;
}

static int gpu_analysis(tl_session *s, const tl_profile *p, const tl_analyze_options *opt)
{
    tl_gpu_breakdown *g = &s->gpu;
    int rc = -1;
    choose_window(s, p, opt);
    if (p->ngpu == 0)
        return 0;
    uint32_t *kid_of = malloc((p->strs.n ? p->strs.n : 1) * sizeof *kid_of);
    gpu_unions u;
    idle_cover cover;
    tl_strtab knames;
    unions_init(&u);
    tl_strtab_init(&knames);
    size_t kernels_cap = 0, colls_cap = 0;
    if (idle_cover_init(&cover, p) != 0 || kid_of == NULL)
        goto out;
    memset(kid_of, 0xff, (p->strs.n ? p->strs.n : 1) * sizeof *kid_of);
    g->queued_idle = 0;
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *e = &p->gpu[i];
        if (!counted(g, e))
            continue;
        g->events++;
        int64_t gap_from;
        if (unions_add(&u, e, &gap_from) && cover.on)
            idle_cover_gap(&cover, g, p, gap_from, i);

        /* the kernel's own statistics: its name interned once per name id of
         * the profile (kid_of), not once per event */
        uint32_t id = e->name < p->strs.n ? kid_of[e->name] : UINT32_MAX;
        const char *name = NULL;
        uint32_t before = UINT32_MAX;
        if (id == UINT32_MAX) {
            name = tl_strtab_get(&p->strs, e->name);
            before = knames.n;
            id = tl_strtab_intern(&knames, name, strlen(name));
            if (id == UINT32_MAX)
                goto out;
            if (e->name < p->strs.n)
                kid_of[e->name] = id;
        }
        if (id == before) {
            if (s->nkernels == kernels_cap) {
                size_t old = kernels_cap;
                if (tl_array_grow(&s->kernels, s->nkernels, &kernels_cap, sizeof *s->kernels, TL_ARRAY_FIRST) != 0)
                    goto out;
                memset(s->kernels + old, 0, (kernels_cap - old) * sizeof *s->kernels);
            }
            s->kernels[id].name = dupstr(name);
            s->kernels[id].type = e->type;
            s->nkernels++;
        }
        tl_dur_stat_add(&s->kernels[id].d, (uint64_t)(e->dur_ns > 0 ? e->dur_ns : 0), TL_PROFILE_MAX_SAMPLES);
        if (e->type == TL_KT_COMM && s->ncolls < TL_MAX_COLLECTIVES) {
            /* Grown as needed: a session is kept per rank, and the cap's 1.6 MB up front
             * made every rank cost that much address space (issue 15, memory flat in ranks). */
            if (s->ncolls == colls_cap) { /* not tl_array_grow: clamped to TL_MAX_COLLECTIVES */
                size_t cap = colls_cap ? colls_cap * 2 : 256;
                tl_collective *x = realloc(s->colls, (cap < TL_MAX_COLLECTIVES ? cap : TL_MAX_COLLECTIVES) * sizeof *x);
                if (x != NULL) {
                    s->colls = x;
                    colls_cap = cap < TL_MAX_COLLECTIVES ? cap : TL_MAX_COLLECTIVES;
                }
            }
            if (s->ncolls < colls_cap)
                s->colls[s->ncolls++] = (tl_collective){ id, e->dur_ns };
        }
    }
    /* The session is kept until every rank is read: no room left over in it
     * (a doubled array is up to half empty; a kernel's row is ~110 bytes). */
    if (s->nkernels > 0 && s->nkernels < kernels_cap) {
        tl_skernel *k = realloc(s->kernels, s->nkernels * sizeof *k);
        if (k != NULL)
            s->kernels = k;
    }
    if (s->ncolls > 0 && s->ncolls < colls_cap) {
        tl_collective *c = realloc(s->colls, s->ncolls * sizeof *c);
        if (c != NULL)
            s->colls = c;
    }
    if (g->events == 0) {
        rc = 0;
        goto out;
    }
    g->present = 1;
    g->kernel_time = u.last - u.first;
    g->busy = tl_ivrun_length(&u.all);
    g->idle = g->kernel_time - g->busy;
    g->compute = tl_ivrun_length(&u.comp);
    g->non_compute = g->busy - g->compute;
    g->comm = tl_ivrun_length(&u.comm);
    g->comm_compute = g->compute - (tl_ivrun_length(&u.either) - g->comm); /* in this order: no sum past INT64_MAX */
    idle_cover_finish(&cover, g, p);
    tl_kindsweep_finish(&u.kinds, g->by_mask);
    if (idle_by_stream(s, p, opt) != 0)
        goto out;
    per_device(g, p);
    if (sort_kernels(s) != 0)
        goto out;
    if (step_compute(s, p) != 0)
        goto out;
    rc = 0;
out:
    idle_cover_release(&cover);
    tl_strtab_release(&knames);
    free(kid_of);
    return rc;
}

/* ---- timeline ----------------------------------------------------------------- */

/* Add [start, end) (file time) to a lane's bins of kind k over [t0, t1).
 * 0, or -1 when the kind's bins could not be allocated. */
static int bin_add(tl_lane *lane, int k, int64_t t0, int64_t t1, int64_t start, int64_t end)
{
    double width = (double)(t1 - t0) / TL_TIMELINE_BINS;
    if (end <= start || width <= 0)
        return 0;
    float *busy = tl_lane_busy_row(lane, k);
    if (busy == NULL)
        return -1;
    int first = (int)((double)(start - t0) / width), last = (int)((double)(end - t0) / width);
    if (first < 0)
        first = 0;
    if (last >= TL_TIMELINE_BINS)
        last = TL_TIMELINE_BINS - 1;
    for (int i = first; i <= last; i++) {
        double lo = (double)t0 + i * width, hi = lo + width;
        double s = (double)start > lo ? (double)start : lo, e = (double)end < hi ? (double)end : hi;
        if (e > s)
            busy[i] += (float)((e - s) / width);
    }
    return 0;
}

static char *lane_label(int kind, int64_t a, int64_t b, const char *name)
{
    char buf[128];
    if (kind == TL_LANE_GPU)
        snprintf(buf, sizeof buf, "GPU %lld stream %lld", (long long)a, (long long)b);
    else if (name && *name)
        snprintf(buf, sizeof buf, "thread %lld %s", (long long)b, name);
    else
        snprintf(buf, sizeof buf, "thread %lld", (long long)b);
    return dupstr(buf);
}

/* ---- a CPU lane's calls ------------------------------------------------------------- */

static int by_start_longer(const void *x, const void *y)
{
    const tl_lane_event *a = x, *b = y;
    if (a->ts_ns != b->ts_ns)
        return a->ts_ns < b->ts_ns ? -1 : 1;
    if (a->dur_ns != b->dur_ns)
        return a->dur_ns > b->dur_ns ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/* The lane's kept calls (profile.h) on rows (aggregate.h, tl_lane_call): in
 * start order, each goes to the first free row below the innermost kept
 * call that contains it. calls_left: the lane's events not drawn by name. */
static int lane_calls(tl_lane *lane, tl_strtab *names, const tl_cpu_lane *src, const tl_profile *p, int64_t base)
{
    lane->calls_left = src->events;
    if (src->ntop == 0)
        return 0;
    tl_lane_event *ev = malloc(src->ntop * sizeof *ev);
    lane->calls = malloc(src->ntop * sizeof *lane->calls);
    if (ev == NULL || lane->calls == NULL) {
        free(ev);
        return -1;
    }
    memcpy(ev, src->top, src->ntop * sizeof *ev);
    qsort(ev, src->ntop, sizeof *ev, by_start_longer);
    int64_t row_end[TL_LANE_MAX_DEPTH];
    uint32_t stack[TL_LANE_TOP_EVENTS]; /* kept calls still open, outermost first */
    size_t nstack = 0;
    for (int r = 0; r < TL_LANE_MAX_DEPTH; r++)
        row_end[r] = INT64_MIN;
    for (uint32_t i = 0; i < src->ntop; i++) {
        const tl_lane_event *e = &ev[i];
        int64_t end = e->ts_ns + e->dur_ns;
        while (nstack > 0 &&
               lane->calls[stack[nstack - 1]].ts_ns + lane->calls[stack[nstack - 1]].dur_ns - base <= e->ts_ns)
            nstack--;
        int row = 0;
        for (size_t k = nstack; k-- > 0;) {
            const tl_lane_call *c = &lane->calls[stack[k]];
            if (c->ts_ns - base <= e->ts_ns && end <= c->ts_ns - base + c->dur_ns) {
                row = c->row + 1;
                break;
            }
        }
        while (row < TL_LANE_MAX_DEPTH && row_end[row] > e->ts_ns)
            row++;
        if (row >= TL_LANE_MAX_DEPTH)
            continue;
        const char *name = tl_strtab_get(&p->strs, e->name);
        uint32_t id = tl_strtab_intern(names, name, strlen(name));
        if (id == UINT32_MAX) {
            free(ev);
            return -1;
        }
        row_end[row] = end;
        stack[nstack++] = lane->ncalls;
        lane->calls[lane->ncalls++] = (tl_lane_call){ e->ts_ns + base, e->dur_ns, id, (uint8_t)row };
    }
    free(ev);
    lane->calls_left = src->events > lane->ncalls ? src->events - lane->ncalls : 0;
    return 0;
}

static int by_lane_busy(const void *x, const void *y)
{
    const tl_cpu_lane *a = x, *b = y;
    if (a->events != b->events)
        return a->events < b->events ? 1 : -1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The CPU threads drawn (session.h): without GPU events, every thread with
 * events, the busiest first; beside GPU streams, those whose outermost
 * events cover TL_TIMELINE_MIN_THREAD_SHARE of the span, at most
 * TL_TIMELINE_MAX_CPU_LANES. Fills order[] and returns how many. */
static size_t cpu_threads(const tl_profile *p, tl_cpu_lane *order, size_t max)
{
    size_t n = 0;
    for (uint32_t k = 0; k < p->ncpu_lanes; k++)
        if (p->cpu_lanes[k]->events > 0)
            order[n++] = *p->cpu_lanes[k];
    qsort(order, n, sizeof *order, by_lane_busy);
    if (!p->ngpu)
        return n < max ? n : max;
    size_t kept = 0;
    for (size_t k = 0; k < n && kept < TL_TIMELINE_MAX_CPU_LANES && kept < max; k++)
        if (tl_binner_fraction(&order[k].bins, p->start_ns, p->end_ns) >= TL_TIMELINE_MIN_THREAD_SHARE)
            order[kept++] = order[k];
    return kept;
}

typedef struct stream_busy {
    size_t stream;
    int64_t device, busy;
    uint64_t events;
    int own; /* a lane of its own (session.h) */
} stream_busy;

static int by_device(const void *x, const void *y)
{
    const stream_busy *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* own lanes: the busiest first, then by stream */
static int by_busy(const void *x, const void *y)
{
    const stream_busy *a = x, *b = y;
    if (a->busy != b->busy)
        return a->busy > b->busy ? -1 : 1;
    return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* Which lane each GPU stream with events goes to (session.h): its own when
 * it carries TL_TIMELINE_MIN_STREAM_SHARE of its GPU's busy time (the
 * busiest first while lanes are left, one kept for each GPU's "other
 * streams"), else its GPU's "other streams" lane. Lanes are added to tl
 * from index first on, at most TL_TIMELINE_MAX_LANES in all; lane_of[stream]
 * is the lane or SIZE_MAX (not drawn). Returns the lanes added, -1 out of
 * memory. */
static long gpu_lanes(tl_timeline *tl, const tl_profile *p, size_t first, size_t cap, size_t *lane_of)
{
    size_t ns = p->nstreams, nb = 0, ndev = 0;
    stream_busy *v = calloc(ns ? ns : 1, sizeof *v);
    if (v == NULL)
        return -1;
    for (size_t k = 0; k < ns; k++) {
        v[k] = (stream_busy){ k, p->streams[k].device, 0, 0, 0 };
        lane_of[k] = SIZE_MAX;
    }
    for (size_t i = 0; i < p->ngpu; i++) {
        v[p->gpu[i].stream].busy = tl_ns_add(v[p->gpu[i].stream].busy, p->gpu[i].dur_ns > 0 ? p->gpu[i].dur_ns : 0);
        v[p->gpu[i].stream].events++;
    }
    for (size_t k = 0; k < ns; k++)
        if (v[k].busy > 0)
            v[nb++] = v[k];
    /* per GPU (the streams of one device are one run once sorted): a lane
     * of its own for a stream with TL_TIMELINE_MIN_STREAM_SHARE of the
     * GPU's busy time or of its events (a compute stream beside a
     * communication stream that waits for the other ranks most of the
     * time), for the GPU's busiest, and for the only one that
     * would be folded (a lane of one stream says more than "1 other") */
    qsort(v, nb, sizeof *v, by_device);
    for (size_t k = 0; k < nb;) {
        size_t e = k, top = k, small = 0;
        int64_t sum = 0;
        uint64_t events = 0;
        for (; e < nb && v[e].device == v[k].device; e++) {
            sum = tl_ns_add(sum, v[e].busy);
            events += v[e].events;
            top = v[e].busy > v[top].busy ? e : top;
        }
        for (size_t m = k; m < e; m++) {
            v[m].own = m == top || (double)v[m].busy >= TL_TIMELINE_MIN_STREAM_SHARE * (double)sum ||
                       (double)v[m].events >= TL_TIMELINE_MIN_STREAM_SHARE * (double)events;
            small += !v[m].own;
        }
        for (size_t m = k; m < e && small == 1; m++)
            v[m].own = 1;
        ndev += small > 1;
        k = e;
    }
    qsort(v, nb, sizeof *v, by_busy);
    size_t own = 0, added = 0;
    size_t room = cap > ndev ? cap - ndev : 1;
    for (size_t k = 0; k < nb && own < room && own < cap; k++) {
        if (!v[k].own)
            continue;
        tl_lane *l = &tl->lanes[first + own];
        l->kind = TL_LANE_GPU;
        l->a = v[k].device;
        l->b = p->streams[v[k].stream].stream;
        l->label = lane_label(TL_LANE_GPU, l->a, l->b, NULL);
        if (l->label == NULL) {
            free(v);
            return -1;
        }
        lane_of[v[k].stream] = first + own++;
    }
    added = own;
    uint64_t *folded = calloc(cap ? cap : 1, sizeof *folded);
    if (folded == NULL) {
        free(v);
        return -1;
    }
    for (size_t k = 0; k < nb; k++) {
        if (lane_of[v[k].stream] != SIZE_MAX)
            continue;
        size_t li = SIZE_MAX;
        for (size_t m = first + own; m < first + added && li == SIZE_MAX; m++)
            if (tl->lanes[m].a == v[k].device)
                li = m;
        if (li == SIZE_MAX) {
            if (added == cap)
                continue; /* no lane left: not drawn */
            li = first + added++;
            tl->lanes[li].kind = TL_LANE_GPU;
            tl->lanes[li].a = v[k].device;
            tl->lanes[li].b = TL_LANE_OTHER_STREAMS;
        }
        lane_of[v[k].stream] = li;
        folded[li - first]++;
    }
    long rc = (long)added;
    for (size_t m = first + own; m < first + added; m++) {
        char buf[96];
        snprintf(buf, sizeof buf, "GPU %lld, %llu other stream%s", (long long)tl->lanes[m].a,
                 (unsigned long long)folded[m - first], folded[m - first] == 1 ? "" : "s");
        if ((tl->lanes[m].label = dupstr(buf)) == NULL)
            rc = -1;
    }
    free(folded);
    free(v);
    return rc;
}

/* Lanes over the session's span (session.h): the CPU threads that carry
 * work, then the GPU streams that carry a share of their GPU's busy time,
 * each GPU's other streams folded into one lane. Times on the axis are file
 * times plus the base time, so ranks line up on the wall clock. */
static int timeline(tl_session *s, const tl_profile *p)
{
    tl_timeline *tl = &s->timeline;
    if (p->start_ns >= p->end_ns)
        return 0;
    int64_t t0 = p->start_ns, t1 = p->end_ns, base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    int rc = -1;
    tl_cpu_lane *order = malloc((p->ncpu_lanes ? p->ncpu_lanes : 1) * sizeof *order);
    size_t *lane_of = malloc((p->nstreams ? p->nstreams : 1) * sizeof *lane_of);
    if (order == NULL || lane_of == NULL)
        goto out;
    /* room for a GPU lane at least when there are GPU events */
    size_t ncpu = cpu_threads(p, order, p->ngpu ? TL_TIMELINE_MAX_LANES - 2 : TL_TIMELINE_MAX_LANES);
    /* only as many lanes as can be used (one per stream at most) */
    size_t ngpu =
        p->ngpu ? (p->nstreams < TL_TIMELINE_MAX_LANES - ncpu ? p->nstreams : TL_TIMELINE_MAX_LANES - ncpu) : 0;
    if (ncpu + ngpu == 0 || (tl->lanes = calloc(ncpu + ngpu, sizeof *tl->lanes)) == NULL) {
        rc = ncpu + ngpu == 0 ? 0 : -1;
        goto out;
    }
    tl->start_ns = t0 + base;
    tl->end_ns = t1 + base;
    double width = (double)(t1 - t0) / TL_TIMELINE_BINS;
    for (size_t k = 0; k < ncpu; k++) {
        tl_lane *lane = &tl->lanes[k];
        lane->kind = TL_LANE_CPU;
        lane->a = order[k].pid;
        lane->b = order[k].tid;
        lane->label = lane_label(TL_LANE_CPU, order[k].pid, order[k].tid, order[k].name);
        tl->nlanes = k + 1;
        float *busy = tl_lane_busy_row(lane, TL_KT_COMPUTE);
        if (busy == NULL)
            goto out;
        for (int i = 0; i < TL_TIMELINE_BINS; i++) {
            int64_t lo = t0 + (int64_t)(i * width), hi = t0 + (int64_t)((i + 1) * width);
            busy[i] = (float)tl_binner_fraction(&order[k].bins, lo, hi > lo ? hi : lo + 1);
        }
        if (p->nesting == TL_NEST_DONE && lane_calls(lane, &tl->names, &order[k], p, base) != 0)
            goto out;
    }
    if (p->ngpu) {
        long g = gpu_lanes(tl, p, ncpu, ngpu, lane_of);
        if (g < 0) {
            tl->nlanes = ncpu + ngpu; /* the labels written so far are freed with the rest */
            goto out;
        }
        tl->nlanes = ncpu + (size_t)g;
        for (size_t i = 0; i < p->ngpu; i++) {
            const tl_gpu_event *e = &p->gpu[i];
            if (lane_of[e->stream] != SIZE_MAX &&
                bin_add(&tl->lanes[lane_of[e->stream]], e->type, t0, t1, e->ts_ns, e->ts_ns + e->dur_ns) != 0)
                goto out;
        }
    }
    for (size_t k = 0; k < tl->nlanes; k++)
        for (int t = 0; t < TL_KT_COUNT; t++)
            for (int i = 0; tl->lanes[k].busy[t] && i < TL_TIMELINE_BINS; i++)
                if (tl->lanes[k].busy[t][i] > 1.0f)
                    tl->lanes[k].busy[t][i] = 1.0f;
    rc = 0;
out:
    if (tl->nlanes == 0) {
        free(tl->lanes);
        tl->lanes = NULL;
        tl->start_ns = tl->end_ns = 0;
    }
    free(order);
    free(lane_of);
    return rc;
}

/* Which memory points make the series: a [memory] event says which device
 * it is about, and the CPU allocator's (device -1) must never be drawn on,
 * nor counted in, a GPU's line. The series is the GPU device with the most
 * points (ties: the lowest id); without GPU points, the host's. */
static int64_t mem_device(const tl_profile *p)
{
    enum { MAX_DEVICES = 64 }; /* devices told apart; points of more are not drawn */
    int64_t dev[MAX_DEVICES];
    size_t cnt[MAX_DEVICES], nd = 0;
    for (size_t i = 0; i < p->nmem; i++) {
        int64_t d = p->mem[i].device;
        if (d < 0)
            continue;
        size_t k = 0;
        while (k < nd && dev[k] != d)
            k++;
        if (k == nd) {
            if (nd == MAX_DEVICES)
                continue;
            dev[nd] = d;
            cnt[nd++] = 0;
        }
        cnt[k]++;
    }
    int64_t best = -1;
    size_t best_n = 0;
    for (size_t k = 0; k < nd; k++)
        if (cnt[k] > best_n || (cnt[k] == best_n && dev[k] < best)) {
            best = dev[k];
            best_n = cnt[k];
        }
    return best;
}

/* The memory series at most TL_MEM_SERIES points: each point the maximum of
 * its share of the samples (peaks must survive downsampling). */
static int mem_series(tl_session *s, const tl_profile *p)
{
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    int64_t dev = mem_device(p);
    size_t n = 0;
    for (size_t i = 0; i < p->nmem; i++)
        n += p->mem[i].device == dev;
    if (n == 0)
        return 0;
    tl_mem_point *pts = malloc(n * sizeof *pts);
    if (pts == NULL)
        return -1;
    n = 0;
    for (size_t i = 0; i < p->nmem; i++)
        if (p->mem[i].device == dev)
            pts[n++] = p->mem[i];
    size_t out = n < TL_MEM_SERIES ? n : TL_MEM_SERIES;
    s->mem = calloc(out, sizeof *s->mem);
    if (s->mem == NULL) {
        free(pts);
        return -1;
    }
    for (size_t k = 0; k < out; k++) {
        size_t lo = k * n / out, hi = (k + 1) * n / out;
        tl_mem_sample m = { pts[lo].ts_ns + base, NAN, NAN };
        for (size_t i = lo; i < hi; i++) {
            if (isfinite(pts[i].allocated) && !(pts[i].allocated <= m.allocated))
                m.allocated = pts[i].allocated;
            if (isfinite(pts[i].reserved) && !(pts[i].reserved <= m.reserved))
                m.reserved = pts[i].reserved;
        }
        s->mem[s->nmem++] = m;
    }
    free(pts);
    return 0;
}

/* ---- memory ----------------------------------------------------------------- */

static void take_max(double *acc, double v)
{
    if (isfinite(v) && !(v <= *acc))
        *acc = v;
}

/* The peaks of each GPU (allocator events and monitor samples carry their
 * device), kept when two or more GPUs have readings: compare's per-device
 * memory rows. */
static void device_memory(tl_session *s, const tl_profile *p)
{
    tl_sdevmem d[TL_SESSION_MAX_DEVICES];
    size_t n = 0;
    for (size_t i = 0; i < p->nmem + p->ngpu_samples; i++) {
        int64_t dev = i < p->nmem ? p->mem[i].device : p->gpu_samples[i - p->nmem].device;
        if (dev < 0)
            continue;
        size_t k = 0;
        while (k < n && d[k].id != dev)
            k++;
        if (k == n) {
            if (n == TL_SESSION_MAX_DEVICES)
                continue;
            d[n++] = (tl_sdevmem){ dev, NAN, NAN, NAN };
        }
        if (i < p->nmem) {
            take_max(&d[k].peak_allocated, p->mem[i].allocated);
            take_max(&d[k].peak_reserved, p->mem[i].reserved);
            take_max(&d[k].peak_used, p->mem[i].used);
        } else {
            take_max(&d[k].peak_used, p->gpu_samples[i - p->nmem].mem_used);
        }
    }
    if (n < 2 || (s->devmem = malloc(n * sizeof *s->devmem)) == NULL)
        return;
    memcpy(s->devmem, d, n * sizeof *d);
    s->ndevmem = n;
}

static void memory(tl_session *s, const tl_profile *p)
{
    s->peak_allocated = s->peak_reserved = s->device_total = s->peak_rss = s->gpu_util_mean = NAN;
    s->peak_device_used = NAN;
    /* allocated, reserved and used are three things: each its own peak */
    /* Device memory peaks from the GPUs' points only; the host allocator's
     * count only when there is no GPU point at all (a CPU-only trace). */
    int any_gpu = 0;
    for (size_t i = 0; i < p->nmem && !any_gpu; i++)
        any_gpu = p->mem[i].device >= 0;
    for (size_t i = 0; i < p->nmem; i++) {
        take_max(p->mem[i].device < 0 ? &s->peak_rss : &s->peak_device_used, p->mem[i].used);
        if (any_gpu && p->mem[i].device < 0)
            continue; /* the CPU allocator is not the device's */
        take_max(&s->peak_allocated, p->mem[i].allocated);
        take_max(&s->peak_reserved, p->mem[i].reserved);
    }
    for (size_t i = 0; i < p->nsnapshots; i++) {
        const tl_mem_snapshot *m = &p->snapshots[i];
        take_max(&s->peak_allocated, isfinite(m->peak_allocated) ? m->peak_allocated : m->allocated);
        take_max(&s->peak_reserved, m->reserved);
        take_max(&s->peak_rss, isfinite(m->peak_rss) ? m->peak_rss : m->rss);
        take_max(&s->peak_device_used, m->device_used);
    }
    /* The capacity of the device that holds the peak, when the memory points
     * name it: a trace lists every GPU its process could see, and 15 GiB on
     * a 16 GiB device 1 beside an 80 GiB device 0 read 18.75 % of "the
     * device". Else the largest listed. */
    int64_t peak_dev = -1;
    double peak_v = -1;
    for (size_t i = 0; i < p->nmem; i++) {
        double v = fmax(isfinite(p->mem[i].allocated) ? p->mem[i].allocated : -1,
                        isfinite(p->mem[i].reserved) ? p->mem[i].reserved : -1);
        if (p->mem[i].device >= 0 && v > peak_v) {
            peak_v = v;
            peak_dev = p->mem[i].device;
        }
    }
    for (uint32_t i = 0; i < p->ndevices && peak_dev >= 0; i++)
        if (p->devices[i].id == peak_dev && p->devices[i].total_memory > 0)
            s->device_total = p->devices[i].total_memory;
    for (uint32_t i = 0; i < p->ndevices && !isfinite(s->device_total); i++)
        take_max(&s->device_total, p->devices[i].total_memory > 0 ? p->devices[i].total_memory : NAN);
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->ngpu_samples; i++) {
        const tl_gpu_sample *g = &p->gpu_samples[i];
        take_max(&s->peak_device_used, g->mem_used);
        take_max(&s->device_total, g->mem_total);
        if (isfinite(g->util_pct)) {
            sum += g->util_pct;
            n++;
        }
    }
    if (n)
        s->gpu_util_mean = sum / (double)n;
    device_memory(s, p);
    s->snaps = calloc(p->nsnapshots + 1, sizeof *s->snaps);
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    for (size_t i = 0; s->snaps && i < p->nsnapshots; i++) {
        const tl_mem_snapshot *m = &p->snapshots[i];
        s->snaps[s->nsnaps++] = (tl_ssnap){ dupstr(tl_strtab_get(&p->strs, m->label)),
                                            m->allocated,
                                            m->reserved,
                                            m->peak_allocated,
                                            m->rss,
                                            m->device_used,
                                            m->ts_ns == INT64_MIN ? INT64_MIN : tl_ns_add(m->ts_ns, base) };
    }
}

/* The memory timeline's categories over time (read_mem_timeline.h), already
 * downsampled; on the session's clock, like the snapshots. */
static int take_memcats(tl_session *s, const tl_profile *p)
{
    if (p->nmemcats == 0)
        return 0;
    s->memcats = malloc(p->nmemcats * sizeof *s->memcats);
    if (s->memcats == NULL)
        return -1;
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    for (size_t i = 0; i < p->nmemcats; i++) {
        s->memcats[i] = p->memcats[i];
        s->memcats[i].ts_ns = tl_ns_add(p->memcats[i].ts_ns, base);
    }
    s->nmemcats = p->nmemcats;
    return 0;
}

/* ---- steps ------------------------------------------------------------------ */

/* ProfilerStep#N, else the samples of the loop with the most time (reports). */
static int take_steps(tl_session *s, const tl_profile *p)
{
    if (p->nsteps > 0) {
        s->steps = calloc(p->nsteps, sizeof *s->steps);
        if (s->steps == NULL)
            return -1;
        int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
        for (size_t i = 0; i < p->nsteps; i++)
            s->steps[i] = (tl_sstep){ p->steps[i].number, p->steps[i].dur_ns, -1, p->steps[i].ts_ns + base, 0 };
        s->nsteps = p->nsteps;
        /* The profiler stops in the middle of its last step (the GPU window drops it too). */
        if (p->nsteps >= 2 && !p->steps_from_loop &&
            (p->id.format == TL_FMT_KINETO || p->id.format == TL_FMT_CHROME_TRACE))
            s->steps[p->nsteps - 1].partial = 1;
        return 0;
    }
    const tl_sname *loop = NULL;
    for (size_t i = 0; i < s->nnames; i++)
        if (s->names[i].group == TL_GROUP_ITERATIONS && s->names[i].d.nsamples > 0 &&
            (loop == NULL || s->names[i].d.total > loop->d.total))
            loop = &s->names[i];
    if (loop == NULL)
        return 0;
    s->steps = calloc(loop->d.nsamples, sizeof *s->steps);
    if (s->steps == NULL)
        return -1;
    for (uint32_t i = 0; i < loop->d.nsamples; i++)
        s->steps[i] = (tl_sstep){ i, (int64_t)loop->d.samples[i], -1, INT64_MIN, 0 };
    s->nsteps = loop->d.nsamples;
    return 0;
}

/* The telemetry series, on the timeline's axis; the cap's warning joins the session's. */
static int telemetry(tl_session *s, const tl_profile *p)
{
    char *warning = NULL;
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    if (tl_telemetry_series(p, base, &s->series, &s->nseries, &warning) != 0)
        return -1;
    if (warning != NULL) {
        int rc = tl_problems_add_text(&s->id.problems, TL_PROBLEM_WARNING, -1, warning);
        free(warning);
        return rc;
    }
    return 0;
}

/* ---- collectives ------------------------------------------------------------ */

static int by_inst_start(const void *x, const void *y)
{
    const tl_scoll *a = x, *b = y;
    if (a->ts_ns != b->ts_ns)
        return a->ts_ns < b->ts_ns ? -1 : 1;
    return a->side - b->side;
}

/* The profile's collectives on the timeline's axis, their names the
 * session's own (waits.c matches them across ranks). */
static int take_collectives(tl_session *s, const tl_profile *p)
{
    int rc = -1;
    tl_strtab names;
    tl_strtab_init(&names);
    s->insts_dropped = p->colls_dropped;
    if (p->ncolls == 0)
        return 0;
    s->insts = malloc(p->ncolls * sizeof *s->insts);
    if (s->insts == NULL)
        goto out;
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    for (size_t i = 0; i < p->ncolls; i++) {
        const tl_prof_coll *c = &p->colls[i];
        const char *name = tl_strtab_get(&p->strs, c->name);
        uint32_t id = tl_strtab_intern(&names, name, strlen(name)), gid = UINT32_MAX;
        if (id == UINT32_MAX)
            goto out;
        if (c->group != UINT32_MAX) {
            const char *g = tl_strtab_get(&p->strs, c->group);
            if ((gid = tl_strtab_intern(&names, g, strlen(g))) == UINT32_MAX)
                goto out;
        }
        if (names.n > TL_SESSION_MAX_COLL_NAMES) { /* a hostile trace: said as dropped */
            s->insts_dropped += p->ncolls - i;
            break;
        }
        s->insts[s->ninsts++] = (tl_scoll){ id,
                                            c->side,
                                            tl_ns_add(c->ts_ns, base),
                                            c->dur_ns > 0 ? c->dur_ns : 0,
                                            c->seq,
                                            c->nelems,
                                            gid == UINT32_MAX ? -1 : (int64_t)gid,
                                            c->elem_bytes,
                                            c->group_size };
    }
    qsort(s->insts, s->ninsts, sizeof *s->insts, by_inst_start);
    uint32_t nn = names.n < TL_SESSION_MAX_COLL_NAMES ? names.n : TL_SESSION_MAX_COLL_NAMES;
    s->coll_names = calloc(nn + 1, sizeof *s->coll_names);
    if (s->coll_names == NULL)
        goto out;
    for (uint32_t i = 0; i < nn; i++, s->ncoll_names++)
        if ((s->coll_names[i] = dupstr(names.strs[i])) == NULL)
            goto out;
    rc = 0;
out:
    tl_strtab_release(&names);
    return rc;
}

/* The operators by input shape (ingest/shape_table.h): the TL_SESSION_MAX_SHAPES
 * keys with the most time, by total time (ties: name, dims, types), the rest
 * counted. */
static int by_shape_total(const void *x, const void *y, void *ctx)
{
    const tl_shape_stat *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    const tl_strtab *t = ctx;
    int c = strcmp(tl_strtab_get(t, a->name), tl_strtab_get(t, b->name));
    if (c == 0)
        c = strcmp(tl_strtab_get(t, a->dims), tl_strtab_get(t, b->dims));
    return c != 0 ? c : strcmp(tl_strtab_get(t, a->types), tl_strtab_get(t, b->types));
}

static int take_shapes(tl_session *s, const tl_profile *p)
{
    const tl_shape_table *t = p->shapes;
    if (t == NULL || t->n == 0)
        return 0;
    tl_shape_stat *v = malloc(t->n * sizeof *v);
    if (v == NULL)
        return -1;
    memcpy(v, t->v, t->n * sizeof *v);
    qsort_r(v, t->n, sizeof *v, by_shape_total, (void *)&t->strs);
    size_t keep = t->n < TL_SESSION_MAX_SHAPES ? t->n : TL_SESSION_MAX_SHAPES;
    s->shapes = calloc(keep + 1, sizeof *s->shapes);
    if (s->shapes == NULL) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < keep; i++, s->nshapes++) {
        tl_sshape *d = &s->shapes[i];
        d->name = dupstr(tl_strtab_get(&t->strs, v[i].name));
        d->dims = dupstr(tl_strtab_get(&t->strs, v[i].dims));
        d->types = dupstr(tl_strtab_get(&t->strs, v[i].types));
        if (d->name == NULL || d->dims == NULL || d->types == NULL) {
            free(d->name);
            free(d->dims);
            free(d->types);
            free(v);
            return -1;
        }
        d->count = v[i].count;
        d->total_ns = v[i].total_ns;
        d->min_ns = v[i].min_ns;
        d->max_ns = v[i].max_ns;
        d->flops = v[i].flops_n > 0 ? v[i].flops : NAN;
        d->flops_n = v[i].flops_n;
        d->gpu_ns = v[i].gpu_ns;
        d->kernels = v[i].kernels;
    }
    s->shapes_dropped_keys = t->n - keep;
    s->shapes_dropped_calls = t->dropped;
    for (size_t i = keep; i < t->n; i++)
        s->shapes_dropped_calls += v[i].count;
    if (t->dropped > 0)
        s->shapes_dropped_keys++; /* at least one more key, beyond TL_SHAPES_MAX */
    free(v);
    return 0;
}

/* The profile's call tree with its names as strings (the session's own). */
static int take_calltree(tl_session *s, const tl_profile *p)
{
    if (p->calltree == NULL || p->nesting != TL_NEST_DONE)
        return 0;
    if (tl_calltree_add(&s->calltree, p->calltree, &p->strs, NULL) != 0)
        return -1;
    free(s->calltree.slots); /* built for adding; a session's tree is only read */
    s->calltree.slots = NULL;
    s->calltree.nslots = 0;
    return 0;
}

static void drop_samples(tl_dur_stat *d)
{
    free(d->samples);
    d->samples = NULL;
    d->nsamples = d->samples_cap = 0;
}

void tl_session_drop_samples(tl_session *s)
{
    for (size_t i = 0; i < s->nnames; i++)
        drop_samples(&s->names[i].d);
    for (size_t i = 0; i < s->nkernels; i++)
        drop_samples(&s->kernels[i].d);
}

void tl_session_drop_bins(tl_session *s)
{
    for (size_t i = 0; i < s->timeline.nlanes; i++)
        for (int k = 0; k < TL_KT_COUNT; k++) {
            free(s->timeline.lanes[i].busy[k]);
            s->timeline.lanes[i].busy[k] = NULL;
        }
}

static int analyze(tl_session *s, const tl_profile *p, const tl_analyze_options *opt);

static int by_gpu_ts(const void *x, const void *y)
{
    const tl_gpu_event *a = x, *b = y;
    return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

/* The analysis reads the GPU events in start order, in place, one pass each
 * with no copy (gpu_analysis, tl_session_stepcats; issue 33): every reader
 * ends with tl_profile_finish, which sorts them. A profile that did not (one
 * built by hand) is analysed over a sorted copy. */
int tl_session_analyze(tl_session *s, const tl_profile *p, const tl_analyze_options *opt)
{
    size_t i = 1;
    while (i < p->ngpu && p->gpu[i - 1].ts_ns <= p->gpu[i].ts_ns)
        i++;
    if (i >= p->ngpu)
        return analyze(s, p, opt);
    tl_profile *view = malloc(sizeof *view);
    tl_gpu_event *gpu = malloc(p->ngpu * sizeof *gpu);
    int rc = -1;
    if (view != NULL && gpu != NULL) {
        *view = *p;
        memcpy(gpu, p->gpu, p->ngpu * sizeof *gpu);
        qsort(gpu, p->ngpu, sizeof *gpu, by_gpu_ts);
        view->gpu = gpu;
        rc = analyze(s, view, opt);
    } else {
        tl_session_init(s);
    }
    free(gpu);
    free(view);
    return rc;
}

static int analyze(tl_session *s, const tl_profile *p, const tl_analyze_options *opt)
{
    tl_session_init(s);
    if (tl_identity_copy(&s->id, &p->id) != 0)
        return -1;
    s->truncated = p->truncated;
    if (p->start_ns <= p->end_ns) {
        s->span_ns = p->end_ns - p->start_ns;
        s->start_ns = p->base_time_ns != INT64_MIN ? p->base_time_ns + p->start_ns : p->start_ns;
    } else if (p->base_time_ns != INT64_MIN) {
        s->start_ns = p->base_time_ns;
    }
    memory(s, p);
    /* the collectives before the step categories: the same sweep measures their windows */
    if (take_names(s, p) != 0 || take_steps(s, p) != 0 || take_collectives(s, p) != 0 ||
        tl_session_stepcats(s, p) != 0 || gpu_analysis(s, p, opt) != 0 || timeline(s, p) != 0 ||
        mem_series(s, p) != 0 || take_calltree(s, p) != 0 || take_shapes(s, p) != 0 ||
        tl_session_take_memops(s, p) != 0 || take_memcats(s, p) != 0)
        return -1;
    if (p->ndevices > 0 && p->devices[0].name[0])
        s->device_name = dupstr(p->devices[0].name);
    s->abs_time = p->base_time_ns != INT64_MIN || (p->start_ns <= p->end_ns && s->start_ns >= TL_WALL_CLOCK_MIN_NS);
    s->pid = p->pid != INT64_MIN ? p->pid : -1;
    s->graph_launches = p->graph_launches;
    s->graph_captures = p->graph_captures;
    size_t nd = p->ndevices < TL_SESSION_MAX_DEVICES ? p->ndevices : TL_SESSION_MAX_DEVICES;
    s->devices = calloc(nd + 1, sizeof *s->devices);
    if (s->devices == NULL)
        return -1;
    for (size_t i = 0; i < nd; i++, s->ndevices++) {
        const tl_device_info *d = &p->devices[i];
        s->devices[i] = (tl_sdevice){ d->id, dupstr(d->name), d->total_memory > 0 ? d->total_memory : NAN };
        if (s->devices[i].name == NULL)
            return -1;
    }
    if (tl_session_context(s, p) != 0 || tl_session_diffusion(s, p) != 0 || tl_session_health(s, p) != 0 ||
        tl_session_growth(s, p) != 0)
        return -1;
    if (tl_session_kinfo(s, p) != 0 || telemetry(s, p) != 0)
        return -1;
    tl_session_compact(s);
    return 0;
}
