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
#define TOP_CALLTREE 500 /* call paths of the merged tree listed (the largest, with their callers) */

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

static void write_sessions(tl_json *j, const tl_aggregate *a);

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
        tl_json_kv_uint(j, "host_wait_gaps", st->host_gaps);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

static void write_steps(tl_json *j, const tl_rank_result *r)
{
    tl_json_object_begin(j);
    /* a report's loop summary (FramePack) counts its iterations without their durations */
    tl_json_kv_uint(j, "count", r->step_count);
    tl_json_kv_bool(j, "from_summary", r->steps_summarized);
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

/* J to Wh: 1 Wh = 3600 J */
#define TL_J_PER_WH 3600.0

/* A rank's sampled telemetry (docs/analysis.md, Telemetry): per series the
 * samples, mean and maximum over its sessions and devices. */
static void write_rank_telemetry(tl_json *j, const tl_rank_telemetry *t)
{
    tl_json_object_begin(j);
    tl_json_kv_int(j, "gpus", t->gpus);
    tl_json_key(j, "series");
    tl_json_object_begin(j);
    for (int k = 0; k < TL_SERIES_COUNT; k++) {
        if (t->n[k] == 0)
            continue;
        tl_json_key(j, tl_series_kind_name(k));
        tl_json_object_begin(j);
        tl_json_kv_uint(j, "samples", t->n[k]);
        kv_num(j, "mean", t->mean[k]);
        kv_num(j, "max", t->max[k]);
        tl_json_object_end(j);
    }
    tl_json_object_end(j);
    kv_num(j, "power_w", t->power_w);
    kv_num(j, "energy_j", t->energy_j);
    kv_num(j, "energy_wh", t->energy_j / TL_J_PER_WH);
    tl_json_object_end(j);
}

/* A rank's block-wise video diffusion (docs/analysis.md, "Video diffusion"), or null. */
static void write_rank_diffusion(tl_json *j, const tl_rank_diffusion *d)
{
    if (d->blocks == 0 && d->steps == 0) {
        tl_json_null(j);
        return;
    }
    tl_json_object_begin(j);
    tl_json_kv_uint(j, "blocks", d->blocks);
    kv_num(j, "frames", d->sized ? d->frames : NAN);
    kv_num(j, "block_size", d->block_size);
    kv_num(j, "block_size_min", d->size_min);
    kv_num(j, "block_size_max", d->size_max);
    tl_json_kv_int(j, "block_time_ns", d->block_ns);
    kv_num(j, "fps", d->fps);
    kv_num(j, "blocks_per_s", d->bps);
    kv_num(j, "first_block_ns", d->first_block_ns >= 0 ? (double)d->first_block_ns : NAN);
    kv_num(j, "later_block_median_ns", d->later_median_ns >= 0 ? (double)d->later_median_ns : NAN);
    tl_json_kv_uint(j, "steps", d->steps);
    tl_json_kv_int(j, "step_time_ns", d->step_ns);
    tl_json_object_end(j);
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
        kv_num(j, "peak_device_used_bytes", r->peak_device_used);
        kv_num(j, "device_total_bytes", r->device_total);
        kv_pct(j, "peak_device_pct", tl_rank_peak_device_pct(r));
        kv_num(j, "fragmentation_ratio", isfinite(r->peak_reserved) && isfinite(r->peak_allocated) && r->peak_allocated > 0
                                             ? r->peak_reserved / r->peak_allocated
                                             : NAN);
        kv_num(j, "peak_rss_bytes", r->peak_rss);
        kv_num(j, "gpu_utilization_mean_pct", r->gpu_util_mean);
        tl_json_object_end(j);
        tl_json_key(j, "telemetry");
        write_rank_telemetry(j, &r->tel);
        tl_json_key(j, "diffusion");
        write_rank_diffusion(j, &r->diff);
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

static int by_incl_desc(const void *x, const void *y, void *ctx)
{
    const tl_calltree *t = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (t->nodes[a].incl_ns != t->nodes[b].incl_ns)
        return t->nodes[a].incl_ns > t->nodes[b].incl_ns ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The merged call tree (docs/analysis.md, "Call tree"): its TOP_CALLTREE
 * largest paths and their callers, numbered in tree order (a parent before
 * its children), with sums over ranks and the least and most of one rank. */
static void write_calltree_merged(tl_json *j, const tl_aggregate *a)
{
    const tl_calltree *t = &a->calltree;
    uint32_t *order = malloc(((size_t)t->n + 1) * sizeof *order), *id = malloc(((size_t)t->n + 1) * sizeof *id);
    tl_json_object_begin(j);
    tl_json_kv_int(j, "ranks", a->calltree_ranks);
    tl_json_kv_uint(j, "paths", t->n);
    tl_json_kv_uint(j, "dropped", t->dropped);
    tl_json_key(j, "nodes");
    tl_json_array_begin(j);
    if (order != NULL && id != NULL) {
        for (uint32_t i = 0; i < t->n; i++) {
            order[i] = i;
            id[i] = UINT32_MAX;
        }
        qsort_r(order, t->n, sizeof *order, by_incl_desc, (void *)t);
        /* mark the largest and their callers; then number in tree order */
        for (uint32_t k = 0; k < t->n && k < TOP_CALLTREE; k++)
            for (uint32_t i = order[k]; i != TL_CALLTREE_NONE && id[i] == UINT32_MAX; i = t->nodes[i].parent)
                id[i] = 0;
        uint32_t next = 0;
        for (uint32_t i = 0; i < t->n; i++) {
            if (id[i] == UINT32_MAX)
                continue;
            id[i] = next++;
            const tl_cnode *c = &t->nodes[i];
            tl_json_object_begin(j);
            tl_json_kv_uint(j, "id", id[i]);
            tl_json_key(j, "parent");
            c->parent == TL_CALLTREE_NONE ? tl_json_null(j) : tl_json_uint(j, id[c->parent]);
            tl_json_kv_string(j, "name", tl_calltree_name(t, i));
            tl_json_kv_int(j, "inclusive_ns", c->incl_ns);
            tl_json_kv_int(j, "self_ns", c->self_ns);
            tl_json_kv_uint(j, "count", c->count);
            tl_json_kv_int(j, "rank_min_ns", t->min_ns ? t->min_ns[i] : c->incl_ns);
            tl_json_kv_int(j, "rank_max_ns", t->max_ns ? t->max_ns[i] : c->incl_ns);
            tl_json_kv_uint(j, "ranks", t->ranks ? t->ranks[i] : 1);
            tl_json_object_end(j);
        }
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
    free(order);
    free(id);
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
    tl_json_key(j, "telemetry");
    tl_json_object_begin(j);
    kv_num(j, "power_w", tl_telemetry_power_total(a));
    kv_num(j, "energy_j", tl_telemetry_energy_total(a));
    kv_num(j, "energy_wh", tl_telemetry_energy_total(a) / TL_J_PER_WH);
    int by_host, gpus = tl_telemetry_gpus_counted(a, &by_host);
    tl_json_kv_int(j, "gpus", gpus);
    tl_json_key(j, "counted_by");
    gpus == 0 ? tl_json_null(j) : tl_json_string(j, by_host ? "host and device" : "rank");
    tl_json_object_end(j);
    tl_json_key(j, "names");
    write_names(j, a);
    tl_json_key(j, "calltree");
    write_calltree_merged(j, a);
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
        tl_json_kv_bool(j, "no_data", a->skips[i].absent);
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
    /* The exact session results, as in a partial: an aggregate is also an
     * input (tally report, summary, compare, merge take it back). */
    tl_json_key(j, "sessions");
    write_sessions(j, a);
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

/* A CPU lane's calls drawn by name: "calls": [[ts, dur, row, name id]] and
 * "calls_left" (absent in partials of an older tally). */
static void write_lane_calls(tl_json *j, const tl_lane *l)
{
    tl_json_key(j, "calls");
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < l->ncalls; i++) {
        tl_json_array_begin(j);
        tl_json_int(j, l->calls[i].ts_ns);
        tl_json_int(j, l->calls[i].dur_ns);
        tl_json_int(j, l->calls[i].row);
        tl_json_uint(j, l->calls[i].name);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_kv_uint(j, "calls_left", l->calls_left);
}

/* The call tree of a session (calltree.h): "calltree": {"dropped": N,
 * "names": [...], "nodes": [[parent | -1, name id, incl, self, count]]},
 * nodes in their order (a parent before its children). Written only when
 * the session has one; read_calltree is its mirror. */
static void write_calltree(tl_json *j, const tl_calltree *t)
{
    if (t->n == 0)
        return;
    tl_json_key(j, "calltree");
    tl_json_object_begin(j);
    tl_json_kv_uint(j, "dropped", t->dropped);
    tl_json_key(j, "names");
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < t->names.n; i++)
        tl_json_string(j, tl_strtab_get(&t->names, i));
    tl_json_array_end(j);
    tl_json_key(j, "nodes");
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < t->n; i++) {
        const tl_cnode *c = &t->nodes[i];
        tl_json_array_begin(j);
        tl_json_int(j, c->parent == TL_CALLTREE_NONE ? -1 : (int64_t)c->parent);
        tl_json_uint(j, c->name);
        tl_json_int(j, c->incl_ns);
        tl_json_int(j, c->self_ns);
        tl_json_uint(j, c->count);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
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
        if (l->ncalls > 0 || l->calls_left > 0)
            write_lane_calls(j, l);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    if (t->names.n > 0) {
        tl_json_key(j, "names");
        tl_json_array_begin(j);
        for (uint32_t i = 0; i < t->names.n; i++)
            tl_json_string(j, tl_strtab_get(&t->names, i));
        tl_json_array_end(j);
    }
    tl_json_object_end(j);
}

static void num_or_null(tl_json *j, double v)
{
    isfinite(v) ? tl_json_double(j, v) : tl_json_null(j);
}

/* telemetry: [{series, device, n, start_ns, end_ns, min, max, mean, energy_j,
 * bins: [[min, mean, max] | null]}] */
static void write_series(tl_json *j, const tl_session *s)
{
    tl_json_key(j, "telemetry");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nseries; i++) {
        const tl_tseries *t = &s->series[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "series", tl_series_kind_name(t->kind));
        tl_json_kv_int(j, "device", t->device);
        tl_json_kv_int(j, "n", (int64_t)t->n);
        tl_json_kv_int(j, "start_ns", t->start_ns);
        tl_json_kv_int(j, "end_ns", t->end_ns);
        kv_num(j, "min", t->min);
        kv_num(j, "max", t->max);
        kv_num(j, "mean", t->mean);
        kv_num(j, "energy_j", t->energy_j);
        tl_json_key(j, "bins");
        tl_json_array_begin(j);
        for (int b = 0; b < t->nbins; b++) {
            if (isnan(t->bmean[b])) {
                tl_json_null(j);
                continue;
            }
            tl_json_array_begin(j);
            num_or_null(j, t->bmin[b]);
            num_or_null(j, t->bmean[b]);
            num_or_null(j, t->bmax[b]);
            tl_json_array_end(j);
        }
        tl_json_array_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static void int_or_null(tl_json *j, int64_t v, int64_t unknown)
{
    v == unknown ? tl_json_null(j) : tl_json_int(j, v);
}

/* What a session carries besides its timings (aggregate.h): events, tags,
 * counters, system, diffusion, health, growth. */
static void write_extras(tl_json *j, const tl_session *s)
{
    tl_json_kv_uint(j, "events_total", s->events_total);
    tl_json_key(j, "events");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nevents; i++) {
        tl_json_array_begin(j);
        int_or_null(j, s->events[i].ts_ns, INT64_MIN);
        tl_json_string(j, s->events[i].name);
        tl_json_string(j, s->events[i].payload);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "tags");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->ntags; i++)
        tl_json_string(j, s->tags[i]);
    tl_json_array_end(j);
    tl_json_kv_uint(j, "counters_total", s->counters_total);
    tl_json_key(j, "counters");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->ncounters; i++) {
        const tl_scounter *c = &s->counters[i];
        tl_json_array_begin(j);
        tl_json_string(j, c->name);
        tl_json_int(j, c->source);
        tl_json_uint(j, c->count);
        num_or_null(j, c->min);
        num_or_null(j, c->mean);
        num_or_null(j, c->max);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "system");
    tl_json_object_begin(j);
    tl_json_key(j, "hostname");
    s->sys.hostname ? tl_json_string(j, s->sys.hostname) : tl_json_null(j);
    tl_json_key(j, "os");
    s->sys.os ? tl_json_string(j, s->sys.os) : tl_json_null(j);
    tl_json_kv_int(j, "cpus", s->sys.cpus);
    kv_num(j, "memory_bytes", s->sys.memory_bytes > 0 ? s->sys.memory_bytes : NAN);
    tl_json_object_end(j);
    const tl_sdiffusion *d = &s->diff;
    tl_json_key(j, "diffusion");
    if (d->blocks == 0 && d->steps == 0 && d->layers == 0) {
        tl_json_null(j);
    } else {
        tl_json_object_begin(j);
        tl_json_kv_uint(j, "blocks", d->blocks);
        tl_json_kv_uint(j, "sized", d->sized);
        kv_num(j, "frames", d->frames);
        kv_num(j, "size_min", d->size_min);
        kv_num(j, "size_max", d->size_max);
        tl_json_kv_int(j, "block_ns", d->block_ns);
        tl_json_kv_int(j, "sized_ns", d->sized_ns);
        tl_json_kv_int(j, "first_block_ns", d->first_block_ns);
        tl_json_kv_int(j, "later_median_ns", d->later_median_ns);
        tl_json_kv_uint(j, "steps", d->steps);
        tl_json_kv_int(j, "step_ns", d->step_ns);
        tl_json_kv_uint(j, "layers", d->layers);
        tl_json_kv_int(j, "layers_ns", d->layers_ns);
        tl_json_key(j, "top_layer");
        d->top_layer ? tl_json_string(j, d->top_layer) : tl_json_null(j);
        tl_json_kv_int(j, "top_layer_ns", d->top_layer_ns);
        tl_json_object_end(j);
    }
    /* [device, temp_n, hot_n, hot_ns, temp_max, power_n, cap_n, power_limit_w, power_max,
     *  reasons_n, thermal_n, power_throttle_n] */
    tl_json_key(j, "health");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->nhealth; i++) {
        const tl_shealth *h = &s->health[i];
        tl_json_array_begin(j);
        tl_json_int(j, h->device);
        tl_json_uint(j, h->temp_n);
        tl_json_uint(j, h->hot_n);
        tl_json_int(j, h->hot_ns);
        num_or_null(j, h->temp_max);
        tl_json_uint(j, h->power_n);
        tl_json_uint(j, h->cap_n);
        num_or_null(j, h->power_limit_w);
        num_or_null(j, h->power_max);
        tl_json_uint(j, h->reasons_n);
        tl_json_uint(j, h->thermal_n);
        tl_json_uint(j, h->power_throttle_n);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    /* [what, metric, n, drops, first, last, max, span_ns] */
    tl_json_key(j, "growth");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->ngrowth; i++) {
        const tl_sgrowth *g = &s->growth[i];
        tl_json_array_begin(j);
        tl_json_string(j, g->what);
        tl_json_int(j, g->metric);
        tl_json_uint(j, g->n);
        tl_json_uint(j, g->drops);
        num_or_null(j, g->first);
        num_or_null(j, g->last);
        num_or_null(j, g->max);
        tl_json_int(j, g->span_ns);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
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
        tl_json_uint(j, st->host_gaps);
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
        kv_num(j, "device_used", s->snaps[i].device_used);
        tl_json_key(j, "ts_ns");
        s->snaps[i].ts_ns == INT64_MIN ? tl_json_null(j) : tl_json_int(j, s->snaps[i].ts_ns);
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
    kv_num(j, "peak_device_used", s->peak_device_used);
    kv_num(j, "gpu_util_mean", s->gpu_util_mean);
    tl_json_kv_int(j, "abs_time", s->abs_time);
    tl_json_kv_int(j, "pid", s->pid);
    tl_json_kv_uint(j, "graph_launches", s->graph_launches);
    tl_json_key(j, "devices");
    tl_json_array_begin(j);
    for (size_t i = 0; i < s->ndevices; i++) {
        tl_json_array_begin(j);
        tl_json_int(j, s->devices[i].id);
        tl_json_string(j, s->devices[i].name);
        num_or_null(j, s->devices[i].total_memory);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    write_series(j, s);
    write_extras(j, s);
    write_calltree(j, &s->calltree);
    tl_json_object_end(j);
}

static void write_sessions(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nsessions; i++)
        write_session(j, &a->sessions[i]);
    tl_json_array_end(j);
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
    write_sessions(j, a);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
}

/* ---- reading a partial ------------------------------------------------------- */

/* A partial is a file anybody can hand us: every number is checked against
 * the range the analysis can hold before it is believed, so a hostile
 * partial gives an error, never an overflow later (a span of 2^63-1 added
 * to another, an idle time of -2^63 negated). Durations and sums of them are
 * at most TL_PARTIAL_MAX_NS; timestamps lie within +-TL_PARTIAL_MAX_TS
 * (differences of two fit an int64), with INT64_MIN / INT64_MAX allowed
 * where the writer uses them for "unknown" / "no window". */
#define TL_PARTIAL_MAX_NS 1000000000000000000LL /* 1e18 ns: 31 years */
#define TL_PARTIAL_MAX_TS 4000000000000000000LL /* 4e18 ns: year 2096 */
#define TL_PARTIAL_MAX_RANK 100000000           /* ranks and world sizes */
#define TL_PARTIAL_MAX_COUNT (1LL << 53)        /* event counts (exact in a double) */

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

static void bad_key(reader *r, const char *key, const char *what)
{
    char msg[160];
    snprintf(msg, sizeof msg, "\"%s\": %s", key, what);
    bad(r, msg);
}

static int64_t get_int(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) {
        bad_key(r, key, "expected an integer");
        return 0;
    }
    return json_integer_value(v);
}

/* An integer in [lo, hi]; out of range is an error and reads as lo. */
static int64_t get_range(reader *r, const json_t *o, const char *key, int64_t lo, int64_t hi)
{
    int64_t v = get_int(r, o, key);
    if (v < lo || v > hi) {
        bad_key(r, key, "out of range");
        return lo;
    }
    return v;
}

static int64_t get_ns(reader *r, const json_t *o, const char *key)
{
    return get_range(r, o, key, 0, TL_PARTIAL_MAX_NS);
}

static int ts_ok(int64_t v)
{
    return v == INT64_MIN || v == INT64_MAX || (v >= -TL_PARTIAL_MAX_TS && v <= TL_PARTIAL_MAX_TS);
}

static int64_t get_ts(reader *r, const json_t *o, const char *key)
{
    int64_t v = get_int(r, o, key);
    if (!ts_ok(v)) {
        bad_key(r, key, "timestamp out of range");
        return INT64_MIN;
    }
    return v;
}

static double get_num(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_null(v))
        return NAN;
    if (!json_is_number(v)) {
        bad_key(r, key, "expected a number or null");
        return NAN;
    }
    return json_number_value(v);
}

static char *get_str(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) {
        bad_key(r, key, "expected a string");
        return strdup("");
    }
    return strdup(json_string_value(v));
}

static json_t *get_array(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_array(v)) {
        bad_key(r, key, "expected an array");
        return NULL;
    }
    return v;
}

/* A field added after version 1's first release: absent in older partials. */
/* Fields added after version 1's first release (self time, partial steps,
 * stream busy time, blocking calls, graph launches): absent in older
 * partials, then def; present, they are checked like the others. */
static int64_t opt_range(reader *r, const json_t *o, const char *key, int64_t def, int64_t lo, int64_t hi)
{
    return json_object_get(o, key) == NULL ? def : get_range(r, o, key, lo, hi);
}

static int64_t item_range(reader *r, json_t *arr, size_t i, int64_t lo, int64_t hi);

static int64_t opt_item_range(reader *r, json_t *arr, size_t i, int64_t def, int64_t lo, int64_t hi)
{
    return i >= json_array_size(arr) ? def : item_range(r, arr, i, lo, hi);
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

static int64_t item_range(reader *r, json_t *arr, size_t i, int64_t lo, int64_t hi)
{
    int64_t v = item_int(r, arr, i);
    if (v < lo || v > hi) {
        bad(r, "an array item out of range");
        return lo;
    }
    return v;
}

static int64_t item_ts(reader *r, json_t *arr, size_t i)
{
    int64_t v = item_int(r, arr, i);
    if (!ts_ok(v)) {
        bad(r, "a timestamp out of range in an array");
        return INT64_MIN;
    }
    return v;
}

static void read_stat(reader *r, const json_t *o, tl_dur_stat *d)
{
    memset(d, 0, sizeof *d);
    if (!json_is_object(o)) {
        bad(r, "\"stat\": expected an object");
        return;
    }
    d->count = (uint64_t)get_range(r, o, "count", 0, TL_PARTIAL_MAX_COUNT);
    d->total = (uint64_t)get_ns(r, o, "total");
    d->min = (uint64_t)get_ns(r, o, "min");
    d->max = (uint64_t)get_ns(r, o, "max");
    d->mean = get_num(r, o, "mean");
    d->m2 = get_num(r, o, "m2");
    d->samples_dropped = (uint64_t)get_range(r, o, "samples_dropped", 0, TL_PARTIAL_MAX_COUNT);
    /* What the statistics' readers divide by and compare must agree. */
    if (d->count > 0 && (d->min > d->max || !isfinite(d->mean) || d->mean < 0 || !isfinite(d->m2) || d->m2 < 0))
        bad(r, "\"stat\": min, max, mean and m2 do not agree");
    json_t *h = get_array(r, o, "hist"), *x;
    size_t i;
    uint64_t in_hist = 0;
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
        in_hist += (uint64_t)c;
    }
    if (in_hist > d->count) {
        bad(r, "\"hist\": more values than \"count\"");
        return;
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
            d->samples[d->nsamples++] = (uint64_t)item_range(r, s, k, 0, TL_PARTIAL_MAX_NS);
    }
}

/* "names": an array of distinct strings, read into an empty table so that
 * each keeps its index; at most max. */
static void read_names(reader *r, const json_t *arr, tl_strtab *names, size_t max, const char *what)
{
    json_t *x;
    size_t i;
    if (!json_is_array(arr) || json_array_size(arr) > max) {
        bad_key(r, what, "expected an array of at most the limit of names");
        return;
    }
    json_array_foreach(arr, i, x) {
        if (!json_is_string(x)) {
            bad_key(r, what, "expected strings");
            return;
        }
        const char *str = json_string_value(x);
        uint32_t id = tl_strtab_intern(names, str, strlen(str));
        if (id == UINT32_MAX) {
            bad(r, "out of memory");
            return;
        }
        if (id != i) {
            bad_key(r, what, "a name given twice");
            return;
        }
    }
}

/* "calls" and "calls_left" of a CPU lane (see write_lane_calls); absent: none. */
static void read_lane_calls(reader *r, const json_t *x, tl_lane *l, const json_t *names)
{
    json_t *calls = json_object_get(x, "calls"), *c;
    size_t i, nnames = json_is_array(names) ? json_array_size(names) : 0;
    if (calls == NULL)
        return;
    if (!json_is_array(calls) || json_array_size(calls) > TL_LANE_TOP_EVENTS) {
        bad_key(r, "calls", "expected an array of at most TL_LANE_TOP_EVENTS calls");
        return;
    }
    l->calls_left = (uint64_t)get_range(r, x, "calls_left", 0, TL_PARTIAL_MAX_COUNT);
    if (json_array_size(calls) == 0)
        return;
    l->calls = calloc(json_array_size(calls), sizeof *l->calls);
    if (l->calls == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(calls, i, c) {
        if (r->bad)
            return;
        tl_lane_call *k = &l->calls[l->ncalls++];
        k->ts_ns = item_range(r, c, 0, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
        k->dur_ns = item_range(r, c, 1, 0, TL_PARTIAL_MAX_NS);
        k->row = (uint8_t)item_range(r, c, 2, 0, TL_LANE_MAX_DEPTH - 1);
        k->name = (uint32_t)item_range(r, c, 3, 0, nnames ? (int64_t)nnames - 1 : -1);
        if (i > 0 && k->ts_ns < l->calls[i - 1].ts_ns)
            bad_key(r, "calls", "not in start order");
    }
}

static void read_timeline(reader *r, const json_t *o, tl_timeline *t)
{
    if (!json_is_object(o)) {
        bad(r, "\"timeline\": expected an object");
        return;
    }
    t->start_ns = get_range(r, o, "start_ns", -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
    t->end_ns = get_range(r, o, "end_ns", -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
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
    json_t *names = json_object_get(o, "names");
    if (names != NULL)
        read_names(r, names, &t->names, (size_t)TL_TIMELINE_MAX_LANES * TL_LANE_TOP_EVENTS, "names");
    json_array_foreach(lanes, i, x) {
        if (r->bad)
            return;
        tl_lane *l = &t->lanes[t->nlanes++];
        l->kind = (int)get_range(r, x, "kind", TL_LANE_GPU, TL_LANE_CPU);
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
                double f = json_is_number(v) ? json_number_value(v) : 0.0;
                /* a fraction of a bin; anything else would not be a float */
                if (!(f >= 0.0 && f <= 1.0)) {
                    bad(r, "\"busy\": a fraction out of [0, 1]");
                    return;
                }
                l->busy[kt][b] = (float)f;
            }
        }
        if (l->kind == TL_LANE_CPU)
            read_lane_calls(r, x, l, names);
    }
}

/* "calltree" (see write_calltree; absent: no tree). A partial is hostile
 * input: node counts within the cap, a parent before its child, no path
 * given twice, times and counts in range, self time within inclusive. */
static void read_calltree(reader *r, const json_t *o, tl_calltree *t)
{
    json_t *ct = json_object_get(o, "calltree"), *x;
    size_t i;
    if (ct == NULL)
        return;
    if (!json_is_object(ct)) {
        bad_key(r, "calltree", "expected an object");
        return;
    }
    json_t *nodes = get_array(r, ct, "nodes");
    if (nodes == NULL)
        return;
    if (json_array_size(nodes) > TL_CALLTREE_MAX_NODES) {
        bad_key(r, "nodes", "more than TL_CALLTREE_MAX_NODES");
        return;
    }
    t->dropped = (uint64_t)get_range(r, ct, "dropped", 0, TL_PARTIAL_MAX_COUNT);
    read_names(r, json_object_get(ct, "names"), &t->names, TL_CALLTREE_MAX_NODES, "names");
    if (r->bad)
        return;
    json_array_foreach(nodes, i, x) {
        if (!json_is_array(x) || json_array_size(x) != 5) {
            bad_key(r, "nodes", "expected [parent, name, inclusive, self, count]");
            return;
        }
        int64_t parent = item_int(r, x, 0), name = item_int(r, x, 1);
        if (!r->bad && (parent < -1 || parent >= (int64_t)i)) {
            bad_key(r, "nodes", "a node's parent must come before it");
            return;
        }
        if (!r->bad && (name < 0 || name >= (int64_t)t->names.n)) {
            bad_key(r, "nodes", "a node's name id out of range");
            return;
        }
        int64_t incl = item_range(r, x, 2, 0, TL_PARTIAL_MAX_NS), self = item_range(r, x, 3, 0, TL_PARTIAL_MAX_NS);
        int64_t count = item_range(r, x, 4, 0, TL_PARTIAL_MAX_COUNT);
        if (r->bad)
            return;
        if (self > incl) {
            bad_key(r, "nodes", "self time beyond inclusive time");
            return;
        }
        uint32_t k = tl_calltree_child(t, parent < 0 ? TL_CALLTREE_NONE : (uint32_t)parent, (uint32_t)name);
        if (k != (uint32_t)i) {
            bad_key(r, "nodes", k == TL_CALLTREE_NONE ? "out of memory" : "a path given twice");
            return;
        }
        t->nodes[k].incl_ns = incl;
        t->nodes[k].self_ns = self;
        t->nodes[k].count = (uint64_t)count;
    }
    free(t->slots); /* a session's tree is only read from here on */
    t->slots = NULL;
    t->nslots = 0;
}

static char **read_strings(reader *r, const json_t *o, const char *key, size_t *n)
{
    json_t *arr = get_array(r, o, key), *x;
    size_t i;
    *n = 0;
    if (arr == NULL)
        return NULL;
    char **v = calloc(json_array_size(arr) + 1, sizeof *v);
    json_array_foreach(arr, i, x) if (v && json_is_string(x))
        v[(*n)++] = strdup(json_string_value(x));
    return v;
}

static void read_gpu(reader *r, const json_t *g, tl_gpu_breakdown *b)
{
    json_t *arr, *x;
    size_t i;
    if (!json_is_object(g)) {
        bad(r, "\"gpu\": expected an object");
        return;
    }
    b->present = (int)get_range(r, g, "present", 0, 1);
    b->whole_trace = (int)get_range(r, g, "whole_trace", 0, 1);
    b->steps_in_window = (int)get_range(r, g, "steps_in_window", 0, INT32_MAX);
    b->window_start = get_ts(r, g, "window_start");
    b->window_end = get_ts(r, g, "window_end");
    b->events = (uint64_t)get_range(r, g, "events", 0, TL_PARTIAL_MAX_COUNT);
    b->kernel_time = get_ns(r, g, "kernel_time");
    b->busy = get_ns(r, g, "busy");
    b->idle = get_ns(r, g, "idle");
    b->compute = get_ns(r, g, "compute");
    b->non_compute = get_ns(r, g, "non_compute");
    b->comm = get_ns(r, g, "comm");
    b->comm_compute = get_ns(r, g, "comm_compute");
    if ((arr = get_array(r, g, "by_mask")) != NULL && json_array_size(arr) == 8)
        for (int m = 0; m < 8; m++)
            b->by_mask[m] = item_range(r, arr, (size_t)m, 0, TL_PARTIAL_MAX_NS);
    if ((arr = get_array(r, g, "streams")) != NULL) {
        b->streams = calloc(json_array_size(arr) + 1, sizeof *b->streams);
        json_array_foreach(arr, i, x) if (b->streams)
            b->streams[b->nstreams++] = (tl_stream_idle){
                item_int(r, x, 0), item_int(r, x, 1), item_range(r, x, 2, 0, TL_PARTIAL_MAX_NS),
                item_range(r, x, 3, 0, TL_PARTIAL_MAX_NS), item_range(r, x, 4, 0, TL_PARTIAL_MAX_NS),
                (uint64_t)item_range(r, x, 5, 0, TL_PARTIAL_MAX_COUNT), opt_item_range(r, x, 6, 0, 0, TL_PARTIAL_MAX_NS),
                (uint64_t)opt_item_range(r, x, 7, 0, 0, TL_PARTIAL_MAX_COUNT)
            };
    }
    b->blocked_idle = opt_range(r, g, "blocked_idle", 0, 0, TL_PARTIAL_MAX_NS);
    b->blocking_call_ns = opt_range(r, g, "blocking_call_ns", 0, 0, TL_PARTIAL_MAX_NS);
    json_t *bc = json_object_get(g, "blocking_call");
    if (json_is_string(bc))
        snprintf(b->blocking_call, sizeof b->blocking_call, "%s", json_string_value(bc));
}

static double item_num(json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "telemetry" (absent in partials written before it: no series). */
static void read_series(reader *r, const json_t *o, tl_session *s)
{
    json_t *arr = json_object_get(o, "telemetry"), *x;
    size_t i;
    if (arr == NULL)
        return;
    if (!json_is_array(arr)) {
        bad_key(r, "telemetry", "expected an array");
        return;
    }
    size_t n = json_array_size(arr);
    if (n > TL_SERIES_MAX) {
        bad_key(r, "telemetry", "more series than TL_SERIES_MAX");
        return;
    }
    s->series = calloc(n + 1, sizeof *s->series);
    if (s->series == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(arr, i, x) {
        if (r->bad)
            break;
        tl_tseries *t = &s->series[s->nseries++];
        json_t *kind = json_object_get(x, "series");
        t->kind = json_is_string(kind) ? tl_series_kind_of(json_string_value(kind)) : -1;
        if (t->kind < 0) {
            bad_key(r, "series", "not a telemetry series");
            break;
        }
        t->device = get_range(r, x, "device", -1, TL_PARTIAL_MAX_RANK);
        t->n = (uint64_t)get_range(r, x, "n", 1, TL_PARTIAL_MAX_COUNT);
        t->start_ns = get_range(r, x, "start_ns", -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
        t->end_ns = get_range(r, x, "end_ns", t->start_ns, TL_PARTIAL_MAX_TS);
        t->min = get_num(r, x, "min");
        t->max = get_num(r, x, "max");
        t->mean = get_num(r, x, "mean");
        t->energy_j = get_num(r, x, "energy_j");
        json_t *bins = get_array(r, x, "bins"), *b;
        size_t k;
        if (bins == NULL || json_array_size(bins) > TL_SERIES_BINS) {
            bad_key(r, "bins", "expected at most TL_SERIES_BINS bins");
            break;
        }
        json_array_foreach(bins, k, b) {
            t->bmin[k] = item_num(b, 0);
            t->bmean[k] = item_num(b, 1);
            t->bmax[k] = item_num(b, 2);
        }
        t->nbins = (int)json_array_size(bins);
    }
}

/* "devices": [[id, name, total bytes | null]] (absent in older partials). */
static void read_devices(reader *r, const json_t *o, tl_session *s)
{
    json_t *arr = json_object_get(o, "devices"), *x;
    size_t i;
    if (arr == NULL)
        return;
    if (!json_is_array(arr) || json_array_size(arr) > TL_SESSION_MAX_DEVICES) {
        bad_key(r, "devices", "expected an array of at most TL_SESSION_MAX_DEVICES devices");
        return;
    }
    s->devices = calloc(json_array_size(arr) + 1, sizeof *s->devices);
    if (s->devices == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(arr, i, x) {
        json_t *name = json_array_get(x, 1);
        if (!json_is_array(x) || !json_is_string(name)) {
            bad_key(r, "devices", "expected [id, name, total]");
            return;
        }
        s->devices[s->ndevices++] = (tl_sdevice){ item_range(r, x, 0, -1, TL_PARTIAL_MAX_RANK),
                                                  strdup(json_string_value(name)), item_num(x, 2) };
    }
}

static char *item_str(reader *r, json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    if (!json_is_string(v)) {
        bad(r, "expected a string in an array");
        return strdup("");
    }
    return strdup(json_string_value(v));
}

static int64_t item_ts_or_null(reader *r, json_t *arr, size_t i)
{
    return json_is_null(json_array_get(arr, i)) ? INT64_MIN : item_ts(r, arr, i);
}

/* An optional string member: NULL when absent or null. */
static char *opt_str(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v == NULL || json_is_null(v) ? NULL : get_str(r, o, key);
}

/* Fields added after version 1's first release (write_extras): each absent
 * in older partials, then empty. Counts are bounded by what the writer keeps. */
static void read_extras(reader *r, const json_t *o, tl_session *s)
{
    json_t *arr, *x;
    size_t i;
    s->events_total = (uint64_t)opt_range(r, o, "events_total", 0, 0, TL_PARTIAL_MAX_COUNT);
    if (json_object_get(o, "events") != NULL && (arr = get_array(r, o, "events")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_EVENTS || json_array_size(arr) > s->events_total) {
            bad_key(r, "events", "more than TL_SESSION_MAX_EVENTS or events_total");
            return;
        }
        s->events = calloc(json_array_size(arr) + 1, sizeof *s->events);
        json_array_foreach(arr, i, x) if (s->events && !r->bad)
            s->events[s->nevents++] = (tl_sevent){ item_ts_or_null(r, x, 0), item_str(r, x, 1), item_str(r, x, 2) };
    }
    if (json_object_get(o, "tags") != NULL) {
        s->tags = read_strings(r, o, "tags", &s->ntags);
        if (s->ntags > TL_SESSION_MAX_TAGS)
            bad_key(r, "tags", "more than TL_SESSION_MAX_TAGS");
    }
    s->counters_total = (uint64_t)opt_range(r, o, "counters_total", 0, 0, TL_PARTIAL_MAX_COUNT);
    if (json_object_get(o, "counters") != NULL && (arr = get_array(r, o, "counters")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_COUNTERS || json_array_size(arr) > s->counters_total) {
            bad_key(r, "counters", "more than TL_SESSION_MAX_COUNTERS or counters_total");
            return;
        }
        s->counters = calloc(json_array_size(arr) + 1, sizeof *s->counters);
        json_array_foreach(arr, i, x) if (s->counters && !r->bad)
            s->counters[s->ncounters++] = (tl_scounter){ item_str(r, x, 0),
                                                         (int)item_range(r, x, 1, TL_COUNTER_USER, TL_COUNTER_TRACE),
                                                         (uint64_t)item_range(r, x, 2, 1, TL_PARTIAL_MAX_COUNT),
                                                         item_num(x, 3), item_num(x, 4), item_num(x, 5) };
    }
    json_t *sys = json_object_get(o, "system");
    if (sys != NULL) {
        if (!json_is_object(sys)) {
            bad_key(r, "system", "expected an object");
            return;
        }
        s->sys.hostname = opt_str(r, sys, "hostname");
        s->sys.os = opt_str(r, sys, "os");
        s->sys.cpus = (int)get_range(r, sys, "cpus", 0, 1 << 24);
        s->sys.memory_bytes = get_num(r, sys, "memory_bytes");
    }
    json_t *d = json_object_get(o, "diffusion");
    if (d != NULL && !json_is_null(d)) {
        tl_sdiffusion *f = &s->diff;
        if (!json_is_object(d)) {
            bad_key(r, "diffusion", "expected an object or null");
            return;
        }
        f->blocks = (uint64_t)get_range(r, d, "blocks", 0, TL_PARTIAL_MAX_COUNT);
        f->sized = (uint64_t)get_range(r, d, "sized", 0, (int64_t)f->blocks);
        f->frames = get_num(r, d, "frames");
        f->size_min = get_num(r, d, "size_min");
        f->size_max = get_num(r, d, "size_max");
        f->block_ns = get_ns(r, d, "block_ns");
        f->sized_ns = get_range(r, d, "sized_ns", 0, f->block_ns);
        f->first_block_ns = get_range(r, d, "first_block_ns", -1, TL_PARTIAL_MAX_NS);
        f->later_median_ns = get_range(r, d, "later_median_ns", -1, TL_PARTIAL_MAX_NS);
        f->steps = (uint64_t)get_range(r, d, "steps", 0, TL_PARTIAL_MAX_COUNT);
        f->step_ns = get_ns(r, d, "step_ns");
        f->layers = (uint32_t)get_range(r, d, "layers", 0, INT32_MAX);
        f->layers_ns = get_ns(r, d, "layers_ns");
        f->top_layer = opt_str(r, d, "top_layer");
        f->top_layer_ns = get_range(r, d, "top_layer_ns", 0, f->layers_ns);
        if (!(f->frames >= 0) && f->sized > 0)
            bad_key(r, "frames", "expected a number >= 0");
    }
    if (json_object_get(o, "health") != NULL && (arr = get_array(r, o, "health")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_DEVICES) {
            bad_key(r, "health", "more than TL_SESSION_MAX_DEVICES devices");
            return;
        }
        s->health = calloc(json_array_size(arr) + 1, sizeof *s->health);
        json_array_foreach(arr, i, x) {
            if (s->health == NULL || r->bad)
                break;
            tl_shealth *h = &s->health[s->nhealth++];
            h->device = item_range(r, x, 0, -1, TL_PARTIAL_MAX_RANK);
            h->temp_n = (uint64_t)item_range(r, x, 1, 0, TL_PARTIAL_MAX_COUNT);
            h->hot_n = (uint64_t)item_range(r, x, 2, 0, (int64_t)h->temp_n);
            h->hot_ns = item_range(r, x, 3, 0, TL_PARTIAL_MAX_NS);
            h->temp_max = item_num(x, 4);
            h->power_n = (uint64_t)item_range(r, x, 5, 0, TL_PARTIAL_MAX_COUNT);
            h->cap_n = (uint64_t)item_range(r, x, 6, 0, (int64_t)h->power_n);
            h->power_limit_w = item_num(x, 7);
            h->power_max = item_num(x, 8);
            h->reasons_n = (uint64_t)item_range(r, x, 9, 0, TL_PARTIAL_MAX_COUNT);
            h->thermal_n = (uint64_t)item_range(r, x, 10, 0, (int64_t)h->reasons_n);
            h->power_throttle_n = (uint64_t)item_range(r, x, 11, 0, (int64_t)h->reasons_n);
        }
    }
    if (json_object_get(o, "growth") != NULL && (arr = get_array(r, o, "growth")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_GROWTH) {
            bad_key(r, "growth", "more than TL_SESSION_MAX_GROWTH sequences");
            return;
        }
        s->growth = calloc(TL_SESSION_MAX_GROWTH, sizeof *s->growth);
        json_array_foreach(arr, i, x) {
            if (s->growth == NULL || r->bad)
                break;
            tl_sgrowth *g = &s->growth[s->ngrowth++];
            g->what = item_str(r, x, 0);
            g->metric = (int)item_range(r, x, 1, 0, TL_GROWTH_COUNT - 1);
            g->n = (uint32_t)item_range(r, x, 2, TL_GROWTH_MIN_REPEATS, INT32_MAX);
            g->drops = (uint32_t)item_range(r, x, 3, 0, (int64_t)g->n);
            g->first = item_num(x, 4);
            g->last = item_num(x, 5);
            g->max = item_num(x, 6);
            g->span_ns = item_range(r, x, 7, -1, TL_PARTIAL_MAX_NS);
        }
    }
}

static void read_session(reader *r, const json_t *o, tl_session *s)
{
    memset(s, 0, sizeof *s);
    tl_session_extras_init(s);
    if (!json_is_object(o)) {
        bad(r, "expected an object");
        return;
    }
    s->path = get_str(r, o, "path");
    s->format = (int)get_range(r, o, "format", TL_FMT_UNKNOWN, TL_FMT_INFERIX);
    s->rank = (int)get_range(r, o, "rank", -1, TL_PARTIAL_MAX_RANK);
    s->world_size = (int)get_range(r, o, "world_size", 0, TL_PARTIAL_MAX_RANK);
    s->rank_source = (int)get_range(r, o, "rank_source", TL_RANK_UNKNOWN, TL_RANK_ORDER);
    s->session = 0;
    s->rank_detail = get_str(r, o, "rank_detail");
    s->start_ns = get_ts(r, o, "start_ns");
    s->span_ns = get_range(r, o, "span_ns", -1, TL_PARTIAL_MAX_NS);
    s->truncated = (int)get_range(r, o, "truncated", 0, 1);
    json_t *comp = json_object_get(o, "companion_of");
    if (json_is_string(comp))
        s->companion_of = strdup(json_string_value(comp));
    s->peak_allocated = get_num(r, o, "peak_allocated");
    s->peak_reserved = get_num(r, o, "peak_reserved");
    s->device_total = get_num(r, o, "device_total");
    s->peak_rss = get_num(r, o, "peak_rss");
    /* absent from partials of an older tally: unknown */
    s->peak_device_used = json_object_get(o, "peak_device_used") ? get_num(r, o, "peak_device_used") : NAN;
    s->gpu_util_mean = get_num(r, o, "gpu_util_mean");
    json_t *arr, *x;
    size_t i;
    s->warnings = read_strings(r, o, "warnings", &s->nwarnings);
    if ((arr = get_array(r, o, "names")) != NULL) {
        s->names = calloc(json_array_size(arr) + 1, sizeof *s->names);
        json_array_foreach(arr, i, x) {
            if (s->names == NULL || r->bad)
                break;
            tl_sname *n = &s->names[s->nnames++];
            n->group = (int)get_range(r, x, "group", 0, TL_GROUP_COUNT - 1);
            n->name = get_str(r, x, "name");
            n->exact = (int)get_range(r, x, "exact", 0, 1);
            n->median_ns = get_num(r, x, "median_ns");
            n->p95_ns = get_num(r, x, "p95_ns");
            n->std_ns = get_num(r, x, "std_ns");
            n->incl_ns = opt_range(r, x, "incl_ns", -1, -1, TL_PARTIAL_MAX_NS);
            n->self_ns = opt_range(r, x, "self_ns", -1, -1, TL_PARTIAL_MAX_NS);
            read_stat(r, json_object_get(x, "stat"), &n->d);
        }
    }
    if ((arr = get_array(r, o, "kernels")) != NULL) {
        s->kernels = calloc(json_array_size(arr) + 1, sizeof *s->kernels);
        json_array_foreach(arr, i, x) {
            if (s->kernels == NULL || r->bad)
                break;
            tl_skernel *k = &s->kernels[s->nkernels++];
            k->name = get_str(r, x, "name");
            k->type = (int)get_range(r, x, "type", 0, TL_KT_COUNT - 1);
            read_stat(r, json_object_get(x, "stat"), &k->d);
        }
    }
    if ((arr = get_array(r, o, "steps")) != NULL) {
        s->steps = calloc(json_array_size(arr) + 1, sizeof *s->steps);
        json_array_foreach(arr, i, x) if (s->steps)
            s->steps[s->nsteps++] = (tl_sstep){ item_int(r, x, 0), item_range(r, x, 1, 0, TL_PARTIAL_MAX_NS),
                                                item_range(r, x, 2, -1, TL_PARTIAL_MAX_NS), item_ts(r, x, 3),
                                                (int)opt_item_range(r, x, 4, 0, 0, 1) };
    }
    read_gpu(r, json_object_get(o, "gpu"), &s->gpu);
    read_timeline(r, json_object_get(o, "timeline"), &s->timeline);
    if ((arr = get_array(r, o, "mem")) != NULL) {
        s->mem = calloc(json_array_size(arr) + 1, sizeof *s->mem);
        json_array_foreach(arr, i, x) {
            if (s->mem == NULL || i >= TL_MEM_SERIES)
                break;
            json_t *va = json_array_get(x, 1), *vr = json_array_get(x, 2);
            s->mem[s->nmem++] = (tl_mem_sample){ item_range(r, x, 0, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS),
                                                 json_is_number(va) ? json_number_value(va) : NAN,
                                                 json_is_number(vr) ? json_number_value(vr) : NAN };
        }
    }
    s->abs_time = (int)opt_range(r, o, "abs_time", 0, 0, 1);
    /* absent from partials of an older tally: unknown */
    s->pid = opt_range(r, o, "pid", -1, -1, INT64_MAX);
    s->graph_launches = (uint64_t)opt_range(r, o, "graph_launches", 0, 0, TL_PARTIAL_MAX_COUNT);
    json_t *dev = json_object_get(o, "device_name");
    if (json_is_string(dev))
        s->device_name = strdup(json_string_value(dev));
    if ((arr = get_array(r, o, "snapshots")) != NULL) {
        s->snaps = calloc(json_array_size(arr) + 1, sizeof *s->snaps);
        json_array_foreach(arr, i, x) if (s->snaps)
            s->snaps[s->nsnaps++] = (tl_ssnap){ get_str(r, x, "label"), get_num(r, x, "allocated"),
                                                get_num(r, x, "reserved"), get_num(r, x, "peak_allocated"),
                                                get_num(r, x, "rss"),
                                                json_object_get(x, "device_used") ? get_num(r, x, "device_used")
                                                                                  : NAN,
                                                json_is_integer(json_object_get(x, "ts_ns")) ? get_ts(r, x, "ts_ns")
                                                                                             : INT64_MIN };
    }
    read_series(r, o, s);
    read_devices(r, o, s);
    read_extras(r, o, s);
    read_calltree(r, o, &s->calltree);
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
            s->colls[s->ncolls++] = (tl_collective){ (uint32_t)k, item_range(r, x, 1, 0, TL_PARTIAL_MAX_NS) };
        }
    }
}

int tl_partial_is_document(const json_t *root)
{
    const json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt))
        return 0;
    const char *f = json_string_value(fmt);
    return strcmp(f, "tally-partial") == 0 ||
           (strcmp(f, "tally-aggregate") == 0 && json_is_array(json_object_get(root, "sessions")));
}

int tl_partial_read_json(tl_aggregate *a, const json_t *root, char *err, size_t errlen)
{
    reader r = { err, errlen, 0 };
    if (!tl_partial_is_document(root)) {
        const json_t *fmt = json_object_get(root, "format");
        if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-aggregate") == 0)
            snprintf(err, errlen, "an aggregate without its sessions (written by an older tally); "
                                  "make it again, or pass the partials");
        else
            snprintf(err, errlen, "not a partial aggregate (no \"format\": \"tally-partial\"); "
                                  "write one with tally aggregate --partial");
        return -1;
    }
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        snprintf(err, errlen, "partial aggregate version %lld is not supported (expected 1)",
                 json_is_integer(ver) ? (long long)json_integer_value(ver) : -1LL);
        return -1;
    }
    json_t *opt = json_object_get(root, "options");
    if (json_is_object(opt)) {
        json_t *w = json_object_get(opt, "window");
        int whole = json_is_string(w) && strcmp(json_string_value(w), "whole-trace") == 0;
        int64_t kw = get_ns(&r, opt, "kernel_wait_ns");
        if (r.bad)
            return -1;
        if (a->nsessions > 0 && (whole != a->opt.whole_trace || kw != a->opt.kernel_wait_ns)) {
            snprintf(err, errlen, "analyzed with other options (window, kernel wait) than the inputs before it");
            return -1;
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
            return -1;
        }
        if (tl_aggregate_add_session(a, &s) != 0) {
            tl_session_release(&s);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return r.bad ? -1 : 0;
}

/* Read a loaded document (NULL: it did not load, je says why) and let go of it. */
static int read_loaded(tl_aggregate *a, json_t *root, const json_error_t *je, char *err, size_t errlen)
{
    if (root == NULL) {
        snprintf(err, errlen, "not valid JSON at line %d, column %d: %s", je->line, je->column, je->text);
        return -1;
    }
    int rc = tl_partial_read_json(a, root, err, errlen);
    json_decref(root);
    return rc;
}

int tl_partial_read_buffer(tl_aggregate *a, const char *buf, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    return read_loaded(a, json_loadb(buf, len, 0, &je), &je, err, errlen);
}

int tl_partial_read(tl_aggregate *a, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    return read_loaded(a, json_load_file(path, 0, &je), &je, err, errlen);
}
