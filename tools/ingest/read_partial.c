/*
 * read_partial.c - the reader of partial aggregates (partial.h): a partial's
 * sessions into session results, every number checked against the range
 * the analysis can hold before it is believed, so a hostile partial gives an
 * error, never an overflow later (a span of 2^63-1 added to another, an
 * idle time of -2^63 negated). The writer is render's (aggregate_json.c).
 */
#define _GNU_SOURCE
#include "partial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    char *err;
    size_t errlen;
    int bad;
} reader;

static void bad(reader *r, const char *what)
{
    if (!r->bad)
        snprintf(r->err, r->errlen, "%s", what);
    r->bad = 1;
}

static void bad_key(reader *r, const char *key, const char *what)
{
    char msg[160];
    snprintf(msg, sizeof msg, "\"%s\": %s", key, what);
    bad(r, msg);
}

static int64_t get_int(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) {
        bad_key(r, key, "expected an integer");
        return 0;
    }
    return json_integer_value(v);
}

/* An integer in [lo, hi]; out of range is an error and reads as lo. */
static int64_t get_range(reader *r, const json_t *o, const char *key, int64_t lo, int64_t hi)
{
    int64_t v = get_int(r, o, key);
    if (v < lo || v > hi) {
        bad_key(r, key, "out of range");
        return lo;
    }
    return v;
}

static int64_t get_ns(reader *r, const json_t *o, const char *key)
{
    return get_range(r, o, key, 0, TL_PARTIAL_MAX_NS);
}

static int ts_ok(int64_t v)
{
    return v == INT64_MIN || v == INT64_MAX || (v >= -TL_PARTIAL_MAX_TS && v <= TL_PARTIAL_MAX_TS);
}

static int64_t get_ts(reader *r, const json_t *o, const char *key)
{
    int64_t v = get_int(r, o, key);
    if (!ts_ok(v)) {
        bad_key(r, key, "timestamp out of range");
        return INT64_MIN;
    }
    return v;
}

static double get_num(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_null(v))
        return NAN;
    if (!json_is_number(v)) {
        bad_key(r, key, "expected a number or null");
        return NAN;
    }
    return json_number_value(v);
}

static char *get_str(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) {
        bad_key(r, key, "expected a string");
        return strdup("");
    }
    return strdup(json_string_value(v));
}

static json_t *get_array(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_array(v)) {
        bad_key(r, key, "expected an array");
        return NULL;
    }
    return v;
}

/* A field added after version 1's first release: absent in older partials. */
/* Fields added after version 1's first release (self time, partial steps,
 * stream busy time, blocking calls, graph launches): absent in older
 * partials, then def; present, they are checked like the others. */
static int64_t opt_range(reader *r, const json_t *o, const char *key, int64_t def, int64_t lo, int64_t hi)
{
    return json_object_get(o, key) == NULL ? def : get_range(r, o, key, lo, hi);
}

static int64_t item_range(reader *r, json_t *arr, size_t i, int64_t lo, int64_t hi);

static int64_t opt_item_range(reader *r, json_t *arr, size_t i, int64_t def, int64_t lo, int64_t hi)
{
    return i >= json_array_size(arr) ? def : item_range(r, arr, i, lo, hi);
}

static int64_t item_int(reader *r, json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    if (!json_is_integer(v)) {
        bad(r, "expected an integer in an array");
        return 0;
    }
    return json_integer_value(v);
}

static int64_t item_range(reader *r, json_t *arr, size_t i, int64_t lo, int64_t hi)
{
    int64_t v = item_int(r, arr, i);
    if (v < lo || v > hi) {
        bad(r, "an array item out of range");
        return lo;
    }
    return v;
}

static int64_t item_ts(reader *r, json_t *arr, size_t i)
{
    int64_t v = item_int(r, arr, i);
    if (!ts_ok(v)) {
        bad(r, "a timestamp out of range in an array");
        return INT64_MIN;
    }
    return v;
}

static void read_stat(reader *r, const json_t *o, tl_dur_stat *d)
{
    memset(d, 0, sizeof *d);
    if (!json_is_object(o)) {
        bad(r, "\"stat\": expected an object");
        return;
    }
    d->count = (uint64_t)get_range(r, o, "count", 0, TL_PARTIAL_MAX_COUNT);
    d->total = (uint64_t)get_ns(r, o, "total");
    d->min = (uint64_t)get_ns(r, o, "min");
    d->max = (uint64_t)get_ns(r, o, "max");
    d->mean = get_num(r, o, "mean");
    d->m2 = get_num(r, o, "m2");
    d->samples_dropped = (uint64_t)get_range(r, o, "samples_dropped", 0, TL_PARTIAL_MAX_COUNT);
    /* What the statistics' readers divide by and compare must agree. */
    if (d->count > 0 && (d->min > d->max || !isfinite(d->mean) || d->mean < 0 || !isfinite(d->m2) || d->m2 < 0))
        bad(r, "\"stat\": min, max, mean and m2 do not agree");
    json_t *h = get_array(r, o, "hist"), *x;
    size_t i;
    uint64_t in_hist = 0;
    json_array_foreach(h, i, x) {
        int64_t b = item_int(r, x, 0), c = item_int(r, x, 1);
        if (b < 0 || b >= (int64_t)TL_HIST_PAGES * TL_HIST_SUB || c < 0 || c > UINT32_MAX) {
            bad(r, "\"hist\": bucket out of range");
            return;
        }
        unsigned page = (unsigned)b / TL_HIST_SUB, slot = (unsigned)b % TL_HIST_SUB;
        if (d->hist.pages[page] == NULL && (d->hist.pages[page] = calloc(TL_HIST_SUB, sizeof(uint32_t))) == NULL)
            return;
        d->hist.pages[page][slot] = (uint32_t)c;
        in_hist += (uint64_t)c;
    }
    if (in_hist > d->count) {
        bad(r, "\"hist\": more values than \"count\"");
        return;
    }
    json_t *s = get_array(r, o, "samples");
    size_t n = s ? json_array_size(s) : 0;
    if (n > TL_PROFILE_MAX_SAMPLES) {
        bad(r, "\"samples\": more than the limit");
        return;
    }
    if (n) {
        d->samples = malloc(n * sizeof *d->samples);
        if (d->samples == NULL)
            return;
        d->samples_cap = (uint32_t)n;
        for (size_t k = 0; k < n; k++)
            d->samples[d->nsamples++] = (uint64_t)item_range(r, s, k, 0, TL_PARTIAL_MAX_NS);
    }
}

/* "names": an array of distinct strings, read into an empty table so that
 * each keeps its index; at most max. */
static void read_names(reader *r, const json_t *arr, tl_strtab *names, size_t max, const char *what)
{
    json_t *x;
    size_t i;
    if (!json_is_array(arr) || json_array_size(arr) > max) {
        bad_key(r, what, "expected an array of at most the limit of names");
        return;
    }
    json_array_foreach(arr, i, x) {
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

/* "calls" and "calls_left" of a CPU lane (see write_lane_calls); absent: none. */
static void read_lane_calls(reader *r, const json_t *x, tl_lane *l, const json_t *names)
{
    json_t *calls = json_object_get(x, "calls"), *c;
    size_t i, nnames = json_is_array(names) ? json_array_size(names) : 0;
    if (calls == NULL)
        return;
    if (!json_is_array(calls) || json_array_size(calls) > TL_LANE_TOP_EVENTS) {
        bad_key(r, "calls", "expected an array of at most TL_LANE_TOP_EVENTS calls");
        return;
    }
    l->calls_left = (uint64_t)get_range(r, x, "calls_left", 0, TL_PARTIAL_MAX_COUNT);
    if (json_array_size(calls) == 0)
        return;
    l->calls = calloc(json_array_size(calls), sizeof *l->calls);
    if (l->calls == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(calls, i, c) {
        if (r->bad)
            return;
        tl_lane_call *k = &l->calls[l->ncalls++];
        k->ts_ns = item_range(r, c, 0, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
        k->dur_ns = item_range(r, c, 1, 0, TL_PARTIAL_MAX_NS);
        k->row = (uint8_t)item_range(r, c, 2, 0, TL_LANE_MAX_DEPTH - 1);
        k->name = (uint32_t)item_range(r, c, 3, 0, nnames ? (int64_t)nnames - 1 : -1);
        if (i > 0 && k->ts_ns < l->calls[i - 1].ts_ns)
            bad_key(r, "calls", "not in start order");
    }
}

static void read_timeline(reader *r, const json_t *o, tl_timeline *t)
{
    if (!json_is_object(o)) {
        bad(r, "\"timeline\": expected an object");
        return;
    }
    t->start_ns = get_range(r, o, "start_ns", -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
    t->end_ns = get_range(r, o, "end_ns", -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
    json_t *lanes = get_array(r, o, "lanes"), *x;
    size_t n = lanes ? json_array_size(lanes) : 0, i;
    if (n > TL_TIMELINE_MAX_LANES) {
        bad(r, "\"lanes\": more than the limit");
        return;
    }
    if (n == 0)
        return;
    t->lanes = calloc(n, sizeof *t->lanes);
    if (t->lanes == NULL)
        return;
    json_t *names = json_object_get(o, "names");
    if (names != NULL)
        read_names(r, names, &t->names, (size_t)TL_TIMELINE_MAX_LANES * TL_LANE_TOP_EVENTS, "names");
    json_array_foreach(lanes, i, x) {
        if (r->bad)
            return;
        tl_lane *l = &t->lanes[t->nlanes++];
        l->kind = (int)get_range(r, x, "kind", TL_LANE_GPU, TL_LANE_CPU);
        l->a = get_int(r, x, "a");
        l->b = get_int(r, x, "b");
        l->label = get_str(r, x, "label");
        json_t *busy = get_array(r, x, "busy");
        for (int kt = 0; busy && kt < TL_KT_COUNT; kt++) {
            json_t *bins = json_array_get(busy, (size_t)kt);
            size_t nb = json_is_array(bins) ? json_array_size(bins) : 0;
            if (nb != 0 && nb != TL_TIMELINE_BINS) {
                bad(r, "\"busy\": expected 0 or TL_TIMELINE_BINS values");
                return;
            }
            for (size_t b = 0; b < nb; b++) {
                json_t *v = json_array_get(bins, b);
                double f = json_is_number(v) ? json_number_value(v) : 0.0;
                /* a fraction of a bin; anything else would not be a float */
                if (!(f >= 0.0 && f <= 1.0)) {
                    bad(r, "\"busy\": a fraction out of [0, 1]");
                    return;
                }
                l->busy[kt][b] = (float)f;
            }
        }
        if (l->kind == TL_LANE_CPU)
            read_lane_calls(r, x, l, names);
    }
}

/* "calltree" (see write_calltree; absent: no tree). A partial is hostile
 * input: node counts within the cap, a parent before its child, no path
 * given twice, times and counts in range, self time within inclusive. */
static void read_calltree(reader *r, const json_t *o, tl_calltree *t)
{
    json_t *ct = json_object_get(o, "calltree"), *x;
    size_t i;
    if (ct == NULL)
        return;
    if (!json_is_object(ct)) {
        bad_key(r, "calltree", "expected an object");
        return;
    }
    json_t *nodes = get_array(r, ct, "nodes");
    if (nodes == NULL)
        return;
    if (json_array_size(nodes) > TL_CALLTREE_MAX_NODES) {
        bad_key(r, "nodes", "more than TL_CALLTREE_MAX_NODES");
        return;
    }
    t->dropped = (uint64_t)get_range(r, ct, "dropped", 0, TL_PARTIAL_MAX_COUNT);
    read_names(r, json_object_get(ct, "names"), &t->names, TL_CALLTREE_MAX_NODES, "names");
    if (r->bad)
        return;
    json_array_foreach(nodes, i, x) {
        if (!json_is_array(x) || json_array_size(x) != 5) {
            bad_key(r, "nodes", "expected [parent, name, inclusive, self, count]");
            return;
        }
        int64_t parent = item_int(r, x, 0), name = item_int(r, x, 1);
        if (!r->bad && (parent < -1 || parent >= (int64_t)i)) {
            bad_key(r, "nodes", "a node's parent must come before it");
            return;
        }
        if (!r->bad && (name < 0 || name >= (int64_t)t->names.n)) {
            bad_key(r, "nodes", "a node's name id out of range");
            return;
        }
        int64_t incl = item_range(r, x, 2, 0, TL_PARTIAL_MAX_NS), self = item_range(r, x, 3, 0, TL_PARTIAL_MAX_NS);
        int64_t count = item_range(r, x, 4, 0, TL_PARTIAL_MAX_COUNT);
        if (r->bad)
            return;
        if (self > incl) {
            bad_key(r, "nodes", "self time beyond inclusive time");
            return;
        }
        uint32_t k = tl_calltree_child(t, parent < 0 ? TL_CALLTREE_NONE : (uint32_t)parent, (uint32_t)name);
        if (k != (uint32_t)i) {
            bad_key(r, "nodes", k == TL_CALLTREE_NONE ? "out of memory" : "a path given twice");
            return;
        }
        t->nodes[k].incl_ns = incl;
        t->nodes[k].self_ns = self;
        t->nodes[k].count = (uint64_t)count;
    }
    free(t->slots); /* a session's tree is only read from here on */
    t->slots = NULL;
    t->nslots = 0;
}

static char **read_strings(reader *r, const json_t *o, const char *key, size_t *n)
{
    json_t *arr = get_array(r, o, key), *x;
    size_t i;
    *n = 0;
    if (arr == NULL)
        return NULL;
    char **v = calloc(json_array_size(arr) + 1, sizeof *v);
    json_array_foreach(arr, i, x) if (v && json_is_string(x))
        v[(*n)++] = strdup(json_string_value(x));
    return v;
}

static void read_gpu(reader *r, const json_t *g, tl_gpu_breakdown *b)
{
    json_t *arr, *x;
    size_t i;
    if (!json_is_object(g)) {
        bad(r, "\"gpu\": expected an object");
        return;
    }
    b->present = (int)get_range(r, g, "present", 0, 1);
    b->whole_trace = (int)get_range(r, g, "whole_trace", 0, 1);
    b->steps_in_window = (int)get_range(r, g, "steps_in_window", 0, INT32_MAX);
    b->window_start = get_ts(r, g, "window_start");
    b->window_end = get_ts(r, g, "window_end");
    b->events = (uint64_t)get_range(r, g, "events", 0, TL_PARTIAL_MAX_COUNT);
    b->kernel_time = get_ns(r, g, "kernel_time");
    b->busy = get_ns(r, g, "busy");
    b->idle = get_ns(r, g, "idle");
    b->compute = get_ns(r, g, "compute");
    b->non_compute = get_ns(r, g, "non_compute");
    b->comm = get_ns(r, g, "comm");
    b->comm_compute = get_ns(r, g, "comm_compute");
    if ((arr = get_array(r, g, "by_mask")) != NULL && json_array_size(arr) == 8)
        for (int m = 0; m < 8; m++)
            b->by_mask[m] = item_range(r, arr, (size_t)m, 0, TL_PARTIAL_MAX_NS);
    if ((arr = get_array(r, g, "streams")) != NULL) {
        b->streams = calloc(json_array_size(arr) + 1, sizeof *b->streams);
        json_array_foreach(arr, i, x) if (b->streams)
            b->streams[b->nstreams++] = (tl_stream_idle){
                item_int(r, x, 0), item_int(r, x, 1), item_range(r, x, 2, 0, TL_PARTIAL_MAX_NS),
                item_range(r, x, 3, 0, TL_PARTIAL_MAX_NS), item_range(r, x, 4, 0, TL_PARTIAL_MAX_NS),
                (uint64_t)item_range(r, x, 5, 0, TL_PARTIAL_MAX_COUNT), opt_item_range(r, x, 6, 0, 0, TL_PARTIAL_MAX_NS),
                (uint64_t)opt_item_range(r, x, 7, 0, 0, TL_PARTIAL_MAX_COUNT)
            };
    }
    b->blocked_idle = opt_range(r, g, "blocked_idle", 0, 0, TL_PARTIAL_MAX_NS);
    b->blocking_call_ns = opt_range(r, g, "blocking_call_ns", 0, 0, TL_PARTIAL_MAX_NS);
    json_t *bc = json_object_get(g, "blocking_call");
    if (json_is_string(bc))
        snprintf(b->blocking_call, sizeof b->blocking_call, "%s", json_string_value(bc));
}

static double item_num(json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "telemetry" (absent in partials written before it: no series). */
static void read_series(reader *r, const json_t *o, tl_session *s)
{
    json_t *arr = json_object_get(o, "telemetry"), *x;
    size_t i;
    if (arr == NULL)
        return;
    if (!json_is_array(arr)) {
        bad_key(r, "telemetry", "expected an array");
        return;
    }
    size_t n = json_array_size(arr);
    if (n > TL_SERIES_MAX) {
        bad_key(r, "telemetry", "more series than TL_SERIES_MAX");
        return;
    }
    s->series = calloc(n + 1, sizeof *s->series);
    if (s->series == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(arr, i, x) {
        if (r->bad)
            break;
        tl_tseries *t = &s->series[s->nseries++];
        json_t *kind = json_object_get(x, "series");
        t->kind = json_is_string(kind) ? tl_series_kind_of(json_string_value(kind)) : -1;
        if (t->kind < 0) {
            bad_key(r, "series", "not a telemetry series");
            break;
        }
        t->device = get_range(r, x, "device", -1, TL_PARTIAL_MAX_RANK);
        t->n = (uint64_t)get_range(r, x, "n", 1, TL_PARTIAL_MAX_COUNT);
        t->start_ns = get_range(r, x, "start_ns", -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS);
        t->end_ns = get_range(r, x, "end_ns", t->start_ns, TL_PARTIAL_MAX_TS);
        t->min = get_num(r, x, "min");
        t->max = get_num(r, x, "max");
        t->mean = get_num(r, x, "mean");
        t->energy_j = get_num(r, x, "energy_j");
        json_t *bins = get_array(r, x, "bins"), *b;
        size_t k;
        if (bins == NULL || json_array_size(bins) > TL_SERIES_BINS) {
            bad_key(r, "bins", "expected at most TL_SERIES_BINS bins");
            break;
        }
        json_array_foreach(bins, k, b) {
            t->bmin[k] = item_num(b, 0);
            t->bmean[k] = item_num(b, 1);
            t->bmax[k] = item_num(b, 2);
        }
        t->nbins = (int)json_array_size(bins);
    }
}

/* "devices": [[id, name, total bytes | null]] (absent in older partials). */
static void read_devices(reader *r, const json_t *o, tl_session *s)
{
    json_t *arr = json_object_get(o, "devices"), *x;
    size_t i;
    if (arr == NULL)
        return;
    if (!json_is_array(arr) || json_array_size(arr) > TL_SESSION_MAX_DEVICES) {
        bad_key(r, "devices", "expected an array of at most TL_SESSION_MAX_DEVICES devices");
        return;
    }
    s->devices = calloc(json_array_size(arr) + 1, sizeof *s->devices);
    if (s->devices == NULL) {
        bad(r, "out of memory");
        return;
    }
    json_array_foreach(arr, i, x) {
        json_t *name = json_array_get(x, 1);
        if (!json_is_array(x) || !json_is_string(name)) {
            bad_key(r, "devices", "expected [id, name, total]");
            return;
        }
        s->devices[s->ndevices++] = (tl_sdevice){ item_range(r, x, 0, -1, TL_PARTIAL_MAX_RANK),
                                                  strdup(json_string_value(name)), item_num(x, 2) };
    }
}

static char *item_str(reader *r, json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    if (!json_is_string(v)) {
        bad(r, "expected a string in an array");
        return strdup("");
    }
    return strdup(json_string_value(v));
}

static int64_t item_ts_or_null(reader *r, json_t *arr, size_t i)
{
    return json_is_null(json_array_get(arr, i)) ? INT64_MIN : item_ts(r, arr, i);
}

/* An optional string member: NULL when absent or null. */
static char *opt_str(reader *r, const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v == NULL || json_is_null(v) ? NULL : get_str(r, o, key);
}

/* Fields added after version 1's first release (write_extras): each absent
 * in older partials, then empty. Counts are bounded by what the writer keeps. */
static void read_extras(reader *r, const json_t *o, tl_session *s)
{
    json_t *arr, *x;
    size_t i;
    s->events_total = (uint64_t)opt_range(r, o, "events_total", 0, 0, TL_PARTIAL_MAX_COUNT);
    if (json_object_get(o, "events") != NULL && (arr = get_array(r, o, "events")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_EVENTS || json_array_size(arr) > s->events_total) {
            bad_key(r, "events", "more than TL_SESSION_MAX_EVENTS or events_total");
            return;
        }
        s->events = calloc(json_array_size(arr) + 1, sizeof *s->events);
        json_array_foreach(arr, i, x) if (s->events && !r->bad)
            s->events[s->nevents++] = (tl_sevent){ item_ts_or_null(r, x, 0), item_str(r, x, 1), item_str(r, x, 2) };
    }
    if (json_object_get(o, "tags") != NULL) {
        s->tags = read_strings(r, o, "tags", &s->ntags);
        if (s->ntags > TL_SESSION_MAX_TAGS)
            bad_key(r, "tags", "more than TL_SESSION_MAX_TAGS");
    }
    s->counters_total = (uint64_t)opt_range(r, o, "counters_total", 0, 0, TL_PARTIAL_MAX_COUNT);
    if (json_object_get(o, "counters") != NULL && (arr = get_array(r, o, "counters")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_COUNTERS || json_array_size(arr) > s->counters_total) {
            bad_key(r, "counters", "more than TL_SESSION_MAX_COUNTERS or counters_total");
            return;
        }
        s->counters = calloc(json_array_size(arr) + 1, sizeof *s->counters);
        json_array_foreach(arr, i, x) if (s->counters && !r->bad)
            s->counters[s->ncounters++] = (tl_scounter){ item_str(r, x, 0),
                                                         (int)item_range(r, x, 1, TL_COUNTER_USER, TL_COUNTER_TRACE),
                                                         (uint64_t)item_range(r, x, 2, 1, TL_PARTIAL_MAX_COUNT),
                                                         item_num(x, 3), item_num(x, 4), item_num(x, 5) };
    }
    json_t *sys = json_object_get(o, "system");
    if (sys != NULL) {
        if (!json_is_object(sys)) {
            bad_key(r, "system", "expected an object");
            return;
        }
        s->sys.hostname = opt_str(r, sys, "hostname");
        s->sys.os = opt_str(r, sys, "os");
        s->sys.cpus = (int)get_range(r, sys, "cpus", 0, 1 << 24);
        s->sys.memory_bytes = get_num(r, sys, "memory_bytes");
    }
    json_t *d = json_object_get(o, "diffusion");
    if (d != NULL && !json_is_null(d)) {
        tl_sdiffusion *f = &s->diff;
        if (!json_is_object(d)) {
            bad_key(r, "diffusion", "expected an object or null");
            return;
        }
        f->blocks = (uint64_t)get_range(r, d, "blocks", 0, TL_PARTIAL_MAX_COUNT);
        f->sized = (uint64_t)get_range(r, d, "sized", 0, (int64_t)f->blocks);
        f->frames = get_num(r, d, "frames");
        f->size_min = get_num(r, d, "size_min");
        f->size_max = get_num(r, d, "size_max");
        f->block_ns = get_ns(r, d, "block_ns");
        f->sized_ns = get_range(r, d, "sized_ns", 0, f->block_ns);
        f->first_block_ns = get_range(r, d, "first_block_ns", -1, TL_PARTIAL_MAX_NS);
        f->later_median_ns = get_range(r, d, "later_median_ns", -1, TL_PARTIAL_MAX_NS);
        f->steps = (uint64_t)get_range(r, d, "steps", 0, TL_PARTIAL_MAX_COUNT);
        f->step_ns = get_ns(r, d, "step_ns");
        f->layers = (uint32_t)get_range(r, d, "layers", 0, INT32_MAX);
        f->layers_ns = get_ns(r, d, "layers_ns");
        f->top_layer = opt_str(r, d, "top_layer");
        f->top_layer_ns = get_range(r, d, "top_layer_ns", 0, f->layers_ns);
        if (!(f->frames >= 0) && f->sized > 0)
            bad_key(r, "frames", "expected a number >= 0");
    }
    if (json_object_get(o, "health") != NULL && (arr = get_array(r, o, "health")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_DEVICES) {
            bad_key(r, "health", "more than TL_SESSION_MAX_DEVICES devices");
            return;
        }
        s->health = calloc(json_array_size(arr) + 1, sizeof *s->health);
        json_array_foreach(arr, i, x) {
            if (s->health == NULL || r->bad)
                break;
            tl_shealth *h = &s->health[s->nhealth++];
            h->device = item_range(r, x, 0, -1, TL_PARTIAL_MAX_RANK);
            h->temp_n = (uint64_t)item_range(r, x, 1, 0, TL_PARTIAL_MAX_COUNT);
            h->hot_n = (uint64_t)item_range(r, x, 2, 0, (int64_t)h->temp_n);
            h->hot_ns = item_range(r, x, 3, 0, TL_PARTIAL_MAX_NS);
            h->temp_max = item_num(x, 4);
            h->power_n = (uint64_t)item_range(r, x, 5, 0, TL_PARTIAL_MAX_COUNT);
            h->cap_n = (uint64_t)item_range(r, x, 6, 0, (int64_t)h->power_n);
            h->power_limit_w = item_num(x, 7);
            h->power_max = item_num(x, 8);
            h->reasons_n = (uint64_t)item_range(r, x, 9, 0, TL_PARTIAL_MAX_COUNT);
            h->thermal_n = (uint64_t)item_range(r, x, 10, 0, (int64_t)h->reasons_n);
            h->power_throttle_n = (uint64_t)item_range(r, x, 11, 0, (int64_t)h->reasons_n);
        }
    }
    if (json_object_get(o, "growth") != NULL && (arr = get_array(r, o, "growth")) != NULL) {
        if (json_array_size(arr) > TL_SESSION_MAX_GROWTH) {
            bad_key(r, "growth", "more than TL_SESSION_MAX_GROWTH sequences");
            return;
        }
        s->growth = calloc(TL_SESSION_MAX_GROWTH, sizeof *s->growth);
        json_array_foreach(arr, i, x) {
            if (s->growth == NULL || r->bad)
                break;
            tl_sgrowth *g = &s->growth[s->ngrowth++];
            g->what = item_str(r, x, 0);
            g->metric = (int)item_range(r, x, 1, 0, TL_GROWTH_COUNT - 1);
            g->n = (uint32_t)item_range(r, x, 2, TL_GROWTH_MIN_REPEATS, INT32_MAX);
            g->drops = (uint32_t)item_range(r, x, 3, 0, (int64_t)g->n);
            g->first = item_num(x, 4);
            g->last = item_num(x, 5);
            g->max = item_num(x, 6);
            g->span_ns = item_range(r, x, 7, -1, TL_PARTIAL_MAX_NS);
        }
    }
}

static void read_session(reader *r, const json_t *o, tl_session *s)
{
    tl_session_init(s);
    if (!json_is_object(o)) {
        bad(r, "expected an object");
        return;
    }
    s->path = get_str(r, o, "path");
    s->format = (int)get_range(r, o, "format", TL_FMT_UNKNOWN, TL_FMT_INFERIX);
    s->rank = (int)get_range(r, o, "rank", -1, TL_PARTIAL_MAX_RANK);
    s->world_size = (int)get_range(r, o, "world_size", 0, TL_PARTIAL_MAX_RANK);
    s->rank_source = (int)get_range(r, o, "rank_source", TL_RANK_UNKNOWN, TL_RANK_ORDER);
    s->session = 0;
    s->rank_detail = get_str(r, o, "rank_detail");
    s->start_ns = get_ts(r, o, "start_ns");
    s->span_ns = get_range(r, o, "span_ns", -1, TL_PARTIAL_MAX_NS);
    s->truncated = (int)get_range(r, o, "truncated", 0, 1);
    json_t *comp = json_object_get(o, "companion_of");
    if (json_is_string(comp))
        s->companion_of = strdup(json_string_value(comp));
    s->peak_allocated = get_num(r, o, "peak_allocated");
    s->peak_reserved = get_num(r, o, "peak_reserved");
    s->device_total = get_num(r, o, "device_total");
    s->peak_rss = get_num(r, o, "peak_rss");
    /* absent from partials of an older tally: unknown */
    s->peak_device_used = json_object_get(o, "peak_device_used") ? get_num(r, o, "peak_device_used") : NAN;
    s->gpu_util_mean = get_num(r, o, "gpu_util_mean");
    json_t *arr, *x;
    size_t i;
    s->warnings = read_strings(r, o, "warnings", &s->nwarnings);
    if ((arr = get_array(r, o, "names")) != NULL) {
        s->names = calloc(json_array_size(arr) + 1, sizeof *s->names);
        json_array_foreach(arr, i, x) {
            if (s->names == NULL || r->bad)
                break;
            tl_sname *n = &s->names[s->nnames++];
            n->group = (int)get_range(r, x, "group", 0, TL_GROUP_COUNT - 1);
            n->name = get_str(r, x, "name");
            n->exact = (int)get_range(r, x, "exact", 0, 1);
            n->median_ns = get_num(r, x, "median_ns");
            n->p95_ns = get_num(r, x, "p95_ns");
            n->std_ns = get_num(r, x, "std_ns");
            n->incl_ns = opt_range(r, x, "incl_ns", -1, -1, TL_PARTIAL_MAX_NS);
            n->self_ns = opt_range(r, x, "self_ns", -1, -1, TL_PARTIAL_MAX_NS);
            read_stat(r, json_object_get(x, "stat"), &n->d);
        }
    }
    if ((arr = get_array(r, o, "kernels")) != NULL) {
        s->kernels = calloc(json_array_size(arr) + 1, sizeof *s->kernels);
        json_array_foreach(arr, i, x) {
            if (s->kernels == NULL || r->bad)
                break;
            tl_skernel *k = &s->kernels[s->nkernels++];
            k->name = get_str(r, x, "name");
            k->type = (int)get_range(r, x, "type", 0, TL_KT_COUNT - 1);
            read_stat(r, json_object_get(x, "stat"), &k->d);
        }
    }
    if ((arr = get_array(r, o, "steps")) != NULL) {
        s->steps = calloc(json_array_size(arr) + 1, sizeof *s->steps);
        json_array_foreach(arr, i, x) if (s->steps)
            s->steps[s->nsteps++] = (tl_sstep){ item_int(r, x, 0), item_range(r, x, 1, 0, TL_PARTIAL_MAX_NS),
                                                item_range(r, x, 2, -1, TL_PARTIAL_MAX_NS), item_ts(r, x, 3),
                                                (int)opt_item_range(r, x, 4, 0, 0, 1) };
    }
    read_gpu(r, json_object_get(o, "gpu"), &s->gpu);
    read_timeline(r, json_object_get(o, "timeline"), &s->timeline);
    if ((arr = get_array(r, o, "mem")) != NULL) {
        s->mem = calloc(json_array_size(arr) + 1, sizeof *s->mem);
        json_array_foreach(arr, i, x) {
            if (s->mem == NULL || i >= TL_MEM_SERIES)
                break;
            json_t *va = json_array_get(x, 1), *vr = json_array_get(x, 2);
            s->mem[s->nmem++] = (tl_mem_sample){ item_range(r, x, 0, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS),
                                                 json_is_number(va) ? json_number_value(va) : NAN,
                                                 json_is_number(vr) ? json_number_value(vr) : NAN };
        }
    }
    s->abs_time = (int)opt_range(r, o, "abs_time", 0, 0, 1);
    /* absent from partials of an older tally: unknown */
    s->pid = opt_range(r, o, "pid", -1, -1, INT64_MAX);
    s->graph_launches = (uint64_t)opt_range(r, o, "graph_launches", 0, 0, TL_PARTIAL_MAX_COUNT);
    json_t *dev = json_object_get(o, "device_name");
    if (json_is_string(dev))
        s->device_name = strdup(json_string_value(dev));
    if ((arr = get_array(r, o, "snapshots")) != NULL) {
        s->snaps = calloc(json_array_size(arr) + 1, sizeof *s->snaps);
        json_array_foreach(arr, i, x) if (s->snaps)
            s->snaps[s->nsnaps++] = (tl_ssnap){ get_str(r, x, "label"), get_num(r, x, "allocated"),
                                                get_num(r, x, "reserved"), get_num(r, x, "peak_allocated"),
                                                get_num(r, x, "rss"),
                                                json_object_get(x, "device_used") ? get_num(r, x, "device_used")
                                                                                  : NAN,
                                                json_is_integer(json_object_get(x, "ts_ns")) ? get_ts(r, x, "ts_ns")
                                                                                             : INT64_MIN };
    }
    read_series(r, o, s);
    read_devices(r, o, s);
    read_extras(r, o, s);
    read_calltree(r, o, &s->calltree);
    if ((arr = get_array(r, o, "collectives")) != NULL && json_array_size(arr) > 0) {
        size_t n = json_array_size(arr);
        s->colls = malloc((n > TL_MAX_COLLECTIVES ? TL_MAX_COLLECTIVES : n) * sizeof *s->colls);
        json_array_foreach(arr, i, x) {
            if (s->colls == NULL || i >= TL_MAX_COLLECTIVES)
                break;
            int64_t k = item_int(r, x, 0);
            if (k < 0 || (size_t)k >= s->nkernels) {
                bad(r, "\"collectives\": kernel index out of range");
                break;
            }
            s->colls[s->ncolls++] = (tl_collective){ (uint32_t)k, item_range(r, x, 1, 0, TL_PARTIAL_MAX_NS) };
        }
    }
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

void tl_partial_init(tl_partial *p)
{
    memset(p, 0, sizeof *p);
}

void tl_partial_release(tl_partial *p)
{
    for (size_t i = 0; i < p->nsessions; i++)
        tl_session_release(&p->sessions[i]);
    free(p->sessions);
    memset(p, 0, sizeof *p);
}

int tl_partial_read_json(tl_partial *p, const json_t *root, char *err, size_t errlen)
{
    reader r = { err, errlen, 0 };
    if (!tl_partial_is_document(root)) {
        const json_t *fmt = json_object_get(root, "format");
        if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-aggregate") == 0)
            snprintf(err, errlen, "an aggregate without its sessions (written by an older tally); "
                                  "make it again, or pass the partials");
        else
            snprintf(err, errlen, "not a partial aggregate (no \"format\": \"tally-partial\"); "
                                  "write one with tally aggregate --partial");
        return -1;
    }
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        snprintf(err, errlen, "partial aggregate version %lld is not supported (expected 1)",
                 json_is_integer(ver) ? (long long)json_integer_value(ver) : -1LL);
        return -1;
    }
    json_t *opt = json_object_get(root, "options");
    if (json_is_object(opt)) {
        json_t *w = json_object_get(opt, "window");
        p->whole_trace = json_is_string(w) && strcmp(json_string_value(w), "whole-trace") == 0;
        p->kernel_wait_ns = get_ns(&r, opt, "kernel_wait_ns");
        p->has_options = 1;
        if (r.bad)
            return -1;
    }
    json_t *sessions = get_array(&r, root, "sessions"), *x;
    size_t i;
    if (sessions == NULL)
        return -1;
    p->sessions = calloc(json_array_size(sessions) + 1, sizeof *p->sessions);
    if (p->sessions == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_array_foreach(sessions, i, x) {
        tl_session *s = &p->sessions[p->nsessions];
        read_session(&r, x, s);
        if (r.bad) {
            tl_session_release(s);
            tl_partial_release(p);
            char where[64];
            snprintf(where, sizeof where, " (session %zu)", i);
            size_t len = strlen(err);
            if (len + strlen(where) < errlen)
                memcpy(err + len, where, strlen(where) + 1);
            return -1;
        }
        p->nsessions++;
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

int tl_partial_read_buffer(tl_partial *p, const char *buf, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    return read_loaded(p, json_loadb(buf, len, 0, &je), &je, err, errlen);
}

int tl_partial_read(tl_partial *p, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    return read_loaded(p, json_load_file(path, 0, &je), &je, err, errlen);
}
