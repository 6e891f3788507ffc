/*
 * binner.c - busy time in self-widening bins (see binner.h).
 */
#include "binner.h"

#include <string.h>

#define N TL_BINNER_BINS

static int64_t limit(const tl_binner *b)
{
    return b->origin + b->width * N;
}

/* Double the width keeping the origin: the range grows to the right. */
static void grow_right(tl_binner *b)
{
    for (int i = 0; i < N / 2; i++)
        b->busy[i] = b->busy[2 * i] + b->busy[2 * i + 1];
    memset(b->busy + N / 2, 0, (N / 2) * sizeof b->busy[0]);
    b->width *= 2;
}

/* Double the width ending at the same limit: the range grows to the left. */
static void grow_left(tl_binner *b)
{
    double merged[N / 2];
    for (int i = 0; i < N / 2; i++)
        merged[i] = b->busy[2 * i] + b->busy[2 * i + 1];
    memset(b->busy, 0, (N / 2) * sizeof b->busy[0]);
    memcpy(b->busy + N / 2, merged, sizeof merged);
    b->origin -= b->width * N;
    b->width *= 2;
}

void tl_binner_add(tl_binner *b, int64_t start, int64_t end)
{
    if (end < start)
        end = start;
    if (!b->used) {
        b->used = 1;
        b->width = 1000; /* 1 µs to start with */
        b->origin = start - start % b->width - (start < 0 ? b->width : 0);
    }
    /* The width only grows while the range is below ~2^62 ns: every real
     * trace fits long before. */
    while (start < b->origin && b->width < (INT64_C(1) << 50))
        grow_left(b);
    while (end > limit(b) && b->width < (INT64_C(1) << 50))
        grow_right(b);
    if (start < b->origin)
        start = b->origin;
    if (end > limit(b))
        end = limit(b);
    int64_t first = (start - b->origin) / b->width, last = (end - 1 - b->origin) / b->width;
    if (end <= start) /* an instant: nothing busy */
        return;
    for (int64_t i = first; i <= last && i < N; i++) {
        int64_t lo = b->origin + i * b->width, hi = lo + b->width;
        int64_t s = start > lo ? start : lo, e = end < hi ? end : hi;
        if (e > s)
            b->busy[i] += (double)(e - s);
    }
}

double tl_binner_fraction(const tl_binner *b, int64_t lo, int64_t hi)
{
    if (!b->used || hi <= lo)
        return 0;
    double busy = 0;
    int64_t first = (lo - b->origin) / b->width, last = (hi - 1 - b->origin) / b->width;
    if (lo < b->origin)
        first = 0;
    for (int64_t i = first < 0 ? 0 : first; i <= last && i < N; i++) {
        int64_t blo = b->origin + i * b->width, bhi = blo + b->width;
        int64_t s = lo > blo ? lo : blo, e = hi < bhi ? hi : bhi;
        if (e <= s)
            continue;
        /* The bin's busy time spread evenly over it, capped at its width. */
        double bin = b->busy[i] > (double)b->width ? (double)b->width : b->busy[i];
        busy += bin * (double)(e - s) / (double)b->width;
    }
    double f = busy / (double)(hi - lo);
    return f > 1 ? 1 : f;
}
