/*
 * text_numbers.h - the analysis's sentences made readable: each typed number
 * analyze put in a finding, its evidence, a skipped rule's reason, a
 * straggler's summary or the headline (analyze/numbers.h) is written by the
 * one formatter of every output (common/units.h), the same in the console,
 * the Markdown, the HTML page, the JSON and the merged trace.
 */
#ifndef TALLY_RENDER_TEXT_NUMBERS_H
#define TALLY_RENDER_TEXT_NUMBERS_H

#include <stddef.h>
#include <stdio.h>

#include "numbers.h"

/* One number's text: a duration "42.0 µs", a size "1.5 GiB", a percentage
 * "45.3%" (whole: "30%"); "–" when unknown (NaN). Returns buf. */
const char *tl_text_number(char *buf, size_t len, tl_num_kind kind, double v);

/* s with every number token replaced by tl_text_number's text (a token cut
 * short is dropped). Malloc'd: "" for NULL, NULL when out of memory. */
char *tl_text_numbers(const char *s);

/* put(f, text) with the numbers of s written (tl_text_numbers): escaping
 * writers (tl_escape_html, md_text) take analysis text through this. */
void tl_text_numbers_put(FILE *f, const char *s, void (*put)(FILE *f, const char *text));

#endif
