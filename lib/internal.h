/*
 * internal.h - the collector's internal state, shared by the modules in lib/.
 *
 * The recording path works on a tl_thread (one per recording thread, reached
 * through a __thread pointer). Each tl_thread holds its own statistics tables,
 * indexed by interned name id, and its own chunks of trace events. A tl_thread
 * is guarded by a one-word flag that its owner takes for rare updates
 * (allocations, iterations, counters) and a flush takes to read it. The
 * begin/end pair takes no flag: it writes an event (or a pending duration)
 * that only its thread writes and publishes it with a release store; the
 * statistics count it later (thread.c, "Statistics off the hot path"). Nothing
 * is ever freed while the process runs: a thread that ends leaves its buffer
 * "retired" in the registry, so a report written later still counts its work.
 *
 * Times on the hot path are clock ticks (TSC or ns, see clock.c); they become
 * ns only when written, with a calibration measured over the whole run.
 */
#ifndef TALLY_INTERNAL_H
#define TALLY_INTERNAL_H

/* The library defines the functions the header wraps with inline gates. */
#define TALLY_NO_INLINE_GATE
#include "tally/tally.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "histogram.h"
#include "output.h" /* TL_OUTPUT_ERR_LEN */

#define TL_LIKELY(x) __builtin_expect(!!(x), 1)
/* Fields that their owner thread writes on the hot path and a flush reads
 * from another thread: relaxed atomic accesses, a plain mov on x86 and ARM,
 * so the hot path costs the same and ThreadSanitizer sees no race. */
#define TL_STORE(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define TL_LOAD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define TL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- clock.c ------------------------------------------------------------ */

void tl_clock_setup(const char *mode); /* "auto", "tsc", "monotonic" */
const char *tl_clock_source(void);     /* "tsc" or "CLOCK_MONOTONIC" */
uint64_t tl_clock_ns_monotonic(void);
int64_t tl_clock_ns_realtime(void);
/* Current time in ticks. Inline because it is the hot path's main cost. */
extern int tl_clock_use_tsc; /* written once in init; read with TL_LOAD */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t tl_now(void)
{
    if (TL_LIKELY(TL_LOAD(tl_clock_use_tsc)))
        return __rdtsc();
    return tl_clock_ns_monotonic();
}
/* The begin/end pair's fast path (collector.c) reads the TSC inline and
 * leaves every other clock to its general path: TL_TSC_READY() says whether
 * the TSC is the clock, tl_tsc() reads it. */
#define TL_TSC_READY() TL_LIKELY(TL_LOAD(tl_clock_use_tsc))
static inline uint64_t tl_tsc(void)
{
    return __rdtsc();
}
#else
static inline uint64_t tl_now(void)
{
    return tl_clock_ns_monotonic();
}
#define TL_TSC_READY() 0
static inline uint64_t tl_tsc(void)
{
    return 0;
}
#endif
/* Calibrate (waits until at least 20 ms have passed since setup) and return ns per tick. */
double tl_clock_ns_per_tick(void);
/* The same ratio measured up to now, without waiting (tally_stats_get). */
double tl_clock_ns_per_tick_now(void);
uint64_t tl_clock_start_ticks(void);
int64_t tl_clock_start_realtime_ns(void);
/* ticks -> ns since the start of recording, using the latest calibration. */
double tl_clock_ticks_to_ns_since_start(uint64_t ticks, double ns_per_tick);

/* ---- config.c ----------------------------------------------------------- */

typedef struct tl_schedule {
    int set;
    long wait, warmup, active, repeat;
} tl_schedule;

/* Each schedule value is at most this many steps; larger ones are refused
 * (they could only be typos, and they would overflow the cycle arithmetic). */
#define TL_SCHEDULE_MAX_STEPS 1000000000L
/* 0, or TALLY_EINVAL with the reason in err (may be NULL); *out untouched then. */
int tl_schedule_parse(const char *text, tl_schedule *out, char *err, size_t errlen);
/* Is step number `step` (0-based) recorded under the schedule? */
int tl_schedule_records(const tl_schedule *s, long step);

typedef struct tl_rank_info {
    int rank, world_size;
    char source[40]; /* the variable used, "tally_set_rank" or "default" */
} tl_rank_info;

/* The number of launcher variables refused (said on stderr). */
int tl_rank_detect(tl_rank_info *out);

/* ---- intern.c: the global name table ------------------------------------ */

#define TL_MAX_NAMES 65536   /* distinct names; more map to TL_NAME_OVERFLOW */
#define TL_NAME_OVERFLOW 0   /* id 0 is "(other names)" */
#define TL_MAX_NAME_LEN 1024 /* longer names are cut */

uint32_t tl_intern(const char *name);      /* thread-safe; copies */
uint32_t tl_intern_find(const char *name); /* the id, or UINT32_MAX; never adds */
const char *tl_name(uint32_t id);          /* the interned string */
uint32_t tl_name_count(void);
uint64_t tl_intern_overflowed(void);
void tl_intern_atfork_prepare(void);
void tl_intern_atfork_parent(void);
void tl_intern_atfork_child(void);

/* ---- stats.c: per-name statistics (stats.h) ---------------------------- */

#include "stats.h"

/* ---- threads ------------------------------------------------------------ */

enum tl_event_kind { TL_EV_SECTION = 1, TL_EV_ITERATION = 2, TL_EV_COUNTER = 3 };

typedef struct tl_event {
    uint64_t t0;    /* ticks */
    uint64_t value; /* duration ticks, or the bits of a double for counters */
    uint32_t name;
    uint32_t kind;
} tl_event;

typedef struct tl_event_chunk {
    struct tl_event_chunk *next; /* set under the owner's flag */
    /* The owner fills ev[used] and then publishes it with a release store;
     * readers load used with acquire and read the entries below it. */
    uint32_t used, cap;
    tl_event ev[];
} tl_event_chunk;

/* A section's duration not yet counted in its thread's statistics, kept when
 * the trace does not keep the section itself (tracing off, or the event
 * budget spent): see "Statistics off the hot path" in thread.c. */
typedef struct tl_pending {
    uint64_t dur; /* ticks */
    uint32_t name;
    uint32_t unused;
} tl_pending;

#define TL_PENDING_CAP 512u /* a power of two: 8 KiB a thread, allocated on first use */

#define TL_MAX_DEPTH 256
#define TL_NAME_CACHE 256
#define TL_MAX_OPEN_ITERATIONS 16

typedef struct tl_open {
    uint64_t t0;
    uint32_t name;
    uint32_t recorded;
} tl_open;

/* 64 bytes: a slot's address is a shift of its index. */
typedef struct tl_cache_slot {
    const char *key;      /* the caller's pointer; never NULL (tl_slot_empty) */
    const char *interned; /* its interned copy, for the text check */
    /* len < 32: the bits of head's bytes 0..len (its NUL); else bits 0..32
     * (bit 32: not a short name, see tl_name_is_short) */
    uint64_t mask;
    uint32_t id;
    uint32_t len;           /* strlen(interned) */
    unsigned char head[32]; /* interned's first 32 bytes, NUL and zeros after its end */
} tl_cache_slot;

enum tl_stat_kind { TL_SECTION = 0, TL_ITERATION = 1, TL_NKINDS = 2 };

typedef struct tl_thread {
    struct tl_thread *next; /* registry list, under tl_g.lock */
    atomic_int busy;        /* the per-thread flag (see file comment) */
    int tid;
    int retired;   /* the thread has ended */
    char name[32]; /* captured when the thread ended */

    tl_cache_slot cache[TL_NAME_CACHE];

    /* depth, niters, unmatched_ends and depth_overflowed are written by the
     * owner without the flag and read by a flush: TL_STORE / TL_LOAD. */
    tl_open stack[TL_MAX_DEPTH];
    int depth;
    uint64_t depth_overflow;   /* begins beyond TL_MAX_DEPTH, still to be ended */
    uint64_t depth_overflowed; /* all begins beyond TL_MAX_DEPTH (not recorded) */
    uint64_t unmatched_ends;

    tl_open iters[TL_MAX_OPEN_ITERATIONS];
    int niters;

    /* stats[kind][id], grown on the owning thread under `busy`. */
    tl_dur_stat **stats[TL_NKINDS];
    uint32_t stats_cap[TL_NKINDS];
    tl_value_stat **counters;
    uint32_t counters_cap;

    /* A chunk's cap is the share of TALLY_MAX_EVENTS it was granted (thread.c).
     * dropped: written by the owner without the flag (TL_STORE / TL_LOAD). */
    tl_event_chunk *chunks_head, *chunks_tail;
    uint64_t dropped;

    /* Sections ended but not yet in stats[TL_SECTION] (thread.c): the trace's
     * events from fold_chunk[fold_used] on, then pend[pend_tail, pend_head).
     * The owner writes pend[] and publishes pend_head (release); whoever
     * folds holds the flag and publishes pend_tail (release). */
    tl_event_chunk *fold_chunk;
    uint32_t fold_used;
    tl_pending *pend;
    uint64_t pend_head, pend_tail;
} tl_thread;

tl_thread *tl_thread_self_slow(void);
void tl_thread_unload(void); /* forget the retire key (dlclose) */
/* The helper that maps spare trace chunks (thread.c): stopped and joined
 * for good by tally_shutdown; its lock held across a fork. */
void tl_thread_spares_stop(void);
void tl_thread_spares_atfork_prepare(void);
void tl_thread_spares_atfork_parent(void);
void tl_thread_spares_atfork_child(void);
/* In libtally.so, initial-exec: read at a fixed offset from the thread
 * pointer instead of a call to __tls_get_addr on every access (the default
 * model of a shared object), at the cost of 12 bytes of the static TLS that
 * glibc keeps for libraries loaded later. Not in the static library: linked
 * into a program the linker makes the access direct anyway, and the Python
 * module that embeds it has a TLS block too large for that reserve. */
#ifdef TALLY_TLS_INITIAL_EXEC
#define TL_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define TL_TLS_MODEL
#endif
extern __thread tl_thread *tl_self_ptr TL_TLS_MODEL;
static inline tl_thread *tl_thread_self(void)
{
    tl_thread *t = tl_self_ptr;
    return TL_LIKELY(t != NULL) ? t : tl_thread_self_slow();
}
/* The key of a cache slot that holds no name: never NULL, so that a NULL name
 * (slot 0) misses the cache without a test of its own on the fast path. */
extern const char tl_slot_empty[1];
/* The name's id through the thread's cache of the caller's pointers (thread.c). */
uint32_t tl_thread_lookup_slow(tl_thread *t, tl_cache_slot *slot, const char *name);

/* Is the caller's name the slot's text? The pointer alone is not proof: a
 * caller may reuse a buffer for another name. strcmp through the PLT costs a
 * third of a pair; instead 32 bytes of name are compared at once with the
 * slot's copy (bytes after the name's NUL are masked off; the load stays in
 * name's page, so it cannot fault), and strcmp checks only what is past them.
 * tl_name_is_short is the check of the pair's fast path (collector.c), with
 * no call: 0 also for a name of 32 bytes or more (its mask has bit 32, which
 * no comparison sets) or one near the end of a page, which the general path
 * then checks with tl_name_is. Under the sanitizers, which would report the
 * masked bytes, strcmp. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TL_NAME_STRCMP_ONLY 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TL_NAME_STRCMP_ONLY 1
#endif
#if defined(__SSE2__) && !defined(TL_NAME_STRCMP_ONLY)
#include <emmintrin.h>
#define TL_NAME_PAGE_OK(name) TL_LIKELY(((uintptr_t)(name)&4095) <= 4096 - sizeof(((tl_cache_slot *)0)->head))
/* The bit of each of name's first 32 bytes that equals the slot's copy. */
static inline uint64_t tl_name_eq32(const tl_cache_slot *slot, const char *name)
{
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)name);
    __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(name + 16));
    __m128i h0 = _mm_loadu_si128((const __m128i *)(const void *)slot->head);
    __m128i h1 = _mm_loadu_si128((const __m128i *)(const void *)(slot->head + 16));
    uint64_t lo = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v0, h0));
    uint64_t hi = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v1, h1));
    return lo | hi << 16;
}
static inline int tl_name_is_short(const tl_cache_slot *slot, const char *name)
{
    return TL_NAME_PAGE_OK(name) && (tl_name_eq32(slot, name) & slot->mask) == slot->mask;
}
static inline int tl_name_is(const tl_cache_slot *slot, const char *name)
{
    if (TL_NAME_PAGE_OK(name)) {
        uint64_t eq = tl_name_eq32(slot, name);
        if (TL_LIKELY(slot->len < 32))
            return (eq & slot->mask) == slot->mask;
        return eq == 0xffffffffu && strcmp(name + 32, slot->interned + 32) == 0;
    }
    return strcmp(slot->interned, name) == 0;
}
#else
static inline int tl_name_is(const tl_cache_slot *slot, const char *name)
{
    return strcmp(slot->interned, name) == 0;
}
static inline int tl_name_is_short(const tl_cache_slot *slot, const char *name)
{
    return tl_name_is(slot, name);
}
#endif

static inline uint32_t tl_thread_lookup_name(tl_thread *t, const char *name)
{
    if (TL_UNLIKELY(name == NULL))
        name = "(null)";
    uintptr_t p = (uintptr_t)name;
    tl_cache_slot *slot = &t->cache[((p >> 3) ^ (p >> 11)) & (TL_NAME_CACHE - 1)];
    if (TL_LIKELY(slot->key == name) && TL_LIKELY(tl_name_is(slot, name)))
        return slot->id;
    return tl_thread_lookup_slow(t, slot, name);
}
static inline void tl_thread_lock(tl_thread *t)
{
    while (atomic_exchange_explicit(&t->busy, 1, memory_order_acquire))
        ;
}
static inline void tl_thread_unlock(tl_thread *t)
{
    atomic_store_explicit(&t->busy, 0, memory_order_release);
}
/* The writer's lock of a thread's flag (merging, the trace): tl_thread_lock,
 * except while the outputs are written for a signal (tl_g.signal_writing):
 * then it gives up after TL_SIGNAL_LOCK_WAIT_NS and returns 0, because the
 * flag may belong to the thread the signal interrupted in the middle of an
 * update, which will not release it until the writer is done. The caller
 * leaves that thread out (counted: problems.threads_skipped). 1: locked. */
#define TL_SIGNAL_LOCK_WAIT_NS 100000000u
int tl_thread_lock_for_write(tl_thread *t);
tl_dur_stat *tl_thread_dur_stat(tl_thread *t, int kind, uint32_t id);
tl_value_stat *tl_thread_counter(tl_thread *t, uint32_t id);
/* Append a trace event; the caller holds t's flag. */
void tl_thread_append(tl_thread *t, uint32_t kind, uint32_t name, uint64_t t0, uint64_t value);
/* Count the sections that ended but are not in stats[TL_SECTION] yet; the
 * caller holds t's flag (every reader of the statistics does this first). */
void tl_thread_fold(tl_thread *t);
/* Trace events in t's chunks; the caller holds t's flag. */
uint64_t tl_thread_events(tl_thread *t);

/* The owner's slow paths of the two below (thread.c). */
int tl_thread_push_slow(tl_thread *t, uint32_t kind, uint32_t name, uint64_t t0, uint64_t value);
void tl_thread_pend_slow(tl_thread *t, uint32_t name, uint64_t dur);

/* The hot path's append, by t's owner without the flag: the event is written
 * and then published with a release store of the chunk's count. 1 when the
 * trace keeps it, 0 when it was dropped (the budget is spent).
 * tl_thread_push_fast is its part without a call: 0 (nothing written) when
 * the thread has no chunk or its chunk is full. A chunk exists only with
 * tracing on (with it off the budget is 0 and none is handed out). */
static inline int tl_thread_push_fast(tl_thread *t, uint32_t kind, uint32_t name, uint64_t t0, uint64_t value)
{
    tl_event_chunk *c = t->chunks_tail;
    uint32_t used;
    if (TL_UNLIKELY(c == NULL || (used = c->used) == c->cap))
        return 0;
    tl_event *e = &c->ev[used];
    /* The line 16 events on, for writing: the chunk's pages were zeroed on
     * another core (the spare-chunk helper), and asking for the line early
     * hides its transfer (~0.5 ns a pair, bench/README.md). A prefetch never
     * faults, past the chunk's end too. */
    __builtin_prefetch(e + 16, 1, 3);
    e->t0 = t0;
    e->value = value;
    e->name = name;
    e->kind = kind;
    __atomic_store_n(&c->used, used + 1, __ATOMIC_RELEASE);
    return 1;
}
static inline int tl_thread_push(tl_thread *t, uint32_t kind, uint32_t name, uint64_t t0, uint64_t value)
{
    return TL_LIKELY(tl_thread_push_fast(t, kind, name, t0, value)) ? 1 : tl_thread_push_slow(t, kind, name, t0, value);
}

/* A section's duration for the statistics, by t's owner without the flag
 * (when the trace does not keep the section): a slot of the ring, published
 * with a release store; a full ring is folded first (under the flag). */
static inline void tl_thread_pend(tl_thread *t, uint32_t name, uint64_t dur)
{
    uint64_t head = t->pend_head;
    if (TL_UNLIKELY(t->pend == NULL || head - __atomic_load_n(&t->pend_tail, __ATOMIC_ACQUIRE) == TL_PENDING_CAP)) {
        tl_thread_pend_slow(t, name, dur);
        return;
    }
    tl_pending *p = &t->pend[head & (TL_PENDING_CAP - 1)];
    p->dur = dur;
    p->name = name;
    __atomic_store_n(&t->pend_head, head + 1, __ATOMIC_RELEASE);
}

/* A section that tl_thread_push_fast could not take (no chunk yet, a full
 * one, tracing off): the trace's event through tl_thread_push_slow with
 * tracing on, else (or when dropped) its duration through the ring. */
void tl_thread_record_slow(tl_thread *t, uint32_t name, uint64_t t0, uint64_t dur);

/* ---- memory.c / nvml.c -------------------------------------------------- */

#define TL_MAX_PROVIDERS 8
#define TL_MAX_READINGS 16
#define TL_MAX_GPUS 8

typedef struct tl_reading {
    char key[64];
    double value;
} tl_reading;

typedef struct tl_gpu_reading {
    int index;
    char name[64];
    double mem_used, mem_total; /* bytes, when has_mem */
    double util_gpu, util_mem;  /* % */
    double temperature_c, power_w;
    double power_limit_w;        /* NVML's enforced power limit */
    unsigned long long throttle; /* NVML's clocks event (throttle) reasons, a bit mask */
    /* this process's own memory on the device (NVML's per-process accounting,
     * when has_proc); mem_used is device-wide: every process's */
    double proc_used;
    /* NVML's current SM and memory clocks, and the default applications
     * clock of the SM (the base clock), MHz, when has_clocks / has_base */
    double sm_clock, mem_clock, base_sm_clock;
    int has_mem, has_util, has_temp, has_power, has_limit, has_throttle, has_proc;
    int has_clocks, has_base;
} tl_gpu_reading;

typedef struct tl_mem_reading {
    double rss, peak_rss, sys_total, sys_available; /* bytes */
    tl_reading readings[TL_MAX_PROVIDERS * TL_MAX_READINGS];
    int nreadings;
    tl_gpu_reading gpus[TL_MAX_GPUS];
    int ngpus;
} tl_mem_reading;

void tl_memory_read(tl_mem_reading *out, int with_providers);
double tl_memory_rss(void);
double tl_memory_peak_rss(void);
void tl_memory_system(double *total, double *available);

/* NVML runs on a worker thread of its own (nvml.c): a reader waits at most
 * TL_NVML_WAIT_MS for a fresh reading, else takes the last one; a call that
 * has not returned after TL_NVML_DEADLINE_MS abandons NVML for good. */
#define TL_NVML_WAIT_MS 200
#define TL_NVML_DEADLINE_MS 500
#define TL_NVML_MAX_TEMP_C 200u       /* hotter is not a reading */
#define TL_NVML_MAX_POWER_W 10000.0   /* more power (or limit) is not a reading */
#define TL_NVML_MAX_CLOCK_MHZ 100000u /* a faster clock is not a reading */
#define TL_NVML_MAX_PROCESSES 4096    /* processes on a device listed to find this one */
void tl_nvml_start(void);             /* start the worker (loads NVML); idempotent */
/* The devices in the reading; never blocks long. may_pin: the caller is not
 * on a path a dlclose() of libtally may be waiting for (see nvml.c). */
int tl_nvml_read(tl_gpu_reading *out, int max, int may_pin);
/* "absent", "loaded PATH", "nvmlInit failed (N)", "abandoned: ...", ... */
void tl_nvml_status(char *buf, size_t len);
uint64_t tl_nvml_rejected(void); /* values left out as impossible */
void tl_nvml_close(void);
void tl_nvml_atfork_child(void);

/* ---- sampler.c ---------------------------------------------------------- */

/* What the sampler reads (TALLY_SAMPLE); a point says which it has. */
enum {
    TL_SAMPLE_GPU = 0x1,
    TL_SAMPLE_CPU = 0x2,
    TL_SAMPLE_MEMORY = 0x4,
    TL_SAMPLE_DISK = 0x8,
    TL_SAMPLE_LOAD = 0x10,
    TL_SAMPLE_HOST = TL_SAMPLE_CPU | TL_SAMPLE_MEMORY | TL_SAMPLE_DISK | TL_SAMPLE_LOAD,
    TL_SAMPLE_ALL = TL_SAMPLE_GPU | TL_SAMPLE_HOST
};

typedef struct tl_sample_point {
    uint64_t ticks;
    unsigned has; /* TL_SAMPLE_* read at this point */
    double cpu_pct, rss, sys_available, load1;
    double disk_read_bps, disk_write_bps; /* bytes/s since the previous host point */
    /* the block devices' (diskstats) sectors read and written, bytes/s since
     * the previous host point, when has_device */
    double dev_read_bps, dev_write_bps;
    int has_device;
    int ngpus;
    tl_gpu_reading gpus[TL_MAX_GPUS];
} tl_sample_point;

#define TL_MAX_SAMPLER_POINTS 100000 /* the default point budget (TALLY_SAMPLE_POINTS) */
#define TL_MIN_SAMPLER_POINTS 16

/* "gpu,cpu,memory,disk,load" (or "none", "all") -> TL_SAMPLE_* mask; -1 with
 * the reason in err. */
int tl_sample_parse(const char *text, unsigned *mask, char *err, size_t errlen);
/* "0,2" -> a mask of NVML indices (below 64); -1 with the reason in err. */
int tl_gpus_parse(const char *text, uint64_t *mask, char *err, size_t errlen);
/* The words of a TL_SAMPLE_* mask ("gpu,cpu"), into buf. */
void tl_sample_format(unsigned mask, char *buf, size_t len);

/* The sampler's settings (copied from the configuration at tally_init). */
typedef struct tl_sampler_config {
    long gpu_ms, host_ms; /* 0: that part is not sampled */
    unsigned what;        /* TL_SAMPLE_* */
    uint64_t gpus;        /* NVML indices to read; all ones: every device */
    int gpu_asked;        /* GPU sampling was asked for by name (message when NVML is absent) */
    long budget;          /* points kept at most (then decimated) */
    long flush_s;         /* write the outputs every flush_s seconds */
    char proc_root[256];  /* "/proc", or TALLY_PROC_ROOT */
    char sys_root[256];   /* "/sys", or TALLY_SYS_ROOT */
    /* the paths whose block devices' I/O is sampled, ':'-separated
     * (TALLY_DISK_PATHS; default the working directory and the output directory) */
    char disk_paths[2048];
} tl_sampler_config;

#define TL_MAX_DISK_DEVICES 8 /* block devices sampled at most (the first found) */

/* Start the thread (sampling and/or periodic flushes); 0 or -1. */
int tl_sampler_start(const tl_sampler_config *cfg);
void tl_sampler_stop(void);
/* The state the report states: the budget, points decimated and the stride,
 * and why there are no GPU readings ("" when there are, or none were asked). */
typedef struct tl_sampler_info {
    long budget, stride;
    uint64_t decimated, dropped;
    char gpu_status[256], disk_status[512];
    char device_status[600];               /* why no device rates, or which paths have no device */
    char devices[TL_MAX_DISK_DEVICES][64]; /* the whole disks sampled ("sda", "nvme0n1") */
    int ndevices;
} tl_sampler_info;
void tl_sampler_info_get(tl_sampler_info *out);
/* The sampler's latest reading (tally_current). */
int tl_sampler_current(tally_reading *out);
/* One flush from the sampler thread (collector.c). */
int tl_flush_from_sampler(void);
/* Set on the sampler thread: a write from it must never pin libtally (nvml.c). */
extern __thread int tl_on_sampler_thread;
void tl_sampler_atfork_prepare(void);
void tl_sampler_atfork_parent(void);
void tl_sampler_atfork_child(void);
/* Copy out the series (caller frees *out). */
size_t tl_sampler_points(tl_sample_point **out, uint64_t *dropped);

/* ---- signals.c ---------------------------------------------------------- */

/* How long a signal handler waits for the outputs before it lets the signal
 * end the program anyway (a writer stuck behind the interrupted thread). */
#define TL_SIGNAL_WRITE_TIMEOUT_MS 10000

/* Start the writer thread and install the SIGINT/SIGTERM/SIGHUP handlers. */
int tl_signals_setup(void);
void tl_signals_atfork_child(void);
/* tally_shutdown() brackets its write with these: a SIGINT/SIGTERM/SIGHUP
 * that arrives in between is held, and release() delivers it (after
 * teardown restored the program's dispositions). Async-signal-safe state. */
void tl_signals_hold(void);
void tl_signals_release(void);
/* Restore the dispositions of before tally_init() and stop the writer thread. */
void tl_signals_teardown(void);

/* ---- the global state (collector.c) ------------------------------------ */

enum tl_state { TL_UNINIT = 0, TL_RUNNING = 1, TL_OFF = 2 };

typedef struct tl_snapshot {
    char *label;
    uint64_t ticks;
    int tid;
    tl_mem_reading mem;
} tl_snapshot;

typedef struct tl_instant {
    char *name;
    char *args; /* a JSON object */
    uint64_t ticks;
    int tid;
} tl_instant;

typedef struct tl_tag {
    char *key, *value;
} tl_tag;

typedef struct tl_provider {
    char name[32];
    tally_memory_provider_fn fn;
    void *user;
} tl_provider;

#define TL_MAX_TAGS 64
#define TL_MAX_INSTANTS 100000
#define TL_MAX_BLOCKS 100000 /* blocks kept (tally_block_begin/end); more are counted */
#define TL_MAX_RATES 32      /* counter rates (tally_counter_rate) */

typedef struct tl_rate {
    char name[128], hits[128], misses[128];
} tl_rate;

typedef struct tl_block {
    uint64_t t0, dur; /* ticks */
    double frames;    /* < 0: not given */
    int tid;
    /* memory at the block's end: the process RSS (< 0 unread), and the GPU
     * memory of the sampler's latest reading (< 0 none): this process's own
     * on every GPU read (gpu_own), else the devices' used memory */
    double rss, gpu_mem;
    int gpu_own;
} tl_block;

typedef struct tl_global {
    atomic_int state;     /* tl_state */
    atomic_int recording; /* schedule gate */
    /* 1 while running with the TSC as the clock: the begin/end pair's fast
     * path (collector.c) checks this one word instead of both */
    atomic_int fast_pair;
    pthread_mutex_t lock;       /* registry, snapshots, instants, tags, providers */
    pthread_mutex_t write_lock; /* one writer at a time (flush/shutdown) */

    /* configuration (copied) */
    char output_dir[1024];
    char name[256];
    char report_path[1024];
    char trace_path[1024];
    int trace, trace_gzip, summary, signals;
    long max_events, max_samples, sample_ms;
    tl_sampler_config sampler; /* the sampler's settings (tl_sampler_start) */
    /* blocks.c, under lock: the blocks, and the one open */
    tl_block *blocks;
    size_t nblocks, blocks_cap;
    uint64_t blocks_dropped, block_unmatched, block_restarted;
    int block_open, block_tid;
    uint64_t block_t0;
    double block_frames;
    /* section_args.c, under lock: metadata of sections */
    tl_instant *sargs;
    size_t nsargs, sargs_cap;
    uint64_t sargs_dropped, sargs_orphans;
    /* counter_rates.c, under lock */
    tl_rate rates[TL_MAX_RATES];
    int nrates;
    char sample_text[64], gpus_text[128], preset[16];
    char schedule_text[128];
    tl_schedule schedule;
    char clock_mode[16];

    tl_rank_info rank;
    int rank_explicit;
    uint64_t rank_rejected; /* tally_set_rank calls with an impossible rank */
    int pid;
    int is_fork_child;
    uint64_t start_ticks;
    int64_t start_realtime_ns;

    atomic_long steps;
    atomic_long recorded_steps;
    atomic_long events_budget; /* trace events not yet handed to threads */

    tl_thread *threads;
    tl_snapshot *snapshots;
    size_t nsnapshots, snapshots_cap;
    tl_instant *instants;
    size_t ninstants, instants_cap;
    uint64_t instants_dropped;
    tl_tag tags[TL_MAX_TAGS];
    int ntags;
    tl_provider providers[TL_MAX_PROVIDERS];
    int nproviders;

    int io_error_reported;
    /* Why the trace of the write in progress is not written ("" when it is):
     * the report says so (trace.lost). Under write_lock. */
    char trace_lost[TL_OUTPUT_ERR_LEN + 128];
    int atexit_registered;
    atomic_int signal_writing; /* the signal writer is writing (tl_thread_lock_for_write) */
} tl_global;

extern tl_global tl_g;

int tl_ensure_running(void);  /* initialize if needed; nonzero when recording */
void tl_set_state(int state); /* tl_g.state and the header's inline gate together */

/* The merged view of all threads, built when writing (writer.c uses it). */
typedef struct tl_merged {
    uint32_t nnames;
    tl_dur_stat *stats[TL_NKINDS]; /* [nnames] each */
    tl_value_stat *counters;       /* [nnames] */
    uint64_t events, dropped, unmatched_ends, unclosed, depth_overflowed;
    uint64_t threads_skipped; /* left out of a signal-time write (see above) */
    int nthreads;
    double ns_per_tick;
} tl_merged;

int tl_merged_build(tl_merged *m);
void tl_merged_release(tl_merged *m);

/* ---- output (json_writer.c, report.c, trace.c, summary.c) ------------- */

/* Files are written through common/output.h, the module the command uses too. */
#include "output.h"

#include "json_writer.h"

int tl_report_write(tl_json *j, const tl_merged *m);
int tl_trace_write(tl_json *j, const tl_merged *m);

/* gzip_writer.c: a gzip stream into an output opened without TL_OUTPUT_GZIP
 * (isa-l's level 1, else zlib's level 1). tl_gzip_write is a tl_json sink;
 * tl_gzip_finish ends the stream (0 or -1, errno set); free in any case. */
typedef struct tl_gzip tl_gzip;
tl_gzip *tl_gzip_open(tl_output *out);
int tl_gzip_write(void *gz, const void *buf, size_t len);
int tl_gzip_finish(tl_gzip *gz);
void tl_gzip_free(tl_gzip *gz);
const char *tl_gzip_method(void); /* "isa-l level 1" or "zlib level 1" */
void tl_summary_print(FILE *out, const tl_merged *m);
/* Ids of names with data in stats[nnames], by total time descending (malloc'd). */
uint32_t *tl_sorted_ids(const tl_dur_stat *stats, uint32_t nnames, uint32_t *n);
void tl_write_gpu(tl_json *j, const tl_gpu_reading *g, int with_name);
/* blocks.c: the report's "blocks" and the trace's block events (under tl_g.lock). */
void tl_blocks_write_report(tl_json *j, double ns_per_tick);
void tl_blocks_write_trace(tl_json *j, double ns_per_tick, int pid);
void tl_blocks_atfork_child(void);
/* section_args.c: the report's "section_args" and its sections' args (under
 * tl_g.lock); the trace's sections' args and instants (a snapshot taken
 * under tl_g.lock, used outside it). */
void tl_sargs_write_report(tl_json *j, double ns_per_tick);
int tl_sargs_by_name(uint32_t nnames, const char ***last, uint32_t **count);
typedef struct tl_sargs_ref {
    uint64_t ticks;
    uint32_t name_id; /* UINT32_MAX: not interned */
    int tid, written;
    const char *name, *args;
} tl_sargs_ref;
typedef struct tl_sargs_view {
    tl_sargs_ref *refs; /* by tid, then ticks */
    size_t n;
} tl_sargs_view;
int tl_sargs_snapshot(tl_sargs_view *v);
int tl_sargs_thread_has(const tl_sargs_view *v, int tid);
const char *tl_sargs_find(tl_sargs_view *v, int tid, uint64_t ticks, uint32_t name);
void tl_sargs_write_unwritten(tl_json *j, const tl_sargs_view *v, double ns_per_tick, int pid);
void tl_sargs_atfork_child(void);
/* counter_rates.c: the report's "counter_rates" (under tl_g.lock). */
void tl_rates_write_report(tl_json *j, const tl_merged *m);

/* ---- outpath.c: the output directory and the run's file stem ----------- */

#define TL_OUTPATH_MAX 1400      /* longest stem ({dir}/{name}-rank{N}.{pid}-{time}) */
#define TL_OUTPATH_DIR_MODE 0755 /* directories made for TALLY_OUTPUT_DIR (less umask) */
#define TL_OUTPATH_MAX_TRIES 100 /* random parts tried after a taken stem; then overwrite */

/* Make the output directory if needed and choose the run's stem (once; again
 * after a rank change). 0, or -1 with the reason in err. Under write_lock. */
int tl_outpath_prepare(char *err, size_t errlen);
/* mkdir -p dir (mode TL_OUTPATH_DIR_MODE). 0, or -1 with the reason in err. */
int tl_outpath_mkdirs(const char *dir, char *err, size_t errlen);
/* Forget the stem (a fork child chooses its own). */
void tl_outpath_forget(void);
/* After a write, which outputs were written: the stem's lock goes (the
 * files hold the stem now, or nothing does and the next write reserves
 * afresh), and once all were written the files of a stem given up for a new
 * rank go too. Under write_lock. */
void tl_outpath_written(int report_ok, int trace_ok);
/* Paths of the outputs: the exact paths if configured, else the run's stem. */
void tl_output_paths(char *report, size_t rlen, char *trace, size_t tlen);

#endif
