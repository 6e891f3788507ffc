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
 * The host's edges: the collectives' and each role's intervals (a role's are
 * disjoint and sorted, so tl_sort_stable() has few runs to merge). The GPU
 * events' edges are not listed (two an event, issue 33): gpu_edges reads
 * their starts from the profile's GPU events, which are in start order, and
 * their ends from a heap of the events still running.
 */
static int collect_host(edges *e, const tl_profile *p)
{
    /* events without a category: profile.h's plain_is_work */
    int plain_is_cpu = p->plain_is_work;
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
}

/* The GPU events' edges in time order: the next start is the next event of
 * the profile (clipped like the host's), the next end the heap's least. */
typedef struct gpu_edges {
    const tl_profile *p;
    size_t next;       /* the profile's next GPU event */
    int64_t a, b;      /* its clipped interval, when has_next */
    int cat, has_next; /* its category */
    edge *heap;        /* the ends of the events started and not ended: a min-heap by time */
    size_t nheap, heap_cap;
} gpu_edges;

/* The next GPU event with a category and something left after clipping. */
static void gpu_advance(gpu_edges *g, const edges *e)
{
    g->has_next = 0;
    for (; g->next < g->p->ngpu; g->next++) {
        const tl_gpu_event *ev = &g->p->gpu[g->next];
        int c = gpu_cat(ev);
        int64_t a = ev->ts_ns, b = tl_ns_add(ev->ts_ns, ev->dur_ns);
        if (c < 0 || !clip(e, &a, &b))
            continue;
        g->a = a;
        g->b = b;
        g->cat = c;
        g->has_next = 1;
        g->next++;
        return;
    }
}

static int heap_push(gpu_edges *g, int64_t t, int cat)
{
    if (g->nheap == g->heap_cap) {
        size_t cap = g->heap_cap ? g->heap_cap * 2 : 64;
        edge *v = realloc(g->heap, cap * sizeof *v);
        if (v == NULL)
            return -1;
        g->heap = v;
        g->heap_cap = cap;
    }
    size_t i = g->nheap++;
    while (i > 0 && g->heap[(i - 1) / 2].t > t) {
        g->heap[i] = g->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    g->heap[i] = (edge){ t, cat, -1 };
    return 0;
}

static void heap_pop(gpu_edges *g)
{
    edge last = g->heap[--g->nheap];
    size_t i = 0, n = g->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && g->heap[c + 1].t < g->heap[c].t)
            c++;
        if (g->heap[c].t >= last.t)
            break;
        g->heap[i] = g->heap[c];
        i = c;
    }
    if (n > 0)
        g->heap[i] = last;
}

/* The earliest edge left of the three sources: 0 when none is. */
static int next_time(const gpu_edges *g, const edges *e, size_t hi, int64_t *t)
{
    int any = 0;
    if (g->has_next) {
        *t = g->a;
        any = 1;
    }
    if (g->nheap > 0 && (!any || g->heap[0].t < *t)) {
        *t = g->heap[0].t;
        any = 1;
    }
    if (hi < e->n && (!any || e->v[hi].t < *t)) {
        *t = e->v[hi].t;
        any = 1;
    }
    return any;
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
    gpu_edges gpu = { 0 };
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
    if (collect_host(&e, p) != 0)
        goto out;
    /* by time: collect_host() made a few runs in order, which the sort merges (what the
     * sweep adds up at one time does not depend on the order of the edges there) */
    tl_sort_stable(e.v, e.n, sizeof *e.v, by_time);
    int active[TL_SC_COUNT] = { 0 };
    size_t hi = 0;
    int64_t t, next;
    gpu.p = p;
    gpu_advance(&gpu, &e);
    for (int more = next_time(&gpu, &e, hi, &t); more; t = next) {
        for (; hi < e.n && e.v[hi].t == t; hi++)
            active[e.v[hi].cat] += e.v[hi].delta;
        for (; gpu.nheap > 0 && gpu.heap[0].t == t; heap_pop(&gpu))
            active[gpu.heap[0].cat]--;
        for (; gpu.has_next && gpu.a == t; gpu_advance(&gpu, &e)) {
            active[gpu.cat]++;
            if (heap_push(&gpu, gpu.b, gpu.cat) != 0) /* b > a = t: it ends later */
                goto out;
        }
        if (!(more = next_time(&gpu, &e, hi, &next)))
            break;
        int c = 0;
        while (c < TL_SC_OTHER && active[c] <= 0)
            c++;
        if (c < TL_SC_OTHER)
            for (int k = 0; k < 3; k++)
                credit(&l[k], t, next, c);
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
    free(gpu.heap);
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
