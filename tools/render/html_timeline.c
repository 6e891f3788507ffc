/*
 * html_timeline.c - the timelines section: one swimlane per rank and GPU
 * stream (or CPU thread), on a common time axis, steps marked.
 *
 * The one idea: each session's timeline comes at its own resolution
 * (TL_TIMELINE_BINS bins over its own range); here every lane is rebinned
 * onto the page's column grid over the common range, each source bin adding
 * its busy fractions to the columns it overlaps in proportion to the
 * overlap. Lanes of one rank with the same stream (or thread) in several
 * sessions share a row. The column count shrinks when there are many lanes,
 * so the section stays within about 1.5 MB whatever the input. Sessions
 * whose times do not overlap (other runs, a rank's sessions far apart) are
 * drawn on axes of their own, one per period (html_axis.c), and the page
 * says so.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "units.h"

#define MAX_LANES 512             /* rows drawn over all charts */
#define TIMELINE_RANKS 64         /* ranks drawn, past which a chosen set (tl_html_ranks_drawn) */
#define MAX_CALLS 3000            /* CPU calls drawn by name over all charts (the widest) */
#define MAX_CALL_ROWS 96          /* rows of calls under the lanes of one chart (the first lanes' first) */
#define MAX_MARKS_PER_RANK 100    /* step marks per rank */
#define TIMELINE_BUDGET 1500000.0 /* bytes of lane paths, worst case about 10 per run */
#define LANE_WAIT 2               /* a rank's row of its waits in collectives (not a tl_lane_kind) */

/* ---- one chart: lanes, cells and marks ---------------------------------------------------------- */

typedef struct lane_key {
    size_t rank; /* index into a->ranks */
    int kind;
    int64_t a, b;
    char label[128];
    double share[TL_KT_COUNT + 1]; /* busy, then by kind, as shares of the columns */
    uint64_t calls_total;          /* CPU: the lane's events (named or in the shading) */
    int rows_seen, rows_allot;     /* CPU: rows of calls of a column or more, and rows drawn */
} lane_key;

typedef struct grid {
    int64_t t0, t1;
    int ncols;
    double colw; /* ns per column */
    const tl_html_periods *periods;
    int period; /* the sessions drawn: those of this period */
    lane_key *keys;
    tl_svg_lane *lanes;
    size_t n, cap;
    uint8_t *cells; /* per lane: kind[ncols], level[ncols] */
    tl_svg_mark *marks;
    size_t nmarks, mcap;
    tl_svg_call *calls; /* every lane's calls, lane by lane */
    size_t ncalls;
    size_t calls_budget; /* calls that may still be drawn */
    uint64_t calls_left; /* calls of the drawn CPU lanes not drawn by name */
} grid;

static void grid_release(grid *g)
{
    free(g->keys);
    free(g->lanes);
    free(g->cells);
    free(g->marks);
    free(g->calls);
    memset(g, 0, sizeof *g);
}

static int add_lane(grid *g, size_t ri, int rank, const tl_lane *l, size_t first)
{
    for (size_t i = first; i < g->n; i++)
        if (g->keys[i].kind == l->kind && g->keys[i].a == l->a && g->keys[i].b == l->b)
            return 0;
    if (g->n == g->cap)
        return 1; /* full: counted by the caller */
    lane_key *k = &g->keys[g->n];
    memset(k, 0, sizeof *k);
    k->rank = ri;
    k->kind = l->kind;
    k->a = l->a;
    k->b = l->b;
    snprintf(k->label, sizeof k->label, "rank %d \xc2\xb7 %.100s", rank,
             l->label ? l->label : (l->kind == TL_LANE_GPU ? "GPU stream" : "thread"));
    g->lanes[g->n].group_start = g->n == first; /* the rank's first row, whatever the sort */
    g->n++;
    return 0;
}

/* CPU threads first (what the host did, then what the GPU did), then by
 * pid and tid (or device and stream, a GPU's other streams last). */
static int by_lane(const void *x, const void *y)
{
    const lane_key *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind == TL_LANE_CPU ? -1 : 1;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The rank's waits per collective instance (waits.h: inst_wait, over the
 * instances of its first session), when it waited at all and that session
 * is drawn in this period; else NULL. */
static const tl_rank_waits *rank_waits(const tl_aggregate *a, size_t ri, const tl_html_periods *p, int period)
{
    const tl_waits *w = &a->waits;
    const tl_rank_result *r = &a->ranks[ri];
    if (w->source == TL_WAITS_NONE || ri >= w->nranks || !w->ranks[ri].used || w->ranks[ri].inst_wait == NULL ||
        w->ranks[ri].waited_ns <= 0 || r->nsessions == 0 || p->of[r->sessions[0]] != period)
        return NULL;
    return &w->ranks[ri];
}

/* The lanes of one rank, sorted, then its waits in collectives; returns how
 * many did not fit. */
static size_t rank_lanes(grid *g, const tl_aggregate *a, size_t ri)
{
    const tl_rank_result *r = &a->ranks[ri];
    size_t first = g->n, dropped = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_timeline *t = &a->sessions[r->sessions[k]].timeline;
        if (t->start_ns >= t->end_ns || g->periods->of[r->sessions[k]] != g->period)
            continue;
        for (size_t l = 0; l < t->nlanes; l++)
            dropped += add_lane(g, ri, r->rank, &t->lanes[l], first);
    }
    if (g->n > first)
        qsort(g->keys + first, g->n - first, sizeof *g->keys, by_lane);
    if (g->n > first && rank_waits(a, ri, g->periods, g->period) != NULL) {
        if (g->n == g->cap)
            return dropped + 1;
        lane_key *k = &g->keys[g->n];
        memset(k, 0, sizeof *k);
        k->rank = ri;
        k->kind = LANE_WAIT;
        snprintf(k->label, sizeof k->label, "rank %d \xc2\xb7 waiting in collectives", r->rank);
        g->n++;
    }
    return dropped;
}

/* Add one session lane's bins to the columns they overlap. */
static void rebin(const grid *g, const tl_timeline *t, const tl_lane *l, float *acc)
{
    double bw = ((double)t->end_ns - (double)t->start_ns) / TL_TIMELINE_BINS;
    double off = ((double)t->start_ns - (double)g->t0);
    for (int i = 0; i < TL_TIMELINE_BINS; i++) {
        float any = 0;
        for (int k = 0; k < TL_KT_COUNT; k++)
            any += tl_lane_busy(l, k, (size_t)i);
        if (!(any > 0))
            continue;
        double x0 = (off + i * bw) / g->colw, x1 = (off + (i + 1) * bw) / g->colw;
        int c0 = x0 < 0 ? 0 : (int)floor(x0), c1 = x1 > g->ncols ? g->ncols : (int)ceil(x1);
        for (int c = c0; c < c1; c++) {
            double ov = fmin(x1, c + 1.0) - fmax(x0, (double)c);
            for (int k = 0; ov > 0 && k < TL_KT_COUNT; k++)
                acc[k * g->ncols + c] += (float)(tl_lane_busy(l, k, (size_t)i) * ov);
        }
    }
}

/* Any work at all shows, at the faintest shade: events of microseconds in a
 * lane of minutes (a column of 250 ms) left it looking empty. */
static uint8_t level_of(double u)
{
    return !(u > 0) ? 0 : u <= 0.25 ? 1 : u <= 0.5 ? 2 : u <= 0.75 ? 3 : 4;
}

/* From the accumulated fractions to each column's dominant kind and level. */
static void cells_of(grid *g, size_t li, const float *acc)
{
    uint8_t *kind = g->cells + li * 2 * (size_t)g->ncols, *level = kind + g->ncols;
    lane_key *k = &g->keys[li];
    for (int c = 0; c < g->ncols; c++) {
        double u = 0, best = -1;
        int bk = 0;
        for (int t = 0; t < TL_KT_COUNT; t++) {
            double v = fmin(1.0, acc[t * g->ncols + c]);
            u += v;
            k->share[t + 1] += v;
            if (v > best) {
                best = v;
                bk = t;
            }
        }
        u = fmin(u, 1.0);
        k->share[0] += u;
        kind[c] = (uint8_t)bk;
        level[c] = level_of(u);
    }
    for (int t = 0; t <= TL_KT_COUNT; t++)
        k->share[t] *= 100.0 / g->ncols;
    g->lanes[li].label = k->label;
    g->lanes[li].cpu = k->kind == TL_LANE_CPU;
    g->lanes[li].kind = kind;
    g->lanes[li].level = level;
    if (k->kind == TL_LANE_CPU)
        snprintf(g->lanes[li].note, sizeof g->lanes[li].note, "busy %.1f%% of the time shown (outermost events)",
                 k->share[0]);
    else
        snprintf(g->lanes[li].note, sizeof g->lanes[li].note,
                 "busy %.1f%% of the time shown (compute %.1f%%, "
                 "communication %.1f%%, memory %.1f%%, other %.1f%%)",
                 k->share[0], k->share[1], k->share[2], k->share[3], k->share[4]);
}

/* A rank's row of waits: each matched instance it waited in adds
 * [its arrival, the last arrival) (waits.h, on its own clock: the axis of its
 * session's timeline) to the columns it overlaps; drawn in the wait color,
 * shaded by the share of the column spent waiting. */
static void wait_cells(grid *g, size_t li, const tl_aggregate *a, float *acc)
{
    lane_key *k = &g->keys[li];
    const tl_rank_waits *rw = rank_waits(a, k->rank, g->periods, g->period);
    const tl_session *s = &a->sessions[a->ranks[k->rank].sessions[0]];
    uint64_t n = 0;
    int64_t total = 0;
    for (size_t i = 0; rw != NULL && i < s->ninsts; i++) {
        int64_t w = rw->inst_wait[i];
        if (w <= 0)
            continue;
        n++;
        total = tl_ns_add(total, w);
        double x0 = ((double)s->insts[i].ts_ns - (double)g->t0) / g->colw, x1 = x0 + (double)w / g->colw;
        int c0 = x0 < 0 ? 0 : (int)floor(x0), c1 = x1 > g->ncols ? g->ncols : (int)ceil(x1);
        for (int c = c0; c < c1; c++) {
            double ov = fmin(x1, c + 1.0) - fmax(x0, (double)c);
            if (ov > 0)
                acc[c] += (float)ov;
        }
    }
    uint8_t *kind = g->cells + li * 2 * (size_t)g->ncols, *level = kind + g->ncols;
    for (int c = 0; c < g->ncols; c++) {
        kind[c] = TL_SVG_KIND_WAIT;
        level[c] = level_of(fmin(1.0, acc[c]));
    }
    char d[48];
    g->lanes[li].label = k->label;
    g->lanes[li].kind = kind;
    g->lanes[li].level = level;
    snprintf(g->lanes[li].note, sizeof g->lanes[li].note,
             "waited %s in %llu collective instance%s for the last "
             "rank to arrive (from its own arrival to the last one's)",
             tl_units_dur(d, sizeof d, (double)total), (unsigned long long)n, n == 1 ? "" : "s");
}

static int fill_cells(grid *g, const tl_aggregate *a)
{
    float *acc = malloc((size_t)TL_KT_COUNT * g->ncols * sizeof *acc);
    g->cells = malloc(g->n * 2 * (size_t)g->ncols + 1);
    if (acc == NULL || g->cells == NULL) {
        free(acc);
        return -1;
    }
    for (size_t li = 0; li < g->n; li++) {
        const lane_key *key = &g->keys[li];
        const tl_rank_result *r = &a->ranks[key->rank];
        memset(acc, 0, (size_t)TL_KT_COUNT * g->ncols * sizeof *acc);
        if (key->kind == LANE_WAIT) {
            wait_cells(g, li, a, acc);
            continue;
        }
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_timeline *t = &a->sessions[r->sessions[k]].timeline;
            if (g->periods->of[r->sessions[k]] != g->period)
                continue;
            for (size_t l = 0; t->start_ns < t->end_ns && l < t->nlanes; l++)
                if (t->lanes[l].kind == key->kind && t->lanes[l].a == key->a && t->lanes[l].b == key->b)
                    rebin(g, t, &t->lanes[l], acc);
        }
        cells_of(g, li, acc);
    }
    free(acc);
    return 0;
}

/* ---- calls by name (CPU lanes) ------------------------------------------------------------------ */

static int by_width_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

typedef struct calls_pass {
    double min_w;   /* columns */
    double *widths; /* collecting: the width of every call of at least min_w */
    size_t nwidths, cap;
    size_t take; /* taking: room left in g->calls */
    int taking, oom;
} calls_pass;

static void one_call(grid *g, calls_pass *cp, size_t li, const tl_lane_call *c, const char *name)
{
    double c0 = ((double)c->ts_ns - (double)g->t0) / g->colw, c1 = c0 + (double)c->dur_ns / g->colw;
    c0 = c0 < 0 ? 0 : c0;
    c1 = c1 > g->ncols ? g->ncols : c1;
    if (!(c1 - c0 >= cp->min_w))
        return;
    if (!cp->taking) {
        if (c->row + 1 > g->keys[li].rows_seen)
            g->keys[li].rows_seen = c->row + 1;
        if (tl_array_grow(&cp->widths, cp->nwidths, &cp->cap, sizeof *cp->widths, 1024) != 0) {
            cp->oom = 1;
            return;
        }
        cp->widths[cp->nwidths++] = c1 - c0;
        return;
    }
    if (cp->take == 0 || c->row >= g->keys[li].rows_allot)
        return;
    cp->take--;
    /* g->calls is allocated once and filled lane by lane: each lane's calls are one run of it */
    tl_svg_lane *l = &g->lanes[li];
    tl_svg_call *x = &g->calls[g->ncalls++];
    *x = (tl_svg_call){ c0, c1, c->row, name, (double)c->dur_ns };
    if (l->calls == NULL)
        l->calls = x;
    l->ncalls++;
    if (c->row + 1 > l->rows)
        l->rows = c->row + 1;
}

/* Every call of the chart's CPU lanes through one_call, lane by lane. */
static void each_call(grid *g, const tl_aggregate *a, calls_pass *cp)
{
    for (size_t li = 0; li < g->n; li++) {
        const lane_key *key = &g->keys[li];
        if (key->kind != TL_LANE_CPU)
            continue;
        const tl_rank_result *r = &a->ranks[key->rank];
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_timeline *t = &a->sessions[r->sessions[k]].timeline;
            if (g->periods->of[r->sessions[k]] != g->period)
                continue;
            for (size_t l = 0; t->start_ns < t->end_ns && l < t->nlanes; l++) {
                const tl_lane *ln = &t->lanes[l];
                if (ln->kind != key->kind || ln->a != key->a || ln->b != key->b)
                    continue;
                if (!cp->taking)
                    g->keys[li].calls_total += ln->calls_left + ln->ncalls;
                for (uint32_t i = 0; i < ln->ncalls; i++)
                    one_call(g, cp, li, &ln->calls[i], tl_strtab_get(&t->names, ln->calls[i].name));
            }
        }
    }
}

/* MAX_CALL_ROWS rows of calls shared fairly among the chart's CPU lanes (a
 * lane that needs fewer than its share leaves the rest to the others), so
 * the last ranks' threads get rows too, not only the first ranks'. */
static void allot_rows(grid *g)
{
    int rows = MAX_CALL_ROWS;
    size_t want = 0;
    for (size_t li = 0; li < g->n; li++) {
        g->keys[li].rows_allot = 0;
        want += g->keys[li].rows_seen > 0;
    }
    while (want > 0 && rows > 0) {
        int share = rows / (int)want > 0 ? rows / (int)want : 1;
        size_t still = 0;
        for (size_t li = 0; li < g->n && rows > 0; li++) {
            lane_key *k = &g->keys[li];
            int need = k->rows_seen - k->rows_allot;
            if (need <= 0)
                continue;
            int take = need < share ? need : share;
            k->rows_allot += take;
            rows -= take;
            still += k->rows_seen > k->rows_allot;
        }
        want = still;
    }
}

/* The calls drawn: those of at least a column (about a pixel), or the
 * budget's widest when there are more. */
static int fill_calls(grid *g, const tl_aggregate *a)
{
    calls_pass cp = { .min_w = 1.0 };
    each_call(g, a, &cp);
    if (cp.oom) {
        free(cp.widths);
        return -1;
    }
    size_t take = cp.nwidths;
    if (cp.nwidths > g->calls_budget) {
        qsort(cp.widths, cp.nwidths, sizeof *cp.widths, by_width_desc);
        take = g->calls_budget;
        cp.min_w = take > 0 ? cp.widths[take - 1] : INFINITY;
    }
    free(cp.widths);
    cp.widths = NULL;
    if (take == 0)
        return 0;
    allot_rows(g);
    if ((g->calls = malloc(take * sizeof *g->calls)) == NULL)
        return -1;
    cp.taking = 1;
    cp.take = take;
    each_call(g, a, &cp);
    for (size_t li = 0; li < g->n; li++) {
        tl_svg_lane *l = &g->lanes[li];
        size_t len = strlen(l->note);
        if (l->ncalls == 1 && len < sizeof l->note)
            snprintf(l->note + len, sizeof l->note - len,
                     "; its longest call drawn below it, %llu more in the "
                     "shading",
                     (unsigned long long)(g->keys[li].calls_total - l->ncalls));
        else if (l->ncalls > 0 && len < sizeof l->note)
            snprintf(l->note + len, sizeof l->note - len,
                     "; its %zu longest calls drawn below it by nesting, %llu more "
                     "in the shading",
                     l->ncalls, (unsigned long long)(g->keys[li].calls_total - l->ncalls));
    }
    return 0;
}

/* Step marks of the rank whose lanes are [lane0, lane0 + n); every k-th
 * step when there are many, and none closer than half a column. */
static int rank_marks(grid *g, const tl_rank_result *r, int lane0, int n)
{
    size_t every = r->nsteps / MAX_MARKS_PER_RANK + 1;
    double last = -1;
    int titled = r->nsteps <= 50;
    for (size_t k = 0; k < r->nsteps; k += every) {
        const tl_sstep *st = &r->steps[k];
        if (st->ts_ns == INT64_MIN || st->ts_ns < g->t0 || st->ts_ns > g->t1)
            continue;
        double col = ((double)st->ts_ns - (double)g->t0) / g->colw;
        if (last >= 0 && col - last < 0.5)
            continue;
        if (tl_array_grow(&g->marks, g->nmarks, &g->mcap, sizeof *g->marks, 64) != 0)
            return -1;
        tl_svg_mark *m = &g->marks[g->nmarks++];
        char d[48];
        *m = (tl_svg_mark){ col, lane0, n, "", 0 };
        if (titled)
            snprintf(m->title, sizeof m->title, "rank %d, step %lld: %s", r->rank, (long long)st->number,
                     tl_units_dur(d, sizeof d, (double)st->dur_ns));
        last = col;
    }
    return 0;
}

/* Event markers of the rank (html_events.c has them all in a table), at most
 * MAX_MARKS_PER_RANK, above its lanes. */
static int rank_events(grid *g, const tl_aggregate *a, const tl_rank_result *r, int lane0, int n)
{
    size_t added = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (g->periods->of[r->sessions[k]] != g->period)
            continue;
        for (size_t j = 0; j < s->nevents && added < MAX_MARKS_PER_RANK; j++) {
            const tl_sevent *e = &s->events[j];
            if (e->ts_ns == INT64_MIN || e->ts_ns < g->t0 || e->ts_ns > g->t1)
                continue;
            if (tl_array_grow(&g->marks, g->nmarks, &g->mcap, sizeof *g->marks, 64) != 0)
                return -1;
            tl_svg_mark *m = &g->marks[g->nmarks++];
            char d[48];
            *m = (tl_svg_mark){ ((double)e->ts_ns - (double)g->t0) / g->colw, lane0, n, "", 1 };
            snprintf(m->title, sizeof m->title, "rank %d, %s at %s: %s", r->rank, e->name,
                     tl_units_dur(d, sizeof d, ((double)e->ts_ns - (double)g->t0)), e->payload);
            added++;
        }
    }
    return 0;
}

static int all_marks(grid *g, const tl_aggregate *a)
{
    for (size_t i = 0; i < g->n;) {
        size_t j = i;
        while (j < g->n && g->keys[j].rank == g->keys[i].rank)
            j++;
        if (rank_marks(g, &a->ranks[g->keys[i].rank], (int)i, (int)(j - i)) != 0 ||
            rank_events(g, a, &a->ranks[g->keys[i].rank], (int)i, (int)(j - i)) != 0)
            return -1;
        i = j;
    }
    return 0;
}

/* ---- writing ------------------------------------------------------------------------------------- */

static void lane_rows(FILE *f, const grid *g, size_t *rows)
{
    for (size_t i = 0; i < g->n && *rows < TL_HTML_MAX_ROWS; i++, (*rows)++) {
        const lane_key *k = &g->keys[i];
        if (k->kind == LANE_WAIT)
            continue; /* not a busy time: its tooltip says how long it waited */
        fputs("<tr><th scope=\"row\">", f);
        tl_escape_html(f, k->label);
        fputs("</th>", f);
        for (int t = 0; t <= TL_KT_COUNT; t++)
            tl_html_td(f, k->share[t], TL_UNIT_PCT);
        fputs("</tr>\n", f);
    }
}

static void axis_label(char *buf, size_t len, int64_t t0)
{
    char t[48];
    if (tl_units_is_wall(t0))
        snprintf(buf, len, "time since %s", tl_units_time(t, sizeof t, t0));
    else
        snprintf(buf, len, "time since %s on the trace's own clock", tl_units_dur(t, sizeof t, (double)t0));
}

/* The chart's <desc>: what it draws, and only that (a chart without CPU
 * calls, steps or events does not promise them). */
static void chart_desc(char *buf, size_t len, const grid *g)
{
    char span[48];
    int gpu = 0, cpu = 0, steps = 0, events = 0, waits = 0;
    for (size_t i = 0; i < g->n; i++) {
        cpu |= g->keys[i].kind == TL_LANE_CPU;
        gpu |= g->keys[i].kind == TL_LANE_GPU;
        waits |= g->keys[i].kind == LANE_WAIT;
    }
    for (size_t i = 0; i < g->nmarks; i++) {
        events |= g->marks[i].event;
        steps |= !g->marks[i].event;
    }
    size_t n = 0;
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        int w_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);                                                \
        n += w_ > 0 ? (size_t)w_ : 0;                                                                                  \
    } while (0)
    ADD("%zu swimlanes (one per rank and %s) over %s, in %d columns", g->n,
        gpu && cpu ? "GPU stream or CPU thread"
        : gpu      ? "GPU stream"
                   : "CPU thread",
        tl_units_dur(span, sizeof span, ((double)g->t1 - (double)g->t0)), g->ncols);
    if (gpu)
        ADD("; each column of a GPU stream is colored by its main kind of work (compute, communication, memory, "
            "other) and shaded by how busy it is");
    if (cpu)
        ADD("; a CPU thread's columns are shaded by how busy the thread is");
    if (g->ncalls > 0)
        ADD("; a CPU thread's longest calls are drawn below it by name, stacked by nesting");
    if (waits)
        ADD("; a rank's last row marks its time waiting in collectives, from its arrival to the last rank's");
    if (steps)
        ADD("; thin vertical lines mark step starts");
    if (events)
        ADD("; triangles mark events");
    ADD(". The legend under the axis keys the colors.");
#undef ADD
}

static void chart(tl_html *h, grid *g, const char *who)
{
    char id[16], title[160], desc[600], axl[96];
    axis_label(axl, sizeof axl, g->t0);
    if (g->periods->n > 1)
        snprintf(title, sizeof title, "Timeline of %s, period %d of %zu", who, g->period + 1, g->periods->n);
    else
        snprintf(title, sizeof title, "Timeline of %s", who);
    chart_desc(desc, sizeof desc, g);
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), title, desc };
    tl_svg_timeline t = { g->lanes, g->n, g->ncols, ((double)g->t1 - (double)g->t0), axl, g->marks, g->nmarks };
    tl_svg_timeline_write(h->f, &fr, &t);
}

typedef struct state {
    int ncols;
    size_t calls;   /* calls that may still be drawn by name (MAX_CALLS over all charts) */
    size_t left;    /* lanes that may still be drawn */
    size_t dropped; /* lanes not drawn */
    size_t rows;    /* rows of the lane table */
    FILE *table;    /* the lane table, written after the charts */
} state;

/* The ranks with lanes in a chart: "rank 3" or "8 ranks". */
static void who(char *buf, size_t len, const grid *g, const tl_aggregate *a)
{
    size_t ranks = 0;
    for (size_t i = 0; i < g->n; i++)
        ranks += i == 0 || g->keys[i].rank != g->keys[i - 1].rank;
    if (ranks == 1)
        snprintf(buf, len, "rank %d", a->ranks[g->keys[0].rank].rank);
    else
        snprintf(buf, len, "%zu ranks", ranks);
}

/* The chart of one period. */
static int one_chart(tl_html *h, state *st, const tl_html_periods *p, int period)
{
    int64_t t0 = p->start[period], t1 = p->end[period];
    grid g = { .t0 = t0,
               .t1 = t1,
               .ncols = st->ncols,
               .colw = ((double)t1 - (double)t0) / st->ncols,
               .periods = p,
               .period = period,
               .cap = st->left };
    g.keys = calloc(g.cap + 1, sizeof *g.keys);
    g.lanes = calloc(g.cap + 1, sizeof *g.lanes);
    unsigned char *drawn = NULL;
    int held = 0;
    int rc = -1;
    if (g.keys == NULL || g.lanes == NULL)
        goto out;
    /* past TIMELINE_RANKS ranks: the stragglers, the extremes and a sample,
     * not the lowest-numbered (html_sections.h) */
    size_t nd;
    drawn = tl_html_ranks_drawn(h->a, TIMELINE_RANKS, &nd);
    held = 1;
    for (size_t ri = 0; ri < h->a->nranks; ri++)
        if (drawn == NULL || drawn[ri]) {
            tl_aggregate_hold_rank(h->a, &h->a->ranks[ri]); /* their lanes: the bulk (spill.h), until out */
            st->dropped += rank_lanes(&g, h->a, ri);
        }
    rc = 0;
    if (g.n == 0)
        goto out;
    rc = -1;
    g.calls_budget = st->calls;
    if (fill_cells(&g, h->a) != 0 || fill_calls(&g, h->a) != 0 || all_marks(&g, h->a) != 0)
        goto out;
    st->calls -= g.ncalls;
    char w[64];
    who(w, sizeof w, &g, h->a);
    chart(h, &g, w);
    lane_rows(st->table, &g, &st->rows);
    st->left -= g.n;
    rc = 0;
out:
    grid_release(&g);
    for (size_t ri = 0; held && ri < h->a->nranks; ri++)
        if (drawn == NULL || drawn[ri])
            tl_aggregate_drop_rank(h->a, &h->a->ranks[ri]);
    free(drawn);
    return rc;
}

static size_t count_lanes(const tl_aggregate *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        if (a->sessions[i].timeline.start_ns < a->sessions[i].timeline.end_ns)
            n += a->sessions[i].timeline.nlanes;
    return n;
}

static void table_out(tl_html *h, const state *st, const char *rows, size_t len)
{
    FILE *f = h->f;
    tl_html_details(f, "Data table");
    fputs("<div class=\"scroll\"><table>\n<caption>Each swimlane's busy time as a share of the time shown, and "
          "by kind of work</caption>\n<thead><tr><th scope=\"col\">Lane</th><th scope=\"col\">Busy</th>"
          "<th scope=\"col\">Compute</th><th scope=\"col\">Communication</th><th scope=\"col\">Memory</th>"
          "<th scope=\"col\">Other</th></tr></thead>\n<tbody>\n",
          f);
    fwrite(rows, 1, len, f);
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, st->rows, MAX_LANES - st->left, "lanes");
    tl_html_details_end(f);
}

void tl_html_timelines(tl_html *h)
{
    tl_html_periods p;
    size_t lanes = count_lanes(h->a);
    tl_html_open(h, "timelines", "Timelines");
    if (lanes == 0) {
        int events = 0;
        for (size_t i = 0; i < h->a->nsessions && !events; i++)
            events = h->a->sessions[i].nevents > 0 && tl_session_counts(&h->a->sessions[i]);
        tl_html_none(h, events ? "No swimlanes: the inputs carry no timed work (sections, kernels) to draw, only the "
                                 "events below."
                               : "No timeline data: the inputs carry no events with times to draw.");
        tl_html_events(h);
        tl_html_close(h);
        return;
    }
    double cols = TIMELINE_BUDGET / (10.0 * (double)(lanes < MAX_LANES ? lanes : MAX_LANES));
    state st = { cols > 1000 ? 1000 : cols < 200 ? 200 : (int)cols, MAX_CALLS, MAX_LANES, 0, 0, NULL };
    char *rows = NULL;
    size_t len = 0;
    if (tl_html_periods_find(&p, h->a) != 0 || (st.table = open_memstream(&rows, &len)) == NULL) {
        h->oom = 1;
        tl_html_periods_release(&p);
        tl_html_close(h);
        return;
    }
    if (p.n > 1)
        fprintf(h->f,
                "<p>The inputs cover %zu periods of time that do not overlap (runs, or sessions of a rank, "
                "at different times): each is drawn on its own time axis.</p>\n",
                p.n);
    for (size_t k = 0; k < p.n; k++)
        if (one_chart(h, &st, &p, (int)k) != 0)
            h->oom = 1;
    fclose(st.table);
    tl_html_more(h, MAX_LANES - st.left, MAX_LANES - st.left + st.dropped,
                 "lanes not drawn (the page draws at "
                 "most 512)");
    if (h->a->nranks > TIMELINE_RANKS)
        tl_html_ranks_drawn_note(h, TIMELINE_RANKS, h->a->nranks);
    if (rows != NULL)
        table_out(h, &st, rows, len);
    free(rows);
    tl_html_periods_release(&p);
    tl_html_events(h);
    tl_html_close(h);
}
