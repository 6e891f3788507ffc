/*
 * report.c - the report document ({name}-rank{N}.report.json), the contract
 * that tally's ingest reads. Its shape is schema/tally-report.schema.json;
 * bump TALLY_REPORT_VERSION when a field changes meaning.
 *
 * All durations are integer or fractional nanoseconds with the unit in the
 * key ("_ns"); sizes are bytes ("_bytes"). Standard deviations are sample
 * standard deviations (n - 1), as pandas and HTA compute them.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static int by_total_desc(const void *a, const void *b, void *ctx)
{
    const tl_dur_stat *s = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (s[x].total != s[y].total)
        return s[x].total < s[y].total ? 1 : -1;
    return strcmp(tl_name(x), tl_name(y)); /* deterministic order for ties */
}

/* Ids of the names with data in stats, sorted by total time, descending. */
uint32_t *tl_sorted_ids(const tl_dur_stat *stats, uint32_t nnames, uint32_t *n)
{
    uint32_t *ids = malloc((nnames ? nnames : 1) * sizeof *ids);
    *n = 0;
    if (ids == NULL)
        return NULL;
    for (uint32_t i = 0; i < nnames; i++)
        if (stats[i].count > 0)
            ids[(*n)++] = i;
    qsort_r(ids, *n, sizeof *ids, by_total_desc, (void *)stats);
    return ids;
}

/* args_last/args_count (sections only, NULL when no section has metadata):
 * the metadata of a name's latest occurrence and how many had some. */
static void write_dur_stats(tl_json *j, const tl_dur_stat *stats, uint32_t nnames, double k, int iterations,
                            const char *const *args_last, const uint32_t *args_count)
{
    uint32_t n;
    uint32_t *ids = tl_sorted_ids(stats, nnames, &n);
    tl_json_array_begin(j);
    for (uint32_t i = 0; ids && i < n; i++) {
        const tl_dur_stat *s = &stats[ids[i]];
        double mean = s->mean * k;
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", tl_name(ids[i]));
        tl_json_kv_uint(j, "count", s->count);
        tl_json_kv_int(j, "total_ns", llround((double)s->total * k));
        tl_json_kv_double(j, "mean_ns", round(mean * 10) / 10);
        tl_json_kv_int(j, "min_ns", llround((double)s->min * k));
        tl_json_kv_int(j, "max_ns", llround((double)s->max * k));
        tl_json_kv_double(j, "std_ns", round(tl_dur_stat_std(s) * k * 10) / 10);
        tl_json_kv_double(j, "median_ns", round(tl_dur_stat_quantile(s, 0.5) * k));
        tl_json_kv_double(j, "p95_ns", round(tl_dur_stat_quantile(s, 0.95) * k));
        if (iterations)
            tl_json_kv_double(j, "it_per_s", mean > 0 ? 1e9 / mean : 0);
        tl_json_key(j, "samples_ns");
        tl_json_array_begin(j);
        for (uint32_t x = 0; x < s->nsamples; x++)
            tl_json_int(j, llround((double)s->samples[x] * k));
        tl_json_array_end(j);
        tl_json_kv_uint(j, "samples_dropped", s->samples_dropped);
        if (args_last != NULL && args_last[ids[i]] != NULL) {
            tl_json_key(j, "args");
            tl_json_raw(j, args_last[ids[i]]);
            tl_json_kv_uint(j, "args_count", args_count[ids[i]]);
        }
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    free(ids);
}

static void write_counters(tl_json *j, const tl_merged *m)
{
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < m->nnames; i++) {
        const tl_value_stat *c = &m->counters[i];
        if (c->count == 0)
            continue;
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", tl_name(i));
        tl_json_kv_uint(j, "count", c->count);
        tl_json_kv_double(j, "sum", c->sum);
        tl_json_kv_double(j, "mean", c->mean);
        tl_json_kv_double(j, "min", c->min);
        tl_json_kv_double(j, "max", c->max);
        tl_json_kv_double(j, "std", tl_value_stat_std(c));
        tl_json_kv_double(j, "last", c->last);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static int64_t ns_since_start(uint64_t ticks, const tl_merged *m)
{
    return llround(tl_clock_ticks_to_ns_since_start(ticks, m->ns_per_tick));
}

void tl_write_gpu(tl_json *j, const tl_gpu_reading *g, int with_name)
{
    tl_json_object_begin(j);
    tl_json_kv_int(j, "index", g->index);
    if (with_name)
        tl_json_kv_string(j, "name", g->name);
    /* null: NVML's memory figures were impossible (used > total) */
    tl_json_key(j, "used_bytes");
    if (g->has_mem)
        tl_json_double(j, g->mem_used);
    else
        tl_json_null(j);
    tl_json_key(j, "total_bytes");
    if (g->has_mem)
        tl_json_double(j, g->mem_total);
    else
        tl_json_null(j);
    /* this process's own share of used_bytes (NVML's per-process accounting) */
    if (g->has_proc)
        tl_json_kv_double(j, "process_used_bytes", g->proc_used);
    if (g->has_util) {
        tl_json_kv_double(j, "utilization_pct", g->util_gpu);
        tl_json_kv_double(j, "memory_utilization_pct", g->util_mem);
    }
    if (g->has_temp)
        tl_json_kv_double(j, "temperature_c", g->temperature_c);
    if (g->has_power)
        tl_json_kv_double(j, "power_w", g->power_w);
    if (g->has_limit)
        tl_json_kv_double(j, "power_limit_w", g->power_limit_w);
    if (g->has_throttle)
        tl_json_kv_uint(j, "throttle_reasons", g->throttle);
    if (g->has_clocks) {
        tl_json_kv_double(j, "sm_clock_mhz", g->sm_clock);
        tl_json_kv_double(j, "memory_clock_mhz", g->mem_clock);
    }
    if (g->has_base)
        tl_json_kv_double(j, "base_sm_clock_mhz", g->base_sm_clock);
    tl_json_object_end(j);
}

static void write_snapshots(tl_json *j, const tl_merged *m)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < tl_g.nsnapshots; i++) {
        const tl_snapshot *s = &tl_g.snapshots[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "label", s->label);
        tl_json_kv_int(j, "time_ns", ns_since_start(s->ticks, m));
        tl_json_kv_int(j, "tid", s->tid);
        tl_json_kv_double(j, "rss_bytes", s->mem.rss);
        tl_json_kv_double(j, "peak_rss_bytes", s->mem.peak_rss);
        tl_json_kv_double(j, "system_total_bytes", s->mem.sys_total);
        tl_json_kv_double(j, "system_available_bytes", s->mem.sys_available);
        tl_json_key(j, "providers");
        tl_json_object_begin(j);
        for (int r = 0; r < s->mem.nreadings; r++)
            tl_json_kv_double(j, s->mem.readings[r].key, s->mem.readings[r].value);
        tl_json_object_end(j);
        tl_json_key(j, "gpus");
        tl_json_array_begin(j);
        for (int g = 0; g < s->mem.ngpus; g++)
            tl_write_gpu(j, &s->mem.gpus[g], 0);
        tl_json_array_end(j);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

static void write_events(tl_json *j, const tl_merged *m)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < tl_g.ninstants; i++) {
        const tl_instant *e = &tl_g.instants[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", e->name);
        tl_json_kv_int(j, "time_ns", ns_since_start(e->ticks, m));
        tl_json_kv_int(j, "tid", e->tid);
        tl_json_key(j, "args");
        tl_json_raw(j, e->args);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}

/* key: text, or null when text is "" (not set) */
static void kv_text_or_null(tl_json *j, const char *key, const char *text)
{
    tl_json_key(j, key);
    if (text[0])
        tl_json_string(j, text);
    else
        tl_json_null(j);
}

static void write_sampler(tl_json *j, const tl_merged *m)
{
    tl_sample_point *pts;
    uint64_t dropped;
    size_t n = tl_sampler_points(&pts, &dropped);
    if (tl_g.sampler.gpu_ms <= 0 && tl_g.sampler.host_ms <= 0 && n == 0) {
        tl_json_null(j);
        return;
    }
    const tl_sampler_config *sc = &tl_g.sampler;
    tl_sampler_info info;
    tl_sampler_info_get(&info);
    tl_json_object_begin(j);
    /* the host part's period (the one period of older reports), else the GPU part's */
    tl_json_kv_int(j, "interval_ms", sc->host_ms > 0 ? sc->host_ms : sc->gpu_ms > 0 ? sc->gpu_ms : 1);
    tl_json_kv_int(j, "gpu_interval_ms", sc->gpu_ms);
    tl_json_kv_int(j, "host_interval_ms", sc->host_ms);
    tl_json_kv_string(j, "readings", tl_g.sample_text);
    kv_text_or_null(j, "gpus", tl_g.gpus_text);
    if (info.gpu_status[0])
        tl_json_kv_string(j, "gpu_status", info.gpu_status);
    if (info.disk_status[0])
        tl_json_kv_string(j, "disk_status", info.disk_status);
    if (sc->what & TL_SAMPLE_DISK) {
        tl_json_key(j, "disk_devices");
        tl_json_array_begin(j);
        for (int d = 0; d < info.ndevices; d++)
            tl_json_string(j, info.devices[d]);
        tl_json_array_end(j);
        if (info.device_status[0])
            tl_json_kv_string(j, "device_status", info.device_status);
    }
    tl_json_kv_uint(j, "points_dropped", dropped);
    tl_json_kv_int(j, "points_budget", info.budget);
    tl_json_kv_uint(j, "points_decimated", info.decimated);
    tl_json_kv_int(j, "stride", info.stride);
    tl_json_key(j, "series");
    tl_json_array_begin(j);
    for (size_t i = 0; i < n; i++) {
        const tl_sample_point *p = &pts[i];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "time_ns", ns_since_start(p->ticks, m));
        if (p->has & TL_SAMPLE_CPU)
            tl_json_kv_double(j, "cpu_pct", round(p->cpu_pct * 100) / 100);
        if (p->has & TL_SAMPLE_MEMORY) {
            tl_json_kv_double(j, "rss_bytes", p->rss);
            tl_json_kv_double(j, "system_available_bytes", p->sys_available);
        }
        if (p->has & TL_SAMPLE_LOAD)
            tl_json_kv_double(j, "load1", p->load1);
        if (p->has & TL_SAMPLE_DISK) {
            tl_json_kv_double(j, "disk_read_bytes_per_s", round(p->disk_read_bps));
            tl_json_kv_double(j, "disk_write_bytes_per_s", round(p->disk_write_bps));
        }
        if (p->has_device) {
            tl_json_kv_double(j, "device_read_bytes_per_s", round(p->dev_read_bps));
            tl_json_kv_double(j, "device_write_bytes_per_s", round(p->dev_write_bps));
        }
        if (p->has & TL_SAMPLE_GPU) {
            tl_json_key(j, "gpus");
            tl_json_array_begin(j);
            for (int g = 0; g < p->ngpus; g++)
                tl_write_gpu(j, &p->gpus[g], 0);
            tl_json_array_end(j);
        }
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
    free(pts);
}

/* The GPUs of the report's system block, read before tl_g.lock is taken:
 * NVML may take up to TL_NVML_WAIT_MS, and recording threads need the lock. */
typedef struct system_gpus {
    tl_gpu_reading gpus[TL_MAX_GPUS];
    int n;
    char status[256];
} system_gpus;

static void write_system(tl_json *j, const system_gpus *sg)
{
    char host[256] = "";
    struct utsname u;
    double total, avail;
    gethostname(host, sizeof host - 1);
    tl_memory_system(&total, &avail);
    tl_json_object_begin(j);
    tl_json_kv_string(j, "hostname", host);
    if (uname(&u) == 0) {
        char os[400];
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
        tl_json_kv_string(j, "os", os);
    }
    tl_json_kv_int(j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
    tl_json_kv_double(j, "memory_bytes", total);
    tl_json_kv_string(j, "nvml", sg->status);
    tl_json_key(j, "gpus");
    tl_json_array_begin(j);
    for (int i = 0; i < sg->n; i++)
        tl_write_gpu(j, &sg->gpus[i], 1);
    tl_json_array_end(j);
    tl_json_object_end(j);
}

int tl_report_write(tl_json *j, const tl_merged *m)
{
    char report_path[1600], trace_path[1600];
    static system_gpus sys; /* large; write_lock is held */
    tl_output_paths(report_path, sizeof report_path, trace_path, sizeof trace_path);
    /* first: the status says how it went; pins only at a flush, never in a
     * shutdown (which may be dlclose's own) nor on the sampler thread
     * (TALLY_FLUSH_S: a dlclose may be joining it) */
    sys.n = tl_nvml_read(sys.gpus, TL_MAX_GPUS, atomic_load(&tl_g.state) == TL_RUNNING && !tl_on_sampler_thread);
    tl_nvml_status(sys.status, sizeof sys.status);
    pthread_mutex_lock(&tl_g.lock);
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-report");
    tl_json_kv_int(j, "version", TALLY_REPORT_VERSION);
    tl_json_key(j, "producer");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "name", "libtally");
    tl_json_kv_string(j, "version", TALLY_VERSION_STRING);
    tl_json_object_end(j);
    tl_json_kv_string(j, "name", tl_g.name);
    tl_json_kv_int(j, "rank", tl_g.rank.rank);
    tl_json_key(j, "world_size");
    if (tl_g.rank.world_size > 0)
        tl_json_int(j, tl_g.rank.world_size);
    else
        tl_json_null(j);
    tl_json_kv_string(j, "rank_source", tl_g.rank.source);
    tl_json_kv_int(j, "pid", tl_g.pid);
    tl_json_kv_bool(j, "fork_child", tl_g.is_fork_child);
    tl_json_kv_int(j, "start_time_unix_ns", tl_g.start_realtime_ns);
    tl_json_kv_int(j, "duration_ns", ns_since_start(tl_now(), m));
    tl_json_key(j, "clock");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "source", tl_clock_source());
    tl_json_kv_double(j, "ns_per_tick", m->ns_per_tick);
    tl_json_object_end(j);

    tl_json_key(j, "tags");
    tl_json_object_begin(j);
    for (int i = 0; i < tl_g.ntags; i++)
        tl_json_kv_string(j, tl_g.tags[i].key, tl_g.tags[i].value);
    tl_json_object_end(j);

    tl_json_key(j, "config");
    tl_json_object_begin(j);
    tl_json_kv_bool(j, "trace", tl_g.trace);
    tl_json_kv_bool(j, "trace_gzip", tl_g.trace_gzip);
    tl_json_kv_int(j, "max_events", tl_g.max_events);
    tl_json_kv_int(j, "max_samples", tl_g.max_samples);
    tl_json_kv_int(j, "sample_ms", tl_g.sample_ms);
    tl_json_key(j, "schedule");
    if (tl_g.schedule.set)
        tl_json_string(j, tl_g.schedule_text);
    else
        tl_json_null(j);
    tl_json_kv_bool(j, "summary", tl_g.summary);
    tl_json_kv_bool(j, "signals", tl_g.signals);
    tl_json_kv_int(j, "sample_gpu_ms", tl_g.sampler.gpu_ms);
    tl_json_kv_int(j, "sample_cpu_ms", tl_g.sampler.host_ms);
    tl_json_kv_string(j, "sample", tl_g.sample_text);
    kv_text_or_null(j, "gpus", tl_g.gpus_text);
    tl_json_kv_int(j, "sample_points", tl_g.sampler.budget);
    tl_json_kv_int(j, "flush_s", tl_g.sampler.flush_s);
    kv_text_or_null(j, "preset", tl_g.preset);
    tl_json_object_end(j);

    tl_json_kv_int(j, "steps", atomic_load(&tl_g.steps));
    tl_json_key(j, "schedule");
    if (tl_g.schedule.set) {
        tl_json_object_begin(j);
        tl_json_kv_int(j, "wait", tl_g.schedule.wait);
        tl_json_kv_int(j, "warmup", tl_g.schedule.warmup);
        tl_json_kv_int(j, "active", tl_g.schedule.active);
        tl_json_kv_int(j, "repeat", tl_g.schedule.repeat);
        tl_json_kv_int(j, "recorded_steps", atomic_load(&tl_g.recorded_steps));
        tl_json_object_end(j);
    } else {
        tl_json_null(j);
    }

    const char **args_last;
    uint32_t *args_count;
    (void)tl_sargs_by_name(m->nnames, &args_last, &args_count); /* out of memory: section_args has them */
    tl_json_key(j, "sections");
    write_dur_stats(j, m->stats[TL_SECTION], m->nnames, m->ns_per_tick, 0, args_last, args_count);
    free(args_last);
    free(args_count);
    tl_json_key(j, "iterations");
    write_dur_stats(j, m->stats[TL_ITERATION], m->nnames, m->ns_per_tick, 1, NULL, NULL);
    tl_json_key(j, "counters");
    write_counters(j, m);
    tl_rates_write_report(j, m);
    tl_json_key(j, "memory_snapshots");
    write_snapshots(j, m);
    tl_json_key(j, "events");
    write_events(j, m);
    tl_json_kv_uint(j, "events_dropped", tl_g.instants_dropped);
    tl_blocks_write_report(j, m->ns_per_tick);
    tl_sargs_write_report(j, m->ns_per_tick);
    tl_json_key(j, "sampler");
    write_sampler(j, m);

    tl_json_key(j, "trace");
    tl_json_object_begin(j);
    tl_json_kv_bool(j, "enabled", tl_g.trace);
    tl_json_key(j, "path");
    if (tl_g.trace && !tl_g.trace_lost[0])
        tl_json_string(j, trace_path);
    else
        tl_json_null(j);
    if (tl_g.trace && tl_g.trace_lost[0])
        tl_json_kv_string(j, "lost", tl_g.trace_lost); /* the report is written without it */
    tl_json_kv_uint(j, "events_recorded", m->events);
    tl_json_kv_uint(j, "events_dropped", m->dropped);
    tl_json_kv_int(j, "max_events", tl_g.max_events);
    tl_json_object_end(j);

    tl_json_key(j, "problems");
    tl_json_object_begin(j);
    tl_json_kv_uint(j, "unmatched_ends", m->unmatched_ends);
    tl_json_kv_uint(j, "unclosed", m->unclosed);
    tl_json_kv_uint(j, "names_overflowed", tl_intern_overflowed());
    tl_json_kv_uint(j, "depth_overflow", m->depth_overflowed);
    tl_json_kv_uint(j, "rank_rejected", tl_g.rank_rejected);
    tl_json_kv_uint(j, "threads_skipped", m->threads_skipped);
    tl_json_kv_uint(j, "nvml_values_rejected", tl_nvml_rejected());
    tl_json_object_end(j);

    tl_json_kv_int(j, "threads", m->nthreads);
    tl_json_key(j, "system");
    write_system(j, &sys);
    tl_json_object_end(j);
    pthread_mutex_unlock(&tl_g.lock);
    tl_json_write(j, "\n", 1);
    return 0;
}
