/*
 * kinfo.c - each kernel's launching operator and launch configuration, from
 * the profile (ingest/kernel_ops.h) into the session, and, with each kernel's
 * type, into tables of the aggregate the kernel table looks names up in
 * (docs/analysis.md, "Kernels").
 */
#define _GNU_SOURCE /* qsort_r */
#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

static int64_t weight(const tl_kernel_launch *e)
{
    return e->linked_ns > (int64_t)e->occ_w ? e->linked_ns : (int64_t)e->occ_w;
}

static int by_weight(const void *x, const void *y, void *ctx)
{
    const tl_strtab *strs = ctx;
    const tl_kernel_launch *a = *(const tl_kernel_launch *const *)x, *b = *(const tl_kernel_launch *const *)y;
    int64_t wa = weight(a), wb = weight(b);
    if (wa != wb)
        return wa > wb ? -1 : 1;
    return strcmp(tl_strtab_get(strs, a->name), tl_strtab_get(strs, b->name));
}

int tl_session_kinfo(tl_session *s, const tl_profile *p)
{
    if (p->nklaunch == 0)
        return 0;
    const tl_kernel_launch **v = malloc(p->nklaunch * sizeof *v);
    if (v == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->nklaunch; i++)
        if (p->klaunch[i].op != UINT32_MAX || p->klaunch[i].grid[0] >= 0)
            v[n++] = &p->klaunch[i];
    qsort_r(v, n, sizeof *v, by_weight, (void *)&p->strs);
    if (n > TL_SESSION_MAX_KINFO)
        n = TL_SESSION_MAX_KINFO;
    s->kinfo = calloc(n + 1, sizeof *s->kinfo);
    if (s->kinfo == NULL) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const tl_kernel_launch *e = v[i];
        tl_skinfo *k = &s->kinfo[s->nkinfo++];
        k->name = strdup(tl_strtab_get(&p->strs, e->name));
        k->op = e->op != UINT32_MAX ? strdup(tl_strtab_get(&p->strs, e->op)) : NULL;
        if (k->name == NULL || (e->op != UINT32_MAX && k->op == NULL)) {
            free(v);
            return -1;
        }
        k->ops = e->ops;
        k->op_ns = e->op_ns;
        k->linked_ns = e->linked_ns;
        for (int d = 0; d < 3; d++) {
            k->grid[d] = e->grid[d];
            k->block[d] = e->block[d];
        }
        k->regs = e->regs;
        k->smem = e->smem;
        k->occupancy = e->occ_w > 0 ? e->occ_sum / e->occ_w : NAN;
        k->varies = e->varies;
    }
    free(v);
    return 0;
}

/* Is x better than best for the kernel table: more time with a known
 * operator, or as much with a launch configuration where best has none. */
static int better(const tl_skinfo *x, const tl_skinfo *best)
{
    return x->linked_ns > best->linked_ns || (x->linked_ns == best->linked_ns && best->grid[0] < 0 && x->grid[0] >= 0);
}

/* Each kernel name's type: the lowest the sessions give it (they agree, but
 * for a partial edited by hand). */
static int add_kernel_types(tl_aggregate *a, const tl_session *s)
{
    for (size_t k = 0; k < s->nkernels; k++) {
        const tl_skernel *x = &s->kernels[k];
        uint32_t known = a->kernel_type_names.n;
        uint32_t id = tl_strtab_intern(&a->kernel_type_names, x->name, strlen(x->name));
        if (id == UINT32_MAX)
            return -1;
        if (id == known) { /* a new name */
            if (tl_array_grow(&a->kernel_types, id, &a->kernel_types_cap, sizeof *a->kernel_types, 64) != 0)
                return -1;
            a->kernel_types[id] = x->type;
        } else if (x->type < a->kernel_types[id]) {
            a->kernel_types[id] = x->type;
        }
    }
    return 0;
}

int tl_aggregate_kinfo_add(tl_aggregate *a, const tl_session *s)
{
    if (add_kernel_types(a, s) != 0)
        return -1;
    for (size_t k = 0; k < s->nkinfo; k++) {
        const tl_skinfo *x = &s->kinfo[k];
        uint32_t id = tl_strtab_intern(&a->kinfo_names, x->name, strlen(x->name));
        if (id == UINT32_MAX)
            return -1;
        if (id == a->nkinfo) { /* a new name */
            if (tl_array_grow(&a->kinfo, a->nkinfo, &a->kinfo_cap, sizeof *a->kinfo, 64) != 0)
                return -1;
            a->kinfo[a->nkinfo++] = (tl_skinfo){ .linked_ns = INT64_MIN };
        }
        tl_skinfo *best = &a->kinfo[id];
        if (best->linked_ns != INT64_MIN && !better(x, best))
            continue;
        char *op = x->op ? strdup(x->op) : NULL;
        if (x->op && op == NULL)
            return -1;
        free(best->op);
        *best = *x;
        best->name = a->kinfo_names.strs[id];
        best->op = op;
    }
    return 0;
}

void tl_aggregate_kinfo_release(tl_aggregate *a)
{
    for (size_t i = 0; i < a->nkinfo; i++)
        free(a->kinfo[i].op);
    free(a->kinfo);
    a->kinfo = NULL;
    a->nkinfo = a->kinfo_cap = 0;
    tl_strtab_release(&a->kinfo_names);
    free(a->kernel_types);
    a->kernel_types = NULL;
    a->kernel_types_cap = 0;
    tl_strtab_release(&a->kernel_type_names);
}

int tl_kernel_type(const tl_aggregate *a, const char *name)
{
    uint32_t id = tl_strtab_find(&a->kernel_type_names, name, strlen(name));
    return id < a->kernel_type_names.n ? a->kernel_types[id] : -1;
}

const tl_skinfo *tl_kernel_info(const tl_aggregate *a, const char *name)
{
    uint32_t id = tl_strtab_find(&a->kinfo_names, name, strlen(name));
    return id < a->nkinfo ? &a->kinfo[id] : NULL;
}
