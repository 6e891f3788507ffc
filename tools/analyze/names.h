/*
 * names.h - statistics per name across ranks: the table users come for.
 *
 * Rows are (group, name): a group gathers categories that mean the same thing
 * across producers (cpu_op and Operator are "ops"; kernel, gpu_memcpy, Memcpy
 * are "kernels"; a report's sections and stages and user annotations are
 * "sections"). Each row merges the statistics of every rank and keeps each
 * rank's total, so it can say which rank spent least and most and how
 * unbalanced the ranks are (imbalance = max / mean of the per-rank totals).
 */
#ifndef TALLY_NAMES_H
#define TALLY_NAMES_H

#include "profile.h"
#include "session.h"

/* The groups (enum tl_group, tl_group_name) are declared with the session in
 * session.h. A category's group: */
int tl_group_of(int cat_class);

typedef struct tl_name_row {
    int group;
    char *name;
    tl_dur_stat all;      /* every rank merged, ns */
    int exact;            /* every part came from events (std, median valid) */
    double *rank_total;   /* [nranks] ns, by rank index: inclusive (a name nested in itself
                               * counts once) where the input nests, else the sum of durations */
    double *rank_self;    /* [nranks] self time ns, -1 where unknown */
    double incl_total;    /* sum of rank_total */
    double self_total;    /* sum of the known rank_self, -1 when none is known */
    uint64_t *rank_count; /* [nranks] */
    /* across ranks, over the ranks that have the name */
    int nranks_with;
    double rank_min, rank_max, rank_mean, rank_median, rank_std, imbalance;
    int rank_of_min, rank_of_max; /* rank numbers */
} tl_name_row;

typedef struct tl_name_table {
    tl_name_row *rows;
    size_t n, cap;
    uint32_t *slots;
    size_t nslots;
    int nranks;
    int *ranks; /* rank index -> rank number, ascending */
} tl_name_table;

/* Start a table over these ranks (rank numbers, any order; copied). */
int tl_name_table_begin(tl_name_table *t, const int *ranks, int nranks);
/* Add one rank's statistics of (group, name); sessions of a rank add up.
 * exact: d came from events (its histogram and M2 are valid). */
int tl_name_table_add(tl_name_table *t, int rank, int group, const char *name, const tl_dur_stat *d, int exact);
/* The same with inclusive and self time (-1: unknown, the sum of durations
 * stands for inclusive). */
int tl_name_table_add_nested(tl_name_table *t, int rank, int group, const char *name, const tl_dur_stat *d, int exact,
                             int64_t incl_ns, int64_t self_ns);
/* Compute the across-rank columns. */
int tl_name_table_end(tl_name_table *t);
void tl_name_table_release(tl_name_table *t);
/* Indices of the rows of group, by total time descending (malloc'd). */
size_t *tl_name_table_top(const tl_name_table *t, int group, size_t *count);

/* Sort v ascending (callers use the order too) and return its median; NaN
 * when n is 0. */
double tl_median_sort(double *v, size_t n);

/* One value per rank summarized across the ranks (docs/analysis.md, "Across
 * ranks"): the names' columns and every per-rank metric's row are this. */
typedef struct tl_spread {
    int n;                                         /* ranks with a value */
    double min, max, mean, median, std, imbalance; /* std: n - 1; imbalance = max / mean (1 when mean <= 0) */
    int min_rank, max_rank;                        /* the first rank with the min, the max */
} tl_spread;
/* The spread of v[0, n) (NaN values are skipped) whose ranks are rank[0, n);
 * scratch holds n doubles. n == 0 in the result: no rank has a value (the
 * other fields are then 0). */
void tl_spread_of(tl_spread *out, const double *v, const int *rank, size_t n, double *scratch);

#endif
