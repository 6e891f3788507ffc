/*
 * svg_timeline.c - swimlanes at pixel resolution (see svg.h).
 *
 * The one idea: a lane is drawn as runs, not events. Adjacent columns of the
 * same kind and busy level form one run, and every run of one (kind, level)
 * in a lane goes into a single <path> as "M x y h len": a horizontal stroke
 * as thick as the lane. The lanes sit in a nested <svg> whose viewBox is
 * columns wide and that the browser stretches to the plot's width, so the
 * path coordinates are small integers whatever the time range. A lane costs
 * at most a few bytes per column, and nothing per event.
 */
#include <math.h>
#include <string.h>

#include <stdlib.h>

#include "escape.h"
#include "labels.h"
#include "svg.h"
#include "svg_internal.h"
#include "units.h"

enum {
    TL_W = 1200,
    TL_LABEL = 214,
    TL_X = 220,
    TL_PLOT = 960,
    TL_LANE = 12,
    TL_ROW = 14,
    TL_GAP = 6,
    TL_TOP = 6,
    TL_CALL_ROW = 15
};
#define TL_LEVELS 5
#define TL_CALL_CHAR_PX 6.6 /* a call label's character at 10 px monospace, with room */
#define TL_KEY_CHAR_PX 5.8  /* a legend's character at 11 px */
#define TL_KEY 22           /* the legend's row under the axis */

/* The height of a lane: its band and its rows of calls. */
static double lane_height(const tl_svg_lane *l)
{
    return TL_ROW + (l->calls ? l->rows * TL_CALL_ROW : 0);
}

/* y of the top of each lane, with a gap before each group. */
static double lane_top(const tl_svg_timeline *t, size_t i, double *acc)
{
    if (i > 0 && t->lanes[i].group_start)
        *acc += TL_GAP;
    double y = *acc;
    *acc += lane_height(&t->lanes[i]);
    return y;
}

/* A CPU lane's calls under its band, in page coordinates (the plot's
 * nested <svg> stretches, which text must not). */
static void lane_calls(FILE *f, const tl_svg_timeline *t, const tl_svg_lane *l, double y)
{
    double px = (double)TL_PLOT / t->ncols;
    char d[48];
    for (size_t i = 0; i < l->ncalls; i++) {
        const tl_svg_call *c = &l->calls[i];
        double x = TL_X + c->c0 * px, w = (c->c1 - c->c0) * px;
        double cy = TL_TOP + y + TL_ROW + c->row * TL_CALL_ROW;
        if (x + w > TL_X + TL_PLOT)
            w = TL_X + TL_PLOT - x;
        char *full = tl_labels_full(c->name);
        const char *name = full ? full : c->name;
        fputs("<g class=\"call\"><title>", f);
        tl_escape_html_n(f, name, 2000);
        fprintf(f, "\n%s</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\"/>",
                tl_units_dur(d, sizeof d, c->dur_ns), x, cy, w > 1.5 ? w - 0.5 : w, TL_CALL_ROW - 1);
        double cols = floor((w - 5) / TL_CALL_CHAR_PX);
        char *label = cols >= 1 ? tl_labels_box(name, (size_t)cols) : NULL;
        if (label != NULL) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.0f\">", x + 2.5, cy + 10.5);
            tl_escape_html(f, label);
            fputs("</text>", f);
        }
        free(label);
        fputs("</g>\n", f);
        free(full);
    }
}

static const char *lane_class(int kind)
{
    return kind == TL_SVG_KIND_WAIT ? "wait" : tl_svg_kind_class(kind);
}

static void lane_paths(FILE *f, const tl_svg_lane *l, int ncols, double y)
{
    for (int kind = 0; kind <= TL_SVG_KIND_WAIT; kind++)
        for (int lv = 1; lv < TL_LEVELS; lv++) {
            int open = 0;
            for (int c = 0; c < ncols;) {
                if (l->kind[c] != kind || l->level[c] != lv) {
                    c++;
                    continue;
                }
                int e = c + 1;
                while (e < ncols && l->kind[e] == kind && l->level[e] == lv)
                    e++;
                if (!open)
                    fprintf(f, "<path class=\"%s l%d\" d=\"", lane_class(kind), lv);
                fprintf(f, "M%d %.0fh%d", c, y + TL_LANE / 2.0, e - c);
                open = 1;
                c = e;
            }
            if (open)
                fputs("\"/>", f);
        }
}

static void lanes(FILE *f, const tl_svg_timeline *t, double h)
{
    fprintf(f,
            "<svg class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "preserveAspectRatio=\"none\" shape-rendering=\"crispEdges\">\n",
            TL_X, TL_TOP, TL_PLOT, h, t->ncols, h);
    double acc = 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        const tl_svg_lane *l = &t->lanes[i];
        double y = lane_top(t, i, &acc);
        fputs("<g><title>", f);
        tl_escape_html_n(f, l->label, 300);
        fputs(": ", f);
        tl_escape_html(f, l->note);
        fprintf(f, "</title><rect class=\"lane\" x=\"0\" y=\"%.0f\" width=\"%d\" height=\"%d\"/>", y, t->ncols,
                TL_LANE);
        lane_paths(f, l, t->ncols, y);
        fputs("</g>\n", f);
    }
    fputs("</svg>\n", f);
}

/* TL_COLS: a lane label's columns in TL_LABEL px at 10.5 px (about 5.5 px a
 * character, up to 6 for digits: 38 ran out of the chart on thread ids). */
#define TL_COLS 35

static void labels(FILE *f, const tl_svg_timeline *t)
{
    double acc = 0;
    const char **names = calloc(t->nlanes + 1, sizeof *names);
    tl_labels lab = { 0 };
    for (size_t i = 0; names && i < t->nlanes; i++)
        names[i] = t->lanes[i].label;
    int ok = names != NULL && tl_labels_make(&lab, names, t->nlanes, TL_COLS) == 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        double y = TL_TOP + lane_top(t, i, &acc);
        if (i > 0 && t->lanes[i].group_start)
            fprintf(f, "<line class=\"sep\" x1=\"0\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>", y - TL_GAP / 2.0,
                    TL_X + TL_PLOT, y - TL_GAP / 2.0);
        tl_svg_text(f, "lanelbl", "end", TL_LABEL, y + 10, ok ? lab.text[i] : t->lanes[i].label, ok ? 0 : TL_COLS);
        fputc('\n', f);
    }
    tl_labels_release(&lab);
    free(names);
}

/* The y range of a mark's lanes. */
static void mark_span(const tl_svg_timeline *t, const tl_svg_mark *m, double *y0, double *y1)
{
    double acc = 0;
    *y0 = *y1 = 0;
    for (size_t k = 0; k < t->nlanes && (int)k < m->lane0 + m->nlanes; k++) {
        double y = lane_top(t, k, &acc);
        if ((int)k == m->lane0)
            *y0 = y;
        *y1 = y + TL_LANE;
    }
    /* the last lane's own height (its named calls below the band) */
    if (m->lane0 + m->nlanes > 0 && (size_t)(m->lane0 + m->nlanes) <= t->nlanes)
        *y1 = *y1 - TL_LANE + lane_height(&t->lanes[m->lane0 + m->nlanes - 1]) - 2;
}

/* Step marks over their lanes: with a tooltip each, or all in one path; then
 * the events, each a small triangle pointing down at the top of its rank's
 * lanes, with its tooltip. */
static void marks(FILE *f, const tl_svg_timeline *t)
{
    double px = (double)TL_PLOT / t->ncols;
    int untitled = 0;
    for (size_t i = 0; i < t->nmarks; i++) {
        const tl_svg_mark *m = &t->marks[i];
        double y0, y1, x = TL_X + m->col * px;
        if (m->event)
            continue;
        mark_span(t, m, &y0, &y1);
        if (m->title[0]) {
            fprintf(f, "<line class=\"step\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"><title>", x,
                    TL_TOP + y0 - 2, x, TL_TOP + y1 + 2);
            tl_escape_html(f, m->title);
            fputs("</title></line>\n", f);
        } else {
            fprintf(f, untitled ? "M%.1f %.0fV%.0f" : "<path class=\"step\" d=\"M%.1f %.0fV%.0f", x, TL_TOP + y0 - 2,
                    TL_TOP + y1 + 2);
            untitled = 1;
        }
    }
    if (untitled)
        fputs("\"/>\n", f);
    for (size_t i = 0; i < t->nmarks; i++) {
        const tl_svg_mark *m = &t->marks[i];
        double y0, y1, x = TL_X + m->col * px;
        if (!m->event)
            continue;
        mark_span(t, m, &y0, &y1);
        fprintf(f, "<path class=\"event\" d=\"M%.1f %.1fl-4 -6h8z\"><title>", x, TL_TOP + y0 + 5);
        tl_escape_html(f, m->title);
        fputs("</title></path>\n", f);
    }
}

static void axis(FILE *f, const tl_svg_timeline *t, double y)
{
    char b[48];
    double span = t->span_ns > 0 ? t->span_ns : 1, step = tl_units_nice_step(span, 10, TL_UNIT_NS);
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>", TL_X, y, TL_X + TL_PLOT, y);
    for (int i = 0; i * step <= span * (1 + 1e-9) && i < 64; i++) {
        double x = TL_X + TL_PLOT * (i * step) / span;
        fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>", x, y, x, y + 5);
        tl_svg_text(f, "tick", "middle", x, y + 17, tl_units_tick(b, sizeof b, i * step, step, TL_UNIT_NS), 0);
    }
    tl_svg_text(f, "axlbl", "middle", TL_X + TL_PLOT / 2.0, y + 33, t->axis_label, 0);
    fputc('\n', f);
}

/* One legend entry: its swatch is written by the caller at x; the text after
 * it. Returns the x of the next entry. */
static double key_text(FILE *f, double x, double y, const char *text)
{
    tl_svg_text(f, "legend", NULL, x + 18, y + 10, text, 0);
    return x + 18 + TL_KEY_CHAR_PX * (double)tl_labels_cols(text) + 16;
}

/* The legend under the axis: only what the chart draws. */
static void legend(FILE *f, const tl_svg_timeline *t, double y)
{
    static const char *const kinds[4] = { "compute", "communication", "memory", "other" };
    int gpu[4] = { 0 }, cpu = 0, calls = 0, steps = 0, events = 0, wait = 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        const tl_svg_lane *l = &t->lanes[i];
        for (int c = 0; c < t->ncols; c++)
            if (l->level[c] > 0) {
                if (l->cpu)
                    cpu = 1;
                else if (l->kind[c] == TL_SVG_KIND_WAIT)
                    wait = 1;
                else if (l->kind[c] < 4)
                    gpu[l->kind[c]] = 1;
            }
        calls |= l->calls != NULL && l->ncalls > 0;
    }
    for (size_t i = 0; i < t->nmarks; i++) {
        events |= t->marks[i].event;
        steps |= !t->marks[i].event;
    }
    double x = TL_X;
    fputs("<g class=\"tlkey\">", f);
    for (int k = 0; k < 4; k++)
        if (gpu[k]) {
            fprintf(f, "<path class=\"%s l4\" d=\"M%.1f %.1fh12\"/>", tl_svg_kind_class(k), x, y + 6);
            x = key_text(f, x, y, kinds[k]);
        }
    if (cpu) {
        fprintf(f, "<path class=\"compute l4\" d=\"M%.1f %.1fh12\"/>", x, y + 6);
        x = key_text(f, x, y, "CPU thread busy");
    }
    if (cpu || gpu[0] || gpu[1] || gpu[2] || gpu[3]) {
        /* the shading: a column a quarter busy or less, then up to full */
        const char *k = gpu[0] || cpu ? "compute" : gpu[1] ? "comm" : gpu[2] ? "memory" : "other";
        for (int lv = 1; lv < TL_LEVELS; lv++)
            fprintf(f, "<path class=\"%s l%d\" d=\"M%.1f %.1fh6\"/>", k, lv, x + 6.0 * (lv - 1), y + 6);
        x = key_text(f, x + 12, y, "shade: \xc2\xbc, \xc2\xbd, \xc2\xbe or fully busy");
    }
    if (wait) {
        fprintf(f, "<path class=\"wait l4\" d=\"M%.1f %.1fh12\"/>", x, y + 6);
        x = key_text(f, x, y, "waiting for the last rank");
    }
    if (calls) {
        fprintf(f, "<rect class=\"callkey\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\"/>", x, y);
        x = key_text(f, x, y, "CPU call, by name");
    }
    if (steps) {
        fprintf(f, "<line class=\"step\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x + 6, y - 1, x + 6,
                y + 13);
        x = key_text(f, x, y, "step start");
    }
    if (events) {
        fprintf(f, "<path class=\"event swatch\" d=\"M%.1f %.1fl-4 -6h8z\"/>", x + 6, y + 9);
        key_text(f, x, y, "event");
    }
    fputs("</g>\n", f);
}

void tl_svg_timeline_write(FILE *f, const tl_svg_frame *fr, const tl_svg_timeline *t)
{
    double acc = 0;
    for (size_t i = 0; i < t->nlanes; i++)
        lane_top(t, i, &acc);
    tl_svg_open(f, fr, "timeline", TL_W, TL_TOP + acc + 40 + TL_KEY);
    labels(f, t);
    lanes(f, t, acc);
    double y = 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        double top = lane_top(t, i, &y);
        if (t->lanes[i].calls != NULL)
            lane_calls(f, t, &t->lanes[i], top);
    }
    marks(f, t);
    axis(f, t, TL_TOP + acc + 2);
    legend(f, t, TL_TOP + acc + 46);
    tl_svg_close(f);
}
