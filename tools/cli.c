/*
 * cli.c - common options, exit codes and input reading for the subcommands.
 */
#define _GNU_SOURCE
#include "cli.h"

#include "aggregate_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char common_help[] =
    "common options:\n"
    "  -j, --jobs N        read N files at once (default: the number of cores)\n"
    "  --strict            treat every warning as an error\n"
    "  -q, --quiet         print no warnings\n"
    "  --progress, --no-progress   progress on stderr (default: only on a terminal)\n"
    "  -h, --help          this help\n";

static int default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

int tl_cli_parse(tl_cli *cli, int argc, char **argv, const tl_cli_opt *opts, const char *usage)
{
    memset(cli, 0, sizeof *cli);
    cli->cmd = argv[0];
    cli->jobs = default_jobs();
    cli->progress = -1;
    cli->inputs = calloc((size_t)argc + 1, sizeof *cli->inputs);
    if (cli->inputs == NULL)
        return -1;
    int only_inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_inputs || a[0] != '-' || a[1] == '\0') {
            cli->inputs[cli->ninputs++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_inputs = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("%s\n%s", usage, common_help);
            return 1;
        } else if (!strcmp(a, "--strict")) {
            cli->strict = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            cli->quiet = 1;
        } else if (!strcmp(a, "--progress")) {
            cli->progress = 1;
        } else if (!strcmp(a, "--no-progress")) {
            cli->progress = 0;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strncmp(a, "--jobs=", 7)) {
            const char *v = a[1] == 'j' ? (i + 1 < argc ? argv[++i] : NULL)
                            : a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
            char *end;
            long n = v ? strtol(v, &end, 10) : 0;
            if (v == NULL || *end != '\0' || n < 1 || n > 1024) {
                fprintf(stderr, "tally %s: --jobs needs a number from 1 to 1024\n", cli->cmd);
                return -1;
            }
            cli->jobs = (int)n;
        } else {
            const tl_cli_opt *o = opts;
            for (; o && o->name; o++) {
                size_t nl = strlen(o->name);
                if (!strcmp(a, o->name) || (o->alias && !strcmp(a, o->alias)))
                    break;
                if (o->takes_value && !strncmp(a, o->name, nl) && a[nl] == '=')
                    break;
            }
            if (o == NULL || o->name == NULL) {
                fprintf(stderr, "tally %s: unknown option '%s'\n%s\n", cli->cmd, a, usage);
                return -1;
            }
            if (!o->takes_value) {
                *o->flag = 1;
                continue;
            }
            const char *eq = strchr(a, '=');
            if (eq && !strncmp(a, o->name, strlen(o->name)))
                *o->value = eq + 1;
            else if (i + 1 < argc)
                *o->value = argv[++i];
            else {
                fprintf(stderr, "tally %s: %s needs a value\n", cli->cmd, o->name);
                return -1;
            }
        }
    }
    if (cli->progress < 0)
        cli->progress = isatty(STDERR_FILENO);
    return 0;
}

int tl_cli_begin(tl_cli *cli, int argc, char **argv, const tl_cli_opt *opts, const char *usage)
{
    int rc = tl_cli_parse(cli, argc, argv, opts, usage);
    if (rc == 0 && cli->ninputs > 0)
        return -1;
    if (rc == 0)
        fprintf(stderr, "%s\n", usage);
    free(cli->inputs);
    cli->inputs = NULL;
    return rc > 0 ? TL_EXIT_OK : TL_EXIT_USAGE;
}

size_t tl_cli_ingest(const tl_cli *cli, tl_run *run, void (*on_profile)(tl_profile *, void *), void *user)
{
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    opt.on_profile = on_profile;
    opt.user = user;
    opt.jobs = cli->jobs;
    opt.progress = cli->progress;
    tl_run_init(run);
    size_t usable = tl_run_ingest(run, cli->inputs, (size_t)cli->ninputs, &opt);
    if (!cli->quiet)
        for (size_t i = 0; i < run->nproblems; i++)
            fprintf(stderr, "tally: %s\n", run->problems[i]);
    return usable;
}

size_t tl_cli_warnings(const tl_cli *cli, const tl_run *run)
{
    size_t n = run->nproblems;
    for (size_t i = 0; i < run->n; i++) {
        const tl_profile *p = run->profiles[i];
        n += (size_t)p->nwarnings + (size_t)p->warnings_dropped;
        if (!cli->quiet)
            for (int w = 0; w < p->nwarnings; w++)
                fprintf(stderr, "tally: %s: %s\n", p->path, p->warnings[w]);
        if (tl_profile_usable(p) && p->rank_source == TL_RANK_ORDER) {
            n++;
            if (!cli->quiet)
                fprintf(stderr, "tally: %s: no rank in the content or the name; rank %d assigned by input order\n",
                        p->path, p->rank);
        }
    }
    return n;
}

int tl_cli_close_output(FILE *f, const char *name)
{
    int bad = fflush(f) != 0 || ferror(f);
    int err = errno;
    if (f != stdout && fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        fprintf(stderr, "tally: %s: write failed: %s\n", name, strerror(err ? err : EIO));
        return -1;
    }
    return 0;
}

/* On the worker thread: an aggregate input's sessions into a tl_aggregate of
 * their own (p->result), the document let go. A document that is not what it
 * claims, or was analyzed with other options than this command's, makes the
 * input skipped with the reason, like any other bad input. */
static void take_aggregate(tl_profile *p, const tl_analyze_options *opt)
{
    char err[512] = "";
    tl_aggregate *part = malloc(sizeof *part);
    if (part == NULL) {
        tl_profile_warn(p, "out of memory");
        goto bad;
    }
    tl_aggregate_init(part, opt);
    if (tl_partial_read_json(part, p->aggregate_doc, err, sizeof err) != 0) {
        tl_profile_warn(p, "%s", err);
        goto bad;
    }
    if (part->opt.whole_trace != opt->whole_trace || part->opt.kernel_wait_ns != opt->kernel_wait_ns) {
        tl_profile_warn(p, "analyzed with other options (%s window, kernel wait %lld ns) than this command's; "
                           "not read", part->opt.whole_trace ? "whole-trace" : "profiler-steps",
                        (long long)part->opt.kernel_wait_ns);
        goto bad;
    }
    tl_profile_drop_aggregate_doc(p);
    p->result = part;
    return;
bad:
    if (part != NULL) {
        tl_aggregate_release(part);
        free(part);
    }
    tl_profile_drop_aggregate_doc(p);
    p->skipped = p->error = 1;
}

/* On the worker thread: analyze the profile into a session and let go of its data. */
static void analyze_profile(tl_profile *p, void *user)
{
    const tl_analyze_options *opt = user;
    if (tl_profile_is_aggregate(p) && !p->skipped) {
        take_aggregate(p, opt);
        if (!p->skipped)
            return;
    }
    tl_session *s = calloc(1, sizeof *s);
    if (s == NULL)
        return;
    int rc = !p->skipped ? tl_session_analyze(s, p, opt) : tl_session_from_skipped(s, p);
    if (rc != 0) {
        tl_session_release(s);
        free(s);
        return;
    }
    p->result = s;
    tl_profile_shrink(p);
}

/* Move the sessions of an aggregate input into agg (part is freed). Their
 * warnings were the warnings of the inputs they came from: they are printed
 * and counted again, so --strict and the summary's count are those of a run
 * over the raw inputs. */
static int add_aggregate(const tl_cli *cli, tl_aggregate *agg, tl_aggregate *part, size_t *warnings)
{
    int rc = 0;
    for (size_t k = 0; k < part->nsessions; k++) {
        tl_session *s = &part->sessions[k];
        *warnings += s->nwarnings;
        if (!cli->quiet)
            for (size_t w = 0; w < s->nwarnings; w++)
                fprintf(stderr, "tally: %s: %s\n", s->path, s->warnings[w]);
        if (tl_aggregate_add_session(agg, s) != 0) {
            tl_session_release(s);
            rc = -1;
        }
    }
    part->nsessions = 0;
    tl_aggregate_release(part);
    free(part);
    return rc;
}

int (*tl_cli_analyze_hook)(const tl_cli *, const tl_analyze_options *, tl_aggregate *, size_t *);

void tl_cli_analyze_profile(tl_profile *p, void *opt) { analyze_profile(p, opt); }

int tl_cli_sessions(const tl_cli *cli, tl_run *run, tl_aggregate *agg, size_t *warnings)
{
    int rc = TL_EXIT_OK;
    for (size_t i = 0; i < run->n; i++) {
        tl_profile *p = run->profiles[i];
        if (tl_profile_is_aggregate(p) && !p->skipped && p->result != NULL) {
            if (add_aggregate(cli, agg, p->result, warnings) != 0)
                rc = TL_EXIT_NO_INPUT;
            p->result = NULL;
            continue;
        }
        tl_session *s = p->result;
        if (s == NULL) {
            fprintf(stderr, "tally: %s: out of memory while analyzing\n", p->path);
            rc = TL_EXIT_NO_INPUT;
            continue;
        }
        /* Ranks were assigned after the analysis: take them now. */
        if (!p->skipped && tl_session_set_rank(s, p) != 0)
            rc = TL_EXIT_NO_INPUT;
        if (p->companion && s->companion_of == NULL)
            s->companion_of = strdup(p->companion_of);
        if (tl_aggregate_add_session(agg, s) != 0) {
            tl_session_release(s);
            rc = TL_EXIT_NO_INPUT;
        }
        free(s);
        p->result = NULL;
    }
    /* Inputs that could not be read at all are listed too. */
    for (size_t i = 0; i < run->nproblems; i++) {
        tl_profile p;
        const char *sep = strstr(run->problems[i], ": ");
        char *path = sep ? strndup(run->problems[i], (size_t)(sep - run->problems[i])) : strdup(run->problems[i]);
        tl_profile_init(&p, path ? path : "");
        tl_profile_warn(&p, "%s", sep ? sep + 2 : "cannot be read");
        tl_session s;
        if (tl_session_from_skipped(&s, &p) == 0 && tl_aggregate_add_session(agg, &s) != 0)
            tl_session_release(&s);
        tl_profile_release(&p);
        free(path);
    }
    return rc;
}

int tl_cli_finish(tl_aggregate *agg, size_t usable)
{
    /* Aggregates are usable inputs that may hold no usable session. */
    size_t ranked = 0;
    for (size_t i = 0; i < agg->nsessions; i++)
        ranked += agg->sessions[i].rank >= 0;
    if (usable == 0 || ranked == 0) {
        fprintf(stderr, "tally: no usable input\n");
        return TL_EXIT_NO_INPUT;
    }
    if (tl_aggregate_finish(agg) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        return TL_EXIT_NO_INPUT;
    }
    return TL_EXIT_OK;
}

int tl_cli_analyze(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings)
{
    if (tl_cli_analyze_hook != NULL)
        return tl_cli_analyze_hook(cli, opt, agg, warnings);
    tl_run run;
    tl_aggregate_init(agg, opt);
    size_t usable = tl_cli_ingest(cli, &run, analyze_profile, (void *)opt);
    *warnings = tl_cli_warnings(cli, &run);
    int rc = tl_cli_sessions(cli, &run, agg, warnings);
    tl_run_release(&run);
    int frc = tl_cli_finish(agg, usable);
    return frc != TL_EXIT_OK ? frc : rc;
}
