/*
 * compare_rows.h - what the compare page (compare_html.c) and the CI outputs
 * (compare_text.c: Markdown, JUnit, the console) share, so that they print a
 * comparison's rows the same way: the wording of a row's cells, the filters
 * that pick rows, and the top rows of a table (the rows a filter keeps, by
 * impact, the first few shown, the rest counted, their names as labels).
 *
 * The one idea: every text here is plain; each output frames it (<td>, "|")
 * and escapes what came from an input for its own format.
 */
#ifndef TALLY_RENDER_COMPARE_ROWS_H
#define TALLY_RENDER_COMPARE_ROWS_H

#include <stddef.h>

#include "compare.h"
#include "labels.h"

/* ---- the wording of a row ----------------------------------------------------
 * Each writes into buf and returns it. */

/* A rank ("all" for -1). */
const char *tl_cmp_rank_label(char *buf, size_t len, int rank);
/* A row's delta: "+12.3%", " ~" appended when not significant, "–" unknown. */
const char *tl_cmp_delta_text(char *buf, size_t len, const tl_cmp_row *r);
/* A value of a row in its unit: a duration, bytes (memory) or calls. */
const char *tl_cmp_value_text(char *buf, size_t len, const tl_cmp_row *r, double v);
/* A p-value: "0.012"; below 0.001 lt followed by "0.001" (lt is "<", or
 * "&lt;" where it lands in HTML); "–" unknown. */
const char *tl_cmp_p_text(char *buf, size_t len, double p, const char *lt);

/* The gate's failures, when there are any: "; 0 tested regressions, 2 large
 * untested increases" (a headline of "0 regressions" above "Gate: fails"
 * must say what failed); "" when none failed. */
const char *tl_cmp_gate_split(char *buf, size_t len, const tl_compare *c);

/* The geometric mean ratio as a change: "3.0% slower", "0.42% faster", "as
 * fast" (under 0.005 % either way: "0.00% faster" said a change of nothing). */
const char *tl_cmp_geomean_text(char *buf, size_t len, double ratio);
/* The all-ranks step-time row, or NULL. */
const tl_cmp_row *tl_cmp_step_row(const tl_compare *c);
/* "Step time (median, all ranks): 176.3 ms -> 152.5 ms, -13.5 % (verdict)."
 * -- what a headline leads with; "" without steps on both sides. */
const char *tl_cmp_step_text(char *buf, size_t len, const tl_compare *c);
/* The gate's verdict in one line (tl_compare_verdict), what every output
 * leads with: "gate fails: step time +18.9 % (35.34 ms -> 42.01 ms), adjusted
 * p < 0.001", "gate fails: kernels \"gemm\" total per run +30.2 % (+1.80 ms a
 * step, 5.1 % of the step)", "gate passes: step time -15.8 % (42.31 ms ->
 * 35.62 ms, improvement)", "gate passes: no material regression"; with "; N
 * more gate failures" and "; N regressions do not fail it (immaterial to
 * the step, or explanatory)". Plain text: a name from an input is in it,
 * each output escapes the whole. */
const char *tl_cmp_status_text(char *buf, size_t len, const tl_compare *c);

/* What to do, in one or two sentences that follow the verdict: where the
 * cause is when the gate fails, what the regressions that do not fail it
 * mean, how to get a test of the step when there is none. Static wording and
 * numbers only (no names). */
const char *tl_cmp_advice_text(char *buf, size_t len, const tl_compare *c);

/* Whether the comparison is of one rank on each side (the all-ranks rows and
 * rank 0's say the same: outputs show the all-ranks ones only). */
int tl_cmp_single_rank(const tl_compare *c);

/* The geomean as what it is: each name once, whatever its time ("" without
 * one); not "faster overall" (16 names of the pipeline sample read "11.5 %
 * faster overall" beside a step time 25.7 % shorter). */
const char *tl_cmp_geomean_sentence(char *buf, size_t len, const tl_compare *c);

/* A row's verdict as the outputs show it: in words (the HTML: "too few
 * samples", "large increase, not tested") or by its name (the Markdown, so a
 * CI job can grep "large_increase_untested"); either way a row that moved
 * beyond the threshold without a verdict (inconclusive) reads "not
 * significant", or "not on most ranks", never "unchanged". Static text. */
const char *tl_cmp_verdict_text(const tl_cmp_row *r, int words);

/* When the runs' ranks differ, which ranks the all-ranks rows compare:
 * "1 rank only in the candidate (0): the all-ranks rows compare the 1 rank
 * both runs have"; with no rank in common, that they compare each run's own
 * ranks; "" when both runs have the same ranks. */
const char *tl_cmp_ranks_text(char *buf, size_t len, const tl_compare *c);

/* One side of a row (cand: the candidate's, else the baseline's): its
 * compared value in the row's unit ("–" when the side does not have the
 * name) and, for a time per call, the median's interval "[lo, hi]" ("" when
 * there is none). */
typedef struct tl_cmp_side_cell {
    char value[48], ci[104];
} tl_cmp_side_cell;
void tl_cmp_side_cell_of(tl_cmp_side_cell *cell, const tl_cmp_row *r, int cand);

/* The GPU breakdown's columns, in the order both tables show them: idle,
 * compute, non-compute, communication overlapped by compute. A cell is the
 * pair "baseline → candidate" in percent and the change in percentage points
 * ("+1.5 pp"; "" when either side is unknown). */
#define TL_CMP_GPU_COLS 4
typedef struct tl_cmp_pct_cell {
    char pair[80], pp[32];
} tl_cmp_pct_cell;
void tl_cmp_gpu_cells(const tl_cmp_gpu *g, tl_cmp_pct_cell cells[TL_CMP_GPU_COLS]);

/* A registry metric's row (tl_cmp_metric_row), formatted: which figure
 * ("mean of 4 ranks", "most of 1 / 1 ranks, none in common"), the two values in the
 * metric's unit ("–" when a side lacks it), the change ("+12.3%", for %
 * metrics "+1.5 pp") and its judgment ("better", "worse", "within
 * threshold", "" when the registry calls neither way better). */
typedef struct tl_cmp_metric_cells {
    char figure[48], base[48], cand[48], delta[32];
    const char *change;
} tl_cmp_metric_cells;
void tl_cmp_metric_cells_of(tl_cmp_metric_cells *cells, const tl_cmp_metric_row *m);

/* A counter's row (tl_cmp_counter_row), formatted: the two means ("–" when
 * a side lacks it), their values recorded, the change ("+12.3%") and its
 * judgment ("changed" beyond the large-change threshold, "within threshold",
 * "" when a side lacks it). */
typedef struct tl_cmp_counter_cells {
    char base[48], cand[48], counts[64], delta[32];
    const char *change;
} tl_cmp_counter_cells;
void tl_cmp_counter_cells_of(tl_cmp_counter_cells *cells, const tl_cmp_counter_row *x);

/* ---- which rows ---------------------------------------------------------------
 * Filters for tl_compare_by_impact (compare.h); ctx points to a verdict
 * where one is named. */

/* The all-ranks total per run of a name that both runs have (not steps, not
 * memory): the rows whose change in total time the outputs rank. */
int tl_cmp_keep_matched(const tl_cmp_row *r, void *ctx);
/* An all-ranks row of the verdict *ctx. */
int tl_cmp_keep_overall(const tl_cmp_row *r, void *ctx);
/* A row of one rank of the verdict *ctx. */
int tl_cmp_keep_rank(const tl_cmp_row *r, void *ctx);

/* The top rows of a table: the rows a filter keeps, by impact. */
typedef struct tl_cmp_top {
    size_t *idx;  /* indexes into the comparison's rows */
    size_t n;     /* how many rows were kept */
    size_t shown; /* the first ones shown: at most the table's max */
    size_t max;
    tl_labels lab; /* after tl_cmp_top_label: the shown rows' names as labels; n 0: none */
} tl_cmp_top;

/* Select the rows keep keeps (with ctx), by impact, at most max shown.
 * Returns 0, or -1 when out of memory (t is then empty). */
int tl_cmp_top_select(tl_cmp_top *t, const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), void *ctx,
                      size_t max);
/* Add the rows of another filter after those selected (all ranks first,
 * then single ranks). 0, or -1 when out of memory. */
int tl_cmp_top_append(tl_cmp_top *t, const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), void *ctx);
/* The row shown i-th. */
const tl_cmp_row *tl_cmp_top_row(const tl_cmp_top *t, const tl_compare *c, size_t i);
/* Make the labels of the shown rows' names at width columns (labels.h), in
 * the order of idx then; on failure (out of memory) there are none and the
 * caller's fallback is used. The label of row i: tl_cmp_top_label_of. */
void tl_cmp_top_label(tl_cmp_top *t, const tl_compare *c, size_t width);
const char *tl_cmp_top_label_of(const tl_cmp_top *t, size_t i, const char *fallback);
void tl_cmp_top_release(tl_cmp_top *t);

#endif
