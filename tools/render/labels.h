/*
 * labels.h - names people can tell apart: the text a chart, a table, the
 * console or the Markdown summary prints for a kernel, op or section name.
 *
 * The one idea: a label is made for a set of names at once (the bars of one
 * chart, the rows of one table), so it can keep what tells each name from the
 * others. A name is first demangled (Itanium C++ ABI "_Z..." names, through
 * libiberty's cplus_demangle); if it fits the width it is printed whole.
 * Otherwise it is compacted - return type, namespaces and parameter lists
 * dropped, template arguments kept with their own namespaces dropped, lambdas
 * as "enclosing_function::{lambda}" - and cut with a middle ellipsis ("…")
 * that keeps the start of the name and the part where it differs from the
 * names it would otherwise be confused with. No two labels of one set are the
 * same text: when compact forms collide, the parameters and lambda numbers,
 * then the full name
 * are used, and as a last resort " #2", " #3" is appended.
 *
 * Widths are display columns (UTF-8 code points); cuts fall on character
 * boundaries. Labels are plain text: the caller escapes them for the place
 * they land. The full (demangled) name goes where a reader can see it whole:
 * the SVG <title> tooltip and the table cell.
 *
 * Thread-compatible (no shared state). Cost: O(n^2 * length) for n names,
 * meant for the tens to hundreds of names of one chart or table.
 */
#ifndef TALLY_RENDER_LABELS_H
#define TALLY_RENDER_LABELS_H

#include <stddef.h>

/* Longer mangled names are shown as they are (the demangler's cost and
 * recursion grow with the length; no real kernel name is near this). */
#define TL_LABELS_DEMANGLE_MAX 8192
/* The least width a label is made for; narrower requests get this. */
#define TL_LABELS_MIN_WIDTH 8

/* The demangled form of an Itanium C++ ABI name (malloc'd), or NULL when the
 * name is not mangled, is longer than TL_LABELS_DEMANGLE_MAX, or does not
 * demangle (or tally was built without libiberty). */
char *tl_labels_demangle(const char *name);

/* The name as a reader should see it whole: demangled when mangled, else a
 * copy (malloc'd; NULL only when out of memory). */
char *tl_labels_full(const char *name);

/* The compact form of a (demangled) name, see above; detail keeps the
 * parameter list, compacted the same way, and each lambda with its number
 * ("{lambda#2}") (malloc'd; NULL when out of memory). */
char *tl_labels_compact(const char *name, int detail);

/* s cut to at most width display columns with a middle ellipsis: the start
 * (up to the name's first '<' or '(') and, when given, the code points
 * [focus_start, focus_end) stay visible (malloc'd). focus_start ==
 * focus_end: no focus, the start and the end are kept. */
char *tl_labels_fit(const char *s, size_t width, size_t focus_start, size_t focus_end);

/* The label of one name in a box of cols columns (a flame graph's frame, a
 * timeline's call): the whole (demangled) name when it fits, else its
 * compact form (a "## name ##" marker without its marks), cut with a middle
 * ellipsis, or below TL_LABELS_MIN_WIDTH its start and "…"; never wider
 * than cols. NULL when the name does not fit and cols < 4 (a cut would
 * say nothing) or out of memory. malloc'd. */
char *tl_labels_box(const char *name, size_t cols);

/* Labels for a set of names. full[i] is names[i] demangled (see
 * tl_labels_full), text[i] its label of at most width columns; the texts
 * are pairwise different. */
typedef struct tl_labels {
    size_t n;
    char **full;
    char **text;
} tl_labels;

/* Make the labels of names[0..n) at width columns. Returns 0, or -1 when out
 * of memory (l is then empty). NULL names are treated as "". */
int tl_labels_make(tl_labels *l, const char *const *names, size_t n, size_t width);
void tl_labels_release(tl_labels *l);

/* The display columns of UTF-8 text (its code points). */
size_t tl_labels_cols(const char *s);

#endif
