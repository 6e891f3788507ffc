/*
 * aggregate_json.c - the aggregate as JSON (schema/tally-aggregate.schema.json),
 * and the partial aggregate: the list of session results, written so that
 * reading it back gives the same sessions bit for bit (integers as integers,
 * doubles in their shortest round-trip form, histograms as sparse buckets).
 */
#define _GNU_SOURCE
#include "aggregate_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_PER_RANK 10
#define TOP_NAMES 100

static void kv_num(tl_json *j, const char *k, double v)
{
    tl_json_key(j, k);
    if (isfinite(v))
        tl_json_double(j, v);
    else
        tl_json_null(j);
}

static void kv_us(tl_json *j, const char *k, int64_t ns)
{
    tl_json_key(j, k);
    tl_json_fixed(j, (double)ns / 1000.0, 3);
}

static void kv_pct(tl_json *j, const char *k, double v)
{
    tl_json_key(j, k);
    if (isfinite(v))
        tl_json_fixed(j, v, 3);
    else
        tl_json_null(j);
}

/* ---- the aggregate ------------------------------------------------------- */

static void write_gpu(tl_json *j, const tl_gpu_breakdown *g)
{
    if (!g->present) {
        tl_json_null(j);
        return;
    }
    tl_json_object_begin(j);
    tl_json_key(j, "window");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "kind", g->whole_trace ? "whole-trace" : "profiler-steps");
    tl_json_kv_int(j, "steps", g->steps_in_window);
    tl_json_object_end(j);
    tl_json_kv_uint(j, "events", g->events);
    kv_us(j, "kernel_time_us", g->kernel_time);
    kv_us(j, "idle_us", g->idle);
    kv_us(j, "compute_us", g->compute);
    kv_us(j, "non_compute_us", g->non_compute);
    kv_pct(j, "idle_pct", tl_pct(g->idle, g->kernel_time));
    kv_pct(j, "compute_pct", tl_pct(g->compute, g->kernel_time));
    kv_pct(j, "non_compute_pct", tl_pct(g->non_compute, g->kernel_time));
    kv_us(j, "comm_us", g->comm);
    kv_pct(j, "comm_pct", tl_pct(g->comm, g->kernel_time));
    kv_pct(j, "comm_comp_overlap_pct", g->comm > 0 ? tl_pct(g->comm_compute, g->comm) : 0.0);
    tl_json_key(j, "kernel_types_us");
    tl_json_object_begin(j);
    static const char *mask_names[8] = { NULL, "compute", "communication", "compute+communication", "memory",
                                         "compute+memory", "communication+memory", "compute+communication+memory" };
    for (int m = 1; m < 8; m++)
        kv_us(j, mask_names[m], g->by_mask[m]);
    tl_json_object_end(j);
    tl_json_key(j, "idle_by_stream");
    tl_json_array_begin(j);
    for (size_t s = 0; s < g->nstreams; s++) {
        const tl_stream_idle *st = &g->streams[s];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "device", st->device);
        tl_json_kv_int(j, "stream", st->stream);
        kv_us(j, "host_wait_us", st->host_wait);
        kv_us(j, "kernel_wait_us", st->kernel_wait);
        kv_us(j, "other_us", st->other);
        tl_json_kv_uint(j, "gaps", st->gaps);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

static void write_steps(tl_json *j, const tl_rank_result *r)
{
    tl_json_object_begin(j);
    tl_json_kv_uint(j, "count", r->nsteps);
    kv_num(j, "mean_ns", r->step_mean);
    kv_num(j, "median_ns", r->step_median);
    kv_num(j, "min_ns", r->step_min);
    kv_num(j, "max_ns", r->step_max);
    kv_num(j, "std_ns", r->step_std);
    kv_num(j, "spread", r->step_spread);
    kv_num(j, "it_per_s", isfinite(r->step_mean) && r->step_mean > 0 ? 1e9 / r->step_mean : NAN);
    kv_num(j, "compute_per_step_ns", r->compute_per_step);
    tl_json_key(j, "durations_ns");
    tl_json_array_begin(j);
    for (size_t i = 0; i < r->nsteps; i++)
        tl_json_int(j, r->steps[i].dur_ns);
    tl_json_array_end(j);
    tl_json_object_end(j);
}

typedef struct rank_sort {
    const tl_name_table *t;
    size_t ri;
} rank_sort;

static int by_rank_total(const void *x, const void *y, void *ctx)
{
    const rank_sort *c = ctx;
    const tl_name_row *a = &c->t->rows[*(const size_t *)x], *b = &c->t->rows[*(const size_t *)y];
    double va = a->rank_total[c->ri], vb = b->rank_total[c->ri];
    if (va != vb)
        return va < vb ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* This rank's ten largest names of each group, by its own totals. */
static void write_rank_top(tl_json *j, const tl_aggregate *a, size_t ri)
{
    static const int groups[] = { TL_GROUP_SECTIONS, TL_GROUP_ITERATIONS, TL_GROUP_OPS, TL_GROUP_KERNELS };
    size_t *idx = malloc((a->names.n ? a->names.n : 1) * sizeof *idx);
    rank_sort ctx = { &a->names, ri };
    tl_json_object_begin(j);
    for (size_t g = 0; idx && g < sizeof groups / sizeof groups[0]; g++) {
        size_t n = 0;
        for (size_t k = 0; k < a->names.n; k++)
            if (a->names.rows[k].group == groups[g] && a->names.rows[k].rank_count[ri] > 0)
                idx[n++] = k;
        qsort_r(idx, n, sizeof *idx, by_rank_total, &ctx);
        tl_json_key(j, tl_group_name(groups[g]));
        tl_json_array_begin(j);
        for (size_t k = 0; k < n && k < TOP_PER_RANK; k++) {
            const tl_name_row *row = &a->names.rows[idx[k]];
            tl_json_object_begin(j);
            tl_json_kv_string(j, "name", row->name);
            tl_json_kv_uint(j, "count", row->rank_count[ri]);
            tl_json_kv_double(j, "total_ns", row->rank_total[ri]);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
    }
    tl_json_object_end(j);
    free(idx);
}

static void write_ranks(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "rank", r->rank);
        tl_json_key(j, "world_size");
        r->world_size > 0 ? tl_json_int(j, r->world_size) : tl_json_null(j);
        tl_json_kv_bool(j, "straggler", r->straggler);
        tl_json_key(j, "sessions");
        tl_json_array_begin(j);
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_session *s = &a->sessions[r->sessions[k]];
            tl_json_object_begin(j);
            tl_json_kv_int(j, "session", (int64_t)k);
            tl_json_kv_string(j, "path", s->path);
            tl_json_kv_string(j, "format", tl_format_name(s->format));
            tl_json_key(j, "start_ns");
            s->start_ns != INT64_MIN ? tl_json_int(j, s->start_ns) : tl_json_null(j);
            tl_json_key(j, "span_ns");
            s->span_ns >= 0 ? tl_json_int(j, s->span_ns) : tl_json_null(j);
            tl_json_kv_uint(j, "steps", s->nsteps);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
        tl_json_key(j, "span_ns");
        r->span_ns > 0 ? tl_json_int(j, r->span_ns) : tl_json_null(j);
        tl_json_key(j, "steps");
        write_steps(j, r);
        tl_json_key(j, "gpu");
        write_gpu(j, &r->gpu);
        tl_json_key(j, "memory");
        tl_json_object_begin(j);
        kv_num(j, "peak_allocated_bytes", r->peak_allocated);
        kv_num(j, "peak_reserved_bytes", r->peak_reserved);
        kv_num(j, "device_total_bytes", r->device_total);
        kv_pct(j, "peak_device_pct", tl_rank_peak_device_pct(r));
        kv_num(j, "fragmentation_ratio", isfinite(r->peak_reserved) && isfinite(r->peak_allocated) && r->peak_allocated > 0
                                             ? r->peak_reserved / r->peak_allocated
                                             : NAN);
        kv_num(j, "peak_rss_bytes", r->peak_rss);
        kv_num(j, "gpu_utilization_mean_pct", r->gpu_util_mean);
        tl_json_object_end(j);
        tl_json_key(j, "top");
        write_rank_top(j, a, i);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static void write_across(tl_json *j, const tl_aggregate *a)
{
    tl_json_object_begin(j);
    for (int i = 0; i < a->nacross; i++) {
        const tl_across *x = &a->across[i];
        tl_json_key(j, x->metric);
        tl_json_object_begin(j);
        tl_json_kv_int(j, "ranks", x->n);
        kv_num(j, "min", x->min);
        kv_num(j, "max", x->max);
        kv_num(j, "mean", x->mean);
        kv_num(j, "median", x->median);
        kv_num(j, "std", x->std);
        tl_json_kv_int(j, "min_rank", x->min_rank);
        tl_json_kv_int(j, "max_rank", x->max_rank);
        kv_num(j, "imbalance", x->imbalance);
        tl_json_object_end(j);
    }
    tl_json_object_end(j);
}

static void write_names(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (int g = 0; g < TL_GROUP_COUNT; g++) {
        size_t n;
        size_t *idx = tl_name_table_top(&a->names, g, &n);
        for (size_t k = 0; idx && k < n && k < TOP_NAMES; k++) {
            const tl_name_row *r = &a->names.rows[idx[k]];
            tl_json_object_begin(j);
            tl_json_kv_string(j, "group", tl_group_name(g));
            tl_json_kv_string(j, "name", r->name);
            tl_json_kv_uint(j, "count", r->all.count);
            tl_json_kv_uint(j, "total_ns", r->all.total);
            kv_num(j, "inclusive_ns", r->incl_total);
            kv_num(j, "self_ns", r->self_total >= 0 ? r->self_total : NAN);
            kv_num(j, "mean_ns", r->all.mean);
            tl_json_kv_uint(j, "min_ns", r->all.min);
            tl_json_kv_uint(j, "max_ns", r->all.max);
            kv_num(j, "median_ns", r->exact ? tl_dur_stat_quantile(&r->all, 0.5) : NAN);
            kv_num(j, "p95_ns", r->exact ? tl_dur_stat_quantile(&r->all, 0.95) : NAN);
            kv_num(j, "std_ns", r->exact ? tl_dur_stat_std(&r->all) : NAN);
            tl_json_key(j, "across_ranks");
            tl_json_object_begin(j);
            tl_json_kv_int(j, "ranks", r->nranks_with);
            kv_num(j, "min_ns", r->rank_min);
            kv_num(j, "max_ns", r->rank_max);
            kv_num(j, "mean_ns", r->rank_mean);
            kv_num(j, "median_ns", r->rank_median);
            kv_num(j, "std_ns", r->rank_std);
            tl_json_kv_int(j, "min_rank", r->rank_of_min);
            tl_json_kv_int(j, "max_rank", r->rank_of_max);
            kv_num(j, "imbalance", r->imbalance);
            tl_json_object_end(j);
            tl_json_object_end(j);
        }
        free(idx);
    }
    tl_json_array_end(j);
}

static void write_stragglers(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (int i = 0; i < a->nstragglers; i++) {
        const tl_straggler *s = &a->stragglers[i];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "rank", s->rank);
        tl_json_kv_string(j, "kind", s->kind);
        tl_json_kv_string(j, "severity", s->severity ? s->severity : "warning");
        tl_json_kv_int(j, "compared", s->units);
        tl_json_kv_int(j, "slower", s->slower);
        tl_json_key(j, "evidence");
        tl_json_object_begin(j);
        tl_json_kv_string(j, "summary", s->summary);
        kv_num(j, "value", s->value);
        kv_num(j, "others_median", s->others_median);
        kv_num(j, "delta_pct", s->delta_pct);
        tl_json_key(j, "names");
        tl_json_array_begin(j);
        for (int k = 0; k < s->nitems; k++) {
            tl_json_object_begin(j);
            tl_json_kv_string(j, "name", s->items[k].name);
            kv_num(j, "delta_per_step_ns", s->items[k].delta_ns);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
        tl_json_object_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static void write_recs(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (int i = 0; i < a->nrecs; i++) {
        const tl_recommendation *r = &a->recs[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "id", r->id);
        tl_json_kv_string(j, "severity", r->severity);
        tl_json_kv_string(j, "message", r->message);
        tl_json_kv_string(j, "finding", r->finding ? r->finding : "");
        tl_json_kv_string(j, "evidence", r->evidence);
        tl_json_key(j, "rank");
        r->rank >= 0 ? tl_json_int(j, r->rank) : tl_json_null(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static const char *rank_source_word(int s)
{
    return s == TL_RANK_CONTENT ? "content" : s == TL_RANK_NAME ? "name" : s == TL_RANK_ORDER ? "order" : "unknown";
}

static void write_inputs(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "path", s->path);
        tl_json_kv_string(j, "format", s->format != TL_FMT_UNKNOWN ? tl_format_name(s->format) : "not-a-profile");
        tl_json_key(j, "rank");
        s->rank >= 0 ? tl_json_int(j, s->rank) : tl_json_null(j);
        tl_json_key(j, "rank_source");
        s->rank >= 0 ? tl_json_string(j, rank_source_word(s->rank_source)) : tl_json_null(j);
        tl_json_kv_string(j, "rank_detail", s->rank_detail);
        tl_json_kv_int(j, "session", s->session);
        tl_json_kv_bool(j, "truncated", s->truncated);
        tl_json_key(j, "companion_of");
        s->companion_of ? tl_json_string(j, s->companion_of) : tl_json_null(j);
        tl_json_key(j, "warnings");
        tl_json_array_begin(j);
        for (size_t w = 0; w < s->nwarnings; w++)
            tl_json_string(j, s->warnings[w]);
        tl_json_array_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static void write_options(tl_json *j, const tl_analyze_options *o)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "window", o->whole_trace ? "whole-trace" : "profiler-steps");
    tl_json_kv_int(j, "kernel_wait_ns", o->kernel_wait_ns);
    tl_json_object_end(j);
}

void tl_aggregate_write(tl_json *j, const tl_aggregate *a, const char *producer)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-aggregate");
    tl_json_kv_int(j, "version", 1);
    tl_json_kv_string(j, "producer", producer);
    tl_json_key(j, "options");
    write_options(j, &a->opt);
    tl_json_kv_uint(j, "world_size_seen", a->nranks);
    tl_json_key(j, "ranks");
    write_ranks(j, a);
    tl_json_key(j, "across_ranks");
    write_across(j, a);
    tl_json_key(j, "names");
    write_names(j, a);
    tl_json_key(j, "stragglers");
    write_stragglers(j, a);
    tl_json_key(j, "recommendations");
    write_recs(j, a);
    tl_json_key(j, "headline");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "text", a->headline ? a->headline : "");
    tl_json_kv_string(j, "severity", a->headline_severity ? a->headline_severity : "ok");
    tl_json_object_end(j);
    tl_json_key(j, "straggler_note");
    a->straggler_note ? tl_json_string(j, a->straggler_note) : tl_json_null(j);
    tl_json_key(j, "rules_not_applied");
    tl_json_array_begin(j);
    for (int i = 0; i < a->nskips; i++) {
        tl_json_object_begin(j);
        tl_json_kv_string(j, "id", a->skips[i].id);
        tl_json_kv_string(j, "why", a->skips[i].why);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "notes");
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nnotes; i++)
        tl_json_string(j, a->notes[i]);
    tl_json_array_end(j);
    tl_json_key(j, "inputs");
    write_inputs(j, a);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
}

/* ---- the partial: sessions, exactly --------------------------------------- */

static void write_stat(tl_json *j, const tl_dur_stat *d)
{
    tl_json_object_begin(j);
    tl_json_kv_uint(j, "count", d->count);
    tl_json_kv_uint(j, "total", d->total);
    tl_json_kv_uint(j, "min", d->min);
    tl_json_kv_uint(j, "max", d->max);
    tl_json_kv_double(j, "mean", d->mean);
    tl_json_kv_double(j, "m2", d->m2);
    tl_json_key(j, "hist"); /* sparse: [bucket, count] with bucket = page * 64 + slot */
    tl_json_array_begin(j);
    for (unsigned p = 0; p < TL_HIST_PAGES; p++) {
        if (d->hist.pages[p] == NULL)
            continue;
        for (unsigned s = 0; s < TL_HIST_SUB; s++) {
            if (d->hist.pages[p][s] == 0)
                continue;
            tl_json_array_begin(j);
            tl_json_uint(j, p * TL_HIST_SUB + s);
            tl_json_uint(j, d->hist.pages[p][s]);
            tl_json_array_end(j);
        }
    }
    tl_json_array_end(j);
    tl_json_key(j, "samples");
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < d->nsamples; i++)
        tl_json_uint(j, d->samples[i]);
    tl_json_array_end(j);
    tl_json_kv_uint(j, "samples_dropped", d->samples_dropped);
    tl_json_object_end(j);
}

/* Lanes with their bins: a kind that is all zero is written as []. Floats
 * print in a form that reads back to the same float. */
static void write_timeline(tl_json *j, const tl_timeline *t)
{
    tl_json_key(j, "timeline");
    tl_json_object_begin(j);
    tl_json_kv_int(j, "start_ns", t->start_ns);
    tl_json_kv_int(j, "end_ns", t->end_ns);
    tl_json_key(j, "lanes");
    tl_json_array_begin(j);
    for (size_t k = 0; k < t->nlanes; k++) {
        const tl_lane *l = &t->lanes[k];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "kind", l->kind);
        tl_json_kv_int(j, "a", l->a);
        tl_json_kv_int(j, "b", l->b);
        tl_json_kv_string(j, "label", l->label);
        tl_json_key(j, "busy");
        tl_json_array_begin(j);
        for (int kt = 0; kt < TL_KT_COUNT; kt++) {
            int any = 0;
            for (int i = 0; i < TL_TIMELINE_BINS && !any; i++)
                any = l->busy[kt][i] != 0.0f;
            tl_json_array_begin(j);
            for (int i = 0; any && i < TL_TIMELINE_BINS; i++)
                tl_json_double(j, (double)l->busy[kt][i]);
            tl_json_array_end(j);
        }
        tl_json_array_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

static void write_session(tl_json *j, const tl_session *s)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "path", s->path);
    tl_json_kv_int(j, "format", s->format);
    tl_json_kv_int(j, "rank", s->rank);
    tl_json_kv_int(j, "world_size", s->world_size);
    tl_json_kv_int(j, "rank_source", s->rank_source);
    tl_json_kv_string(j, "rank_detail", s->rank_detail);
    tl_json_kv_int(j, "start_ns", s->start_ns);
    tl_json_kv_int(j, "span_ns", s->span_ns);
    tl_json_kv_int(j, "truncated", s->truncated);
    tl_json_key(j, "companion_of");
    s->companion_of ? tl_json_string(j, s->companion_of) : tl_json_null(j);
    tl_json_key(j, "warnings");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nwarnings; i++)
        tl_json_string(j, s->warnings[i]);
    tl_json_array_end(j);
    tl_json_key(j, "names");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nnames; i++) {
        const tl_sname *n = &s->names[i];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "group", n->group);
        tl_json_kv_string(j, "name", n->name);
        tl_json_kv_int(j, "exact", n->exact);
        kv_num(j, "median_ns", n->median_ns);
        kv_num(j, "p95_ns", n->p95_ns);
        kv_num(j, "std_ns", n->std_ns);
        tl_json_kv_int(j, "incl_ns", n->incl_ns);
        tl_json_kv_int(j, "self_ns", n->self_ns);
        tl_json_key(j, "stat");
        write_stat(j, &n->d);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "kernels");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nkernels; i++) {
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", s->kernels[i].name);
        tl_json_kv_int(j, "type", s->kernels[i].type);
        tl_json_key(j, "stat");
        write_stat(j, &s->kernels[i].d);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "steps");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nsteps; i++) {
        tl_json_array_begin(j);
        tl_json_int(j, s->steps[i].number);
        tl_json_int(j, s->steps[i].dur_ns);
        tl_json_int(j, s->steps[i].compute_ns);
        tl_json_int(j, s->steps[i].ts_ns);
        tl_json_int(j, s->steps[i].partial);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    const tl_gpu_breakdown *g = &s->gpu;
    tl_json_key(j, "gpu");
    tl_json_object_begin(j);
    tl_json_kv_int(j, "present", g->present);
    tl_json_kv_int(j, "whole_trace", g->whole_trace);
    tl_json_kv_int(j, "steps_in_window", g->steps_in_window);
    tl_json_kv_int(j, "window_start", g->window_start);
    tl_json_kv_int(j, "window_end", g->window_end);
    tl_json_kv_uint(j, "events", g->events);
    tl_json_kv_int(j, "kernel_time", g->kernel_time);
    tl_json_kv_int(j, "busy", g->busy);
    tl_json_kv_int(j, "idle", g->idle);
    tl_json_kv_int(j, "compute", g->compute);
    tl_json_kv_int(j, "non_compute", g->non_compute);
    tl_json_kv_int(j, "comm", g->comm);
    tl_json_kv_int(j, "comm_compute", g->comm_compute);
    tl_json_key(j, "by_mask");
    tl_json_array_begin(j);
    for (int m = 0; m < 8; m++)
        tl_json_int(j, g->by_mask[m]);
    tl_json_array_end(j);
    tl_json_key(j, "streams");
    tl_json_array_begin(j);
    for (size_t i = 0; i < g->nstreams; i++) {
        const tl_stream_idle *st = &g->streams[i];
        tl_json_array_begin(j);
        tl_json_int(j, st->device);
        tl_json_int(j, st->stream);
        tl_json_int(j, st->host_wait);
        tl_json_int(j, st->kernel_wait);
        tl_json_int(j, st->other);
        tl_json_uint(j, st->gaps);
        tl_json_int(j, st->busy);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_kv_int(j, "blocked_idle", g->blocked_idle);
    tl_json_kv_string(j, "blocking_call", g->blocking_call);
    tl_json_kv_int(j, "blocking_call_ns", g->blocking_call_ns);
    tl_json_object_end(j);
    tl_json_key(j, "collectives");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->ncolls; i++) {
        tl_json_array_begin(j);
        tl_json_uint(j, s->colls[i].kernel);
        tl_json_int(j, s->colls[i].dur_ns);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "snapshots");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nsnaps; i++) {
        tl_json_object_begin(j);
        tl_json_kv_string(j, "label", s->snaps[i].label);
        kv_num(j, "allocated", s->snaps[i].allocated);
        kv_num(j, "reserved", s->snaps[i].reserved);
        kv_num(j, "peak_allocated", s->snaps[i].peak_allocated);
        kv_num(j, "rss", s->snaps[i].rss);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    write_timeline(j, &s->timeline);
    tl_json_key(j, "mem");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nmem; i++) {
        tl_json_array_begin(j);
        tl_json_int(j, s->mem[i].ts_ns);
        isfinite(s->mem[i].allocated) ? tl_json_double(j, s->mem[i].allocated) : tl_json_null(j);
        isfinite(s->mem[i].reserved) ? tl_json_double(j, s->mem[i].reserved) : tl_json_null(j);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "device_name");
    s->device_name ? tl_json_string(j, s->device_name) : tl_json_null(j);
    kv_num(j, "peak_allocated", s->peak_allocated);
    kv_num(j, "peak_reserved", s->peak_reserved);
    kv_num(j, "device_total", s->device_total);
    kv_num(j, "peak_rss", s->peak_rss);
    kv_num(j, "gpu_util_mean", s->gpu_util_mean);
    tl_json_kv_int(j, "abs_time", s->abs_time);
    tl_json_kv_uint(j, "graph_launches", s->graph_launches);
    tl_json_object_end(j);
}

void tl_partial_write(tl_json *j, const tl_aggregate *a, const char *producer)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-partial");
    tl_json_kv_int(j, "version", 1);
    tl_json_kv_string(j, "producer", producer);
    tl_json_key(j, "options");
    write_options(j, &a->opt);
    tl_json_key(j, "sessions");
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nsessions; i++)
        write_session(j, &a->sessions[i]);
    tl_json_array_end(j);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
}

/* ---- reading a partial ------------------------------------------------------- */

typedef struct reader {
    char *err;
    size_t errlen;
    int bad;
} reader;

static void bad(reader *r, const char *what)
{
    if (!r->bad)
        snprintf(r->err, r->errlen, "%s", what);
    r->bad = 1;
}

static int64_t get_int(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) {
        char msg[128];
        snprintf(msg, sizeof msg, "\"%s\": expected an integer", key);
        bad(r, msg);
        return 0;
    }
    return json_integer_value(v);
}

static double get_num(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_null(v))
        return NAN;
    if (!json_is_number(v)) {
        char msg[128];
        snprintf(msg, sizeof msg, "\"%s\": expected a number or null", key);
        bad(r, msg);
        return NAN;
    }
    return json_number_value(v);
}

static char *get_str(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) {
        char msg[128];
        snprintf(msg, sizeof msg, "\"%s\": expected a string", key);
        bad(r, msg);
        return strdup("");
    }
    return strdup(json_string_value(v));
}

static json_t *get_array(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_array(v)) {
        char msg[128];
        snprintf(msg, sizeof msg, "\"%s\": expected an array", key);
        bad(r, msg);
        return NULL;
    }
    return v;
}

/* A field added after version 1's first release: absent in older partials. */
static int64_t opt_int(const json_t *o, const char *key, int64_t def)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static int64_t opt_item(json_t *arr, size_t i, int64_t def)
{
    json_t *v = json_array_get(arr, i);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static int64_t item_int(reader *r, json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    if (!json_is_integer(v)) {
        bad(r, "expected an integer in an array");
        return 0;
    }
    return json_integer_value(v);
}

static void read_stat(reader *r, const json_t *o, tl_dur_stat *d)
{
    memset(d, 0, sizeof *d);
    if (!json_is_object(o)) {
        bad(r, "\"stat\": expected an object");
        return;
    }
    d->count = (uint64_t)get_int(r, o, "count");
    d->total = (uint64_t)get_int(r, o, "total");
    d->min = (uint64_t)get_int(r, o, "min");
    d->max = (uint64_t)get_int(r, o, "max");
    d->mean = get_num(r, o, "mean");
    d->m2 = get_num(r, o, "m2");
    d->samples_dropped = (uint64_t)get_int(r, o, "samples_dropped");
    json_t *h = get_array(r, o, "hist"), *x;
    size_t i;
    json_array_foreach(h, i, x) {
        int64_t b = item_int(r, x, 0), c = item_int(r, x, 1);
        if (b < 0 || b >= (int64_t)TL_HIST_PAGES * TL_HIST_SUB || c < 0 || c > UINT32_MAX) {
            bad(r, "\"hist\": bucket out of range");
            return;
        }
        unsigned page = (unsigned)b / TL_HIST_SUB, slot = (unsigned)b % TL_HIST_SUB;
        if (d->hist.pages[page] == NULL && (d->hist.pages[page] = calloc(TL_HIST_SUB, sizeof(uint32_t))) == NULL)
            return;
        d->hist.pages[page][slot] = (uint32_t)c;
    }
    json_t *s = get_array(r, o, "samples");
    size_t n = s ? json_array_size(s) : 0;
    if (n > TL_PROFILE_MAX_SAMPLES) {
        bad(r, "\"samples\": more than the limit");
        return;
    }
    if (n) {
        d->samples = malloc(n * sizeof *d->samples);
        if (d->samples == NULL)
            return;
        d->samples_cap = (uint32_t)n;
        for (size_t k = 0; k < n; k++)
            d->samples[d->nsamples++] = (uint64_t)item_int(r, s, k);
    }
}

static void read_timeline(reader *r, const json_t *o, tl_timeline *t)
{
    if (!json_is_object(o)) {
        bad(r, "\"timeline\": expected an object");
        return;
    }
    t->start_ns = get_int(r, o, "start_ns");
    t->end_ns = get_int(r, o, "end_ns");
    json_t *lanes = get_array(r, o, "lanes"), *x;
    size_t n = lanes ? json_array_size(lanes) : 0, i;
    if (n > TL_TIMELINE_MAX_LANES) {
        bad(r, "\"lanes\": more than the limit");
        return;
    }
    if (n == 0)
        return;
    t->lanes = calloc(n, sizeof *t->lanes);
    if (t->lanes == NULL)
        return;
    json_array_foreach(lanes, i, x) {
        tl_lane *l = &t->lanes[t->nlanes++];
        l->kind = (int)get_int(r, x, "kind");
        l->a = get_int(r, x, "a");
        l->b = get_int(r, x, "b");
        l->label = get_str(r, x, "label");
        json_t *busy = get_array(r, x, "busy");
        for (int kt = 0; busy && kt < TL_KT_COUNT; kt++) {
            json_t *bins = json_array_get(busy, (size_t)kt);
            size_t nb = json_is_array(bins) ? json_array_size(bins) : 0;
            if (nb != 0 && nb != TL_TIMELINE_BINS) {
                bad(r, "\"busy\": expected 0 or TL_TIMELINE_BINS values");
                return;
            }
            for (size_t b = 0; b < nb; b++) {
                json_t *v = json_array_get(bins, b);
                l->busy[kt][b] = json_is_number(v) ? (float)json_number_value(v) : 0.0f;
            }
        }
    }
}

static void read_session(reader *r, const json_t *o, tl_session *s)
{
    memset(s, 0, sizeof *s);
    s->path = get_str(r, o, "path");
    s->format = (int)get_int(r, o, "format");
    s->rank = (int)get_int(r, o, "rank");
    s->world_size = (int)get_int(r, o, "world_size");
    s->rank_source = (int)get_int(r, o, "rank_source");
    s->rank_detail = get_str(r, o, "rank_detail");
    s->start_ns = get_int(r, o, "start_ns");
    s->span_ns = get_int(r, o, "span_ns");
    s->truncated = (int)get_int(r, o, "truncated");
    json_t *comp = json_object_get(o, "companion_of");
    if (json_is_string(comp))
        s->companion_of = strdup(json_string_value(comp));
    s->peak_allocated = get_num(r, o, "peak_allocated");
    s->peak_reserved = get_num(r, o, "peak_reserved");
    s->device_total = get_num(r, o, "device_total");
    s->peak_rss = get_num(r, o, "peak_rss");
    s->gpu_util_mean = get_num(r, o, "gpu_util_mean");
    json_t *arr, *x;
    size_t i;
    if ((arr = get_array(r, o, "warnings")) != NULL) {
        s->warnings = calloc(json_array_size(arr) + 1, sizeof *s->warnings);
        json_array_foreach(arr, i, x) if (s->warnings && json_is_string(x))
            s->warnings[s->nwarnings++] = strdup(json_string_value(x));
    }
    if ((arr = get_array(r, o, "names")) != NULL) {
        s->names = calloc(json_array_size(arr) + 1, sizeof *s->names);
        json_array_foreach(arr, i, x) {
            if (s->names == NULL || r->bad)
                break;
            tl_sname *n = &s->names[s->nnames++];
            n->group = (int)get_int(r, x, "group");
            n->name = get_str(r, x, "name");
            n->exact = (int)get_int(r, x, "exact");
            n->median_ns = get_num(r, x, "median_ns");
            n->p95_ns = get_num(r, x, "p95_ns");
            n->std_ns = get_num(r, x, "std_ns");
            n->incl_ns = opt_int(x, "incl_ns", -1);
            n->self_ns = opt_int(x, "self_ns", -1);
            read_stat(r, json_object_get(x, "stat"), &n->d);
            if (n->group < 0 || n->group >= TL_GROUP_COUNT)
                bad(r, "\"group\": out of range");
        }
    }
    if ((arr = get_array(r, o, "kernels")) != NULL) {
        s->kernels = calloc(json_array_size(arr) + 1, sizeof *s->kernels);
        json_array_foreach(arr, i, x) {
            if (s->kernels == NULL || r->bad)
                break;
            tl_skernel *k = &s->kernels[s->nkernels++];
            k->name = get_str(r, x, "name");
            k->type = (int)get_int(r, x, "type");
            read_stat(r, json_object_get(x, "stat"), &k->d);
        }
    }
    if ((arr = get_array(r, o, "steps")) != NULL) {
        s->steps = calloc(json_array_size(arr) + 1, sizeof *s->steps);
        json_array_foreach(arr, i, x) if (s->steps)
            s->steps[s->nsteps++] = (tl_sstep){ item_int(r, x, 0), item_int(r, x, 1), item_int(r, x, 2),
                                                item_int(r, x, 3), (int)opt_item(x, 4, 0) };
    }
    json_t *g = json_object_get(o, "gpu");
    if (!json_is_object(g)) {
        bad(r, "\"gpu\": expected an object");
    } else {
        tl_gpu_breakdown *b = &s->gpu;
        b->present = (int)get_int(r, g, "present");
        b->whole_trace = (int)get_int(r, g, "whole_trace");
        b->steps_in_window = (int)get_int(r, g, "steps_in_window");
        b->window_start = get_int(r, g, "window_start");
        b->window_end = get_int(r, g, "window_end");
        b->events = (uint64_t)get_int(r, g, "events");
        b->kernel_time = get_int(r, g, "kernel_time");
        b->busy = get_int(r, g, "busy");
        b->idle = get_int(r, g, "idle");
        b->compute = get_int(r, g, "compute");
        b->non_compute = get_int(r, g, "non_compute");
        b->comm = get_int(r, g, "comm");
        b->comm_compute = get_int(r, g, "comm_compute");
        if ((arr = get_array(r, g, "by_mask")) != NULL && json_array_size(arr) == 8)
            for (int m = 0; m < 8; m++)
                b->by_mask[m] = item_int(r, arr, (size_t)m);
        if ((arr = get_array(r, g, "streams")) != NULL) {
            b->streams = calloc(json_array_size(arr) + 1, sizeof *b->streams);
            json_array_foreach(arr, i, x) if (b->streams)
                b->streams[b->nstreams++] = (tl_stream_idle){ item_int(r, x, 0), item_int(r, x, 1), item_int(r, x, 2),
                                                              item_int(r, x, 3), item_int(r, x, 4),
                                                              (uint64_t)item_int(r, x, 5), opt_item(x, 6, 0) };
        }
        b->blocked_idle = opt_int(g, "blocked_idle", 0);
        b->blocking_call_ns = opt_int(g, "blocking_call_ns", 0);
        json_t *bc = json_object_get(g, "blocking_call");
        if (json_is_string(bc))
            snprintf(b->blocking_call, sizeof b->blocking_call, "%s", json_string_value(bc));
    }
    read_timeline(r, json_object_get(o, "timeline"), &s->timeline);
    if ((arr = get_array(r, o, "mem")) != NULL) {
        s->mem = calloc(json_array_size(arr) + 1, sizeof *s->mem);
        json_array_foreach(arr, i, x) {
            if (s->mem == NULL || i >= TL_MEM_SERIES)
                break;
            json_t *va = json_array_get(x, 1), *vr = json_array_get(x, 2);
            s->mem[s->nmem++] = (tl_mem_sample){ item_int(r, x, 0),
                                                 json_is_number(va) ? json_number_value(va) : NAN,
                                                 json_is_number(vr) ? json_number_value(vr) : NAN };
        }
    }
    s->abs_time = (int)opt_int(o, "abs_time", 0);
    s->graph_launches = (uint64_t)opt_int(o, "graph_launches", 0);
    json_t *dev = json_object_get(o, "device_name");
    if (json_is_string(dev))
        s->device_name = strdup(json_string_value(dev));
    if ((arr = get_array(r, o, "snapshots")) != NULL) {
        s->snaps = calloc(json_array_size(arr) + 1, sizeof *s->snaps);
        json_array_foreach(arr, i, x) if (s->snaps)
            s->snaps[s->nsnaps++] = (tl_ssnap){ get_str(r, x, "label"), get_num(r, x, "allocated"),
                                                get_num(r, x, "reserved"), get_num(r, x, "peak_allocated"),
                                                get_num(r, x, "rss") };
    }
    if ((arr = get_array(r, o, "collectives")) != NULL && json_array_size(arr) > 0) {
        size_t n = json_array_size(arr);
        s->colls = malloc((n > TL_MAX_COLLECTIVES ? TL_MAX_COLLECTIVES : n) * sizeof *s->colls);
        json_array_foreach(arr, i, x) {
            if (s->colls == NULL || i >= TL_MAX_COLLECTIVES)
                break;
            int64_t k = item_int(r, x, 0);
            if (k < 0 || (size_t)k >= s->nkernels) {
                bad(r, "\"collectives\": kernel index out of range");
                break;
            }
            s->colls[s->ncolls++] = (tl_collective){ (uint32_t)k, item_int(r, x, 1) };
        }
    }
}

int tl_partial_read(tl_aggregate *a, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (root == NULL) {
        snprintf(err, errlen, "not valid JSON at line %d, column %d: %s", je.line, je.column, je.text);
        return -1;
    }
    reader r = { err, errlen, 0 };
    int rc = -1;
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "tally-partial") != 0) {
        snprintf(err, errlen, "not a partial aggregate (no \"format\": \"tally-partial\"); "
                              "write one with tally aggregate --partial");
        goto out;
    }
    if (get_int(&r, root, "version") != 1) {
        snprintf(err, errlen, "partial aggregate version %lld is not supported (expected 1)",
                 (long long)json_integer_value(json_object_get(root, "version")));
        goto out;
    }
    json_t *opt = json_object_get(root, "options");
    if (json_is_object(opt)) {
        json_t *w = json_object_get(opt, "window");
        int whole = json_is_string(w) && strcmp(json_string_value(w), "whole-trace") == 0;
        int64_t kw = get_int(&r, opt, "kernel_wait_ns");
        if (a->nsessions > 0 && (whole != a->opt.whole_trace || kw != a->opt.kernel_wait_ns)) {
            snprintf(err, errlen, "analyzed with other options (window, kernel wait) than the partials before it");
            goto out;
        }
        a->opt.whole_trace = whole;
        a->opt.kernel_wait_ns = kw;
    }
    json_t *sessions = get_array(&r, root, "sessions"), *x;
    size_t i;
    json_array_foreach(sessions, i, x) {
        tl_session s;
        read_session(&r, x, &s);
        if (r.bad) {
            tl_session_release(&s);
            char where[64];
            snprintf(where, sizeof where, " (session %zu)", i);
            size_t len = strlen(err);
            if (len + strlen(where) < errlen)
                memcpy(err + len, where, strlen(where) + 1);
            goto out;
        }
        if (tl_aggregate_add_session(a, &s) != 0) {
            tl_session_release(&s);
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    rc = r.bad ? -1 : 0;
out:
    json_decref(root);
    return rc;
}
