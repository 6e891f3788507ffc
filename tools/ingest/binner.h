/*
 * binner.h - busy time at a fixed number of bins over a range that is not
 * known in advance (a trace streams by in no particular order).
 *
 * The bins cover [origin, origin + width * TL_BINNER_BINS). When an event
 * falls outside, the width doubles and pairs of bins merge, growing the range
 * to the right or to the left, so any range fits in TL_BINNER_BINS bins at a
 * resolution of at least range / TL_BINNER_BINS * 2. Each bin holds the ns of
 * event time inside it (nested events count once each; readers cap at the
 * bin width).
 */
#ifndef TALLY_BINNER_H
#define TALLY_BINNER_H

#include <stdint.h>

#define TL_BINNER_BINS 1024

typedef struct tl_binner {
    int used;
    int64_t origin, width; /* ns */
    double busy[TL_BINNER_BINS];
} tl_binner;

/* Add the interval [start, end) (ns). */
void tl_binner_add(tl_binner *b, int64_t start, int64_t end);
/* Busy fraction of [lo, hi) from the bins (0..1, capped), for rebinning. */
double tl_binner_fraction(const tl_binner *b, int64_t lo, int64_t hi);

#endif
