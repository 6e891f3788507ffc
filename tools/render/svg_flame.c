/*
 * svg_flame.c - the icicle graph of a call tree (see svg_flame.h).
 *
 * Two walks over the same layout: the first collects the widths of every
 * frame of at least a pixel to choose the least width drawn within the
 * budget, the second writes the boxes. Widths never grow going down (a
 * child's share of its parent is at most the parent's width; children whose
 * times add up to more than their parent's, which only a hostile partial can
 * give, are scaled to fit), so the frames drawn always include their parents.
 */
#define _GNU_SOURCE
#include "svg_flame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "escape.h"
#include "labels.h"
#include "svg_internal.h"
#include "units.h"

#define TOP 2.0

typedef struct walk {
    const tl_svg_flame *fl;
    double min_w;
    double y0;                   /* the top of the current root's band */
    int band_rows;               /* levels drawn in it */
    FILE *f;                     /* NULL: collect widths only */
    double *widths;              /* collect: the widths of frames of at least a pixel */
    size_t nwidths, cap;
    tl_svg_flame_stats *st;
} walk;

typedef struct item {
    uint32_t node;
    int depth;
    double x, w;
} item;

static const char *self_class(const tl_cnode *c)
{
    double share = c->incl_ns > 0 ? (double)c->self_ns / (double)c->incl_ns : 0;
    return share < 0.05 ? "f0" : share < 0.25 ? "f1" : share < 0.6 ? "f2" : "f3";
}

/* The root above node i (the share in the tooltip is of it). */
static uint32_t root_of(const tl_calltree *t, uint32_t i)
{
    for (int guard = 0; t->nodes[i].parent != TL_CALLTREE_NONE && guard < (int)TL_CALLTREE_MAX_NODES; guard++)
        i = t->nodes[i].parent;
    return i;
}

/* The label of a box of w px: the name fitted, or NULL when too narrow. */
static char *box_label(const char *full, double w)
{
    double cols = floor((w - 6.0) / TL_FLAME_CHAR_PX);
    return cols >= 1 ? tl_labels_box(full, (size_t)cols) : NULL;
}

static void box(walk *wk, double x, int depth, double w, const char *label)
{
    FILE *f = wk->f;
    double y = TOP + wk->y0 + depth * TL_FLAME_ROW;
    /* a hairline gap between neighbours, none for boxes of about a pixel */
    fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\"/>", x, y, w > 2 ? w - 0.5 : w,
            TL_FLAME_ROW - 1);
    if (label != NULL) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\">", x + 3, y + 12.5);
        tl_escape_html(f, label);
        fputs("</text>", f);
    }
    if (depth + 1 > wk->band_rows)
        wk->band_rows = depth + 1;
}

static void frame_box(walk *wk, uint32_t i, const item *it)
{
    const tl_calltree *t = wk->fl->tree;
    const tl_cnode *c = &t->nodes[i];
    FILE *f = wk->f;
    char a[48], b[48], d[48];
    char *full = tl_labels_full(tl_calltree_name(t, i));
    const char *name = full ? full : tl_calltree_name(t, i);
    int root = c->parent == TL_CALLTREE_NONE;
    fprintf(f, "<g class=\"%s\"><title>", root ? "fr" : self_class(c));
    tl_escape_html_n(f, name, 2000);
    if (root) {
        fprintf(f, "\n%s in %llu top-level calls", tl_units_dur(a, sizeof a, (double)c->incl_ns),
                (unsigned long long)c->count);
    } else {
        const tl_cnode *r = &t->nodes[root_of(t, i)];
        fprintf(f, "\ninclusive %s (%.1f%% of ", tl_units_dur(a, sizeof a, (double)c->incl_ns),
                r->incl_ns > 0 ? 100.0 * (double)c->incl_ns / (double)r->incl_ns : 0.0);
        tl_escape_html(f, tl_calltree_name(t, root_of(t, i)));
        fprintf(f, "), self %s, %llu call%s", tl_units_dur(b, sizeof b, (double)c->self_ns),
                (unsigned long long)c->count, c->count == 1 ? "" : "s");
    }
    if (wk->fl->nranks > 1 && t->min_ns != NULL)
        fprintf(f, "\nper rank: least %s, most %s (on %u of %d ranks)", tl_units_dur(b, sizeof b, (double)t->min_ns[i]),
                tl_units_dur(d, sizeof d, (double)t->max_ns[i]), t->ranks[i], wk->fl->nranks);
    fputs("</title>", f);
    char *label;
    if (root) {
        /* the band's title: the kind and its total */
        char *t2 = NULL;
        label = asprintf(&t2, "%s \xc2\xb7 %s", name, a) >= 0 ? box_label(t2, it->w) : NULL;
        free(t2);
    } else {
        label = box_label(name, it->w);
    }
    box(wk, it->x, it->depth, it->w, label);
    fputs("</g>\n", f);
    free(label);
    free(full);
}

static void merged_box(walk *wk, uint32_t parent, size_t n, double ns, double x, int depth, double w)
{
    FILE *f = wk->f;
    char a[48], px[48];
    fputs("<g class=\"fm\"><title>", f);
    snprintf(px, sizeof px, "%.1f", wk->min_w);
    fprintf(f, "%zu more call%s under ", n, n == 1 ? "" : "s");
    tl_escape_html_n(f, parent == TL_CALLTREE_NONE ? "the roots" : tl_calltree_name(wk->fl->tree, parent), 300);
    fprintf(f, ", each narrower than %s px, merged\n%s inclusive in all", px, tl_units_dur(a, sizeof a, ns));
    fputs("</title>", f);
    box(wk, x, depth, w, w >= 3 * TL_FLAME_CHAR_PX ? "\xe2\x80\xa6" : NULL);
    fputs("</g>\n", f);
}

static int push(item **v, size_t *n, size_t *cap, item it)
{
    if (tl_array_grow(v, *n, cap, sizeof **v, 256) != 0)
        return -1;
    (*v)[(*n)++] = it;
    return 0;
}

static int collect(walk *wk, double w)
{
    if (tl_array_grow(&wk->widths, wk->nwidths, &wk->cap, sizeof *wk->widths, 1024) != 0)
        return -1;
    wk->widths[wk->nwidths++] = w;
    return 0;
}

/* Lay out the children of parent (TL_CALLTREE_NONE: the roots) inside
 * [x, x + w) at depth; frames wide enough go on the stack. */
static int children(walk *wk, item **stack, size_t *n, size_t *cap, uint32_t parent, double x, double w, int depth)
{
    const tl_calltree *t = wk->fl->tree;
    const tl_calltree_kids *k = wk->fl->kids;
    uint32_t p = parent == TL_CALLTREE_NONE ? t->n : parent;
    uint32_t from = k->start[p], to = k->start[p + 1];
    double sum = 0;
    for (uint32_t j = from; j < to; j++)
        sum += (double)t->nodes[k->list[j]].incl_ns;
    double whole = parent == TL_CALLTREE_NONE ? sum : fmax((double)t->nodes[parent].incl_ns, sum);
    if (!(whole > 0))
        return 0;
    for (uint32_t j = from; j < to; j++) {
        uint32_t c = k->list[j];
        double cw = w * (double)t->nodes[c].incl_ns / whole;
        if (depth >= TL_FLAME_MAX_ROWS) {
            if (wk->f)
                wk->st->deeper += to - j;
            return 0;
        }
        if (cw >= wk->min_w) {
            if (wk->f == NULL && collect(wk, cw) != 0)
                return -1;
            if (push(stack, n, cap, (item){ c, depth, x, cw }) != 0)
                return -1;
            x += cw;
            continue;
        }
        /* the rest are narrower still (largest first): one merged box */
        double rest_w = 0, rest_ns = 0;
        for (uint32_t r = j; r < to; r++) {
            rest_ns += (double)t->nodes[k->list[r]].incl_ns;
            rest_w += w * (double)t->nodes[k->list[r]].incl_ns / whole;
        }
        if (rest_w >= wk->min_w && rest_w >= 1.0) {
            if (wk->f == NULL) {
                if (collect(wk, rest_w) != 0)
                    return -1;
            } else {
                merged_box(wk, parent, to - j, rest_ns, x, depth, rest_w);
                wk->st->merged += to - j;
                wk->st->merged_ns += rest_ns;
            }
        } else if (wk->f && rest_ns > 0) {
            for (uint32_t r = j; r < to; r++)
                wk->st->omitted += t->nodes[k->list[r]].incl_ns > 0;
            wk->st->omitted_ns += rest_ns;
        }
        break;
    }
    return 0;
}

/* One root's band, depth first, left to right. */
static int band(walk *wk, uint32_t root, item **stack_, size_t *cap)
{
    item *stack = *stack_;
    size_t n = 0;
    int rc = -1;
    if (push(&stack, &n, cap, (item){ root, 0, 0, TL_FLAME_W }) != 0)
        goto out;
    if (wk->f == NULL && collect(wk, TL_FLAME_W) != 0)
        goto out;
    while (n > 0) {
        item it = stack[--n];
        if (wk->f) {
            frame_box(wk, it.node, &it);
            wk->st->drawn++;
        }
        size_t before = n;
        if (children(wk, &stack, &n, cap, it.node, it.x, it.w, it.depth + 1) != 0)
            goto out;
        /* left to right: the leftmost child on top of the stack */
        for (size_t a = before, b = n; b > a + 1; a++, b--) {
            item x = stack[a];
            stack[a] = stack[b - 1];
            stack[b - 1] = x;
        }
    }
    rc = 0;
out:
    *stack_ = stack;
    return rc;
}

/* Every root in a band of its own, the full width each (the kinds nest
 * apart and overlap in time: each root is its own 100 %), largest first. */
static int run(walk *wk)
{
    const tl_calltree *t = wk->fl->tree;
    const tl_calltree_kids *k = wk->fl->kids;
    item *stack = NULL;
    size_t cap = 0;
    int rc = 0;
    wk->y0 = 0;
    for (uint32_t j = k->start[t->n]; rc == 0 && j < k->start[t->n + 1]; j++) {
        if (t->nodes[k->list[j]].incl_ns <= 0)
            continue;
        wk->band_rows = 0;
        rc = band(wk, k->list[j], &stack, &cap);
        wk->y0 += wk->band_rows * TL_FLAME_ROW + TL_FLAME_GAP;
        if (wk->band_rows > wk->st->rows)
            wk->st->rows = wk->band_rows;
    }
    wk->st->height = wk->y0;
    free(stack);
    return rc;
}

static int by_width_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

void tl_svg_flame_write(FILE *f, const tl_svg_frame *fr, const tl_svg_flame *fl, tl_svg_flame_stats *st)
{
    memset(st, 0, sizeof *st);
    walk wk = { fl, 1.0, 0, 0, NULL, NULL, 0, 0, st };
    /* the least width: a pixel, or the budget-th widest frame */
    if (run(&wk) == 0 && fl->max_rects > 0 && wk.nwidths > fl->max_rects) {
        qsort(wk.widths, wk.nwidths, sizeof *wk.widths, by_width_desc);
        wk.min_w = wk.widths[fl->max_rects - 1];
    }
    free(wk.widths);
    wk.widths = NULL;
    st->min_px = wk.min_w;
    /* write into memory first: the height depends on the rows drawn */
    char *body = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&body, &len);
    if (mem == NULL)
        return;
    wk.f = mem;
    run(&wk);
    fclose(mem);
    tl_svg_open(f, fr, "flame", TL_FLAME_W, TOP + st->height);
    fwrite(body, 1, len, f);
    tl_svg_close(f);
    free(body);
}
