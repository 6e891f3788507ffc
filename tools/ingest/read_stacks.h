/*
 * read_stacks.h - torch.profiler's export_stacks text into a profile's call
 * tree, the flame graph's data.
 *
 * The format (torch/autograd/profiler_util.py, EventList.export_stacks, as
 * prof.export_stacks(path, "self_cuda_time_total") writes it; the input of
 * Brendan Gregg's flamegraph.pl): one line per profiled event that has a
 * Python stack (with_stack=True) and a positive metric: its stack frames from
 * the outermost to the innermost, joined by ';' (spaces, ';', tabs and
 * newlines inside a frame written as '_'), a space, and the event's metric as
 * an integer -- µs of self CPU or self CUDA time. What it becomes
 * (docs/inputs.md, "PyTorch stacks"): each line adds its value to the path
 * of its frames under the tree's "Python frames" root -- inclusive time on
 * every frame of the path, self time and one call on its last frame.
 */
#ifndef TALLY_INGEST_READ_STACKS_H
#define TALLY_INGEST_READ_STACKS_H

#include <stddef.h>

#include "profile.h"
#include "trace_stream.h"

/* Lines looked at to recognise the format (all must be stack lines). */
#define TL_STACKS_SNIFF_LINES 32
/* A longer line is malformed (a frame is a file, a line number and a
 * function's name; a stack some hundred frames). */
#define TL_STACKS_MAX_LINE (1u << 20)

/* 1 when the text b[0..n) opens with stack lines ("frame;frame value"): the
 * first line and at least half of the first TL_STACKS_SNIFF_LINES, one of
 * them with a ';'. */
int tl_bytes_look_like_stacks(const unsigned char *b, size_t n);

/* Read every line from read(ctx) into p's call tree. Sets the format
 * (TL_FMT_STACKS), counts and warnings (a malformed line is counted and
 * skipped). 0, or -1 out of memory. */
int tl_read_stacks(tl_profile *p, tl_read_fn read, void *ctx);

#endif
