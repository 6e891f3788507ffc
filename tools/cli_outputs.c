/*
 * cli_outputs.c - the subcommands' outputs (see cli.h): each output path is
 * checked against the inputs read (no output may replace one), written to a
 * temporary file beside it and renamed into place only when every output of
 * the command was written, so an interrupted run leaves the old files.
 */
#include "cli.h"
#include "array.h"

#include "partial.h"
#include "render.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TALLY_VERSION
#define TALLY_VERSION "unknown"
#endif

void tl_cli_seen_file(const tl_cli *cli, dev_t dev, ino_t ino)
{
    struct tl_cli_seen *s = cli->seen;
    if (tl_array_grow(&s->ids, s->n, &s->cap, sizeof *s->ids, 64) != 0) {
        s->lost = 1;
        return;
    }
    s->ids[s->n++] = (tl_file_id){ dev, ino };
}

void tl_cli_seen_path(const tl_cli *cli, const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 ? fstat(STDIN_FILENO, &st) == 0 : stat(path, &st) == 0)
        tl_cli_seen_file(cli, st.st_dev, st.st_ino);
}

static int is_input(dev_t dev, ino_t ino, void *user)
{
    const struct tl_cli_seen *s = ((const tl_cli *)user)->seen;
    if (s->lost)
        return 1; /* cannot tell: refuse rather than risk an input */
    for (size_t i = 0; i < s->n; i++)
        if (s->ids[i].dev == dev && s->ids[i].ino == ino)
            return 1;
    return 0;
}

int tl_cli_check_output(const tl_cli *cli, const char *path)
{
    char err[TL_OUTPUT_ERR_LEN];
    if (cli->engine != NULL && cli->engine->writes_nothing)
        return 0;
    if (tl_output_check(path, err, sizeof err) != 0) {
        fprintf(stderr, "tally: %s\n", err);
        return -1;
    }
    struct stat out;
    if (strcmp(path, "-") == 0 || stat(path, &out) != 0 || !S_ISREG(out.st_mode))
        return 0;
    for (int i = 0; i < cli->ninputs; i++) {
        struct stat in;
        if (strcmp(cli->inputs[i], "-") == 0 ? fstat(STDIN_FILENO, &in) != 0 : stat(cli->inputs[i], &in) != 0)
            continue;
        if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
            fprintf(stderr, "tally: %s: is one of the inputs; refusing to overwrite it\n", path);
            return -1;
        }
    }
    return 0;
}

tl_output *tl_cli_open_output(tl_cli *cli, const char *path, unsigned flags)
{
    if (cli->nouts == TL_CLI_MAX_OUTPUTS) {
        fprintf(stderr, "tally: %s: more than %d outputs\n", path, TL_CLI_MAX_OUTPUTS);
        return NULL;
    }
    tl_output *o = calloc(1, sizeof *o);
    if (o == NULL) {
        fprintf(stderr, "tally: %s: out of memory\n", path);
        return NULL;
    }
    if (tl_output_open(o, path, flags, is_input, cli) != 0) {
        fprintf(stderr, "tally: %s\n", o->err);
        free(o);
        return NULL;
    }
    /* Two outputs into one file would leave only the last; two documents
     * on standard output would run into each other. */
    for (size_t i = 0; i < cli->nouts; i++) {
        const tl_output *p = cli->outs[i];
        int same = (p->kind == TL_OUTPUT_STDOUT && o->kind == TL_OUTPUT_STDOUT) ||
                   (p->target && o->target && strcmp(p->target, o->target) == 0);
        if (same) {
            fprintf(stderr, "tally: %s: the same file as the output %s; give each output its own file\n", path,
                    p->path);
            tl_output_abort(o);
            free(o);
            return NULL;
        }
    }
    cli->outs[cli->nouts++] = o;
    return o;
}

int tl_cli_commit_outputs(tl_cli *cli)
{
    /* A console line printed before a document on the same standard output
     * must come first. */
    fflush(stdout);
    int rc = tl_output_commit_all(cli->outs, cli->nouts) == 0 ? TL_EXIT_OK : TL_EXIT_OUTPUT;
    int any_failed = 0;
    for (size_t i = 0; i < cli->nouts; i++)
        if (cli->outs[i]->failed) {
            fprintf(stderr, "tally: %s\n", cli->outs[i]->err);
            any_failed = 1;
        }
    if (rc != TL_EXIT_OK && cli->nouts > 1)
        fprintf(stderr, "tally: %s; none of the %zu outputs was written (the old files are kept)\n",
                any_failed ? "an output failed" : "the outputs could not be written", cli->nouts);
    else if (rc != TL_EXIT_OK && !any_failed)
        fprintf(stderr, "tally: the output could not be written\n");
    for (size_t i = 0; i < cli->nouts; i++)
        free(cli->outs[i]);
    cli->nouts = 0;
    return rc;
}

int tl_cli_close_output(FILE *f, const char *name)
{
    errno = 0;
    int bad = fflush(f) != 0 || ferror(f);
    int err = errno;
    if (bad) {
        fprintf(stderr, "tally: %s: write failed: %s\n", name, strerror(err ? err : EIO));
        return -1;
    }
    return 0;
}

/* ---- what the commands share after parsing --------------------------------- */

int tl_cli_check_outputs(tl_cli *cli, const char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (paths[i] && tl_cli_check_output(cli, paths[i]) != 0) {
            tl_cli_release(cli);
            return TL_EXIT_OUTPUT;
        }
    return -1;
}

void tl_cli_default_output(const tl_cli *cli, const char **paths, size_t n, const char *name, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (paths[i] != NULL)
            return;
    paths[0] = name;
    if (!cli->quiet)
        fprintf(stderr, "tally: no output asked for; writing the HTML %s to %s (-o FILE names it)\n", what, name);
}

/* The outputs a command renders, shared by the threads that render them. */
typedef struct render_job {
    tl_output **o;
    size_t n, next;
    int (*write)(tl_output *o, size_t i, void *ctx);
    void *ctx;
    int failed[TL_CLI_MAX_OUTPUTS];
    pthread_mutex_t lock;
} render_job;

static void *render_worker(void *arg)
{
    render_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->next;
        while (i < j->n && j->o[i] == NULL)
            i++;
        j->next = i + 1;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->n)
            return NULL;
        j->failed[i] = j->write(j->o[i], i, j->ctx) != 0;
    }
}

int tl_cli_write_outputs(tl_cli *cli, const char *const *paths, size_t n, int threads,
                         int (*write)(tl_output *o, size_t i, void *ctx), void *ctx)
{
    tl_output *o[TL_CLI_MAX_OUTPUTS] = { NULL };
    if (n > TL_CLI_MAX_OUTPUTS) { /* a command's mistake, said like tl_cli_open_output's */
        fprintf(stderr, "tally: more than %d outputs\n", TL_CLI_MAX_OUTPUTS);
        return TL_EXIT_OUTPUT;
    }
    size_t opened = 0;
    for (size_t i = 0; i < n; i++)
        if (paths[i]) {
            if ((o[i] = tl_cli_open_output(cli, paths[i], 0)) == NULL)
                return TL_EXIT_OUTPUT;
            opened++;
        }
    /* Each output on a thread of its own, up to `threads`: they read the aggregate only (a
     * session's bulk on disk is held under a lock, spill.h) and write to files of their own
     * (tl_cli_open_output refuses two outputs to one file, standard output included). */
    render_job j = { .o = o, .n = n, .write = write, .ctx = ctx };
    pthread_mutex_init(&j.lock, NULL);
    pthread_t t[TL_CLI_MAX_OUTPUTS];
    size_t started = 0;
    for (size_t k = 1; k < opened && k < (size_t)(threads > 0 ? threads : 1); k++)
        if (pthread_create(&t[started], NULL, render_worker, &j) == 0)
            started++;
    render_worker(&j);
    for (size_t k = 0; k < started; k++)
        pthread_join(t[k], NULL);
    pthread_mutex_destroy(&j.lock);
    for (size_t i = 0; i < n; i++)
        if (j.failed[i]) {
            fprintf(stderr, "tally: %s: out of memory while rendering\n", paths[i]);
            return TL_EXIT_NOMEM;
        }
    return tl_cli_commit_outputs(cli);
}

void tl_cli_aggregate_json(tl_output *o, const tl_aggregate *agg, int partial, int all)
{
    tl_json j;
    tl_json_init(&j, tl_output_write, o);
    if (partial)
        tl_partial_write(&j, agg, "tally " TALLY_VERSION);
    else
        tl_aggregate_write(&j, agg, "tally " TALLY_VERSION, all);
    tl_json_finish(&j);
}

typedef struct aggregate_doc {
    const tl_aggregate *agg;
    int partial, all;
} aggregate_doc;

static int write_aggregate(tl_output *o, size_t i, void *ctx)
{
    const aggregate_doc *d = ctx;
    (void)i;
    tl_cli_aggregate_json(o, d->agg, d->partial, d->all);
    return 0;
}

int tl_cli_write_aggregate(tl_cli *cli, const char *path, const tl_aggregate *agg, int partial)
{
    aggregate_doc d = { agg, partial, cli->json_all };
    return tl_cli_write_outputs(cli, &path, 1, 1, write_aggregate, &d);
}
