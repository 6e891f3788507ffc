/*
 * shape_table.c - operators by input shape (shape_table.h).
 */
#include "shape_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tl_shape_table_init(tl_shape_table *t)
{
    memset(t, 0, sizeof *t);
    tl_strtab_init(&t->strs);
    tl_strtab_init(&t->raw);
}

void tl_shape_table_release(tl_shape_table *t)
{
    tl_strtab_release(&t->strs);
    tl_strtab_release(&t->raw);
    free(t->raw_key);
    free(t->v);
    free(t->slots);
    free(t->op_ext);
    free(t->op_key);
    free(t->op_dense);
    free(t->kern);
    memset(t, 0, sizeof *t);
}

/* The text without whitespace; types also without quotes and brackets
 * ("float,c10::Half,,Scalar"). Cut to TL_SHAPE_TEXT_MAX with "...". */
static size_t normalize(char *out, const char *s, size_t len, int types)
{
    size_t n = 0;
    int in_str = 0;
    for (size_t i = 0; i < len && n < TL_SHAPE_TEXT_MAX; i++) {
        char c = s[i];
        if (c == '"') {
            in_str = !in_str;
            if (types)
                continue;
        } else if (!in_str && (c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
            continue;
        } else if (types && !in_str && (c == '[' || c == ']')) {
            continue;
        } else if (c == '\\' && i + 1 < len) {
            out[n++] = c;
            c = s[++i];
            if (n >= TL_SHAPE_TEXT_MAX)
                break;
        }
        out[n++] = c;
    }
    if (n >= TL_SHAPE_TEXT_MAX) {
        n = TL_SHAPE_TEXT_MAX;
        memcpy(out + n, "...", 3);
        n += 3;
    }
    return n;
}

static uint64_t key_hash(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t h = 1469598103934665603ull;
    h = (h ^ a) * 1099511628211ull;
    h = (h ^ b) * 1099511628211ull;
    h = (h ^ c) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int grow_slots(tl_shape_table *t)
{
    size_t ns = t->nslots ? t->nslots * 2 : 256;
    uint32_t *s = calloc(ns, sizeof *s);
    if (s == NULL)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        const tl_shape_stat *e = &t->v[i];
        size_t k = key_hash(e->name, e->dims, e->types) & (ns - 1);
        while (s[k])
            k = (k + 1) & (ns - 1);
        s[k] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = ns;
    return 0;
}

static size_t ext_slot(int64_t ext, size_t nslots)
{
    uint64_t h = (uint64_t)ext * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 31)) & (nslots - 1);
}

/* The key of `ext` in the hash, or 0. */
static uint32_t hash_get(const tl_shape_table *t, int64_t ext)
{
    if (t->op_slots == 0)
        return 0;
    size_t j = ext_slot(ext, t->op_slots);
    while (t->op_key[j] && t->op_ext[j] != ext)
        j = (j + 1) & (t->op_slots - 1);
    return t->op_key[j];
}

#define OP_DENSE_SLACK 65536 /* ids the dense array may run ahead of 4x its entries */

/* The dense array's slot of `ext` (ext >= 0), grown to take it when it stays
 * dense enough; NULL: the hash's. Once an id is in the array's range it stays
 * there, so a later call of an id that the hash holds lands in the array and
 * the array is read first. */
static uint32_t *dense_slot(tl_shape_table *t, int64_t ext, int grow)
{
    if (t->op_dcap == 0 && t->op_dn == 0 && grow)
        t->op_base = ext;
    if (ext < t->op_base)
        return NULL;
    uint64_t i = (uint64_t)ext - (uint64_t)t->op_base;
    if (i >= t->op_dcap) {
        if (!grow || i >= 4 * (uint64_t)t->op_dn + OP_DENSE_SLACK)
            return NULL;
        size_t cap = t->op_dcap ? t->op_dcap * 2 : 4096;
        while (cap <= i)
            cap *= 2;
        uint32_t *d = realloc(t->op_dense, cap * sizeof *d);
        if (d == NULL)
            return NULL;
        memset(d + t->op_dcap, 0, (cap - t->op_dcap) * sizeof *d);
        t->op_dense = d;
        t->op_dcap = cap;
    }
    return &t->op_dense[i];
}

static int hash_put(tl_shape_table *t, int64_t ext, uint32_t key);

static int map_put(tl_shape_table *t, int64_t ext, uint32_t key)
{
    if (t->op_n >= TL_SHAPE_MAX_LINKS) {
        t->links_dropped++;
        return 0;
    }
    uint32_t *d = dense_slot(t, ext, 1);
    if (d == NULL)
        return hash_put(t, ext, key);
    if (!*d) {
        t->op_dn++;
        if (t->op_hashed == 0 || hash_get(t, ext) == 0)
            t->op_n++; /* a new id (not one the hash took before the array reached it) */
    }
    *d = key + 1;
    return 0;
}

static int hash_put(tl_shape_table *t, int64_t ext, uint32_t key)
{
    if ((t->op_n + 1) * 2 > t->op_slots) {
        size_t ns = t->op_slots ? t->op_slots * 2 : 1024;
        int64_t *e = malloc(ns * sizeof *e);
        uint32_t *k = calloc(ns, sizeof *k);
        if (e == NULL || k == NULL) {
            free(e);
            free(k);
            return -1;
        }
        for (size_t i = 0; i < t->op_slots; i++) {
            if (!t->op_key[i])
                continue;
            size_t j = ext_slot(t->op_ext[i], ns);
            while (k[j])
                j = (j + 1) & (ns - 1);
            e[j] = t->op_ext[i];
            k[j] = t->op_key[i];
        }
        free(t->op_ext);
        free(t->op_key);
        t->op_ext = e;
        t->op_key = k;
        t->op_slots = ns;
    }
    size_t j = ext_slot(ext, t->op_slots);
    while (t->op_key[j] && t->op_ext[j] != ext)
        j = (j + 1) & (t->op_slots - 1);
    if (!t->op_key[j]) {
        t->op_n++;
        t->op_hashed++;
    }
    t->op_ext[j] = ext;
    t->op_key[j] = key + 1;
    return 0;
}

/* map_put stores key + 1: this key is UINT32_MAX there, an operator without shapes. */
#define KEY_NO_SHAPES (UINT32_MAX - 1)

int tl_shape_table_op_no_shapes(tl_shape_table *t, int64_t ext)
{
    if (ext < 0 || t->op_n >= TL_SHAPE_MAX_LINKS)
        return 0; /* not a link: nothing to count as dropped */
    return map_put(t, ext, KEY_NO_SHAPES);
}

/* The key + 1 of the operator with External id `ext`, 0 when none is known,
 * UINT32_MAX for an operator without shapes. */
static uint32_t key_of_ext(tl_shape_table *t, int64_t ext)
{
    if (t->op_slots == 0 && t->op_dcap == 0)
        return 0;
    uint32_t *d = ext >= 0 ? dense_slot(t, ext, 0) : NULL;
    return d && *d ? *d : hash_get(t, ext);
}

static void link_one(tl_shape_table *t, uint32_t key, int64_t dur)
{
    tl_shape_stat *e = &t->v[key - 1];
    e->gpu_ns += dur;
    e->kernels++;
}

int tl_shape_table_kernel(tl_shape_table *t, int64_t ext, int64_t dur)
{
    /* A kernel whose operator is known already is linked now: a Kineto trace
     * lists the operators before the GPU activity, so a GPU-heavy trace keeps
     * no link per kernel (16 bytes each, issue 33). The others wait for
     * tl_shape_table_link. */
    uint32_t key = key_of_ext(t, ext);
    if (key) {
        if (key != UINT32_MAX) /* else its operator has no shapes: nothing to add to */
            link_one(t, key, dur);
        return 0;
    }
    if (t->nkern >= TL_SHAPE_MAX_LINKS) {
        t->links_dropped++;
        return 0;
    }
    if (t->nkern == t->kern_cap) {
        size_t nc = t->kern_cap ? t->kern_cap * 2 : 256;
        tl_shape_link *k = realloc(t->kern, nc * sizeof *k);
        if (k == NULL)
            return -1;
        t->kern = k;
        t->kern_cap = nc;
    }
    t->kern[t->nkern++] = (tl_shape_link){ ext, dur };
    return 0;
}

void tl_shape_table_link(tl_shape_table *t)
{
    for (size_t i = 0; i < t->nkern; i++) {
        uint32_t key = key_of_ext(t, t->kern[i].ext);
        if (key && key != UINT32_MAX)
            link_one(t, key, t->kern[i].dur_ns);
    }
    t->nkern = 0;
}

static int add_key(tl_shape_table *t, const char *name, size_t nlen, const char *dims, size_t dlen, const char *types,
                   size_t tlen, int64_t dur, double flops, int64_t ext, uint32_t *key);

/* Bytes of a joined raw text kept for the fast path. */
#define RAW_TEXT_MAX 1024

int tl_shape_table_add(tl_shape_table *t, const char *name, size_t nlen, const char *dims, size_t dlen,
                       const char *types, size_t tlen, int64_t dur, double flops, int64_t ext)
{
    char raw[RAW_TEXT_MAX];
    size_t rn = nlen + dlen + tlen + 2;
    uint32_t rid = UINT32_MAX, key;
    if (rn <= sizeof raw && t->raw.n < TL_SHAPE_RAW_MAX) {
        memcpy(raw, name, nlen);
        raw[nlen] = '\x1f';
        memcpy(raw + nlen + 1, dims, dlen);
        raw[nlen + 1 + dlen] = '\x1f';
        memcpy(raw + nlen + 2 + dlen, types, tlen);
        uint32_t known = t->raw.n;
        rid = tl_strtab_intern(&t->raw, raw, rn);
        if (rid != UINT32_MAX && rid < known) { /* seen: its key, exactly (the strtab compares the bytes) */
            key = t->raw_key[rid];
            if (key == UINT32_MAX) { /* a key beyond TL_SHAPES_MAX */
                t->dropped++;
                return 0;
            }
            goto found;
        }
    }
    if (add_key(t, name, nlen, dims, dlen, types, tlen, dur, flops, ext, &key) != 0)
        return -1;
    if (rid != UINT32_MAX) {
        if (rid >= t->raw_cap) {
            size_t nc = t->raw_cap ? t->raw_cap * 2 : 256;
            while (nc <= rid)
                nc *= 2;
            uint32_t *v = realloc(t->raw_key, nc * sizeof *v);
            if (v == NULL)
                return -1;
            t->raw_key = v;
            t->raw_cap = nc;
        }
        t->raw_key[rid] = key;
    }
    return 0;
found:;
    tl_shape_stat *e = &t->v[key];
    e->count++;
    e->total_ns += dur;
    if (dur < e->min_ns)
        e->min_ns = dur;
    if (dur > e->max_ns)
        e->max_ns = dur;
    if (isfinite(flops) && flops >= 0) {
        e->flops += flops;
        e->flops_n++;
    }
    return ext >= 0 ? map_put(t, ext, key) : 0;
}

/* The slow path: normalize, find or add the key, count the call; *key its
 * index, or UINT32_MAX when it is beyond TL_SHAPES_MAX (counted in dropped). */
static int add_key(tl_shape_table *t, const char *name, size_t nlen, const char *dims, size_t dlen, const char *types,
                   size_t tlen, int64_t dur, double flops, int64_t ext, uint32_t *key)
{
    char d[TL_SHAPE_TEXT_MAX + 4], ty[TL_SHAPE_TEXT_MAX + 4];
    *key = UINT32_MAX;
    size_t dn = normalize(d, dims, dlen, 0), tn = normalize(ty, types, tlen, 1);
    uint32_t ni = tl_strtab_intern(&t->strs, name, nlen), di = tl_strtab_intern(&t->strs, d, dn),
             ti = tl_strtab_intern(&t->strs, ty, tn);
    if (ni == UINT32_MAX || di == UINT32_MAX || ti == UINT32_MAX)
        return -1;
    if ((t->n + 1) * 2 > t->nslots && grow_slots(t) != 0)
        return -1;
    size_t k = key_hash(ni, di, ti) & (t->nslots - 1);
    while (t->slots[k]) {
        tl_shape_stat *e = &t->v[t->slots[k] - 1];
        if (e->name == ni && e->dims == di && e->types == ti)
            goto found;
        k = (k + 1) & (t->nslots - 1);
    }
    if (t->n >= TL_SHAPES_MAX) {
        t->dropped++;
        return 0;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        tl_shape_stat *v = realloc(t->v, nc * sizeof *v);
        if (v == NULL)
            return -1;
        t->v = v;
        t->cap = nc;
    }
    t->v[t->n] = (tl_shape_stat){ .name = ni, .dims = di, .types = ti, .min_ns = INT64_MAX, .max_ns = 0 };
    t->slots[k] = (uint32_t)++t->n;
found:;
    tl_shape_stat *e = &t->v[t->slots[k] - 1];
    e->count++;
    e->total_ns += dur;
    if (dur < e->min_ns)
        e->min_ns = dur;
    if (dur > e->max_ns)
        e->max_ns = dur;
    if (isfinite(flops) && flops >= 0) {
        e->flops += flops;
        e->flops_n++;
    }
    *key = t->slots[k] - 1;
    return ext >= 0 ? map_put(t, ext, *key) : 0;
}
