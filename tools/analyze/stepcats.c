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

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct edge {
    int64_t t;
    int cat;
    int delta;                 /* +1 an interval starts, -1 it ends */
} edge;

typedef struct edges {
    edge *v;
    size_t n, cap;
    int64_t lo, hi;            /* the steps' range: intervals are clipped to it */
} edges;

static int push(edges *e, int64_t a, int64_t b, int cat)
{
    if (a < e->lo)
        a = e->lo;
    if (b > e->hi)
        b = e->hi;
    if (!(b > a))
        return 0;
    if (e->n + 2 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 4096;
        edge *v = realloc(e->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        e->v = v;
        e->cap = cap;
    }
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
    case TL_CC_KERNEL: return TL_SC_KERNEL;
    case TL_CC_MEMCPY: return TL_SC_MEMCPY;
    case TL_CC_MEMSET: return TL_SC_MEMSET;
    default: return -1;
    }
}

typedef struct span {
    int64_t a, b;
    size_t step;
} span;

static int by_span_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a ? 1 : (a->step > b->step) - (a->step < b->step);
}

static int collect(edges *e, const tl_profile *p)
{
    /* events without a category are the work in a plain trace; in a PyTorch
     * trace they are its own markers ("Trace": the whole profile) */
    int plain_is_cpu = p->id.format != TL_FMT_KINETO;
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *g = &p->gpu[i];
        int c = gpu_cat(g);
        if (c >= 0 && push(e, g->ts_ns, tl_ns_add(g->ts_ns, g->dur_ns), c) != 0)
            return -1;
    }
    for (size_t i = 0; i < p->ncolls; i++) {
        const tl_prof_coll *c = &p->colls[i];
        if (c->side == TL_COLL_RUN && push(e, c->ts_ns, tl_ns_add(c->ts_ns, c->dur_ns), TL_SC_COMM) != 0)
            return -1;
    }
    static const int role_cat[TL_ROLE_COUNT] = { [TL_ROLE_RUNTIME] = TL_SC_RUNTIME, [TL_ROLE_DATA] = TL_SC_DATA,
                                                 [TL_ROLE_CPU] = TL_SC_CPU, [TL_ROLE_PLAIN] = TL_SC_CPU };
    for (int r = 0; r < TL_ROLE_COUNT; r++)
        for (size_t i = 0; i < p->roles[r].n && !(r == TL_ROLE_PLAIN && plain_is_cpu == 0); i++)
            if (push(e, p->roles[r].v[i][0], p->roles[r].v[i][1], role_cat[r]) != 0)
                return -1;
    return 0;
}

/* Add [a, b) of category c to the steps it overlaps (sorted by start; *lo is
 * the first whose end is past every stretch so far). */
static void credit(tl_sstepcat *out, const span *st, size_t n, size_t *lo, int64_t a, int64_t b, int c)
{
    while (*lo < n && st[*lo].b <= a)
        (*lo)++;
    for (size_t k = *lo; k < n && st[k].a < b; k++) {
        int64_t x = st[k].a > a ? st[k].a : a, y = st[k].b < b ? st[k].b : b;
        if (y > x)
            out[st[k].step].ns[c] += y - x;
    }
}

int tl_session_stepcats(tl_session *s, const tl_profile *p)
{
    if (p->nsteps == 0 || s->nsteps != p->nsteps)
        return 0;
    int host = 0;
    for (int r = 0; r < TL_ROLE_COUNT; r++)
        host |= p->roles[r].n > 0;
    if (p->ngpu == 0 && p->ncolls == 0 && !host)
        return 0; /* no events of any category: a report's loop, not a trace */
    int rc = -1;
    edges e = { NULL, 0, 0, INT64_MAX, INT64_MIN };
    span *st = calloc(p->nsteps, sizeof *st);
    tl_sstepcat *out = calloc(p->nsteps, sizeof *out);
    if (st == NULL || out == NULL)
        goto out;
    for (size_t k = 0; k < p->nsteps; k++) {
        st[k] = (span){ p->steps[k].ts_ns, tl_ns_add(p->steps[k].ts_ns, p->steps[k].dur_ns), k };
        out[k].number = p->steps[k].number;
        if (st[k].a < e.lo)
            e.lo = st[k].a;
        if (st[k].b > e.hi)
            e.hi = st[k].b;
    }
    qsort(st, p->nsteps, sizeof *st, by_span_start);
    if (collect(&e, p) != 0)
        goto out;
    qsort(e.v, e.n, sizeof *e.v, by_time);
    int active[TL_SC_COUNT] = { 0 };
    size_t lo = 0;
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
            credit(out, st, p->nsteps, &lo, t, e.v[i].t, c);
    }
    for (size_t k = 0; k < p->nsteps; k++) {
        int64_t sum = 0;
        for (int c = 0; c < TL_SC_OTHER; c++)
            sum = tl_ns_add(sum, out[k].ns[c]);
        int64_t other = p->steps[k].dur_ns - sum;
        out[k].ns[TL_SC_OTHER] = other > 0 ? other : 0;
    }
    s->stepcats = out;
    s->nstepcats = p->nsteps;
    out = NULL;
    for (int r = 0; r < TL_ROLE_COUNT; r++)
        s->stepcats_cut |= p->roles[r].cut;
    rc = 0;
out:
    free(e.v);
    free(st);
    free(out);
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
