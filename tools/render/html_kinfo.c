/*
 * html_kinfo.c - the Kernels section's "How the kernels were launched" table:
 * for the top kernels by time, the operator that launched them (from the
 * runtime calls' correlation ids) and their launch configuration as the
 * trace gives it (grid, block, registers per thread, shared memory, the
 * profiler's estimated achieved occupancy). Numbers: analyze/kinfo.c;
 * definitions: docs/analysis.md, "Kernels: launching operator and launch
 * configuration".
 */
#include "html_sections.h"
#include "labels.h"
#include "units.h"

#include <math.h>
#include <stdio.h>

static void dims(FILE *f, const int64_t d[3], int varies)
{
    if (d[0] < 0)
        fputs("<td class=\"num\">&ndash;</td>", f);
    else
        fprintf(f, "<td class=\"num\">%lld&times;%lld&times;%lld%s</td>", (long long)d[0], (long long)d[1],
                (long long)d[2], varies ? " <span class=\"note\">(varies)</span>" : "");
}

void tl_html_kernel_launches(tl_html *h, const size_t *idx, size_t n)
{
    FILE *f = h->f;
    const tl_name_table *t = &h->a->names;
    size_t shown = 0, with = 0;
    for (size_t i = 0; i < n && i < TL_HTML_TOP; i++)
        with += tl_kernel_info(h->a, t->rows[idx[i]].name) != NULL;
    if (with == 0)
        return;
    fputs("<h3>How the kernels were launched</h3>\n<p>The operator that launched each kernel (the innermost "
          "operator around the runtime call whose correlation id the kernel carries; when several did, the one "
          "that launched most of its time, with its share), and the launch configuration the trace records. "
          "Occupancy is the profiler's estimate (<code>est. achieved occupancy %</code>), weighted by "
          "duration.</p>\n",
          f);
    fputs("<div class=\"scroll\"><table>\n<caption>The top kernels by total time: launching operator, grid and "
          "block (of the first launch; &ldquo;varies&rdquo; when later launches differ), registers per thread, "
          "shared memory per block and estimated achieved occupancy</caption>\n<thead><tr>"
          "<th scope=\"col\">Kernel</th><th scope=\"col\">Launched by</th><th scope=\"col\">Grid</th>"
          "<th scope=\"col\">Block</th><th scope=\"col\">Registers</th><th scope=\"col\">Shared memory</th>"
          "<th scope=\"col\">Occupancy</th></tr></thead>\n<tbody>\n",
          f);
    /* the rows' labels made as one set, so no two kernels read the same (labels.h) */
    const tl_skinfo *rows[TL_HTML_TOP];
    const char *names[TL_HTML_TOP];
    for (size_t i = 0; i < n && i < TL_HTML_TOP; i++) {
        const tl_skinfo *k = tl_kernel_info(h->a, t->rows[idx[i]].name);
        if (k != NULL) {
            rows[shown] = k;
            names[shown++] = k->name;
        }
    }
    tl_labels lab;
    int labelled = tl_labels_make(&lab, names, shown, TL_HTML_LABEL_COLS) == 0;
    for (size_t i = 0; i < shown; i++) {
        const tl_skinfo *k = rows[i];
        char b[48], p[32];
        fputs("<tr><th scope=\"row\">", f);
        if (labelled)
            tl_html_name_cell(f, lab.text[i], lab.full[i]);
        else
            tl_html_code(f, k->name, TL_HTML_LABEL_COLS);
        fputs("</th><td>", f);
        if (k->op != NULL) {
            tl_html_code(f, k->op, TL_HTML_LABEL_COLS);
            if (k->ops > 1 && k->linked_ns > 0)
                fprintf(f, " <span class=\"note\">(%s of its time; %lld operators)</span>",
                        tl_units_pct(p, sizeof p, 100.0 * (double)k->op_ns / (double)k->linked_ns), (long long)k->ops);
        } else {
            fputs("&ndash;", f);
        }
        fputs("</td>", f);
        dims(f, k->grid, (int)k->varies);
        dims(f, k->block, (int)k->varies);
        fprintf(f, "<td class=\"num\">%s</td>",
                k->regs >= 0 ? (snprintf(b, sizeof b, "%lld", (long long)k->regs), b) : "&ndash;");
        fprintf(f, "<td class=\"num\">%s</td>",
                k->smem >= 0 ? tl_units_bytes(b, sizeof b, (double)k->smem) : "&ndash;");
        fprintf(f, "<td class=\"num\">%s</td></tr>\n",
                isfinite(k->occupancy) ? tl_units_pct(p, sizeof p, k->occupancy) : "&ndash;");
    }
    if (labelled)
        tl_labels_release(&lab);
    fputs("</tbody>\n</table></div>\n", f);
}
