/*
 * watch_text.c - one frame of `tally watch` (analyze/watch.h): plain lines,
 * no control characters; the command clears the screen before a frame on a
 * terminal and separates frames by a blank line elsewhere.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "render.h"
#include "telemetry.h"
#include "units.h"

/* A value of a series in its unit: "87.0%", "12.1 GiB", "65 °C", "250 W". */
static const char *series_value(char *buf, size_t n, int kind, double v)
{
    if (!isfinite(v))
        return tl_units_fmt(buf, n, v, TL_UNIT_COUNT);
    switch (kind) {
    case TL_SERIES_GPU_UTIL:
    case TL_SERIES_CPU:
    case TL_SERIES_SYS_CPU:
        return tl_units_pct(buf, n, v);
    case TL_SERIES_GPU_MEM:
    case TL_SERIES_RSS:
    case TL_SERIES_SYS_USED:
    case TL_SERIES_SYS_AVAIL:
        return tl_units_bytes(buf, n, v);
    case TL_SERIES_DISK_READ:
    case TL_SERIES_DISK_WRITE: {
        char b[32];
        snprintf(buf, n, "%s/s", tl_units_bytes(b, sizeof b, v));
        return buf;
    }
    case TL_SERIES_GPU_TEMP:
        snprintf(buf, n,
                 "%.0f \xc2\xb0"
                 "C",
                 v);
        return buf;
    case TL_SERIES_GPU_POWER:
        snprintf(buf, n, "%.0f W", v);
        return buf;
    case TL_SERIES_GPU_SM_CLOCK:
    case TL_SERIES_GPU_MEM_CLOCK:
        snprintf(buf, n, "%.0f MHz", v);
        return buf;
    default:
        return tl_units_count(buf, n, v);
    }
}

/* A sparkline of the points: eight block heights from the points' least to
 * their most (all alike: the lowest block); a point without a sample is a
 * space. */
static void spark(FILE *f, const double *p, int n)
{
    static const char *const blocks[8] = { "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                           "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" };
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(p[i])) {
            lo = p[i] < lo ? p[i] : lo;
            hi = p[i] > hi ? p[i] : hi;
        }
    for (int i = 0; i < n; i++) {
        if (!isfinite(p[i])) {
            fputc(' ', f);
            continue;
        }
        int b = hi > lo ? (int)((p[i] - lo) / (hi - lo) * 7.0 + 0.5) : 0;
        fputs(blocks[b < 0 ? 0 : b > 7 ? 7 : b], f);
    }
}

void tl_render_watch_frame(FILE *f, const tl_watch_view *v, const char *path, int64_t written_s, int64_t now_s)
{
    char a[48], b[48], c[48];
    fprintf(f, "tally watch: %s\n", path);
    fprintf(f, "report written %s (%lld s ago)", tl_units_date(a, sizeof a, written_s),
            (long long)(now_s > written_s ? now_s - written_s : 0));
    if (v->end_wall_ns != INT64_MIN)
        fprintf(f, "; last event %s", tl_units_time(b, sizeof b, v->end_wall_ns));
    fprintf(f, "; profiled %s; %zu rank%s\n", tl_units_dur(c, sizeof c, v->span_ns), v->nranks,
            v->nranks == 1 ? "" : "s");
    if (v->steps > 0) {
        fprintf(f, "steps    %llu", (unsigned long long)v->steps);
        if (isfinite(v->steps_per_s))
            fprintf(f, "   %.3g/s overall   %.3g/s over the last %d   last step %s", v->steps_per_s, v->recent_per_s,
                    TL_WATCH_RECENT, tl_units_dur(a, sizeof a, v->step_last_ns));
        fputc('\n', f);
    } else {
        fprintf(f, "steps    none yet (tally_iteration_begin/end marks them)\n");
    }
    if (v->nstages > 0) {
        fprintf(f, "stages  ");
        for (size_t i = 0; i < v->nstages; i++)
            fprintf(f, " %s %s%s", v->stages[i], tl_units_pct(a, sizeof a, v->share[i]),
                    i + 1 < v->nstages ? "  " : "");
        fputc('\n', f);
    }
    if (v->nseries == 0)
        fprintf(f, "telemetry none in the report (TALLY_SAMPLE_MS starts the sampler)\n");
    for (size_t i = 0; i < v->nseries; i++) {
        const tl_watch_series *s = &v->series[i];
        char who[48];
        if (s->device >= 0)
            snprintf(who, sizeof who, "rank %d GPU %lld", s->rank, (long long)s->device);
        else
            snprintf(who, sizeof who, "rank %d host", s->rank);
        const char *val = series_value(a, sizeof a, s->kind, s->last);
        int pad = 12 - tl_units_cols(val); /* columns, not bytes: "°C" */
        fprintf(f, "%-14s %-16s %*s%s  ", who, tl_series_label(s->kind), pad > 0 ? pad : 0, "", val);
        spark(f, s->spark, s->nspark);
        fprintf(f, "  max %s\n", series_value(b, sizeof b, s->kind, s->max));
    }
    if (v->series_left > 0)
        fprintf(f, "(%zu more series not shown)\n", v->series_left);
}
