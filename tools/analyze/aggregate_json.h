/*
 * aggregate_json.h - the aggregate and the partial aggregate as JSON.
 */
#ifndef TALLY_AGGREGATE_JSON_H
#define TALLY_AGGREGATE_JSON_H

#include "aggregate.h"
#include <jansson.h>

#include "json_writer.h"

/* The aggregate document (schema/tally-aggregate.schema.json). */
void tl_aggregate_write(tl_json *j, const tl_aggregate *a, const char *producer);
/* The partial: every session result, exactly, for tally merge. */
void tl_partial_write(tl_json *j, const tl_aggregate *a, const char *producer);
/* Add the sessions of the partial at path to a (not yet finished). Returns 0,
 * or -1 with err saying what is wrong with the file. A finished aggregate
 * (tl_aggregate_write) carries its sessions too and reads the same way.
 * Every number is range-checked: a hostile document is an error, never an
 * overflow in the analysis. */
int tl_partial_read(tl_aggregate *a, const char *path, char *err, size_t errlen);
/* The same from a document in memory (tally-mpi's messages). */
int tl_partial_read_buffer(tl_aggregate *a, const char *buf, size_t len, char *err, size_t errlen);
/* The same from a parsed document (ingest recognized it). */
int tl_partial_read_json(tl_aggregate *a, const json_t *root, char *err, size_t errlen);
/* Is root a document tl_partial_read_json takes (a partial, or an aggregate
 * with its sessions)? */
int tl_partial_is_document(const json_t *root);

#endif
