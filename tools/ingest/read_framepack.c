/*
 * read_framepack.c - FramePack's profiling_report.json, as written by
 * diffusers_helper/profiling.py (export_profiling_report):
 *
 *   { "timestamp": <export time, s since epoch>,
 *     "timing_stats": { "<name>": {count, total, mean, min, max, last} },   seconds
 *     "memory_snapshots": [ {label, timestamp, allocated_mb, reserved_mb, max_allocated_mb} ],
 *     "iteration_stats": {count, total, mean, min, max, median} or {} }     seconds
 *
 * The "_mb" values are torch byte counts / 1024**2, so they are MiB. Times in
 * the profile are relative to the earliest timestamp of the report, which
 * becomes base_time_ns. The file says nothing about the rank: it stays -1 and
 * the caller finds it from the path.
 */
#include "report_readers.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MIB 1048576.0

/* A wall-clock time in seconds since the epoch that fits int64 ns. */
static int epoch_seconds(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, double *t)
{
    int rc = tl_readers_number(p, obj, path, key, flags, t);
    if (rc == 0 && !(*t * 1e9 < 9.2e18)) {
        char full[256];
        tl_profile_warn(p, "%s: %g is not a time in seconds since the epoch",
                        tl_readers_path(full, sizeof full, path, key), *t);
        *t = NAN;
        return -1;
    }
    return rc;
}

/* timing_stats: one "section" statistic per name, from its summary numbers
 * ("last" has nowhere to go in a statistic and is not read). */
static void read_timing_stats(tl_profile *p, const json_t *root)
{
    const json_t *ts = tl_readers_object(p, root, "", "timing_stats", TL_RD_OPTIONAL);
    const char *name;
    const json_t *e;
    json_object_foreach((json_t *)ts, name, e)
    {
        char path[160];
        int64_t count, total, min, max;
        double mean;
        tl_readers_path(path, sizeof path, "timing_stats", name);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_int(p, e, path, "count", 0, 1, INT64_MAX, &count) != 0 ||
            tl_readers_ns(p, e, path, "total", 0, 1e9, &total) != 0 ||
            tl_readers_number(p, e, path, "mean", 0, &mean) != 0 ||
            tl_readers_ns(p, e, path, "min", 0, 1e9, &min) != 0 || tl_readers_ns(p, e, path, "max", 0, 1e9, &max) != 0)
            continue;
        tl_readers_summary_stat(p, path, "section", name, strlen(name), (uint64_t)count, total, min, max, mean * 1e9,
                                NAN, NAN, NAN);
    }
}

/* iteration_stats: FramePack's IterationProfiler, one loop per report. Its
 * console summary calls the loop by the name it was created with
 * ("diffusion_step" in demo_gradio.py), but the JSON does not carry that
 * name, so the statistic is named "iteration". An empty object means no
 * iteration was recorded (demo_gradio.py never calls start/end_iteration). */
static void read_iteration_stats(tl_profile *p, const json_t *root)
{
    const json_t *it = tl_readers_object(p, root, "", "iteration_stats", TL_RD_OPTIONAL);
    const char *path = "iteration_stats";
    int64_t count, total, min, max, median;
    double mean;
    if (it == NULL || json_object_size(it) == 0)
        return;
    if (tl_readers_int(p, it, path, "count", 0, 1, INT64_MAX, &count) != 0 ||
        tl_readers_ns(p, it, path, "total", 0, 1e9, &total) != 0 ||
        tl_readers_number(p, it, path, "mean", 0, &mean) != 0 || tl_readers_ns(p, it, path, "min", 0, 1e9, &min) != 0 ||
        tl_readers_ns(p, it, path, "max", 0, 1e9, &max) != 0 ||
        tl_readers_ns(p, it, path, "median", 0, 1e9, &median) != 0)
        return;
    tl_readers_summary_stat(p, path, "iteration", "iteration", strlen("iteration"), (uint64_t)count, total, min, max,
                            mean * 1e9, (double)median, NAN, NAN);
}

/* memory_snapshots: device memory (torch's allocator) per label. */
static void read_snapshots(tl_profile *p, const json_t *root, double t0)
{
    const json_t *arr = tl_readers_array(p, root, "", "memory_snapshots", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e)
    {
        char path[160];
        const char *label;
        size_t label_len;
        double t, alloc, reserved, peak;
        tl_readers_index(path, sizeof path, "memory_snapshots", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "label", 0, &label, &label_len) != 0 ||
            epoch_seconds(p, e, path, "timestamp", 0, &t) != 0 ||
            tl_readers_number(p, e, path, "allocated_mb", 0, &alloc) != 0 ||
            tl_readers_number(p, e, path, "reserved_mb", 0, &reserved) != 0 ||
            tl_readers_number(p, e, path, "max_allocated_mb", 0, &peak) != 0)
            continue;
        tl_mem_snapshot s = {
            .label = tl_strtab_intern(&p->strs, label, label_len),
            .ts_ns = llround((t - t0) * 1e9),
            .allocated = alloc * MIB,
            .reserved = reserved * MIB,
            .peak_allocated = peak * MIB,
            .device_used = NAN,
            .rss = NAN,
            .peak_rss = NAN,
            .process_used = NAN,
        };
        if (s.label == UINT32_MAX || tl_profile_add_snapshot(p, &s) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
    }
}

int tl_read_framepack_json(tl_profile *p, const json_t *root)
{
    if (tl_readers_expect(p, root, TL_FMT_FRAMEPACK, "a FramePack profiling report") != 0)
        return -1;

    /* The clock: the earliest of the export time and the snapshot times
     * (checked quietly here; read_snapshots warns about bad ones). */
    double t0 = INFINITY, t1 = -INFINITY, t;
    if (epoch_seconds(p, root, "", "timestamp", TL_RD_OPTIONAL, &t) == 0) {
        t0 = t1 = t;
    }
    const json_t *snaps = json_object_get(root, "memory_snapshots");
    size_t i;
    const json_t *e;
    json_array_foreach(snaps, i, e)
    {
        const json_t *v = json_object_get(e, "timestamp");
        double x = json_is_number(v) ? json_number_value(v) : NAN;
        if (x >= 0 && x * 1e9 < 9.2e18) {
            t0 = fmin(t0, x);
            t1 = fmax(t1, x);
        }
    }
    if (isfinite(t0)) {
        p->base_time_ns = llround(t0 * 1e9);
        tl_profile_span(p, 0, llround((t1 - t0) * 1e9));
    } else {
        t0 = 0;
    }

    read_timing_stats(p, root);
    /* The clock spans the memory snapshots (and the export), not the run: a
     * report whose snapshots are 0.25 ms apart holds 40 s of stages. A span
     * shorter than its longest stage is no wall time: unknown, so nothing
     * reads "Wall time profiled 245 us -> 580 us, +136 %". */
    uint64_t longest = 0;
    for (uint32_t k = 0; k < p->nstats; k++)
        longest = p->stats[k].d.total > longest ? p->stats[k].d.total : longest;
    if (p->start_ns <= p->end_ns && (uint64_t)(p->end_ns - p->start_ns) < longest) {
        p->start_ns = INT64_MAX;
        p->end_ns = INT64_MIN;
    }
    read_snapshots(p, root, t0);
    read_iteration_stats(p, root);
    tl_profile_finish(p);
    return 0;
}

int tl_read_framepack(tl_profile *p, const char *buf, size_t len)
{
    json_t *root;
    if (tl_readers_load(p, buf, len, &root) != 0)
        return -1;
    int ret = tl_read_framepack_json(p, root);
    json_decref(root);
    return ret;
}

int tl_framepack_memlog_name(const char *path)
{
    const char *base = strrchr(path, '/');
    return strcmp(base != NULL ? base + 1 : path, "memory_log.json") == 0;
}

/* FramePack's memory_log.json (MemoryTracker.export_json): the array its
 * profiling_report.json holds as "memory_snapshots", read the same way, and
 * each snapshot also a point of the memory series (allocated, reserved). */
int tl_read_framepack_memlog(tl_profile *p, const char *doc, size_t len)
{
    json_error_t err;
    json_t *arr = json_loadb(doc, len, 0, &err), *root = NULL;
    int ret = -1;
    if (arr == NULL) {
        tl_profile_warn_at(p, err.position, "not JSON at byte %d (line %d): %s", err.position, err.line, err.text);
        return -1;
    }
    if (!json_is_array(arr) || (root = json_pack("{sO}", "memory_snapshots", arr)) == NULL) {
        tl_profile_warn(p, "a FramePack memory log is an array of snapshots, got %s", tl_readers_type(arr));
        goto out;
    }
    double t0 = INFINITY, t;
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e)
    {
        const json_t *v = json_object_get(e, "timestamp");
        if (json_is_number(v) && isfinite(t = json_number_value(v)) && t > 0 && t < 1e11 && t < t0)
            t0 = t;
    }
    if (!isfinite(t0)) {
        tl_profile_warn(p, "a FramePack memory log without a snapshot time: nothing to measure");
        goto out;
    }
    p->base_time_ns = llround(t0 * 1e9);
    read_snapshots(p, root, t0);
    for (size_t k = 0; k < p->nsnapshots; k++) {
        const tl_mem_snapshot *s = &p->snapshots[k];
        tl_mem_point pt = { s->ts_ns, 0, s->allocated, s->reserved, NAN };
        if (tl_profile_add_mem(p, &pt) != 0)
            goto out;
        tl_profile_span(p, s->ts_ns, s->ts_ns);
    }
    if (p->nsnapshots == 0) {
        tl_profile_warn(p, "a FramePack memory log without a readable snapshot: nothing to measure");
        goto out;
    }
    p->events = p->nsnapshots;
    p->id.format = TL_FMT_FRAMEPACK_MEMLOG;
    snprintf(p->format_detail, sizeof p->format_detail, "%zu snapshots", p->nsnapshots);
    ret = 0;
out:
    json_decref(root);
    json_decref(arr);
    return ret;
}
