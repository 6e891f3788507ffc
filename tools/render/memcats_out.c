/*
 * memcats_out.c - memory by category in JSON, Markdown and HTML
 * (memcats_out.h).
 */
#include "memcats_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "memcats.h"
#include "svg.h"
#include "units.h"

#define DASH "\xe2\x80\x93"

int tl_memcats_out_any(const tl_aggregate *a)
{
    return tl_memcats_any(a->sessions, a->nsessions);
}

static int shown(const tl_session *s)
{
    return tl_session_counts(s) && s->nmemcats > 0;
}

void tl_memcats_json(tl_json *j, const tl_aggregate *a)
{
    tl_json_object_begin(j);
    tl_json_key(j, "categories");
    tl_json_array_begin(j);
    for (int c = 0; c < TL_MEM_CATEGORIES; c++)
        tl_json_string(j, tl_mem_category_name(c));
    tl_json_array_end(j);
    tl_json_key(j, "sessions");
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        tl_memcat_summary m;
        if (!shown(s) || tl_memcat_summarize(s, &m) != 0)
            continue;
        tl_json_object_begin(j);
        tl_json_kv_int(j, "rank", s->id.rank);
        tl_json_kv_string(j, "path", s->id.path ? s->id.path : "");
        tl_json_kv_int(j, "points", (int64_t)m.points);
        tl_json_kv_int(j, "span_ns", m.span_ns);
        tl_json_kv_int(j, "peak_bytes", m.peak_bytes);
        tl_json_kv_int(j, "peak_at_ns", m.peak_at_ns);
        tl_json_key(j, "categories");
        tl_json_array_begin(j);
        for (int c = 0; c < TL_MEM_CATEGORIES; c++) {
            tl_json_object_begin(j);
            tl_json_kv_string(j, "category", tl_mem_category_name(c));
            tl_json_kv_int(j, "at_peak_bytes", s->memcats[m.peak].bytes[c]);
            tl_json_key(j, "at_peak_share");
            isfinite(m.share[c]) ? tl_json_fixed(j, m.share[c], 4) : tl_json_null(j);
            tl_json_kv_int(j, "first_bytes", m.first[c]);
            tl_json_kv_int(j, "last_bytes", m.last[c]);
            tl_json_kv_int(j, "growth_bytes", m.growth[c]);
            tl_json_object_end(j);
        }
        tl_json_array_end(j);
        tl_json_key(j, "largest_growth");
        if (m.grown >= 0) {
            tl_json_object_begin(j);
            tl_json_kv_string(j, "category", tl_mem_category_name(m.grown));
            tl_json_kv_int(j, "bytes", m.growth[m.grown]);
            tl_json_object_end(j);
        } else {
            tl_json_null(j);
        }
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

/* A signed byte count: "+4 GiB", "-512 MiB", "0 B". */
static const char *signed_bytes(char *b, size_t len, int64_t v)
{
    char t[32];
    tl_units_bytes(t, sizeof t, fabs((double)v));
    snprintf(b, len, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", t);
    return b;
}

static const char *share_text(char *b, size_t len, double share)
{
    return isfinite(share) ? tl_units_pct(b, len, 100.0 * share) : DASH;
}

/* The texts of category c's row in the Markdown and HTML tables. */
typedef struct row_text {
    char at_peak[32], share[16], first[32], last[32], growth[40];
} row_text;

static void row_text_of(const tl_session *s, const tl_memcat_summary *m, int c, row_text *t)
{
    tl_units_bytes(t->at_peak, sizeof t->at_peak, (double)s->memcats[m->peak].bytes[c]);
    share_text(t->share, sizeof t->share, m->share[c]);
    tl_units_bytes(t->first, sizeof t->first, (double)m->first[c]);
    tl_units_bytes(t->last, sizeof t->last, (double)m->last[c]);
    signed_bytes(t->growth, sizeof t->growth, m->growth[c]);
}

/* "peak 8 GiB, 2.5 ms after the first point of 3 ms (5 points); the largest growth: OPTIMIZER_STATE, +4 GiB" */
static void summary_line(FILE *f, const tl_memcat_summary *m)
{
    char pk[32], at[32], span[32], g[40];
    fprintf(f, "peak %s, %s after the first of %zu points (%s in all); ",
            tl_units_bytes(pk, sizeof pk, (double)m->peak_bytes), tl_units_dur(at, sizeof at, (double)m->peak_at_ns),
            m->points, tl_units_dur(span, sizeof span, (double)m->span_ns));
    if (m->grown >= 0)
        fprintf(f, "the largest growth from the first point to the last: %s, %s", tl_mem_category_name(m->grown),
                signed_bytes(g, sizeof g, m->growth[m->grown]));
    else
        fputs("no category grew from the first point to the last", f);
}

static const char *session_name(const tl_session *s, char *b, size_t len)
{
    if (s->id.rank >= 0)
        snprintf(b, len, "Rank %d", s->id.rank);
    else
        snprintf(b, len, "Rank ?");
    return b;
}

static const char sentence[] =
    "The device's memory by PyTorch's category over time (torch.profiler's export_memory_timeline): what each "
    "category held at the peak (the time the categories add up to the most), its share of the peak, and how much it "
    "grew from the first point of the timeline to the last.";

void tl_memcats_markdown(FILE *out, const tl_aggregate *a)
{
    if (!tl_memcats_out_any(a))
        return;
    fprintf(out, "\n## Memory by category\n\n%s\n", sentence);
    size_t n = 0, all = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        tl_memcat_summary m;
        if (!shown(s) || tl_memcat_summarize(s, &m) != 0)
            continue;
        if (all++ >= TL_MEMCATS_SHOWN)
            continue;
        n++;
        char who[32];
        fprintf(out, "\n**%s**: ", session_name(s, who, sizeof who));
        summary_line(out, &m);
        fputs(".\n\n| Category | At the peak | Share of the peak | First | Last | Growth |\n"
              "|---|--:|--:|--:|--:|--:|\n",
              out);
        for (int c = 0; c < TL_MEM_CATEGORIES; c++) {
            row_text t;
            row_text_of(s, &m, c, &t);
            fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", tl_mem_category_name(c), t.at_peak, t.share, t.first,
                    t.last, t.growth);
        }
    }
    if (all > n)
        fprintf(out, "\n%zu ranks more in the aggregate JSON (`memory_categories`).\n", all - n);
}

/* The stacked areas of one session: each category from the sum of those
 * before it up, memory below 0 drawn as 0; straight between the points, as
 * PyTorch's own plot of the timeline (stackplot) draws them, so the last
 * point's stack shows too. */
static void chart(tl_html *h, const tl_session *s, const char *who)
{
    size_t n = s->nmemcats;
    double *x = malloc(n * sizeof *x), *lvl = calloc((TL_MEM_CATEGORIES + 1) * n, sizeof *lvl);
    tl_svg_area ar[TL_MEM_CATEGORIES];
    static const char *const cls[TL_MEM_CATEGORIES] = { "stack s0", "stack s1", "stack s2", "stack s3",
                                                        "stack s4", "stack s5", "stack s6", "stack s7" };
    if (x == NULL || lvl == NULL) {
        h->oom = 1;
        goto out;
    }
    /* lvl[c * n + k]: the top of categories 0..c-1 at point k (row 0: the axis) */
    for (size_t k = 0; k < n; k++) {
        const tl_memcat_point *p = &s->memcats[k];
        x[k] = (double)p->ts_ns - (double)s->memcats[0].ts_ns; /* doubles: any int64 */
        double top = 0;
        for (int c = 0; c < TL_MEM_CATEGORIES; c++) {
            lvl[(size_t)c * n + k] = top;
            top += p->bytes[c] > 0 ? (double)p->bytes[c] : 0;
        }
        lvl[(size_t)TL_MEM_CATEGORIES * n + k] = top;
    }
    size_t na = 0;
    for (int c = 0; c < TL_MEM_CATEGORIES; c++) {
        int any = 0;
        for (size_t i = 0; i < n && !any; i++)
            any = s->memcats[i].bytes[c] > 0;
        if (any) /* a category never above 0 has no area and no legend entry */
            ar[na++] =
                (tl_svg_area){ tl_mem_category_name(c), cls[c], x, &lvl[(size_t)c * n], &lvl[(size_t)(c + 1) * n], n };
    }
    char id[16], title[64], desc[200];
    snprintf(title, sizeof title, "%s: memory by category over time", who);
    snprintf(desc, sizeof desc,
             "Device memory stacked by PyTorch's category, from the first point of the timeline; "
             "%zu points.",
             n);
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), title, desc };
    tl_svg_axes axes = { "time", "memory", TL_UNIT_NS, TL_UNIT_BYTES };
    tl_svg_lines_areas(h->f, &fr, &axes, ar, na, NULL, 0);
out:
    free(x);
    free(lvl);
}

void tl_html_memcats(tl_html *h)
{
    const tl_aggregate *a = h->a;
    if (!tl_memcats_out_any(a))
        return;
    FILE *f = h->f;
    fprintf(f,
            "<h3 id=\"memory-by-category\">Memory by category</h3>\n<p class=\"note\">%s Each chart stacks the "
            "categories over time (memory below 0, freed memory the profiler had not seen allocated, drawn as 0); "
            "long timelines are drawn from at most %d points, each the highest of its stretch.</p>\n",
            sentence, TL_MEMCAT_POINTS);
    size_t drawn = 0, all = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        tl_memcat_summary m;
        if (!shown(s) || tl_memcat_summarize(s, &m) != 0)
            continue;
        if (all++ >= TL_MEMCATS_SHOWN)
            continue;
        drawn++;
        char who[32];
        session_name(s, who, sizeof who);
        fprintf(f, "<h4>%s</h4>\n<p>", who);
        summary_line(f, &m);
        fputs(".</p>\n", f);
        chart(h, s, who);
        fprintf(f,
                "<table>\n<caption>%s: memory by category at the peak, and from the first point to the last"
                "</caption>\n<thead><tr><th scope=\"col\">category</th><th scope=\"col\">at the peak</th>"
                "<th scope=\"col\">share of the peak</th><th scope=\"col\">first</th><th scope=\"col\">last</th>"
                "<th scope=\"col\">growth</th></tr></thead>\n<tbody>\n",
                who);
        for (int c = 0; c < TL_MEM_CATEGORIES; c++) {
            row_text t;
            row_text_of(s, &m, c, &t);
            fprintf(f,
                    "<tr><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                    "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                    tl_mem_category_name(c), t.at_peak, t.share, t.first, t.last, t.growth);
        }
        fputs("</tbody>\n</table>\n", f);
    }
    tl_html_more(h, drawn, all, "ranks");
}
