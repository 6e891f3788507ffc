/*
 * mem_ops.h - memory by operator: which operator allocated how much device
 * memory, from the PyTorch profiler's [memory] instants (profile_memory=True:
 * "Bytes" > 0 an allocation, < 0 a free, "Addr", "Total Allocated",
 * "Device Id") and the CPU operator that encloses each on its thread.
 *
 * The one idea: an instant is attributed when the nesting stacks reach its
 * time (nesting.h's probe, in start order with the operators), so the
 * operator is the innermost cpu_op open on the instant's thread then; an
 * allocation's address remembers its operator until the matching free. Per
 * operator: allocations, bytes allocated, and its peak contribution -- the
 * bytes it allocated that were still live when the device's "Total
 * Allocated" was at its highest (docs/analysis.md, "Memory by operator").
 * The peak is that of the first device with allocations (one GPU a rank, as
 * PyTorch ranks run); other devices' allocations count in the first two
 * columns only. Host (CPU allocator) instants are not read here.
 */
#ifndef TALLY_INGEST_MEM_OPS_H
#define TALLY_INGEST_MEM_OPS_H

#include <stdint.h>

#include "profile.h"

/* Allocations held live at once (the address map); beyond, an allocation is
 * counted but not tracked to its free (tl_mem_ops.untracked). */
#define TL_MEM_OPS_MAX_LIVE (1u << 22)
/* The instants waiting for their operator: at most the nesting's reorder
 * buffer (TL_NEST_REORDER) are pending at once. */
#define TL_MEM_OPS_PENDING 16384
/* The row of allocations outside any operator. */
#define TL_MEM_OPS_NO_OP UINT32_MAX

typedef struct tl_mem_op_row {
    uint32_t name; /* strtab id of the operator; TL_MEM_OPS_NO_OP: none */
    uint64_t allocs;
    int64_t bytes; /* allocated, summed */
    int64_t live;  /* allocated and not freed yet (on the peak device) */
    int64_t snap;  /* live at the last peak, once changed after it */
    uint64_t snap_epoch;
} tl_mem_op_row;

typedef struct tl_mem_pending {
    int64_t ts, addr, bytes, device, total;
} tl_mem_pending;

typedef struct tl_mem_live {
    int64_t addr, bytes; /* addr INT64_MIN: empty; INT64_MAX: deleted */
    uint32_t row;
} tl_mem_live;

typedef struct tl_mem_ops {
    tl_mem_op_row *rows;
    uint32_t nrows, cap;
    uint32_t *slots; /* name id -> row + 1 */
    uint32_t nslots;
    tl_mem_pending pending[TL_MEM_OPS_PENDING];
    uint64_t next; /* instants pended */
    tl_mem_live *live;
    size_t nlive, ndead, live_cap;
    int64_t device;           /* the peak device; -1 none yet */
    int64_t peak, peak_ts;    /* its highest Total Allocated, and when */
    uint64_t epoch;           /* new peaks seen */
    uint64_t untracked;       /* allocations beyond TL_MEM_OPS_MAX_LIVE */
    uint64_t unmatched_frees; /* frees of memory allocated before the trace */
} tl_mem_ops;

/* Keep one [memory] instant until its operator is known; returns the
 * probe's key (for tl_nest_probe), or UINT32_MAX out of memory. */
uint32_t tl_mem_ops_pend(tl_profile *p, int64_t ts, int64_t addr, int64_t bytes, int64_t device, int64_t total);
/* The operator of instant key is known: stat index (UINT32_MAX: none). */
void tl_mem_ops_apply(tl_profile *p, uint32_t key, uint32_t stat);
/* A row's peak contribution in bytes; -1 when no peak is known. */
int64_t tl_mem_ops_peak_bytes(const tl_mem_ops *m, const tl_mem_op_row *r);
void tl_mem_ops_free(tl_mem_ops *m);

#endif
