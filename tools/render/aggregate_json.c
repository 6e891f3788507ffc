/*
 * aggregate_json.c - the aggregate as JSON (schema/tally-aggregate.schema.json):
 * the tables users and machines read (ranks, across ranks, names, the merged
 * call tree, stragglers, recommendations, inputs), then every session result
 * exactly as a partial holds it (partial_json.c), so that an aggregate is an
 * input too. Past TL_JSON_RANKS_FULL ranks (render.h) it is bounded unless
 * asked for all (--json-all): the picked ranks in full, a short row for every
 * rank, and a "detail" object saying what was left out.
 */
#define _GNU_SOURCE
#include "render.h"
#include "memcats_out.h"
#include "memops_out.h"
#include "rank_pick.h"
#include "text_numbers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_PER_RANK 10
#define TOP_NAMES 100
#define TOP_CALLTREE 500 /* call paths of the merged tree listed (the largest, with their callers) */

static void kv_us(tl_json *j, const char *k, int64_t ns)
{
    tl_json_key(j, k);
    tl_json_fixed(j, (double)ns / 1000.0, 3);
}

static void kv_pct_value(tl_json *j, double v)
{
    if (isfinite(v))
        tl_json_fixed(j, v, 3);
    else
        tl_json_null(j);
}

static void kv_pct(tl_json *j, const char *k, double v)
{
    tl_json_key(j, k);
    kv_pct_value(j, v);
}

/* ---- the aggregate ------------------------------------------------------- */

/* A sentence of the analysis with its numbers written (text_numbers.h). */
static void kv_text(tl_json *j, const char *key, const char *s)
{
    char *t = tl_text_numbers(s);
    tl_json_kv_string(j, key, t ? t : "");
    free(t);
}

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
    tl_json_kv_int(j, "devices", g->devices > 1 ? g->devices : 1);
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
    static const char *mask_names[8] = {
        NULL,     "compute",        "communication",        "compute+communication",
        "memory", "compute+memory", "communication+memory", "compute+communication+memory"
    };
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
        if (st->host_part >= 0)
            kv_us(j, "host_wait_before_launch_us", st->host_part);
        kv_us(j, "busy_us", st->busy);
        if (st->comm_busy >= 0)
            kv_us(j, "communication_busy_us", st->comm_busy);
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
    tl_json_kv_double(j, "mean_ns", r->step_mean);
    tl_json_kv_double(j, "median_ns", r->step_median);
    tl_json_kv_double(j, "min_ns", r->step_min);
    tl_json_kv_double(j, "max_ns", r->step_max);
    tl_json_kv_double(j, "std_ns", r->step_std);
    tl_json_kv_double(j, "spread", r->step_spread);
    tl_json_kv_double(j, "it_per_s", isfinite(r->step_mean) && r->step_mean > 0 ? 1e9 / r->step_mean : NAN);
    tl_json_kv_double(j, "compute_per_step_ns", r->compute_per_step);
    tl_json_key(j, "durations_ns");
    tl_json_array_begin(j);
    for (size_t i = 0; i < r->nsteps; i++)
        tl_json_int(j, r->steps[i].dur_ns);
    tl_json_array_end(j);
    /* the mean step by category (docs/analysis.md, "Step time by category") */
    tl_json_key(j, "by_category");
    if (r->stepcat_steps == 0) {
        tl_json_null(j);
    } else {
        tl_json_object_begin(j);
        tl_json_kv_uint(j, "steps", r->stepcat_steps);
        tl_json_kv_bool(j, "host_cut", r->stepcats_cut);
        tl_json_key(j, "mean_ns");
        tl_json_object_begin(j);
        for (int c = 0; c < TL_SC_COUNT; c++)
            tl_json_kv_double(j, tl_stepcat_name(c), r->stepcat_mean[c]);
        tl_json_object_end(j);
        tl_json_object_end(j);
    }
    tl_json_object_end(j);
}

/* The top kernels' launching operators and launch configurations (kinfo.c). */
#define TL_JSON_KERNEL_LAUNCHES 50
static void write_kernel_launches(tl_json *j, const tl_aggregate *a)
{
    size_t n = 0;
    size_t *idx = tl_name_table_top(&a->names, TL_GROUP_KERNELS, &n);
    tl_json_array_begin(j);
    for (size_t i = 0, shown = 0; idx != NULL && i < n && shown < TL_JSON_KERNEL_LAUNCHES; i++) {
        const char *name = a->names.rows[idx[i]].name;
        const tl_skinfo *k = tl_kernel_info(a, name);
        if (k == NULL)
            continue;
        shown++;
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", name);
        tl_json_key(j, "op");
        k->op ? tl_json_string(j, k->op) : tl_json_null(j);
        tl_json_kv_int(j, "ops", k->ops);
        tl_json_kv_double(j, "op_share", k->linked_ns > 0 ? (double)k->op_ns / (double)k->linked_ns : NAN);
        tl_json_key(j, "grid");
        if (k->grid[0] < 0) {
            tl_json_null(j);
        } else {
            tl_json_array_begin(j);
            for (int d = 0; d < 3; d++)
                tl_json_int(j, k->grid[d]);
            tl_json_array_end(j);
        }
        tl_json_key(j, "block");
        if (k->block[0] < 0) {
            tl_json_null(j);
        } else {
            tl_json_array_begin(j);
            for (int d = 0; d < 3; d++)
                tl_json_int(j, k->block[d]);
            tl_json_array_end(j);
        }
        tl_json_kv_bool(j, "varies", (int)k->varies);
        tl_json_key(j, "registers_per_thread");
        k->regs >= 0 ? tl_json_int(j, k->regs) : tl_json_null(j);
        tl_json_key(j, "shared_memory_bytes");
        k->smem >= 0 ? tl_json_int(j, k->smem) : tl_json_null(j);
        tl_json_kv_double(j, "occupancy_pct", k->occupancy);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    free(idx);
}

/* The per-step view: every step of the rank it shows, by category. */
static void write_stepcats(tl_json *j, const tl_aggregate *a)
{
    const tl_rank_result *r = NULL;
    for (size_t i = 0; i < a->nranks && a->stepcat_rank >= 0; i++)
        if (a->ranks[i].rank == a->stepcat_rank)
            r = &a->ranks[i];
    if (r == NULL) {
        tl_json_null(j);
        return;
    }
    tl_json_object_begin(j);
    tl_json_kv_int(j, "rank", r->rank);
    tl_json_kv_string(j, "chosen_as", a->stepcat_rank_straggler ? "straggler" : "median");
    tl_json_key(j, "categories");
    tl_json_array_begin(j);
    for (int c = 0; c < TL_SC_COUNT; c++)
        tl_json_string(j, tl_stepcat_name(c));
    tl_json_array_end(j);
    tl_json_key(j, "steps");
    tl_json_array_begin(j);
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (s->nstepcats != s->nsteps)
            continue;
        for (size_t i = 0; i < s->nstepcats; i++) {
            tl_json_object_begin(j);
            tl_json_kv_int(j, "session", (int64_t)k);
            tl_json_kv_int(j, "number", s->steps[i].number);
            tl_json_kv_int(j, "dur_ns", s->steps[i].dur_ns);
            tl_json_kv_bool(j, "partial", s->steps[i].partial);
            for (int c = 0; c < TL_SC_COUNT; c++)
                tl_json_kv_int(j, tl_stepcat_name(c), s->stepcats[i].ns[c]);
            tl_json_object_end(j);
        }
    }
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
        tl_json_kv_double(j, "mean", t->mean[k]);
        tl_json_kv_double(j, "max", t->max[k]);
        tl_json_object_end(j);
    }
    tl_json_object_end(j);
    tl_json_kv_double(j, "power_w", t->power_w);
    tl_json_kv_double(j, "energy_j", t->energy_j);
    tl_json_kv_double(j, "energy_wh", t->energy_j / TL_J_PER_WH);
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
    tl_json_kv_double(j, "frames", d->sized ? d->frames : NAN);
    tl_json_kv_double(j, "block_size", d->block_size);
    tl_json_kv_double(j, "block_size_min", d->size_min);
    tl_json_kv_double(j, "block_size_max", d->size_max);
    tl_json_kv_int(j, "block_time_ns", d->block_ns);
    tl_json_kv_double(j, "fps", d->fps);
    tl_json_kv_double(j, "blocks_per_s", d->bps);
    tl_json_kv_double(j, "first_block_ns", d->first_block_ns >= 0 ? (double)d->first_block_ns : NAN);
    tl_json_kv_double(j, "later_block_median_ns", d->later_median_ns >= 0 ? (double)d->later_median_ns : NAN);
    tl_json_kv_double(j, "block_memory_peak_bytes", d->mem_peak);
    tl_json_kv_double(j, "block_rss_peak_bytes", d->rss_peak);
    tl_json_kv_uint(j, "steps", d->steps);
    tl_json_kv_int(j, "step_time_ns", d->step_ns);
    tl_json_object_end(j);
}

/* The rank's counter rates (tally_counter_rate), only where it has one. */
static void write_rank_rates(tl_json *j, const tl_aggregate *a, const tl_rank_result *r)
{
    int any = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        for (size_t c = 0; tl_session_counts(s) && c < s->ncounters; c++) {
            const tl_scounter *x = &s->counters[c];
            if (x->source != TL_COUNTER_RATE || !isfinite(x->mean))
                continue;
            if (!any++) {
                tl_json_key(j, "counter_rates");
                tl_json_array_begin(j);
            }
            tl_json_object_begin(j);
            tl_json_kv_string(j, "name", x->name);
            tl_json_kv_double(j, "rate", x->mean);
            tl_json_object_end(j);
        }
    }
    if (any)
        tl_json_array_end(j);
}

/* The ranks in full: every rank, or past TL_JSON_RANKS_FULL without
 * --json-all those rank_pick.h picks (why[i] != 0). */
static void write_ranks(tl_json *j, const tl_aggregate *a, const unsigned char *why)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (why != NULL && why[i] == 0)
            continue;
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
            tl_json_kv_string(j, "path", s->id.path);
            tl_json_kv_string(j, "format", tl_format_name(s->id.format));
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
        tl_json_kv_double(j, "peak_allocated_bytes", r->peak_allocated);
        tl_json_kv_double(j, "peak_reserved_bytes", r->peak_reserved);
        tl_json_kv_double(j, "peak_device_used_bytes", r->peak_device_used);
        tl_json_kv_double(j, "device_total_bytes", r->device_total);
        kv_pct(j, "peak_device_pct", tl_rank_peak_device_pct(r));
        tl_json_kv_double(j, "fragmentation_ratio",
                          isfinite(r->peak_reserved) && isfinite(r->peak_allocated) && r->peak_allocated > 0
                              ? r->peak_reserved / r->peak_allocated
                              : NAN);
        tl_json_kv_double(j, "peak_rss_bytes", r->peak_rss);
        tl_json_kv_double(j, "gpu_utilization_mean_pct", r->gpu_util_mean);
        tl_json_object_end(j);
        tl_json_key(j, "telemetry");
        write_rank_telemetry(j, &r->tel);
        write_rank_rates(j, a, r);
        tl_json_key(j, "diffusion");
        write_rank_diffusion(j, &r->diff);
        tl_json_key(j, "top");
        write_rank_top(j, a, i);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

/* Why a rank is in full, as words: "all" (nothing was left out), else
 * "straggler", "min", "max", "p10" ... "p90", "sample" (rank_pick.h). */
static void write_picked(tl_json *j, unsigned char why)
{
    static const char *q[] = { NULL, "p10", "p25", "median", "p75", "p90", NULL, NULL };
    tl_json_array_begin(j);
    if (why & TL_PICK_ALL)
        tl_json_string(j, "all");
    if (why & TL_PICK_STRAGGLER)
        tl_json_string(j, "straggler");
    if (why & TL_PICK_LEAST)
        tl_json_string(j, "min");
    if (why & TL_PICK_MOST)
        tl_json_string(j, "max");
    if (q[TL_PICK_QUANTILE(why)] != NULL)
        tl_json_string(j, q[TL_PICK_QUANTILE(why)]);
    if (why & TL_PICK_SAMPLE)
        tl_json_string(j, "sample");
    tl_json_array_end(j);
}

/* One short row per rank, every rank, whatever "ranks" keeps in full: the
 * numbers of the per-rank tables (docs/analysis.md, "The aggregate JSON"). */
static void write_rank_rows(tl_json *j, const tl_aggregate *a, const unsigned char *why)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        unsigned char w = why != NULL ? why[i] : TL_PICK_ALL;
        tl_json_object_begin(j);
        tl_json_kv_int(j, "rank", r->rank);
        tl_json_kv_bool(j, "in_full", w != 0);
        tl_json_key(j, "picked");
        write_picked(j, w);
        tl_json_kv_bool(j, "straggler", r->straggler);
        tl_json_kv_uint(j, "sessions", r->nsessions);
        tl_json_key(j, "span_ns");
        r->span_ns > 0 ? tl_json_int(j, r->span_ns) : tl_json_null(j);
        tl_json_kv_uint(j, "steps", r->step_count);
        tl_json_kv_double(j, "step_mean_ns", r->step_mean);
        tl_json_kv_double(j, "step_median_ns", r->step_median);
        tl_json_kv_double(j, "step_max_ns", r->step_max);
        tl_json_kv_double(j, "it_per_s", isfinite(r->step_mean) && r->step_mean > 0 ? 1e9 / r->step_mean : NAN);
        tl_json_key(j, "gpu_idle_pct");
        if (r->gpu.present)
            kv_pct_value(j, tl_pct(r->gpu.idle, r->gpu.kernel_time));
        else
            tl_json_null(j);
        tl_json_kv_double(j, "peak_allocated_bytes", r->peak_allocated);
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
        tl_json_kv_double(j, "min", x->min);
        tl_json_kv_double(j, "max", x->max);
        tl_json_kv_double(j, "mean", x->mean);
        tl_json_kv_double(j, "median", x->median);
        tl_json_kv_double(j, "std", x->std);
        tl_json_kv_int(j, "min_rank", x->min_rank);
        tl_json_kv_int(j, "max_rank", x->max_rank);
        tl_json_kv_double(j, "imbalance", x->imbalance);
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
            tl_json_kv_double(j, "inclusive_ns", r->incl_total);
            tl_json_kv_double(j, "self_ns", r->self_total >= 0 ? r->self_total : NAN);
            tl_json_kv_double(j, "mean_ns", r->all.mean);
            tl_json_kv_uint(j, "min_ns", r->all.min);
            tl_json_kv_uint(j, "max_ns", r->all.max);
            tl_json_kv_double(j, "median_ns", r->exact ? tl_dur_stat_quantile(&r->all, 0.5) : NAN);
            tl_json_kv_double(j, "p95_ns", r->exact ? tl_dur_stat_quantile(&r->all, 0.95) : NAN);
            tl_json_kv_double(j, "std_ns", r->exact ? tl_dur_stat_std(&r->all) : NAN);
            tl_json_key(j, "across_ranks");
            tl_json_object_begin(j);
            tl_json_kv_int(j, "ranks", r->nranks_with);
            tl_json_kv_double(j, "min_ns", r->rank_min);
            tl_json_kv_double(j, "max_ns", r->rank_max);
            tl_json_kv_double(j, "mean_ns", r->rank_mean);
            tl_json_kv_double(j, "median_ns", r->rank_median);
            tl_json_kv_double(j, "std_ns", r->rank_std);
            tl_json_kv_int(j, "min_rank", r->rank_of_min);
            tl_json_kv_int(j, "max_rank", r->rank_of_max);
            tl_json_kv_double(j, "imbalance", r->imbalance);
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
        kv_text(j, "summary", s->summary);
        tl_json_kv_double(j, "value", s->value);
        tl_json_kv_double(j, "others_median", s->others_median);
        tl_json_kv_double(j, "delta_pct", s->delta_pct);
        tl_json_key(j, "names");
        tl_json_array_begin(j);
        for (int k = 0; k < s->nitems; k++) {
            tl_json_object_begin(j);
            tl_json_kv_string(j, "name", s->items[k].name);
            tl_json_kv_double(j, "delta_per_step_ns", s->items[k].delta_ns);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
        tl_json_object_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static const char *waits_source_name(int source)
{
    return source == TL_WAITS_GPU ? "gpu_kernels" : source == TL_WAITS_CPU ? "cpu_ranges" : "none";
}

/* Who waits for whom (waits.h; docs/analysis.md, "Waits"). */
static void write_waits(tl_json *j, const tl_aggregate *a)
{
    const tl_waits *w = &a->waits;
    tl_json_object_begin(j);
    tl_json_kv_string(j, "source", waits_source_name(w->source));
    tl_json_kv_string(j, "matched_by", w->matched_by == TL_WAITS_BY_SEQ ? "sequence" : "order");
    tl_json_kv_uint(j, "matched", w->matched);
    tl_json_kv_uint(j, "unmatched", w->partial);
    kv_us(j, "residual_us", w->residual_ns);
    kv_us(j, "trust_us", w->trust_ns);
    kv_us(j, "waited_us", w->waited_ns);
    tl_json_key(j, "straggler");
    w->straggler >= 0 ? tl_json_int(j, w->straggler) : tl_json_null(j);
    tl_json_key(j, "most_last");
    w->most_last >= 0 ? tl_json_int(j, w->most_last) : tl_json_null(j);
    tl_json_kv_uint(j, "most_last_count", w->most_last_n);
    tl_json_key(j, "why_none");
    w->why_none && w->source != TL_WAITS_NONE ? tl_json_string(j, w->why_none) : tl_json_null(j);
    tl_json_key(j, "judged");
    w->judged >= 0 ? tl_json_int(j, w->judged) : tl_json_null(j);
    tl_json_kv_double(j, "p_value", w->judged >= 0 ? w->straggler_p : NAN);
    kv_pct(j, "caused_share_pct", w->caused_share_pct);
    tl_json_kv_double(j, "steps", w->steps);
    kv_us(j, "caused_per_step_us", (int64_t)(isfinite(w->caused_per_step_ns) ? w->caused_per_step_ns : 0));
    kv_pct(j, "caused_step_pct", w->step_share_pct);
    tl_json_key(j, "cause");
    tl_json_array_begin(j);
    for (int i = 0; i < w->ncause; i++) {
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", w->cause[i].name);
        tl_json_kv_string(j, "group", tl_group_name(w->cause[i].group));
        tl_json_kv_double(j, "delta_per_step_ns", w->cause[i].delta_ns);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    /* before the late arrivals (only when there are windows to compare) */
    if (w->straggler >= 0 && w->window_n > 0) {
        tl_json_key(j, "window");
        tl_json_object_begin(j);
        tl_json_kv_uint(j, "arrivals", w->window_n);
        tl_json_key(j, "cause");
        w->window_cause >= 0 ? tl_json_string(j, tl_stepcat_name(w->window_cause)) : tl_json_null(j);
        tl_json_key(j, "straggler_ns");
        tl_json_object_begin(j);
        for (int c = 0; c < TL_SC_COUNT; c++)
            tl_json_kv_double(j, tl_stepcat_name(c), w->window_mine_ns[c]);
        tl_json_object_end(j);
        tl_json_key(j, "others_ns");
        tl_json_object_begin(j);
        for (int c = 0; c < TL_SC_COUNT; c++)
            tl_json_kv_double(j, tl_stepcat_name(c), w->window_others_ns[c]);
        tl_json_object_end(j);
        tl_json_object_end(j);
    }
    tl_json_key(j, "ranks");
    tl_json_array_begin(j);
    for (size_t i = 0; i < w->nranks && w->source != TL_WAITS_NONE; i++) {
        const tl_rank_waits *r = &w->ranks[i];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "rank", r->rank);
        tl_json_kv_bool(j, "used", r->used);
        tl_json_key(j, "left_out");
        r->why_out ? tl_json_string(j, r->why_out) : tl_json_null(j);
        tl_json_kv_uint(j, "instances", r->instances);
        tl_json_kv_uint(j, "last", r->last);
        kv_us(j, "waited_us", r->waited_ns);
        kv_us(j, "caused_us", r->caused_ns);
        kv_us(j, "clock_offset_us", r->offset_ns);
        kv_pct(j, "waited_step_pct", tl_waits_waited_pct(a, i));
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

/* A row's per-rank list (collective bandwidth, operators by shape) holds at
 * most this many ranks; the rest are counted in "per_rank_cut" (written only
 * then): a 100,000-rank job's rows stay small, its across-rank figures whole. */
#define TL_JSON_ROW_RANKS 256

/* One cell of the collective bandwidth (collbw.h): GB/s are 1e9 bytes/s, as NCCL's tests print. */
static void write_collbw_cell(tl_json *j, const tl_collbw_cell *c)
{
    tl_json_kv_uint(j, "count", c->count);
    tl_json_key(j, "bytes");
    tl_json_fixed(j, c->bytes, 0);
    kv_us(j, "time_us", c->time_ns);
    kv_pct(j, "algbw_gbps", tl_collbw_algbw(c) / 1e9);
    kv_pct(j, "busbw_gbps", tl_collbw_busbw(c) / 1e9);
}

/* Collective bytes and bandwidth (collbw.h; docs/analysis.md, "Collective bandwidth"). */
static void write_collbw(tl_json *j, const tl_aggregate *a)
{
    const tl_collbw *c = &a->collbw;
    tl_json_object_begin(j);
    tl_json_kv_string(j, "source", waits_source_name(c->source));
    tl_json_kv_uint(j, "instances", c->instances);
    tl_json_kv_uint(j, "sized", c->sized);
    tl_json_kv_uint(j, "sized_from_annotation", c->paired);
    tl_json_kv_uint(j, "after_last_arrival", c->after_arrival);
    tl_json_kv_uint(j, "no_time_left", c->untimed);
    tl_json_key(j, "rows");
    tl_json_array_begin(j);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_collbw_row *r = &c->rows[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "kind", tl_coll_kind_name(r->kind));
        tl_json_key(j, "bucket_lo_bytes");
        tl_json_fixed(j, tl_collbw_bucket_lo(r->bucket), 0);
        tl_json_key(j, "bucket_hi_bytes");
        r->bucket + 1 < TL_COLLBW_BUCKETS ? tl_json_fixed(j, tl_collbw_bucket_lo(r->bucket + 1), 0) : tl_json_null(j);
        write_collbw_cell(j, &r->all);
        tl_json_kv_int(j, "ranks", r->nranks);
        kv_pct(j, "busbw_min_gbps", r->busbw_min / 1e9);
        kv_pct(j, "busbw_median_gbps", r->busbw_median / 1e9);
        kv_pct(j, "busbw_max_gbps", r->busbw_max / 1e9);
        tl_json_key(j, "min_rank");
        r->min_rank >= 0 ? tl_json_int(j, r->min_rank) : tl_json_null(j);
        tl_json_key(j, "max_rank");
        r->max_rank >= 0 ? tl_json_int(j, r->max_rank) : tl_json_null(j);
        tl_json_key(j, "per_rank");
        tl_json_array_begin(j);
        size_t shown = 0, cut = 0;
        for (size_t k = 0; k < c->nranks; k++) {
            if (r->rank[k].count == 0)
                continue;
            if (shown == TL_JSON_ROW_RANKS) {
                cut++;
                continue;
            }
            shown++;
            tl_json_object_begin(j);
            tl_json_kv_int(j, "rank", a->ranks[k].rank);
            write_collbw_cell(j, &r->rank[k]);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
        if (cut > 0)
            tl_json_kv_uint(j, "per_rank_cut", cut);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_key(j, "ranks");
    tl_json_array_begin(j);
    for (size_t k = 0; k < c->nranks; k++) {
        if (c->ranks[k].count == 0)
            continue;
        tl_json_object_begin(j);
        tl_json_kv_int(j, "rank", a->ranks[k].rank);
        write_collbw_cell(j, &c->ranks[k]);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

static const char *flops_source_name(int s)
{
    return s == TL_FLOPS_TRACE ? "trace" : s == TL_FLOPS_SHAPES ? "shapes" : "none";
}

/* Operators by input shape, FLOPs and TFLOP/s (analyze/shapes.h; docs/analysis.md). */
static void write_shapes(tl_json *j, const tl_aggregate *a)
{
    const tl_shapes *sh = &a->shapes;
    tl_json_object_begin(j);
    tl_json_kv_int(j, "sessions", sh->sessions);
    tl_json_kv_uint(j, "operators", sh->ops_total);
    tl_json_kv_int(j, "top_operators", TL_SHAPES_TOP_OPS);
    tl_json_kv_int(j, "top_shapes_per_operator", TL_SHAPES_PER_OP);
    tl_json_kv_uint(j, "dropped_keys", sh->dropped_keys);
    tl_json_kv_uint(j, "dropped_calls", sh->dropped_calls);
    tl_json_key(j, "device");
    sh->device ? tl_json_string(j, sh->device) : tl_json_null(j);
    tl_json_kv_bool(j, "device_peak_known", sh->peak_known);
    tl_json_key(j, "ops");
    tl_json_array_begin(j);
    for (size_t o = 0; o < sh->nops; o++) {
        const tl_shape_op *op = &sh->ops[o];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", op->name);
        tl_json_kv_uint(j, "calls", op->count);
        kv_us(j, "total_us", op->total_ns);
        tl_json_kv_uint(j, "shapes", op->shapes);
        tl_json_key(j, "rows");
        tl_json_array_begin(j);
        for (size_t k = op->first; k < op->first + op->n; k++) {
            const tl_shape_row *r = &sh->rows[k];
            tl_json_object_begin(j);
            tl_json_kv_string(j, "input_dims", r->dims);
            tl_json_kv_string(j, "input_types", r->types);
            tl_json_kv_uint(j, "calls", r->count);
            kv_us(j, "total_us", r->total_ns);
            tl_json_key(j, "mean_us");
            tl_json_fixed(j, r->count ? (double)r->total_ns / (double)r->count / 1000.0 : 0, 3);
            kv_us(j, "min_us", r->min_ns);
            kv_us(j, "max_us", r->max_ns);
            tl_json_kv_int(j, "ranks", r->nranks);
            kv_us(j, "rank_min_us", r->rank_min_ns);
            tl_json_key(j, "rank_median_us");
            tl_json_fixed(j, r->rank_median_ns / 1000.0, 3);
            kv_us(j, "rank_max_us", r->rank_max_ns);
            tl_json_kv_int(j, "min_rank", r->min_rank);
            tl_json_kv_int(j, "max_rank", r->max_rank);
            tl_json_kv_string(j, "flops_source", flops_source_name(r->flops_source));
            tl_json_key(j, "flops");
            isfinite(r->flops) ? tl_json_fixed(j, r->flops, 0) : tl_json_null(j);
            kv_us(j, "gpu_us", r->gpu_ns);
            tl_json_kv_uint(j, "kernels", r->kernels);
            tl_json_kv_string(j, "tflops_over",
                              r->time_source == TL_TFLOPS_GPU   ? "kernels"
                              : r->time_source == TL_TFLOPS_CPU ? "cpu_time"
                                                                : "none");
            kv_pct(j, "tflops", r->tflops);
            kv_pct(j, "peak_tflops", r->peak_tflops);
            kv_pct(j, "peak_pct", 100.0 * r->tflops / r->peak_tflops);
            tl_json_key(j, "per_rank");
            tl_json_array_begin(j);
            size_t shown = 0, cut = 0;
            for (size_t ri = 0; ri < a->nranks; ri++) {
                if (r->rank_ns[ri] == 0)
                    continue;
                if (shown == TL_JSON_ROW_RANKS) {
                    cut++;
                    continue;
                }
                shown++;
                tl_json_object_begin(j);
                tl_json_kv_int(j, "rank", a->ranks[ri].rank);
                kv_us(j, "total_us", r->rank_ns[ri]);
                tl_json_object_end(j);
            }
            tl_json_array_end(j);
            if (cut > 0)
                tl_json_kv_uint(j, "per_rank_cut", cut);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

static void write_recs(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (int i = 0; i < a->nrecs; i++) {
        const tl_recommendation *r = &a->recs[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "id", r->id);
        tl_json_kv_string(j, "severity", r->severity);
        kv_text(j, "message", r->message);
        kv_text(j, "finding", r->finding);
        kv_text(j, "evidence", r->evidence);
        tl_json_key(j, "rank");
        r->rank >= 0 ? tl_json_int(j, r->rank) : tl_json_null(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static void write_inputs(tl_json *j, const tl_aggregate *a)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "path", s->id.path);
        tl_json_kv_string(j, "format", s->id.format != TL_FMT_UNKNOWN ? tl_format_name(s->id.format) : "not-a-profile");
        tl_json_key(j, "rank");
        s->id.rank >= 0 ? tl_json_int(j, s->id.rank) : tl_json_null(j);
        tl_json_key(j, "rank_source");
        s->id.rank >= 0 ? tl_json_string(j, tl_rank_source_name(s->id.rank_source)) : tl_json_null(j);
        tl_json_kv_string(j, "rank_detail", s->id.rank_detail);
        tl_json_kv_int(j, "session", s->id.session);
        tl_json_kv_bool(j, "truncated", s->truncated);
        tl_json_key(j, "companion_of");
        s->id.companion_of ? tl_json_string(j, s->id.companion_of) : tl_json_null(j);
        tl_json_key(j, "warnings");
        tl_json_array_begin(j);
        for (size_t w = 0; w < s->id.problems.n; w++)
            tl_json_string(j, s->id.problems.v[w].text);
        tl_json_array_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

/* Which ranks and sessions the document holds in full: all of them, or past
 * TL_JSON_RANKS_FULL ranks without --json-all the ranks rank_pick.h picks for
 * every bounded output, their sessions, and the sessions of no rank (inputs
 * that were not read: small). why and keep NULL: everything. */
typedef struct json_detail {
    unsigned char *why;     /* per rank (a->ranks), 0: only its row in "rank_rows" */
    unsigned char *keep;    /* per session (a->sessions), 0: left out */
    size_t ranks, sessions; /* how many are in full */
} json_detail;

static void detail_choose(json_detail *d, const tl_aggregate *a, int all)
{
    *d = (json_detail){ NULL, NULL, a->nranks, a->nsessions };
    if (all || a->nranks <= TL_JSON_RANKS_FULL)
        return;
    size_t n = 0;
    d->why = tl_rank_pick(a, TL_RANKS_PICKED, &n);
    d->keep = malloc(a->nsessions + 1);
    if (d->why == NULL || d->keep == NULL) { /* out of memory: the whole document, as asked before */
        free(d->why);
        free(d->keep);
        *d = (json_detail){ NULL, NULL, a->nranks, a->nsessions };
        return;
    }
    memset(d->keep, 1, a->nsessions + 1);
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t k = 0; d->why[i] == 0 && k < a->ranks[i].nsessions; k++)
            d->keep[a->ranks[i].sessions[k]] = 0;
    d->ranks = n;
    d->sessions = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        d->sessions += d->keep[i];
}

static void write_detail(tl_json *j, const tl_aggregate *a, const json_detail *d)
{
    tl_json_object_begin(j);
    tl_json_kv_int(j, "full_up_to_ranks", TL_JSON_RANKS_FULL);
    tl_json_kv_uint(j, "ranks_in_full", d->ranks);
    tl_json_kv_uint(j, "ranks_left_out", a->nranks - d->ranks);
    tl_json_kv_uint(j, "sessions_in_full", d->sessions);
    tl_json_kv_uint(j, "sessions_left_out", a->nsessions - d->sessions);
    tl_json_key(j, "note");
    if (d->why != NULL) {
        char note[600];
        snprintf(note, sizeof note,
                 "%zu of %zu ranks in full (\"ranks\", \"sessions\"): the stragglers, the shortest and longest mean "
                 "step, its 10th-90th percentiles and an even sample; every rank has its row in \"rank_rows\". "
                 "%zu sessions left out: this document is not an input of tally; write it with --json-all for "
                 "every rank, or tally aggregate --partial for tally merge",
                 d->ranks, a->nranks, a->nsessions - d->sessions);
        tl_json_string(j, note);
    } else {
        tl_json_null(j);
    }
    tl_json_object_end(j);
}

void tl_aggregate_write(tl_json *j, const tl_aggregate *a, const char *producer, int all)
{
    json_detail d;
    detail_choose(&d, a, all);
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-aggregate");
    tl_json_kv_int(j, "version", 1);
    tl_json_kv_string(j, "producer", producer);
    tl_json_key(j, "options");
    tl_partial_write_options(j, &a->opt);
    tl_json_kv_uint(j, "world_size_seen", a->nranks);
    tl_json_key(j, "detail");
    write_detail(j, a, &d);
    tl_json_key(j, "ranks");
    write_ranks(j, a, d.why);
    tl_json_key(j, "rank_rows");
    write_rank_rows(j, a, d.why);
    tl_json_key(j, "across_ranks");
    write_across(j, a);
    tl_json_key(j, "telemetry");
    tl_json_object_begin(j);
    tl_json_kv_double(j, "power_w", tl_telemetry_power_total(a));
    tl_json_kv_double(j, "energy_j", tl_telemetry_energy_total(a));
    tl_json_kv_double(j, "energy_wh", tl_telemetry_energy_total(a) / TL_J_PER_WH);
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
    tl_json_key(j, "waits");
    write_waits(j, a);
    tl_json_key(j, "collectives");
    write_collbw(j, a);
    tl_json_key(j, "op_shapes");
    write_shapes(j, a);
    if (tl_memops_any(a)) { /* absent without profile_memory: aggregates without it keep their bytes */
        tl_json_key(j, "memory_by_op");
        tl_memops_json(j, a);
    }
    if (tl_memcats_out_any(a)) { /* absent without a memory timeline, likewise */
        tl_json_key(j, "memory_categories");
        tl_memcats_json(j, a);
    }
    tl_json_key(j, "step_categories");
    write_stepcats(j, a);
    tl_json_key(j, "kernel_launches");
    write_kernel_launches(j, a);
    tl_json_key(j, "recommendations");
    write_recs(j, a);
    tl_json_key(j, "headline");
    tl_json_object_begin(j);
    kv_text(j, "text", a->headline);
    tl_json_kv_string(j, "severity", a->headline_severity ? a->headline_severity : "ok");
    tl_json_object_end(j);
    tl_json_key(j, "straggler_note");
    if (a->straggler_note) {
        char *note = tl_text_numbers(a->straggler_note);
        tl_json_string(j, note ? note : "");
        free(note);
    } else
        tl_json_null(j);
    tl_json_key(j, "rules_not_applied");
    tl_json_array_begin(j);
    for (int i = 0; i < a->nskips; i++) {
        tl_json_object_begin(j);
        tl_json_kv_string(j, "id", a->skips[i].id);
        kv_text(j, "why", a->skips[i].why);
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
    tl_partial_write_sessions(j, a->sessions, a->nsessions, d.keep, a->opt.output_jobs);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
    free(d.why);
    free(d.keep);
}
