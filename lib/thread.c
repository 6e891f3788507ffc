/*
 * thread.c - per-thread recording buffers.
 *
 * A thread gets its tl_thread on its first recording call. The buffer is
 * linked into the registry (under tl_g.lock) and never freed: when the thread
 * ends, a pthread key destructor only marks it retired, so its statistics and
 * events are still in the report written at exit.
 *
 * Trace events go into chunks whose size doubles (256 ... 16384 events). The
 * process-wide TALLY_MAX_EVENTS budget is handed out to threads a chunk at a
 * time, so the hot path checks a thread-local counter, not a shared atomic.
 *
 * Statistics off the hot path. A section's end updates no statistics: with
 * tracing on, its trace event is all it writes (a plain store of 24 bytes and
 * a release store of the chunk's count, no locked instruction); when the
 * trace does not keep it (tracing off, the budget spent) its duration goes to
 * a ring of TL_PENDING_CAP slots the same way. tl_thread_fold() then counts
 * them, in the order they ended, with the same tl_dur_stat_add() as before,
 * under the thread's flag: every reader of the statistics (a flush, the
 * shutdown, tally_stats_get) folds first, and the owner folds its ring when
 * it is full (once per TL_PENDING_CAP sections). The numbers are those of
 * counting each section at its end; only the moment of the counting moves.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Chunks of at least this size are mapped and populated (alloc_chunk). */
#define TL_CHUNK_MAP_BYTES (64 * 1024)
/* The largest chunk: the doubling stops here (new_chunk). */
#define TL_CHUNK_MAX_EVENTS 16384u

__thread tl_thread *tl_self_ptr TL_TLS_MODEL;
static pthread_key_t retire_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void thread_comm(int tid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) != NULL)
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void retire(void *arg)
{
    tl_thread *t = arg;
    char name[sizeof t->name];
    thread_comm(t->tid, name, sizeof name);
    tl_thread_lock(t);
    memcpy(t->name, name, sizeof name);
    t->retired = 1;
    tl_thread_unlock(t);
    tl_self_ptr = NULL;
}

static atomic_int key_made;

static void make_key(void)
{
    if (pthread_key_create(&retire_key, retire) == 0)
        atomic_store(&key_made, 1);
}

/* The key's destructor is libtally's code: at unload (dlclose) the key goes,
 * so threads that end later do not call into it. Their buffers stay. */
void tl_thread_unload(void)
{
    if (atomic_exchange(&key_made, 0))
        pthread_key_delete(retire_key);
}

const char tl_slot_empty[1];

tl_thread *tl_thread_self_slow(void)
{
    tl_thread *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < TL_NAME_CACHE; i++)
        t->cache[i].key = tl_slot_empty;
    t->tid = (int)syscall(SYS_gettid);
    pthread_once(&key_once, make_key);
    pthread_setspecific(retire_key, t);
    pthread_mutex_lock(&tl_g.lock);
    t->next = tl_g.threads;
    tl_g.threads = t;
    pthread_mutex_unlock(&tl_g.lock);
    tl_self_ptr = t;
    return t;
}

int tl_thread_lock_for_write(tl_thread *t)
{
    if (!atomic_load(&tl_g.signal_writing)) {
        tl_thread_lock(t);
        return 1;
    }
    uint64_t until = tl_clock_ns_monotonic() + TL_SIGNAL_LOCK_WAIT_NS;
    for (unsigned spins = 0;; spins++) {
        if (!atomic_exchange_explicit(&t->busy, 1, memory_order_acquire))
            return 1;
        if ((spins & 1023) == 1023 && tl_clock_ns_monotonic() > until)
            return 0;
    }
}

uint32_t tl_thread_lookup_slow(tl_thread *t, tl_cache_slot *slot, const char *name)
{
    (void)t;
    uint32_t id = tl_intern(name);
    const char *text = tl_name(id);
    size_t len = strlen(text);
    slot->key = name;
    slot->interned = text;
    slot->id = id;
    slot->len = len < UINT32_MAX ? (uint32_t)len : UINT32_MAX;
    slot->mask = len < 32 ? (UINT64_C(1) << (len + 1)) - 1 : (UINT64_C(1) << 33) - 1;
    memset(slot->head, 0, sizeof slot->head);
    memcpy(slot->head, text, len < sizeof slot->head ? len : sizeof slot->head);
    if (id == TL_NAME_OVERFLOW)
        slot->key = tl_slot_empty; /* do not cache: the text differs from "(other names)" */
    return id;
}

/* Grow an array of pointers to at least id+1 entries (doubling). */
static int grow(void ***arr, uint32_t *cap, uint32_t id)
{
    size_t n = *cap; /* the caps stay uint32_t: tl_thread is per thread and the ids are uint32_t */
    if (tl_array_grow(arr, id, &n, sizeof **arr, 64) != 0)
        return -1;
    memset(*arr + *cap, 0, (n - *cap) * sizeof **arr);
    *cap = (uint32_t)n;
    return 0;
}

tl_dur_stat *tl_thread_dur_stat(tl_thread *t, int kind, uint32_t id)
{
    if (TL_UNLIKELY(id >= t->stats_cap[kind])) {
        if (grow((void ***)&t->stats[kind], &t->stats_cap[kind], id) != 0)
            return NULL;
    }
    tl_dur_stat *s = t->stats[kind][id];
    if (TL_UNLIKELY(s == NULL)) {
        s = calloc(1, sizeof *s);
        if (s != NULL)
            s->keep_first = 1; /* a report's step table reads the samples in order */
        t->stats[kind][id] = s;
    }
    return s;
}

tl_value_stat *tl_thread_counter(tl_thread *t, uint32_t id)
{
    if (TL_UNLIKELY(id >= t->counters_cap)) {
        if (grow((void ***)&t->counters, &t->counters_cap, id) != 0)
            return NULL;
    }
    tl_value_stat *s = t->counters[id];
    if (TL_UNLIKELY(s == NULL)) {
        s = calloc(1, sizeof *s);
        t->counters[id] = s;
    }
    return s;
}

/* Ask the process-wide budget for up to `want` events. */
static uint32_t take_budget(uint32_t want)
{
    long left = atomic_load(&tl_g.events_budget);
    while (left > 0) {
        long take = left < (long)want ? left : (long)want;
        if (atomic_compare_exchange_weak(&tl_g.events_budget, &left, left - take))
            return (uint32_t)take;
    }
    return 0;
}

/* Memory for a chunk (never freed, like the tl_thread). A large one is
 * mapped with its pages populated at once: the hot path would otherwise take
 * a page fault every 170 events, which cost more than the rest of a pair
 * (a fault took 1-5 us on the 2-core VM; populating, about half of that). */
static void *alloc_chunk(size_t bytes)
{
    if (bytes < TL_CHUNK_MAP_BYTES)
        return malloc(bytes);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- spare chunks: mapped off the recording thread ------------------------
 * Populating a full chunk (384 KiB) took ~120 us on the 2-core VM, all of
 * it on the recording thread: a thread that traces steadily paid ~7 ns a
 * pair for it (the median pair 36 ns against 28-29 ns with the pages
 * ready; bench/README.md). So once a thread has asked for a full chunk, a
 * helper thread keeps TL_SPARE_CHUNKS of them mapped and populated, and
 * new_chunk takes one when it can (and maps its own when none is ready: the
 * spares change when pages are populated, never what is recorded). The
 * helper starts on the first full chunk (tracing on, the budget not spent),
 * maps only while budget is left, blocks every signal, and is stopped and
 * joined by tally_shutdown (tl_thread_spares_stop), after which no new one
 * starts. A fork child starts none (a thread started in the child of a
 * threaded program is what sanitizers and some libcs refuse): it takes the
 * spares it inherited and then maps its own chunks, as before. Lock order: a
 * thread's flag, then spare.lock; the helper takes no flag. */
#define TL_SPARE_CHUNKS 2
#define TL_CHUNK_FULL_BYTES (sizeof(tl_event_chunk) + TL_CHUNK_MAX_EVENTS * sizeof(tl_event))

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    void *chunk[TL_SPARE_CHUNKS];
    int n;
    int running; /* the helper exists (joined by stop) */
    int stopped; /* tally_shutdown ran: no helper from now on */
    pthread_t thread;
} spare = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void *spare_main(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "tally-chunks"); /* what top and the tests see */
    pthread_mutex_lock(&spare.lock);
    while (!spare.stopped) {
        if (spare.n == TL_SPARE_CHUNKS || atomic_load(&tl_g.events_budget) <= 0) {
            pthread_cond_wait(&spare.wake, &spare.lock);
            continue;
        }
        pthread_mutex_unlock(&spare.lock);
        void *p = alloc_chunk(TL_CHUNK_FULL_BYTES);
        pthread_mutex_lock(&spare.lock);
        if (p == NULL)
            break; /* out of memory: the recording threads map their own */
        if (spare.stopped) {
            munmap(p, TL_CHUNK_FULL_BYTES);
            break;
        }
        spare.chunk[spare.n++] = p;
    }
    pthread_mutex_unlock(&spare.lock);
    return NULL;
}

/* A populated full chunk, or NULL when none is ready; starts the helper on
 * the first call and wakes it to map the next. Under t's flag. */
static void *take_spare(void)
{
    void *p = NULL;
    pthread_mutex_lock(&spare.lock);
    if (spare.n > 0)
        p = spare.chunk[--spare.n];
    if (spare.running) {
        pthread_cond_signal(&spare.wake);
    } else if (!spare.stopped && !tl_g.is_fork_child && atomic_load(&tl_g.state) == TL_RUNNING) {
        /* Every signal blocked in the helper (it inherits the mask), as in
         * the sampler: a program's handler never runs on it. */
        sigset_t all, prev;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &prev);
        spare.running = pthread_create(&spare.thread, NULL, spare_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &prev, NULL);
    }
    pthread_mutex_unlock(&spare.lock);
    return p;
}

void tl_thread_spares_stop(void)
{
    pthread_mutex_lock(&spare.lock);
    spare.stopped = 1;
    int running = spare.running;
    spare.running = 0;
    pthread_cond_signal(&spare.wake);
    pthread_mutex_unlock(&spare.lock);
    if (running)
        pthread_join(spare.thread, NULL);
    pthread_mutex_lock(&spare.lock);
    while (spare.n > 0)
        munmap(spare.chunk[--spare.n], TL_CHUNK_FULL_BYTES);
    pthread_mutex_unlock(&spare.lock);
}

/* A fork: the helper is not copied into the child. prepare waits for its
 * lock (taken after every thread's flag, as new_chunk does); the child keeps
 * the spares already mapped (its own copies) and gets a condition variable
 * of its own. */
void tl_thread_spares_atfork_prepare(void)
{
    pthread_mutex_lock(&spare.lock);
}

void tl_thread_spares_atfork_parent(void)
{
    pthread_mutex_unlock(&spare.lock);
}

void tl_thread_spares_atfork_child(void)
{
    spare.running = 0;
    /* The condition variable still counts the parent's helper among its
     * waiters (glibc): a signal in the child would wait for it for ever. */
    pthread_cond_init(&spare.wake, NULL);
    pthread_mutex_unlock(&spare.lock);
}

/* Under t's flag. */
static tl_event_chunk *new_chunk(tl_thread *t)
{
    uint32_t cap = t->chunks_tail ? t->chunks_tail->cap * 2 : 256;
    if (cap > TL_CHUNK_MAX_EVENTS)
        cap = TL_CHUNK_MAX_EVENTS;
    uint32_t budget = take_budget(cap);
    if (budget == 0)
        return NULL;
    /* Sections in the ring ended before the events this chunk will hold:
     * count them now, so that the statistics see every section in order. */
    if (t->pend_head != t->pend_tail)
        tl_thread_fold(t);
    tl_event_chunk *c = budget == TL_CHUNK_MAX_EVENTS ? take_spare() : NULL;
    if (c == NULL)
        c = alloc_chunk(sizeof *c + budget * sizeof(tl_event));
    if (c == NULL) {
        atomic_fetch_add(&tl_g.events_budget, (long)budget);
        return NULL;
    }
    c->next = NULL;
    c->used = 0;
    c->cap = budget;
    if (t->chunks_tail)
        t->chunks_tail->next = c;
    else
        t->chunks_head = c;
    t->chunks_tail = c;
    return c;
}

void tl_thread_append(tl_thread *t, uint32_t kind, uint32_t name, uint64_t t0, uint64_t value)
{
    tl_event_chunk *c = t->chunks_tail;
    if (TL_UNLIKELY(c == NULL || c->used == c->cap)) {
        c = new_chunk(t);
        if (c == NULL) {
            TL_STORE(t->dropped, t->dropped + 1);
            return;
        }
    }
    uint32_t used = c->used;
    tl_event *e = &c->ev[used];
    e->t0 = t0;
    e->value = value;
    e->name = name;
    e->kind = kind;
    __atomic_store_n(&c->used, used + 1, __ATOMIC_RELEASE);
}

int tl_thread_push_slow(tl_thread *t, uint32_t kind, uint32_t name, uint64_t t0, uint64_t value)
{
    /* The budget spent: dropped without taking the flag (a relaxed load of a
     * word only written when chunks are handed out). */
    if (atomic_load_explicit(&tl_g.events_budget, memory_order_relaxed) <= 0) {
        TL_STORE(t->dropped, t->dropped + 1);
        return 0;
    }
    tl_thread_lock(t);
    uint64_t before = t->dropped;
    tl_thread_append(t, kind, name, t0, value);
    int kept = t->dropped == before;
    tl_thread_unlock(t);
    return kept;
}

/* Count one section's duration; under t's flag. */
static inline void fold_one(tl_thread *t, uint32_t name, uint64_t dur, tl_dur_stat **last, uint32_t *last_name)
{
    if (name != *last_name || *last == NULL) {
        *last = tl_thread_dur_stat(t, TL_SECTION, name);
        *last_name = name;
    }
    if (TL_LIKELY(*last != NULL))
        tl_dur_stat_add(*last, dur, tl_g.max_samples);
}

void tl_thread_fold(tl_thread *t)
{
    tl_dur_stat *last = NULL;
    uint32_t last_name = 0;
    /* The trace's sections first: the ring only holds sections that ended
     * after them (new_chunk folds the ring before a chunk is added). */
    tl_event_chunk *c = t->fold_chunk ? t->fold_chunk : t->chunks_head;
    uint32_t i = t->fold_chunk ? t->fold_used : 0;
    while (c != NULL) {
        uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
        for (; i < used; i++)
            if (c->ev[i].kind == TL_EV_SECTION)
                fold_one(t, c->ev[i].name, c->ev[i].value, &last, &last_name);
        t->fold_chunk = c;
        t->fold_used = used;
        if (c->next == NULL || used < c->cap)
            break;
        c = c->next;
        i = 0;
    }
    uint64_t head = __atomic_load_n(&t->pend_head, __ATOMIC_ACQUIRE), tail = t->pend_tail;
    for (; tail != head; tail++) {
        const tl_pending *p = &t->pend[tail & (TL_PENDING_CAP - 1)];
        fold_one(t, p->name, p->dur, &last, &last_name);
    }
    __atomic_store_n(&t->pend_tail, tail, __ATOMIC_RELEASE);
}

void tl_thread_pend_slow(tl_thread *t, uint32_t name, uint64_t dur)
{
    tl_thread_lock(t);
    if (t->pend == NULL)
        t->pend = malloc(TL_PENDING_CAP * sizeof *t->pend);
    tl_thread_fold(t); /* full: count what it holds */
    if (t->pend == NULL) {
        /* no memory for the ring: counted at once, as before it existed */
        tl_dur_stat *s = tl_thread_dur_stat(t, TL_SECTION, name);
        if (s != NULL)
            tl_dur_stat_add(s, dur, tl_g.max_samples);
        tl_thread_unlock(t);
        return;
    }
    tl_thread_unlock(t);
    tl_thread_pend(t, name, dur);
}

uint64_t tl_thread_events(tl_thread *t)
{
    uint64_t n = 0;
    for (tl_event_chunk *c = t->chunks_head; c != NULL; c = c->next)
        n += __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
    return n;
}

void tl_thread_record_slow(tl_thread *t, uint32_t name, uint64_t t0, uint64_t dur)
{
    if (TL_LIKELY(tl_g.trace) && tl_thread_push_slow(t, TL_EV_SECTION, name, t0, dur))
        return;
    tl_thread_pend(t, name, dur);
}
