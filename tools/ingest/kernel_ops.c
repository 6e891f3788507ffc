/*
 * kernel_ops.c - each kernel's launching operator and launch configuration
 * (see kernel_ops.h).
 */
#define _GNU_SOURCE /* memmem */
#include "kernel_ops.h"
#include "trace_stream.h"

#include <stdlib.h>
#include <string.h>

void tl_kops_init(tl_kops *k) { memset(k, 0, sizeof *k); }

void tl_kops_release(tl_kops *k)
{
    free(k->ops);
    free(k->launches);
    memset(k, 0, sizeof *k);
}

void tl_kops_add_op(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t dur, uint32_t name)
{
    if (k->nops == TL_KOPS_MAX_OPS) {
        k->ops_dropped++;
        return;
    }
    if (k->nops == k->ops_cap) {
        size_t cap = k->ops_cap ? k->ops_cap * 2 : 4096;
        void *v = realloc(k->ops, cap * sizeof *k->ops);
        if (v == NULL) {
            k->ops_dropped++;
            return;
        }
        k->ops = v;
        k->ops_cap = cap;
    }
    k->ops[k->nops++] = (tl_kop_range){ pid, tid, ts, tl_ns_add(ts, dur), name };
}

void tl_kops_add_launch(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t corr)
{
    if (k->nlaunches == TL_KOPS_MAX_LAUNCHES) {
        k->launches_dropped++;
        return;
    }
    if (k->nlaunches == k->launches_cap) {
        size_t cap = k->launches_cap ? k->launches_cap * 2 : 4096;
        void *v = realloc(k->launches, cap * sizeof *k->launches);
        if (v == NULL) {
            k->launches_dropped++;
            return;
        }
        k->launches = v;
        k->launches_cap = cap;
    }
    k->launches[k->nlaunches++] = (tl_kop_launch){ pid, tid, ts, corr };
}

/* The profile's entry of a kernel name, created if new; NULL beyond the cap. */
static tl_kernel_launch *entry(tl_profile *p, uint32_t name)
{
    if (name >= p->nklaunch_of) {
        size_t n = p->strs.n > name ? p->strs.n : (size_t)name + 1;
        n = n < 1024 ? 1024 : n + n / 2;
        uint32_t *v = realloc(p->klaunch_of, n * sizeof *v);
        if (v == NULL)
            return NULL;
        memset(v + p->nklaunch_of, 0, (n - p->nklaunch_of) * sizeof *v);
        p->klaunch_of = v;
        p->nklaunch_of = n;
    }
    if (p->klaunch_of[name])
        return &p->klaunch[p->klaunch_of[name] - 1];
    if (p->nklaunch == TL_PROFILE_MAX_KERNEL_LAUNCHES)
        return NULL;
    if (p->nklaunch == p->klaunch_cap) {
        size_t cap = p->klaunch_cap ? p->klaunch_cap * 2 : 256;
        void *v = realloc(p->klaunch, cap * sizeof *p->klaunch);
        if (v == NULL)
            return NULL;
        p->klaunch = v;
        p->klaunch_cap = cap;
    }
    tl_kernel_launch *e = &p->klaunch[p->nklaunch++];
    *e = (tl_kernel_launch){ .name = name, .grid = { -1, -1, -1 }, .block = { -1, -1, -1 }, .regs = -1, .smem = -1,
                             .op = UINT32_MAX };
    p->klaunch_of[name] = (uint32_t)p->nklaunch;
    return e;
}

/* "[32, 2, 1]" -> three ints; 0 when it is not three numbers. */
static int dims3(tl_view v, int32_t out[3])
{
    const char *q = v.ptr, *end = v.ptr + v.len;
    int n = 0;
    while (q < end && n < 3) {
        while (q < end && (*q == '[' || *q == ' ' || *q == ','))
            q++;
        char *after;
        long x = strtol(q, &after, 10);
        if (after == q || x < 0 || x > 0x7fffffff)
            return 0;
        out[n++] = (int32_t)x;
        q = after;
    }
    return n == 3;
}

void tl_kops_kernel_args(tl_profile *p, uint32_t name, int64_t dur, const tl_trace_event *ev)
{
    if (ev->args.ptr == NULL || memmem(ev->args.ptr, ev->args.len, "\"grid\"", 6) == NULL)
        return;
    tl_kernel_launch *e = entry(p, name);
    if (e == NULL)
        return;
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    int32_t g[3], b[3];
    int has_g = 0, has_b = 0;
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next(&it, &k, &v)) {
        if (tl_view_eq(k, "grid") && v.kind == TL_JSON_ARRAY)
            has_g = dims3(v.text, g);
        else if (tl_view_eq(k, "block") && v.kind == TL_JSON_ARRAY)
            has_b = dims3(v.text, b);
        else if (tl_view_eq(k, "registers per thread") && v.is_number && v.number >= 0 && v.number < 1e6)
            e->regs = (int32_t)v.number;
        else if (tl_view_eq(k, "shared memory") && v.is_number && v.number >= 0 && v.number < 1e12)
            e->smem = (int64_t)v.number;
        else if (tl_view_eq(k, "est. achieved occupancy %") && v.is_number && v.number >= 0 && v.number <= 100 &&
                 dur > 0) {
            e->occ_sum += v.number * (double)dur;
            e->occ_w += (double)dur;
        }
    }
    if (has_g && has_b) {
        if (e->grid[0] < 0) {
            memcpy(e->grid, g, sizeof g);
            memcpy(e->block, b, sizeof b);
        } else if (memcmp(e->grid, g, sizeof g) != 0 || memcmp(e->block, b, sizeof b) != 0) {
            e->varies = 1;
        }
    }
}

static int by_thread_start(const void *x, const void *y)
{
    const tl_kop_range *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end); /* the outer first */
}

static int by_thread_ts(const void *x, const void *y)
{
    const tl_kop_launch *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

typedef struct corr_op {
    int64_t corr;
    uint32_t op;
} corr_op;

static int by_corr(const void *x, const void *y)
{
    const corr_op *a = x, *b = y;
    return (a->corr > b->corr) - (a->corr < b->corr);
}

typedef struct kop {
    uint32_t kernel, op;
    int64_t ns;
} kop;

static int by_kernel_op(const void *x, const void *y)
{
    const kop *a = x, *b = y;
    if (a->kernel != b->kernel)
        return a->kernel < b->kernel ? -1 : 1;
    return (a->op > b->op) - (a->op < b->op);
}

#define STACK_MAX 256

int tl_kops_resolve(tl_kops *k, tl_profile *p)
{
    p->kops_dropped = k->ops_dropped + k->launches_dropped;
    if (k->nops == 0 || k->nlaunches == 0 || p->ngpu == 0)
        return 0;
    int rc = -1;
    corr_op *co = malloc(k->nlaunches * sizeof *co);
    kop *ko = malloc(p->ngpu * sizeof *ko);
    if (co == NULL || ko == NULL)
        goto out;
    qsort(k->ops, k->nops, sizeof *k->ops, by_thread_start);
    qsort(k->launches, k->nlaunches, sizeof *k->launches, by_thread_ts);
    /* per thread, a sweep: the stack holds the operators open at the launch */
    size_t nco = 0, oi = 0;
    const tl_kop_range *stack[STACK_MAX];
    size_t depth = 0;
    int64_t cur_pid = INT64_MIN, cur_tid = INT64_MIN;
    for (size_t li = 0; li < k->nlaunches; li++) {
        const tl_kop_launch *l = &k->launches[li];
        if (l->pid != cur_pid || l->tid != cur_tid) {
            cur_pid = l->pid;
            cur_tid = l->tid;
            depth = 0;
            /* skip the operators of threads before this one */
            while (oi < k->nops && (k->ops[oi].pid < l->pid || (k->ops[oi].pid == l->pid && k->ops[oi].tid < l->tid)))
                oi++;
        }
        while (oi < k->nops && k->ops[oi].pid == l->pid && k->ops[oi].tid == l->tid && k->ops[oi].ts <= l->ts) {
            const tl_kop_range *o = &k->ops[oi++];
            while (depth > 0 && stack[depth - 1]->end <= o->ts)
                depth--;
            if (depth < STACK_MAX)
                stack[depth++] = o;
        }
        while (depth > 0 && stack[depth - 1]->end <= l->ts)
            depth--;
        /* the innermost open operator that contains the launch */
        size_t d = depth;
        while (d > 0 && !(stack[d - 1]->ts <= l->ts && l->ts < stack[d - 1]->end))
            d--;
        if (d > 0)
            co[nco++] = (corr_op){ l->corr, stack[d - 1]->name };
    }
    /* Correlation ids count up in launch order, so per thread the pairs are
     * mostly in order already: sort only when they are not (ties keep their
     * order either way: glibc's qsort is a merge sort) */
    size_t c0 = 1;
    while (c0 < nco && co[c0 - 1].corr <= co[c0].corr)
        c0++;
    if (c0 < nco)
        qsort(co, nco, sizeof *co, by_corr);
    size_t nko = 0;
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *g = &p->gpu[i];
        if (g->correlation < 0 || g->cat_class != TL_CC_KERNEL)
            continue;
        corr_op key = { g->correlation, 0 };
        const corr_op *hit = bsearch(&key, co, nco, sizeof *co, by_corr);
        if (hit != NULL)
            ko[nko++] = (kop){ g->name, hit->op, g->dur_ns };
    }
    qsort(ko, nko, sizeof *ko, by_kernel_op);
    for (size_t i = 0; i < nko;) {
        tl_kernel_launch *e = entry(p, ko[i].kernel);
        size_t j = i;
        while (j < nko && ko[j].kernel == ko[i].kernel) {
            size_t m = j;
            int64_t ns = 0;
            while (m < nko && ko[m].kernel == ko[j].kernel && ko[m].op == ko[j].op)
                ns = tl_ns_add(ns, ko[m++].ns);
            if (e != NULL) {
                e->ops++;
                e->linked_ns = tl_ns_add(e->linked_ns, ns);
                if (e->op == UINT32_MAX || ns > e->op_ns) {
                    e->op = ko[j].op;
                    e->op_ns = ns;
                }
            }
            j = m;
        }
        i = j;
    }
    rc = 0;
out:
    free(co);
    free(ko);
    return rc;
}
