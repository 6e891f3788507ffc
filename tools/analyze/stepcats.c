/*
 * stepcats.c - each step's time by category, as TensorBoard's overview splits
 * it (docs/analysis.md, "Step time by category").
 *
 * The one idea: one sweep over the boundaries of every interval of every
 * category (the GPU events of the profile, its CPU-side collectives that run
 * in place, the host's runtime, data-loading and CPU ranges that read_trace
 * unioned per role) gives, for each stretch of time, the first category active
 * in it, in tl_stepcat's order; each stretch is added to the steps it
 * overlaps. What no category covers is the step's "other", so the categories
 * of a step add up to its time.
 */
#include "aggregate.h"
#include "sort_stable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct edge {
    int64_t t;
    int cat;
    int delta; /* +1 an interval starts, -1 it ends */
} edge;

typedef struct edges {
    edge *v;
    size_t n, cap;
    int64_t lo, hi; /* the steps' range: intervals are clipped to it */
} edges;

/* Room for k more edges. */
static int reserve(edges *e, size_t k)
{
    if (e->n + k <= e->cap)
        return 0;
    size_t cap = e->cap ? e->cap : 4096;
    while (cap < e->n + k)
        cap *= 2;
    edge *v = realloc(e->v, cap * sizeof *v);
    if (v == NULL)
        return -1;
    e->v = v;
    e->cap = cap;
    return 0;
}

/* The interval [a, b) clipped to the steps' range; 0 when nothing is left. */
static int clip(const edges *e, int64_t *a, int64_t *b)
{
    if (*a < e->lo)
        *a = e->lo;
    if (*b > e->hi)
        *b = e->hi;
    return *b > *a;
}

static int push(edges *e, int64_t a, int64_t b, int cat)
{
    if (!clip(e, &a, &b))
        return 0;
    if (reserve(e, 2) != 0)
        return -1;
    e->v[e->n++] = (edge){ a, cat, 1 };
    e->v[e->n++] = (edge){ b, cat, -1 };
    return 0;
}

static int by_time(const void *x, const void *y)
{
    const edge *a = x, *b = y;
    return (a->t > b->t) - (a->t < b->t);
}

/* The category of a GPU event: kernels by kernel type, copies and sets by
 * category; sync events on a stream are none (TensorBoard's roles have none). */
static int gpu_cat(const tl_gpu_event *g)
{
    if (g->type == TL_KT_COMM)
        return TL_SC_COMM;
    switch (g->cat_class) {
    case TL_CC_KERNEL:
        return TL_SC_KERNEL;
    case TL_CC_MEMCPY:
        return TL_SC_MEMCPY;
    case TL_CC_MEMSET:
        return TL_SC_MEMSET;
    default:
        return -1;
    }
}

typedef struct span {
    int64_t a, b;
    size_t step;
    int64_t len; /* what the categories add up to (a step's dur_ns) */
} span;

/* Times come from the input, which may hold anything an int64 can. */
static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static int by_span_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a ? 1 : (a->step > b->step) - (a->step < b->step);
}

/*
 * The edges in an order that is nearly sorted, so that tl_sort_stable() has
 * few runs to merge: the GPU events' starts as they are (the profile's GPU
 * events are in start order), then their ends stream by stream (on a stream
 * one kernel follows another, so each stream's ends are in order), then the
 * collectives' and each role's intervals (a role's are disjoint and sorted).
 */
static int collect(edges *e, const tl_profile *p)
{
    /* events without a category: profile.h's plain_is_work */
    int plain_is_cpu = p->plain_is_work;
    size_t nst = (size_t)p->nstreams + 1; /* the last: an index out of range, should there be one */
    size_t *at = calloc(nst + 1, sizeof *at), ngpu = 0;
    if (at == NULL || reserve(e, p->ngpu) != 0)
        goto fail;
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *g = &p->gpu[i];
        int c = gpu_cat(g);
        int64_t a = g->ts_ns, b = tl_ns_add(g->ts_ns, g->dur_ns);
        if (c < 0 || !clip(e, &a, &b))
            continue;
        e->v[e->n++] = (edge){ a, c, 1 };
        at[(g->stream < p->nstreams ? g->stream : p->nstreams) + 1]++;
        ngpu++;
    }
    if (reserve(e, ngpu) != 0)
        goto fail;
    for (size_t k = 1; k <= nst; k++) /* where each stream's ends go */
        at[k] += at[k - 1];
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *g = &p->gpu[i];
        int c = gpu_cat(g);
        int64_t a = g->ts_ns, b = tl_ns_add(g->ts_ns, g->dur_ns);
        if (c < 0 || !clip(e, &a, &b))
            continue;
        e->v[e->n + at[g->stream < p->nstreams ? g->stream : p->nstreams]++] = (edge){ b, c, -1 };
    }
    e->n += ngpu;
    free(at);
    for (size_t i = 0; i < p->ncolls; i++) {
        const tl_prof_coll *c = &p->colls[i];
        if (c->side == TL_COLL_RUN && push(e, c->ts_ns, tl_ns_add(c->ts_ns, c->dur_ns), TL_SC_COMM) != 0)
            return -1;
    }
    static const int role_cat[TL_ROLE_COUNT] = { [TL_ROLE_RUNTIME] = TL_SC_RUNTIME,
                                                 [TL_ROLE_DATA] = TL_SC_DATA,
                                                 [TL_ROLE_CPU] = TL_SC_CPU,
                                                 [TL_ROLE_PLAIN] = TL_SC_CPU };
    for (int r = 0; r < TL_ROLE_COUNT; r++)
        for (size_t i = 0; i < p->roles[r].n && !(r == TL_ROLE_PLAIN && plain_is_cpu == 0); i++)
            if (push(e, p->roles[r].v[i][0], p->roles[r].v[i][1], role_cat[r]) != 0)
                return -1;
    return 0;
fail:
    free(at);
    return -1;
}

/* Spans that receive the stretches: the steps, or one side's collective
 * windows. Within a list the spans do not overlap and are sorted by start, so
 * each list is walked once (lo: the first whose end is past every stretch so
 * far). out[span.step] receives. */
typedef struct spans {
    span *v;
    size_t n, lo;
    tl_sstepcat *out;
} spans;

static void credit(spans *l, int64_t a, int64_t b, int c)
{
    while (l->lo < l->n && l->v[l->lo].b <= a)
        l->lo++;
    for (size_t k = l->lo; k < l->n && l->v[k].a < b; k++) {
        int64_t x = l->v[k].a > a ? l->v[k].a : a, y = l->v[k].b < b ? l->v[k].b : b;
        if (y > x)
            l->out[l->v[k].step].ns[c] += y - x;
    }
}

/* Every span's "other": what no category covers. */
static void finish_other(spans *l)
{
    for (size_t k = 0; k < l->n; k++) {
        tl_sstepcat *o = &l->out[l->v[k].step];
        int64_t sum = 0;
        for (int c = 0; c < TL_SC_OTHER; c++)
            sum = tl_ns_add(sum, o->ns[c]);
        int64_t other = l->v[k].len - sum;
        o->ns[TL_SC_OTHER] = other > 0 ? other : 0;
    }
}

/* Each instance's window on one side (docs/analysis.md, "Waits"): from the
 * previous release -- the latest end of the instances of the same side that
 * started before it -- to its own start, on the profile's axis. The first
 * instance, and one that starts before the previous release, has none. */
static size_t windows_of(const tl_session *s, int side, int64_t base, span *out)
{
    size_t n = 0;
    int64_t release = INT64_MIN;
    for (size_t k = 0; k < s->ninsts; k++) {
        const tl_scoll *c = &s->insts[k];
        if (c->side != side)
            continue;
        int64_t ts = sat_sub(c->ts_ns, base), end = tl_ns_add(ts, c->dur_ns);
        if (release != INT64_MIN && ts > release)
            out[n++] = (span){ release, ts, k, sat_sub(ts, release) };
        if (end > release)
            release = end;
    }
    return n;
}

static int by_step_index(const void *x, const void *y)
{
    const tl_sstepcat *a = x, *b = y;
    return (a->number > b->number) - (a->number < b->number);
}

int tl_session_stepcats(tl_session *s, const tl_profile *p)
{
    int host = 0;
    for (int r = 0; r < TL_ROLE_COUNT; r++)
        host |= p->roles[r].n > 0;
    if (p->ngpu == 0 && p->ncolls == 0 && !host)
        return 0; /* no events of any category: a report's loop, not a trace */
    int steps = p->nsteps > 0 && s->nsteps == p->nsteps;
    int rc = -1;
    edges e = { NULL, 0, 0, INT64_MAX, INT64_MIN };
    /* 0: the steps; 1, 2: the windows of GPU collectives and of CPU ones that run in place */
    spans l[3] = { { 0 } };
    size_t nw = 0;
    l[0].v = calloc(p->nsteps + 1, sizeof *l[0].v);
    l[0].out = calloc(p->nsteps + 1, sizeof *l[0].out);
    l[1].v = calloc(s->ninsts + 1, sizeof *l[1].v);
    l[2].v = calloc(s->ninsts + 1, sizeof *l[2].v);
    tl_sstepcat *win = calloc(s->ninsts + 1, sizeof *win);
    if (l[0].v == NULL || l[0].out == NULL || l[1].v == NULL || l[2].v == NULL || win == NULL)
        goto out;
    for (size_t k = 0; steps && k < p->nsteps; k++) {
        l[0].v[l[0].n++] =
            (span){ p->steps[k].ts_ns, tl_ns_add(p->steps[k].ts_ns, p->steps[k].dur_ns), k, p->steps[k].dur_ns };
        l[0].out[k].number = p->steps[k].number;
    }
    qsort(l[0].v, l[0].n, sizeof *l[0].v, by_span_start);
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    l[1].n = windows_of(s, TL_COLL_GPU, base, l[1].v);
    l[2].n = windows_of(s, TL_COLL_RUN, base, l[2].v);
    for (int i = 1; i < 3; i++)
        for (size_t k = 0; k < l[i].n; k++) { /* the window's record, found again by its instance */
            win[nw].number = (int64_t)l[i].v[k].step;
            l[i].v[k].step = nw++;
        }
    l[1].out = l[2].out = win;
    if (l[0].n == 0 && nw == 0) {
        rc = 0;
        goto out;
    }
    for (int i = 0; i < 3; i++)
        for (size_t k = 0; k < l[i].n; k++) {
            if (l[i].v[k].a < e.lo)
                e.lo = l[i].v[k].a;
            if (l[i].v[k].b > e.hi)
                e.hi = l[i].v[k].b;
        }
    if (collect(&e, p) != 0)
        goto out;
    /* by time: collect() made a few runs in order, which the sort merges (what the sweep
     * adds up at one time does not depend on the order there) */
    tl_sort_stable(e.v, e.n, sizeof *e.v, by_time);
    int active[TL_SC_COUNT] = { 0 };
    for (size_t i = 0; i < e.n;) {
        int64_t t = e.v[i].t;
        for (; i < e.n && e.v[i].t == t; i++)
            active[e.v[i].cat] += e.v[i].delta;
        if (i == e.n)
            break;
        int c = 0;
        while (c < TL_SC_OTHER && active[c] <= 0)
            c++;
        if (c < TL_SC_OTHER)
            for (int k = 0; k < 3; k++)
                credit(&l[k], t, e.v[i].t, c);
    }
    for (int i = 0; i < 3; i++)
        finish_other(&l[i]);
    if (l[0].n > 0) {
        s->stepcats = l[0].out;
        s->nstepcats = p->nsteps;
        l[0].out = NULL;
        for (int r = 0; r < TL_ROLE_COUNT; r++)
            s->stepcats_cut |= p->roles[r].cut;
    }
    if (nw > 0) {
        qsort(win, nw, sizeof *win, by_step_index);
        s->coll_windows = win;
        s->ncoll_windows = nw;
        win = NULL;
    }
    rc = 0;
out:
    free(e.v);
    for (int i = 0; i < 3; i++)
        free(l[i].v);
    free(l[0].out);
    free(win);
    return rc;
}

/* ---- across ranks ------------------------------------------------------------- */

static void rank_means(tl_aggregate *a, tl_rank_result *r)
{
    double sum[TL_SC_COUNT] = { 0 };
    size_t n = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (s->nstepcats != s->nsteps)
            continue;
        r->stepcats_cut |= s->stepcats_cut;
        for (size_t i = 0; i < s->nstepcats; i++) {
            if (s->steps[i].partial)
                continue;
            for (int c = 0; c < TL_SC_COUNT; c++)
                sum[c] += (double)s->stepcats[i].ns[c];
            n++;
        }
    }
    r->stepcat_steps = n;
    for (int c = 0; c < TL_SC_COUNT; c++)
        r->stepcat_mean[c] = n ? sum[c] / (double)n : NAN;
}

typedef struct by_step {
    double mean;
    int rank;
} by_step;

static int by_mean(const void *x, const void *y)
{
    const by_step *a = x, *b = y;
    if (a->mean != b->mean)
        return a->mean < b->mean ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

void tl_aggregate_stepcats(tl_aggregate *a)
{
    a->stepcat_rank = -1;
    a->stepcat_rank_straggler = 0;
    by_step *v = calloc(a->nranks + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        tl_rank_result *r = &a->ranks[i];
        rank_means(a, r);
        if (r->stepcat_steps == 0)
            continue;
        double mean = 0;
        for (int c = 0; c < TL_SC_COUNT; c++)
            mean += r->stepcat_mean[c];
        if (r->straggler && a->stepcat_rank < 0) {
            a->stepcat_rank = r->rank;
            a->stepcat_rank_straggler = 1;
        }
        if (v != NULL)
            v[n++] = (by_step){ mean, r->rank };
    }
    if (a->stepcat_rank < 0 && n > 0) {
        qsort(v, n, sizeof *v, by_mean);
        a->stepcat_rank = v[(n - 1) / 2].rank;
    }
    free(v);
}
