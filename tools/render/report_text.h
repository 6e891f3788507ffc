/*
 * report_text.h - the sentences and labels that the HTML page and the
 * Markdown summary share, so both say the same thing with the same numbers:
 * the headline, a recommendation's finding without its advice, the names of
 * across-rank metrics and of rank sources.
 *
 * Sentences are written to a FILE*; the fixed text is plain ASCII words and
 * numbers, and every name from an input goes through the caller's `name`
 * function, which escapes it for its context (and may wrap it in <code>).
 */
#ifndef TALLY_RENDER_REPORT_TEXT_H
#define TALLY_RENDER_REPORT_TEXT_H

#include <stdio.h>

#include "aggregate.h"

typedef void (*tl_text_name_fn)(FILE *f, const char *name);

/* The bottleneck in one sentence, with its numbers. In order of priority: a
 * straggler rank, the GPU's idle and communication time when a GPU rule
 * fired, the most severe other recommendation, the largest section's share
 * of the time, the step time. */
void tl_text_headline(FILE *f, const tl_aggregate *a, tl_text_name_fn name, tl_text_name_fn text);
/* Nothing wrong (or only information): the headline is shown calmly, not as an alarm. */
int tl_text_headline_calm(const tl_aggregate *a);
/* Who waits for whom in one sentence (analyze/waits.h) into a malloc'd
 * string, or NULL when no collectives were matched (one rank, none). */
char *tl_text_waits(const tl_aggregate *a);

/* A recommendation's finding: its message without the rule's advice
 * (malloc'd; NULL when out of memory), and the advice (static). */
char *tl_text_finding(const tl_recommendation *r);
const char *tl_text_advice(const tl_recommendation *r);

/* "content", "name", "order" or "unknown". */
const char *tl_text_rank_source(int source);

/* The rank result of a rank number, or NULL. */
const tl_rank_result *tl_text_rank(const tl_aggregate *a, int rank);

/* A row's share of its ranks' time in percent (their spans, else the sum of
 * their sections), over the ranks that have it; NaN when unknown. */
double tl_text_share(const tl_aggregate *a, const tl_name_row *row);

#endif
