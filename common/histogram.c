/*
 * histogram.c - log-bucket histogram (see histogram.h for the layout and its
 * error bound, and why only the buckets in use are held).
 */
#include "histogram.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Make [lo, hi] (buckets, hi < TL_HIST_BUCKETS) part of the range held. The
 * range grows by at least TL_HIST_GROW buckets, and by half of what it holds,
 * toward the side that needed it (durations drift one way: amortized O(1)
 * per bucket). 0, or -1 when out of memory (the histogram is unchanged). */
static int cover(tl_hist *h, unsigned lo, unsigned hi)
{
    unsigned first = h->first, last = h->first + h->n; /* [first, last) */
    if (h->counts != NULL && lo >= first && hi < last)
        return 0;
    unsigned step = h->n / 2 > TL_HIST_GROW ? h->n / 2 : TL_HIST_GROW;
    unsigned nfirst, nlast;
    if (h->counts == NULL) {
        /* a fresh range: aligned, so that values close together share it */
        nfirst = lo / TL_HIST_GROW * TL_HIST_GROW;
        nlast = (hi / TL_HIST_GROW + 1) * TL_HIST_GROW;
    } else {
        nfirst = first;
        nlast = last;
        if (lo < first)
            nfirst = lo > step ? (lo - step) / TL_HIST_GROW * TL_HIST_GROW : 0;
        if (hi >= last)
            nlast = ((hi + step) / TL_HIST_GROW + 1) * TL_HIST_GROW;
    }
    if (nlast > TL_HIST_BUCKETS)
        nlast = TL_HIST_BUCKETS;
    uint32_t *c = calloc(nlast - nfirst, sizeof *c);
    if (c == NULL)
        return -1;
    if (h->counts != NULL)
        memcpy(c + (first - nfirst), h->counts, h->n * sizeof *c);
    free(h->counts);
    h->counts = c;
    h->first = nfirst;
    h->n = nlast - nfirst;
    return 0;
}

int tl_hist_add(tl_hist *h, uint64_t v)
{
    unsigned b = tl_hist_bucket(v);
    if (cover(h, b, b) != 0)
        return -1;
    h->counts[b - h->first]++;
    return 0;
}

int tl_hist_add_bucket(tl_hist *h, unsigned b, uint32_t count)
{
    if (b >= TL_HIST_BUCKETS || cover(h, b, b) != 0)
        return -1;
    uint32_t *c = &h->counts[b - h->first];
    *c = *c > UINT32_MAX - count ? UINT32_MAX : *c + count;
    return 0;
}

int tl_hist_merge(tl_hist *dst, const tl_hist *src)
{
    if (src->counts == NULL)
        return 0;
    /* only the buckets src uses (its range may have room it never filled) */
    unsigned lo = 0, hi = src->n;
    while (lo < hi && src->counts[lo] == 0)
        lo++;
    while (hi > lo && src->counts[hi - 1] == 0)
        hi--;
    if (lo == hi)
        return 0;
    if (cover(dst, src->first + lo, src->first + hi - 1) != 0)
        return -1;
    uint32_t *d = dst->counts + (src->first + lo - dst->first);
    for (unsigned i = lo; i < hi; i++)
        d[i - lo] += src->counts[i];
    return 0;
}

void tl_hist_trim(tl_hist *h)
{
    if (h->counts == NULL)
        return;
    unsigned lo = 0, hi = h->n;
    while (lo < hi && h->counts[lo] == 0)
        lo++;
    while (hi > lo && h->counts[hi - 1] == 0)
        hi--;
    if (lo == 0 && hi == h->n)
        return;
    if (lo == hi) { /* nothing counted: hold nothing */
        tl_hist_release(h);
        return;
    }
    /* a new block, not realloc: the range moves down by lo, and a fresh small
     * block fits the holes that freed ones leave (realloc in place keeps a
     * block's slack in its chunk) */
    uint32_t *c = malloc((hi - lo) * sizeof *c);
    if (c == NULL)
        return; /* keep the wider range: nothing is lost */
    memcpy(c, h->counts + lo, (hi - lo) * sizeof *c);
    free(h->counts);
    h->counts = c;
    h->first += lo;
    h->n = hi - lo;
}

/* The lowest value of a bucket and its width. */
static void bucket_range(unsigned page, unsigned slot, double *lo, double *width)
{
    if (page == 0) {
        *lo = slot;
        *width = 1;
        return;
    }
    unsigned e = page + TL_HIST_SUB_BITS - 1;
    double unit = ldexp(1.0, (int)(e - TL_HIST_SUB_BITS));
    *lo = ldexp(1.0, (int)e) + slot * unit;
    *width = unit;
}

double tl_hist_quantile(const tl_hist *h, uint64_t count, double q)
{
    if (count == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    uint64_t rank = (uint64_t)ceil(q * (double)count);
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < h->n; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            unsigned b = h->first + i;
            double lo, width;
            bucket_range(b / TL_HIST_SUB, b % TL_HIST_SUB, &lo, &width);
            /* Exact buckets (width 1) hold one value: report it as is. */
            return width <= 1 ? lo : lo + width / 2;
        }
    }
    return 0; /* count was larger than what was added */
}

void tl_hist_release(tl_hist *h)
{
    free(h->counts);
    h->counts = NULL;
    h->first = h->n = 0;
}
