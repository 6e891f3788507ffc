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

/* The same, streaming, for intervals that come in start order (a profile's
 * GPU events: tl_profile_finish sorts them), with no memory per interval
 * (issue 33: the analysis reads the sorted GPU events in place).
 *
 * tl_ivrun: the union of the intervals added, as its length and the last
 * component, which is what tl_ivset_union would give: its length is
 * tl_ivset_length's, and tl_ivrun_add says where each gap between two
 * components is. The length of the intersection of two such unions A and B
 * is |A| + |B| - |A u B| (three runs). */
typedef struct tl_ivrun {
    int64_t start, end; /* the last component (open: later intervals may extend it) */
    int64_t closed;     /* the length of the components before it */
    int open;           /* a component exists */
} tl_ivrun;

void tl_ivrun_init(tl_ivrun *r);
/* Add [start, end) (end < start counts as [start, start)); start is at or
 * after every start added before. 1 when it opens a component after another
 * (the gap is [*gap_from, start)), else 0. */
int tl_ivrun_add(tl_ivrun *r, int64_t start, int64_t end, int64_t *gap_from);
int64_t tl_ivrun_length(const tl_ivrun *r);

/* tl_sweep_kinds over intervals added in start order (invalid ones -- end <=
 * start, kind out of 0..2 -- are skipped, as there). */
typedef struct tl_kindsweep {
    int64_t last[3], cur;
    int started;
    int64_t out[8];
} tl_kindsweep;

void tl_kindsweep_init(tl_kindsweep *k);
void tl_kindsweep_add(tl_kindsweep *k, int64_t start, int64_t end, int kind);
/* out[mask] as tl_sweep_kinds gives it. */
void tl_kindsweep_finish(tl_kindsweep *k, int64_t out[8]);

#endif
