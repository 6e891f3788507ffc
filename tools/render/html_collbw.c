/*
 * html_collbw.c - collective bandwidth under the Waits section
 * (analyze/collbw.h; docs/analysis.md, "Collective bandwidth"): how sizes
 * and times were found, then one row per collective kind and size bucket
 * (bytes, time, algorithm and bus bandwidth, the ranks' lowest, median and
 * highest bus bandwidth), and per rank in <details>. Nothing without sized
 * collectives.
 */
#include <stdlib.h>

#include "collbw_text.h"
#include "escape.h"
#include "html_sections.h"
#include "units.h"

static void per_rank(tl_html *h, const tl_collbw *c)
{
    FILE *f = h->f;
    size_t n = 0, shown = 0;
    for (size_t i = 0; i < c->nranks; i++)
        n += c->ranks[i].count > 0;
    tl_html_details(f, "Per rank: bytes, time and bandwidth over every collective");
    fputs("<table>\n<caption>Collective bandwidth per rank</caption>\n<thead><tr><th scope=\"col\">rank</th>"
          "<th scope=\"col\">collectives</th><th scope=\"col\">bytes</th><th scope=\"col\">time</th>"
          "<th scope=\"col\">algbw</th><th scope=\"col\">busbw</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < c->nranks && shown < TL_HTML_MAX_ROWS; i++) {
        const tl_collbw_cell *r = &c->ranks[i];
        if (r->count == 0)
            continue;
        char a[24], b[24];
        fprintf(f, "<tr><td>%d</td>", h->a->ranks[i].rank);
        tl_html_td(f, (double)r->count, TL_UNIT_COUNT);
        tl_html_td(f, r->bytes, TL_UNIT_BYTES);
        tl_html_td(f, (double)r->time_ns, TL_UNIT_NS);
        fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                tl_collbw_gbps(a, sizeof a, tl_collbw_algbw(r)), tl_collbw_gbps(b, sizeof b, tl_collbw_busbw(r)));
        shown++;
    }
    fputs("</tbody>\n</table>\n", f);
    tl_html_more(h, shown, n, "ranks");
    tl_html_details_end(f);
}

void tl_html_collbw(tl_html *h)
{
    const tl_collbw *c = &h->a->collbw;
    if (c->nrows == 0)
        return;
    FILE *f = h->f;
    fputs("<h3 id=\"collectives\">Collective bandwidth</h3>\n<p class=\"note\">", f);
    tl_collbw_sentence(f, h->a);
    fputs("</p>\n<table>\n<caption>Collective bandwidth by kind and size (NCCL's size S: all_gather counts the "
          "gathered whole)</caption>\n<thead><tr><th scope=\"col\">collective</th><th scope=\"col\">size</th>"
          "<th scope=\"col\">count</th><th scope=\"col\">bytes</th><th scope=\"col\">time</th>"
          "<th scope=\"col\">algbw</th><th scope=\"col\">busbw</th><th scope=\"col\">busbw, lowest rank</th>"
          "<th scope=\"col\">median rank</th><th scope=\"col\">highest rank</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < c->nrows; i++) {
        tl_collbw_text t;
        tl_collbw_row_text(h->a, &c->rows[i], &t);
        fputs("<tr><td><code>", f);
        tl_escape_html(f, t.kind);
        fputs("</code></td><td>", f);
        tl_escape_html(f, t.size);
        fprintf(f,
                "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                t.count, t.bytes, t.time, t.algbw, t.busbw, t.lo, t.med, t.hi);
    }
    fputs("</tbody>\n</table>\n", f);
    per_rank(h, c);
}
