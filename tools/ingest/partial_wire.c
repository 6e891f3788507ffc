/*
 * partial_wire.c - session results as bytes between the processes of one
 * tally-mpi job (partial.h, "the wire"): the same field tables as the JSON
 * partial (partial_fields.c), walked in the same order, each value written
 * as its raw bits: integers as int64, doubles as their 8 bytes, strings as
 * a length and the bytes, arrays as a count and their elements. No text is
 * formatted and none parsed: packing and unpacking a session costs about
 * what copying it does, where the JSON partial cost more than reading the
 * trace it came from.
 *
 * The bytes are only ever read by the same binary that wrote them, in the
 * same job, so the values are not range-checked as a partial file's are
 * (they come from this tally's analysis, not from a user); every read is
 * still bounded by the buffer, and a count that does not fit what is left
 * of it is an error, never an overrun.
 */
#include "partial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

#define WIRE_MAGIC 0x31726977796c6174ULL /* "tallywir1" little end: a stale or foreign message is refused */

/* ---- writing ------------------------------------------------------------------ */

static void put(tl_wire *w, const void *d, size_t n)
{
    if (w->oom || n == 0)
        return;
    if (w->measure) { /* the size only (tl_partial_wire_bulk_size) */
        w->len += n;
        return;
    }
    if (w->len + n > w->cap && tl_array_grow(&w->p, w->len + n - 1, &w->cap, 1, 1 << 16) != 0) {
        w->oom = 1;
        return;
    }
    memcpy(w->p + w->len, d, n);
    w->len += n;
}

static void put_i64(tl_wire *w, int64_t v)
{
    put(w, &v, sizeof v);
}
static void put_u64(tl_wire *w, uint64_t v)
{
    put(w, &v, sizeof v);
}
static void put_f64(tl_wire *w, double v)
{
    put(w, &v, sizeof v);
}

/* A string, or NULL (length -1). */
static void put_str(tl_wire *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_i64(w, s ? (int64_t)n : -1);
    if (s)
        put(w, s, n);
}

static const void *ptr_at(const void *base, size_t offset)
{
    const void *v;
    memcpy(&v, (const char *)base + offset, sizeof v);
    return v;
}

static size_t count_at(const void *base, const tl_field *f)
{
    return *(const size_t *)((const char *)base + f->count);
}

static void put_strtab(tl_wire *w, const tl_strtab *t)
{
    put_u64(w, t->n);
    for (uint32_t i = 0; i < t->n; i++)
        put_str(w, tl_strtab_get(t, i));
}

static void put_fields(tl_wire *w, const tl_fields *t, const void *base);

/* The dedicated pairs: what the JSON partial writes of them, exactly. */
static void put_custom(tl_wire *w, const tl_field *f, const void *base)
{
    switch (f->custom) {
    case TL_FC_STAT_HIST: {
        const tl_dur_stat *d = base;
        for (unsigned i = 0; i < d->hist.n; i++)
            if (d->hist.counts[i] != 0) {
                put_u64(w, d->hist.first + i);
                put_u64(w, d->hist.counts[i]);
            }
        put_u64(w, UINT64_MAX); /* the end */
        break;
    }
    case TL_FC_STAT_SAMPLES: {
        const tl_dur_stat *d = base;
        put_u64(w, d->nsamples);
        put(w, d->samples, (size_t)d->nsamples * sizeof *d->samples);
        break;
    }
    case TL_FC_GPU_BY_MASK:
        put(w, ((const tl_gpu_breakdown *)base)->by_mask, 8 * sizeof(int64_t));
        break;
    case TL_FC_LANE_BUSY: {
        const tl_lane *l = base;
        for (int kt = 0; kt < TL_KT_COUNT; kt++) {
            int any = 0;
            for (int i = 0; l->busy[kt] && i < TL_TIMELINE_BINS && !any; i++)
                any = l->busy[kt][i] != 0.0f;
            put_u64(w, (uint64_t)any);
            if (any)
                put(w, l->busy[kt], TL_TIMELINE_BINS * sizeof(float));
        }
        break;
    }
    case TL_FC_LANE_CALLS: {
        const tl_lane *l = base;
        put_u64(w, l->ncalls);
        put_u64(w, l->calls_left);
        for (uint32_t i = 0; i < l->ncalls; i++) {
            put_i64(w, l->calls[i].ts_ns);
            put_i64(w, l->calls[i].dur_ns);
            put_u64(w, ((uint64_t)l->calls[i].name << 8) | l->calls[i].row);
        }
        break;
    }
    case TL_FC_TIMELINE_NAMES:
        put_strtab(w, &((const tl_timeline *)base)->names);
        break;
    case TL_FC_SERIES_BINS: {
        const tl_tseries *t = base;
        put_i64(w, t->nbins);
        for (int b = 0; b < t->nbins; b++) {
            put_f64(w, t->bmin[b]);
            put_f64(w, t->bmean[b]);
            put_f64(w, t->bmax[b]);
        }
        break;
    }
    case TL_FC_CALLTREE: {
        const tl_calltree *t = &((const tl_session *)base)->calltree;
        put_u64(w, t->n);
        if (t->n == 0)
            break;
        put_u64(w, t->dropped);
        put_strtab(w, &t->names);
        for (uint32_t i = 0; i < t->n; i++) {
            const tl_cnode *c = &t->nodes[i];
            put_u64(w, c->parent);
            put_u64(w, c->name);
            put_i64(w, c->incl_ns);
            put_i64(w, c->self_ns);
            put_u64(w, c->count);
            put_u64(w, c->kind);
        }
        break;
    }
    case TL_FC_PROBLEMS: { /* with their kinds and offsets: no need to work them out again */
        const tl_problems *l = &((const tl_session *)base)->id.problems;
        put_u64(w, l->n);
        for (size_t i = 0; i < l->n; i++) {
            put_i64(w, l->v[i].kind);
            put_i64(w, l->v[i].offset);
            put_str(w, l->v[i].text);
        }
        break;
    }
    case TL_FC_PROBLEM_OFFSETS:
        break; /* with the problems */
    default:
        w->oom = 1;
        break; /* a custom field without its pair here: test_partial fails */
    }
}

static void put_value(tl_wire *w, const tl_field *f, const void *base)
{
    const char *p = (const char *)base + f->offset;
    switch (f->type) {
    case TL_F_STR:
    case TL_F_STR_NULL:
        put_str(w, ptr_at(base, f->offset));
        break;
    case TL_F_STR_BUF:
        put_str(w, p);
        break;
    case TL_F_INT:
    case TL_F_TS:
    case TL_F_TS_NULL:
    case TL_F_ENUM:
        put_i64(w, tl_field_int(base, f));
        break; /* a uint64 travels as its bits */
    case TL_F_NUM:
        put_f64(w, *(const double *)p);
        break;
    case TL_F_STRINGS: {
        char *const *s = ptr_at(base, f->offset);
        put_u64(w, count_at(base, f));
        for (size_t i = 0; i < count_at(base, f); i++)
            put_str(w, s[i]);
        break;
    }
    case TL_F_OBJECT:
        put_fields(w, f->sub, p);
        break;
    case TL_F_ARRAY: {
        const char *elems = ptr_at(base, f->offset);
        put_u64(w, count_at(base, f));
        for (size_t i = 0; i < count_at(base, f); i++)
            put_fields(w, f->sub, elems + i * f->sub->size);
        break;
    }
    case TL_F_CUSTOM:
        put_custom(w, f, base);
        break;
    default:
        w->oom = 1;
        break;
    }
}

static void put_fields(tl_wire *w, const tl_fields *t, const void *base)
{
    for (size_t i = 0; i < t->n; i++)
        put_value(w, &t->f[i], base);
}

int tl_partial_wire_pack(tl_wire *w, const tl_partial *options, const tl_session *s, size_t n)
{
    put_u64(w, WIRE_MAGIC);
    put_fields(w, &tl_partial_options_fields, options);
    put_u64(w, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i].spill.out) /* its bulk is on disk (analyze/spill.h): the caller holds it first */
            return -1;
        put_fields(w, &tl_partial_session_fields, &s[i]);
    }
    return w->oom ? -1 : 0;
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct rd {
    const char *p;
    size_t len, pos;
    int bad; /* 1: the bytes end early or a count does not fit; 2: out of memory */
} rd;

static void get(rd *r, void *d, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = r->bad ? r->bad : 1;
        memset(d, 0, n);
        return;
    }
    memcpy(d, r->p + r->pos, n);
    r->pos += n;
}

static int64_t get_i64(rd *r)
{
    int64_t v;
    get(r, &v, sizeof v);
    return v;
}

static uint64_t get_u64(rd *r)
{
    uint64_t v;
    get(r, &v, sizeof v);
    return v;
}

static double get_f64(rd *r)
{
    double v;
    get(r, &v, sizeof v);
    return v;
}

/* A count of items of at least each bytes: no larger than what is left. */
static size_t get_count(rd *r, size_t each)
{
    uint64_t n = get_u64(r);
    if (!r->bad && n > (r->len - r->pos) / (each ? each : 1)) {
        r->bad = 1;
        return 0;
    }
    return r->bad ? 0 : (size_t)n;
}

/* A new copy of a string (NULL for NULL); *len its length. */
static char *get_str(rd *r, size_t *len)
{
    int64_t n = get_i64(r);
    *len = 0;
    if (r->bad || n < 0)
        return NULL;
    if ((uint64_t)n > r->len - r->pos) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (s == NULL) {
        r->bad = 2;
        return NULL;
    }
    memcpy(s, r->p + r->pos, (size_t)n);
    s[n] = '\0';
    r->pos += (size_t)n;
    *len = (size_t)n;
    return s;
}

static void get_strtab(rd *r, tl_strtab *t)
{
    size_t n = get_count(r, sizeof(int64_t));
    for (size_t i = 0; i < n && !r->bad; i++) {
        size_t len;
        char *s = get_str(r, &len);
        if (s == NULL) {
            r->bad = r->bad ? r->bad : 1;
            return;
        }
        if (tl_strtab_intern(t, s, len) != i) /* out of memory, or a name twice: not this writer's */
            r->bad = 1;
        free(s);
    }
}

static void get_fields(rd *r, const tl_fields *t, void *base);

static void get_custom(rd *r, const tl_field *f, void *base)
{
    switch (f->custom) {
    case TL_FC_STAT_HIST: {
        tl_dur_stat *d = base;
        for (;;) {
            uint64_t b = get_u64(r);
            if (r->bad || b == UINT64_MAX)
                return;
            uint64_t c = get_u64(r);
            if (b >= TL_HIST_BUCKETS || c > UINT32_MAX) {
                r->bad = 1;
                return;
            }
            if (tl_hist_add_bucket(&d->hist, (unsigned)b, (uint32_t)c) != 0) {
                r->bad = 2;
                return;
            }
        }
    }
    case TL_FC_STAT_SAMPLES: {
        tl_dur_stat *d = base;
        size_t n = get_count(r, sizeof *d->samples);
        if (n == 0)
            return;
        if ((d->samples = malloc(n * sizeof *d->samples)) == NULL) {
            r->bad = 2;
            return;
        }
        get(r, d->samples, n * sizeof *d->samples);
        d->nsamples = d->samples_cap = (uint32_t)n;
        return;
    }
    case TL_FC_GPU_BY_MASK:
        get(r, ((tl_gpu_breakdown *)base)->by_mask, 8 * sizeof(int64_t));
        return;
    case TL_FC_LANE_BUSY: {
        tl_lane *l = base;
        for (int kt = 0; kt < TL_KT_COUNT && !r->bad; kt++) {
            if (get_u64(r) == 0)
                continue;
            float *row = tl_lane_busy_row(l, kt);
            if (row == NULL) {
                r->bad = 2;
                return;
            }
            get(r, row, TL_TIMELINE_BINS * sizeof(float));
        }
        return;
    }
    case TL_FC_LANE_CALLS: {
        tl_lane *l = base;
        size_t n = get_count(r, 3 * sizeof(int64_t));
        l->calls_left = get_u64(r);
        if (n == 0 || r->bad)
            return;
        if ((l->calls = calloc(n, sizeof *l->calls)) == NULL) {
            r->bad = 2;
            return;
        }
        for (size_t i = 0; i < n && !r->bad; i++) {
            int64_t ts = get_i64(r), dur = get_i64(r);
            uint64_t nr = get_u64(r);
            l->calls[l->ncalls++] = (tl_lane_call){ ts, dur, (uint32_t)(nr >> 8), (uint8_t)(nr & 0xff) };
        }
        return;
    }
    case TL_FC_TIMELINE_NAMES:
        get_strtab(r, &((tl_timeline *)base)->names);
        return;
    case TL_FC_SERIES_BINS: {
        tl_tseries *t = base;
        int64_t n = get_i64(r);
        if (n < 0 || n > TL_SERIES_BINS) {
            r->bad = 1;
            return;
        }
        for (int64_t b = 0; b < n && !r->bad; b++) {
            t->bmin[b] = get_f64(r);
            t->bmean[b] = get_f64(r);
            t->bmax[b] = get_f64(r);
        }
        t->nbins = (int)n;
        return;
    }
    case TL_FC_CALLTREE: {
        tl_calltree *t = &((tl_session *)base)->calltree;
        size_t n = get_count(r, 6 * sizeof(int64_t));
        if (n == 0 || r->bad)
            return;
        t->dropped = get_u64(r);
        get_strtab(r, &t->names);
        for (size_t i = 0; i < n && !r->bad; i++) {
            uint64_t parent = get_u64(r), name = get_u64(r);
            int64_t incl = get_i64(r), self = get_i64(r);
            uint64_t count = get_u64(r), kind = get_u64(r);
            if (r->bad || name >= t->names.n || (parent != TL_CALLTREE_NONE && parent >= i) || kind >= TL_CTK_COUNT) {
                r->bad = 1;
                return;
            }
            uint32_t k = tl_calltree_child(t, (uint32_t)parent, (uint32_t)name);
            if (k != (uint32_t)i) {
                r->bad = k == TL_CALLTREE_NONE ? 2 : 1;
                return;
            }
            t->nodes[k].incl_ns = incl;
            t->nodes[k].self_ns = self;
            t->nodes[k].count = count;
            t->nodes[k].kind = (uint8_t)kind;
        }
        free(t->slots); /* as read_partial.c: a session's tree is only read from here on */
        t->slots = NULL;
        t->nslots = 0;
        return;
    }
    case TL_FC_PROBLEMS: {
        tl_problems *l = &((tl_session *)base)->id.problems;
        size_t n = get_count(r, 3 * sizeof(int64_t));
        for (size_t i = 0; i < n && !r->bad; i++) {
            int kind = (int)get_i64(r);
            int64_t offset = get_i64(r);
            size_t len;
            char *text = get_str(r, &len);
            if (text == NULL || tl_problems_add_text(l, kind, offset, text) != 0)
                r->bad = r->bad ? r->bad : 2;
            free(text);
        }
        return;
    }
    case TL_FC_PROBLEM_OFFSETS:
        return;
    default:
        r->bad = 1;
        return;
    }
}

static void get_value(rd *r, const tl_field *f, void *base)
{
    char *p = (char *)base + f->offset;
    size_t len;
    switch (f->type) {
    case TL_F_STR:
    case TL_F_STR_NULL:
        tl_field_set_ptr(base, f->offset, get_str(r, &len));
        break;
    case TL_F_STR_BUF: {
        char *s = get_str(r, &len);
        snprintf(p, f->size, "%s", s ? s : "");
        free(s);
        break;
    }
    case TL_F_INT:
    case TL_F_TS:
    case TL_F_TS_NULL:
    case TL_F_ENUM:
        tl_field_set_int(base, f, get_i64(r));
        break;
    case TL_F_NUM:
        *(double *)p = get_f64(r);
        break;
    case TL_F_STRINGS: {
        size_t n = get_count(r, sizeof(int64_t));
        char **s = calloc(n + 1, sizeof *s);
        tl_field_set_ptr(base, f->offset, s);
        if (s == NULL) {
            r->bad = 2;
            break;
        }
        size_t *count = (size_t *)((char *)base + f->count);
        for (size_t i = 0; i < n && !r->bad; i++)
            if ((s[(*count)++] = get_str(r, &len)) == NULL)
                r->bad = r->bad ? r->bad : 1;
        break;
    }
    case TL_F_OBJECT:
        get_fields(r, f->sub, p);
        break;
    case TL_F_ARRAY: {
        size_t n = get_count(r, sizeof(int64_t)); /* every element's first value takes 8 bytes or more */
        char *elems = calloc(n + 1, f->sub->size);
        tl_field_set_ptr(base, f->offset, elems);
        if (elems == NULL) {
            r->bad = 2;
            break;
        }
        size_t *count = (size_t *)((char *)base + f->count);
        for (size_t i = 0; i < n && !r->bad; i++) {
            (*count)++; /* counted before it is read: what it holds is freed with the session */
            get_fields(r, f->sub, elems + i * f->sub->size);
        }
        break;
    }
    case TL_F_CUSTOM:
        get_custom(r, f, base);
        break;
    default:
        r->bad = 1;
        break;
    }
}

static void get_fields(rd *r, const tl_fields *t, void *base)
{
    for (size_t i = 0; i < t->n && !r->bad; i++)
        get_value(r, &t->f[i], base);
}

/* A field of the session's bulk (tl_partial_session_bulk_fields): the same value at the same
 * place, written the same way in a whole session and in its bulk alone. */
static int in_bulk(const tl_field *f)
{
    const tl_fields *b = &tl_partial_session_bulk_fields;
    for (size_t i = 0; i < b->n; i++)
        if (b->f[i].offset == f->offset && b->f[i].type == f->type && b->f[i].custom == f->custom)
            return 1;
    return 0;
}

/* A whole session's fields into s; returns the bytes its bulk's fields took, what
 * tl_partial_wire_bulk_size() would measure: the spill's budget reads it (spill.h). */
static uint64_t get_session(rd *r, tl_session *s)
{
    const tl_fields *t = &tl_partial_session_fields;
    uint64_t bulk = 0;
    for (size_t i = 0; i < t->n && !r->bad; i++) {
        size_t at = r->pos;
        get_value(r, &t->f[i], s);
        if (in_bulk(&t->f[i]))
            bulk += r->pos - at;
    }
    return bulk;
}

int tl_partial_wire_unpack(tl_partial *p, const char *buf, size_t len, char *err, size_t errlen)
{
    rd r = { buf, len, 0, 0 };
    if (get_u64(&r) != WIRE_MAGIC) {
        snprintf(err, errlen, "not a message of this tally-mpi (another build?)");
        return -1;
    }
    get_fields(&r, &tl_partial_options_fields, p);
    p->has_options = 1;
    size_t n = get_count(&r, sizeof(int64_t));
    if (!r.bad && (p->sessions = calloc(n + 1, sizeof *p->sessions)) == NULL)
        r.bad = 2;
    for (size_t i = 0; i < n && !r.bad; i++) {
        tl_session *s = &p->sessions[p->nsessions++];
        tl_session_init(s);
        s->spill.wire_size = get_session(&r, s);
        tl_session_compact(s);
    }
    if (!r.bad && r.pos != r.len)
        r.bad = 1;
    if (r.bad) {
        snprintf(err, errlen, r.bad == 2 ? "out of memory" : "its bytes end early or do not read as sessions");
        tl_partial_release(p);
        return -1;
    }
    return 0;
}

int tl_partial_wire_pack_bulk(tl_wire *w, const tl_session *s)
{
    put_fields(w, &tl_partial_session_bulk_fields, s);
    return w->oom ? -1 : 0;
}

size_t tl_partial_wire_bulk_size(const tl_session *s)
{
    tl_wire w = { .measure = 1 };
    put_fields(&w, &tl_partial_session_bulk_fields, s);
    return w.len;
}

int tl_partial_wire_unpack_bulk(tl_session *s, const char *buf, size_t len, char *err, size_t errlen)
{
    rd r = { buf, len, 0, 0 };
    get_fields(&r, &tl_partial_session_bulk_fields, s);
    if (!r.bad && r.pos != r.len)
        r.bad = 1;
    if (r.bad) {
        snprintf(err, errlen, r.bad == 2 ? "out of memory" : "its bytes end early or do not read as a session's bulk");
        return -1;
    }
    tl_session_compact(s);
    return 0;
}
