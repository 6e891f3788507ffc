/*
 * session.h - a session result: what one input (one session of one rank)
 * comes to once analyzed, the unit everything across ranks is computed from.
 *
 * The one idea: a session result is small and serializable. analyze makes
 * it from a profile (tl_session_analyze, aggregate.h); a partial aggregate
 * is a list of them, and ingest reads one back (partial.h). Both stages
 * produce it, so it is declared here, in the first of them: analyze and
 * render include this header, ingest never includes theirs, and data flows
 * one way (ingest -> analyze -> render).
 *
 * A session carries its input's identity (identity.h), taken from the
 * profile once ingest settled it (tl_identity_take_settled) or read back from
 * a partial. The last of identity -- runs, session numbers, what a companion
 * lends its report -- needs every session and is settled here too, once
 * (tl_sessions_settle, below). After it, analyze and render may rely on:
 * sessions sorted (those that count first, by rank then start), every
 * identity final, and tl_session_counts as the one answer to "does this
 * session count"; tl_identity_standing says why one does not.
 *
 * Times are int64 ns; sizes are bytes as doubles (NaN: unknown).
 */
#ifndef TALLY_SESSION_H
#define TALLY_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "calltree.h"
#include "identity.h"
#include "profile.h"

/* Groups of names: categories that mean the same thing across producers
 * (cpu_op and Operator are "ops"; kernel, gpu_memcpy, Memcpy are "kernels";
 * a report's sections and stages and user annotations are "sections"). */
enum tl_group {
    TL_GROUP_SECTIONS = 0,
    TL_GROUP_ITERATIONS,
    TL_GROUP_OPS,
    TL_GROUP_KERNELS,
    TL_GROUP_RUNTIME,
    TL_GROUP_PYTHON,
    TL_GROUP_GPU_ANNOTATIONS,
    TL_GROUP_OTHER,
    TL_GROUP_COUNT
};
/* A group's name ("sections", ..., "gpu annotations"); "other" out of range. */
const char *tl_group_name(int group);

/* Idle time of one stream, in HTA's three categories. */
typedef struct tl_stream_idle {
    int64_t device, stream;
    int64_t host_wait, kernel_wait, other; /* ns */
    uint64_t gaps;
    int64_t busy;       /* sum of the stream's event durations in the window (ns) */
    uint64_t host_gaps; /* the gaps counted in host_wait (their mean tells launch
                                * overhead from host work between launches) */
    int64_t host_part;  /* of host_wait: from the stream draining to each launch (the
                                * rest, launch to start, the event waited on something else:
                                * another stream, an event); -1 unknown (older partials) */
    int64_t comm_busy;  /* of busy: communication kernels (a collectives' stream's gaps
                                * are the time between collectives, not waits for the host) */
} tl_stream_idle;

/* Kernel-type masks of the union sweep. */
enum { TL_MASK_COMPUTE = 1, TL_MASK_COMM = 2, TL_MASK_MEMORY = 4 };

/* The GPU temporal breakdown of one session or rank (HTA's definitions). */
typedef struct tl_gpu_breakdown {
    int present;         /* there were GPU events in the window */
    int whole_trace;     /* the window is the whole trace */
    int steps_in_window; /* ProfilerSteps inside the window */
    int64_t window_start, window_end;
    uint64_t events; /* GPU events in the window */
    int64_t kernel_time, busy, idle, compute, non_compute;
    int64_t comm, comm_compute; /* |union of comm|, |comm ∩ compute| */
    int64_t by_mask[8];         /* time with exactly this set of kernel types running */
    tl_stream_idle *streams;
    size_t nstreams;
    /* Idle time of the GPU (gaps of the union of GPU events) during which the
     * host sat in a blocking call (cudaMemcpy, cudaStreamSynchronize, ...):
     * the call named is the one covering most of it. */
    int64_t blocked_idle;
    char blocking_call[48];
    int64_t blocking_call_ns; /* idle covered by that call name */
    /* What the host did in the host-wait gaps (docs/analysis.md, "Host
     * gaps"), weighted by length, over the streams that carry real work (at
     * least TL_REAL_WORK_PCT of the busy time, not mostly collectives); -1
     * unknown (older partials): */
    int64_t host_gap_ns;   /* the host's part of every such gap */
    int64_t host_short_ns; /* of it, in gaps of at most TL_LAUNCH_GAP_NS (launch overhead's scale) */
    int64_t host_coll_ns;  /* of it, while the host sat in a collective (gloo, MPI: waiting for other ranks) */
    int64_t host_load_ns;  /* of it, while the host was in a data-loading range */
    int devices;           /* GPUs the figures add up (kernel time, busy, idle, ... are sums of
                                * each device's); 0 or 1: one (analyze/session_analysis.c's per_device) */
    int64_t queued_idle;   /* idle gaps during which a kernel launched before the gap waited to
                                * start (the GPU was busy outside the trace): never blamed on a host
                                * call; -1 unknown (older partials) */
} tl_gpu_breakdown;
/* A host-wait gap longer than this is host work, not launch overhead: eager
 * PyTorch spends tens of µs per operator on dispatch and launch. */
#define TL_LAUNCH_GAP_NS 1000000
/* A stream carries real work when it holds at least this share of the busy time. */
#define TL_REAL_WORK_PCT 10.0
/* A name of data loading (DataLoader, data_loading, ...). */
int tl_is_data_loading(const char *name);

/* Statistics of one (group, name) in a session. */
typedef struct tl_sname {
    int group; /* tl_group */
    char *name;
    int exact; /* from events: std/median/p95 come from d */
    /* Inclusive time (a name nested in itself on one thread counts once, at
     * its outermost occurrence) and self time (inclusive of every occurrence
     * minus the time of its children); -1 when the input has no nesting. */
    int64_t incl_ns, self_ns;
    double median_ns, p95_ns, std_ns; /* from a report's summary when !exact (NaN unknown) */
    tl_dur_stat d;                    /* ns */
    int threads;                      /* the threads it ran on (up to 64), when nested; 0 unknown: a share
                                * of a rank's time summed over 2 or more is said to be a sum */
} tl_sname;

/* How a kernel (by name) was launched and by which operator (ingest/kernel_ops.h):
 * what the kernel table shows beside it. Kept per session for the kernels
 * with the most time (TL_SESSION_MAX_KINFO). */
typedef struct tl_skinfo {
    char *name;                /* the kernel */
    char *op;                  /* the operator that launched most of its time; NULL unknown */
    int64_t ops;               /* operators that launched it (0: none known) */
    int64_t op_ns, linked_ns;  /* its time launched by op; its time with a known operator */
    int64_t grid[3], block[3]; /* of its first launch that says them; -1 unknown */
    int64_t regs, smem;        /* registers per thread, shared memory per block (bytes); -1 unknown */
    double occupancy;          /* "est. achieved occupancy %", weighted by duration; NaN unknown */
    int64_t varies;            /* 1: launched with more than one grid or block */
} tl_skinfo;
#define TL_SESSION_MAX_KINFO 500

/* A GPU kernel (by name) inside the window. */
typedef struct tl_skernel {
    char *name;
    int type;      /* tl_kernel_type */
    tl_dur_stat d; /* ns */
} tl_skernel;

typedef struct tl_sstep {
    int64_t number;
    int64_t dur_ns;
    int64_t compute_ns; /* |union of compute kernels launched in the step|; -1 unknown */
    int64_t ts_ns;      /* start on the session's timeline axis (see tl_timeline); INT64_MIN unknown */
    int partial;        /* the last ProfilerStep of a trace (usually cut short): not compared */
} tl_sstep;

/* A step's time by category, TensorBoard's overview (docs/analysis.md, "Step
 * time by category"): every instant of the step goes to the first category
 * active at it, in this order (GPU work first, then the host's); what no
 * category covers is other. The categories add up to the step's time. */
enum tl_stepcat {
    TL_SC_KERNEL = 0, /* GPU kernels other than communication */
    TL_SC_MEMCPY,     /* GPU copies */
    TL_SC_MEMSET,     /* GPU sets */
    TL_SC_COMM,       /* communication kernels, CPU-side collectives that run in place (gloo) */
    TL_SC_RUNTIME,    /* the host in runtime calls (cudaLaunchKernel, cudaMemcpyAsync, ...) */
    TL_SC_DATA,       /* the host loading data (DataLoader, data_loading) */
    TL_SC_CPU,        /* the host executing operators, Python or sections */
    TL_SC_OTHER,      /* none of them */
    TL_SC_COUNT
};
/* "kernel", "memcpy", "memset", "communication", "runtime", "data_loading",
 * "cpu_exec", "other" (JSON, partials); NULL out of range. */
const char *tl_stepcat_name(int c);
/* "Kernel", "Memcpy", ..., "CPU exec", "Other": what the report shows. */
const char *tl_stepcat_label(int c);
/* In a sentence: "data loading", "GPU kernels", "CPU work (operators,
 * Python, sections)", ...; NULL out of range. */
const char *tl_stepcat_phrase(int c);

typedef struct tl_sstepcat {
    int64_t number;          /* the step's number (tl_sstep.number) */
    int64_t ns[TL_SC_COUNT]; /* by tl_stepcat; they add up to the step's dur_ns */
} tl_sstepcat;

/* ---- timelines --------------------------------------------------------------
 * A session's activity at a fixed resolution: lanes (the CPU threads that
 * carry work, then the GPU streams that carry at least
 * TL_TIMELINE_MIN_STREAM_SHARE of their GPU's busy time, the other streams
 * of a GPU folded into one lane, b = TL_LANE_OTHER_STREAMS) of TL_TIMELINE_BINS bins
 * over [start_ns, end_ns). Each bin holds the fraction of its time that each
 * kind of work covered (GPU: compute, communication, memory, other; CPU: the
 * outermost events as "compute"). Events narrower than a bin add up as
 * fractions, which is what keeps the report's size independent of the
 * number of events. Times are on the wall clock when the trace says where
 * its zero is (Kineto's baseTimeNanoseconds, a report's start time), else as
 * in the file. */
#define TL_TIMELINE_BINS 1024
#define TL_TIMELINE_MAX_LANES 64
/* Beside GPU streams, CPU threads whose outermost events cover at least
 * TL_TIMELINE_MIN_THREAD_SHARE of the session's span are lanes, at most
 * TL_TIMELINE_MAX_CPU_LANES of them (the busiest); without GPU events every
 * thread with events is (up to TL_TIMELINE_MAX_LANES). A GPU stream whose
 * events add up to less than TL_TIMELINE_MIN_STREAM_SHARE of its GPU's busy
 * time (all its streams' events added up), and that has less than that share
 * of its GPU's events, joins its GPU's "other streams" lane, unless it is
 * the GPU's busiest or the only one that would.
 * docs/analysis.md, "Timelines". */
#define TL_TIMELINE_MAX_CPU_LANES 8
#define TL_TIMELINE_MIN_THREAD_SHARE 0.01
#define TL_TIMELINE_MIN_STREAM_SHARE 0.10
#define TL_LANE_OTHER_STREAMS INT64_MAX /* tl_lane.b of a GPU's folded streams */

enum tl_lane_kind { TL_LANE_GPU = 0, TL_LANE_CPU = 1 };

/* A CPU lane's longest calls, drawn by name over the bins: the
 * TL_LANE_TOP_EVENTS longest calls of the thread at most TL_LANE_MAX_DEPTH
 * deep in their kind's stack (nesting.h), each on a row: one below the
 * innermost kept call that contains it, or further down when that row is
 * taken (the kinds nest separately, so an operator and an annotation can
 * overlap without one containing the other). Calls that would go below
 * TL_LANE_MAX_DEPTH rows are left out and counted. */
typedef struct tl_lane_call {
    int64_t ts_ns, dur_ns; /* on the timeline's axis */
    uint32_t name;         /* id in the timeline's names */
    uint8_t row;           /* 0 .. TL_LANE_MAX_DEPTH - 1 */
} tl_lane_call;

typedef struct tl_lane {
    int kind;     /* tl_lane_kind */
    int64_t a, b; /* GPU: device, stream; CPU: pid, tid */
    char *label;  /* "GPU 0 stream 7", "thread 1234 main" */
    /* Per tl_kernel_type, TL_TIMELINE_BINS fractions 0..1 (of each bin's time), or NULL: that
     * kind never ran on the lane (every bin 0). Allocated on first use (tl_lane_busy_row): a CPU
     * lane has compute only, most GPU lanes one or two kinds, so a rank keeps 4 KB a kind it
     * ran instead of 16 KB a lane; read through tl_lane_busy. */
    float *busy[TL_KT_COUNT];
    tl_lane_call *calls; /* CPU lanes: sorted by start; NULL when none */
    uint32_t ncalls;
    uint64_t calls_left; /* nested calls of the thread not among calls (shorter, deeper) */
} tl_lane;

/* Bin i's fraction of kind k on lane l (0 where the kind never ran). */
static inline float tl_lane_busy(const tl_lane *l, int k, size_t i)
{
    return l->busy[k] ? l->busy[k][i] : 0.0f;
}
/* Kind k's bins of lane l, allocated as zeros on first use; NULL when out of memory. */
float *tl_lane_busy_row(tl_lane *l, int k);

typedef struct tl_timeline {
    int64_t start_ns, end_ns; /* the bins' range; start >= end: no timeline */
    tl_lane *lanes;
    size_t nlanes;
    tl_strtab names; /* the names of the lanes' calls */
} tl_timeline;

/* A point of the memory series (downsampled to at most TL_MEM_SERIES points). */
#define TL_MEM_SERIES 512
typedef struct tl_mem_sample {
    int64_t ts_ns;              /* on the timeline axis */
    double allocated, reserved; /* bytes, NaN unknown */
} tl_mem_sample;

/* One collective: the i-th communication kernel of a name, in launch order. */
typedef struct tl_collective {
    uint32_t kernel; /* index into the session's kernels */
    int64_t dur_ns;
} tl_collective;

#define TL_MAX_COLLECTIVES 100000

/* One collective instance for the waits (analyze/waits.c): what
 * tl_prof_coll (profile.h) recorded, its times on the session's timeline
 * axis (the wall clock when the trace says where its zero is), its name and
 * process group indices into the session's coll_names. */
typedef struct tl_scoll {
    int64_t name; /* index into coll_names */
    int side;     /* tl_coll_side (profile.h) */
    int64_t ts_ns, dur_ns;
    int64_t seq;        /* sequence number in its process group; -1 unknown */
    int64_t nelems;     /* elements sent; -1 unknown */
    int64_t group;      /* index into coll_names of its process group; -1 unknown */
    int64_t elem_bytes; /* bytes of an element; -1 unknown (older partials) */
    int64_t group_size; /* ranks in its process group as the trace says; -1 unknown */
} tl_scoll;
#define TL_SESSION_MAX_COLL_NAMES 1024 /* distinct collective and group names kept per session */

/* An operator's calls with one set of input shapes and dtypes (record_shapes;
 * ingest/shape_table.h): the key as the trace wrote it, normalized. */
typedef struct tl_sshape {
    char *name;  /* the operator ("aten::addmm") */
    char *dims;  /* "[[512,1024],[1024,1024],[]]" */
    char *types; /* "float,float,Scalar" */
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    double flops;     /* the trace's "flops" args added up (with_flops) */
    uint64_t flops_n; /* calls that had one (0: none) */
    int64_t gpu_ns;   /* the kernels its calls launched themselves, added up */
    uint64_t kernels; /* ... how many (0: none linked) */
} tl_sshape;
/* Kept per session: the keys with the most time; the rest are counted in
 * shapes_dropped_keys and shapes_dropped_calls. */
#define TL_SESSION_MAX_SHAPES 500

/* Device memory one operator allocated (profile_memory's [memory] instants;
 * ingest/mem_ops.h, docs/analysis.md "Memory by operator"). */
typedef struct tl_smemop {
    char *name; /* the operator; "" for allocations outside any operator */
    uint64_t allocs;
    int64_t bytes;      /* allocated, summed */
    int64_t peak_bytes; /* still live at the device's peak Total Allocated; -1 unknown */
} tl_smemop;
/* Kept per session: the operators that allocated the most bytes; the rest in memops_dropped. */
#define TL_SESSION_MAX_MEMOPS 100

/* A labelled memory snapshot from a report (bytes; NaN unknown). */
typedef struct tl_ssnap {
    char *label;
    double allocated, reserved, peak_allocated, rss;
    double device_used; /* NVML's used memory (all processes), not allocated */
    int64_t ts_ns;      /* on the timeline axis; INT64_MIN unknown */
} tl_ssnap;

/* ---- what a session carries besides its timings ---------------------------
 * Events, tags, counters and the host (context.c), the video diffusion
 * metrics (diffusion.c), each GPU's temperature and power against their
 * limits (gpu_health.c) and memory that grows at a repeated point of the
 * work (growth.c). Definitions: docs/analysis.md. */

/* A report's event (libtally's tally_event, Inferix's custom events). */
typedef struct tl_sevent {
    int64_t ts_ns;        /* on the timeline axis; INT64_MIN unknown */
    char *name, *payload; /* payload: its data as text, at most TL_EVENT_PAYLOAD_MAX bytes */
} tl_sevent;
#define TL_SESSION_MAX_EVENTS 200 /* kept per session (the first by time); events_total counts all */

/* A counter the program recorded (libtally's tally_counter, a trace's "C" events). */
typedef struct tl_scounter {
    char *name;
    int source; /* tl_counter_source */
    uint64_t count;
    double min, mean, max;
} tl_scounter;
#define TL_SESSION_MAX_COUNTERS 64 /* kept per session (by name); counters_total counts all */
#define TL_SESSION_MAX_TAGS 64

/* The host a collector ran on ("" / 0 / NaN unknown). */
typedef struct tl_ssystem {
    char *hostname, *os;
    int cpus;
    double memory_bytes;
} tl_ssystem;

/* Block-wise video diffusion (Inferix's block_analysis, diffusion_analysis and
 * computation_analysis), per session. */
typedef struct tl_sdiffusion {
    uint64_t blocks;           /* block records; 0: none */
    uint64_t sized;            /* blocks that say their size (frames) */
    double frames;             /* the sized blocks' frames added up */
    double size_min, size_max; /* frames per block; NaN unknown */
    int64_t block_ns;          /* the blocks' computation time added up */
    int64_t sized_ns;          /* ... of the sized blocks (FPS = frames / sized_ns) */
    int64_t first_block_ns;    /* the first block's computation time; -1 none */
    int64_t later_median_ns;   /* the median of the blocks after the first; -1 fewer than 2 */
    uint64_t steps;            /* denoising step records (diffusion_analysis.steps) */
    int64_t step_ns;           /* their computation time added up */
    uint32_t layers;           /* layers timed (computation_analysis.layer_performance) */
    int64_t layers_ns;         /* their total time added up */
    char *top_layer;           /* the layer with the most time, or NULL */
    int64_t top_layer_ns;
    double mem_peak, rss_peak; /* the most GPU memory and RSS of a block (at its end), bytes; NaN unknown */
} tl_sdiffusion;

/* A GPU's temperature and power against their limits (thresholds: aggregate.h). */
typedef struct tl_shealth {
    int64_t device;
    uint64_t temp_n, hot_n;  /* temperature samples; those above TL_HOT_C */
    int64_t hot_ns;          /* time above TL_HOT_C: each hot sample until the next sample */
    double temp_max;         /* NaN without temperature samples */
    uint64_t power_n, cap_n; /* power samples with a known limit; those at TL_POWER_CAP_SHARE of it or above */
    double power_limit_w;    /* the highest limit seen; NaN unknown */
    double power_max;        /* the highest power sample; NaN none */
    uint64_t reasons_n;      /* samples with NVML's clocks event reasons */
    uint64_t thermal_n, power_throttle_n; /* ... reporting a thermal slowdown / a power cap or brake */
} tl_shealth;

/* A GPU's SM clock against its base clock while the GPU is busy (utilization
 * at TL_LOADED_UTIL_PCT or more): what the clocks-below-base rule reads
 * (gpu_health.c; docs/collector.md). Only GPUs with such samples. */
typedef struct tl_sclock {
    int64_t device;
    uint64_t n;             /* busy samples with the SM clock and the base clock */
    uint64_t slow_n;        /* ... with the SM clock below the base */
    uint64_t slow_reason_n; /* ... of those, with NVML's power or thermal reasons */
    double base_mhz;        /* the highest base clock seen, MHz */
    double min_mhz;         /* the lowest SM clock of the busy samples, MHz */
} tl_sclock;

/* A memory reading taken again and again at one point of the work (a
 * snapshot label, each step, each block, windows of a monitor's samples). */
typedef struct tl_sgrowth {
    char *what;              /* "allocated at snapshot \"after_step_#\"", ... */
    int metric;              /* tl_growth_metric */
    uint32_t n, drops;       /* repetitions; those below the one before by over TL_GROWTH_NOISE (aggregate.h) */
    double first, last, max; /* bytes */
    int64_t span_ns;         /* from the first to the last repetition; -1 unknown */
    double max_rise; /* the largest rise within 3 consecutive repetitions, bytes; NAN unknown (older partials) */
} tl_sgrowth;
/* The program's own memory (allocated, its process's device memory by NVML's
 * per-process accounting, RSS), and device-wide used memory: every process's
 * on the GPU, which never supports a leak finding alone. Appended only: version
 * 1 partials wrote the positions. */
enum tl_growth_metric {
    TL_GROWTH_ALLOCATED = 0,
    TL_GROWTH_DEVICE_USED,
    TL_GROWTH_RSS,
    TL_GROWTH_PROCESS_USED,
    TL_GROWTH_COUNT
};
#define TL_SESSION_MAX_GROWTH 16
#define TL_GROWTH_MIN_REPEATS 4 /* repetitions for a sequence */

/* One GPU's memory peaks (bytes; NaN unknown): allocator-allocated,
 * allocator-reserved and device-used, each its own series (docs/analysis.md). */
typedef struct tl_sdevmem {
    int64_t id;
    double peak_allocated, peak_reserved, peak_used;
} tl_sdevmem;

/* A GPU of a session: what the System section lists. */
#define TL_SESSION_MAX_DEVICES 64
typedef struct tl_sdevice {
    int64_t id;
    char *name;          /* "" when not recorded */
    double total_memory; /* bytes; NaN unknown */
} tl_sdevice;

/* ---- sampled telemetry -------------------------------------------------------
 * One bounded series per (metric, device): TL_SERIES_BINS bins of
 * min/mean/max over the time its samples cover, plus the exact summary of
 * every sample (analyze/telemetry.h builds and folds them). */

/* Bins of a series: what charts draw; the summary uses every sample. */
#define TL_SERIES_BINS 120
/* Series kept per session (metrics x devices); more are dropped with a warning. */
#define TL_SERIES_MAX 64

typedef struct tl_tseries {
    int kind;                 /* tl_series_kind */
    int64_t device;           /* GPU index; -1 for the host */
    uint64_t n;               /* samples */
    int64_t start_ns, end_ns; /* first and last sample, on the session's timeline axis */
    double min, max, mean;    /* over every sample */
    double energy_j;          /* power only: trapezoids of W x s between samples; NaN otherwise */
    int nbins;                /* <= TL_SERIES_BINS; bin i covers start + i*(end-start)/nbins */
    double bmin[TL_SERIES_BINS], bmean[TL_SERIES_BINS], bmax[TL_SERIES_BINS]; /* NaN: no sample */
} tl_tseries;

typedef struct tl_session {
    /* Who the input is (identity.h): settled by ingest, read by everyone
     * after. Whether it counts is tl_session_counts(s), nothing else. */
    tl_identity id;
    int64_t start_ns; /* absolute when base time known, else as in the file */
    int64_t span_ns;  /* end - start of the events; -1 unknown */
    int truncated;

    tl_sname *names;
    size_t nnames;
    tl_skernel *kernels;
    size_t nkernels;
    tl_sstep *steps;
    size_t nsteps;
    /* each step's time by category, in step order (one per step), when the
     * input has the events (a trace); else none. stepcats_cut: a host role's
     * events went past TL_PROFILE_MAX_RANGES ranges, later ones are other */
    tl_sstepcat *stepcats;
    size_t nstepcats;
    int stepcats_cut;
    tl_skinfo *kinfo; /* kernels' launching operators and launch configurations */
    size_t nkinfo;
    tl_gpu_breakdown gpu;
    tl_collective *colls;
    size_t ncolls;
    tl_scoll *insts; /* every collective instance, by start (waits.c) */
    size_t ninsts;
    uint64_t insts_dropped; /* beyond TL_PROFILE_MAX_COLLS or TL_SESSION_MAX_COLL_NAMES */
    char **coll_names;      /* their names and process groups */
    size_t ncoll_names;
    tl_ssnap *snaps;
    size_t nsnaps;
    tl_timeline timeline;
    tl_mem_sample *mem;
    size_t nmem;
    char *device_name;   /* the first device's name (deviceProperties, NVML), or NULL */
    tl_sdevice *devices; /* every GPU the input names (at most TL_SESSION_MAX_DEVICES) */
    /* each collective instance's window by the same categories (stepcats.c):
     * from the previous release on its side to its start; number is the
     * instance's index in insts, in that order; an instance without a window
     * (the first of its side, one that starts before the previous release)
     * has none. waits.c compares the straggler's windows with the others'. */
    tl_sstepcat *coll_windows;
    size_t ncoll_windows;
    size_t ndevices;
    tl_tseries *series; /* telemetry (telemetry.h), sorted by kind and device */
    size_t nseries;
    int abs_time;            /* start_ns is on the wall clock (base time known, or the
                                * trace's own clock is the wall clock: TL_WALL_CLOCK_MIN_NS) */
    int64_t pid;             /* the process that recorded it; -1 unknown (run identity;
                                * the host is sys.hostname) */
    uint64_t graph_launches; /* cudaGraphLaunch / hipGraphLaunch calls and graph replays */
    uint64_t graph_captures; /* graph captures and instantiations (partials: after the instances) */
    /* The call tree of the nested CPU events (calltree.h, names its own);
     * empty (n == 0) when the input does not nest. */
    tl_calltree calltree;

    double peak_allocated, peak_reserved, device_total, peak_rss; /* bytes, NaN unknown */
    double peak_device_used; /* NVML's device memory used (all processes); never merged
                                * into peak_allocated (docs/analysis.md); NaN unknown */
    double gpu_util_mean;    /* % from a monitor's samples (Inferix, sampler); NaN unknown */

    /* besides the timings (see above) */
    tl_sevent *events; /* the first TL_SESSION_MAX_EVENTS by time */
    size_t nevents;
    uint64_t events_total; /* every event the input recorded */
    char **tags;           /* "key=value" */
    size_t ntags;
    tl_scounter *counters;
    size_t ncounters;
    uint64_t counters_total;
    tl_ssystem sys;
    tl_sdiffusion diff;
    tl_shealth *health; /* per GPU with temperature or power samples */
    size_t nhealth;
    tl_sclock *clocks; /* per GPU with busy samples of both clocks (clocks-below-base) */
    size_t nclocks;
    tl_sdevmem *devmem; /* per GPU memory peaks, when the input has readings of two
                                * or more GPUs (one GPU: the session's peaks say it all) */
    size_t ndevmem;
    tl_sgrowth *growth;
    size_t ngrowth;
    tl_sshape *shapes; /* operators by input shape, by total time (record_shapes) */
    size_t nshapes;
    uint64_t shapes_dropped_keys;  /* keys not kept (TL_SESSION_MAX_SHAPES, TL_SHAPES_MAX) */
    uint64_t shapes_dropped_calls; /* ... and their calls */
    tl_smemop *memops;             /* device memory by operator, by bytes allocated */
    size_t nmemops;
    uint64_t memops_dropped;  /* operators beyond TL_SESSION_MAX_MEMOPS */
    int64_t memops_peak;      /* the device's peak Total Allocated the contributions are of; -1 unknown */
    tl_memcat_point *memcats; /* memory by category over time (export_memory_timeline), at most
                                * TL_MEMCAT_POINTS, times absolute like the snapshots' */
    size_t nmemcats;

    /* Where the aggregate keeps the session's bulk on disk (analyze/spill.h), when it holds
     * more sessions than it keeps whole in memory: its names, kernels, kernel launch details,
     * the timeline's lanes, the call tree and the memory series are written there (len > 0)
     * and freed (out), and read back while an analysis or an output needs them (held counts
     * who does). While out, the timeline keeps its range and its count of lanes, the memory
     * series its count (nmem) and its first and last time here (tl_session_mem_range). */
    struct tl_session_spill {
        uint64_t at, len;
        int out, held;
        int coming; /* being read back by its first holder (spill.c) */
        int64_t mem_first_ns, mem_last_ns;
        /* the bulk's size on the wire, when the session was unpacked from tally-mpi's wire
         * (0: not known): the spill's budget takes it instead of measuring the bulk again */
        uint64_t wire_size;
    } spill;
} tl_session;

/* A session with nothing known: every pointer NULL, every count 0, rank -1,
 * times and sizes unknown (INT64_MIN, -1, NaN as each field says). Allocates
 * nothing. */
void tl_session_init(tl_session *s);
/* Free what s holds and leave it zeroed. */
void tl_session_release(tl_session *s);
/* Finish a session for keeping: its name strings (names, kernels, launching
 * operators, shape keys) become the process's shared copies (str_pool.h),
 * each name's and kernel's histogram holds the buckets it counts only
 * (tl_hist_trim), each lane's calls array the calls kept. Nothing a reader
 * sees changes; what every extra rank costs does (issue 33: 281 -> 220 KB a
 * rank of a real H200 trace). Called where a session is made: the analysis,
 * a partial read, tally-mpi's wire. Release frees either kind of string. */
void tl_session_compact(tl_session *s);
/* Free what a timeline holds and leave it empty (start = end = 0: none). */
void tl_timeline_release(tl_timeline *t);
/* Free a session's bulk, the parts analyze/spill.h writes to disk (names, kernels, kinfo, the
 * timeline's lanes and names, the call tree, the memory series), and mark it out. What stays:
 * the identity, the steps and everything else, the timeline's range and its count of lanes,
 * the memory series' count and range. */
void tl_session_release_bulk(tl_session *s);
/* The times of the first and last point of the memory series (nmem > 0), whether it is in
 * memory or out. */
static inline void tl_session_mem_range(const tl_session *s, int64_t *first, int64_t *last)
{
    /* a session once written to disk: its recorded range (its series may be freed by another
     * thread's tl_spill_drop while this reads) */
    *first = s->spill.len ? s->spill.mem_first_ns : s->mem[0].ts_ns;
    *last = s->spill.len ? s->spill.mem_last_ns : s->mem[s->nmem - 1].ts_ns;
}
/* Move the bulk of `from` (a session read back from disk) into s, whose bulk is out. */
void tl_session_take_bulk(tl_session *s, tl_session *from);

/* The session of an input that is no profile (skipped, or unreadable): its
 * identity, copied, and no data; it is listed among the inputs, never
 * counted. 0, or -1 out of memory (s is then released). */
int tl_session_from_identity(tl_session *s, const tl_identity *id);

/* Counted in the numbers: a session of its own (a profile with a rank, not
 * a companion trace) of the run analyzed (identity.h). The one test every
 * analysis and every output asks; valid once tl_sessions_settle ran. */
static inline int tl_session_counts(const tl_session *s)
{
    return tl_identity_counts(&s->id);
}

/* ---- the last of identity: over every session at once ---------------------
 * Some of an input's identity depends on every other input: which run it
 * belongs to, its session number in its rank, and what a companion trace
 * lends its report. Those inputs may have been read by other processes or
 * in other partials, so this is settled where the list of sessions is
 * complete, once: tl_aggregate_finish calls tl_sessions_settle first, and
 * everything after reads the result. In order:
 *   1. a libtally trace whose report was read apart (another partial) is
 *      paired with it by file stem, as run.c pairs the two read together;
 *      a companion trace's session lends its report's session what a report
 *      lacks (timeline, memory series, call tree, self and inclusive time);
 *   2. the sessions are sorted: the sessions of their own by rank, start
 *      and path, the others (not profiles, companions) after them by path;
 *   3. run identity (docs/analysis.md): inputs are pooled as sessions of one
 *      rank only when one process could have recorded them one after the
 *      other (world size, device, format, host, process, times), and a rank
 *      joins a run only if it recorded within TL_RUN_APART_NS of it (both on
 *      the wall clock); the run with
 *      the most inputs is the one analyzed (run 0), the others are left out
 *      of the numbers with a note -- or pooled all the same when pool is set
 *      (`tally compare --sessions`), still with a note;
 *   4. each session is numbered among its rank's in its run, by start;
 *   5. notes: ranks a declared world size promises that no input holds, and
 *      inputs that share a rank only by input order (partials aggregated apart).
 * The notes (malloc'd sentences, warnings that --strict counts) are appended
 * to *notes. Deterministic in the set of sessions, whatever their order.
 * 0, or -1 out of memory. */
/* Distinct runs told apart (the table grows up to it): the inputs of runs
 * past it are left out of the numbers as one more run, said in a note --
 * never pooled into a run they do not belong to. The cap bounds the
 * sessions x runs search. */
#define TL_MAX_RUNS 1024
#define TL_RUN_NOTES 32 /* other runs named in a note each; the rest are counted in one note */
/* The ranks of one job record at the same time (DLRM's 8 within 7.5 ms):
 * a rank's first input recorded more than an hour away from every input of
 * a run, both on the wall clock, belongs to another run. */
#define TL_RUN_APART_NS (3600LL * 1000000000LL)
/* The same for inputs whose rank is a guess (input order): they must have
 * recorded at the same time, give or take this. */
#define TL_UNRANKED_APART_NS (1000LL * 1000000LL)
typedef struct tl_settle_hooks {
    /* Called on a report and its companion before one lends the other its
     * parts: the session must be whole in memory and stay so (the aggregate
     * reads back a session whose bulk it keeps on disk, analyze/spill.h).
     * 0, or -1 (out of memory, a read error: settling fails). */
    int (*keep_whole)(void *ctx, tl_session *s);
    void *ctx;
} tl_settle_hooks;
/* hooks may be NULL: every session is whole. */
int tl_sessions_settle(tl_session *v, size_t n, int pool, char ***notes, size_t *nnotes, const tl_settle_hooks *hooks);

/* The ranks a declared world size promises and are not there, as one
 * sentence in buf ("1 of 8 ranks present (world size 8): missing ranks
 * 1-7"), with ranks at or beyond it; ranks sorted ascending, each once.
 * 1 when there is something to say, else 0 (buf ""). */
int tl_missing_ranks(const int *ranks, size_t n, int world, char *buf, size_t size);

/* Names of the enums a session holds, as partials write them (partial.h):
 * "gpu"/"cpu"; "allocated"/"device_used"/"rss". NULL out of range. */
const char *tl_lane_kind_name(int kind);
const char *tl_growth_metric_name(int metric);

#endif
