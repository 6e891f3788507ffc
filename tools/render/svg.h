/*
 * svg.h - the few SVG charts the report draws, written straight to a FILE*:
 * horizontal bars (with an optional min-max range), stacked bars, a
 * multi-line chart, and a swimlane timeline.
 *
 * The one idea: charts carry no colors. Every mark has a CSS class (compute,
 * comm, memory, other, idle, overlap; s0..s7 for series; strag for the
 * straggler) that assets/report.css maps to colors, so light, dark and print
 * all work from the same bytes. Every chart is role="img" with a <title> and
 * a <desc> (aria-labelledby), and every mark has a <title> tooltip, so the
 * page needs no script. Coordinates are printed with one decimal, for
 * determinism and size. Every text that can come from an input is escaped
 * here; callers pass raw strings. Class names are static strings of the
 * caller and are written as they are.
 */
#ifndef TALLY_RENDER_SVG_H
#define TALLY_RENDER_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What every chart has: a page-unique id ([a-z0-9-]) and text alternatives. */
typedef struct tl_svg_frame {
    const char *id;
    const char *title;
    const char *desc;
} tl_svg_frame;

/* ---- horizontal bars --------------------------------------------------------- */

typedef struct tl_svg_bar {
    const char *label; /* cut to fit; the full text is in the tooltip */
    double value;
    double lo, hi;   /* a range drawn as a whisker; NaN: none */
    const char *cls; /* class of the bar; NULL: "compute" */
    char note[160];  /* more tooltip text, or "" */
    int has_self;    /* self is known: drawn solid, the rest of value (the
                                * time of what runs inside) lighter */
    double self;
} tl_svg_bar;

/* One bar a row, on an axis from 0 to the tick at or beyond the largest value or
 * whisker end. A legend under the bars keys what some bar draws: self and
 * inclusive parts, and the whisker, which reads as whisker (say "range over
 * ranks: least to most"; NULL: "range"). */
void tl_svg_hbars(FILE *f, const tl_svg_frame *fr, const tl_svg_bar *bars, size_t n, int unit, const char *whisker);

/* ---- stacked bars (one row each, as shares of the row's total) --------------- */

#define TL_SVG_MAX_SEGS 8
typedef struct tl_svg_seg {
    const char *name; /* legend and tooltip name (static) */
    const char *cls;
    double value;
} tl_svg_seg;

typedef struct tl_svg_stack {
    const char *label;
    double total; /* 100% of the row */
    tl_svg_seg segs[TL_SVG_MAX_SEGS];
    int nsegs;
} tl_svg_stack;

/* The legend comes from the first row's segments. */
void tl_svg_stacked(FILE *f, const tl_svg_frame *fr, const tl_svg_stack *rows, size_t n, int unit);
/* Stacked columns (TensorBoard's step-time chart): one column a row, its
 * segments from the axis up in order, heights in unit on a common axis (a
 * row's total is its column's height); each column's label under it (thinned
 * when many), "what label" in its tooltips ("step 12"). Legend as above. */
void tl_svg_columns(FILE *f, const tl_svg_frame *fr, const tl_svg_stack *cols, size_t n, int unit, const char *xlabel,
                    const char *what);

/* ---- lines --------------------------------------------------------------------- */

typedef struct tl_svg_series {
    const char *label;
    const char *cls;     /* tl_svg_rank_class, strag, muted (+ base: dotted) */
    const double *x, *y; /* x ascending */
    size_t n;
} tl_svg_series;

typedef struct tl_svg_axes {
    const char *xlabel, *ylabel;
    int xunit, yunit; /* enum tl_unit */
} tl_svg_axes;

/* Long series are thinned to their min and max per pixel column (fewer
 * columns when there are many series), which keeps the chart's size bounded. */
void tl_svg_lines(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_series *s, size_t n);

/* A labelled point over a line chart (a memory snapshot): a marker at (x, y)
 * with its label, which is written beside it when the chart has at most
 * TL_SVG_NOTE_LABELS of them (else in the marker's tooltip only). */
typedef struct tl_svg_note {
    double x, y;
    const char *label; /* escaped here */
    const char *cls;   /* the series class, for its color */
} tl_svg_note;
#define TL_SVG_NOTE_LABELS 16
/* tl_svg_lines with notes on top; the axes cover them too. */
void tl_svg_lines_notes(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_series *s, size_t n,
                        const tl_svg_note *notes, size_t nnotes);

/* A shaded area between two series over one x (a quantile band): its
 * polygon in class cls ("band outer", "band inner"), label in the legend and
 * tooltip (escaped here); NaN where a point has no value. */
typedef struct tl_svg_area {
    const char *label;
    const char *cls;
    const double *x, *lo, *hi; /* x ascending */
    size_t n;
} tl_svg_area;
/* tl_svg_lines over areas drawn first, in order (the widest first); the
 * lines go on top, the straggler's last. Areas longer than the plot's
 * columns are thinned to each column's lowest low and highest high. */
void tl_svg_lines_areas(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_area *areas, size_t na,
                        const tl_svg_series *s, size_t n);

/* ---- timeline ------------------------------------------------------------------ */

/* A call drawn by name under a CPU lane's band: [c0, c1) in columns, on a
 * row by nesting (0 just below the band). */
typedef struct tl_svg_call {
    double c0, c1;
    int row;
    const char *name; /* fitted to the box (labels.h); whole in the tooltip */
    double dur_ns;
} tl_svg_call;

/* One swimlane at ncols columns: per column the dominant kind of work
 * (tl_kernel_type, or TL_SVG_KIND_WAIT: waiting for other ranks) and a level
 * 0..4 of how busy the column is (0: idle); a CPU lane may add rows of calls
 * under it. */
#define TL_SVG_KIND_WAIT 4
typedef struct tl_svg_lane {
    const char *label;
    const uint8_t *kind, *level;
    char note[200];           /* tooltip of the lane */
    int group_start;          /* the first lane of a rank: a separator above it */
    const tl_svg_call *calls; /* NULL: none */
    size_t ncalls;
    int rows; /* rows of calls under the band */
    int cpu;  /* a CPU thread's lane: kind is always compute, level how busy */
} tl_svg_lane;

/* A step mark: a thin vertical line at column col over lanes [lane0, lane0+nlanes). */
typedef struct tl_svg_mark {
    double col;
    int lane0, nlanes;
    char title[96]; /* "" : drawn without a tooltip (many steps) */
    int event;      /* an event (a report's tally_event, Inferix's events): a marker above the lanes */
} tl_svg_mark;

typedef struct tl_svg_timeline {
    const tl_svg_lane *lanes;
    size_t nlanes;
    int ncols;
    double span_ns;         /* the time the columns cover */
    const char *axis_label; /* "time since 2023-09-07T23:10:01.426Z" */
    const tl_svg_mark *marks;
    size_t nmarks;
} tl_svg_timeline;

/* The lanes, their calls and marks over a time axis, and under it a legend of
 * what this chart draws (kinds of GPU work, CPU threads, shading, named
 * calls, steps, events), nothing it does not. */
void tl_svg_timeline_write(FILE *f, const tl_svg_frame *fr, const tl_svg_timeline *t);

/* The series class of the i-th rank drawn: "s0".."s7", then "s8 dash"..
 * "s15 dash" (16 colors, the second eight also dashed), then again. */
const char *tl_svg_rank_class(size_t i);

/* The class of a kind of GPU work (tl_kernel_type): "compute", "comm", ... */
const char *tl_svg_kind_class(int kind);

/* ---- small multiples ----------------------------------------------------------- */

/* A downsampled series: per bin the lowest, mean and highest value (NaN: no
 * sample), the bins evenly covering [x0, x1] of the chart's axis. */
typedef struct tl_svg_band {
    const double *lo, *mid, *hi;
    int nbins;
    double x0, x1;
} tl_svg_band;

typedef struct tl_svg_small {
    double xmin, xmax, ymin, ymax;               /* the axes every chart of a column shares */
    const char *cls;                             /* s0..s7, strag */
    const char *ytop, *ybottom, *xleft, *xright; /* axis labels (escaped here); ybottom may be NULL */
    const double *marks;                         /* step starts on the x axis, drawn as faint ticks; NULL: none */
    size_t nmarks;
} tl_svg_small;

/* A small chart of SVG_SMALL_W x SVG_SMALL_H: each band's min-max range shaded
 * and its means as a line; a gap where bins are empty. */
#define TL_SVG_SMALL_W 200
#define TL_SVG_SMALL_H 92
void tl_svg_small_write(FILE *f, const tl_svg_frame *fr, const tl_svg_small *c, const tl_svg_band *b, size_t n);

#endif
