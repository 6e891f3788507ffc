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

#include <stdio.h>

void tl_docs_kernel_types(FILE *f);
void tl_docs_metrics(FILE *f);
void tl_docs_rules(FILE *f);

#endif
