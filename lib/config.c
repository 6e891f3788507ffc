/*
 * config.c - configuration from the environment, the profiling schedule, and
 * rank detection from the variables of common launchers.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_config_init(tally_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enable = 1;
    cfg->output_dir = ".";
    cfg->trace = 1;
    cfg->trace_gzip = 1;
    cfg->max_events = 1000000;
    cfg->max_samples = 10000;
    cfg->sample_ms = 0;
    cfg->clock = "auto";
    cfg->signals = 1;
}

static int env_long(const char *var, long min, long *out)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0')
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || x < min) {
        fprintf(stderr, "tally: ignoring %s=%s: expected an integer >= %ld\n", var, v, min);
        return TALLY_EINVAL;
    }
    *out = x;
    return 0;
}

static int env_bool(const char *var, int *out)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0')
        return 0;
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off")) {
        *out = 0;
        return 0;
    }
    fprintf(stderr, "tally: ignoring %s=%s: expected 0 or 1\n", var, v);
    return TALLY_EINVAL;
}

static void env_str(const char *var, const char **out)
{
    const char *v = getenv(var);
    if (v != NULL && *v != '\0')
        *out = v;
}

/* The presets (TALLY_PRESET, tally_config_preset): one row each, the
 * fields it sets. The table in tally.h and docs/collector.md says the same;
 * test_config checks every row against the docs. */
static const struct preset {
    const char *name;
    long gpu_ms, cpu_ms;
    const char *sample; /* NULL: all */
    int trace;
    long max_samples;
    int summary;
    long flush_s;
} presets[] = {
    { "dev", 500, 500, NULL, 1, 10000, 1, 0 },
    { "prod", 1000, 5000, "gpu,cpu,memory", 0, 1000, 0, 0 },
    { "debug", 50, 50, NULL, 1, 100000, 1, 10 },
};

int tally_config_preset(tally_config *cfg, const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof presets / sizeof presets[0]; i++) {
        const struct preset *p = &presets[i];
        if (strcmp(name, p->name) != 0)
            continue;
        cfg->sample_gpu_ms = p->gpu_ms;
        cfg->sample_cpu_ms = p->cpu_ms;
        cfg->sample = p->sample;
        cfg->trace = p->trace;
        cfg->max_samples = p->max_samples;
        cfg->summary = p->summary;
        cfg->flush_s = p->flush_s;
        cfg->preset = p->name;
        return 0;
    }
    return TALLY_EINVAL;
}

static const char *const sample_words[] = { "gpu", "cpu", "memory", "disk", "load" };
#define NWORDS (sizeof sample_words / sizeof sample_words[0])

int tl_sample_parse(const char *text, unsigned *mask, char *err, size_t errlen)
{
    unsigned m = 0;
    const char *p = text;
    if (text == NULL || *text == '\0') {
        snprintf(err, errlen, "empty");
        return -1;
    }
    if (strcmp(text, "none") == 0 || strcmp(text, "all") == 0) {
        *mask = text[0] == 'a' ? TL_SAMPLE_ALL : 0;
        return 0;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t k;
        for (k = 0; k < NWORDS; k++)
            if (strlen(sample_words[k]) == len && strncmp(p, sample_words[k], len) == 0)
                break;
        if (k == NWORDS) {
            snprintf(err, errlen, "unknown reading \"%.*s\"", (int)(len < 40 ? len : 40), p);
            return -1;
        }
        m |= 1u << k;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *mask = m;
    return 0;
}

void tl_sample_format(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < NWORDS; k++)
        if (mask & (1u << k)) {
            int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", sample_words[k]);
            if (n < 0 || (size_t)n >= len - used)
                break;
            used += (size_t)n;
        }
}

/* A comma-separated list walked as in tl_sample_parse, kept apart on purpose:
 * an item here is a number read by strtol (which says where it ends), there
 * a word matched by its length; a shared walker would take a callback for
 * each to save four lines. */
int tl_gpus_parse(const char *text, uint64_t *mask, char *err, size_t errlen)
{
    uint64_t m = 0;
    const char *p = text;
    if (text == NULL || *text == '\0') {
        snprintf(err, errlen, "empty");
        return -1;
    }
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (!(*p >= '0' && *p <= '9') || errno != 0 || v > 63 || (*end != ',' && *end != '\0')) {
            snprintf(err, errlen, "expected device indices from 0 to 63 at \"%.20s\"", p);
            return -1;
        }
        m |= 1ull << v;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    *mask = m;
    return 0;
}

int tally_config_from_env(tally_config *cfg)
{
    int rc = 0;
    long x;
    char why[128];
    tally_config_init(cfg);
    const char *preset = getenv("TALLY_PRESET");
    if (preset != NULL && *preset != '\0' && tally_config_preset(cfg, preset) != 0) {
        fprintf(stderr, "tally: ignoring TALLY_PRESET=%s: expected dev, prod or debug\n", preset);
        rc |= TALLY_EINVAL;
    }
    rc |= env_bool("TALLY_ENABLE", &cfg->enable);
    env_str("TALLY_OUTPUT_DIR", &cfg->output_dir);
    env_str("TALLY_NAME", &cfg->name);
    env_str("TALLY_REPORT_PATH", &cfg->report_path);
    env_str("TALLY_TRACE_PATH", &cfg->trace_path);
    rc |= env_bool("TALLY_TRACE", &cfg->trace);
    rc |= env_bool("TALLY_TRACE_GZIP", &cfg->trace_gzip);
    x = cfg->max_events;
    rc |= env_long("TALLY_MAX_EVENTS", 0, &x);
    cfg->max_events = x;
    x = cfg->max_samples;
    rc |= env_long("TALLY_MAX_SAMPLES", 0, &x);
    cfg->max_samples = x;
    x = cfg->sample_ms;
    rc |= env_long("TALLY_SAMPLE_MS", 0, &x);
    cfg->sample_ms = x;
    if (getenv("TALLY_SAMPLE_MS") != NULL && getenv("TALLY_SAMPLE_MS")[0] != '\0') {
        /* an explicit TALLY_SAMPLE_MS is the period of both parts unless
         * their own variables say otherwise (over a preset's) */
        cfg->sample_gpu_ms = cfg->sample_cpu_ms = 0;
    }
    rc |= env_long("TALLY_SAMPLE_GPU_MS", 0, &cfg->sample_gpu_ms);
    rc |= env_long("TALLY_SAMPLE_CPU_MS", 0, &cfg->sample_cpu_ms);
    x = cfg->sample_points;
    rc |= env_long("TALLY_SAMPLE_POINTS", TL_MIN_SAMPLER_POINTS, &x);
    cfg->sample_points = x;
    rc |= env_long("TALLY_FLUSH_S", 0, &cfg->flush_s);
    env_str("TALLY_SAMPLE", &cfg->sample);
    unsigned what;
    if (cfg->sample != NULL && tl_sample_parse(cfg->sample, &what, why, sizeof why) != 0) {
        fprintf(stderr,
                "tally: ignoring TALLY_SAMPLE=%s: %s; expected a list of gpu, cpu, memory, "
                "disk, load (or all, none)\n",
                cfg->sample, why);
        cfg->sample = NULL;
        rc |= TALLY_EINVAL;
    }
    env_str("TALLY_GPUS", &cfg->gpus);
    uint64_t gm;
    if (cfg->gpus != NULL && tl_gpus_parse(cfg->gpus, &gm, why, sizeof why) != 0) {
        fprintf(stderr, "tally: ignoring TALLY_GPUS=%s: %s\n", cfg->gpus, why);
        cfg->gpus = NULL;
        rc |= TALLY_EINVAL;
    }
    env_str("TALLY_SCHEDULE", &cfg->schedule);
    if (cfg->schedule != NULL) {
        tl_schedule s;
        if (tl_schedule_parse(cfg->schedule, &s, why, sizeof why) != 0) {
            fprintf(stderr,
                    "tally: ignoring TALLY_SCHEDULE=%s: %s; expected "
                    "wait=N,warmup=N,active=N,repeat=N\n",
                    cfg->schedule, why);
            cfg->schedule = NULL;
            rc |= TALLY_EINVAL;
        }
    }
    rc |= env_bool("TALLY_SUMMARY", &cfg->summary);
    rc |= env_bool("TALLY_SIGNALS", &cfg->signals);
    env_str("TALLY_CLOCK", &cfg->clock);
    if (strcmp(cfg->clock, "auto") && strcmp(cfg->clock, "tsc") && strcmp(cfg->clock, "monotonic")) {
        fprintf(stderr, "tally: ignoring TALLY_CLOCK=%s: expected auto, tsc or monotonic\n", cfg->clock);
        cfg->clock = "auto";
        rc |= TALLY_EINVAL;
    }
    return rc ? TALLY_EINVAL : 0;
}

/* "wait=1,warmup=1,active=3,repeat=1"; keys in any order, each at most
 * once, missing ones 0 (active defaults to 1). Every value an integer in
 * [0, TL_SCHEDULE_MAX_STEPS]: with that bound a cycle (wait + warmup +
 * active <= 3e9) and its repeats (repeat * cycle <= 3e18) fit in int64, so
 * tl_schedule_records() can neither overflow nor divide by zero. */
int tl_schedule_parse(const char *text, tl_schedule *out, char *err, size_t errlen)
{
    static const char *const keys[] = { "wait", "warmup", "active", "repeat" };
    long vals[4] = { 0, 0, 1, 0 };
    int seen[4] = { 0, 0, 0, 0 };
    const char *p = text;
    char dummy[1];
    if (err == NULL || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (text == NULL || *text == '\0') {
        snprintf(err, errlen, "empty");
        return TALLY_EINVAL;
    }
    for (;;) {
        const char *eq = strchr(p, '=');
        size_t klen = eq ? (size_t)(eq - p) : 0;
        int k;
        for (k = 0; k < 4; k++)
            if (eq && strlen(keys[k]) == klen && strncmp(p, keys[k], klen) == 0)
                break;
        if (k == 4) {
            snprintf(err, errlen, "expected wait=N, warmup=N, active=N or repeat=N at \"%.40s\"", p);
            return TALLY_EINVAL;
        }
        if (seen[k]++) {
            snprintf(err, errlen, "%s given twice", keys[k]);
            return TALLY_EINVAL;
        }
        char *end;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (!(eq[1] >= '0' && eq[1] <= '9') || (*end != ',' && *end != '\0')) {
            snprintf(err, errlen, "%s: expected a non-negative integer", keys[k]);
            return TALLY_EINVAL;
        }
        if (errno == ERANGE || v > TL_SCHEDULE_MAX_STEPS) {
            snprintf(err, errlen, "%s: %.24s is absurd (at most %ld steps)", keys[k], eq + 1,
                     (long)TL_SCHEDULE_MAX_STEPS);
            return TALLY_EINVAL;
        }
        vals[k] = v;
        if (*end == '\0')
            break;
        p = end + 1;
        if (*p == '\0') {
            snprintf(err, errlen, "trailing comma");
            return TALLY_EINVAL;
        }
    }
    if (vals[2] < 1) {
        snprintf(err, errlen, "active must be at least 1");
        return TALLY_EINVAL;
    }
    *out = (tl_schedule){ 1, vals[0], vals[1], vals[2], vals[3] };
    return 0;
}

int tl_schedule_records(const tl_schedule *s, long step)
{
    if (!s->set)
        return 1;
    if (step < 0)
        return 0;
    /* tl_schedule_parse() bounds every value so that none of this can
     * overflow; the checks keep a hand-made struct from dividing by zero
     * (a cycle of 0) or overflowing: it records everything instead. */
    int64_t quiet, cycle;
    if (__builtin_add_overflow((int64_t)s->wait, (int64_t)s->warmup, &quiet) ||
        __builtin_add_overflow(quiet, (int64_t)s->active, &cycle) || cycle <= 0 || quiet < 0)
        return 1;
    if (s->repeat > 0 && (int64_t)step / cycle >= s->repeat)
        return 0;
    return (int64_t)step % cycle >= quiet;
}

/* 1 with *out set when var holds an integer in [0, INT_MAX]; 0 when it is
 * unset or empty; -1 when it holds something else ("-1", "abc", a number
 * beyond INT_MAX), which is said on stderr: a launcher variable that cannot be
 * a rank is never silently read as rank 0. */
static int env_int(const char *var, int *out)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0')
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end != '\0' || x < 0 || x > INT_MAX || !(*v >= '0' && *v <= '9')) {
        fprintf(stderr, "tally: ignoring %s=%.64s: expected an integer from 0 to %d\n", var, v, INT_MAX);
        return -1;
    }
    *out = (int)x;
    return 1;
}

/* Launchers in the order of the issue: torchrun, Open MPI, PMIx, PMI (MPICH,
 * Intel MPI), MVAPICH2, Slurm. A rank variable that is set but not a rank is
 * said on stderr, counted (the return value, added to problems.rank_rejected)
 * and skipped: the next launcher's variable, else the default, is used. */
int tl_rank_detect(tl_rank_info *out)
{
    static const struct {
        const char *rank, *size;
    } vars[] = {
        { "RANK", "WORLD_SIZE" },
        { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
        { "PMIX_RANK", "PMIX_SIZE" },
        { "PMI_RANK", "PMI_SIZE" },
        { "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE" },
        { "SLURM_PROCID", "SLURM_NTASKS" },
    };
    int rejected = 0;
    out->rank = 0;
    out->world_size = 1;
    snprintf(out->source, sizeof out->source, "default");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        int r;
        int got = env_int(vars[i].rank, &r);
        if (got < 0)
            rejected++;
        if (got <= 0)
            continue;
        out->rank = r;
        int w = 0;
        got = env_int(vars[i].size, &w);
        if (got < 0)
            rejected++;
        if (got <= 0 || w <= r)
            w = 0; /* unknown */
        out->world_size = w;
        snprintf(out->source, sizeof out->source, "%s", vars[i].rank);
        return rejected;
    }
    return rejected;
}
