/*
 * tally.h - the collector library (libtally).
 *
 * libtally times sections of a C or C++ program, per thread and per rank, and
 * writes two files when the program ends (or is stopped by SIGINT, SIGTERM or
 * SIGHUP):
 *
 *   {dir}/{name}-rank{N}.{pid}-{time}.report.json     statistics
 *                                   (schema/tally-report.schema.json)
 *   {dir}/{name}-rank{N}.{pid}-{time}.trace.json.gz   a Chrome trace (Trace Event
 *                                   Format) that tally, Perfetto and chrome://tracing read
 *
 * {time} is the UTC start of recording (20260105T143000Z). Each run has a stem
 * of its own, reserved atomically at the first write (mkdir of a
 * {stem}.lock directory, removed once the files exist), so a second
 * run in the same directory never overwrites the first; if the stem is taken
 * (the same pid in the same second: containers where every job is pid 1), a
 * random part is appended ("-3fa09c1e"). tally pairs a report with the trace
 * of the same stem. The directory is created if missing (mode 0755, like
 * mkdir -p). The report is never lost for its trace: a trace that cannot be
 * written (a full disk, a file size limit, TALLY_TRACE_PATH equal to
 * TALLY_REPORT_PATH) is said on stderr and in the report (trace.lost, with
 * trace.path null), and the report is written alone; a report that cannot be
 * written is not written with its trace either.
 *
 * The one idea a reader needs: the hot path (tally_begin/tally_end and the
 * iteration and counter calls) touches only the calling thread's own buffer.
 * It never takes a shared lock, never allocates in the common case and never
 * formats text. Names are interned once; statistics are kept per thread and
 * merged when the report is written. Statistics are always complete; only the
 * trace events are bounded (TALLY_MAX_EVENTS) and dropped events are counted.
 *
 * Configuration comes from the environment unless a struct is given to
 * tally_init():
 *
 *   TALLY_ENABLE=0|1        record at all (default 1). Disabled calls cost ~1 ns.
 *   TALLY_OUTPUT_DIR=dir    where to write (default "."; created if missing)
 *   TALLY_NAME=name         file name prefix (default: the program's name); a name
 *                           with '/' or '..' is refused for the program's name
 *   TALLY_TRACE=0|1         keep trace events (default 1); statistics are always kept
 *   TALLY_TRACE_GZIP=0|1    gzip the trace (default 1): isa-l's level 1 where libtally
 *                           was built with it, else zlib's level 1
 *   TALLY_GZIP_ENCODER=zlib zlib's level 1 although isa-l is built in (to compare)
 *   TALLY_MAX_EVENTS=N      trace events kept per process (default 1000000)
 *   TALLY_MAX_SAMPLES=N     per-name duration samples kept for compare (default 10000)
 *   TALLY_SAMPLE_MS=N       background sampler period in ms (default 0 = off)
 *   TALLY_SAMPLE_GPU_MS=N   the GPU readings' own period (default: TALLY_SAMPLE_MS)
 *   TALLY_SAMPLE_CPU_MS=N   the host readings' own period: CPU, memory, disk, load
 *                           (default: TALLY_SAMPLE_MS); either one alone starts the sampler
 *   TALLY_SAMPLE=gpu,cpu,memory,disk,load   what the sampler reads (default all;
 *                           "none" or a subset; unknown words are an error)
 *   TALLY_GPUS=0,2          the NVML device indices the sampler reads (default all)
 *   TALLY_SAMPLE_POINTS=N   the sampler's point budget (default 100000, at least 16);
 *                           when it is reached the series is decimated (every other
 *                           point dropped, then every 2nd, 4th ... point kept), and the
 *                           report says so (sampler.points_decimated, sampler.stride)
 *   TALLY_FLUSH_S=N         write the outputs every N seconds (default 0 = only at
 *                           exit), from libtally's sampler thread, so that `tally
 *                           watch` can follow a running program
 *   TALLY_PRESET=dev|prod|debug   a set of the values above at once (table at
 *                           tally_config_preset() and in docs/collector.md);
 *                           every variable set explicitly overrides the preset's
 *   TALLY_PROC_ROOT=dir     read the sampler's /proc files (self/io, diskstats) under
 *                           dir instead of /proc (for tests)
 *   TALLY_SYS_ROOT=dir      find block devices under dir/dev/block instead of /sys
 *                           (for tests)
 *   TALLY_DISK_PATHS=a:b    the paths whose block devices' reads and writes are
 *                           sampled (default the working and output directories)
 *   TALLY_SCHEDULE=wait=1,warmup=1,active=3,repeat=1   record only active steps
 *                           (each value at most 1000000000; anything else is an
 *                           error on stderr and the schedule is ignored)
 *   TALLY_SUMMARY=0|1       print console tables at exit (default 0)
 *   TALLY_REPORT_PATH, TALLY_TRACE_PATH   exact output paths (override dir/name);
 *                           a path that is not a regular file (/dev/stdout) is
 *                           written in place, not through a temporary file
 *   TALLY_CLOCK=auto|tsc|monotonic        time source (default auto)
 *   TALLY_NVML_LIBRARY=path NVML library to dlopen (default libnvidia-ml.so.1)
 *   TALLY_SIGNALS=0|1       write the outputs on SIGINT, SIGTERM and SIGHUP (default 1)
 *
 * Signals: with TALLY_SIGNALS=1, tally_init() installs handlers for SIGINT,
 * SIGTERM and SIGHUP (not for a signal the program ignores, e.g. SIGHUP under
 * nohup). The handler does no work itself: it wakes a writer thread through a
 * pipe and waits (at most 10 s) for it to write the outputs. Then, when the
 * signal's disposition before tally_init() was the default, it restores that
 * default and raises the signal again, so the program ends exactly as it
 * would have (killed by the signal: the shell and torchrun/Slurm see the same
 * exit status); when the program had installed a handler of its own before
 * tally_init(), that handler is called (chained) after the outputs were
 * flushed, and recording goes on if the program does. A second signal while
 * the outputs are being written is not waited for. A signal that arrives
 * while tally_shutdown() is writing (torchrun and Slurm send SIGTERM when the
 * program exits) is held until the write is complete, then delivered with the
 * program's own disposition; a second one meanwhile (Ctrl-C twice) is not
 * held, and ends the program at once. tally_shutdown() restores the dispositions the
 * program had and stops libtally's threads, so a signal after it (or after
 * dlclose() of libtally) is the program's alone. A handler the program
 * installs after tally_init() replaces libtally's (normal exit still writes).
 * A fork child has no writer (no thread may be started there before exec):
 * a signal ends it as it would without libtally, without its own outputs.
 *
 * Rank and world size come from tally_set_rank(), else the first of RANK/WORLD_SIZE,
 * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK/PMI_SIZE,
 * MV2_COMM_WORLD_RANK/MV2_COMM_WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS that is set.
 * The report names the variable used ("rank_source"). A variable that is set
 * but is not an integer from 0 to INT_MAX (RANK=-1, RANK=abc,
 * RANK=9999999999999) is said on stderr, counted in problems.rank_rejected and
 * skipped for the next launcher's (else rank 0, source "default").
 *
 * Errors: the library never aborts or blocks the host program. A failure to
 * write (unwritable directory, full disk) is reported once on stderr and the
 * program goes on. Functions that can fail return 0 on success and a negative
 * TALLY_E* code otherwise.
 *
 * Thread safety: every function may be called from any thread at any time,
 * including threads that start and end while recording. After fork() the child
 * starts with empty statistics; it writes its own files (its own pid in the
 * stem, "fork_child": true in the report) only if it records something, and
 * never touches the parent's. It has no GPU readings (NVML runs on a thread
 * of the parent's; system.nvml says "not read in a fork child").
 *
 * NVML (GPU readings) is never called on the program's threads: a thread of
 * libtally makes every call; a snapshot or the report waits at most 200 ms
 * for a reading (else it takes the last one), and a call that has not
 * returned after 500 ms abandons NVML for good (said once on stderr and in
 * system.nvml). Impossible values (4294967295 %, more memory used than the
 * device has) are left out and counted in problems.nvml_values_rejected.
 * Each GPU reading has the device-wide used memory (every process's) and,
 * where NVML lists this pid, the process's own (process_used_bytes).
 */
#ifndef TALLY_TALLY_H
#define TALLY_TALLY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TALLY_STATIC_DEFINE) || !defined(__GNUC__)
#define TALLY_API
#else
#define TALLY_API __attribute__((visibility("default")))
#endif

#define TALLY_VERSION_MAJOR 0
#define TALLY_VERSION_MINOR 1
#define TALLY_VERSION_PATCH 0
#define TALLY_VERSION_STRING "0.1.0"

/* The version of the report document this library writes ("version" field). */
#define TALLY_REPORT_VERSION 1

/* Error codes (negative). */
#define TALLY_EINVAL (-1) /* a bad argument */
#define TALLY_ENOMEM (-2) /* out of memory */
#define TALLY_EIO (-3)    /* an output could not be written */
#define TALLY_ESTATE (-4) /* called in the wrong state (e.g. after shutdown) */
#define TALLY_EFULL (-5)  /* a fixed table is full (providers, tags) */
#define TALLY_ENOENT (-6) /* no such name was recorded (tally_stats_get), no reading yet (tally_current) */
#define TALLY_EAGAIN (-7) /* try again (tally_current: the reading kept changing) */

/*
 * Configuration for tally_init(). Fill it with tally_config_init() (which sets
 * the defaults, without reading the environment) or tally_config_from_env()
 * (defaults overridden by TALLY_* variables), then change what you need.
 * String fields are borrowed: they must stay valid until tally_init() returns;
 * the library copies them.
 */
typedef struct tally_config {
    int enable;              /* 0: every call is a no-op */
    const char *output_dir;  /* directory of the output files */
    const char *name;        /* file name prefix; NULL: program name */
    const char *report_path; /* exact report path; NULL: {dir}/{name}-rank{N}.report.json */
    const char *trace_path;  /* exact trace path; NULL: derived like the report */
    int trace;               /* keep trace events */
    int trace_gzip;          /* gzip the trace */
    long max_events;         /* trace events kept per process (>= 0) */
    long max_samples;        /* duration samples kept per name (>= 0) */
    long sample_ms;          /* background sampler period, 0 = off */
    const char *schedule;    /* "wait=W,warmup=U,active=A,repeat=R" or NULL */
    int summary;             /* print console tables at shutdown */
    const char *clock;       /* "auto", "tsc" or "monotonic" */
    int signals;             /* write the outputs on SIGINT/SIGTERM/SIGHUP (see above) */
    /* The sampler (added in 0.1: zero in every field means the defaults). */
    long sample_gpu_ms; /* GPU readings' period; 0: sample_ms */
    long sample_cpu_ms; /* host readings' period (CPU, memory, disk, load); 0: sample_ms */
    const char *sample; /* "gpu,cpu,memory,disk,load" (a subset, or "none"); NULL: all */
    const char *gpus;   /* "0,2": NVML indices the sampler reads; NULL: every device */
    long sample_points; /* the sampler's point budget; 0: 100000 */
    long flush_s;       /* write the outputs every flush_s seconds; 0: only at the end */
    const char *preset; /* the preset applied ("dev", "prod", "debug") or NULL, for the report */
} tally_config;

/*
 * Apply the preset named name ("dev", "prod" or "debug") to *cfg: it sets
 * the fields of the table below and leaves the others as they are.
 * tally_config_from_env() applies TALLY_PRESET first, then every TALLY_*
 * variable that is set overrides the preset's value. Returns 0 or
 * TALLY_EINVAL (an unknown name; *cfg unchanged).
 *
 *   preset  sample_gpu_ms sample_cpu_ms sample              trace max_samples summary flush_s
 *   dev     500           500           all                 1     10000       1       0
 *   prod    1000          5000          gpu,cpu,memory      0     1000        0       0
 *   debug   50            50            all                 1     100000      1       10
 */
TALLY_API int tally_config_preset(tally_config *cfg, const char *name);

/* Fill *cfg with the built-in defaults. Does not read the environment. */
TALLY_API void tally_config_init(tally_config *cfg);

/*
 * Fill *cfg with the defaults overridden by the TALLY_* environment variables.
 * The string fields point into the environment (valid until it changes).
 * Returns 0, or TALLY_EINVAL when a variable could not be parsed (the default
 * is kept for it and a line naming the variable is printed on stderr).
 */
TALLY_API int tally_config_from_env(tally_config *cfg);

/*
 * Start the library. cfg may be NULL: the configuration is read from the
 * environment. Calling it is optional; the first call of any other function
 * initializes from the environment. A second call returns TALLY_ESTATE and
 * changes nothing. Registers an atexit handler that calls tally_shutdown().
 * Thread-safe. Cost: microseconds (reads /proc, may start the sampler thread).
 */
TALLY_API int tally_init(const tally_config *cfg);

/*
 * Stop recording, stop the sampler, write the report and the trace, and print
 * the console summary if configured. Later calls of the recording functions
 * are no-ops. Idempotent; also run at exit (and by dlclose() of libtally); a
 * call while another thread's shutdown is writing waits for that write.
 * Restores the signal dispositions of before tally_init() and stops the
 * writer, sampler and NVML threads (an NVML call that never returned is
 * abandoned, and libtally then stays loaded). Returns 0 or TALLY_EIO when an
 * output could not be written (already reported on stderr). Sections still
 * open are closed at the shutdown time and counted in the report as
 * "unclosed". Cost: proportional to the recorded data (writing files).
 */
TALLY_API int tally_shutdown(void);

/*
 * Write the report and the trace with everything recorded so far, and keep
 * recording. The next flush or the shutdown overwrites them with more (the
 * same files: one stem per run; a flush under another rank, before
 * tally_set_rank(), has its files removed once the next write under the new
 * rank succeeds). Returns 0 or TALLY_EIO (also when only the trace was lost
 * and the report written). Thread-safe; briefly pauses each recording thread
 * while its buffer is read.
 */
TALLY_API int tally_flush(void);

/* Nonzero when the library is initialized and recording is enabled. */
TALLY_API int tally_enabled(void);

/*
 * Open a timed section named name on the calling thread. Sections nest; each
 * tally_end() closes the innermost open one. name is interned on first use
 * (the string is copied), so it may be a temporary buffer, but a string
 * literal is fastest. Cost: a traced begin/end pair is ~30 ns enabled with
 * the TSC as the clock (two TSC reads of ~10 ns each; docs/collector.md, "What
 * a begin/end pair costs"), more with CLOCK_MONOTONIC, and under 1 ns when
 * disabled at run time (an inline check of tally__gate; see the end of this
 * header). Lock-free.
 */
TALLY_API void tally_begin(const char *name);

/*
 * Metadata of a section: tally_begin_args(name, args_json) opens the section
 * name as tally_begin() does and attaches args_json, a JSON object such as
 * "{\"resolution\":\"720p\",\"frames\":33}", to this occurrence;
 * tally_section_args(args_json) attaches it to the calling thread's innermost
 * open section (counted as section_args_orphans when none is open). The text
 * is copied; text that is not a JSON object is kept as {"text": "..."}. The
 * report lists each (section_args: name, start, thread, args; at most 100000,
 * more counted as section_args_dropped), the trace has each as an instant of
 * category "section_args" at the section's start on its thread, and tally
 * shows them with the events. Not for the hot path: it allocates and takes
 * the global lock (the section itself is timed as by tally_begin). Thread-safe.
 */
TALLY_API void tally_begin_args(const char *name, const char *args_json);
TALLY_API void tally_section_args(const char *args_json);

/* Close the innermost section of the calling thread. A call with no open
 * section is counted ("unmatched_ends" in the report) and otherwise ignored. */
TALLY_API void tally_end(void);

/*
 * Work that starts where one thread sees it and ends where another does (a
 * collective's future: from the hook that started it to the callback that
 * finds it done). tally_now() is a reading of the library's clock (its own
 * ticks; 0 when the library is not running); tally_range(name, start, end)
 * records, on the calling thread, a section of that name from one reading to
 * another: counted and traced like a begin/end pair of the name, nested in
 * nothing (the thread's open sections are not its parents). Ranges recorded
 * on one thread may overlap. A start of 0 records nothing. Lock-free, like
 * the pair.
 */
TALLY_API uint64_t tally_now(void);
TALLY_API void tally_range(const char *name, uint64_t start, uint64_t end);

/*
 * Time one iteration of the loop named name (e.g. "diffusion_step"). Iterations
 * get their own statistics (with it/s) and keep their duration samples for
 * tally compare. At most one iteration of a given name is open per thread;
 * tally_iteration_end(name) closes it. Cost like tally_begin/tally_end.
 */
TALLY_API void tally_iteration_begin(const char *name);
TALLY_API void tally_iteration_end(const char *name);

/*
 * Record a value of the counter name (tokens, batch size, loss). Keeps count,
 * sum, min, max, mean, std and the last value, and writes a counter ("C")
 * event to the trace. Cost: ~20 ns. Lock-free.
 */
TALLY_API void tally_counter(const char *name, double value);

/*
 * Register the rate named name (e.g. "kv_cache.hit_rate") of the counter
 * pair hits and misses (two counters the program records with
 * tally_counter(), e.g. "kv_cache.hits" and "kv_cache.misses"): the report's
 * counter_rates gives rate = sum(hits) / (sum(hits) + sum(misses)) over every
 * thread (null while both are 0), and tally shows it with the counters.
 * Registering a name again replaces its pair. At most 32 rates; names up to
 * 127 bytes. Returns 0, TALLY_EFULL or TALLY_EINVAL. Thread-safe; any time,
 * also before tally_init().
 */
TALLY_API int tally_counter_rate(const char *name, const char *hits, const char *misses);

/*
 * Record an instant event named name with arguments args_json, a JSON object
 * such as "{\"epoch\":3}" (NULL for none). The text is copied; text that is
 * not a JSON object is kept as {"text": "..."}. Not for the hot path: it
 * allocates. Thread-safe.
 */
TALLY_API void tally_event(const char *name, const char *args_json);

/*
 * Blocks of a block-wise generation (a video diffusion pipeline that makes
 * its frames a chunk at a time, like Inferix's block_analysis): the time from
 * tally_block_begin(frames) to tally_block_end() is one block that generated
 * `frames` frames (a negative or NaN value: unknown). tally reads them into
 * the report's FPS (frames over the blocks' time), blocks per second and
 * first-block delay (docs/analysis.md, "Video diffusion"). One block is open
 * per process at a time (any thread may end it); a begin while one is open
 * starts it again (counted as blocks.restarted), an end without one is
 * counted (blocks.unmatched_ends). The report lists each block (at most
 * 100000; more are counted as blocks.dropped) and the trace has it as an
 * event of category "block". Not for the hot path: takes the global lock
 * (~100 ns). Thread-safe.
 */
TALLY_API void tally_block_begin(double frames);
TALLY_API void tally_block_end(void);

/*
 * Take a memory snapshot labelled label: the process RSS and peak RSS (from
 * /proc and getrusage), system total and available memory, NVML device memory
 * when NVML is present (device-wide used memory, every process's, and beside
 * it this process's own from NVML's per-process accounting where the driver
 * lists this pid), and every registered provider's readings (a GPU
 * allocator's "allocated" and "reserved": the program's own memory where NVML
 * does not give it). Written to
 * the report's memory_snapshots and as an instant and counters in the trace.
 * Thread-safe; takes a lock and reads /proc (microseconds).
 */
TALLY_API void tally_memory_snapshot(const char *label);

/* An opaque sink that a memory provider writes its readings into. */
typedef struct tally_provider_sink tally_provider_sink;

/*
 * A memory provider, called by tally_memory_snapshot() on the thread that
 * takes the snapshot, with the user pointer given at registration. It reports
 * readings with tally_provider_put(). It must not call other tally functions.
 * (The background sampler does not call providers: a provider need not be
 * safe to run on another thread.)
 */
typedef void (*tally_memory_provider_fn)(tally_provider_sink *sink, void *user);

/*
 * Report one reading from a provider: key (e.g. "allocated", "reserved") and
 * its value in bytes. The report stores it as "{provider}.{key}". At most 16
 * readings per provider and call; more are ignored.
 */
TALLY_API void tally_provider_put(tally_provider_sink *sink, const char *key, double bytes);

/*
 * Register a memory provider named name (e.g. "cuda" for a program that can
 * ask its allocator). name is copied. At most 8 providers; returns 0,
 * TALLY_EFULL or TALLY_EINVAL. Thread-safe.
 */
TALLY_API int tally_register_memory_provider(const char *name, tally_memory_provider_fn fn, void *user);

/*
 * Set this process's rank and the world size (world_size <= 0: unknown). Takes
 * precedence over the environment; may be called at any time before the
 * report is written (the file names use the rank at write time). A negative
 * rank is refused (the rank stays as it was); a rank not below a positive
 * world_size is kept with the world size unknown. Either is counted in the
 * report's problems.rank_rejected and said once on stderr.
 */
TALLY_API void tally_set_rank(int rank, int world_size);

/*
 * Attach a tag to the report (model name, batch size, git commit). key and
 * value are copied; setting a key again replaces its value. At most 64 tags.
 * Returns 0, TALLY_EFULL or TALLY_EINVAL. Thread-safe.
 */
TALLY_API int tally_tag(const char *key, const char *value);

/*
 * Advance the profiling schedule by one step (call it once per training or
 * inference step). With TALLY_SCHEDULE=wait=W,warmup=U,active=A,repeat=R the
 * library records nothing during the W wait steps and the U warmup steps,
 * records the A active steps, and repeats the cycle R times (0 = forever);
 * after the last cycle it stops recording. As with torch.profiler's schedule,
 * recording starts in the first cycle's wait phase, so with a schedule set
 * nothing before the first steps is recorded. Without a schedule this only
 * counts steps. Memory snapshots, tags and events are always recorded.
 * Cost: ~5 ns. Thread-safe.
 */
TALLY_API void tally_step(void);

/*
 * Statistics of one name as recorded so far, merged over all threads, in ns.
 * median_ns and p95_ns come from the same log-bucket histogram as the report
 * (within 1 % of the exact value); std_ns is the sample standard deviation.
 */
typedef struct tally_stats {
    int iteration; /* 1: statistics of tally_iteration_*, 0: of sections */
    uint64_t count;
    double total_ns, mean_ns, min_ns, max_ns, std_ns, median_ns, p95_ns;
} tally_stats;

/*
 * Read the current statistics of the section (or, if no section of that name
 * was recorded, the iteration) named name into *out, like FramePack's
 * profiler.get_stats(). Works while recording and after tally_shutdown().
 * Returns 0, TALLY_EINVAL (NULL argument), TALLY_ESTATE (the library was never
 * initialized, or is disabled) or TALLY_ENOENT (nothing of that name was
 * recorded; *out is zeroed). *out is the caller's; nothing is allocated that
 * the caller must free. Thread-safe: takes the registry lock and briefly each
 * recording thread's flag, as a flush does. Cost: proportional to the number
 * of threads (microseconds); durations are converted with the clock
 * calibration measured so far (less precise in the first 20 ms). Not for the
 * hot path.
 */
TALLY_API int tally_stats_get(const char *name, tally_stats *out);

/* Validity flags of tally_reading.valid: which host readings it has. */
#define TALLY_READING_CPU 0x1u     /* cpu_pct */
#define TALLY_READING_MEMORY 0x2u  /* rss_bytes, system_available_bytes */
#define TALLY_READING_DISK 0x4u    /* disk_read_bytes_per_s, disk_write_bytes_per_s */
#define TALLY_READING_LOAD 0x8u    /* load1 */
#define TALLY_READING_GPU 0x10u    /* gpus[0..ngpus): at least one GPU reading */
#define TALLY_READING_DEVICE 0x20u /* device_read_bytes_per_s, device_write_bytes_per_s */
/* Validity flags of tally_gpu_reading.valid. */
#define TALLY_GPU_UTIL 0x1u        /* utilization_pct, memory_utilization_pct */
#define TALLY_GPU_MEMORY 0x2u      /* used_bytes (device-wide), total_bytes */
#define TALLY_GPU_PROCESS 0x4u     /* process_used_bytes: this process's own */
#define TALLY_GPU_TEMP 0x8u        /* temperature_c */
#define TALLY_GPU_POWER 0x10u      /* power_w */
#define TALLY_GPU_LIMIT 0x20u      /* power_limit_w */
#define TALLY_GPU_CLOCKS 0x40u     /* sm_clock_mhz, memory_clock_mhz */
#define TALLY_GPU_BASE_CLOCK 0x80u /* base_sm_clock_mhz */
#define TALLY_GPU_THROTTLE 0x100u  /* throttle_reasons */
#define TALLY_READING_MAX_GPUS 8

/* One GPU in a tally_reading; a field is meaningful only when its flag is in valid. */
typedef struct tally_gpu_reading {
    int index;      /* NVML's device index */
    unsigned valid; /* TALLY_GPU_* */
    double utilization_pct, memory_utilization_pct;
    double used_bytes, total_bytes, process_used_bytes;
    double temperature_c, power_w, power_limit_w;
    double sm_clock_mhz, memory_clock_mhz;
    double base_sm_clock_mhz;  /* NVML's default applications clock: the base clock */
    uint64_t throttle_reasons; /* NVML's clocks event reasons, a bit mask */
} tally_gpu_reading;

/* The latest reading of the background sampler (tally_current). */
typedef struct tally_reading {
    unsigned valid; /* TALLY_READING_* */
    int ngpus;
    uint64_t sequence;                           /* sampler points published so far (1 for the first) */
    int64_t time_unix_ns;                        /* when the newest part was read (CLOCK_REALTIME) */
    int64_t host_time_unix_ns, gpu_time_unix_ns; /* when each part was read; 0: never */
    double cpu_pct;                              /* process CPU since the previous reading, 100 = one core */
    double rss_bytes, system_available_bytes, load1;
    double disk_read_bytes_per_s, disk_write_bytes_per_s; /* /proc/self/io read_bytes, write_bytes */
    tally_gpu_reading gpus[TALLY_READING_MAX_GPUS];
    /* the block devices under the working and output directories (or
     * TALLY_DISK_PATHS): /proc/diskstats' sectors read and written, every
     * process's I/O to them, bytes/s since the previous host reading */
    double device_read_bytes_per_s, device_write_bytes_per_s;
} tally_reading;

/*
 * Copy the background sampler's latest reading into *out: the host part
 * (CPU, memory, disk, load) and the GPU part, each as of its last sampling
 * (with TALLY_SAMPLE_GPU_MS and TALLY_SAMPLE_CPU_MS they have periods of
 * their own). Lock-free: the sampler thread publishes each reading through a
 * sequence lock, and this call copies it, retrying while a new one is being
 * written; it never waits for the sampler, NVML or a lock, and allocates
 * nothing. Cost: ~60 ns (a 920-byte copy). Any thread, any time. After
 * tally_shutdown() the last reading stays readable. Returns 0; TALLY_EINVAL
 * (out is NULL); TALLY_ESTATE (not initialized, or disabled); TALLY_ENOENT
 * (the sampler is off, or has not read anything yet; *out is zeroed);
 * TALLY_EAGAIN (the reading changed under every one of many tries).
 */
TALLY_API int tally_current(tally_reading *out);

/*
 * A section that ends when the enclosing scope exits (GCC/Clang cleanup
 * attribute), e.g. { TALLY_SCOPE("vae_decode"); decode(); }.
 * Compiled out entirely when TALLY_DISABLE is defined.
 */
#if defined(TALLY_DISABLE)
#define TALLY_SCOPE(name) ((void)0)
#elif defined(__GNUC__)
TALLY_API void tally__scope_end(int *unused);
/* The inline gate. tally__gate is 0 before initialization, 1 while recording,
 * 2 when disabled or shut down. The recording calls below are wrapped so that
 * when it is 2 they cost one load and a predictable branch, without a call
 * (the <= 2 ns per begin/end pair of docs/architecture.md). The functions themselves
 * stay exported under their own names: &tally_begin and bindings from other
 * languages work as usual. Define TALLY_NO_INLINE_GATE to call them directly. */
TALLY_API extern int tally__gate;
#define TALLY__CAT2(a, b) a##b
#define TALLY__CAT(a, b) TALLY__CAT2(a, b)
#define TALLY_SCOPE(name)                                                                                              \
    int TALLY__CAT(tally__scope_, __LINE__) __attribute__((cleanup(tally__scope_end), unused)) = (tally_begin(name), 0)
#else
#error "TALLY_SCOPE needs GCC or Clang (the cleanup attribute)"
#endif

/*
 * With TALLY_DISABLE defined before including this header, every call compiles
 * to nothing (zero cost); the program need not link libtally.
 */
#if defined(TALLY_DISABLE)
#define tally_init(cfg) (0)
#define tally_shutdown() (0)
#define tally_flush() (0)
#define tally_enabled() (0)
#define tally_begin(name) ((void)0)
#define tally_end() ((void)0)
#define tally_now() ((uint64_t)0)
#define tally_range(name, start, end) ((void)0)
#define tally_iteration_begin(name) ((void)0)
#define tally_iteration_end(name) ((void)0)
#define tally_counter(name, value) ((void)0)
#define tally_event(name, args) ((void)0)
#define tally_block_begin(frames) ((void)0)
#define tally_block_end() ((void)0)
#define tally_begin_args(name, args) ((void)0)
#define tally_section_args(args) ((void)0)
#define tally_counter_rate(name, hits, misses) (0)
#define tally_memory_snapshot(label) ((void)0)
#define tally_provider_put(sink, key, bytes) ((void)0)
#define tally_register_memory_provider(name, fn, user) (0)
#define tally_set_rank(rank, world) ((void)0)
#define tally_tag(key, value) (0)
#define tally_step() ((void)0)
#define tally_stats_get(name, out) (TALLY_ESTATE) /* nothing is recorded */
#define tally_current(out) (TALLY_ESTATE)
#endif

#if !defined(TALLY_DISABLE) && !defined(TALLY_NO_INLINE_GATE) && defined(__GNUC__)
#define TALLY__OFF() __builtin_expect(__atomic_load_n(&tally__gate, __ATOMIC_RELAXED) == 2, 0)
static inline void tally__begin_gate(const char *name)
{
    if (!TALLY__OFF())
        tally_begin(name);
}
static inline void tally__end_gate(void)
{
    if (!TALLY__OFF())
        tally_end();
}
static inline void tally__iteration_begin_gate(const char *name)
{
    if (!TALLY__OFF())
        tally_iteration_begin(name);
}
static inline void tally__iteration_end_gate(const char *name)
{
    if (!TALLY__OFF())
        tally_iteration_end(name);
}
static inline void tally__counter_gate(const char *name, double value)
{
    if (!TALLY__OFF())
        tally_counter(name, value);
}
static inline void tally__scope_end_gate(int *unused)
{
    if (!TALLY__OFF())
        tally__scope_end(unused);
}
#define tally_begin(name) tally__begin_gate(name)
#define tally_end() tally__end_gate()
#define tally_iteration_begin(name) tally__iteration_begin_gate(name)
#define tally_iteration_end(name) tally__iteration_end_gate(name)
#define tally_counter(name, value) tally__counter_gate(name, value)
#undef TALLY_SCOPE
#define TALLY_SCOPE(name)                                                                                              \
    int TALLY__CAT(tally__scope_, __LINE__) __attribute__((cleanup(tally__scope_end_gate), unused)) =                  \
        (tally_begin(name), 0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TALLY_TALLY_H */
