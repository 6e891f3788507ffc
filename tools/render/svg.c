/*
 * svg.c - bars, stacked bars and line charts (see svg.h; the timeline is in
 * svg_timeline.c). Layout is in fixed user units inside a viewBox; CSS scales
 * the chart to the page. Text from inputs goes through escape.h.
 */
#include "svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "labels.h"
#include "svg_internal.h"
#include "units.h"

/* ---- common ------------------------------------------------------------------- */

void tl_svg_open(FILE *f, const tl_svg_frame *fr, const char *cls, double w, double h)
{
    fprintf(f,
            "<svg class=\"chart %s\" role=\"img\" aria-labelledby=\"%s-t %s-d\" viewBox=\"0 0 %.0f %.0f\" "
            "width=\"%.0f\" height=\"%.0f\">\n",
            cls, fr->id, fr->id, w, h, w, h);
    fprintf(f, "<title id=\"%s-t\">", fr->id);
    tl_escape_html(f, fr->title);
    fprintf(f, "</title>\n<desc id=\"%s-d\">", fr->id);
    tl_escape_html(f, fr->desc);
    fputs("</desc>\n", f);
}

void tl_svg_close(FILE *f)
{
    fputs("</svg>\n", f);
}

/* A <text> whose content may come from an input, cut to max bytes. */
void tl_svg_text(FILE *f, const char *cls, const char *anchor, double x, double y, const char *s, size_t max)
{
    fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\"", cls, x, y);
    if (anchor)
        fprintf(f, " text-anchor=\"%s\"", anchor);
    fputc('>', f);
    tl_escape_html_n(f, s, max);
    fputs("</text>", f);
}

/* The labels of a chart's rows: distinct, fitted to cols columns
 * (labels.h); NULL when out of memory (callers then cut the raw text). */
static tl_labels *chart_labels(const char *const *names, size_t n, size_t cols)
{
    tl_labels *l = calloc(1, sizeof *l);
    if (l != NULL && tl_labels_make(l, names, n, cols) != 0) {
        free(l);
        return NULL;
    }
    return l;
}

static void chart_labels_free(tl_labels *l)
{
    if (l != NULL)
        tl_labels_release(l);
    free(l);
}

/* Vertical grid lines and labels for [0, max] over x0..x0+w; the step used. */
static void x_ticks(FILE *f, double x0, double w, double y0, double y1, double max, int unit, int ticks)
{
    double step = tl_units_nice_step(max, ticks, unit);
    char b[48];
    for (int i = 0; i * step <= max * 1.0000001 && i < 64; i++) {
        double x = x0 + w * (i * step) / max;
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, y0, x, y1);
        tl_svg_text(f, "tick", "middle", x, y0 - 5, tl_units_tick(b, sizeof b, i * step, step, unit), 0);
    }
    fputc('\n', f);
}

/* ---- horizontal bars ----------------------------------------------------------- */

/* HB_COLS: the label's columns at 12 px (about 6.6 px a character in a
 * proportional font, 7.2 in monospace: 46 fit in HB_LABEL with room). */
enum {
    HB_W = 960,
    HB_LABEL = 340,
    HB_X = 350,
    HB_PLOT = 480,
    HB_ROW = 22,
    HB_TOP = 26,
    HB_COLS = 46,
    HB_TICKS = 5,
    HB_KEY = 22 /* the legend's row */
};
#define HB_LEGEND_CHAR 5.8 /* px a character of a legend at 11 px */

static double bars_max(const tl_svg_bar *bars, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(bars[i].value) && bars[i].value > m)
            m = bars[i].value;
        if (isfinite(bars[i].hi) && bars[i].hi > m)
            m = bars[i].hi;
    }
    return m > 0 ? m : 1;
}

static void bar_title(FILE *f, const tl_svg_bar *b, const char *full, int unit)
{
    char v[48], lo[48], hi[48];
    fputs("<title>", f);
    tl_escape_html_n(f, full, 2000);
    fprintf(f, ": %s", tl_units_fmt(v, sizeof v, b->value, unit));
    if (b->has_self)
        fprintf(f, ", of it self %s", tl_units_fmt(v, sizeof v, b->self, unit));
    if (isfinite(b->lo) && isfinite(b->hi))
        fprintf(f, " (range %s \xe2\x80\x93 %s)", tl_units_fmt(lo, sizeof lo, b->lo, unit),
                tl_units_fmt(hi, sizeof hi, b->hi, unit));
    if (b->note[0]) {
        fputs("; ", f);
        tl_escape_html(f, b->note);
    }
    fputs("</title>", f);
}

/* Self is drawn solid inside the lighter inclusive bar when it is less. */
static int self_drawn(const tl_svg_bar *b)
{
    return b->has_self && isfinite(b->self) && b->self >= 0 && b->self < b->value;
}

static int whisker_drawn(const tl_svg_bar *b)
{
    return isfinite(b->lo) && isfinite(b->hi) && b->hi > b->lo;
}

static void bar_row(FILE *f, const tl_svg_bar *b, const char *full, const char *label, double y, double max, int unit)
{
    char v[48];
    double w = isfinite(b->value) && b->value > 0 ? HB_PLOT * b->value / max : 0;
    fputs("<g class=\"row\">", f);
    bar_title(f, b, full, unit);
    tl_svg_text(f, "lbl", "end", HB_LABEL, y + 11, label, label == b->label ? 3 * HB_COLS / 2 : 0);
    const char *cls = b->cls ? b->cls : "compute";
    if (self_drawn(b)) {
        /* inclusive lighter, self solid from the axis */
        fprintf(f, "<rect class=\"bar incl %s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"14\"/>", cls, HB_X, y + 1,
                w);
        fprintf(f, "<rect class=\"bar %s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"14\"/>", cls, HB_X, y + 1,
                HB_PLOT * b->self / max);
    } else {
        fprintf(f, "<rect class=\"bar %s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"14\"/>", cls, HB_X, y + 1, w);
    }
    double end = HB_X + w;
    if (whisker_drawn(b)) {
        double x1 = HB_X + HB_PLOT * b->lo / max, x2 = HB_X + HB_PLOT * b->hi / max;
        fprintf(f, "<path class=\"whisker\" d=\"M%.1f %.1fv8M%.1f %.1fH%.1fM%.1f %.1fv8\"/>", x1, y + 4, x1, y + 8, x2,
                x2, y + 4);
        if (x2 > end)
            end = x2;
    }
    tl_svg_text(f, "val", NULL, end + 6, y + 12, tl_units_fmt(v, sizeof v, b->value, unit), 0);
    fputs("</g>\n", f);
}

/* The key to what the bars draw, only what some bar draws: the solid self
 * part and the lighter inclusive rest, and the whisker with its meaning. */
static void hbars_legend(FILE *f, const tl_svg_bar *bars, size_t n, const char *whisker, double y)
{
    const char *cls = NULL;
    int range = 0;
    for (size_t i = 0; i < n; i++) {
        if (cls == NULL && self_drawn(&bars[i]))
            cls = bars[i].cls ? bars[i].cls : "compute";
        range |= whisker_drawn(&bars[i]);
    }
    double x = HB_X;
    if (cls != NULL) {
        static const char self[] = "self time", incl[] = "with what runs inside (inclusive)";
        fprintf(f, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\"/>", cls, x, y);
        tl_svg_text(f, "legend", NULL, x + 16, y + 10, self, 0);
        x += 30 + HB_LEGEND_CHAR * (double)strlen(self);
        fprintf(f, "<rect class=\"bar incl %s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\"/>", cls, x, y);
        tl_svg_text(f, "legend", NULL, x + 16, y + 10, incl, 0);
        x += 30 + HB_LEGEND_CHAR * (double)strlen(incl);
    }
    if (range) {
        fprintf(f, "<path class=\"whisker\" d=\"M%.1f %.1fv8M%.1f %.1fH%.1fM%.1f %.1fv8\"/>", x, y + 2, x, y + 6,
                x + 16, x + 16, y + 2);
        tl_svg_text(f, "legend", NULL, x + 22, y + 10, whisker ? whisker : "range", 0);
    }
    fputc('\n', f);
}

void tl_svg_hbars(FILE *f, const tl_svg_frame *fr, const tl_svg_bar *bars, size_t n, int unit, const char *whisker)
{
    double max = bars_max(bars, n);
    /* the axis ends at the tick at or beyond the largest bar or whisker, so
     * every drawn value lies under a labelled part of it */
    double step = tl_units_nice_step(max, HB_TICKS, unit);
    if (step > 0 && isfinite(step))
        max = ceil(max / step * (1 - 1e-9)) * step;
    int keyed = 0;
    for (size_t i = 0; i < n; i++)
        keyed |= self_drawn(&bars[i]) || whisker_drawn(&bars[i]);
    double body = HB_TOP + (double)n * HB_ROW + 6, h = body + (keyed ? HB_KEY : 0);
    const char **names = calloc(n + 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++)
        names[i] = bars[i].label;
    tl_labels *lab = names ? chart_labels(names, n, HB_COLS) : NULL;
    tl_svg_open(f, fr, "hbars", HB_W, h);
    x_ticks(f, HB_X, HB_PLOT, HB_TOP - 4, body - 4, max, unit, HB_TICKS);
    for (size_t i = 0; i < n; i++)
        bar_row(f, &bars[i], lab ? lab->full[i] : bars[i].label, lab ? lab->text[i] : bars[i].label,
                HB_TOP + (double)i * HB_ROW, max, unit);
    if (keyed)
        hbars_legend(f, bars, n, whisker, body + 4);
    tl_svg_close(f);
    chart_labels_free(lab);
    free(names);
}

/* ---- stacked bars -------------------------------------------------------------- */

enum { SB_W = 960, SB_LABEL = 150, SB_X = 160, SB_PLOT = 760, SB_ROW = 24, SB_TOP = 26, SB_COLS = 21 };

static void stack_row(FILE *f, const tl_svg_stack *r, const char *label, double y, int unit)
{
    char v[48], p[32];
    double x = SB_X;
    fputs("<g class=\"row\"><title>", f);
    tl_escape_html_n(f, r->label, 2000);
    fputs("</title>", f);
    tl_svg_text(f, "lbl", "end", SB_LABEL, y + 13, label, label == r->label ? SB_COLS : 0);
    for (int k = 0; k < r->nsegs && r->total > 0; k++) {
        const tl_svg_seg *s = &r->segs[k];
        if (!(s->value > 0))
            continue;
        double w = SB_PLOT * s->value / r->total;
        fprintf(f, "<rect class=\"seg %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\"><title>", s->cls, x,
                y + 2, w);
        tl_escape_html(f, r->label);
        fprintf(f, ": %s %s (%s)</title></rect>", s->name, tl_units_pct(p, sizeof p, 100 * s->value / r->total),
                tl_units_fmt(v, sizeof v, s->value, unit));
        x += w;
    }
    fputs("</g>\n", f);
}

static void legend(FILE *f, const tl_svg_seg *segs, int n, double y)
{
    double x = SB_X;
    for (int k = 0; k < n; k++) {
        fprintf(f, "<rect class=\"seg %s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\"/>", segs[k].cls, x, y);
        tl_svg_text(f, "legend", NULL, x + 16, y + 10, segs[k].name, 0);
        x += 26 + 7.5 * (double)strlen(segs[k].name);
    }
    fputc('\n', f);
}

void tl_svg_stacked(FILE *f, const tl_svg_frame *fr, const tl_svg_stack *rows, size_t n, int unit)
{
    double body = SB_TOP + (double)n * SB_ROW;
    const char **names = calloc(n + 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++)
        names[i] = rows[i].label;
    tl_labels *lab = names ? chart_labels(names, n, SB_COLS) : NULL;
    tl_svg_open(f, fr, "stacked", SB_W, body + 30);
    x_ticks(f, SB_X, SB_PLOT, SB_TOP - 4, body, 100, TL_UNIT_PCT, 4);
    for (size_t i = 0; i < n; i++)
        stack_row(f, &rows[i], lab ? lab->text[i] : rows[i].label, SB_TOP + (double)i * SB_ROW, unit);
    chart_labels_free(lab);
    free(names);
    if (n > 0)
        legend(f, rows[0].segs, rows[0].nsegs, body + 10);
    tl_svg_close(f);
}

/* ---- stacked columns ----------------------------------------------------------- */

enum { SC_W = 960, SC_X = 76, SC_PLOT_W = 864, SC_TOP = 14, SC_PLOT_H = 220, SC_TICKS_X = 24 };

/* One column a row, its segments stacked from the axis up in their order,
 * heights in the unit's time (not shares): a long step reads long. */
void tl_svg_columns(FILE *f, const tl_svg_frame *fr, const tl_svg_stack *cols, size_t n, int unit, const char *xlabel,
                    const char *what)
{
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(cols[i].total) && cols[i].total > max)
            max = cols[i].total;
    double step = tl_units_nice_step(max > 0 ? max : 1, 5, unit);
    if (!(step > 0) || !isfinite(step))
        step = 1;
    double top = ceil((max > 0 ? max : 1) / step * (1 - 1e-9)) * step;
    double base = SC_TOP + SC_PLOT_H, h = base + 62;
    tl_svg_open(f, fr, "columns", SC_W, h);
    char b[48], v[48], p[32];
    for (int i = 0; i * step <= top * 1.0000001 && i < 64; i++) {
        double y = base - SC_PLOT_H * (i * step) / top;
        fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", SC_X, y, SC_X + SC_PLOT_W, y);
        tl_svg_text(f, "tick", "end", SC_X - 6, y + 4, tl_units_tick(b, sizeof b, i * step, step, unit), 0);
    }
    fputc('\n', f);
    /* a few columns stay narrow (one step is not a 600 px block), many get at least a pixel */
    double cw = n ? (double)SC_PLOT_W / (double)n : SC_PLOT_W, bw = cw * 0.72 < 1 ? 1 : cw * 0.72 > 64 ? 64 : cw * 0.72;
    size_t every = n > SC_TICKS_X ? (n + SC_TICKS_X - 1) / SC_TICKS_X : 1;
    for (size_t i = 0; i < n; i++) {
        const tl_svg_stack *c = &cols[i];
        double x = SC_X + cw * (double)i + (cw - bw) / 2, y = base;
        fputs("<g class=\"row\"><title>", f);
        if (what)
            fprintf(f, "%s ", what);
        tl_escape_html_n(f, c->label, 200);
        fprintf(f, ": %s</title>", tl_units_fmt(v, sizeof v, c->total, unit));
        for (int k = 0; k < c->nsegs && c->total > 0; k++) {
            const tl_svg_seg *g = &c->segs[k];
            if (!(g->value > 0))
                continue;
            double sh = SC_PLOT_H * g->value / top;
            y -= sh;
            fprintf(f, "<rect class=\"seg %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", g->cls, x,
                    y, bw, sh);
            if (what)
                fprintf(f, "%s ", what);
            tl_escape_html_n(f, c->label, 200);
            fprintf(f, ": %s %s (%s of %s)</title></rect>", g->name, tl_units_fmt(v, sizeof v, g->value, unit),
                    tl_units_pct(p, sizeof p, 100 * g->value / c->total), tl_units_fmt(b, sizeof b, c->total, unit));
        }
        fputs("</g>", f);
        if (i % every == 0)
            tl_svg_text(f, "tick", "middle", SC_X + cw * ((double)i + 0.5), base + 15, c->label, 12);
        fputc('\n', f);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", SC_X, base, SC_X + SC_PLOT_W,
            base);
    tl_svg_text(f, "axlbl", "middle", SC_X + SC_PLOT_W / 2.0, base + 31, xlabel, 0);
    if (n > 0)
        legend(f, cols[0].segs, cols[0].nsegs, base + 42);
    tl_svg_close(f);
}

/* ---- lines ----------------------------------------------------------------------- */

/* LN_LEGEND_CHARS: a legend entry's text in its 140 px at 11 px (about 6 px a character). */
enum { LN_W = 960, LN_X = 80, LN_PLOT_W = 840, LN_TOP = 16, LN_PLOT_H = 260, LN_LEGEND_COLS = 6, LN_LEGEND_CHARS = 18 };

typedef struct range {
    double x0, x1, y1;
} range;

static range lines_range(const tl_svg_series *s, size_t n)
{
    range r = { INFINITY, -INFINITY, 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < s[i].n; k++) {
            if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
                continue;
            r.x0 = fmin(r.x0, s[i].x[k]);
            r.x1 = fmax(r.x1, s[i].x[k]);
            r.y1 = fmax(r.y1, s[i].y[k]);
        }
    if (!(r.x0 <= r.x1))
        r.x0 = 0, r.x1 = 1;
    if (r.x0 > 0)
        r.x0 = 0; /* steps and times count from the start */
    if (r.x1 <= r.x0)
        r.x1 = r.x0 + 1;
    if (!(r.y1 > 0))
        r.y1 = 1;
    return r;
}

static void lines_axes(FILE *f, const tl_svg_axes *ax, range *r)
{
    char b[48];
    double ys = tl_units_nice_step(r->y1, 5, ax->yunit);
    r->y1 = ceil(r->y1 / ys - 1e-9) * ys;
    for (int i = 0; i * ys <= r->y1 * 1.0000001 && i < 64; i++) {
        double y = LN_TOP + LN_PLOT_H - LN_PLOT_H * (i * ys) / r->y1;
        fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", LN_X, y, LN_X + LN_PLOT_W, y);
        tl_svg_text(f, "tick", "end", LN_X - 6, y + 4, tl_units_tick(b, sizeof b, i * ys, ys, ax->yunit), 0);
    }
    double span = r->x1 - r->x0, xs = tl_units_nice_step(span, 8, ax->xunit);
    if (ax->xunit == TL_UNIT_COUNT && xs < 1)
        xs = 1; /* steps are counted in whole numbers */
    double first = ceil(r->x0 / xs - 1e-9) * xs;
    for (int i = 0; first + i * xs <= r->x1 * (1 + 1e-9) + 1e-9 && i < 64; i++) {
        double v = first + i * xs, x = LN_X + LN_PLOT_W * (v - r->x0) / span;
        fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, LN_TOP + LN_PLOT_H, x,
                LN_TOP + LN_PLOT_H + 5);
        tl_svg_text(f, "tick", "middle", x, LN_TOP + LN_PLOT_H + 18, tl_units_tick(b, sizeof b, v, xs, ax->xunit), 0);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LN_X, LN_TOP + LN_PLOT_H,
            LN_X + LN_PLOT_W, LN_TOP + LN_PLOT_H);
    tl_svg_text(f, "axlbl", "middle", LN_X + LN_PLOT_W / 2.0, LN_TOP + LN_PLOT_H + 36, ax->xlabel, 0);
    fprintf(f, "<text class=\"axlbl\" transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">",
            LN_TOP + LN_PLOT_H / 2);
    tl_escape_html(f, ax->ylabel);
    fputs("</text>\n", f);
}

static void point(FILE *f, const range *r, double x, double y, int *first)
{
    double px = LN_X + LN_PLOT_W * (x - r->x0) / (r->x1 - r->x0);
    double py = LN_TOP + LN_PLOT_H - LN_PLOT_H * y / r->y1;
    fprintf(f, *first ? "%.1f,%.1f" : " %.1f,%.1f", px, py);
    *first = 0;
}

/* The points of a series, thinned to the min and max of each of cols buckets. */
static void polyline(FILE *f, const tl_svg_series *s, const range *r, size_t cols)
{
    int first = 1;
    fputs("<polyline points=\"", f);
    if (s->n <= 2 * cols) {
        for (size_t k = 0; k < s->n; k++)
            if (isfinite(s->x[k]) && isfinite(s->y[k]))
                point(f, r, s->x[k], s->y[k], &first);
        fputs("\"/>", f);
        return;
    }
    size_t k = 0;
    for (size_t c = 0; c < cols && k < s->n; c++) {
        double edge = r->x0 + (r->x1 - r->x0) * (double)(c + 1) / (double)cols;
        size_t lo = SIZE_MAX, hi = SIZE_MAX;
        for (; k < s->n && (s->x[k] <= edge || c + 1 == cols); k++) {
            if (!isfinite(s->y[k]) || !isfinite(s->x[k]))
                continue;
            if (lo == SIZE_MAX || s->y[k] < s->y[lo])
                lo = k;
            if (hi == SIZE_MAX || s->y[k] > s->y[hi])
                hi = k;
        }
        if (lo == SIZE_MAX)
            continue;
        size_t a = lo < hi ? lo : hi, b = lo < hi ? hi : lo;
        point(f, r, s->x[a], s->y[a], &first);
        if (b != a)
            point(f, r, s->x[b], s->y[b], &first);
    }
    fputs("\"/>", f);
}

static void dots(FILE *f, const tl_svg_series *s, const range *r, const tl_svg_axes *ax)
{
    char xb[48], yb[48];
    for (size_t k = 0; k < s->n; k++) {
        if (!isfinite(s->x[k]) || !isfinite(s->y[k]))
            continue;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>",
                LN_X + LN_PLOT_W * (s->x[k] - r->x0) / (r->x1 - r->x0),
                LN_TOP + LN_PLOT_H - LN_PLOT_H * s->y[k] / r->y1);
        tl_escape_html(f, s->label);
        fputs(", ", f);
        tl_escape_html(f, ax->xlabel);
        fprintf(f, " %s: %s</title></circle>", tl_units_fmt(xb, sizeof xb, s->x[k], ax->xunit),
                tl_units_fmt(yb, sizeof yb, s->y[k], ax->yunit));
    }
}

static void lines_legend(FILE *f, const tl_svg_series *s, size_t n, double y)
{
    size_t shown = 0, muted = 0;
    const char **names = calloc(n + 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++)
        names[i] = s[i].label;
    tl_labels *lab = names ? chart_labels(names, n, LN_LEGEND_CHARS) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (n > 12 && strcmp(s[i].cls, "muted") == 0) {
            muted++;
            continue;
        }
        double x = LN_X + (double)(shown % LN_LEGEND_COLS) * 140, yy = y + (double)(shown / LN_LEGEND_COLS) * 18;
        fprintf(f, "<line class=\"series %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", s[i].cls, x, yy,
                x + 18, yy);
        fputs("<g><title>", f);
        tl_escape_html_n(f, s[i].label, 2000);
        fputs("</title>", f);
        tl_svg_text(f, "legend", NULL, x + 24, yy + 4, lab ? lab->text[i] : s[i].label, lab ? 0 : LN_LEGEND_CHARS);
        fputs("</g>", f);
        shown++;
    }
    chart_labels_free(lab);
    free(names);
    if (muted) {
        double x = LN_X + (double)(shown % LN_LEGEND_COLS) * 140, yy = y + (double)(shown / LN_LEGEND_COLS) * 18;
        fprintf(f, "<line class=\"series muted\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, yy, x + 18, yy);
        fprintf(f, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">%zu other ranks</text>", x + 24, yy + 4, muted);
    }
    fputc('\n', f);
}

/* The areas' legend entries: a swatch each, on the rows before the lines'. */
static void areas_legend(FILE *f, const tl_svg_area *a, size_t na, double y)
{
    for (size_t i = 0; i < na; i++) {
        double x = LN_X + (double)(i % LN_LEGEND_COLS) * 140, yy = y + (double)(i / LN_LEGEND_COLS) * 18;
        fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\"/>", a[i].cls, x, yy - 5);
        tl_svg_text(f, "legend", NULL, x + 24, yy + 4, a[i].label, LN_LEGEND_CHARS);
    }
    fputc('\n', f);
}

/* An area between lo and hi: the lows left to right, the highs back; long
 * ones thinned to the lowest low and highest high of each of cols buckets. */
static void area_write(FILE *f, const tl_svg_area *a, const range *r, size_t cols)
{
    fprintf(f, "<g class=\"%s\"><title>", a->cls);
    tl_escape_html(f, a->label);
    fputs("</title><polygon points=\"", f);
    size_t nb = a->n <= 2 * cols ? a->n : cols;
    double *bx = malloc((nb + 1) * sizeof *bx), *blo = malloc((nb + 1) * sizeof *blo),
           *bhi = malloc((nb + 1) * sizeof *bhi);
    size_t m = 0;
    for (size_t c = 0, k = 0; bx && blo && bhi && c < nb && k < a->n; c++) {
        size_t end = a->n <= 2 * cols ? k + 1 : (size_t)((double)a->n * (double)(c + 1) / (double)nb);
        double lo = INFINITY, hi = -INFINITY, x = a->x[k];
        for (; k < end && k < a->n; k++)
            if (isfinite(a->lo[k]) && isfinite(a->hi[k])) {
                lo = fmin(lo, a->lo[k]);
                hi = fmax(hi, a->hi[k]);
            }
        if (lo <= hi)
            bx[m] = x, blo[m] = lo, bhi[m] = hi, m++;
    }
    int first = 1;
    for (size_t k = 0; k < m; k++)
        point(f, r, bx[k], blo[k], &first);
    for (size_t k = m; k-- > 0;)
        point(f, r, bx[k], bhi[k], &first);
    fputs("\"/></g>\n", f);
    free(bx);
    free(blo);
    free(bhi);
}

static size_t legend_entries(const tl_svg_series *s, size_t n)
{
    size_t e = 0, muted = 0;
    for (size_t i = 0; i < n; i++)
        if (n > 12 && strcmp(s[i].cls, "muted") == 0)
            muted++;
        else
            e++;
    return e + (muted > 0);
}

/* The notes: a diamond each, with its label beside it when there are few. */
static void notes_write(FILE *f, const range *r, const tl_svg_axes *ax, const tl_svg_note *nt, size_t n)
{
    char xb[48], yb[48];
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(nt[i].x) || !isfinite(nt[i].y))
            continue;
        double px = LN_X + LN_PLOT_W * (nt[i].x - r->x0) / (r->x1 - r->x0);
        double py = LN_TOP + LN_PLOT_H - LN_PLOT_H * nt[i].y / r->y1;
        fprintf(f, "<g class=\"note series %s\"><title>", nt[i].cls ? nt[i].cls : "s0");
        tl_escape_html_n(f, nt[i].label, 300);
        fprintf(f, ": %s at %s %s</title><path d=\"M%.1f %.1fl4 4l-4 4l-4 -4z\"/>",
                tl_units_fmt(yb, sizeof yb, nt[i].y, ax->yunit), ax->xlabel,
                tl_units_fmt(xb, sizeof xb, nt[i].x, ax->xunit), px, py - 4);
        /* a label once per place: ranks with the same snapshots do not write it twice */
        int again = 0;
        for (size_t k = 0; k < i && !again; k++)
            again = nt[k].x == nt[i].x && fabs(nt[k].y - nt[i].y) <= r->y1 * 0.02 && nt[k].label && nt[i].label &&
                    strcmp(nt[k].label, nt[i].label) == 0;
        if (n <= TL_SVG_NOTE_LABELS && !again) {
            fprintf(f, "<text class=\"notelbl\" transform=\"translate(%.1f %.1f) rotate(-30)\">", px + 3, py - 7);
            tl_escape_html_n(f, nt[i].label, 28);
            fputs("</text>", f);
        }
        fputs("</g>\n", f);
    }
}

static void lines_chart(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_area *areas, size_t na,
                        const tl_svg_series *s, size_t n, const tl_svg_note *notes, size_t nnotes)
{
    range r = lines_range(s, n);
    for (size_t i = 0; i < na; i++) /* the areas: as lines of their highs, for the range */
        for (size_t k = 0; k < areas[i].n; k++) {
            if (!isfinite(areas[i].x[k]) || !isfinite(areas[i].hi[k]))
                continue;
            if (n == 0 && i == 0 && k == 0)
                r.x0 = fmin(0, areas[i].x[k]), r.x1 = areas[i].x[k];
            r.x0 = fmin(r.x0, areas[i].x[k]);
            r.x1 = fmax(r.x1, areas[i].x[k]);
            r.y1 = fmax(r.y1, areas[i].hi[k]);
        }
    if (r.x1 <= r.x0)
        r.x1 = r.x0 + 1;
    for (size_t i = 0; i < nnotes; i++) {
        if (!isfinite(notes[i].x) || !isfinite(notes[i].y))
            continue;
        if (notes[i].x > r.x1)
            r.x1 = notes[i].x;
        if (notes[i].y > r.y1)
            r.y1 = notes[i].y;
    }
    /* room above the highest point and right of the last for the labels */
    if (nnotes > 0 && nnotes <= TL_SVG_NOTE_LABELS) {
        r.y1 *= 1.15;
        r.x1 += (r.x1 - r.x0) * 0.18;
    }
    size_t arows = (na + LN_LEGEND_COLS - 1) / LN_LEGEND_COLS;
    size_t rows = arows + (legend_entries(s, n) + LN_LEGEND_COLS - 1) / LN_LEGEND_COLS;
    double h = LN_TOP + LN_PLOT_H + 48 + (double)rows * 18;
    size_t cols = n ? 6000 / n : 400, total = 0;
    cols = cols < 50 ? 50 : cols > LN_PLOT_W ? LN_PLOT_W : cols;
    for (size_t i = 0; i < n; i++)
        total += s[i].n;
    tl_svg_open(f, fr, "lines", LN_W, h);
    lines_axes(f, ax, &r);
    for (size_t i = 0; i < na; i++)
        area_write(f, &areas[i], &r, LN_PLOT_W / 2);
    for (size_t pass = 0; pass < 2; pass++) /* the straggler last, on top */
        for (size_t i = 0; i < n; i++) {
            if ((strcmp(s[i].cls, "strag") == 0) != (pass == 1))
                continue;
            fprintf(f, "<g class=\"series %s\"><title>", s[i].cls);
            tl_escape_html(f, s[i].label);
            fputs("</title>", f);
            polyline(f, &s[i], &r, cols);
            if (total <= 400)
                dots(f, &s[i], &r, ax);
            fputs("</g>\n", f);
        }
    notes_write(f, &r, ax, notes, nnotes);
    if (na > 0)
        areas_legend(f, areas, na, LN_TOP + LN_PLOT_H + 56);
    lines_legend(f, s, n, LN_TOP + LN_PLOT_H + 56 + (double)arows * 18);
    tl_svg_close(f);
}

void tl_svg_lines_notes(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_series *s, size_t n,
                        const tl_svg_note *notes, size_t nnotes)
{
    lines_chart(f, fr, ax, NULL, 0, s, n, notes, nnotes);
}

void tl_svg_lines_areas(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_area *areas, size_t na,
                        const tl_svg_series *s, size_t n)
{
    lines_chart(f, fr, ax, areas, na, s, n, NULL, 0);
}

void tl_svg_lines(FILE *f, const tl_svg_frame *fr, const tl_svg_axes *ax, const tl_svg_series *s, size_t n)
{
    tl_svg_lines_notes(f, fr, ax, s, n, NULL, 0);
}

const char *tl_svg_kind_class(int kind)
{
    static const char *cls[] = { "compute", "comm", "memory", "other" };
    return kind >= 0 && kind < 4 ? cls[kind] : "other";
}

const char *tl_svg_rank_class(size_t i)
{
    static const char *cls[] = { "s0",       "s1",       "s2",       "s3",      "s4",       "s5",
                                 "s6",       "s7",       "s8 dash",  "s9 dash", "s10 dash", "s11 dash",
                                 "s12 dash", "s13 dash", "s14 dash", "s15 dash" };
    return cls[i % 16];
}
