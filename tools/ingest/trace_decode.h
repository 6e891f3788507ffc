/*
 * trace_decode: the trace tokenizer's decoding of values into records (internal to
 * tools/ingest/trace_*.c): an event object into a tl_trace_event (the fields the analysis reads,
 * the four Kineto args it always needs, "args" kept as text), and the top-level values of the
 * object form into tl_trace_meta. These are the byte parser's decoders: the fast path
 * (trace_fast.c) decodes the common fields itself and hands the rarer ones to
 * tl_trace_event_field(), so both paths store a value the same way.
 */
#ifndef TALLY_INGEST_TRACE_DECODE_H
#define TALLY_INGEST_TRACE_DECODE_H

#include "ingest/trace_scan.h"

/* The event keys that are decoded, one bit each (a set of them tells a duplicate key). */
enum {
    K_NAME = 1 << 0,
    K_CAT = 1 << 1,
    K_PH = 1 << 2,
    K_TS = 1 << 3,
    K_DUR = 1 << 4,
    K_PID = 1 << 5,
    K_TID = 1 << 6,
    K_ID = 1 << 7,
    K_ID2 = 1 << 8,
    K_BP = 1 << 9,
    K_S = 1 << 10,
    K_SCOPE = 1 << 11,
    K_ARGS = 1 << 12,
};

/* Top-level keys of the object form that the reader looks at. */
enum {
    TOP_OTHER,
    TOP_TRACE_EVENTS,
    TOP_DISTRIBUTED_INFO,
    TOP_DEVICE_PROPERTIES,
    TOP_BASE_TIME,
    TOP_SCHEMA_VERSION,
    TOP_DISPLAY_TIME_UNIT,
    TOP_TRACE_NAME,
    TOP_OTHER_DATA,
    TOP_METADATA,
};

#define META_COPY_MAX (64u * 1024u)

/* The K_* bit of an event key, 0 for keys that are not decoded. */
int tl_trace_event_key(tl_view k);

/* A string field: the string's content, or the raw text of a number; absent otherwise. */
static inline tl_view text_field(const struct jval *v)
{
    tl_view none = { NULL, 0 };
    return v->kind == TL_JSON_STRING || v->kind == TL_JSON_NUMBER ? v->text : none;
}

/* Store the value of the event key `k` (a K_* bit, 0 for keys not decoded) in `ev`; a warning
 * (a bad "ts") goes to c. */
void tl_trace_event_field(struct pctx *c, tl_trace_event *ev, int k, const struct jval *v);

/* Parse the event object at *pp (its '{') into `ev`: P_OK with *pp after it, P_MORE, P_BAD. */
int tl_trace_event_parse(struct pctx *c, const char **pp, tl_trace_event *ev);

/* The TOP_* of a top-level key of the object form. */
int tl_trace_top_key(tl_view k);

/* Parse the value at *pp of the top-level key `key` (a TOP_* other than TOP_TRACE_EVENTS and
 * TOP_OTHER) into `m`: P_OK with *pp after it, P_MORE, P_BAD. */
int tl_trace_meta_parse(struct pctx *c, const char **pp, int key, tl_trace_meta *m);

#endif
