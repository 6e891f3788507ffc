/*
 * watch.c - the numbers of one `tally watch` frame (watch.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry.h"
#include "watch.h"

/* Steps per second over a rank's steps [from, n): their count over their
 * summed durations; NaN without any. */
static double rate(const tl_rank_result *r, size_t from)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = from; i < r->nsteps; i++)
        if (r->steps[i].dur_ns > 0) {
            sum += (double)r->steps[i].dur_ns;
            k++;
        }
    return k > 0 && sum > 0 ? 1e9 * (double)k / sum : NAN;
}

static void steps(tl_watch_view *v, const tl_aggregate *a)
{
    double all = 0, recent = 0;
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        v->steps += r->step_count;
        double x = rate(r, 0), y = rate(r, r->nsteps > TL_WATCH_RECENT ? r->nsteps - TL_WATCH_RECENT : 0);
        if (isfinite(x) && isfinite(y)) {
            all += x;
            recent += y;
            n++;
        }
        if (i == 0 && r->nsteps > 0)
            v->step_last_ns = (double)r->steps[r->nsteps - 1].dur_ns;
        if (r->span_ns > 0 && !((double)r->span_ns <= v->span_ns))
            v->span_ns = (double)r->span_ns;
    }
    if (n > 0) {
        v->steps_per_s = all / (double)n;
        v->recent_per_s = recent / (double)n;
    }
}

static void stages(tl_watch_view *v, const tl_aggregate *a)
{
    double span = 0;
    for (size_t i = 0; i < a->nranks; i++)
        span += a->ranks[i].span_ns > 0 ? (double)a->ranks[i].span_ns : 0;
    size_t count = 0;
    size_t *top = tl_name_table_top(&a->names, TL_GROUP_SECTIONS, &count);
    for (size_t k = 0; top != NULL && k < count && v->nstages < TL_WATCH_STAGES; k++) {
        const tl_name_row *row = &a->names.rows[top[k]];
        v->stages[v->nstages] = row->name;
        v->share[v->nstages++] = span > 0 ? 100.0 * row->incl_total / span : NAN;
    }
    free(top);
}

/* The series a frame shows, in this order for each device: the GPU's
 * utilization, memory, temperature and power, the host's CPU, RSS and disk
 * rates. Other kinds (clocks, system memory, load) are summary's. */
static const int shown_kinds[] = { TL_SERIES_GPU_UTIL, TL_SERIES_GPU_MEM, TL_SERIES_GPU_TEMP,  TL_SERIES_GPU_POWER,
                                   TL_SERIES_CPU,      TL_SERIES_RSS,     TL_SERIES_DISK_READ, TL_SERIES_DISK_WRITE };
#define NSHOWN (sizeof shown_kinds / sizeof shown_kinds[0])

static int kind_order(int kind)
{
    for (size_t i = 0; i < NSHOWN; i++)
        if (shown_kinds[i] == kind)
            return (int)i;
    return -1;
}

/* By rank, then the GPUs by index, the host last, then kind_order. */
static int by_place(const void *x, const void *y)
{
    const tl_watch_series *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->device != b->device) {
        if (a->device < 0 || b->device < 0)
            return a->device < 0 ? 1 : -1;
        return a->device < b->device ? -1 : 1;
    }
    return kind_order(a->kind) - kind_order(b->kind);
}

/* The series of each rank's latest session: its latest bin and the bins
 * before it for the sparkline. */
static void series(tl_watch_view *v, const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (r->nsessions == 0)
            continue;
        const tl_session *s = &a->sessions[r->sessions[r->nsessions - 1]];
        for (size_t k = 0; k < s->nseries; k++) {
            const tl_tseries *t = &s->series[k];
            if (t->n == 0 || kind_order(t->kind) < 0)
                continue;
            if (v->nseries == TL_WATCH_SERIES) {
                v->series_left++;
                continue;
            }
            tl_watch_series *w = &v->series[v->nseries++];
            w->kind = t->kind;
            w->device = t->device;
            w->rank = r->rank;
            w->max = t->max;
            w->last = NAN;
            int from = t->nbins > TL_WATCH_SPARK ? t->nbins - TL_WATCH_SPARK : 0;
            for (int b = from; b < t->nbins; b++) {
                w->spark[w->nspark++] = t->bmean[b];
                if (isfinite(t->bmean[b]))
                    w->last = t->bmean[b];
            }
            if (!isfinite(w->last))
                w->last = t->mean;
        }
        if (s->abs_time && s->span_ns > 0) {
            double end = (double)s->start_ns + (double)s->span_ns; /* both may be extreme: in doubles */
            if (end < 9.2e18 && (v->end_wall_ns == INT64_MIN || (int64_t)end > v->end_wall_ns))
                v->end_wall_ns = (int64_t)end;
        }
    }
    qsort(v->series, v->nseries, sizeof v->series[0], by_place);
}

void tl_watch_compute(tl_watch_view *v, const tl_aggregate *a)
{
    memset(v, 0, sizeof *v);
    v->steps_per_s = v->recent_per_s = v->step_last_ns = v->span_ns = NAN;
    v->end_wall_ns = INT64_MIN;
    v->nranks = a->nranks;
    steps(v, a);
    stages(v, a);
    series(v, a);
}
