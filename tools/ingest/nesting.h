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
 * work too as long as no event arrives more than that many events late;
 * beyond it the profile's nesting is TL_NEST_BROKEN and no self time is given.
 * The buffer is a sorted ring while events come (nearly) in order, as Kineto
 * writes them: appending and taking the first cost O(1), a late event (Kineto
 * writes a step's GPU annotation at its end) is inserted in its place. When
 * late events have moved more than TL_NEST_SHIFT_BUDGET others per event on
 * average, the ring becomes a min-heap (a sorted array already is one). Either
 * way events leave it in the same order.
 */
#ifndef TALLY_NESTING_H
#define TALLY_NESTING_H

#include "profile.h"

#define TL_NEST_REORDER 16384   /* events held back to restore start order (a power of 2) */
#define TL_NEST_SHIFT_BUDGET 4  /* items a late event may move into place, per event on average */
#define TL_NEST_MAX_DEPTH 4096  /* deeper nesting: self time is not given */
#define TL_NEST_MAX_THREADS 65536

typedef struct tl_nest_frame {
    int64_t ts, end, children;
    uint32_t stat;
    uint8_t outer;
} tl_nest_frame;

typedef struct tl_nest_thread {
    int64_t pid, tid, last_ts;
    int cls;
    tl_nest_frame *v;
    size_t n, cap;
} tl_nest_thread;

typedef struct tl_nest_item {
    int64_t ts, dur, pid, tid;
    uint64_t seq;
    uint32_t stat;
    int cls;
} tl_nest_item;

typedef struct tl_nest {
    tl_profile *p;
    tl_nest_item *heap;     /* the reorder buffer: a sorted ring from `head`, or a heap */
    size_t nheap, head;
    size_t budget;          /* moves left for late events (TL_NEST_SHIFT_BUDGET per event) */
    int is_heap;
    uint64_t seq;
    tl_nest_thread *threads;
    size_t nthreads, threads_cap;
    uint32_t *slots;
    size_t nslots;
    size_t last_thread;     /* the thread of the last event placed */
    int broken;
    char why[160];
} tl_nest;

void tl_nest_init(tl_nest *n, tl_profile *p);
/* One CPU-side complete event [ts, ts + dur) of the stat with index stat. */
void tl_nest_add(tl_nest *n, int64_t pid, int64_t tid, int cls, int64_t ts, int64_t dur, uint32_t stat);
/* Drain, close every stack, set p->nesting (and a warning when broken). */
void tl_nest_finish(tl_nest *n);
void tl_nest_release(tl_nest *n);

#endif
