/*
 * histogram.h - a fixed-memory log-bucket histogram of non-negative integers.
 *
 * The layout is HDR-histogram's: values below 64 get a bucket each; above,
 * every power of two [2^e, 2^(e+1)) is cut into 64 equal buckets. A bucket's
 * width is at most 1/64 of its lower bound, so reporting its midpoint is off
 * by at most 0.78 % of the true value: the "<= 1 % relative error" of the
 * median and p95. Buckets are numbered page * TL_HIST_SUB + slot (page 0: the
 * values below 64; page p >= 1: [2^(p+5), 2^(p+6))), TL_HIST_BUCKETS of them.
 *
 * Only the range of buckets in use is held, as one array grown on demand (in
 * steps of TL_HIST_GROW buckets at least): a name called a few times at about
 * the same duration costs 64 bytes, a name whose durations span 1 us to 1 s
 * about 5 KB, whatever the number of values. A session keeps one per name and
 * per kernel per rank, so what an empty or narrow histogram costs is what
 * every extra rank costs (issue 33: the table of 59 page pointers every
 * histogram held inline was 472 bytes of every name of every rank).
 */
#ifndef TALLY_HISTOGRAM_H
#define TALLY_HISTOGRAM_H

#include <stdint.h>

#define TL_HIST_SUB_BITS 6
#define TL_HIST_SUB (1u << TL_HIST_SUB_BITS)
#define TL_HIST_PAGES (64 - TL_HIST_SUB_BITS + 1)
#define TL_HIST_BUCKETS (TL_HIST_PAGES * TL_HIST_SUB)
#define TL_HIST_GROW 16u

typedef struct tl_hist {
    uint32_t *counts;  /* counts[i]: bucket first + i; NULL: nothing added */
    uint32_t first, n; /* the buckets held: [first, first + n) */
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

/* A value's bucket: page * TL_HIST_SUB + slot. */
static inline unsigned tl_hist_bucket(uint64_t v)
{
    unsigned page, slot;
    tl_hist_index(v, &page, &slot);
    return page * TL_HIST_SUB + slot;
}

/* The count of bucket b (0 outside the range held). */
static inline uint32_t tl_hist_count(const tl_hist *h, unsigned b)
{
    return b >= h->first && b - h->first < h->n ? h->counts[b - h->first] : 0;
}

/* Count one value. Returns 0, or -1 when a page could not be allocated (the
 * value is then not in the histogram; the caller's exact statistics still are). */
int tl_hist_add(tl_hist *h, uint64_t v);
/* Add count to bucket b (< TL_HIST_BUCKETS; a count saturates at UINT32_MAX):
 * how a histogram written out bucket by bucket is read back. 0 or -1 (allocation). */
int tl_hist_add_bucket(tl_hist *h, unsigned b, uint32_t count);
/* Add every count of src into dst. 0 or -1 (allocation). */
int tl_hist_merge(tl_hist *dst, const tl_hist *src);
/* The value at quantile q (0..1) by nearest rank, as its bucket's midpoint;
 * count is the number of values added. 0 when empty. */
double tl_hist_quantile(const tl_hist *h, uint64_t count, double q);
/* Hold only the buckets from the first to the last that count a value (none
 * when empty): what a finished histogram that is only read any more needs.
 * A growing range keeps slack toward where values went (cover, above); a
 * session keeps one histogram per name and kernel per rank, so the slack was
 * about a third of each rank's histograms (issue 33). Counts, quantiles and
 * merges are unchanged. Out of memory: left as it was. */
void tl_hist_trim(tl_hist *h);
void tl_hist_release(tl_hist *h);

#endif
