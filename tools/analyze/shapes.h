/*
 * shapes.h - operators by input shape across ranks, their FLOPs and achieved
 * TFLOP/s against the device's peak (docs/analysis.md, "Operators by input
 * shape" and "FLOPs", define every number here).
 *
 * The one idea: a row is an (operator, input shapes, dtypes) key as the
 * trace wrote it (record_shapes), added up over every rank; the table is
 * bounded -- the TL_SHAPES_TOP_OPS operators with the most time, the
 * TL_SHAPES_PER_OP shapes of each with the most time -- and says what it cut.
 * FLOPs come from the trace's "flops" arg when every call of a row has one,
 * else from the shapes for the operators whose cost is standard (matrix
 * products, linear, attention), else they are unknown.
 *
 * Computed by tl_shapes_compute (tl_aggregate_finish); computes, never formats.
 */
#ifndef TALLY_ANALYZE_SHAPES_H
#define TALLY_ANALYZE_SHAPES_H

#include <stddef.h>
#include <stdint.h>

struct tl_aggregate;

#define TL_SHAPES_TOP_OPS 10
#define TL_SHAPES_PER_OP 5

enum tl_flops_source { TL_FLOPS_NONE = 0, TL_FLOPS_TRACE, TL_FLOPS_SHAPES };
/* The time achieved TFLOP/s is over: the kernels the calls launched (GPU),
 * the calls' own time when no input of the row has GPU events (CPU), or
 * none (a GPU input whose calls launched no kernel tally could link). */
enum tl_tflops_time { TL_TFLOPS_NONE = 0, TL_TFLOPS_GPU, TL_TFLOPS_CPU };

typedef struct tl_shape_row {
    const char *name, *dims, *types; /* borrowed from the sessions */
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    int64_t *rank_ns; /* per rank index: its total (0: none) */
    int nranks;       /* ranks with a call */
    int64_t rank_min_ns, rank_max_ns;
    double rank_median_ns;
    int min_rank, max_rank; /* rank numbers */
    int flops_source;       /* tl_flops_source */
    double flops;           /* every call's FLOPs added up; NaN unknown */
    int64_t gpu_ns;         /* the kernels its calls launched themselves, added up */
    uint64_t kernels;       /* ... how many */
    int time_source;        /* tl_tflops_time: the time TFLOP/s is over */
    double tflops;          /* achieved: flops / that time, 1e12/s; NaN unknown */
    double peak_tflops;     /* the device's peak for the row's dtype; NaN unknown */
} tl_shape_row;

typedef struct tl_shape_op {
    const char *name;
    uint64_t count;
    int64_t total_ns; /* over every shape of it kept by the sessions */
    size_t shapes;    /* its distinct shapes */
    size_t first, n;  /* its rows shown: rows[first .. first + n) */
} tl_shape_op;

typedef struct tl_shapes {
    tl_shape_row *rows; /* the shown rows, by operator then total */
    size_t nrows;
    tl_shape_op *ops;                     /* the TL_SHAPES_TOP_OPS operators, by total */
    size_t nops, ops_total;               /* shown, and every operator with shapes */
    uint64_t dropped_keys, dropped_calls; /* the sessions' keys not kept (TL_SESSION_MAX_SHAPES) */
    int sessions;                         /* sessions with shapes */
    const char *device;                   /* the device the peaks are of (the first rank's); NULL unknown */
    int peak_known;                       /* the device is in the peak table */
} tl_shapes;

int tl_shapes_compute(struct tl_aggregate *a);
void tl_shapes_release(tl_shapes *s);

/* FLOPs of one call of an operator from its "Input Dims" text (normalized:
 * "[[512,1024],[1024,1024]]"), or NaN when the operator's cost is not
 * standard or the shapes do not fit it. */
double tl_shape_flops(const char *name, const char *dims);
/* The dense peak TFLOP/s of a device (by a part of its name: "H100", "A100")
 * for a dtype as the trace names it ("float", "c10::BFloat16"); NaN unknown. */
double tl_device_peak_tflops(const char *device, const char *dtype);

#endif
