/*
 * profile.h - the per-rank profile: what ingest makes of one input file (one
 * session of one rank) and what the analysis reads.
 *
 * A profile is a compact summary, never the raw event list: interned names,
 * statistics per (category, name), the GPU events (kernels, copies, sets,
 * syncs with a stream) as intervals with their kernel type and launch time,
 * the ProfilerStep table, memory series and snapshots, counters, and what was
 * seen (events by phase and category). Who the input is -- name, format,
 * rank, its problems -- is its identity (tl_profile.id, identity.h). Its
 * memory grows with the number of distinct names and GPU events, not with
 * the number of CPU events.
 *
 * All times are int64 nanoseconds. Trace times are relative to the trace's
 * own zero; base_time_ns (Kineto's baseTimeNanoseconds, or a report's start
 * time) places them on the wall clock when known.
 */
#ifndef TALLY_PROFILE_H
#define TALLY_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "binner.h"
#include "identity.h"
#include "kernel_class.h"
#include "stats.h"
#include "strtab.h"

enum tl_format {
    TL_FMT_UNKNOWN = 0,
    TL_FMT_TALLY_REPORT,     /* libtally's report.json */
    TL_FMT_CHROME_TRACE,     /* Trace Event Format, no PyTorch markers */
    TL_FMT_KINETO,           /* PyTorch profiler trace */
    TL_FMT_TALLY_TRACE,      /* libtally's trace.json(.gz) */
    TL_FMT_FRAMEPACK,        /* FramePack profiling_report.json */
    TL_FMT_INFERIX,          /* Inferix per-rank profiling report */
    TL_FMT_NSYS,             /* Nsight Systems' SQLite export (read_nsys.h) */
    TL_FMT_MEM_TIMELINE,     /* torch.profiler's export_memory_timeline JSON (read_mem_timeline.h) */
    TL_FMT_STACKS,           /* torch.profiler's export_stacks text (read_stacks.h) */
    TL_FMT_FRAMEPACK_MEMLOG, /* FramePack's memory_log.json (report_readers.h) */
    TL_FMT_AGGREGATE,        /* tally's partial or merged aggregate: sessions already analyzed
                           * (never a session's format: after the formats partials write) */
};
const char *tl_format_name(int format);

/* Kinds of GPU events and how a kernel is classified: kernel_class.h. */

/* Normalized categories: current and legacy Kineto names map to one class. */
enum tl_cat_class {
    TL_CC_OTHER = 0,
    TL_CC_CPU_OP,          /* cpu_op, Operator */
    TL_CC_USER_ANNOTATION, /* user_annotation */
    TL_CC_GPU_ANNOTATION,  /* gpu_user_annotation */
    TL_CC_RUNTIME,         /* cuda_runtime, Runtime */
    TL_CC_DRIVER,          /* cuda_driver */
    TL_CC_KERNEL,          /* kernel, Kernel */
    TL_CC_MEMCPY,          /* gpu_memcpy, Memcpy */
    TL_CC_MEMSET,          /* gpu_memset, Memset */
    TL_CC_SYNC,            /* cuda_sync */
    TL_CC_PYTHON,          /* python_function */
    TL_CC_SECTION,         /* a report's or the collector's section / stage */
    TL_CC_ITERATION,       /* a report's or the collector's iteration loop */
    TL_CC_COUNT
};
int tl_cat_class_of(const char *cat, size_t len);
const char *tl_cat_class_name(int cc);

/* a + b for times in ns, saturating at INT64_MIN / INT64_MAX instead of
 * overflowing: times and sums come from inputs (traces, partials) that may
 * hold anything an int64 can. Every stage uses it. */
static inline int64_t tl_ns_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* The times a trace event may carry, in ns: beyond them it is malformed
 * (read_trace.c), which keeps every sum and difference of times inside an
 * int64. 3e18 ns since the epoch is the year 2065; 1e18 ns is 31 years. */
#define TL_TRACE_TS_MAX 3000000000000000000LL
#define TL_TRACE_DUR_MAX 1000000000000000000LL

/* ---- statistics per (category, name) ------------------------------------ */

typedef struct tl_name_stat {
    uint32_t cat;                     /* strtab id of the category as written */
    uint32_t name;                    /* strtab id */
    uint8_t cat_class;                /* tl_cat_class */
    int8_t kernel_type;               /* tl_kernel_type_of(name, cat), computed once; -1 not yet */
    uint8_t from_summary;             /* built from a report's summary numbers, not from events:
                          * d.m2/d.hist are empty; median/p95/std below if known */
    double median_ns, p95_ns, std_ns; /* from_summary only; NaN when unknown */
    tl_dur_stat d;                    /* durations in ns */
    /* Nesting (read_trace's per-thread stack; valid when the profile's
     * nesting is TL_NEST_DONE): inclusive time counting a name nested in
     * itself once, at its outermost occurrence, and self time (each
     * occurrence minus its children). */
    int64_t incl_ns, self_ns;
    uint32_t open;        /* occurrences on the stacks right now */
    uint8_t host_flags;   /* read_trace's note of what a host call is (0: not known yet) */
    uint8_t nest_cls;     /* the nesting kind its events were placed with, + 1 (0: none) */
    uint64_t thread_bits; /* the threads its nested events ran on: bit (thread index mod 64) */
    uint8_t nest_lost;    /* its kind's events came too far out of order: no self or inclusive time */
    uint8_t role;         /* read_trace's tl_host_role of its CPU events, + 1 (0: not known yet) */
} tl_name_stat;

/* Whether a profile's self and inclusive times are known. */
enum tl_nesting { TL_NEST_NONE = 0, TL_NEST_DONE, TL_NEST_BROKEN };

/* ---- GPU ---------------------------------------------------------------- */

typedef struct tl_gpu_stream {
    int64_t device, stream;
} tl_gpu_stream;

typedef struct tl_gpu_event {
    int64_t ts_ns, dur_ns;
    /* One word, two moments (32 bytes an event, issue 33): while a trace is
     * read, the correlation id of the runtime call that launched the event (-1
     * if none); tl_read_trace ends by replacing it with that call's ts
     * (kernel_ops.h), which every later stage reads. */
    union {
        int64_t correlation; /* while reading: -1 if none */
        int64_t launch_ns;   /* after: ts of the launching runtime call; INT64_MIN if unknown */
    };
    uint32_t name; /* strtab id */
    /* Packed into one word so an event stays 32 bytes: up to
     * TL_PROFILE_MAX_STREAMS streams, then the events of further streams are
     * counted (gpu_stream_dropped) and warned about, never mixed in. */
    uint32_t stream : 20;   /* index into tl_profile.streams */
    uint32_t type : 4;      /* tl_kernel_type */
    uint32_t cat_class : 8; /* tl_cat_class */
} tl_gpu_event;

/* A host call that blocks until the GPU is done (cudaMemcpy, cudaStreamSynchronize,
 * hipMemcpyWithStream, ...): the cause of GPU idle time when it covers it. */
typedef struct tl_host_call {
    int64_t ts_ns, dur_ns;
    uint32_t name; /* strtab id */
} tl_host_call;
#define TL_PROFILE_MAX_BLOCKING 100000 /* blocking calls kept (the rest are counted and said) */

/* The host's share of the per-step categories (docs/analysis.md, "Step time
 * by category"): the union of the CPU-side events of each role, which
 * analyze/session_analysis.c splits by step beside the GPU events. TensorBoard's
 * roles: runtime calls (cuda_runtime, cuda_driver), data loading (a name of
 * tl_is_data_loading) and CPU execution (operators, Python frames, the
 * collector's sections; annotations only label others). Events without a
 * known category are kept apart (PLAIN): CPU execution in a plain Chrome
 * trace, but not in a PyTorch trace, whose "Trace" event spans the whole
 * profile. */
enum tl_host_role { TL_ROLE_RUNTIME = 0, TL_ROLE_DATA, TL_ROLE_CPU, TL_ROLE_PLAIN, TL_ROLE_COUNT };
/* Disjoint ranges after tl_ranges_union; while reading, a range that starts
 * inside the last one extends it (events come nearly in start order), and a
 * full array is sorted and merged before it grows. */
typedef struct tl_ranges {
    int64_t (*v)[2]; /* [start, end) */
    size_t n, cap;
    int cut; /* TL_PROFILE_MAX_RANGES disjoint ranges were reached: later
                                * events of the role were not recorded */
} tl_ranges;
#define TL_PROFILE_MAX_RANGES (1u << 20) /* disjoint ranges per role (16 MB) */
/* Add [a, b) (b > a); 0, or -1 when out of memory. Beyond the cap it sets cut. */
int tl_ranges_add(tl_ranges *r, int64_t a, int64_t b);
/* Sort and merge: disjoint, in order. */
void tl_ranges_union(tl_ranges *r);
void tl_ranges_release(tl_ranges *r);

/* How a kernel (by name) was launched and by which operator (kernel_ops.h),
 * from a trace's kernel args and its runtime calls' correlation ids. */
typedef struct tl_kernel_launch {
    uint32_t name;             /* the kernel's name (strtab id) */
    int32_t grid[3], block[3]; /* of its first launch with them; -1 unknown */
    int32_t regs;              /* registers per thread; -1 unknown */
    int64_t smem;              /* shared memory per block, bytes; -1 unknown */
    double occ_sum, occ_w;     /* "est. achieved occupancy %" weighted by duration (occ_w: ns) */
    uint8_t varies;            /* launched with more than one grid or block */
    uint32_t op;               /* the operator that launched most of its time (strtab id); UINT32_MAX none */
    uint32_t ops;              /* operators that launched it */
    int64_t op_ns, linked_ns;  /* its time launched by op; its time with a known operator */
} tl_kernel_launch;
#define TL_PROFILE_MAX_KERNEL_LAUNCHES 100000 /* kernel names with launch details (the rest have none) */

/* One collective as the trace recorded it, for "who waits for whom"
 * (analyze/waits.c): a GPU communication kernel, or a CPU-side collective
 * range (gloo:*, nccl:*, mpi:*, c10d::*, record_param_comms, barrier), with
 * what its args say about it. Few per step, so every one is kept (up to
 * TL_PROFILE_MAX_COLLS; the rest are counted in colls_dropped). */
enum tl_coll_side {
    TL_COLL_GPU = 0, /* a communication kernel on a stream */
    TL_COLL_RUN,     /* a CPU range that runs the collective and blocks in it (gloo:*, mpi:*, ucc:*) */
    TL_COLL_ENQUEUE, /* a CPU range that enqueues it (nccl:*, c10d::*, record_param_comms) */
    TL_COLL_SIDES
};
typedef struct tl_prof_coll {
    int64_t ts_ns, dur_ns;
    int64_t seq;        /* Kineto's "Seq" (per process group); -1 unknown */
    int64_t nelems;     /* "In msg nelems", else the first "Input Dims" product; -1 unknown */
    uint32_t name;      /* strtab id */
    uint32_t group;     /* strtab id of "Process Group Name"; UINT32_MAX unknown */
    uint8_t side;       /* tl_coll_side */
    int8_t elem_bytes;  /* bytes of an element ("dtype", else the first "Input type"); -1 unknown */
    int32_t group_size; /* "Group size"; -1 unknown (the world size stands in: collbw.c) */
} tl_prof_coll;
#define TL_PROFILE_MAX_COLLS 200000
/* The side of a CPU range by its name: TL_COLL_RUN, TL_COLL_ENQUEUE, or -1
 * when it is not a collective (docs/analysis.md, "Waits"). */
int tl_coll_side_of_name(const char *name, size_t len);
/* The bytes of one element of a tensor type as a trace names it ("float",
 * "c10::BFloat16", "Long", "bf16"; case-insensitive), or -1 when the name is
 * not in the table (dtype.c). */
int tl_dtype_bytes(const char *name, size_t len);
/* The known companion file a name and the first bytes say an input is
 * (FramePack's memory_log.json: MemoryTracker's snapshots; timing_summary.txt;
 * a PyTorch memory snapshot pickle), as a static text, or NULL
 * (companions.c). b may be NULL: then only what the name alone tells. */
const char *tl_known_companion(const char *path, const unsigned char *b, size_t n);

/* GPU streams (device, stream) per profile at most (the width of
 * tl_gpu_event.stream). */
#define TL_PROFILE_MAX_STREAMS ((1u << 20) - 1)

/* ---- steps, memory, counters -------------------------------------------- */

typedef struct tl_step {
    int64_t number; /* N of ProfilerStep#N, or the iteration index */
    int64_t ts_ns, dur_ns;
} tl_step;

/* A point of a memory time series: Kineto [memory] instants, sampler points.
 * Three different things, never merged (docs/analysis.md): what the caching
 * allocator has handed out (allocated), what it holds from the device
 * (reserved), and what the system says is in use (used: NVML's device memory
 * used, for every process on the device; the process RSS for the host). */
typedef struct tl_mem_point {
    int64_t ts_ns;
    int64_t device;             /* -1 host */
    double allocated, reserved; /* bytes; NaN when not given */
    double used;                /* bytes; NaN when not given */
} tl_mem_point;

/* The device's memory by category over time (torch.profiler's
 * export_memory_timeline JSON, read_mem_timeline.h): at a time, the bytes of
 * each of PyTorch's categories, in the order of tl_mem_category_name. */
#define TL_MEM_CATEGORIES 8
/* At most this many points are kept per profile (and session): longer
 * timelines are downsampled keeping their first and last points and, of each
 * bucket between, the point with the highest total (so the peak is kept). */
#define TL_MEMCAT_POINTS 240
typedef struct tl_memcat_point {
    int64_t ts_ns; /* a profile's relative time; a session's absolute (like its snapshots) */
    int64_t bytes[TL_MEM_CATEGORIES];
} tl_memcat_point;
/* PyTorch's name of category c (0 .. TL_MEM_CATEGORIES - 1): PARAMETER,
 * OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL,
 * UNKNOWN (PyTorch's category None); NULL beyond. */
const char *tl_mem_category_name(int c);

/* A labelled memory snapshot from a report. NaN when a field is not given. */
typedef struct tl_mem_snapshot {
    uint32_t label;                             /* strtab id */
    int64_t ts_ns;                              /* INT64_MIN when unknown */
    double allocated, reserved, peak_allocated; /* device memory (allocator), bytes */
    double device_used;                         /* NVML's used memory of the fullest device, bytes: every process's */
    double rss, peak_rss;                       /* host memory, bytes */
    double process_used; /* the program's own device memory (NVML's per-process accounting), summed
                            * over its devices, bytes; never merged with device_used */
} tl_mem_snapshot;

/* Where a counter comes from: only the program's own counters are shown
 * (docs/analysis.md, "Events, tags, counters"); the readers' are series
 * that the telemetry shows already. */
enum tl_counter_source {
    TL_COUNTER_DERIVED = 0, /* made by a reader from a monitor's timeline (cpu_usage_pct, ...) */
    TL_COUNTER_USER,        /* libtally's tally_counter */
    TL_COUNTER_TRACE,       /* a Chrome trace's counter event ("ph": "C"), "name.key" */
    TL_COUNTER_RATE,        /* libtally's tally_counter_rate: hits / (hits + misses), one value from 0 to 1 */
};
/* "derived", "user", "trace", "rate"; NULL out of range. */
const char *tl_counter_source_name(int source);

typedef struct tl_counter {
    uint32_t name; /* strtab id (for C events: "name.key") */
    int source;    /* tl_counter_source */
    tl_value_stat v;
} tl_counter;

/* A GPU metrics sample from a report's monitor (Inferix, libtally's sampler). */
typedef struct tl_gpu_sample {
    int64_t ts_ns;
    int64_t device;
    double mem_used, mem_total, util_pct, temperature_c, power_w; /* NaN when unknown */
    double power_limit_w;                                         /* NVML's enforced power limit, W; 0 when unknown */
    uint64_t throttle; /* NVML's clocks event (throttle) reasons when has_throttle */
    int has_throttle;
    /* the program's own memory on the device (NVML's per-process accounting),
     * bytes; NaN unknown. mem_used is device-wide (every process's): the two
     * are different series, never merged (docs/analysis.md, "Memory") */
    double proc_used;
    /* NVML's SM and memory clocks and the SM's base clock (the default
     * applications clock), MHz; 0 when unknown (docs/collector.md) */
    double sm_clock_mhz, mem_clock_mhz, base_clock_mhz;
} tl_gpu_sample;

/* NVML's clocks event reasons (nvml.h, nvmlClocksEventReason*): the ones the
 * thermal and power-at-cap rules read. */
#define TL_THROTTLE_SW_POWER_CAP 0x4ull
#define TL_THROTTLE_HW_SLOWDOWN 0x8ull
#define TL_THROTTLE_SW_THERMAL 0x20ull
#define TL_THROTTLE_HW_THERMAL 0x40ull
#define TL_THROTTLE_HW_POWER_BRAKE 0x80ull
#define TL_THROTTLE_THERMAL (TL_THROTTLE_SW_THERMAL | TL_THROTTLE_HW_THERMAL)
#define TL_THROTTLE_POWER (TL_THROTTLE_SW_POWER_CAP | TL_THROTTLE_HW_POWER_BRAKE)

/* Telemetry series that are not GPU samples (those are tl_gpu_sample): one
 * reading of a named host metric at a time (docs/analysis.md, Telemetry). */
enum tl_series_kind {
    TL_SERIES_GPU_UTIL = 0, /* % (from tl_gpu_sample) */
    TL_SERIES_GPU_MEM,      /* device memory used, bytes (NVML / monitor; not the allocator's) */
    TL_SERIES_GPU_TEMP,     /* degrees C */
    TL_SERIES_GPU_POWER,    /* W */
    TL_SERIES_GPU_SM_CLOCK, /* MHz */
    TL_SERIES_CPU,          /* process CPU %, 100 = one core (libtally's sampler) */
    TL_SERIES_SYS_CPU,      /* system CPU % (Inferix's psutil.cpu_percent) */
    TL_SERIES_RSS,          /* process resident set, bytes */
    TL_SERIES_SYS_USED,     /* system memory used, bytes */
    TL_SERIES_SYS_AVAIL,    /* system memory available, bytes */
    TL_SERIES_LOAD,         /* 1-minute load average */
    /* appended (partials name kinds; a kind's place only orders the output) */
    TL_SERIES_GPU_MEM_CLOCK, /* MHz (from tl_gpu_sample) */
    TL_SERIES_DISK_READ,     /* process disk reads, bytes/s (/proc/self/io read_bytes; libtally's sampler) */
    TL_SERIES_DISK_WRITE,    /* process disk writes, bytes/s (write_bytes) */
    TL_SERIES_DEVICE_READ,   /* the block devices' reads, bytes/s (/proc/diskstats; libtally's sampler) */
    TL_SERIES_DEVICE_WRITE,  /* the block devices' writes, bytes/s */
    TL_SERIES_COUNT
};
/* The series' name in JSON and docs ("gpu_util_pct"), or NULL out of range. */
const char *tl_series_kind_name(int kind);
/* The kind of a name written by tl_series_kind_name, or -1. */
int tl_series_kind_of(const char *name);
/* A GPU series (one per device) rather than a host one. */
static inline int tl_series_kind_gpu(int kind)
{
    return (kind >= 0 && kind <= TL_SERIES_GPU_SM_CLOCK) || kind == TL_SERIES_GPU_MEM_CLOCK;
}
/* A rate: each point is bytes per second over the time since the point
 * before (libtally's sampler), so its mean is bytes over time, not the mean
 * of the points (telemetry.c). */
static inline int tl_series_kind_rate(int kind)
{
    return kind >= TL_SERIES_DISK_READ && kind <= TL_SERIES_DEVICE_WRITE;
}

typedef struct tl_series_point {
    int64_t ts_ns;
    int32_t device; /* GPU index; -1 host */
    int32_t kind;   /* tl_series_kind */
    double v;
} tl_series_point;

typedef struct tl_device_info {
    int64_t id;
    char name[64];
    double total_memory;  /* bytes; 0 when unknown */
    double power_limit_w; /* W; 0 when unknown */
} tl_device_info;

/* An event a report recorded at one moment (libtally's tally_event, Inferix's
 * custom events): shown as a marker and in a table, never analyzed. */
typedef struct tl_ievent {
    int64_t ts_ns;    /* on the profile's clock (base_time_ns is its zero); INT64_MIN unknown */
    uint32_t name;    /* strtab id */
    uint32_t payload; /* strtab id: its data as compact JSON, cut to TL_EVENT_PAYLOAD_MAX bytes */
} tl_ievent;
/* Events kept per profile (the rest are counted in ievents_dropped) and the
 * bytes of a payload kept (longer ones end in "..."). */
#define TL_PROFILE_MAX_IEVENTS 10000
#define TL_EVENT_PAYLOAD_MAX 160

/* A tag of the run (libtally's tally_tag, Inferix's session_info.tags). */
typedef struct tl_tag {
    uint32_t key, value; /* strtab ids; the value as text (a number or JSON as written) */
} tl_tag;
#define TL_PROFILE_MAX_TAGS 64 /* kept per profile; the rest are counted */
#define TL_TAG_VALUE_MAX 120   /* bytes of a value kept */

/* The host the collector ran on (libtally's "system"). */
typedef struct tl_host_info {
    char hostname[128];  /* "" unknown */
    char os[128];        /* "Linux 6.1.0 x86_64"; "" unknown */
    int cpus;            /* online CPUs; 0 unknown */
    double memory_bytes; /* NaN unknown */
} tl_host_info;

/* A block of a block-wise video diffusion run (Inferix's block_analysis.blocks[]). */
typedef struct tl_diff_block {
    int64_t dur_ns; /* its computation_time_ms */
    double frames;  /* its block_size (frames); NaN unknown */
    double memory;  /* its GPU memory, bytes (Inferix's memory_usage_mb; libtally's gpu_memory_bytes); NaN unknown */
    double rss;     /* the process RSS at its end, bytes (libtally); NaN unknown */
} tl_diff_block;
#define TL_PROFILE_MAX_BLOCKS 100000 /* kept per profile; more are counted in the statistics only */
/* One call of a CPU lane kept to be drawn by name: nesting.c keeps the
 * TL_LANE_TOP_EVENTS longest calls of each thread that start at most
 * TL_LANE_MAX_DEPTH levels deep in their kind's stack (nesting.h). */
#define TL_LANE_TOP_EVENTS 512
#define TL_LANE_MAX_DEPTH 8
typedef struct tl_lane_event {
    int64_t ts_ns, dur_ns;
    uint32_t name; /* strtab id */
    uint8_t depth; /* 0: outermost of its kind */
    uint8_t kind;  /* tl_calltree_kind (calltree.h) */
} tl_lane_event;

/* A CPU thread's activity over time (for timelines of traces without GPU
 * events): the busy time of its complete events in self-widening bins, and
 * its longest calls (a min-heap by duration while reading). */
#define TL_PROFILE_MAX_LANES 64
typedef struct tl_cpu_lane {
    int64_t pid, tid;
    char name[64]; /* from thread_name metadata, "" if none */
    uint64_t events;
    tl_binner bins;
    tl_lane_event *top; /* at most TL_LANE_TOP_EVENTS (allocated on first use) */
    uint32_t ntop;
    uint64_t top_offered; /* calls offered to top (the rest of the lane is in bins only) */
} tl_cpu_lane;

struct tl_calltree;

/* ---- the profile -------------------------------------------------------- */

typedef struct tl_profile {
    /* Who the input is (identity.h): the readers fill its path, format,
     * rank and world size from the content, and its problems; run.c
     * settles the rest over the whole run. Its problems are the profile's
     * warnings: the reason a skipped profile was skipped is the first. */
    tl_identity id;
    char format_detail[64]; /* e.g. "object form", "array form, unterminated" */

    int64_t base_time_ns; /* wall-clock time of ts 0; INT64_MIN when unknown */
    /* The process that recorded it, for run identity (two inputs of one rank
     * are sessions of one run only if one process could have written both,
     * on one host: host.hostname): a trace's pid is the pid of most of its
     * CPU-side events, a report's the pid it records; INT64_MIN when unknown. */
    int64_t pid;
    int64_t start_ns, end_ns; /* span of the events seen; start > end when none */

    tl_strtab strs;

    tl_name_stat *stats; /* per (category, name) */
    uint32_t nstats, stats_cap;
    uint32_t *stat_slots; /* hash (cat, name) -> index + 1 */
    uint32_t nstat_slots;

    tl_gpu_stream *streams;
    uint32_t nstreams, streams_cap;
    uint32_t *stream_slots; /* hash (device, stream) -> index + 1 */
    uint32_t nstream_slots;
    uint64_t gpu_stream_dropped; /* GPU events on streams beyond TL_PROFILE_MAX_STREAMS */
    int streams_warned;
    tl_gpu_event *gpu;
    size_t ngpu, gpu_cap;

    tl_step *steps;
    int steps_from_loop; /* the steps are a loop's iterations (read_trace.c), whole ones: none is cut short */
    size_t nsteps, steps_cap;
    tl_mem_point *mem;
    size_t nmem, mem_cap;
    tl_mem_snapshot *snapshots;
    size_t nsnapshots, snapshots_cap;
    tl_counter *counters;
    uint32_t ncounters, counters_cap;
    tl_gpu_sample *gpu_samples;
    size_t ngpu_samples, gpu_samples_cap;
    tl_series_point *points; /* host telemetry (tl_series_point) */
    size_t npoints, points_cap;
    tl_device_info *devices;
    uint32_t ndevices;
    tl_ievent *ievents; /* a report's events, in file order (at most TL_PROFILE_MAX_IEVENTS) */
    size_t nievents, ievents_cap;
    uint64_t ievents_dropped;
    tl_tag *tags; /* at most TL_PROFILE_MAX_TAGS */
    uint32_t ntags, tags_dropped;
    tl_host_info host;     /* libtally's system info (hostname "" when unknown) */
    tl_diff_block *blocks; /* video diffusion blocks, in order */
    size_t nblocks, blocks_cap;
    /* at most TL_PROFILE_MAX_LANES threads, each allocated when first seen
     * (found by pointer while reading): 8 KB of bins a lane, not 64 lanes'
     * 520 KB for each of 120,000 one-thread members of an archive */
    tl_cpu_lane *cpu_lanes[TL_PROFILE_MAX_LANES];
    uint32_t ncpu_lanes;
    tl_prof_coll *colls; /* collectives, in file order (at most TL_PROFILE_MAX_COLLS) */
    size_t ncolls, colls_cap;
    uint64_t colls_dropped;
    struct tl_shape_table *shapes; /* operators by input shape (shape_table.h); NULL without record_shapes */
    struct tl_mem_ops *memops;     /* device memory by operator (mem_ops.h); NULL without profile_memory */
    tl_memcat_point *memcats;      /* memory by category over time (export_memory_timeline), downsampled */
    size_t nmemcats;
    tl_ranges roles[TL_ROLE_COUNT]; /* the host's time by role (tl_host_role), for the per-step categories */
    tl_kernel_launch *klaunch;      /* per kernel name with launch details (kernel_ops.h) */
    size_t nklaunch, klaunch_cap;
    uint32_t *klaunch_of; /* strtab id -> index + 1 into klaunch (0: none) */
    size_t nklaunch_of;
    uint64_t kops_dropped;  /* operator ranges or launch calls past kernel_ops.h's caps */
    tl_host_call *blocking; /* blocking host calls, in file order */
    size_t nblocking, blocking_cap;
    uint64_t blocking_dropped;
    /* An accelerator's device events the GPU analysis does not read (MTIA's
     * mtia_ccp_events): how many, of the most frequent such category (run.c
     * says so in a note: the file is fine, the analysis does not cover it). */
    uint64_t unread_device_events;
    char unread_device_cat[48];
    uint64_t graph_launches; /* cudaGraphLaunch / hipGraphLaunch / graph replays seen */
    uint64_t graph_captures; /* graph captures and instantiations seen (their kernels did not run) */
    int nesting;             /* tl_nesting */
    char nest_lost[256];     /* when a kind of event lost its self time (nesting.h): what and why; "" none */
    /* The call tree of the nested CPU events (calltree.h; names are ids in
     * strs), built by nesting.c; NULL when nothing nests or the nesting broke. */
    struct tl_calltree *calltree;

    /* What was seen */
    uint64_t events;          /* events read (every phase) */
    uint64_t by_phase[128];   /* by the first byte of "ph" */
    uint64_t malformed;       /* events skipped as malformed */
    uint64_t malformed_times; /* of them, with a time beyond TL_TRACE_TS_MAX or TL_TRACE_DUR_MAX */
    uint64_t unknown_phase;   /* events with a phase the format does not define */
    tl_strtab cats;           /* categories seen, with counts in cat_counts */
    uint64_t *cat_counts;
    uint32_t cat_counts_cap;
    int truncated;    /* cut in the middle: read up to the last complete event */
    int unterminated; /* array form without its closing ']' (valid per the format) */
    uint64_t bytes;   /* decompressed bytes read */

    int skipped; /* not a profile: its first problem says why (TL_PROBLEM_SKIPPED) */
    /* Set by ingest when the bytes themselves say "this was meant to be a
     * profile" though they are not readable (all NUL bytes, JSON after NULs):
     * a static text saying so, else NULL. Run uses it to tell a damaged rank
     * file from a README found by walking. */
    const char *content_hint;
    /* A file a profiler's tool writes beside its profiles that is not one
     * (FramePack's memory_log.json, timing_summary.txt): a static text naming
     * it, else NULL. Run names it in a note and reads nothing of it; it is
     * no problem for validate or --strict (tl_known_companion). */
    const char *known_kind;
    int error; /* a fatal read error: the profile holds what came before */

    /* Bounded memory in distinct names, a heavy-hitters fold: when nstats
     * reaches max_names (0: TL_PROFILE_DEFAULT_MAX_NAMES), the half with
     * the least time (total, then count) is folded into one "(other names)"
     * statistic per category and the table stays open, so a name that
     * matters by time and appears late still gets its own row. The budget
     * reached again after TL_PROFILE_MAX_FOLDS folds closes the table: any
     * name not kept is counted in "(other names)" of its category. A name folded once and
     * seen again has a row of its own for its later occurrences
     * (names_reentered counts them). tl_profile_finish() warns with the
     * numbers. */
    uint32_t max_names;
    uint64_t max_events; /* events read from a trace at most (0: TL_PROFILE_DEFAULT_MAX_EVENTS) */
    /* The --kernel-class patterns the readers classify GPU events with (not
     * owned: the command's analysis options hold them); NULL: the built-in
     * table only. */
    const tl_kernel_classes *kernel_classes;
    int names_closed;
    /* 1 when events without a category are the program's work (per-step
     * categories count them as CPU exec): a plain Chrome trace's, and the
     * legacy autograd profiler's export (PyTorch built without Kineto: a bare
     * array of uncategorized "CPU functions"); a Kineto trace's are its own
     * markers ("Trace": the whole profile). */
    int plain_is_work;
    uint64_t names_folded;    /* distinct names folded, over all folds */
    uint32_t names_folds;     /* folds made */
    uint64_t names_reentered; /* names folded once that came back with a row of their own */
    uint64_t *folded_keys;    /* (category << 32 | name) of every folded name, sorted */
    size_t nfolded_keys;
    uint32_t other_pools; /* "(other names)" statistics made */
    uint32_t other_first; /* index + 1 of the first one */
    int names_warned;
    /* Called once, when the fold renumbers the statistics: map[old index] is
     * the new index (a folded name's is its "(other names)" pool), for a
     * reader that holds indices across events (nesting.c's stacks). */
    void (*on_fold)(void *ctx, const uint32_t *map, uint32_t n);
    void *on_fold_ctx;

    void *result; /* what a consumer made of it (ingest.h's on_profile); not owned */

    /* TL_FMT_AGGREGATE: the parsed document (a json_t *, owned; NULL once the
     * analysis took its sessions), and the ranks its sessions hold, which
     * ranks assigned by input order must not reuse. The profile itself has
     * no rank: its sessions have theirs. */
    size_t item; /* index of the item (file, archive) it came from in the run's list */
    void *aggregate_doc;
    int *aggregate_ranks;
    size_t naggregate_ranks;
} tl_profile;

/* The budget of distinct (category, name) statistics per profile when
 * tl_profile.max_names is 0 (`--max-names` sets it): ~3.7 KB each, so the
 * default bounds one input's names to a few hundred MB. */
#define TL_PROFILE_DEFAULT_MAX_NAMES 100000u
/* Events read from one trace when tl_profile.max_events is 0 (`--max-events`):
 * the rest of the input is not read, with a warning, the profile is marked
 * truncated. GPU events cost ~48 bytes each, so this bounds one input's GPU
 * table to a few GB even when a small zip inflates to a huge trace. */
#define TL_PROFILE_DEFAULT_MAX_EVENTS 100000000ull
/* Folds of the names table before it closes: each keeps the half with the
 * most time and lets new names in; the names' strings stay interned, so the
 * strings held are bounded by max_names x (1 + TL_PROFILE_MAX_FOLDS / 2). */
#define TL_PROFILE_MAX_FOLDS 8u
/* "(other names)" statistics (one per category) at most; then they share one. */
#define TL_PROFILE_MAX_OTHER_POOLS 1024u
/* The name that holds what was folded beyond the budget. */
#define TL_PROFILE_OTHER_NAMES "(other names)"

/* Usable: read as a profile (not skipped as something else), and a session
 * of its own (not a companion, whose numbers are its report's). */
static inline int tl_profile_usable(const tl_profile *p)
{
    return !p->skipped && p->id.companion_of == NULL;
}
/* A trace that may be the one process of a FramePack profiling_results/
 * folder beside its profiling_report.json: a Chrome or PyTorch profiler
 * trace without a rank of its own in the content (no torch.distributed). */
static inline int tl_identity_framepack_trace(const tl_identity *id)
{
    return (id->format == TL_FMT_KINETO || id->format == TL_FMT_CHROME_TRACE) && id->rank_source != TL_RANK_CONTENT &&
           id->companion_of == NULL;
}
/* A partial or merged aggregate: an input that holds sessions of its own. */
static inline int tl_profile_is_aggregate(const tl_profile *p)
{
    return p->id.format == TL_FMT_AGGREGATE;
}
/* Let go of an aggregate's document (the consumer took its sessions). */
void tl_profile_drop_aggregate_doc(tl_profile *p);

void tl_profile_init(tl_profile *p, const char *path);
void tl_profile_release(tl_profile *p);
/* Free the data (statistics, GPU events, steps, memory, counters, names) and
 * keep the identity: path, format, rank fields, span, counts and warnings.
 * For a consumer that has analyzed the profile and only needs it for rank
 * assignment, so memory does not grow with the number of inputs. */
void tl_profile_shrink(tl_profile *p);
void tl_profile_free(tl_profile *p);

/* Add a problem of the input (identity.h; printf-style): a warning; one
 * whose text names a byte of the input (offset); the reason the input is
 * not read as a profile, which also sets p->skipped. Beyond
 * TL_IDENTITY_MAX_PROBLEMS they are counted. */
void tl_profile_warn(tl_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_profile_warn_at(tl_profile *p, int64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tl_profile_skip(tl_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Skip p for the problem a reader just added (its last): that one becomes
 * the reason. Either way the reason is the first problem (identity.h). */
void tl_profile_skip_last(tl_profile *p);

/* The stat of (category, name), created if new; NULL when out of memory. */
tl_name_stat *tl_profile_stat(tl_profile *p, const char *cat, size_t cat_len, const char *name, size_t name_len);
/* The same with the category already interned (cat id in p->strs, its class). */
tl_name_stat *tl_profile_stat_cat(tl_profile *p, uint32_t cat, int cat_class, const char *name, size_t name_len);
/* Count an event of the category whose id in p->cats is id. */
void tl_profile_count_category_id(tl_profile *p, uint32_t id);
/* Record one duration for (cat, name). */
int tl_profile_add_duration(tl_profile *p, const char *cat, size_t cat_len, const char *name, size_t name_len,
                            int64_t dur_ns);
/* Samples kept per name for comparisons. */
#define TL_PROFILE_MAX_SAMPLES 1000

/* The index of (device, stream), added if new (a hash lookup); UINT32_MAX
 * when out of memory or beyond TL_PROFILE_MAX_STREAMS. */
uint32_t tl_profile_stream(tl_profile *p, int64_t device, int64_t stream);
int tl_profile_add_gpu(tl_profile *p, const tl_gpu_event *ev);
int tl_profile_add_step(tl_profile *p, int64_t number, int64_t ts_ns, int64_t dur_ns);
int tl_profile_add_mem(tl_profile *p, const tl_mem_point *pt);
/* A collective; beyond TL_PROFILE_MAX_COLLS they are counted in colls_dropped. 0 or -1. */
int tl_profile_add_coll(tl_profile *p, const tl_prof_coll *c);
/* A blocking host call; beyond TL_PROFILE_MAX_BLOCKING they are counted in blocking_dropped. */
int tl_profile_add_blocking(tl_profile *p, const tl_host_call *c);
int tl_profile_add_snapshot(tl_profile *p, const tl_mem_snapshot *s);
int tl_profile_add_gpu_sample(tl_profile *p, const tl_gpu_sample *s);
/* One telemetry reading; NaN values are not recorded. 0 or -1 (out of memory). */
int tl_profile_add_point(tl_profile *p, int kind, int device, int64_t ts_ns, double v);
tl_counter *tl_profile_counter(tl_profile *p, const char *name, size_t len);
/* An event: name and payload are cut (TL_EVENT_PAYLOAD_MAX) and interned;
 * beyond TL_PROFILE_MAX_IEVENTS it is counted in ievents_dropped. 0 or -1. */
int tl_profile_add_event(tl_profile *p, int64_t ts_ns, const char *name, size_t name_len, const char *payload,
                         size_t payload_len);
/* A tag (key=value, value cut to TL_TAG_VALUE_MAX); beyond TL_PROFILE_MAX_TAGS counted. 0 or -1. */
int tl_profile_add_tag(tl_profile *p, const char *key, size_t key_len, const char *value, size_t value_len);
/* A diffusion block; beyond TL_PROFILE_MAX_BLOCKS it is not kept. 0 or -1. */
int tl_profile_add_block(tl_profile *p, const tl_diff_block *b);
void tl_profile_count_category(tl_profile *p, const char *cat, size_t len);
/* The lane of a CPU thread, created if there is room; NULL otherwise. */
tl_cpu_lane *tl_profile_cpu_lane(tl_profile *p, int64_t pid, int64_t tid);
void tl_profile_span(tl_profile *p, int64_t start_ns, int64_t end_ns);
/* Sort steps by number and GPU events by start (after reading). */
void tl_profile_finish(tl_profile *p);

#endif
