/*
 * html_diffusion.c - block-wise video diffusion in the steps section: frames
 * per second of each rank as bars, and every rank's blocks, frames, block
 * size, FPS, blocks per second, first-block delay and denoising steps in a
 * table (definitions: docs/analysis.md, "Video diffusion").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "context_text.h"
#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "units.h"

static void fps_bars(tl_html *h)
{
    const tl_aggregate *a = h->a;
    tl_svg_bar *bars = calloc(a->nranks + 1, sizeof *bars);
    char(*labels)[48] = calloc(a->nranks + 1, sizeof *labels);
    size_t n = 0;
    if (bars == NULL || labels == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < a->nranks && n < TL_HTML_MAX_ROWS; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (!isfinite(r->diff.fps))
            continue;
        snprintf(labels[n], sizeof labels[n], "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
        bars[n] = (tl_svg_bar){
            .label = labels[n], .value = r->diff.fps, .lo = NAN, .hi = NAN, .cls = r->straggler ? "strag" : "compute"
        };
        snprintf(bars[n].note, sizeof bars[n].note, "%.0f frames in %llu blocks, %.2f blocks/s", r->diff.frames,
                 (unsigned long long)r->diff.blocks, r->diff.bps);
        n++;
    }
    if (n > 0) {
        char id[16];
        tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Frames per second per rank",
                            "Frames the blocks generated per second of block computation (frames / block time), "
                            "per rank." };
        tl_svg_hbars(h->f, &fr, bars, n, TL_UNIT_COUNT, NULL);
    }
out:
    free(bars);
    free(labels);
}

void tl_html_diffusion(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0, with = 0;
    if (!tl_diffusion_any(h->a))
        return;
    fputs("<h3 id=\"diffusion\">Video diffusion</h3>\n<p>Block-wise video generation (Inferix's block and "
          "denoising-step records): frames and blocks per second of block computation, the first block's time "
          "(the first-block delay) against the median of the later ones.</p>\n",
          f);
    fps_bars(h);
    fputs("<div class=\"scroll\"><table id=\"diffusion-table\">\n<caption>Per rank: blocks, frames (the blocks' "
          "sizes added up), frames per block, FPS and blocks per second of block computation, the first block's "
          "computation time, the later blocks' median, the denoising steps, and the most GPU memory and process RSS "
          "of a block</caption>\n<thead><tr>",
          f);
    for (int c = 0; c < TL_DIFFUSION_COLS; c++)
        fprintf(f, "<th scope=\"col\">%s</th>", tl_diffusion_heads[c]);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < h->a->nranks; i++) {
        tl_diffusion_row r;
        const char *cells[TL_DIFFUSION_COLS];
        if (!tl_diffusion_row_of(&h->a->ranks[i], &r) || with++ >= TL_HTML_MAX_ROWS)
            continue;
        tl_diffusion_cells(&r, cells);
        fprintf(f, "<tr><th scope=\"row\">%s%s</th>", cells[0], h->a->ranks[i].straggler ? " (straggler)" : "");
        for (int c = 1; c < TL_DIFFUSION_COLS; c++)
            fprintf(f, "<td class=\"num\">%s</td>", cells[c]);
        fputs("</tr>\n", f);
        shown++;
    }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, with, "ranks");
}
