/*
 * html_axis.c - the time axes of the timelines and the memory chart.
 *
 * The one idea: sessions share an axis when their times overlap. The ranks
 * of one run are profiled at the same time and share one axis; inputs
 * profiled at different times (other runs, or a rank's sessions at step 100
 * and step 10000 of a long job) would leave a shared axis mostly empty and
 * squeeze each of them into a column or two. So the sessions are grouped
 * into periods, each a maximal set of sessions whose time ranges overlap
 * one another in a chain, and each period is drawn on its own axis.
 */
#include <stdlib.h>

#include "html_sections.h"

void tl_html_session_range(const tl_session *s, int64_t *start, int64_t *end)
{
    *start = *end = 0;
    if (!tl_session_counts(s))
        return;
    if (s->timeline.start_ns < s->timeline.end_ns) {
        *start = s->timeline.start_ns;
        *end = s->timeline.end_ns;
    }
    /* the telemetry charts share this axis */
    for (size_t i = 0; i < s->nseries; i++) {
        int64_t a = s->series[i].start_ns, b = tl_ns_add(s->series[i].end_ns, 1);
        if (*start >= *end) {
            *start = a;
            *end = b;
        } else {
            *start = a < *start ? a : *start;
            *end = b > *end ? b : *end;
        }
    }
    if (s->nmem > 0) {
        int64_t a, b;
        tl_session_mem_range(s, &a, &b); /* the series may be on disk (analyze/spill.h) */
        b = tl_ns_add(b, 1);             /* a partial's times: any int64 */
        if (*start >= *end) {
            *start = a;
            *end = b;
        } else {
            if (a < *start)
                *start = a;
            if (b > *end)
                *end = b;
        }
    }
    /* the events are drawn on this axis too (a session of events alone has one) */
    for (size_t i = 0; i < s->nevents; i++) {
        int64_t t = s->events[i].ts_ns;
        if (t == INT64_MIN)
            continue;
        if (*start >= *end) {
            *start = t;
            *end = tl_ns_add(t, 1);
        } else {
            *start = t < *start ? t : *start;
            *end = tl_ns_add(t, 1) > *end ? tl_ns_add(t, 1) : *end;
        }
    }
}

typedef struct span {
    int64_t s, e;
    size_t session;
} span;

static int by_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    return a->session < b->session ? -1 : a->session > b->session;
}

void tl_html_periods_release(tl_html_periods *p)
{
    free(p->start);
    free(p->end);
    free(p->of);
    p->start = p->end = NULL;
    p->of = NULL;
    p->n = 0;
}

/* Sweep the spans in order of start; a span that starts before the current
 * period ends joins it. */
static void sweep(tl_html_periods *p, const span *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p->n == 0 || v[i].s >= p->end[p->n - 1]) {
            p->start[p->n] = v[i].s;
            p->end[p->n] = v[i].e;
            p->n++;
        } else if (v[i].e > p->end[p->n - 1]) {
            p->end[p->n - 1] = v[i].e;
        }
        p->of[v[i].session] = (int)p->n - 1;
    }
}

int tl_html_periods_find(tl_html_periods *p, const tl_aggregate *a)
{
    size_t n = 0;
    span *v = malloc((a->nsessions + 1) * sizeof *v);
    p->n = 0;
    p->start = malloc((a->nsessions + 1) * sizeof *p->start);
    p->end = malloc((a->nsessions + 1) * sizeof *p->end);
    p->of = malloc((a->nsessions + 1) * sizeof *p->of);
    if (v == NULL || p->start == NULL || p->end == NULL || p->of == NULL) {
        free(v);
        tl_html_periods_release(p);
        return -1;
    }
    for (size_t i = 0; i < a->nsessions; i++) {
        p->of[i] = -1;
        tl_html_session_range(&a->sessions[i], &v[n].s, &v[n].e);
        if (v[n].s < v[n].e)
            v[n++].session = i;
    }
    qsort(v, n, sizeof *v, by_start);
    sweep(p, v, n);
    free(v);
    return 0;
}
