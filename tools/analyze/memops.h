/*
 * memops.h - device memory by operator: a session's table from its profile
 * (ingest/mem_ops.h), and the table across sessions for the outputs
 * (docs/analysis.md, "Memory by operator").
 */
#ifndef TALLY_ANALYZE_MEMOPS_H
#define TALLY_ANALYZE_MEMOPS_H

#include "profile.h"
#include "session.h"

/* The profile's operators by bytes allocated (the TL_SESSION_MAX_MEMOPS
 * first, the rest counted) into s. 0, or -1 out of memory. */
int tl_session_take_memops(tl_session *s, const tl_profile *p);

/* One operator across the sessions that count: allocations and bytes
 * summed, the peak contribution the largest of any session (each rank's own
 * device peak), with the rank it was on. */
typedef struct tl_memop_row {
    const char *name; /* borrowed from a session */
    uint64_t allocs;
    int64_t bytes;
    int64_t peak_bytes; /* -1 unknown */
    int peak_rank;      /* -1 unknown */
    int sessions;
} tl_memop_row;

/* The rows over sessions[0..n) that count (tl_identity_counts), by bytes
 * allocated (ties: name); *nrows set. NULL when none (or out of memory:
 * then *nrows is 0 too). The caller frees the array. */
tl_memop_row *tl_memops_across(const tl_session *sessions, size_t n, size_t *nrows);

#endif
