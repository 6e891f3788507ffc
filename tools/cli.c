/*
 * cli.c - option parsing, help and input lists for the subcommands (see
 * cli.h); their outputs are written by cli_outputs.c, the stages that read
 * and analyze are in pipeline.c.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "array.h"
#include "term.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TALLY_VERSION
#define TALLY_VERSION "unknown"
#endif

/* Options of every subcommand, after the command's own in the help. */
enum {
    OPT_STRICT = 0x100,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    OPT_VERSION,
    OPT_KERNEL_CLASS,
    OPT_MAX_NAMES,
    OPT_MAX_EVENTS,
    OPT_MAX_INPUT_SIZE,
    OPT_INPUTS_FROM,
    OPT_COLOR
};
static const struct {
    const char *name;
    int has_arg, val;
    const char *arg, *help;
} common[] = {
    { "jobs", required_argument, 'j', "N",
      "read N files (and write N outputs) at once (default: the CPUs this process may use)" },
    { "strict", no_argument, OPT_STRICT, NULL, "treat every warning as an error (exit 1)" },
    { "quiet", no_argument, 'q', NULL, "print no warnings" },
    { "progress", no_argument, OPT_PROGRESS, NULL, "progress on stderr (default: only on a terminal)" },
    { "no-progress", no_argument, OPT_NO_PROGRESS, NULL, "no progress" },
    { "kernel-class", required_argument, OPT_KERNEL_CLASS, "SPEC",
      "SPEC is GLOB=TYPE: GPU kernels matching GLOB are compute, communication, memory or other, before the "
      "built-in table (repeatable; docs/analysis.md, Kernel type)" },
    { "max-names", required_argument, OPT_MAX_NAMES, "N",
      "distinct names kept per input; beyond, the names with the least time are counted as \"(other names)\" (default "
      "100000)" },
    { "max-events", required_argument, OPT_MAX_EVENTS, "N",
      "events read per trace; the rest skipped with a warning (default 100000000)" },
    { "max-input-size", required_argument, OPT_MAX_INPUT_SIZE, "B",
      "decompressed bytes read per input, K, M, G allowed (default 64G)" },
    { "inputs-from", required_argument, OPT_INPUTS_FROM, "FILE",
      "read the inputs listed in FILE, one path a line (- standard input; blank lines and # comments "
      "skipped); @FILE as an input does the same" },
    { "color", required_argument, OPT_COLOR, "WHEN",
      "colour errors red and warnings yellow on stderr: auto (on a terminal, unless NO_COLOR is set; the "
      "default), always or never" },
    { "help", no_argument, 'h', NULL, "this help" },
    { "version", no_argument, OPT_VERSION, NULL, "print the version" },
};
#define NCOMMON (sizeof common / sizeof common[0])
/* Command options are numbered from here in getopt's val. */
#define OPT_CMD_BASE 0x200
/* Most options a command may declare. */
#define TL_CLI_MAX_OPTS 32

/* The longest line of an input list: a longer one is no path (PATH_MAX), so
 * the file is not a list (a trace given as @FILE by mistake). */
#define TL_CLI_LIST_LINE_MAX 4096

struct tl_cli_lists {
    char **bufs; /* each list's text, split in place into its paths */
    size_t nbufs, bufs_cap;
    size_t inputs_cap, args_cap;
    int stdin_list; /* a list was read from standard input */
};

/* Most threads --jobs defaults to, however many CPUs there are. */
#define TL_CLI_MAX_DEFAULT_JOBS 64

int tl_cli_cgroup_cpu_limit(const char *cgroup_root, const char *self_cgroup)
{
    char line[4096], dir[4096 + 512];
    const char *rel = NULL;
    FILE *f = fopen(self_cgroup, "r");
    if (f == NULL)
        return 0;
    /* cgroup v2: the one line "0::/PATH" */
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            rel = line + 3;
            break;
        }
    fclose(f);
    if (rel == NULL || rel[0] != '/' || strstr(rel, "/..") != NULL)
        return 0;
    int n = snprintf(dir, sizeof dir, "%s%s", cgroup_root, strcmp(rel, "/") == 0 ? "" : rel);
    if (n < 0 || (size_t)n >= sizeof dir)
        return 0;
    size_t root_len = strlen(cgroup_root);
    int limit = 0;
    /* the cgroup and each parent up to the root: the tightest quota holds */
    for (;;) {
        char path[sizeof dir + 16];
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        FILE *m = fopen(path, "r");
        if (m != NULL) {
            char quota[32] = "";
            unsigned long long period = 0;
            if (fscanf(m, "%31s %llu", quota, &period) == 2 && strcmp(quota, "max") != 0 && period > 0) {
                char *end;
                unsigned long long q = strtoull(quota, &end, 10);
                if (*end == '\0' && q > 0) {
                    unsigned long long cpus = (q + period - 1) / period; /* 1.5 CPUs: 2 threads */
                    int c = cpus > 1024 ? 1024 : (int)cpus;
                    if (limit == 0 || c < limit)
                        limit = c;
                }
            }
            fclose(m);
        }
        char *slash = strrchr(dir, '/');
        if (slash == NULL || (size_t)(slash - dir) < root_len)
            break;
        *slash = '\0';
    }
    return limit;
}

int tl_cli_cpus(void)
{
    long n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    int quota = tl_cli_cgroup_cpu_limit("/sys/fs/cgroup", "/proc/self/cgroup");
    if (quota > 0 && quota < n)
        n = quota;
    return n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int)n;
}

static int default_jobs(void)
{
    int n = tl_cli_cpus();
    return n > TL_CLI_MAX_DEFAULT_JOBS ? TL_CLI_MAX_DEFAULT_JOBS : n;
}

/* "--output" -> "output"; "-o" -> 'o'. */
static const char *long_name(const tl_cli_opt *o)
{
    return o->name[0] == '-' && o->name[1] == '-' ? o->name + 2 : o->name;
}

static int short_name(const tl_cli_opt *o)
{
    return o->alias && o->alias[0] == '-' && o->alias[1] && !o->alias[2] ? (unsigned char)o->alias[1] : 0;
}

static size_t nopts(const tl_cli_spec *spec)
{
    size_t n = 0;
    while (spec->opts && spec->opts[n].name)
        n++;
    return n;
}

static void help_line(FILE *f, int short_name, const char *name, const char *arg, const char *help)
{
    char left[64];
    if (short_name)
        snprintf(left, sizeof left, "-%c, --%s%s%s", short_name, name, arg ? " " : "", arg ? arg : "");
    else
        snprintf(left, sizeof left, "    --%s%s%s", name, arg ? " " : "", arg ? arg : "");
    if (strlen(left) > 24)
        fprintf(f, "  %s\n  %-24s %s\n", left, "", help);
    else
        fprintf(f, "  %-24s %s\n", left, help);
}

void tl_cli_help(FILE *f, const tl_cli_spec *spec)
{
    fprintf(f, "usage: tally %s [options] %s\n\n%s\n", spec->name, spec->args, spec->summary);
    if (spec->details)
        fprintf(f, "\n%s\n", spec->details);
    size_t n = nopts(spec);
    if (n) {
        fprintf(f, "\noptions:\n");
        for (size_t i = 0; i < n; i++) {
            const tl_cli_opt *o = &spec->opts[i];
            help_line(f, short_name(o), long_name(o), o->takes_value ? (o->arg ? o->arg : "VALUE") : NULL,
                      o->help ? o->help : "");
        }
    }
    fprintf(f, "\ncommon options:\n");
    for (size_t i = 0; i < NCOMMON; i++)
        help_line(f, common[i].val < 0x100 ? common[i].val : 0, common[i].name, common[i].arg, common[i].help);
    fprintf(f, "\nAn option's value may follow it (-o FILE, --output FILE) or be joined to it\n"
               "(-oFILE, --output=FILE); short flags bundle (-qj4); `--` ends the options;\n"
               "`-` as an input is standard input, as an output standard output;\n"
               "@FILE as an input reads the inputs listed in FILE (./@NAME is a file named @NAME).\n"
               "Exit codes: 0 ok, 1 a gate failed (--strict, regression, problems), 2 usage,\n"
               "3 no usable input, 4 an output could not be written, 5 out of memory.\n"
               "See tally(1).\n");
}

/* ---- did you mean ------------------------------------------------------- */

/* Damerau-Levenshtein (optimal string alignment) distance, capped. */
static size_t distance(const char *a, const char *b)
{
    enum { MAXL = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAXL || lb >= MAXL)
        return MAXL;
    size_t d[MAXL + 1][MAXL + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *tl_cli_suggest(const char *s, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = distance(s, names[i]);
        /* a prefix ("rep" for "report") is a likely intent too */
        if (strlen(s) >= 2 && strncmp(names[i], s, strlen(s)) == 0)
            d = d < 2 ? d : 1;
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    /* git's rule of thumb: close relative to the length, at most 2 edits */
    size_t len = strlen(s);
    return best != NULL && best_d <= 2 && best_d * 3 <= len + 1 ? best : NULL;
}

/* An unknown option: name it, suggest the closest long option. */
static void unknown_option(const tl_cli *cli, const char *arg, int optopt_c)
{
    const char *names[NCOMMON + TL_CLI_MAX_OPTS];
    size_t n = 0;
    for (size_t i = 0; i < NCOMMON; i++)
        names[n++] = common[i].name;
    for (size_t i = 0; i < nopts(cli->spec) && n < sizeof names / sizeof names[0]; i++)
        names[n++] = long_name(&cli->spec->opts[i]);
    if (arg != NULL && arg[0] == '-' && arg[1] == '-') {
        char name[128];
        snprintf(name, sizeof name, "%s", arg + 2);
        name[strcspn(name, "=")] = '\0';
        for (size_t i = 0; i < n; i++)
            if (strcmp(name, names[i]) == 0) {
                fprintf(stderr, "tally %s: '--%s' takes no value\nsee 'tally help %s'\n", cli->cmd, name, cli->cmd);
                return;
            }
        const char *s = tl_cli_suggest(name, names, n);
        fprintf(stderr, "tally %s: unknown option '--%s'", cli->cmd, name);
        if (s)
            fprintf(stderr, "; did you mean '--%s'?", s);
        fputc('\n', stderr);
    } else {
        fprintf(stderr, "tally %s: unknown option '-%c'\n", cli->cmd, optopt_c);
    }
    fprintf(stderr, "see 'tally help %s'\n", cli->cmd);
}

/* ---- parsing ------------------------------------------------------------- */

static int parse_jobs(const tl_cli *cli, const char *v, int *jobs)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || errno || end == v || *end != '\0' || n < 1 || n > 1024) {
        fprintf(stderr, "tally %s: --jobs needs a number from 1 to 1024, not '%s'\n", cli->cmd, v ? v : "");
        return -1;
    }
    *jobs = (int)n;
    return 0;
}

/* A count or size: digits with an optional K, M or G (powers of 1024) in
 * [1, max]. Returns 0, or -1 after saying what is wrong. */
static int parse_amount(const tl_cli *cli, const char *opt, const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long n = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
    unsigned shift = 0;
    if (n != 0) {
        if (*end == 'K' || *end == 'k')
            shift = 10;
        else if (*end == 'M' || *end == 'm')
            shift = 20;
        else if (*end == 'G' || *end == 'g')
            shift = 30;
        end += shift != 0;
    }
    if (n == 0 || errno || *end != '\0' || n > (max >> shift)) {
        fprintf(stderr, "tally %s: --%s needs a positive number (K, M, G allowed), not '%s'\n", cli->cmd, opt,
                v ? v : "");
        return -1;
    }
    *out = (uint64_t)n << shift;
    return 0;
}

/* ---- input lists (@FILE, --inputs-from FILE) ------------------------------ */

/* Append one path to cli->inputs (kept NULL-terminated). 0 or -1. */
static int add_input(tl_cli *cli, const char *path)
{
    if (tl_array_grow(&cli->inputs, (size_t)cli->ninputs + 1, &cli->lists->inputs_cap, sizeof *cli->inputs, 64) != 0)
        return -1;
    cli->inputs[cli->ninputs++] = path;
    cli->inputs[cli->ninputs] = NULL;
    return 0;
}

/* Start argument nargs at the next input. 0 or -1. */
static int begin_arg(tl_cli *cli)
{
    if (tl_array_grow(&cli->arg_start, (size_t)cli->nargs + 1, &cli->lists->args_cap, sizeof *cli->arg_start, 8) != 0)
        return -1;
    cli->arg_start[cli->nargs++] = cli->ninputs;
    cli->arg_start[cli->nargs] = cli->ninputs;
    return 0;
}

/* The whole of f into a NUL-terminated buffer (*len bytes before the NUL). */
static char *slurp(FILE *f, size_t *len)
{
    size_t n = 0, cap = 0;
    char *buf = NULL;
    for (;;) {
        /* room for a 4 KiB read and the NUL */
        if (tl_array_grow(&buf, n + 4096, &cap, 1, 8192) != 0) {
            free(buf);
            errno = ENOMEM;
            return NULL;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        int err = errno;
        free(buf);
        errno = err ? err : EIO;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Read the input list at name ("-": standard input) as one argument of the
 * paths it lists: one a line, CR LF allowed, blank lines and lines whose
 * first non-blank is '#' skipped. Paths are relative to the current
 * directory, as on the command line. Returns -1 to go on, or the exit code
 * after saying what is wrong: TL_EXIT_NO_INPUT for a list that cannot be
 * read or lists nothing, TL_EXIT_USAGE for a file that is not a list. */
static int read_list(tl_cli *cli, const char *name)
{
    struct tl_cli_lists *l = cli->lists;
    int is_stdin = strcmp(name, "-") == 0;
    const char *shown = is_stdin ? "standard input" : name;
    if (is_stdin && cli->engine != NULL && cli->engine->shared_argv) {
        /* tally-mpi: every process parses the same arguments, and only one has the standard input */
        fprintf(stderr,
                "tally %s: an input list on standard input cannot be shared between processes; give it as a "
                "file (@FILE)\n",
                cli->cmd);
        return TL_EXIT_USAGE;
    }
    if (is_stdin && l->stdin_list) {
        fprintf(stderr, "tally %s: standard input holds one input list only\n", cli->cmd);
        return TL_EXIT_USAGE;
    }
    FILE *f = is_stdin ? stdin : fopen(name, "rb");
    size_t len = 0;
    char *buf = f != NULL ? slurp(f, &len) : NULL;
    int err = errno;
    if (f != NULL && !is_stdin)
        fclose(f);
    if (buf == NULL) {
        if (err == ENOMEM)
            return fprintf(stderr, "tally: out of memory\n"), TL_EXIT_NOMEM;
        fprintf(stderr, "tally %s: %s: cannot read the input list: %s\n", cli->cmd, shown, strerror(err));
        return TL_EXIT_NO_INPUT;
    }
    if (tl_array_grow(&l->bufs, l->nbufs, &l->bufs_cap, sizeof *l->bufs, 8) != 0) {
        free(buf);
        return fprintf(stderr, "tally: out of memory\n"), TL_EXIT_NOMEM;
    }
    l->bufs[l->nbufs++] = buf;
    l->stdin_list |= is_stdin;
    tl_cli_seen_path(cli, name); /* no output may replace the list either */
    const char *nul = memchr(buf, '\0', len);
    if (nul != NULL) {
        fprintf(stderr, "tally %s: %s: not a list of paths (a NUL byte at offset %zu); one path a line\n", cli->cmd,
                shown, (size_t)(nul - buf));
        return TL_EXIT_USAGE;
    }
    if (begin_arg(cli) != 0)
        return fprintf(stderr, "tally: out of memory\n"), TL_EXIT_NOMEM;
    int first = cli->ninputs;
    size_t lineno = 0;
    for (char *p = buf; p < buf + len;) {
        char *end = memchr(p, '\n', (size_t)(buf + len - p));
        char *next = end != NULL ? end + 1 : buf + len;
        if (end == NULL)
            end = buf + len;
        lineno++;
        if (end > p && end[-1] == '\r')
            end--;
        *end = '\0';
        if (end - p > TL_CLI_LIST_LINE_MAX) {
            fprintf(stderr, "tally %s: %s:%zu: a line of more than %d bytes is no path: not a list of paths\n",
                    cli->cmd, shown, lineno, TL_CLI_LIST_LINE_MAX);
            return TL_EXIT_USAGE;
        }
        const char *q = p + strspn(p, " \t");
        if (*q != '\0' && *q != '#' && add_input(cli, p) != 0)
            return fprintf(stderr, "tally: out of memory\n"), TL_EXIT_NOMEM;
        p = next;
    }
    if (cli->ninputs == first) {
        fprintf(stderr, "tally %s: %s: lists no input (one path a line; blank lines and # comments are skipped)\n",
                cli->cmd, shown);
        return TL_EXIT_NO_INPUT;
    }
    return -1;
}

static int parse(tl_cli *cli, int argc, char **argv)
{
    const tl_cli_spec *spec = cli->spec;
    size_t n = nopts(spec);
    if (n > TL_CLI_MAX_OPTS)
        n = TL_CLI_MAX_OPTS;
    struct option longs[NCOMMON + TL_CLI_MAX_OPTS + 1];
    char shorts[3 * (NCOMMON + TL_CLI_MAX_OPTS) + 2];
    size_t k = 0, s = 0;
    shorts[s++] = ':'; /* a missing value returns ':', not '?' */
    for (size_t i = 0; i < NCOMMON; i++) {
        longs[k++] = (struct option){ common[i].name, common[i].has_arg, NULL, common[i].val };
        if (common[i].val < 0x100) {
            shorts[s++] = (char)common[i].val;
            if (common[i].has_arg)
                shorts[s++] = ':';
        }
    }
    for (size_t i = 0; i < n; i++) {
        const tl_cli_opt *o = &spec->opts[i];
        longs[k++] = (struct option){ long_name(o), o->takes_value ? required_argument : no_argument, NULL,
                                      OPT_CMD_BASE + (int)i };
        if (short_name(o)) {
            shorts[s++] = (char)short_name(o);
            if (o->takes_value)
                shorts[s++] = ':';
        }
    }
    longs[k] = (struct option){ NULL, 0, NULL, 0 };
    shorts[s] = '\0';

    opterr = 0;
    optind = 0; /* 0: glibc starts over (tests parse more than once) */
    for (;;) {
        int idx = -1;
        int c = getopt_long(argc, argv, shorts, longs, &idx);
        if (c == -1)
            break;
        if (c == '?') {
            const char *a = argv[optind - 1];
            unknown_option(cli, a[0] == '-' && a[1] == '-' ? a : NULL, optopt);
            return TL_EXIT_USAGE;
        }
        if (c == ':') {
            const char *a = argv[optind - 1];
            if (a[0] == '-' && a[1] == '-')
                fprintf(stderr, "tally %s: %s needs a value\n", cli->cmd, a);
            else
                fprintf(stderr, "tally %s: -%c needs a value\n", cli->cmd, optopt);
            fprintf(stderr, "see 'tally help %s'\n", cli->cmd);
            return TL_EXIT_USAGE;
        }
        switch (c) {
        case 'h':
            tl_cli_help(stdout, spec);
            return TL_EXIT_OK;
        case OPT_VERSION:
            printf("tally %s\n", TALLY_VERSION);
            return TL_EXIT_OK;
        case 'q':
            cli->quiet = 1;
            continue;
        case OPT_STRICT:
            cli->strict = 1;
            continue;
        case OPT_PROGRESS:
            cli->progress = 1;
            continue;
        case OPT_NO_PROGRESS:
            cli->progress = 0;
            continue;
        case 'j':
            if (parse_jobs(cli, optarg, &cli->jobs) != 0)
                return TL_EXIT_USAGE;
            continue;
        case OPT_KERNEL_CLASS:
            cli->analysis_given = 1;
            if (cli->kernel_classes == NULL && (cli->kernel_classes = tl_kernel_classes_new()) == NULL)
                return fprintf(stderr, "tally: out of memory\n"), TL_EXIT_NOMEM;
            cli->analyze.kernel_classes = cli->kernel_classes;
            if (tl_kernel_classes_add(cli->kernel_classes, optarg) != 0) {
                fprintf(stderr,
                        "tally %s: --kernel-class needs GLOB=TYPE with TYPE compute, communication, memory "
                        "or other (at most 64; GLOB without \"; \")\n",
                        cli->cmd);
                return TL_EXIT_USAGE;
            }
            continue;
        case OPT_MAX_NAMES: {
            uint64_t x;
            if (parse_amount(cli, "max-names", optarg, UINT32_MAX, &x) != 0)
                return TL_EXIT_USAGE;
            cli->analyze.max_names = (uint32_t)x;
            cli->analysis_given = 1;
            continue;
        }
        case OPT_MAX_EVENTS:
            if (parse_amount(cli, "max-events", optarg, UINT64_MAX, &cli->analyze.max_events) != 0)
                return TL_EXIT_USAGE;
            cli->analysis_given = 1;
            continue;
        case OPT_MAX_INPUT_SIZE:
            if (parse_amount(cli, "max-input-size", optarg, UINT64_MAX, &cli->analyze.max_input_bytes) != 0)
                return TL_EXIT_USAGE;
            cli->analysis_given = 1;
            continue;
        case OPT_COLOR: {
            enum tl_term_color_mode m;
            if (tl_term_color_parse(optarg, &m) != 0) {
                fprintf(stderr, "tally %s: --color is auto, always or never, not '%s'\n", cli->cmd, optarg);
                return TL_EXIT_USAGE;
            }
            continue; /* applied before parsing (color_from_argv) */
        }
        case OPT_INPUTS_FROM: {
            int rc = read_list(cli, optarg);
            if (rc >= 0)
                return rc;
            continue;
        }
        default:
            break;
        }
        const tl_cli_opt *o = NULL;
        if (c >= OPT_CMD_BASE && c < OPT_CMD_BASE + (int)n)
            o = &spec->opts[c - OPT_CMD_BASE];
        for (size_t i = 0; o == NULL && i < n; i++)
            if (short_name(&spec->opts[i]) == c)
                o = &spec->opts[i];
        if (o == NULL)
            continue;
        if (o->takes_value)
            *o->value = optarg;
        else
            *o->flag = 1;
    }
    /* GNU getopt moved the inputs to the end, in their order. */
    for (int i = optind; i < argc; i++) {
        int rc = argv[i][0] == '@' && argv[i][1]                       ? read_list(cli, argv[i] + 1)
                 : begin_arg(cli) == 0 && add_input(cli, argv[i]) == 0 ? -1
                                                                       : TL_EXIT_NOMEM;
        if (rc >= 0)
            return rc;
    }
    if (begin_arg(cli) != 0) /* arg_start[nargs]: the end of the last argument */
        return TL_EXIT_NOMEM;
    cli->nargs--;
    if (cli->lists->stdin_list)
        for (int i = 0; i < cli->ninputs; i++)
            if (strcmp(cli->inputs[i], "-") == 0) {
                fprintf(stderr, "tally %s: standard input is the input list; it cannot be an input too\n", cli->cmd);
                return TL_EXIT_USAGE;
            }
    return -1;
}

/* --color=WHEN (the last one given) decides the colour of standard error
 * before anything is parsed, so that a usage error is coloured as asked. */
static void color_from_argv(int argc, char **argv)
{
    int seen = 0;
    enum tl_term_color_mode mode = TL_COLOR_AUTO;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        enum tl_term_color_mode m;
        const char *v = strcmp(argv[i], "--color") == 0 && i + 1 < argc ? argv[i + 1]
                        : strncmp(argv[i], "--color=", 8) == 0          ? argv[i] + 8
                                                                        : NULL;
        if (v != NULL && tl_term_color_parse(v, &m) == 0) {
            mode = m;
            seen = 1;
        }
    }
    if (seen)
        tl_term_set_color(stderr,
                          tl_term_color_wanted(mode, getenv("NO_COLOR"), getenv("TERM"), isatty(STDERR_FILENO)));
}

int tl_cli_begin(tl_cli *cli, int argc, char **argv, const tl_cli_spec *spec, const tl_engine *engine)
{
    memset(cli, 0, sizeof *cli);
    cli->engine = engine;
    tl_analyze_options_init(&cli->analyze);
    cli->spec = spec;
    cli->cmd = spec->name;
    cli->jobs = default_jobs();
    cli->progress = -1;
    color_from_argv(argc, argv);
    cli->lists = calloc(1, sizeof *cli->lists);
    cli->seen = calloc(1, sizeof *cli->seen);
    if (cli->lists == NULL || cli->seen == NULL) {
        tl_cli_release(cli);
        fprintf(stderr, "tally: out of memory\n");
        return TL_EXIT_NOMEM;
    }
    int rc = parse(cli, argc, argv);
    if (rc < 0 && cli->ninputs < spec->min_inputs) {
        if (cli->ninputs == 0)
            fprintf(stderr, "tally %s: no input given\n", cli->cmd);
        else
            fprintf(stderr, "tally %s: needs at least %d inputs (%s)\n", cli->cmd, spec->min_inputs, spec->args);
        fprintf(stderr, "usage: tally %s [options] %s\nsee 'tally help %s'\n", spec->name, spec->args, spec->name);
        rc = TL_EXIT_USAGE;
    } else if (rc < 0 && spec->max_inputs >= 0 && cli->nargs > spec->max_inputs) {
        /* an input list is one input here (compare's side) */
        fprintf(stderr, "tally %s: takes %d input%s (%s), not %d\n", cli->cmd, spec->max_inputs,
                spec->max_inputs == 1 ? "" : "s", spec->args, cli->nargs);
        rc = TL_EXIT_USAGE;
    }
    if (rc >= 0) {
        tl_cli_release(cli);
        return rc;
    }
    if (cli->progress < 0)
        cli->progress = isatty(STDERR_FILENO);
    cli->analyze.output_jobs = cli->jobs;
    return -1;
}

void tl_cli_release(tl_cli *cli)
{
    for (size_t i = 0; i < cli->nouts; i++) {
        tl_output_abort(cli->outs[i]);
        free(cli->outs[i]);
    }
    cli->nouts = 0;
    free(cli->inputs);
    free(cli->arg_start);
    if (cli->lists != NULL) {
        for (size_t i = 0; i < cli->lists->nbufs; i++)
            free(cli->lists->bufs[i]);
        free(cli->lists->bufs);
    }
    free(cli->lists);
    if (cli->seen != NULL)
        free(cli->seen->ids);
    free(cli->seen);
    tl_kernel_classes_free(cli->kernel_classes);
    cli->kernel_classes = NULL;
    cli->analyze.kernel_classes = NULL;
    cli->inputs = NULL;
    cli->arg_start = NULL;
    cli->lists = NULL;
    cli->seen = NULL;
}

int tl_cli_parse_percent(const char *s, double *pct)
{
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (*end == '%')
        end++;
    if (end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 1000)
        return -1;
    *pct = v;
    return 0;
}

int tl_cli_strict(const tl_cli *cli, int rc, size_t warnings)
{
    return rc == TL_EXIT_OK && cli->strict && warnings ? TL_EXIT_GATE : rc;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_CLI_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TL_CLI_ASAN)
#define TL_CLI_ASAN 1
#endif

int tl_cli_free_at_exit(void)
{
#ifdef TL_CLI_ASAN
    return 1;
#else
    const char *v = getenv("TALLY_FREE_AT_EXIT");
    return v != NULL && strcmp(v, "0") != 0;
#endif
}
