/*
 * memops_out.h - device memory by operator in the outputs (analyze/memops.h;
 * docs/analysis.md, "Memory by operator"): the aggregate JSON's
 * "memory_by_op", a Markdown table and the HTML report's table in its
 * Memory section. Nothing at all when no input has allocations by operator.
 */
#ifndef TALLY_RENDER_MEMOPS_OUT_H
#define TALLY_RENDER_MEMOPS_OUT_H

#include <stdio.h>

#include "aggregate.h"
#include "html_sections.h"
#include "json_writer.h"

/* Rows shown in the Markdown and HTML tables; the JSON holds TL_MEMOPS_JSON_ROWS. */
#define TL_MEMOPS_TOP 15
#define TL_MEMOPS_JSON_ROWS 100

/* Whether any session that counts has allocations by operator. */
int tl_memops_any(const tl_aggregate *a);
/* The "memory_by_op" object (schema/tally-aggregate.schema.json). */
void tl_memops_json(tl_json *j, const tl_aggregate *a);
void tl_memops_markdown(FILE *out, const tl_aggregate *a);
void tl_html_memops(tl_html *h);

#endif
