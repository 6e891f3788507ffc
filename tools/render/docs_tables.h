/*
 * docs_tables.h - the tables of docs/analysis.md that are generated from the
 * code, written as Markdown from the tables analyze and ingest expose: the
 * kernel types (ingest's tl_kernel_class_table), the per-rank metrics
 * (analyze's tl_metrics) and the rules (analyze's tl_rules).
 * tests/unit/test_docs.c checks the page against them; TALLY_REGEN=1
 * rewrites it.
 */
#ifndef TALLY_RENDER_DOCS_TABLES_H
#define TALLY_RENDER_DOCS_TABLES_H

#include <stddef.h>
#include <stdio.h>

#include "aggregate.h"

void tl_docs_kernel_types(FILE *f);
void tl_docs_metrics(FILE *f);
/* The rules, with the thresholds their texts name ({NAME}) written in. */
void tl_docs_rules(FILE *f);
/* The threshold named by name[0..len), or NULL (for tests). */
const tl_rule_threshold *tl_docs_threshold(const char *name, size_t len);

#endif
