/*
 * report_text.c - sentences shared by the HTML and Markdown reports (see
 * report_text.h). The headline picks the one thing a reader should look at
 * first; every branch states the numbers that made it the choice.
 */
#define _GNU_SOURCE
#include "report_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

const tl_rank_result *tl_text_rank(const tl_aggregate *a, int rank)
{
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].rank == rank)
            return &a->ranks[i];
    return NULL;
}

const char *tl_text_rank_source(int s)
{
    return s == TL_RANK_CONTENT ? "content" : s == TL_RANK_NAME ? "name" : s == TL_RANK_ORDER ? "order" : "unknown";
}

const char *tl_text_metric(const char *m, int *unit)
{
    static const struct {
        const char *metric, *label;
        int unit;
    } t[] = {
        { "step_time_ns", "Step time (mean)", TL_UNIT_NS },
        { "step_median_ns", "Step time (median)", TL_UNIT_NS },
        { "compute_per_step_ns", "GPU compute per step", TL_UNIT_NS },
        { "span_ns", "Wall time profiled", TL_UNIT_NS },
        { "gpu.kernel_time_ns", "GPU kernel time", TL_UNIT_NS },
        { "gpu.idle_pct", "GPU idle", TL_UNIT_PCT },
        { "gpu.compute_pct", "GPU compute", TL_UNIT_PCT },
        { "gpu.non_compute_pct", "GPU non-compute", TL_UNIT_PCT },
        { "gpu.comm_pct", "GPU communication", TL_UNIT_PCT },
        { "gpu.comm_comp_overlap_pct", "Communication overlapped by compute", TL_UNIT_PCT },
        { "memory.peak_allocated_bytes", "Peak memory allocated", TL_UNIT_BYTES },
        { "memory.peak_reserved_bytes", "Peak memory reserved", TL_UNIT_BYTES },
        { "memory.peak_device_used_bytes", "Peak device used (NVML)", TL_UNIT_BYTES },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].metric, m) == 0) {
            *unit = t[i].unit;
            return t[i].label;
        }
    *unit = strstr(m, "_ns") ? TL_UNIT_NS : strstr(m, "_pct") ? TL_UNIT_PCT : strstr(m, "bytes") ? TL_UNIT_BYTES
                                                                                             : TL_UNIT_COUNT;
    return m;
}

const char *tl_text_advice(const tl_recommendation *r)
{
    size_t n;
    const tl_rule_info *rules = tl_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (r->id && strcmp(rules[i].id, r->id) == 0)
            return rules[i].advice;
    return "";
}

char *tl_text_finding(const tl_recommendation *r)
{
    const char *m = r->message ? r->message : "", *adv = tl_text_advice(r);
    size_t n = strlen(m), k = strlen(adv);
    if (k > 0 && n > k && strcmp(m + n - k, adv) == 0) {
        n -= k;
        while (n > 0 && m[n - 1] == ' ')
            n--;
    }
    return strndup(m, n);
}

/* ---- shares of the time ---------------------------------------------------------- */

/* The time of each rank index: its span, else (no span, or a span shorter
 * than one of its sections: a report whose times do not cover its stages)
 * the sum of its sections. */
static double *rank_wholes(const tl_aggregate *a)
{
    double *w = calloc(a->nranks + 1, sizeof *w);
    for (size_t ri = 0; w && ri < a->nranks; ri++) {
        double sum = 0, max = 0;
        for (size_t i = 0; i < a->names.n; i++)
            if (a->names.rows[i].group == TL_GROUP_SECTIONS) {
                sum += a->names.rows[i].rank_total[ri];
                max = a->names.rows[i].rank_total[ri] > max ? a->names.rows[i].rank_total[ri] : max;
            }
        w[ri] = a->ranks[ri].span_ns > 0 && (double)a->ranks[ri].span_ns >= max ? (double)a->ranks[ri].span_ns : sum;
    }
    return w;
}

static double share_of(const tl_aggregate *a, const tl_name_row *row, const double *w)
{
    double part = 0, whole = 0;
    for (size_t ri = 0; ri < a->nranks && (int)ri < a->names.nranks; ri++)
        if (row->rank_count[ri] > 0 && w[ri] > 0) {
            part += row->rank_total[ri];
            whole += w[ri];
        }
    return whole > 0 ? 100 * part / whole : NAN;
}

double tl_text_share(const tl_aggregate *a, const tl_name_row *row)
{
    double *w = rank_wholes(a);
    double s = w ? share_of(a, row, w) : NAN;
    free(w);
    return s;
}

/* ---- the headline ------------------------------------------------------------------ */

static void straggler_sentence(FILE *f, const tl_aggregate *a, const tl_straggler *s, tl_text_name_fn name)
{
    char v[48], m[48], d[48];
    if (strcmp(s->kind, "last_arrival") == 0) {
        fprintf(f, "Rank %d is a straggler: it arrives last to %.0f%% of %.0f matched collectives, so the other ranks wait for it",
                s->rank, s->value, s->others_median);
    } else {
        const tl_rank_result *r = tl_text_rank(a, s->rank);
        const char *what = r && isfinite(r->compute_per_step) && r->compute_per_step > 0 ? "GPU compute per step"
                           : r && isfinite(r->step_median) && r->step_median > 0       ? "step time"
                                                                                        : "wall time";
        fprintf(f, "Rank %d is a straggler: its %s is %.1f%% above the other ranks' median (%s vs %s)", s->rank, what,
                s->delta_pct, tl_units_dur(v, sizeof v, s->value), tl_units_dur(m, sizeof m, s->others_median));
        if (s->nitems > 0) {
            fputs(", most of it in ", f);
            name(f, s->items[0].name);
            fprintf(f, " (+%s per step)", tl_units_dur(d, sizeof d, s->items[0].delta_ns));
        }
    }
    int others = 0;
    for (int i = 0; i < a->nstragglers; i++) {
        int seen = a->stragglers[i].rank == s->rank;
        for (int k = 0; k < i && !seen; k++)
            seen = a->stragglers[k].rank == a->stragglers[i].rank;
        others += !seen;
    }
    if (others > 0)
        fprintf(f, "; %d other rank%s %s stragglers too", others, others > 1 ? "s" : "", others > 1 ? "are" : "is");
    fputs(".", f);
}

static int fired(const tl_aggregate *a, const char *id)
{
    for (int i = 0; i < a->nrecs; i++)
        if (strcmp(a->recs[i].id, id) == 0)
            return 1;
    return 0;
}

static int gpu_sentence(FILE *f, const tl_aggregate *a)
{
    const tl_across *idle = tl_aggregate_across(a, "gpu.idle_pct"), *comm = tl_aggregate_across(a, "gpu.comm_pct");
    const tl_across *ov = tl_aggregate_across(a, "gpu.comm_comp_overlap_pct");
    if (idle == NULL || !(fired(a, "low-gpu-utilization") || fired(a, "communication-heavy") ||
                          fired(a, "launch-bound") || fired(a, "low-overlap")))
        return 0;
    if (idle->n > 1)
        fprintf(f, "The GPU is idle %.1f%% of the kernel time on average across %d ranks", idle->mean, idle->n);
    else
        fprintf(f, "The GPU is idle %.1f%% of the kernel time on rank %d", idle->mean, idle->min_rank);
    if (comm != NULL && comm->mean > 0) {
        fprintf(f, "; communication takes %.1f%%", comm->mean);
        if (ov != NULL)
            fprintf(f, ", %.1f%% of it overlapped by compute", ov->mean);
    }
    fputs(".", f);
    return 1;
}

static int severity_rank(const char *s)
{
    return strcmp(s, "critical") == 0 ? 3 : strcmp(s, "warning") == 0 ? 2 : 1;
}

static int warning_sentence(FILE *f, const tl_aggregate *a, tl_text_name_fn text)
{
    const tl_recommendation *best = NULL;
    for (int i = 0; i < a->nrecs; i++)
        if (severity_rank(a->recs[i].severity) >= 2 &&
            (best == NULL || severity_rank(a->recs[i].severity) > severity_rank(best->severity)))
            best = &a->recs[i];
    char *finding = best ? tl_text_finding(best) : NULL;
    if (finding == NULL || *finding == '\0') {
        free(finding);
        return 0;
    }
    text(f, finding);
    free(finding);
    return 1;
}

static int section_sentence(FILE *f, const tl_aggregate *a, tl_text_name_fn name)
{
    double *w = rank_wholes(a);
    const tl_name_row *best = NULL;
    double bs = 0;
    for (size_t i = 0; w && i < a->names.n; i++) {
        const tl_name_row *row = &a->names.rows[i];
        if (row->group != TL_GROUP_SECTIONS)
            continue;
        double s = share_of(a, row, w);
        if (isfinite(s) && s > bs && s < 99.0) {
            bs = s;
            best = row;
        }
    }
    free(w);
    if (best == NULL)
        return 0;
    char t[48];
    name(f, best->name);
    fprintf(f, " takes %.1f%% of the time", bs);
    if (best->nranks_with > 1)
        fprintf(f, " across %d ranks", best->nranks_with);
    fprintf(f, " (%s in total, %llu call%s).", tl_units_dur(t, sizeof t, (double)best->all.total),
            (unsigned long long)best->all.count, best->all.count == 1 ? "" : "s");
    return 1;
}

static void steps_sentence(FILE *f, const tl_aggregate *a)
{
    const tl_across *st = tl_aggregate_across(a, "step_time_ns");
    char m[48], lo[48], hi[48];
    if (st == NULL) {
        fprintf(f, "%zu rank%s profiled; the inputs have no step times or sections to rank.", a->nranks,
                a->nranks == 1 ? "" : "s");
        return;
    }
    if (st->n == 1) {
        const tl_rank_result *r = tl_text_rank(a, st->min_rank);
        fprintf(f, "Mean step time %s on rank %d", tl_units_dur(m, sizeof m, st->mean), st->min_rank);
        if (r != NULL && isfinite(r->step_min) && isfinite(r->step_max))
            fprintf(f, " (from %s to %s)", tl_units_dur(lo, sizeof lo, r->step_min),
                    tl_units_dur(hi, sizeof hi, r->step_max));
        fputs(".", f);
        return;
    }
    fprintf(f, "Mean step time %s across %d ranks (fastest %s on rank %d, slowest %s on rank %d).",
            tl_units_dur(m, sizeof m, st->mean), st->n, tl_units_dur(lo, sizeof lo, st->min), st->min_rank,
            tl_units_dur(hi, sizeof hi, st->max), st->max_rank);
}

void tl_text_headline(FILE *f, const tl_aggregate *a, tl_text_name_fn name, tl_text_name_fn text)
{
    if (a->nranks == 0) {
        fputs("No usable input: none of the inputs is a profile tally can read (see Inputs).", f);
        return;
    }
    if (a->nstragglers > 0) {
        straggler_sentence(f, a, &a->stragglers[0], name);
        return;
    }
    if (gpu_sentence(f, a))
        return;
    if (warning_sentence(f, a, text))
        return;
    if (section_sentence(f, a, name))
        return;
    steps_sentence(f, a);
}

/* ---- kernel types ------------------------------------------------------------------- */

typedef struct ktype {
    const char *name;
    int type;
} ktype;

static int by_kname(const void *x, const void *y)
{
    return strcmp(((const ktype *)x)->name, ((const ktype *)y)->name);
}

/* By name, then type: equal names end up in one order whatever the input's. */
static int by_kname_type(const void *x, const void *y)
{
    int c = by_kname(x, y);
    return c ? c : ((const ktype *)x)->type - ((const ktype *)y)->type;
}

int tl_text_kernel_types(tl_text_ktypes *k, const tl_aggregate *a)
{
    size_t n = 0;
    memset(k, 0, sizeof *k);
    for (size_t i = 0; i < a->nsessions; i++)
        n += a->sessions[i].nkernels;
    ktype *v = malloc((n + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    n = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        for (size_t j = 0; j < a->sessions[i].nkernels; j++)
            v[n++] = (ktype){ a->sessions[i].kernels[j].name, a->sessions[i].kernels[j].type };
    qsort(v, n, sizeof *v, by_kname_type);
    k->pairs = v;
    k->n = n;
    return 0;
}

int tl_text_kernel_type(const tl_text_ktypes *k, const char *name)
{
    ktype key = { name, 0 };
    const ktype *hit = k->n ? bsearch(&key, k->pairs, k->n, sizeof key, by_kname) : NULL;
    return hit ? hit->type : -1;
}

void tl_text_kernel_types_release(tl_text_ktypes *k)
{
    free(k->pairs);
    memset(k, 0, sizeof *k);
}
