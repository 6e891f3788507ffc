/*
 * output.c - atomic output files for the commands (see output.h).
 */
#include "output.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int file_sink(void *ctx, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

/* Is path the same file as an input (or inside an input directory's files)? */
static int is_an_input(const char *path, const char *const *inputs, int n)
{
    char out[PATH_MAX], in[PATH_MAX];
    if (realpath(path, out) == NULL)
        return 0; /* does not exist yet: cannot be an input */
    for (int i = 0; i < n; i++)
        if (realpath(inputs[i], in) != NULL && strcmp(in, out) == 0)
            return 1;
    return 0;
}

int tl_output_open(tl_output *o, const char *path, const char *const *inputs, int ninputs)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->path = strdup("-");
        return o->path ? 0 : -1;
    }
    if (is_an_input(path, inputs, ninputs)) {
        fprintf(stderr, "tally: %s: is one of the inputs; refusing to overwrite it\n", path);
        return -1;
    }
    size_t len = strlen(path) + 32;
    o->path = strdup(path);
    o->tmp = malloc(len);
    if (o->path == NULL || o->tmp == NULL) {
        tl_output_abort(o);
        return -1;
    }
    snprintf(o->tmp, len, "%s.tmp.%d", path, (int)getpid());
    o->f = fopen(o->tmp, "wb");
    if (o->f == NULL) {
        fprintf(stderr, "tally: %s: cannot write: %s\n", path, strerror(errno));
        tl_output_abort(o);
        return -1;
    }
    return 0;
}

tl_json *tl_output_json(tl_output *o)
{
    if (o->json == NULL) {
        o->json = malloc(sizeof *o->json);
        if (o->json != NULL)
            tl_json_init(o->json, file_sink, o->f);
    }
    return o->json;
}

int tl_output_close(tl_output *o)
{
    int bad = 0, err = 0;
    if (o->json != NULL && tl_json_finish(o->json) != 0) {
        bad = 1;
        err = errno;
    }
    if (fflush(o->f) != 0 || ferror(o->f)) {
        bad = 1;
        err = err ? err : errno;
    }
    if (o->tmp != NULL) {
        if (fclose(o->f) != 0 && !bad) {
            bad = 1;
            err = errno;
        }
        o->f = NULL;
        if (!bad && rename(o->tmp, o->path) != 0) {
            bad = 1;
            err = errno;
        }
    }
    if (bad)
        fprintf(stderr, "tally: %s: write failed: %s\n", o->path, strerror(err ? err : EIO));
    if (bad && o->tmp != NULL)
        unlink(o->tmp);
    free(o->json);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return bad ? -1 : 0;
}

void tl_output_abort(tl_output *o)
{
    if (o->f != NULL && o->f != stdout)
        fclose(o->f);
    if (o->tmp != NULL)
        unlink(o->tmp);
    free(o->json);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}
