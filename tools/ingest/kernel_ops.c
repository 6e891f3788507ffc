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
    free(k->ops);
    free(k->launches);
    memset(k, 0, sizeof *k);
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
    k->ops[k->nops++] = (tl_kop_range){ pid, tid, ts, tl_ns_add(ts, dur), name };
}

void tl_kops_add_launch(tl_kops *k, int64_t pid, int64_t tid, int64_t ts, int64_t corr)
{
    if (k->nlaunches == TL_KOPS_MAX_LAUNCHES) {
        k->launches_dropped++;
        return;
    }
    if (k->nlaunches == k->launches_cap) {
        size_t cap = k->launches_cap ? k->launches_cap * 2 : 4096;
        void *v = realloc(k->launches, cap * sizeof *k->launches);
        if (v == NULL) {
            k->launches_dropped++;
            return;
        }
        k->launches = v;
        k->launches_cap = cap;
    }
    k->launches[k->nlaunches++] = (tl_kop_launch){ pid, tid, ts, corr };
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

void tl_kops_kernel_args(tl_profile *p, uint32_t name, int64_t dur, const tl_trace_event *ev)
{
    if (ev->args.ptr == NULL)
        return;
    /* The entry is made for args that hold "grid" (has_grid()). Once the key
     * itself comes -- in Kineto's args before the other keys read here -- that
     * is known without searching the text. */
    tl_kernel_launch *e = NULL;
    int decided = 0;
    tl_args_iter it;
    tl_view k;
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
        }
        if (key == KA_GRID && v.kind == TL_JSON_ARRAY)
            has_g = dims3(v.text, g);
        else if (key == KA_BLOCK && v.kind == TL_JSON_ARRAY)
            has_b = dims3(v.text, b);
        else if (key == KA_REGS && v.is_number && v.number >= 0 && v.number < 1e6)
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
        } else if (memcmp(e->grid, g, sizeof g) != 0 || memcmp(e->block, b, sizeof b) != 0) {
            e->varies = 1;
        }
    }
}

static int by_thread_start(const void *x, const void *y)
{
    const tl_kop_range *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end); /* the outer first */
}

static int by_thread_ts(const void *x, const void *y)
{
    const tl_kop_launch *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

typedef struct corr_op {
    int64_t corr;
    uint32_t op;
} corr_op;

static int by_corr(const void *x, const void *y)
{
    const corr_op *a = x, *b = y;
    return (a->corr > b->corr) - (a->corr < b->corr);
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
 * The sorts by thread and time. A trace lists each thread's calls in time
 * order, the threads interleaved in blocks, so a stable pass first gathers
 * each thread's elements (threads ordered by pid, tid), then each thread is
 * sorted by tl_sort_stable(), which only checks a thread already in order.
 * Both element types start with their int64 pid and tid, which cmp compares
 * first: the result is that of a stable sort of the whole array by cmp.
 * Beyond KOPS_FEW_THREADS threads the array is sorted as one.
 */
#define KOPS_FEW_THREADS 64

typedef struct kops_thread {
    int64_t pid, tid;
    size_t n, at;
} kops_thread;

static int by_pid_tid(const void *x, const void *y)
{
    const kops_thread *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

static inline __attribute__((always_inline)) void sort_by_thread(void *base, size_t n, size_t size,
                                                                 int (*cmp)(const void *, const void *))
{
    char *v = base, *tmp = NULL;
    unsigned char *which = NULL;
    kops_thread th[KOPS_FEW_THREADS];
    size_t nth = 0, cur = 0;
    int64_t key[2];

    if (n < 2)
        return;
    if ((which = malloc(n)) == NULL)
        goto whole;
    for (size_t i = 0; i < n; i++) {
        memcpy(key, v + i * size, sizeof key);
        if (nth == 0 || th[cur].pid != key[0] || th[cur].tid != key[1]) {
            for (cur = 0; cur < nth && (th[cur].pid != key[0] || th[cur].tid != key[1]); cur++)
                ;
            if (cur == nth) {
                if (nth == KOPS_FEW_THREADS)
                    goto whole;
                th[nth++] = (kops_thread){ key[0], key[1], 0, 0 };
            }
        }
        th[cur].n++;
        which[i] = (unsigned char)cur;
    }
    if (nth > 1) {
        kops_thread order[KOPS_FEW_THREADS];
        memcpy(order, th, nth * sizeof *th);
        for (size_t t = 0; t < nth; t++)
            order[t].at = t;                          /* its index in th */
        qsort(order, nth, sizeof *order, by_pid_tid); /* distinct keys: no ties */
        size_t at = 0;
        for (size_t t = 0; t < nth; t++) {
            th[order[t].at].at = at;
            at += order[t].n;
        }
        if ((tmp = malloc(n * size)) == NULL)
            goto whole;
        for (size_t i = 0; i < n; i++) /* stable: each thread's elements keep their order */
            memcpy(tmp + th[which[i]].at++ * size, v + i * size, size);
        memcpy(v, tmp, n * size);
        free(tmp);
        tmp = NULL;
        size_t lo = 0;
        for (size_t t = 0; t < nth; t++) {
            tl_sort_stable(v + lo * size, order[t].n, size, cmp);
            lo += order[t].n;
        }
    } else {
        tl_sort_stable(v, n, size, cmp);
    }
    goto out;
whole: /* many threads, or no memory: the whole array as one */
    tl_sort_stable(v, n, size, cmp);
out:
    free(which);
    free(tmp);
}

#define STACK_MAX 256

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

/* The pair of correlation id `corr` in co (sorted by corr), as bsearch() over
 * by_corr finds it (the same element when several have that id): from the
 * element after the previous hit when it is the only one with that id. */
static const corr_op *find_corr(const corr_op *co, size_t nco, int64_t corr, size_t *next)
{
    size_t i = *next;
    if (i < nco && co[i].corr == corr && (i == 0 || co[i - 1].corr != corr) &&
        (i + 1 == nco || co[i + 1].corr != corr)) {
        *next = i + 1;
        return &co[i];
    }
    /* glibc's bsearch, step for step */
    size_t l = 0, u = nco;
    while (l < u) {
        size_t m = (l + u) / 2;
        if (corr < co[m].corr) {
            u = m;
        } else if (corr > co[m].corr) {
            l = m + 1;
        } else {
            *next = m + 1;
            return &co[m];
        }
    }
    return NULL;
}

int tl_kops_resolve(tl_kops *k, tl_profile *p)
{
    p->kops_dropped = k->ops_dropped + k->launches_dropped;
    if (k->nops == 0 || k->nlaunches == 0 || p->ngpu == 0)
        return 0;
    int rc = -1;
    kop_sums ks = { 0 };
    corr_op *co = malloc(k->nlaunches * sizeof *co);
    if (co == NULL || kop_sums_grow(&ks) != 0)
        goto out;
    sort_by_thread(k->ops, k->nops, sizeof *k->ops, by_thread_start);
    sort_by_thread(k->launches, k->nlaunches, sizeof *k->launches, by_thread_ts);
    /* per thread, a sweep: the stack holds the operators open at the launch */
    size_t nco = 0, oi = 0;
    const tl_kop_range *stack[STACK_MAX];
    size_t depth = 0;
    int64_t cur_pid = INT64_MIN, cur_tid = INT64_MIN;
    for (size_t li = 0; li < k->nlaunches; li++) {
        const tl_kop_launch *l = &k->launches[li];
        if (l->pid != cur_pid || l->tid != cur_tid) {
            cur_pid = l->pid;
            cur_tid = l->tid;
            depth = 0;
            /* skip the operators of threads before this one */
            while (oi < k->nops && (k->ops[oi].pid < l->pid || (k->ops[oi].pid == l->pid && k->ops[oi].tid < l->tid)))
                oi++;
        }
        while (oi < k->nops && k->ops[oi].pid == l->pid && k->ops[oi].tid == l->tid && k->ops[oi].ts <= l->ts) {
            const tl_kop_range *o = &k->ops[oi++];
            while (depth > 0 && stack[depth - 1]->end <= o->ts)
                depth--;
            if (depth < STACK_MAX)
                stack[depth++] = o;
        }
        while (depth > 0 && stack[depth - 1]->end <= l->ts)
            depth--;
        /* the innermost open operator that contains the launch */
        size_t d = depth;
        while (d > 0 && !(stack[d - 1]->ts <= l->ts && l->ts < stack[d - 1]->end))
            d--;
        if (d > 0)
            co[nco++] = (corr_op){ l->corr, stack[d - 1]->name };
    }
    /* Correlation ids count up in launch order: per thread the pairs are in
     * order already, so the sort merges one run a thread */
    tl_sort_stable(co, nco, sizeof *co, by_corr);
    size_t next = 0;
    for (size_t i = 0; i < p->ngpu; i++) {
        const tl_gpu_event *g = &p->gpu[i];
        if (g->correlation < 0 || g->cat_class != TL_CC_KERNEL)
            continue;
        const corr_op *hit = find_corr(co, nco, g->correlation, &next);
        if (hit != NULL && kop_sums_add(&ks, g->name, hit->op, g->dur_ns) != 0)
            goto out;
    }
    /* each kernel's operators in id order, as the sorted pairs were before */
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
    rc = 0;
out:
    free(co);
    free(ks.v);
    free(ks.slot);
    return rc;
}
