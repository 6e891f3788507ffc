/*
 * memops.c - device memory by operator (memops.h).
 */
#define _GNU_SOURCE /* qsort_r */
#include "memops.h"
#include "mem_ops.h"

#include <stdlib.h>
#include <string.h>

static int by_bytes(const void *x, const void *y, void *ctx)
{
    const tl_mem_op_row *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    const tl_strtab *t = ctx;
    const char *na = a->name == TL_MEM_OPS_NO_OP ? "" : tl_strtab_get(t, a->name);
    const char *nb = b->name == TL_MEM_OPS_NO_OP ? "" : tl_strtab_get(t, b->name);
    return strcmp(na, nb);
}

int tl_session_take_memops(tl_session *s, const tl_profile *p)
{
    const tl_mem_ops *m = p->memops;
    if (m == NULL || m->nrows == 0)
        return 0;
    tl_mem_op_row *v = malloc(m->nrows * sizeof *v);
    if (v == NULL)
        return -1;
    memcpy(v, m->rows, m->nrows * sizeof *v);
    qsort_r(v, m->nrows, sizeof *v, by_bytes, (void *)&p->strs);
    size_t keep = m->nrows < TL_SESSION_MAX_MEMOPS ? m->nrows : TL_SESSION_MAX_MEMOPS;
    s->memops = calloc(keep, sizeof *s->memops);
    if (s->memops == NULL) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < keep; i++) {
        const char *name = v[i].name == TL_MEM_OPS_NO_OP ? "" : tl_strtab_get(&p->strs, v[i].name);
        tl_smemop *d = &s->memops[s->nmemops];
        d->name = strdup(name);
        if (d->name == NULL) {
            free(v);
            return -1;
        }
        d->allocs = v[i].allocs;
        d->bytes = v[i].bytes;
        d->peak_bytes = tl_mem_ops_peak_bytes(m, &v[i]);
        s->nmemops++;
    }
    s->memops_dropped = m->nrows - keep;
    s->memops_peak = m->epoch > 0 ? m->peak : -1;
    free(v);
    return 0;
}

static int row_cmp(const void *x, const void *y)
{
    const tl_memop_row *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(a->name, b->name);
}

tl_memop_row *tl_memops_across(const tl_session *sessions, size_t n, size_t *nrows)
{
    size_t cap = 0;
    *nrows = 0;
    for (size_t i = 0; i < n; i++)
        if (tl_session_counts(&sessions[i]))
            cap += sessions[i].nmemops;
    if (cap == 0)
        return NULL;
    tl_memop_row *v = calloc(cap, sizeof *v);
    if (v == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_session *s = &sessions[i];
        if (!tl_session_counts(s))
            continue;
        for (size_t j = 0; j < s->nmemops; j++) {
            const tl_smemop *m = &s->memops[j];
            size_t r = 0;
            while (r < k && strcmp(v[r].name, m->name) != 0)
                r++;
            if (r == k) {
                v[k++] = (tl_memop_row){ m->name, 0, 0, -1, -1, 0 };
            }
            v[r].allocs += m->allocs;
            v[r].bytes = tl_ns_add(v[r].bytes, m->bytes);
            v[r].sessions++;
            if (m->peak_bytes > v[r].peak_bytes) {
                v[r].peak_bytes = m->peak_bytes;
                v[r].peak_rank = s->id.rank;
            }
        }
    }
    qsort(v, k, sizeof *v, row_cmp);
    *nrows = k;
    return v;
}
