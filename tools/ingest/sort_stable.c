/*
 * sort_stable.c - a stable sort that is linear on input already in order
 * (see sort_stable.h).
 *
 * A natural merge sort: one pass finds the runs in order, then neighbouring
 * runs are merged pairwise until one is left. A merge copies only the part of
 * the left run that moves (what sorts before the right run's first element
 * stays where it is) into a temporary and merges it back, so two runs already
 * in order cost one comparison. Ties take the left run first: stable.
 */
#include "sort_stable.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cmp_fn)(const void *, const void *);

typedef struct scratch {
    char *p;
    size_t cap; /* bytes */
} scratch;

/* Merge base[lo, mid) and base[mid, hi), both in order. Inlined per element
 * size, so the copies are a few moves rather than calls. 0, or -1 out of
 * memory (base untouched by this merge then). */
static inline __attribute__((always_inline)) int merge(char *base, size_t lo, size_t mid, size_t hi, size_t size,
                                                       scratch *t, cmp_fn cmp)
{
    char *b = base + mid * size;
    if (cmp(b - size, b) <= 0)
        return 0; /* already in order */
    /* the first element of the left run that sorts after b[0]: those before it stay */
    size_t l = lo, u = mid - 1; /* base[mid - 1] sorts after b[0] */
    while (l < u) {
        size_t m = l + (u - l) / 2;
        if (cmp(base + m * size, b) <= 0)
            l = m + 1;
        else
            u = m;
    }
    size_t na = mid - l;
    if (na * size > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < na * size)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (p == NULL)
            return -1;
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p, base + l * size, na * size);
    char *out = base + l * size, *a = t->p, *a_end = t->p + na * size, *b_end = base + hi * size;
    while (a < a_end && b < b_end) {
        if (cmp(a, b) <= 0) {
            memcpy(out, a, size);
            a += size;
        } else {
            memcpy(out, b, size);
            b += size;
        }
        out += size;
    }
    if (a < a_end) /* what is left of b is in place already */
        memcpy(out, a, (size_t)(a_end - a));
    return 0;
}

/* Merge the k runs pairwise until one is left. 0, or -1 out of memory: then
 * base is a permutation of the input in which equal elements still keep their
 * input order (each merge is stable, the runs are slices of the input), so a
 * stable sort of it is the stable sort of the input. */
static inline __attribute__((always_inline)) int merge_all(char *base, size_t *runs, size_t k, size_t size, scratch *t,
                                                           cmp_fn cmp)
{
    while (k > 1) {
        size_t j, w = 0;
        for (j = 0; j + 2 <= k; j += 2) {
            if (merge(base, runs[j], runs[j + 1], runs[j + 2], size, t, cmp) != 0)
                return -1;
            runs[++w] = runs[j + 2];
        }
        if (j < k) /* an odd run out: it waits for the next pass */
            runs[++w] = runs[k];
        k = w;
    }
    return 0;
}

void tl_sort_stable(void *base, size_t n, size_t size, cmp_fn cmp)
{
    if (n < 2 || size == 0)
        return;
    char *v = base;
    size_t max_runs = n / TL_SORT_RUNS_MAX_FRACTION + 1, k = 0;
    size_t *runs = NULL;
    scratch t = { NULL, 0 };
    int rc;
    /* the runs: runs[0] = 0 < runs[1] < ... < runs[k] = n */
    for (size_t i = 1; i < n; i++) {
        if (cmp(v + (i - 1) * size, v + i * size) <= 0)
            continue;
        /* runs[0], up to max_runs starts, and runs[k] = n after them */
        if (runs == NULL && (runs = malloc((max_runs + 2) * sizeof *runs)) == NULL)
            goto fallback;
        if (k == max_runs)
            goto fallback; /* far from sorted: a plain merge sort does as well */
        runs[++k] = i;
    }
    if (k == 0)
        return; /* in order already */
    runs[0] = 0;
    runs[++k] = n;
    switch (size) { /* the common sizes inlined: element copies of a known size */
    case 8:
        rc = merge_all(v, runs, k, 8, &t, cmp);
        break;
    case 16:
        rc = merge_all(v, runs, k, 16, &t, cmp);
        break;
    case 24:
        rc = merge_all(v, runs, k, 24, &t, cmp);
        break;
    case 32:
        rc = merge_all(v, runs, k, 32, &t, cmp);
        break;
    case 40:
        rc = merge_all(v, runs, k, 40, &t, cmp);
        break;
    default:
        rc = merge_all(v, runs, k, size, &t, cmp);
        break;
    }
    free(t.p);
    free(runs);
    if (rc == 0)
        return;
    qsort(base, n, size, cmp);
    return;
fallback:
    free(runs);
    qsort(base, n, size, cmp);
}
