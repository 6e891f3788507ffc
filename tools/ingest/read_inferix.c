/*
 * read_inferix.c - Inferix's per-rank profiling report, as written by
 * inferix/profiling/reporter.py (ProfilingReporter._prepare_report_data):
 *
 *   session_info   {id, start_time, end_time, duration (s since epoch / s), tags{rank, world_size..}}
 *   gpu_metrics    {timeline: [{timestamp, memory_used_mb, memory_total_mb, utilization,
 *                               temperature, power}], *_analysis}
 *   cpu_metrics    {timeline: [{timestamp, cpu_usage, memory_used_mb, memory_total_mb}], ...}
 *   stage_analysis {stages: {name: {total_time, call_count, avg_time, min_time, max_time}}} (s)
 *   events [{name, timestamp, data}], recommendations, summary, and when recorded:
 *   diffusion_analysis {steps[]}, block_analysis {blocks[{block_size, computation_time_ms,
 *   memory_usage_mb}]}, computation_analysis {layer_performance{}}  (ms),
 *   model_analysis {models{name: {parameters_count, model_type}}}
 *
 * The one thing to know about its GPU timeline: each point is what
 * GPUMonitor watched, summed (memory, power) or maxed (utilization,
 * temperature) over its devices, and by default it watches every GPU NVML
 * sees, not only this rank's. The profile files it as device 0. "_mb" values
 * are NVML/psutil bytes // 1024**2, i.e. MiB. A metric that the monitor could
 * not read is written as 0 (metrics.get(..., 0)); like Inferix's own analysis
 * (any(t > 0)), a temperature, power or total memory that is 0 in every point
 * is taken as unknown (NaN).
 *
 * Summaries derived from the data above ("summary", "*_analysis" figures,
 * "bottlenecks") and the recommendations are not read: tally computes its own.
 */
#include "report_readers.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* An integer tag (rank, world_size): tags are free-form, so a decimal string
 * such as "3" is accepted as well as a number. */
static int tag_int(tl_profile *p, const json_t *tags, const char *key, int64_t min, int64_t max, int64_t *out)
{
    const json_t *v = json_object_get(tags, key);
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        int64_t x = 0;
        int ok = n > 0 && n <= 9;
        for (size_t i = 0; ok && i < n; i++) {
            ok = s[i] >= '0' && s[i] <= '9';
            x = x * 10 + (s[i] - '0');
        }
        if (ok && x >= min && x <= max) {
            *out = x;
            return 0;
        }
        char full[160];
        tl_profile_warn(p, "%s: expected an integer >= %lld",
                        tl_readers_path(full, sizeof full, "session_info.tags", key), (long long)min);
        return -1;
    }
    return tl_readers_int(p, tags, "session_info.tags", key, TL_RD_OPTIONAL | TL_RD_NULLABLE, min, max, out);
}

static void read_session(tl_profile *p, const json_t *root, double *base)
{
    const json_t *si = json_object_get(root, "session_info");
    const char *path = "session_info";
    double start = NAN, end = NAN, duration = NAN;
    const char *id;
    size_t id_len;

    if (tl_readers_string(p, si, path, "id", TL_RD_OPTIONAL | TL_RD_NULLABLE, &id, &id_len) == 0) {
        char clean[48];
        tl_readers_path(clean, sizeof clean, "", id);
        snprintf(p->format_detail, sizeof p->format_detail, "session %s", clean);
    }
    /* end_time and duration are null while a session is still running */
    const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
    if (tl_readers_number(p, si, path, "start_time", 0, &start) == 0) {
        if (!(start * 1e9 < 9.2e18)) {
            tl_profile_warn(p,
                            "session_info.start_time: %g is not a time in seconds since the "
                            "epoch",
                            start);
        } else {
            *base = start;
            p->base_time_ns = llround(start * 1e9);
        }
    }
    int has_end = !isnan(*base) && tl_readers_number(p, si, path, "end_time", f, &end) == 0;
    if (has_end && !(end >= start && (end - start) * 1e9 < 9.2e18)) {
        tl_profile_warn(p, "session_info.end_time: %g is not a time after start_time %g", end, start);
        has_end = 0;
    }
    if (has_end)
        tl_profile_span(p, 0, llround((end - start) * 1e9));
    else if (!isnan(*base) && tl_readers_number(p, si, path, "duration", f, &duration) == 0 && duration * 1e9 < 9.2e18)
        tl_profile_span(p, 0, llround(duration * 1e9));

    const json_t *tags = tl_readers_object(p, si, path, "tags", TL_RD_OPTIONAL | TL_RD_NULLABLE);
    tl_readers_tags(p, tags);
    int64_t rank, world;
    if (tags != NULL && json_object_get(tags, "rank") != NULL && tag_int(p, tags, "rank", 0, INT_MAX - 1, &rank) == 0) {
        tl_identity_set_rank(&p->id, (int)rank, TL_RANK_CONTENT, "session_info.tags.rank");
    }
    if (tags != NULL && json_object_get(tags, "world_size") != NULL &&
        tag_int(p, tags, "world_size", 1, INT_MAX, &world) == 0) {
        p->id.world_size = (int)world;
        if (p->id.rank >= p->id.world_size)
            tl_profile_warn(p, "session_info.tags: rank %d is not below world_size %d", p->id.rank, p->id.world_size);
    }
}

/* Earliest timeline timestamp: the clock's zero when start_time is unusable. */
static double earliest_timestamp(const json_t *root)
{
    static const char *sections[] = { "gpu_metrics", "cpu_metrics" };
    double t0 = INFINITY;
    for (int s = 0; s < 2; s++) {
        const json_t *tl = json_object_get(json_object_get(root, sections[s]), "timeline");
        size_t i;
        const json_t *e;
        json_array_foreach(tl, i, e)
        {
            const json_t *v = json_object_get(e, "timestamp");
            double x = json_is_number(v) ? json_number_value(v) : NAN;
            if (x >= 0 && x * 1e9 < 9.2e18)
                t0 = fmin(t0, x);
        }
    }
    return t0;
}

/* Does any point of timeline have key > 0? (0 everywhere = never measured) */
static int any_positive(const json_t *timeline, const char *key)
{
    size_t i;
    const json_t *e;
    json_array_foreach(timeline, i, e)
    {
        const json_t *v = json_object_get(e, key);
        if (json_is_number(v) && json_number_value(v) > 0)
            return 1;
    }
    return 0;
}

/* A timeline point's time relative to the clock's zero; -1 (warned) if bad. */
static int point_time(tl_profile *p, const json_t *e, const char *path, double base, int64_t *ts)
{
    double t;
    if (tl_readers_number(p, e, path, "timestamp", 0, &t) != 0)
        return -1;
    double ns = (t - base) * 1e9;
    if (!(fabs(ns) <= (double)TL_TRACE_TS_MAX)) { /* base + ts stays inside an int64 */
        tl_profile_warn(p, "%s.timestamp: %g is not a time in seconds since the epoch", path, t);
        return -1;
    }
    *ts = llround(ns);
    return 0;
}

static void read_gpu_timeline(tl_profile *p, const json_t *root, double base)
{
    const json_t *gm = tl_readers_object(p, root, "", "gpu_metrics", TL_RD_OPTIONAL);
    const json_t *tl = tl_readers_array(p, gm, "gpu_metrics", "timeline", TL_RD_OPTIONAL);
    int has_total = any_positive(tl, "memory_total_mb");
    int has_temp = any_positive(tl, "temperature");
    int has_power = any_positive(tl, "power");
    double total_max = NAN;
    size_t i;
    const json_t *e;
    json_array_foreach(tl, i, e)
    {
        char path[160];
        int64_t ts;
        double used, total, util, temp, power;
        tl_readers_index(path, sizeof path, "gpu_metrics.timeline", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (point_time(p, e, path, base, &ts) != 0 || tl_readers_number(p, e, path, "memory_used_mb", 0, &used) != 0 ||
            tl_readers_number(p, e, path, "memory_total_mb", 0, &total) != 0 ||
            tl_readers_number(p, e, path, "utilization", 0, &util) != 0 ||
            tl_readers_number(p, e, path, "temperature", TL_RD_SIGNED, &temp) != 0 ||
            tl_readers_number(p, e, path, "power", 0, &power) != 0)
            continue;
        tl_gpu_sample s = {
            .ts_ns = ts,
            .device = 0,
            .mem_used = used * MIB,
            .mem_total = has_total ? total * MIB : NAN,
            .util_pct = util,
            .temperature_c = has_temp ? temp : NAN,
            .power_w = has_power ? power : NAN,
            .proc_used = NAN, /* a monitor's memory is device-wide */
        };
        /* NVML's used memory: device used, not allocator-allocated */
        tl_mem_point pt = { .ts_ns = ts, .device = 0, .allocated = NAN, .reserved = NAN, .used = s.mem_used };
        if (tl_profile_add_gpu_sample(p, &s) != 0 || tl_profile_add_mem(p, &pt) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        if (has_total && !(total * MIB <= total_max))
            total_max = total * MIB;
    }
    if (isfinite(total_max))
        tl_readers_add_device(p, 0, NULL, 0, total_max);
}

/* cpu_metrics.timeline: process-independent host figures (psutil's system
 * CPU percentage and used memory) as the counters "cpu_usage_pct" and
 * "host_memory_used" (bytes). */
static void read_cpu_timeline(tl_profile *p, const json_t *root, double base)
{
    const json_t *cm = tl_readers_object(p, root, "", "cpu_metrics", TL_RD_OPTIONAL);
    const json_t *tl = tl_readers_array(p, cm, "cpu_metrics", "timeline", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    json_array_foreach(tl, i, e)
    {
        char path[160];
        int64_t ts;
        double cpu, mem;
        tl_readers_index(path, sizeof path, "cpu_metrics.timeline", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (point_time(p, e, path, base, &ts) != 0 || tl_readers_number(p, e, path, "cpu_usage", 0, &cpu) != 0 ||
            tl_readers_number(p, e, path, "memory_used_mb", 0, &mem) != 0)
            continue;
        uint64_t ticks = ts > 0 ? (uint64_t)ts : 0;
        tl_counter *c = tl_profile_counter(p, "cpu_usage_pct", strlen("cpu_usage_pct"));
        tl_counter *m = tl_profile_counter(p, "host_memory_used", strlen("host_memory_used"));
        if (c == NULL || m == NULL) {
            tl_profile_warn(p, "%s: out of memory", path);
            continue;
        }
        tl_value_stat_add(&c->v, cpu, ticks);
        tl_value_stat_add(&m->v, mem * MIB, ticks);
        if (tl_profile_add_point(p, TL_SERIES_SYS_CPU, -1, ts, cpu) != 0 ||
            tl_profile_add_point(p, TL_SERIES_SYS_USED, -1, ts, mem * MIB) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
    }
}

/* {name: {<total>, <count>, <avg>, <min>, <max>}} with times in `scale` ns:
 * stage_analysis.stages (s) and computation_analysis.layer_performance (ms). */
static void read_summaries(tl_profile *p, const json_t *parent, const char *path, const char *cat,
                           const char *const keys[5], double scale)
{
    const char *name;
    const json_t *e;
    json_object_foreach((json_t *)parent, name, e)
    {
        char ep[160];
        int64_t count, total, min, max;
        double avg;
        tl_readers_path(ep, sizeof ep, path, name);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", ep, tl_readers_type(e));
            continue;
        }
        if (tl_readers_ns(p, e, ep, keys[0], 0, scale, &total) != 0 ||
            tl_readers_int(p, e, ep, keys[1], 0, 1, INT64_MAX, &count) != 0 ||
            tl_readers_number(p, e, ep, keys[2], TL_RD_OPTIONAL, &avg) < 0 ||
            tl_readers_ns(p, e, ep, keys[3], 0, scale, &min) != 0 ||
            tl_readers_ns(p, e, ep, keys[4], 0, scale, &max) != 0)
            continue;
        double mean = isnan(avg) ? (double)total / (double)count : avg * scale;
        tl_readers_summary_stat(p, ep, cat, name, strlen(name), (uint64_t)count, total, min, max, mean, NAN, NAN, NAN);
    }
}

/* diffusion_analysis.steps[] / block_analysis.blocks[]: one record per step
 * or block with its computation_time_ms, so these statistics are built from
 * the values themselves (median, p95 and samples for compare included), not
 * from the analysis' summary figures. The block's memory_usage_mb (its peak)
 * becomes the counter "block_memory_used" (bytes). */
static void read_records(tl_profile *p, const json_t *root, const char *section, const char *list, const char *cat,
                         const char *name)
{
    const json_t *sec = tl_readers_object(p, root, "", section, TL_RD_OPTIONAL);
    char lp[96];
    tl_readers_path(lp, sizeof lp, section, list);
    const json_t *arr = tl_readers_array(p, sec, section, list, json_object_size(sec) ? 0 : TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    int blocks = strcmp(cat, "block") == 0;
    json_array_foreach(arr, i, e)
    {
        char path[160];
        int64_t ns;
        double mem = NAN;
        tl_readers_index(path, sizeof path, lp, i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        double size = NAN;
        if (tl_readers_ns(p, e, path, "computation_time_ms", 0, 1e6, &ns) != 0 ||
            (blocks && tl_readers_number(p, e, path, "memory_usage_mb", TL_RD_OPTIONAL | TL_RD_NULLABLE, &mem) < 0) ||
            (blocks && tl_readers_number(p, e, path, "block_size", TL_RD_OPTIONAL | TL_RD_NULLABLE, &size) < 0))
            continue;
        /* the blocks in order: frames, time and memory of each (diffusion metrics) */
        if (blocks) {
            tl_diff_block b = { ns, size, isnan(mem) ? NAN : mem * MIB, NAN };
            if (tl_profile_add_block(p, &b) != 0)
                tl_profile_warn(p, "%s: out of memory", path);
        }
        if (!tl_readers_names_left(p) || tl_profile_add_duration(p, cat, strlen(cat), name, strlen(name), ns) != 0)
            break;
        if (!isnan(mem)) {
            tl_counter *c = tl_profile_counter(p, "block_memory_used", strlen("block_memory_used"));
            if (c != NULL)
                tl_value_stat_add(&c->v, mem * MIB, i);
        }
    }
}

/* events[]: the custom events (add_event: {name, timestamp, data}), counted
 * as instants and kept with their data as text for the report's table and
 * timeline markers. diffusion_step and block_computation events are the
 * records diffusion_analysis and block_analysis are made of: they are kept
 * as events too (their times mark the blocks on the timeline). */
static void read_events(tl_profile *p, const json_t *root, double base)
{
    const json_t *events = tl_readers_array(p, root, "", "events", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    p->events += json_array_size(events);
    p->by_phase['i'] += json_array_size(events);
    json_array_foreach(events, i, e)
    {
        char path[160];
        const char *name;
        size_t name_len;
        int64_t ts = INT64_MIN;
        tl_readers_index(path, sizeof path, "events", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0)
            continue;
        if (json_object_get(e, "timestamp") != NULL && point_time(p, e, path, base, &ts) != 0)
            continue;
        char *data = tl_readers_text(json_object_get(e, "data"));
        if (data == NULL || tl_profile_add_event(p, ts, name, name_len, data, strlen(data)) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        free(data);
    }
}

/* The models' parameter counts (Inferix's model_analysis, made from its
 * record_model_parameters events: models{name: {parameters_count,
 * model_type}}) as the tags "model_parameters.NAME" and "model_type.NAME",
 * the convention a libtally program follows with tally_tag() (docs/inputs.md):
 * the run's description shows them (tl_models_sentence). */
static void read_models(tl_profile *p, const json_t *root)
{
    const json_t *ma = tl_readers_object(p, root, "", "model_analysis", TL_RD_OPTIONAL | TL_RD_NULLABLE);
    const json_t *models = tl_readers_object(p, ma, "model_analysis", "models", TL_RD_OPTIONAL | TL_RD_NULLABLE);
    const char *name;
    const json_t *m;
    json_object_foreach((json_t *)models, name, m)
    {
        char path[200], key[300], text[32];
        snprintf(path, sizeof path, "model_analysis.models.%.100s", name);
        int64_t count;
        const char *type;
        size_t type_len;
        if (!json_is_object(m)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(m));
            continue;
        }
        if (tl_readers_int(p, m, path, "parameters_count", 0, 0, INT64_MAX, &count) == 0) {
            int k = snprintf(key, sizeof key, "model_parameters.%s", name);
            int t = snprintf(text, sizeof text, "%lld", (long long)count);
            if (k > 0 && (size_t)k < sizeof key && tl_profile_add_tag(p, key, (size_t)k, text, (size_t)t) != 0)
                tl_profile_warn(p, "%s: out of memory", path);
        }
        if (tl_readers_string(p, m, path, "model_type", TL_RD_OPTIONAL | TL_RD_NULLABLE, &type, &type_len) == 0) {
            int k = snprintf(key, sizeof key, "model_type.%s", name);
            if (k > 0 && (size_t)k < sizeof key && tl_profile_add_tag(p, key, (size_t)k, type, type_len) != 0)
                tl_profile_warn(p, "%s: out of memory", path);
        }
    }
}

int tl_read_inferix_json(tl_profile *p, const json_t *root)
{
    static const char *const stage_keys[5] = { "total_time", "call_count", "avg_time", "min_time", "max_time" };
    static const char *const layer_keys[5] = { "total_time_ms", "call_count", "avg_time_ms", "min_time_ms",
                                               "max_time_ms" };
    double base = NAN;

    if (tl_readers_expect(p, root, TL_FMT_INFERIX, "an Inferix profiling report") != 0)
        return -1;
    read_session(p, root, &base);
    if (isnan(base)) {
        base = earliest_timestamp(root);
        if (isfinite(base))
            p->base_time_ns = llround(base * 1e9);
        else
            base = 0;
    }
    read_gpu_timeline(p, root, base);
    read_cpu_timeline(p, root, base);

    const json_t *sa = tl_readers_object(p, root, "", "stage_analysis", TL_RD_OPTIONAL);
    const json_t *stages =
        tl_readers_object(p, sa, "stage_analysis", "stages", json_object_size(sa) ? 0 : TL_RD_OPTIONAL);
    read_summaries(p, stages, "stage_analysis.stages", "stage", stage_keys, 1e9);
    const json_t *ca = tl_readers_object(p, root, "", "computation_analysis", TL_RD_OPTIONAL);
    const json_t *layers = tl_readers_object(p, ca, "computation_analysis", "layer_performance", TL_RD_OPTIONAL);
    read_summaries(p, layers, "computation_analysis.layer_performance", "layer", layer_keys, 1e6);
    read_records(p, root, "diffusion_analysis", "steps", "diffusion", "diffusion_step");
    read_records(p, root, "block_analysis", "blocks", "block", "block_computation");
    read_models(p, root);

    read_events(p, root, base);
    tl_profile_finish(p);
    return 0;
}

int tl_read_inferix(tl_profile *p, const char *buf, size_t len)
{
    json_t *root;
    if (tl_readers_load(p, buf, len, &root) != 0)
        return -1;
    int ret = tl_read_inferix_json(p, root);
    json_decref(root);
    return ret;
}
