/*
 * intervals.c - unions, intersections and the kind sweep (see intervals.h).
 */
#include "intervals.h"
#include "array.h"

#include <stdlib.h>
#include <string.h>

void tl_ivset_init(tl_ivset *s)
{
    memset(s, 0, sizeof *s);
}

void tl_ivset_release(tl_ivset *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

int tl_ivset_add(tl_ivset *s, int64_t start, int64_t end)
{
    if (end < start)
        end = start;
    if (tl_array_grow(&s->v, s->n, &s->cap, sizeof *s->v, 256) != 0)
        return -1;
    s->v[s->n++] = (tl_interval){ start, end };
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const tl_interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

void tl_ivset_union(tl_ivset *s)
{
    if (s->n < 2)
        return;
    /* GPU events arrive sorted by start: check before sorting (the union of
     * intervals in start order is the same whatever order ties are in) */
    size_t i0 = 1;
    while (i0 < s->n && s->v[i0 - 1].start <= s->v[i0].start)
        i0++;
    if (i0 < s->n)
        qsort(s->v, s->n, sizeof *s->v, by_start);
    size_t k = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (s->v[i].start <= s->v[k].end) {
            if (s->v[i].end > s->v[k].end)
                s->v[k].end = s->v[i].end;
        } else {
            s->v[++k] = s->v[i];
        }
    }
    s->n = k + 1;
}

int64_t tl_ivset_length(const tl_ivset *s)
{
    int64_t len = 0;
    for (size_t i = 0; i < s->n; i++)
        len += s->v[i].end - s->v[i].start;
    return len;
}

int64_t tl_ivset_intersection(const tl_ivset *a, const tl_ivset *b)
{
    int64_t len = 0;
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        int64_t lo = a->v[i].start > b->v[j].start ? a->v[i].start : b->v[j].start;
        int64_t hi = a->v[i].end < b->v[j].end ? a->v[i].end : b->v[j].end;
        if (hi > lo)
            len += hi - lo;
        if (a->v[i].end < b->v[j].end)
            i++;
        else
            j++;
    }
    return len;
}

typedef struct point {
    int64_t t;
    int kind;
    int delta; /* +1 start, -1 end */
} point;

static int by_time(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->delta - y->delta; /* ends before starts at the same instant */
}

void tl_ivrun_init(tl_ivrun *r)
{
    memset(r, 0, sizeof *r);
}

int tl_ivrun_add(tl_ivrun *r, int64_t start, int64_t end, int64_t *gap_from)
{
    if (end < start)
        end = start;
    if (r->open && start <= r->end) { /* tl_ivset_union's merge (touching ones too) */
        if (end > r->end)
            r->end = end;
        return 0;
    }
    int gap = r->open;
    if (gap) {
        *gap_from = r->end;
        r->closed += r->end - r->start;
    }
    r->start = start;
    r->end = end;
    r->open = 1;
    return gap;
}

int64_t tl_ivrun_length(const tl_ivrun *r)
{
    return r->open ? r->closed + (r->end - r->start) : 0;
}

/* The sweep over intervals in start order, without sorting or memory: every
 * interval seen so far started at or before the cursor, so from the cursor on
 * kind k is active exactly until the latest end of its intervals so far
 * (last[k]). Between two starts the time splits at those ends. */
void tl_kindsweep_init(tl_kindsweep *k)
{
    memset(k, 0, sizeof *k);
    k->last[0] = k->last[1] = k->last[2] = INT64_MIN;
    k->cur = INT64_MIN;
}

/* Credit [cur, to): the kinds' ends inside it, in order (three at most). */
static void sweep_to(tl_kindsweep *k, int64_t to)
{
    int64_t cut[3], cur = k->cur;
    int nc = 0;
    for (int i = 0; i < 3; i++)
        if (k->last[i] > cur && k->last[i] < to)
            cut[nc++] = k->last[i];
    for (int a = 1; a < nc; a++)
        for (int b = a; b > 0 && cut[b] < cut[b - 1]; b--) {
            int64_t t = cut[b];
            cut[b] = cut[b - 1];
            cut[b - 1] = t;
        }
    int64_t from = cur;
    for (int c = 0; c <= nc; c++) {
        int64_t until = c < nc ? cut[c] : to;
        int mask = (k->last[0] > from) | (k->last[1] > from) << 1 | (k->last[2] > from) << 2;
        if (mask != 0 && until > from)
            k->out[mask] += until - from;
        from = until;
        if (mask == 0)
            break; /* nothing active any more before `to` */
    }
}

void tl_kindsweep_add(tl_kindsweep *k, int64_t start, int64_t end, int kind)
{
    if (end <= start || kind < 0 || kind > 2)
        return;
    if (k->started)
        sweep_to(k, start);
    k->cur = start;
    k->started = 1;
    if (end > k->last[kind])
        k->last[kind] = end;
}

void tl_kindsweep_finish(tl_kindsweep *k, int64_t out[8])
{
    if (k->started) /* past the last interval: to the latest end */
        sweep_to(k, INT64_MAX);
    memcpy(out, k->out, 8 * sizeof *out);
    out[0] = 0;
}

int tl_sweep_kinds(const tl_kinded *v, size_t n, int64_t out[8])
{
    memset(out, 0, 8 * sizeof *out);
    if (n == 0)
        return 0;
    /* GPU events come in start order (tl_profile_finish sorts them): then one
     * pass, no sort of 2n points through qsort. Both ways give the same times. */
    int sorted = 1;
    int64_t prev = INT64_MIN;
    for (size_t i = 0; i < n && sorted; i++) {
        if (v[i].end <= v[i].start || v[i].kind < 0 || v[i].kind > 2)
            continue;
        sorted = v[i].start >= prev;
        prev = v[i].start;
    }
    if (sorted) {
        tl_kindsweep k;
        tl_kindsweep_init(&k);
        for (size_t i = 0; i < n; i++)
            tl_kindsweep_add(&k, v[i].start, v[i].end, v[i].kind);
        tl_kindsweep_finish(&k, out);
        return 0;
    }
    point *p = malloc(2 * n * sizeof *p);
    if (p == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].end <= v[i].start || v[i].kind < 0 || v[i].kind > 2)
            continue;
        p[m++] = (point){ v[i].start, v[i].kind, +1 };
        p[m++] = (point){ v[i].end, v[i].kind, -1 };
    }
    qsort(p, m, sizeof *p, by_time);
    int64_t active[3] = { 0, 0, 0 };
    for (size_t i = 0; i < m; i++) {
        if (i > 0 && p[i].t > p[i - 1].t) {
            int mask = (active[0] > 0) | (active[1] > 0) << 1 | (active[2] > 0) << 2;
            out[mask] += p[i].t - p[i - 1].t;
        }
        active[p[i].kind] += p[i].delta;
    }
    out[0] = 0; /* gaps are not a combination */
    free(p);
    return 0;
}
