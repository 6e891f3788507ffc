/*
 * significance.c - Mann–Whitney U (exact and normal, both tails, and summed
 * over strata), Student's t, Holm, Benjamini–Hochberg, the order-statistic
 * confidence interval of the median and the geometric mean of ratios (see
 * significance.h for the exact definitions).
 *
 * The U statistic comes from midranks of the pooled sample, so ties count ½
 * a pair each, as in scipy.stats.mannwhitneyu. The order of tied values in
 * the pooled sample does not matter: they all get the same midrank.
 */
#include "significance.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pooled {
    double v;
    int from_x;
} pooled;

static int by_value(const void *a, const void *b)
{
    double x = ((const pooled *)a)->v, y = ((const pooled *)b)->v;
    return (x > y) - (x < y);
}

int tl_signif_mwu_exact_counts(size_t n1, size_t n2, double *count)
{
    if (n1 > TL_SIGNIF_EXACT_MAX || n2 > TL_SIGNIF_EXACT_MAX)
        return -1;
    size_t w = n1 * n2 + 1;
    double *prev = calloc((n2 + 1) * w, sizeof *prev);
    double *cur = calloc((n2 + 1) * w, sizeof *cur);
    int rc = -1;
    if (prev == NULL || cur == NULL)
        goto out;
    /* m = 0: every arrangement of n values of y alone has U = 0. */
    for (size_t n = 0; n <= n2; n++)
        prev[n * w] = 1;
    for (size_t m = 1; m <= n1; m++) {
        memset(cur, 0, (n2 + 1) * w * sizeof *cur);
        cur[0] = 1; /* n = 0: m values of x alone */
        /* The largest pooled value is x's (it beats all n of y: U grows by n)
         * or y's (it adds nothing). */
        for (size_t n = 1; n <= n2; n++)
            for (size_t u = 0; u <= m * n; u++)
                cur[n * w + u] = (u >= n ? prev[n * w + u - n] : 0) + cur[(n - 1) * w + u];
        double *t = prev;
        prev = cur;
        cur = t;
    }
    memcpy(count, prev + n2 * w, w * sizeof *count);
    rc = 0;
out:
    free(prev);
    free(cur);
    return rc;
}

/* The exact p-values of U = u (an integer: there are no ties): both tails
 * and the two-sided p. */
static int exact_p(size_t nx, size_t ny, double u, tl_mwu *out)
{
    size_t w = nx * ny + 1;
    double *count = malloc(w * sizeof *count);
    if (count == NULL || tl_signif_mwu_exact_counts(nx, ny, count) != 0) {
        free(count);
        return -1;
    }
    double total = 0, below = 0, above = 0;
    for (size_t k = 0; k < w; k++) {
        total += count[k];
        if ((double)k <= u)
            below += count[k];
        if ((double)k >= u)
            above += count[k];
    }
    double tail = below < above ? below : above;
    out->p = fmin(1.0, 2.0 * tail / total);
    out->p_less = below / total;
    out->p_greater = above / total;
    free(count);
    return 0;
}

/* Midranks of the sorted pooled sample: the rank sum of x and Σ(t³ − t). */
static void rank_sums(const pooled *all, size_t n, double *r1, double *tie_term)
{
    *r1 = 0;
    *tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && all[j + 1].v == all[i].v)
            j++;
        double t = (double)(j - i + 1), rank = ((double)i + (double)j) / 2.0 + 1.0;
        for (size_t k = i; k <= j; k++)
            if (all[k].from_x)
                *r1 += rank;
        *tie_term += t * t * t - t;
        i = j + 1;
    }
}

static double null_var(double nx, double ny, double tie_term)
{
    double n = nx + ny;
    return nx * ny / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
}

/* The normal approximation's p-values of U = u with null mean mu and
 * variance var. */
static void normal_p(double u, double mu, double var, tl_mwu *out)
{
    if (!(var > 0)) { /* every value the same: no evidence either way */
        out->z = 0;
        out->p = out->p_greater = out->p_less = 1.0;
        return;
    }
    double sd = sqrt(var);
    out->z = (fabs(u - mu) - 0.5) / sd;
    out->p = fmin(1.0, erfc(out->z / sqrt(2.0)));
    out->p_greater = fmin(1.0, 0.5 * erfc((u - mu - 0.5) / (sd * sqrt(2.0))));
    out->p_less = fmin(1.0, 0.5 * erfc((mu - u - 0.5) / (sd * sqrt(2.0))));
}

static int is_sorted(const double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] < v[i - 1])
            return 0;
    return 1;
}

/* The pooled sample in ascending order: merged when both sides are sorted
 * already (what the compare stage passes), else sorted. */
static pooled *pool(const double *x, size_t nx, const double *y, size_t ny)
{
    pooled *all = malloc((nx + ny) * sizeof *all);
    if (all == NULL)
        return NULL;
    if (is_sorted(x, nx) && is_sorted(y, ny)) {
        size_t i = 0, k = 0, o = 0;
        while (i < nx || k < ny)
            all[o++] = k >= ny || (i < nx && x[i] <= y[k]) ? (pooled){ x[i++], 1 } : (pooled){ y[k++], 0 };
        return all;
    }
    for (size_t i = 0; i < nx; i++)
        all[i] = (pooled){ x[i], 1 };
    for (size_t i = 0; i < ny; i++)
        all[nx + i] = (pooled){ y[i], 0 };
    qsort(all, nx + ny, sizeof *all, by_value);
    return all;
}

int tl_signif_mwu(const double *x, size_t nx, const double *y, size_t ny, tl_mwu *out)
{
    memset(out, 0, sizeof *out);
    out->u = out->z = out->p = out->p_greater = out->p_less = out->var = NAN;
    out->nx = nx;
    out->ny = ny;
    if (nx == 0 || ny == 0)
        return 0;
    pooled *all = pool(x, nx, y, ny);
    if (all == NULL)
        return -1;
    double r1, tie_term;
    rank_sums(all, nx + ny, &r1, &tie_term);
    free(all);
    out->u = r1 - (double)nx * ((double)nx + 1.0) / 2.0;
    out->ties = tie_term > 0;
    out->var = nx + ny > 1 ? null_var((double)nx, (double)ny, tie_term) : 0;
    if (nx <= TL_SIGNIF_EXACT_MAX && ny <= TL_SIGNIF_EXACT_MAX && !out->ties) {
        out->exact = 1;
        return exact_p(nx, ny, out->u, out);
    }
    normal_p(out->u, (double)nx * (double)ny / 2.0, out->var, out);
    return 0;
}

int tl_signif_mwu_strata(const tl_mwu *strata, size_t n, double *p_greater, double *p_less, double *floor)
{
    double s = 0, mu = 0, var = 0, log_floor = 0;
    size_t support = 0, used = 0;
    int exact = 1;
    *p_greater = *p_less = NAN;
    if (floor)
        *floor = NAN;
    for (size_t i = 0; i < n; i++) {
        const tl_mwu *t = &strata[i];
        if (isnan(t->p))
            continue;
        used++;
        s += t->u;
        mu += (double)t->nx * (double)t->ny / 2.0;
        var += t->var;
        support += t->nx * t->ny;
        exact &= t->exact;
        log_floor -= lgamma((double)(t->nx + t->ny) + 1) - lgamma((double)t->nx + 1) - lgamma((double)t->ny + 1);
    }
    if (used == 0)
        return 0;
    if (floor)
        *floor = exp(log_floor);
    if (!exact || support > TL_SIGNIF_STRATA_EXACT_MAX) {
        tl_mwu t;
        normal_p(s, mu, var, &t);
        *p_greater = t.p_greater;
        *p_less = t.p_less;
        return 0;
    }
    /* The null distribution of S: the strata's distributions convolved,
     * as probabilities (each stratum's counts over C(nx + ny, nx)). */
    double *dist = calloc(support + 1, sizeof *dist), *next = calloc(support + 1, sizeof *next);
    double *count = malloc((TL_SIGNIF_EXACT_MAX * TL_SIGNIF_EXACT_MAX + 1) * sizeof *count);
    int rc = -1;
    if (dist == NULL || next == NULL || count == NULL)
        goto out;
    size_t top = 0; /* dist covers 0 .. top */
    dist[0] = 1;
    for (size_t i = 0; i < n; i++) {
        const tl_mwu *t = &strata[i];
        if (isnan(t->p))
            continue;
        size_t w = t->nx * t->ny;
        if (tl_signif_mwu_exact_counts(t->nx, t->ny, count) != 0)
            goto out;
        double total = 0;
        for (size_t k = 0; k <= w; k++)
            total += count[k];
        memset(next, 0, (top + w + 1) * sizeof *next);
        for (size_t a = 0; a <= top; a++)
            for (size_t k = 0; k <= w; k++)
                next[a + k] += dist[a] * count[k] / total;
        top += w;
        double *x = dist;
        dist = next;
        next = x;
    }
    double below = 0, above = 0;
    for (size_t k = 0; k <= top; k++) {
        if ((double)k <= s + 1e-9)
            below += dist[k];
        if ((double)k >= s - 1e-9)
            above += dist[k];
    }
    *p_greater = fmin(1.0, above);
    *p_less = fmin(1.0, below);
    rc = 0;
out:
    free(dist);
    free(next);
    free(count);
    return rc;
}

double tl_signif_median_sorted(const double *sorted, size_t n)
{
    if (n == 0)
        return NAN;
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

int tl_signif_median_ci(const double *sorted, size_t n, double conf, double *lo, double *hi, double *coverage)
{
    *lo = *hi = NAN;
    if (coverage)
        *coverage = NAN;
    double alpha2 = (1.0 - conf) / 2.0, cdf = 0, ln2n = (double)n * log(2.0);
    size_t k = 0; /* the largest k with P(B <= k - 1) <= alpha2, 0: none */
    double tail = 0;
    for (size_t i = 0; i < n; i++) {
        double lpmf = lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) - ln2n;
        cdf += exp(lpmf);
        if (cdf > alpha2)
            break;
        k = i + 1;
        tail = cdf;
    }
    if (k == 0 || k > n - k + 1)
        return -1;
    *lo = sorted[k - 1];
    *hi = sorted[n - k];
    if (coverage)
        *coverage = 1.0 - 2.0 * tail;
    return 0;
}

typedef struct indexed_p {
    double p;
    size_t i;
} indexed_p;

static int by_p(const void *a, const void *b)
{
    const indexed_p *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The tests among p (NaN entries are not tests: their adj is NaN), sorted
 * by p ascending, malloc'd; *m gets their number. NULL when out of memory. */
static indexed_p *sorted_tests(const double *p, size_t n, double *adj, size_t *m)
{
    indexed_p *v = malloc((n + 1) * sizeof *v);
    *m = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        adj[i] = NAN;
        if (!isnan(p[i]))
            v[(*m)++] = (indexed_p){ p[i], i };
    }
    qsort(v, *m, sizeof *v, by_p);
    return v;
}

int tl_signif_holm(const double *p, size_t n, double *adj)
{
    size_t m;
    indexed_p *v = sorted_tests(p, n, adj, &m);
    if (v == NULL)
        return -1;
    double run = 0;
    for (size_t k = 0; k < m; k++) {
        double a = fmin(1.0, (double)(m - k) * v[k].p);
        run = a > run ? a : run;
        adj[v[k].i] = run;
    }
    free(v);
    return 0;
}

int tl_signif_bh(const double *p, size_t n, double *adj)
{
    size_t m;
    indexed_p *v = sorted_tests(p, n, adj, &m);
    if (v == NULL)
        return -1;
    double run = 1.0;
    for (size_t k = m; k-- > 0;) {
        double a = fmin(1.0, (double)m * v[k].p / (double)(k + 1));
        run = a < run ? a : run;
        adj[v[k].i] = run;
    }
    free(v);
    return 0;
}

/* The continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified
 * Lentz). Converges quickly for x < (a + 1) / (a + b + 2). */
static double betacf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

double tl_signif_betai(double a, double b, double x)
{
    if (!(a > 0 && b > 0 && x >= 0 && x <= 1))
        return NAN;
    if (x == 0 || x == 1)
        return x;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * betacf(a, b, x) / a;
    return 1 - front * betacf(b, a, 1 - x) / b;
}

double tl_signif_t_one_sample(const double *x, size_t n, double *t_out)
{
    if (t_out)
        *t_out = NAN;
    if (n < 2)
        return NAN;
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) { /* Welford: stable for values close together */
        double d = x[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (x[i] - mean);
    }
    double sd = sqrt(m2 / (double)(n - 1));
    if (!(sd > 1e-12 * fabs(mean))) { /* no spread beyond rounding */
        if (t_out)
            *t_out = mean == 0 ? 0 : copysign(INFINITY, mean);
        return mean == 0 ? 1.0 : 0.0;
    }
    double t = mean / (sd / sqrt((double)n)), df = (double)(n - 1);
    if (t_out)
        *t_out = t;
    return fmin(1.0, tl_signif_betai(df / 2, 0.5, df / (df + t * t)));
}

double tl_signif_t_sf(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 0.0 : 1.0;
    double half = 0.5 * tl_signif_betai(df / 2, 0.5, df / (df + t * t)); /* P(T >= |t|) */
    return t >= 0 ? half : 1.0 - half;
}

double tl_signif_geomean_ratio(const double *base, const double *cand, size_t n, size_t *used)
{
    double sum = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(base[i]) && isfinite(cand[i]) && base[i] > 0 && cand[i] > 0))
            continue;
        sum += log(cand[i] / base[i]);
        m++;
    }
    if (used)
        *used = m;
    return m ? exp(sum / (double)m) : NAN;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sum of the values at the set bits of mask, from byte tables:
 * tab[k][b] is the sum of v[8k + i] over the bits i of b. */
static double mask_sum(double tab[4][256], uint32_t mask)
{
    return tab[0][mask & 0xff] + tab[1][(mask >> 8) & 0xff] + tab[2][(mask >> 16) & 0xff] + tab[3][mask >> 24];
}

/* The sum of the g lowest and g highest set bits' values of mask. */
static double ends_sum(const double *v, uint32_t mask, size_t g)
{
    double sum = 0;
    uint32_t lo = mask, hi = mask;
    for (size_t k = 0; k < g; k++) {
        int l = __builtin_ctz(lo), h = 31 - __builtin_clz(hi);
        sum += v[l] + v[h];
        lo &= lo - 1;
        hi &= ~(1u << h);
    }
    return sum;
}

/* One side of the permutation test: x shifted by -shift against y, the
 * share of splits of the pooled values whose trimmed-mean difference is at
 * least (greater) or at most (!greater) the observed one. */
static double perm_tail(const double *x, size_t nx, const double *y, size_t ny, double shift, size_t gx, size_t gy,
                        int greater, double *vals)
{
    size_t n = nx + ny;
    for (size_t i = 0; i < nx; i++)
        vals[i] = x[i] - shift;
    memcpy(vals + nx, y, ny * sizeof *y);
    qsort(vals, n, sizeof *vals, by_double);
    double tab[4][256];
    memset(tab, 0, sizeof tab);
    double total = 0;
    for (size_t k = 0; k < 4; k++)
        for (unsigned b = 1; b < 256; b++) {
            unsigned low = b & -b;
            size_t i = 8 * k + (size_t)__builtin_ctz(low);
            tab[k][b] = tab[k][b ^ low] + (i < n ? vals[i] : 0);
        }
    for (size_t i = 0; i < n; i++)
        total += vals[i];
    double hx = (double)(nx - 2 * gx), hy = (double)(ny - 2 * gy);
    double obs_x = 0, obs_y = 0;
    for (size_t i = gx; i < nx - gx; i++)
        obs_x += x[i] - shift;
    for (size_t i = gy; i < ny - gy; i++)
        obs_y += y[i];
    /* ties within rounding of the sums, which grows with the largest value */
    double obs = obs_x / hx - obs_y / hy, tol = 1e-12 * fmax(fabs(vals[0]), fabs(vals[n - 1]));
    uint32_t all = n == 32 ? ~0u : (1u << n) - 1;
    double hits = 0, splits = 0;
    /* every nx-subset of the n positions, in Gosper's order */
    for (uint32_t mask = (1u << nx) - 1; mask <= all && mask != 0;) {
        double sx = mask_sum(tab, mask), sy = total - sx;
        double d = (sx - ends_sum(vals, mask, gx)) / hx - (sy - ends_sum(vals, all & ~mask, gy)) / hy;
        hits += greater ? d >= obs - tol : d <= obs + tol;
        splits++;
        uint32_t c = mask & -mask, r = mask + c;
        if (r == 0 || r > all)
            break;
        mask = (((r ^ mask) >> 2) / c) | r;
    }
    return hits / splits;
}

int tl_signif_perm_fits(size_t nx, size_t ny)
{
    if (nx < 1 || ny < 1 || nx + ny > 31)
        return 0;
    double count = 1; /* C(nx + ny, nx) */
    for (size_t i = 1; i <= nx; i++)
        count = count * (double)(ny + i) / (double)i;
    return count < TL_SIGNIF_PERM_MAX + 0.5;
}

int tl_signif_perm_trimmed(const double *x, size_t nx, const double *y, size_t ny, double trim, double shift_up,
                           double shift_down, double *p_greater, double *p_less)
{
    *p_greater = *p_less = NAN;
    if (!(trim >= 0 && trim < 0.5) || !tl_signif_perm_fits(nx, ny) || !is_sorted(x, nx) || !is_sorted(y, ny))
        return -1;
    size_t gx = (size_t)floor(trim * (double)nx), gy = (size_t)floor(trim * (double)ny);
    if (nx - 2 * gx < 1 || ny - 2 * gy < 1 || !isfinite(shift_up) || !isfinite(shift_down))
        return -1;
    for (size_t i = 0; i < nx; i++)
        if (!isfinite(x[i]))
            return -1;
    for (size_t i = 0; i < ny; i++)
        if (!isfinite(y[i]))
            return -1;
    double *vals = malloc((nx + ny) * sizeof *vals);
    if (vals == NULL)
        return -1;
    *p_greater = perm_tail(x, nx, y, ny, shift_up, gx, gy, 1, vals);
    *p_less = perm_tail(x, nx, y, ny, shift_down, gx, gy, 0, vals);
    free(vals);
    return 0;
}
