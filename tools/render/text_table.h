/*
 * text_table.h - console tables that fit a terminal: `tally summary`'s
 * tables at 80 columns (or the terminal's width, or --width).
 *
 * The one idea: a table never wraps inside a cell. Columns have a priority;
 * when the table is wider than the width, the least important columns are
 * left out (and the table says which, and the width that shows them all),
 * and the one flexible column - the names - takes what is left. Its cells
 * become labels of that width (labels.h): demangled, compacted, cut with a
 * middle ellipsis, never two rows alike. Numbers are formatted by the caller
 * (units.h) and printed whole, right-aligned. Widths count display columns.
 * Cells and wrapped text come from inputs too: their control characters are
 * shown escaped (term.h) before they are measured.
 */
#ifndef TALLY_TEXT_TABLE_H
#define TALLY_TEXT_TABLE_H

#include <stddef.h>
#include <stdio.h>

/* The fewest columns the flexible column shrinks to before others go. */
#define TL_TEXT_FLEX_MIN 30
/* Columns between two cells. */
#define TL_TEXT_GAP 2
/* The width used when none is given and stdout is not a terminal. */
#define TL_TEXT_DEFAULT_WIDTH 80
/* The range --width accepts. */
#define TL_TEXT_MIN_WIDTH 40
#define TL_TEXT_MAX_WIDTH 1000

typedef struct tl_text_col {
    const char *head;
    int right;    /* right-aligned (numbers) */
    int priority; /* 0: always shown; higher: left out first */
    int flex;     /* the names column (at most one) */
} tl_text_col;

typedef struct tl_text_table {
    const tl_text_col *cols;
    size_t ncols;
    char **cells; /* row-major, ncols per row, owned */
    size_t nrows, cap;
    int oom;
} tl_text_table;

void tl_text_table_init(tl_text_table *t, const tl_text_col *cols, size_t ncols);
/* Add a row of ncols cells (copied; NULL prints as empty). */
void tl_text_table_row(tl_text_table *t, const char *const *cells);
/* Print the header, a rule and the rows in at most width columns, then a
 * line naming the columns left out, if any. Returns 0, or -1 when out of
 * memory (then the table may be incomplete). */
int tl_text_table_print(FILE *out, tl_text_table *t, size_t width);
void tl_text_table_release(tl_text_table *t);

/* Text wrapped at spaces to width columns (control characters escaped, a
 * newline included): the first line after `first`
 * (e.g. "warning    "), the next ones indented by as many columns. A word
 * longer than a line is cut where the line ends. */
void tl_text_wrap(FILE *out, const char *first, const char *text, size_t width);

/* The width for console output: want when > 0, else the terminal's when fd
 * is one, else TL_TEXT_DEFAULT_WIDTH; clamped to the accepted range. */
size_t tl_text_width(int want, int fd);

#endif
