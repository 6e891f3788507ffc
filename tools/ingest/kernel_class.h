/*
 * kernel_class.h - what kind of work a GPU event is (kernel_class.c): the
 * built-in table and the user's --kernel-class patterns in front of it.
 *
 * The user's patterns are a value (tl_kernel_classes), not process state: the
 * command line's live in its analysis options (tl_analyze_options), reach
 * the readers through tl_ingest_options and each profile, and an aggregate
 * taken from a partial rebuilds the partial's from what it recorded
 * (tl_kernel_classes_parse), so two analyses in one process may use two
 * tables. NULL everywhere means "the built-in table only".
 */
#ifndef TALLY_KERNEL_CLASS_H
#define TALLY_KERNEL_CLASS_H

#include <stddef.h>

/* Kinds of GPU events (HTA's kernel types, plus sync events as "other"). */
enum tl_kernel_type { TL_KT_COMPUTE = 0, TL_KT_COMM, TL_KT_MEMORY, TL_KT_OTHER, TL_KT_COUNT };
const char *tl_kernel_type_name(int type);
/* "compute", "communication"/"comm", "memory", "other"/"sync" -> type, or -1. */
int tl_kernel_type_parse(const char *s);

/* --kernel-class patterns kept; more are refused. */
#define TL_KERNEL_CLASS_MAX_USER 64

/* The user's patterns, in the order given. */
typedef struct tl_kernel_classes tl_kernel_classes;

/* An empty table, or NULL when out of memory. */
tl_kernel_classes *tl_kernel_classes_new(void);
void tl_kernel_classes_free(tl_kernel_classes *k);
/* Add "GLOB=TYPE" behind the patterns already there (--kernel-class). 0, or
 * -1 on a bad spec (no GLOB, an unknown TYPE, a GLOB holding the recorded
 * form's separator "; "), beyond TL_KERNEL_CLASS_MAX_USER patterns, or out of
 * memory. Not thread-safe: fill a table before reading inputs with it. */
int tl_kernel_classes_add(tl_kernel_classes *k, const char *spec);
/* Add every pattern of a recorded form ("GLOB=type; GLOB=type", what
 * tl_kernel_classes_spec returns): 0, or -1 as tl_kernel_classes_add. */
int tl_kernel_classes_parse(tl_kernel_classes *k, const char *recorded);
/* The patterns as one string, "GLOB=type; GLOB=type" in the order added,
 * types by their canonical names; NULL when k is NULL or has none (what
 * partials record as their "kernel_classes"). */
const char *tl_kernel_classes_spec(const tl_kernel_classes *k);

/* Classify a GPU event by name and category (enum tl_cat_class, profile.h):
 * k's patterns first (k may be NULL), then the table of kernel_class.c
 * (documented in docs/analysis.md, "Kernel type"). */
int tl_kernel_type_of(const tl_kernel_classes *k, const char *name, size_t len, int cat_class);
/* One row of the built-in table: a glob, its kernel type, where the naming
 * comes from (docs/analysis.md's "Kernel type" table is written from it by
 * render/docs_tables.c). */
typedef struct tl_kernel_class_row {
    const char *pattern;
    int type;
    const char *source;
} tl_kernel_class_row;
const tl_kernel_class_row *tl_kernel_class_table(size_t *n);

#endif
