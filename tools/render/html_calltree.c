/*
 * html_calltree.c - the call tree section: where the CPU-side time went by
 * call path. An icicle graph of the ranks' trees merged (svg_flame.h), one
 * per rank in collapsed <details> (at most TL_FLAME_MAX_RANKS, the straggler
 * first), and a top-down table of the merged tree with the per-rank least
 * and most, bounded in children per node, depth and rows. The trees are the
 * analysis' (calltrees.c): this file only chooses what to show and says
 * what it left out.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "html_sections.h"
#include "svg_flame.h"
#include "units.h"

#define TL_FLAME_MAX_RANKS 16      /* per-rank graphs drawn */
#define TL_FLAME_MERGED_BOXES 1200 /* boxes of the merged graph */
#define TL_FLAME_RANK_BOXES 2400   /* boxes of all per-rank graphs together */
#define TL_TREE_CHILDREN 10        /* children listed per node in the table */
#define TL_TREE_DEPTH 12           /* levels listed */
#define TL_TREE_ROWS 400           /* rows of the table */
#define TL_TREE_NAME_COLS 64       /* a name's columns at depth 0 (less deeper down) */

static void flame_notes(tl_html *h, const tl_svg_flame_stats *st)
{
    char a[48], b[48], px[96];
    snprintf(px, sizeof px, st->min_px > 1.05 ? "%.1f px (the page's budget of boxes)" : "a pixel", st->min_px);
    if (st->merged == 0 && st->omitted == 0 && st->deeper == 0)
        return;
    fputs("<p class=\"more\">", h->f);
    if (st->merged > 0)
        fprintf(h->f,
                "%zu calls narrower than %s are drawn merged in \xe2\x80\x9c\xe2\x80\xa6\xe2\x80\x9d boxes "
                "(%s in all). ",
                st->merged, px, tl_units_dur(a, sizeof a, st->merged_ns));
    if (st->omitted > 0)
        fprintf(h->f,
                "%zu calls too narrow even merged are not drawn (%s in all; their callers' boxes include "
                "it). ",
                st->omitted, tl_units_dur(b, sizeof b, st->omitted_ns));
    if (st->deeper > 0)
        fprintf(h->f, "%zu calls deeper than %d levels are not drawn.", st->deeper, TL_FLAME_MAX_ROWS);
    fputs("</p>\n", h->f);
}

static void flame(tl_html *h, const tl_calltree *t, int nranks, size_t boxes, const char *title, const char *who)
{
    tl_calltree_kids kids;
    if (tl_calltree_kids_build(&kids, t) != 0) {
        h->oom = 1;
        return;
    }
    char id[16], desc[400];
    snprintf(desc, sizeof desc,
             "An icicle graph of %s: the top row holds one box per kind of event, and each "
             "call sits under its caller, as wide as its inclusive time; the part of a box no call below covers is "
             "its self time. Each box's tooltip gives its full name and numbers.",
             who);
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), title, desc };
    tl_svg_flame fl = { t, &kids, boxes, nranks };
    tl_svg_flame_stats st;
    tl_svg_flame_write(h->f, &fr, &fl, &st);
    flame_notes(h, &st);
    tl_calltree_kids_release(&kids);
}

/* ---- the table -------------------------------------------------------------------------- */

typedef struct tree_table {
    tl_html *h;
    const tl_calltree *t;
    tl_calltree_kids kids;
    size_t rows;
    size_t hidden; /* nodes under rows that were cut (not counted in "more" rows) */
    int across;    /* the min/max columns */
} tree_table;

static uint32_t root_of(const tl_calltree *t, uint32_t i)
{
    for (uint32_t guard = 0; t->nodes[i].parent != TL_CALLTREE_NONE && guard < TL_CALLTREE_MAX_NODES; guard++)
        i = t->nodes[i].parent;
    return i;
}

static void node_row(tree_table *tt, uint32_t i, int depth)
{
    FILE *f = tt->h->f;
    const tl_calltree *t = tt->t;
    const tl_cnode *c = &t->nodes[i];
    const tl_cnode *r = &t->nodes[root_of(t, i)];
    int cols = TL_TREE_NAME_COLS - 3 * depth;
    fprintf(f, "<tr><th scope=\"row\" class=\"d%d\">", depth);
    tl_html_code(f, tl_calltree_name(t, i), (size_t)(cols < 16 ? 16 : cols));
    fputs("</th>", f);
    tl_html_td(f, (double)c->incl_ns, TL_UNIT_NS);
    tl_html_td(f, c->parent == TL_CALLTREE_NONE ? NAN : (double)c->self_ns, TL_UNIT_NS);
    fprintf(f, "<td class=\"num\">%llu</td>", (unsigned long long)c->count);
    tl_html_td(f, r->incl_ns > 0 ? 100.0 * (double)c->incl_ns / (double)r->incl_ns : NAN, TL_UNIT_PCT);
    if (tt->across) {
        tl_html_td(f, (double)t->min_ns[i], TL_UNIT_NS);
        tl_html_td(f, (double)t->max_ns[i], TL_UNIT_NS);
    }
    fputs("</tr>\n", f);
}

static void more_row(tree_table *tt, size_t n, double ns, int depth, const char *why)
{
    char a[48];
    fprintf(tt->h->f,
            "<tr class=\"more\"><th scope=\"row\" class=\"d%d\">%zu more %s (%s)</th><td colspan=\"%d\">"
            "</td></tr>\n",
            depth, n, why, tl_units_dur(a, sizeof a, ns), tt->across ? 6 : 4);
}

/* The node's row, then its children's (largest first), depth first. */
static void walk_table(tree_table *tt, uint32_t i, int depth)
{
    if (tt->rows >= TL_TREE_ROWS)
        return;
    node_row(tt, i, depth);
    tt->rows++;
    uint32_t from = tt->kids.start[i], to = tt->kids.start[i + 1];
    if (from == to)
        return;
    if (depth + 1 > TL_TREE_DEPTH) {
        double ns = 0;
        for (uint32_t j = from; j < to; j++)
            ns += (double)tt->t->nodes[tt->kids.list[j]].incl_ns;
        more_row(tt, to - from, ns, depth + 1,
                 to - from == 1 ? "call path deeper than the table lists" : "call paths deeper than the table lists");
        tt->rows++;
        return;
    }
    uint32_t shown = 0;
    for (uint32_t j = from; j < to && shown < TL_TREE_CHILDREN && tt->rows < TL_TREE_ROWS; j++, shown++)
        walk_table(tt, tt->kids.list[j], depth + 1);
    if (from + shown < to) {
        double ns = 0;
        for (uint32_t j = from + shown; j < to; j++)
            ns += (double)tt->t->nodes[tt->kids.list[j]].incl_ns;
        if (tt->rows < TL_TREE_ROWS) {
            more_row(tt, to - from - shown, ns, depth + 1, "callees");
            tt->rows++;
        } else {
            tt->hidden += to - from - shown;
        }
    }
}

static void table(tl_html *h, const tl_calltree *t, int nranks)
{
    FILE *f = h->f;
    tree_table tt = { h, t, { NULL, NULL }, 0, 0, nranks > 1 && t->min_ns != NULL };
    if (tl_calltree_kids_build(&tt.kids, t) != 0) {
        h->oom = 1;
        return;
    }
    tl_html_details(f, "Call tree table");
    fprintf(f,
            "<div class=\"scroll\"><table class=\"calltree\">\n<caption>The call tree%s, top down: each call "
            "path with its inclusive and self time, calls, share of its kind's total%s; at most %d callees per "
            "call, %d levels and %d rows</caption>\n<thead><tr><th scope=\"col\">Call path</th>"
            "<th scope=\"col\">Inclusive</th><th scope=\"col\">Self</th><th scope=\"col\">Calls</th>"
            "<th scope=\"col\">Share</th>%s</tr></thead>\n<tbody>\n",
            nranks > 1 ? " of all ranks (sums)" : "",
            tt.across ? ", and the least and most inclusive time of one rank (a rank without the path counts 0)" : "",
            TL_TREE_CHILDREN, TL_TREE_DEPTH, TL_TREE_ROWS,
            tt.across ? "<th scope=\"col\">Rank min</th><th scope=\"col\">Rank max</th>" : "");
    uint32_t from = tt.kids.start[t->n], to = tt.kids.start[t->n + 1];
    for (uint32_t j = from; j < to; j++)
        walk_table(&tt, tt.kids.list[j], 0);
    fputs("</tbody>\n</table></div>\n", f);
    if (tt.rows >= TL_TREE_ROWS)
        fprintf(f, "<p class=\"more\">The table stops at %d rows; the graph above shows the rest.</p>\n", TL_TREE_ROWS);
    tl_html_details_end(f);
    tl_calltree_kids_release(&tt.kids);
}

/* ---- per rank --------------------------------------------------------------------------- */

static int by_straggler_rank(const void *x, const void *y, void *ctx)
{
    const tl_aggregate *a = ctx;
    const tl_rank_result *p = &a->ranks[*(const size_t *)x], *q = &a->ranks[*(const size_t *)y];
    if (p->straggler != q->straggler)
        return p->straggler ? -1 : 1;
    return p->rank < q->rank ? -1 : p->rank > q->rank;
}

static void per_rank(tl_html *h)
{
    const tl_aggregate *a = h->a;
    size_t *order = malloc((a->nranks + 1) * sizeof *order), n = 0;
    if (order == NULL) {
        h->oom = 1;
        return;
    }
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].calltree != NULL)
            order[n++] = i;
    qsort_r(order, n, sizeof *order, by_straggler_rank, (void *)a);
    size_t shown = n < TL_FLAME_MAX_RANKS ? n : TL_FLAME_MAX_RANKS;
    fprintf(h->f, "<h3>Per rank</h3>\n");
    for (size_t k = 0; k < shown; k++) {
        const tl_rank_result *r = &a->ranks[order[k]];
        char summary[160], title[96], who[48], d[48];
        tl_aggregate_hold_rank(a, r); /* a rank of one session: its tree is that session's bulk (spill.h) */
        const tl_calltree *t = r->calltree;
        double top = 0;
        for (uint32_t i = 0; i < t->n; i++)
            if (t->nodes[i].parent == TL_CALLTREE_NONE && (double)t->nodes[i].incl_ns > top)
                top = (double)t->nodes[i].incl_ns;
        snprintf(summary, sizeof summary, "Rank %d%s \xc2\xb7 %u call paths \xc2\xb7 largest root %s", r->rank,
                 r->straggler ? " (straggler)" : "", t->n, tl_units_dur(d, sizeof d, top));
        snprintf(title, sizeof title, "Call tree of rank %d", r->rank);
        snprintf(who, sizeof who, "rank %d's CPU-side calls", r->rank);
        tl_html_details(h->f, summary);
        flame(h, t, 0, TL_FLAME_RANK_BOXES / shown, title, who);
        tl_html_details_end(h->f);
        tl_aggregate_drop_rank(a, r);
    }
    tl_html_more(h, shown, n,
                 "ranks not drawn (the page draws the call trees of at most 16 ranks, the straggler first)");
    free(order);
}

/* The kinds the tree has (a root's, or a call's nested under another
 * kind: operators under annotations), each in its hue, in the order of the bands. */
static void legend_kinds(tl_html *h, const tl_calltree *t)
{
    static const int order[] = { TL_CTK_ANNOTATIONS,     TL_CTK_OPS,     TL_CTK_PYTHON,
                                 TL_CTK_GPU_ANNOTATIONS, TL_CTK_RUNTIME, TL_CTK_OTHER };
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const char *label = tl_calltree_kind_label(order[k]);
        int present = 0;
        for (uint32_t i = 0; i < t->n && !present; i++)
            present = t->nodes[i].parent == TL_CALLTREE_NONE ? strcmp(tl_calltree_name(t, i), label) == 0
                                                             : t->nodes[i].kind == order[k];
        if (!present)
            continue;
        fprintf(h->f, " <span class=\"key %s\">", tl_svg_flame_kind_class(label));
        tl_escape_html(h->f, label);
        fputs("</span>", h->f);
    }
    fputs(";", h->f);
}

void tl_html_calltree(tl_html *h)
{
    const tl_aggregate *a = h->a;
    const tl_calltree *t = &a->calltree;
    char title[96], who[96];
    tl_html_open(h, "calltree", "Call tree");
    if (t->n == 0) {
        tl_html_none(h, "No call tree: the inputs have no nested CPU-side events (sections, operators, "
                        "annotations, Python frames), or their nesting could not be read.");
        tl_html_close(h);
        return;
    }
    fputs("<p>Where the CPU-side time went, by call path, one tree per thread: operators nest in the annotations "
          "and sections that contain them in time, Python frames and GPU annotations each in themselves; a call "
          "that nothing contains is under its kind's root. A box is as wide as its inclusive time; "
          "the part of it no call below covers is its self time. Its hue is its kind:",
          h->f);
    legend_kinds(h, t);
    fputs(" and its shade says how large its self time is: "
          "<span class=\"key f0\">self &lt; 5%</span> <span class=\"key f1\">5\xe2\x80\x93"
          "25%</span> "
          "<span class=\"key f2\">25\xe2\x80\x93"
          "60%</span> <span class=\"key f3\">\xe2\x89\xa5 60%</span>. "
          "Hover a box for its full name and numbers.</p>\n",
          h->f);
    if (a->calltree_ranks > 1) {
        snprintf(title, sizeof title, "Call tree of %d ranks, merged", a->calltree_ranks);
        snprintf(who, sizeof who, "the CPU-side calls of %d ranks, summed path by path", a->calltree_ranks);
        fprintf(h->f, "<h3>All ranks, merged</h3>\n<p>The ranks' trees summed path by path; the tooltips also "
                      "give the least and most of one rank.</p>\n");
    } else {
        snprintf(title, sizeof title, "Call tree");
        for (size_t i = 0; i < a->nranks; i++)
            if (a->ranks[i].calltree)
                snprintf(title, sizeof title, "Call tree of rank %d", a->ranks[i].rank);
        snprintf(who, sizeof who, "the CPU-side calls");
    }
    flame(h, t, a->calltree_ranks, TL_FLAME_MERGED_BOXES, title, who);
    if (t->dropped > 0)
        fprintf(h->f,
                "<p class=\"more\">%llu calls are not in the tree: an input had more than %u call paths "
                "(TL_CALLTREE_MAX_NODES); their time is in their callers' inclusive time.</p>\n",
                (unsigned long long)t->dropped, TL_CALLTREE_MAX_NODES);
    table(h, t, a->calltree_ranks);
    if (a->calltree_ranks > 1)
        per_rank(h);
    tl_html_close(h);
}
