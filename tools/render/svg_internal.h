/*
 * svg_internal.h - helpers shared by svg.c and svg_timeline.c: the chart's
 * opening tag with its text alternatives, and escaped <text>.
 */
#ifndef TALLY_RENDER_SVG_INTERNAL_H
#define TALLY_RENDER_SVG_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "svg.h"

/* <svg class="chart cls" role="img" aria-labelledby=...><title/><desc/>. */
void tl_svg_open(FILE *f, const tl_svg_frame *fr, const char *cls, double w, double h);
void tl_svg_close(FILE *f);
/* <text> of s (escaped, cut to max bytes; 0: whole). anchor may be NULL. */
void tl_svg_text(FILE *f, const char *cls, const char *anchor, double x, double y, const char *s, size_t max);

#endif
