/*
 * kernel_ops.h - which operator launched each kernel, and how each kernel was
 * launched (grid, block, registers, shared memory, occupancy), from a trace.
 *
 * The one idea: a kernel carries the correlation id of the runtime call that
 * launched it (cudaLaunchKernel, hipLaunchKernel); that call ran inside an
 * operator on its thread. While reading, the operators' ranges (bounded) and
 * each launch call's time and thread are kept; at the end each kernel's launch
 * finds the innermost operator around it, and each kernel name the operator
 * that launched most of its time. The same for every producer: older Kineto
 * traces give a kernel its runtime call's correlation as "External id", newer
 * ones the operator's, so "External id" is not relied on.
 *
 * Memory (issue 33: a GPU-heavy trace has a launch per kernel): a launch is
 * kept as its time and its thread's index in a dense array by correlation id
 * (12 bytes an id; the GPU events' own launch times come from it too), not as
 * a record to sort; an operator as 24 bytes. At the end each kernel's launch
 * finds its operator by a binary search in its thread's operators (sorted by
 * start) and a walk up their nesting.
 *
 * Bounded: at most TL_KOPS_MAX_OPS operator ranges are kept; past them the
 * rest are counted (ops_dropped) and their kernels have no launching
 * operator.
 */
#ifndef TALLY_KERNEL_OPS_H
#define TALLY_KERNEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define TL_KOPS_MAX_OPS 4000000u

typedef struct tl_kop_range {
    int64_t ts, end;
    uint32_t name;   /* strtab id */
    uint32_t thread; /* index in tl_kops' threads */
} tl_kop_range;

/* The threads (pid, tid) of operators and launches, by index. */
typedef struct tl_kop_threads {
    int64_t (*id)[2]; /* index -> (pid, tid) */
    uint32_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, or 0 */
    uint32_t nslots;
    uint32_t last; /* the index found last (a trace's events come in runs of one thread) */
} tl_kop_threads;

/* Correlation id -> the launching call's time and thread. Ids count up one by
 * one in a process, so most live in a dense array by id - base (a bit says
 * which slots hold a launch: its slack is never written); an id the array
 * cannot take without going sparse goes to a hash. An id launched twice (or in
 * both) is the earlier launch. */
typedef struct tl_kop_launches {
    int64_t base;
    int64_t *dts;      /* by id - base: ts */
    uint32_t *dthread; /* by id - base: thread index */
    uint64_t *dbits;   /* by id - base: a launch is there */
    size_t dn, dcap;
    int64_t *keys, *ts; /* the hash: key INT64_MIN = empty */
    uint32_t *thread;
    size_t n, cap;
} tl_kop_launches;

/* A kernel name's first launch configuration as its args wrote it (for
 * tl_kops_kernel_args: a launch whose "grid" and "block" are the same text
 * has the same values, without reading them again). Length 0: not kept. */
#define TL_KOPS_DIMS_TEXT 30
typedef struct tl_kop_dims_text {
    uint8_t glen, blen;
    char grid[TL_KOPS_DIMS_TEXT], block[TL_KOPS_DIMS_TEXT];
} tl_kop_dims_text;

typedef struct tl_kops {
    tl_kop_dims_text *dims; /* by index into the profile's klaunch */
    size_t dims_cap;
    tl_kop_range *ops;
    size_t nops, ops_cap;
    tl_kop_threads threads;
    tl_kop_launches launches;
    uint64_t ops_dropped;
} tl_kops;

void tl_kops_init(tl_kops *k);
void tl_kops_release(tl_kops *k);
/* An operator's range on its thread (cpu_op). */
void tl_kops_add_op(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t dur, uint32_t name);
/* A runtime call with a correlation id (a launch, a copy, a set). 0, or -1
 * out of memory (the launch is not kept). */
int tl_kops_add_launch(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t corr);
/* A kernel's launch configuration from its args (Kineto's "grid", "block",
 * "registers per thread", "shared memory", "est. achieved occupancy %"),
 * added to the profile's entry for the kernel's name (profile.h's
 * tl_kernel_launch). args: the event's raw args text. */
struct tl_trace_event;
void tl_kops_kernel_args(tl_kops *k, tl_profile *p, uint32_t name, int64_t dur, const struct tl_trace_event *ev);
/* Give every GPU event of p its launch time (tl_gpu_event.launch_ns, in place
 * of the correlation id it held while reading), link every kernel to the
 * operator that launched it and fill each kernel name's launching operator
 * (tl_kernel_launch.op). 0, or -1 out of memory (the launch times are set,
 * p is left without operators then). */
int tl_kops_resolve(tl_kops *k, tl_profile *p);

#endif
