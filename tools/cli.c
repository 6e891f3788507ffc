/*
 * cli.c - common options, exit codes and input reading for the subcommands.
 */
#define _GNU_SOURCE
#include "cli.h"

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
    "  --max-names N       distinct names kept per input; the rarest beyond are\n"
    "                      counted as \"(other names)\" with a warning (default 100000)\n"
    "  --max-events N      events read per trace, the rest skipped with a warning\n"
    "                      (default 100000000)\n"
    "  --max-input-size B  decompressed bytes read per input (K, M, G; default 64G)\n"
    "  -h, --help          this help\n";

/* A count or size: digits with an optional K, M or G (powers of 1024).
 * Returns 0, or -1 when it is not one or not in [1, max]. */
static int parse_amount(const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    if (v == NULL || *v < '0' || *v > '9')
        return -1;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        end++;
    if (errno != 0 || *end != '\0' || n == 0 || n > (max >> shift))
        return -1;
    *out = (uint64_t)n << shift;
    return 0;
}

/* --name VALUE or --name=VALUE: the value, or NULL when a is not this option. */
static const char *option_value(const char *a, const char *name, int argc, char **argv, int *i, int *matched)
{
    size_t n = strlen(name);
    *matched = 0;
    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return NULL;
    *matched = 1;
    if (a[n] == '=')
        return a + n + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

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
        } else if (!strncmp(a, "--max-", 6)) {
            static const struct { const char *name; int which; uint64_t max; } limits[] = {
                { "--max-names", 0, UINT32_MAX }, { "--max-events", 1, UINT64_MAX },
                { "--max-input-size", 2, UINT64_MAX },
            };
            int matched = 0;
            for (size_t k = 0; k < sizeof limits / sizeof limits[0] && !matched; k++) {
                const char *v = option_value(a, limits[k].name, argc, argv, &i, &matched);
                if (!matched)
                    continue;
                uint64_t x;
                if (parse_amount(v, limits[k].max, &x) != 0) {
                    fprintf(stderr, "tally %s: %s needs a positive number (K, M, G allowed)\n", cli->cmd,
                            limits[k].name);
                    return -1;
                }
                if (limits[k].which == 0)
                    cli->max_names = (uint32_t)x;
                else if (limits[k].which == 1)
                    cli->max_events = x;
                else
                    cli->max_input_bytes = x;
            }
            if (!matched) {
                fprintf(stderr, "tally %s: unknown option '%s'\n%s\n", cli->cmd, a, usage);
                return -1;
            }
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
    opt.max_names = cli->max_names;
    opt.max_events = cli->max_events;
    if (cli->max_input_bytes)
        opt.limits.max_input_bytes = cli->max_input_bytes;
    tl_run_init(run);
    size_t usable = tl_run_ingest(run, cli->inputs, (size_t)cli->ninputs, &opt);
    if (!cli->quiet) {
        for (size_t i = 0; i < run->nproblems; i++)
            fprintf(stderr, "tally: %s\n", run->problems[i]);
        /* Notes are not warnings: --strict does not count them. */
        for (size_t i = 0; i < run->nnotes; i++)
            fprintf(stderr, "tally: note: %s\n", run->notes[i]);
    }
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

/* On the worker thread: analyze the profile into a session and let go of its data. */
static void analyze_profile(tl_profile *p, void *user)
{
    const tl_analyze_options *opt = user;
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

int tl_cli_analyze(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings)
{
    tl_run run;
    tl_aggregate_init(agg, opt);
    size_t usable = tl_cli_ingest(cli, &run, analyze_profile, (void *)opt);
    *warnings = tl_cli_warnings(cli, &run);
    int rc = TL_EXIT_OK;
    for (size_t i = 0; i < run.n; i++) {
        tl_profile *p = run.profiles[i];
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
    for (size_t i = 0; i < run.nproblems; i++) {
        tl_profile p;
        const char *sep = strstr(run.problems[i], ": ");
        char *path = sep ? strndup(run.problems[i], (size_t)(sep - run.problems[i])) : strdup(run.problems[i]);
        tl_profile_init(&p, path ? path : "");
        tl_profile_warn(&p, "%s", sep ? sep + 2 : "cannot be read");
        tl_session s;
        if (tl_session_from_skipped(&s, &p) == 0 && tl_aggregate_add_session(agg, &s) != 0)
            tl_session_release(&s);
        tl_profile_release(&p);
        free(path);
    }
    tl_run_release(&run);
    if (usable == 0) {
        fprintf(stderr, "tally: no usable input\n");
        return TL_EXIT_NO_INPUT;
    }
    if (tl_aggregate_finish(agg) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        return TL_EXIT_NO_INPUT;
    }
    return rc;
}
