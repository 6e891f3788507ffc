/*
 * aggregate.c - session results into per-rank results and the across-rank
 * view (see aggregate.h). Everything here is a function of the set of
 * sessions: ingest settles their identity first (tl_sessions_settle sorts
 * them and decides which count), so the order they arrived in (one run, or
 * partials merged in any order) does not matter.
 */
#define _GNU_SOURCE
#include "aggregate.h"
#include "array.h"
#include "discover.h"
#include "metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_aggregate_init(tl_aggregate *a, const tl_analyze_options *opt)
{
    memset(a, 0, sizeof *a);
    if (opt)
        a->opt = *opt;
    else
        tl_analyze_options_init(&a->opt);
}

static void release_derived(tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks; i++) {
        free(a->ranks[i].sessions);
        free(a->ranks[i].steps);
        free(a->ranks[i].gpu.streams);
        tl_calltree_release(&a->ranks[i].own_calltree);
    }
    tl_calltree_release(&a->calltree);
    a->calltree_ranks = 0;
    free(a->ranks);
    a->ranks = NULL;
    a->nranks = 0;
    tl_name_table_release(&a->names);
    for (int i = 0; i < a->nstragglers; i++) {
        free(a->stragglers[i].kind);
        free(a->stragglers[i].summary);
        for (int k = 0; k < a->stragglers[i].nitems; k++)
            free(a->stragglers[i].items[k].name);
    }
    a->nstragglers = 0;
    for (int i = 0; i < a->nrecs; i++) {
        free(a->recs[i].message);
        free(a->recs[i].finding);
        free(a->recs[i].evidence);
    }
    a->nrecs = 0;
    for (int i = 0; i < a->nskips; i++)
        free(a->skips[i].why);
    a->nskips = 0;
    free(a->straggler_note);
    free(a->headline);
    a->straggler_note = a->headline = NULL;
    a->steps_compared = 0;
    for (size_t i = 0; i < a->nnotes; i++)
        free(a->notes[i]);
    free(a->notes);
    a->notes = NULL;
    a->nnotes = 0;
    a->nacross = 0;
    tl_drift_release(&a->drift);
    tl_waits_release(&a->waits);
    tl_collbw_release(&a->collbw);
    tl_shapes_release(&a->shapes);
    tl_aggregate_kinfo_release(a);
    free(a->facts);
    a->facts = NULL;
}

void tl_aggregate_release(tl_aggregate *a)
{
    release_derived(a);
    for (size_t i = 0; i < a->nsessions; i++)
        tl_session_release(&a->sessions[i]);
    free(a->sessions);
    tl_kernel_classes_free(a->own_kernel_classes);
    memset(a, 0, sizeof *a);
}

int tl_aggregate_add_session(tl_aggregate *a, tl_session *s)
{
    if (tl_array_grow(&a->sessions, a->nsessions, &a->sessions_cap, sizeof *a->sessions, 16) != 0)
        return -1;
    a->sessions[a->nsessions++] = *s;
    memset(s, 0, sizeof *s);
    return 0;
}

/* A read bound as partials record it: 0 for the default, whatever spelled it. */
static uint64_t bound(uint64_t v, uint64_t def)
{
    return v == def ? 0 : v > INT64_MAX ? INT64_MAX : v;
}

tl_partial tl_partial_options_of(const tl_analyze_options *opt)
{
    tl_limits lim;
    tl_limits_init(&lim);
    return (tl_partial){ .has_options = 1,
                         .whole_trace = opt->whole_trace,
                         .kernel_wait_ns = opt->kernel_wait_ns,
                         .kernel_classes = (char *)tl_kernel_classes_spec(opt->kernel_classes),
                         .max_names = (uint32_t)bound(opt->max_names, TL_PROFILE_DEFAULT_MAX_NAMES),
                         .max_events = bound(opt->max_events, TL_PROFILE_DEFAULT_MAX_EVENTS),
                         .max_input_bytes = bound(opt->max_input_bytes, lim.max_input_bytes) };
}

/* Option k of a partial's recorded options, as the user would have spelled it
 * (tl_partial_options_check's words); -1 past the last. */
static int option_words(const tl_partial *o, int k, char *buf, size_t n)
{
    switch (k) {
    case 0:
        snprintf(buf, n, o->whole_trace ? "--whole-trace" : "no --whole-trace");
        return 0;
    case 1:
        snprintf(buf, n, "a kernel-wait gap of %" PRId64 " ns", o->kernel_wait_ns);
        return 0;
    case 2:
        if (o->kernel_classes != NULL)
            snprintf(buf, n, "--kernel-class '%s'", o->kernel_classes);
        else
            snprintf(buf, n, "no --kernel-class");
        return 0;
    case 3:
        if (o->max_names)
            snprintf(buf, n, "--max-names %" PRIu32, o->max_names);
        else
            snprintf(buf, n, "the default --max-names (%u)", TL_PROFILE_DEFAULT_MAX_NAMES);
        return 0;
    case 4:
        if (o->max_events)
            snprintf(buf, n, "--max-events %" PRIu64, o->max_events);
        else
            snprintf(buf, n, "the default --max-events (%llu)", TL_PROFILE_DEFAULT_MAX_EVENTS);
        return 0;
    case 5:
        if (o->max_input_bytes)
            snprintf(buf, n, "--max-input-size %" PRIu64, o->max_input_bytes);
        else
            snprintf(buf, n, "the default --max-input-size (64G)");
        return 0;
    default:
        return -1;
    }
}

int tl_partial_options_check(const tl_partial *p, const tl_analyze_options *opt, const char *others, char *why,
                             size_t n)
{
    if (!p->has_options)
        return 0;
    tl_partial here = tl_partial_options_of(opt);
    /* every recorded option compared as the words that say it: two values
     * differ exactly when their words do */
    char mine[300], theirs[300];
    for (int k = 0; option_words(p, k, mine, sizeof mine) == 0; k++) {
        option_words(&here, k, theirs, sizeof theirs);
        if (strcmp(mine, theirs) != 0) {
            snprintf(why, n, "made with %s, %s with %s", mine, others, theirs);
            return -1;
        }
    }
    return 0;
}

int tl_aggregate_add_partial(tl_aggregate *a, tl_partial *p, char *err, size_t errlen)
{
    if (p->has_options) {
        char why[700];
        if (a->nsessions > 0 && tl_partial_options_check(p, &a->opt, "the inputs before it", why, sizeof why) != 0) {
            snprintf(err, errlen, "%s; not read", why);
            return -1;
        }
        if (a->nsessions == 0) {
            /* the aggregate takes the partial's options, and records them for the next merge */
            tl_kernel_classes *kc = NULL;
            if (p->kernel_classes != NULL &&
                ((kc = tl_kernel_classes_new()) == NULL || tl_kernel_classes_parse(kc, p->kernel_classes) != 0)) {
                if (kc == NULL)
                    snprintf(err, errlen, "out of memory");
                else
                    snprintf(err, errlen, "options.kernel_classes: '%s' is not GLOB=type; GLOB=type",
                             p->kernel_classes);
                tl_kernel_classes_free(kc);
                return -1;
            }
            tl_kernel_classes_free(a->own_kernel_classes);
            a->own_kernel_classes = kc;
            a->opt.kernel_classes = kc;
            a->opt.whole_trace = p->whole_trace;
            a->opt.kernel_wait_ns = p->kernel_wait_ns;
            a->opt.max_names = p->max_names;
            a->opt.max_events = p->max_events;
            a->opt.max_input_bytes = p->max_input_bytes;
        }
    }
    for (size_t i = 0; i < p->nsessions; i++) {
        if (p->sessions[i].id.path == NULL)
            continue;
        tl_spill_session(&p->sessions[i], a->opt.spill_after,
                         a->opt.spill_after_bytes); /* merge, tally-mpi's process 0 (spill.h) */
        if (tl_aggregate_add_session(a, &p->sessions[i]) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    tl_partial_release(p);
    return 0;
}

char *tl_vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *tl_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = tl_vformat(fmt, ap);
    va_end(ap);
    return s;
}

static void take_max(double *acc, double v)
{
    if (isfinite(v) && !(v <= *acc))
        *acc = v;
}

static int add_gpu(tl_gpu_breakdown *dst, const tl_gpu_breakdown *src)
{
    if (!src->present)
        return 0;
    if (!dst->present) {
        dst->whole_trace = src->whole_trace;
        dst->window_start = src->window_start;
        dst->window_end = src->window_end;
    }
    dst->present = 1;
    dst->whole_trace = dst->whole_trace && src->whole_trace;
    dst->steps_in_window = src->steps_in_window > INT32_MAX - dst->steps_in_window
                               ? INT32_MAX
                               : dst->steps_in_window + src->steps_in_window;
    dst->events += src->events;
    dst->kernel_time = tl_ns_add(dst->kernel_time, src->kernel_time);
    dst->busy = tl_ns_add(dst->busy, src->busy);
    dst->idle = tl_ns_add(dst->idle, src->idle);
    dst->compute = tl_ns_add(dst->compute, src->compute);
    dst->non_compute = tl_ns_add(dst->non_compute, src->non_compute);
    dst->comm = tl_ns_add(dst->comm, src->comm);
    dst->comm_compute = tl_ns_add(dst->comm_compute, src->comm_compute);
    for (int m = 0; m < 8; m++)
        dst->by_mask[m] = tl_ns_add(dst->by_mask[m], src->by_mask[m]);
    dst->blocked_idle = tl_ns_add(dst->blocked_idle, src->blocked_idle);
    if (src->devices > dst->devices)
        dst->devices = src->devices;
    /* the host gaps' causes: known only when every session knows them */
    int64_t *d4[] = { &dst->host_gap_ns, &dst->host_short_ns, &dst->host_coll_ns, &dst->host_load_ns,
                      &dst->queued_idle };
    const int64_t s4[] = { src->host_gap_ns, src->host_short_ns, src->host_coll_ns, src->host_load_ns,
                           src->queued_idle };
    for (int k = 0; k < 5; k++)
        *d4[k] = *d4[k] < 0 || s4[k] < 0 ? -1 : tl_ns_add(*d4[k], s4[k]);
    if (src->blocking_call_ns > dst->blocking_call_ns) {
        dst->blocking_call_ns = src->blocking_call_ns;
        memcpy(dst->blocking_call, src->blocking_call, sizeof dst->blocking_call);
    }
    /* The streams are appended here, then sorted and summed once per rank
     * (merge_streams): a search per stream and a realloc by one were
     * quadratic (100,000 streams took 21 s). The block grows to the next
     * power of two, so it needs no capacity field. */
    if (src->nstreams == 0)
        return 0;
    size_t n = dst->nstreams, want = n + src->nstreams;
    if (want < n)
        return -1;
    size_t cap = n ? 16 : 0; /* what the last growth allocated: a power of two, at least 16 and n */
    while (cap && cap < n)
        cap <<= 1;
    if (want > cap) {
        size_t ncap = 16;
        while (ncap < want && ncap <= SIZE_MAX / 2 / sizeof *dst->streams)
            ncap <<= 1;
        if (ncap < want)
            return -1;
        tl_stream_idle *x = realloc(dst->streams, ncap * sizeof *x);
        if (x == NULL)
            return -1; /* the caller fails the analysis: never a stream silently dropped */
        dst->streams = x;
    }
    memcpy(dst->streams + n, src->streams, src->nstreams * sizeof *src->streams);
    dst->nstreams = want;
    return 0;
}

/* Sum stream s into d (the same device and stream). */
static void stream_add(tl_stream_idle *d, const tl_stream_idle *s)
{
    d->host_wait = tl_ns_add(d->host_wait, s->host_wait);
    d->kernel_wait = tl_ns_add(d->kernel_wait, s->kernel_wait);
    d->other = tl_ns_add(d->other, s->other);
    d->gaps += s->gaps;
    d->host_gaps += s->host_gaps;
    d->host_part = d->host_part < 0 || s->host_part < 0 ? -1 : tl_ns_add(d->host_part, s->host_part);
    d->comm_busy = d->comm_busy < 0 || s->comm_busy < 0 ? -1 : tl_ns_add(d->comm_busy, s->comm_busy);
    d->busy = tl_ns_add(d->busy, s->busy);
}

static int by_stream(const void *x, const void *y)
{
    const tl_stream_idle *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* A rank's streams, appended session by session, sorted by (device,
 * stream) with each stream's sessions summed into one row: O(n log n). */
static void merge_streams(tl_gpu_breakdown *g)
{
    if (g->nstreams < 2)
        return;
    qsort(g->streams, g->nstreams, sizeof *g->streams, by_stream);
    size_t out = 0;
    for (size_t i = 1; i < g->nstreams; i++) {
        if (by_stream(&g->streams[out], &g->streams[i]) == 0)
            stream_add(&g->streams[out], &g->streams[i]);
        else
            g->streams[++out] = g->streams[i];
    }
    g->nstreams = out + 1;
}

/* Step statistics of a rank: its steps, else its main loop's summary. */
static void rank_steps(tl_aggregate *a, tl_rank_result *r)
{
    r->step_mean = r->step_median = r->step_min = r->step_max = r->step_std = r->step_spread = NAN;
    r->compute_per_step = NAN;
    r->step_count = r->nsteps;
    r->steps_summarized = 0;
    if (r->nsteps > 0) {
        double *v = malloc(r->nsteps * sizeof *v);
        double *c = malloc(r->nsteps * sizeof *c);
        if (v == NULL || c == NULL) {
            free(v);
            free(c);
            return;
        }
        double sum = 0;
        size_t nc = 0;
        for (size_t i = 0; i < r->nsteps; i++) {
            v[i] = (double)r->steps[i].dur_ns;
            sum += v[i];
            if (r->steps[i].compute_ns >= 0)
                c[nc++] = (double)r->steps[i].compute_ns;
        }
        r->step_mean = sum / (double)r->nsteps;
        double ss = 0;
        for (size_t i = 0; i < r->nsteps; i++)
            ss += (v[i] - r->step_mean) * (v[i] - r->step_mean);
        r->step_std = r->nsteps > 1 ? sqrt(ss / (double)(r->nsteps - 1)) : 0;
        r->step_median = tl_median_sort(v, r->nsteps);
        r->step_min = v[0];
        r->step_max = v[r->nsteps - 1];
        if (nc)
            r->compute_per_step = tl_median_sort(c, nc);
        free(v);
        free(c);
    } else {
        /* A report with a loop summary but no samples (FramePack). */
        const tl_sname *loop = NULL;
        for (size_t k = 0; k < r->nsessions; k++) {
            tl_session *s = &a->sessions[r->sessions[k]];
            tl_spill_hold(s); /* names: the bulk (spill.h), dropped below */
            for (size_t i = 0; i < s->nnames; i++)
                if (s->names[i].group == TL_GROUP_ITERATIONS && (loop == NULL || s->names[i].d.total > loop->d.total))
                    loop = &s->names[i];
        }
        if (loop != NULL && loop->d.count > 0) {
            r->step_count = loop->d.count;
            r->steps_summarized = 1;
            r->step_mean = loop->d.mean;
            r->step_min = (double)loop->d.min;
            r->step_max = (double)loop->d.max;
            r->step_median = loop->exact ? tl_dur_stat_quantile(&loop->d, 0.5) : loop->median_ns;
            r->step_std = loop->exact ? tl_dur_stat_std(&loop->d) : loop->std_ns;
        }
        for (size_t k = 0; k < r->nsessions; k++)
            tl_spill_drop(&a->sessions[r->sessions[k]]);
        if (!r->steps_summarized)
            return;
    }
    if (isfinite(r->step_median) && r->step_median > 0)
        r->step_spread = (r->step_max - r->step_min) / r->step_median;
}

static int build_ranks(tl_aggregate *a)
{
    size_t usable = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        usable += tl_session_counts(&a->sessions[i]);
    a->ranks = calloc(usable ? usable : 1, sizeof *a->ranks);
    if (a->ranks == NULL)
        return -1;
    for (size_t i = 0; i < a->nsessions; i++) {
        tl_session *s = &a->sessions[i];
        if (!tl_session_counts(s))
            continue;
        if (a->nranks == 0 || a->ranks[a->nranks - 1].rank != s->id.rank) {
            tl_rank_result *r = &a->ranks[a->nranks++];
            r->rank = s->id.rank;
            r->peak_allocated = r->peak_reserved = r->device_total = r->peak_rss = r->gpu_util_mean = NAN;
            r->peak_device_used = NAN;
            r->span_ns = 0;
            tl_rank_telemetry_init(&r->tel);
            tl_rank_diffusion_init(&r->diff);
        }
        tl_rank_result *r = &a->ranks[a->nranks - 1];
        /* Keep each block as soon as its realloc succeeds: when one failed after
         * the other had moved its block, the old pointer was left in r and
         * release_derived freed it a second time. */
        size_t *x = realloc(r->sessions, (r->nsessions + 1) * sizeof *x);
        if (x == NULL)
            return -1;
        r->sessions = x;
        tl_sstep *st = realloc(r->steps, (r->nsteps + s->nsteps + 1) * sizeof *st);
        if (st == NULL)
            return -1;
        r->steps = st;
        r->sessions[r->nsessions++] = i;
        if (s->nsteps > 0) /* s->steps is NULL without steps: memcpy from NULL is undefined (UBSan) */
            memcpy(r->steps + r->nsteps, s->steps, s->nsteps * sizeof *st);
        r->nsteps += s->nsteps;
        if (s->id.world_size > r->world_size)
            r->world_size = s->id.world_size;
        if (add_gpu(&r->gpu, &s->gpu) != 0)
            return -1;
        take_max(&r->peak_allocated, s->peak_allocated);
        take_max(&r->peak_reserved, s->peak_reserved);
        take_max(&r->device_total, s->device_total);
        take_max(&r->peak_rss, s->peak_rss);
        take_max(&r->peak_device_used, s->peak_device_used);
        take_max(&r->gpu_util_mean, s->gpu_util_mean);
        tl_rank_telemetry_add(&r->tel, s->series, s->nseries);
        tl_rank_diffusion_add(&r->diff, &s->diff);
        if (s->span_ns > 0)
            r->span_ns = tl_ns_add(r->span_ns, s->span_ns);
    }
    for (size_t i = 0; i < a->nranks; i++) {
        tl_rank_result *r = &a->ranks[i];
        merge_streams(&r->gpu);
        rank_steps(a, r);
        tl_rank_telemetry_finish(&r->tel);
        tl_rank_diffusion_finish(&r->diff);
    }
    return 0;
}

void tl_aggregate_hold_rank(const tl_aggregate *a, const tl_rank_result *r)
{
    for (size_t k = 0; k < r->nsessions; k++)
        tl_spill_hold(&a->sessions[r->sessions[k]]);
}

void tl_aggregate_drop_rank(const tl_aggregate *a, const tl_rank_result *r)
{
    for (size_t k = 0; k < r->nsessions; k++)
        tl_spill_drop(&a->sessions[r->sessions[k]]);
}

/* A session's names and kernels into the per-name table. */
static int add_names(tl_aggregate *a, const tl_session *s)
{
    int rc = 0;
    /* Kernels come from the GPU window, so they add up to the breakdown;
     * the whole-trace kernel statistics are used only without GPU analysis. */
    int windowed = s->gpu.present;
    for (size_t k = 0; rc == 0 && k < s->nnames; k++)
        if (!(windowed && s->names[k].group == TL_GROUP_KERNELS))
            rc = tl_name_table_add_nested(&a->names, s->id.rank, s->names[k].group, s->names[k].name, &s->names[k].d,
                                          s->names[k].exact, s->names[k].incl_ns, s->names[k].self_ns);
    for (size_t k = 0; rc == 0 && windowed && k < s->nkernels; k++)
        rc = tl_name_table_add(&a->names, s->id.rank, TL_GROUP_KERNELS, s->kernels[k].name, &s->kernels[k].d, 1);
    return rc;
}

/* The one pass over the sessions' bulk (spill.h): rank by rank, each rank's
 * sessions held while their names and kernels go into the per-name table,
 * their kernels' launch details and types into the aggregate's, their call trees into
 * the ranks' and the merged tree, and what the rules read of them into
 * a->facts; then dropped. The ranks hold the counted sessions in order, so
 * this is the sessions' order, as every table here wants. */
static int bulk_pass(tl_aggregate *a)
{
    int *ranks = malloc((a->nranks + 1) * sizeof *ranks);
    a->facts = calloc(a->nsessions + 1, sizeof *a->facts);
    if (ranks == NULL || a->facts == NULL) {
        free(ranks);
        return -1;
    }
    for (size_t i = 0; i < a->nranks; i++)
        ranks[i] = a->ranks[i].rank;
    int rc = tl_name_table_begin(&a->names, ranks, (int)a->nranks);
    free(ranks);
    tl_calltrees ct;
    if (rc != 0 || tl_calltrees_begin(&ct) != 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < a->nranks; i++) {
        tl_rank_result *r = &a->ranks[i];
        tl_aggregate_hold_rank(a, r);
        for (size_t k = 0; rc == 0 && k < r->nsessions; k++) {
            const tl_session *s = &a->sessions[r->sessions[k]];
            tl_rules_session_facts(s, &a->facts[r->sessions[k]]);
            rc = add_names(a, s);
            if (rc == 0)
                rc = tl_aggregate_kinfo_add(a, s);
        }
        if (rc == 0)
            rc = tl_calltrees_add_rank(a, &ct, r);
        tl_aggregate_drop_rank(a, r);
    }
    tl_calltrees_end(a, &ct);
    return rc == 0 ? tl_name_table_end(&a->names) : rc;
}

double tl_pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Add the across-rank summary of one metric (NaN values are skipped; a
 * metric no rank has gets no row). */
static void across_values(tl_aggregate *a, const tl_metric *metric, const double *vals)
{
    if (a->nacross == TL_MAX_ACROSS)
        return;
    double *scratch = malloc((a->nranks + 1) * sizeof *scratch);
    int *ranks = malloc((a->nranks + 1) * sizeof *ranks);
    if (scratch != NULL && ranks != NULL) {
        for (size_t i = 0; i < a->nranks; i++)
            ranks[i] = a->ranks[i].rank;
        tl_spread sp;
        tl_spread_of(&sp, vals, ranks, a->nranks, scratch);
        if (sp.n > 0)
            a->across[a->nacross++] =
                (tl_across){ metric,    metric->name, sp.n,         sp.min,      sp.max,     sp.mean,
                             sp.median, sp.std,       sp.imbalance, sp.min_rank, sp.max_rank };
    }
    free(scratch);
    free(ranks);
}

double tl_rank_peak_device_pct(const tl_rank_result *r)
{
    double peak = NAN;
    take_max(&peak, r->peak_allocated);
    take_max(&peak, r->peak_reserved);
    take_max(&peak, r->peak_device_used);
    if (!isfinite(peak) || !isfinite(r->device_total) || r->device_total <= 0)
        return NAN;
    return 100 * peak / r->device_total;
}

/* One across-rank row per entry of the metrics registry (metrics.h), in its order. */
static void across_all(tl_aggregate *a)
{
    size_t n;
    const tl_metric *m = tl_metrics(&n);
    double *v = malloc((a->nranks + 1) * sizeof *v);
    if (v == NULL)
        return;
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < a->nranks; i++)
            v[i] = m[k].get(&a->ranks[i], m[k].arg);
        across_values(a, &m[k], v);
    }
    free(v);
}

const tl_across *tl_aggregate_across(const tl_aggregate *a, const char *metric)
{
    for (int i = 0; i < a->nacross; i++)
        if (strcmp(a->across[i].metric, metric) == 0)
            return &a->across[i];
    return NULL;
}

int tl_aggregate_finish(tl_aggregate *a)
{
    release_derived(a);
    /* Identity first: which sessions count, in which order (session.h). */
    tl_settle_hooks hooks = { tl_spill_keep_whole, NULL };
    if (tl_sessions_settle(a->sessions, a->nsessions, a->opt.sessions_across_runs, &a->notes, &a->nnotes, &hooks) != 0)
        return -1;
    if (build_ranks(a) != 0 || bulk_pass(a) != 0)
        return -1;
    across_all(a);
    if (tl_drift_compute(&a->drift, a) != 0)
        return -1;
    if (tl_waits_compute(a) != 0)
        return -1;
    if (tl_collbw_compute(a) != 0)
        return -1;
    if (tl_shapes_compute(a) != 0)
        return -1;
    tl_find_stragglers(a);
    tl_aggregate_stepcats(a);
    tl_apply_rules(a);
    return 0;
}
