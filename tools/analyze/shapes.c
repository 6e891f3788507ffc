/*
 * shapes.c - operators by input shape across ranks, FLOPs and achieved
 * TFLOP/s (shapes.h; docs/analysis.md, "Operators by input shape").
 *
 * Steps: every counting session's shape rows (the top TL_SESSION_MAX_SHAPES
 * of each) are sorted by key and added up per key, with each rank's total;
 * the operators are ranked by their rows' total time and the top ones keep
 * their top shapes; each shown row gets its FLOPs (the trace's, else the
 * shapes', else none) and the device's peak for its dtype.
 */
#define _GNU_SOURCE
#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tl_shapes_release(tl_shapes *s)
{
    for (size_t i = 0; i < s->nrows; i++)
        free(s->rows[i].rank_ns);
    free(s->rows);
    free(s->ops);
    memset(s, 0, sizeof *s);
}

/* ---- FLOPs from shapes ---------------------------------------------------------- */

#define MAX_TENSORS 8
#define MAX_DIMS 8

/* The first MAX_TENSORS tensors' dims of "[[a,b],[c],[],...]"; *n tensors read. */
static void parse_dims(const char *s, int64_t d[MAX_TENSORS][MAX_DIMS], int nd[MAX_TENSORS], int *n)
{
    *n = 0;
    if (*s != '[')
        return;
    s++;
    while (*s && *s != ']' && *n < MAX_TENSORS) {
        int t = (*n)++;
        nd[t] = 0;
        if (*s != '[') { /* a scalar or a nested list: no dims of its own */
            while (*s && *s != ',' && *s != ']')
                s++;
        } else {
            s++;
            while (*s && *s != ']') {
                if (*s == '[') { /* a TensorList: not a tensor's dims */
                    nd[t] = -1;
                    int depth = 0;
                    do {
                        depth += *s == '[' ? 1 : *s == ']' ? -1 : 0;
                        s++;
                    } while (*s && depth > 0);
                    continue;
                }
                char *end;
                long long v = strtoll(s, &end, 10);
                if (end == s)
                    break;
                if (nd[t] >= 0 && nd[t] < MAX_DIMS)
                    d[t][nd[t]++] = v;
                s = end;
                if (*s == ',')
                    s++;
            }
            if (*s == ']')
                s++;
        }
        if (*s == ',')
            s++;
    }
}

static int is(const char *name, const char *op)
{
    return strcmp(name, op) == 0;
}

static double shape_flops(const char *name, const char *dims);

double tl_shape_flops(const char *name, const char *dims)
{
    double f = shape_flops(name, dims);
    return isfinite(f) && f >= 0 ? f : NAN; /* a negative or overflowing dimension: no FLOPs */
}

static double shape_flops(const char *name, const char *dims)
{
    int64_t d[MAX_TENSORS][MAX_DIMS];
    int nd[MAX_TENSORS], n;
    parse_dims(dims, d, nd, &n);
    /* aten::mm(A[M,K], B[K,N]): 2MKN; addmm(bias, A, B) likewise */
    int a = is(name, "aten::mm") ? 0 : is(name, "aten::addmm") ? 1 : -1;
    if (a >= 0 && n > a + 1 && nd[a] == 2 && nd[a + 1] == 2 && d[a][1] == d[a + 1][0])
        return 2.0 * (double)d[a][0] * (double)d[a][1] * (double)d[a + 1][1];
    /* aten::bmm(A[B,M,K], B[B,K,N]): 2BMKN; baddbmm(bias, A, B) likewise */
    a = is(name, "aten::bmm") ? 0 : is(name, "aten::baddbmm") ? 1 : -1;
    if (a >= 0 && n > a + 1 && nd[a] == 3 && nd[a + 1] == 3 && d[a][0] == d[a + 1][0] && d[a][2] == d[a + 1][1])
        return 2.0 * (double)d[a][0] * (double)d[a][1] * (double)d[a][2] * (double)d[a + 1][2];
    /* aten::linear(x[..., K], W[N, K]): 2 x rows(x) x K x N */
    if (is(name, "aten::linear") && n >= 2 && nd[0] >= 1 && nd[1] == 2 && d[0][nd[0] - 1] == d[1][1]) {
        double rows = 1;
        for (int i = 0; i + 1 < nd[0]; i++)
            rows *= (double)d[0][i];
        return 2.0 * rows * (double)d[1][1] * (double)d[1][0];
    }
    /* scaled dot-product attention (q[B,H,L,E], k[B,H,S,E], v[B,H,S,Ev]), forward:
     * QK^T 2BHLSE + PV 2BHLSEv */
    if ((is(name, "aten::scaled_dot_product_attention") || is(name, "aten::_scaled_dot_product_flash_attention") ||
         is(name, "aten::_scaled_dot_product_efficient_attention") ||
         is(name, "aten::_scaled_dot_product_cudnn_attention")) &&
        n >= 3 && nd[0] == 4 && nd[1] == 4 && nd[2] == 4 && d[0][0] == d[1][0] && d[0][3] == d[1][3] &&
        d[1][2] == d[2][2]) {
        double bhl = (double)d[0][0] * (double)d[0][1] * (double)d[0][2], s = (double)d[1][2];
        return 2.0 * bhl * s * (double)d[0][3] + 2.0 * bhl * s * (double)d[2][3];
    }
    return NAN;
}

/* ---- device peaks ------------------------------------------------------------------- */

/* Dense (no sparsity) peaks in TFLOP/s from the vendors' data sheets; fp32 is
 * the non-tensor rate (PyTorch's default: matmuls in float do not use TF32). */
static const struct {
    const char *match;      /* a part of the device name; the first match wins */
    double fp32, fp16, fp8; /* fp16: also bf16 */
} peaks[] = {
    { "H100 PCIe", 51.2, 756.5, 1513.0 }, { "H100", 66.9, 989.4, 1978.9 },   { "H200", 66.9, 989.4, 1978.9 },
    { "A100", 19.5, 312.0, NAN },         { "V100-SXM2", 15.7, 125.0, NAN }, { "V100", 14.0, 112.0, NAN },
    { "L40S", 91.6, 362.1, 733.0 },       { "L4", 30.3, 121.0, 242.0 },      { "A10", 31.2, 125.0, NAN },
    { "MI300X", 163.4, 1307.4, 2614.9 },  { "MI250X", 95.7, 383.0, NAN },
};

static int peak_index(const char *device)
{
    if (device == NULL)
        return -1;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(device, peaks[i].match) != NULL)
            return (int)i;
    return -1;
}

double tl_device_peak_tflops(const char *device, const char *dtype)
{
    int i = peak_index(device);
    if (i < 0 || dtype == NULL)
        return NAN;
    size_t n = strcspn(dtype, ",");
    int b = tl_dtype_bytes(dtype, n);
    int f8 = strncasecmp(dtype, "c10::Float8", 11) == 0 || strncasecmp(dtype, "Float8", 6) == 0;
    if (f8)
        return peaks[i].fp8;
    int half = strncasecmp(dtype, "c10::Half", n) == 0 || strncasecmp(dtype, "c10::BFloat16", n) == 0 ||
               strncasecmp(dtype, "Half", n) == 0 || strncasecmp(dtype, "BFloat16", n) == 0;
    if (half && n > 0)
        return peaks[i].fp16;
    if (b == 4 && (strncmp(dtype, "float", n) == 0 || strncasecmp(dtype, "Float", n) == 0))
        return peaks[i].fp32;
    return NAN;
}

/* ---- across ranks --------------------------------------------------------------------- */

typedef struct ref {
    const tl_sshape *s;
    size_t ri;
    int gpu; /* its session has GPU events */
} ref;

static int same_key(const tl_sshape *a, const tl_sshape *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->dims, b->dims) == 0 && strcmp(a->types, b->types) == 0;
}

/* A key added up over the ranks (before the top is chosen). */
typedef struct key {
    size_t first, n; /* its refs */
    int64_t total_ns;
    uint64_t count;
} key;

/* FNV-1a over a key's three strings, each with its terminating NUL (so "ab","c" and "a","bc"
 * differ). */
static uint64_t key_hash(const tl_sshape *s)
{
    uint64_t h = 1469598103934665603ull;
    const char *parts[3] = { s->name, s->dims, s->types };
    for (int i = 0; i < 3; i++) {
        const unsigned char *p = (const unsigned char *)parts[i];
        do
            h = (h ^ *p) * 1099511628211ull;
        while (*p++);
    }
    return h;
}

/* The refs of v (n, in rank order) grouped by key into out, each group's refs in the order of
 * v (by rank), the groups in the order their keys first came: what a stable sort by key would
 * give but for the order of the groups, which the caller sorts by name and total. One hash
 * lookup a ref where the sort compared ~log2(n) times (0.015 s of a 512-rank finish's
 * 0.06 s). Fills keys (first, n) and returns their count; SIZE_MAX when out of memory. */
static size_t group_keys(const ref *v, size_t n, ref *out, key *keys)
{
    size_t cap = 16, nk = 0;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot); /* a key's index + 1, 0: empty */
    uint32_t *of = malloc(n * sizeof *of);      /* each ref's key */
    uint64_t *kh = malloc(n * sizeof *kh);      /* each key's hash */
    if (slot == NULL || of == NULL || kh == NULL || n >= UINT32_MAX) {
        nk = SIZE_MAX;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h = key_hash(v[i].s);
        size_t at = (size_t)h & (cap - 1);
        for (;; at = (at + 1) & (cap - 1)) {
            uint32_t k = slot[at];
            if (k == 0) { /* a new key: its first ref is this one */
                slot[at] = (uint32_t)(nk + 1);
                kh[nk] = h;
                keys[nk] = (key){ i, 0, 0, 0 };
                of[i] = (uint32_t)nk++;
                break;
            }
            if (kh[k - 1] == h && same_key(v[keys[k - 1].first].s, v[i].s)) {
                of[i] = k - 1;
                break;
            }
        }
        keys[of[i]].n++;
        keys[of[i]].total_ns += v[i].s->total_ns;
        keys[of[i]].count += v[i].s->count;
    }
    /* each key's refs together, in v's order */
    size_t at = 0;
    for (size_t k = 0; k < nk; k++) {
        keys[k].first = at;
        at += keys[k].n;
    }
    for (size_t k = 0; k < nk; k++)
        kh[k] = keys[k].first; /* the next place of key k's refs */
    for (size_t i = 0; i < n; i++)
        out[kh[of[i]]++] = v[i];
out:
    free(slot);
    free(of);
    free(kh);
    return nk;
}

static int by_name_total(const void *x, const void *y, void *ctx)
{
    const ref *v = ctx;
    const key *a = x, *b = y;
    int c = strcmp(v[a->first].s->name, v[b->first].s->name);
    if (c != 0)
        return c;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    c = strcmp(v[a->first].s->dims, v[b->first].s->dims);
    return c != 0 ? c : strcmp(v[a->first].s->types, v[b->first].s->types);
}

static int by_op_total(const void *x, const void *y)
{
    const tl_shape_op *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static int fill_row(const tl_aggregate *a, tl_shape_row *row, const ref *v, const key *k, const char *device)
{
    const tl_sshape *s0 = v[k->first].s;
    row->name = s0->name;
    row->dims = s0->dims;
    row->types = s0->types;
    row->min_ns = INT64_MAX;
    row->min_rank = row->max_rank = -1;
    if ((row->rank_ns = calloc(a->nranks + 1, sizeof *row->rank_ns)) == NULL)
        return -1;
    int all_flops = 1, any_gpu = 0;
    double flops = 0;
    for (size_t j = k->first; j < k->first + k->n; j++) {
        const tl_sshape *s = v[j].s;
        row->count += s->count;
        row->total_ns += s->total_ns;
        row->min_ns = s->min_ns < row->min_ns ? s->min_ns : row->min_ns;
        row->max_ns = s->max_ns > row->max_ns ? s->max_ns : row->max_ns;
        row->rank_ns[v[j].ri] += s->total_ns;
        row->gpu_ns += s->gpu_ns;
        row->kernels += s->kernels;
        any_gpu |= v[j].gpu;
        all_flops &= s->flops_n == s->count;
        if (s->flops_n == s->count)
            flops += s->flops;
    }
    int64_t *t = malloc((a->nranks + 1) * sizeof *t);
    unsigned char *has = calloc(a->nranks + 1, 1); /* the ranks with the key: once each, in rank order */
    if (t == NULL || has == NULL) {
        free(t);
        free(has);
        return -1;
    }
    for (size_t j = k->first; j < k->first + k->n; j++)
        has[v[j].ri] = 1;
    size_t nt = 0;
    for (size_t ri = 0; ri < a->nranks; ri++) {
        if (!has[ri])
            continue;
        int64_t x = row->rank_ns[ri];
        if (row->min_rank < 0 || x < row->rank_min_ns)
            row->rank_min_ns = x, row->min_rank = a->ranks[ri].rank;
        if (row->max_rank < 0 || x > row->rank_max_ns)
            row->rank_max_ns = x, row->max_rank = a->ranks[ri].rank;
        t[nt++] = x;
    }
    row->nranks = (int)nt;
    qsort(t, nt, sizeof *t, by_i64);
    row->rank_median_ns = nt == 0 ? NAN : nt % 2 ? (double)t[nt / 2] : ((double)t[nt / 2 - 1] + (double)t[nt / 2]) / 2;
    free(t);
    free(has);
    double per_call = tl_shape_flops(row->name, row->dims);
    if (all_flops) {
        row->flops_source = TL_FLOPS_TRACE;
        row->flops = flops;
    } else if (isfinite(per_call)) {
        row->flops_source = TL_FLOPS_SHAPES;
        row->flops = per_call * (double)row->count;
    } else {
        row->flops = NAN;
    }
    int64_t t_ns = 0;
    if (row->kernels > 0 && row->gpu_ns > 0) {
        row->time_source = TL_TFLOPS_GPU;
        t_ns = row->gpu_ns;
    } else if (!any_gpu && row->total_ns > 0) {
        row->time_source = TL_TFLOPS_CPU;
        t_ns = row->total_ns;
    }
    row->tflops = isfinite(row->flops) && t_ns > 0 ? row->flops / ((double)t_ns * 1e-9) / 1e12 : NAN;
    if (!isfinite(row->flops))
        row->time_source = TL_TFLOPS_NONE;
    row->peak_tflops = tl_device_peak_tflops(device, row->types);
    return 0;
}

int tl_shapes_compute(tl_aggregate *a)
{
    tl_shapes *sh = &a->shapes;
    tl_shapes_release(sh);
    int rc = -1;
    size_t n = 0;
    for (size_t ri = 0; ri < a->nranks; ri++)
        for (size_t j = 0; j < a->ranks[ri].nsessions; j++) {
            const tl_session *s = &a->sessions[a->ranks[ri].sessions[j]];
            n += s->nshapes;
            sh->sessions += s->nshapes > 0;
            sh->dropped_keys += s->shapes_dropped_keys;
            sh->dropped_calls += s->shapes_dropped_calls;
            if (sh->device == NULL && s->nshapes > 0 && s->device_name != NULL && *s->device_name)
                sh->device = s->device_name;
        }
    sh->peak_known = peak_index(sh->device) >= 0;
    if (n == 0)
        return 0;
    ref *v = malloc(n * sizeof *v), *grouped = malloc(n * sizeof *grouped);
    key *keys = malloc(n * sizeof *keys);
    tl_shape_op *ops = NULL;
    if (v == NULL || grouped == NULL || keys == NULL)
        goto out;
    size_t m = 0;
    for (size_t ri = 0; ri < a->nranks; ri++)
        for (size_t j = 0; j < a->ranks[ri].nsessions; j++) {
            size_t si = a->ranks[ri].sessions[j];
            const tl_session *s = &a->sessions[si];
            /* its kernels may be on disk by now (spill.h): the pass over the bulk said */
            for (size_t k = 0; k < s->nshapes; k++)
                v[m++] = (ref){ &s->shapes[k], ri, s->gpu.present || a->facts[si].has_kernels };
        }
    size_t nk = group_keys(v, n, grouped, keys);
    if (nk == SIZE_MAX)
        goto out;
    ref *t = v;
    v = grouped;
    grouped = t;
    qsort_r(keys, nk, sizeof *keys, by_name_total, v);
    /* operators: runs of one name (each run by total, largest first) */
    if ((ops = calloc(nk + 1, sizeof *ops)) == NULL)
        goto out;
    size_t nops = 0;
    for (size_t i = 0; i < nk;) {
        size_t e = i + 1;
        while (e < nk && strcmp(v[keys[e].first].s->name, v[keys[i].first].s->name) == 0)
            e++;
        tl_shape_op *op = &ops[nops++];
        op->name = v[keys[i].first].s->name;
        op->first = i; /* into keys, until the rows are made */
        op->shapes = e - i;
        for (size_t j = i; j < e; j++) {
            op->total_ns += keys[j].total_ns;
            op->count += keys[j].count;
        }
        i = e;
    }
    qsort(ops, nops, sizeof *ops, by_op_total);
    sh->ops_total = nops;
    sh->nops = nops < TL_SHAPES_TOP_OPS ? nops : TL_SHAPES_TOP_OPS;
    size_t nrows = 0;
    for (size_t o = 0; o < sh->nops; o++)
        nrows += ops[o].shapes < TL_SHAPES_PER_OP ? ops[o].shapes : TL_SHAPES_PER_OP;
    if ((sh->rows = calloc(nrows + 1, sizeof *sh->rows)) == NULL)
        goto out;
    for (size_t o = 0; o < sh->nops; o++) {
        size_t kfirst = ops[o].first, kn = ops[o].shapes < TL_SHAPES_PER_OP ? ops[o].shapes : TL_SHAPES_PER_OP;
        ops[o].first = sh->nrows;
        ops[o].n = kn;
        for (size_t j = 0; j < kn; j++) {
            if (fill_row(a, &sh->rows[sh->nrows], v, &keys[kfirst + j], sh->device) != 0) {
                free(sh->rows[sh->nrows].rank_ns);
                goto out;
            }
            sh->nrows++;
        }
    }
    sh->ops = ops;
    ops = NULL;
    rc = 0;
out:
    free(v);
    free(grouped);
    free(keys);
    free(ops);
    if (rc != 0)
        tl_shapes_release(sh);
    return rc;
}
