/*
 * drift.c - each stage per session and its trend (see drift.h).
 *
 * Every (stage, session number, rank) of the ranks that have two sessions or
 * more becomes one entry; sorting them by stage and session puts each cell of
 * the table (a stage in a session) in one run of entries, whose median over
 * the ranks is the cell's value. O(E log E) in the entries.
 */
#define _GNU_SOURCE
#include "drift.h"
#include "array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

typedef struct entry {
    int group;        /* -1: step time */
    const char *name; /* in entries' names: the session's bulk is dropped after it is read (spill.h) */
    int session;
    double value; /* per call (a step: the median step) */
    double calls; /* calls in the session (steps) */
} entry;

typedef struct entries {
    entry *v;
    size_t n, cap;
    tl_strtab names;
} entries;

static int push(entries *e, int group, const char *name, int session, double value, double calls)
{
    uint32_t id = tl_strtab_intern(&e->names, name, strlen(name));
    if (id == UINT32_MAX || tl_array_grow(&e->v, e->n, &e->cap, sizeof *e->v, 256) != 0)
        return -1;
    e->v[e->n++] = (entry){ group, tl_strtab_get(&e->names, id), session, value, calls };
    return 0;
}

static int by_stage(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    if (a->session != b->session)
        return a->session < b->session ? -1 : 1;
    return (a->value > b->value) - (a->value < b->value);
}

static int is_stage(int group)
{
    return group == TL_GROUP_SECTIONS || group == TL_GROUP_ITERATIONS || group == TL_GROUP_GPU_ANNOTATIONS;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median step time of a session over its whole steps (a trace's last
 * ProfilerStep, cut short, left out); NaN without them. */
static double median_step(const tl_session *s, size_t *n)
{
    *n = 0;
    double *v = malloc((s->nsteps + 1) * sizeof *v);
    if (v == NULL)
        return NAN;
    for (size_t i = 0; i < s->nsteps; i++)
        if (!s->steps[i].partial)
            v[(*n)++] = (double)s->steps[i].dur_ns;
    double m = NAN;
    if (*n > 0) {
        qsort(v, *n, sizeof *v, cmp_double);
        m = *n % 2 ? v[*n / 2] : (v[*n / 2 - 1] + v[*n / 2]) / 2;
    }
    free(v);
    return m;
}

/* The entries of one session (number k of its rank): a stage's time per
 * call, not its total -- sessions of one run need not be as long (4 steps
 * profiled, then 10: a total 2.5x as large for the same 50 ms a call). */
static int session_entries(entries *e, const tl_session *s, int k)
{
    size_t nsteps;
    double step = median_step(s, &nsteps);
    if (isfinite(step) && push(e, -1, "step", k, step, (double)nsteps) != 0)
        return -1;
    for (size_t i = 0; i < s->nnames; i++) {
        const tl_sname *x = &s->names[i];
        if (is_stage(x->group) && x->d.count > 0 &&
            push(e, x->group, x->name, k, (double)x->d.total / (double)x->d.count, (double)x->d.count) != 0)
            return -1;
    }
    return 0;
}

/* A stage's time in the first session (per call x calls): the table's order
 * and the share a stage needs to drift. */
static double first_value(const tl_drift_stage *s)
{
    return s->group < 0 ? s->value[0] : s->value[0] * s->calls[0];
}

static int by_first(const void *x, const void *y)
{
    const tl_drift_stage *a = x, *b = y;
    if ((a->group < 0) != (b->group < 0))
        return a->group < 0 ? -1 : 1; /* the step time first */
    double va = isfinite(first_value(a)) ? first_value(a) : -1, vb = isfinite(first_value(b)) ? first_value(b) : -1;
    if (va != vb)
        return va > vb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Change and slope of a stage over its sessions, and whether it drifts. */
static void trend(tl_drift_stage *s, int nsessions, double largest)
{
    s->change_pct = s->slope_pct = NAN;
    int last = -1;
    for (int k = 0; k < nsessions; k++)
        if (isfinite(s->value[k]))
            last = k;
    double v0 = s->value[0];
    if (!(isfinite(v0) && v0 > 0) || last <= 0)
        return;
    s->change_pct = 100.0 * (s->value[last] - v0) / v0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (int k = 0; k < nsessions; k++) {
        if (!isfinite(s->value[k]))
            continue;
        double y = 100.0 * s->value[k] / v0;
        sx += k;
        sy += y;
        sxx += (double)k * k;
        sxy += k * y;
        n++;
    }
    double den = n * sxx - sx * sx;
    s->slope_pct = den > 0 ? (n * sxy - sx * sy) / den : NAN;
    s->drifts = fabs(s->change_pct) > TL_DRIFT_PCT &&
                (s->group < 0 || first_value(s) >= largest * TL_DRIFT_MIN_SHARE_PCT / 100);
}

int tl_drift_compute(tl_drift *d, tl_aggregate *a)
{
    memset(d, 0, sizeof *d);
    entries e = { 0 };
    int rc = -1, most = 0;
    for (size_t r = 0; r < a->nranks; r++) {
        const tl_rank_result *rr = &a->ranks[r];
        if (rr->nsessions < 2)
            continue;
        most = rr->nsessions > (size_t)most ? (int)rr->nsessions : most;
        for (size_t k = 0; k < rr->nsessions && k < TL_DRIFT_MAX_SESSIONS; k++) {
            tl_session *s = &a->sessions[rr->sessions[k]];
            tl_spill_hold(s); /* names: the bulk */
            int bad = session_entries(&e, s, (int)k) != 0;
            tl_spill_drop(s);
            if (bad)
                goto out;
        }
    }
    rc = 0;
    if (most < 2)
        goto out;
    d->nsessions = most < TL_DRIFT_MAX_SESSIONS ? most : TL_DRIFT_MAX_SESSIONS;
    d->sessions_dropped = most - d->nsessions;
    if (e.n > 1) /* (e.v is NULL when no session has a stage: qsort must not see it) */
        qsort(e.v, e.n, sizeof *e.v, by_stage);
    size_t nstages = 0;
    for (size_t i = 0; i < e.n; i++)
        nstages += i == 0 || e.v[i].group != e.v[i - 1].group || strcmp(e.v[i].name, e.v[i - 1].name) != 0;
    rc = -1;
    d->stages = calloc(nstages + 1, sizeof *d->stages);
    if (d->stages == NULL)
        goto out;
    for (size_t i = 0; i < e.n;) {
        tl_drift_stage *s = &d->stages[d->nstages++];
        s->group = e.v[i].group;
        if ((s->name = strdup(e.v[i].name)) == NULL)
            goto out;
        for (int k = 0; k < TL_DRIFT_MAX_SESSIONS; k++)
            s->value[k] = s->calls[k] = NAN;
        while (i < e.n && e.v[i].group == s->group && strcmp(e.v[i].name, s->name) == 0) {
            size_t j = i; /* one cell: sorted by value, so its median is in the middle */
            while (j < e.n && e.v[j].group == s->group && e.v[j].session == e.v[i].session &&
                   strcmp(e.v[j].name, s->name) == 0)
                j++;
            size_t n = j - i;
            int k = e.v[i].session;
            s->value[k] = n % 2 ? e.v[i + n / 2].value : (e.v[i + n / 2 - 1].value + e.v[i + n / 2].value) / 2;
            s->nranks[k] = (int)n;
            double calls = 0;
            for (size_t c = i; c < j; c++)
                calls += e.v[c].calls;
            s->calls[k] = calls / (double)n;
            i = j;
        }
    }
    double largest = 0;
    for (size_t i = 0; i < d->nstages; i++)
        if (d->stages[i].group >= 0 && isfinite(first_value(&d->stages[i])) && first_value(&d->stages[i]) > largest)
            largest = first_value(&d->stages[i]);
    for (size_t i = 0; i < d->nstages; i++)
        trend(&d->stages[i], d->nsessions, largest);
    qsort(d->stages, d->nstages, sizeof *d->stages, by_first);
    if (d->nstages > TL_DRIFT_MAX_STAGES) {
        for (size_t i = TL_DRIFT_MAX_STAGES; i < d->nstages; i++)
            free(d->stages[i].name);
        d->stages_dropped = d->nstages - TL_DRIFT_MAX_STAGES;
        d->nstages = TL_DRIFT_MAX_STAGES;
    }
    rc = 0;
out:
    free(e.v);
    tl_strtab_release(&e.names);
    if (rc != 0)
        tl_drift_release(d);
    return rc;
}

void tl_drift_release(tl_drift *d)
{
    for (size_t i = 0; i < d->nstages; i++)
        free(d->stages[i].name);
    free(d->stages);
    memset(d, 0, sizeof *d);
}
