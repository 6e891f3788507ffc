/*
 * collector.c - the public API: initialization, the recording calls, flush,
 * shutdown and fork handling.
 *
 * The recording calls follow one pattern: check the global state (one relaxed
 * load, the only cost when disabled), find the calling thread's buffer, read
 * the clock, and update that buffer under its own uncontended flag.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "array.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

tl_global tl_g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .write_lock = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* Mirrors tl_g.state for the header's inline gate: 0 uninit, 1 running, 2 off. */
int tally__gate;

void tl_set_state(int state)
{
    atomic_store(&tl_g.state, state);
    __atomic_store_n(&tally__gate, state, __ATOMIC_RELAXED);
    atomic_store(&tl_g.fast_pair, state == TL_RUNNING && TL_TSC_READY());
}

static void copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

/* Registered with __cxa_atexit for this shared object (what glibc's atexit
 * does inside a library), spelled out because an interposed atexit (under
 * ThreadSanitizer) loses the object: bound to it, the handler runs at
 * dlclose() of libtally, or at exit, never after the code is unmapped. */
extern void *__dso_handle;
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);
static void at_exit(void *unused)
{
    (void)unused;
    tally_shutdown();
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&tl_g.write_lock);
    pthread_mutex_lock(&tl_g.lock);
    tl_intern_atfork_prepare();
    tl_sampler_atfork_prepare(); /* waits for a sampler point in progress */
    /* And for each recording thread's update in progress, as a flush does:
     * an update may be allocating (stats tables, histogram pages, samples,
     * event chunks), and the child would inherit that half done. Flags are
     * taken after tl_g.lock everywhere and nothing is locked under one. */
    for (tl_thread *t = tl_g.threads; t != NULL; t = t->next)
        tl_thread_lock(t);
    tl_thread_spares_atfork_prepare(); /* after the flags, as new_chunk takes it */
}

static void atfork_parent(void)
{
    tl_thread_spares_atfork_parent();
    for (tl_thread *t = tl_g.threads; t != NULL; t = t->next)
        tl_thread_unlock(t);
    tl_sampler_atfork_parent();
    tl_intern_atfork_parent();
    pthread_mutex_unlock(&tl_g.lock);
    pthread_mutex_unlock(&tl_g.write_lock);
}

/* The thread buffers fork children abandoned, kept reachable (never freed)
 * so that LeakSanitizer does not fail every fork child of an instrumented
 * program; the generations chain through ->next. */
static tl_thread *forked_away_threads;

/* In the child only the forking thread exists. Everything recorded so far
 * belongs to the parent, who will write it: the child drops its copies and
 * starts empty, writing files of its own under a pid-suffixed name. The
 * thread buffers are consistent (atfork_prepare took every flag) but are not
 * freed: they move to forked_away_threads, above. */
static void atfork_child(void)
{
    tl_thread_spares_atfork_child();
    tl_intern_atfork_child();
    pthread_mutex_unlock(&tl_g.lock);
    pthread_mutex_unlock(&tl_g.write_lock);
    if (tl_g.threads != NULL) {
        tl_thread *last = tl_g.threads;
        while (last->next != NULL)
            last = last->next;
        last->next = forked_away_threads;
        forked_away_threads = tl_g.threads;
    }
    tl_g.threads = NULL;
    tl_self_ptr = NULL;
    /* Snapshots and instants only change under tl_g.lock, held across the
     * fork: they are consistent, and freed. */
    for (size_t i = 0; i < tl_g.nsnapshots; i++)
        free(tl_g.snapshots[i].label);
    free(tl_g.snapshots);
    tl_g.snapshots = NULL;
    tl_g.nsnapshots = tl_g.snapshots_cap = 0;
    for (size_t i = 0; i < tl_g.ninstants; i++) {
        free(tl_g.instants[i].name);
        free(tl_g.instants[i].args);
    }
    free(tl_g.instants);
    tl_g.instants = NULL;
    tl_g.ninstants = tl_g.instants_cap = 0;
    tl_g.instants_dropped = 0;
    tl_blocks_atfork_child();
    tl_sargs_atfork_child();
    atomic_store(&tl_g.events_budget, tl_g.trace ? tl_g.max_events : 0);
    tl_sampler_atfork_child();
    tl_nvml_atfork_child();
    if (tl_g.signals)
        tl_signals_atfork_child();
    tl_g.is_fork_child = 1;
    tl_g.pid = (int)getpid();
    tl_outpath_forget(); /* the child's files get a stem of its own */
    tl_g.io_error_reported = 0;
}

static const char *program_name(void)
{
    extern char *program_invocation_short_name;
    const char *n = program_invocation_short_name;
    return n && *n ? n : "tally";
}

/* TALLY_NAME is the start of a file name inside the output directory: a
 * name with a '/' or a ".." (which could reach outside it) or a control
 * character is refused for the program's name. */
static const char *file_name_or_default(const char *name)
{
    if (name == NULL || *name == '\0')
        return program_name();
    int ok = strchr(name, '/') == NULL && strstr(name, "..") == NULL && strcmp(name, ".") != 0;
    for (const unsigned char *c = (const unsigned char *)name; ok && *c; c++)
        ok = *c >= 0x20 && *c != 0x7f;
    if (ok)
        return name;
    fprintf(stderr,
            "tally: ignoring the name \"%.200s\": expected a file name without '/' or "
            "'..'; using \"%s\"\n",
            name, program_name());
    return program_name();
}

/* The sampler's settings from the configuration (sampler.c): each part's
 * period (its own, else sample_ms), the readings and devices, the budget,
 * the flushes. A list that cannot be parsed is said and left at its default. */
static void sampler_setup(const tally_config *cfg)
{
    tl_sampler_config *sc = &tl_g.sampler;
    char why[128];
    memset(sc, 0, sizeof *sc);
    sc->gpu_ms = cfg->sample_gpu_ms > 0 ? cfg->sample_gpu_ms : tl_g.sample_ms;
    sc->host_ms = cfg->sample_cpu_ms > 0 ? cfg->sample_cpu_ms : tl_g.sample_ms;
    sc->what = TL_SAMPLE_ALL;
    if (cfg->sample != NULL && tl_sample_parse(cfg->sample, &sc->what, why, sizeof why) != 0) {
        fprintf(stderr, "tally: ignoring the sampler's readings \"%s\": %s\n", cfg->sample, why);
        sc->what = TL_SAMPLE_ALL;
    }
    if (!(sc->what & TL_SAMPLE_GPU))
        sc->gpu_ms = 0;
    if (!(sc->what & TL_SAMPLE_HOST))
        sc->host_ms = 0;
    sc->gpus = UINT64_MAX;
    if (cfg->gpus != NULL && tl_gpus_parse(cfg->gpus, &sc->gpus, why, sizeof why) != 0) {
        fprintf(stderr, "tally: ignoring the sampler's GPUs \"%s\": %s\n", cfg->gpus, why);
        sc->gpus = UINT64_MAX;
    }
    /* asked for by name: a GPU period (a preset's too), "gpu" in the list, or devices */
    sc->gpu_asked =
        (sc->what & TL_SAMPLE_GPU) &&
        (cfg->sample_gpu_ms > 0 || (cfg->sample != NULL && strstr(cfg->sample, "gpu")) || sc->gpus != UINT64_MAX);
    sc->budget = cfg->sample_points > 0 ? cfg->sample_points : TL_MAX_SAMPLER_POINTS;
    sc->flush_s = cfg->flush_s > 0 ? cfg->flush_s : 0;
    const char *root = getenv("TALLY_PROC_ROOT");
    copy_str(sc->proc_root, sizeof sc->proc_root, root && *root ? root : "/proc");
    root = getenv("TALLY_SYS_ROOT");
    copy_str(sc->sys_root, sizeof sc->sys_root, root && *root ? root : "/sys");
    /* the devices of the working directory and the output directory, taken
     * now: the program may change its directory before the sampler starts */
    const char *paths = getenv("TALLY_DISK_PATHS");
    char cwd[1024];
    if (paths && *paths)
        copy_str(sc->disk_paths, sizeof sc->disk_paths, paths);
    else if (getcwd(cwd, sizeof cwd) != NULL) {
        int rel = tl_g.output_dir[0] != '/';
        if (snprintf(sc->disk_paths, sizeof sc->disk_paths, "%s:%s%s%s", cwd, rel ? cwd : "", rel ? "/" : "",
                     tl_g.output_dir) >= (int)sizeof sc->disk_paths)
            copy_str(sc->disk_paths, sizeof sc->disk_paths, cwd); /* a path too long to stat */
    } else
        copy_str(sc->disk_paths, sizeof sc->disk_paths, tl_g.output_dir);
    tl_sample_format(sc->what, tl_g.sample_text, sizeof tl_g.sample_text);
    copy_str(tl_g.gpus_text, sizeof tl_g.gpus_text, sc->gpus != UINT64_MAX ? cfg->gpus : "");
    copy_str(tl_g.preset, sizeof tl_g.preset, cfg->preset);
}

int tally_init(const tally_config *cfg_in)
{
    tally_config env_cfg;
    const tally_config *cfg = cfg_in;
    int rc = 0;

    pthread_mutex_lock(&init_lock);
    if (atomic_load(&tl_g.state) != TL_UNINIT) {
        rc = TALLY_ESTATE;
        goto out;
    }
    if (cfg == NULL) {
        tally_config_from_env(&env_cfg);
        cfg = &env_cfg;
    }
    copy_str(tl_g.output_dir, sizeof tl_g.output_dir, cfg->output_dir ? cfg->output_dir : ".");
    copy_str(tl_g.name, sizeof tl_g.name, file_name_or_default(cfg->name));
    copy_str(tl_g.report_path, sizeof tl_g.report_path, cfg->report_path);
    copy_str(tl_g.trace_path, sizeof tl_g.trace_path, cfg->trace_path);
    tl_g.trace = cfg->trace;
    tl_g.trace_gzip = cfg->trace_gzip;
    tl_g.summary = cfg->summary;
    tl_g.signals = cfg->signals;
    tl_g.max_events = cfg->max_events < 0 ? 0 : cfg->max_events;
    tl_g.max_samples = cfg->max_samples < 0 ? 0 : cfg->max_samples;
    tl_g.sample_ms = cfg->sample_ms < 0 ? 0 : cfg->sample_ms;
    sampler_setup(cfg);
    copy_str(tl_g.clock_mode, sizeof tl_g.clock_mode, cfg->clock ? cfg->clock : "auto");
    memset(&tl_g.schedule, 0, sizeof tl_g.schedule);
    tl_g.schedule_text[0] = '\0';
    if (cfg->schedule != NULL) {
        char why[128];
        if (tl_schedule_parse(cfg->schedule, &tl_g.schedule, why, sizeof why) == 0)
            copy_str(tl_g.schedule_text, sizeof tl_g.schedule_text, cfg->schedule);
        else
            fprintf(stderr,
                    "tally: ignoring schedule \"%s\": %s; expected "
                    "wait=N,warmup=N,active=N,repeat=N\n",
                    cfg->schedule, why);
    }
    if (!tl_g.rank_explicit)
        tl_g.rank_rejected += (uint64_t)tl_rank_detect(&tl_g.rank);
    tl_g.pid = (int)getpid();
    atomic_store(&tl_g.events_budget, tl_g.trace ? tl_g.max_events : 0);
    atomic_store(&tl_g.steps, 0);
    atomic_store(&tl_g.recording, tl_schedule_records(&tl_g.schedule, 0));

    if (!cfg->enable) {
        tl_set_state(TL_OFF);
        goto out;
    }
    tl_clock_setup(tl_g.clock_mode);
    tl_g.start_ticks = tl_clock_start_ticks();
    tl_g.start_realtime_ns = tl_clock_start_realtime_ns();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    if (!tl_g.atexit_registered) {
        __cxa_atexit(at_exit, NULL, __dso_handle);
        tl_g.atexit_registered = 1;
    }
    tl_set_state(TL_RUNNING);
    tl_nvml_start(); /* NVML loads on its own thread, off the host's */
    if ((tl_g.sampler.gpu_ms > 0 || tl_g.sampler.host_ms > 0 || tl_g.sampler.flush_s > 0) &&
        tl_sampler_start(&tl_g.sampler) != 0)
        fprintf(stderr, "tally: could not start the sampler thread; going on without it\n");
    if (tl_g.signals && tl_signals_setup() != 0) {
        fprintf(stderr, "tally: could not start the signal writer thread; SIGINT/SIGTERM/SIGHUP "
                        "will lose the outputs\n");
        tl_g.signals = 0;
    }
out:
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int tl_ensure_running(void)
{
    if (atomic_load_explicit(&tl_g.state, memory_order_acquire) == TL_UNINIT)
        tally_init(NULL);
    return atomic_load_explicit(&tl_g.state, memory_order_acquire) == TL_RUNNING;
}

int tally_enabled(void)
{
    return atomic_load(&tl_g.state) == TL_RUNNING;
}

/* The check every recording call starts with. An acquire load (a plain mov
 * on x86) so that a thread that sees TL_RUNNING also sees the configuration
 * and the clock that tally_init() set before publishing the state. */
#define TL_GATE()                                                                                                      \
    do {                                                                                                               \
        if (TL_UNLIKELY(atomic_load_explicit(&tl_g.state, memory_order_acquire) != TL_RUNNING) &&                      \
            !tl_ensure_running())                                                                                      \
            return;                                                                                                    \
    } while (0)

/* The begin/end pair. tally_begin and tally_end handle the common case of a
 * traced section inline: running, the thread's buffer made, the name in the
 * thread's cache, the TSC as the clock, room in the current chunk. That path
 * makes no call, so it needs no callee-saved register and no stack frame
 * (issue 33: 30-31 -> 28.2 ns a pair). Everything else goes through
 * a tail call to the general code below (begin_general, end_general), which
 * does what the pair always did: a fast path that gives up does so before
 * it has changed anything, except the end's clock reading, which it hands on. */
__attribute__((noinline)) static void begin_general(const char *name)
{
    TL_GATE();
    tl_thread *t = tl_thread_self();
    if (TL_UNLIKELY(t == NULL))
        return;
    int depth = t->depth;
    if (TL_UNLIKELY(depth >= TL_MAX_DEPTH)) {
        t->depth_overflow++;
        TL_STORE(t->depth_overflowed, t->depth_overflowed + 1);
        return;
    }
    uint32_t id = tl_thread_lookup_name(t, name);
    tl_open *o = &t->stack[depth];
    TL_STORE(t->depth, depth + 1);
    o->name = id;
    o->recorded = (uint32_t)atomic_load_explicit(&tl_g.recording, memory_order_relaxed);
    o->t0 = tl_now();
}

void tally_begin(const char *name)
{
    tl_thread *t = tl_self_ptr;
    if (TL_UNLIKELY(!atomic_load_explicit(&tl_g.fast_pair, memory_order_acquire)) || TL_UNLIKELY(t == NULL)) {
        begin_general(name);
        return;
    }
    int depth = t->depth;
    uintptr_t p = (uintptr_t)name;
    /* a NULL name misses: no slot's key is NULL (tl_slot_empty) */
    const tl_cache_slot *slot = &t->cache[((p >> 3) ^ (p >> 11)) & (TL_NAME_CACHE - 1)];
    if (TL_UNLIKELY(depth >= TL_MAX_DEPTH) || TL_UNLIKELY(slot->key != name) ||
        TL_UNLIKELY(!tl_name_is_short(slot, name))) {
        begin_general(name);
        return;
    }
    tl_open *o = &t->stack[depth];
    TL_STORE(t->depth, depth + 1);
    o->name = slot->id;
    o->recorded = (uint32_t)atomic_load_explicit(&tl_g.recording, memory_order_relaxed);
    o->t0 = tl_tsc();
}

/* Close the section open at `depth` (the innermost) at `now`. No flag and no
 * statistics here: the trace's event, or else a pending duration, is counted
 * later by tl_thread_fold (thread.c). */
static inline void end_close(tl_thread *t, unsigned depth, uint64_t now)
{
    TL_STORE(t->depth, (int)depth);
    tl_open o = t->stack[depth];
    if (!o.recorded)
        return;
    uint64_t dur = now > o.t0 ? now - o.t0 : 0;
    if (TL_LIKELY(tl_thread_push_fast(t, TL_EV_SECTION, o.name, o.t0, dur)))
        return;
    tl_thread_record_slow(t, o.name, o.t0, dur);
}

/* tally_end after its clock reading `now`. */
__attribute__((noinline)) static void end_general(uint64_t now)
{
    TL_GATE();
    tl_thread *t = tl_self_ptr;
    if (TL_UNLIKELY(t == NULL || t->depth == 0 || t->depth_overflow)) {
        /* An end before this thread's first begin (or before tally_init)
         * has no buffer yet: make one, so that the end is counted. */
        if (t == NULL)
            t = tl_thread_self();
        if (t != NULL && t->depth_overflow)
            t->depth_overflow--;
        else if (t != NULL)
            TL_STORE(t->unmatched_ends, t->unmatched_ends + 1);
        return;
    }
    end_close(t, (unsigned)t->depth - 1, now);
}

/* tally_end with any clock: the gate first, then the reading. */
__attribute__((noinline)) static void end_general_clock(void)
{
    TL_GATE();
    end_general(tl_now());
}

void tally_end(void)
{
    if (TL_UNLIKELY(!atomic_load_explicit(&tl_g.fast_pair, memory_order_acquire))) {
        end_general_clock();
        return;
    }
    uint64_t now = tl_tsc();
    tl_thread *t = tl_self_ptr;
    /* depth 0: an unmatched end; TL_MAX_DEPTH: perhaps begins beyond it
     * still to be ended (depth_overflow is only ever set at that depth) */
    unsigned depth;
    if (TL_UNLIKELY(t == NULL) || TL_UNLIKELY((depth = (unsigned)t->depth - 1) >= TL_MAX_DEPTH - 1)) {
        end_general(now);
        return;
    }
    end_close(t, depth, now);
}

uint64_t tally_now(void)
{
    if (atomic_load_explicit(&tl_g.state, memory_order_acquire) != TL_RUNNING && !tl_ensure_running())
        return 0;
    return tl_now();
}

/* A section whose two ends were read elsewhere: the same event a pair's end
 * writes (end_close), from start to end, on the calling thread. Its event
 * comes after those that ended before the call, as a pair's would. */
void tally_range(const char *name, uint64_t start, uint64_t end)
{
    TL_GATE();
    if (start == 0 || name == NULL || !atomic_load_explicit(&tl_g.recording, memory_order_relaxed))
        return;
    tl_thread *t = tl_thread_self();
    if (TL_UNLIKELY(t == NULL))
        return;
    uint32_t id = tl_thread_lookup_name(t, name);
    uint64_t dur = end > start ? end - start : 0;
    if (!tl_thread_push_fast(t, TL_EV_SECTION, id, start, dur))
        tl_thread_record_slow(t, id, start, dur);
}

void tally__scope_end(int *unused)
{
    (void)unused;
    tally_end();
}

/* The slot of the thread's open iteration named id, or t->niters when none is open. */
static int open_iteration(const tl_thread *t, uint32_t id)
{
    int i = 0;
    while (i < t->niters && t->iters[i].name != id)
        i++;
    return i;
}

void tally_iteration_begin(const char *name)
{
    TL_GATE();
    tl_thread *t = tl_thread_self();
    if (TL_UNLIKELY(t == NULL))
        return;
    uint32_t id = tl_thread_lookup_name(t, name);
    int i = open_iteration(t, id);
    if (i == t->niters) {
        if (t->niters == TL_MAX_OPEN_ITERATIONS)
            return;
        TL_STORE(t->niters, t->niters + 1);
    }
    /* Beginning an open iteration again restarts it: the earlier begin had
     * no end, so no duration can be attributed to it. */
    t->iters[i].name = id;
    t->iters[i].recorded = (uint32_t)atomic_load_explicit(&tl_g.recording, memory_order_relaxed);
    t->iters[i].t0 = tl_now();
}

void tally_iteration_end(const char *name)
{
    TL_GATE();
    uint64_t now = tl_now();
    tl_thread *t = tl_self_ptr;
    if (TL_UNLIKELY(t == NULL))
        t = tl_thread_self(); /* an end before any begin is still counted */
    if (TL_UNLIKELY(t == NULL))
        return;
    uint32_t id = tl_thread_lookup_name(t, name);
    int i = open_iteration(t, id);
    if (i == t->niters) {
        TL_STORE(t->unmatched_ends, t->unmatched_ends + 1);
        return;
    }
    tl_open o = t->iters[i];
    t->iters[i] = t->iters[t->niters - 1];
    TL_STORE(t->niters, t->niters - 1);
    if (!o.recorded)
        return;
    uint64_t dur = now > o.t0 ? now - o.t0 : 0;
    tl_thread_lock(t);
    tl_dur_stat *s = tl_thread_dur_stat(t, TL_ITERATION, id);
    if (TL_LIKELY(s != NULL))
        tl_dur_stat_add(s, dur, tl_g.max_samples);
    if (tl_g.trace)
        tl_thread_append(t, TL_EV_ITERATION, id, o.t0, dur);
    tl_thread_unlock(t);
}

void tally_counter(const char *name, double value)
{
    TL_GATE();
    if (!atomic_load_explicit(&tl_g.recording, memory_order_relaxed))
        return;
    tl_thread *t = tl_thread_self();
    if (TL_UNLIKELY(t == NULL))
        return;
    uint32_t id = tl_thread_lookup_name(t, name);
    uint64_t now = tl_now();
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    tl_thread_lock(t);
    tl_value_stat *s = tl_thread_counter(t, id);
    if (TL_LIKELY(s != NULL))
        tl_value_stat_add(s, value, now);
    if (tl_g.trace)
        tl_thread_append(t, TL_EV_COUNTER, id, now, bits);
    tl_thread_unlock(t);
}

static int current_tid(void)
{
    tl_thread *t = tl_thread_self();
    return t ? t->tid : 0;
}

void tally_event(const char *name, const char *args_json)
{
    TL_GATE();
    uint64_t now = tl_now();
    int tid = current_tid();
    char *n = strdup(name ? name : "(null)");
    char *a = tl_json_object_or_text(args_json);
    if (n == NULL || a == NULL)
        goto fail;
    pthread_mutex_lock(&tl_g.lock);
    if (tl_g.ninstants >= TL_MAX_INSTANTS) {
        tl_g.instants_dropped++;
        pthread_mutex_unlock(&tl_g.lock);
        goto fail;
    }
    if (tl_array_grow(&tl_g.instants, tl_g.ninstants, &tl_g.instants_cap, sizeof *tl_g.instants, 32) != 0) {
        tl_g.instants_dropped++;
        pthread_mutex_unlock(&tl_g.lock);
        goto fail;
    }
    tl_g.instants[tl_g.ninstants++] = (tl_instant){ n, a, now, tid };
    pthread_mutex_unlock(&tl_g.lock);
    return;
fail:
    free(n);
    free(a);
}

void tally_memory_snapshot(const char *label)
{
    TL_GATE();
    tl_snapshot snap = { 0 };
    snap.ticks = tl_now();
    snap.tid = current_tid();
    snap.label = strdup(label ? label : "(null)");
    if (snap.label == NULL)
        return;
    tl_memory_read(&snap.mem, 1);
    pthread_mutex_lock(&tl_g.lock);
    if (tl_array_grow(&tl_g.snapshots, tl_g.nsnapshots, &tl_g.snapshots_cap, sizeof *tl_g.snapshots, 16) != 0) {
        pthread_mutex_unlock(&tl_g.lock);
        free(snap.label);
        return;
    }
    tl_g.snapshots[tl_g.nsnapshots++] = snap;
    pthread_mutex_unlock(&tl_g.lock);
}

int tally_register_memory_provider(const char *name, tally_memory_provider_fn fn, void *user)
{
    int rc = 0;
    if (name == NULL || *name == '\0' || fn == NULL)
        return TALLY_EINVAL;
    pthread_mutex_lock(&tl_g.lock);
    if (tl_g.nproviders == TL_MAX_PROVIDERS) {
        rc = TALLY_EFULL;
    } else {
        tl_provider *p = &tl_g.providers[tl_g.nproviders++];
        copy_str(p->name, sizeof p->name, name);
        p->fn = fn;
        p->user = user;
    }
    pthread_mutex_unlock(&tl_g.lock);
    return rc;
}

/* A negative rank is refused (the rank stays what it was, detected or set
 * earlier) and a rank not below a known world size leaves the world size
 * unknown: either is counted as problems.rank_rejected and said once on
 * stderr, never silently turned into rank 0. */
void tally_set_rank(int rank, int world_size)
{
    int said;
    pthread_mutex_lock(&tl_g.lock);
    said = tl_g.rank_rejected > 0;
    if (rank < 0 || (world_size > 0 && rank >= world_size))
        tl_g.rank_rejected++;
    if (rank >= 0) {
        tl_g.rank.rank = rank;
        tl_g.rank.world_size = world_size > rank ? world_size : 0;
        copy_str(tl_g.rank.source, sizeof tl_g.rank.source, "tally_set_rank");
        tl_g.rank_explicit = 1;
    }
    pthread_mutex_unlock(&tl_g.lock);
    if (!said && (rank < 0 || (world_size > 0 && rank >= world_size)))
        fprintf(stderr,
                "tally: tally_set_rank(%d, %d): %s; counted in the report's "
                "problems.rank_rejected\n",
                rank, world_size,
                rank < 0 ? "a negative rank is refused, the rank is unchanged"
                         : "the rank is not below the world size, which is left unknown");
}

int tally_tag(const char *key, const char *value)
{
    int rc = 0;
    if (key == NULL || *key == '\0' || value == NULL)
        return TALLY_EINVAL;
    char *v = strdup(value);
    if (v == NULL)
        return TALLY_ENOMEM;
    pthread_mutex_lock(&tl_g.lock);
    for (int i = 0; i < tl_g.ntags; i++) {
        if (strcmp(tl_g.tags[i].key, key) == 0) {
            free(tl_g.tags[i].value);
            tl_g.tags[i].value = v;
            goto out;
        }
    }
    if (tl_g.ntags == TL_MAX_TAGS) {
        free(v);
        rc = TALLY_EFULL;
        goto out;
    }
    char *k = strdup(key);
    if (k == NULL) {
        free(v);
        rc = TALLY_ENOMEM;
        goto out;
    }
    tl_g.tags[tl_g.ntags++] = (tl_tag){ k, v };
out:
    pthread_mutex_unlock(&tl_g.lock);
    return rc;
}

void tally_step(void)
{
    if (atomic_load_explicit(&tl_g.state, memory_order_acquire) != TL_RUNNING && !tl_ensure_running())
        return;
    long done = atomic_fetch_add(&tl_g.steps, 1); /* step `done` just ended */
    if (tl_schedule_records(&tl_g.schedule, done))
        atomic_fetch_add(&tl_g.recorded_steps, 1);
    long next = done < LONG_MAX ? done + 1 : done;
    atomic_store_explicit(&tl_g.recording, tl_schedule_records(&tl_g.schedule, next), memory_order_relaxed);
}

/* ---- merging and writing ------------------------------------------------ */

int tl_merged_build(tl_merged *m)
{
    memset(m, 0, sizeof *m);
    m->ns_per_tick = tl_clock_ns_per_tick();
    m->nnames = tl_name_count();
    for (int k = 0; k < TL_NKINDS; k++) {
        m->stats[k] = calloc(m->nnames, sizeof(tl_dur_stat));
        if (m->stats[k] == NULL)
            goto fail;
        for (size_t i = 0; i < m->nnames; i++)
            m->stats[k][i].keep_first = 1; /* the threads' first samples, in order */
    }
    m->counters = calloc(m->nnames, sizeof(tl_value_stat));
    if (m->counters == NULL)
        goto fail;
    pthread_mutex_lock(&tl_g.lock);
    for (tl_thread *t = tl_g.threads; t != NULL; t = t->next) {
        if (!tl_thread_lock_for_write(t)) {
            m->threads_skipped++;
            continue;
        }
        tl_thread_fold(t);
        for (int k = 0; k < TL_NKINDS; k++) {
            for (uint32_t id = 0; id < t->stats_cap[k] && id < m->nnames; id++)
                if (t->stats[k][id])
                    tl_dur_stat_merge(&m->stats[k][id], t->stats[k][id], tl_g.max_samples);
        }
        for (uint32_t id = 0; id < t->counters_cap && id < m->nnames; id++)
            if (t->counters[id])
                tl_value_stat_merge(&m->counters[id], t->counters[id]);
        m->events += tl_thread_events(t);
        m->dropped += TL_LOAD(t->dropped);
        m->unmatched_ends += TL_LOAD(t->unmatched_ends);
        m->depth_overflowed += TL_LOAD(t->depth_overflowed);
        m->unclosed += (uint64_t)TL_LOAD(t->depth) + (uint64_t)TL_LOAD(t->niters);
        m->nthreads++;
        tl_thread_unlock(t);
    }
    pthread_mutex_unlock(&tl_g.lock);
    return 0;
fail:
    tl_merged_release(m);
    return TALLY_ENOMEM;
}

void tl_merged_release(tl_merged *m)
{
    for (int k = 0; k < TL_NKINDS; k++) {
        if (m->stats[k] != NULL)
            for (uint32_t i = 0; i < m->nnames; i++)
                tl_dur_stat_release(&m->stats[k][i]);
        free(m->stats[k]);
    }
    free(m->counters);
    memset(m, 0, sizeof *m);
}

/* An output failure is reported once per process, not at every flush. */
static void report_io_error(const char *what, const char *then)
{
    if (tl_g.io_error_reported)
        return;
    tl_g.io_error_reported = 1;
    fprintf(stderr, "tally: %s; %s\n", what, then);
}

/* Open path and write one output into it; on failure it is aborted and the
 * reason is in o->err. */
static int write_one(tl_output *o, const char *path, int gzip, int own, int (*fn)(tl_json *, const tl_merged *),
                     const tl_merged *m)
{
    /* a name of our own (not TALLY_REPORT_PATH/TALLY_TRACE_PATH): never a
     * link or a device someone planted in a shared output directory */
    unsigned flags = own ? TL_OUTPUT_OWN_NAME : 0;
    if (tl_output_open(o, path, flags, NULL, NULL) != 0)
        return TALLY_EIO;
    /* gzip: compressed here at level 1 (gzip_writer.c), not by the output */
    tl_gzip *gz = gzip ? tl_gzip_open(o) : NULL;
    int rc = gzip && gz == NULL ? -1 : 0;
    if (rc == 0) {
        tl_json j;
        tl_json_init(&j, gz ? tl_gzip_write : tl_output_write, gz ? (void *)gz : (void *)o);
        rc = fn(&j, m);
        if (tl_json_finish(&j) != 0 || rc != 0 || (gz != NULL && tl_gzip_finish(gz) != 0))
            rc = -1;
    }
    tl_gzip_free(gz);
    if (rc != 0) {
        char why[128];
        snprintf(o->err, sizeof o->err, "%s: write failed: %s", path, strerror_r(errno ? errno : EIO, why, sizeof why));
        tl_output_abort(o);
        o->failed = 1;
        return TALLY_EIO;
    }
    return 0;
}

static int anything_recorded(const tl_merged *m)
{
    for (uint32_t i = 0; i < m->nnames; i++)
        if (m->stats[TL_SECTION][i].count || m->stats[TL_ITERATION][i].count || m->counters[i].count)
            return 1;
    return tl_g.nsnapshots > 0 || tl_g.ninstants > 0 || tl_g.nblocks > 0 || tl_g.nsargs > 0;
}

/* Are a and b one file: the same path, or existing files of one inode
 * (TALLY_REPORT_PATH and TALLY_TRACE_PATH given the same file)? */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Write the trace (first: the report says whether it was written), then the
 * report, and commit them together. A trace that cannot be written (a full
 * disk, a size limit, the report's own path) does not cost the report: the
 * report is committed alone and says the trace is lost (trace.lost), and a
 * trace an earlier flush of this run wrote under our own name is removed
 * (it no longer matches). A report that cannot be written costs its trace
 * too: no trace without its report. */
static int write_outputs(int final)
{
    int rc = 0;
    tl_merged m;
    char report[1600], trace[1600];
    pthread_mutex_lock(&tl_g.write_lock);
    if (tl_merged_build(&m) != 0) {
        report_io_error("out of memory while merging statistics; the report and the trace "
                        "are lost",
                        "the program goes on without them");
        rc = TALLY_ENOMEM;
        goto out;
    }
    /* A fork child that recorded nothing writes nothing. */
    if (tl_g.is_fork_child && !anything_recorded(&m))
        goto out_release;
    /* Static, like outs below: write_lock is held, and the reasons (up to
     * TL_OUTPUT_ERR_LEN each) are large for a host's stack. */
    static char prep[2 * TL_OUTPUT_ERR_LEN + 16], what[sizeof prep + 3300];
    int report_ok = 0, trace_ok = 0;
    prep[0] = '\0';
    tl_g.trace_lost[0] = '\0';
    if (tl_outpath_prepare(prep, sizeof prep) != 0) {
        /* no directory to write into: nothing was opened */
        tl_output_paths(report, sizeof report, trace, sizeof trace);
        rc = TALLY_EIO;
    } else {
        tl_output_paths(report, sizeof report, trace, sizeof trace);
        static tl_output outs[2];
        tl_output *done[2];
        size_t n = 0;
        memset(outs, 0, sizeof outs);
        int own_trace = !tl_g.trace_path[0] || tl_g.is_fork_child,
            own_report = !tl_g.report_path[0] || tl_g.is_fork_child;
        if (tl_g.trace && same_file(report, trace))
            snprintf(tl_g.trace_lost, sizeof tl_g.trace_lost, "%s: the trace's path is the report's too", trace);
        else if (tl_g.trace && write_one(&outs[0], trace, tl_g.trace_gzip, own_trace, tl_trace_write, &m) != 0)
            snprintf(tl_g.trace_lost, sizeof tl_g.trace_lost, "%s", outs[0].err);
        else if (tl_g.trace)
            trace_ok = 1;
        if (write_one(&outs[1], report, 0, own_report, tl_report_write, &m) == 0)
            report_ok = 1;
        if (trace_ok && !report_ok) {
            tl_output_abort(&outs[0]);
            trace_ok = 0;
        }
        if (trace_ok)
            done[n++] = &outs[0];
        if (report_ok)
            done[n++] = &outs[1];
        if (n > 0 && tl_output_commit_all(done, n) != 0)
            report_ok = trace_ok = 0; /* all old or all new */
        if (report_ok && tl_g.trace_lost[0] && own_trace)
            unlink(trace); /* an earlier flush's trace; never the report (same_file) */
        if (!report_ok || (tl_g.trace && !trace_ok))
            rc = TALLY_EIO;
        tl_outpath_written(report_ok, trace_ok);
        /* the reasons: the trace's and the report's, each once */
        for (int i = 0; i < 2 && rc != 0; i++) {
            const char *why = i == 0 ? tl_g.trace_lost : outs[1].failed ? outs[1].err : "";
            if (i == 0 && !why[0] && outs[0].failed)
                why = outs[0].err;
            if (why[0] && !(i == 1 && strcmp(why, tl_g.trace_lost) == 0)) {
                size_t used = strlen(prep);
                snprintf(prep + used, sizeof prep - used, "%s%s", used ? "; " : "", why);
            }
        }
    }
    if (rc != 0 && report_ok) {
        snprintf(what, sizeof what, "%s; lost: the trace %s (the report %s was written without it)",
                 prep[0] ? prep : "write failed", trace, report);
        report_io_error(what, "the program goes on");
    } else if (rc != 0) {
        /* Say which outputs are lost: committed together, a failure of
         * the report loses both (the previous versions, if any, are kept). */
        if (tl_g.trace)
            snprintf(what, sizeof what, "%s; lost: the report %s and the trace %s", prep[0] ? prep : "write failed",
                     report, trace);
        else
            snprintf(what, sizeof what, "%s; lost: the report %s", prep[0] ? prep : "write failed", report);
        report_io_error(what, "the program goes on without them");
    }
    if (final && tl_g.summary)
        tl_summary_print(stderr, &m);
out_release:
    tl_merged_release(&m);
out:
    pthread_mutex_unlock(&tl_g.write_lock);
    return rc;
}

/* TALLY_FLUSH_S: the sampler thread's periodic write, like tally_flush(). */
int tl_flush_from_sampler(void)
{
    if (atomic_load(&tl_g.state) != TL_RUNNING)
        return TALLY_ESTATE;
    return write_outputs(0);
}

int tally_flush(void)
{
    if (atomic_load(&tl_g.state) != TL_RUNNING)
        return TALLY_ESTATE;
    return write_outputs(0);
}

/* The final write. A signal that arrives meanwhile is held and delivered
 * after it (signals.c); a second caller waits for the first one's write, so
 * a host thread that exits while the signal writer writes does not end the
 * process under it. Then nothing of libtally is left running: the program's
 * signal dispositions are back, and the writer, sampler, NVML and spare-chunk threads are
 * stopped (what dlclose() of libtally needs; it runs this through atexit). */
int tally_shutdown(void)
{
    int expected = TL_RUNNING;
    tl_signals_hold();
    if (!atomic_compare_exchange_strong(&tl_g.state, &expected, TL_OFF)) {
        if (expected == TL_OFF) {
            pthread_mutex_lock(&tl_g.write_lock);
            pthread_mutex_unlock(&tl_g.write_lock);
        }
        tl_signals_release();
        return 0;
    }
    __atomic_store_n(&tally__gate, TL_OFF, __ATOMIC_RELAXED);
    atomic_store(&tl_g.fast_pair, 0);
    tl_sampler_stop();
    tl_thread_spares_stop();
    int rc = write_outputs(1);
    tl_nvml_close();
    if (tl_g.signals)
        tl_signals_teardown();
    tl_signals_release();
    return rc;
}

/* dlclose() of libtally (and the end of the process, after the atexit
 * handlers): tally_shutdown once more, for where the atexit handler is not
 * run at dlclose (ThreadSanitizer's interception of atexit, for one; a no-op
 * when it ran), then a thread that recorded and ends later must not call
 * into unmapped code. */
__attribute__((destructor)) static void tl_unload(void)
{
    tally_shutdown();
    tl_thread_unload();
}
