/*
 * memcats_out.h - memory by category in the outputs (analyze/memcats.h;
 * docs/analysis.md, "Memory by category"): the aggregate JSON's
 * "memory_categories", a Markdown section, and in the HTML report's Memory
 * section a stacked-area chart over time and a table per rank. Nothing at
 * all when no input is a memory timeline.
 */
#ifndef TALLY_RENDER_MEMCATS_OUT_H
#define TALLY_RENDER_MEMCATS_OUT_H

#include <stdio.h>

#include "aggregate.h"
#include "html_sections.h"
#include "json_writer.h"

/* Sessions drawn and tabled in the HTML and Markdown; the JSON has them all. */
#define TL_MEMCATS_SHOWN 4

/* Whether any session that counts has a memory timeline. */
int tl_memcats_out_any(const tl_aggregate *a);
/* The "memory_categories" object (schema/tally-aggregate.schema.json). */
void tl_memcats_json(tl_json *j, const tl_aggregate *a);
void tl_memcats_markdown(FILE *out, const tl_aggregate *a);
void tl_html_memcats(tl_html *h);

#endif
