/*
 * kernel_ops.c - each kernel's launching operator and launch configuration
 * (see kernel_ops.h).
 */
#include "kernel_ops.h"
#include "sort_stable.h"
#include "trace_stream.h"

#include <stdlib.h>
#include <string.h>

void tl_kops_init(tl_kops *k)
{
    memset(k, 0, sizeof *k);
}

void tl_kops_release(tl_kops *k)
{
    free(k->dims);
    free(k->ops);
    free(k->threads.id);
    free(k->threads.slots);
    free(k->launches.dts);
    free(k->launches.dthread);
    free(k->launches.dbits);
    free(k->launches.keys);
    free(k->launches.ts);
    free(k->launches.thread);
    memset(k, 0, sizeof *k);
}

/* ---- threads ------------------------------------------------------------- */

static size_t thread_slot(int64_t pid, int64_t tid, uint32_t nslots)
{
    uint64_t h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)tid * 0xC2B2AE3D27D4EB4Full);
    return (size_t)(h >> 32) & (nslots - 1);
}

/* The index of thread (pid, tid), added if new; UINT32_MAX out of memory. */
static uint32_t thread_of(tl_kop_threads *t, int64_t pid, int64_t tid)
{
    if (t->n > 0 && t->id[t->last][0] == pid && t->id[t->last][1] == tid)
        return t->last;
    if ((t->n + 1) * 2 > t->nslots) {
        uint32_t ns = t->nslots ? t->nslots * 2 : 64;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (slots == NULL)
            return UINT32_MAX;
        for (uint32_t i = 0; i < t->n; i++) {
            size_t j = thread_slot(t->id[i][0], t->id[i][1], ns);
            while (slots[j])
                j = (j + 1) & (ns - 1);
            slots[j] = i + 1;
        }
        free(t->slots);
        t->slots = slots;
        t->nslots = ns;
    }
    size_t j = thread_slot(pid, tid, t->nslots);
    for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
        uint32_t i = t->slots[j] - 1;
        if (t->id[i][0] == pid && t->id[i][1] == tid)
            return t->last = i;
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        void *v = realloc(t->id, cap * sizeof *t->id);
        if (v == NULL)
            return UINT32_MAX;
        t->id = v;
        t->cap = cap;
    }
    t->id[t->n][0] = pid;
    t->id[t->n][1] = tid;
    t->slots[j] = t->n + 1;
    return t->last = t->n++;
}

void tl_kops_add_op(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t dur, uint32_t name)
{
    if (k->nops == TL_KOPS_MAX_OPS) {
        k->ops_dropped++;
        return;
    }
    if (k->nops == k->ops_cap) {
        size_t cap = k->ops_cap ? k->ops_cap * 2 : 4096;
        void *v = realloc(k->ops, cap * sizeof *k->ops);
        if (v == NULL) {
            k->ops_dropped++;
            return;
        }
        k->ops = v;
        k->ops_cap = cap;
    }
    uint32_t th = thread_of(&k->threads, pid, tid);
    if (th == UINT32_MAX) {
        k->ops_dropped++;
        return;
    }
    k->ops[k->nops++] = (tl_kop_range){ ts, tl_ns_add(ts, dur), name, th };
}

/* ---- correlation id -> launch ---------------------------------------------- */

static size_t corr_slot(int64_t key, size_t cap)
{
    return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int launch_put_hash(tl_kop_launches *m, int64_t key, int64_t ts, uint32_t th)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        int64_t *k = malloc(cap * sizeof *k), *t = malloc(cap * sizeof *t);
        uint32_t *h = malloc(cap * sizeof *h);
        if (k == NULL || t == NULL || h == NULL) {
            free(k);
            free(t);
            free(h);
            return -1;
        }
        for (size_t i = 0; i < cap; i++)
            k[i] = INT64_MIN;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] == INT64_MIN)
                continue;
            size_t j = corr_slot(m->keys[i], cap);
            while (k[j] != INT64_MIN)
                j = (j + 1) & (cap - 1);
            k[j] = m->keys[i];
            t[j] = m->ts[i];
            h[j] = m->thread[i];
        }
        free(m->keys);
        free(m->ts);
        free(m->thread);
        m->keys = k;
        m->ts = t;
        m->thread = h;
        m->cap = cap;
    }
    size_t j = corr_slot(key, m->cap);
    while (m->keys[j] != INT64_MIN && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (m->keys[j] == INT64_MIN) {
        m->n++;
        m->keys[j] = key;
        m->ts[j] = ts;
        m->thread[j] = th;
    } else if (ts < m->ts[j]) {
        m->ts[j] = ts; /* several launches with one id: the earliest launched it */
        m->thread[j] = th;
    }
    return 0;
}

#define LAUNCH_DENSE_SLACK 65536 /* ids the dense array may run ahead of 4x its entries */

static int launch_put(tl_kop_launches *m, int64_t key, int64_t ts, uint32_t th)
{
    if (key == INT64_MIN) /* the hash's empty key: as before there was an array */
        return launch_put_hash(m, key, ts, th);
    if (m->dcap == 0 && m->dn == 0)
        m->base = key;
    if (key >= m->base) {
        uint64_t i = (uint64_t)key - (uint64_t)m->base; /* exact: key >= base */
        if (i >= m->dcap && i < 4 * (uint64_t)m->dn + LAUNCH_DENSE_SLACK) {
            /* Grown by realloc without writing the new slots (the bits say
             * which hold a launch): the slack's pages are never touched, so
             * they cost no memory (issue 33). */
            size_t cap = m->dcap ? m->dcap * 2 : 4096;
            while (cap <= i)
                cap *= 2;
            int64_t *d = realloc(m->dts, cap * sizeof *d);
            if (d == NULL)
                return -1;
            m->dts = d;
            uint32_t *h = realloc(m->dthread, cap * sizeof *h);
            if (h == NULL)
                return -1;
            m->dthread = h;
            uint64_t *b = realloc(m->dbits, cap / 64 * sizeof *b);
            if (b == NULL)
                return -1;
            memset(b + m->dcap / 64, 0, (cap - m->dcap) / 64 * sizeof *b);
            m->dbits = b;
            m->dcap = cap;
        }
        if (i < m->dcap) {
            uint64_t bit = 1ull << (i & 63);
            if (!(m->dbits[i / 64] & bit)) {
                m->dbits[i / 64] |= bit;
                m->dts[i] = ts;
                m->dthread[i] = th;
                m->dn++;
            } else if (ts < m->dts[i]) {
                m->dts[i] = ts;
                m->dthread[i] = th;
            }
            return 0;
        }
    }
    return launch_put_hash(m, key, ts, th);
}

/* The launch of correlation id key: 1 with its time and thread, or 0. */
static int launch_get(const tl_kop_launches *m, int64_t key, int64_t *ts, uint32_t *th)
{
    int found = 0;
    if (key >= m->base && (uint64_t)key - (uint64_t)m->base < m->dcap) {
        uint64_t i = (uint64_t)key - (uint64_t)m->base;
        if (m->dbits[i / 64] & (1ull << (i & 63))) {
            *ts = m->dts[i];
            *th = m->dthread[i];
            found = 1;
        }
    }
    if (m->cap == 0)
        return found;
    size_t j = corr_slot(key, m->cap);
    while (m->keys[j] != INT64_MIN) {
        if (m->keys[j] == key) {
            if (!found || m->ts[j] < *ts) {
                *ts = m->ts[j];
                *th = m->thread[j];
            }
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return found;
}

int tl_kops_add_launch(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t corr)
{
    uint32_t th = thread_of(&k->threads, pid, tid);
    if (th == UINT32_MAX)
        return -1;
    return launch_put(&k->launches, corr, ts, th);
}

/* The profile's entry of a kernel name, created if new; NULL beyond the cap. */
static tl_kernel_launch *entry(tl_profile *p, uint32_t name)
{
    if (name >= p->nklaunch_of) {
        size_t n = p->strs.n > name ? p->strs.n : (size_t)name + 1;
        n = n < 1024 ? 1024 : n + n / 2;
        uint32_t *v = realloc(p->klaunch_of, n * sizeof *v);
        if (v == NULL)
            return NULL;
        memset(v + p->nklaunch_of, 0, (n - p->nklaunch_of) * sizeof *v);
        p->klaunch_of = v;
        p->nklaunch_of = n;
    }
    if (p->klaunch_of[name])
        return &p->klaunch[p->klaunch_of[name] - 1];
    if (p->nklaunch == TL_PROFILE_MAX_KERNEL_LAUNCHES)
        return NULL;
    if (p->nklaunch == p->klaunch_cap) {
        size_t cap = p->klaunch_cap ? p->klaunch_cap * 2 : 256;
        void *v = realloc(p->klaunch, cap * sizeof *p->klaunch);
        if (v == NULL)
            return NULL;
        p->klaunch = v;
        p->klaunch_cap = cap;
    }
    tl_kernel_launch *e = &p->klaunch[p->nklaunch++];
    *e = (tl_kernel_launch){
        .name = name, .grid = { -1, -1, -1 }, .block = { -1, -1, -1 }, .regs = -1, .smem = -1, .op = UINT32_MAX
    };
    p->klaunch_of[name] = (uint32_t)p->nklaunch;
    return e;
}

/* strtol(q, &after, 10) for what dims3() accepts: a value in [0, 2^31), else
 * -1 (as strtol, leading white space and a sign are taken; *after == q when
 * there are no digits). Without strtol's locale and errno machinery: dims3()
 * runs for every kernel. */
static int64_t dim_at(const char *q, const char **after)
{
    const char *p = q;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r')) /* isspace() in the C locale */
        p++;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    const char *d = p;
    int64_t x = 0;
    while (*p >= '0' && *p <= '9') {
        if (x <= 0x7fffffff) /* past it the value is refused whatever follows */
            x = x * 10 + (*p - '0');
        p++;
    }
    if (p == d) {
        *after = q;
        return -1;
    }
    *after = p;
    if (x > 0x7fffffff || (neg && x != 0))
        return -1;
    return x;
}

/* "[32, 2, 1]" -> three ints; 0 when it is not three numbers. */
static int dims3(tl_view v, int32_t out[3])
{
    const char *q = v.ptr, *end = v.ptr + v.len;
    int n = 0;
    /* What Kineto writes, "[a, b, c]" of up to 9 digits each, read at once; anything else
     * (and this too, would it not match to the ']') the general way below, which gives
     * the same three values for it. */
    if (v.len >= 7 && q[0] == '[') {
        const char *p = q + 1;
        for (; n < 3; n++) {
            if (n > 0) {
                if (p >= end || *p != ',')
                    break;
                p += p + 1 < end && p[1] == ' ' ? 2 : 1;
            }
            const char *d = p;
            int32_t x = 0;
            while (p < end && p - d < 9 && *p >= '0' && *p <= '9')
                x = x * 10 + (*p++ - '0');
            if (p == d || p >= end || (*p >= '0' && *p <= '9'))
                break;
            out[n] = x;
        }
        if (n == 3 && p == end - 1 && *p == ']')
            return 1;
        n = 0;
    }
    while (q < end && n < 3) {
        while (q < end && (*q == '[' || *q == ' ' || *q == ','))
            q++;
        const char *after;
        int64_t x = dim_at(q, &after);
        if (after == q || x < 0)
            return 0;
        out[n++] = (int32_t)x;
        q = after;
    }
    return n == 3;
}

/* The keys tl_kops_kernel_args() reads (tl_args_next_picked: 0 for the others). */
enum { KA_OTHER, KA_GRID, KA_BLOCK, KA_REGS, KA_SMEM, KA_OCC };

static int kernel_arg_key(tl_view k)
{
    switch (k.len) { /* by length first: one compare for most keys */
    case 4:
        return tl_view_eq(k, "grid") ? KA_GRID : KA_OTHER;
    case 5:
        return tl_view_eq(k, "block") ? KA_BLOCK : KA_OTHER;
    case 13:
        return tl_view_eq(k, "shared memory") ? KA_SMEM : KA_OTHER;
    case 20:
        return tl_view_eq(k, "registers per thread") ? KA_REGS : KA_OTHER;
    case 25:
        return tl_view_eq(k, "est. achieved occupancy %") ? KA_OCC : KA_OTHER;
    default:
        return KA_OTHER;
    }
}

/* Whether a kernel's args name a launch configuration at all: the text
 * "grid" in quotes anywhere in them. */
static int has_grid(const tl_trace_event *ev)
{
    return tl_view_contains(ev->args, "\"grid\"", 6);
}

/* The kept text of entry e's first grid and block (NULL beyond memory). */
static tl_kop_dims_text *dims_text(tl_kops *k, const tl_profile *p, const tl_kernel_launch *e)
{
    size_t i = (size_t)(e - p->klaunch);
    if (i >= k->dims_cap) {
        size_t cap = k->dims_cap ? k->dims_cap * 2 : 256;
        while (cap <= i)
            cap *= 2;
        tl_kop_dims_text *v = realloc(k->dims, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        memset(v + k->dims_cap, 0, (cap - k->dims_cap) * sizeof *v);
        k->dims = v;
        k->dims_cap = cap;
    }
    return &k->dims[i];
}

/* A grid or block: the values of the first launch when the text is that
 * launch's (most launches of a kernel repeat it), else read. */
static int dims_of(tl_view text, const char *kept, size_t kept_len, const int32_t first[3], int32_t out[3])
{
    if (kept_len > 0 && text.len == kept_len && memcmp(text.ptr, kept, kept_len) == 0) {
        memcpy(out, first, 3 * sizeof *out);
        return 1;
    }
    return dims3(text, out);
}

void tl_kops_kernel_args(tl_kops *kops, tl_profile *p, uint32_t name, int64_t dur, const tl_trace_event *ev)
{
    if (ev->args.ptr == NULL)
        return;
    /* The entry is made for args that hold "grid" (has_grid()). Once the key
     * itself comes -- in Kineto's args before the other keys read here -- that
     * is known without searching the text. */
    tl_kernel_launch *e = NULL;
    tl_kop_dims_text *kept = NULL;
    int decided = 0;
    tl_args_iter it;
    tl_view k, gtext = { NULL, 0 }, btext = { NULL, 0 };
    tl_json_value v;
    int32_t g[3], b[3];
    int has_g = 0, has_b = 0;
    int key;
    tl_args_iter_init_event(&it, ev);
    while (tl_args_next_picked(&it, kernel_arg_key, &key, &k, &v)) {
        if (!decided) {
            decided = 1;
            if (key != KA_GRID && !has_grid(ev))
                return;
            if ((e = entry(p, name)) == NULL)
                return;
            kept = dims_text(kops, p, e);
        }
        if (key == KA_GRID && v.kind == TL_JSON_ARRAY) {
            gtext = v.text;
            has_g = kept ? dims_of(v.text, kept->grid, kept->glen, e->grid, g) : dims3(v.text, g);
        } else if (key == KA_BLOCK && v.kind == TL_JSON_ARRAY) {
            btext = v.text;
            has_b = kept ? dims_of(v.text, kept->block, kept->blen, e->block, b) : dims3(v.text, b);
        } else if (key == KA_REGS && v.is_number && v.number >= 0 && v.number < 1e6)
            e->regs = (int32_t)v.number;
        else if (key == KA_SMEM && v.is_number && v.number >= 0 && v.number < 1e12)
            e->smem = (int64_t)v.number;
        else if (key == KA_OCC && v.is_number && v.number >= 0 && v.number <= 100 && dur > 0) {
            e->occ_sum += v.number * (double)dur;
            e->occ_w += (double)dur;
        }
    }
    if (!decided) { /* none of the keys: the entry, with nothing known, when "grid" is there */
        if (has_grid(ev))
            (void)entry(p, name);
        return;
    }
    if (has_g && has_b) {
        if (e->grid[0] < 0) {
            memcpy(e->grid, g, sizeof g);
            memcpy(e->block, b, sizeof b);
            /* the texts that gave them, when short (Kineto's "[8192, 1, 1]") */
            if (kept != NULL && gtext.len <= TL_KOPS_DIMS_TEXT && btext.len <= TL_KOPS_DIMS_TEXT) {
                memcpy(kept->grid, gtext.ptr, gtext.len);
                memcpy(kept->block, btext.ptr, btext.len);
                kept->glen = (uint8_t)gtext.len;
                kept->blen = (uint8_t)btext.len;
            }
        } else if (memcmp(e->grid, g, sizeof g) != 0 || memcmp(e->block, b, sizeof b) != 0) {
            e->varies = 1;
        }
    }
}

static int by_thread_start(const void *x, const void *y)
{
    const tl_kop_range *a = x, *b = y;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end); /* the outer first */
}

typedef struct kop {
    uint32_t kernel, op;
    int64_t ns;
} kop;

static int by_kernel_op(const void *x, const void *y)
{
    const kop *a = x, *b = y;
    if (a->kernel != b->kernel)
        return a->kernel < b->kernel ? -1 : 1;
    return (a->op > b->op) - (a->op < b->op);
}

/*
 * The operators of each thread in start order (the outer first at one
 * start), and each one's parent: the operator below it on the stack of open
 * operators when it was pushed (an operator closes when one starts at or after
 * its end; at most STACK_MAX are open, deeper ones are never pushed). A
 * launch at t on a thread is then inside the stack that the last operator
 * starting at or before t left: that operator and its parents, and the
 * innermost of them still open at t (end > t) launched it.
 */
#define STACK_MAX 256
#define NOT_PUSHED 0x80000000u /* in parent[]: the operator was deeper than STACK_MAX */
#define NO_PARENT 0x7fffffffu

typedef struct op_index {
    uint32_t *parent; /* per operator: index of its parent, or NO_PARENT; | NOT_PUSHED */
    size_t *first;    /* per thread: its first operator (first[nthreads] = nops) */
} op_index;

/* Sort the operators by (thread, start, outer first), stably: a counting pass
 * by thread (a trace lists each thread's operators in start order, the
 * threads interleaved), then each thread's run by tl_sort_stable(), which
 * only checks one already in order. 0, or -1 out of memory. */
static int index_ops(tl_kops *k, op_index *x)
{
    uint32_t nth = k->threads.n;
    x->first = calloc((size_t)nth + 1, sizeof *x->first);
    x->parent = malloc((k->nops ? k->nops : 1) * sizeof *x->parent);
    tl_kop_range *tmp = malloc((k->nops ? k->nops : 1) * sizeof *tmp);
    if (x->first == NULL || x->parent == NULL || tmp == NULL) {
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < k->nops; i++)
        x->first[k->ops[i].thread + 1]++;
    for (uint32_t t = 0; t < nth; t++)
        x->first[t + 1] += x->first[t];
    /* scatter stably: each thread's operators keep their order */
    size_t *pos = malloc(((size_t)nth + 1) * sizeof *pos);
    if (pos == NULL) {
        free(tmp);
        return -1;
    }
    memcpy(pos, x->first, ((size_t)nth + 1) * sizeof *pos);
    for (size_t i = 0; i < k->nops; i++)
        tmp[pos[k->ops[i].thread]++] = k->ops[i];
    free(pos);
    free(k->ops);
    k->ops = tmp;
    k->ops_cap = k->nops;
    for (uint32_t t = 0; t < nth; t++) {
        size_t lo = x->first[t], hi = x->first[t + 1];
        tl_sort_stable(k->ops + lo, hi - lo, sizeof *k->ops, by_thread_start);
        uint32_t stack[STACK_MAX];
        size_t depth = 0;
        for (size_t i = lo; i < hi; i++) {
            while (depth > 0 && k->ops[stack[depth - 1]].end <= k->ops[i].ts)
                depth--;
            x->parent[i] = depth > 0 ? stack[depth - 1] : NO_PARENT;
            if (depth < STACK_MAX)
                stack[depth++] = (uint32_t)i;
            else
                x->parent[i] |= NOT_PUSHED;
        }
    }
    return 0;
}

/* The operator (strtab id) that launched a call at t on thread th, or
 * UINT32_MAX: the innermost operator open at t (see index_ops). */
static uint32_t op_at(const tl_kops *k, const op_index *x, uint32_t th, int64_t t)
{
    if (th >= k->threads.n)
        return UINT32_MAX;
    size_t lo = x->first[th], hi = x->first[th + 1];
    while (lo < hi) { /* the first operator of the thread that starts after t */
        size_t mid = lo + (hi - lo) / 2;
        if (k->ops[mid].ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == x->first[th])
        return UINT32_MAX;
    uint32_t cur = (uint32_t)(lo - 1);
    if (x->parent[cur] & NOT_PUSHED)
        cur = x->parent[cur] & ~NOT_PUSHED;
    while (cur != NO_PARENT && k->ops[cur].end <= t)
        cur = x->parent[cur] & ~NOT_PUSHED;
    return cur != NO_PARENT ? k->ops[cur].name : UINT32_MAX;
}

/* The (kernel, launching operator) pairs and the time of their kernels, summed
 * in the order of the profile's GPU events: an open-addressing table of
 * indexes into the pairs array. */
typedef struct kop_sums {
    kop *v;
    size_t n, cap;
    uint32_t *slot; /* index + 1 into v, 0 empty */
    size_t mask;
} kop_sums;

static int kop_sums_grow(kop_sums *s)
{
    size_t nslots = s->slot ? (s->mask + 1) * 2 : 1024;
    uint32_t *slot = calloc(nslots, sizeof *slot);
    if (slot == NULL)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t h = (((uint64_t)s->v[i].kernel << 32) | s->v[i].op) * 0x9E3779B97F4A7C15ull;
        size_t j = (size_t)(h >> 32) & (nslots - 1);
        while (slot[j])
            j = (j + 1) & (nslots - 1);
        slot[j] = (uint32_t)i + 1;
    }
    free(s->slot);
    s->slot = slot;
    s->mask = nslots - 1;
    return 0;
}

static int kop_sums_add(kop_sums *s, uint32_t kernel, uint32_t op, int64_t ns)
{
    uint64_t h = (((uint64_t)kernel << 32) | op) * 0x9E3779B97F4A7C15ull;
    size_t j = (size_t)(h >> 32) & s->mask;
    for (; s->slot[j]; j = (j + 1) & s->mask) {
        kop *e = &s->v[s->slot[j] - 1];
        if (e->kernel == kernel && e->op == op) {
            e->ns = tl_ns_add(e->ns, ns);
            return 0;
        }
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        kop *v = realloc(s->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n] = (kop){ kernel, op, ns };
    s->slot[j] = (uint32_t)++s->n;
    if (s->n * 2 > s->mask + 1) /* at most half full */
        return kop_sums_grow(s);
    return 0;
}

int tl_kops_resolve(tl_kops *k, tl_profile *p)
{
    p->kops_dropped = k->ops_dropped;
    int rc = 0, link = k->nops > 0 && (k->launches.dn > 0 || k->launches.n > 0) && p->ngpu > 0;
    kop_sums ks = { 0 };
    op_index x = { NULL, NULL };
    if (link && (index_ops(k, &x) != 0 || kop_sums_grow(&ks) != 0)) {
        link = 0;
        rc = -1;
    }
    for (size_t i = 0; i < p->ngpu; i++) {
        tl_gpu_event *g = &p->gpu[i];
        int64_t corr = g->correlation, ts;
        uint32_t th;
        g->launch_ns = INT64_MIN; /* in place of the correlation id */
        if (corr < 0 || !launch_get(&k->launches, corr, &ts, &th))
            continue;
        g->launch_ns = ts;
        if (!link || g->cat_class != TL_CC_KERNEL)
            continue;
        uint32_t op = op_at(k, &x, th, ts);
        if (op != UINT32_MAX && kop_sums_add(&ks, g->name, op, g->dur_ns) != 0) {
            link = 0;
            rc = -1;
        }
    }
    if (!link)
        goto out;
    /* each kernel's operators in id order */
    kop *ko = ks.v;
    size_t nko = ks.n;
    if (nko > 1)
        qsort(ko, nko, sizeof *ko, by_kernel_op); /* distinct pairs: no ties */
    for (size_t i = 0; i < nko;) {
        tl_kernel_launch *e = entry(p, ko[i].kernel);
        size_t j = i;
        while (j < nko && ko[j].kernel == ko[i].kernel) {
            size_t m = j;
            int64_t ns = 0;
            while (m < nko && ko[m].kernel == ko[j].kernel && ko[m].op == ko[j].op)
                ns = tl_ns_add(ns, ko[m++].ns);
            if (e != NULL) {
                e->ops++;
                e->linked_ns = tl_ns_add(e->linked_ns, ns);
                if (e->op == UINT32_MAX || ns > e->op_ns) {
                    e->op = ko[j].op;
                    e->op_ns = ns;
                }
            }
            j = m;
        }
        i = j;
    }
out:
    free(x.parent);
    free(x.first);
    free(ks.v);
    free(ks.slot);
    return rc;
}
