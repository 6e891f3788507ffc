/*
 * partial_json.c - the partial aggregate as JSON (schema/tally-partial.schema.json):
 * the analysis options and every session result, written so that reading it
 * back gives the same sessions bit for bit (integers as integers, doubles in
 * their shortest round-trip form, histograms as sparse buckets).
 *
 * The one idea: this writer does not know the fields. It walks the tables of
 * ingest/partial_fields.c, which ingest's reader (read_partial.c) walks too,
 * so a field is written and read by one description; the few nested arrays
 * a table does not say (tl_field_custom) have a dedicated writer here and
 * their reader there, side by side with the same id. Enums are written by
 * name.
 */
#include "render.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the dedicated writers (partial.h's tl_field_custom) --------------------------- */

static void write_hist(tl_json *j, const tl_dur_stat *d)
{
    tl_json_array_begin(j);
    for (unsigned i = 0; i < d->hist.n; i++) {
        if (d->hist.counts[i] == 0)
            continue;
        tl_json_array_begin(j);
        tl_json_uint(j, d->hist.first + i);
        tl_json_uint(j, d->hist.counts[i]);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
}

static void write_samples(tl_json *j, const tl_dur_stat *d)
{
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < d->nsamples; i++)
        tl_json_uint(j, d->samples[i]);
    tl_json_array_end(j);
}

static void write_by_mask(tl_json *j, const tl_gpu_breakdown *g)
{
    tl_json_array_begin(j);
    for (int m = 0; m < 8; m++)
        tl_json_int(j, g->by_mask[m]);
    tl_json_array_end(j);
}

/* A kind that is all zero is written as []. Floats print in a form that
 * reads back to the same float. */
static void write_busy(tl_json *j, const tl_lane *l)
{
    tl_json_array_begin(j);
    for (int kt = 0; kt < TL_KT_COUNT; kt++) {
        int any = 0;
        for (int i = 0; l->busy[kt] && i < TL_TIMELINE_BINS && !any; i++)
            any = l->busy[kt][i] != 0.0f;
        tl_json_array_begin(j);
        for (int i = 0; any && i < TL_TIMELINE_BINS; i++)
            tl_json_double(j, (double)l->busy[kt][i]);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
}

/* "calls": [[ts, dur, row, name id]] and "calls_left"; only when there are any. */
static void write_calls(tl_json *j, const tl_lane *l)
{
    if (l->ncalls == 0 && l->calls_left == 0)
        return;
    tl_json_key(j, "calls");
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < l->ncalls; i++) {
        tl_json_array_begin(j);
        tl_json_int(j, l->calls[i].ts_ns);
        tl_json_int(j, l->calls[i].dur_ns);
        tl_json_int(j, l->calls[i].row);
        tl_json_uint(j, l->calls[i].name);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    tl_json_kv_uint(j, "calls_left", l->calls_left);
}

static void write_strtab(tl_json *j, const tl_strtab *names)
{
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < names->n; i++)
        tl_json_string(j, tl_strtab_get(names, i));
    tl_json_array_end(j);
}

/* [[min, mean, max] | null]: null for a bin without samples */
static void write_series_bins(tl_json *j, const tl_tseries *t)
{
    tl_json_array_begin(j);
    for (int b = 0; b < t->nbins; b++) {
        if (isnan(t->bmean[b])) {
            tl_json_null(j);
            continue;
        }
        tl_json_array_begin(j);
        tl_json_double(j, t->bmin[b]);
        tl_json_double(j, t->bmean[b]);
        tl_json_double(j, t->bmax[b]);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
}

/* Whether some node's kind is not the one a reader infers (calltree.h: a
 * root's from its name, any other node's its parent's): then "kinds" says
 * each node's. A tree of one kind per root (every tree before the kinds
 * nested, and Python stacks) writes no "kinds", as it always has. */
static int kinds_differ(const tl_calltree *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        const tl_cnode *c = &t->nodes[i];
        int inferred = c->parent == TL_CALLTREE_NONE ? tl_calltree_kind_of_label(tl_calltree_name(t, i))
                                                     : t->nodes[c->parent].kind;
        if (c->kind != inferred)
            return 1;
    }
    return 0;
}

/* {"dropped": N, "names": [...], "nodes": [[parent | -1, name id, incl, self,
 * count]], "kinds": [kind per node] (only when kinds_differ)}, nodes in
 * their order (a parent before its children); only when the session has a
 * tree. */
static void write_calltree(tl_json *j, const tl_calltree *t)
{
    if (t->n == 0)
        return;
    tl_json_key(j, "calltree");
    tl_json_object_begin(j);
    tl_json_kv_uint(j, "dropped", t->dropped);
    tl_json_key(j, "names");
    write_strtab(j, &t->names);
    tl_json_key(j, "nodes");
    tl_json_array_begin(j);
    for (uint32_t i = 0; i < t->n; i++) {
        const tl_cnode *c = &t->nodes[i];
        tl_json_array_begin(j);
        tl_json_int(j, c->parent == TL_CALLTREE_NONE ? -1 : (int64_t)c->parent);
        tl_json_uint(j, c->name);
        tl_json_int(j, c->incl_ns);
        tl_json_int(j, c->self_ns);
        tl_json_uint(j, c->count);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
    if (kinds_differ(t)) {
        tl_json_key(j, "kinds");
        tl_json_array_begin(j);
        for (uint32_t i = 0; i < t->n; i++)
            tl_json_uint(j, t->nodes[i].kind);
        tl_json_array_end(j);
    }
    tl_json_object_end(j);
}

/* "warnings": the text of each problem, in order (what a partial has always said). */
static void write_problems(tl_json *j, const tl_problems *l)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < l->n; i++)
        tl_json_string(j, l->v[i].text);
    tl_json_array_end(j);
}

/* "offsets": [[index, byte]] of the problems that name a byte; only when any.
 * (A problem's kind is not written: it follows from the identity.) */
static void write_problem_offsets(tl_json *j, const tl_problems *l)
{
    size_t any = 0;
    for (size_t i = 0; i < l->n; i++)
        any += l->v[i].offset >= 0;
    if (any == 0)
        return;
    tl_json_key(j, "offsets");
    tl_json_array_begin(j);
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].offset < 0)
            continue;
        tl_json_array_begin(j);
        tl_json_uint(j, i);
        tl_json_int(j, l->v[i].offset);
        tl_json_array_end(j);
    }
    tl_json_array_end(j);
}

/* The field's key and value, or nothing (the writers that decide to write
 * write their key themselves). */
static void write_custom(tl_json *j, const tl_field *f, const void *base)
{
    switch (f->custom) {
    case TL_FC_LANE_CALLS:
        write_calls(j, base);
        return;
    case TL_FC_CALLTREE:
        write_calltree(j, &((const tl_session *)base)->calltree);
        return;
    case TL_FC_PROBLEM_OFFSETS:
        write_problem_offsets(j, &((const tl_session *)base)->id.problems);
        return;
    case TL_FC_TIMELINE_NAMES:
        if (((const tl_timeline *)base)->names.n == 0)
            return;
        break;
    default:
        break;
    }
    tl_json_key(j, f->key);
    switch (f->custom) {
    case TL_FC_STAT_HIST:
        write_hist(j, base);
        break;
    case TL_FC_STAT_SAMPLES:
        write_samples(j, base);
        break;
    case TL_FC_GPU_BY_MASK:
        write_by_mask(j, base);
        break;
    case TL_FC_LANE_BUSY:
        write_busy(j, base);
        break;
    case TL_FC_TIMELINE_NAMES:
        write_strtab(j, &((const tl_timeline *)base)->names);
        break;
    case TL_FC_SERIES_BINS:
        write_series_bins(j, base);
        break;
    case TL_FC_PROBLEMS:
        write_problems(j, &((const tl_session *)base)->id.problems);
        break;
    default:
        tl_json_null(j);
        break;
    }
}

/* ---- by the table ------------------------------------------------------------------ */

static const void *member_ptr(const void *base, size_t offset)
{
    const void *v;
    memcpy(&v, (const char *)base + offset, sizeof v);
    return v;
}

static size_t member_count(const void *base, const tl_field *f)
{
    return *(const size_t *)((const char *)base + f->count);
}

static void write_fields(tl_json *j, const tl_fields *t, const void *base);

/* An object whose TL_FF_PRESENCE fields are all 0 has nothing to say: null. */
static int absent(const tl_fields *t, const void *base)
{
    int marked = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->f[i].flags & TL_FF_PRESENCE) {
            marked = 1;
            if (tl_field_int(base, &t->f[i]) != 0)
                return 0;
        }
    return marked;
}

static void write_value(tl_json *j, const tl_field *f, const void *base)
{
    const char *p = (const char *)base + f->offset;
    switch (f->type) {
    case TL_F_STR:
    case TL_F_STR_NULL:
        tl_json_string(j, member_ptr(base, f->offset));
        break;
    case TL_F_STR_BUF:
        tl_json_string(j, p);
        break;
    case TL_F_INT:
    case TL_F_TS:
        if (f->ctype == TL_C_U64)
            tl_json_uint(j, *(const uint64_t *)p);
        else
            tl_json_int(j, tl_field_int(base, f));
        break;
    case TL_F_TS_NULL:
        tl_field_int(base, f) == INT64_MIN ? tl_json_null(j) : tl_json_int(j, tl_field_int(base, f));
        break;
    case TL_F_NUM: {
        double v = *(const double *)p;
        (f->flags & TL_FF_POSITIVE) && !(v > 0) ? tl_json_null(j) : tl_json_double(j, v);
        break;
    }
    case TL_F_ENUM: {
        const char *name = f->name((int)tl_field_int(base, f));
        name ? tl_json_string(j, name) : tl_json_int(j, tl_field_int(base, f));
        break;
    }
    case TL_F_STRINGS: {
        char *const *s = member_ptr(base, f->offset);
        tl_json_array_begin(j);
        for (size_t i = 0; i < member_count(base, f); i++)
            tl_json_string(j, s[i]);
        tl_json_array_end(j);
        break;
    }
    case TL_F_OBJECT:
        absent(f->sub, p) ? tl_json_null(j) : write_fields(j, f->sub, p);
        break;
    case TL_F_ARRAY: {
        const char *elems = member_ptr(base, f->offset);
        tl_json_array_begin(j);
        for (size_t i = 0; i < member_count(base, f); i++)
            write_fields(j, f->sub, elems + i * f->sub->size);
        tl_json_array_end(j);
        break;
    }
    default:
        tl_json_null(j);
        break;
    }
}

/* The struct at base: an object of t's fields, or an array of their values
 * when t is a tuple. */
static void write_fields(tl_json *j, const tl_fields *t, const void *base)
{
    t->tuple ? tl_json_array_begin(j) : tl_json_object_begin(j);
    for (size_t i = 0; i < t->n; i++) {
        const tl_field *f = &t->f[i];
        if (f->type == TL_F_CUSTOM) {
            write_custom(j, f, base);
            continue;
        }
        if ((f->flags & TL_FF_OMIT_EMPTY) && !t->tuple &&
            ((f->type == TL_F_ARRAY && member_count(base, f) == 0) ||
             (f->type == TL_F_STR_NULL && member_ptr(base, f->offset) == NULL) ||
             (f->type == TL_F_INT && tl_field_int(base, f) == f->def) ||
             (f->type == TL_F_NUM && isnan(*(const double *)((const char *)base + f->offset)))))
            continue;
        if (!t->tuple)
            tl_json_key(j, f->key);
        write_value(j, f, base);
    }
    t->tuple ? tl_json_array_end(j) : tl_json_object_end(j);
}

/* ---- the document ------------------------------------------------------------------ */

void tl_partial_write_options(tl_json *j, const tl_analyze_options *o)
{
    tl_partial view = tl_partial_options_of(o);
    write_fields(j, &tl_partial_options_fields, &view);
}

/* One session's object, its bulk held while it is written (spill.h). */
static void write_session(tl_json *j, const tl_session *s)
{
    tl_spill_hold(s);
    write_fields(j, &tl_partial_session_fields, s);
    tl_spill_drop(s);
}

/* ---- several sessions at once ---------------------------------------------------
 * Writing the sessions is most of an aggregate's JSON (at 512 ranks, ~90 % of it, and the
 * last output to finish), and each session's text depends on that session alone: threads
 * write whole sessions into buffers of their own, a round of them at a time, and the caller
 * appends them in order. The bytes are those of one thread (the writer is compact: an
 * element's text does not depend on its depth). */

/* Sessions a round takes per thread: enough that the round's last session leaves the other
 * threads little to wait for; few enough that the round's texts stay small. */
#define SESSIONS_PER_THREAD 4
/* Threads at most: past a few, the caller's appending (a copy of every text, and the write) is
 * what bounds the output, and a round holds all its texts: at most 8 x 4 of them (~45 MB of
 * text at ~1.4 MB a large rank's session), beside the spill budget (spill.h). */
#define WRITE_THREADS_MAX 8

/* A session's text, written by a thread of the round. */
typedef struct text_buf {
    tl_json_membuf m;
    int failed;
} text_buf;

typedef struct write_round {
    const tl_session *s;
    const size_t *which; /* the round's sessions, by index into s */
    text_buf *text;      /* their texts, in the round's order */
    size_t n;
    atomic_size_t next;
} write_round;

static void *round_worker(void *arg)
{
    write_round *r = arg;
    tl_json *j = malloc(sizeof *j);
    for (size_t i; (i = atomic_fetch_add(&r->next, 1)) < r->n;) {
        text_buf *t = &r->text[i];
        if (j == NULL) {
            t->failed = 1;
            continue;
        }
        tl_json_init(j, tl_json_mem_sink, &t->m);
        write_session(j, &r->s[r->which[i]]);
        t->failed = tl_json_finish(j) != 0;
    }
    free(j);
    return NULL;
}

void tl_partial_write_sessions(tl_json *j, const tl_session *s, size_t n, const unsigned char *keep, int threads)
{
    tl_json_array_begin(j);
    if (threads > WRITE_THREADS_MAX)
        threads = WRITE_THREADS_MAX;
    const size_t texts = threads > 1 ? (size_t)threads * SESSIONS_PER_THREAD : 0;
    size_t per_round = texts;
    size_t *which = per_round ? malloc(per_round * sizeof *which) : NULL;
    text_buf *text = per_round ? calloc(per_round, sizeof *text) : NULL;
    pthread_t *t = per_round ? malloc((size_t)threads * sizeof *t) : NULL;
    if (which == NULL || text == NULL || t == NULL) /* one thread (or out of memory: the same bytes) */
        per_round = 0;
    for (size_t i = 0; i < n;) {
        if (per_round == 0) {
            if (keep == NULL || keep[i])
                write_session(j, &s[i]);
            i++;
            continue;
        }
        write_round r = { .s = s, .which = which, .text = text };
        for (; i < n && r.n < per_round; i++)
            if (keep == NULL || keep[i])
                which[r.n++] = i;
        atomic_init(&r.next, 0);
        int started = 0;
        for (int k = 1; k < threads && (size_t)k < r.n; k++)
            if (pthread_create(&t[started], NULL, round_worker, &r) == 0)
                started++;
        round_worker(&r);
        for (int k = 0; k < started; k++)
            pthread_join(t[k], NULL);
        for (size_t k = 0; k < r.n; k++) {
            if (text[k].failed) /* out of memory in its buffer: written here instead */
                write_session(j, &s[which[k]]);
            else
                tl_json_raw_element(j, text[k].m.data, text[k].m.len);
            text[k].m.len = 0;
            text[k].failed = 0;
        }
    }
    for (size_t k = 0; text && k < texts; k++)
        free(text[k].m.data);
    free(text);
    free(which);
    free(t);
    tl_json_array_end(j);
}

void tl_partial_write(tl_json *j, const tl_aggregate *a, const char *producer)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-partial");
    tl_json_kv_int(j, "version", TL_PARTIAL_VERSION);
    tl_json_kv_string(j, "producer", producer);
    tl_json_key(j, "options");
    tl_partial_write_options(j, &a->opt);
    tl_json_key(j, "sessions");
    tl_partial_write_sessions(j, a->sessions, a->nsessions, NULL, a->opt.output_jobs);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
}
