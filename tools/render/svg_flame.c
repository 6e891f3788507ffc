/*
 * svg_flame.c - the icicle graph of a call tree (see svg_flame.h).
 *
 * Two walks over the same layout: the first collects the widths of every
 * frame of at least a pixel to choose the least width drawn within the
 * budget, the second writes the boxes. Widths never grow going down (a
 * child's share of its parent is at most the parent's width; children whose
 * times add up to more than their parent's, which only a hostile partial can
 * give, are scaled to fit), so the frames drawn always include their parents.
 *
 * A frame's hue is its category: each band is a <g> of its root's kind's
 * class, and a frame of another kind (an operator under an annotation) has
 * its own kind's class too; its shade its self share of its inclusive time (the
 * frame's class); report.css holds the colors, light and dark. Labels are
 * chosen for the frames drawn as a set, between the two walks (a third walk
 * lists them): each fitted to its box, and where two different names would
 * read the same, the label shortener's labels for the names that collide
 * (labels.h), so no two visible labels of different names are the same text.
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
#define TL_FLAME_LABEL_SET 64 /* names of one colliding label relabelled together */

struct drawn {
    uint32_t node;
    double w;
};

enum walk_mode { WALK_WIDTHS, WALK_FRAMES, WALK_WRITE };

typedef struct walk {
    const tl_svg_flame *fl;
    int mode;
    char **labels;       /* per node: the label of its frame (NULL: none) */
    struct drawn *drawn; /* WALK_FRAMES: the frames drawn, roots aside */
    size_t ndrawn, drawn_cap;
    double min_w;
    double y0;      /* the top of the current root's band */
    int band_rows;  /* levels drawn in it */
    FILE *f;        /* NULL: collect widths only */
    double *widths; /* collect: the widths of frames of at least a pixel */
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

/* The CSS class of a kind (calltree.h's enum). */
static const char *kind_class(int kind)
{
    switch (kind) {
    case TL_CTK_OPS:
        return "ko";
    case TL_CTK_ANNOTATIONS:
        return "ka";
    case TL_CTK_PYTHON:
        return "kp";
    case TL_CTK_GPU_ANNOTATIONS:
        return "kg";
    case TL_CTK_RUNTIME:
        return "kr";
    default:
        return "ke";
    }
}

const char *tl_svg_flame_kind_class(const char *root_name)
{
    return kind_class(root_name != NULL ? tl_calltree_kind_of_label(root_name) : TL_CTK_OTHER);
}

/* ---- labels: chosen for the frames drawn as a set ------------------------------------- */

typedef struct lab {
    uint32_t node;
    size_t cols; /* the box's columns */
    char *full;  /* the name whole (demangled) */
    char *text;  /* its label, NULL: none */
} lab;

static int by_text(const void *x, const void *y)
{
    const lab *a = x, *b = y;
    if ((a->text == NULL) != (b->text == NULL))
        return a->text == NULL ? 1 : -1;
    int c = a->text ? strcmp(a->text, b->text) : 0;
    if (c == 0)
        c = strcmp(a->full, b->full);
    return c != 0 ? c : a->node < b->node ? -1 : a->node > b->node;
}

/* The end of the run of labels reading as v[from]'s, and whether it holds
 * more than one name. */
static size_t same_text(const lab *v, size_t n, size_t from, int *names)
{
    size_t to = from + 1;
    *names = 0;
    while (to < n && v[to].text != NULL && strcmp(v[to].text, v[from].text) == 0) {
        *names |= strcmp(v[to].full, v[from].full) != 0;
        to++;
    }
    return to;
}

/* Relabel the run v[from, to) of one text and several names with the
 * shortener's labels of its names (at most TL_FLAME_LABEL_SET of them, the
 * rest unlabelled); a label wider than its box is dropped. */
static int relabel(lab *v, size_t from, size_t to)
{
    const char *names[TL_FLAME_LABEL_SET];
    size_t nn = 0, cols = SIZE_MAX;
    for (size_t i = from; i < to; i++) {
        if (nn == 0 || strcmp(v[i].full, names[nn - 1]) != 0) {
            if (nn == TL_FLAME_LABEL_SET)
                break;
            names[nn++] = v[i].full;
        }
        cols = v[i].cols < cols ? v[i].cols : cols;
    }
    tl_labels l;
    if (tl_labels_make(&l, names, nn, cols) != 0)
        return -1;
    size_t k = 0;
    for (size_t i = from; i < to; i++) {
        while (k < nn && strcmp(v[i].full, names[k]) != 0)
            k++;
        free(v[i].text);
        v[i].text = k < nn && tl_labels_cols(l.text[k]) <= v[i].cols ? strdup(l.text[k]) : NULL;
    }
    tl_labels_release(&l);
    return 0;
}

/* The labels of the frames drawn, by node (malloc'd, t->n entries), or NULL
 * when out of memory (the frames are then drawn without labels). */
static char **frame_labels(const tl_calltree *t, const struct drawn *d, size_t n)
{
    char **out = calloc(t->n ? t->n : 1, sizeof *out);
    lab *v = calloc(n ? n : 1, sizeof *v);
    int ok = out != NULL && v != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        double cols = floor((d[i].w - 6.0) / TL_FLAME_CHAR_PX);
        v[i].node = d[i].node;
        v[i].cols = cols >= 1 ? (size_t)fmin(cols, 4096) : 0;
        v[i].full = tl_labels_full(tl_calltree_name(t, d[i].node));
        ok = v[i].full != NULL;
        if (ok && v[i].cols > 0)
            v[i].text = tl_labels_box(v[i].full, v[i].cols);
    }
    /* twice: the shortener's labels could meet another run's; what still
     * reads the same after the second is left to the first name */
    for (int round = 0; ok && round < 2; round++) {
        qsort(v, n, sizeof *v, by_text);
        for (size_t i = 0; ok && i < n && v[i].text != NULL;) {
            int names;
            size_t to = same_text(v, n, i, &names);
            if (names && round == 0) {
                ok = relabel(v, i, to) == 0;
            } else if (names) {
                for (size_t j = i + 1; j < to; j++)
                    if (strcmp(v[j].full, v[i].full) != 0) {
                        free(v[j].text);
                        v[j].text = NULL;
                    }
            }
            i = to;
        }
    }
    for (size_t i = 0; ok && i < n; i++) {
        out[v[i].node] = v[i].text;
        v[i].text = NULL;
    }
    for (size_t i = 0; v != NULL && i < n; i++) {
        free(v[i].full);
        free(v[i].text);
    }
    free(v);
    if (!ok) {
        for (uint32_t i = 0; out != NULL && i < t->n; i++)
            free(out[i]);
        free(out);
        out = NULL;
    }
    return out;
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
    /* a frame of another kind than its band's (an operator under an
     * annotation) carries its own kind's class: its hue */
    const tl_cnode *r0 = &t->nodes[root_of(t, i)];
    if (!root && c->kind != r0->kind)
        fprintf(f, "<g class=\"%s %s\"><title>", self_class(c), kind_class(c->kind));
    else
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
        label = wk->labels && wk->labels[i] ? strdup(wk->labels[i]) : NULL;
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

static int record(walk *wk, uint32_t node, double w)
{
    if (tl_array_grow(&wk->drawn, wk->ndrawn, &wk->drawn_cap, sizeof *wk->drawn, 256) != 0)
        return -1;
    wk->drawn[wk->ndrawn++] = (struct drawn){ node, w };
    return 0;
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
            if (wk->mode == WALK_WRITE)
                wk->st->deeper += to - j;
            return 0;
        }
        if (cw >= wk->min_w) {
            if (wk->mode == WALK_WIDTHS && collect(wk, cw) != 0)
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
            if (wk->mode == WALK_WIDTHS) {
                if (collect(wk, rest_w) != 0)
                    return -1;
            } else if (wk->mode == WALK_WRITE) {
                merged_box(wk, parent, to - j, rest_ns, x, depth, rest_w);
                wk->st->merged += to - j;
                wk->st->merged_ns += rest_ns;
            }
        } else if (wk->mode == WALK_WRITE && rest_ns > 0) {
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
    if (wk->mode == WALK_WIDTHS && collect(wk, TL_FLAME_W) != 0)
        goto out;
    while (n > 0) {
        item it = stack[--n];
        if (wk->mode == WALK_WRITE) {
            frame_box(wk, it.node, &it);
            wk->st->drawn++;
        } else if (wk->mode == WALK_FRAMES && it.node != root && record(wk, it.node, it.w) != 0) {
            goto out;
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
        if (wk->mode == WALK_WRITE)
            fprintf(wk->f, "<g class=\"band %s\">\n", tl_svg_flame_kind_class(tl_calltree_name(t, k->list[j])));
        rc = band(wk, k->list[j], &stack, &cap);
        if (wk->mode == WALK_WRITE)
            fputs("</g>\n", wk->f);
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
    walk wk = { .fl = fl, .mode = WALK_WIDTHS, .min_w = 1.0, .st = st };
    /* the least width: a pixel, or the budget-th widest frame */
    if (run(&wk) == 0 && fl->max_rects > 0 && wk.nwidths > fl->max_rects) {
        qsort(wk.widths, wk.nwidths, sizeof *wk.widths, by_width_desc);
        wk.min_w = wk.widths[fl->max_rects - 1];
    }
    free(wk.widths);
    wk.widths = NULL;
    st->min_px = wk.min_w;
    /* the frames drawn, then their labels as a set */
    wk.mode = WALK_FRAMES;
    if (run(&wk) == 0)
        wk.labels = frame_labels(fl->tree, wk.drawn, wk.ndrawn);
    free(wk.drawn);
    wk.mode = WALK_WRITE;
    /* write into memory first: the height depends on the rows drawn */
    char *body = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&body, &len);
    if (mem == NULL)
        return;
    wk.f = mem;
    run(&wk);
    fclose(mem);
    if (wk.labels != NULL)
        for (uint32_t i = 0; i < fl->tree->n; i++)
            free(wk.labels[i]);
    free(wk.labels);
    tl_svg_open(f, fr, "flame", TL_FLAME_W, TOP + st->height);
    fwrite(body, 1, len, f);
    tl_svg_close(f);
    free(body);
}
