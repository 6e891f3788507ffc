/*
 * histogram.h - a fixed-memory log-bucket histogram of non-negative integers.
 *
 * The layout is HDR-histogram's: values below 64 get a bucket each; above,
 * every power of two [2^e, 2^(e+1)) is cut into 64 equal buckets. A bucket's
 * width is at most 1/64 of its lower bound, so reporting its midpoint is off
 * by at most 0.78 % of the true value: the "<= 1 % relative error" of the
 * median and p95. Bucket pages (64 counters each, one per power of two) are
 * allocated on first use, so a histogram of durations that span a few orders
 * of magnitude costs a few KB at most, whatever the number of values.
 */
#ifndef TALLY_HISTOGRAM_H
#define TALLY_HISTOGRAM_H

#include <stdint.h>

#define TL_HIST_SUB_BITS 6
#define TL_HIST_SUB (1u << TL_HIST_SUB_BITS)
#define TL_HIST_PAGES (64 - TL_HIST_SUB_BITS + 1)

typedef struct tl_hist {
    uint32_t *pages[TL_HIST_PAGES];
} tl_hist;

static inline void tl_hist_index(uint64_t v, unsigned *page, unsigned *slot)
{
    if (v < TL_HIST_SUB) {
        *page = 0;
        *slot = (unsigned)v;
        return;
    }
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* e >= TL_HIST_SUB_BITS */
    *page = e - TL_HIST_SUB_BITS + 1;
    *slot = (unsigned)(v >> (e - TL_HIST_SUB_BITS)) & (TL_HIST_SUB - 1);
}

/* Count one value. Returns 0, or -1 when a page could not be allocated (the
 * value is then not in the histogram; the caller's exact statistics still are). */
int tl_hist_add(tl_hist *h, uint64_t v);
/* Add every count of src into dst. 0 or -1 (allocation). */
int tl_hist_merge(tl_hist *dst, const tl_hist *src);
/* The value at quantile q (0..1) by nearest rank, as its bucket's midpoint;
 * count is the number of values added. 0 when empty. */
double tl_hist_quantile(const tl_hist *h, uint64_t count, double q);
void tl_hist_release(tl_hist *h);

#endif
