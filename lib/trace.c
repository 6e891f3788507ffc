/*
 * trace.c - the Chrome trace ({name}-rank{N}.trace.json.gz), in the object
 * form of the Trace Event Format: sections and iterations as complete ("X")
 * events, counters and sampler series as "C" events, tally_event() and memory
 * snapshots as instants, process and thread names as metadata ("M"). Like a
 * PyTorch profiler trace it carries "distributedInfo" (rank, world_size) and
 * "baseTimeNanoseconds" at top level, so tools that look for them find them.
 * "ts" is µs since the start of recording with ns precision (3 decimals).
 *
 * Events are read from the per-thread chunks without holding the thread's
 * flag: chunks are append-only and never freed, so the entries below the
 * count read under the flag cannot change while we read them.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double us(uint64_t ticks, const tl_merged *m)
{
    return tl_clock_ticks_to_ns_since_start(ticks, m->ns_per_tick) / 1000.0;
}

static void event_head(tl_json *j, const char *ph, const char *cat, const char *name, int tid, double ts_us)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "ph", ph);
    if (cat)
        tl_json_kv_string(j, "cat", cat);
    tl_json_kv_string(j, "name", name);
    tl_json_kv_int(j, "pid", tl_g.pid);
    tl_json_kv_int(j, "tid", tid);
    tl_json_key(j, "ts");
    tl_json_fixed(j, ts_us, 3);
}

static void metadata(tl_json *j, const char *what, int tid, const char *key, const char *sval, long ival)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "ph", "M");
    tl_json_kv_string(j, "name", what);
    tl_json_kv_int(j, "pid", tl_g.pid);
    tl_json_kv_int(j, "tid", tid);
    tl_json_key(j, "args");
    tl_json_object_begin(j);
    if (sval)
        tl_json_kv_string(j, key, sval);
    else
        tl_json_kv_int(j, key, ival);
    tl_json_object_end(j);
    tl_json_object_end(j);
}

typedef struct thread_view {
    int tid;
    char name[32];
    tl_event_chunk *head, *tail;
    uint32_t tail_used;
} thread_view;

/* Names as JSON string literals, escaped once per name rather than per event. */
typedef struct name_cache {
    char **lit;
    size_t *len;
    uint32_t n;
} name_cache;

static const char *name_literal(name_cache *c, uint32_t id, size_t *len)
{
    static const char other[] = "\"(other names)\"", empty[] = "\"\"";
    if (id >= c->n) {
        *len = sizeof other - 1;
        return other;
    }
    if (c->lit[id] == NULL) {
        c->lit[id] = tl_json_quote(tl_name(id));
        if (c->lit[id] == NULL) {
            *len = sizeof empty - 1;
            return empty;
        }
        c->len[id] = strlen(c->lit[id]);
    }
    *len = c->len[id];
    return c->lit[id];
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";

/* ns as microseconds with exactly three decimals ("12.345"), at most 25 bytes. */
static size_t put_us(char *out, int64_t ns)
{
    size_t n = 0;
    uint64_t u = (uint64_t)ns;
    if (ns < 0) {
        out[n++] = '-';
        u = 0 - u;
    }
    uint64_t q = u / 1000;
    unsigned frac = (unsigned)(u % 1000), d = 1;
    for (uint64_t p10 = 10; d < 20 && q >= p10; p10 *= 10)
        d++;
    char *p = out + n + d;
    while (q >= 100) {
        unsigned r = (unsigned)(q % 100);
        q /= 100;
        p -= 2;
        memcpy(p, digits2 + 2 * r, 2);
    }
    if (q >= 10) {
        p -= 2;
        memcpy(p, digits2 + 2 * q, 2);
    } else {
        *--p = (char)('0' + q);
    }
    n += d;
    out[n] = '.';
    out[n + 1] = (char)('0' + frac / 100);
    memcpy(out + n + 2, digits2 + 2 * (frac % 100), 2);
    return n + 4;
}

/* llround(x) for 0 <= x < 2^63, without the call: x - trunc(x) is exact. */
static inline int64_t round_ns(double x)
{
    if (TL_UNLIKELY(!(x < 9.2e18)))
        return llround(x);
    int64_t r = (int64_t)x;
    return r + (x - (double)r >= 0.5);
}

/* ticks -> ns since the start of recording (tl_clock_ticks_to_ns_since_start, rounded). */
static inline int64_t since_start_ns(uint64_t ticks, uint64_t start, double ns_per_tick)
{
    return ticks < start ? 0 : round_ns((double)(ticks - start) * ns_per_tick);
}

/* One complete event ({"ph":"X",...}) into out (room for llen + TL_TRACE_EVENT_ROOM). */
#define TL_TRACE_EVENT_ROOM 160
static size_t format_complete(char *out, const tl_event *e, const char *lit, size_t llen, const char *head, size_t hn,
                              int64_t ts, int64_t dur)
{
    static const char iter[] = "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":";
    static const char sect[] = "{\"ph\":\"X\",\"cat\":\"section\",\"name\":";
    static const char dur_key[] = ",\"dur\":";
    size_t n;
    if (e->kind == TL_EV_ITERATION) {
        memcpy(out, iter, sizeof iter - 1);
        n = sizeof iter - 1;
    } else {
        memcpy(out, sect, sizeof sect - 1);
        n = sizeof sect - 1;
    }
    memcpy(out + n, lit, llen);
    n += llen;
    memcpy(out + n, head, hn);
    n += hn;
    n += put_us(out + n, ts);
    memcpy(out + n, dur_key, sizeof dur_key - 1);
    n += sizeof dur_key - 1;
    n += put_us(out + n, dur);
    out[n++] = '}';
    return n;
}

/* The text of a complete event up to its "ts" value is the same for every
 * event of one name and kind on one thread: it is built once into a slot of
 * a small cache (reset per thread) and copied 16 bytes at a time. */
#define TL_PREFIX_SLOTS 256
#define TL_PREFIX_MAX 192 /* a multiple of 16: the copy reads whole blocks */
typedef struct prefix_slot {
    uint32_t key; /* 1 + (name << 1 | iteration); 0: empty */
    uint32_t len;
    char text[TL_PREFIX_MAX];
} prefix_slot;

/* Room after the prefix: ts and dur (25 bytes each), ",\"dur\":" and "}". */
#define TL_TRACE_NUMBERS_ROOM 64

/* The hot loop of a big trace: complete events formatted by hand, straight
 * into the writer's buffer. Counters (rare) go through the generic writer. */
static void write_thread_events(tl_json *j, const thread_view *v, const tl_merged *m, name_cache *names,
                                prefix_slot *prefixes, tl_sargs_view *sargs)
{
    /* sections with metadata (tally_begin_args): only on threads that have some */
    int with_args = tl_sargs_thread_has(sargs, v->tid);
    static const char dur_key[] = ",\"dur\":";
    char head[64];
    int hn = snprintf(head, sizeof head, ",\"pid\":%d,\"tid\":%d,\"ts\":", tl_g.pid, v->tid);
    uint64_t start = tl_clock_start_ticks();
    double k = m->ns_per_tick;
    if (prefixes != NULL)
        for (unsigned i = 0; i < TL_PREFIX_SLOTS; i++)
            prefixes[i].key = 0;
    for (tl_event_chunk *c = v->head; c != NULL; c = c->next) {
        uint32_t used = c == v->tail ? v->tail_used : __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < used; i++) {
            const tl_event *e = &c->ev[i];
            int64_t ts = since_start_ns(e->t0, start, k);
            if (e->kind == TL_EV_COUNTER) {
                double value;
                memcpy(&value, &e->value, sizeof value);
                event_head(j, "C", "counter", tl_name(e->name), v->tid, (double)ts / 1000.0);
                tl_json_key(j, "args");
                tl_json_object_begin(j);
                tl_json_kv_double(j, "value", value);
                tl_json_object_end(j);
                tl_json_object_end(j);
                continue;
            }
            int64_t dur = round_ns((double)e->value * k);
            const char *args;
            if (TL_UNLIKELY(with_args) && e->kind == TL_EV_SECTION &&
                (args = tl_sargs_find(sargs, v->tid, e->t0, e->name)) != NULL) {
                /* the section's metadata as its own args */
                event_head(j, "X", "section", tl_name(e->name), v->tid, (double)ts / 1000.0);
                tl_json_key(j, "dur");
                tl_json_fixed(j, (double)dur / 1000.0, 3);
                tl_json_key(j, "args");
                tl_json_raw(j, args);
                tl_json_object_end(j);
                continue;
            }
            uint32_t key = 1 + (e->name << 1 | (e->kind == TL_EV_ITERATION));
            prefix_slot *slot = prefixes ? &prefixes[(key * 0x9e3779b1u) >> 24] : NULL;
            if (slot != NULL && slot->key != key) {
                size_t llen;
                const char *lit = name_literal(names, e->name, &llen);
                slot->key = 0;
                if (llen + (size_t)hn + 48 + 16 <= TL_PREFIX_MAX) {
                    /* format_complete's text up to the ts value */
                    static const char iter[] = "{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":";
                    static const char sect[] = "{\"ph\":\"X\",\"cat\":\"section\",\"name\":";
                    const char *pre = e->kind == TL_EV_ITERATION ? iter : sect;
                    size_t pn = e->kind == TL_EV_ITERATION ? sizeof iter - 1 : sizeof sect - 1;
                    memcpy(slot->text, pre, pn);
                    memcpy(slot->text + pn, lit, llen);
                    memcpy(slot->text + pn + llen, head, (size_t)hn);
                    slot->len = (uint32_t)(pn + llen + (size_t)hn);
                    slot->key = key;
                }
            }
            if (TL_LIKELY(slot != NULL && slot->key == key)) {
                char *out = tl_json_element_begin(j, TL_PREFIX_MAX + TL_TRACE_NUMBERS_ROOM);
                for (uint32_t b = 0; b < slot->len; b += 16)
                    memcpy(out + b, slot->text + b, 16);
                size_t n = slot->len;
                n += put_us(out + n, ts);
                memcpy(out + n, dur_key, sizeof dur_key - 1);
                n += sizeof dur_key - 1;
                n += put_us(out + n, dur);
                out[n++] = '}';
                tl_json_element_end(j, n);
                continue;
            }
            size_t llen;
            const char *lit = name_literal(names, e->name, &llen);
            if (llen + TL_TRACE_EVENT_ROOM <= sizeof j->buf) {
                char *out = tl_json_element_begin(j, llen + TL_TRACE_EVENT_ROOM);
                tl_json_element_end(j, format_complete(out, e, lit, llen, head, (size_t)hn, ts, dur));
                continue;
            }
            char *buf = malloc(llen + TL_TRACE_EVENT_ROOM);
            if (buf == NULL)
                continue;
            tl_json_raw_element(j, buf, format_complete(buf, e, lit, llen, head, (size_t)hn, ts, dur));
            free(buf);
        }
        if (c == v->tail)
            break;
    }
}

static void write_snapshots(tl_json *j, const tl_merged *m)
{
    for (size_t i = 0; i < tl_g.nsnapshots; i++) {
        const tl_snapshot *s = &tl_g.snapshots[i];
        double ts = us(s->ticks, m);
        event_head(j, "i", "memory", s->label, s->tid, ts);
        tl_json_kv_string(j, "s", "p");
        tl_json_key(j, "args");
        tl_json_object_begin(j);
        tl_json_kv_double(j, "rss_bytes", s->mem.rss);
        tl_json_kv_double(j, "peak_rss_bytes", s->mem.peak_rss);
        for (int r = 0; r < s->mem.nreadings; r++)
            tl_json_kv_double(j, s->mem.readings[r].key, s->mem.readings[r].value);
        tl_json_object_end(j);
        tl_json_object_end(j);

        event_head(j, "C", "memory", "memory", s->tid, ts);
        tl_json_key(j, "args");
        tl_json_object_begin(j);
        tl_json_kv_double(j, "rss_bytes", s->mem.rss);
        tl_json_kv_double(j, "peak_rss_bytes", s->mem.peak_rss);
        tl_json_object_end(j);
        tl_json_object_end(j);
    }
}

static void write_instants(tl_json *j, const tl_merged *m)
{
    for (size_t i = 0; i < tl_g.ninstants; i++) {
        const tl_instant *e = &tl_g.instants[i];
        event_head(j, "i", "event", e->name, e->tid, us(e->ticks, m));
        tl_json_kv_string(j, "s", "t");
        tl_json_key(j, "args");
        tl_json_raw(j, e->args);
        tl_json_object_end(j);
    }
}

/* One counter ("C") event of the sampler (tid 0) with one or two values (k2 NULL: one). */
static void sampler_counter(tl_json *j, const char *name, double ts, const char *k1, double v1, const char *k2,
                            double v2)
{
    event_head(j, "C", "sampler", name, 0, ts);
    tl_json_key(j, "args");
    tl_json_object_begin(j);
    tl_json_kv_double(j, k1, v1);
    if (k2 != NULL)
        tl_json_kv_double(j, k2, v2);
    tl_json_object_end(j);
    tl_json_object_end(j);
}

static void write_sampler(tl_json *j, const tl_merged *m)
{
    tl_sample_point *pts;
    uint64_t dropped;
    size_t n = tl_sampler_points(&pts, &dropped);
    for (size_t i = 0; i < n; i++) {
        const tl_sample_point *p = &pts[i];
        double ts = us(p->ticks, m);
        if (p->has & TL_SAMPLE_CPU)
            sampler_counter(j, "cpu_pct", ts, "cpu_pct", round(p->cpu_pct * 100) / 100, NULL, 0);
        if (p->has & TL_SAMPLE_MEMORY)
            sampler_counter(j, "memory_bytes", ts, "rss", p->rss, "system_available", p->sys_available);
        if (p->has & TL_SAMPLE_LOAD)
            sampler_counter(j, "load1", ts, "load1", p->load1, NULL, 0);
        if (p->has & TL_SAMPLE_DISK)
            sampler_counter(j, "disk_bytes_per_s", ts, "read", round(p->disk_read_bps), "write",
                            round(p->disk_write_bps));
        if (p->has_device)
            sampler_counter(j, "device_bytes_per_s", ts, "read", round(p->dev_read_bps), "write",
                            round(p->dev_write_bps));
        for (int g = 0; g < p->ngpus; g++) {
            char name[32];
            const tl_gpu_reading *gr = &p->gpus[g];
            if (!gr->has_mem && !gr->has_util && !gr->has_temp && !gr->has_power)
                continue; /* nothing NVML said was possible (nvml.c) */
            snprintf(name, sizeof name, "gpu%d", p->gpus[g].index);
            event_head(j, "C", "sampler", name, 0, ts);
            tl_json_key(j, "args");
            tl_json_object_begin(j);
            if (p->gpus[g].has_mem)
                tl_json_kv_double(j, "memory_used_bytes", p->gpus[g].mem_used);
            if (p->gpus[g].has_proc) /* this process's own, beside the device-wide figure */
                tl_json_kv_double(j, "process_memory_used_bytes", p->gpus[g].proc_used);
            if (p->gpus[g].has_util)
                tl_json_kv_double(j, "utilization_pct", p->gpus[g].util_gpu);
            if (p->gpus[g].has_temp)
                tl_json_kv_double(j, "temperature_c", p->gpus[g].temperature_c);
            if (p->gpus[g].has_power)
                tl_json_kv_double(j, "power_w", p->gpus[g].power_w);
            if (p->gpus[g].has_clocks) {
                tl_json_kv_double(j, "sm_clock_mhz", p->gpus[g].sm_clock);
                tl_json_kv_double(j, "memory_clock_mhz", p->gpus[g].mem_clock);
            }
            tl_json_object_end(j);
            tl_json_object_end(j);
        }
    }
    free(pts);
}

static void read_comm(int tid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) != NULL)
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* Take a consistent view of every thread's chunk list. */
static thread_view *snapshot_threads(int *n)
{
    int cap = 0;
    *n = 0;
    pthread_mutex_lock(&tl_g.lock);
    for (tl_thread *t = tl_g.threads; t; t = t->next)
        cap++;
    thread_view *v = calloc(cap ? (size_t)cap : 1, sizeof *v);
    for (tl_thread *t = tl_g.threads; v && t; t = t->next) {
        thread_view *x = &v[(*n)++];
        if (!tl_thread_lock_for_write(t)) { /* interrupted by the signal: left out */
            x->tid = t->tid;
            continue;
        }
        x->tid = t->tid;
        x->head = t->chunks_head;
        x->tail = t->chunks_tail;
        /* the owner appends without the flag: what it published (thread.c) */
        x->tail_used = t->chunks_tail ? __atomic_load_n(&t->chunks_tail->used, __ATOMIC_ACQUIRE) : 0;
        if (t->retired)
            memcpy(x->name, t->name, sizeof x->name);
        tl_thread_unlock(t);
        if (!x->name[0])
            read_comm(x->tid, x->name, sizeof x->name);
    }
    pthread_mutex_unlock(&tl_g.lock);
    return v;
}

int tl_trace_write(tl_json *j, const tl_merged *m)
{
    int n;
    thread_view *threads = snapshot_threads(&n);
    if (threads == NULL)
        return -1;
    char label[300];
    snprintf(label, sizeof label, "rank %d (%s)", tl_g.rank.rank, tl_g.name);

    tl_json_object_begin(j);
    tl_json_kv_int(j, "schemaVersion", 1);
    tl_json_kv_string(j, "displayTimeUnit", "ms");
    tl_json_key(j, "distributedInfo");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "backend", "tally");
    tl_json_kv_int(j, "rank", tl_g.rank.rank);
    tl_json_kv_int(j, "world_size", tl_g.rank.world_size > 0 ? tl_g.rank.world_size : 1);
    tl_json_object_end(j);
    tl_json_kv_int(j, "baseTimeNanoseconds", tl_g.start_realtime_ns);
    tl_json_key(j, "otherData");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "producer", "libtally " TALLY_VERSION_STRING);
    tl_json_kv_string(j, "name", tl_g.name);
    tl_json_kv_string(j, "rank_source", tl_g.rank.source);
    tl_json_kv_string(j, "clock", tl_clock_source());
    tl_json_kv_uint(j, "events_dropped", m->dropped);
    tl_json_object_end(j);

    tl_json_key(j, "traceEvents");
    tl_json_array_begin(j);
    metadata(j, "process_name", 0, "name", label, 0);
    metadata(j, "process_labels", 0, "labels", label, 0);
    metadata(j, "process_sort_index", 0, "sort_index", NULL, tl_g.rank.rank);
    for (int i = 0; i < n; i++) {
        metadata(j, "thread_name", threads[i].tid, "name", threads[i].name[0] ? threads[i].name : "thread", 0);
        /* The first thread to record (usually the main one) sorts first. */
        metadata(j, "thread_sort_index", threads[i].tid, "sort_index", NULL, n - i);
    }
    /* Sampler counters use tid 0; name it so every tid has a name. */
    metadata(j, "thread_name", 0, "name", "process", 0);
    pthread_mutex_lock(&tl_g.lock);
    write_snapshots(j, m);
    write_instants(j, m);
    tl_blocks_write_trace(j, m->ns_per_tick, tl_g.pid);
    tl_sargs_view sargs;
    (void)tl_sargs_snapshot(&sargs); /* out of memory: the metadata as instants only */
    pthread_mutex_unlock(&tl_g.lock);
    write_sampler(j, m);
    name_cache names = { calloc(m->nnames ? m->nnames : 1, sizeof(char *)),
                         calloc(m->nnames ? m->nnames : 1, sizeof(size_t)), m->nnames };
    if (names.lit == NULL || names.len == NULL)
        names.n = 0;
    prefix_slot *prefixes = malloc(TL_PREFIX_SLOTS * sizeof *prefixes); /* NULL: the slow path */
    for (int i = n - 1; i >= 0; i--)
        write_thread_events(j, &threads[i], m, &names, prefixes, &sargs);
    free(prefixes);
    tl_sargs_write_unwritten(j, &sargs, m->ns_per_tick, tl_g.pid);
    free(sargs.refs);
    for (uint32_t i = 0; i < names.n; i++)
        free(names.lit[i]);
    free(names.lit);
    free(names.len);
    tl_json_array_end(j);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
    free(threads);
    return 0;
}
