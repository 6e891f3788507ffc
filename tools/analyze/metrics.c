/*
 * metrics.c - the registry of per-rank metrics (see metrics.h) and the
 * getters that read each one from a rank's result. The definitions of the
 * numbers are in docs/analysis.md ("Per-rank metrics").
 */
#include "metrics.h"

#include <math.h>
#include <string.h>

#include "aggregate.h"
#include "units.h"

static double step_mean(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->step_mean;
}
static double step_median(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->step_median;
}
static double compute_step(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->compute_per_step;
}
static double span(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->span_ns > 0 ? (double)r->span_ns : NAN;
}
static double kernel_time(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->gpu.present ? (double)r->gpu.kernel_time : NAN;
}

/* The GPU breakdown's shares (HTA's definitions): arg picks the part. */
enum { GPU_IDLE, GPU_COMPUTE, GPU_NON_COMPUTE, GPU_COMM, GPU_OVERLAP };
static double gpu_pct(const tl_rank_result *r, int arg)
{
    const tl_gpu_breakdown *g = &r->gpu;
    if (!g->present)
        return NAN;
    switch (arg) {
    case GPU_IDLE:
        return tl_pct(g->idle, g->kernel_time);
    case GPU_COMPUTE:
        return tl_pct(g->compute, g->kernel_time);
    case GPU_NON_COMPUTE:
        return tl_pct(g->non_compute, g->kernel_time);
    case GPU_COMM:
        return tl_pct(g->comm, g->kernel_time);
    default:
        return g->comm > 0 ? tl_pct(g->comm_compute, g->comm) : NAN; /* of communication time */
    }
}

enum { MEM_ALLOCATED, MEM_RESERVED, MEM_DEVICE_USED };
static double memory(const tl_rank_result *r, int arg)
{
    return arg == MEM_ALLOCATED ? r->peak_allocated : arg == MEM_RESERVED ? r->peak_reserved : r->peak_device_used;
}

/* Sampled telemetry: arg = series kind * 2 + (0 mean, 1 max). */
static double tel_series(const tl_rank_result *r, int arg)
{
    return arg % 2 ? r->tel.max[arg / 2] : r->tel.mean[arg / 2];
}
static double tel_energy(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->tel.energy_j;
}
static double tel_power(const tl_rank_result *r, int arg)
{
    (void)arg;
    return r->tel.power_w;
}

enum { DIFF_FPS, DIFF_BPS, DIFF_FIRST_BLOCK, DIFF_BLOCK_SIZE };
static double diffusion(const tl_rank_result *r, int arg)
{
    const tl_rank_diffusion *d = &r->diff;
    switch (arg) {
    case DIFF_FPS:
        return d->fps;
    case DIFF_BPS:
        return d->bps;
    case DIFF_FIRST_BLOCK:
        return d->first_block_ns >= 0 ? (double)d->first_block_ns : NAN;
    default:
        return d->block_size;
    }
}

#define LOWER TL_BETTER_LOWER
#define HIGHER TL_BETTER_HIGHER
#define NEITHER TL_BETTER_NEITHER
#define MEAN TL_ACROSS_MEAN
#define MAX TL_ACROSS_MAX
#define RANKS TL_SECTION_RANKS
#define TEL TL_SECTION_TELEMETRY
/* A sampled series: its mean (the typical rank's) and its max (the rank that
 * limits: the hottest, the fullest), each a row. A rate's mean
 * (tl_series_kind_rate) is bytes over time (telemetry.c). */
#define SERIES_ROWS(key, kind, label, suffix, unit, better_mean, better_max, mean_def)                                 \
    { "telemetry." key ".mean",                                                                                        \
      label " (mean" suffix ")",                                                                                       \
      unit,                                                                                                            \
      better_mean,                                                                                                     \
      MEAN,                                                                                                            \
      TEL,                                                                                                             \
      0,                                                                                                               \
      tel_series,                                                                                                      \
      (kind)*2,                                                                                                        \
      mean_def,                                                                                                        \
      0 },                                                                                                             \
    {                                                                                                                  \
        "telemetry." key ".max", label " (max" suffix ")", unit, better_max, MAX, TEL, 0, tel_series, (kind)*2 + 1,    \
            "highest sample of the series on the rank", 0                                                              \
    }
#define SERIES(key, kind, label, suffix, unit, better_mean, better_max)                                                \
    SERIES_ROWS(key, kind, label, suffix, unit, better_mean, better_max,                                               \
                "sample-weighted mean of the series over the rank's devices and sessions")
#define RATE_SERIES(key, kind, label, suffix, unit, better_mean, better_max)                                           \
    SERIES_ROWS(key, kind, label, suffix, unit, better_mean, better_max,                                               \
                "bytes over time: each sample weighted by the time since the one before (the first by the next "       \
                "interval), then sample-weighted over the rank's sessions")

/* Quantities that grow with the length of the profile (wall time, kernel
 * time, energy) are NEITHER: two profiles of different lengths differ in
 * them without anything getting better or worse. So is a temperature: a
 * change in degrees Celsius has no meaning as a ratio (the thermal rule
 * judges hot GPUs against a limit instead). */
static const tl_metric registry[] = {
    { "step_time_ns", "Step time (mean)", TL_UNIT_NS, LOWER, MEAN, RANKS, 1, step_mean, 0,
      "mean duration of the rank's steps (a loop summary's mean when the report keeps only that)", 0 },
    { "step_median_ns", "Step time (median)", TL_UNIT_NS, LOWER, MEAN, RANKS, 1, step_median, 0,
      "median duration of the rank's steps", 0 },
    { "compute_per_step_ns", "GPU compute per step", TL_UNIT_NS, LOWER, MEAN, RANKS, 0, compute_step, 0,
      "median over the steps of the compute-kernel time inside each step", 0 },
    { "span_ns", "Wall time profiled", TL_UNIT_NS, NEITHER, MAX, RANKS, 0, span, 0,
      "first to last event of each session, the sessions added up", 1 },
    { "gpu.kernel_time_ns", "GPU kernel time", TL_UNIT_NS, NEITHER, MEAN, RANKS, 0, kernel_time, 0,
      "(latest end) - (earliest start) of the GPU events of the window", 1 },
    { "gpu.idle_pct", "GPU idle", TL_UNIT_PCT, LOWER, MEAN, RANKS, 1, gpu_pct, GPU_IDLE,
      "kernel_time - busy, in % of kernel_time", 0 },
    { "gpu.compute_pct", "GPU compute", TL_UNIT_PCT, HIGHER, MEAN, RANKS, 1, gpu_pct, GPU_COMPUTE,
      "union of the compute kernels, in % of kernel_time", 0 },
    { "gpu.non_compute_pct", "GPU non-compute", TL_UNIT_PCT, LOWER, MEAN, RANKS, 1, gpu_pct, GPU_NON_COMPUTE,
      "busy - compute, in % of kernel_time", 0 },
    { "gpu.comm_pct", "GPU communication", TL_UNIT_PCT, LOWER, MEAN, RANKS, 0, gpu_pct, GPU_COMM,
      "union of the communication kernels, in % of kernel_time", 0 },
    { "gpu.comm_comp_overlap_pct", "Communication overlapped by compute", TL_UNIT_PCT, HIGHER, MEAN, RANKS, 1, gpu_pct,
      GPU_OVERLAP,
      "communication time with a compute kernel running, in % of communication time (ranks with communication)", 0 },
    { "memory.peak_allocated_bytes", "Peak memory allocated", TL_UNIT_BYTES, LOWER, MAX, RANKS, 1, memory,
      MEM_ALLOCATED, "highest allocator reading (allocated) of the rank's sessions", 0 },
    { "memory.peak_reserved_bytes", "Peak memory reserved", TL_UNIT_BYTES, LOWER, MAX, RANKS, 1, memory, MEM_RESERVED,
      "highest allocator reading (reserved) of the rank's sessions", 0 },
    { "memory.peak_device_used_bytes", "Peak device used (NVML)", TL_UNIT_BYTES, LOWER, MAX, RANKS, 1, memory,
      MEM_DEVICE_USED, "highest device memory in use (NVML or a monitor) of the rank's sessions", 0 },
    SERIES("gpu_util_pct", TL_SERIES_GPU_UTIL, "GPU utilization", "", TL_UNIT_PCT, HIGHER, NEITHER),
    SERIES("gpu_memory_used_bytes", TL_SERIES_GPU_MEM, "GPU memory used", "", TL_UNIT_BYTES, LOWER, LOWER),
    SERIES("gpu_temperature_c", TL_SERIES_GPU_TEMP, "GPU temperature",
           ", \xc2\xb0"
           "C",
           TL_UNIT_COUNT, NEITHER, NEITHER),
    SERIES("gpu_power_w", TL_SERIES_GPU_POWER, "GPU power", ", W", TL_UNIT_COUNT, NEITHER, NEITHER),
    SERIES("gpu_sm_clock_mhz", TL_SERIES_GPU_SM_CLOCK, "GPU SM clock", ", MHz", TL_UNIT_COUNT, NEITHER, NEITHER),
    SERIES("process_cpu_pct", TL_SERIES_CPU, "Process CPU", "", TL_UNIT_PCT, NEITHER, NEITHER),
    SERIES("system_cpu_pct", TL_SERIES_SYS_CPU, "System CPU", "", TL_UNIT_PCT, NEITHER, NEITHER),
    SERIES("rss_bytes", TL_SERIES_RSS, "Process RSS", "", TL_UNIT_BYTES, LOWER, LOWER),
    SERIES("system_memory_used_bytes", TL_SERIES_SYS_USED, "System memory used", "", TL_UNIT_BYTES, NEITHER, NEITHER),
    SERIES("system_memory_available_bytes", TL_SERIES_SYS_AVAIL, "System memory available", "", TL_UNIT_BYTES, NEITHER,
           NEITHER),
    SERIES("load1", TL_SERIES_LOAD, "Load (1 min)", "", TL_UNIT_COUNT, NEITHER, NEITHER),
    SERIES("gpu_memory_clock_mhz", TL_SERIES_GPU_MEM_CLOCK, "GPU memory clock", ", MHz", TL_UNIT_COUNT, NEITHER,
           NEITHER),
    /* a read rate that collapses (weights from a slow disk, a cold cache) is worse */
    RATE_SERIES("disk_read_bytes_per_s", TL_SERIES_DISK_READ, "Disk read per second", "", TL_UNIT_BYTES, HIGHER,
                HIGHER),
    RATE_SERIES("disk_write_bytes_per_s", TL_SERIES_DISK_WRITE, "Disk write per second", "", TL_UNIT_BYTES, NEITHER,
                NEITHER),
    /* the devices under the program's directories: every process's I/O to them */
    RATE_SERIES("device_read_bytes_per_s", TL_SERIES_DEVICE_READ, "Device read per second", "", TL_UNIT_BYTES, HIGHER,
                HIGHER),
    RATE_SERIES("device_write_bytes_per_s", TL_SERIES_DEVICE_WRITE, "Device write per second", "", TL_UNIT_BYTES,
                NEITHER, NEITHER),
    { "telemetry.energy_j", "GPU energy (J)", TL_UNIT_COUNT, NEITHER, MEAN, TEL, 0, tel_energy, 0,
      "power samples integrated over time, every GPU of every session", 1 },
    { "telemetry.power_w", "GPU mean draw (W)", TL_UNIT_COUNT, NEITHER, MEAN, TEL, 0, tel_power, 0,
      "the mean draws of the rank's GPUs added up (sessions averaged)", 0 },
    { "diffusion.fps", "Frames per second (blocks)", TL_UNIT_COUNT, HIGHER, MEAN, RANKS, 0, diffusion, DIFF_FPS,
      "frames of sized blocks / their computation time", 0 },
    { "diffusion.bps", "Blocks per second", TL_UNIT_COUNT, HIGHER, MEAN, RANKS, 0, diffusion, DIFF_BPS,
      "blocks / their computation time", 0 },
    { "diffusion.first_block_ns", "First-block delay", TL_UNIT_NS, LOWER, MEAN, RANKS, 0, diffusion, DIFF_FIRST_BLOCK,
      "computation time of the first block (Inferix's first-block delay), of the first session with blocks", 0 },
    { "diffusion.block_size", "Block size (frames)", TL_UNIT_COUNT, NEITHER, MEAN, RANKS, 0, diffusion, DIFF_BLOCK_SIZE,
      "frames / sized blocks", 0 },
};

const tl_metric *tl_metrics(size_t *n)
{
    *n = sizeof registry / sizeof registry[0];
    return registry;
}

const tl_metric *tl_metric_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

const char *tl_better_name(int better)
{
    return better == TL_BETTER_LOWER ? "lower" : better == TL_BETTER_HIGHER ? "higher" : "neither";
}

const char *tl_across_policy_name(int policy)
{
    return policy == TL_ACROSS_MAX ? "max" : "mean";
}

/* The aggregate keeps a row per entry in a fixed array. */
_Static_assert(sizeof registry / sizeof registry[0] <= TL_MAX_ACROSS, "TL_MAX_ACROSS below the registry's size");
