/*
 * html_shapes.c - operators by input shape, FLOPs and TFLOP/s, at the end of
 * the Stages and ops section (analyze/shapes.h; docs/analysis.md, "Operators
 * by input shape"): one table, grouped by operator, bounded and said so.
 * Nothing without record_shapes.
 */
#include "escape.h"
#include "html_sections.h"
#include "shapes_text.h"

void tl_html_shapes(tl_html *h)
{
    const tl_shapes *sh = &h->a->shapes;
    if (sh->nrows == 0)
        return;
    FILE *f = h->f;
    fputs("<h3 id=\"op-shapes\">Operators by input shape</h3>\n<p class=\"note\">", f);
    tl_shapes_sentence(f, h->a, tl_escape_html);
    fputs("</p>\n<table>\n<caption>Operators by input shape: calls, time, the kernels they launched, FLOPs and "
          "achieved TFLOP/s</caption>\n<thead><tr><th scope=\"col\">operator</th><th scope=\"col\">input dims</th>"
          "<th scope=\"col\">types</th><th scope=\"col\">calls</th><th scope=\"col\">total</th>"
          "<th scope=\"col\">mean</th><th scope=\"col\">per rank, least \xe2\x80\x93 most</th>"
          "<th scope=\"col\">GPU</th><th scope=\"col\">FLOPs a call</th><th scope=\"col\">TFLOP/s</th>"
          "<th scope=\"col\">of peak</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t o = 0; o < sh->nops; o++) {
        const tl_shape_op *op = &sh->ops[o];
        for (size_t k = op->first; k < op->first + op->n; k++) {
            const tl_shape_row *r = &sh->rows[k];
            tl_shapes_text t;
            tl_shapes_row_text(r, &t);
            fputs("<tr><td>", f);
            if (k == op->first) {
                tl_html_code(f, r->name, TL_HTML_LABEL_COLS);
                if (op->shapes > op->n)
                    fprintf(f, "<br><small>%zu of %zu shapes</small>", op->n, op->shapes);
            }
            fputs("</td><td><code>", f);
            tl_html_breakable(f, r->dims, TL_HTML_NAME_MAX);
            fputs("</code></td><td><code>", f);
            tl_html_breakable(f, r->types, TL_HTML_NAME_MAX);
            fprintf(f,
                    "</code></td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                    "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                    "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                    t.calls, t.total, t.mean, t.ranks, t.gpu, t.flops, t.tflops, t.peak);
        }
    }
    fputs("</tbody>\n</table>\n", f);
    tl_html_more(h, sh->nops, sh->ops_total, "operators with shapes");
}
