/*
 * nesting.h - self and inclusive time from the events of a trace.
 *
 * Per thread (pid, tid) and kind of event (cls: the name group, so operators
 * nest in operators and annotations in annotations, as Kineto writes each
 * kind in its own run of the file), complete events nest: an event inside
 * another is its child. A name's inclusive time counts only its outermost occurrence on
 * a thread's stack (aten::copy_ inside aten::copy_ counts once), its self
 * time is each occurrence minus its direct children. Events reach the stacks
 * in start order through a bounded reorder buffer (TL_NEST_REORDER events), so
 * traces written at completion (end order, as libtally and B/E pairs are)
 * work too as long as no event arrives more than that many events late.
 * Beyond it only that kind of event loses its nesting (PyTorch writes a
 * with_stack trace's python_function events after ~21,000 operators): its
 * names get no self or inclusive time (tl_name_stat.nest_lost), the other
 * kinds keep theirs, and the profile says so (tl_profile.nest_lost, a note).
 *
 * The same stacks build the profile's call tree (calltree.h): each frame is a
 * node under the frame below it, or under its kind's root. A frame that is
 * closed before a longer event with the same start arrives (later than the
 * reorder heap could restore) stays under the parent it was placed under:
 * its time moves to the new event's children, its node does not move. And
 * each thread's longest calls at most TL_LANE_MAX_DEPTH deep are kept for the
 * timeline (profile.h, tl_cpu_lane.top).
 * The buffer is a sorted ring while events come (nearly) in order, as Kineto
 * writes them: appending and taking the first cost O(1), a late event (Kineto
 * writes a step's GPU annotation at its end) is inserted in its place. When
 * late events have moved more than TL_NEST_SHIFT_BUDGET others per event on
 * average, the ring becomes a min-heap (a sorted array already is one). Either
 * way events leave it in the same order.
 */
#ifndef TALLY_NESTING_H
#define TALLY_NESTING_H

#include "calltree.h"
#include "profile.h"

#define TL_NEST_REORDER 16384  /* events held back to restore start order (a power of 2) */
#define TL_NEST_SHIFT_BUDGET 4 /* items a late event may move into place, per event on average */
#define TL_NEST_MAX_DEPTH 4096 /* deeper nesting: self time is not given */
#define TL_NEST_MAX_THREADS 65536
#define TL_NEST_TREE_STACK 64 /* a thread's call tree stacks: kinds from here (nesting.c's tree_group) */

typedef struct tl_nest_frame {
    int64_t ts, end, children;
    uint32_t stat;
    uint32_t node; /* call tree node, TL_CALLTREE_NONE: not recorded */
    uint8_t outer;
    uint8_t toplevel; /* directly under its kind's root */
    uint8_t kind;     /* a call tree stack's frame: its event's kind */
} tl_nest_frame;

typedef struct tl_nest_thread {
    int64_t pid, tid, last_ts;
    int cls; /* the kind of its events, or TL_NEST_TREE_STACK + the call tree group */
    tl_nest_frame *v;
    size_t n, cap;
    tl_cpu_lane *lane; /* the thread's timeline lane (NULL: none) */
    int lane_known;    /* lane was looked up */
} tl_nest_thread;

typedef struct tl_nest_item {
    int64_t ts, dur, pid, tid;
    uint64_t seq;
    uint32_t stat;
    uint32_t name; /* strtab id of the stat's name when added (stable across folding) */
    int cls;
} tl_nest_item;

typedef struct tl_nest {
    tl_profile *p;
    tl_nest_item *heap; /* the reorder buffer: a sorted ring from `head`, or a heap */
    size_t nheap, head;
    size_t budget; /* moves left for late events (TL_NEST_SHIFT_BUDGET per event) */
    int is_heap;
    uint64_t seq;
    tl_nest_thread *threads;
    size_t nthreads, threads_cap;
    uint32_t *slots;
    size_t nslots;
    size_t last_thread; /* the thread of the last event placed */
    uint64_t probes;    /* probes added (tl_nest_probe): no events of their own */
    int broken;
    char why[160];
    uint32_t cls_lost;            /* kinds whose events came too far out of order: left out (bit per cls) */
    uint64_t lost_events;         /* their events not placed */
    tl_calltree *tree;            /* handed to the profile by tl_nest_finish */
    uint32_t roots[TL_CTK_COUNT]; /* root node per kind, TL_CALLTREE_NONE until used */
    uint32_t step_name;           /* "ProfilerStep#*" in the profile's strings + 1 (0: not yet, UINT32_MAX: none) */
} tl_nest;

void tl_nest_init(tl_nest *n, tl_profile *p);
/* One CPU-side complete event [ts, ts + dur) of the stat with index stat. */
void tl_nest_add(tl_nest *n, int64_t pid, int64_t tid, int cls, int64_t ts, int64_t dur, uint32_t stat);
/* Drain, close every stack, set p->nesting and hand the call tree to
 * p->calltree (not when the nesting broke: a partial tree would mislead). */
void tl_nest_finish(tl_nest *n);
void tl_nest_release(tl_nest *n);

/* Which event of kind cls is open on thread (pid, tid) at ts: when the
 * stacks reach ts in start order (after every event that starts at ts), the
 * innermost open frame's stat (UINT32_MAX: none) goes to mem_ops.h's
 * tl_mem_ops_apply with key -- a [memory] instant learns its operator. */
void tl_nest_probe(tl_nest *n, int64_t pid, int64_t tid, int cls, int64_t ts, uint32_t key);

#endif
