/*
 * mem_ops.c - memory by operator from [memory] instants (mem_ops.h).
 */
#include "mem_ops.h"

#include <stdlib.h>
#include <string.h>

static tl_mem_ops *ops_of(tl_profile *p)
{
    if (p->memops == NULL) {
        p->memops = calloc(1, sizeof *p->memops);
        if (p->memops != NULL)
            p->memops->device = -1;
    }
    return p->memops;
}

uint32_t tl_mem_ops_pend(tl_profile *p, int64_t ts, int64_t addr, int64_t bytes, int64_t device, int64_t total)
{
    tl_mem_ops *m = ops_of(p);
    if (m == NULL)
        return UINT32_MAX;
    uint32_t k = (uint32_t)m->next++;
    m->pending[k % TL_MEM_OPS_PENDING] = (tl_mem_pending){ ts, addr, bytes, device, total };
    return k;
}

static uint32_t hash32(uint64_t x)
{
    return (uint32_t)((x * 0x9e3779b97f4a7c15ull) >> 32);
}

static tl_mem_op_row *row_of(tl_mem_ops *m, uint32_t name)
{
    if (m->nslots && m->slots != NULL) {
        for (uint32_t i = hash32(name) & (m->nslots - 1);; i = (i + 1) & (m->nslots - 1)) {
            if (m->slots[i] == 0)
                break;
            if (m->rows[m->slots[i] - 1].name == name)
                return &m->rows[m->slots[i] - 1];
        }
    }
    if (m->nrows == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 64;
        tl_mem_op_row *v = realloc(m->rows, cap * sizeof *v);
        uint32_t *s = calloc((size_t)cap * 2, sizeof *s);
        if (v == NULL || s == NULL) {
            free(s);
            if (v != NULL)
                m->rows = v;
            return NULL;
        }
        m->rows = v;
        m->cap = cap;
        free(m->slots);
        m->slots = s;
        m->nslots = cap * 2;
        for (uint32_t r = 0; r < m->nrows; r++) {
            uint32_t i = hash32(m->rows[r].name) & (m->nslots - 1);
            while (m->slots[i] != 0)
                i = (i + 1) & (m->nslots - 1);
            m->slots[i] = r + 1;
        }
    }
    tl_mem_op_row *r = &m->rows[m->nrows];
    memset(r, 0, sizeof *r);
    r->name = name;
    uint32_t i = hash32(name) & (m->nslots - 1);
    while (m->slots[i] != 0)
        i = (i + 1) & (m->nslots - 1);
    m->slots[i] = ++m->nrows;
    return r;
}

/* live bytes of a row change: keep what it held at the last peak first */
static void live_add(tl_mem_ops *m, tl_mem_op_row *r, int64_t d)
{
    if (r->snap_epoch != m->epoch) {
        r->snap = r->live;
        r->snap_epoch = m->epoch;
    }
    r->live = tl_ns_add(r->live, d);
}

static size_t live_slot(const tl_mem_ops *m, int64_t addr)
{
    return (size_t)(((uint64_t)addr * 0x9e3779b97f4a7c15ull) >> 20) & (m->live_cap - 1);
}

static int live_grow(tl_mem_ops *m)
{
    size_t cap = m->live_cap ? m->live_cap * 2 : 4096;
    if (m->nlive * 4 < m->live_cap)
        cap = m->live_cap; /* mostly deleted slots: rebuild at the same size */
    tl_mem_live *v = malloc(cap * sizeof *v), *old = m->live;
    size_t ocap = m->live_cap;
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < cap; i++)
        v[i].addr = INT64_MIN;
    m->live = v;
    m->live_cap = cap;
    m->ndead = 0;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].addr == INT64_MIN || old[i].addr == INT64_MAX)
            continue;
        size_t j = live_slot(m, old[i].addr);
        while (v[j].addr != INT64_MIN)
            j = (j + 1) & (cap - 1);
        v[j] = old[i];
    }
    free(old);
    return 0;
}

static void alloc_live(tl_mem_ops *m, int64_t addr, int64_t bytes, uint32_t row)
{
    if (m->nlive >= TL_MEM_OPS_MAX_LIVE || addr == INT64_MIN || addr == INT64_MAX) {
        m->untracked++;
        return;
    }
    if ((m->nlive + m->ndead + 1) * 2 > m->live_cap && live_grow(m) != 0) {
        m->untracked++;
        return;
    }
    size_t j = live_slot(m, addr);
    while (m->live[j].addr != INT64_MIN && m->live[j].addr != INT64_MAX && m->live[j].addr != addr)
        j = (j + 1) & (m->live_cap - 1);
    if (m->live[j].addr == addr) { /* reused without a free seen: the old one ended */
        live_add(m, &m->rows[m->live[j].row], -m->live[j].bytes);
        m->nlive--;
    } else if (m->live[j].addr == INT64_MAX) {
        m->ndead--;
    }
    m->live[j] = (tl_mem_live){ addr, bytes, row };
    m->nlive++;
}

static void free_live(tl_mem_ops *m, int64_t addr)
{
    if (m->live_cap == 0) {
        m->unmatched_frees++;
        return;
    }
    for (size_t j = live_slot(m, addr);; j = (j + 1) & (m->live_cap - 1)) {
        if (m->live[j].addr == INT64_MIN)
            break;
        if (m->live[j].addr == addr) {
            live_add(m, &m->rows[m->live[j].row], -m->live[j].bytes);
            m->live[j].addr = INT64_MAX;
            m->nlive--;
            m->ndead++;
            return;
        }
    }
    m->unmatched_frees++;
}

void tl_mem_ops_apply(tl_profile *p, uint32_t key, uint32_t stat)
{
    tl_mem_ops *m = p->memops;
    if (m == NULL)
        return;
    /* keys wrap at 2^32; at most TL_MEM_OPS_PENDING are pending (the reorder buffer's size) */
    uint32_t behind = (uint32_t)m->next - key;
    if (behind == 0 || behind > TL_MEM_OPS_PENDING)
        return;
    const tl_mem_pending *e = &m->pending[key % TL_MEM_OPS_PENDING];
    uint32_t name = stat < p->nstats ? p->stats[stat].name : TL_MEM_OPS_NO_OP;
    if (m->device < 0 && e->bytes > 0)
        m->device = e->device;
    int on_peak_device = e->device == m->device;
    if (e->bytes > 0) {
        tl_mem_op_row *r = row_of(m, name);
        if (r == NULL)
            return;
        r->allocs++;
        r->bytes = tl_ns_add(r->bytes, e->bytes);
        if (on_peak_device) {
            live_add(m, r, e->bytes);
            alloc_live(m, e->addr, e->bytes, (uint32_t)(r - m->rows));
        }
    } else if (e->bytes < 0 && on_peak_device) {
        free_live(m, e->addr);
    }
    /* the state after this instant is the peak's when its total is the highest yet */
    if (on_peak_device && e->total > m->peak) {
        m->peak = e->total;
        m->peak_ts = e->ts;
        m->epoch++;
    }
}

int64_t tl_mem_ops_peak_bytes(const tl_mem_ops *m, const tl_mem_op_row *r)
{
    if (m->epoch == 0)
        return -1;
    return r->snap_epoch == m->epoch ? r->snap : r->live;
}

void tl_mem_ops_free(tl_mem_ops *m)
{
    if (m == NULL)
        return;
    free(m->rows);
    free(m->slots);
    free(m->live);
    free(m);
}
