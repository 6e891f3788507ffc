/*
 * collbw_text.h - the collective bandwidth table (analyze/collbw.h) as text:
 * the cells every output prints (the HTML table under Waits, the Markdown
 * section) and the sentence that says how the sizes and times were found.
 */
#ifndef TALLY_RENDER_COLLBW_TEXT_H
#define TALLY_RENDER_COLLBW_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "aggregate.h"

/* A size bucket: "< 64 KiB", "64 KiB – 1 MiB", ..., "≥ 256 MiB". */
const char *tl_collbw_bucket_text(char *buf, size_t len, int bucket);
/* Bytes per second as NCCL's tests print them: "12.34 GB/s" (1e9 bytes/s); NaN prints "–". */
const char *tl_collbw_gbps(char *buf, size_t len, double bytes_per_s);

/* One row of the table, formatted: the kind, the size bucket, the
 * collectives, bytes and time of every rank added up, algorithm and bus
 * bandwidth over them, and the lowest / median / highest of the ranks' bus
 * bandwidths (with the ranks). */
typedef struct tl_collbw_text {
    char kind[24], size[32], count[24], bytes[32], time[32], algbw[24], busbw[24], lo[48], med[24], hi[48];
} tl_collbw_text;
void tl_collbw_row_text(const tl_aggregate *a, const tl_collbw_row *r, tl_collbw_text *t);

/* How the sizes and times were found, one paragraph of plain text without a
 * newline ("64 of 64 collectives sized, 64 by their nccl:* annotation; ..."). */
void tl_collbw_sentence(FILE *out, const tl_aggregate *a);

/* The Markdown section (## Collective bandwidth); nothing without sized collectives. */
void tl_collbw_markdown(FILE *out, const tl_aggregate *a);

#endif
