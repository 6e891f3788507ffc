/*
 * html_events.c - the events reports recorded (libtally's tally_event,
 * Inferix's custom events) in the timelines section: a strip per rank on the
 * timelines' time axis with a marker per event (its name and payload in the
 * tooltip), and a table of the first TL_HTML_EVENT_ROWS by time (time, rank,
 * name, payload shortened). The swimlane timelines carry the same markers
 * (html_timeline.c). Events are shown, never analyzed.
 */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "units.h"

#define TL_HTML_EVENT_ROWS 100  /* table rows; the rest are counted */
#define TL_HTML_EVENT_MARKS 400 /* markers of one strip chart; the rest are counted */
#define STRIP_COLS 480

static void mark_title(char *buf, size_t len, const tl_session *s, const tl_sevent *e, int64_t t0)
{
    char t[48];
    snprintf(buf, len, "rank %d, %s at %s: %s", s->id.rank, e->name,
             tl_units_dur(t, sizeof t, ((double)e->ts_ns - (double)t0)), e->payload);
}

/* One strip chart: a lane per rank with events in the period. */
static void strip(tl_html *h, const tl_html_periods *p, int period, size_t *dropped)
{
    const tl_aggregate *a = h->a;
    int64_t t0 = p->start[period], t1 = p->end[period];
    tl_svg_lane *lanes = calloc(a->nranks + 1, sizeof *lanes);
    char(*labels)[48] = calloc(a->nranks + 1, sizeof *labels);
    uint8_t *zero = calloc(STRIP_COLS, 1);
    tl_svg_mark *marks = calloc(TL_HTML_EVENT_MARKS, sizeof *marks);
    size_t nl = 0, nm = 0;
    if (lanes == NULL || labels == NULL || zero == NULL || marks == NULL) {
        h->oom = 1;
        goto out;
    }
    double colw = ((double)t1 - (double)t0) / STRIP_COLS;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        int lane = -1;
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_session *s = &a->sessions[r->sessions[k]];
            if (p->of[r->sessions[k]] != period)
                continue;
            for (size_t j = 0; j < s->nevents; j++) {
                const tl_sevent *e = &s->events[j];
                if (e->ts_ns == INT64_MIN || e->ts_ns < t0 || e->ts_ns > t1)
                    continue;
                if (lane < 0) {
                    lane = (int)nl;
                    snprintf(labels[nl], sizeof labels[nl], "rank %d%s", r->rank, r->straggler ? " (straggler)" : "");
                    lanes[nl] =
                        (tl_svg_lane){ .label = labels[nl], .kind = zero, .level = zero, .group_start = nl > 0 };
                    snprintf(lanes[nl].note, sizeof lanes[nl].note, "events of rank %d", r->rank);
                    nl++;
                }
                if (nm == TL_HTML_EVENT_MARKS) {
                    (*dropped)++;
                    continue;
                }
                tl_svg_mark *m = &marks[nm++];
                *m = (tl_svg_mark){ colw > 0 ? ((double)e->ts_ns - (double)t0) / colw : 0, lane, 1, "", 1 };
                mark_title(m->title, sizeof m->title, s, e, t0);
            }
        }
    }
    if (nl > 0) {
        char id[16], title[96], desc[300], axl[96], tb[48];
        if (p->n > 1)
            snprintf(title, sizeof title, "Events, period %d of %zu", period + 1, p->n);
        else
            snprintf(title, sizeof title, "Events");
        snprintf(desc, sizeof desc,
                 "The events each rank recorded, one row per rank on the timelines' time axis; "
                 "each triangle is an event, its name and data in its tooltip.");
        if (tl_units_is_wall(t0))
            snprintf(axl, sizeof axl, "time since %s", tl_units_time(tb, sizeof tb, t0));
        else
            snprintf(axl, sizeof axl, "time since %s on the input's own clock",
                     tl_units_dur(tb, sizeof tb, (double)t0));
        tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), title, desc };
        tl_svg_timeline t = { lanes, nl, STRIP_COLS, ((double)t1 - (double)t0), axl, marks, nm };
        tl_svg_timeline_write(h->f, &fr, &t);
    }
out:
    free(lanes);
    free(labels);
    free(zero);
    free(marks);
}

/* The first TL_HTML_EVENT_ROWS events by time over every counted session. */
typedef struct row {
    const tl_session *s;
    const tl_sevent *e;
} row;

static int by_time(const void *x, const void *y)
{
    const row *a = x, *b = y;
    int64_t ta = a->e->ts_ns, tb = b->e->ts_ns;
    if (ta != tb) {
        if (ta == INT64_MIN)
            return 1;
        if (tb == INT64_MIN)
            return -1;
        return ta < tb ? -1 : 1;
    }
    if (a->s->id.rank != b->s->id.rank)
        return a->s->id.rank < b->s->id.rank ? -1 : 1;
    return a->e < b->e ? -1 : a->e > b->e;
}

static void table(tl_html *h, size_t kept, uint64_t total)
{
    FILE *f = h->f;
    row *v = calloc(kept + 1, sizeof *v);
    size_t n = 0;
    if (v == NULL) {
        h->oom = 1;
        return;
    }
    for (size_t i = 0; i < h->a->nsessions; i++) {
        const tl_session *s = &h->a->sessions[i];
        for (size_t k = 0; tl_session_counts(s) && k < s->nevents; k++)
            v[n++] = (row){ s, &s->events[k] };
    }
    qsort(v, n, sizeof *v, by_time);
    char summary[96];
    snprintf(summary, sizeof summary, "Every event by time (%llu)", (unsigned long long)total);
    tl_html_details(f, summary);
    fputs("<div class=\"scroll\"><table id=\"events-table\">\n<caption>The events by time: when (UTC, or on the "
          "input's own clock), the rank, the name and its data (shortened)</caption>\n<thead><tr>"
          "<th scope=\"col\">Time</th><th scope=\"col\">Rank</th><th scope=\"col\">Event</th>"
          "<th scope=\"col\">Data</th></tr></thead>\n<tbody>\n",
          f);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < TL_HTML_EVENT_ROWS; i++, shown++) {
        char t[48];
        fprintf(f, "<tr><td class=\"num\">%s</td><td class=\"num\">%d</td><th scope=\"row\">",
                v[i].e->ts_ns == INT64_MIN ? "\xe2\x80\x93" : tl_units_time(t, sizeof t, v[i].e->ts_ns),
                v[i].s->id.rank);
        tl_escape_html_n(f, v[i].e->name, 200);
        fputs("</th><td><code>", f);
        tl_html_breakable(f, v[i].e->payload, TL_EVENT_PAYLOAD_MAX + 4);
        fputs("</code></td></tr>\n", f);
    }
    fputs("</tbody>\n</table></div>\n", f);
    if (total > shown)
        fprintf(f,
                "<p class=\"more\">and %llu more events (the table shows the first %d by time; each session "
                "keeps its first %d)</p>\n",
                (unsigned long long)(total - shown), TL_HTML_EVENT_ROWS, TL_SESSION_MAX_EVENTS);
    tl_html_details_end(f);
    free(v);
}

void tl_html_events(tl_html *h)
{
    size_t kept = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < h->a->nsessions; i++)
        if (tl_session_counts(&h->a->sessions[i])) {
            kept += h->a->sessions[i].nevents;
            total += h->a->sessions[i].events_total;
        }
    if (total == 0)
        return;
    fputs("<h3 id=\"events\">Events</h3>\n", h->f);
    tl_html_periods p;
    if (tl_html_periods_find(&p, h->a) != 0) {
        h->oom = 1;
        return;
    }
    size_t dropped = 0;
    for (size_t k = 0; k < p.n; k++)
        strip(h, &p, (int)k, &dropped);
    if (dropped)
        fprintf(h->f,
                "<p class=\"more\">%zu events are in the table but not drawn (at most %d markers a "
                "chart)</p>\n",
                dropped, TL_HTML_EVENT_MARKS);
    tl_html_periods_release(&p);
    table(h, kept, total);
}
