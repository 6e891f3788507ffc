/*
 * svg_flame.h - a call tree (calltree.h) as a static icicle graph in SVG.
 *
 * The one idea: the graph is drawn at pixel resolution. Each root (a kind of
 * event) heads a band of its own, the full width, largest root first; each
 * frame's children sit below it from its left edge, widths are
 * inclusive time, so the part of a frame that no child covers is its self
 * time (its color says how large that part is: classes f0..f3 for self
 * under 5 %, 25 %, 60 % and above). Children narrower than the least width
 * drawn are merged into one box per parent ("…"); when even that is
 * narrower, they are left out. The least width is one pixel, or more when
 * the frames of at least a pixel exceed the budget of boxes (max_rects), so
 * the size of the SVG is bounded whatever the tree. Everything a reader may
 * want is in each box's <title>: the full name, inclusive and self time,
 * calls, the share of its root and, for a merge across ranks, the least and
 * most of one rank. Names are fitted to their box (labels.h) at a
 * conservative width per character, so no text runs out of its box.
 */
#ifndef TALLY_RENDER_SVG_FLAME_H
#define TALLY_RENDER_SVG_FLAME_H

#include <stddef.h>
#include <stdio.h>

#include "calltree.h"
#include "svg.h"

#define TL_FLAME_W 1200      /* the chart's width in user units (px at 1280 px pages) */
#define TL_FLAME_ROW 18      /* one level */
#define TL_FLAME_MAX_ROWS 32 /* levels drawn per root; deeper frames are counted */
#define TL_FLAME_GAP 8       /* between the roots' bands */
#define TL_FLAME_CHAR_PX 7.0 /* a label character at 11 px monospace, with room */

typedef struct tl_svg_flame {
    const tl_calltree *tree;
    const tl_calltree_kids *kids;
    size_t max_rects; /* boxes drawn at most (about; merged boxes come on top) */
    int nranks;       /* a merge across this many ranks (tooltips give least and most), else 0 */
} tl_svg_flame;

/* What the graph could not show, for the page to say. */
typedef struct tl_svg_flame_stats {
    size_t drawn;      /* frames drawn as boxes */
    size_t merged;     /* frames drawn inside merged boxes */
    double merged_ns;  /* their inclusive time */
    size_t omitted;    /* frames too narrow even merged (their subtrees not counted) */
    double omitted_ns; /* their inclusive time */
    size_t deeper;     /* frames below TL_FLAME_MAX_ROWS levels (top of each subtree) */
    double min_px;     /* the least width drawn */
    int rows;          /* levels drawn in the deepest band */
    double height;     /* of the bands */
} tl_svg_flame_stats;

/* The CSS class of a root's category, from its name (calltree.h's kind
 * labels): "ko" operators, "ka" annotations and sections, "kp" Python frames,
 * "kg" GPU annotations, "kr" runtime calls, "ke" other events. The flame
 * graph puts each band under it; the page's legend uses it too. */
const char *tl_svg_flame_kind_class(const char *root_name);

void tl_svg_flame_write(FILE *f, const tl_svg_frame *fr, const tl_svg_flame *fl, tl_svg_flame_stats *st);

#endif
