/*
 * html_gpu.c - step time per rank (one line per rank, the straggler's drawn
 * on top in its own color; past STEP_LINE_RANKS ranks, bands of the ranks'
 * quantiles at each step instead, the stragglers' lines on top) and the GPU temporal breakdown per rank (stacked
 * bars of the kernel time: compute only, compute overlapped with
 * communication, communication only, memory, other, idle), with the idle
 * time per stream. The definitions are HTA's; the numbers are the aggregate
 * JSON's (by_mask is the union sweep's time per set of kernel types).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "term.h" /* tl_plural_s */
#include "units.h"

/* ---- step times --------------------------------------------------------------------------- */

/* One line per rank up to this many ranks with steps; past it, the chart
 * draws each step's min-max and p10-p90 bands and the median. */
#define STEP_LINE_RANKS 64

typedef struct series_buf {
    char label[48];
    double *y;
} series_buf;

static const char *series_class(const tl_aggregate *a, size_t i)
{
    if (a->ranks[i].straggler)
        return "strag";
    return a->nranks <= 16 ? tl_svg_rank_class(i) : "muted";
}

/* One series per rank with steps; x is the step's index within the rank. */
static size_t step_series(const tl_aggregate *a, tl_svg_series *s, series_buf *b, const double *x)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (r->nsteps == 0)
            continue;
        b[n].y = malloc(r->nsteps * sizeof *b[n].y);
        if (b[n].y == NULL)
            break;
        for (size_t k = 0; k < r->nsteps; k++)
            b[n].y[k] = (double)r->steps[k].dur_ns;
        snprintf(b[n].label, sizeof b[n].label, "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
        s[n] = (tl_svg_series){ b[n].label, series_class(a, i), x, b[n].y, r->nsteps };
        n++;
    }
    return n;
}

static void steps_chart(tl_html *h, size_t maxsteps)
{
    const tl_aggregate *a = h->a;
    double *x = malloc((maxsteps + 1) * sizeof *x);
    tl_svg_series *s = calloc(a->nranks + 1, sizeof *s);
    series_buf *b = calloc(a->nranks + 1, sizeof *b);
    if (x == NULL || s == NULL || b == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t k = 0; k < maxsteps; k++)
        x[k] = (double)k;
    size_t n = step_series(a, s, b, x);
    char id[16], desc[256];
    const tl_across *st = tl_aggregate_across(a, "step_time_ns");
    char lo[48], hi[48];
    snprintf(desc, sizeof desc, "Step duration by step index, one line per rank (%zu rank%s)%s%s%s%s.", n,
             tl_plural_s(n), st ? "; mean step time from " : "", st ? tl_units_dur(lo, sizeof lo, st->min) : "",
             st ? " to " : "", st ? tl_units_dur(hi, sizeof hi, st->max) : "");
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Step time per rank", desc };
    tl_svg_axes ax = { "step", "step time", TL_UNIT_COUNT, TL_UNIT_NS };
    tl_svg_lines(h->f, &fr, &ax, s, n);
    for (size_t i = 0; i < n; i++)
        free(b[i].y);
out:
    free(x);
    free(s);
    free(b);
}

static int by_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The q-quantile of n sorted values, interpolated between the two nearest
 * (numpy's default, "linear"). */
static double quantile(const double *v, size_t n, double q)
{
    double at = q * (double)(n - 1);
    size_t lo = (size_t)at;
    return lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (at - (double)lo) : v[lo];
}

/* Past STEP_LINE_RANKS ranks: at each step index, over the ranks that have
 * that step, the band from the least to the most, the 10th to 90th
 * percentile darker inside it, the median a line, the stragglers' lines on
 * top. Its size is bounded by the steps, not the ranks. */
static void steps_bands(tl_html *h, size_t maxsteps, size_t nwith)
{
    const tl_aggregate *a = h->a;
    double *v = malloc((a->nranks + 1) * sizeof *v), *q = malloc(6 * (maxsteps + 1) * sizeof *q);
    tl_svg_series *s = calloc(TL_MAX_STRAGGLERS + 2, sizeof *s);
    series_buf *b = calloc(TL_MAX_STRAGGLERS + 2, sizeof *b);
    size_t n = 0;
    if (v == NULL || q == NULL || s == NULL || b == NULL) {
        h->oom = 1;
        goto out;
    }
    double *x = q, *lo = q + maxsteps, *p10 = q + 2 * maxsteps, *med = q + 3 * maxsteps, *p90 = q + 4 * maxsteps,
           *hi = q + 5 * maxsteps;
    for (size_t k = 0; k < maxsteps; k++) {
        size_t m = 0;
        for (size_t i = 0; i < a->nranks; i++)
            if (a->ranks[i].nsteps > k)
                v[m++] = (double)a->ranks[i].steps[k].dur_ns;
        x[k] = (double)k;
        lo[k] = p10[k] = med[k] = p90[k] = hi[k] = NAN;
        if (m == 0)
            continue;
        qsort(v, m, sizeof *v, by_double);
        lo[k] = v[0];
        p10[k] = quantile(v, m, 0.10);
        med[k] = quantile(v, m, 0.50);
        p90[k] = quantile(v, m, 0.90);
        hi[k] = v[m - 1];
    }
    /* short labels: a legend entry has 18 characters */
    tl_svg_area areas[] = {
        { "ranks: min-max", "band outer", x, lo, hi, maxsteps },
        { "ranks: p10-p90", "band inner", x, p10, p90, maxsteps },
    };
    snprintf(b[n].label, sizeof b[n].label, "ranks: median");
    s[n] = (tl_svg_series){ b[n].label, "s0", x, med, maxsteps };
    n++;
    for (size_t i = 0; i < a->nranks && n < TL_MAX_STRAGGLERS + 1; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (!r->straggler || r->nsteps == 0)
            continue;
        b[n].y = malloc(r->nsteps * sizeof *b[n].y);
        if (b[n].y == NULL) {
            h->oom = 1;
            break;
        }
        for (size_t k = 0; k < r->nsteps; k++)
            b[n].y[k] = (double)r->steps[k].dur_ns;
        snprintf(b[n].label, sizeof b[n].label, "rank %d (straggler)", r->rank);
        s[n] = (tl_svg_series){ b[n].label, "strag", x, b[n].y, r->nsteps };
        n++;
    }
    char id[16], desc[384], l1[48], l2[48];
    const tl_across *st = tl_aggregate_across(a, "step_time_ns");
    snprintf(desc, sizeof desc,
             "Step duration by step index over %zu ranks (more than %d: bands instead of a line per rank): at each "
             "step the least to the most of the ranks, the 10th to 90th percentile darker, the median a line, "
             "stragglers in their own color%s%s%s%s.",
             nwith, STEP_LINE_RANKS, st ? "; mean step time from " : "", st ? tl_units_dur(l1, sizeof l1, st->min) : "",
             st ? " to " : "", st ? tl_units_dur(l2, sizeof l2, st->max) : "");
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Step time per rank", desc };
    tl_svg_axes ax = { "step", "step time", TL_UNIT_COUNT, TL_UNIT_NS };
    tl_svg_lines_areas(h->f, &fr, &ax, areas, sizeof areas / sizeof areas[0], s, n);
out:
    for (size_t i = 0; b && i < n; i++)
        free(b[i].y);
    free(v);
    free(q);
    free(s);
    free(b);
}

/* With one or two steps per rank a line says nothing: a bar per rank instead. */
static void steps_bars(tl_html *h)
{
    const tl_aggregate *a = h->a;
    size_t n = 0;
    unsigned char *drawn = NULL;
    tl_svg_bar *bars = calloc(a->nranks + 1, sizeof *bars);
    char(*labels)[48] = calloc(a->nranks + 1, sizeof *labels);
    if (bars == NULL || labels == NULL) {
        h->oom = 1;
        goto out;
    }
    size_t nd;
    drawn = tl_html_ranks_drawn(a, TL_HTML_MAX_ROWS, &nd);
    if (drawn == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < a->nranks && n < TL_HTML_MAX_ROWS; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (!isfinite(r->step_mean) || !drawn[i])
            continue;
        snprintf(labels[n], sizeof labels[n], "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
        bars[n] = (tl_svg_bar){ .label = labels[n],
                                .value = r->step_mean,
                                .lo = r->nsteps > 1 ? r->step_min : NAN,
                                .hi = r->nsteps > 1 ? r->step_max : NAN,
                                .cls = r->straggler ? "strag" : "compute" };
        snprintf(bars[n].note, sizeof bars[n].note, "%zu step%s", r->nsteps, r->nsteps == 1 ? "" : "s");
        n++;
    }
    char id[16];
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Step time per rank",
                        "Mean step time of each rank (one or two steps each; the whisker spans both); stragglers "
                        "in their own color." };
    tl_svg_hbars(h->f, &fr, bars, n, TL_UNIT_NS, "range: the rank's shortest to longest step");
    tl_html_ranks_drawn_note(h, nd, a->nranks);
out:
    free(drawn);
    free(bars);
    free(labels);
}

static void steps_table(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0;
    tl_html_details(f, "Data table");
    fputs("<div class=\"scroll\"><table>\n<caption>Step times per rank: count, mean, median, least, most, "
          "standard deviation, spread = (max - min) / median, and iterations per second</caption>\n<thead><tr>"
          "<th scope=\"col\">Rank</th><th scope=\"col\">Steps</th><th scope=\"col\">Mean</th>"
          "<th scope=\"col\">Median</th><th scope=\"col\">Min</th><th scope=\"col\">Max</th>"
          "<th scope=\"col\">Std</th><th scope=\"col\">Spread</th><th scope=\"col\">it/s</th></tr></thead>\n<tbody>\n",
          f);
    size_t nd;
    unsigned char *drawn = tl_html_ranks_drawn(h->a, TL_HTML_MAX_ROWS, &nd);
    for (size_t i = 0; i < h->a->nranks && shown < TL_HTML_MAX_ROWS; i++) {
        if (drawn != NULL && !drawn[i])
            continue;
        shown++;
        const tl_rank_result *r = &h->a->ranks[i];
        fprintf(f, "<tr><th scope=\"row\">%d%s</th><td class=\"num\">%llu%s</td>", r->rank,
                r->straggler ? " (straggler)" : "", (unsigned long long)r->step_count,
                r->steps_summarized ? " (summary)" : "");
        tl_html_td(f, r->step_mean, TL_UNIT_NS);
        tl_html_td(f, r->step_median, TL_UNIT_NS);
        tl_html_td(f, r->step_min, TL_UNIT_NS);
        tl_html_td(f, r->step_max, TL_UNIT_NS);
        tl_html_td(f, r->step_std, TL_UNIT_NS);
        tl_html_td(f, isfinite(r->step_spread) ? 100 * r->step_spread : NAN, TL_UNIT_PCT);
        tl_html_td(f, isfinite(r->step_mean) && r->step_mean > 0 ? 1e9 / r->step_mean : NAN, TL_UNIT_COUNT);
        fputs("</tr>\n", f);
    }
    free(drawn);
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, h->a->nranks, "ranks");
    tl_html_details_end(f);
}

void tl_html_steps(tl_html *h)
{
    size_t maxsteps = 0, summary = 0, nwith = 0;
    for (size_t i = 0; i < h->a->nranks; i++) {
        if (h->a->ranks[i].nsteps > maxsteps)
            maxsteps = h->a->ranks[i].nsteps;
        summary += isfinite(h->a->ranks[i].step_mean);
        nwith += h->a->ranks[i].nsteps > 0;
    }
    tl_html_open(h, "steps", "Step time per rank");
    if (maxsteps > 2 && nwith > STEP_LINE_RANKS)
        steps_bands(h, maxsteps, nwith);
    else if (maxsteps > 2)
        steps_chart(h, maxsteps);
    else if (maxsteps > 0)
        steps_bars(h);
    else if (summary > 0)
        tl_html_none(h, "The inputs summarize their iterations without the time of each step: no chart; "
                        "the table has the summary.");
    else
        tl_html_none(h, "No step times: the inputs have no ProfilerStep#N and no iteration samples.");
    if (summary > 0)
        steps_table(h);
    tl_html_diffusion(h);
    tl_html_close(h);
}

/* ---- GPU temporal breakdown ------------------------------------------------------------------ */

static void stack_of(tl_svg_stack *s, const tl_rank_result *r, char *label, size_t len)
{
    const tl_gpu_breakdown *g = &r->gpu;
    /* saturating: a rank's sums over many sessions may sit at the int64 limit */
    int64_t memory = tl_ns_add(tl_ns_add(g->by_mask[4], g->by_mask[5]), tl_ns_add(g->by_mask[6], g->by_mask[7]));
    int64_t kinds = tl_ns_add(tl_ns_add(g->by_mask[1], g->by_mask[2]), tl_ns_add(g->by_mask[3], memory));
    snprintf(label, len, "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
    s->label = label;
    s->total = (double)g->kernel_time;
    s->nsegs = 0;
    s->segs[s->nsegs++] = (tl_svg_seg){ "compute", "compute", (double)g->by_mask[1] };
    s->segs[s->nsegs++] = (tl_svg_seg){ "compute + communication", "overlap", (double)g->by_mask[3] };
    s->segs[s->nsegs++] = (tl_svg_seg){ "communication", "comm", (double)g->by_mask[2] };
    s->segs[s->nsegs++] = (tl_svg_seg){ "memory", "memory", (double)memory };
    s->segs[s->nsegs++] = (tl_svg_seg){ "other (sync)", "other", (double)(g->busy > kinds ? g->busy - kinds : 0) };
    s->segs[s->nsegs++] = (tl_svg_seg){ "idle", "idle", (double)g->idle };
}

static void gpu_chart(tl_html *h, size_t n)
{
    const tl_aggregate *a = h->a;
    tl_svg_stack *rows = calloc(n + 1, sizeof *rows);
    char(*labels)[48] = calloc(n + 1, sizeof *labels);
    size_t k = 0;
    if (rows == NULL || labels == NULL) {
        h->oom = 1;
        goto out;
    }
    size_t nd;
    unsigned char *drawn = tl_html_ranks_drawn(a, n, &nd);
    if (drawn == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < a->nranks && k < n; i++)
        if (a->ranks[i].gpu.present && drawn[i]) {
            stack_of(&rows[k], &a->ranks[i], labels[k], sizeof labels[k]);
            k++;
        }
    free(drawn);
    const tl_across *idle = tl_aggregate_across(a, "gpu.idle_pct");
    char id[16], desc[256];
    int len = snprintf(desc, sizeof desc,
                       "For %s%zu rank%s, the GPU kernel time split into compute only, "
                       "compute overlapping communication, communication only, memory, other and idle",
                       k == 1 ? "" : "each of ", k, tl_plural_s(k));
    if (idle != NULL && len > 0 && (size_t)len < sizeof desc)
        snprintf(desc + len, sizeof desc - (size_t)len, "; idle %.1f%% on average", idle->mean);
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "GPU time breakdown per rank", desc };
    tl_svg_stacked(h->f, &fr, rows, k, TL_UNIT_NS);
out:
    free(rows);
    free(labels);
}

static void gpu_row(FILE *f, const tl_rank_result *r)
{
    const tl_gpu_breakdown *g = &r->gpu;
    fprintf(f, "<tr><th scope=\"row\">%d%s</th><td class=\"num\">%llu</td>", r->rank,
            r->straggler ? " (straggler)" : "", (unsigned long long)g->events);
    tl_html_td(f, (double)g->kernel_time, TL_UNIT_NS);
    tl_html_td(f, tl_pct(g->idle, g->kernel_time), TL_UNIT_PCT);
    tl_html_td(f, tl_pct(g->compute, g->kernel_time), TL_UNIT_PCT);
    tl_html_td(f, tl_pct(g->non_compute, g->kernel_time), TL_UNIT_PCT);
    tl_html_td(f, tl_pct(g->comm, g->kernel_time), TL_UNIT_PCT);
    tl_html_td(f, g->comm > 0 ? tl_pct(g->comm_compute, g->comm) : NAN, TL_UNIT_PCT);
    if (g->whole_trace)
        fputs("<td>whole trace</td></tr>\n", f);
    else
        fprintf(f, "<td>%d ProfilerStep%s</td></tr>\n", g->steps_in_window, g->steps_in_window == 1 ? "" : "s");
}

static void gpu_table(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0, with = 0;
    fputs("<div class=\"scroll\"><table id=\"gpu-table\">\n<caption>GPU temporal breakdown per rank (HTA's "
          "definitions): kernel time = first GPU event's start to last one's end; idle, compute and non-compute "
          "as shares of it; communication and the share of it overlapped by compute</caption>\n<thead><tr>"
          "<th scope=\"col\">Rank</th><th scope=\"col\">GPU events</th><th scope=\"col\">Kernel time</th>"
          "<th scope=\"col\">Idle</th><th scope=\"col\">Compute</th><th scope=\"col\">Non-compute</th>"
          "<th scope=\"col\">Communication</th><th scope=\"col\">Overlap</th><th scope=\"col\">Window</th>"
          "</tr></thead>\n<tbody>\n",
          f);
    size_t nd;
    unsigned char *drawn = tl_html_ranks_drawn(h->a, TL_HTML_MAX_ROWS, &nd);
    for (size_t i = 0; i < h->a->nranks; i++) {
        if (!h->a->ranks[i].gpu.present)
            continue;
        with++;
        if (shown < TL_HTML_MAX_ROWS && (drawn == NULL || drawn[i])) {
            gpu_row(f, &h->a->ranks[i]);
            shown++;
        }
    }
    free(drawn);
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, with, "ranks");
}

static void idle_table(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0, total = 0;
    tl_html_details(f, "Idle time per stream");
    fputs("<div class=\"scroll\"><table>\n<caption>GPU idle time per stream in HTA's categories: host_wait (the "
          "CPU launched after the stream drained), kernel_wait (gaps under the kernel-wait threshold), other"
          "</caption>\n<thead><tr><th scope=\"col\">Rank</th><th scope=\"col\">Device</th>"
          "<th scope=\"col\">Stream</th><th scope=\"col\">host_wait</th><th scope=\"col\">kernel_wait</th>"
          "<th scope=\"col\">other</th><th scope=\"col\">Gaps</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < h->a->nranks; i++) {
        const tl_gpu_breakdown *g = &h->a->ranks[i].gpu;
        for (size_t s = 0; s < g->nstreams; s++, total++) {
            if (shown >= TL_HTML_MAX_ROWS)
                continue;
            const tl_stream_idle *st = &g->streams[s];
            fprintf(f, "<tr><th scope=\"row\">%d</th><td class=\"num\">%lld</td><td class=\"num\">%lld</td>",
                    h->a->ranks[i].rank, (long long)st->device, (long long)st->stream);
            tl_html_td(f, (double)st->host_wait, TL_UNIT_NS);
            tl_html_td(f, (double)st->kernel_wait, TL_UNIT_NS);
            tl_html_td(f, (double)st->other, TL_UNIT_NS);
            fprintf(f, "<td class=\"num\">%llu</td></tr>\n", (unsigned long long)st->gaps);
            shown++;
        }
    }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, total, "streams");
    tl_html_details_end(f);
}

void tl_html_gpu(tl_html *h)
{
    size_t with = 0;
    for (size_t i = 0; i < h->a->nranks; i++)
        with += h->a->ranks[i].gpu.present != 0;
    tl_html_open(h, "gpu", "GPU time breakdown");
    if (with == 0) {
        tl_html_none(h, "No GPU events (kernels, copies, sets) in the inputs: no GPU breakdown.");
        tl_html_close(h);
        return;
    }
    fprintf(h->f, "<p>GPU window: %s.</p>\n",
            h->a->opt.whole_trace ? "the whole trace (--whole-trace)"
                                  : "the ProfilerSteps, without the last one when there are two or more (it is "
                                    "usually incomplete); traces with fewer than two steps use the whole trace");
    gpu_chart(h, with < TL_HTML_MAX_ROWS ? with : TL_HTML_MAX_ROWS);
    tl_html_more(h, with < TL_HTML_MAX_ROWS ? with : TL_HTML_MAX_ROWS, with, "ranks not drawn");
    gpu_table(h);
    idle_table(h);
    tl_html_close(h);
}
