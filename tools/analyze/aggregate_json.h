/*
 * aggregate_json.h - the aggregate and the partial aggregate as JSON.
 */
#ifndef TALLY_AGGREGATE_JSON_H
#define TALLY_AGGREGATE_JSON_H

#include "aggregate.h"
#include "json_writer.h"

/* The aggregate document (schema/tally-aggregate.schema.json). */
void tl_aggregate_write(tl_json *j, const tl_aggregate *a, const char *producer);
/* The partial: every session result, exactly, for tally merge. */
void tl_partial_write(tl_json *j, const tl_aggregate *a, const char *producer);
/* Add the sessions of the partial at path to a (not yet finished). Returns 0,
 * or -1 with err saying what is wrong with the file. */
int tl_partial_read(tl_aggregate *a, const char *path, char *err, size_t errlen);

#endif
