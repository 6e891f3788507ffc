/*
 * read_mem_timeline.h - torch.profiler's export_memory_timeline JSON
 * (profile.export_memory_timeline("x.json", device)) into a profile: the
 * device's memory by category over time.
 *
 * The format (torch/profiler/_memory_profiler.py, MemoryProfileTimeline.
 * export_memory_timeline): [times, sizes]; times are the timeline's
 * timestamps in us (ns before PyTorch 2.1), sizes one list per time of 1 + 8
 * byte counts, the first unused (0) and then the categories in the order of
 * _CATEGORY_TO_INDEX: PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY,
 * ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, and memory of no known category.
 * What it becomes (docs/inputs.md, "PyTorch memory timeline"): the memory
 * series of the profile (allocated = the categories added up, a point per
 * time) and, at the time the total was highest, one labelled snapshot per
 * category ("ACTIVATION at the peak") holding its bytes.
 */
#ifndef TALLY_INGEST_READ_MEM_TIMELINE_H
#define TALLY_INGEST_READ_MEM_TIMELINE_H

#include <stddef.h>

#include "profile.h"

/* The byte counts of a time: the unused first and the eight categories. */
#define TL_MEM_TIMELINE_COLUMNS 9

/* 1 when b[0..n) opens like a memory timeline (an array whose first element
 * is an array: "[[", white space allowed); a Chrome trace's array holds objects. */
int tl_bytes_look_like_mem_timeline(const unsigned char *b, size_t n);

/* Read the document doc[0..len) into p. 0, or -1 when it is not a memory
 * timeline (a warning says why; the caller skips the input). */
int tl_read_mem_timeline(tl_profile *p, const char *doc, size_t len);

#endif
