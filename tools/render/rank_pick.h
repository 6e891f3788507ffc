/*
 * rank_pick.h - which ranks a per-rank table or chart lists when a job has
 * more than it may show. Every output picks the same way, so the console,
 * the Markdown and the HTML name the same ranks: the stragglers (and the
 * waits' last arriver), the ranks with the shortest and the longest mean
 * step, the ranks at the 10th, 25th, 50th, 75th and 90th percentile of the
 * mean step, then an even, deterministic sample of the rest. Up to max
 * ranks, every rank is listed and nothing is said.
 */
#ifndef TALLY_RANK_PICK_H
#define TALLY_RANK_PICK_H

#include <stddef.h>

#include "aggregate.h"

/* Per-rank tables of `tally summary` and the Markdown list every rank up to
 * this many; past it, TL_RANKS_PICKED of them (tl_rank_pick). */
#define TL_RANKS_LISTED 64
#define TL_RANKS_PICKED 32

/* Why a rank is listed: flags, and the percentile in bits 4-6 (1..5: p10,
 * p25, median, p75, p90). 0: left out. */
enum {
    TL_PICK_ALL = 1 << 0,       /* every rank is listed */
    TL_PICK_STRAGGLER = 1 << 1, /* a straggler or the ranks' last arriver in collectives */
    TL_PICK_LEAST = 1 << 2,     /* the shortest mean step */
    TL_PICK_MOST = 1 << 3,      /* the longest mean step */
    TL_PICK_SAMPLE = 1 << 7,    /* an even sample of the rest */
};
#define TL_PICK_QUANTILE(w) (((w) >> 4) & 7)

/* Per rank (an index of a->ranks) why it is listed, 0 when it is left out:
 * every rank when there are at most max (TL_PICK_ALL), else at most max of
 * them. *n: how many are listed. malloc'd; NULL when out of memory. */
unsigned char *tl_rank_pick(const tl_aggregate *a, size_t max, size_t *n);

/* A short tag of why a picked rank is there: "min", "max", "p10", "p25",
 * "median", "p75", "p90", or "" (a straggler is marked by its table, a
 * sample needs no tag). */
const char *tl_rank_pick_tag(unsigned char why);

/* The sentence after a cut table: "32 of 10000 ranks listed: the
 * stragglers, the shortest and longest mean step, the 10th-90th percentiles
 * and an even sample; 9968 left out." Nothing when none was left out. */
void tl_rank_pick_note(char *buf, size_t len, size_t listed, size_t total);

#endif
