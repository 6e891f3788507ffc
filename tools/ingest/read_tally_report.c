/*
 * read_tally_report.c - the reader of tally's own report (what libtally's
 * lib/report.c writes, shaped by schema/tally-report.schema.json), with the
 * helpers every report reader shares (report_common.c, report_readers.h).
 *
 * A tally report is already in tally's units (ns, bytes) and carries both the
 * summary of every section and iteration and its raw samples: the summary
 * numbers become the statistic (from_summary), the samples are kept beside
 * them because compare's significance test needs them.
 */
#include "report_readers.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every sample of the entry is in the report (none dropped, all valid): the
 * histogram is rebuilt from them (all of them, beyond the profile's kept
 * samples), so the statistic is exact like one read from events, and median
 * and p95 merge across ranks and sessions instead of being "unknown". */
static void exact_from_samples(tl_name_stat *s, const json_t *samples)
{
    size_t k;
    const json_t *x;
    json_array_foreach(samples, k, x)
    {
        json_int_t v = json_is_integer(x) ? json_integer_value(x) : -1;
        /* beyond the kept samples they were not checked yet; out of memory */
        if (v < 0 || (uint64_t)v < s->d.min || (uint64_t)v > s->d.max || tl_hist_add(&s->d.hist, (uint64_t)v) != 0) {
            tl_hist_release(&s->d.hist); /* stays a summary statistic */
            return;
        }
    }
    s->from_summary = 0;
}

/* sections[] / iterations[]: one statistic per entry from its summary numbers,
 * with its raw samples. The first entry of iterations[] (the writer sorts by
 * total time, so it is the main loop) also becomes the step table: step k is
 * its k-th sample. The report has no start times for iterations, so a step's
 * ts is the sum of the durations before it: iterations are taken as
 * back to back from 0, which is only an approximation of their wall-clock
 * position but keeps step order and lengths exact. */
static void read_durations(tl_profile *p, const json_t *root, const char *list, const char *cat, int steps)
{
    const json_t *arr = tl_readers_array(p, root, "", list, 0);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, list, i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        const char *name;
        size_t name_len;
        int64_t count, total, min, max, dropped;
        double mean, std, median, p95;
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_int(p, e, path, "count", 0, 1, INT64_MAX, &count) != 0 ||
            tl_readers_ns(p, e, path, "total_ns", 0, 1.0, &total) != 0 ||
            tl_readers_ns(p, e, path, "min_ns", 0, 1.0, &min) != 0 ||
            tl_readers_ns(p, e, path, "max_ns", 0, 1.0, &max) != 0 ||
            tl_readers_number(p, e, path, "mean_ns", 0, &mean) != 0 ||
            tl_readers_number(p, e, path, "std_ns", 0, &std) != 0 ||
            tl_readers_number(p, e, path, "median_ns", 0, &median) != 0 ||
            tl_readers_number(p, e, path, "p95_ns", 0, &p95) != 0 ||
            tl_readers_int(p, e, path, "samples_dropped", 0, 0, INT64_MAX, &dropped) != 0)
            continue;
        const json_t *samples = tl_readers_array(p, e, path, "samples_ns", 0);
        if (samples == NULL)
            continue;
        tl_name_stat *s = tl_readers_summary_stat(p, path, cat, name, name_len, (uint64_t)count, total, min, max, mean,
                                                  median, p95, std);
        if (s == NULL)
            continue;
        size_t n = json_array_size(samples);
        size_t keep = n < TL_PROFILE_MAX_SAMPLES ? n : TL_PROFILE_MAX_SAMPLES;
        s->d.samples_dropped = (uint64_t)dropped + (n - keep);
        if (keep > 0) {
            s->d.samples = malloc(keep * sizeof *s->d.samples);
            if (s->d.samples == NULL) {
                s->d.samples_dropped += keep;
                keep = 0;
            }
            s->d.samples_cap = (uint32_t)keep;
        }
        size_t bad = 0;
        int64_t ts = 0;
        /* Every sample is a step (the step table is not capped: 2,000
         * iterations are 2,000 steps); only the first TL_PROFILE_MAX_SAMPLES
         * are also kept as samples for compare's tests, and the rest are
         * counted in samples_dropped. */
        int is_steps = steps && i == 0;
        size_t upto = is_steps ? n : keep;
        for (size_t k = 0; k < upto; k++) {
            const json_t *x = json_array_get(samples, k);
            json_int_t v = json_is_integer(x) ? json_integer_value(x) : -1;
            if (v < min || v > max) {
                if (bad++ == 0)
                    tl_profile_warn(p,
                                    "%s.samples_ns[%zu]: expected an integer in [min_ns, "
                                    "max_ns] = [%lld, %lld]; such samples are skipped",
                                    path, k, (long long)min, (long long)max);
                if (k < keep)
                    s->d.samples_dropped++;
                continue;
            }
            if (k < keep)
                s->d.samples[s->d.nsamples++] = (uint64_t)v;
            if (is_steps) {
                tl_profile_add_step(p, (int64_t)k, ts, (int64_t)v);
                ts += (int64_t)v;
            }
        }
        /* The collector keeps at most TALLY_MAX_SAMPLES samples per name: then
         * the step table holds the first of them only. Say so, with the cap. */
        if (is_steps && dropped > 0)
            tl_profile_warn(p,
                            "%s (\"%.*s\"): the step table holds the first %zu of %lld iterations: the "
                            "collector kept %zu samples (TALLY_MAX_SAMPLES); step statistics cover those, "
                            "the section totals all %lld",
                            path, (int)(name_len > 80 ? 80 : name_len), name, n, (long long)count, n, (long long)count);
        if ((uint64_t)n + (uint64_t)dropped != (uint64_t)count)
            tl_profile_warn(p, "%s: %zu samples + %lld dropped does not make count %lld", path, n, (long long)dropped,
                            (long long)count);
        else if (dropped == 0 && bad == 0)
            exact_from_samples(s, samples);
    }
}

static void read_counters(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "counters", 0);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "counters", i);
        const char *name;
        size_t name_len;
        int64_t count;
        double sum, mean, min, max, std, last;
        const int f = TL_RD_SIGNED | TL_RD_NULLABLE; /* null: a non-finite value was counted */
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_int(p, e, path, "count", 0, 1, INT64_MAX, &count) != 0 ||
            tl_readers_number(p, e, path, "sum", f, &sum) < 0 || tl_readers_number(p, e, path, "mean", f, &mean) < 0 ||
            tl_readers_number(p, e, path, "min", f, &min) < 0 || tl_readers_number(p, e, path, "max", f, &max) < 0 ||
            tl_readers_number(p, e, path, "std", TL_RD_NULLABLE, &std) < 0 ||
            tl_readers_number(p, e, path, "last", f, &last) < 0)
            continue;
        if (min > max) {
            tl_profile_warn(p, "%s: min %g is above max %g; entry skipped", path, min, max);
            continue;
        }
        tl_counter *c = tl_profile_counter(p, name, name_len);
        if (c == NULL) {
            tl_profile_warn(p, "%s: out of memory", path);
            continue;
        }
        c->source = TL_COUNTER_USER;
        if (c->v.count != 0) {
            tl_profile_warn(p, "%s: a second counter of this name; the first is kept", path);
            continue;
        }
        c->v.count = (uint64_t)count;
        c->v.sum = sum;
        c->v.mean = mean;
        c->v.min = min;
        c->v.max = max;
        c->v.m2 = count > 1 ? std * std * (double)(count - 1) : 0.0; /* NaN if std unknown */
        c->v.last = last;
    }
}

/* events[]: {name, time_ns, tid, args} (tally_event), kept for the report's
 * table and timeline markers with their args as text; counted as instants. */
static void read_events(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "events", 0);
    size_t i;
    const json_t *e;
    char path[160];
    p->events += json_array_size(arr);
    p->by_phase['i'] += json_array_size(arr);
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "events", i);
        const char *name;
        size_t name_len;
        int64_t t;
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0)
            continue;
        char *args = tl_readers_text(json_object_get(e, "args"));
        if (args == NULL || tl_profile_add_event(p, t, name, name_len, args, strlen(args)) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        free(args);
    }
}

/* counter_rates[] (tally_counter_rate): each rate, hits / (hits + misses)
 * of a counter pair, as a counter of its own name with that one value (0 to
 * 1), so every table of counters shows it beside its pair. */
static void read_counter_rates(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "counter_rates", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        const char *name;
        size_t name_len;
        double rate;
        tl_readers_index(path, sizeof path, "counter_rates", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_number(p, e, path, "rate", TL_RD_NULLABLE, &rate) < 0)
            continue;
        if (isnan(rate))
            continue; /* nothing looked up */
        if (!(rate >= 0 && rate <= 1)) {
            tl_profile_warn(p, "%s: rate %g is not a share from 0 to 1; left out", path, rate);
            continue;
        }
        tl_counter *c = tl_profile_counter(p, name, name_len);
        if (c == NULL) {
            tl_profile_warn(p, "%s: out of memory", path);
            continue;
        }
        if (c->v.count != 0) {
            tl_profile_warn(p, "%s: a counter of this name exists; the rate is left out", path);
            continue;
        }
        c->source = TL_COUNTER_RATE; /* shown as a rate (%) beside its pair */
        tl_value_stat_add(&c->v, rate, 0);
    }
}

/* section_args[] (tally_begin_args): a section's metadata, shown with the
 * events (at the section's start, under its name). */
static void read_section_args(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "section_args", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "section_args", i);
        const char *name;
        size_t name_len;
        int64_t t;
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0)
            continue;
        char *args = tl_readers_text(json_object_get(e, "args"));
        if (args == NULL || tl_profile_add_event(p, t, name, name_len, args, strlen(args)) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        free(args);
    }
    int64_t n;
    if (tl_readers_int(p, root, "", "section_args_dropped", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p, "section_args_dropped: %lld sections' metadata beyond the collector's 100000 not kept",
                        (long long)n);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

#define TL_GPU_MAX_BYTES 72057594037927936.0 /* 2^56 (64 PiB): beyond, not a memory size */

/* memory_snapshots[]: host memory from rss/peak_rss; allocator memory from
 * the first registered provider that reports "<provider>.allocated" (etc.);
 * device used from NVML's used_bytes of the fullest of gpus[] (what the
 * device has in use, including the allocator's cache and other processes:
 * a different thing from allocated, kept apart); the program's own device
 * memory from NVML's per-process process_used_bytes, summed over gpus[]
 * (its own series: never merged with device used). */
static void read_snapshots(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "memory_snapshots", 0);
    size_t i;
    const json_t *e;
    char path[160];
    const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "memory_snapshots", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        const char *label;
        size_t label_len;
        int64_t t;
        tl_mem_snapshot s = {
            .allocated = NAN, .reserved = NAN, .peak_allocated = NAN, .device_used = NAN, .process_used = NAN
        };
        if (tl_readers_string(p, e, path, "label", 0, &label, &label_len) != 0 ||
            tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0 ||
            tl_readers_number(p, e, path, "rss_bytes", f, &s.rss) < 0 ||
            tl_readers_number(p, e, path, "peak_rss_bytes", f, &s.peak_rss) < 0)
            continue;
        s.ts_ns = t;
        const json_t *prov = tl_readers_object(p, e, path, "providers", TL_RD_OPTIONAL);
        const char *key;
        const json_t *v;
        char pp[192];
        tl_readers_path(pp, sizeof pp, path, "providers");
        int ok = 1;
        json_object_foreach((json_t *)prov, key, v)
        {
            double *dst = NULL;
            if (ends_with(key, ".allocated"))
                dst = &s.allocated;
            else if (ends_with(key, ".reserved"))
                dst = &s.reserved;
            else if (ends_with(key, ".peak_allocated") || ends_with(key, ".max_allocated"))
                dst = &s.peak_allocated;
            if (dst == NULL || !isnan(*dst))
                continue;
            double x;
            if (tl_readers_number(p, prov, pp, key, TL_RD_NULLABLE, &x) < 0)
                ok = 0;
            else
                *dst = x;
        }
        const json_t *gpus = tl_readers_array(p, e, path, "gpus", TL_RD_OPTIONAL);
        for (size_t g = 0; ok && g < json_array_size(gpus); g++) {
            char gp[192];
            double used, own;
            snprintf(gp, sizeof gp, "%s.gpus[%zu]", path, g);
            if (tl_readers_number(p, json_array_get(gpus, g), gp, "used_bytes", TL_RD_NULLABLE, &used) < 0 ||
                tl_readers_number(p, json_array_get(gpus, g), gp, "process_used_bytes", f, &own) < 0)
                ok = 0;
            if (ok && isfinite(used) && !(used <= s.device_used))
                s.device_used = used;
            if (ok && isfinite(own) && own < TL_GPU_MAX_BYTES)
                s.process_used = (isfinite(s.process_used) ? s.process_used : 0) + own;
        }
        if (!ok)
            continue;
        s.label = tl_strtab_intern(&p->strs, label, label_len);
        if (s.label == UINT32_MAX || tl_profile_add_snapshot(p, &s) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
    }
}

/* One GPU reading of the sampler or of system.gpus. 0 or -1 (warned). */
/* GPU readings that cannot be real (NVML's "not available" is 0xFFFFFFFF,
 * 4294967295; a wedged driver returns anything): a utilization outside
 * 0-100 %, memory used above the total, a temperature or power no GPU has.
 * Left out (NaN), counted, and said once per report with the first. */
typedef struct gpu_garbage {
    uint64_t n;
    char first[200];
} gpu_garbage;

#define TL_GPU_MAX_WATTS 10000.0
#define TL_GPU_MIN_CELSIUS (-100.0)
#define TL_GPU_MAX_CELSIUS 200.0
#define TL_GPU_MAX_MHZ 100000.0

static void not_a_reading(gpu_garbage *gb, double *v, const char *path, const char *key)
{
    if (gb->n++ == 0)
        snprintf(gb->first, sizeof gb->first, "%s.%s = %.15g", path, key, *v);
    *v = NAN;
}

static void drop_garbage(gpu_garbage *gb, tl_gpu_sample *s, const char *path)
{
    if (!isnan(s->util_pct) && !(s->util_pct >= 0 && s->util_pct <= 100))
        not_a_reading(gb, &s->util_pct, path, "utilization_pct");
    if (!isnan(s->temperature_c) && !(s->temperature_c >= TL_GPU_MIN_CELSIUS && s->temperature_c <= TL_GPU_MAX_CELSIUS))
        not_a_reading(gb, &s->temperature_c, path, "temperature_c");
    if (!isnan(s->power_w) && !(s->power_w <= TL_GPU_MAX_WATTS))
        not_a_reading(gb, &s->power_w, path, "power_w");
    if (s->power_limit_w > TL_GPU_MAX_WATTS)
        not_a_reading(gb, &s->power_limit_w, path, "power_limit_w");
    if (!isnan(s->mem_total) && !(s->mem_total < TL_GPU_MAX_BYTES))
        not_a_reading(gb, &s->mem_total, path, "total_bytes");
    if (!isnan(s->mem_used) && !(s->mem_used < TL_GPU_MAX_BYTES && !(s->mem_total > 0 && s->mem_used > s->mem_total)))
        not_a_reading(gb, &s->mem_used, path, "used_bytes");
    if (!isnan(s->proc_used) &&
        !(s->proc_used < TL_GPU_MAX_BYTES && !(s->mem_total > 0 && s->proc_used > s->mem_total)))
        not_a_reading(gb, &s->proc_used, path, "process_used_bytes");
}

static void say_garbage(tl_profile *p, const gpu_garbage *gb)
{
    if (gb->n)
        tl_profile_warn(p,
                        "%" PRIu64 " GPU reading%s that cannot be real left out (a utilization outside 0-100 %%, "
                        "memory used above the total, 4294967295: NVML's \"not available\"); the first: %s",
                        gb->n, gb->n == 1 ? "" : "s", gb->first);
}

static int read_gpu(tl_profile *p, const json_t *g, const char *path, tl_gpu_sample *s, const char **name,
                    size_t *name_len, gpu_garbage *gb)
{
    const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
    int64_t index;
    if (!json_is_object(g)) {
        tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(g));
        return -1;
    }
    if (tl_readers_int(p, g, path, "index", 0, 0, INT32_MAX, &index) != 0 ||
        tl_readers_number(p, g, path, "used_bytes", TL_RD_NULLABLE, &s->mem_used) < 0 ||
        tl_readers_number(p, g, path, "total_bytes", TL_RD_NULLABLE, &s->mem_total) < 0 ||
        tl_readers_number(p, g, path, "utilization_pct", f, &s->util_pct) < 0 ||
        tl_readers_number(p, g, path, "temperature_c", f | TL_RD_SIGNED, &s->temperature_c) < 0 ||
        tl_readers_number(p, g, path, "power_w", f, &s->power_w) < 0 ||
        tl_readers_number(p, g, path, "power_limit_w", f, &s->power_limit_w) < 0 ||
        tl_readers_number(p, g, path, "process_used_bytes", f, &s->proc_used) < 0 ||
        tl_readers_number(p, g, path, "sm_clock_mhz", f, &s->sm_clock_mhz) < 0 ||
        tl_readers_number(p, g, path, "memory_clock_mhz", f, &s->mem_clock_mhz) < 0 ||
        tl_readers_number(p, g, path, "base_sm_clock_mhz", f, &s->base_clock_mhz) < 0)
        return -1;
    drop_garbage(gb, s, path);
    /* clocks: 0 unknown (absent, null, or not a clock: NaN or beyond 100 GHz) */
    double *clk[3] = { &s->sm_clock_mhz, &s->mem_clock_mhz, &s->base_clock_mhz };
    for (int k = 0; k < 3; k++)
        if (!(*clk[k] > 0 && *clk[k] <= TL_GPU_MAX_MHZ))
            *clk[k] = 0;
    if (!(s->power_limit_w > 0))
        s->power_limit_w = 0; /* unknown */
    int64_t reasons;
    int rc = tl_readers_int(p, g, path, "throttle_reasons", f, 0, INT64_MAX, &reasons);
    if (rc < 0)
        return -1;
    s->throttle = rc == 0 ? (uint64_t)reasons : 0;
    s->has_throttle = rc == 0;
    s->device = index;
    if (name != NULL && tl_readers_string(p, g, path, "name", TL_RD_OPTIONAL, name, name_len) < 0)
        return -1;
    return 0;
}

/* sampler.series[]: a GPU sample per GPU, a host memory point (RSS) and the
 * process CPU usage as the counter "cpu_usage_pct" (named as for Inferix). */
static void read_sampler(tl_profile *p, const json_t *root)
{
    const json_t *sampler = tl_readers_object(p, root, "", "sampler", TL_RD_NULLABLE);
    if (sampler == NULL)
        return;
    int64_t dropped;
    if (tl_readers_int(p, sampler, "sampler", "points_dropped", TL_RD_OPTIONAL, 0, INT64_MAX, &dropped) == 0 &&
        dropped > 0)
        tl_profile_warn(p,
                        "sampler.points_dropped: the collector dropped %lld sampler points; "
                        "the series has gaps",
                        (long long)dropped);
    /* the point budget reached: the series keeps every stride-th point */
    int64_t decimated, budget = 0, stride = 0;
    if (tl_readers_int(p, sampler, "sampler", "points_decimated", TL_RD_OPTIONAL, 0, INT64_MAX, &decimated) == 0 &&
        decimated > 0) {
        (void)tl_readers_int(p, sampler, "sampler", "points_budget", TL_RD_OPTIONAL, 0, INT64_MAX, &budget);
        (void)tl_readers_int(p, sampler, "sampler", "stride", TL_RD_OPTIONAL, 1, INT64_MAX, &stride);
        tl_profile_warn(p,
                        "sampler: the collector's point budget (%lld points, TALLY_SAMPLE_POINTS) was reached; "
                        "%lld points were decimated and the series keeps every %lld%s point taken",
                        (long long)budget, (long long)decimated, (long long)stride,
                        stride == 2   ? "nd"
                        : stride == 3 ? "rd"
                                      : "th");
    }
    /* why a part has no readings (NVML absent, /proc/self/io unreadable) */
    static const char *const status_keys[2] = { "gpu_status", "disk_status" };
    for (int k = 0; k < 2; k++) {
        const char *why;
        size_t why_len;
        char text[200];
        if (tl_readers_string(p, sampler, "sampler", status_keys[k], TL_RD_OPTIONAL, &why, &why_len) != 0)
            continue;
        tl_readers_clean_copy(text, sizeof text, why, why_len, sizeof text - 4);
        tl_profile_warn(p, "sampler.%s: %s: %s", status_keys[k], text,
                        k == 0 ? "no GPU series from the collector's sampler" : "no disk rates");
    }
    const json_t *series = tl_readers_array(p, sampler, "sampler", "series", 0);
    size_t i;
    const json_t *e;
    char path[160];
    gpu_garbage gb = { 0, "" };
    json_array_foreach(series, i, e)
    {
        tl_readers_index(path, sizeof path, "sampler.series", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        int64_t t;
        double cpu, rss, avail, load, drd, dwr, vrd, vwr;
        const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
        if (tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0 ||
            tl_readers_number(p, e, path, "cpu_pct", f, &cpu) < 0 ||
            tl_readers_number(p, e, path, "rss_bytes", f, &rss) < 0 ||
            tl_readers_number(p, e, path, "system_available_bytes", f, &avail) < 0 ||
            tl_readers_number(p, e, path, "load1", f, &load) < 0 ||
            tl_readers_number(p, e, path, "disk_read_bytes_per_s", f, &drd) < 0 ||
            tl_readers_number(p, e, path, "disk_write_bytes_per_s", f, &dwr) < 0 ||
            tl_readers_number(p, e, path, "device_read_bytes_per_s", f, &vrd) < 0 ||
            tl_readers_number(p, e, path, "device_write_bytes_per_s", f, &vwr) < 0)
            continue;
        /* a negative rate is not a reading */
        if (drd < 0)
            drd = NAN;
        if (dwr < 0)
            dwr = NAN;
        if (vrd < 0)
            vrd = NAN;
        if (vwr < 0)
            vwr = NAN;
        /* the telemetry series (a NaN reading is not recorded) */
        if (tl_profile_add_point(p, TL_SERIES_CPU, -1, t, cpu) != 0 ||
            tl_profile_add_point(p, TL_SERIES_RSS, -1, t, rss) != 0 ||
            tl_profile_add_point(p, TL_SERIES_SYS_AVAIL, -1, t, avail) != 0 ||
            tl_profile_add_point(p, TL_SERIES_LOAD, -1, t, load) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DISK_READ, -1, t, drd) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DISK_WRITE, -1, t, dwr) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DEVICE_READ, -1, t, vrd) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DEVICE_WRITE, -1, t, vwr) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        if (!isnan(cpu)) {
            tl_counter *c = tl_profile_counter(p, "cpu_usage_pct", strlen("cpu_usage_pct"));
            if (c != NULL)
                tl_value_stat_add(&c->v, cpu, (uint64_t)t);
        }
        if (!isnan(rss)) {
            /* the process RSS: host memory in use, not allocator-allocated */
            tl_mem_point pt = { .ts_ns = t, .device = -1, .allocated = NAN, .reserved = NAN, .used = rss };
            tl_profile_add_mem(p, &pt);
        }
        const json_t *gpus = tl_readers_array(p, e, path, "gpus", TL_RD_OPTIONAL);
        size_t g;
        const json_t *ge;
        json_array_foreach(gpus, g, ge)
        {
            char gp[192];
            snprintf(gp, sizeof gp, "%s.gpus[%zu]", path, g);
            tl_gpu_sample s = { .ts_ns = t };
            if (read_gpu(p, ge, gp, &s, NULL, NULL, &gb) == 0)
                tl_profile_add_gpu_sample(p, &s);
        }
    }
    say_garbage(p, &gb);
}

/* blocks (tally_block_begin/end): each block's time and frames, read like
 * Inferix's block_analysis.blocks[] (FPS, first-block delay: diffusion.c). */
static void read_blocks(tl_profile *p, const json_t *root)
{
    const json_t *b = tl_readers_object(p, root, "", "blocks", TL_RD_OPTIONAL | TL_RD_NULLABLE);
    if (b == NULL)
        return;
    const json_t *items = tl_readers_array(p, b, "blocks", "items", 0);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(items, i, e)
    {
        int64_t dur;
        double frames, rss, gpu;
        tl_readers_index(path, sizeof path, "blocks.items", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_ns(p, e, path, "dur_ns", 0, 1.0, &dur) != 0 ||
            tl_readers_number(p, e, path, "frames", TL_RD_OPTIONAL | TL_RD_NULLABLE, &frames) < 0 ||
            tl_readers_number(p, e, path, "rss_bytes", TL_RD_OPTIONAL | TL_RD_NULLABLE, &rss) < 0 ||
            tl_readers_number(p, e, path, "gpu_memory_bytes", TL_RD_OPTIONAL | TL_RD_NULLABLE, &gpu) < 0)
            continue;
        /* memory at the block's end (absent in older reports): a negative
         * amount is not one */
        tl_diff_block blk = { dur, frames, gpu >= 0 ? gpu : NAN, rss >= 0 ? rss : NAN };
        if (tl_profile_add_block(p, &blk) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
    }
    static const char *const counts[3] = { "dropped", "unmatched_ends", "restarted" };
    static const char *const what[3] = {
        "blocks beyond the collector's 100000 are not listed: FPS and the block count cover the listed ones",
        "tally_block_end() calls without an open block",
        "tally_block_begin() calls while a block was open (the earlier begin was dropped)",
    };
    for (int k = 0; k < 3; k++) {
        int64_t n;
        if (tl_readers_int(p, b, "blocks", counts[k], TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
            tl_profile_warn(p, "blocks.%s: %lld %s", counts[k], (long long)n, what[k]);
    }
}

static void read_system(tl_profile *p, const json_t *root)
{
    const json_t *sys = tl_readers_object(p, root, "", "system", 0);
    const json_t *gpus = tl_readers_array(p, sys, "system", "gpus", 0);
    size_t i;
    const json_t *g;
    gpu_garbage gb = { 0, "" };
    json_array_foreach(gpus, i, g)
    {
        char path[160];
        const char *name = NULL;
        size_t name_len = 0;
        tl_gpu_sample s;
        tl_readers_index(path, sizeof path, "system.gpus", i);
        if (read_gpu(p, g, path, &s, &name, &name_len, &gb) == 0 &&
            tl_readers_add_device(p, s.device, name, name_len, s.mem_total) == 0)
            for (uint32_t k = 0; k < p->ndevices; k++)
                if (p->devices[k].id == s.device && s.power_limit_w > 0)
                    p->devices[k].power_limit_w = s.power_limit_w;
    }
    say_garbage(p, &gb);
    /* the host (what the collector recorded of it) */
    const char *text;
    size_t len;
    if (tl_readers_string(p, sys, "system", "hostname", TL_RD_OPTIONAL | TL_RD_NULLABLE, &text, &len) == 0)
        tl_readers_clean_copy(p->host.hostname, sizeof p->host.hostname, text, len, sizeof p->host.hostname - 4);
    if (tl_readers_string(p, sys, "system", "os", TL_RD_OPTIONAL | TL_RD_NULLABLE, &text, &len) == 0)
        tl_readers_clean_copy(p->host.os, sizeof p->host.os, text, len, sizeof p->host.os - 4);
    int64_t cpus;
    if (tl_readers_int(p, sys, "system", "cpus", TL_RD_OPTIONAL | TL_RD_NULLABLE, 1, 1 << 24, &cpus) == 0)
        p->host.cpus = (int)cpus;
    double mem;
    if (tl_readers_number(p, sys, "system", "memory_bytes", TL_RD_OPTIONAL | TL_RD_NULLABLE, &mem) == 0 && mem > 0)
        p->host.memory_bytes = mem;
    /* no GPU in system (NVML opened late, or not at all): the sampler's readings */
    if (p->ndevices == 0)
        for (size_t k = 0; k < p->ngpu_samples; k++)
            tl_readers_add_device(p, p->gpu_samples[k].device, NULL, 0, p->gpu_samples[k].mem_total);
}

/* problems and drop counters: what the numbers do not show by themselves */
static void read_problems(tl_profile *p, const json_t *root)
{
    const json_t *pr = tl_readers_object(p, root, "", "problems", 0);
    int64_t n;
    if (tl_readers_int(p, pr, "problems", "unclosed", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.unclosed: %lld sections or iterations were still open at "
                        "shutdown; they are not in the statistics",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "unmatched_ends", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p, "problems.unmatched_ends: %lld end calls had no matching begin", (long long)n);
    if (tl_readers_int(p, pr, "problems", "names_overflowed", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.names_overflowed: %lld names did not fit the collector's "
                        "name table; their timings are under \"(other names)\"",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "depth_overflow", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.depth_overflow: %lld sections were nested deeper than the "
                        "collector's limit; they are not in the statistics",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "rank_rejected", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.rank_rejected: %lld tally_set_rank calls gave an impossible "
                        "rank or world size",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "threads_skipped", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.threads_skipped: %lld threads were left out of this report "
                        "(written at a signal that interrupted them)",
                        (long long)n);
    const json_t *tr = tl_readers_object(p, root, "", "trace", 0);
    if (tl_readers_int(p, tr, "trace", "events_dropped", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "trace.events_dropped: the collector dropped %lld trace events "
                        "(max_events reached); the trace file is incomplete, the statistics "
                        "are not",
                        (long long)n);
    if (tl_readers_int(p, root, "", "events_dropped", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p, "events_dropped: the collector dropped %lld events (tally_event)", (long long)n);
}

int tl_read_tally_report_json(tl_profile *p, const json_t *root)
{
    int64_t version, rank, world, start, duration;
    const char *src, *prod;
    size_t src_len, prod_len;

    if (tl_readers_expect(p, root, TL_FMT_TALLY_REPORT, "a tally report") != 0)
        return -1;
    if (tl_readers_int(p, root, "", "version", 0, 0, INT64_MAX, &version) != 0)
        return -1;
    if (version != 1) {
        tl_profile_warn(p,
                        "tally report version %lld is not supported (this tally reads "
                        "version 1)",
                        (long long)version);
        return -1;
    }
    snprintf(p->format_detail, sizeof p->format_detail, "version 1");
    const json_t *producer = tl_readers_object(p, root, "", "producer", TL_RD_OPTIONAL);
    if (tl_readers_string(p, producer, "producer", "name", TL_RD_OPTIONAL, &prod, &prod_len) == 0) {
        char pn[40];
        tl_readers_clean_copy(pn, sizeof pn, prod, prod_len, 32);
        snprintf(p->format_detail, sizeof p->format_detail, "version 1, written by %s", pn);
    }

    if (tl_readers_int(p, root, "", "rank", 0, 0, INT_MAX - 1, &rank) == 0) {
        char s[48] = "unknown";
        if (tl_readers_string(p, root, "", "rank_source", TL_RD_OPTIONAL, &src, &src_len) == 0)
            tl_readers_clean_copy(s, sizeof s, src, src_len, 40);
        char detail[TL_RANK_DETAIL_MAX + 1];
        snprintf(detail, sizeof detail, "report rank (%s)", s);
        tl_identity_set_rank(&p->id, (int)rank, TL_RANK_CONTENT, detail);
    }
    if (tl_readers_int(p, root, "", "world_size", TL_RD_NULLABLE, 1, INT_MAX, &world) == 0) {
        p->id.world_size = (int)world;
        if (p->id.rank >= p->id.world_size)
            tl_profile_warn(p, "rank %d is not below world_size %d", p->id.rank, p->id.world_size);
    }
    if (tl_readers_ns(p, root, "", "start_time_unix_ns", 0, 1.0, &start) == 0)
        p->base_time_ns = start;
    if (tl_readers_ns(p, root, "", "duration_ns", 0, 1.0, &duration) == 0)
        tl_profile_span(p, 0, duration);
    /* the process, for run identity (the host is read with the system info) */
    int64_t pid;
    if (tl_readers_int(p, root, "", "pid", TL_RD_OPTIONAL, 0, INT64_MAX, &pid) == 0)
        p->pid = pid;

    read_durations(p, root, "sections", "section", 0);
    read_durations(p, root, "iterations", "iteration", 1);
    read_counters(p, root);
    read_counter_rates(p, root);
    read_snapshots(p, root);
    read_events(p, root);
    tl_readers_tags(p, tl_readers_object(p, root, "", "tags", TL_RD_OPTIONAL | TL_RD_NULLABLE));
    read_sampler(p, root);
    read_blocks(p, root);
    read_section_args(p, root);
    read_system(p, root);
    read_problems(p, root);
    tl_profile_finish(p);
    return 0;
}

int tl_read_tally_report(tl_profile *p, const char *buf, size_t len)
{
    json_t *root;
    if (tl_readers_load(p, buf, len, &root) != 0)
        return -1;
    int ret = tl_read_tally_report_json(p, root);
    json_decref(root);
    return ret;
}
