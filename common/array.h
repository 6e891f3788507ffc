/*
 * array.h - how a growing array grows, once: TL_ARRAY_GROW(v, n, cap) makes
 * room for element n of the array v (capacity cap), doubling the capacity,
 * so appending n elements costs O(n). The collector and the tools share it.
 *
 *     if (TL_ARRAY_GROW(run->unreadable, run->nunreadable, run->unreadable_cap) != 0)
 *         return -1;                                  (v and cap untouched)
 *     run->unreadable[run->nunreadable++] = x;
 */
#ifndef TALLY_COMMON_ARRAY_H
#define TALLY_COMMON_ARRAY_H

#include <stddef.h>

/* The capacity of an array's first block (TL_ARRAY_GROW). */
#define TL_ARRAY_FIRST 8

/* Room for element n of the array whose pointer is at arrp (elements of elem
 * bytes, *cap of them allocated): nothing when n < *cap, else the capacity
 * doubles (first when it was 0). 0, or -1 when out of memory or the size
 * would overflow (then the array and *cap are as they were). */
int tl_array_grow_slow(void *arrp, size_t n, size_t *cap, size_t elem, size_t first);
/* The check is inline, so an append with room costs a comparison, not a
 * call (ingest appends per event). */
static inline int tl_array_grow(void *arrp, size_t n, size_t *cap, size_t elem, size_t first)
{
    return n < *cap ? 0 : tl_array_grow_slow(arrp, n, cap, elem, first);
}

#define TL_ARRAY_GROW(v, n, cap) tl_array_grow(&(v), (n), &(cap), sizeof *(v), TL_ARRAY_FIRST)

#endif
