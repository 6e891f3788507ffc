/*
 * html_telemetry.c - the telemetry section: what the monitors sampled (GPU
 * utilization, memory, temperature, power; CPU), as small multiples per
 * rank and GPU on the time axis the timelines use, the rows across ranks,
 * the energy, and every series' numbers in a table.
 *
 * Each column of charts shares its y axis (utilization 0-100%, the others
 * from 0 to the highest sample of any rank), so a hot or power-hungry GPU
 * stands out by its height alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context_text.h"
#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "telemetry_text.h"
#include "units.h"

/* Chart rows (rank x GPU x period) drawn; the rest are counted. */
#define TL_HTML_TEL_ROWS 32
/* Sessions of one rank drawn in one chart. */
#define TL_HTML_TEL_BANDS 8
/* Step marks drawn in one chart (every k-th step beyond). */
#define TL_HTML_TEL_MARKS 64

/* The columns: GPU series, then the host's CPU (the process's, else the
 * system's) and disk reads. A column is drawn only when a rank has its series
 * (the SM clock and disk reads: libtally's sampler). */
enum { COL_UTIL, COL_MEM, COL_TEMP, COL_POWER, COL_CLOCK, COL_CPU, COL_DISK, NCOLS };
static const int col_kind[NCOLS] = { TL_SERIES_GPU_UTIL,     TL_SERIES_GPU_MEM, TL_SERIES_GPU_TEMP, TL_SERIES_GPU_POWER,
                                     TL_SERIES_GPU_SM_CLOCK, TL_SERIES_CPU,     TL_SERIES_DISK_READ };
static const char *const col_title[NCOLS] = { "GPU utilization", "GPU memory used", "GPU temperature",
                                              "GPU power",       "GPU SM clock",    "CPU",
                                              "Disk read" };

/* A column of the host (one chart a rank), not of each GPU. */
static int col_host(int c)
{
    return c == COL_CPU || c == COL_DISK;
}

static int kind_of_col(const tl_aggregate *a, int c)
{
    if (c != COL_CPU)
        return col_kind[c];
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].tel.n[TL_SERIES_CPU])
            return TL_SERIES_CPU;
    return TL_SERIES_SYS_CPU;
}

/* The series of session s of a kind and device, or NULL. */
static const tl_tseries *find(const tl_session *s, int kind, int64_t device)
{
    for (size_t i = 0; i < s->nseries; i++)
        if (s->series[i].kind == kind && (device < 0 || s->series[i].device == device))
            return &s->series[i];
    return NULL;
}

/* The column's y range: 0 to a tenth above the highest sample (headroom, so
 * that a flat series at the peak is not drawn on the frame); percentages and
 * temperatures to at least 100. A percentage whose samples stay within 100 (a
 * utilization) tops at 100, not at 110: process CPU over several cores may
 * go beyond and keeps its headroom. */
static double col_max(const tl_aggregate *a, int kind)
{
    int pct = strcmp(tl_series_unit(kind), "%") == 0;
    double floor = pct || kind == TL_SERIES_GPU_TEMP ? 100 : 0;
    double m = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        for (size_t k = 0; tl_session_counts(&a->sessions[i]) && k < a->sessions[i].nseries; k++)
            if (a->sessions[i].series[k].kind == kind && a->sessions[i].series[k].max > m)
                m = a->sessions[i].series[k].max;
    int share = pct && m <= 100;
    m *= 1.1;
    if (m < floor || share)
        m = floor;
    return m > 0 ? m : 1;
}

static const char *cls_of(const tl_rank_result *r, size_t i, size_t nranks)
{
    static const char *cls[] = { "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7" };
    return r->straggler ? "strag" : nranks > 8 ? "s0" : cls[i % 8];
}

typedef struct chart_ctx {
    tl_html *h;
    const tl_html_periods *p;
    int period;
    size_t ri; /* index of the rank */
} chart_ctx;

/* The starts of the rank's steps in the period (every k-th when there are
 * more than TL_HTML_TEL_MARKS): the step marks of its charts. */
static size_t step_marks(const chart_ctx *c, double *x)
{
    const tl_rank_result *r = &c->h->a->ranks[c->ri];
    int64_t t0 = c->p->start[c->period], t1 = c->p->end[c->period];
    size_t n = 0, in = 0;
    for (size_t k = 0; k < r->nsteps; k++)
        in += r->steps[k].ts_ns != INT64_MIN && r->steps[k].ts_ns >= t0 && r->steps[k].ts_ns <= t1;
    size_t every = in / TL_HTML_TEL_MARKS + 1, seen = 0;
    for (size_t k = 0; k < r->nsteps && n < TL_HTML_TEL_MARKS; k++) {
        int64_t t = r->steps[k].ts_ns;
        if (t == INT64_MIN || t < t0 || t > t1)
            continue;
        if (seen++ % every == 0)
            x[n++] = (double)t;
    }
    return n;
}

/* One cell: the series of a kind (device, or -1 for the host) of the rank's sessions in the period. */
static void cell(chart_ctx *c, int col, int kind, int64_t device, double ymax, const char *rowlabel)
{
    const tl_aggregate *a = c->h->a;
    const tl_rank_result *r = &a->ranks[c->ri];
    tl_svg_band b[TL_HTML_TEL_BANDS];
    size_t n = 0;
    double peak = NAN, sum = 0;
    uint64_t cnt = 0;
    for (size_t k = 0; k < r->nsessions && n < TL_HTML_TEL_BANDS; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        const tl_tseries *t = c->p->of[r->sessions[k]] == c->period ? find(s, kind, device) : NULL;
        if (t == NULL)
            continue;
        b[n++] = (tl_svg_band){ t->bmin, t->bmean, t->bmax, t->nbins, (double)t->start_ns, (double)t->end_ns };
        if (!(t->max <= peak))
            peak = t->max;
        sum += t->mean * (double)t->n;
        cnt += t->n;
    }
    fputs("<td>", c->h->f);
    if (n == 0) {
        fputs("–</td>", c->h->f);
        return;
    }
    char id[16], title[160], desc[300], top[32], right[32], mean[32], pk[32];
    tl_telemetry_fmt(top, sizeof top, ymax, kind);
    tl_units_dur(right, sizeof right, ((double)c->p->end[c->period] - (double)c->p->start[c->period]));
    snprintf(title, sizeof title, "%s, %s", col_title[col], rowlabel);
    double marks[TL_HTML_TEL_MARKS];
    size_t nmarks = step_marks(c, marks);
    snprintf(desc, sizeof desc,
             "%s over time: mean %s, highest %s, %llu samples; shaded: the lowest to highest "
             "sample of each bin, line: the bin's mean%s.",
             tl_series_label(kind), tl_telemetry_fmt(mean, sizeof mean, sum / (double)cnt, kind),
             tl_telemetry_fmt(pk, sizeof pk, peak, kind), (unsigned long long)cnt,
             nmarks ? "; faint lines: step starts" : "");
    tl_svg_frame fr = { tl_html_chart_id(c->h, id, sizeof id), title, desc };
    tl_svg_small sm = { (double)c->p->start[c->period],
                        (double)c->p->end[c->period],
                        0,
                        ymax,
                        cls_of(r, c->ri, a->nranks),
                        top,
                        NULL,
                        "0",
                        right,
                        nmarks ? marks : NULL,
                        nmarks };
    tl_svg_small_write(c->h->f, &fr, &sm, b, n);
    fputs("</td>", c->h->f);
}

/* The GPUs of a rank's sessions in a period, ascending, at most max. */
static size_t gpus_of(const tl_aggregate *a, const tl_rank_result *r, const tl_html_periods *p, int period,
                      int64_t *dev, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (p->of[r->sessions[k]] != period)
            continue;
        for (size_t i = 0; i < s->nseries; i++) {
            if (!tl_series_kind_gpu(s->series[i].kind))
                continue;
            size_t j = 0;
            while (j < n && dev[j] != s->series[i].device)
                j++;
            if (j == n && n < max) {
                size_t at = n++;
                while (at > 0 && dev[at - 1] > s->series[i].device) {
                    dev[at] = dev[at - 1];
                    at--;
                }
                dev[at] = s->series[i].device;
            }
        }
    }
    return n;
}

static int rank_has_host(const tl_aggregate *a, const tl_rank_result *r, const tl_html_periods *p, int period, int kind)
{
    for (size_t k = 0; k < r->nsessions; k++)
        if (p->of[r->sessions[k]] == period && find(&a->sessions[r->sessions[k]], kind, -1) != NULL)
            return 1;
    return 0;
}

static void charts(tl_html *h)
{
    const tl_aggregate *a = h->a;
    tl_html_periods p = { 0, NULL, NULL, NULL };
    if (tl_html_periods_find(&p, a) != 0) {
        h->oom = 1;
        return;
    }
    int kinds[NCOLS], show[NCOLS];
    double ymax[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        kinds[c] = kind_of_col(a, c);
        show[c] = 0;
        for (size_t i = 0; i < a->nranks; i++)
            show[c] |= a->ranks[i].tel.n[kinds[c]] > 0;
        ymax[c] = col_max(a, kinds[c]);
    }
    char t0[48];
    fputs("<h3>Over time</h3>\n<p>One row per rank and GPU, on the time axis of the timelines", h->f);
    if (p.n == 1)
        fprintf(h->f, " (from %s)", tl_units_time(t0, sizeof t0, p.start[0]));
    fputs("; each column shares its scale, from 0 to the value at its top. Shaded: the lowest to highest sample of "
          "each bin; line: the mean.</p>\n"
          "<div class=\"scroll\"><table class=\"telemetry\">\n<thead><tr><th scope=\"col\">Rank, GPU</th>",
          h->f);
    for (int c = 0; c < NCOLS; c++)
        if (show[c])
            fprintf(h->f, "<th scope=\"col\">%s</th>", c == COL_CPU ? tl_series_label(kinds[c]) : col_title[c]);
    fputs("</tr></thead>\n<tbody>\n", h->f);
    size_t rows = 0, total = 0;
    for (size_t k = 0; k < p.n; k++)
        for (size_t i = 0; i < a->nranks; i++) {
            const tl_rank_result *r = &a->ranks[i];
            int64_t dev[TL_HTML_TEL_ROWS];
            size_t ndev = gpus_of(a, r, &p, (int)k, dev, TL_HTML_TEL_ROWS);
            int host = (show[COL_CPU] && rank_has_host(a, r, &p, (int)k, kinds[COL_CPU])) ||
                       (show[COL_DISK] && rank_has_host(a, r, &p, (int)k, kinds[COL_DISK]));
            size_t nrows = ndev ? ndev : (size_t)host;
            for (size_t d = 0; d < nrows; d++, total++) {
                if (rows == TL_HTML_TEL_ROWS)
                    continue;
                rows++;
                char label[96];
                int n = snprintf(label, sizeof label, "rank %d", r->rank);
                if (ndev)
                    n += snprintf(label + n, sizeof label - (size_t)n, ", GPU %lld", (long long)dev[d]);
                if (p.n > 1)
                    snprintf(label + n, sizeof label - (size_t)n, ", period %zu", k + 1);
                fputs("<tr><th scope=\"row\">", h->f);
                tl_escape_html(h->f, label);
                fputs(r->straggler ? " (straggler)</th>" : "</th>", h->f);
                chart_ctx cc = { h, &p, (int)k, i };
                for (int c = 0; c < NCOLS; c++) {
                    if (!show[c])
                        continue;
                    if (col_host(c))
                        d == 0 ? cell(&cc, c, kinds[c], -1, ymax[c], label) : (void)fputs("<td></td>", h->f);
                    else if (ndev)
                        cell(&cc, c, kinds[c], dev[d], ymax[c], label);
                    else
                        fputs("<td>–</td>", h->f);
                }
                fputs("</tr>\n", h->f);
            }
        }
    fputs("</tbody>\n</table></div>\n", h->f);
    tl_html_more(h, rows, total, "rows of charts (TL_HTML_TEL_ROWS)");
    tl_html_periods_release(&p);
}

static void across_table(tl_html *h)
{
    fputs("<h3>Across ranks</h3>\n<div class=\"scroll\"><table id=\"telemetry-across\">\n<caption>Per series: the "
          "lowest, median and highest of the ranks' means, the highest sample of any rank, and imbalance = highest "
          "mean / mean of the means. GPU rows are per GPU.</caption>\n<thead><tr><th scope=\"col\">Series</th>"
          "<th scope=\"col\">Ranks</th><th scope=\"col\">Mean least</th><th scope=\"col\">Mean median</th>"
          "<th scope=\"col\">Mean most</th><th scope=\"col\">Peak</th><th scope=\"col\">Imbalance</th>"
          "</tr></thead>\n<tbody>\n",
          h->f);
    for (int k = 0; k < TL_SERIES_COUNT; k++) {
        tl_telemetry_row r;
        if (!tl_telemetry_row_of(h->a, k, &r))
            continue;
        fprintf(h->f,
                "<tr><th scope=\"row\">%s</th><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td></tr>\n",
                r.label, r.ranks, r.lo, r.med, r.hi, r.peak, r.imbal);
    }
    fputs("</tbody>\n</table></div>\n<p id=\"telemetry-energy\">", h->f);
    tl_telemetry_energy_sentence(h->f, h->a);
    fputs("</p>\n", h->f);
}

/* Every series of every counted session: the numbers behind the charts. */
static void data_table(tl_html *h)
{
    const tl_aggregate *a = h->a;
    size_t shown = 0, total = 0;
    char mn[32], me[32], mx[32], e[48];
    tl_html_details(h->f, "Every series: samples, lowest, mean, highest, energy");
    fputs("<div class=\"scroll\"><table id=\"telemetry-series\">\n<thead><tr><th scope=\"col\">Rank</th>"
          "<th scope=\"col\">Session</th><th scope=\"col\">Device</th><th scope=\"col\">Series</th>"
          "<th scope=\"col\">Samples</th><th scope=\"col\">Min</th><th scope=\"col\">Mean</th>"
          "<th scope=\"col\">Max</th><th scope=\"col\">Energy</th></tr></thead>\n<tbody>\n",
          h->f);
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        for (size_t k = 0; tl_session_counts(s) && k < s->nseries; k++, total++) {
            const tl_tseries *t = &s->series[k];
            if (shown == TL_HTML_MAX_ROWS)
                continue;
            shown++;
            fprintf(h->f, "<tr><td class=\"num\">%d</td><td class=\"num\">%d</td><td>", s->id.rank, s->id.session);
            if (t->device >= 0)
                fprintf(h->f, "GPU %lld", (long long)t->device);
            else
                fputs("host", h->f);
            fprintf(h->f,
                    "</td><td>%s</td><td class=\"num\">%llu</td><td class=\"num\">%s</td>"
                    "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                    tl_series_label(t->kind), (unsigned long long)t->n,
                    tl_telemetry_fmt(mn, sizeof mn, t->min, t->kind), tl_telemetry_fmt(me, sizeof me, t->mean, t->kind),
                    tl_telemetry_fmt(mx, sizeof mx, t->max, t->kind), tl_telemetry_energy(e, sizeof e, t->energy_j));
        }
    }
    fputs("</tbody>\n</table></div>\n", h->f);
    tl_html_more(h, shown, total, "series");
    tl_html_details_end(h->f);
}

/* The program's counters (tally_counter, a trace's counter events): per rank
 * and name, how many values and their least, mean and most. */
static void counters(tl_html *h)
{
    const tl_aggregate *a = h->a;
    size_t total = tl_counters_count(a), shown = 0;
    char c[48], mn[48], me[48], mx[48], rt[48];
    if (total == 0)
        return;
    /* the Rate column only where a counter is a rate (tally_counter_rate) */
    int rates = tl_counters_any_rate(a);
    fprintf(
        h->f,
        "<h3 id=\"counters\">Counters</h3>\n<div class=\"scroll\"><table id=\"counters-table\">\n<caption>The "
        "program's counters (tally_counter; a trace's counter events as name.key): per rank, how many values and "
        "their least, mean and most%s</caption>\n<thead><tr><th scope=\"col\">Rank</th><th scope=\"col\">Counter</th>"
        "<th scope=\"col\">Count</th><th scope=\"col\">Min</th><th scope=\"col\">Mean</th><th scope=\"col\">Max</th>"
        "%s</tr></thead>\n<tbody>\n",
        rates ? "; a rate (tally_counter_rate) is hits / (hits + misses) of its counter pair" : "",
        rates ? "<th scope=\"col\">Rate</th>" : "");
    for (size_t i = 0; i < a->nsessions && shown < TL_HTML_MAX_ROWS; i++) {
        const tl_session *s = &a->sessions[i];
        for (size_t k = 0; tl_session_counts(s) && k < s->ncounters && shown < TL_HTML_MAX_ROWS; k++, shown++) {
            const tl_scounter *x = &s->counters[k];
            fprintf(h->f, "<tr><td class=\"num\">%d</td><th scope=\"row\"><code>", s->id.rank);
            tl_html_breakable(h->f, x->name, 300);
            fprintf(h->f,
                    "</code></th><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                    "<td class=\"num\">%s</td>",
                    tl_units_count(c, sizeof c, (double)x->count), tl_units_count(mn, sizeof mn, x->min),
                    tl_units_count(me, sizeof me, x->mean), tl_units_count(mx, sizeof mx, x->max));
            if (rates)
                fprintf(h->f, "<td class=\"num\">%s</td>", tl_counter_rate_text(x, rt, sizeof rt));
            fputs("</tr>\n", h->f);
        }
    }
    fputs("</tbody>\n</table></div>\n", h->f);
    tl_html_more(h, shown, total, "counters");
}

void tl_html_telemetry(tl_html *h)
{
    int any = 0;
    for (size_t i = 0; i < h->a->nranks; i++)
        for (int k = 0; k < TL_SERIES_COUNT; k++)
            any |= h->a->ranks[i].tel.n[k] > 0;
    tl_html_open(h, "telemetry", "Telemetry");
    if (!any) {
        tl_html_none(h, "No sampled telemetry: the inputs have no GPU or CPU monitor samples (libtally's sampler, "
                        "Inferix's gpu_metrics / cpu_metrics).");
        counters(h);
        tl_html_close(h);
        return;
    }
    fputs("<p>What the monitors sampled while the program ran (libtally's sampler, Inferix's GPU and CPU monitors): "
          "device-level readings, not kernel time. GPU memory here is what the device reports in use, not the "
          "allocator's.</p>\n",
          h->f);
    across_table(h);
    charts(h);
    data_table(h);
    counters(h);
    tl_html_close(h);
}

/* Ranks listed in the System section's GPUs entry; the rest are counted. */
#define TL_HTML_GPU_RANKS 32

void tl_html_system_gpus(tl_html *h)
{
    const tl_aggregate *a = h->a;
    size_t shown = 0, with = 0;
    char b[32];
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        /* the session with the most GPUs speaks for the rank */
        const tl_session *best = NULL;
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_session *s = &a->sessions[r->sessions[k]];
            if (tl_session_counts(s) && s->ndevices > 0 && (best == NULL || s->ndevices > best->ndevices))
                best = s;
        }
        if (best == NULL)
            continue;
        if (with++ == 0)
            fputs("<dt>GPUs</dt><dd><ul class=\"gpus\">\n", h->f);
        if (shown == TL_HTML_GPU_RANKS)
            continue;
        shown++;
        fprintf(h->f, "<li>rank %d: ", r->rank);
        for (size_t d = 0; d < best->ndevices; d++) {
            const tl_sdevice *dv = &best->devices[d];
            fprintf(h->f, "%sGPU %lld", d ? "; " : "", (long long)dv->id);
            if (dv->name != NULL && dv->name[0]) {
                fputs(" ", h->f);
                tl_escape_html_n(h->f, dv->name, 100);
            }
            if (isfinite(dv->total_memory))
                fprintf(h->f, " (%s)", tl_units_bytes(b, sizeof b, dv->total_memory));
        }
        fputs("</li>\n", h->f);
    }
    if (with > shown)
        fprintf(h->f, "<li>and %zu more ranks (TL_HTML_GPU_RANKS)</li>\n", with - shown);
    if (with)
        fputs("</ul></dd>\n", h->f);
}
