/*
 * html_memory.c - the memory section: device memory over time (allocated,
 * and reserved when there are few ranks, one line per rank on the time axis
 * the timelines use), each rank's peaks against its device, and the
 * labelled snapshots of reports (FramePack, tally's own).
 */
#include "memcats_out.h"
#include "memops_out.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "units.h"

#define MAX_SERIES 256 /* ranks (or sessions) drawn */

typedef struct mem_series {
    char label[64], rlabel[80]; /* rlabel: label + " reserved" */
    double *x, *alloc, *resv;
    size_t n;
} mem_series;

static const char *cls_of(const tl_rank_result *r, size_t i, size_t nranks, int reserved)
{
    static const char *resv[] = { "s0 resv",  "s1 resv",  "s2 resv",  "s3 resv", "s4 resv",  "s5 resv",
                                  "s6 resv",  "s7 resv",  "s8 resv",  "s9 resv", "s10 resv", "s11 resv",
                                  "s12 resv", "s13 resv", "s14 resv", "s15 resv" };
    if (r->straggler)
        return reserved ? "strag resv" : "strag";
    if (nranks > 16)
        return reserved ? "muted resv" : "muted";
    return reserved ? resv[i % 16] : tl_svg_rank_class(i);
}

/* The samples of a rank's sessions of one period, x relative to zero. */
static int rank_series(mem_series *m, const tl_aggregate *a, const tl_rank_result *r, const tl_html_periods *p,
                       int period, int64_t zero)
{
    size_t n = 0;
    for (size_t k = 0; k < r->nsessions; k++)
        if (p->of[r->sessions[k]] == period)
            n += a->sessions[r->sessions[k]].nmem;
    memset(m, 0, sizeof *m);
    if (n == 0)
        return 0;
    m->x = malloc(n * sizeof *m->x);
    m->alloc = malloc(n * sizeof *m->alloc);
    m->resv = malloc(n * sizeof *m->resv);
    if (m->x == NULL || m->alloc == NULL || m->resv == NULL)
        return -1;
    tl_aggregate_hold_rank(a, r); /* the series: the bulk (spill.h) */
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        for (size_t i = 0; p->of[r->sessions[k]] == period && i < s->nmem; i++, m->n++) {
            m->x[m->n] = ((double)s->mem[i].ts_ns - (double)zero);
            m->alloc[m->n] = s->mem[i].allocated;
            m->resv[m->n] = s->mem[i].reserved;
        }
    }
    tl_aggregate_drop_rank(a, r);
    if (p->n > 1)
        snprintf(m->label, sizeof m->label, "rank %d, period %d", r->rank, period + 1);
    else
        snprintf(m->label, sizeof m->label, "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
    snprintf(m->rlabel, sizeof m->rlabel, "%s reserved", m->label);
    return 0;
}

static int any_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            return 1;
    return 0;
}

/* The lines of one unit (a rank, or one session of it). */
static void add_series(const tl_aggregate *a, size_t i, mem_series *m, tl_svg_series *s, size_t *n)
{
    const tl_rank_result *r = &a->ranks[i];
    if (m->n == 0)
        return;
    if (any_finite(m->alloc, m->n))
        s[(*n)++] = (tl_svg_series){ m->label, cls_of(r, i, a->nranks, 0), m->x, m->alloc, m->n };
    if (a->nranks <= 8 && any_finite(m->resv, m->n))
        s[(*n)++] = (tl_svg_series){ m->rlabel, cls_of(r, i, a->nranks, 1), m->x, m->resv, m->n };
}

/* One line per rank and period, up to MAX_SERIES; x from the period's start. */
static size_t build_series(const tl_aggregate *a, const tl_html_periods *p, mem_series *m, tl_svg_series *s, int *oom)
{
    size_t n = 0, units = 0;
    for (size_t k = 0; k < p->n; k++)
        for (size_t i = 0; i < a->nranks && units < MAX_SERIES; i++) {
            if (rank_series(&m[units], a, &a->ranks[i], p, (int)k, p->start[k]) != 0)
                *oom = 1;
            add_series(a, i, &m[units], s, &n);
            units++;
        }
    return n;
}

/* The snapshot's reading a chart shows: allocated, else device used, else RSS. */
static double snap_value(const tl_ssnap *p)
{
    return isfinite(p->allocated) ? p->allocated : isfinite(p->device_used) ? p->device_used : p->rss;
}

/* Snapshots with a time in the first period, on the over-time chart (x from
 * the period's start), at most MAX_NOTES. */
#define MAX_NOTES 200
static size_t time_notes(const tl_aggregate *a, const tl_html_periods *p, tl_svg_note **out)
{
    size_t n = 0;
    *out = NULL;
    if (p->n == 0)
        return 0;
    tl_svg_note *v = calloc(MAX_NOTES, sizeof *v);
    if (v == NULL)
        return 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        for (size_t k = 0; k < r->nsessions; k++) {
            size_t si = r->sessions[k];
            const tl_session *s = &a->sessions[si];
            if (p->of[si] != 0 || s->nmem == 0)
                continue; /* only where the rank has a line on this axis */
            for (size_t j = 0; j < s->nsnaps && n < MAX_NOTES; j++) {
                const tl_ssnap *q = &s->snaps[j];
                if (q->ts_ns == INT64_MIN || q->ts_ns < p->start[0] || q->ts_ns > p->end[0] || !isfinite(snap_value(q)))
                    continue;
                v[n++] = (tl_svg_note){ ((double)q->ts_ns - (double)p->start[0]), snap_value(q), q->label,
                                        cls_of(r, i, a->nranks, 0) };
            }
        }
    }
    *out = v;
    return n;
}

/* Snapshots in order, one line per rank (x: the snapshot's number in the
 * rank's sessions), each point labelled: what a report without a time
 * series (FramePack) has of its memory over the run. */
static void snapshots_chart(tl_html *h)
{
    const tl_aggregate *a = h->a;
    size_t nr = a->nranks < MAX_SERIES ? a->nranks : MAX_SERIES, total = 0;
    mem_series *m = calloc(nr + 1, sizeof *m);
    tl_svg_series *s = calloc(2 * nr + 1, sizeof *s);
    tl_svg_note *notes = calloc(MAX_NOTES, sizeof *notes);
    size_t n = 0, nnotes = 0;
    if (m == NULL || s == NULL || notes == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < nr; i++) {
        const tl_rank_result *r = &a->ranks[i];
        size_t cnt = 0;
        for (size_t k = 0; k < r->nsessions; k++)
            cnt += a->sessions[r->sessions[k]].nsnaps;
        if (cnt == 0)
            continue;
        m[i].x = malloc(cnt * sizeof *m[i].x);
        m[i].alloc = malloc(cnt * sizeof *m[i].alloc);
        m[i].resv = malloc(cnt * sizeof *m[i].resv);
        if (m[i].x == NULL || m[i].alloc == NULL || m[i].resv == NULL) {
            h->oom = 1;
            goto out;
        }
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_session *ss = &a->sessions[r->sessions[k]];
            for (size_t j = 0; j < ss->nsnaps; j++, m[i].n++) {
                const tl_ssnap *q = &ss->snaps[j];
                m[i].x[m[i].n] = (double)(m[i].n + 1);
                m[i].alloc[m[i].n] = snap_value(q);
                m[i].resv[m[i].n] = q->reserved;
                if (nnotes < MAX_NOTES && isfinite(snap_value(q)))
                    notes[nnotes++] =
                        (tl_svg_note){ (double)(m[i].n + 1), snap_value(q), q->label, cls_of(r, i, a->nranks, 0) };
            }
        }
        total += m[i].n;
        snprintf(m[i].label, sizeof m[i].label, "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
        snprintf(m[i].rlabel, sizeof m[i].rlabel, "%s reserved", m[i].label);
        add_series(a, i, &m[i], s, &n);
    }
    if (n > 0) {
        char id[16], desc[300];
        snprintf(desc, sizeof desc,
                 "The labelled memory snapshots of each rank in the order they were taken: "
                 "allocated (device used or RSS where the report has no allocator reading)%s; each diamond is a "
                 "snapshot with its label.",
                 a->nranks <= 8 ? ", dashed the memory reserved" : "");
        tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Memory snapshots in order", desc };
        tl_svg_axes axes = { "snapshot", "memory", TL_UNIT_COUNT, TL_UNIT_BYTES };
        tl_svg_lines_notes(h->f, &fr, &axes, s, n, notes, nnotes);
    }
    (void)total;
out:
    for (size_t i = 0; m && i < nr; i++) {
        free(m[i].x);
        free(m[i].alloc);
        free(m[i].resv);
    }
    free(m);
    free(s);
    free(notes);
}

static void over_time(tl_html *h)
{
    const tl_aggregate *a = h->a;
    mem_series *m = calloc(MAX_SERIES, sizeof *m);
    tl_svg_series *s = calloc(2 * MAX_SERIES, sizeof *s);
    tl_html_periods p = { 0, NULL, NULL, NULL };
    if (m == NULL || s == NULL || tl_html_periods_find(&p, a) != 0) {
        h->oom = 1;
        goto out;
    }
    size_t n = build_series(a, &p, m, s, &h->oom);
    if (n > 0) {
        char id[16], desc[300];
        snprintf(desc, sizeof desc, "Device memory allocated over time, one line per rank%s%s.",
                 a->nranks <= 8 ? "; dashed lines are the memory reserved by the caching allocator" : "",
                 p.n > 1 ? "; the inputs cover periods of time that do not overlap, each line's time is from the "
                           "start of its period"
                         : "");
        tl_svg_note *notes = NULL;
        size_t nnotes = time_notes(a, &p, &notes);
        if (nnotes > 0)
            strncat(desc, " Diamonds: the labelled memory snapshots at their times.", sizeof desc - strlen(desc) - 1);
        tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Memory over time", desc };
        tl_svg_axes axes = { "time", "memory", TL_UNIT_NS, TL_UNIT_BYTES };
        fputs("<h3>Over time</h3>\n", h->f);
        tl_svg_lines_notes(h->f, &fr, &axes, s, n, notes, nnotes);
        free(notes);
    }
    for (size_t i = 0; i < MAX_SERIES; i++) {
        free(m[i].x);
        free(m[i].alloc);
        free(m[i].resv);
    }
out:
    tl_html_periods_release(&p);
    free(m);
    free(s);
}

static int has_peaks(const tl_rank_result *r)
{
    return isfinite(r->peak_allocated) || isfinite(r->peak_reserved) || isfinite(r->peak_rss) ||
           isfinite(r->peak_device_used) || isfinite(r->gpu_util_mean);
}

static void peaks(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0, with = 0;
    /* device used (NVML) is a column of its own where some rank has it */
    int used = 0;
    for (size_t i = 0; i < h->a->nranks; i++)
        used |= isfinite(h->a->ranks[i].peak_device_used);
    fputs("<h3>Peaks</h3>\n<div class=\"scroll\"><table id=\"memory-peaks\">\n<caption>Peak device memory per rank, "
          "against the device's capacity",
          f);
    if (used)
        fputs(": allocated and reserved by the caching allocator, and used on the device as NVML sees it "
              "(every process, the allocator's cache included)",
              f);
    fputs("; reserved / allocated (fragmentation); peak host RSS; the mean GPU "
          "utilization a monitor sampled</caption>\n<thead><tr><th scope=\"col\">Rank</th>"
          "<th scope=\"col\">Peak allocated</th><th scope=\"col\">Peak reserved</th>",
          f);
    if (used)
        fputs("<th scope=\"col\">Device used</th>", f);
    fputs("<th scope=\"col\">Device</th>"
          "<th scope=\"col\">Of device</th><th scope=\"col\">Reserved / allocated</th>"
          "<th scope=\"col\">Peak RSS</th><th scope=\"col\">GPU utilization</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < h->a->nranks; i++) {
        const tl_rank_result *r = &h->a->ranks[i];
        if (!has_peaks(r) || with++ >= TL_HTML_MAX_ROWS)
            continue;
        fprintf(f, "<tr><th scope=\"row\">%d</th>", r->rank);
        tl_html_td(f, r->peak_allocated, TL_UNIT_BYTES);
        tl_html_td(f, r->peak_reserved, TL_UNIT_BYTES);
        if (used)
            tl_html_td(f, r->peak_device_used, TL_UNIT_BYTES);
        tl_html_td(f, r->device_total, TL_UNIT_BYTES);
        tl_html_td(f, tl_rank_peak_device_pct(r), TL_UNIT_PCT);
        tl_html_td(f, r->peak_allocated > 0 ? r->peak_reserved / r->peak_allocated : NAN, TL_UNIT_RATIO);
        tl_html_td(f, r->peak_rss, TL_UNIT_BYTES);
        tl_html_td(f, r->gpu_util_mean, TL_UNIT_PCT);
        fputs("</tr>\n", f);
        shown++;
    }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, with, "ranks");
}

static void snapshots(tl_html *h, size_t total)
{
    FILE *f = h->f;
    size_t shown = 0;
    int used = 0;
    for (size_t i = 0; i < h->a->nsessions; i++)
        for (size_t k = 0; tl_session_counts(&h->a->sessions[i]) && k < h->a->sessions[i].nsnaps; k++)
            used |= isfinite(h->a->sessions[i].snaps[k].device_used);
    fputs("<h3>Snapshots</h3>\n", f);
    snapshots_chart(h);
    fputs("<div class=\"scroll\"><table id=\"memory-snapshots\">\n<caption>Labelled memory "
          "snapshots of the reports, per rank in session order</caption>\n<thead><tr><th scope=\"col\">Rank</th>"
          "<th scope=\"col\">Label</th><th scope=\"col\">Allocated</th><th scope=\"col\">Reserved</th>"
          "<th scope=\"col\">Max allocated</th>",
          f);
    fputs(used ? "<th scope=\"col\">Device used</th><th scope=\"col\">RSS</th></tr></thead>\n<tbody>\n"
               : "<th scope=\"col\">RSS</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < h->a->nsessions && shown < TL_HTML_MAX_ROWS; i++) {
        const tl_session *s = &h->a->sessions[i];
        if (!tl_session_counts(s))
            continue;
        for (size_t k = 0; k < s->nsnaps && shown < TL_HTML_MAX_ROWS; k++, shown++) {
            const tl_ssnap *p = &s->snaps[k];
            fprintf(f, "<tr><td class=\"num\">%d</td><th scope=\"row\">", s->id.rank);
            tl_escape_html_n(f, p->label, 200);
            fputs("</th>", f);
            tl_html_td(f, p->allocated, TL_UNIT_BYTES);
            tl_html_td(f, p->reserved, TL_UNIT_BYTES);
            tl_html_td(f, p->peak_allocated, TL_UNIT_BYTES);
            if (used)
                tl_html_td(f, p->device_used, TL_UNIT_BYTES);
            tl_html_td(f, p->rss, TL_UNIT_BYTES);
            fputs("</tr>\n", f);
        }
    }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, total, "snapshots");
}

void tl_html_memory(tl_html *h)
{
    size_t nsnaps = 0, nmem = 0, peaks_ = 0;
    for (size_t i = 0; i < h->a->nsessions; i++)
        if (tl_session_counts(&h->a->sessions[i])) {
            nsnaps += h->a->sessions[i].nsnaps;
            nmem += h->a->sessions[i].nmem;
        }
    for (size_t i = 0; i < h->a->nranks; i++)
        peaks_ += has_peaks(&h->a->ranks[i]);
    tl_html_open(h, "memory", "Memory");
    int memops = tl_memops_any(h->a), memcats = tl_memcats_out_any(h->a);
    if (nsnaps + nmem + peaks_ == 0 && !memops && !memcats)
        tl_html_none(h, "No memory data: the inputs have no memory samples, snapshots or device figures.");
    if (nmem > 0)
        over_time(h);
    if (peaks_ > 0)
        peaks(h);
    if (nsnaps > 0)
        snapshots(h, nsnaps);
    tl_html_memcats(h);
    tl_html_memops(h);
    tl_html_close(h);
}
