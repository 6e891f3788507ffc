/*
 * trace_fast: the trace tokenizer's fast path (internal to tools/ingest/trace_*.c): an event
 * walked from the structural index of the buffer (json_scan.h) instead of byte by byte, with
 * the common fields decoded from their bytes. It accepts only what the byte parser
 * (trace_decode.c over trace_scan.c) would accept without a warning and gives up on anything
 * else, so that the byte parser reads that event again from its start: warnings, errors and
 * their offsets are the byte parser's alone, and the records are the same either way.
 */
#ifndef TALLY_INGEST_TRACE_FAST_H
#define TALLY_INGEST_TRACE_FAST_H

#include "ingest/trace_stream.h"

/* What tl_trace_fast_read() did. */
enum {
    TL_FAST_NO,        /* nothing: the byte parser must read the event at s->pos */
    TL_FAST_READ,      /* `ev` holds the event; s->pos is after it (or at the next event's '{') */
    TL_FAST_OVERSIZED, /* the event is larger than max_event_size: passed over, not counted */
};

/*
 * Read the event whose '{' is at s->pos from the structural index (built, reused or rebuilt
 * here), unless the index is resting (FAST_PAUSE). The stream counts the event, or reports it as
 * oversized; on TL_FAST_NO nothing of the stream but its index and these counters has changed.
 */
int tl_trace_fast_read(tl_trace_stream *s, tl_trace_event *ev);

#endif
