/*
 * histogram.c - log-bucket histogram (see histogram.h for the layout and its
 * error bound).
 */
#include "histogram.h"

#include <math.h>
#include <stdlib.h>

int tl_hist_add(tl_hist *h, uint64_t v)
{
    unsigned page, slot;
    tl_hist_index(v, &page, &slot);
    uint32_t *p = h->pages[page];
    if (p == NULL) {
        p = calloc(TL_HIST_SUB, sizeof *p);
        if (p == NULL)
            return -1;
        h->pages[page] = p;
    }
    p[slot]++;
    return 0;
}

int tl_hist_merge(tl_hist *dst, const tl_hist *src)
{
    for (unsigned i = 0; i < TL_HIST_PAGES; i++) {
        if (src->pages[i] == NULL)
            continue;
        if (dst->pages[i] == NULL) {
            dst->pages[i] = calloc(TL_HIST_SUB, sizeof(uint32_t));
            if (dst->pages[i] == NULL)
                return -1;
        }
        for (unsigned j = 0; j < TL_HIST_SUB; j++)
            dst->pages[i][j] += src->pages[i][j];
    }
    return 0;
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
    for (unsigned i = 0; i < TL_HIST_PAGES; i++) {
        if (h->pages[i] == NULL)
            continue;
        for (unsigned j = 0; j < TL_HIST_SUB; j++) {
            seen += h->pages[i][j];
            if (seen >= rank) {
                double lo, width;
                bucket_range(i, j, &lo, &width);
                /* Exact buckets (width 1) hold one value: report it as is. */
                return width <= 1 ? lo : lo + width / 2;
            }
        }
    }
    return 0; /* count was larger than what was added */
}

void tl_hist_release(tl_hist *h)
{
    for (unsigned i = 0; i < TL_HIST_PAGES; i++) {
        free(h->pages[i]);
        h->pages[i] = NULL;
    }
}
