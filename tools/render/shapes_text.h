/*
 * shapes_text.h - the operators-by-input-shape table (analyze/shapes.h) as
 * text: the cells the HTML subsection and the Markdown section print, and
 * the sentence that says what the table holds and what it cut.
 */
#ifndef TALLY_RENDER_SHAPES_TEXT_H
#define TALLY_RENDER_SHAPES_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "aggregate.h"

/* One row, formatted (the names and shapes are the caller's to escape). */
typedef struct tl_shapes_text {
    char calls[24], total[32], mean[32], ranks[96], gpu[32], flops[32], tflops[24], peak[32];
} tl_shapes_text;
void tl_shapes_row_text(const tl_shape_row *r, tl_shapes_text *t);

/* What the table holds and what it cut, without a newline; the device name
 * (input text) is written by esc. */
void tl_shapes_sentence(FILE *out, const tl_aggregate *a, void (*esc)(FILE *, const char *));

/* The Markdown section (## Operators by input shape); nothing without shapes. */
void tl_shapes_markdown(FILE *out, const tl_aggregate *a);

#endif
