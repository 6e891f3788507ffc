/*
 * compare.c - a baseline aggregate against a candidate (see compare.h):
 * matching names per rank and overall, per-row statistics and verdicts, the
 * geometric mean of ratios and the GPU breakdown of each rank. The rank-level
 * rows' second, pooled look at their noise is compare_levels.c's; the
 * verdicts, run shares and materiality compare_verdicts.c's.
 *
 * Each side is first flattened into items, one per (group, name, session),
 * sorted by group, name and rank; the two sorted lists are then walked
 * together like a merge, one block of equal (group, name) at a time, so
 * matching is O(n log n) and the rows come out in a deterministic order.
 * Kernels are taken as the aggregate takes them: from the GPU window when the
 * session has a GPU analysis, else from the trace's own statistics. Peak
 * memory enters as items of its own group, one per session and metric, so it
 * is matched and judged like a name's total per run.
 */
#define _GNU_SOURCE
#include "compare.h"
#include "array.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_internal.h"
#include "significance.h"
#include "units.h"

void tl_cmp_options_init(tl_cmp_options *o)
{
    memset(o, 0, sizeof *o);
    o->metric = TL_CMP_MEDIAN;
    o->threshold_pct = 5.0;
    o->alpha = 0.05;
    o->confidence = 0.95;
    o->correction = TL_CMP_HOLM;
    o->groups = ((1u << TL_CMP_NGROUPS) - 1) & ~(1u << TL_GROUP_PYTHON) & ~(1u << TL_GROUP_OTHER);
    o->max_untested_pct = TL_CMP_MAX_UNTESTED_PCT;
    o->untested_floor_pct = TL_CMP_UNTESTED_FLOOR_PCT;
    o->memory_threshold_pct = NAN;
    o->material_pct = NAN;
    o->session[0] = o->session[1] = -1;
}

const char *tl_verdict_name(int v)
{
    static const char *names[TL_VERDICT_COUNT] = {
        "unchanged",
        "regression",
        "improvement",
        "added",
        "removed",
        "too_few_samples",
        "large_increase_untested",
        "large_decrease_untested",
        "changed",
    };
    return v >= 0 && v < TL_VERDICT_COUNT ? names[v] : "unchanged";
}

const char *tl_cmp_kind_name(int kind)
{
    static const char *names[TL_CMP_KIND_COUNT] = {
        "per_call", "per_run", "per_step", "calls_per_step", "peak_allocated", "peak_reserved", "peak_rss",
    };
    return kind >= 0 && kind < TL_CMP_KIND_COUNT ? names[kind] : "per_call";
}

const char *tl_cmp_group_name(int group)
{
    return group == TL_CMP_GROUP_STEPS ? "steps" : group == TL_CMP_GROUP_MEMORY ? "memory" : tl_group_name(group);
}

const char *tl_cmp_metric_name(int metric)
{
    return metric == TL_CMP_MEAN ? "mean" : metric == TL_CMP_TOTAL ? "total" : "median";
}

int tl_cmp_metric_parse(const char *s)
{
    for (int m = TL_CMP_MEDIAN; m <= TL_CMP_TOTAL; m++)
        if (!strcmp(s, tl_cmp_metric_name(m)))
            return m;
    return -1;
}

/* ---- normalized names ---------------------------------------------------- */

/* Index just past the bracket closing the one at s[i], or 0 when unbalanced. */
static size_t close_of(const char *s, size_t n, size_t i, char open, char close)
{
    int depth = 0;
    for (size_t k = i; k < n; k++) {
        if (s[k] == open)
            depth++;
        else if (s[k] == close && --depth == 0)
            return k + 1;
    }
    return 0;
}

/* Copy s without its balanced <...> groups into out; returns the length. */
static size_t drop_templates(const char *s, size_t n, char *out)
{
    size_t len = 0;
    for (size_t i = 0; i < n;) {
        size_t end = s[i] == '<' ? close_of(s, n, i, '<', '>') : 0;
        if (end) {
            i = end;
            continue;
        }
        out[len++] = s[i++];
    }
    return len;
}

/* Length of s without a parameter list at its end: a balanced (...) that
 * closes the name, possibly followed by " const", and that follows the
 * function's name directly. A group inside the name ("(anonymous
 * namespace)::f") or after a space ("Memcpy HtoD (Pinned -> Device)") stays. */
static size_t drop_params(const char *s, size_t n)
{
    size_t end = n;
    while (end > 0 && s[end - 1] == ' ')
        end--;
    if (end >= 6 && !memcmp(s + end - 6, " const", 6))
        end -= 6;
    if (end == 0 || s[end - 1] != ')')
        return n;
    int depth = 0;
    for (size_t k = end; k-- > 0;) {
        if (s[k] == ')')
            depth++;
        else if (s[k] == '(' && --depth == 0)
            return k > 0 && s[k - 1] != ' ' ? k : n;
    }
    return n;
}

/* Start of the text after the last top-level space (drops "void "). */
static size_t after_return_type(const char *s, size_t n)
{
    int depth = 0;
    size_t start = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] == '(')
            depth++;
        else if (s[k] == ')')
            depth--;
        else if (s[k] == ' ' && depth == 0 && k + 1 < n)
            start = k + 1;
    }
    return start;
}

/* Length without a trailing number and the separator before it. */
static size_t drop_number(const char *s, size_t n)
{
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
        k--;
    if (k == n || k == 0)
        return n;
    if (k > 1 && strchr("#_.-:", s[k - 1]) != NULL)
        k--;
    return k;
}

char *tl_compare_normalize(const char *name)
{
    /* Order matters: templates first (they hold commas, spaces and
     * parentheses), then the parameters, then the return type, then numbers. */
    size_t n = strlen(name);
    char *buf = malloc(n + 1);
    if (buf == NULL)
        return NULL;
    size_t len = drop_templates(name, n, buf), full = len;
    len = drop_params(buf, len);
    int signature = len < full; /* a return type only comes with a parameter list */
    while (len > 0 && buf[len - 1] == ' ')
        len--;
    size_t start = signature ? after_return_type(buf, len) : 0;
    len = start + drop_number(buf + start, len - start);
    if (len == start) { /* nothing left: keep the name */
        memcpy(buf, name, n + 1);
        return buf;
    }
    memmove(buf, buf + start, len - start);
    buf[len - start] = '\0';
    return buf;
}

/* ---- one side as sorted items ------------------------------------------- */

typedef struct item {
    int group;
    char *key; /* owned: the name, normalized or not */
    int rank;
    const tl_dur_stat *d;  /* a name's statistics; NULL for steps and memory */
    double summary_median; /* a report's summary median when d has no samples */
    const tl_sstep *steps;
    size_t nsteps;
    size_t sess;          /* index of the session in its aggregate */
    size_t session_steps; /* steps of that session */
    double value;         /* memory: the session's peak, bytes */
} item;

typedef struct side {
    item *items;
    size_t n, cap;
} side;

static void side_release(side *sd)
{
    for (size_t i = 0; i < sd->n; i++)
        free(sd->items[i].key);
    free(sd->items);
    memset(sd, 0, sizeof *sd);
}

static int side_push(side *sd, const item *it, const char *name, int normalize)
{
    if (tl_array_grow(&sd->items, sd->n, &sd->cap, sizeof *sd->items, 256) != 0)
        return -1;
    item *dst = &sd->items[sd->n];
    *dst = *it;
    dst->key = normalize ? tl_compare_normalize(name) : strdup(name);
    if (dst->key == NULL)
        return -1;
    sd->n++;
    return 0;
}

/* Is s the session this side compares (o->session: -1 every one, -2 the
 * rank's last, else its 0-based number; ranks with one session are left
 * out of a comparison of sessions)? */
int tl_compare_session_wanted(const tl_aggregate *a, const tl_session *s, int which)
{
    if (which == -1)
        return 1;
    /* Sessions are compared only on ranks that have more than one. */
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].rank == s->id.rank)
            return a->ranks[i].nsessions > 1 &&
                   (which >= 0 ? s->id.session == which : (size_t)s->id.session + 1 == a->ranks[i].nsessions);
    return 0;
}

/* Memory items: one per peak the session knows. */
static int collect_memory(side *sd, const tl_session *s, size_t idx)
{
    static const char *keys[3] = { "peak_allocated", "peak_reserved", "peak_rss" };
    const double v[3] = { s->peak_allocated, s->peak_reserved, s->peak_rss };
    for (int m = 0; m < 3; m++) {
        if (!(isfinite(v[m]) && v[m] > 0))
            continue;
        item it = { TL_CMP_GROUP_MEMORY, NULL, s->id.rank, NULL, NAN, NULL, 0, idx, s->nsteps, v[m] };
        if (side_push(sd, &it, keys[m], 0) != 0)
            return -1;
    }
    /* a rank with two or more GPUs: each GPU's peaks too, by device index
     * ("peak_allocated (GPU 1)"), so one GPU that grows is not hidden behind
     * the rank's fullest one */
    static const char *dkeys[3] = { "peak_allocated", "peak_reserved", "peak_device_used" };
    for (size_t d = 0; d < s->ndevmem; d++) {
        const tl_sdevmem *g = &s->devmem[d];
        const double dv[3] = { g->peak_allocated, g->peak_reserved, g->peak_used };
        for (int m = 0; m < 3; m++) {
            if (!(isfinite(dv[m]) && dv[m] > 0))
                continue;
            char key[64];
            snprintf(key, sizeof key, "%s (GPU %" PRId64 ")", dkeys[m], g->id);
            item it = { TL_CMP_GROUP_MEMORY, NULL, s->id.rank, NULL, NAN, NULL, 0, idx, s->nsteps, dv[m] };
            if (side_push(sd, &it, key, 0) != 0)
                return -1;
        }
    }
    return 0;
}

static int want(const tl_cmp_options *o, int group)
{
    return (o->groups >> group) & 1u;
}

/* The items of one session (index idx). */
static int collect_session(side *sd, const tl_session *s, size_t idx, const tl_cmp_options *o)
{
    int windowed = s->gpu.present, rc = 0;
    for (size_t k = 0; rc == 0 && k < s->nnames; k++) {
        const tl_sname *sn = &s->names[k];
        if ((windowed && sn->group == TL_GROUP_KERNELS) || !want(o, sn->group))
            continue;
        item it = {
            sn->group, NULL, s->id.rank, &sn->d, sn->exact ? NAN : sn->median_ns, NULL, 0, idx, s->nsteps, NAN
        };
        rc = side_push(sd, &it, sn->name, o->normalize);
    }
    /* The kernels of the GPU window ran in its steps (the last, cut-short
     * ProfilerStep left out): per step is over those, not every step. */
    size_t window_steps =
        s->gpu.whole_trace || s->gpu.steps_in_window <= 0 ? s->nsteps : (size_t)s->gpu.steps_in_window;
    for (size_t k = 0; rc == 0 && windowed && want(o, TL_GROUP_KERNELS) && k < s->nkernels; k++) {
        item it = { TL_GROUP_KERNELS, NULL, s->id.rank, &s->kernels[k].d, NAN, NULL, 0, idx, window_steps, NAN };
        rc = side_push(sd, &it, s->kernels[k].name, o->normalize);
    }
    if (rc == 0 && s->nsteps > 0 && want(o, TL_CMP_GROUP_STEPS)) {
        item it = { TL_CMP_GROUP_STEPS, NULL, s->id.rank, NULL, NAN, s->steps, s->nsteps, idx, s->nsteps, NAN };
        rc = side_push(sd, &it, TL_CMP_STEP_NAME, 0);
    }
    if (rc == 0 && want(o, TL_CMP_GROUP_MEMORY))
        rc = collect_memory(sd, s, idx);
    return rc;
}

static int by_key(const item *a, const item *b)
{
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return strcmp(a->key, b->key);
}

static int by_key_rank(const void *x, const void *y)
{
    const item *a = x, *b = y;
    int c = by_key(a, b);
    if (c)
        return c;
    if (a->rank != b->rank)
        return (a->rank > b->rank) - (a->rank < b->rank);
    return (a->sess > b->sess) - (a->sess < b->sess);
}

/* The ranks both runs have, as indices into each run's ranks (ia[j] in a,
 * ib[j] in b; room for the fewer ranks): both rank lists ascend, so a merge.
 * Returns how many. */
static size_t rank_pairs(const tl_aggregate *a, const tl_aggregate *b, size_t *ia, size_t *ib)
{
    size_t n = 0;
    for (size_t i = 0, k = 0; i < a->nranks && k < b->nranks;) {
        int ra = a->ranks[i].rank, rb = b->ranks[k].rank;
        if (ra == rb) {
            ia[n] = i++;
            ib[n++] = k++;
        } else if (ra < rb) {
            i++;
        } else {
            k++;
        }
    }
    return n;
}

/* The ranks present in both runs, ascending (malloc'd). */
static int *matched_ranks(const tl_aggregate *a, const tl_aggregate *b, size_t *n)
{
    size_t cap = (a->nranks < b->nranks ? a->nranks : b->nranks) + 1;
    size_t *ia = malloc(cap * sizeof *ia), *ib = malloc(cap * sizeof *ib);
    int *out = malloc(cap * sizeof *out);
    *n = 0;
    if (ia && ib && out) {
        *n = rank_pairs(a, b, ia, ib);
        for (size_t j = 0; j < *n; j++)
            out[j] = a->ranks[ia[j]].rank;
    } else {
        free(out);
        out = NULL;
    }
    free(ia);
    free(ib);
    return out;
}

/* Does this rank count in the all-ranks figures? When the runs' ranks
 * differ but some are common (a rank's file missing on one side, a run on
 * fewer GPUs), only the common ones: a total over 2 ranks against one over
 * 1 is twice as large without any rank being slower, and a rank present on
 * one side has nothing to be compared with. With no rank in common, each
 * run's own ranks. */
static int counted_rank(const tl_compare *c, int rank)
{
    if (!c->common_only)
        return 1;
    size_t lo = 0, hi = c->nranks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ranks[mid] == rank)
            return 1;
        if (c->ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int collect(side *sd, const tl_compare *c, const tl_aggregate *a, int which)
{
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (tl_session_counts(s) && tl_compare_session_wanted(a, s, which) && counted_rank(c, s->id.rank) &&
            collect_session(sd, s, i, &c->opt) != 0)
            return -1;
    }
    if (sd->n > 1)
        qsort(sd->items, sd->n, sizeof *sd->items, by_key_rank);
    return 0;
}

/* A rank's profiled wall time per run: each rank's compared sessions' mean
 * span, averaged over the ranks; NaN when a session's span is unknown. */
static double side_span(const tl_compare *c, const tl_aggregate *a, int which)
{
    double total = 0, rank_sum = 0;
    size_t nsess = 0, nranks = 0;
    int rank = 0, known = 1;
    for (size_t i = 0; i < a->nsessions; i++) { /* sorted by rank */
        const tl_session *s = &a->sessions[i];
        if (!tl_session_counts(s) || !tl_compare_session_wanted(a, s, which) || !counted_rank(c, s->id.rank))
            continue;
        if (nranks > 0 && s->id.rank != rank) {
            total += rank_sum / (double)nsess;
            rank_sum = 0;
            nsess = 0;
        }
        nranks += nsess == 0;
        rank = s->id.rank;
        known = known && s->span_ns > 0;
        rank_sum += (double)s->span_ns;
        nsess++;
    }
    if (nsess > 0)
        total += rank_sum / (double)nsess;
    return known && nranks > 0 ? total / (double)nranks : NAN;
}

/* ---- statistics of one side of a row ---------------------------------------- */

typedef struct vec {
    double *v;
    size_t n, cap;
} vec;

static int vec_reserve(vec *v, size_t more)
{
    if (v->n + more <= v->cap)
        return 0;
    return tl_array_grow(&v->v, v->n + more - 1, &v->cap, sizeof *v->v, 1024); /* room for the last */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Add one item's count, total and samples. */
static int take_item(const item *it, tl_cmp_side *st, vec *samples)
{
    if (it->d != NULL) {
        st->count += it->d->count;
        st->total += (double)it->d->total;
        if (vec_reserve(samples, it->d->nsamples) != 0)
            return -1;
        for (uint32_t k = 0; k < it->d->nsamples; k++)
            samples->v[samples->n++] = (double)it->d->samples[k];
        return 0;
    }
    if (vec_reserve(samples, it->nsteps) != 0)
        return -1;
    for (size_t k = 0; k < it->nsteps; k++) {
        double dur = it->steps[k].dur_ns > 0 ? (double)it->steps[k].dur_ns : 0;
        st->count++;
        st->total += dur;
        samples->v[samples->n++] = dur;
    }
    return 0;
}

/* The side of a row over items [0, n) of one (group, name), on one rank
 * (rank -1: all). samples gets the sorted samples. */
static int side_stat(const item *it, size_t n, int rank, double confidence, tl_cmp_side *st, vec *samples)
{
    memset(st, 0, sizeof *st);
    st->mean = st->median = st->ci_lo = st->ci_hi = NAN;
    samples->n = 0;
    size_t nitems = 0;
    double summary = NAN;
    for (size_t i = 0; i < n; i++) {
        if (rank >= 0 && it[i].rank != rank)
            continue;
        if (take_item(&it[i], st, samples) != 0)
            return -1;
        summary = it[i].summary_median;
        nitems++;
    }
    if (nitems == 0)
        return 0;
    st->present = 1;
    st->nsamples = samples->n;
    if (samples->n > 1)
        qsort(samples->v, samples->n, sizeof *samples->v, cmp_double);
    if (st->count > 0)
        st->mean = st->total / (double)st->count;
    /* A summary median stands only for a single summary without samples. */
    st->median = samples->n ? tl_signif_median_sorted(samples->v, samples->n) : nitems == 1 ? summary : NAN;
    tl_signif_median_ci(samples->v, samples->n, confidence, &st->ci_lo, &st->ci_hi, NULL);
    return 0;
}

/* ---- rows ------------------------------------------------------------------- */

static double metric_of(const tl_cmp_side *s, int metric)
{
    if (!s->present)
        return NAN;
    return metric == TL_CMP_MEAN ? s->mean : metric == TL_CMP_TOTAL ? s->total : s->median;
}

/* Is a row of this group, kind and rank in the gate family? Step time (all
 * ranks and each rank), and over all ranks peak memory and the total per run
 * of stages (the groups users time as stages, and kernels: where GPU time
 * goes). A stage's rank rows explain its all-ranks row: keeping them out
 * keeps the family small, so that Holm's correction leaves the gate its
 * power; a rank that alone got slower shows in its step time. */
static int is_primary(int group, int kind, int rank)
{
    if (group == TL_CMP_GROUP_STEPS)
        return 1;
    if (rank >= 0)
        return 0;
    if (group == TL_CMP_GROUP_MEMORY)
        return 1;
    return kind == TL_CMP_PER_RUN && (group == TL_GROUP_SECTIONS || group == TL_GROUP_ITERATIONS ||
                                      group == TL_GROUP_GPU_ANNOTATIONS || group == TL_GROUP_KERNELS);
}

/* The smallest one-sided p of a U test of n1 against n2 samples: the
 * extreme arrangement, 1 / C(n1 + n2, n1). */
static double u_floor(size_t n1, size_t n2)
{
    double log_c = lgamma((double)(n1 + n2) + 1) - lgamma((double)n1 + 1) - lgamma((double)n2 + 1);
    return fmin(1.0, exp(-log_c));
}

/* The threshold of a row's group, in %: peak memory has its own. */
double tl_cmp_row_limit(const tl_cmp_options *o, int group)
{
    return group == TL_CMP_GROUP_MEMORY && !isnan(o->memory_threshold_pct) ? o->memory_threshold_pct : o->threshold_pct;
}

/* The candidate's scale of "faster by more than the threshold" (a fraction):
 * 1 - threshold; from a threshold of 100 % on nothing can be that much
 * faster, and a scale near 0 makes every candidate sample larger. */
double tl_cmp_faster_scale(double limit)
{
    return limit < 1 ? 1 - limit : 1e-12;
}

/* The U test of cs / scale against bs (both sorted; the order is kept). */
static int mwu_scaled(const vec *bs, const vec *cs, double scale, tl_mwu *out)
{
    double *v = malloc((cs->n + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < cs->n; i++)
        v[i] = cs->v[i] / scale;
    int rc = tl_signif_mwu(v, cs->n, bs->v, bs->n, out);
    free(v);
    return rc;
}

/* The permutation test of the trimmed means of the log durations (20 % off
 * each end), the threshold in the hypotheses: log(1 + threshold) and
 * log(1 - threshold); from 5 samples a side (one trimmed) up to 8 against 8
 * (TL_SIGNIF_PERM_MAX splits). Durations of 0 have no logarithm: the U test
 * stands, as it does beyond. */
static int perm_of_logs(const vec *bs, const vec *cs, double limit, tl_cmp_row *r)
{
    if (bs->v[0] <= 0 || cs->v[0] <= 0 || TL_CMP_TRIM * (double)bs->n < 1 || TL_CMP_TRIM * (double)cs->n < 1 ||
        !tl_signif_perm_fits(cs->n, bs->n))
        return 0;
    double *lb = malloc((bs->n + 1) * sizeof *lb), *lc = malloc((cs->n + 1) * sizeof *lc);
    int rc = -1;
    if (lb == NULL || lc == NULL)
        goto out;
    for (size_t i = 0; i < bs->n; i++)
        lb[i] = log(bs->v[i]);
    for (size_t i = 0; i < cs->n; i++)
        lc[i] = log(cs->v[i]);
    double up, down;
    if (tl_signif_perm_trimmed(lc, cs->n, lb, bs->n, TL_CMP_TRIM, log1p(limit), log(tl_cmp_faster_scale(limit)), &up,
                               &down) == 0) {
        r->p_up = up;
        r->p_down = down;
        r->test = TL_TEST_PERM;
    }
    rc = 0;
out:
    free(lb);
    free(lc);
    return rc;
}

/* Delta and U tests of a row whose sides and values are filled in; the
 * verdicts of tested rows wait for the correction (decide). The hypotheses
 * carry the threshold: "slower by more than the threshold" is the U test of
 * the candidate's samples over 1 + threshold against the baseline's
 * (one-sided, larger), "faster by more" the same over 1 - threshold
 * (smaller). The U statistics are kept whatever the number of samples (a
 * rank's stratum of the all-ranks row's test); the row is tested by them
 * from TL_CMP_MIN_SAMPLES a side. */
static int judge(const tl_cmp_options *o, tl_cmp_row *r, const vec *bs, const vec *cs)
{
    r->u = r->p_value = r->p_adjusted = r->delta_pct = r->p_up = r->p_down = r->run_share_pct = NAN;
    r->mwu.p = r->mwu_up.p = r->mwu_down.p = NAN;
    r->impact_ns = (r->cand.present ? r->cand.total : 0) - (r->base.present ? r->base.total : 0);
    if (r->group == TL_CMP_GROUP_MEMORY || r->kind == TL_CMP_PER_STEP || r->kind == TL_CMP_CALLS_PER_STEP)
        r->impact_ns = 0; /* bytes, or a share of a total already counted */
    if (!r->base.present || !r->cand.present) {
        r->verdict = r->base.present ? TL_VERDICT_REMOVED : TL_VERDICT_ADDED;
        return 0;
    }
    if (isfinite(r->value_base) && isfinite(r->value_cand) && r->value_base > 0)
        r->delta_pct = 100.0 * (r->value_cand - r->value_base) / r->value_base;
    r->verdict = TL_VERDICT_TOO_FEW;
    if (bs == NULL || bs->n == 0 || cs->n == 0)
        return 0;
    double limit = tl_cmp_row_limit(o, r->group) / 100;
    if (tl_signif_mwu(cs->v, cs->n, bs->v, bs->n, &r->mwu) != 0 || mwu_scaled(bs, cs, 1 + limit, &r->mwu_up) != 0 ||
        mwu_scaled(bs, cs, tl_cmp_faster_scale(limit), &r->mwu_down) != 0)
        return -1;
    if (bs->n < TL_CMP_MIN_SAMPLES || cs->n < TL_CMP_MIN_SAMPLES)
        return 0;
    r->u = r->mwu.u;
    r->p_up = r->mwu_up.p_greater;
    r->p_down = r->mwu_down.p_less;
    r->p_floor = u_floor(bs->n, cs->n);
    r->test = r->mwu.exact ? TL_TEST_EXACT : TL_TEST_NORMAL;
    if (perm_of_logs(bs, cs, limit, r) != 0)
        return -1;
    r->p_value = fmin(1.0, 2.0 * fmin(r->p_up, r->p_down));
    r->verdict = TL_VERDICT_UNCHANGED;
    return 0;
}

void tl_cmp_mean_ss(const double *v, size_t n, double *mean, double *ss)
{
    double m = 0, q = 0;
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - m;
        m += d / (double)(i + 1);
        q += d * (v[i] - m);
    }
    *mean = n ? m : NAN;
    *ss = n ? q : NAN;
}

/* The rank-level statistics of an all-ranks row from its ranks' log ratios
 * lr[0, n), sorted: mean and sum of squares of all of them, and from 4 ranks
 * of all but the one farthest from their median (the test's fallback when
 * one rank holds a spike, rank_level_pooled), and the ranks beyond the
 * threshold each way. */
static void rank_level_stats(tl_cmp_row *all, const double *lr, size_t n, double limit)
{
    all->lr_n = n;
    tl_cmp_mean_ss(lr, n, &all->lr_mean, &all->lr_ss);
    all->lr_mean1 = all->lr_ss1 = all->lr_far = NAN;
    if (n >= 4) {
        double med = n % 2 ? lr[n / 2] : (lr[n / 2 - 1] + lr[n / 2]) / 2;
        int drop_last = lr[n - 1] - med > med - lr[0];
        tl_cmp_mean_ss(lr + !drop_last, n - 1, &all->lr_mean1, &all->lr_ss1);
        all->lr_far = drop_last ? lr[n - 1] : lr[0];
    }
    all->lr_est = all->lr_mean;
    all->lr_used = n;
    all->lr_spread = lr[n - 1] != lr[0];
    all->lr_up = all->lr_down = 0;
    for (size_t i = 0; i < n; i++) {
        all->lr_up += lr[i] > log1p(limit / 100);
        all->lr_down += lr[i] < log(tl_cmp_faster_scale(limit / 100));
    }
}

/* The all-ranks row's test from its per-rank rows rows[from, to), chosen by
 * the design, not by the data:
 *  - every rank with samples on both sides, at least two a side: the
 *    stratified U test, the ranks' U statistics summed (tl_signif_mwu_strata;
 *    each rank compared with itself only, the ranks' evidence added up);
 *    ranks that are copies of one another (the same ratio on every rank)
 *    are one stratum;
 *  - otherwise, with at least TL_CMP_MIN_RANKS ranks: the rank-level test
 *    over the ranks' log ratios, each rank one sample of the change; its
 *    variance is pooled over the family in decide (rank_level_pooled);
 *  - otherwise the pooled samples' own U test (judge) stands. */
static int p_from_ranks(tl_compare *c, size_t all_i, size_t from, size_t to)
{
    tl_cmp_row *all = &c->rows[all_i];
    const tl_cmp_row *rows = c->rows;
    if (!all->base.present || !all->cand.present)
        return 0;
    size_t n = to - from, nboth = 0, nstrata = 0, minn = SIZE_MAX, m = 0;
    tl_mwu *sup = malloc((n + 1) * sizeof *sup), *sdown = malloc((n + 1) * sizeof *sdown);
    double *lr = malloc((n + 1) * sizeof *lr);
    int rc = -1;
    if (sup == NULL || sdown == NULL || lr == NULL)
        goto out;
    double u = 0, u_first = NAN;
    const tl_cmp_row *only = NULL;
    for (size_t i = from; i < to; i++) {
        const tl_cmp_row *r = &rows[i];
        if (!r->base.present || !r->cand.present)
            continue;
        nboth++;
        only = r;
        if (!isnan(r->mwu.p)) {
            sup[nstrata] = r->mwu_up;
            sdown[nstrata++] = r->mwu_down;
            u += r->mwu.u;
            u_first = nstrata == 1 ? r->mwu.u : u_first;
            size_t k = r->mwu.nx < r->mwu.ny ? r->mwu.nx : r->mwu.ny;
            minn = k < minn ? k : minn;
        }
        if (isfinite(r->value_base) && isfinite(r->value_cand) && r->value_base > 0 && r->value_cand > 0)
            lr[m++] = log(r->value_cand / r->value_base);
    }
    if (m > 1)
        qsort(lr, m, sizeof *lr, cmp_double);
    int copies = m > 1 && lr[0] == lr[m - 1];
    if (nboth == 1 && only->test == TL_TEST_PERM) { /* one rank: its own test */
        all->p_up = only->p_up;
        all->p_down = only->p_down;
        all->p_floor = only->p_floor;
        all->u = only->u;
        all->test = TL_TEST_PERM;
    } else if (nstrata > 0 && nstrata == nboth && minn >= 2) {
        size_t ns = copies ? 1 : nstrata;
        double x;
        if (tl_signif_mwu_strata(sup, ns, &all->p_up, &x, &all->p_floor) != 0 ||
            tl_signif_mwu_strata(sdown, ns, &x, &all->p_down, NULL) != 0)
            goto out;
        all->u = copies ? u_first : u;
        all->test = TL_TEST_STRATA;
    } else if (m >= TL_CMP_MIN_RANKS) {
        rank_level_stats(all, lr, m, tl_cmp_row_limit(&c->opt, all->group));
        all->ranks_from = from;
        all->ranks_to = to;
        all->u = NAN;
        all->p_floor = 0; /* t has no floor */
        all->test = TL_TEST_RANK_T;
    } else {
        rc = 0;
        goto out; /* the pooled test (or none) stands */
    }
    all->p_value = fmin(1.0, 2.0 * fmin(all->p_up, all->p_down));
    all->verdict = TL_VERDICT_UNCHANGED;
    rc = 0;
out:
    free(sup);
    free(sdown);
    free(lr);
    return rc;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] >= 0x90))
        return 0; /* overlong, surrogate or beyond U+10FFFF */
    return n;
}

/* A copy of name with every invalid UTF-8 byte replaced by U+FFFD, so that
 * every output (HTML, Markdown, XML, JSON) gets the same, valid, text. */
static char *display_name(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(3 * n + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (const unsigned char *s = (const unsigned char *)name; *s;) {
        size_t len = utf8_len(s);
        if (len == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            s++;
            continue;
        }
        memcpy(o, s, len);
        o += len;
        s += len;
    }
    *o = '\0';
    return out;
}

static tl_cmp_row *new_row(tl_compare *c, int group, const char *name, int rank, int kind)
{
    if (tl_array_grow(&c->rows, c->nrows, &c->rows_cap, sizeof *c->rows, 256) != 0)
        return NULL;
    tl_cmp_row *r = &c->rows[c->nrows];
    memset(r, 0, sizeof *r);
    r->name = display_name(name);
    if (r->name == NULL)
        return NULL;
    r->group = group;
    r->rank = rank;
    r->kind = kind;
    r->primary = is_primary(group, kind, rank);
    r->all_row = SIZE_MAX;
    r->robust_base = r->robust_cand = NAN;
    c->nrows++;
    return r;
}

typedef struct block {
    const item *b, *c; /* the items of each side (NULL when absent) */
    size_t nb, nc;
} block;

/* One per-call row of a block on a rank (-1: all). Nothing when neither side
 * has it. */
static int block_row(tl_compare *c, const block *bl, int rank, size_t all, vec *bs, vec *cs)
{
    tl_cmp_side b, cd;
    if (side_stat(bl->b, bl->nb, rank, c->opt.confidence, &b, bs) != 0 ||
        side_stat(bl->c, bl->nc, rank, c->opt.confidence, &cd, cs) != 0)
        return -1;
    if (!b.present && !cd.present)
        return 0;
    const item *any = bl->nb ? bl->b : bl->c;
    tl_cmp_row *r = new_row(c, any->group, any->key, rank, TL_CMP_PER_CALL);
    if (r == NULL)
        return -1;
    r->all_row = all;
    r->base = b;
    r->cand = cd;
    r->value_base = metric_of(&b, c->opt.metric);
    r->value_cand = metric_of(&cd, c->opt.metric);
    /* A report without samples or a median (FramePack) has its mean. */
    if (c->opt.metric == TL_CMP_MEDIAN && isnan(r->value_base) && isnan(r->value_cand)) {
        r->value_base = metric_of(&b, TL_CMP_MEAN);
        r->value_cand = metric_of(&cd, TL_CMP_MEAN);
    }
    return judge(&c->opt, r, bs, cs);
}

/* The kind of a block's run rows: memory items name their peak. */
static int run_kind(const item *it, int kind)
{
    if (it->group != TL_CMP_GROUP_MEMORY)
        return kind;
    return !strcmp(it->key, "peak_allocated")  ? TL_CMP_PEAK_ALLOCATED
           : !strcmp(it->key, "peak_reserved") ? TL_CMP_PEAK_RESERVED
                                               : TL_CMP_PEAK_RSS;
}

/* The side of a run row on one rank. For names, the time is the calls'
 * total, per run (over the rank's sessions) or per step, and the samples
 * tested are the calls', so that a rank row is tested like its per-call row;
 * calls per step are counted. *robust is count x the median per call, per
 * run or step (NaN without samples): a rare outlier call moves the total but
 * not it, a change of the calls' shape (a wait that is short in four calls
 * of six and 40 ms in two) moves it but not the total -- an untested verdict
 * needs both (untested_verdict). For memory, each session's peak is a
 * sample and the value is their mean. samples gets them sorted; *value the
 * row's value. */
static int run_side_rank(const item *it, size_t n, int rank, int kind, tl_cmp_side *st, vec *samples, double *value,
                         double *robust)
{
    memset(st, 0, sizeof *st);
    st->mean = st->median = st->ci_lo = st->ci_hi = NAN;
    *value = *robust = NAN;
    samples->n = 0;
    size_t nsess = 0;
    for (size_t i = 0; i < n; i++) {
        if (it[i].rank != rank)
            continue;
        if (i == 0 || it[i - 1].rank != rank || it[i - 1].sess != it[i].sess) {
            nsess++;
            st->steps += it[i].session_steps;
        }
        st->present = 1;
        if (it[i].group == TL_CMP_GROUP_MEMORY) {
            if (vec_reserve(samples, 1) != 0)
                return -1;
            samples->v[samples->n++] = it[i].value;
        } else if (take_item(&it[i], st, samples) != 0) {
            return -1;
        }
    }
    if (!st->present)
        return 0;
    st->nsamples = samples->n;
    st->nsessions = nsess;
    if (samples->n > 1)
        qsort(samples->v, samples->n, sizeof *samples->v, cmp_double);
    st->median = tl_signif_median_sorted(samples->v, samples->n);
    if (kind >= TL_CMP_PEAK_ALLOCATED) {
        double sum = 0;
        for (size_t k = 0; k < samples->n; k++)
            sum += samples->v[k];
        *value = st->mean = sum / (double)samples->n;
        return 0;
    }
    if (st->count > 0)
        st->mean = st->total / (double)st->count;
    double typical = isfinite(st->median) && samples->n > 0 ? (double)st->count * st->median : NAN;
    if (kind == TL_CMP_PER_RUN) {
        *value = st->total / (double)nsess;
        *robust = typical / (double)nsess;
    } else if (st->steps > 0) {
        *value = (kind == TL_CMP_PER_STEP ? st->total : (double)st->count) / (double)st->steps;
        *robust = kind == TL_CMP_PER_STEP ? typical / (double)st->steps : NAN;
    }
    return 0;
}

/* The all-ranks side of a run row over the side's ranks (those both runs
 * have, when their ranks differ: collect): the sum of the ranks' values (per
 * run), the time over all the ranks' steps (per step, calls per step), the
 * largest (peak memory); *robust likewise from the ranks' (NaN when a rank
 * has none). Returns the value; NaN when no rank has one. */
static int run_side_all(const item *it, size_t n, int kind, tl_cmp_side *out, vec *samples, double *value,
                        double *robust)
{
    double v = 0, time = 0, rob = 0, rob_time = 0;
    memset(out, 0, sizeof *out);
    out->ci_lo = out->ci_hi = NAN;
    *value = *robust = NAN;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && it[j].rank == it[i].rank)
            j++;
        tl_cmp_side s;
        double rv, rr;
        if (run_side_rank(it + i, j - i, it[i].rank, kind, &s, samples, &rv, &rr) != 0)
            return -1;
        i = j;
        if (!isfinite(rv))
            continue;
        out->nsamples++;
        out->nsessions += s.nsessions;
        out->total += s.total;
        out->count += s.count;
        out->steps += s.steps;
        if (kind == TL_CMP_PER_STEP) {
            time += rv * (double)s.steps;
            rob_time += rr * (double)s.steps;
        } else if (kind == TL_CMP_PER_RUN) {
            v += rv;
            rob += rr;
        } else if (kind != TL_CMP_CALLS_PER_STEP) {
            v = rv > v ? rv : v;
        }
    }
    out->present = n > 0;
    samples->n = 0;
    if (out->nsamples == 0)
        v = NAN;
    else if (kind == TL_CMP_PER_STEP)
        v = out->steps ? time / (double)out->steps : NAN;
    else if (kind == TL_CMP_CALLS_PER_STEP)
        v = out->steps ? (double)out->count / (double)out->steps : NAN;
    if (out->nsamples > 0 && kind == TL_CMP_PER_RUN)
        *robust = rob;
    else if (out->nsamples > 0 && kind == TL_CMP_PER_STEP && out->steps)
        *robust = rob_time / (double)out->steps;
    *value = v;
    out->mean = out->median = v;
    return 0;
}

/* A rank's test of its calls, taken from its per-call row (the same
 * samples: take_item fills both), so the U and permutation tests run once
 * per name and rank, not once per kind. */
static void take_test(tl_cmp_row *r, const tl_cmp_row *calls)
{
    r->mwu = calls->mwu;
    r->mwu_up = calls->mwu_up;
    r->mwu_down = calls->mwu_down;
    if (calls->test == TL_TEST_NONE)
        return; /* too few samples, as judge left it */
    r->u = calls->u;
    r->p_up = calls->p_up;
    r->p_down = calls->p_down;
    r->p_value = calls->p_value;
    r->p_floor = calls->p_floor;
    r->test = calls->test;
    r->verdict = TL_VERDICT_UNCHANGED;
}

/* The run rows of a block of one kind: a row per matched rank, tested over
 * the calls (names; the test of the rank's per-call row among
 * rows[calls_from, calls_to)) or the sessions (memory) when both sides have
 * enough, then the all-ranks row over every rank of each side, tested
 * through its rank rows (p_from_ranks). Per step and calls per step list
 * only the all-ranks row (their rank rows are worked out, then dropped). */
static int run_rows(tl_compare *c, const block *bl, const int *ranks, size_t nranks, int kind, vec *bs, vec *cs,
                    size_t calls_from, size_t calls_to)
{
    const item *any = bl->nb ? bl->b : bl->c;
    kind = run_kind(any, kind);
    size_t all = c->nrows;
    tl_cmp_row *r = new_row(c, any->group, any->key, -1, kind);
    if (r == NULL)
        return -1;
    for (size_t i = 0; i < nranks; i++) {
        tl_cmp_side b, cd;
        double vb, vc, rb, rc;
        if (run_side_rank(bl->b, bl->nb, ranks[i], kind, &b, bs, &vb, &rb) != 0 ||
            run_side_rank(bl->c, bl->nc, ranks[i], kind, &cd, cs, &vc, &rc) != 0)
            return -1;
        if (!b.present && !cd.present)
            continue;
        if ((r = new_row(c, any->group, any->key, ranks[i], kind)) == NULL)
            return -1;
        r->all_row = all;
        r->base = b;
        r->cand = cd;
        r->value_base = vb;
        r->value_cand = vc;
        r->robust_base = rb;
        r->robust_cand = rc;
        /* The calls' test speaks for the total only when the calls per run
         * did not change; otherwise the ranks decide (all-ranks row). */
        int same_calls = kind >= TL_CMP_PEAK_ALLOCATED ||
                         (double)b.count * (double)cd.nsessions == (double)cd.count * (double)b.nsessions;
        /* rows and per-call rows both ascend by rank */
        while (calls_from < calls_to && c->rows[calls_from].rank < ranks[i])
            calls_from++;
        const tl_cmp_row *calls =
            kind < TL_CMP_PEAK_ALLOCATED && calls_from < calls_to && c->rows[calls_from].rank == ranks[i]
                ? &c->rows[calls_from]
                : NULL;
        if (judge(&c->opt, r, same_calls && calls == NULL ? bs : NULL, cs) != 0)
            return -1;
        if (same_calls && calls != NULL && r->verdict == TL_VERDICT_TOO_FEW)
            take_test(r, calls);
    }
    r = &c->rows[all];
    if (run_side_all(bl->b, bl->nb, kind, &r->base, bs, &r->value_base, &r->robust_base) != 0 ||
        run_side_all(bl->c, bl->nc, kind, &r->cand, cs, &r->value_cand, &r->robust_cand) != 0)
        return -1;
    if (judge(&c->opt, r, NULL, NULL) != 0 || p_from_ranks(c, all, all + 1, c->nrows) != 0)
        return -1;
    if (kind == TL_CMP_CALLS_PER_STEP) { /* counts are not tested */
        r->test = TL_TEST_NONE;
        r->p_value = NAN;
        r->verdict = TL_VERDICT_UNCHANGED;
    }
    if (kind == TL_CMP_PER_STEP || kind == TL_CMP_CALLS_PER_STEP) {
        r->ranks_from = r->ranks_to = 0;
        for (size_t i = all + 1; i < c->nrows; i++) {
            free(c->rows[i].name);
            free(c->rows[i].note);
        }
        c->nrows = all + 1;
    }
    return 0;
}

/* Does every item of the block have steps in its session? */
static int has_steps(const item *it, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (it[i].session_steps == 0)
            return 0;
    return n > 0;
}

/* The rows of a block: per call overall and, when the name is on both sides,
 * per matched rank; then the run rows (memory has only those). */
static int compare_block(tl_compare *c, const block *bl, const int *ranks, size_t nranks, vec *bs, vec *cs)
{
    const item *any = bl->nb ? bl->b : bl->c;
    int both = bl->nb > 0 && bl->nc > 0;
    if (any->group == TL_CMP_GROUP_MEMORY)
        return both ? run_rows(c, bl, ranks, nranks, TL_CMP_PER_RUN, bs, cs, 0, 0) : 0;
    size_t all = c->nrows;
    if (block_row(c, bl, -1, all, bs, cs) != 0)
        return -1;
    if (!both)
        return 0; /* added or removed: listed once, not per rank */
    for (size_t i = 0; i < nranks; i++)
        if (block_row(c, bl, ranks[i], all, bs, cs) != 0)
            return -1;
    size_t calls_to = c->nrows; /* the per-call rank rows: rows[all + 1, calls_to) */
    if (p_from_ranks(c, all, all + 1, calls_to) != 0)
        return -1;
    if (any->group == TL_CMP_GROUP_STEPS)
        return 0;
    if (run_rows(c, bl, ranks, nranks, TL_CMP_PER_RUN, bs, cs, all + 1, calls_to) != 0)
        return -1;
    if (has_steps(bl->b, bl->nb) && has_steps(bl->c, bl->nc) &&
        (run_rows(c, bl, ranks, nranks, TL_CMP_PER_STEP, bs, cs, all + 1, calls_to) != 0 ||
         run_rows(c, bl, ranks, nranks, TL_CMP_CALLS_PER_STEP, bs, cs, all + 1, calls_to) != 0))
        return -1;
    return 0;
}
static size_t block_end(const side *sd, size_t i)
{
    size_t j = i + 1;
    while (j < sd->n && by_key(&sd->items[i], &sd->items[j]) == 0)
        j++;
    return j;
}

static int walk(tl_compare *c, const side *sb, const side *sc)
{
    const int *ranks = c->ranks;
    size_t nranks = c->nranks;
    vec bs = { 0 }, cs = { 0 };
    int rc = 0;
    size_t i = 0, k = 0;
    while (rc == 0 && (i < sb->n || k < sc->n)) {
        int order = i >= sb->n ? 1 : k >= sc->n ? -1 : by_key(&sb->items[i], &sc->items[k]);
        size_t ie = order <= 0 ? block_end(sb, i) : i, ke = order >= 0 ? block_end(sc, k) : k;
        /* a side without rows has no array at all: no pointer arithmetic on NULL */
        block bl = { sb->items ? sb->items + i : NULL, sc->items ? sc->items + k : NULL, ie - i, ke - k };
        rc = compare_block(c, &bl, ranks, nranks, &bs, &cs);
        i = ie;
        k = ke;
    }
    free(bs.v);
    free(cs.v);
    return rc;
}

/* ---- overall figures ---------------------------------------------------------- */

static int geomean(tl_compare *c)
{
    double *b = malloc((c->nrows + 1) * sizeof *b), *x = malloc((c->nrows + 1) * sizeof *x);
    if (b == NULL || x == NULL) {
        free(b);
        free(x);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->rank < 0 && r->kind == TL_CMP_PER_CALL && r->group != TL_CMP_GROUP_MEMORY && r->base.present &&
            r->cand.present) {
            b[n] = r->value_base;
            x[n++] = r->value_cand;
        }
    }
    c->geomean_ratio = tl_signif_geomean_ratio(b, x, n, &c->geomean_n);
    free(b);
    free(x);
    return 0;
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : NAN;
}

static void gpu_side(tl_cmp_gpu *g, int s, const tl_gpu_breakdown *b)
{
    g->present[s] = b != NULL && b->present;
    g->idle_pct[s] = g->compute_pct[s] = g->non_compute_pct[s] = g->overlap_pct[s] = NAN;
    if (!g->present[s])
        return;
    g->idle_pct[s] = pct(b->idle, b->kernel_time);
    g->compute_pct[s] = pct(b->compute, b->kernel_time);
    g->non_compute_pct[s] = pct(b->non_compute, b->kernel_time);
    g->overlap_pct[s] = pct(b->comm_compute, b->comm);
}

/* The ranks' breakdowns added up (the figures are ratios of sums). */
/* A side's breakdown over the sessions it compares (which: as collect's;
 * --sessions compares each rank's first session with its last, whose
 * breakdowns were pooled into one: idle 35.3 % -> 35.3 % where the sessions
 * read 39.4 % -> 30.5 %), of one rank, or of every rank counted (rank
 * INT32_MIN). */
static tl_gpu_breakdown gpu_total(const tl_compare *c, const tl_aggregate *a, int which, int rank)
{
    tl_gpu_breakdown t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        const tl_gpu_breakdown *g = &s->gpu;
        if (!g->present || !tl_session_counts(s) || !tl_compare_session_wanted(a, s, which) ||
            (rank == INT32_MIN ? !counted_rank(c, s->id.rank) : s->id.rank != rank))
            continue;
        t.present = 1;
        t.kernel_time = tl_ns_add(t.kernel_time, g->kernel_time);
        t.idle = tl_ns_add(t.idle, g->idle);
        t.compute = tl_ns_add(t.compute, g->compute);
        t.non_compute = tl_ns_add(t.non_compute, g->non_compute);
        t.comm = tl_ns_add(t.comm, g->comm);
        t.comm_compute = tl_ns_add(t.comm_compute, g->comm_compute);
    }
    return t;
}

static int has_rank(const tl_aggregate *a, int rank)
{
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].rank == rank)
            return 1;
    return 0;
}

static int gpu_rows(tl_compare *c)
{
    const tl_aggregate *a[2] = { c->base, c->cand };
    c->gpu = calloc(a[0]->nranks + a[1]->nranks + 1, sizeof *c->gpu);
    c->ranks_base_only = malloc((a[0]->nranks + 1) * sizeof *c->ranks_base_only);
    c->ranks_cand_only = malloc((a[1]->nranks + 1) * sizeof *c->ranks_cand_only);
    if (c->gpu == NULL || c->ranks_base_only == NULL || c->ranks_cand_only == NULL)
        return -1;
    tl_cmp_gpu *all = &c->gpu[c->ngpu++];
    all->rank = -1;
    for (int s = 0; s < 2; s++) {
        tl_gpu_breakdown t = gpu_total(c, a[s], c->opt.session[s], INT32_MIN);
        gpu_side(all, s, &t);
    }
    /* Ranks of either side, ascending: merge the two sorted rank lists. */
    size_t i = 0, k = 0;
    while (i < a[0]->nranks || k < a[1]->nranks) {
        int rb = i < a[0]->nranks ? a[0]->ranks[i].rank : INT32_MAX;
        int rcand = k < a[1]->nranks ? a[1]->ranks[k].rank : INT32_MAX;
        int rank = rb < rcand ? rb : rcand;
        tl_cmp_gpu *g = &c->gpu[c->ngpu++];
        g->rank = rank;
        for (int s = 0; s < 2; s++) {
            tl_gpu_breakdown t = gpu_total(c, a[s], c->opt.session[s], rank);
            gpu_side(g, s, &t);
        }
        if (!has_rank(a[1], rank))
            c->ranks_base_only[c->nbase_only++] = rank;
        if (!has_rank(a[0], rank))
            c->ranks_cand_only[c->ncand_only++] = rank;
        i += rb == rank;
        k += rcand == rank;
    }
    return 0;
}

const char *tl_cmp_change_name(int change)
{
    static const char *const names[] = { "", "within threshold", "better", "worse" };
    return change >= 0 && change <= TL_CHANGE_WORSE ? names[change] : "";
}

const char *tl_cmp_change_key(int change)
{
    static const char *const keys[] = { NULL, "within_threshold", "better", "worse" };
    return change >= 0 && change <= TL_CHANGE_WORSE ? keys[change] : NULL;
}

/* The registry's metrics side by side (tl_cmp_metric_row). A figure is taken
 * over the ranks both runs have the metric on (matched by rank number), so a
 * run with fewer ranks, or a rank without telemetry, does not move it; with
 * no such rank each run's own ranks give its figure, and nothing is judged.
 * One value per rank cannot be tested: a change is called better or worse
 * only beyond the large-change threshold of untested rows
 * (--max-untested-change), % metrics by points. Sessions of a rank compared
 * on their own (--sessions) have no such figures: none. */
static void metric_figure(tl_cmp_metric_row *x, int s, const double *v, const int *rank, size_t n, double *scratch)
{
    tl_spread sp;
    tl_spread_of(&sp, v, rank, n, scratch);
    x->value[s] = sp.n == 0 ? NAN : x->info->policy == TL_ACROSS_MAX ? sp.max : sp.mean;
    x->ranks[s] = sp.n;
}

/* A rank's figure of a metric, per session for the ones its sessions add up
 * (kineto's TensorBoard sample: two sessions of 1.17 and 1.04 s read a wall
 * time of 2.21 s against a one-session 0.94 s, -57.5 %). */
static double metric_of_rank(const tl_metric *m, const tl_rank_result *r)
{
    double v = m->get(r, m->arg);
    return m->sessions_summed && r->nsessions > 1 ? v / (double)r->nsessions : v;
}

static void metric_row(tl_compare *c, tl_cmp_metric_row *x, const size_t *pair[2], size_t npairs, double *v[2],
                       int *rk[2], double *scratch)
{
    const tl_aggregate *a[2] = { c->base, c->cand };
    const tl_metric *m = x->info;
    size_t both = 0;
    for (size_t j = 0; j < npairs; j++) {
        double vb = metric_of_rank(m, &a[0]->ranks[pair[0][j]]), vc = metric_of_rank(m, &a[1]->ranks[pair[1][j]]);
        if (isfinite(vb) && isfinite(vc)) {
            v[0][both] = vb;
            v[1][both] = vc;
            rk[0][both] = rk[1][both] = a[0]->ranks[pair[0][j]].rank;
            both++;
        }
    }
    x->common = both > 0;
    if (x->common) {
        for (int s = 0; s < 2; s++)
            metric_figure(x, s, v[s], rk[s], both, scratch);
    } else {
        for (int s = 0; s < 2; s++) {
            for (size_t i = 0; i < a[s]->nranks; i++) {
                v[s][i] = metric_of_rank(m, &a[s]->ranks[i]);
                rk[s][i] = a[s]->ranks[i].rank;
            }
            metric_figure(x, s, v[s], rk[s], a[s]->nranks, scratch);
        }
    }
    double b = x->value[0], d = x->value[1] - x->value[0];
    x->delta_pct = isfinite(d) && b != 0 ? 100 * d / fabs(b) : NAN;
    x->delta_pp = m->unit == TL_UNIT_PCT && isfinite(d) ? d : NAN;
    /* A % metric moves by points: 40 % -> 42 % is 2 points, not 5 %. */
    double moved = m->unit == TL_UNIT_PCT ? x->delta_pp : x->delta_pct;
    if (!x->common || !isfinite(moved) || m->better == TL_BETTER_NEITHER)
        x->change = TL_CHANGE_NONE;
    else if (fabs(moved) <= c->opt.max_untested_pct)
        x->change = TL_CHANGE_WITHIN;
    else
        x->change = (moved < 0) == (m->better == TL_BETTER_LOWER) ? TL_CHANGE_BETTER : TL_CHANGE_WORSE;
}

static int metric_rows(tl_compare *c)
{
    size_t n;
    const tl_metric *m = tl_metrics(&n);
    if (c->opt.session[0] != -1 || c->opt.session[1] != -1)
        return 0;
    const tl_aggregate *a[2] = { c->base, c->cand };
    size_t cap = a[0]->nranks + a[1]->nranks + 1;
    size_t *pair[2] = { malloc(cap * sizeof(size_t)), malloc(cap * sizeof(size_t)) };
    double *v[2] = { malloc(cap * sizeof(double)), malloc(cap * sizeof(double)) },
           *scratch = malloc(cap * sizeof(double));
    int *rk[2] = { malloc(cap * sizeof(int)), malloc(cap * sizeof(int)) };
    c->metrics = calloc(n, sizeof *c->metrics);
    int rc = -1;
    if (!pair[0] || !pair[1] || !v[0] || !v[1] || !scratch || !rk[0] || !rk[1] || !c->metrics)
        goto out;
    size_t npairs = rank_pairs(a[0], a[1], pair[0], pair[1]);
    for (size_t k = 0; k < n; k++) {
        if (m[k].compared_elsewhere || (!tl_aggregate_across(a[0], m[k].name) && !tl_aggregate_across(a[1], m[k].name)))
            continue;
        tl_cmp_metric_row *x = &c->metrics[c->nmetrics++];
        x->info = &m[k];
        metric_row(c, x, (const size_t **)pair, npairs, v, rk, scratch);
    }
    rc = 0;
out:
    for (int s = 0; s < 2; s++) {
        free(pair[s]);
        free(v[s]);
        free(rk[s]);
    }
    free(scratch);
    return rc;
}

/* The counters of both sides (tl_cmp_counter_row): every compared session's
 * counters, matched by name. A 70x drop of a counter the program records
 * (tokens a step, cache hits) is a row, not nothing. */
static int counter_rows(tl_compare *c)
{
    const tl_aggregate *run[2] = { c->base, c->cand };
    size_t cap = 0;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < run[k]->nsessions; i++)
            cap += run[k]->sessions[i].ncounters;
    if (cap == 0)
        return 0;
    double *sum[2] = { calloc(cap, sizeof(double)), calloc(cap, sizeof(double)) };
    int rc = -1;
    if ((c->counters = calloc(cap, sizeof *c->counters)) == NULL || !sum[0] || !sum[1])
        goto out;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < run[k]->nsessions; i++) {
            const tl_session *s = &run[k]->sessions[i];
            if (!tl_compare_session_wanted(run[k], s, c->opt.session[k]) || !counted_rank(c, s->id.rank))
                continue;
            for (size_t j = 0; j < s->ncounters; j++) {
                const tl_scounter *x = &s->counters[j];
                if (x->name == NULL || !isfinite(x->mean))
                    continue;
                size_t r = 0;
                while (r < c->ncounters && strcmp(c->counters[r].name, x->name) != 0)
                    r++;
                tl_cmp_counter_row *row = &c->counters[r];
                if (r == c->ncounters) {
                    if ((row->name = strdup(x->name)) == NULL)
                        goto out;
                    row->mean[0] = row->mean[1] = row->max[0] = row->max[1] = row->delta_pct = NAN;
                    c->ncounters++;
                }
                sum[k][r] += x->mean;
                row->count[k] += x->count;
                row->sessions[k]++;
                if (!(row->max[k] >= x->max))
                    row->max[k] = x->max;
            }
        }
    for (size_t r = 0; r < c->ncounters; r++) {
        tl_cmp_counter_row *row = &c->counters[r];
        for (int k = 0; k < 2; k++)
            if (row->sessions[k])
                row->mean[k] = sum[k][r] / (double)row->sessions[k];
        if (isfinite(row->mean[0]) && isfinite(row->mean[1]) && row->mean[0] != 0)
            row->delta_pct = 100.0 * (row->mean[1] - row->mean[0]) / fabs(row->mean[0]);
        row->beyond = fabs(row->delta_pct) > c->opt.max_untested_pct;
    }
    rc = 0;
out:
    free(sum[0]);
    free(sum[1]);
    return rc;
}

static int by_counter_name(const void *x, const void *y)
{
    return strcmp(((const tl_cmp_counter_row *)x)->name, ((const tl_cmp_counter_row *)y)->name);
}

int tl_compare_run(tl_compare *c, const tl_aggregate *base, const tl_aggregate *cand, const tl_cmp_options *o)
{
    memset(c, 0, sizeof *c);
    if (o)
        c->opt = *o;
    else
        tl_cmp_options_init(&c->opt);
    c->base = base;
    c->cand = cand;
    c->geomean_ratio = NAN;
    side sb = { 0 }, sc = { 0 };
    int rc = -1;
    if ((c->ranks = matched_ranks(base, cand, &c->nranks)) == NULL)
        goto out;
    c->common_only = c->nranks > 0 && (c->nranks < base->nranks || c->nranks < cand->nranks);
    if (collect(&sb, c, base, c->opt.session[0]) != 0 || collect(&sc, c, cand, c->opt.session[1]) != 0)
        goto out;
    c->span_ns[0] = side_span(c, base, c->opt.session[0]);
    c->span_ns[1] = side_span(c, cand, c->opt.session[1]);
    if (walk(c, &sb, &sc) != 0 || tl_cmp_decide(c) != 0 || geomean(c) != 0 || gpu_rows(c) != 0 || metric_rows(c) != 0 ||
        counter_rows(c) != 0)
        goto out;
    if (c->ncounters > 1)
        qsort(c->counters, c->ncounters, sizeof *c->counters, by_counter_name);
    tl_cmp_lone_rank(c);
    rc = 0;
out:
    side_release(&sb);
    side_release(&sc);
    return rc;
}

void tl_compare_release(tl_compare *c)
{
    for (size_t i = 0; i < c->nrows; i++) {
        free(c->rows[i].name);
        free(c->rows[i].note);
    }
    free(c->rows);
    free(c->gpu);
    free(c->metrics);
    for (size_t i = 0; i < c->ncounters; i++)
        free(c->counters[i].name);
    free(c->counters);
    free(c->ranks_base_only);
    free(c->ranks);
    free(c->ranks_cand_only);
    memset(c, 0, sizeof *c);
}

/* ---- ordering for the outputs ----------------------------------------------- */

typedef struct impact_ctx {
    const tl_cmp_row *rows;
} impact_ctx;

static int by_impact(const void *x, const void *y, void *ctx)
{
    const tl_cmp_row *rows = ((const impact_ctx *)ctx)->rows;
    const tl_cmp_row *a = &rows[*(const size_t *)x], *b = &rows[*(const size_t *)y];
    double ia = fabs(a->impact_ns), ib = fabs(b->impact_ns);
    if (ia != ib)
        return ia < ib ? 1 : -1;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    int s = strcmp(a->name, b->name);
    return s ? s : (a->rank > b->rank) - (a->rank < b->rank);
}

size_t *tl_compare_by_impact(const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), void *ctx, size_t *n)
{
    size_t *idx = malloc((c->nrows + 1) * sizeof *idx);
    *n = 0;
    if (idx == NULL)
        return NULL;
    for (size_t i = 0; i < c->nrows; i++)
        if (keep == NULL || keep(&c->rows[i], ctx))
            idx[(*n)++] = i;
    impact_ctx ic = { c->rows };
    qsort_r(idx, *n, sizeof *idx, by_impact, &ic);
    return idx;
}
