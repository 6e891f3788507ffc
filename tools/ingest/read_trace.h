/*
 * read_trace.h - a trace (Chrome Trace Event Format, PyTorch profiler, libtally)
 * into a per-rank profile. See read_trace.c for what each phase becomes.
 */
#ifndef TALLY_READ_TRACE_H
#define TALLY_READ_TRACE_H

#include "profile.h"
#include "trace_stream.h"

/* Read every event from read(ctx) into p (initialized by the caller). Sets
 * the format (chrome / pytorch / tally trace), rank from distributedInfo,
 * counts, truncation and warnings. Returns 0, or -1 on a fatal read error (p
 * then holds what came before it, with p->error set). */
int tl_read_trace(tl_profile *p, tl_read_fn read, void *ctx, const tl_trace_options *opt);

#endif
