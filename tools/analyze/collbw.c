/*
 * collbw.c - collective bytes and bandwidth (collbw.h; docs/analysis.md,
 * "Collective bandwidth").
 *
 * Steps, per rank over its sessions:
 *  1. the instances: the side the waits read (GPU communication kernels, or
 *     the CPU ranges that run a collective); without waits (one rank), a
 *     session's GPU kernels when it has any, else its CPU ranges;
 *  2. their size: the instance's own args ("In msg nelems", "dtype", "Group
 *     size": newer Kineto puts them on the kernel); a GPU kernel without
 *     them takes those of its CPU-side backend annotation (nccl:all_reduce,
 *     with "Input Dims" and "Input type": older Kineto), the k-th kernel the
 *     k-th annotation, only when the session has as many of each;
 *  3. S, NCCL's size: elements x element size, times n for all_gather (the
 *     trace gives a rank's input; NCCL's S is the gathered whole);
 *  4. the time: after the last arrival (duration minus the rank's wait)
 *     where the waits matched the instance, else the whole duration;
 *  5. added up per (kind, size bucket) and rank: bandwidth = sum of S over
 *     sum of time; bus bytes = S x the kind's factor over n ranks (the
 *     process group's "Group size", else the world size, else the ranks).
 */
#include "aggregate.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[TL_CK_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv", "other",
};

const char *tl_coll_kind_name(int kind)
{
    return kind >= 0 && kind < TL_CK_COUNT ? kind_names[kind] : NULL;
}

int tl_coll_kind_of(const char *name)
{
    char low[128];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof low; p++)
        if (*p != '_' && *p != ' ' && *p != '-')
            low[n++] = (char)tolower((unsigned char)*p);
    low[n] = '\0';
    static const struct {
        const char *sub;
        int kind;
    } subs[] = {
        { "allreduce", TL_CK_ALL_REDUCE }, { "allgather", TL_CK_ALL_GATHER }, { "reducescatter", TL_CK_REDUCE_SCATTER },
        { "alltoall", TL_CK_ALL_TO_ALL },  { "broadcast", TL_CK_BROADCAST },  { "bcast", TL_CK_BROADCAST },
        { "sendrecv", TL_CK_SEND_RECV },   { "send", TL_CK_SEND_RECV },       { "recv", TL_CK_SEND_RECV },
        { "reduce", TL_CK_REDUCE },
    };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strstr(low, subs[i].sub) != NULL)
            return subs[i].kind;
    return TL_CK_OTHER;
}

double tl_coll_bus_factor(int kind, int64_t n)
{
    if (n < 1)
        return NAN;
    double r = (double)(n - 1) / (double)n;
    switch (kind) {
    case TL_CK_ALL_REDUCE:
        return 2 * r;
    case TL_CK_ALL_GATHER:
    case TL_CK_REDUCE_SCATTER:
    case TL_CK_ALL_TO_ALL:
        return r;
    case TL_CK_BROADCAST:
    case TL_CK_REDUCE:
    case TL_CK_SEND_RECV:
        return 1;
    default:
        return NAN;
    }
}

double tl_collbw_bucket_lo(int bucket)
{
    static const double lo[TL_COLLBW_BUCKETS] = { 0, 65536.0, 1048576.0, 16777216.0, 268435456.0 };
    return bucket >= 0 && bucket < TL_COLLBW_BUCKETS ? lo[bucket] : NAN;
}

int tl_collbw_bucket_of(double bytes)
{
    int b = 0;
    while (b + 1 < TL_COLLBW_BUCKETS && bytes >= tl_collbw_bucket_lo(b + 1))
        b++;
    return b;
}

double tl_collbw_algbw(const tl_collbw_cell *c)
{
    return c->count > 0 && c->time_ns > 0 ? c->bytes / ((double)c->time_ns * 1e-9) : NAN;
}

double tl_collbw_busbw(const tl_collbw_cell *c)
{
    return c->bus_count > 0 && c->bus_time_ns > 0 ? c->bus_bytes / ((double)c->bus_time_ns * 1e-9) : NAN;
}

void tl_collbw_release(tl_collbw *c)
{
    for (size_t i = 0; i < c->nrows; i++)
        free(c->rows[i].rank);
    free(c->rows);
    free(c->ranks);
    memset(c, 0, sizeof *c);
}

static void cell_add(tl_collbw_cell *c, double bytes, double factor, int64_t t)
{
    c->count++;
    c->bytes += bytes;
    c->time_ns += t;
    if (isfinite(factor)) {
        c->bus_count++;
        c->bus_bytes += bytes * factor;
        c->bus_time_ns += t;
    }
}

static int is_gpu_side(const tl_session *s)
{
    for (size_t k = 0; k < s->ninsts; k++)
        if (s->insts[k].side == TL_COLL_GPU)
            return 1;
    return 0;
}

static const char *inst_name(const tl_session *s, int64_t i)
{
    return i >= 0 && (size_t)i < s->ncoll_names ? s->coll_names[i] : "";
}

/* A backend's own CPU-side annotation of a collective it enqueues
 * ("nccl:all_reduce"; not c10d's dispatch ops, not record_param_comms):
 * one per kernel, in launch order. */
static int backend_annotation(const tl_session *s, const tl_scoll *c)
{
    if (c->side != TL_COLL_ENQUEUE)
        return 0;
    const char *n = inst_name(s, c->name), *colon = strchr(n, ':');
    return colon != NULL && colon[1] != ':' && colon > n;
}

/* Steps 1-5 over one session of rank ri; cells: TL_CK_COUNT x buckets x ranks. */
static void add_session(tl_aggregate *a, tl_collbw *bw, tl_collbw_cell *cells, size_t ri, const tl_session *s,
                        const int64_t *waits)
{
    int side = a->waits.source == TL_WAITS_GPU   ? TL_COLL_GPU
               : a->waits.source == TL_WAITS_CPU ? TL_COLL_RUN
               : is_gpu_side(s)                  ? TL_COLL_GPU
                                                 : TL_COLL_RUN;
    size_t ngpu = 0, nann = 0;
    for (size_t k = 0; k < s->ninsts; k++) {
        ngpu += s->insts[k].side == TL_COLL_GPU;
        nann += backend_annotation(s, &s->insts[k]);
    }
    size_t *ann = NULL;
    if (side == TL_COLL_GPU && ngpu == nann && nann > 0 && (ann = malloc(nann * sizeof *ann)) != NULL)
        for (size_t k = 0, j = 0; k < s->ninsts; k++)
            if (backend_annotation(s, &s->insts[k]))
                ann[j++] = k;
    int64_t world = s->id.world_size > 0 ? s->id.world_size : (int64_t)a->nranks;
    for (size_t k = 0, g = 0; k < s->ninsts; k++) {
        const tl_scoll *c = &s->insts[k];
        if (c->side != side)
            continue;
        bw->instances++;
        const tl_scoll *sz = c;
        const char *name = inst_name(s, c->name);
        if (side == TL_COLL_GPU && (c->nelems < 0 || c->elem_bytes <= 0) && ann != NULL) {
            sz = &s->insts[ann[g]];
            name = inst_name(s, sz->name);
            bw->paired += sz->nelems >= 0 && sz->elem_bytes > 0;
        }
        g += c->side == TL_COLL_GPU;
        if (sz->nelems < 0 || sz->elem_bytes <= 0)
            continue;
        bw->sized++;
        int kind = tl_coll_kind_of(name);
        int64_t n = sz->group_size > 0 ? sz->group_size : c->group_size > 0 ? c->group_size : world;
        double bytes = (double)sz->nelems * (double)sz->elem_bytes * (kind == TL_CK_ALL_GATHER ? (double)n : 1.0);
        int64_t t = c->dur_ns;
        int after = waits != NULL && waits[k] >= 0;
        if (after)
            t -= waits[k];
        if (t <= 0) {
            bw->untimed++;
            continue;
        }
        bw->after_arrival += after;
        double f = tl_coll_bus_factor(kind, n);
        int b = tl_collbw_bucket_of(bytes);
        cell_add(&cells[((size_t)kind * TL_COLLBW_BUCKETS + (size_t)b) * a->nranks + ri], bytes, f, t);
        cell_add(&bw->ranks[ri], bytes, f, t);
    }
    free(ann);
}

int tl_collbw_compute(tl_aggregate *a)
{
    tl_collbw *bw = &a->collbw;
    tl_collbw_release(bw);
    if (a->nranks == 0)
        return 0;
    int rc = -1;
    size_t ncells = (size_t)TL_CK_COUNT * TL_COLLBW_BUCKETS * a->nranks;
    tl_collbw_cell *cells = calloc(ncells, sizeof *cells);
    double *v = malloc((a->nranks + 1) * sizeof *v);
    bw->ranks = calloc(a->nranks, sizeof *bw->ranks);
    if (cells == NULL || v == NULL || bw->ranks == NULL)
        goto out;
    bw->nranks = a->nranks;
    for (size_t ri = 0; ri < a->nranks; ri++) {
        const tl_rank_result *r = &a->ranks[ri];
        for (size_t j = 0; j < r->nsessions; j++) {
            const int64_t *waits =
                j == 0 && ri < a->waits.nranks && a->waits.ranks != NULL ? a->waits.ranks[ri].inst_wait : NULL;
            add_session(a, bw, cells, ri, &a->sessions[r->sessions[j]], waits);
        }
    }
    bw->source = bw->instances == 0                 ? TL_WAITS_NONE
                 : a->waits.source != TL_WAITS_NONE ? a->waits.source
                                                    : TL_WAITS_NONE;
    if (bw->source == TL_WAITS_NONE && bw->instances > 0) /* one rank: whichever side it read */
        for (size_t ri = 0; ri < a->nranks && bw->source == TL_WAITS_NONE; ri++)
            if (a->ranks[ri].nsessions > 0)
                bw->source = is_gpu_side(&a->sessions[a->ranks[ri].sessions[0]]) ? TL_WAITS_GPU : TL_WAITS_CPU;
    size_t nrows = 0;
    for (size_t rb = 0; rb < (size_t)TL_CK_COUNT * TL_COLLBW_BUCKETS; rb++)
        for (size_t ri = 0; ri < a->nranks; ri++)
            if (cells[rb * a->nranks + ri].count > 0) {
                nrows++;
                break;
            }
    if (nrows == 0) {
        rc = 0;
        goto out;
    }
    if ((bw->rows = calloc(nrows, sizeof *bw->rows)) == NULL)
        goto out;
    for (size_t rb = 0; rb < (size_t)TL_CK_COUNT * TL_COLLBW_BUCKETS; rb++) {
        const tl_collbw_cell *rc_ = &cells[rb * a->nranks];
        int any = 0;
        for (size_t ri = 0; ri < a->nranks; ri++)
            any |= rc_[ri].count > 0;
        if (!any)
            continue;
        tl_collbw_row *row = &bw->rows[bw->nrows];
        if ((row->rank = malloc(a->nranks * sizeof *row->rank)) == NULL)
            goto out;
        bw->nrows++;
        memcpy(row->rank, rc_, a->nranks * sizeof *row->rank);
        row->kind = (int)(rb / TL_COLLBW_BUCKETS);
        row->bucket = (int)(rb % TL_COLLBW_BUCKETS);
        row->busbw_min = row->busbw_median = row->busbw_max = NAN;
        row->min_rank = row->max_rank = -1;
        size_t nv = 0;
        for (size_t ri = 0; ri < a->nranks; ri++) {
            const tl_collbw_cell *c = &rc_[ri];
            if (c->count == 0)
                continue;
            row->nranks++;
            row->all.count += c->count;
            row->all.bytes += c->bytes;
            row->all.time_ns += c->time_ns;
            row->all.bus_count += c->bus_count;
            row->all.bus_bytes += c->bus_bytes;
            row->all.bus_time_ns += c->bus_time_ns;
            double b = tl_collbw_busbw(c);
            if (!isfinite(b))
                continue;
            v[nv++] = b;
            if (row->min_rank < 0 || b < row->busbw_min) {
                row->busbw_min = b;
                row->min_rank = a->ranks[ri].rank;
            }
            if (row->max_rank < 0 || b > row->busbw_max) {
                row->busbw_max = b;
                row->max_rank = a->ranks[ri].rank;
            }
        }
        if (nv > 0)
            row->busbw_median = tl_median_sort(v, nv);
    }
    rc = 0;
out:
    free(cells);
    free(v);
    if (rc != 0)
        tl_collbw_release(bw);
    return rc;
}
