/*
 * calltrees.c - the call trees of the ranks and their merge across ranks
 * (see aggregate.h and calltree.h).
 *
 * The one idea: trees are merged by path. A rank's tree is its session's,
 * or its sessions' summed; the merged tree is the ranks' trees summed, so
 * inclusive and self time and counts of a path are sums over ranks. While a
 * rank is added, the map from its nodes to the merged ones gives each merged
 * node that rank's inclusive time, which updates the node's least and most
 * (after the last rank, a node that some rank with a tree lacks has a least
 * of 0). Sessions come sorted (tl_aggregate_finish), so the result does not
 * depend on the order the inputs or partials arrived in.
 */
#include "aggregate.h"

#include <stdlib.h>
#include <string.h>

/* The rank's tree: a pointer to its only session's, or its own sum. */
static int rank_tree(tl_aggregate *a, tl_rank_result *r)
{
    const tl_session *only = NULL;
    size_t with = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (tl_session_counts(s) && s->calltree.n > 0) {
            only = s;
            with++;
        }
    }
    r->calltree = NULL;
    if (with == 0)
        return 0;
    if (with == 1) {
        r->calltree = &only->calltree;
        return 0;
    }
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (tl_session_counts(s) && s->calltree.n > 0 &&
            tl_calltree_add(&r->own_calltree, &s->calltree, NULL, NULL) != 0)
            return -1;
    }
    free(r->own_calltree.slots); /* only read from here on */
    r->own_calltree.slots = NULL;
    r->own_calltree.nslots = 0;
    r->calltree = &r->own_calltree;
    return 0;
}

/* Grow the merged tree's per-node arrays to its node count. */
static int grow_extra(tl_calltree *m, uint32_t *have)
{
    if (m->n <= *have)
        return 0;
    uint32_t cap = TL_CALLTREE_MAX_NODES;
    if (*have == 0) {
        m->min_ns = malloc(cap * sizeof *m->min_ns);
        m->max_ns = malloc(cap * sizeof *m->max_ns);
        m->ranks = malloc(cap * sizeof *m->ranks);
        if (m->min_ns == NULL || m->max_ns == NULL || m->ranks == NULL)
            return -1;
    }
    for (uint32_t i = *have; i < m->n; i++) {
        m->min_ns[i] = INT64_MAX;
        m->max_ns[i] = 0;
        m->ranks[i] = 0;
    }
    *have = m->n;
    return 0;
}

int tl_calltrees_begin(tl_calltrees *c)
{
    memset(c, 0, sizeof *c);
    c->map = malloc(TL_CALLTREE_MAX_NODES * sizeof *c->map);
    return c->map != NULL ? 0 : -1;
}

int tl_calltrees_add_rank(tl_aggregate *a, tl_calltrees *c, tl_rank_result *r)
{
    tl_calltree *m = &a->calltree;
    uint32_t *map = c->map;
    if (rank_tree(a, r) != 0)
        return -1;
    if (r->calltree == NULL)
        return 0;
    a->calltree_ranks++;
    if (tl_calltree_add(m, r->calltree, NULL, map) != 0 || grow_extra(m, &c->have) != 0)
        return -1;
    for (uint32_t k = 0; k < r->calltree->n; k++) {
        uint32_t d = map[k];
        if (d == TL_CALLTREE_NONE)
            continue;
        int64_t v = r->calltree->nodes[k].incl_ns;
        /* one node of the rank per path: each merged node is met once per rank */
        m->ranks[d]++;
        if (v < m->min_ns[d])
            m->min_ns[d] = v;
        if (v > m->max_ns[d])
            m->max_ns[d] = v;
    }
    return 0;
}

void tl_calltrees_end(tl_aggregate *a, tl_calltrees *c)
{
    tl_calltree *m = &a->calltree;
    for (uint32_t k = 0; m->ranks != NULL && k < m->n; k++)
        if (m->ranks[k] < (uint32_t)a->calltree_ranks)
            m->min_ns[k] = 0; /* a rank with a tree but not this path */
    free(m->slots);           /* only read from here on */
    m->slots = NULL;
    m->nslots = 0;
    free(c->map);
    c->map = NULL;
}
