/*
 * shares.c - which MPI process reads which input (tally-mpi): balanced by
 * bytes, deterministic, so every process computes the same answer from the
 * same list without talking. No MPI here, so it is unit-tested alone.
 */
#include <stdlib.h>

#include "mpi_analyze.h"

typedef struct share_item {
    size_t index;
    int64_t bytes;
    int owner;
} share_item;

static int by_bytes_desc(const void *x, const void *y)
{
    const share_item *a = *(share_item *const *)x, *b = *(share_item *const *)y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Longest-processing-time first: the largest item goes to the process with
 * the fewest bytes so far (the lowest process on ties). Deterministic, so
 * every process computes the same shares. */
void tl_mpi_shares(const int64_t *bytes, size_t n, int nprocs, int *owner)
{
    share_item *it = malloc((n ? n : 1) * sizeof *it);
    share_item **order = malloc((n ? n : 1) * sizeof *order);
    int64_t *load = calloc((size_t)nprocs, sizeof *load);
    if (it == NULL || order == NULL || load == NULL) {
        for (size_t i = 0; i < n; i++) /* round robin still balances by count */
            owner[i] = (int)(i % (size_t)nprocs);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        it[i] = (share_item){ i, bytes[i] > 0 ? bytes[i] : 0, 0 };
        order[i] = &it[i];
    }
    qsort(order, n, sizeof *order, by_bytes_desc);
    for (size_t k = 0; k < n; k++) {
        int best = 0;
        for (int p = 1; p < nprocs; p++)
            if (load[p] < load[best])
                best = p;
        order[k]->owner = best;
        load[best] += order[k]->bytes + 1; /* + 1: empty files still cost an open */
    }
    for (size_t i = 0; i < n; i++)
        owner[i] = it[i].owner;
out:
    free(it);
    free(order);
    free(load);
}
