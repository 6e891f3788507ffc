/*
 * html_breakdown.c - time by name: the stage/op breakdown (sections, ops,
 * runtime calls, ... as bars) and the kernel breakdown. A bar is the mean of
 * the per-rank totals, with a whisker from the least to the most of them, so
 * the chart shows both what dominates and how unequal the ranks are. Bars
 * are ordered by what they draw (the time per rank); the tables are sorted
 * by total time over all ranks (docs/architecture.md: total finds the
 * bottleneck). Names are labels (labels.h): distinct, demangled, the full name
 * beside them.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "labels.h"
#include "html_sections.h"
#include "report_text.h"
#include "svg.h"
#include "units.h"

static double row_median(const tl_name_row *r)
{
    return r->exact ? tl_dur_stat_quantile(&r->all, 0.5) : NAN;
}

static double row_p95(const tl_name_row *r)
{
    return r->exact ? tl_dur_stat_quantile(&r->all, 0.95) : NAN;
}

static void bar_of(tl_svg_bar *b, const tl_name_row *r, int nranks, const char *cls)
{
    char t[48];
    memset(b, 0, sizeof *b);
    b->label = r->name;
    b->value = r->rank_mean;
    b->lo = r->nranks_with > 1 ? r->rank_min : NAN;
    b->hi = r->nranks_with > 1 ? r->rank_max : NAN;
    b->cls = cls;
    /* the mean self time per rank, drawn when every rank with the name knows it */
    int known = r->self_total >= 0 && r->rank_self != NULL;
    for (int i = 0; known && i < nranks; i++)
        known = r->rank_count[i] == 0 || r->rank_self[i] >= 0;
    if (known && r->nranks_with > 0) {
        b->has_self = 1;
        b->self = r->self_total / r->nranks_with;
    }
    int n = snprintf(b->note, sizeof b->note, "total %s in %llu calls on %d rank%s",
                     tl_units_dur(t, sizeof t, (double)r->all.total), (unsigned long long)r->all.count, r->nranks_with,
                     r->nranks_with == 1 ? "" : "s");
    if (r->nranks_with > 1 && n > 0 && (size_t)n < sizeof b->note)
        snprintf(b->note + n, sizeof b->note - (size_t)n, "; least on rank %d, most on rank %d, imbalance %.2fx",
                 r->rank_of_min, r->rank_of_max, r->imbalance);
}

/* Larger time per rank first; equal ones by total, then by name. */
static int by_rank_mean(const void *x, const void *y, void *ctx)
{
    const tl_name_table *t = ctx;
    const tl_name_row *a = &t->rows[*(const size_t *)x], *b = &t->rows[*(const size_t *)y];
    if (a->rank_mean != b->rank_mean)
        return a->rank_mean < b->rank_mean ? 1 : -1;
    if (a->all.total != b->all.total)
        return a->all.total < b->all.total ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The bars of the rows with the most time per rank, in the order of what
 * they draw; kernel bars take their class from the kernel type. */
static void chart(tl_html *h, const size_t *idx, size_t n, size_t total, const char *what, int kernels)
{
    const tl_name_table *t = &h->a->names;
    size_t k = n < TL_HTML_TOP ? n : TL_HTML_TOP;
    tl_svg_bar *bars = calloc(k + 1, sizeof *bars);
    size_t *order = malloc((n + 1) * sizeof *order);
    if (bars == NULL || order == NULL) {
        h->oom = 1;
        free(bars);
        free(order);
        return;
    }
    memcpy(order, idx, n * sizeof *order);
    qsort_r(order, n, sizeof *order, by_rank_mean, (void *)t);
    for (size_t i = 0; i < k; i++) {
        const tl_name_row *r = &t->rows[order[i]];
        bar_of(&bars[i], r, t->nranks, kernels ? tl_svg_kind_class(tl_kernel_type(h->a, r->name)) : "compute");
    }
    char id[16], title[96], desc[320];
    snprintf(title, sizeof title, "Top %zu %s by time per rank", k, what);
    snprintf(desc, sizeof desc,
             "%zu of %zu %s, sorted by the mean of the per-rank totals, which each bar draws; "
             "the whisker spans the least and the most of them; where the input nests, the solid part is self time "
             "and the lighter rest the time of what runs inside.",
             k, total, what);
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), title, desc };
    tl_svg_hbars(h->f, &fr, bars, k, TL_UNIT_NS, "range over ranks: least to most per rank");
    free(bars);
    free(order);
}

static void table_head(FILE *f, const char *caption, int kernels)
{
    fprintf(f,
            "<div class=\"scroll\"><table class=\"names\">\n<caption>%s</caption>\n<thead><tr>"
            "<th scope=\"col\">Name</th>%s<th scope=\"col\">Calls</th><th scope=\"col\">Total</th>"
            "<th scope=\"col\">Self</th>"
            "<th scope=\"col\">Mean</th><th scope=\"col\">Median</th><th scope=\"col\">p95</th>"
            "<th scope=\"col\">Ranks</th><th scope=\"col\">Rank min</th><th scope=\"col\">Rank mean</th>"
            "<th scope=\"col\">Rank max</th><th scope=\"col\">Imbalance</th></tr></thead>\n<tbody>\n",
            caption, kernels ? "<th scope=\"col\">Type</th>" : "");
}

static void table_row(FILE *f, const tl_aggregate *a, const tl_name_row *r, const char *label, const char *full,
                      int kernels)
{
    char b[48];
    fputs("<tr><th scope=\"row\">", f);
    tl_html_name_cell(f, label, full);
    fputs("</th>", f);
    if (kernels) {
        int type = tl_kernel_type(a, r->name);
        fprintf(f, "<td>%s</td>", type >= 0 ? tl_kernel_type_name(type) : "\xe2\x80\x93");
    }
    fprintf(f, "<td class=\"num\">%llu</td>", (unsigned long long)r->all.count);
    /* Total is inclusive (a name nested in itself counts once); self is
     * without its children, "-" where the input does not nest. */
    tl_html_td(f, r->incl_total, TL_UNIT_NS);
    tl_html_td(f, r->self_total >= 0 ? r->self_total : NAN, TL_UNIT_NS);
    tl_html_td(f, r->all.mean, TL_UNIT_NS);
    tl_html_td(f, row_median(r), TL_UNIT_NS);
    tl_html_td(f, row_p95(r), TL_UNIT_NS);
    fprintf(f, "<td class=\"num\">%d</td>", r->nranks_with);
    fprintf(f, "<td class=\"num\">%s<small class=\"rk\">rank %d</small></td>", tl_units_dur(b, sizeof b, r->rank_min),
            r->rank_of_min);
    tl_html_td(f, r->rank_mean, TL_UNIT_NS);
    fprintf(f, "<td class=\"num\">%s<small class=\"rk\">rank %d</small></td>", tl_units_dur(b, sizeof b, r->rank_max),
            r->rank_of_max);
    tl_html_td(f, r->imbalance, TL_UNIT_RATIO);
    fputs("</tr>\n", f);
}

/* Rows [from, cap) of idx. */
static void table(tl_html *h, const size_t *idx, size_t n, size_t from, size_t cap, const char *caption, int kernels)
{
    size_t end = n < cap ? n : cap, m = end > from ? end - from : 0;
    const char **names = calloc(m + 1, sizeof *names);
    tl_labels lab = { 0 };
    for (size_t i = 0; names && i < m; i++)
        names[i] = h->a->names.rows[idx[from + i]].name;
    if (names == NULL || tl_labels_make(&lab, names, m, TL_HTML_LABEL_COLS) != 0) {
        h->oom = 1;
        free(names);
        return;
    }
    table_head(h->f, caption, kernels);
    for (size_t i = 0; i < m; i++)
        table_row(h->f, h->a, &h->a->names.rows[idx[from + i]], lab.text[i], lab.full[i], kernels);
    tl_labels_release(&lab);
    free(names);
    fputs("</tbody>\n</table></div>\n", h->f);
    if (n > cap && cap == TL_HTML_MAX_ROWS)
        tl_html_more(h, cap, n, "names not listed");
}

static const struct {
    int group;
    const char *title, *what;
} groups[] = {
    { TL_GROUP_SECTIONS, "Sections and stages", "sections" },
    { TL_GROUP_OPS, "Operators", "ops" },
    { TL_GROUP_GPU_ANNOTATIONS, "GPU annotations", "GPU annotations" },
    { TL_GROUP_RUNTIME, "Runtime calls", "runtime calls" },
    { TL_GROUP_PYTHON, "Python functions", "Python functions" },
    { TL_GROUP_ITERATIONS, "Iteration loops", "iteration loops" },
    { TL_GROUP_OTHER, "Other events", "other events" },
};

static int group_block(tl_html *h, size_t g)
{
    size_t n;
    size_t *idx = tl_name_table_top(&h->a->names, groups[g].group, &n);
    if (idx == NULL) {
        h->oom = 1;
        return 0;
    }
    if (n > 0) {
        char caption[160];
        fprintf(h->f, "<h3>%s</h3>\n", groups[g].title);
        chart(h, idx, n, n, groups[g].what, 0);
        snprintf(caption, sizeof caption,
                 "The %s of the chart and more: call statistics over all ranks, and "
                 "the per-rank totals across ranks",
                 groups[g].what);
        tl_html_details(h->f, "Data table");
        table(h, idx, n, 0, TL_HTML_MAX_ROWS, caption, 0);
        tl_html_details_end(h->f);
    }
    free(idx);
    return n > 0;
}

void tl_html_breakdown(tl_html *h)
{
    int any = 0;
    tl_html_open(h, "breakdown", "Stages and ops");
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        any |= group_block(h, g);
    if (!any)
        tl_html_none(h, "No sections, stages or ops in the inputs.");
    tl_html_shapes(h);
    tl_html_close(h);
}

void tl_html_kernels(tl_html *h)
{
    size_t n;
    size_t *idx = tl_name_table_top(&h->a->names, TL_GROUP_KERNELS, &n);
    tl_html_open(h, "kernels", "Kernels");
    if (idx == NULL) {
        h->oom = 1;
        free(idx);
        tl_html_close(h);
        return;
    }
    if (n == 0) {
        tl_html_none(h, "No GPU kernels in the inputs.");
    } else {
        fputs("<p>Kernels, memory copies and sets inside the GPU window, colored by kernel type "
              "(<span class=\"key compute\">compute</span>, <span class=\"key comm\">communication</span>, "
              "<span class=\"key memory\">memory</span>, <span class=\"key other\">other</span>).</p>\n",
              h->f);
        chart(h, idx, n, n, "kernels", 1);
        table(h, idx, n, 0, TL_HTML_TOP,
              "The top kernels by total time: call statistics over all ranks, and the "
              "per-rank totals across ranks (least, mean, most, imbalance = max / mean)",
              1);
        if (n > TL_HTML_TOP) {
            char summary[64];
            snprintf(summary, sizeof summary, "%zu more kernels",
                     (n < TL_HTML_MAX_ROWS ? n : TL_HTML_MAX_ROWS) - TL_HTML_TOP);
            tl_html_details(h->f, summary);
            table(h, idx, n, TL_HTML_TOP, TL_HTML_MAX_ROWS, "The next kernels by total time", 1);
            tl_html_details_end(h->f);
        }
        tl_html_kernel_launches(h, idx, n);
    }
    free(idx);
    tl_html_close(h);
}
