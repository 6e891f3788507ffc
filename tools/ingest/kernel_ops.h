/*
 * kernel_ops.h - which operator launched each kernel, and how each kernel was
 * launched (grid, block, registers, shared memory, occupancy), from a trace.
 *
 * The one idea: a kernel carries the correlation id of the runtime call that
 * launched it (cudaLaunchKernel, hipLaunchKernel); that call ran inside an
 * operator on its thread. While reading, the operators' ranges and the launch
 * calls are kept per thread (bounded); at the end each launch finds the
 * innermost operator around it, and each kernel name the operator that
 * launched most of its time. The same for every producer: older Kineto
 * traces give a kernel its runtime call's correlation as "External id", newer
 * ones the operator's, so "External id" is not relied on.
 *
 * Bounded: at most TL_KOPS_MAX_OPS operator ranges and TL_KOPS_MAX_LAUNCHES
 * launch calls are kept; past them the rest are counted (ops_dropped,
 * launches_dropped) and their kernels have no launching operator.
 */
#ifndef TALLY_KERNEL_OPS_H
#define TALLY_KERNEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define TL_KOPS_MAX_OPS 4000000u
#define TL_KOPS_MAX_LAUNCHES 4000000u

typedef struct tl_kop_range {
    int64_t pid, tid, ts, end;
    uint32_t name; /* strtab id */
} tl_kop_range;

typedef struct tl_kop_launch {
    int64_t pid, tid, ts, corr;
} tl_kop_launch;

typedef struct tl_kops {
    tl_kop_range *ops;
    size_t nops, ops_cap;
    tl_kop_launch *launches;
    size_t nlaunches, launches_cap;
    uint64_t ops_dropped, launches_dropped;
} tl_kops;

void tl_kops_init(tl_kops *k);
void tl_kops_release(tl_kops *k);
/* An operator's range on its thread (cpu_op). */
void tl_kops_add_op(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t dur, uint32_t name);
/* A runtime call with a correlation id (a launch, a copy, a set). */
void tl_kops_add_launch(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t corr);
/* A kernel's launch configuration from its args (Kineto's "grid", "block",
 * "registers per thread", "shared memory", "est. achieved occupancy %"),
 * added to the profile's entry for the kernel's name (profile.h's
 * tl_kernel_launch). args: the event's raw args text. */
struct tl_trace_event;
void tl_kops_kernel_args(tl_profile *p, uint32_t name, int64_t dur, const struct tl_trace_event *ev);
/* Link every GPU kernel of p to the operator that launched it and fill each
 * kernel name's launching operator (tl_kernel_launch.op). 0, or -1 out of
 * memory (p is left without operators then). */
int tl_kops_resolve(tl_kops *k, tl_profile *p);

#endif
