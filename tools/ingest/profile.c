/*
 * profile.c - building a per-rank profile (see profile.h): the (category,
 * name) statistics table over the profile's interned names (strtab.c), GPU events, steps, memory, counters,
 * and the classification of categories and kernel names.
 */
#include "profile.h"
#include "sort_stable.h"
#include "shape_table.h"
#include "mem_ops.h"
#include "array.h"
#include "calltree.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Grow a typed array: GROW(p->gpu, p->ngpu, p->gpu_cap) makes room for one
 * more (array.h; a profile's arrays start at 64). */
#define GROW(arr, n, cap) tl_array_grow(&(arr), (n), &(cap), sizeof *(arr), 64)

/* ---- names -------------------------------------------------------------- */

const char *tl_mem_category_name(int c)
{
    static const char *const names[TL_MEM_CATEGORIES] = {
        "PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", "UNKNOWN",
    };
    return c >= 0 && c < TL_MEM_CATEGORIES ? names[c] : NULL;
}

const char *tl_format_name(int format)
{
    switch (format) {
    case TL_FMT_TALLY_REPORT:
        return "tally-report";
    case TL_FMT_CHROME_TRACE:
        return "chrome-trace";
    case TL_FMT_KINETO:
        return "pytorch-profiler";
    case TL_FMT_TALLY_TRACE:
        return "tally-trace";
    case TL_FMT_FRAMEPACK:
        return "framepack-report";
    case TL_FMT_INFERIX:
        return "inferix-report";
    case TL_FMT_AGGREGATE:
        return "tally-aggregate";
    case TL_FMT_NSYS:
        return "nsys-sqlite";
    case TL_FMT_MEM_TIMELINE:
        return "torch-memory-timeline";
    case TL_FMT_STACKS:
        return "torch-stacks";
    case TL_FMT_FRAMEPACK_MEMLOG:
        return "framepack-memory-log";
    default:
        return "unknown";
    }
}

const char *tl_counter_source_name(int source)
{
    static const char *const names[] = { "derived", "user", "trace", "rate" };
    return source >= TL_COUNTER_DERIVED && source <= TL_COUNTER_RATE ? names[source] : NULL;
}

const char *tl_kernel_type_name(int type)
{
    static const char *names[] = { "compute", "communication", "memory", "other" };
    return type >= 0 && type < TL_KT_COUNT ? names[type] : "other";
}

#define CAT(s, cc)                                                                                                     \
    {                                                                                                                  \
        s, sizeof s - 1, cc                                                                                            \
    }
static const struct {
    const char *cat;
    size_t len;
    int cc;
} cat_table[] = {
    CAT("cpu_op", TL_CC_CPU_OP),
    CAT("Operator", TL_CC_CPU_OP),
    CAT("user_annotation", TL_CC_USER_ANNOTATION),
    CAT("gpu_user_annotation", TL_CC_GPU_ANNOTATION),
    CAT("cuda_runtime", TL_CC_RUNTIME),
    CAT("Runtime", TL_CC_RUNTIME),
    CAT("cuda_driver", TL_CC_DRIVER),
    CAT("kernel", TL_CC_KERNEL),
    CAT("Kernel", TL_CC_KERNEL),
    CAT("gpu_memcpy", TL_CC_MEMCPY),
    CAT("Memcpy", TL_CC_MEMCPY),
    CAT("gpu_memset", TL_CC_MEMSET),
    CAT("Memset", TL_CC_MEMSET),
    CAT("cuda_sync", TL_CC_SYNC),
    CAT("python_function", TL_CC_PYTHON),
    CAT("section", TL_CC_SECTION),
    CAT("stage", TL_CC_SECTION),
    CAT("iteration", TL_CC_ITERATION),
    CAT("diffusion", TL_CC_ITERATION), /* Inferix diffusion_analysis: one record per denoising step */
    CAT("block", TL_CC_SECTION),       /* Inferix block_analysis: one record per block */
};
#undef CAT

int tl_cat_class_of(const char *cat, size_t len)
{
    for (size_t i = 0; i < sizeof cat_table / sizeof cat_table[0]; i++)
        if (cat_table[i].len == len && memcmp(cat_table[i].cat, cat, len) == 0)
            return cat_table[i].cc;
    return TL_CC_OTHER;
}

const char *tl_cat_class_name(int cc)
{
    static const char *names[TL_CC_COUNT] = {
        "other",      "cpu_op",     "user_annotation", "gpu_user_annotation", "cuda_runtime", "cuda_driver", "kernel",
        "gpu_memcpy", "gpu_memset", "cuda_sync",       "python_function",     "section",      "iteration",
    };
    return cc >= 0 && cc < TL_CC_COUNT ? names[cc] : "other";
}

/* ---- the profile -------------------------------------------------------- */

void tl_profile_init(tl_profile *p, const char *path)
{
    memset(p, 0, sizeof *p);
    tl_identity_init(&p->id, path);
    p->base_time_ns = INT64_MIN;
    p->pid = INT64_MIN;
    p->start_ns = INT64_MAX;
    p->end_ns = INT64_MIN;
    p->host.memory_bytes = NAN;
    tl_strtab_init(&p->strs);
    tl_strtab_init(&p->cats);
}

void tl_profile_drop_aggregate_doc(tl_profile *p)
{
    json_decref(p->aggregate_doc);
    p->aggregate_doc = NULL;
}

void tl_profile_release(tl_profile *p)
{
    tl_profile_shrink(p); /* the data; what is left is the identity */
    tl_profile_drop_aggregate_doc(p);
    free(p->aggregate_ranks);
    tl_identity_release(&p->id);
    free(p->cat_counts);
    tl_strtab_release(&p->cats);
    memset(p, 0, sizeof *p);
}

void tl_profile_shrink(tl_profile *p)
{
    if (p->shapes != NULL)
        tl_shape_table_release(p->shapes);
    free(p->shapes);
    p->shapes = NULL;
    tl_mem_ops_free(p->memops);
    p->memops = NULL;
    free(p->memcats);
    p->memcats = NULL;
    p->nmemcats = 0;
    for (uint32_t i = 0; i < p->nstats; i++)
        tl_dur_stat_release(&p->stats[i].d);
    free(p->stats);
    free(p->stat_slots);
    free(p->folded_keys);
    p->folded_keys = NULL;
    p->nfolded_keys = 0;
    free(p->streams);
    free(p->stream_slots);
    p->stream_slots = NULL;
    p->nstream_slots = 0;
    free(p->gpu);
    free(p->steps);
    free(p->mem);
    free(p->snapshots);
    free(p->counters);
    free(p->gpu_samples);
    free(p->points);
    free(p->devices);
    for (uint32_t i = 0; i < p->ncpu_lanes; i++) {
        free(p->cpu_lanes[i]->top);
        free(p->cpu_lanes[i]);
        p->cpu_lanes[i] = NULL;
    }
    if (p->calltree != NULL) {
        tl_calltree_release(p->calltree);
        free(p->calltree);
        p->calltree = NULL;
    }
    for (int i = 0; i < TL_ROLE_COUNT; i++)
        tl_ranges_release(&p->roles[i]);
    free(p->klaunch);
    free(p->klaunch_of);
    p->klaunch = NULL;
    p->klaunch_of = NULL;
    p->nklaunch = p->klaunch_cap = p->nklaunch_of = 0;
    free(p->blocking);
    free(p->colls);
    p->colls = NULL;
    p->ncolls = p->colls_cap = 0;
    free(p->ievents);
    free(p->tags);
    free(p->blocks);
    p->ievents = NULL;
    p->nievents = p->ievents_cap = 0;
    p->tags = NULL;
    p->ntags = 0;
    p->blocks = NULL;
    p->nblocks = p->blocks_cap = 0;
    p->blocking = NULL;
    p->nblocking = p->blocking_cap = 0;
    p->ncpu_lanes = 0;
    p->stats = NULL;
    p->stat_slots = NULL;
    p->streams = NULL;
    p->gpu = NULL;
    p->steps = NULL;
    p->mem = NULL;
    p->snapshots = NULL;
    p->counters = NULL;
    p->gpu_samples = NULL;
    p->points = NULL;
    p->npoints = p->points_cap = 0;
    p->devices = NULL;
    p->nstats = p->stats_cap = p->nstat_slots = 0;
    p->nstreams = p->streams_cap = 0;
    p->ngpu = p->gpu_cap = p->nsteps = p->steps_cap = p->steps_from_loop = p->nmem = p->mem_cap = 0;
    p->nsnapshots = p->snapshots_cap = p->ngpu_samples = p->gpu_samples_cap = 0;
    p->ncounters = p->counters_cap = p->ndevices = 0;
    tl_strtab_release(&p->strs);
}

void tl_profile_free(tl_profile *p)
{
    if (p == NULL)
        return;
    tl_profile_release(p);
    free(p);
}

static void vwarn(tl_profile *p, int kind, int64_t offset, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void vwarn(tl_profile *p, int kind, int64_t offset, const char *fmt, va_list ap)
{
    char buf[TL_PROBLEM_TEXT_MAX + 1];
    vsnprintf(buf, sizeof buf, fmt, ap);
    tl_problems_add(&p->id.problems, kind, offset, "%s", buf);
}

void tl_profile_warn(tl_profile *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(p, TL_PROBLEM_WARNING, -1, fmt, ap);
    va_end(ap);
}

void tl_profile_warn_at(tl_profile *p, int64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(p, TL_PROBLEM_WARNING, offset, fmt, ap);
    va_end(ap);
}

void tl_profile_skip_last(tl_profile *p)
{
    tl_problems *l = &p->id.problems;
    p->skipped = 1;
    if (l->n == 0)
        return;
    /* The reason a profile is skipped is its first problem (inspect, run, partials). */
    tl_problem reason = l->v[l->n - 1];
    reason.kind = TL_PROBLEM_SKIPPED;
    memmove(l->v + 1, l->v, (l->n - 1) * sizeof *l->v);
    l->v[0] = reason;
}

void tl_profile_skip(tl_profile *p, const char *fmt, ...)
{
    size_t before = p->id.problems.n;
    va_list ap;
    va_start(ap, fmt);
    vwarn(p, TL_PROBLEM_SKIPPED, -1, fmt, ap);
    va_end(ap);
    if (p->id.problems.n > before)
        tl_profile_skip_last(p);
    else
        p->skipped = 1; /* beyond TL_IDENTITY_MAX_PROBLEMS: counted, not said */
}

static uint32_t pair_hash(uint32_t cat, uint32_t name)
{
    uint64_t h = ((uint64_t)cat << 32 | name) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static int stat_rehash(tl_profile *p)
{
    uint32_t n = p->nstat_slots ? p->nstat_slots * 2 : 256;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (uint32_t k = 0; k < p->nstats; k++) {
        uint32_t i = pair_hash(p->stats[k].cat, p->stats[k].name) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = k + 1;
    }
    free(p->stat_slots);
    p->stat_slots = slots;
    p->nstat_slots = n;
    return 0;
}

tl_name_stat *tl_profile_stat(tl_profile *p, const char *cat, size_t cat_len, const char *name, size_t name_len)
{
    uint32_t c = tl_strtab_intern(&p->strs, cat, cat_len);
    if (c == UINT32_MAX)
        return NULL;
    return tl_profile_stat_cat(p, c, tl_cat_class_of(cat, cat_len), name, name_len);
}

static uint32_t names_budget(const tl_profile *p)
{
    uint32_t b = p->max_names ? p->max_names : TL_PROFILE_DEFAULT_MAX_NAMES;
    return b < 2 ? 2 : b;
}

/* The stat of (c, n) if present, else NULL; *slot is where it would go. */
static tl_name_stat *stat_find(tl_profile *p, uint32_t c, uint32_t n, uint32_t *slot)
{
    uint32_t i = pair_hash(c, n) & (p->nstat_slots - 1);
    while (p->stat_slots[i]) {
        tl_name_stat *s = &p->stats[p->stat_slots[i] - 1];
        if (s->cat == c && s->name == n)
            return s;
        i = (i + 1) & (p->nstat_slots - 1);
    }
    *slot = i;
    return NULL;
}

static tl_name_stat *stat_new(tl_profile *p, uint32_t c, int cat_class, uint32_t n, uint32_t slot);

/* "(other names)" of category c, created if new (the table has room: the
 * fold left half the budget free, and there is one per category). */
static tl_name_stat *other_stat(tl_profile *p, uint32_t c, int cat_class)
{
    uint32_t n = tl_strtab_intern(&p->strs, TL_PROFILE_OTHER_NAMES, sizeof TL_PROFILE_OTHER_NAMES - 1);
    if (n == UINT32_MAX)
        return NULL;
    if ((p->nstats + 1) * 2 > p->nstat_slots && stat_rehash(p) != 0)
        return NULL;
    uint32_t slot = 0;
    tl_name_stat *s = stat_find(p, c, n, &slot);
    if (s != NULL)
        return s;
    /* One pool per category, but hostile input can have a category per
     * event: beyond TL_PROFILE_MAX_OTHER_POOLS they share the first pool. */
    if (p->other_pools >= TL_PROFILE_MAX_OTHER_POOLS && p->other_first != 0)
        return &p->stats[p->other_first - 1];
    s = stat_new(p, c, cat_class, n, slot);
    if (s != NULL && p->other_pools++ == 0)
        p->other_first = p->nstats;
    return s;
}

typedef struct rank_ref {
    uint64_t total, count;
    uint32_t at;
} rank_ref;

/* Most time first, then most frequent (instants have no time); ties by
 * first seen, so the fold is deterministic. */
static int by_weight_desc(const void *a, const void *b)
{
    const rank_ref *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t stat_key(uint32_t cat, uint32_t name)
{
    return (uint64_t)cat << 32 | name;
}

/* The budget is reached: keep the half with the most time, fold the rest
 * into "(other names)" of their category (tl_dur_stat_merge keeps count,
 * total, min, max, mean and variance exact for the pool), and let new names
 * in -- a heavy-hitters fold, so a late name with most of the time is kept
 * (folding by first appearance hid an op with 99.5 % of the time behind
 * 150,000 rare names). Once TL_PROFILE_MAX_FOLDS folds are made, the next
 * time the budget is reached the table closes instead. */
static void fold_names(tl_profile *p)
{
    if (p->names_folds >= TL_PROFILE_MAX_FOLDS) {
        p->names_closed = 1;
        return;
    }
    uint32_t n = p->nstats, keep = names_budget(p) / 2;
    rank_ref *order = malloc((size_t)n * sizeof *order);
    unsigned char *fold = calloc(n ? n : 1, 1);
    tl_name_stat *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
    uint32_t other = tl_strtab_intern(&p->strs, TL_PROFILE_OTHER_NAMES, sizeof TL_PROFILE_OTHER_NAMES - 1);
    uint64_t *keys = NULL;
    p->names_closed = 1; /* until the fold is done: closed without it, still bounded */
    if (order == NULL || fold == NULL || kept == NULL || other == UINT32_MAX)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        order[i] = (rank_ref){ p->stats[i].d.total, p->stats[i].d.count, i };
    qsort(order, n, sizeof *order, by_weight_desc);
    size_t nfold = 0;
    for (uint32_t k = keep; k < n; k++)
        if (p->stats[order[k].at].name != other) {
            fold[order[k].at] = 1;
            nfold++;
        }
    /* the folded names, to tell one that comes back (sorted, merged) */
    keys = realloc(p->folded_keys, (p->nfolded_keys + nfold + 1) * sizeof *keys);
    if (keys == NULL)
        goto out;
    p->folded_keys = keys;
    keys = NULL;
    for (uint32_t i = 0; i < n; i++)
        if (fold[i])
            p->folded_keys[p->nfolded_keys++] = stat_key(p->stats[i].cat, p->stats[i].name);
    qsort(p->folded_keys, p->nfolded_keys, sizeof *p->folded_keys, by_key);
    uint32_t m = 0, *map = malloc((size_t)(n ? n : 1) * sizeof *map);
    if (map == NULL)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        if (!fold[i]) {
            map[i] = m;
            kept[m++] = p->stats[i];
        }
    tl_name_stat *folded = p->stats;
    uint32_t nfolded = n;
    p->stats = kept;
    p->stats_cap = n ? n : 1;
    kept = NULL;
    p->nstats = m;
    /* stat_rehash doubles nstat_slots: start from half of a size that
     * keeps the kept names at most half full. */
    uint32_t want = 256;
    while (want < 2 * (m + 1))
        want *= 2;
    free(p->stat_slots);
    p->stat_slots = NULL;
    p->nstat_slots = want / 2;
    if (stat_rehash(p) != 0) {
        p->nstats = 0; /* out of memory: an empty table is still a consistent one */
        for (uint32_t i = 0; i < n; i++)
            map[i] = UINT32_MAX;
    }
    for (uint32_t i = 0; i < nfolded; i++) {
        if (!fold[i])
            continue;
        tl_name_stat *o = other_stat(p, folded[i].cat, folded[i].cat_class);
        map[i] = o != NULL ? (uint32_t)(o - p->stats) : UINT32_MAX;
        if (o != NULL) {
            tl_dur_stat_merge(&o->d, &folded[i].d, TL_PROFILE_MAX_SAMPLES);
            /* the pool takes over the folded name's nesting: its times so
             * far, and its occurrences still open on the stacks */
            o->incl_ns += folded[i].incl_ns;
            o->self_ns += folded[i].self_ns;
            o->open += folded[i].open;
        }
        tl_dur_stat_release(&folded[i].d);
        p->names_folded++;
    }
    free(folded);
    if (p->on_fold != NULL)
        p->on_fold(p->on_fold_ctx, map, nfolded);
    free(map);
    p->names_folds++;
    p->names_closed = 0;
out:
    free(keys);
    free(order);
    free(fold);
    free(kept);
}

tl_name_stat *tl_profile_stat_cat(tl_profile *p, uint32_t c, int cat_class, const char *name, size_t name_len)
{
    uint32_t slot = 0;
    if (p->names_closed) {
        /* Kept names only: a name not kept is never interned again. */
        uint32_t n = tl_strtab_find(&p->strs, name, name_len);
        tl_name_stat *s = n != UINT32_MAX && p->nstat_slots ? stat_find(p, c, n, &slot) : NULL;
        return s != NULL ? s : other_stat(p, c, cat_class);
    }
    uint32_t n = tl_strtab_intern(&p->strs, name, name_len);
    if (n == UINT32_MAX)
        return NULL;
    if ((p->nstats + 1) * 2 > p->nstat_slots && stat_rehash(p) != 0)
        return NULL;
    tl_name_stat *s = stat_find(p, c, n, &slot);
    if (s != NULL)
        return s;
    if (p->nstats >= names_budget(p)) {
        fold_names(p);
        return tl_profile_stat_cat(p, c, cat_class, name, name_len);
    }
    uint64_t key = stat_key(c, n);
    if (p->nfolded_keys > 0 && bsearch(&key, p->folded_keys, p->nfolded_keys, sizeof key, by_key) != NULL)
        p->names_reentered++;
    return stat_new(p, c, cat_class, n, slot);
}

static tl_name_stat *stat_new(tl_profile *p, uint32_t c, int cat_class, uint32_t n, uint32_t i)
{
    size_t cap = p->stats_cap;
    if (GROW(p->stats, p->nstats, cap) != 0)
        return NULL;
    p->stats_cap = (uint32_t)cap;
    tl_name_stat *s = &p->stats[p->nstats];
    memset(s, 0, sizeof *s);
    s->cat = c;
    s->name = n;
    s->cat_class = (uint8_t)cat_class;
    s->kernel_type = -1;
    s->median_ns = s->p95_ns = s->std_ns = NAN;
    p->stat_slots[i] = ++p->nstats;
    return s;
}

int tl_profile_add_duration(tl_profile *p, const char *cat, size_t cat_len, const char *name, size_t name_len,
                            int64_t dur_ns)
{
    tl_name_stat *s = tl_profile_stat(p, cat, cat_len, name, name_len);
    if (s == NULL)
        return -1;
    tl_dur_stat_add(&s->d, dur_ns > 0 ? (uint64_t)dur_ns : 0, TL_PROFILE_MAX_SAMPLES);
    return 0;
}

/* The packing of tl_gpu_event (profile.h) is what keeps it at 32 bytes (the correlation id and the launch time share a word). */
_Static_assert(sizeof(tl_gpu_event) == 32, "tl_gpu_event grew: GPU event memory grows with it");

static uint32_t stream_hash(int64_t device, int64_t stream)
{
    uint64_t h = ((uint64_t)device * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)stream * 0xc2b2ae3d27d4eb4full);
    return (uint32_t)(h ^ (h >> 29));
}

static int stream_rehash(tl_profile *p)
{
    uint32_t n = p->nstream_slots ? p->nstream_slots * 2 : 64;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (uint32_t k = 0; k < p->nstreams; k++) {
        uint32_t i = stream_hash(p->streams[k].device, p->streams[k].stream) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = k + 1;
    }
    free(p->stream_slots);
    p->stream_slots = slots;
    p->nstream_slots = n;
    return 0;
}

uint32_t tl_profile_stream(tl_profile *p, int64_t device, int64_t stream)
{
    if ((p->nstreams + 1) * 2 > p->nstream_slots && stream_rehash(p) != 0)
        return UINT32_MAX;
    uint32_t i = stream_hash(device, stream) & (p->nstream_slots - 1);
    while (p->stream_slots[i]) {
        uint32_t k = p->stream_slots[i] - 1;
        if (p->streams[k].device == device && p->streams[k].stream == stream)
            return k;
        i = (i + 1) & (p->nstream_slots - 1);
    }
    size_t cap = p->streams_cap;
    if (p->nstreams >= TL_PROFILE_MAX_STREAMS || GROW(p->streams, p->nstreams, cap) != 0)
        return UINT32_MAX;
    p->streams_cap = (uint32_t)cap;
    p->streams[p->nstreams] = (tl_gpu_stream){ device, stream };
    p->stream_slots[i] = p->nstreams + 1;
    return p->nstreams++;
}

int tl_profile_add_gpu(tl_profile *p, const tl_gpu_event *ev)
{
    if (GROW(p->gpu, p->ngpu, p->gpu_cap) != 0)
        return -1;
    p->gpu[p->ngpu++] = *ev;
    return 0;
}

int tl_profile_add_step(tl_profile *p, int64_t number, int64_t ts_ns, int64_t dur_ns)
{
    if (GROW(p->steps, p->nsteps, p->steps_cap) != 0)
        return -1;
    p->steps[p->nsteps++] = (tl_step){ number, ts_ns, dur_ns };
    return 0;
}

int tl_profile_add_coll(tl_profile *p, const tl_prof_coll *c)
{
    if (p->ncolls == TL_PROFILE_MAX_COLLS) {
        p->colls_dropped++;
        return 0;
    }
    if (GROW(p->colls, p->ncolls, p->colls_cap) != 0)
        return -1;
    p->colls[p->ncolls++] = *c;
    return 0;
}

/* Prefixes of CPU-side collective ranges: the backends' own ranges run the
 * collective (gloo and MPI block the calling thread until every rank has
 * arrived); NCCL's and c10d's dispatch ops enqueue it on a stream and return. */
static const struct {
    const char *prefix;
    int side;
} coll_prefixes[] = {
    { "gloo:", TL_COLL_RUN },     { "mpi:", TL_COLL_RUN },       { "ucc:", TL_COLL_RUN },
    { "nccl:", TL_COLL_ENQUEUE }, { "rccl:", TL_COLL_ENQUEUE },  { "hccl:", TL_COLL_ENQUEUE },
    { "xccl:", TL_COLL_ENQUEUE }, { "c10d::", TL_COLL_ENQUEUE }, { "record_param_comms", TL_COLL_ENQUEUE },
};

int tl_coll_side_of_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof coll_prefixes / sizeof coll_prefixes[0]; i++) {
        size_t n = strlen(coll_prefixes[i].prefix);
        if (len >= n && memcmp(name, coll_prefixes[i].prefix, n) == 0)
            return coll_prefixes[i].side;
    }
    if (len == 7 && memcmp(name, "barrier", 7) == 0)
        return TL_COLL_RUN;
    /* MPI's blocking collectives as Nsight Systems' MPI trace and PMPI tools name them (the
     * non-blocking MPI_I* only start one; point-to-point calls are no collective) */
    static const char *const mpi[] = { "MPI_Barrier",   "MPI_Allreduce",      "MPI_Reduce",
                                       "MPI_Bcast",     "MPI_Allgather",      "MPI_Allgatherv",
                                       "MPI_Gather",    "MPI_Gatherv",        "MPI_Scatter",
                                       "MPI_Scatterv",  "MPI_Alltoall",       "MPI_Alltoallv",
                                       "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
                                       "MPI_Scan",      "MPI_Exscan" };
    for (size_t i = 0; len > 4 && memcmp(name, "MPI_", 4) == 0 && i < sizeof mpi / sizeof mpi[0]; i++)
        if (strlen(mpi[i]) == len && memcmp(name, mpi[i], len) == 0)
            return TL_COLL_RUN;
    return -1;
}

static int by_range_start(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[1] > b[1]) - (a[1] < b[1]);
}

void tl_ranges_union(tl_ranges *r)
{
    if (r->n < 2)
        return;
    /* a merged prefix and what came after it, nearly in order: a few runs to
     * merge (the union does not depend on the order of equal starts) */
    tl_sort_stable(r->v, r->n, sizeof *r->v, by_range_start);
    size_t k = 0;
    for (size_t i = 1; i < r->n; i++) {
        if (r->v[i][0] <= r->v[k][1]) {
            if (r->v[i][1] > r->v[k][1])
                r->v[k][1] = r->v[i][1];
        } else {
            r->v[++k][0] = r->v[i][0];
            r->v[k][1] = r->v[i][1];
        }
    }
    r->n = k + 1;
}

int tl_ranges_add(tl_ranges *r, int64_t a, int64_t b)
{
    if (r->cut || !(b > a))
        return 0;
    if (r->n > 0 && a >= r->v[r->n - 1][0] && a <= r->v[r->n - 1][1]) {
        if (b > r->v[r->n - 1][1])
            r->v[r->n - 1][1] = b;
        return 0;
    }
    if (r->n == r->cap) {
        tl_ranges_union(r);
        /* grow only when merging freed less than half */
        if (r->n * 2 > r->cap || r->cap == 0) {
            if (r->cap >= TL_PROFILE_MAX_RANGES) {
                if (r->n == r->cap) {
                    r->cut = 1;
                    return 0;
                }
            } else {
                size_t cap = r->cap ? r->cap * 2 : 1024;
                void *v = realloc(r->v, cap * sizeof *r->v);
                if (v == NULL)
                    return -1;
                r->v = v;
                r->cap = cap;
            }
        }
    }
    r->v[r->n][0] = a;
    r->v[r->n][1] = b;
    r->n++;
    return 0;
}

void tl_ranges_release(tl_ranges *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

int tl_profile_add_blocking(tl_profile *p, const tl_host_call *c)
{
    if (p->nblocking == TL_PROFILE_MAX_BLOCKING) {
        p->blocking_dropped++;
        return 0;
    }
    if (GROW(p->blocking, p->nblocking, p->blocking_cap) != 0)
        return -1;
    p->blocking[p->nblocking++] = *c;
    return 0;
}

int tl_profile_add_mem(tl_profile *p, const tl_mem_point *pt)
{
    if (GROW(p->mem, p->nmem, p->mem_cap) != 0)
        return -1;
    p->mem[p->nmem++] = *pt;
    return 0;
}

int tl_profile_add_snapshot(tl_profile *p, const tl_mem_snapshot *s)
{
    if (GROW(p->snapshots, p->nsnapshots, p->snapshots_cap) != 0)
        return -1;
    p->snapshots[p->nsnapshots++] = *s;
    return 0;
}

int tl_profile_add_gpu_sample(tl_profile *p, const tl_gpu_sample *s)
{
    if (GROW(p->gpu_samples, p->ngpu_samples, p->gpu_samples_cap) != 0)
        return -1;
    p->gpu_samples[p->ngpu_samples++] = *s;
    return 0;
}

int tl_profile_add_point(tl_profile *p, int kind, int device, int64_t ts_ns, double v)
{
    if (!isfinite(v) || kind < 0 || kind >= TL_SERIES_COUNT)
        return 0;
    if (GROW(p->points, p->npoints, p->points_cap) != 0)
        return -1;
    p->points[p->npoints++] = (tl_series_point){ ts_ns, device, kind, v };
    return 0;
}

/* Indexed by tl_series_kind; the names are the aggregate's keys. */
static const char *const series_names[] = {
    "gpu_util_pct",
    "gpu_memory_used_bytes",
    "gpu_temperature_c",
    "gpu_power_w",
    "gpu_sm_clock_mhz",
    "process_cpu_pct",
    "system_cpu_pct",
    "rss_bytes",
    "system_memory_used_bytes",
    "system_memory_available_bytes",
    "load1",
    "gpu_memory_clock_mhz",
    "disk_read_bytes_per_s",
    "disk_write_bytes_per_s",
    "device_read_bytes_per_s",
    "device_write_bytes_per_s",
};
_Static_assert(sizeof series_names / sizeof series_names[0] == TL_SERIES_COUNT, "a name per series kind");

const char *tl_series_kind_name(int kind)
{
    return kind >= 0 && kind < TL_SERIES_COUNT ? series_names[kind] : NULL;
}

int tl_series_kind_of(const char *name)
{
    for (int k = 0; k < TL_SERIES_COUNT; k++)
        if (strcmp(series_names[k], name) == 0)
            return k;
    return -1;
}

tl_counter *tl_profile_counter(tl_profile *p, const char *name, size_t len)
{
    uint32_t id = tl_strtab_intern(&p->strs, name, len);
    if (id == UINT32_MAX)
        return NULL;
    for (uint32_t i = 0; i < p->ncounters; i++)
        if (p->counters[i].name == id)
            return &p->counters[i];
    size_t cap = p->counters_cap;
    if (GROW(p->counters, p->ncounters, cap) != 0)
        return NULL;
    p->counters_cap = (uint32_t)cap;
    tl_counter *c = &p->counters[p->ncounters++];
    memset(c, 0, sizeof *c);
    c->name = id;
    return c;
}

/* Intern s[0..n) cut to max bytes (at a UTF-8 boundary, ending in "..."). */
static uint32_t intern_cut(tl_profile *p, const char *s, size_t n, size_t max)
{
    if (n <= max)
        return tl_strtab_intern(&p->strs, s, n);
    char buf[TL_EVENT_PAYLOAD_MAX + TL_TAG_VALUE_MAX + 8];
    size_t k = max < sizeof buf - 4 ? max : sizeof buf - 4;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    memcpy(buf, s, k);
    memcpy(buf + k, "...", 3);
    return tl_strtab_intern(&p->strs, buf, k + 3);
}

int tl_profile_add_event(tl_profile *p, int64_t ts_ns, const char *name, size_t name_len, const char *payload,
                         size_t payload_len)
{
    if (p->nievents >= TL_PROFILE_MAX_IEVENTS) {
        p->ievents_dropped++;
        return 0;
    }
    if (GROW(p->ievents, p->nievents, p->ievents_cap) != 0)
        return -1;
    uint32_t n = intern_cut(p, name, name_len, TL_EVENT_PAYLOAD_MAX);
    uint32_t d = intern_cut(p, payload ? payload : "", payload ? payload_len : 0, TL_EVENT_PAYLOAD_MAX);
    if (n == UINT32_MAX || d == UINT32_MAX)
        return -1;
    p->ievents[p->nievents++] = (tl_ievent){ ts_ns, n, d };
    return 0;
}

int tl_profile_add_tag(tl_profile *p, const char *key, size_t key_len, const char *value, size_t value_len)
{
    if (p->ntags >= TL_PROFILE_MAX_TAGS) {
        p->tags_dropped++;
        return 0;
    }
    if (p->tags == NULL && (p->tags = calloc(TL_PROFILE_MAX_TAGS, sizeof *p->tags)) == NULL)
        return -1;
    uint32_t k = intern_cut(p, key, key_len, TL_TAG_VALUE_MAX);
    uint32_t v = intern_cut(p, value, value_len, TL_TAG_VALUE_MAX);
    if (k == UINT32_MAX || v == UINT32_MAX)
        return -1;
    p->tags[p->ntags++] = (tl_tag){ k, v };
    return 0;
}

int tl_profile_add_block(tl_profile *p, const tl_diff_block *b)
{
    if (p->nblocks >= TL_PROFILE_MAX_BLOCKS)
        return 0;
    if (GROW(p->blocks, p->nblocks, p->blocks_cap) != 0)
        return -1;
    p->blocks[p->nblocks++] = *b;
    return 0;
}

void tl_profile_count_category(tl_profile *p, const char *cat, size_t len)
{
    uint32_t id = tl_strtab_intern(&p->cats, cat, len);
    if (id != UINT32_MAX)
        tl_profile_count_category_id(p, id);
}

void tl_profile_count_category_id(tl_profile *p, uint32_t id)
{
    if (id >= p->cat_counts_cap) {
        size_t cap = p->cat_counts_cap;
        if (tl_array_grow(&p->cat_counts, id, &cap, sizeof *p->cat_counts, 32) != 0)
            return;
        memset(p->cat_counts + p->cat_counts_cap, 0, (cap - p->cat_counts_cap) * sizeof *p->cat_counts);
        p->cat_counts_cap = (uint32_t)cap;
    }
    p->cat_counts[id]++;
}

tl_cpu_lane *tl_profile_cpu_lane(tl_profile *p, int64_t pid, int64_t tid)
{
    for (uint32_t i = 0; i < p->ncpu_lanes; i++)
        if (p->cpu_lanes[i]->pid == pid && p->cpu_lanes[i]->tid == tid)
            return p->cpu_lanes[i];
    if (p->ncpu_lanes == TL_PROFILE_MAX_LANES)
        return NULL;
    tl_cpu_lane *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    p->cpu_lanes[p->ncpu_lanes++] = l;
    l->pid = pid;
    l->tid = tid;
    return l;
}

void tl_profile_span(tl_profile *p, int64_t start_ns, int64_t end_ns)
{
    if (start_ns < p->start_ns)
        p->start_ns = start_ns;
    if (end_ns > p->end_ns)
        p->end_ns = end_ns;
}

static int by_step(const void *a, const void *b)
{
    const tl_step *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int by_gpu_start(const void *a, const void *b)
{
    const tl_gpu_event *x = a, *y = b;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns < y->dur_ns ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* GPU events in start order. A trace lists them nearly so (each stream in
 * order, streams interleaved), so an insertion sort moves few of them; past a
 * budget of moves (an input in another order) the rest goes to qsort. Both
 * are stable (glibc's qsort is a merge sort), so ties (same start, duration,
 * stream and name) keep the file's order either way. */
#define GPU_SORT_MOVES 8 /* element moves per event before giving up on insertion */

static void sort_gpu(tl_gpu_event *v, size_t n)
{
    size_t budget = GPU_SORT_MOVES * n, moves = 0;
    for (size_t i = 1; i < n; i++) {
        if (by_gpu_start(&v[i - 1], &v[i]) <= 0)
            continue;
        tl_gpu_event x = v[i];
        size_t j = i;
        while (j > 0 && by_gpu_start(&v[j - 1], &x) > 0) {
            j--;
            if (++moves > budget)
                break;
        }
        if (moves > budget) {
            qsort(v, n, sizeof *v, by_gpu_start);
            return;
        }
        memmove(&v[j + 1], &v[j], (i - j) * sizeof *v);
        v[j] = x;
    }
}

static int by_mem_ts(const void *a, const void *b)
{
    const tl_mem_point *x = a, *y = b;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

void tl_profile_finish(tl_profile *p)
{
    /* A base time is a wall-clock time in ns since the epoch, before 2065
     * (TL_TRACE_TS_MAX): every time of the input is added to it, and one past
     * that (baseTimeNanoseconds = INT64_MAX) wrapped into a start time in
     * 1677. Not a time: dropped, said. */
    if (p->base_time_ns != INT64_MIN && (p->base_time_ns < 0 || p->base_time_ns > TL_TRACE_TS_MAX)) {
        tl_profile_warn(p,
                        "base time %" PRId64 " ns is not a time since the epoch before 2065: ignored (times stay "
                        "relative to the file)",
                        p->base_time_ns);
        p->base_time_ns = INT64_MIN;
    }
    if (p->gpu_stream_dropped && !p->streams_warned) {
        p->streams_warned = 1;
        tl_profile_warn(p,
                        "more than %u GPU streams: %" PRIu64 " GPU events on further streams are not in the "
                        "GPU breakdown (their names' statistics are)",
                        TL_PROFILE_MAX_STREAMS, p->gpu_stream_dropped);
    }
    if ((p->names_closed || p->names_folds > 0) && !p->names_warned) {
        /* Every cap is a number in the report: say what the budget folded. */
        uint64_t events = 0, pools = 0;
        uint32_t other = tl_strtab_find(&p->strs, TL_PROFILE_OTHER_NAMES, sizeof TL_PROFILE_OTHER_NAMES - 1);
        for (uint32_t i = 0; i < p->nstats; i++)
            if (p->stats[i].name == other) {
                events += p->stats[i].d.count;
                pools++;
            }
        char closed[160] = "", back[200] = "";
        if (p->names_closed)
            snprintf(closed, sizeof closed,
                     "; after %u folds (TL_PROFILE_MAX_FOLDS) the table closed: every name first "
                     "seen later is counted there too",
                     p->names_folds);
        if (p->names_reentered)
            snprintf(back, sizeof back,
                     "; %" PRIu64 " folded names came back: their rows hold only the occurrences "
                     "after their fold",
                     p->names_reentered);
        p->names_warned = 1;
        tl_profile_warn(p,
                        "more than %u distinct names (the names budget, --max-names): %u fold%s kept the names "
                        "with the most time; the %" PRIu64 " names with the least are counted as \"%s\" (%" PRIu64
                        " events in %" PRIu64 " categories)%s%s; the %u names kept have exact statistics",
                        names_budget(p), p->names_folds, p->names_folds == 1 ? "" : "s", p->names_folded,
                        TL_PROFILE_OTHER_NAMES, events, pools, closed, back,
                        p->nstats > pools ? p->nstats - (uint32_t)pools : 0);
    }
    if (p->nsteps > 1)
        qsort(p->steps, p->nsteps, sizeof *p->steps, by_step);
    if (p->ngpu > 1)
        sort_gpu(p->gpu, p->ngpu);
    if (p->nmem > 1)
        qsort(p->mem, p->nmem, sizeof *p->mem, by_mem_ts);
}
