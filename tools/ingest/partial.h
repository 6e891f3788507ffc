/*
 * partial.h - reading a partial aggregate: the session results of some
 * inputs, as `tally aggregate --partial`, `tally merge` and tally-mpi write
 * them (schema/tally-partial.schema.json); an aggregate carries the same
 * list under "sessions" and reads the same way.
 *
 * The one idea: a partial is a file anybody can hand us, so it is input like
 * any trace and read here, in ingest, into session results (session.h);
 * analyze takes them (tl_aggregate_add_partial), render writes them
 * (tl_partial_write). Every number is range-checked before it is believed:
 * a hostile document is an error naming the field, never an overflow in the
 * analysis.
 */
#ifndef TALLY_PARTIAL_H
#define TALLY_PARTIAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* The ranges a partial's numbers must lie in. Durations and sums of them are
 * at most TL_PARTIAL_MAX_NS; timestamps lie within +-TL_PARTIAL_MAX_TS
 * (differences of two fit an int64), with INT64_MIN / INT64_MAX allowed
 * where the writer uses them for "unknown" / "no window". */
#define TL_PARTIAL_MAX_NS 1000000000000000000LL /* 1e18 ns: 31 years */
#define TL_PARTIAL_MAX_TS 4000000000000000000LL /* 4e18 ns: year 2096 */
#define TL_PARTIAL_MAX_RANK 100000000           /* ranks and world sizes */
#define TL_PARTIAL_MAX_COUNT (1LL << 53)        /* event counts (exact in a double) */

/* What a partial holds: how it was analyzed and its session results. */
typedef struct tl_partial {
    int has_options;           /* the document says how it was analyzed (else: unknown) */
    int whole_trace;           /* the GPU window: every GPU event, not the ProfilerSteps */
    int64_t kernel_wait_ns;    /* the gap under which idle time is kernel_wait */
    tl_session *sessions;      /* owned; taken by tl_aggregate_add_partial */
    size_t nsessions;
} tl_partial;

void tl_partial_init(tl_partial *p);
/* Free the sessions p still holds; p is empty again. */
void tl_partial_release(tl_partial *p);

/* Read the partial at path into p (initialized, empty). Returns 0, or -1
 * with err saying what is wrong with the file, naming the field and the
 * session; p is then empty. A finished aggregate (tl_aggregate_write)
 * carries its sessions too and reads the same way. */
int tl_partial_read(tl_partial *p, const char *path, char *err, size_t errlen);
/* The same from a document in memory (tally-mpi's messages). */
int tl_partial_read_buffer(tl_partial *p, const char *buf, size_t len, char *err, size_t errlen);
/* The same from a parsed document (ingest recognized it). */
int tl_partial_read_json(tl_partial *p, const json_t *root, char *err, size_t errlen);
/* Is root a document tl_partial_read_json takes (a partial, or an aggregate
 * with its sessions)? */
int tl_partial_is_document(const json_t *root);

#endif
