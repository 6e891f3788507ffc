/*
 * read_partial.c - the reader of partial aggregates (partial.h): a partial's
 * sessions into session results, by the field tables of partial_fields.c
 * that the writer (render/partial_json.c) follows too.
 *
 * The one idea: a partial is hostile input. Every number is checked against
 * the range the analysis can hold before it is believed (the table's range,
 * or an earlier field's value), so a hostile partial gives an error, never
 * an overflow later (a span of 2^63-1 added to another, an idle time of
 * -2^63 negated). The error names the field and where it is:
 *   "count": out of range (session 0, in names[3].stat)
 * Unknown keys are ignored (a newer tally may add fields); a missing field
 * is an error unless the table says older partials lack it.
 */
#define _GNU_SOURCE
#include "partial.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READER_DEPTH 8 /* the deepest is names[i].stat: 2 */

typedef struct reader {
    char *err;
    size_t errlen;
    int bad;
    /* where the reader is inside the session: keys, and array indices (-1: none) */
    const char *key[READER_DEPTH];
    long index[READER_DEPTH];
    int depth;
    char where[160]; /* ... when the first error was found */
} reader;

static void enter(reader *r, const char *key, long index)
{
    if (r->depth < READER_DEPTH) {
        r->key[r->depth] = key;
        r->index[r->depth] = index;
    }
    r->depth++;
}

static void leave(reader *r)
{
    r->depth--;
}

static void bad(reader *r, const char *what)
{
    if (r->bad)
        return;
    r->bad = 1;
    snprintf(r->err, r->errlen, "%s", what);
    size_t n = 0;
    r->where[0] = '\0';
    for (int d = 0; d < r->depth && d < READER_DEPTH && n < sizeof r->where; d++) {
        int k = r->index[d] >= 0
                    ? snprintf(r->where + n, sizeof r->where - n, "%s%s[%ld]", d ? "." : "", r->key[d], r->index[d])
                    : snprintf(r->where + n, sizeof r->where - n, "%s%s", d ? "." : "", r->key[d]);
        n += k > 0 ? (size_t)k : 0;
    }
}

static void bad_key(reader *r, const char *key, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof msg, "\"%s\": %s", key, what);
    bad(r, msg);
}

/* A number's value, -0 read as 0: the writer prints -0.0 as "-0", which
 * reads back as the integer 0, so a partial would not write back the same. */
static double number(const json_t *v)
{
    double x = json_number_value(v);
    return x == 0 ? 0.0 : x;
}

static int ts_ok(int64_t v)
{
    return v == INT64_MIN || v == INT64_MAX || (v >= -TL_PARTIAL_MAX_TS && v <= TL_PARTIAL_MAX_TS);
}

/* ---- a C member ------------------------------------------------------------------ */

static size_t *count_of(void *base, const tl_field *f)
{
    return (size_t *)((char *)base + f->count);
}

/* The value of an earlier field of the same struct (a bound of a range). */
static int64_t earlier(const tl_fields *t, const void *base, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->f[i].key, key) == 0)
            return tl_field_int(base, &t->f[i]);
    return 0; /* not reached: a bound that is not an earlier field fails test_partial's round trips */
}

static char *dup_or_bad(reader *r, const char *s)
{
    char *d = strdup(s);
    if (d == NULL)
        bad(r, "out of memory");
    return d;
}

/* ---- the dedicated pairs (partial.h's tl_field_custom) --------------------------- */

static void read_hist(reader *r, const json_t *h, void *base)
{
    tl_dur_stat *d = base;
    json_t *x;
    size_t i;
    uint64_t in_hist = 0;
    if (!json_is_array(h)) {
        bad_key(r, "hist", "expected an array");
        return;
    }
    json_array_foreach(h, i, x)
    {
        json_t *jb = json_array_get(x, 0), *jc = json_array_get(x, 1);
        int64_t b = json_is_integer(jb) ? json_integer_value(jb) : -1;
        int64_t c = json_is_integer(jc) ? json_integer_value(jc) : -1;
        if (!json_is_array(x) || b < 0 || b >= (int64_t)TL_HIST_BUCKETS || c < 0 || c > UINT32_MAX) {
            bad_key(r, "hist", "bucket out of range (expected [bucket, count])");
            return;
        }
        if (tl_hist_add_bucket(&d->hist, (unsigned)b, (uint32_t)c) != 0) {
            bad(r, "out of memory");
            return;
        }
        in_hist += (uint64_t)c;
    }
    if (in_hist > d->count)
        bad_key(r, "hist", "more values than \"count\"");
}

static void read_samples(reader *r, const json_t *s, void *base)
{
    tl_dur_stat *d = base;
    if (!json_is_array(s) || json_array_size(s) > TL_PROFILE_MAX_SAMPLES) {
        bad_key(r, "samples", "expected an array of at most TL_PROFILE_MAX_SAMPLES durations");
        return;
    }
    size_t n = json_array_size(s);
    if (n == 0)
        return;
    if ((d->samples = malloc(n * sizeof *d->samples)) == NULL) {
        bad(r, "out of memory");
        return;
    }
    d->samples_cap = (uint32_t)n;
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(s, k);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > TL_PARTIAL_MAX_NS) {
            bad_key(r, "samples", "a duration out of range");
            return;
        }
        d->samples[d->nsamples++] = (uint64_t)json_integer_value(v);
    }
}

static void read_by_mask(reader *r, const json_t *a, void *base)
{
    tl_gpu_breakdown *g = base;
    if (!json_is_array(a) || json_array_size(a) != 8) {
        bad_key(r, "by_mask", "expected 8 times");
        return;
    }
    for (size_t m = 0; m < 8; m++) {
        json_t *v = json_array_get(a, m);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > TL_PARTIAL_MAX_NS) {
            bad_key(r, "by_mask", "a time out of range");
            return;
        }
        g->by_mask[m] = json_integer_value(v);
    }
}

static void read_busy(reader *r, const json_t *busy, void *base)
{
    tl_lane *l = base;
    if (!json_is_array(busy) || json_array_size(busy) > TL_KT_COUNT) {
        bad_key(r, "busy", "expected an array of at most one per kernel type");
        return;
    }
    for (size_t kt = 0; kt < json_array_size(busy); kt++) {
        json_t *bins = json_array_get(busy, kt);
        size_t nb = json_is_array(bins) ? json_array_size(bins) : 1;
        if (nb != 0 && nb != TL_TIMELINE_BINS) {
            bad_key(r, "busy", "expected 0 or TL_TIMELINE_BINS values");
            return;
        }
        float *row = NULL;
        if (nb != 0 && (row = tl_lane_busy_row(l, (int)kt)) == NULL) {
            bad(r, "out of memory");
            return;
        }
        for (size_t b = 0; b < nb; b++) {
            json_t *v = json_array_get(bins, b);
            double f = json_is_number(v) ? number(v) : -1.0;
            /* a fraction of a bin; anything else would not be a float */
            if (!(f >= 0.0 && f <= 1.0)) {
                bad_key(r, "busy", "a fraction out of [0, 1]");
                return;
            }
            row[b] = (float)f;
        }
    }
}

/* "calls" and "calls_left" of a CPU lane; absent: none. The calls' name ids
 * are checked against the timeline's names once those are read (check_timeline). */
static void read_calls(reader *r, const json_t *calls, const json_t *lane, void *base)
{
    tl_lane *l = base;
    json_t *c;
    size_t i;
    if (calls == NULL || l->kind != TL_LANE_CPU)
        return;
    if (!json_is_array(calls) || json_array_size(calls) > TL_LANE_TOP_EVENTS) {
        bad_key(r, "calls", "expected an array of at most TL_LANE_TOP_EVENTS calls");
        return;
    }
    json_t *left = json_object_get(lane, "calls_left");
    if (!json_is_integer(left) || json_integer_value(left) < 0 || json_integer_value(left) > TL_PARTIAL_MAX_COUNT) {
        bad_key(r, "calls_left", "expected an integer in range");
        return;
    }
    l->calls_left = (uint64_t)json_integer_value(left);
    if (json_array_size(calls) == 0)
        return;
    if ((l->calls = calloc(json_array_size(calls), sizeof *l->calls)) == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(calls, i, c)
    {
        static const int64_t lo[4] = { -TL_PARTIAL_MAX_TS, 0, 0, 0 },
                             hi[4] = { TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_NS, TL_LANE_MAX_DEPTH - 1, UINT32_MAX - 1 };
        int64_t v[4];
        for (size_t k = 0; k < 4; k++) {
            json_t *x = json_array_get(c, k);
            v[k] = json_is_integer(x) ? json_integer_value(x) : lo[k] - 1;
            if (v[k] < lo[k] || v[k] > hi[k]) {
                bad_key(r, "calls", "expected [ts, dur, row, name id] in range");
                return;
            }
        }
        if (i > 0 && v[0] < l->calls[i - 1].ts_ns) {
            bad_key(r, "calls", "not in start order");
            return;
        }
        l->calls[l->ncalls++] = (tl_lane_call){ v[0], v[1], (uint32_t)v[3], (uint8_t)v[2] };
    }
}

/* An array of distinct strings, read into an empty table so that each keeps
 * its index; at most max. */
static void read_strtab(reader *r, const json_t *arr, tl_strtab *names, size_t max, const char *what)
{
    json_t *x;
    size_t i;
    if (!json_is_array(arr) || json_array_size(arr) > max) {
        bad_key(r, what, "expected an array of at most the limit of names");
        return;
    }
    json_array_foreach(arr, i, x)
    {
        if (!json_is_string(x)) {
            bad_key(r, what, "expected strings");
            return;
        }
        const char *str = json_string_value(x);
        uint32_t id = tl_strtab_intern(names, str, strlen(str));
        if (id == UINT32_MAX) {
            bad(r, "out of memory");
            return;
        }
        if (id != i) {
            bad_key(r, what, "a name given twice");
            return;
        }
    }
}

static void read_series_bins(reader *r, const json_t *bins, void *base)
{
    tl_tseries *t = base;
    json_t *b;
    size_t k;
    if (!json_is_array(bins) || json_array_size(bins) > TL_SERIES_BINS) {
        bad_key(r, "bins", "expected at most TL_SERIES_BINS bins");
        return;
    }
    json_array_foreach(bins, k, b)
    {
        double v[3];
        for (size_t i = 0; i < 3; i++) {
            json_t *x = json_array_get(b, i);
            if (!json_is_null(b) && !json_is_number(x) && !json_is_null(x)) {
                bad_key(r, "bins", "expected [min, mean, max] or null");
                return;
            }
            v[i] = json_is_number(x) ? number(x) : NAN;
        }
        t->bmin[k] = v[0];
        t->bmean[k] = v[1];
        t->bmax[k] = v[2];
    }
    t->nbins = (int)json_array_size(bins);
}

/* A partial is hostile input: node counts within the cap, a parent before
 * its child, no path given twice, times and counts in range, self time
 * within inclusive. */
static void read_calltree(reader *r, const json_t *ct, void *base)
{
    tl_calltree *t = &((tl_session *)base)->calltree;
    json_t *x;
    size_t i;
    if (ct == NULL)
        return;
    if (!json_is_object(ct)) {
        bad_key(r, "calltree", "expected an object");
        return;
    }
    enter(r, "calltree", -1);
    json_t *nodes = json_object_get(ct, "nodes"), *dropped = json_object_get(ct, "dropped");
    if (!json_is_array(nodes) || json_array_size(nodes) > TL_CALLTREE_MAX_NODES) {
        bad_key(r, "nodes", "expected an array of at most TL_CALLTREE_MAX_NODES");
        goto out;
    }
    if (!json_is_integer(dropped) || json_integer_value(dropped) < 0 ||
        json_integer_value(dropped) > TL_PARTIAL_MAX_COUNT) {
        bad_key(r, "dropped", "out of range");
        goto out;
    }
    t->dropped = (uint64_t)json_integer_value(dropped);
    read_strtab(r, json_object_get(ct, "names"), &t->names, TL_CALLTREE_MAX_NODES, "names");
    if (r->bad)
        goto out;
    json_array_foreach(nodes, i, x)
    {
        int64_t v[5];
        for (size_t k = 0; k < 5; k++) {
            json_t *y = json_array_get(x, k);
            v[k] = json_is_integer(y) ? json_integer_value(y) : INT64_MIN;
        }
        if (!json_is_array(x) || json_array_size(x) != 5 || v[0] == INT64_MIN || v[1] == INT64_MIN) {
            bad_key(r, "nodes", "expected [parent, name, inclusive, self, count]");
            goto out;
        }
        int64_t parent = v[0], name = v[1], incl = v[2], self = v[3], count = v[4];
        if (parent < -1 || parent >= (int64_t)i) {
            bad_key(r, "nodes", "a node's parent must come before it");
            goto out;
        }
        if (name < 0 || name >= (int64_t)t->names.n) {
            bad_key(r, "nodes", "a node's name id out of range");
            goto out;
        }
        if (incl < 0 || incl > TL_PARTIAL_MAX_NS || self < 0 || self > TL_PARTIAL_MAX_NS || count < 0 ||
            count > TL_PARTIAL_MAX_COUNT) {
            bad_key(r, "nodes", "a time or count out of range");
            goto out;
        }
        if (self > incl) {
            bad_key(r, "nodes", "self time beyond inclusive time");
            goto out;
        }
        uint32_t k = tl_calltree_child(t, parent < 0 ? TL_CALLTREE_NONE : (uint32_t)parent, (uint32_t)name);
        if (k != (uint32_t)i) {
            bad_key(r, "nodes", k == TL_CALLTREE_NONE ? "out of memory" : "a path given twice");
            goto out;
        }
        t->nodes[k].incl_ns = incl;
        t->nodes[k].self_ns = self;
        t->nodes[k].count = (uint64_t)count;
        if (parent < 0) /* a child takes its parent's kind (tl_calltree_child) */
            t->nodes[k].kind = (uint8_t)tl_calltree_kind_of_label(tl_strtab_get(&t->names, (uint32_t)name));
    }
    /* each node's kind where they differ from the inferred ones (partial_json.c) */
    json_t *kinds = json_object_get(ct, "kinds");
    if (kinds != NULL) {
        if (!json_is_array(kinds) || json_array_size(kinds) != t->n) {
            bad_key(r, "kinds", "expected an array of one kind per node");
            goto out;
        }
        json_array_foreach(kinds, i, x)
        {
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= TL_CTK_COUNT) {
                bad_key(r, "kinds", "a kind out of range");
                goto out;
            }
            t->nodes[i].kind = (uint8_t)json_integer_value(x);
        }
    }
    free(t->slots); /* a session's tree is only read from here on */
    t->slots = NULL;
    t->nslots = 0;
out:
    leave(r);
}

/* "warnings": each problem's text; their kinds follow from the identity,
 * read before (tl_identity_kinds_from_words). */
static void read_problems(reader *r, const json_t *v, void *base)
{
    tl_identity *id = &((tl_session *)base)->id;
    json_t *x;
    size_t i;
    if (!json_is_array(v)) {
        bad_key(r, "warnings", "expected an array");
        return;
    }
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x)) {
            bad_key(r, "warnings", "expected strings");
            return;
        }
        if (tl_problems_add_text(&id->problems, TL_PROBLEM_WARNING, -1, json_string_value(x)) != 0) {
            bad(r, "out of memory");
            return;
        }
    }
    tl_identity_kinds_from_words(id);
}

/* "offsets": [[index into "warnings", byte]], indices ascending. */
static void read_problem_offsets(reader *r, const json_t *v, void *base)
{
    tl_problems *l = &((tl_session *)base)->id.problems;
    json_t *x;
    size_t i;
    int64_t last = -1;
    if (!json_is_array(v)) {
        bad_key(r, "offsets", "expected an array");
        return;
    }
    json_array_foreach(v, i, x)
    {
        json_t *ji = json_array_get(x, 0), *jo = json_array_get(x, 1);
        int64_t at = json_is_integer(ji) ? json_integer_value(ji) : -1;
        int64_t offset = json_is_integer(jo) ? json_integer_value(jo) : -1;
        if (!json_is_array(x) || json_array_size(x) != 2 || at < 0 || offset < 0) {
            bad_key(r, "offsets", "expected [index, byte]");
            return;
        }
        if (at <= last || at >= (int64_t)l->n) {
            bad_key(r, "offsets", "an index out of order or beyond \"warnings\"");
            return;
        }
        l->v[at].offset = offset;
        last = at;
    }
}

/* v: the field's value in the object o (NULL: absent). */
static void read_custom(reader *r, const tl_field *f, const json_t *v, const json_t *o, void *base)
{
    if (v == NULL && f->custom != TL_FC_CALLTREE && f->custom != TL_FC_LANE_CALLS) {
        if (!(f->flags & TL_FF_OPTIONAL))
            bad_key(r, f->key, "expected an array");
        return;
    }
    switch (f->custom) {
    case TL_FC_STAT_HIST:
        read_hist(r, v, base);
        break;
    case TL_FC_STAT_SAMPLES:
        read_samples(r, v, base);
        break;
    case TL_FC_GPU_BY_MASK:
        read_by_mask(r, v, base);
        break;
    case TL_FC_LANE_BUSY:
        read_busy(r, v, base);
        break;
    case TL_FC_LANE_CALLS:
        read_calls(r, v, o, base);
        break;
    case TL_FC_TIMELINE_NAMES:
        read_strtab(r, v, &((tl_timeline *)base)->names, (size_t)TL_TIMELINE_MAX_LANES * TL_LANE_TOP_EVENTS, "names");
        break;
    case TL_FC_SERIES_BINS:
        read_series_bins(r, v, base);
        break;
    case TL_FC_CALLTREE:
        read_calltree(r, v, base);
        break;
    case TL_FC_PROBLEMS:
        read_problems(r, v, base);
        break;
    case TL_FC_PROBLEM_OFFSETS:
        read_problem_offsets(r, v, base);
        break;
    default:
        bad_key(r, f->key, "not a field of this format");
        break;
    }
}

/* ---- what a range cannot say (partial.h's tl_field_check) -------------------------- */

static void check(reader *r, int what, void *base)
{
    if (what == TL_FK_STAT) {
        /* What the statistics' readers divide by and compare must agree. */
        const tl_dur_stat *d = base;
        if (d->count > 0 && (d->min > d->max || !isfinite(d->mean) || d->mean < 0 || !isfinite(d->m2) || d->m2 < 0)) {
            bad_key(r, "stat", "min, max, mean and m2 do not agree");
        } else if (d->count > 0 && (d->mean < (double)d->min - 1.0 - 1e-9 * (double)d->min ||
                                    d->mean > (double)d->max + 1.0 + 1e-9 * (double)d->max)) {
            /* the mean of values in [min, max] lies in [min, max] (1 ns of rounding allowed) */
            char msg[160];
            snprintf(msg, sizeof msg, "mean %.0f ns lies outside [min, max] = [%" PRIu64 ", %" PRIu64 "] ns", d->mean,
                     (uint64_t)d->min, (uint64_t)d->max);
            bad_key(r, "stat", msg);
        }
    } else if (what == TL_FK_TIMELINE) {
        const tl_timeline *t = base;
        for (size_t k = 0; k < t->nlanes; k++)
            for (uint32_t i = 0; i < t->lanes[k].ncalls; i++)
                if (t->lanes[k].calls[i].name >= t->names.n) {
                    bad_key(r, "calls", "a call's name id out of range of the timeline's names");
                    return;
                }
    } else if (what == TL_FK_DIFFUSION) {
        const tl_sdiffusion *f = base;
        if (!(f->frames >= 0) && f->sized > 0)
            bad_key(r, "frames", "expected a number >= 0");
    } else if (what == TL_FK_SESSION) {
        const tl_session *s = base;
        for (size_t i = 0; i < s->ncolls; i++)
            if (s->colls[i].kernel >= s->nkernels) {
                bad_key(r, "collectives", "kernel index out of range");
                return;
            }
        /* one per step, in step order, adding up to the step's time */
        if (s->nstepcats != 0 && s->nstepcats != s->nsteps) {
            bad_key(r, "step_categories", "not one per step");
            return;
        }
        for (size_t i = 0; i < s->nstepcats; i++) {
            double sum = 0;
            for (int c = 0; c < TL_SC_COUNT; c++)
                sum += (double)s->stepcats[i].ns[c];
            if (s->stepcats[i].number != s->steps[i].number || sum > (double)s->steps[i].dur_ns + 0.5) {
                bad_key(r, "step_categories", "not the steps' numbers, or more time than the step's");
                return;
            }
        }
        /* by instance (waits.c searches them); one past the instances is never looked up */
        for (size_t i = 1; i < s->ncoll_windows; i++)
            if (s->coll_windows[i].number <= s->coll_windows[i - 1].number) {
                bad_key(r, "coll_windows", "not in instance order");
                return;
            }
    }
}

/* ---- by the table ------------------------------------------------------------------ */

static void read_fields(reader *r, const tl_fields *t, const json_t *v, void *base);

/* The absent value of an optional field. */
static void set_default(const tl_field *f, void *base)
{
    switch (f->type) {
    case TL_F_INT:
    case TL_F_ENUM:
    case TL_F_TS_NULL:
        tl_field_set_int(base, f, f->def);
        break;
    case TL_F_NUM:
        *(double *)((char *)base + f->offset) = NAN;
        break;
    case TL_F_STR_BUF:
        ((char *)base + f->offset)[0] = '\0';
        break;
    default:
        break; /* pointers NULL, counts 0, objects as initialized */
    }
}

static void read_int(reader *r, const tl_fields *t, const tl_field *f, const json_t *v, void *base)
{
    if (!json_is_integer(v)) {
        bad_key(r, f->key, "expected an integer");
        return;
    }
    int64_t x = json_integer_value(v);
    int64_t lo = f->lo_key ? earlier(t, base, f->lo_key) : f->lo, hi = f->hi_key ? earlier(t, base, f->hi_key) : f->hi;
    if (x < lo || x > hi) {
        bad_key(r, f->key, "out of range");
        return;
    }
    tl_field_set_int(base, f, x);
}

static void read_enum(reader *r, const tl_field *f, const json_t *v, void *base)
{
    if (json_is_string(v)) {
        for (int64_t x = f->lo; x <= f->hi; x++) {
            const char *name = f->name((int)x);
            if (name != NULL && strcmp(name, json_string_value(v)) == 0) {
                tl_field_set_int(base, f, x);
                return;
            }
        }
        bad_key(r, f->key, "not one of its names");
    } else if (json_is_integer(v) && (f->flags & TL_FF_ENUM_INT)) {
        /* a partial of an older tally: the enum's value */
        int64_t x = json_integer_value(v);
        if (x < f->lo || x > f->hi)
            bad_key(r, f->key, "out of range");
        else
            tl_field_set_int(base, f, x);
    } else {
        bad_key(r, f->key, "expected one of its names");
    }
}

static void read_strings(reader *r, const tl_field *f, const json_t *v, void *base)
{
    json_t *x;
    size_t i, n = json_array_size(v);
    if (!json_is_array(v) || (f->max && n > f->max)) {
        char what[64] = "expected an array";
        if (f->max)
            snprintf(what, sizeof what, "expected an array of at most %zu strings", f->max);
        bad_key(r, f->key, what);
        return;
    }
    char **s = calloc(n + 1, sizeof *s);
    tl_field_set_ptr(base, f->offset, s);
    if (s == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x)) {
            bad_key(r, f->key, "expected strings");
            return;
        }
        if ((s[*count_of(base, f)] = dup_or_bad(r, json_string_value(x))) == NULL)
            return;
        (*count_of(base, f))++;
    }
}

static void read_array(reader *r, const tl_fields *t, const tl_field *f, const json_t *v, void *base)
{
    json_t *x;
    size_t i, n = json_array_size(v);
    if (!json_is_array(v)) {
        bad_key(r, f->key, "expected an array");
        return;
    }
    if ((f->max && n > f->max) || (f->max_key && (int64_t)n > earlier(t, base, f->max_key))) {
        char what[96];
        if (f->max && f->max_key)
            snprintf(what, sizeof what, "more than %zu (the limit) or %s", f->max, f->max_key);
        else if (f->max)
            snprintf(what, sizeof what, "more than %zu (the limit)", f->max);
        else
            snprintf(what, sizeof what, "more than %s", f->max_key);
        bad_key(r, f->key, what);
        return;
    }
    char *elems = calloc(n + 1, f->sub->size);
    tl_field_set_ptr(base, f->offset, elems);
    if (elems == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(v, i, x)
    {
        /* counted before it is read: what it holds is freed with the session if it is bad */
        (*count_of(base, f))++;
        enter(r, f->key, (long)i);
        read_fields(r, f->sub, x, elems + i * f->sub->size);
        leave(r);
        if (r->bad)
            return;
    }
}

/* v: the field's value (NULL: absent); o: the object or tuple holding it. */
static void read_field(reader *r, const tl_fields *t, const tl_field *f, const json_t *v, const json_t *o, void *base)
{
    if (f->type == TL_F_CUSTOM) {
        read_custom(r, f, v, o, base);
        return;
    }
    if (v == NULL && (f->flags & TL_FF_OPTIONAL)) {
        set_default(f, base);
        return;
    }
    char *p = (char *)base + f->offset;
    switch (f->type) {
    case TL_F_STR:
        if (!json_is_string(v))
            bad_key(r, f->key, "expected a string");
        else
            tl_field_set_ptr(base, f->offset, dup_or_bad(r, json_string_value(v)));
        break;
    case TL_F_STR_NULL:
        if (json_is_string(v))
            tl_field_set_ptr(base, f->offset, dup_or_bad(r, json_string_value(v)));
        else if (!json_is_null(v))
            bad_key(r, f->key, "expected a string or null");
        break;
    case TL_F_STR_BUF:
        if (!json_is_string(v))
            bad_key(r, f->key, "expected a string");
        else
            snprintf(p, f->size, "%s", json_string_value(v));
        break;
    case TL_F_INT:
        read_int(r, t, f, v, base);
        break;
    case TL_F_TS:
    case TL_F_TS_NULL:
        if (f->type == TL_F_TS_NULL && json_is_null(v))
            tl_field_set_int(base, f, INT64_MIN);
        else if (!json_is_integer(v))
            bad_key(r, f->key, f->type == TL_F_TS ? "expected an integer" : "expected an integer or null");
        else if (!ts_ok(json_integer_value(v)))
            bad_key(r, f->key, "timestamp out of range");
        else
            tl_field_set_int(base, f, json_integer_value(v));
        break;
    case TL_F_NUM:
        if (json_is_null(v))
            *(double *)p = NAN;
        else if (json_is_number(v))
            *(double *)p = number(v);
        else
            bad_key(r, f->key, "expected a number or null");
        break;
    case TL_F_ENUM:
        read_enum(r, f, v, base);
        break;
    case TL_F_STRINGS:
        read_strings(r, f, v, base);
        break;
    case TL_F_OBJECT:
        if (json_is_null(v) && (f->flags & TL_FF_NULLABLE))
            break;
        if (!json_is_object(v)) {
            bad_key(r, f->key, (f->flags & TL_FF_NULLABLE) ? "expected an object or null" : "expected an object");
            break;
        }
        enter(r, f->key, -1);
        read_fields(r, f->sub, v, p);
        leave(r);
        break;
    case TL_F_ARRAY:
        read_array(r, t, f, v, base);
        break;
    default:
        bad_key(r, f->key, "not a field of this format");
        break;
    }
}

/* The struct at base from v: an object of t's fields, or an array of them
 * in order when t is a tuple (optional ones only at its end). */
static void read_fields(reader *r, const tl_fields *t, const json_t *v, void *base)
{
    if (t->tuple ? !json_is_array(v) : !json_is_object(v)) {
        char what[96];
        snprintf(what, sizeof what, "expected %s %s", t->tuple ? "an array, a" : "an object, a", t->what);
        bad(r, what);
        return;
    }
    for (size_t i = 0; i < t->n && !r->bad; i++) {
        const tl_field *f = &t->f[i];
        json_t *x = t->tuple ? json_array_get(v, i) : json_object_get(v, f->key);
        read_field(r, t, f, x, v, base);
    }
    if (!r->bad && t->check != TL_FK_NONE)
        check(r, t->check, base);
}

/* ---- the document ------------------------------------------------------------------ */

void tl_partial_init(tl_partial *p)
{
    memset(p, 0, sizeof *p);
}

void tl_partial_release(tl_partial *p)
{
    for (size_t i = 0; i < p->nsessions; i++)
        tl_session_release(&p->sessions[i]);
    free(p->sessions);
    free(p->kernel_classes);
    memset(p, 0, sizeof *p);
}

int tl_partial_is_document(const json_t *root)
{
    const json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt))
        return 0;
    const char *f = json_string_value(fmt);
    return strcmp(f, "tally-partial") == 0 ||
           (strcmp(f, "tally-aggregate") == 0 && json_is_array(json_object_get(root, "sessions")));
}

int tl_partial_read_json(tl_partial *p, const json_t *root, char *err, size_t errlen)
{
    reader r = { .err = err, .errlen = errlen };
    if (!tl_partial_is_document(root)) {
        const json_t *fmt = json_object_get(root, "format");
        if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-aggregate") == 0)
            snprintf(err, errlen,
                     "an aggregate without its sessions (written by an older tally); "
                     "make it again, or pass the partials");
        else
            snprintf(err, errlen,
                     "not a partial aggregate (no \"format\": \"tally-partial\"); "
                     "write one with tally aggregate --partial");
        return -1;
    }
    json_t *ver = json_object_get(root, "version");
    int partial = strcmp(json_string_value(json_object_get(root, "format")), "tally-partial") == 0;
    int newest = partial ? TL_PARTIAL_VERSION : 1;
    if (!json_is_integer(ver) || json_integer_value(ver) < 1 || json_integer_value(ver) > newest) {
        snprintf(err, errlen, "%s version %lld is not supported (this tally reads versions 1 to %d)",
                 partial ? "partial aggregate" : "aggregate",
                 json_is_integer(ver) ? (long long)json_integer_value(ver) : -1LL, newest);
        return -1;
    }
    /* An aggregate of more ranks than it keeps in full (render.h,
     * TL_JSON_RANKS_FULL) holds the sessions of some ranks only: read as the
     * run, its numbers would be those of the picked ranks. */
    json_t *left = json_object_get(json_object_get(root, "detail"), "sessions_left_out");
    if (!partial && json_is_integer(left) && json_integer_value(left) != 0) {
        json_t *full = json_object_get(json_object_get(root, "detail"), "ranks_in_full");
        snprintf(err, errlen,
                 "a bounded aggregate (%lld ranks in full, %lld sessions of the other ranks left out); it "
                 "cannot stand for the run. Make it with --json-all, or pass the partials "
                 "(tally aggregate --partial)",
                 json_is_integer(full) ? (long long)json_integer_value(full) : -1LL,
                 (long long)json_integer_value(left));
        return -1;
    }
    json_t *opt = json_object_get(root, "options"), *sessions = json_object_get(root, "sessions"), *x;
    if (opt != NULL) {
        read_fields(&r, &tl_partial_options_fields, opt, p);
        if (r.bad) {
            size_t len = strlen(err);
            snprintf(err + len, errlen - len, " (in options)");
            return -1;
        }
        p->has_options = 1;
    }
    if (!json_is_array(sessions)) {
        snprintf(err, errlen, "\"sessions\": expected an array");
        return -1;
    }
    if ((p->sessions = calloc(json_array_size(sessions) + 1, sizeof *p->sessions)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t i;
    json_array_foreach(sessions, i, x)
    {
        tl_session *s = &p->sessions[p->nsessions++];
        tl_session_init(s);
        read_fields(&r, &tl_partial_session_fields, x, s);
        if (r.bad) {
            char where[200];
            snprintf(where, sizeof where, " (session %zu%s%s)", i, r.where[0] ? ", in " : "", r.where);
            size_t len = strlen(err);
            if (len + strlen(where) < errlen)
                memcpy(err + len, where, strlen(where) + 1);
            tl_partial_release(p);
            return -1;
        }
        tl_session_compact(s);
    }
    return 0;
}

/* Read a loaded document (NULL: it did not load, je says why) and let go of it. */
static int read_loaded(tl_partial *p, json_t *root, const json_error_t *je, char *err, size_t errlen)
{
    if (root == NULL) {
        snprintf(err, errlen, "not valid JSON at line %d, column %d: %s", je->line, je->column, je->text);
        return -1;
    }
    int rc = tl_partial_read_json(p, root, err, errlen);
    json_decref(root);
    return rc;
}

/* A UTF-8 byte order mark opens some files that editors and Windows tools
 * wrote; JSON has no place for it, and ingest passes over it: so does this. */
#define BOM "\xef\xbb\xbf"

int tl_partial_read_buffer(tl_partial *p, const char *buf, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    if (len >= 3 && memcmp(buf, BOM, 3) == 0) {
        buf += 3;
        len -= 3;
    }
    return read_loaded(p, json_loadb(buf, len, 0, &je), &je, err, errlen);
}

int tl_partial_read(tl_partial *p, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    FILE *f = fopen(path, "rb");
    if (f == NULL) /* jansson's message names the file and the reason */
        return read_loaded(p, json_load_file(path, 0, &je), &je, err, errlen);
    char head[3];
    if (fread(head, 1, 3, f) != 3 || memcmp(head, BOM, 3) != 0)
        rewind(f);
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    return read_loaded(p, root, &je, err, errlen);
}
