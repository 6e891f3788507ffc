/*
 * waits.c - who waits for whom (waits.h; docs/analysis.md, "Waits").
 *
 * Steps, each over the ranks' first sessions:
 *  1. the source: GPU communication kernels when two or more ranks have
 *     them, else the CPU ranges that run a collective (gloo:*, mpi:*);
 *     NCCL's and c10d's CPU ranges only enqueue, they hold no wait;
 *  2. a rank with under WAITS_SHORT_SHARE of the median rank's instances
 *     (a truncated trace) is left out, so the others are still matched;
 *  3. instances are matched by (process group, sequence number) when every
 *     instance has one, else by the n-th occurrence of the same (name,
 *     group, size) on each rank; an instance some used rank lacks is not
 *     judged (counted in partial);
 *  4. clock offsets: each rank's median of (its end - the instance's median
 *     end) over the first WAITS_OFFSET_SAMPLE instances; the residual is the
 *     median |end - offset - median end|;
 *  5. per instance: arrivals (start - offset), the last, its margin over
 *     the next; each rank's wait = last arrival - its arrival, at most its
 *     own duration; the last counts only beyond trust_ns;
 *  6. the rank waited for: last in at least WAITS_LAST_SHARE of at least
 *     WAITS_MIN_INSTANCES instances, or the cause of that share of all the
 *     waiting caused, unlikely by chance (binomial p under
 *     WAITS_P with 1/ranks a try), and the wait it causes material (at least
 *     WAITS_MATERIAL_PCT of the waiting ranks' step);
 *  7. its cause: the names (sections, ops, Python functions, compute
 *     kernels) it spends more time in per step than the median of the
 *     others, collectives left out (their time is the waiting); and, over
 *     the instances it was last in, its windows from the previous release
 *     to its arrival against the other ranks' windows at the same
 *     instances, by the steps' categories (data loading, CPU, runtime,
 *     kernels, ...): what it did while the others were already waiting.
 *
 * Cost: one sort of every instance of the used ranks (O(N log N)), and
 * WAITS_OFFSET_SAMPLE x ranks int64s for the offsets.
 */
#define _GNU_SOURCE
#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WAITS_MIN_INSTANCES 3
#define WAITS_LAST_SHARE (2.0 / 3.0)
#define WAITS_P 0.01
#define WAITS_MATERIAL_PCT 5.0
#define WAITS_TRUST_K 3
#define WAITS_TRUST_FLOOR_NS 10000 /* 10 µs: below it clocks and launch jitter decide */
#define WAITS_SHORT_SHARE 0.75
#define WAITS_OFFSET_SAMPLE 1024
#define WAITS_CAUSE_SHARE 0.10 /* a cause explains at least 10 % of the wait caused */

typedef struct arrival {
    uint64_t key, occ;
    uint32_t ri;
    int64_t ts, end, dur;
    int name;   /* index into the waits' names, or -1 */
    uint32_t k; /* index of the instance in its session */
} arrival;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

static uint64_t fnv_int(uint64_t h, int64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint64_t)((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    return h;
}

static int by_rank_key_ts(const void *x, const void *y)
{
    const arrival *a = x, *b = y;
    if (a->ri != b->ri)
        return a->ri < b->ri ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int by_key_occ_rank(const void *x, const void *y)
{
    const arrival *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->occ != b->occ)
        return a->occ < b->occ ? -1 : 1;
    return a->ri < b->ri ? -1 : a->ri > b->ri;
}

static int by_first_ts(const void *x, const void *y, void *ctx)
{
    const arrival *v = ctx;
    int64_t a = v[*(const size_t *)x].ts, b = v[*(const size_t *)y].ts;
    if (a != b)
        return a < b ? -1 : 1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

static int by_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static int64_t median_i64(int64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, by_i64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* P(X >= k) for X ~ Binomial(n, p), summed in logs (n up to millions). */
static double binomial_tail(uint64_t k, uint64_t n, double p)
{
    if (k == 0)
        return 1;
    double sum = 0, lp = log(p), lq = log1p(-p);
    for (uint64_t i = k; i <= n; i++) {
        double t = lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) + (double)i * lp +
                   (double)(n - i) * lq;
        double term = exp(t);
        sum += term;
        if (term < sum * 1e-12 && i > k + 10)
            break;
    }
    return sum < 1 ? sum : 1;
}

static const tl_session *first_session(const tl_aggregate *a, size_t ri)
{
    const tl_rank_result *r = &a->ranks[ri];
    return r->nsessions > 0 ? &a->sessions[r->sessions[0]] : NULL;
}

static int wanted(const tl_scoll *c, int source)
{
    return source == TL_WAITS_GPU ? c->side == TL_COLL_GPU : c->side == TL_COLL_RUN;
}

static size_t count_side(const tl_session *s, int source)
{
    size_t n = 0;
    for (size_t i = 0; s != NULL && i < s->ninsts; i++)
        n += wanted(&s->insts[i], source);
    return n;
}

/* The chart's name index of a collective ("(other)" past TL_WAITS_MAX_NAMES). */
static int chart_name(tl_waits *w, const char *name)
{
    for (int i = 0; i < w->nnames; i++)
        if (strcmp(w->names[i], name) == 0)
            return i;
    if (w->nnames == TL_WAITS_MAX_NAMES - 1) {
        w->names[w->nnames] = strdup("(other)");
        return w->names[w->nnames] != NULL ? w->nnames++ : -1;
    }
    if (w->nnames == TL_WAITS_MAX_NAMES)
        return w->nnames - 1;
    w->names[w->nnames] = strdup(name);
    return w->names[w->nnames] != NULL ? w->nnames++ : -1;
}

void tl_waits_release(tl_waits *w)
{
    for (size_t i = 0; w->ranks != NULL && i < w->nranks; i++)
        free(w->ranks[i].inst_wait);
    free(w->ranks);
    free(w->chart);
    for (int i = 0; i < w->nnames; i++)
        free(w->names[i]);
    for (int i = 0; i < w->ncause; i++)
        free(w->cause[i].name);
    memset(w, 0, sizeof *w);
    w->straggler = w->most_last = w->judged = -1;
    w->others_step_ns = w->step_share_pct = w->caused_share_pct = NAN;
    w->window_cause = -1;
}

/* Steps of a rank for per-step figures: its steps, else 0 (unknown). */
static double rank_steps(const tl_rank_result *r)
{
    return r->nsteps > 0 ? (double)r->nsteps : 0;
}

double tl_waits_waited_pct(const tl_aggregate *a, size_t ri)
{
    const tl_waits *w = &a->waits;
    if (w->source == TL_WAITS_NONE || ri >= w->nranks || !w->ranks[ri].used)
        return NAN;
    const tl_rank_result *r = &a->ranks[ri];
    double steps = rank_steps(r);
    if (steps > 0 && r->step_median > 0)
        return 100.0 * (double)w->ranks[ri].waited_ns / steps / r->step_median;
    if (r->span_ns > 0)
        return 100.0 * (double)w->ranks[ri].waited_ns / (double)r->span_ns;
    return NAN;
}

/* Whether a name is a collective or the time around one (its waiting is a
 * symptom on the ranks that wait, never a cause). */
static int collective_name(const tl_name_row *row, const tl_kernel_classes *kc)
{
    if (tl_coll_side_of_name(row->name, strlen(row->name)) >= 0)
        return 1;
    if (row->group == TL_GROUP_KERNELS &&
        tl_kernel_type_of(kc, row->name, strlen(row->name), TL_CC_KERNEL) != TL_KT_COMPUTE)
        return 1;
    return strncmp(row->name, "ProfilerStep", 12) == 0;
}

/* The names the rank waited for spends more time in, per step, than the
 * median of the others: the cause of its late arrivals. Per step when the
 * ranks have steps, else per instance it was last in. */
static void find_cause(tl_aggregate *a, tl_waits *w, size_t si)
{
    static const int groups[] = { TL_GROUP_SECTIONS, TL_GROUP_OPS, TL_GROUP_PYTHON, TL_GROUP_KERNELS };
    const tl_rank_result *sr = &a->ranks[si];
    double *others = malloc((a->nranks + 1) * sizeof *others);
    if (others == NULL)
        return;
    for (size_t t = 0; t < a->names.n; t++) {
        const tl_name_row *row = &a->names.rows[t];
        int in = 0;
        for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
            in |= row->group == groups[g];
        if (!in || collective_name(row, a->opt.kernel_classes))
            continue;
        size_t n = 0;
        for (size_t i = 0; i < a->nranks; i++) {
            if (i == si || !w->ranks[i].used)
                continue;
            double steps = rank_steps(&a->ranks[i]);
            others[n++] = row->rank_total[i] / (steps > 0 ? steps : (double)w->matched);
        }
        double steps = rank_steps(sr);
        double mine = row->rank_total[si] / (steps > 0 ? steps : (double)w->matched);
        /* a name longer than the step holds steps (a loop, "main"): it says
         * nothing of where in the step the time went */
        if (n == 0 || (sr->step_median > 0 && mine > sr->step_median))
            continue;
        double delta = mine - tl_median_sort(others, n);
        if (!(delta >= WAITS_CAUSE_SHARE * w->caused_per_step_ns) || delta <= 0)
            continue;
        int pos = w->ncause;
        while (pos > 0 && w->cause[pos - 1].delta_ns < delta)
            pos--;
        if (pos >= 5)
            continue;
        if (w->ncause == 5) {
            free(w->cause[4].name);
            w->ncause--;
        }
        memmove(&w->cause[pos + 1], &w->cause[pos], (size_t)(w->ncause - pos) * sizeof w->cause[0]);
        w->cause[pos] = (tl_wait_cause){ strdup(row->name), row->group, delta };
        if (w->cause[pos].name == NULL) {
            memmove(&w->cause[pos], &w->cause[pos + 1], (size_t)(w->ncause - pos) * sizeof w->cause[0]);
            continue;
        }
        w->ncause++;
    }
    free(others);
}

/* A session's window of instance k (tl_session.coll_windows, by instance), or NULL. */
static const tl_sstepcat *window_of(const tl_session *s, uint32_t k)
{
    size_t lo = 0, hi = s->ncoll_windows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->coll_windows[mid].number < (int64_t)k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ncoll_windows && s->coll_windows[lo].number == (int64_t)k ? &s->coll_windows[lo] : NULL;
}

/* Step 7, the windows: over the instances the rank waited for (index si)
 * was last in and has a window at, its windows by category against the
 * median, over the other ranks, of their windows at the same instances (a
 * rank without a window there counts 0: it left the previous one as late as
 * it arrived). lastri[k]: the rank index last beyond the residual in matched
 * instance k, or -1. */
static void window_cause(tl_aggregate *a, tl_waits *w, size_t si, const arrival *v, const size_t *full,
                         const int32_t *lastri, size_t nfull)
{
    size_t nu = w->used;
    double *sum = calloc((nu + 1) * TL_SC_COUNT, sizeof *sum), *col = malloc((nu + 1) * sizeof *col);
    if (sum == NULL || col == NULL)
        goto out;
    uint64_t n = 0;
    for (size_t k = 0; k < nfull; k++) {
        if (lastri[k] != (int32_t)si)
            continue;
        const arrival *g = &v[full[k]];
        const tl_sstepcat *mine = NULL;
        for (size_t j = 0; j < nu; j++)
            if (g[j].ri == si)
                mine = window_of(first_session(a, si), g[j].k);
        if (mine == NULL)
            continue;
        /* column j: the j-th arrival of the instance, which is rank order (by_key_occ_rank) */
        for (size_t j = 0; j < nu; j++) {
            const tl_sstepcat *x = g[j].ri == si ? mine : window_of(first_session(a, g[j].ri), g[j].k);
            for (int c = 0; x != NULL && c < TL_SC_COUNT; c++)
                sum[j * TL_SC_COUNT + c] += (double)x->ns[c];
        }
        n++;
    }
    w->window_n = n;
    if (n == 0)
        goto out;
    double caused = w->ranks[si].last ? (double)w->ranks[si].caused_ns / (double)w->ranks[si].last : 0, best = 0;
    for (int c = 0; c < TL_SC_COUNT; c++) {
        size_t nc = 0;
        for (size_t j = 0; j < nu; j++) {
            if (v[full[0] + j].ri == si)
                w->window_mine_ns[c] = sum[j * TL_SC_COUNT + c] / (double)n;
            else
                col[nc++] = sum[j * TL_SC_COUNT + c] / (double)n;
        }
        w->window_others_ns[c] = nc ? tl_median_sort(col, nc) : NAN;
        double delta = w->window_mine_ns[c] - w->window_others_ns[c];
        /* "other" is no cause: nothing the trace shows */
        if (c != TL_SC_OTHER && delta > best && delta >= WAITS_CAUSE_SHARE * caused) {
            best = delta;
            w->window_cause = c;
        }
    }
out:
    free(sum);
    free(col);
}

/* Step 6: the rank the others wait for, or why none is named. */
static void judge(tl_aggregate *a, tl_waits *w, const arrival *arrivals, const size_t *full, const int32_t *lastri,
                  size_t nfull)
{
    size_t best = SIZE_MAX, causer = SIZE_MAX;
    double total_caused = 0;
    for (size_t i = 0; i < w->nranks; i++) {
        if (!w->ranks[i].used || w->ranks[i].last == 0)
            continue;
        if (best == SIZE_MAX || w->ranks[i].last > w->ranks[best].last)
            best = i;
        if (causer == SIZE_MAX || w->ranks[i].caused_ns > w->ranks[causer].caused_ns)
            causer = i;
        total_caused += (double)w->ranks[i].caused_ns;
    }
    if (best == SIZE_MAX) {
        w->why_none = "no rank arrives last by more than the clocks' residual";
        return;
    }
    w->most_last = w->ranks[best].rank;
    w->most_last_n = w->ranks[best].last;
    /* The rank judged: the one that causes two thirds of the waiting, else
     * the one last most often. A job with several collectives a step (DDP's
     * gradient buckets) waits for a slow rank at the first of them; the
     * later ones start together, so who is last there is chance, and the
     * slow rank shows in the wait it causes rather than in the count. */
    double caused_share = total_caused > 0 ? (double)w->ranks[causer].caused_ns / total_caused : 0;
    if (caused_share >= WAITS_LAST_SHARE)
        best = causer;
    w->judged = w->ranks[best].rank;
    w->caused_share_pct = total_caused > 0 ? 100 * (double)w->ranks[best].caused_ns / total_caused : NAN;
    double share = (double)w->ranks[best].last / (double)w->matched;
    double p = binomial_tail(w->ranks[best].last, w->matched, 1.0 / (double)w->used);
    w->by_cause = share < WAITS_LAST_SHARE;
    /* per step of the waiting ranks: their median step count and step time */
    double *v = malloc((w->nranks + 1) * sizeof *v), *t = malloc((w->nranks + 1) * sizeof *t);
    size_t nv = 0, nt = 0;
    for (size_t i = 0; v != NULL && t != NULL && i < w->nranks; i++) {
        if (i == best || !w->ranks[i].used)
            continue;
        if (rank_steps(&a->ranks[i]) > 0)
            v[nv++] = rank_steps(&a->ranks[i]);
        if (a->ranks[i].step_median > 0)
            t[nt++] = a->ranks[i].step_median;
    }
    w->steps = nv ? tl_median_sort(v, nv) : 0;
    w->others_step_ns = nt ? tl_median_sort(t, nt) : NAN;
    free(v);
    free(t);
    double caused = (double)w->ranks[best].caused_ns;
    w->caused_per_step_ns = w->steps > 0 ? caused / w->steps : caused / (double)w->ranks[best].last;
    w->step_share_pct =
        w->steps > 0 && isfinite(w->others_step_ns) ? 100 * w->caused_per_step_ns / w->others_step_ns : NAN;
    w->straggler_p = p;
    if (w->matched < WAITS_MIN_INSTANCES) {
        w->why_none = "too few collectives matched on every rank";
        return;
    }
    if (share < WAITS_LAST_SHARE && caused_share < WAITS_LAST_SHARE) {
        w->why_none = "no rank arrives last in two thirds of the collectives or causes two thirds of the waiting";
        return;
    }
    if (!(p < WAITS_P)) {
        w->why_none = "the rank that arrives last most often does so no more often than chance would";
        return;
    }
    if (isfinite(w->step_share_pct) && w->step_share_pct < WAITS_MATERIAL_PCT) {
        w->why_none = "the waiting it causes is under 5% of the other ranks' step";
        return;
    }
    w->straggler = w->ranks[best].rank;
    w->straggler_ri = (int)best;
    w->straggler_last = w->ranks[best].last;
    w->why_none = NULL;
    find_cause(a, w, best);
    window_cause(a, w, best, arrivals, full, lastri, nfull);
}

/* Steps 4-5 over the matched instances; full[k] is the start of instance k in v. */
static int measure(tl_waits *w, const arrival *v, const size_t *full, size_t nfull, int32_t *lastri)
{
    size_t nu = w->used, ns = nfull < WAITS_OFFSET_SAMPLE ? nfull : WAITS_OFFSET_SAMPLE;
    int rc = -1;
    int64_t *d = malloc((ns * nu + 1) * sizeof *d), *ends = malloc((nu + 1) * sizeof *ends);
    int64_t *arr = malloc((nu + 1) * sizeof *arr), *waits = malloc((nu + 1) * sizeof *waits);
    int64_t *col = malloc((ns + 1) * sizeof *col);
    size_t *slot = malloc((w->nranks + 1) * sizeof *slot); /* rank index -> column among the used */
    /* each rank's waits, and the waiting each last rank caused, as spans of time on the
     * offset-corrected clock: their union is what the rank waited (or made the others wait).
     * Overlapping collectives (DDP's buckets, asynchronous all-reduces) wait at the same time,
     * and a sum counted it twice. */
    tl_ivset *waited = calloc(w->nranks + 1, sizeof *waited), *caused_by = calloc(w->nranks + 1, sizeof *caused_by);
    if (d == NULL || ends == NULL || arr == NULL || waits == NULL || col == NULL || slot == NULL || waited == NULL ||
        caused_by == NULL)
        goto out;
    for (size_t i = 0, k = 0; i < w->nranks; i++)
        slot[i] = w->ranks[i].used ? k++ : SIZE_MAX;
    /* offsets */
    for (size_t k = 0; k < ns; k++) {
        const arrival *g = &v[full[k]];
        for (size_t j = 0; j < nu; j++)
            ends[j] = g[j].end;
        int64_t release = median_i64(ends, nu);
        for (size_t j = 0; j < nu; j++)
            d[k * nu + slot[g[j].ri]] = g[j].end - release;
    }
    for (size_t i = 0; i < w->nranks; i++) {
        if (!w->ranks[i].used)
            continue;
        for (size_t k = 0; k < ns; k++)
            col[k] = d[k * nu + slot[i]];
        w->ranks[i].offset_ns = median_i64(col, ns);
    }
    /* the residual: over the sample, |end - offset - release| */
    {
        int64_t *res = malloc((ns * nu + 1) * sizeof *res);
        if (res == NULL)
            goto out;
        size_t nr = 0;
        for (size_t k = 0; k < ns; k++) {
            const arrival *g = &v[full[k]];
            for (size_t j = 0; j < nu; j++)
                ends[j] = g[j].end - w->ranks[g[j].ri].offset_ns;
            int64_t release = median_i64(ends, nu);
            for (size_t j = 0; j < nu; j++) {
                int64_t e = g[j].end - w->ranks[g[j].ri].offset_ns - release;
                res[nr++] = e < 0 ? -e : e;
            }
        }
        w->residual_ns = median_i64(res, nr);
        free(res);
    }
    w->trust_ns =
        WAITS_TRUST_K * w->residual_ns > WAITS_TRUST_FLOOR_NS ? WAITS_TRUST_K * w->residual_ns : WAITS_TRUST_FLOOR_NS;
    /* arrivals and waits */
    for (size_t k = 0; k < nfull; k++) {
        const arrival *g = &v[full[k]];
        size_t last = 0;
        int64_t first = INT64_MAX;
        for (size_t j = 0; j < nu; j++) {
            arr[j] = g[j].ts - w->ranks[g[j].ri].offset_ns;
            if (arr[j] > arr[last])
                last = j;
            if (arr[j] < first)
                first = arr[j];
        }
        int64_t second = INT64_MIN;
        for (size_t j = 0; j < nu; j++)
            if (j != last && arr[j] > second)
                second = arr[j];
        size_t nw = 0;
        for (size_t j = 0; j < nu; j++) {
            int64_t wt = arr[last] - arr[j];
            if (wt > g[j].dur)
                wt = g[j].dur;
            if (wt < 0)
                wt = 0;
            if (wt > 0 && tl_ivset_add(&waited[g[j].ri], arr[j], tl_ns_add(arr[j], wt)) != 0)
                goto out;
            w->ranks[g[j].ri].inst_wait[g[j].k] = wt;
            if (j != last)
                waits[nw++] = wt;
            w->ranks[g[j].ri].instances++;
        }
        int64_t caused = median_i64(waits, nw);
        int beyond = arr[last] - second > w->trust_ns;
        lastri[k] = beyond ? (int32_t)g[last].ri : -1;
        if (beyond) {
            w->ranks[g[last].ri].last++;
            if (caused > 0 && tl_ivset_add(&caused_by[g[last].ri], arr[last] - caused, arr[last]) != 0)
                goto out;
        }
        if (w->nchart < TL_WAITS_MAX_CHART) {
            w->chart[w->nchart++] =
                (tl_wait_inst){ first, arr[last] - first, caused, beyond ? w->ranks[g[last].ri].rank : -1, g[0].name };
        }
    }
    for (size_t i = 0; i < w->nranks; i++) {
        tl_ivset_union(&waited[i]);
        tl_ivset_union(&caused_by[i]);
        w->ranks[i].waited_ns = tl_ivset_length(&waited[i]);
        w->ranks[i].caused_ns = tl_ivset_length(&caused_by[i]);
        w->waited_ns += w->ranks[i].waited_ns;
    }
    rc = 0;
out:
    free(d);
    free(ends);
    free(arr);
    free(waits);
    free(col);
    free(slot);
    for (size_t i = 0; waited != NULL && caused_by != NULL && i < w->nranks; i++) {
        tl_ivset_release(&waited[i]);
        tl_ivset_release(&caused_by[i]);
    }
    free(waited);
    free(caused_by);
    return rc;
}

int tl_waits_compute(tl_aggregate *a)
{
    tl_waits *w = &a->waits;
    tl_waits_release(w);
    if (a->nranks < 2)
        return 0;
    int rc = -1;
    arrival *v = NULL;
    size_t *full = NULL, *counts = NULL;
    int32_t *lastri = NULL;
    w->window_cause = -1;
    w->ranks = calloc(a->nranks, sizeof *w->ranks);
    counts = calloc(a->nranks + 1, sizeof *counts);
    if (w->ranks == NULL || counts == NULL)
        goto out;
    w->nranks = a->nranks;
    for (size_t i = 0; i < a->nranks; i++)
        w->ranks[i].rank = a->ranks[i].rank;
    /* 1. the source */
    size_t with_gpu = 0, with_cpu = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        with_gpu += count_side(first_session(a, i), TL_WAITS_GPU) > 0;
        with_cpu += count_side(first_session(a, i), TL_WAITS_CPU) > 0;
    }
    w->source = with_gpu >= 2 ? TL_WAITS_GPU : with_cpu >= 2 ? TL_WAITS_CPU : TL_WAITS_NONE;
    if (w->source == TL_WAITS_NONE) {
        rc = 0;
        goto out;
    }
    /* 2. the ranks used: with collectives, and not far fewer than the median rank's */
    double *cv = malloc((a->nranks + 1) * sizeof *cv);
    if (cv == NULL)
        goto out;
    size_t ncv = 0, total = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        counts[i] = count_side(first_session(a, i), w->source);
        if (counts[i] > 0)
            cv[ncv++] = (double)counts[i];
    }
    double med = ncv ? tl_median_sort(cv, ncv) : 0;
    free(cv);
    for (size_t i = 0; i < a->nranks; i++) {
        if (counts[i] == 0)
            w->ranks[i].why_out = "no collectives";
        else if ((double)counts[i] < WAITS_SHORT_SHARE * med)
            w->ranks[i].why_out = first_session(a, i)->truncated ? "truncated: fewer collectives than the other ranks"
                                                                 : "fewer collectives than the other ranks";
        else {
            w->ranks[i].used = 1;
            w->used++;
            total += counts[i];
        }
    }
    w->instances = total;
    for (size_t i = 0; i < a->nranks; i++) {
        if (!w->ranks[i].used)
            continue;
        size_t ni = first_session(a, i)->ninsts;
        if ((w->ranks[i].inst_wait = malloc((ni + 1) * sizeof *w->ranks[i].inst_wait)) == NULL)
            goto out;
        for (size_t k = 0; k < ni; k++)
            w->ranks[i].inst_wait[k] = -1;
    }
    if (w->used < 2) {
        w->source = TL_WAITS_NONE;
        rc = 0;
        goto out;
    }
    /* 3. keys: by sequence number when every instance has one */
    int by_seq = 1;
    for (size_t i = 0; i < a->nranks && by_seq; i++) {
        const tl_session *s = first_session(a, i);
        for (size_t k = 0; w->ranks[i].used && k < s->ninsts; k++)
            if (wanted(&s->insts[k], w->source) && s->insts[k].seq < 0)
                by_seq = 0;
    }
    w->matched_by = by_seq ? TL_WAITS_BY_SEQ : TL_WAITS_BY_ORDER;
    v = malloc((total + 1) * sizeof *v);
    w->chart = malloc(TL_WAITS_MAX_CHART * sizeof *w->chart);
    if (v == NULL || w->chart == NULL)
        goto out;
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_session *s = first_session(a, i);
        for (size_t k = 0; w->ranks[i].used && k < s->ninsts; k++) {
            const tl_scoll *c = &s->insts[k];
            if (!wanted(c, w->source))
                continue;
            /* a partial's indices are checked here, not by the reader:
             * coll_names is optional, and a name out of range reads "" */
            const char *name = c->name >= 0 && (size_t)c->name < s->ncoll_names ? s->coll_names[c->name] : "";
            const char *group = c->group >= 0 && (size_t)c->group < s->ncoll_names ? s->coll_names[c->group] : "";
            uint64_t key = fnv(14695981039346656037ull, group);
            key = by_seq ? fnv_int(key, c->seq) : fnv_int(fnv(key, name), c->nelems);
            int ni = chart_name(w, name);
            v[n++] =
                (arrival){ key, 0, (uint32_t)i, c->ts_ns, tl_ns_add(c->ts_ns, c->dur_ns), c->dur_ns, ni, (uint32_t)k };
        }
    }
    if (!by_seq) { /* the n-th occurrence of a key on each rank */
        qsort(v, n, sizeof *v, by_rank_key_ts);
        for (size_t k = 1; k < n; k++)
            if (v[k].ri == v[k - 1].ri && v[k].key == v[k - 1].key)
                v[k].occ = v[k - 1].occ + 1;
    }
    qsort(v, n, sizeof *v, by_key_occ_rank);
    full = malloc((n + 1) * sizeof *full);
    if (full == NULL)
        goto out;
    size_t nfull = 0;
    for (size_t k = 0; k < n;) {
        size_t e = k + 1;
        while (e < n && v[e].key == v[k].key && v[e].occ == v[k].occ)
            e++;
        /* one arrival a rank (a repeated sequence number on one rank: not judged) */
        int distinct = 1;
        for (size_t j = k + 1; j < e; j++)
            distinct &= v[j].ri != v[j - 1].ri;
        if (e - k == w->used && distinct)
            full[nfull++] = k;
        else
            w->partial++;
        k = e;
    }
    /* in time order, so the chart reads left to right */
    qsort_r(full, nfull, sizeof *full, by_first_ts, v);
    w->matched = nfull;
    if ((lastri = malloc((nfull + 1) * sizeof *lastri)) == NULL)
        goto out;
    if (nfull > 0 && measure(w, v, full, nfull, lastri) != 0)
        goto out;
    if (nfull > 0)
        judge(a, w, v, full, lastri, nfull);
    else
        w->why_none = "no collective matched on every rank";
    rc = 0;
out:
    free(v);
    free(full);
    free(counts);
    free(lastri);
    return rc;
}
