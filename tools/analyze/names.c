/*
 * names.c - per-name statistics across ranks (see names.h).
 */
#define _GNU_SOURCE
#include "names.h"
#include "array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tl_group_of(int cc)
{
    switch (cc) {
    case TL_CC_SECTION:
    case TL_CC_USER_ANNOTATION:
        return TL_GROUP_SECTIONS;
    case TL_CC_ITERATION:
        return TL_GROUP_ITERATIONS;
    case TL_CC_CPU_OP:
        return TL_GROUP_OPS;
    case TL_CC_KERNEL:
    case TL_CC_MEMCPY:
    case TL_CC_MEMSET:
    case TL_CC_SYNC:
        return TL_GROUP_KERNELS;
    case TL_CC_RUNTIME:
    case TL_CC_DRIVER:
        return TL_GROUP_RUNTIME;
    case TL_CC_PYTHON:
        return TL_GROUP_PYTHON;
    case TL_CC_GPU_ANNOTATION:
        return TL_GROUP_GPU_ANNOTATIONS;
    default:
        return TL_GROUP_OTHER;
    }
}

static uint64_t row_hash(int group, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)group;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

static int rehash(tl_name_table *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (size_t r = 0; r < t->n; r++) {
        size_t i = row_hash(t->rows[r].group, t->rows[r].name) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = (uint32_t)r + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

static tl_name_row *row_for(tl_name_table *t, int group, const char *name)
{
    if ((t->n + 1) * 2 > t->nslots && rehash(t) != 0)
        return NULL;
    size_t i = row_hash(group, name) & (t->nslots - 1);
    while (t->slots[i]) {
        tl_name_row *r = &t->rows[t->slots[i] - 1];
        if (r->group == group && strcmp(r->name, name) == 0)
            return r;
        i = (i + 1) & (t->nslots - 1);
    }
    if (tl_array_grow(&t->rows, t->n, &t->cap, sizeof *t->rows, 256) != 0)
        return NULL;
    tl_name_row *r = &t->rows[t->n];
    memset(r, 0, sizeof *r);
    r->group = group;
    r->name = strdup(name);
    r->exact = 1;
    r->rank_total = calloc((size_t)t->nranks, sizeof *r->rank_total);
    r->rank_count = calloc((size_t)t->nranks, sizeof *r->rank_count);
    r->rank_self = malloc(((size_t)t->nranks + 1) * sizeof *r->rank_self);
    if (r->name == NULL || r->rank_total == NULL || r->rank_count == NULL || r->rank_self == NULL) {
        free(r->name);
        free(r->rank_total);
        free(r->rank_count);
        free(r->rank_self);
        return NULL;
    }
    for (int k = 0; k < t->nranks; k++)
        r->rank_self[k] = -1;
    r->self_total = -1;
    t->slots[i] = (uint32_t)++t->n;
    return r;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Only tl_name_table_add() needs it: static, not part of names.h. */
static int name_table_rank_index(const tl_name_table *t, int rank)
{
    int *hit = bsearch(&rank, t->ranks, (size_t)t->nranks, sizeof *t->ranks, cmp_int);
    return hit ? (int)(hit - t->ranks) : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double tl_median_sort(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void tl_spread_of(tl_spread *out, const double *v, const int *rank, size_t n, double *scratch)
{
    memset(out, 0, sizeof *out);
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        if (k == 0 || v[i] < out->min) {
            out->min = v[i];
            out->min_rank = rank[i];
        }
        if (k == 0 || v[i] > out->max) {
            out->max = v[i];
            out->max_rank = rank[i];
        }
        scratch[k++] = v[i];
        sum += v[i];
    }
    out->n = (int)k;
    if (k == 0)
        return;
    out->mean = sum / (double)k;
    double ss = 0;
    for (size_t i = 0; i < k; i++)
        ss += (scratch[i] - out->mean) * (scratch[i] - out->mean);
    out->std = k > 1 ? sqrt(ss / (double)(k - 1)) : 0;
    out->median = tl_median_sort(scratch, k);
    out->imbalance = out->mean > 0 ? out->max / out->mean : 1.0;
}

/* The across-rank columns of a row, over the ranks that have it. */
static void across_ranks(tl_name_table *t, tl_name_row *r, double *scratch)
{
    double *v = scratch + t->nranks + 1; /* the values, NaN where a rank lacks the name */
    for (int i = 0; i < t->nranks; i++)
        v[i] = r->rank_count[i] > 0 ? r->rank_total[i] : NAN;
    tl_spread sp;
    tl_spread_of(&sp, v, t->ranks, (size_t)t->nranks, scratch);
    r->nranks_with = sp.n;
    if (sp.n == 0) {
        r->rank_min = INFINITY; /* as before: no rank has it */
        r->rank_max = -INFINITY;
        return;
    }
    r->rank_min = sp.min;
    r->rank_max = sp.max;
    r->rank_of_min = sp.min_rank;
    r->rank_of_max = sp.max_rank;
    r->rank_mean = sp.mean;
    r->rank_median = sp.median;
    r->rank_std = sp.std;
    r->imbalance = sp.imbalance;
}

int tl_name_table_begin(tl_name_table *t, const int *ranks, int nranks)
{
    memset(t, 0, sizeof *t);
    t->ranks = malloc(((size_t)nranks + 1) * sizeof *t->ranks);
    if (t->ranks == NULL)
        return -1;
    /* sorted, duplicates dropped: O(R log R) (a pairwise check was O(R^2)) */
    if (nranks > 0)
        memcpy(t->ranks, ranks, (size_t)nranks * sizeof *t->ranks);
    qsort(t->ranks, (size_t)nranks, sizeof *t->ranks, cmp_int);
    for (int i = 0; i < nranks; i++)
        if (t->nranks == 0 || t->ranks[t->nranks - 1] != t->ranks[i])
            t->ranks[t->nranks++] = t->ranks[i];
    return 0;
}

int tl_name_table_add(tl_name_table *t, int rank, int group, const char *name, const tl_dur_stat *d, int exact)
{
    return tl_name_table_add_nested(t, rank, group, name, d, exact, -1, -1);
}

int tl_name_table_add_nested(tl_name_table *t, int rank, int group, const char *name, const tl_dur_stat *d, int exact,
                             int64_t incl_ns, int64_t self_ns)
{
    int ri = name_table_rank_index(t, rank);
    if (ri < 0)
        return -1;
    tl_name_row *r = row_for(t, group, name);
    if (r == NULL)
        return -1;
    /* No samples across ranks: what reads a row's statistics (its median and
     * p95) reads the histogram, and merging each rank's samples into one
     * reservoir (copies, draws, a malloc per merge) was 3.8 % of a 512-rank
     * report's CPU for numbers nothing showed. */
    tl_dur_stat_merge(&r->all, d, 0);
    if (!exact)
        r->exact = 0;
    /* A zero inclusive time for durations that add up to more is a session
     * built without nesting (zeroed fields): unknown, like -1. */
    if (incl_ns <= 0 && d->total > 0)
        incl_ns = self_ns = -1;
    /* The inclusive time, where the input nests: recursion counted once. */
    r->rank_total[ri] += incl_ns >= 0 ? (double)incl_ns : (double)d->total;
    r->rank_count[ri] += d->count;
    if (self_ns >= 0) {
        r->rank_self[ri] = (r->rank_self[ri] < 0 ? 0 : r->rank_self[ri]) + (double)self_ns;
        r->self_total = (r->self_total < 0 ? 0 : r->self_total) + (double)self_ns;
    }
    r->incl_total += incl_ns >= 0 ? (double)incl_ns : (double)d->total;
    return 0;
}

int tl_name_table_end(tl_name_table *t)
{
    double *scratch = malloc(2 * ((size_t)t->nranks + 1) * sizeof *scratch);
    if (scratch == NULL)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        across_ranks(t, &t->rows[i], scratch);
    free(scratch);
    return 0;
}

void tl_name_table_release(tl_name_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->rows[i].name);
        free(t->rows[i].rank_total);
        free(t->rows[i].rank_count);
        free(t->rows[i].rank_self);
        tl_dur_stat_release(&t->rows[i].all);
    }
    free(t->rows);
    free(t->slots);
    free(t->ranks);
    memset(t, 0, sizeof *t);
}

static int by_total_desc(const void *a, const void *b, void *ctx)
{
    const tl_name_table *t = ctx;
    const tl_name_row *x = &t->rows[*(const size_t *)a];
    const tl_name_row *y = &t->rows[*(const size_t *)b];
    /* inclusive time: a name nested in itself is not counted twice */
    if (x->incl_total != y->incl_total)
        return x->incl_total < y->incl_total ? 1 : -1;
    return strcmp(x->name, y->name);
}

size_t *tl_name_table_top(const tl_name_table *t, int group, size_t *count)
{
    size_t *idx = malloc((t->n ? t->n : 1) * sizeof *idx);
    *count = 0;
    if (idx == NULL)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].group == group)
            idx[(*count)++] = i;
    qsort_r(idx, *count, sizeof *idx, by_total_desc, (void *)t);
    return idx;
}
