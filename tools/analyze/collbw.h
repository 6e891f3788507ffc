/*
 * collbw.h - collective bytes and bandwidth: per collective kind and size
 * bucket, per rank and across ranks, with NCCL's definitions
 * (docs/analysis.md, "Collective bandwidth", defines every number here).
 *
 * The one idea: a collective's time on a rank includes the time it waited
 * for the last rank to arrive (waits.h), which says nothing of the links.
 * Where the waits matched an instance, its time is taken after the last
 * arrival (its duration minus its wait); elsewhere the whole duration, and
 * the result says how many of each. Algorithm bandwidth is bytes over that
 * time; bus bandwidth scales it by the kind's factor (all_reduce 2(n-1)/n,
 * all_gather, reduce_scatter and all_to_all (n-1)/n, the rest 1) so that
 * kinds and group sizes compare against the hardware's link bandwidth.
 *
 * Computed by tl_collbw_compute (tl_aggregate_finish, after the waits);
 * computes, never formats.
 */
#ifndef TALLY_COLLBW_H
#define TALLY_COLLBW_H

#include <stddef.h>
#include <stdint.h>

struct tl_aggregate;

enum tl_coll_kind {
    TL_CK_ALL_REDUCE = 0,
    TL_CK_ALL_GATHER,
    TL_CK_REDUCE_SCATTER,
    TL_CK_ALL_TO_ALL,
    TL_CK_BROADCAST,
    TL_CK_REDUCE,
    TL_CK_SEND_RECV,
    TL_CK_OTHER, /* barrier, gather, scatter, ... : no bus factor */
    TL_CK_COUNT
};
/* "all_reduce", ..., "other"; NULL out of range. */
const char *tl_coll_kind_name(int kind);
/* The kind of a collective by its name ("nccl:all_reduce", "gloo:all_reduce",
 * "ncclDevKernel_AllGather_RING_LL", "c10d::alltoall_base_"). */
int tl_coll_kind_of(const char *name);
/* NCCL's bus factor of a kind over n ranks; NaN for TL_CK_OTHER or n < 1. */
double tl_coll_bus_factor(int kind, int64_t n);

/* Size buckets by NCCL's size S (bytes): [0, 64 KiB), [64 KiB, 1 MiB),
 * [1, 16 MiB), [16, 256 MiB), [256 MiB, ...): latency-bound to
 * bandwidth-bound. tl_collbw_bucket_lo(b) is bucket b's lower bound. */
#define TL_COLLBW_BUCKETS 5
double tl_collbw_bucket_lo(int bucket);
int tl_collbw_bucket_of(double bytes);

/* Instances added up: bandwidths are sums over sums (bytes / time). */
typedef struct tl_collbw_cell {
    uint64_t count;      /* sized instances with a positive time */
    double bytes;        /* NCCL's S, added up */
    double bus_bytes;    /* S x the bus factor, added up (NaN factors left out) */
    uint64_t bus_count;  /* instances in bus_bytes */
    int64_t time_ns;     /* their times added up */
    int64_t bus_time_ns; /* ... of those in bus_bytes */
} tl_collbw_cell;
/* bytes / s: algorithm bandwidth and bus bandwidth of a cell; NaN when empty. */
double tl_collbw_algbw(const tl_collbw_cell *c);
double tl_collbw_busbw(const tl_collbw_cell *c);

typedef struct tl_collbw_row {
    int kind, bucket;
    tl_collbw_cell all;                        /* every rank's */
    tl_collbw_cell *rank;                      /* per rank index (tl_aggregate.ranks) */
    int nranks;                                /* ranks with an instance in the row */
    double busbw_min, busbw_median, busbw_max; /* across those ranks (bytes/s; NaN without a factor) */
    int min_rank, max_rank;                    /* rank numbers; -1 unknown */
} tl_collbw_row;

typedef struct tl_collbw {
    int source;             /* tl_waits_source of the instances read; NONE: no collectives */
    uint64_t instances;     /* collective instances read */
    uint64_t sized;         /* ... with a size (bytes known) */
    uint64_t after_arrival; /* ... sized, timed after the last arrival (the waits matched them) */
    uint64_t paired;        /* GPU kernels sized by their CPU-side annotation (nccl:*) */
    uint64_t untimed;       /* sized, but no time left after the last arrival: left out */
    tl_collbw_row *rows;    /* by kind, then bucket */
    size_t nrows;
    tl_collbw_cell *ranks; /* per rank index: every kind and size */
    size_t nranks;
} tl_collbw;

/* Compute a->collbw from the ranks' sessions and a->waits. 0, or -1 out of memory. */
int tl_collbw_compute(struct tl_aggregate *a);
void tl_collbw_release(tl_collbw *c);

#endif
