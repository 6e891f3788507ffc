/*
 * output.h - writing the command's output files: to a temporary file in the
 * same directory, checked (fflush/ferror/fclose, so a full disk fails
 * loudly), then renamed into place, so a crash never leaves half a report
 * and an earlier report survives a failed write. "-" is standard output.
 * An output path that names one of the inputs is refused.
 */
#ifndef TALLY_OUTPUT_H
#define TALLY_OUTPUT_H

#include <stdio.h>

#include "json_writer.h"

typedef struct tl_output {
    FILE *f;
    char *path;     /* final path, or "-" */
    char *tmp;      /* temporary path, NULL for stdout */
    tl_json *json;  /* a JSON writer over f (tl_output_json) */
} tl_output;

/* Open path for writing. inputs (ninputs) are refused as targets. Returns 0,
 * or -1 after printing "tally: PATH: why" on stderr. */
int tl_output_open(tl_output *o, const char *path, const char *const *inputs, int ninputs);
/* A JSON writer over the output (owned by o). */
tl_json *tl_output_json(tl_output *o);
/* Finish: check every write, rename into place. 0, or -1 after printing why
 * (the temporary file is removed, the old file is kept). */
int tl_output_close(tl_output *o);
/* Give up: remove the temporary file. */
void tl_output_abort(tl_output *o);

#endif
