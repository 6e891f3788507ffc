/*
 * nesting.c - self and inclusive time per name (see nesting.h).
 */
#include "nesting.h"
#include "mem_ops.h"

#include <inttypes.h>
#include "array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names budget folded the profile's statistics: every index held on the
 * stacks and in the reorder heap is renumbered (profile.h's on_fold). */
static void remap(void *ctx, const uint32_t *map, uint32_t nmap)
{
    tl_nest *n = ctx;
    for (size_t i = 0; i < n->nheap; i++) { /* the ring from head (a heap starts at 0) */
        tl_nest_item *e = &n->heap[(n->head + i) & (TL_NEST_REORDER - 1)];
        e->stat = e->stat < nmap ? map[e->stat] : UINT32_MAX;
    }
    for (size_t t = 0; t < n->nthreads; t++)
        for (size_t k = 0; k < n->threads[t].n; k++) {
            uint32_t s = n->threads[t].v[k].stat;
            n->threads[t].v[k].stat = s < nmap ? map[s] : UINT32_MAX;
        }
}

void tl_nest_init(tl_nest *n, tl_profile *p)
{
    memset(n, 0, sizeof *n);
    n->p = p;
    p->on_fold = remap;
    p->on_fold_ctx = n;
    for (int k = 0; k < TL_CTK_COUNT; k++)
        n->roots[k] = TL_CALLTREE_NONE;
}

void tl_nest_release(tl_nest *n)
{
    if (n->p != NULL && n->p->on_fold_ctx == n) {
        n->p->on_fold = NULL;
        n->p->on_fold_ctx = NULL;
    }
    for (size_t i = 0; i < n->nthreads; i++)
        free(n->threads[i].v);
    free(n->threads);
    free(n->slots);
    free(n->heap);
    if (n->tree != NULL) {
        tl_calltree_release(n->tree);
        free(n->tree);
    }
    memset(n, 0, sizeof *n);
}

static void broken(tl_nest *n, const char *why)
{
    if (!n->broken) {
        n->broken = 1;
        snprintf(n->why, sizeof n->why, "%s", why);
    }
}

static uint64_t thread_hash(int64_t pid, int64_t tid, int cls)
{
    uint64_t h =
        (uint64_t)pid * 0x9e3779b97f4a7c15ull ^ ((uint64_t)tid + 0x632be59bd9b4e019ull) ^ ((uint64_t)cls << 56);
    return h ^ (h >> 29);
}

static tl_nest_thread *thread_of(tl_nest *n, int64_t pid, int64_t tid, int cls)
{
    /* runs of events of one thread: the last one first */
    if (n->last_thread < n->nthreads) {
        tl_nest_thread *t = &n->threads[n->last_thread];
        if (t->pid == pid && t->tid == tid && t->cls == cls)
            return t;
    }
    if ((n->nthreads + 1) * 2 > n->nslots) {
        if (n->nthreads >= TL_NEST_MAX_THREADS)
            return NULL;
        size_t ns = n->nslots ? n->nslots * 2 : 64;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (slots == NULL)
            return NULL;
        for (size_t i = 0; i < n->nthreads; i++) {
            size_t j = thread_hash(n->threads[i].pid, n->threads[i].tid, n->threads[i].cls) & (ns - 1);
            while (slots[j])
                j = (j + 1) & (ns - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(n->slots);
        n->slots = slots;
        n->nslots = ns;
    }
    size_t j = thread_hash(pid, tid, cls) & (n->nslots - 1);
    while (n->slots[j]) {
        tl_nest_thread *t = &n->threads[n->slots[j] - 1];
        if (t->pid == pid && t->tid == tid && t->cls == cls) {
            n->last_thread = n->slots[j] - 1;
            return t;
        }
        j = (j + 1) & (n->nslots - 1);
    }
    if (tl_array_grow(&n->threads, n->nthreads, &n->threads_cap, sizeof *n->threads, 16) != 0)
        return NULL;
    tl_nest_thread *t = &n->threads[n->nthreads];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->cls = cls;
    t->last_ts = INT64_MIN;
    n->slots[j] = (uint32_t)++n->nthreads;
    n->last_thread = n->nthreads - 1;
    return t;
}

/* Times come from the input, which may hold anything an int64 can:
 * differences saturate like tl_ns_add's sums (profile.h). */
static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static void finalize(tl_nest *n, const tl_nest_frame *f)
{
    /* UINT32_MAX: the fold could not place the name (out of memory) */
    tl_name_stat *st = f->stat < n->p->nstats ? &n->p->stats[f->stat] : NULL;
    int64_t dur = sat_sub(f->end, f->ts), self = sat_sub(dur, f->children);
    if (st != NULL) {
        st->self_ns = tl_ns_add(st->self_ns, self > 0 ? self : 0);
        if (f->outer)
            st->incl_ns = tl_ns_add(st->incl_ns, dur);
        if (st->open)
            st->open--;
    }
    if (f->node != TL_CALLTREE_NONE) {
        tl_cnode *c = &n->tree->nodes[f->node];
        c->incl_ns = tl_ns_add(c->incl_ns, dur);
        c->self_ns = tl_ns_add(c->self_ns, self > 0 ? self : 0);
        c->count++;
    }
    /* a root holds its top-level calls, recorded as nodes or not */
    uint32_t r = f->toplevel ? n->roots[f->kind < TL_CTK_COUNT ? f->kind : TL_CTK_OTHER] : TL_CALLTREE_NONE;
    if (r != TL_CALLTREE_NONE) {
        n->tree->nodes[r].incl_ns = tl_ns_add(n->tree->nodes[r].incl_ns, dur);
        n->tree->nodes[r].count++;
    }
}

/* The root node of a kind, created on first use; TL_CALLTREE_NONE when the
 * tree cannot be had (out of memory: the frames are then counted as dropped). */
static uint32_t root_of(tl_nest *n, int cls)
{
    if (cls < 0 || cls >= TL_CTK_COUNT)
        cls = TL_CTK_OTHER;
    if (n->roots[cls] != TL_CALLTREE_NONE)
        return n->roots[cls];
    if (n->tree == NULL) {
        if ((n->tree = malloc(sizeof *n->tree)) == NULL)
            return TL_CALLTREE_NONE;
        tl_calltree_init(n->tree);
    }
    const char *label = tl_calltree_kind_label(cls);
    uint32_t name = tl_strtab_intern(&n->p->strs, label, strlen(label));
    if (name != UINT32_MAX)
        n->roots[cls] = tl_calltree_child(n->tree, TL_CALLTREE_NONE, name);
    if (n->roots[cls] != TL_CALLTREE_NONE)
        n->tree->nodes[n->roots[cls]].kind = (uint8_t)cls;
    return n->roots[cls];
}

/* The tree's name of an annotation: PyTorch's numbered steps (ProfilerStep#N)
 * are one node, ProfilerStep#*, whose count is the steps' (else the tree
 * holds every operator path once per step: the steps a trace records
 * multiply its nodes, and ranks whose step numbers differ would not merge). */
static uint32_t step_name(tl_nest *n, uint32_t name)
{
    static const char prefix[] = "ProfilerStep#";
    const char *s = tl_strtab_get(&n->p->strs, name);
    size_t len = sizeof prefix - 1;
    if (s == NULL || strncmp(s, prefix, len) != 0 || s[len] == '\0')
        return name;
    for (const char *c = s + len; *c; c++)
        if (*c < '0' || *c > '9')
            return name;
    if (n->step_name == 0) {
        uint32_t id = tl_strtab_intern(&n->p->strs, "ProfilerStep#*", 14);
        n->step_name = id == UINT32_MAX ? UINT32_MAX : id + 1;
    }
    return n->step_name != UINT32_MAX ? n->step_name - 1 : name;
}

/* The node of a new frame under the call tree stack's top frame (or the
 * root of its kind), of the event's kind. */
static uint32_t node_of(tl_nest *n, const tl_nest_thread *t, const tl_nest_item *e)
{
    uint32_t parent = t->n > 0 ? t->v[t->n - 1].node : root_of(n, e->cls);
    uint32_t had = n->tree != NULL ? n->tree->n : 0;
    uint32_t name = e->cls == TL_CTK_ANNOTATIONS ? step_name(n, e->name) : e->name;
    uint32_t node = parent == TL_CALLTREE_NONE ? TL_CALLTREE_NONE : tl_calltree_child(n->tree, parent, name);
    if (node == TL_CALLTREE_NONE && n->tree != NULL)
        n->tree->dropped++;
    else if (node != TL_CALLTREE_NONE && node >= had)
        n->tree->nodes[node].kind = (uint8_t)(e->cls >= 0 && e->cls < TL_CTK_COUNT ? e->cls : TL_CTK_OTHER);
    return node;
}

/* Which call tree stack an event's kind nests in (nesting.h): operators
 * with annotations and sections, every other kind with itself. Offset past
 * the kinds so that a thread's tree stack is never one of its kind stacks. */
static int tree_group(int cls)
{
    return TL_NEST_TREE_STACK + (cls == TL_CTK_ANNOTATIONS ? TL_CTK_OPS : cls);
}

/* Offer a call to its thread's lane: kept when among the lane's
 * TL_LANE_TOP_EVENTS longest (a min-heap by duration, then later start). */
static int lane_less(const tl_lane_event *a, const tl_lane_event *b)
{
    if (a->dur_ns != b->dur_ns)
        return a->dur_ns < b->dur_ns;
    if (a->ts_ns != b->ts_ns)
        return a->ts_ns > b->ts_ns;
    return a->depth > b->depth;
}

static void lane_offer(tl_nest *n, tl_nest_thread *t, const tl_nest_item *e, size_t depth)
{
    /* GPU annotations sit on GPU streams' pids and tids: not a CPU lane */
    if (depth >= TL_LANE_MAX_DEPTH || e->dur <= 0 || e->cls == TL_CTK_GPU_ANNOTATIONS)
        return;
    if (!t->lane_known) {
        t->lane_known = 1;
        t->lane = tl_profile_cpu_lane(n->p, e->pid, e->tid);
    }
    tl_cpu_lane *l = t->lane;
    if (l == NULL)
        return;
    if (l->top == NULL && (l->top = malloc(TL_LANE_TOP_EVENTS * sizeof *l->top)) == NULL)
        return;
    l->top_offered++;
    tl_lane_event x = { e->ts, e->dur, e->name, (uint8_t)depth,
                        (uint8_t)(e->cls >= 0 && e->cls < TL_CTK_COUNT ? e->cls : 0) };
    size_t i;
    if (l->ntop < TL_LANE_TOP_EVENTS) {
        i = l->ntop++;
        while (i > 0 && lane_less(&x, &l->top[(i - 1) / 2])) {
            l->top[i] = l->top[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        l->top[i] = x;
        return;
    }
    if (!lane_less(&l->top[0], &x))
        return;
    /* replace the shortest kept call and sift down */
    i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->ntop)
            break;
        if (c + 1 < l->ntop && lane_less(&l->top[c + 1], &l->top[c]))
            c++;
        if (!lane_less(&l->top[c], &x))
            break;
        l->top[i] = l->top[c];
        i = c;
    }
    l->top[i] = x;
}

static int contains(const tl_nest_frame *f, int64_t ts, int64_t end)
{
    return f->ts <= ts && end <= f->end;
}

/* Whether a frame of stat s is open on thread t: a name nested in itself
 * counts once in its inclusive time, on its own thread only. The stat's
 * open count spans every thread (and a thread's ended frames stay on its
 * stack until its next event), so it only says when no frame is open
 * anywhere; else the stack is searched (a name in itself is found at once;
 * aten::fill_ on the main and the autograd thread, 10 us and 5 us apart,
 * read 10 us inclusive). */
static int open_on(const tl_nest_thread *t, const tl_name_stat *st, uint32_t s)
{
    if (st == NULL || st->open == 0)
        return 0;
    for (size_t k = t->n; k-- > 0;)
        if (t->v[k].stat == s)
            return 1;
    return 0;
}

/* A probe (tl_nest_probe: dur -1) in start order: the innermost frame of
 * its thread still open at its time. */
static void probe(tl_nest *n, const tl_nest_item *e)
{
    tl_nest_thread *t = thread_of(n, e->pid, e->tid, e->cls);
    uint32_t stat = UINT32_MAX;
    if (t != NULL && !(n->cls_lost & (1u << (e->cls & 31))) && e->ts >= t->last_ts)
        for (size_t k = t->n; k-- > 0;)
            if (t->v[k].end > e->ts) {
                stat = t->v[k].stat;
                break;
            }
    tl_mem_ops_apply(n->p, e->name, stat);
}

/* Close the frames of stack t that do not contain [ts, end) (an event in
 * start order); the time of those it adopts (see below), for its children. */
static int64_t close_to(tl_nest *n, tl_nest_thread *t, int64_t ts, int64_t end)
{
    int64_t adopted = 0;
    /* Frames that ended before this event starts are done. */
    while (t->n > 0 && t->v[t->n - 1].end <= ts)
        finalize(n, &t->v[--t->n]);
    /* A frame that does not contain the event either starts with it and is
     * shorter (then it is the event's child: equal start times come in any
     * order) or overlaps it without nesting (then it is closed as it is). */
    while (t->n > 0 && !contains(&t->v[t->n - 1], ts, end)) {
        tl_nest_frame *top = &t->v[t->n - 1];
        if (top->ts >= ts && top->end <= end) {
            tl_nest_frame *below = t->n > 1 ? &t->v[t->n - 2] : NULL;
            if (below == NULL || !(below->ts >= ts && below->end <= end)) {
                adopted = tl_ns_add(adopted, sat_sub(top->end, top->ts));
                if (below)
                    below->children = sat_sub(below->children, sat_sub(top->end, top->ts));
            }
        }
        finalize(n, top);
        t->n--;
    }
    return adopted;
}

/* Push a frame on stack t (its top frame gets the event as a child); 0, or
 * -1 when the nesting broke. */
static int push_frame(tl_nest *n, tl_nest_thread *t, tl_nest_frame f)
{
    if (t->n >= TL_NEST_MAX_DEPTH) {
        broken(n, "nesting deeper than TL_NEST_MAX_DEPTH");
        return -1;
    }
    if (tl_array_grow(&t->v, t->n, &t->cap, sizeof *t->v, 32) != 0) {
        broken(n, "out of memory");
        return -1;
    }
    if (t->n > 0)
        t->v[t->n - 1].children = tl_ns_add(t->v[t->n - 1].children, sat_sub(f.end, f.ts));
    t->v[t->n++] = f;
    return 0;
}

/* The event on its thread's call tree stack, where the kinds that nest in
 * each other share one stack (tree_group). An event the stack cannot take
 * in start order (it came later than the reorder buffer could restore, past
 * an event of the other kind) is not recorded, like a call beyond the cap. */
static void place_in_tree(tl_nest *n, const tl_nest_item *e, int64_t end)
{
    tl_nest_thread *t = thread_of(n, e->pid, e->tid, tree_group(e->cls));
    if (t == NULL) {
        broken(n, "too many threads");
        return;
    }
    if (e->ts < t->last_ts) {
        if (n->tree != NULL)
            n->tree->dropped++;
        return;
    }
    t->last_ts = e->ts;
    int64_t adopted = close_to(n, t, e->ts, end);
    uint32_t node = node_of(n, t, e);
    uint8_t kind = (uint8_t)(e->cls >= 0 && e->cls < TL_CTK_COUNT ? e->cls : TL_CTK_OTHER);
    push_frame(n, t, (tl_nest_frame){ e->ts, end, adopted, UINT32_MAX, node, 0, t->n == 0, kind });
}

/* One event in start order on its thread. */
static void place(tl_nest *n, const tl_nest_item *e)
{
    if (e->dur < 0) {
        probe(n, e);
        return;
    }
    tl_nest_thread *t = thread_of(n, e->pid, e->tid, e->cls);
    if (t == NULL) {
        broken(n, "too many threads");
        return;
    }
    if (e->ts < t->last_ts || (n->cls_lost & (1u << (e->cls & 31)))) {
        /* this kind of event came more than the reorder buffer late: it
         * alone loses its nesting, the other kinds keep theirs */
        n->cls_lost |= 1u << (e->cls & 31);
        n->lost_events++;
        return;
    }
    t->last_ts = e->ts;
    int64_t end = tl_ns_add(e->ts, e->dur);
    place_in_tree(n, e, end);
    if (n->broken)
        return;
    t = thread_of(n, e->pid, e->tid, e->cls); /* the tree's stack may have moved the threads */
    if (t == NULL) {
        broken(n, "too many threads");
        return;
    }
    int64_t adopted = close_to(n, t, e->ts, end);
    tl_name_stat *st = e->stat < n->p->nstats ? &n->p->stats[e->stat] : NULL;
    if (st != NULL) /* the threads it ran on (a bit per thread index mod 64) */
        st->thread_bits |= 1ull << ((size_t)(t - n->threads) & 63);
    if (t->n < TL_NEST_MAX_DEPTH)
        lane_offer(n, t, e, t->n);
    uint8_t outer = (uint8_t)!open_on(t, st, e->stat);
    if (push_frame(n, t, (tl_nest_frame){ e->ts, end, adopted, e->stat, TL_CALLTREE_NONE, outer, 0, 0 }) == 0 && st)
        st->open++;
}

/* The reorder order: by (ts, longer first, annotations first, arrival), a
 * strict total order. */
static int before(const tl_nest_item *a, const tl_nest_item *b)
{
    if (a->ts != b->ts)
        return a->ts < b->ts;
    if (a->dur != b->dur)
        return a->dur > b->dur;
    /* the same range twice: an annotation or section holds the operator
     * (a record_function range and the op it wraps, to the nanosecond) */
    if ((a->cls == TL_CTK_ANNOTATIONS) != (b->cls == TL_CTK_ANNOTATIONS))
        return a->cls == TL_CTK_ANNOTATIONS;
    return a->seq < b->seq;
}

static void heap_pop(tl_nest *n, tl_nest_item *out)
{
    *out = n->heap[0];
    n->heap[0] = n->heap[--n->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n->nheap && before(&n->heap[l], &n->heap[m]))
            m = l;
        if (r < n->nheap && before(&n->heap[r], &n->heap[m]))
            m = r;
        if (m == i)
            break;
        tl_nest_item x = n->heap[i];
        n->heap[i] = n->heap[m];
        n->heap[m] = x;
        i = m;
    }
}

/* The next event in start order, out of the reorder buffer (not empty). */
static void buffer_pop(tl_nest *n, tl_nest_item *out)
{
    if (n->is_heap) {
        heap_pop(n, out);
        return;
    }
    *out = n->heap[n->head];
    n->head = (n->head + 1) & (TL_NEST_REORDER - 1);
    n->nheap--;
}

static void heap_push(tl_nest *n, const tl_nest_item *e)
{
    size_t i = n->nheap++;
    n->heap[i] = *e;
    while (i > 0 && before(&n->heap[i], &n->heap[(i - 1) / 2])) {
        tl_nest_item x = n->heap[i];
        n->heap[i] = n->heap[(i - 1) / 2];
        n->heap[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

/* Into the reorder buffer (not full). A late event is inserted into the sorted ring
 * (binary search), moving the items on the shorter side by one place; the moves are
 * budgeted (TL_NEST_SHIFT_BUDGET per event on average, so that a hostile order costs no more
 * than a heap), and beyond the budget the ring becomes a heap. */
static void buffer_push(tl_nest *n, const tl_nest_item *e)
{
    const size_t mask = TL_NEST_REORDER - 1;
    size_t at, lo, hi, moves;

    if (n->is_heap) {
        heap_push(n, e);
        return;
    }
    n->budget += TL_NEST_SHIFT_BUDGET;
    if (n->nheap == 0 || !before(e, &n->heap[(n->head + n->nheap - 1) & mask])) {
        n->heap[(n->head + n->nheap) & mask] = *e; /* in order: the usual case */
        n->nheap++;
        return;
    }
    for (lo = 0, hi = n->nheap - 1; lo < hi;) { /* the first item e goes before */
        size_t mid = (lo + hi) / 2;
        if (before(e, &n->heap[(n->head + mid) & mask]))
            hi = mid;
        else
            lo = mid + 1;
    }
    at = lo;
    moves = at < n->nheap - at ? at : n->nheap - at;
    if (moves > n->budget) {
        /* Far out of order, often: a heap from here on. The ring, rotated so that it starts
         * at 0, is sorted and so already a heap. */
        tl_nest_item *lin = malloc(TL_NEST_REORDER * sizeof *lin);
        if (lin == NULL) {
            broken(n, "out of memory");
            return;
        }
        for (size_t i = 0; i < n->nheap; i++)
            lin[i] = n->heap[(n->head + i) & mask];
        free(n->heap);
        n->heap = lin;
        n->head = 0;
        n->is_heap = 1;
        heap_push(n, e);
        return;
    }
    n->budget -= moves;
    if (at < n->nheap - at) { /* the items before it move one place to the front */
        n->head = (n->head - 1) & mask;
        for (size_t i = 0; i < at; i++)
            n->heap[(n->head + i) & mask] = n->heap[(n->head + i + 1) & mask];
    } else { /* the items after it move one place to the back */
        for (size_t i = n->nheap; i > at; i--)
            n->heap[(n->head + i) & mask] = n->heap[(n->head + i - 1) & mask];
    }
    n->heap[(n->head + at) & mask] = *e;
    n->nheap++;
}

/* Room for one more item in the reorder buffer (the earliest placed when it
 * is full); 0, or -1 when the nesting is broken. */
static int make_room(tl_nest *n)
{
    if (n->broken)
        return -1;
    if (n->heap == NULL && (n->heap = malloc(TL_NEST_REORDER * sizeof *n->heap)) == NULL) {
        broken(n, "out of memory");
        return -1;
    }
    if (n->nheap == TL_NEST_REORDER) {
        tl_nest_item e;
        buffer_pop(n, &e);
        place(n, &e);
    }
    return 0;
}

void tl_nest_add(tl_nest *n, int64_t pid, int64_t tid, int cls, int64_t ts, int64_t dur, uint32_t stat)
{
    if (make_room(n) != 0)
        return;
    n->p->stats[stat].nest_cls = (uint8_t)(cls + 1);
    buffer_push(n, &(tl_nest_item){ ts, dur < 0 ? 0 : dur, pid, tid, n->seq++, stat, n->p->stats[stat].name, cls });
}

_Static_assert(TL_MEM_OPS_PENDING >= TL_NEST_REORDER, "every probe in the reorder buffer has its instant pending");

void tl_nest_probe(tl_nest *n, int64_t pid, int64_t tid, int cls, int64_t ts, uint32_t key)
{
    if (make_room(n) != 0)
        return;
    n->probes++;
    buffer_push(n, &(tl_nest_item){ ts, -1, pid, tid, n->seq++, UINT32_MAX, key, cls });
}

void tl_nest_finish(tl_nest *n)
{
    tl_profile *p = n->p;
    tl_nest_item e;
    while (!n->broken && n->nheap > 0) {
        buffer_pop(n, &e);
        place(n, &e);
    }
    for (size_t i = 0; !n->broken && i < n->nthreads; i++)
        while (n->threads[i].n > 0)
            finalize(n, &n->threads[i].v[--n->threads[i].n]);
    if (n->seq == n->probes)
        return; /* no CPU events: nothing nests */
    /* Not a warning: the input is fine, tally just cannot say self time
     * (tables show "-"); the reason stays in n->why for a debugger. */
    p->nesting = n->broken ? TL_NEST_BROKEN : TL_NEST_DONE;
    if (!n->broken && n->cls_lost) {
        uint64_t names = 0;
        for (uint32_t i = 0; i < p->nstats; i++)
            if (p->stats[i].nest_cls && (n->cls_lost & (1u << ((p->stats[i].nest_cls - 1) & 31)))) {
                p->stats[i].nest_lost = 1;
                names++;
            }
        /* the kinds as read_trace.c's nest_class numbers them */
        static const char *const kinds[] = { "other",   "operator",        "annotation",
                                             "runtime", "python_function", "GPU annotation" };
        char which[64] = "";
        size_t len = 0;
        for (int c = 0; c < 6; c++)
            if ((n->cls_lost & (1u << c)) && len < sizeof which)
                len += (size_t)snprintf(which + len, sizeof which - len, "%s%s", len ? ", " : "", kinds[c]);
        snprintf(p->nest_lost, sizeof p->nest_lost,
                 "%" PRIu64 " %s events (%" PRIu64 " names) came more than %d "
                 "events out of time order: those names have no self or inclusive time",
                 n->lost_events, which, names, TL_NEST_REORDER);
    }
    if (!n->broken && n->tree != NULL && n->tree->n > 0) {
        free(n->tree->slots); /* the index is for building; readers walk the nodes */
        n->tree->slots = NULL;
        n->tree->nslots = 0;
        p->calltree = n->tree;
        n->tree = NULL;
    }
}
