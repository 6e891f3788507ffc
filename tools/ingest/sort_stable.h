/*
 * sort_stable.h - a stable sort that is linear on input already in order.
 *
 * Traces list most things nearly in the order the analysis wants them (each
 * thread's calls by time, correlation ids counting up, GPU events by start),
 * yet a general sort pays n log n comparisons through a function pointer for
 * them. tl_sort_stable() finds the runs already in order and merges only
 * those: n - 1 comparisons when the input is sorted, n log r for r runs.
 *
 * Its result is that of any stable sort by the same comparator (equal
 * elements keep their input order), so it is byte for byte what glibc's
 * qsort (a merge sort) gave: replacing one by the other changes no output.
 */
#ifndef TALLY_INGEST_SORT_STABLE_H
#define TALLY_INGEST_SORT_STABLE_H

#include <stddef.h>

/* Sort the n elements of `size` bytes at base by cmp (qsort's contract),
 * stably. Cost: O(n) when base is in order, O(n log r) with r runs in order;
 * input with more runs than n / TL_SORT_RUNS_MAX_FRACTION goes to qsort,
 * which is a stable merge sort in glibc. Allocates a temporary of up to
 * n * size bytes; without memory it falls back to qsort too. */
void tl_sort_stable(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Past n / this many runs the input is not "nearly sorted": qsort takes it. */
#define TL_SORT_RUNS_MAX_FRACTION 8

#endif
