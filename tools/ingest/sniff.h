/*
 * sniff.h - is a JSON object a trace or a report? Decided by streaming its
 * top-level keys, not by looking at a fixed prefix.
 *
 * The one idea: the first top-level key that means something decides, and
 * the caller reads more only until that key is seen. "traceEvents" makes a
 * trace (streamed event by event); "format": "tally-report" (or tally's
 * "tally-partial" / "tally-aggregate"), "session_info",
 * "timing_stats", "iteration_stats" or "memory_snapshots" make a report
 * (loaded whole, recognized by its reader). Values of other keys are skipped
 * whatever their size, so a libtally report whose samples run past 64 KiB, or
 * a Kineto trace with a large "deviceProperties" before "traceEvents", is
 * still told apart correctly. The scan restarts from the object's start each
 * time (the caller doubles its buffer between calls, so the total cost is
 * linear) and never recurses: nesting costs nothing.
 */
#ifndef TALLY_INGEST_SNIFF_H
#define TALLY_INGEST_SNIFF_H

#include <stddef.h>

enum tl_sniff {
    TL_SNIFF_MORE = 0, /* the bytes end before a deciding key: read more */
    TL_SNIFF_TRACE,    /* "traceEvents" at the top level */
    TL_SNIFF_REPORT,   /* a report key, or the object ended without "traceEvents",
                         * or it is not JSON this scan understands (the report
                         * reader's JSON parser then says where it breaks) */
};

/* b[i] must be '{'. Scan the top-level keys of the object in b[i..n). */
int tl_sniff_object(const unsigned char *b, size_t i, size_t n);

#endif
