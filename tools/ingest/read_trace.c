/*
 * read_trace.c - a Chrome / PyTorch profiler (Kineto) / libtally trace into a
 * per-rank profile, one event at a time from trace_stream.
 *
 * What each phase becomes:
 *   X        statistics per (category, name); GPU events (kernel, memcpy,
 *            memset, and sync events that carry a stream) also become GPU
 *            intervals; ProfilerStep#N on the CPU side becomes a step.
 *   B/E      matched per (pid, tid) into durations, then as X.
 *   i/I      Kineto's "[memory]" instants become memory points
 *            ("Total Allocated", "Total Reserved", "Device Id").
 *   C        every numeric arg becomes a counter "name.key".
 *   others   counted by phase; unknown phases are counted as such.
 * Runtime launches (cuda_runtime / cuda_driver / Runtime with a "correlation")
 * are kept by correlation id (kernel_ops.h) so each GPU event learns when it
 * was launched (the idle breakdown's host_wait needs it) and each kernel which
 * operator launched it.
 */
#include "read_trace.h"
#include "nesting.h"
#include "mem_ops.h"
#include "shape_table.h"
#include "session.h"
#include "kernel_ops.h"
#include "array.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- B/E matching -------------------------------------------------------- */

typedef struct open_slice {
    int64_t pid, tid, ts;
    uint32_t cat, name; /* strtab ids */
} open_slice;

typedef struct be_stack {
    open_slice *v;
    size_t n, cap;
    uint64_t unmatched_ends;
} be_stack;

/* ---- the reader --------------------------------------------------------- */

#define READER_PIDS 8

/* A category seen recently, with its ids (cat_count_id: in p->cats, looked up
 * on first use). */
typedef struct cat_entry {
    char cat[64];
    size_t len; /* SIZE_MAX: never matches (a category too long to keep) */
    uint32_t id, count_id;
    int cls;
} cat_entry;

#define CAT_CACHE 8  /* categories kept: Kineto interleaves a handful */
#define CAT_SLOTS 64 /* a category's likely place in cats[], by cat_hash */
#define STAT_CACHE_BITS 12
#define STAT_CACHE (1u << STAT_CACHE_BITS) /* (category, name) -> statistics, direct-mapped */

/* Where the statistics of a (category, name) are, found by a hash of the name's
 * first and last bytes; checked against the interned name before use. */
typedef struct stat_entry {
    uint64_t key;
    uint32_t idx;  /* in p->stats, + 1; 0: empty */
    uint32_t name; /* the stat's name id when cached, and its length */
    size_t len;
} stat_entry;

typedef struct reader {
    tl_profile *p;
    tl_nest nest;
    tl_kops kops; /* operators and launches: each GPU event's launch time and kernel's operator */
    be_stack be;
    char *scratch; /* unescaped strings */
    size_t scratch_cap;
    int kineto_hint;
    uint64_t launches_lost; /* runtime calls not kept for want of memory */
    /* The categories seen last: events come in runs of a few interleaved
     * categories, so their ids are looked up once, not once per event. */
    cat_entry cats[CAT_CACHE], spill;
    cat_entry *cat;       /* the current event's */
    const char *cat_text; /* the text r->cat was last found for, within this event */
    size_t cat_text_len;
    int ncats, cat_next;
    unsigned char cat_slot[CAT_SLOTS]; /* cat_hash -> index + 1 into cats (0: none); checked on use */
    stat_entry stat_cache[STAT_CACHE];
    /* CPU-side events per pid (the first READER_PIDS pids seen): the trace's
     * process is the pid of most of them (run identity). */
    int64_t pids[READER_PIDS];
    uint64_t pid_events[READER_PIDS];
    int npids, pid_slot;
    /* Events of a timed phase (X, B, E, C, i) without "ts": malformed,
     * counted and said once with the first (they were dropped silently). */
    uint64_t no_ts, no_ts_offset;
    char no_ts_phase;
    char no_ts_name[81];
    /* Iterations (category iteration: libtally's loops) with their times:
     * the steps of a trace without ProfilerStep#N (steps_from_iterations). */
    struct iter_ev {
        uint32_t name;
        int64_t ts, dur;
    } * iters;
    size_t niters, iters_cap;
} reader;

/* Iterations kept per trace for its steps; beyond, the steps are the first
 * ones and the profile says so. */
#define READER_MAX_ITERS (1u << 18)

/* A string view as plain text: the bytes themselves when there is no escape,
 * else decoded into the scratch buffer (valid until the next call). */
static const char *text_unescaped(reader *r, tl_view v, size_t *len);

static inline const char *text_of(reader *r, tl_view v, int plain, size_t *len)
{
    if (v.ptr == NULL) {
        *len = 0;
        return "";
    }
    if (plain || memchr(v.ptr, '\\', v.len) == NULL) {
        *len = v.len;
        return v.ptr;
    }
    return text_unescaped(r, v, len);
}

/* text_of() for a view with a backslash. */
static const char *text_unescaped(reader *r, tl_view v, size_t *len)
{
    size_t need = tl_view_unescape(v, r->scratch, r->scratch_cap);
    if (need + 1 > r->scratch_cap) {
        char *s = realloc(r->scratch, need + 1);
        if (s == NULL) {
            *len = v.len;
            return v.ptr;
        }
        r->scratch = s;
        r->scratch_cap = need + 1;
        need = tl_view_unescape(v, r->scratch, r->scratch_cap);
    }
    /* "\u0000" decodes to a NUL byte, and every name is used as a C string
     * further on: "a\u0000b" would become "a" and merge with it. Keep such
     * names distinct and visible by writing the NUL as the escape itself. */
    size_t nuls = 0;
    for (const char *z = memchr(r->scratch, 0, need); z != NULL;
         z = memchr(z + 1, 0, need - (size_t)(z + 1 - r->scratch)))
        nuls++;
    if (nuls > 0) {
        size_t wide = need + 5 * nuls;
        if (wide + 1 > r->scratch_cap) {
            char *s = realloc(r->scratch, wide + 1);
            if (s == NULL) {
                *len = v.len;
                return v.ptr;
            }
            r->scratch = s;
            r->scratch_cap = wide + 1;
        }
        for (size_t i = need, o = wide; i-- > 0;) {
            if (r->scratch[i] != '\0') {
                r->scratch[--o] = r->scratch[i];
                continue;
            }
            o -= 6;
            memcpy(r->scratch + o, "\\u0000", 6);
        }
        need = wide;
        r->scratch[need] = '\0';
    }
    *len = need;
    return r->scratch;
}

/* Host calls that return only when the GPU is done: when one covers GPU idle
 * time, the host was blocked, not slow to launch. Exact names, with the
 * driver API's _v2 variants. The asynchronous copies are here too: with
 * pageable host memory they block until the copy is done (HTA's
 * negative_queue trace: a cudaMemcpyAsync to pageable memory held the host
 * 140 ms a step, 71 % of the GPU idle time), and with pinned memory they
 * return in microseconds and cover next to no idle time, which is what the
 * rule measures. */
static int is_blocking_call(const char *name, size_t len)
{
    static const char *const names[] = {
        "cudaMemcpy",
        "cudaMemcpy2D",
        "cudaMemcpy3D",
        "cudaMemcpyFromSymbol",
        "cudaMemcpyToSymbol",
        "cudaMemcpyAsync",
        "cudaMemcpy2DAsync",
        "cudaMemcpy3DAsync",
        "cuMemcpyAsync",
        "cuMemcpyDtoHAsync",
        "cuMemcpyHtoDAsync",
        "hipMemcpyAsync",
        "hipMemcpyDtoHAsync",
        "hipMemcpyHtoDAsync",
        "cudaStreamSynchronize",
        "cudaDeviceSynchronize",
        "cudaEventSynchronize",
        "cudaThreadSynchronize",
        "cuMemcpy",
        "cuMemcpyDtoH",
        "cuMemcpyHtoD",
        "cuMemcpyDtoD",
        "cuStreamSynchronize",
        "cuCtxSynchronize",
        "cuEventSynchronize",
        "hipMemcpy",
        "hipMemcpyWithStream",
        "hipMemcpyDtoH",
        "hipMemcpyHtoD",
        "hipMemcpy2D",
        "hipStreamSynchronize",
        "hipDeviceSynchronize",
        "hipEventSynchronize",
    };
    if (len > 3 && memcmp(name + len - 3, "_v2", 3) == 0)
        len -= 3;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return 1;
    return 0;
}

/* A CUDA/HIP graph launched, replayed or captured: launch overhead is
 * already amortized (captures are replayed later in the same program). */
/* Capturing a graph (its kernels are recorded, not run: a capture-only
 * trace has launches whose kernels never ran there). */
static int is_graph_capture(const char *name, size_t len)
{
    static const char *const names[] = { "cudaStreamBeginCapture", "hipStreamBeginCapture", "cuStreamBeginCapture",
                                         "cudaGraphInstantiate",   "hipGraphInstantiate",   "cuGraphInstantiate" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (len >= n && memcmp(names[i], name, n) == 0)
            return 1;
    }
    return 0;
}

static int is_graph_launch(const char *name, size_t len)
{
    static const char *const names[] = { "cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (len >= n && memcmp(names[i], name, n) == 0)
            return 1;
    }
    return 0;
}

/* Which events nest with which (nesting.h): operators with operators,
 * annotations and sections with each other, runtime calls, Python frames. */
static int nest_class(int cc)
{
    switch (cc) {
    case TL_CC_CPU_OP:
        return 1;
    case TL_CC_USER_ANNOTATION:
    case TL_CC_SECTION:
    case TL_CC_ITERATION:
        return 2;
    case TL_CC_RUNTIME:
    case TL_CC_DRIVER:
        return 3;
    case TL_CC_PYTHON:
        return 4;
    case TL_CC_GPU_ANNOTATION:
        return 5;
    default:
        return 0;
    }
}

static int is_gpu_class(int cc)
{
    return cc == TL_CC_KERNEL || cc == TL_CC_MEMCPY || cc == TL_CC_MEMSET || cc == TL_CC_SYNC;
}

/* A cuda_sync event runs on a GPU stream when it names one (HTA): "Stream
 * Wait Event" waits on a stream; "Event Sync" and "Context Sync" carry
 * stream -1 and are the host waiting (docs/analysis.md, GPU events). */
static int sync_on_stream(const tl_trace_event *ev)
{
    return ev->has_stream && ev->stream != -1;
}

/* "ProfilerStep#12" -> 12 */
static int profiler_step(const char *name, size_t len, int64_t *n)
{
    static const char prefix[] = "ProfilerStep#";
    size_t pl = sizeof prefix - 1;
    if (len <= pl || memcmp(name, prefix, pl) != 0)
        return 0;
    int64_t v = 0;
    for (size_t i = pl; i < len; i++) {
        if (name[i] < '0' || name[i] > '9' || v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (name[i] - '0');
    }
    *n = v;
    return 1;
}

static int find_category(reader *r, const char *cat, size_t cat_len);

/* a[0..n) == b[0..n), both readable for n bytes. Categories are short ("kernel",
 * "cuda_runtime", "ac2g"): up to 16 bytes, two overlapping loads a side instead of a call to
 * memcmp; every byte is compared, none read past n. */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8);
        memcpy(&b0, b, 8);
        memcpy(&a1, a + n - 8, 8);
        memcpy(&b1, b + n - 8, 8);
        return a0 == b0 && a1 == b1;
    }
    if (n >= 4 && n < 8) {
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4);
        memcpy(&b0, b, 4);
        memcpy(&a1, a + n - 4, 4);
        memcpy(&b1, b + n - 4, 4);
        return a0 == b0 && a1 == b1;
    }
    return memcmp(a, b, n) == 0;
}

/* Make r->cat the category cat; 0 on success. */
static inline int use_category(reader *r, const char *cat, size_t cat_len)
{
    if (cat == r->cat_text && cat_len == r->cat_text_len && r->cat != NULL)
        return 0; /* the same bytes, asked again for the same event */
    return find_category(r, cat, cat_len);
}

/* Where to look first for a category in cats[]: its length and first and last bytes. */
static inline unsigned cat_hash(const char *cat, size_t len)
{
    return len ? (unsigned)(len * 7 + (unsigned char)cat[0] + 3u * (unsigned char)cat[len - 1]) % CAT_SLOTS : 0;
}

static int find_category(reader *r, const char *cat, size_t cat_len)
{
    unsigned h = cat_hash(cat, cat_len), k = r->cat_slot[h];

    r->cat_text = cat;
    r->cat_text_len = cat_len;
    if (r->cat != NULL && cat_len == r->cat->len && same_bytes(cat, r->cat->cat, cat_len))
        return 0;
    /* Kineto interleaves kernels, launches and flows event by event: the slot finds the one
     * kept without a scan (a slot whose entry was replaced since just fails the compare) */
    if (k != 0 && cat_len == r->cats[k - 1].len && same_bytes(cat, r->cats[k - 1].cat, cat_len)) {
        r->cat = &r->cats[k - 1];
        return 0;
    }
    for (int i = 0; i < r->ncats; i++)
        if (cat_len == r->cats[i].len && same_bytes(cat, r->cats[i].cat, cat_len)) {
            r->cat = &r->cats[i];
            r->cat_slot[h] = (unsigned char)(i + 1);
            return 0;
        }
    uint32_t id = tl_strtab_intern(&r->p->strs, cat, cat_len);
    if (id == UINT32_MAX) {
        r->cat_text = NULL;
        return -1;
    }
    cat_entry *e = &r->spill; /* longer ones are looked up each time */
    if (cat_len <= sizeof e->cat) {
        e = &r->cats[r->cat_next];
        r->cat_slot[h] = (unsigned char)(r->cat_next + 1);
        r->cat_next = (r->cat_next + 1) % CAT_CACHE;
        if (r->ncats < CAT_CACHE)
            r->ncats++;
        memcpy(e->cat, cat, cat_len);
        e->len = cat_len;
    } else {
        e->len = SIZE_MAX;
    }
    e->id = id;
    /* The categories seen (p->cats) are only the ones events carry: an event
     * without "cat" is read as category "" but not counted as one, so
     * p->cats and p->cat_counts stay the same length (inspect reads both). */
    e->count_id = UINT32_MAX;
    e->cls = tl_cat_class_of(cat, cat_len);
    r->cat = e;
    return 0;
}

/* One CPU-side event of ev->pid: events come in long runs of one pid, so the
 * slot of the last one is checked first. */
static void count_pid(reader *r, const tl_trace_event *ev)
{
    if (!ev->pid_int)
        return;
    if (r->npids > 0 && r->pids[r->pid_slot] == ev->pid) {
        r->pid_events[r->pid_slot]++;
        return;
    }
    for (int i = 0; i < r->npids; i++) {
        if (r->pids[i] == ev->pid) {
            r->pid_events[r->pid_slot = i]++;
            return;
        }
    }
    if (r->npids < READER_PIDS) {
        r->pid_slot = r->npids++;
        r->pids[r->pid_slot] = ev->pid;
        r->pid_events[r->pid_slot] = 1;
    }
}

static void take_pid(tl_profile *p, const reader *r)
{
    int best = -1;
    for (int i = 0; i < r->npids; i++)
        if (best < 0 || r->pid_events[i] > r->pid_events[best])
            best = i;
    if (best >= 0)
        p->pid = r->pids[best];
}

/* The statistics of (r->cat, name): tl_profile_stat_cat() behind a small cache,
 * so that a name seen before costs a hash of 16 bytes and one compare, not a
 * hash of the whole name and two table probes (kernel names run to a thousand
 * bytes). Not used once the names budget closed the table. */
static tl_name_stat *stat_of(reader *r, const char *name, size_t len)
{
    tl_profile *p = r->p;
    uint32_t cat = r->cat->id;
    uint64_t a = 0, b = 0, h;
    if (p->names_closed)
        return tl_profile_stat_cat(p, cat, r->cat->cls, name, len);
    if (len >= 8) {
        memcpy(&a, name, 8);
        memcpy(&b, name + len - 8, 8);
    } else if (len >= 4) {
        uint32_t x, y;
        memcpy(&x, name, 4);
        memcpy(&y, name + len - 4, 4);
        a = x | (uint64_t)y << 32;
    } else if (len > 0) {
        a = (uint64_t)(unsigned char)name[0] | (uint64_t)(unsigned char)name[len / 2] << 8 |
            (uint64_t)(unsigned char)name[len - 1] << 16;
    }
    h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ ((uint64_t)len << 32 | cat);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    stat_entry *e = &r->stat_cache[h >> (64 - STAT_CACHE_BITS)];
    if (e->key == h && e->len == len && e->idx != 0 && e->idx <= p->nstats) {
        tl_name_stat *s = &p->stats[e->idx - 1];
        if (s->cat == cat && s->name == e->name && memcmp(tl_strtab_get(&p->strs, s->name), name, len) == 0)
            return s;
    }
    tl_name_stat *s = tl_profile_stat_cat(p, cat, r->cat->cls, name, len);
    if (s != NULL && !p->names_closed) {
        e->key = h;
        e->len = len;
        e->idx = (uint32_t)(s - p->stats) + 1;
        e->name = s->name;
    }
    return s;
}

/* An asynchronous copy (blocking only with pageable memory), and how long
 * one must take to count as having blocked. */
#define TL_ASYNC_BLOCKED_NS 50000
static int is_async_copy(const char *name, size_t len)
{
    for (size_t i = 0; i + 5 <= len; i++)
        if (memcmp(name + i, "Async", 5) == 0)
            return 1;
    return 0;
}

/* What a host call is (is_blocking_call, is_graph_launch), worked out once per
 * name: bit 0 known, bit 1 blocking, bit 2 graph launch, bit 3 an
 * asynchronous copy, bit 7 a graph capture (bits 4-6: coll_side's). */
static unsigned host_call_flags(tl_profile *p, tl_name_stat *s, const char *name, size_t len)
{
    unsigned f = s->host_flags;
    if (!(f & 1) || p->names_closed) { /* a folded name's pool has many names */
        f = 1 | (is_blocking_call(name, len) ? 2u : 0u) | (is_graph_launch(name, len) ? 4u : 0u) |
            (is_async_copy(name, len) ? 8u : 0u) | (is_graph_capture(name, len) ? 128u : 0u);
        if (!p->names_closed)
            s->host_flags = (uint8_t)(f | (s->host_flags & 0x70u)); /* bits 4-6: coll_side's */
    }
    return f;
}

/* An accelerator's device events that the GPU analysis does not read (it
 * reads CUDA and ROCm streams: kernel, gpu_memcpy, ...): noted (run.c), or a
 * trace of a busy MTIA device reads "no GPU events" and "no problem found"
 * (HTA's MTIA trace: 25 814 mtia_ccp_events). Not a warning: the file is
 * fine (validate and --strict pass it). */
static void note_unread_devices(tl_profile *p)
{
    for (uint32_t c = 0; c < p->cats.n && c < p->cat_counts_cap; c++) {
        const char *cat = p->cats.strs[c];
        if (strncmp(cat, "mtia_", 5) == 0 && strcmp(cat, "mtia_runtime") != 0 &&
            p->cat_counts[c] > p->unread_device_events) {
            p->unread_device_events = p->cat_counts[c];
            snprintf(p->unread_device_cat, sizeof p->unread_device_cat, "%s", cat);
        }
    }
}

/* A collective's args (Kineto): its sequence number in its process group,
 * the group, and its size ("In msg nelems", else the elements of the first
 * "Input Dims" entry), its element size ("dtype", else the first "Input
 * type") and "Group size". Read only for collectives: a few per step. */
static void coll_args(reader *r, const tl_trace_event *ev, tl_prof_coll *c)
{
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next(&it, &k, &v)) {
        if (tl_view_eq(k, "Seq") && v.is_number && v.number >= 0 && v.number < 9e15)
            c->seq = (int64_t)v.number;
        else if (tl_view_eq(k, "In msg nelems") && v.is_number && v.number >= 0 && v.number < 9e15)
            c->nelems = (int64_t)v.number;
        else if (tl_view_eq(k, "Process Group Name") && v.kind == TL_JSON_STRING && v.text.len > 0) {
            char g[128];
            size_t n = tl_view_unescape(v.text, g, sizeof g);
            c->group = tl_strtab_intern(&r->p->strs, g, n);
        } else if (tl_view_eq(k, "dtype") && v.kind == TL_JSON_STRING) {
            char t[32];
            size_t n = tl_view_unescape(v.text, t, sizeof t);
            int b = tl_dtype_bytes(t, n);
            if (b > 0)
                c->elem_bytes = (int8_t)b;
        } else if (tl_view_eq(k, "Input type") && c->elem_bytes < 0 && v.text.len > 2) {
            /* ["float"] or ["TensorList", ...]: the first entry's */
            const char *q = memchr(v.text.ptr, '"', v.text.len);
            const char *e = q != NULL ? memchr(q + 1, '"', (size_t)(v.text.ptr + v.text.len - q - 1)) : NULL;
            int b = e != NULL ? tl_dtype_bytes(q + 1, (size_t)(e - q - 1)) : -1;
            if (b > 0)
                c->elem_bytes = (int8_t)b;
        } else if (tl_view_eq(k, "Group size") && v.is_number && v.number >= 1 && v.number <= 1e8) {
            c->group_size = (int32_t)v.number;
        } else if (tl_view_eq(k, "Input Dims") && c->nelems < 0 && v.text.len > 2) {
            /* [[1059850]] or [[4, 256], [...]]: the product of the first list */
            const char *q = v.text.ptr, *end = q + v.text.len;
            while (q < end && (*q == '[' || *q == ' '))
                q++;
            double prod = 1;
            int any = 0;
            while (q < end && *q != ']') {
                char *after;
                double d = strtod(q, &after);
                if (after == q)
                    break;
                prod *= d;
                any = 1;
                q = after;
                while (q < end && (*q == ',' || *q == ' '))
                    q++;
            }
            if (any && prod >= 0 && prod < 9e15)
                c->nelems = (int64_t)prod;
        }
    }
}

static void add_coll(reader *r, const tl_trace_event *ev, uint32_t name, int side, int64_t ts, int64_t dur)
{
    tl_prof_coll c = { .ts_ns = ts,
                       .dur_ns = dur,
                       .seq = -1,
                       .nelems = -1,
                       .name = name,
                       .group = UINT32_MAX,
                       .side = (uint8_t)side,
                       .elem_bytes = -1,
                       .group_size = -1 };
    coll_args(r, ev, &c);
    tl_profile_add_coll(r->p, &c);
}

/* The keys shape_args() reads (tl_args_next_picked: 0 for the others). */
enum { SK_OTHER, SK_EXT, SK_DIMS, SK_TYPES, SK_FLOPS };

static int shape_key(tl_view k)
{
    if (tl_view_eq(k, "External id"))
        return SK_EXT;
    if (tl_view_eq(k, "Input Dims"))
        return SK_DIMS;
    if (tl_view_eq(k, "Input type"))
        return SK_TYPES;
    return tl_view_eq(k, "flops") ? SK_FLOPS : SK_OTHER;
}

/* An operator's shapes (record_shapes: "Input Dims", "Input type") and the
 * profiler's "flops" (with_flops), added to the profile's shape table
 * (shape_table.h). Operators without "Input Dims" are not in it. */
static void shape_args(reader *r, const tl_trace_event *ev, const char *name, size_t name_len, int64_t dur)
{
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    tl_view dims = { NULL, 0 }, types = { NULL, 0 };
    double flops = NAN;
    int64_t ext = -1;
    int key;
    /* most operators of most traces have no shapes: one scan says so */
    if (!tl_view_contains(ev->args, "\"Input Dims\"", 12)) {
        /* In a trace with shapes, such an operator's kernels have nothing to
         * link to: the table notes its id so that they are not kept. */
        if (r->p->shapes == NULL)
            return;
        tl_args_iter_init_event(&it, ev);
        while (tl_args_next_picked(&it, shape_key, &key, &k, &v))
            if (key == SK_EXT && v.is_number && v.number >= 0 && v.number < 9e15) {
                tl_shape_table_op_no_shapes(r->p->shapes, (int64_t)v.number);
                break;
            }
        return;
    }
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next_picked(&it, shape_key, &key, &k, &v)) {
        if (key == SK_EXT && v.is_number && v.number >= 0 && v.number < 9e15)
            ext = (int64_t)v.number;
        else if (key == SK_DIMS && v.kind == TL_JSON_ARRAY)
            dims = v.text;
        else if (key == SK_TYPES && v.kind == TL_JSON_ARRAY)
            types = v.text;
        else if (key == SK_FLOPS && v.is_number)
            flops = v.number;
    }
    if (dims.ptr == NULL)
        return;
    tl_profile *p = r->p;
    if (p->shapes == NULL) {
        if ((p->shapes = malloc(sizeof *p->shapes)) == NULL)
            return;
        tl_shape_table_init(p->shapes);
    }
    tl_shape_table_add(p->shapes, name, name_len, dims.ptr, dims.len, types.ptr ? types.ptr : "", types.len, dur, flops,
                       ext);
}

/* A kernel, copy or set of a trace with shapes: its time goes to the operator that
 * launched it ("External id"), linked after reading (tl_shape_table_link). */
static void shape_kernel(reader *r, const tl_trace_event *ev, int64_t dur)
{
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    if (!tl_view_contains(ev->args, "\"External id\"", 13))
        return;
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next(&it, &k, &v))
        if (tl_view_eq(k, "External id") && v.is_number && v.number >= 0 && v.number < 9e15) {
            tl_shape_table_kernel(r->p->shapes, (int64_t)v.number, dur);
            return;
        }
}

/* The collective side of a CPU range's name (tl_coll_side_of_name), cached
 * in its statistic's host_flags (bit 4: known; bits 5-6: side + 1). */
static int coll_side(tl_profile *p, tl_name_stat *s, const char *name, size_t len)
{
    if ((s->host_flags & 16) && !p->names_closed)
        return ((s->host_flags >> 5) & 3) - 1;
    int side = tl_coll_side_of_name(name, len);
    if (!p->names_closed)
        s->host_flags = (uint8_t)(s->host_flags | 16 | ((side + 1) << 5));
    return side;
}

/* The host role of a CPU-side event for the per-step categories (profile.h's
 * tl_host_role), or -1: annotations, iterations and GPU annotations label
 * other work. Cached in the statistic (role), unless the names table closed
 * (a folded statistic stands for many names). */
static int host_role(tl_profile *p, tl_name_stat *s, const char *name, size_t len)
{
    if (s->role && !p->names_closed)
        return s->role - 2;
    int cc = s->cat_class, role = -1;
    if (cc == TL_CC_RUNTIME || cc == TL_CC_DRIVER) {
        role = TL_ROLE_RUNTIME;
    } else if (cc == TL_CC_CPU_OP || cc == TL_CC_PYTHON || cc == TL_CC_OTHER || cc == TL_CC_SECTION ||
               cc == TL_CC_USER_ANNOTATION) {
        char buf[256];
        size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
        memcpy(buf, name, n);
        buf[n] = 0;
        if (tl_is_data_loading(buf))
            role = TL_ROLE_DATA;
        else if (cc == TL_CC_OTHER)
            role = TL_ROLE_PLAIN;
        else if (cc != TL_CC_USER_ANNOTATION)
            role = TL_ROLE_CPU;
    }
    if (!p->names_closed)
        s->role = (uint8_t)(role + 2);
    return role;
}

static void add_role(reader *r, tl_name_stat *s, const char *name, size_t len, int64_t ts, int64_t dur)
{
    int role = host_role(r->p, s, name, len);
    if (role >= 0 && dur > 0)
        tl_ranges_add(&r->p->roles[role], ts, tl_ns_add(ts, dur));
}

static void keep_iteration(reader *r, uint32_t name, int64_t ts, int64_t dur)
{
    if (r->niters == READER_MAX_ITERS) {
        r->niters++; /* one past: said once at the end */
        return;
    }
    if (r->niters > READER_MAX_ITERS || tl_array_grow(&r->iters, r->niters, &r->iters_cap, sizeof *r->iters, 64) != 0)
        return;
    r->iters[r->niters++] = (struct iter_ev){ name, ts, dur };
}

static int iter_by_ts(const void *x, const void *y)
{
    const struct iter_ev *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* A trace without ProfilerStep#N ranges whose loop's iterations have times
 * (libtally's: category iteration) takes them as its steps, numbered from 0
 * in time order like the report's steps, so the steps have their real start
 * times (step markers, step time by category: docs/analysis.md, "Steps").
 * The loop is the iteration name with the most time, as a report's. */
static void steps_from_iterations(reader *r)
{
    tl_profile *p = r->p;
    size_t n = r->niters > READER_MAX_ITERS ? READER_MAX_ITERS : r->niters;
    if (p->nsteps > 0 || n == 0)
        return;
    /* the names' totals: a trace has a few loops (a report's iterations), 64 at most looked at */
    struct {
        uint32_t name;
        int64_t total;
    } tot[64];
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < nt && tot[k].name != r->iters[i].name)
            k++;
        if (k == nt) {
            if (nt == sizeof tot / sizeof tot[0])
                continue;
            tot[nt++].name = r->iters[i].name;
            tot[k].total = 0;
        }
        tot[k].total = tl_ns_add(tot[k].total, r->iters[i].dur);
    }
    uint32_t loop = tot[0].name;
    for (size_t k = 1; k < nt; k++)
        if (tot[k].total > tot[0].total) {
            tot[0] = tot[k];
            loop = tot[k].name;
        }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (r->iters[i].name == loop)
            r->iters[m++] = r->iters[i];
    qsort(r->iters, m, sizeof *r->iters, iter_by_ts);
    p->steps_from_loop = 1;
    for (size_t i = 0; i < m; i++)
        if (tl_profile_add_step(p, (int64_t)i, r->iters[i].ts, r->iters[i].dur) != 0)
            break;
    if (r->niters > READER_MAX_ITERS)
        tl_profile_warn(p, "more than %u iterations: the steps are the first ones", READER_MAX_ITERS);
}

static void complete_event(reader *r, const char *cat, size_t cat_len, const char *name, size_t name_len,
                           const tl_trace_event *ev, int64_t ts, int64_t dur)
{
    tl_profile *p = r->p;
    if (use_category(r, cat, cat_len) != 0)
        return;
    tl_name_stat *s = stat_of(r, name, name_len);
    if (s == NULL)
        return;
    if (dur < 0) {
        tl_profile_warn_at(p, (int64_t)ev->offset,
                           "offset %" PRIu64 ": event \"%.*s\" has a negative duration; counted as 0", ev->offset,
                           (int)(name_len > 80 ? 80 : name_len), name);
        dur = 0;
    }
    tl_dur_stat_add(&s->d, (uint64_t)dur, TL_PROFILE_MAX_SAMPLES);
    tl_profile_span(p, ts, tl_ns_add(ts, dur));
    int cc = s->cat_class;
    if (cc == TL_CC_ITERATION && dur > 0)
        keep_iteration(r, s->name, ts, dur);
    if (cc != TL_CC_OTHER)
        r->kineto_hint = 1;
    if ((is_gpu_class(cc) && !(cc == TL_CC_SYNC && !sync_on_stream(ev))) || nest_class(cc) == 3) {
        /* GPU events on a stream do not nest; runtime calls are leaves (and
         * Kineto writes some of them far from their time order) */
        s->incl_ns += dur;
        s->self_ns += dur;
    } else {
        tl_nest_add(&r->nest, ev->pid, ev->tid, nest_class(cc), ts, dur, (uint32_t)(s - p->stats));
    }

    if (cc == TL_CC_RUNTIME || cc == TL_CC_DRIVER) {
        if (ev->has_correlation && tl_kops_add_launch(&r->kops, ev->pid, ev->tid, ts, ev->correlation) != 0)
            r->launches_lost++;
        add_role(r, s, name, name_len, ts, dur);
        unsigned hf = host_call_flags(p, s, name, name_len);
        if (hf & 4)
            p->graph_launches++;
        if (hf & 128)
            p->graph_captures++;
        /* An asynchronous copy that returned at once (pinned memory) covers
         * no idle time worth a look, and a training trace makes hundreds of
         * thousands of them: only those that blocked (50 us or more) are
         * kept, so the blocking calls' bound is not spent on them. */
        if ((hf & 2) && !((hf & 8) && dur < TL_ASYNC_BLOCKED_NS))
            tl_profile_add_blocking(p, &(tl_host_call){ ts, dur, s->name });
        return;
    }
    /* PyTorch's graph replays and torch.compile's CUDA graph trees, annotated
     * on the CPU side (CUDAGraph::replay, CUDAGraphTreeManager...) */
    if ((cc == TL_CC_USER_ANNOTATION || cc == TL_CC_CPU_OP) &&
        ((name_len >= 9 && memcmp(name, "CUDAGraph", 9) == 0) || (name_len >= 8 && memcmp(name, "HIPGraph", 8) == 0))) {
        /* CUDAGraph::capture_begin / capture_end record a graph; the rest
         * (replay, the graph trees' manager) run one */
        int capture = 0;
        for (size_t i = 0; i + 7 <= name_len && !capture; i++)
            capture = memcmp(name + i, "capture", 7) == 0;
        if (capture)
            p->graph_captures++;
        else
            p->graph_launches++;
    }
    int64_t step;
    if (cc != TL_CC_GPU_ANNOTATION && profiler_step(name, name_len, &step)) {
        tl_profile_add_step(p, step, ts, dur);
        r->kineto_hint = 1;
        return;
    }
    /* GPU events are the events with a stream (HTA); sync events only count when
     * they carry one. Legacy traces without args fall back to pid/tid. */
    if (!is_gpu_class(cc) || (cc == TL_CC_SYNC && !sync_on_stream(ev))) {
        if (cc != TL_CC_GPU_ANNOTATION)
            count_pid(r, ev);
        if (cc != TL_CC_GPU_ANNOTATION)
            add_role(r, s, name, name_len, ts, dur);
        if (cc == TL_CC_CPU_OP) {
            shape_args(r, ev, name, name_len, dur);
            tl_kops_add_op(&r->kops, ev->pid, ev->tid, ts, dur,
                           p->names_closed ? tl_strtab_intern(&p->strs, name, name_len) : s->name);
        }
        /* Sections too: a program timed with libtally names its own collectives
         * ("MPI_Allreduce", "gloo:all_reduce" around the call), and its trace
         * files them as sections. */
        if (cc == TL_CC_CPU_OP || cc == TL_CC_USER_ANNOTATION || cc == TL_CC_OTHER || cc == TL_CC_SECTION) {
            int side = coll_side(p, s, name, name_len);
            if (side >= 0)
                add_coll(r, ev, tl_strtab_intern(&p->strs, name, name_len), side, ts, dur);
        }
        if (cc != TL_CC_GPU_ANNOTATION && dur > 0) {
            /* Threads beyond TL_PROFILE_MAX_LANES are not drawn (nothing read
             * a count of them, so none is kept). */
            tl_cpu_lane *lane = tl_profile_cpu_lane(p, ev->pid, ev->tid);
            if (lane != NULL) {
                tl_binner_add(&lane->bins, ts, tl_ns_add(ts, dur));
                lane->events++;
            }
        }
        return;
    }
    if (s->kernel_type < 0)
        s->kernel_type = (int8_t)tl_kernel_type_of(p->kernel_classes, name, name_len, cc);
    /* A name folded into "(other names)" (the names budget) keeps its own
     * kernel type: the GPU breakdown stays exact whatever the budget. */
    int kt = p->names_closed && s->name != tl_strtab_find(&p->strs, name, name_len)
                 ? tl_kernel_type_of(p->kernel_classes, name, name_len, cc)
                 : s->kernel_type;
    int64_t device = ev->has_device ? ev->device : (ev->pid_int ? ev->pid : -1);
    int64_t stream = ev->has_stream ? ev->stream : (ev->tid_int ? ev->tid : -1);
    uint32_t si = tl_profile_stream(p, device, stream);
    if (si == UINT32_MAX) {
        p->gpu_stream_dropped++;
        return;
    }
    tl_gpu_event g = {
        .ts_ns = ts,
        .dur_ns = dur,
        .correlation = ev->has_correlation ? ev->correlation : -1, /* launch_ns after tl_kops_resolve */
        .name = s->name,
        .stream = si,
        .type = (uint32_t)kt,
        .cat_class = (uint32_t)cc,
    };
    tl_profile_add_gpu(p, &g);
    if (cc == TL_CC_KERNEL)
        tl_kops_kernel_args(&r->kops, p, g.name, dur, ev);
    if (p->shapes != NULL && (cc == TL_CC_KERNEL || cc == TL_CC_MEMCPY || cc == TL_CC_MEMSET))
        shape_kernel(r, ev, dur);
    if (kt == TL_KT_COMM)
        add_coll(r, ev, tl_strtab_intern(&p->strs, name, name_len), TL_COLL_GPU, ts, dur);
}

static void begin_event(reader *r, const char *cat, size_t cat_len, const char *name, size_t name_len,
                        const tl_trace_event *ev)
{
    be_stack *b = &r->be;
    if (tl_array_grow(&b->v, b->n, &b->cap, sizeof *b->v, 64) != 0)
        return;
    open_slice *o = &b->v[b->n++];
    o->pid = ev->pid;
    o->tid = ev->tid;
    o->ts = ev->ts_ns;
    o->cat = tl_strtab_intern(&r->p->strs, cat, cat_len);
    o->name = tl_strtab_intern(&r->p->strs, name, name_len);
}

/* E closes the innermost open B of the same (pid, tid). */
static void end_event(reader *r, const tl_trace_event *ev)
{
    be_stack *b = &r->be;
    for (size_t i = b->n; i-- > 0;) {
        if (b->v[i].pid != ev->pid || b->v[i].tid != ev->tid)
            continue;
        open_slice o = b->v[i];
        memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof *b->v);
        b->n--;
        const char *cat = tl_strtab_get(&r->p->strs, o.cat);
        const char *name = tl_strtab_get(&r->p->strs, o.name);
        complete_event(r, cat, strlen(cat), name, strlen(name), ev, o.ts, ev->ts_ns - o.ts);
        return;
    }
    b->unmatched_ends++;
}

/* Kineto's [memory] instant: one pass over its args for the three we use. */
static void memory_instant(reader *r, const tl_trace_event *ev)
{
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    tl_mem_point pt = { ev->ts_ns, -1, 0.0 / 0.0, 0.0 / 0.0, 0.0 / 0.0 };
    int found = 0, host = 0;
    double bytes = 0.0 / 0.0, addr = -1; /* an allocation (> 0) or a free (< 0): mem_ops.h */
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next(&it, &k, &v)) {
        if (!v.is_number)
            continue;
        if (tl_view_eq(k, "Bytes")) {
            bytes = v.number;
        } else if (tl_view_eq(k, "Addr")) {
            addr = v.number;
        } else if (tl_view_eq(k, "Total Allocated")) {
            pt.allocated = v.number;
            found = 1;
        } else if (tl_view_eq(k, "Total Reserved")) {
            pt.reserved = v.number;
            found = 1;
        } else if (tl_view_eq(k, "Device Id")) {
            /* a double beyond int64 converts to anything (UB): a device id is small */
            pt.device = v.number >= 0 && v.number <= INT32_MAX ? (int64_t)v.number : -1;
        } else if (tl_view_eq(k, "Device Type")) {
            host = v.number == 0; /* c10::DeviceType::CPU: the CPU allocator */
        }
    }
    if (host || pt.device < 0)
        pt.device = -1; /* host memory: never on a GPU's line */
    if (found)
        tl_profile_add_mem(r->p, &pt);
    /* device memory by operator: the instant learns its operator when the
     * operators' stacks reach its time (nesting.h's probe); values beyond
     * 2^62 are no byte counts or addresses */
    if (!host && pt.device >= 0 && bytes == bytes && bytes != 0 && fabs(bytes) < 0x1p62 && addr >= 0 && addr < 0x1p62 &&
        pt.allocated == pt.allocated && fabs(pt.allocated) < 0x1p62)
        tl_nest_probe(
            &r->nest, ev->pid, ev->tid, nest_class(TL_CC_CPU_OP), ev->ts_ns,
            tl_mem_ops_pend(r->p, ev->ts_ns, (int64_t)addr, (int64_t)bytes, pt.device, (int64_t)pt.allocated));
}

static void counter_event(reader *r, const char *name, size_t name_len, const tl_trace_event *ev)
{
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    char full[512];
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next(&it, &k, &v)) {
        if (!v.is_number)
            continue;
        int n = snprintf(full, sizeof full, "%.*s.%.*s", (int)(name_len > 200 ? 200 : name_len), name,
                         (int)(k.len > 200 ? 200 : k.len), k.ptr);
        tl_counter *c = tl_profile_counter(r->p, full, (size_t)n < sizeof full ? (size_t)n : sizeof full - 1);
        if (c != NULL) {
            c->source = TL_COUNTER_TRACE;
            tl_value_stat_add(&c->v, v.number, (uint64_t)(ev->ts_ns > 0 ? ev->ts_ns : 0));
        }
    }
}

/* "thread_name" metadata names a CPU lane. */
static void thread_name(reader *r, const tl_trace_event *ev)
{
    tl_args_iter it;
    tl_view k;
    tl_json_value v;
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next(&it, &k, &v)) {
        if (!tl_view_eq(k, "name") || v.kind != TL_JSON_STRING)
            continue;
        tl_cpu_lane *lane = tl_profile_cpu_lane(r->p, ev->pid, ev->tid);
        if (lane != NULL)
            tl_view_unescape(v.text, lane->name, sizeof lane->name);
        return;
    }
}

/* Phases the Trace Event Format defines. */
static const unsigned char phases[256] = {
    ['B'] = 1, ['E'] = 1, ['X'] = 1, ['i'] = 1, ['I'] = 1, ['b'] = 1, ['e'] = 1, ['n'] = 1, ['s'] = 1,
    ['t'] = 1, ['f'] = 1, ['P'] = 1, ['C'] = 1, ['O'] = 1, ['M'] = 1, ['N'] = 1, ['D'] = 1, ['R'] = 1,
    ['v'] = 1, ['V'] = 1, ['a'] = 1, ['c'] = 1, ['S'] = 1, ['T'] = 1, ['p'] = 1, ['F'] = 1, ['('] = 1,
};

static int known_phase(char ph)
{
    return phases[(unsigned char)ph];
}

static void one_event(reader *r, const tl_trace_event *ev)
{
    tl_profile *p = r->p;
    size_t name_len, cat_len;
    r->cat_text = NULL; /* views of the last event may have the same addresses */
    const char *name = text_of(r, ev->name, ev->plain, &name_len);
    /* name may live in the scratch buffer: copy before decoding the category. */
    char name_copy[1024];
    if (name == r->scratch) {
        if (name_len >= sizeof name_copy)
            name_len = sizeof name_copy - 1;
        memcpy(name_copy, name, name_len);
        name = name_copy;
    }
    const char *cat = text_of(r, ev->cat, ev->plain, &cat_len);
    if (ev->cat.ptr != NULL && use_category(r, cat, cat_len) == 0) {
        if (r->cat->count_id == UINT32_MAX)
            r->cat->count_id = tl_strtab_intern(&p->cats, cat, cat_len);
        if (r->cat->count_id != UINT32_MAX)
            tl_profile_count_category_id(p, r->cat->count_id);
    }
    if (!known_phase(ev->phase)) {
        p->unknown_phase++;
        return;
    }
    /* A time beyond TL_TRACE_TS_MAX (2065 on the wall clock) or a duration beyond
     * TL_TRACE_DUR_MAX (31 years) is not a time: such an event is malformed, so
     * every sum and difference of the analysis stays inside an int64. */
    if ((ev->has_ts && (ev->ts_ns > TL_TRACE_TS_MAX || ev->ts_ns < -TL_TRACE_TS_MAX)) ||
        (ev->has_dur && (ev->dur_ns > TL_TRACE_DUR_MAX || ev->dur_ns < -TL_TRACE_DUR_MAX))) {
        if (p->malformed_times++ == 0)
            tl_profile_warn(p,
                            "offset %" PRIu64 ": event \"%.*s\" has a time or duration out of range (ts %" PRId64
                            " ns, dur %" PRId64 " ns); such events are skipped",
                            ev->offset, (int)(name_len > 80 ? 80 : name_len), name, ev->ts_ns,
                            ev->has_dur ? ev->dur_ns : 0);
        p->malformed++;
        return;
    }
    if (!ev->has_ts && ev->phase != 0 && strchr("XBECiI", ev->phase) != NULL) {
        if (r->no_ts++ == 0) {
            r->no_ts_offset = ev->offset;
            r->no_ts_phase = ev->phase;
            size_t k = name_len < sizeof r->no_ts_name - 1 ? name_len : sizeof r->no_ts_name - 1;
            memcpy(r->no_ts_name, name, k);
            r->no_ts_name[k] = '\0';
        }
        p->malformed++;
        return;
    }
    switch (ev->phase) {
    case 'X':
        if (!ev->has_dur) {
            tl_profile_warn_at(p, (int64_t)ev->offset,
                               "offset %" PRIu64 ": complete event \"%.*s\" has no dur; counted as 0", ev->offset,
                               (int)(name_len > 80 ? 80 : name_len), name);
        }
        complete_event(r, cat, cat_len, name, name_len, ev, ev->ts_ns, ev->has_dur ? ev->dur_ns : 0);
        break;
    case 'B':
        if (ev->has_ts)
            begin_event(r, cat, cat_len, name, name_len, ev);
        break;
    case 'E':
        if (ev->has_ts)
            end_event(r, ev);
        break;
    case 'i':
    case 'I':
        if (ev->has_ts)
            tl_profile_span(p, ev->ts_ns, ev->ts_ns);
        if (name_len == 8 && memcmp(name, "[memory]", 8) == 0) {
            memory_instant(r, ev);
            r->kineto_hint = 1;
        }
        break;
    case 'C':
        if (ev->has_ts)
            counter_event(r, name, name_len, ev);
        break;
    case 'M':
        if (name_len == 11 && memcmp(name, "thread_name", 11) == 0)
            thread_name(r, ev);
        break;
    default:
        break;
    }
}

static void take_meta(tl_profile *p, const tl_trace_stream *s, int kineto_hint)
{
    const tl_trace_meta *m = &s->meta;
    if (m->form == TL_TRACE_FORM_OBJECT && !m->has_trace_events && s->stats.events == 0) {
        tl_profile_skip(p, "a JSON object without a \"traceEvents\" array: not a trace");
    }
    int tally = strcmp(m->backend, "tally") == 0 ||
                (m->other_data != NULL && strstr(m->other_data, "\"producer\":\"libtally") != NULL);
    if (tally)
        p->id.format = TL_FMT_TALLY_TRACE;
    else if (kineto_hint || m->has_schema_version || m->device_count > 0 || m->has_rank || m->has_base_time)
        p->id.format = TL_FMT_KINETO;
    else
        p->id.format = TL_FMT_CHROME_TRACE;
    p->plain_is_work = p->id.format != TL_FMT_KINETO || m->form == TL_TRACE_FORM_ARRAY;
    snprintf(p->format_detail, sizeof p->format_detail, "%s form%s",
             m->form == TL_TRACE_FORM_OBJECT ? "object" : "array", s->stats.unterminated ? ", unterminated" : "");
    if (m->has_rank && m->rank >= 0 && m->rank <= INT32_MAX) {
        tl_identity_set_rank(&p->id, (int)m->rank, TL_RANK_CONTENT, "distributedInfo.rank");
    }
    if (m->has_world_size && m->world_size > 0 && m->world_size <= INT32_MAX)
        p->id.world_size = (int)m->world_size;
    if (m->has_base_time)
        p->base_time_ns = m->base_time_ns;
    int nd = m->device_count < TL_TRACE_MAX_DEVICES ? m->device_count : TL_TRACE_MAX_DEVICES;
    if (nd > 0) {
        p->devices = calloc((size_t)nd, sizeof *p->devices);
        if (p->devices != NULL) {
            p->ndevices = (uint32_t)nd;
            for (int i = 0; i < nd; i++) {
                p->devices[i].id = m->devices[i].id;
                snprintf(p->devices[i].name, sizeof p->devices[i].name, "%s", m->devices[i].name);
                p->devices[i].total_memory = (double)m->devices[i].total_global_mem;
            }
        }
    }
}

/* Turn the stream's counters into the profile's counts and warnings. */
static void take_stats(tl_profile *p, const tl_trace_stream *s, uint64_t unmatched_ends, size_t unclosed)
{
    const tl_trace_stats *st = &s->stats;
    p->events = st->events;
    for (int i = 0; i < 128; i++)
        p->by_phase[i] = st->by_phase[i];
    p->malformed += st->malformed + st->oversized + st->non_objects;
    p->truncated = p->truncated || st->truncated;
    p->unterminated = st->unterminated;
    p->bytes = st->bytes_read;
    for (unsigned i = 0; i < s->problem_count; i++)
        tl_profile_warn_at(p, (int64_t)s->problems[i].offset, "offset %" PRIu64 ": %s", s->problems[i].offset,
                           s->problems[i].text);
    if (st->warnings > s->problem_count)
        tl_profile_warn(p, "%" PRIu64 " more problems of the kinds above", st->warnings - s->problem_count);
    /* The stream's final error is usually also its last problem: say it once. */
    const tl_parse_error *last = s->problem_count ? &s->problems[s->problem_count - 1] : NULL;
    if (s->has_error && !(last && last->offset == s->error.offset && !strcmp(last->text, s->error.text)))
        tl_profile_warn_at(p, (int64_t)s->error.offset, "offset %" PRIu64 ": %s", s->error.offset, s->error.text);
    if (unmatched_ends)
        tl_profile_warn(p, "%" PRIu64 " end (E) events without a begin", unmatched_ends);
    if (unclosed)
        tl_profile_warn(p, "%zu begin (B) events never ended (not counted)", unclosed);
    if (p->unknown_phase)
        tl_profile_warn(p, "%" PRIu64 " events with an unknown phase skipped", p->unknown_phase);
}

int tl_read_trace(tl_profile *p, tl_read_fn read, void *ctx, const tl_trace_options *opt)
{
    tl_trace_stream s;
    tl_trace_event ev;
    reader r;
    int rc;
    memset(&r, 0, sizeof r);
    r.p = p;
    if (tl_trace_stream_open(&s, read, ctx, p->id.path, opt) != 0) {
        tl_trace_stream_release(&s);
        tl_profile_warn(p, "out of memory");
        p->error = 1;
        return -1;
    }
    uint64_t limit = p->max_events ? p->max_events : TL_PROFILE_DEFAULT_MAX_EVENTS, seen = 0;
    tl_nest_init(&r.nest, p);
    tl_kops_init(&r.kops);
    while ((rc = tl_trace_stream_next(&s, &ev)) == 1) {
        if (seen++ == limit) {
            tl_profile_warn(p,
                            "more than %" PRIu64 " events (the events limit, --max-events): the rest of the "
                            "input is not read; statistics cover the first %" PRIu64,
                            limit, limit);
            p->truncated = 1;
            break;
        }
        one_event(&r, &ev);
    }
    tl_nest_finish(&r.nest);
    tl_nest_release(&r.nest);
    if (p->blocking_dropped)
        tl_profile_warn(p, "%" PRIu64 " blocking host calls beyond %d not examined (TL_PROFILE_MAX_BLOCKING)",
                        p->blocking_dropped, TL_PROFILE_MAX_BLOCKING);
    note_unread_devices(p);
    if (p->shapes != NULL)
        tl_shape_table_link(p->shapes);
    if (r.no_ts)
        tl_profile_warn_at(p, (int64_t)r.no_ts_offset,
                           "%" PRIu64 " event%s without \"ts\" skipped as malformed; the "
                           "first at offset %" PRIu64 ": \"%s\" (phase %c)",
                           r.no_ts, r.no_ts == 1 ? "" : "s", r.no_ts_offset, r.no_ts_name, r.no_ts_phase);
    take_meta(p, &s, r.kineto_hint);
    take_stats(p, &s, r.be.unmatched_ends, r.be.n);
    if (seen > limit)
        p->events = limit; /* the stream had read one more to know there were more */
    if (rc < 0)
        p->error = 1;
    /* A trace with no events (or only metadata) says nothing about its rank:
     * counting it would add a rank of zeros to every across-rank figure. */
    if (!p->skipped && p->events == p->by_phase['M']) {
        tl_profile_skip(p, "no events%s: a trace with nothing to measure is not a usable rank",
                        p->events ? " other than metadata (M)" : "");
    }
    if (r.launches_lost)
        tl_profile_warn(
            p, "out of memory: %" PRIu64 " runtime calls' launches not kept (their GPU events have no launch time)",
            r.launches_lost);
    if (tl_kops_resolve(&r.kops, p) != 0)
        tl_profile_warn(p, "out of memory linking kernels to their operators: kernels have no launching operator");
    tl_kops_release(&r.kops);
    for (int i = 0; i < TL_ROLE_COUNT; i++)
        tl_ranges_union(&p->roles[i]);
    take_pid(p, &r);
    steps_from_iterations(&r);
    tl_profile_finish(p);
    tl_trace_stream_release(&s);
    free(r.be.v);
    free(r.scratch);
    free(r.iters);
    return rc < 0 ? -1 : 0;
}
