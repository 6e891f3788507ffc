/*
 * calltree.c - the call tree (see calltree.h): nodes in creation order and an
 * open-addressing index of (parent, name).
 */
#define _GNU_SOURCE
#include "calltree.h"

#include <stdlib.h>
#include <string.h>

const char *tl_calltree_kind_label(int kind)
{
    switch (kind) {
    case TL_CTK_OPS:
        return "operators (cpu_op)";
    case TL_CTK_ANNOTATIONS:
        return "annotations and sections";
    case TL_CTK_RUNTIME:
        return "runtime calls";
    case TL_CTK_PYTHON:
        return "Python frames (python_function)";
    case TL_CTK_GPU_ANNOTATIONS:
        return "GPU annotations";
    default:
        return "events";
    }
}

int tl_calltree_kind_of_label(const char *label)
{
    for (int k = 0; label != NULL && k < TL_CTK_COUNT; k++)
        if (strcmp(label, tl_calltree_kind_label(k)) == 0)
            return k;
    return TL_CTK_OTHER;
}

void tl_calltree_init(tl_calltree *t)
{
    memset(t, 0, sizeof *t);
    tl_strtab_init(&t->names);
}

void tl_calltree_release(tl_calltree *t)
{
    free(t->nodes);
    free(t->slots);
    free(t->min_ns);
    free(t->max_ns);
    free(t->ranks);
    tl_strtab_release(&t->names);
    memset(t, 0, sizeof *t);
    tl_strtab_init(&t->names);
}

void tl_calltree_move(tl_calltree *dst, tl_calltree *src)
{
    tl_calltree_release(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
    tl_strtab_init(&src->names);
}

/* a + b saturating (inputs may hold anything the readers' ranges allow). */
static int64_t add_ns(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static uint32_t hash_of(uint32_t parent, uint32_t name)
{
    uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static void put(uint32_t *slots, uint32_t nslots, const tl_cnode *nodes, uint32_t i)
{
    uint32_t j = hash_of(nodes[i].parent, nodes[i].name) & (nslots - 1);
    while (slots[j])
        j = (j + 1) & (nslots - 1);
    slots[j] = i + 1;
}

static int grow_index(tl_calltree *t, uint32_t want)
{
    uint32_t ns = t->nslots ? t->nslots : 64;
    while (want * 2 > ns)
        ns *= 2;
    if (ns == t->nslots)
        return 0;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (uint32_t i = 0; i < t->n; i++)
        put(slots, ns, t->nodes, i);
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return 0;
}

int tl_calltree_reindex(tl_calltree *t)
{
    free(t->slots);
    t->slots = NULL;
    t->nslots = 0;
    return grow_index(t, t->n + 1);
}

uint32_t tl_calltree_find(const tl_calltree *t, uint32_t parent, uint32_t name)
{
    if (t->nslots == 0)
        return TL_CALLTREE_NONE;
    uint32_t j = hash_of(parent, name) & (t->nslots - 1);
    while (t->slots[j]) {
        const tl_cnode *c = &t->nodes[t->slots[j] - 1];
        if (c->parent == parent && c->name == name)
            return t->slots[j] - 1;
        j = (j + 1) & (t->nslots - 1);
    }
    return TL_CALLTREE_NONE;
}

uint32_t tl_calltree_child(tl_calltree *t, uint32_t parent, uint32_t name)
{
    uint32_t i = tl_calltree_find(t, parent, name);
    if (i != TL_CALLTREE_NONE)
        return i;
    if (t->n >= TL_CALLTREE_MAX_NODES || grow_index(t, t->n + 1) != 0)
        return TL_CALLTREE_NONE;
    if (t->n == t->cap) { /* not tl_array_grow: the last block is clamped to TL_CALLTREE_MAX_NODES */
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        if (cap > TL_CALLTREE_MAX_NODES)
            cap = TL_CALLTREE_MAX_NODES;
        tl_cnode *x = realloc(t->nodes, cap * sizeof *x);
        if (x == NULL)
            return TL_CALLTREE_NONE;
        t->nodes = x;
        t->cap = cap;
    }
    i = t->n++;
    t->nodes[i] = (tl_cnode){ parent, name, 0, 0, 0, parent < i ? t->nodes[parent].kind : TL_CTK_OTHER };
    put(t->slots, t->nslots, t->nodes, i);
    return i;
}

const char *tl_calltree_name(const tl_calltree *t, uint32_t i)
{
    return i < t->n ? tl_strtab_get(&t->names, t->nodes[i].name) : "";
}

int tl_calltree_add(tl_calltree *dst, const tl_calltree *src, const tl_strtab *src_strs, uint32_t *map)
{
    const tl_strtab *strs = src_strs ? src_strs : &src->names;
    uint32_t *own = NULL;
    int rc = -1;
    if (map == NULL && src->n > 0 && (map = own = malloc(src->n * sizeof *own)) == NULL)
        return -1;
    dst->dropped += src->dropped;
    for (uint32_t i = 0; i < src->n; i++) {
        const tl_cnode *s = &src->nodes[i];
        uint32_t parent = s->parent == TL_CALLTREE_NONE ? TL_CALLTREE_NONE : map[s->parent];
        map[i] = TL_CALLTREE_NONE;
        if (s->parent != TL_CALLTREE_NONE && parent == TL_CALLTREE_NONE) {
            dst->dropped += s->count; /* its parent was not recorded */
            continue;
        }
        const char *name = tl_strtab_get(strs, s->name);
        uint32_t id = tl_strtab_intern(&dst->names, name, strlen(name));
        if (id == UINT32_MAX)
            goto out;
        uint32_t had = dst->n, d = tl_calltree_child(dst, parent, id);
        if (d == TL_CALLTREE_NONE) {
            if (dst->n < TL_CALLTREE_MAX_NODES)
                goto out; /* out of memory */
            dst->dropped += s->count;
            continue;
        }
        tl_cnode *x = &dst->nodes[d];
        if (d >= had)
            x->kind = s->kind; /* new in dst */
        x->incl_ns = add_ns(x->incl_ns, s->incl_ns);
        x->self_ns = add_ns(x->self_ns, s->self_ns);
        x->count += s->count;
        map[i] = d;
    }
    rc = 0;
out:
    free(own);
    return rc;
}

/* ---- children, sorted ---------------------------------------------------------- */

/* Where a root goes among the roots: sections and annotations (what a
 * person wrote down), operators, Python frames, GPU annotations, other. */
static int root_rank(const tl_calltree *t, uint32_t i)
{
    static const int order[] = { TL_CTK_ANNOTATIONS, TL_CTK_OPS, TL_CTK_PYTHON, TL_CTK_GPU_ANNOTATIONS, TL_CTK_OTHER };
    const char *name = tl_calltree_name(t, i);
    for (int k = 0; k < (int)(sizeof order / sizeof order[0]); k++)
        if (strcmp(name, tl_calltree_kind_label(order[k])) == 0)
            return k;
    return (int)(sizeof order / sizeof order[0]);
}

/* By parent (the roots, TL_CALLTREE_NONE, last; among them by kind), then
 * largest first. */
static int by_incl(const void *x, const void *y, void *ctx)
{
    const tl_calltree *t = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const tl_cnode *na = &t->nodes[a], *nb = &t->nodes[b];
    if (na->parent != nb->parent)
        return na->parent < nb->parent ? -1 : 1;
    if (na->parent == TL_CALLTREE_NONE) {
        int ra = root_rank(t, a), rb = root_rank(t, b);
        if (ra != rb)
            return ra < rb ? -1 : 1;
    }
    if (na->incl_ns != nb->incl_ns)
        return na->incl_ns > nb->incl_ns ? -1 : 1;
    int c = strcmp(tl_calltree_name(t, a), tl_calltree_name(t, b));
    if (c != 0)
        return c;
    return a < b ? -1 : a > b;
}

int tl_calltree_kids_build(tl_calltree_kids *k, const tl_calltree *t)
{
    uint32_t n = t->n;
    k->start = calloc((size_t)n + 2, sizeof *k->start);
    k->list = malloc(((size_t)n + 1) * sizeof *k->list);
    if (k->start == NULL || k->list == NULL) {
        tl_calltree_kids_release(k);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        k->list[i] = i;
    qsort_r(k->list, n, sizeof *k->list, by_incl, (void *)t);
    /* start[p] = first position of p's children; roots are p = n */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = t->nodes[i].parent == TL_CALLTREE_NONE ? n : t->nodes[i].parent;
        k->start[p + 1]++;
    }
    for (uint32_t p = 0; p <= n; p++)
        k->start[p + 1] += k->start[p];
    return 0;
}

void tl_calltree_kids_release(tl_calltree_kids *k)
{
    free(k->start);
    free(k->list);
    k->start = k->list = NULL;
}
