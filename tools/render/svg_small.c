/*
 * svg_small.c - the small multiples of the telemetry section: one series
 * (or a few sessions of it) at a glance, its min-max range per bin shaded
 * and its means as a line, on axes the caller shares across a column so
 * charts compare by position alone (Tufte's small multiples).
 */
#include <math.h>
#include <stdio.h>

#include "svg_internal.h"

#define PAD_L 4.0
#define PAD_R 4.0
#define PAD_T 14.0 /* the top of the y axis, above the plot */
#define PAD_B 14.0 /* x labels */

typedef struct frame {
    double x0, y0, w, h;
    const tl_svg_small *c;
} frame;

static double px(const frame *fr, double x)
{
    double span = fr->c->xmax - fr->c->xmin;
    double t = span > 0 ? (x - fr->c->xmin) / span : 0.5;
    return fr->x0 + (t < 0 ? 0 : t > 1 ? 1 : t) * fr->w;
}

static double py(const frame *fr, double y)
{
    double span = fr->c->ymax - fr->c->ymin;
    double t = span > 0 ? (y - fr->c->ymin) / span : 0.5;
    return fr->y0 + fr->h - (t < 0 ? 0 : t > 1 ? 1 : t) * fr->h;
}

static double bin_x(const tl_svg_band *b, int i)
{
    return b->nbins > 1 ? b->x0 + (b->x1 - b->x0) * i / (b->nbins - 1) : (b->x0 + b->x1) / 2;
}

/* Empty bins bridged by the line: a sampler's jitter leaves a bin empty now
 * and then; a longer gap is a real pause in the samples and stays a gap. */
#define SMALL_BRIDGE 3

static int full(const tl_svg_band *b, int i)
{
    return isfinite(b->mid[i]) && isfinite(b->lo[i]) && isfinite(b->hi[i]);
}

/* One run of bins [lo, hi) whose empty bins are bridged: the shaded range,
 * then the mean line, through the non-empty bins only. */
static void run(FILE *f, const frame *fr, const tl_svg_band *b, int lo, int hi)
{
    int n = 0;
    for (int i = lo; i < hi; i++)
        n += full(b, i);
    if (n == 1) {
        for (int i = lo; i < hi; i++)
            if (full(b, i))
                fprintf(f, "<circle class=\"mean\" cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\"/>", px(fr, bin_x(b, i)),
                        py(fr, b->mid[i]));
        return;
    }
    const char *op = "M";
    fputs("<path class=\"band\" d=\"", f);
    for (int i = lo; i < hi; i++)
        if (full(b, i)) {
            fprintf(f, "%s%.1f %.1f", op, px(fr, bin_x(b, i)), py(fr, b->hi[i]));
            op = "L";
        }
    for (int i = hi - 1; i >= lo; i--)
        if (full(b, i))
            fprintf(f, "L%.1f %.1f", px(fr, bin_x(b, i)), py(fr, b->lo[i]));
    fputs("Z\"/><polyline class=\"mean\" points=\"", f);
    const char *sep = "";
    for (int i = lo; i < hi; i++)
        if (full(b, i)) {
            fprintf(f, "%s%.1f,%.1f", sep, px(fr, bin_x(b, i)), py(fr, b->mid[i]));
            sep = " ";
        }
    fputs("\"/>", f);
}

void tl_svg_small_write(FILE *f, const tl_svg_frame *fr, const tl_svg_small *c, const tl_svg_band *b, size_t n)
{
    frame pl = { PAD_L, PAD_T, TL_SVG_SMALL_W - PAD_L - PAD_R, TL_SVG_SMALL_H - PAD_T - PAD_B, c };
    tl_svg_open(f, fr, "small", TL_SVG_SMALL_W, TL_SVG_SMALL_H);
    fprintf(f, "<rect class=\"plotbg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", pl.x0, pl.y0, pl.w,
            pl.h);
    /* step marks first, under the series: faint ticks across the plot */
    for (size_t i = 0; c->marks && i < c->nmarks; i++) {
        fprintf(f, i ? "M%.1f %.1fV%.1f" : "<path class=\"stepmark\" d=\"M%.1f %.1fV%.1f", px(&pl, c->marks[i]), pl.y0,
                pl.y0 + pl.h);
        if (i + 1 == c->nmarks)
            fputs("\"/>\n", f);
    }
    fprintf(f, "<g class=\"series %s\">", c->cls);
    for (size_t k = 0; k < n; k++) {
        int lo = -1, last = -1;
        for (int i = 0; i <= b[k].nbins; i++) {
            int end = i == b[k].nbins;
            if (!end && !full(&b[k], i))
                continue;
            if (lo >= 0 && (end || i - last > SMALL_BRIDGE)) {
                run(f, &pl, &b[k], lo, last + 1);
                lo = -1;
            }
            if (!end) {
                if (lo < 0)
                    lo = i;
                last = i;
            }
        }
    }
    fputs("</g>\n", f);
    tl_svg_text(f, "tick", NULL, pl.x0, pl.y0 - 3, c->ytop, 24);
    if (c->ybottom != NULL)
        tl_svg_text(f, "tick", NULL, pl.x0 + 3, pl.y0 + pl.h - 3, c->ybottom, 24);
    tl_svg_text(f, "tick", NULL, pl.x0, TL_SVG_SMALL_H - 3, c->xleft, 24);
    tl_svg_text(f, "tick", "end", pl.x0 + pl.w, TL_SVG_SMALL_H - 3, c->xright, 24);
    tl_svg_close(f);
}
