/*
 * intervals.h - the interval algebra behind the GPU breakdowns: the union of
 * a set of [start, end) intervals, its length, the length of the
 * intersection of two unions, and a sweep that splits time by which kinds of
 * intervals are active (compute only, compute and communication, ...).
 */
#ifndef TALLY_INTERVALS_H
#define TALLY_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_interval {
    int64_t start, end; /* ns, start <= end */
} tl_interval;

typedef struct tl_ivset {
    tl_interval *v;
    size_t n, cap;
} tl_ivset;

void tl_ivset_init(tl_ivset *s);
void tl_ivset_release(tl_ivset *s);
int tl_ivset_add(tl_ivset *s, int64_t start, int64_t end);
/* Sort and merge in place: afterwards the intervals are disjoint and ordered.
 * Touching intervals ([a,b) and [b,c)) are merged. */
void tl_ivset_union(tl_ivset *s);
/* Total length (call after tl_ivset_union). */
int64_t tl_ivset_length(const tl_ivset *s);
/* Length of the intersection of two unions (both after tl_ivset_union). */
int64_t tl_ivset_intersection(const tl_ivset *a, const tl_ivset *b);

/* A sweep over kinds: each interval has a kind 0..7 (a bit index); the result
 * is, for every non-empty combination mask of up to 3 kinds, the time during
 * which exactly that combination was active. out[mask] for mask in 1..7. */
typedef struct tl_kinded {
    int64_t start, end;
    int kind; /* 0, 1 or 2 */
} tl_kinded;

int tl_sweep_kinds(const tl_kinded *v, size_t n, int64_t out[8]);

#endif
