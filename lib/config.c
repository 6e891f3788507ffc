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

int tally_config_from_env(tally_config *cfg)
{
    int rc = 0;
    long x;
    tally_config_init(cfg);
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
    env_str("TALLY_SCHEDULE", &cfg->schedule);
    if (cfg->schedule != NULL) {
        tl_schedule s;
        if (tl_schedule_parse(cfg->schedule, &s) != 0) {
            fprintf(stderr, "tally: ignoring TALLY_SCHEDULE=%s: expected "
                            "wait=N,warmup=N,active=N,repeat=N\n", cfg->schedule);
            cfg->schedule = NULL;
            rc |= TALLY_EINVAL;
        }
    }
    rc |= env_bool("TALLY_SUMMARY", &cfg->summary);
    env_str("TALLY_CLOCK", &cfg->clock);
    if (strcmp(cfg->clock, "auto") && strcmp(cfg->clock, "tsc") && strcmp(cfg->clock, "monotonic")) {
        fprintf(stderr, "tally: ignoring TALLY_CLOCK=%s: expected auto, tsc or monotonic\n", cfg->clock);
        cfg->clock = "auto";
        rc |= TALLY_EINVAL;
    }
    return rc ? TALLY_EINVAL : 0;
}

/* "wait=1,warmup=1,active=3,repeat=1"; keys in any order, missing ones 0
 * (active defaults to 1). Every value a non-negative integer. */
int tl_schedule_parse(const char *text, tl_schedule *out)
{
    tl_schedule s = { 1, 0, 0, 1, 0 };
    const char *p = text;
    if (text == NULL || *text == '\0')
        return TALLY_EINVAL;
    while (*p) {
        const char *eq = strchr(p, '=');
        if (eq == NULL)
            return TALLY_EINVAL;
        size_t klen = (size_t)(eq - p);
        char *end;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (errno || end == eq + 1 || v < 0 || (*end != ',' && *end != '\0'))
            return TALLY_EINVAL;
        if (klen == 4 && !strncmp(p, "wait", 4))
            s.wait = v;
        else if (klen == 6 && !strncmp(p, "warmup", 6))
            s.warmup = v;
        else if (klen == 6 && !strncmp(p, "active", 6))
            s.active = v;
        else if (klen == 6 && !strncmp(p, "repeat", 6))
            s.repeat = v;
        else
            return TALLY_EINVAL;
        p = *end == ',' ? end + 1 : end;
    }
    if (s.active < 1)
        return TALLY_EINVAL;
    *out = s;
    return 0;
}

int tl_schedule_records(const tl_schedule *s, long step)
{
    if (!s->set)
        return 1;
    long cycle = s->wait + s->warmup + s->active;
    if (s->repeat > 0 && step >= s->repeat * cycle)
        return 0;
    return step % cycle >= s->wait + s->warmup;
}

static int env_int(const char *var, int *out)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0')
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end != '\0' || x < 0 || x > INT_MAX)
        return 0;
    *out = (int)x;
    return 1;
}

/* Launchers in the order of the issue: torchrun, Open MPI, PMIx, PMI (MPICH,
 * Intel MPI), MVAPICH2, Slurm. */
void tl_rank_detect(tl_rank_info *out)
{
    static const struct { const char *rank, *size; } vars[] = {
        { "RANK", "WORLD_SIZE" },
        { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
        { "PMIX_RANK", "PMIX_SIZE" },
        { "PMI_RANK", "PMI_SIZE" },
        { "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE" },
        { "SLURM_PROCID", "SLURM_NTASKS" },
    };
    out->rank = 0;
    out->world_size = 1;
    snprintf(out->source, sizeof out->source, "default");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        int r;
        if (!env_int(vars[i].rank, &r))
            continue;
        out->rank = r;
        int w = 0;
        if (!env_int(vars[i].size, &w) || w <= r)
            w = 0; /* unknown */
        out->world_size = w;
        snprintf(out->source, sizeof out->source, "%s", vars[i].rank);
        return;
    }
}
