/*
 * compare_levels.c - the ranks' levels: a second look at a row's noise
 * (compare_internal.h; docs/compare.md). A row judged by its ranks' log ratios
 * (the rank-level t test of compare.c) is judged again with the variance of
 * the rows of like noise pooled (moderated as limma's eBayes, Smyth 2004),
 * so that a stage measured on few ranks borrows the others' noise.
 */
#define _GNU_SOURCE
#include "compare_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "significance.h"

/* One-sided p-values of the statistic (mean - shift) / sqrt(var / h) against
 * Student's t with df degrees of freedom. No spread (var 0): certain. */
static double t_up(double mean, double shift, double var, double h, double df)
{
    if (!(var > 0))
        return mean > shift ? 0.0 : 1.0;
    return tl_signif_t_sf((mean - shift) / sqrt(var / h), df);
}

/* The variance of a rank-level row's log ratios per degree of freedom. */
static double row_var(const tl_cmp_row *r)
{
    return r->lr_ss / (double)(r->lr_n - 1);
}

static int is_pooled(const tl_cmp_row *r)
{
    return r->test == TL_TEST_RANK_T && r->lr_spread && r->lr_n > 1 && row_var(r) > 0;
}

/* P(F >= x) for Snedecor's F with d1 and d2 degrees of freedom. */
static double f_sf(double x, double d1, double d2)
{
    if (!(x > 0))
        return 1.0;
    return tl_signif_betai(d2 / 2, d1 / 2, d2 / (d2 + d1 * x));
}

/* A pool of rows: how many and their degrees of freedom (all pooled rows,
 * mark_like's yardstick), their sum of squares (the rows of like noise, the
 * variance they judge with), and the prior of their variances (moderate). */
typedef struct pool {
    size_t rows;
    double ss, df;
    double sum_e, sum_ee, sum_tri;            /* prior_fit's sums over the rows of like noise */
    double sum_d, sum_dv, sum_dlv, sum_inv_d; /* Bartlett's: d, d s^2, d log s^2, 1 / d */
    size_t n_e;
    double d0, s0; /* prior degrees of freedom (INFINITY: one variance) and variance */
} pool;

/* ---- moderated variances (Smyth 2004, limma's eBayes) ------------------------- */

/* digamma and trigamma: the recurrence up to 6, then the asymptotic series. */
static double digamma(double x)
{
    double r = 0;
    for (; x < 6; x++)
        r -= 1 / x;
    double f = 1 / (x * x);
    return r + log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

static double trigamma(double x)
{
    double r = 0;
    for (; x < 6; x++)
        r += 1 / (x * x);
    double f = 1 / (x * x);
    return r + 1 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30)));
}

/* x with trigamma(x) = y (trigamma falls from infinity to 0): bisection on
 * log x. */
static double trigamma_inverse(double y)
{
    double lo = log(1e-8), hi = log(1e8);
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (trigamma(exp(mid)) > y)
            lo = mid;
        else
            hi = mid;
    }
    return exp((lo + hi) / 2);
}

/* A row's part of its pool's prior: e = log s^2 - digamma(d/2) + log(d/2),
 * whose mean and variance over the rows give the prior (moderate). */
static void prior_add(pool *l, double var, double d)
{
    double e = log(var) - digamma(d / 2) + log(d / 2);
    l->sum_e += e;
    l->sum_ee += e * e;
    l->sum_tri += trigamma(d / 2);
    l->sum_d += d;
    l->sum_dv += d * var;
    l->sum_dlv += d * log(var);
    l->sum_inv_d += 1 / d;
    l->n_e++;
}

/* Bartlett's test that the rows' variances are one: P(chi-square with k - 1
 * degrees of freedom >= M / C), the chi-square by Wilson-Hilferty. */
static double bartlett_p(const pool *l)
{
    double k = (double)l->n_e, m = l->sum_d * log(l->sum_dv / l->sum_d) - l->sum_dlv;
    double cc = 1 + (l->sum_inv_d - 1 / l->sum_d) / (3 * (k - 1));
    double nu = k - 1, x = m / cc / nu, a = 2 / (9 * nu);
    double z = (cbrt(x) - (1 - a)) / sqrt(a);
    return 0.5 * erfc(z / sqrt(2.0));
}

/* The prior of a pool's variances, fitted as limma's fitFDist does: the
 * rows' variances are taken as scaled inverse chi-square draws around s0
 * with d0 degrees of freedom; the spread of their logs beyond what their
 * own degrees of freedom explain gives d0 (none left: INFINITY, one
 * variance for all, the pool's). */
static void prior_fit(pool *l)
{
    l->d0 = INFINITY;
    l->s0 = NAN;
    /* Only where the variances differ beyond chance (Bartlett at
     * TL_CMP_MODERATE_LEVEL): a prior fitted to rows of one variance moves
     * each row off the pool by its own sampling noise, which costs the
     * changed row as much as it gains (1 sample x 4 ranks, +25 %: 94.0 ->
     * 92.8 % found when always moderated). */
    if (l->n_e < 3 || !(bartlett_p(l) < TL_CMP_MODERATE_LEVEL))
        return;
    double n = (double)l->n_e, mean = l->sum_e / n;
    double var = (l->sum_ee - n * mean * mean) / (n - 1) - l->sum_tri / n;
    if (var > 0) {
        l->d0 = 2 * trigamma_inverse(var);
        l->s0 = exp(mean + digamma(l->d0 / 2) - log(l->d0 / 2));
    }
}

/* ---- the ranks' levels: a second look at a row's noise ----------------------- */

/* A rank's level in a row, (log baseline + log candidate) / 2, off the row's
 * mean level, with its pool (the key of mark_like) and rank. */
typedef struct level {
    size_t key;
    int rank;
    double dev;
} level;

static int key_then_rank(const void *a, const void *b)
{
    const level *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->dev > y->dev) - (x->dev < y->dev);
}

static size_t pool_key(const tl_cmp_row *o)
{
    return ((size_t)o->primary * TL_CMP_NGROUPS + (size_t)o->group) * TL_CMP_KIND_COUNT + (size_t)o->kind;
}

/* Visit the rank rows of a pooled row with a usable value on both sides:
 * their log ratio and level. Returns how many. */
static size_t row_levels(const tl_compare *c, const tl_cmp_row *o, double *lr, double *lv, int *rank)
{
    size_t m = 0;
    for (size_t j = o->ranks_from; j < o->ranks_to; j++) {
        const tl_cmp_row *x = &c->rows[j];
        if (!x->base.present || !x->cand.present || !(x->value_base > 0) || !(x->value_cand > 0) ||
            !isfinite(x->value_base) || !isfinite(x->value_cand))
            continue;
        lr[m] = log(x->value_cand / x->value_base);
        lv[m] = (log(x->value_cand) + log(x->value_base)) / 2;
        rank[m++] = x->rank;
    }
    return m;
}

/* A rank's effect in a pool: the median of its levels off their rows' means
 * over the pool's rows but the one judged (whose own deviation, dev, is one
 * of them): with it, a rank in one row only would have its deviation taken
 * for its effect, and its levels would read as quiet whatever they are.
 * Returns 1 with *effect set, or 0 (and 0) when the rank is in fewer than
 * TL_CMP_LEVELS_MIN_ROWS other rows: not known. all[0, n) sorted by
 * key_then_rank. */
static int rank_effect(const level *all, size_t n, size_t key, int rank, double dev, double *effect)
{
    level want = { key, rank, dev };
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first entry not below (key, rank, dev): the row's own */
        size_t mid = (lo + hi) / 2;
        if (key_then_rank(&all[mid], &want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t from = lo, to = lo;
    while (from > 0 && all[from - 1].key == key && all[from - 1].rank == rank)
        from--;
    while (to < n && all[to].key == key && all[to].rank == rank)
        to++;
    *effect = 0;
    if (lo == to || all[lo].dev != dev || to - from - 1 < TL_CMP_LEVELS_MIN_ROWS)
        return 0;
    size_t others = to - from - 1, own = lo - from;
    /* the q-th of the others, in order: the group's q-th, past the row's own */
#define OTHER(q) all[from + (q) + ((q) >= own)].dev
    *effect = others % 2 ? OTHER(others / 2) : (OTHER(others / 2 - 1) + OTHER(others / 2)) / 2;
#undef OTHER
    return 1;
}

/* For every pooled row with its rank rows, the sum of squares of its ranks'
 * levels, with and without the farthest rank (the one lr_mean1 leaves
 * out), each level less its rank's effect -- the median over the pool's
 * other rows of the rank's level off its row's mean (rank_effect), so that
 * a rank slower in every stage (another GPU, a straggler) is not noise --
 * times 4, the scale of a log ratio's (under one noise for both sides, a
 * level's variance is a quarter of a ratio's): out[i] without the farthest
 * rank, whole[i] with every rank.
 * NaN where a row has none. The ranks' spread within each side is noise
 * the ratios do not see when the ranks are alike: as many more degrees of
 * freedom (mark_like). */
static int level_ss(const tl_compare *c, double *out, double *whole)
{
    size_t total = 0, nmax = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        out[i] = whole[i] = NAN;
        const tl_cmp_row *o = &c->rows[i];
        if (is_pooled(o) && o->ranks_to > o->ranks_from) {
            total += o->ranks_to - o->ranks_from;
            nmax = o->ranks_to - o->ranks_from > nmax ? o->ranks_to - o->ranks_from : nmax;
        }
    }
    level *all = malloc((total + 1) * sizeof *all);
    double *lr = malloc((nmax + 1) * sizeof *lr), *lv = malloc((nmax + 1) * sizeof *lv);
    int *rank = malloc((nmax + 1) * sizeof *rank);
    int rc = -1;
    if (all == NULL || lr == NULL || lv == NULL || rank == NULL)
        goto out;
    size_t n = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *o = &c->rows[i];
        if (!is_pooled(o) || o->ranks_to <= o->ranks_from)
            continue;
        size_t m = row_levels(c, o, lr, lv, rank);
        double mean, ss;
        tl_cmp_mean_ss(lv, m, &mean, &ss);
        for (size_t j = 0; j < m; j++)
            all[n++] = (level){ pool_key(o), rank[j], lv[j] - mean };
    }
    qsort(all, n, sizeof *all, key_then_rank);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *o = &c->rows[i];
        if (!is_pooled(o) || o->ranks_to <= o->ranks_from)
            continue;
        size_t m = row_levels(c, o, lr, lv, rank), far = m;
        double mean, ss;
        tl_cmp_mean_ss(lv, m, &mean, &ss);
        int known = 1;
        for (size_t j = 0; j < m; j++) {
            if (far == m && isfinite(o->lr_far) && lr[j] == o->lr_far)
                far = j;
            double effect;
            known &= rank_effect(all, n, pool_key(o), rank[j], lv[j] - mean, &effect);
            lv[j] -= effect;
        }
        if (!known)
            continue; /* a rank in too few other rows: its effect is not known */
        tl_cmp_mean_ss(lv, m, &mean, &ss);
        if (m >= 2)
            whole[i] = 4 * ss;
        if (far < m && m >= 3) {
            lv[far] = lv[m - 1];
            tl_cmp_mean_ss(lv, m - 1, &mean, &ss);
            out[i] = 4 * ss;
        }
    }
    rc = 0;
out:
    free(all);
    free(lr);
    free(lv);
    free(rank);
    return rc;
}

/* A pooled row in the order of its pool and variance. */
typedef struct by_var {
    size_t key;
    double var;
    size_t row;
} by_var;

static int key_then_var(const void *a, const void *b)
{
    const by_var *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    if (x->var != y->var)
        return (x->var > y->var) - (x->var < y->var);
    return (x->row > y->row) - (x->row < y->row);
}

/* How a pooled row stands to its pool's noise (mark_like). */
enum row_noise {
    ROW_APART,        /* noisier than the pool: judged by its own variance */
    ROW_LIKE,         /* of like noise: in the pool, judged with its variance */
    ROW_LIKE_BUT_ONE, /* noisier, but of like noise without its farthest rank */
    ROW_SPIKE,        /* of like noise but for a spike on its farthest rank */
    ROW_SPIKE_QUIET,  /* the same, and its other ranks' levels are quiet too */
    ROW_SPIKE_OWN,    /* a spike, and its other ranks' levels are noisier than the pool's */
};

/* Mark how each row of each pool (the pooled rows of one family, group and
 * kind, from TL_CMP_POOL_MIN of them) stands to the pool's noise, against
 * the pool's typical variance: the median of the rows' variances, each over
 * the median of its chi-square per degree of freedom (Wilson-Hilferty,
 * (1 - 2 / 9d)^3) -- the median, not the pool's mean, so that spikes in two
 * or three stages of one comparison (80 calls at 1 in 100 spiking hold three
 * in 5 % of comparisons) cannot raise the yardstick enough to pass one
 * another. At level TL_CMP_POOL_LEVEL:
 *  - the farthest rank is a spike when the sum of squares it adds, (n - 1) /
 *    n times its distance from the other ranks' mean squared, is beyond the
 *    typical variance's chi-square with 1 degree of freedom (F(1, the
 *    others'), the level split over the n ranks it could have been);
 *  - a row with a spike whose other ranks' variance is not larger than the
 *    typical one is ROW_SPIKE -- ROW_SPIKE_QUIET when, with their levels
 *    (level_ss: n - 2 more degrees of freedom), their variance is not larger
 *    at TL_CMP_QUIET_LEVEL either, ROW_SPIKE_OWN when their levels alone
 *    are larger at TL_CMP_LEVELS_LEVEL; a row whose variance F finds larger,
 *    without a spike, but whose other ranks' is not larger, nor their
 *    levels', ROW_LIKE_BUT_ONE; all four are judged without that rank; any
 *    other row with a spike or a larger variance is apart;
 *  - any other row is of like noise (ROW_LIKE) when its levels' variance
 *    is not larger at TL_CMP_LEVELS_LEVEL either (a stage 3x noisier than
 *    the rest passes the F test of its 3 degrees of freedom of ratios in
 *    about half of the comparisons; its levels give 3 more), else apart.
 * Why a spike test besides the F test of the whole row: F(3, 27) at 0.001
 * passes a row whose one rank is up to about 1.46x off the others (F 7.3),
 * and the spike test finds one from about 1.40x (its sum of squares 3 F
 * times the typical variance, beyond F(1, 27)'s 0.001 / 4 point, 17.8): in
 * that window the spike stayed in the pool and in its row's mean. */
static int mark_like(const tl_compare *c, pool all[2][TL_CMP_NGROUPS][TL_CMP_KIND_COUNT], const double *lss,
                     const double *lwhole, unsigned char *noise)
{
    by_var *order = malloc((c->nrows + 1) * sizeof *order);
    if (order == NULL)
        return -1;
    size_t no = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *o = &c->rows[i];
        if (!is_pooled(o) || all[o->primary][o->group][o->kind].rows < TL_CMP_POOL_MIN)
            continue;
        double d = (double)(o->lr_n - 1), m = 1 - 2 / (9 * d);
        order[no++] = (by_var){ pool_key(o), row_var(o) / (m * m * m), i };
    }
    qsort(order, no, sizeof *order, key_then_var);
    for (size_t k = 0; k < no;) {
        size_t end = k;
        while (end < no && order[end].key == order[k].key)
            end++;
        size_t n = end - k;
        double typical = n % 2 ? order[k + n / 2].var : (order[k + n / 2 - 1].var + order[k + n / 2].var) / 2;
        const tl_cmp_row *first = &c->rows[order[k].row];
        double df = all[first->primary][first->group][first->kind].df;
        for (; k < end; k++) {
            const tl_cmp_row *o = &c->rows[order[k].row];
            double d = (double)(o->lr_n - 1), rest = df - d;
            if (!(typical > 0)) {
                noise[order[k].row] = ROW_LIKE;
                continue;
            }
            int spike = 0, like_but_one = 0;
            if (o->lr_n >= 4 && isfinite(o->lr_ss1)) {
                spike = f_sf((o->lr_ss - o->lr_ss1) / typical, 1, rest) < TL_CMP_POOL_LEVEL / (double)o->lr_n;
                like_but_one = f_sf(o->lr_ss1 / (d - 1) / typical, d - 1, rest) >= TL_CMP_POOL_LEVEL;
            }
            int like = f_sf(row_var(o) / typical, d, rest) >= TL_CMP_POOL_LEVEL;
            /* Of like noise in the levels too, where the rank rows give
             * them: without (levels_one) and with the farthest rank; and,
             * at a level where the doubt counts against the pool, the
             * other ranks' ratios and levels together (quiet). */
            double l1 = lss[order[k].row], lw = lwhole[order[k].row];
            int levels_one = !isfinite(l1) || f_sf(l1 / (d - 1) / typical, d - 1, rest) >= TL_CMP_LEVELS_LEVEL;
            int quiet = isfinite(l1) &&
                        f_sf((o->lr_ss1 + l1) / (2 * (d - 1)) / typical, 2 * (d - 1), rest) >= TL_CMP_QUIET_LEVEL;
            if (like && isfinite(lw))
                like = f_sf(lw / d / typical, d, rest) >= TL_CMP_LEVELS_LEVEL;
            if (like && !spike)
                noise[order[k].row] = ROW_LIKE;
            else if (like_but_one && spike)
                noise[order[k].row] = quiet ? ROW_SPIKE_QUIET : levels_one ? ROW_SPIKE : ROW_SPIKE_OWN;
            else if (like_but_one && levels_one)
                noise[order[k].row] = ROW_LIKE_BUT_ONE;
            else
                noise[order[k].row] = ROW_APART;
        }
    }
    free(order);
    return 0;
}

/* The rank-level rows' p-values. One row's spread over 4 ranks has 3
 * degrees of freedom; the variance is pooled over the rows of like noise
 * (mark_like) in one family, group and kind, as a one-way analysis of
 * variance pools its error (ten rows of 4 ranks: 30 degrees of freedom; a
 * row like the pool but for a spike on one rank adds the other ranks'; a
 * noisier row whose quieter ranks happen to look like the pool adds
 * nothing: the ranks left would be a chosen, quiet sample), and
 * each row is judged:
 *  - of like noise: its mean log ratio over all ranks with the pool's
 *    variance (Student's t, the pool's degrees of freedom);
 *  - like the pool but for its farthest rank (a 1-in-100 call that took 2x
 *    on one rank): the mean of the other ranks with the larger of the
 *    pool's variance and their own, so the spike neither makes a change nor
 *    hides one, and a noisier stage whose inner ranks happen to look quiet
 *    is not judged by the pool -- unless their levels are as quiet as their
 *    ratios (ROW_SPIKE_QUIET): then with the pool's variance, as a row of
 *    like noise (a noisier stage spreads its ranks' levels too: on 4
 *    ranks, 2 degrees of freedom of ratios could not tell it from a quiet
 *    stage whose three ranks came out a little apart, 2.2 points of the
 *    +25 % detection); and when their levels are noisier than the pool's
 *    (ROW_SPIKE_OWN), with the larger of their own variance and the whole
 *    row's, on their degrees of freedom (their own alone would judge a
 *    noisier stage by a chosen, quiet sample). With the levels, 1 x 4 +25 %
 *    94.4 -> 96.1 %, a noisier stage's A/A false gates 4.2 -> 2.5 % (3x the
 *    others' sigma) and 4.4 -> 1.2 % (6x) (docs/compare.md);
 *  - otherwise (a noisier stage -- I/O, a CPU-bound stage on a loaded
 *    machine -- or too few rows to pool): Student's t of the row alone, so
 *    it is judged by its own noise.
 * The hypotheses carry the threshold as the U tests' do: the mean log ratio
 * beyond log(1 + threshold), or below log(1 - threshold). Ranks whose ratios
 * are all the same (copies) are certain. */
int tl_cmp_levels_pooled(tl_compare *c)
{
    enum { NG = TL_CMP_NGROUPS, NK = TL_CMP_KIND_COUNT };
    pool all[2][NG][NK], like[2][NG][NK];
    memset(all, 0, sizeof all);
    memset(like, 0, sizeof like);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *o = &c->rows[i];
        if (!is_pooled(o))
            continue;
        pool *a = &all[o->primary][o->group][o->kind];
        a->rows++;
        a->df += (double)(o->lr_n - 1);
    }
    unsigned char *noise = calloc(c->nrows + 1, 1); /* ROW_APART unless marked */
    double *lss = malloc(2 * (c->nrows + 1) * sizeof *lss), *lwhole = lss + c->nrows + 1;
    if (noise == NULL || lss == NULL || level_ss(c, lss, lwhole) != 0 || mark_like(c, all, lss, lwhole, noise) != 0) {
        free(noise);
        free(lss);
        return -1;
    }
    free(lss);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *o = &c->rows[i];
        pool *l = &like[o->primary][o->group][o->kind];
        if (noise[i] == ROW_LIKE) {
            l->ss += o->lr_ss;
            l->df += (double)(o->lr_n - 1);
            prior_add(l, row_var(o), (double)(o->lr_n - 1));
        } else if (noise[i] == ROW_SPIKE || noise[i] == ROW_SPIKE_QUIET) {
            l->ss += o->lr_ss1;
            l->df += (double)(o->lr_n - 2);
        }
    }
    for (size_t g = 0; g < 2 * NG * NK; g++)
        prior_fit(&(&like[0][0][0])[g]);
    for (size_t i = 0; i < c->nrows; i++) {
        tl_cmp_row *r = &c->rows[i];
        if (r->test != TL_TEST_RANK_T)
            continue;
        const pool *l = &like[r->primary][r->group][r->kind];
        double pool_var = l->df > 0 ? l->ss / l->df : NAN;
        double var, d, h, mean;
        if (noise[i] == ROW_LIKE && pool_var > 0 && isfinite(l->d0)) {
            /* the rows' variances differ beyond chance (short stages on a
             * loaded machine, long ones not): each row's own, moderated
             * towards the pool's prior -- the pooled variance would judge a
             * quiet row by the noisy ones' noise (the sample pipeline's
             * decode, +35 % on 4 ranks within 1.6 %, read p 0.3 at load 4) */
            double own = row_var(r), dr = (double)(r->lr_n - 1);
            mean = r->lr_mean;
            h = (double)r->lr_n;
            d = fmin(l->d0 + dr, l->df);
            var = (l->d0 * l->s0 + dr * own) / (l->d0 + dr);
        } else if (noise[i] == ROW_LIKE && pool_var > 0) {
            mean = r->lr_mean;
            h = (double)r->lr_n;
            d = l->df;
            var = pool_var;
        } else if (noise[i] == ROW_SPIKE_QUIET && pool_var > 0) {
            mean = r->lr_mean1;
            h = (double)(r->lr_n - 1);
            d = l->df;
            var = pool_var;
        } else if (noise[i] == ROW_SPIKE_OWN) { /* a spike: from 4 ranks */
            mean = r->lr_mean1;
            h = (double)(r->lr_n - 1);
            d = h - 1;
            var = fmax(r->lr_ss1 / d, row_var(r));
        } else if ((noise[i] == ROW_LIKE_BUT_ONE || noise[i] == ROW_SPIKE) && pool_var > 0) {
            double own = r->lr_ss1 / (double)(r->lr_n - 2);
            mean = r->lr_mean1;
            h = (double)(r->lr_n - 1);
            d = own > pool_var ? (double)(r->lr_n - 2) : l->df;
            var = own > pool_var ? own : pool_var;
        } else {
            mean = r->lr_mean;
            h = (double)r->lr_n;
            d = h - 1;
            var = r->lr_ss / d;
        }
        if (!r->lr_spread)
            var = 0;
        r->lr_est = mean;
        r->lr_used = (size_t)h;
        double limit = tl_cmp_row_limit(&c->opt, r->group) / 100;
        r->p_up = t_up(mean, log1p(limit), var, h, d);
        r->p_down = t_up(-mean, -log(tl_cmp_faster_scale(limit)), var, h, d);
        r->p_value = fmin(1.0, 2.0 * fmin(r->p_up, r->p_down));
    }
    free(noise);
    return 0;
}
