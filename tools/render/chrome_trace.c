/*
 * chrome_trace.c - `tally report --trace job.trace.json[.gz]`: one Chrome
 * Trace Event file of the whole job for Perfetto UI and chrome://tracing,
 * made from what the sessions keep (docs/analysis.md, "Merged trace").
 *
 * The one idea: the trace is drawn from the summaries, never from the
 * inputs' events, so its size is bounded like the report's. Each rank is a
 * process ("rank 3"); its threads are the session's timeline lanes: a CPU
 * thread's longest calls as complete events, a GPU stream's busy bins merged
 * into ranges by their main kind of work; then its steps, and its waits in
 * collectives. Times are shifted by each rank's clock offset from the waits
 * (so the ranks' collectives line up) and start at 0. A last process, "tally
 * findings", holds the straggler, the collective instances with their last
 * rank and every recommendation, each as a range with its numbers in args.
 * At most TL_TRACE_MAX_EVENTS events are written; the metadata says the
 * bound and how many were left out.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "render.h"
#include "text_numbers.h"

#define TL_TRACE_MAX_EVENTS 200000 /* complete events written at most (metadata aside) */
#define FINDINGS_PID 1000000       /* the "tally findings" process */
#define WAIT_ROWS 4                /* threads of a rank's waits (gloo runs two all-reduces at once) */

typedef struct tw {
    tl_json j;
    int64_t t0; /* the trace's zero, on the aligned clock */
    uint64_t written, left;
    int64_t *wait_tid;  /* per rank index: the tid of its first row of waits; 0 none */
    uint8_t **wait_row; /* per rank index and instance: the row of its wait */
    uint64_t flow_id;
} tw;

static int sink(void *ctx, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

static void us(tl_json *j, const char *key, int64_t ns)
{
    tl_json_key(j, key);
    tl_json_fixed(j, (double)ns / 1000.0, 3);
}

static void meta(tw *w, const char *what, int64_t pid, int64_t tid, const char *key, const char *s, int64_t v)
{
    tl_json *j = &w->j;
    tl_json_object_begin(j);
    tl_json_kv_string(j, "ph", "M");
    tl_json_kv_string(j, "name", what);
    tl_json_kv_int(j, "pid", pid);
    tl_json_kv_int(j, "tid", tid);
    tl_json_key(j, "args");
    tl_json_object_begin(j);
    if (s != NULL)
        tl_json_kv_string(j, key, s);
    else
        tl_json_kv_int(j, key, v);
    tl_json_object_end(j);
    tl_json_object_end(j);
}

/* Begin a complete event, or return 0 past the bound (counted). The caller
 * adds args, if any, and ends the object. */
static int begin_x(tw *w, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t ts, int64_t dur)
{
    if (w->written >= TL_TRACE_MAX_EVENTS) {
        w->left++;
        return 0;
    }
    w->written++;
    tl_json *j = &w->j;
    tl_json_object_begin(j);
    tl_json_kv_string(j, "ph", "X");
    tl_json_kv_string(j, "cat", cat);
    tl_json_kv_string(j, "name", name);
    tl_json_kv_int(j, "pid", pid);
    tl_json_kv_int(j, "tid", tid);
    us(j, "ts", ts - w->t0);
    us(j, "dur", dur > 0 ? dur : 0);
    return 1;
}

static int64_t offset_of(const tl_aggregate *a, size_t ri)
{
    const tl_waits *w = &a->waits;
    return w->source != TL_WAITS_NONE && ri < w->nranks && w->ranks[ri].used ? w->ranks[ri].offset_ns : 0;
}

/* The trace's zero: the earliest start of any drawn session, aligned. */
static int64_t zero_of(const tl_aggregate *a)
{
    int64_t t0 = INT64_MAX;
    for (size_t ri = 0; ri < a->nranks; ri++)
        for (size_t k = 0; k < a->ranks[ri].nsessions; k++) {
            const tl_session *s = &a->sessions[a->ranks[ri].sessions[k]];
            if (s->timeline.start_ns < s->timeline.end_ns && s->timeline.start_ns - offset_of(a, ri) < t0)
                t0 = s->timeline.start_ns - offset_of(a, ri);
            for (size_t i = 0; i < s->nsteps; i++)
                if (s->steps[i].ts_ns != INT64_MIN && s->steps[i].ts_ns - offset_of(a, ri) < t0)
                    t0 = s->steps[i].ts_ns - offset_of(a, ri);
        }
    return t0 == INT64_MAX ? 0 : t0;
}

static const char *const kind_name[TL_KT_COUNT] = { "compute", "communication", "memory", "other" };

/* A GPU lane's bins as ranges: runs of busy bins, named by the kind with the
 * most work in the run, with its busy share. */
static void gpu_ranges(tw *w, const tl_timeline *t, const tl_lane *l, int64_t pid, int64_t tid, int64_t off)
{
    double bw = ((double)t->end_ns - (double)t->start_ns) / TL_TIMELINE_BINS;
    for (int i = 0; i < TL_TIMELINE_BINS;) {
        double any = 0;
        for (int k = 0; k < TL_KT_COUNT; k++)
            any += tl_lane_busy(l, k, (size_t)i);
        if (!(any > 0)) {
            i++;
            continue;
        }
        int e = i;
        double by[TL_KT_COUNT] = { 0 }, sum = 0;
        for (; e < TL_TIMELINE_BINS; e++) {
            double b = 0;
            for (int k = 0; k < TL_KT_COUNT; k++)
                b += tl_lane_busy(l, k, (size_t)e);
            if (!(b > 0))
                break;
            for (int k = 0; k < TL_KT_COUNT; k++)
                by[k] += tl_lane_busy(l, k, (size_t)e);
            sum += fmin(b, 1.0);
        }
        int best = 0;
        for (int k = 1; k < TL_KT_COUNT; k++)
            best = by[k] > by[best] ? k : best;
        int64_t ts = t->start_ns + (int64_t)(i * bw), end = t->start_ns + (int64_t)(e * bw);
        if (begin_x(w, "gpu", kind_name[best], pid, tid, ts - off, end - ts)) {
            tl_json_key(&w->j, "args");
            tl_json_object_begin(&w->j);
            tl_json_kv_double(&w->j, "busy_pct", round(1000.0 * sum / (e - i)) / 10);
            tl_json_object_end(&w->j);
            tl_json_object_end(&w->j);
        }
        i = e;
    }
}

/* A CPU lane's calls (by start, the longer first) on its thread where they
 * nest; those that overlap a call without lying inside it (an operator and
 * an annotation of different kinds) on a second thread, so that every
 * thread's slices nest as the format wants. *tid: the lane's; it moves on
 * past the second thread when there is one. */
static void cpu_calls(tw *w, const tl_timeline *t, const tl_lane *ln, int64_t pid, int64_t *tid, int64_t off)
{
    int64_t stack[TL_LANE_MAX_DEPTH + 1];
    for (int pass = 0; pass < 2; pass++) {
        int n = 0, aside = 0;
        for (uint32_t c = 0; c < ln->ncalls; c++) {
            const tl_lane_call *x = &ln->calls[c];
            int64_t end = x->ts_ns + (x->dur_ns > 0 ? x->dur_ns : 0);
            while (n > 0 && stack[n - 1] <= x->ts_ns)
                n--;
            int nests = n == 0 || end <= stack[n - 1];
            if (nests && n < TL_LANE_MAX_DEPTH + 1)
                stack[n++] = end;
            else
                nests = 0;
            aside += !nests;
            if (nests != (pass == 0))
                continue;
            if (begin_x(w, "cpu", tl_strtab_get(&t->names, x->name), pid, *tid + pass, x->ts_ns - off, x->dur_ns))
                tl_json_object_end(&w->j);
        }
        if (pass == 1) {
            (*tid)++;
            break;
        }
        if (aside == 0)
            break;
        char buf[160];
        snprintf(buf, sizeof buf, "%.120s (overlapping calls)", ln->label ? ln->label : "lane");
        meta(w, "thread_name", pid, *tid + 1, "name", buf, 0);
        meta(w, "thread_sort_index", pid, *tid + 1, "sort_index", NULL, *tid + 1);
    }
}

static void rank_events(tw *w, const tl_aggregate *a, size_t ri)
{
    const tl_rank_result *r = &a->ranks[ri];
    int64_t pid = r->rank, off = offset_of(a, ri), tid = 1;
    char buf[160];
    snprintf(buf, sizeof buf, "rank %d", r->rank);
    meta(w, "process_name", pid, 0, "name", buf, 0);
    meta(w, "process_sort_index", pid, 0, "sort_index", NULL, r->rank);
    meta(w, "thread_name", pid, 0, "name", "steps", 0);
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        tl_spill_hold(s); /* its lanes: the bulk (spill.h) */
        for (size_t i = 0; i < s->nsteps; i++) {
            snprintf(buf, sizeof buf, "step %" PRId64, s->steps[i].number);
            if (s->steps[i].ts_ns != INT64_MIN &&
                begin_x(w, "step", buf, pid, 0, s->steps[i].ts_ns - off, s->steps[i].dur_ns))
                tl_json_object_end(&w->j);
        }
        const tl_timeline *t = &s->timeline;
        for (size_t l = 0; t->start_ns < t->end_ns && l < t->nlanes; l++, tid++) {
            const tl_lane *ln = &t->lanes[l];
            meta(w, "thread_name", pid, tid, "name", ln->label ? ln->label : "lane", 0);
            meta(w, "thread_sort_index", pid, tid, "sort_index", NULL, tid);
            if (ln->kind == TL_LANE_GPU) {
                gpu_ranges(w, t, ln, pid, tid, off);
                continue;
            }
            cpu_calls(w, t, ln, pid, &tid, off);
        }
        tl_spill_drop(s);
    }
    /* its waits in collectives (waits.h: per instance of its first session) */
    const tl_waits *wt = &a->waits;
    if (wt->source == TL_WAITS_NONE || ri >= wt->nranks || !wt->ranks[ri].used || wt->ranks[ri].inst_wait == NULL ||
        r->nsessions == 0)
        return;
    const tl_session *s = &a->sessions[r->sessions[0]];
    /* waits that overlap (two collectives at once) go to rows of their own,
     * so that every thread's slices nest */
    if ((w->wait_row[ri] = calloc(s->ninsts + 1, 1)) == NULL)
        return;
    w->wait_tid[ri] = tid;
    int64_t row_end[WAIT_ROWS];
    int rows = 0;
    for (int k = 0; k < WAIT_ROWS; k++)
        row_end[k] = INT64_MIN;
    for (size_t i = 0; i < s->ninsts; i++) {
        int64_t wait = wt->ranks[ri].inst_wait[i];
        if (wait <= 0)
            continue;
        const tl_scoll *c = &s->insts[i];
        int row = 0;
        while (row < WAIT_ROWS - 1 && row_end[row] > c->ts_ns)
            row++;
        row_end[row] = c->ts_ns + wait > row_end[row] ? c->ts_ns + wait : row_end[row];
        w->wait_row[ri][i] = (uint8_t)row;
        for (; rows <= row; rows++) {
            meta(w, "thread_name", pid, tid + rows, "name",
                 rows ? "waiting in collectives (at once)" : "waiting in collectives", 0);
            meta(w, "thread_sort_index", pid, tid + rows, "sort_index", NULL, tid + rows);
        }
        const char *name = c->name >= 0 && (size_t)c->name < s->ncoll_names ? s->coll_names[c->name] : "collective";
        snprintf(buf, sizeof buf, "waiting in %.120s", name);
        if (begin_x(w, "wait", buf, pid, tid + row, c->ts_ns - off, wait)) {
            tl_json_key(&w->j, "args");
            tl_json_object_begin(&w->j);
            us(&w->j, "wait_us", wait);
            tl_json_object_end(&w->j);
            tl_json_object_end(&w->j);
        }
    }
}

/* Flows from a collective instance of the findings (its last arrival at
 * last) to each rank's wait that ended at that arrival: a rank's wait is the
 * last arrival minus its own (waits.h), so its aligned end is last exactly
 * (unless cut to the collective's length). insts are by start: the rank's
 * instance is among the last few that start at or before last. */
static void flows(tw *w, const tl_aggregate *a, int64_t src_tid, int64_t src_ts, int64_t last)
{
    const tl_waits *wt = &a->waits;
    for (size_t ri = 0; ri < a->nranks && ri < wt->nranks; ri++) {
        if (w->wait_row[ri] == NULL)
            continue;
        const tl_session *s = &a->sessions[a->ranks[ri].sessions[0]];
        int64_t off = offset_of(a, ri);
        size_t lo = 0, hi = s->ninsts;
        while (lo < hi) { /* the first instance that starts after last */
            size_t mid = lo + (hi - lo) / 2;
            if (s->insts[mid].ts_ns - off <= last)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = lo, seen = 0; i-- > 0 && seen < 4; seen++) {
            int64_t wait = wt->ranks[ri].inst_wait[i];
            if (wait <= 0 || s->insts[i].ts_ns - off + wait != last)
                continue;
            if (w->written + 2 > TL_TRACE_MAX_EVENTS) {
                w->left += 2;
                return;
            }
            w->written += 2;
            tl_json *j = &w->j;
            w->flow_id++;
            tl_json_object_begin(j);
            tl_json_kv_string(j, "ph", "s");
            tl_json_kv_string(j, "cat", "wait");
            tl_json_kv_string(j, "name", "waits for the last rank");
            tl_json_kv_uint(j, "id", w->flow_id);
            tl_json_kv_int(j, "pid", FINDINGS_PID);
            tl_json_kv_int(j, "tid", src_tid);
            us(j, "ts", src_ts - w->t0);
            tl_json_object_end(j);
            tl_json_object_begin(j);
            tl_json_kv_string(j, "ph", "f");
            tl_json_kv_string(j, "bp", "e");
            tl_json_kv_string(j, "cat", "wait");
            tl_json_kv_string(j, "name", "waits for the last rank");
            tl_json_kv_uint(j, "id", w->flow_id);
            tl_json_kv_int(j, "pid", a->ranks[ri].rank);
            tl_json_kv_int(j, "tid", w->wait_tid[ri] + w->wait_row[ri][i]);
            us(j, "ts", s->insts[i].ts_ns - off + wait / 2 - w->t0);
            tl_json_object_end(j);
            break;
        }
    }
}

/* The findings process: the straggler over the whole job, the matched
 * collective instances (on the aligned clock: offsets removed, as the
 * trace's axis) with their last rank and flows to the ranks that waited for
 * it, and every recommendation over the whole job. */
static void findings(tw *w, const tl_aggregate *a, int64_t end)
{
    tl_json *j = &w->j;
    int64_t pid = FINDINGS_PID;
    meta(w, "process_name", pid, 0, "name", "tally findings", 0);
    meta(w, "process_sort_index", pid, 0, "sort_index", NULL, -1);
    meta(w, "thread_name", pid, 1, "name", "straggler", 0);
    meta(w, "thread_name", pid, 2, "name", "collectives: the last rank to arrive", 0);
    meta(w, "thread_name", pid, 3, "name", "recommendations", 0);
    for (int k = 1; k < WAIT_ROWS; k++) {
        meta(w, "thread_name", pid, 3 + k, "name", "collectives: the last rank to arrive (at once)", 0);
        meta(w, "thread_sort_index", pid, 3 + k, "sort_index", NULL, 2);
    }
    char buf[160];
    for (int i = 0; i < a->nstragglers; i++) {
        const tl_straggler *s = &a->stragglers[i];
        snprintf(buf, sizeof buf, "straggler: rank %d (%s)", s->rank, s->kind ? s->kind : "");
        if (begin_x(w, "finding", buf, pid, 1, w->t0, end - w->t0)) {
            tl_json_key(j, "args");
            tl_json_object_begin(j);
            tl_json_kv_int(j, "rank", s->rank);
            tl_json_kv_string(j, "severity", s->severity ? s->severity : "");
            char *summary = tl_text_numbers(s->summary);
            tl_json_kv_string(j, "summary", summary ? summary : "");
            free(summary);
            tl_json_object_end(j);
            tl_json_object_end(j);
        }
    }
    const tl_waits *wt = &a->waits;
    /* instances at once (gloo's two all-reduces) on rows of their own: tid 2, then 4.. */
    int64_t row_end[WAIT_ROWS];
    for (int k = 0; k < WAIT_ROWS; k++)
        row_end[k] = INT64_MIN;
    for (size_t i = 0; i < wt->nchart; i++) {
        const tl_wait_inst *c = &wt->chart[i];
        const char *name = c->name >= 0 && c->name < wt->nnames ? wt->names[c->name] : "collective";
        if (c->last_rank >= 0)
            snprintf(buf, sizeof buf, "%.100s: rank %d last", name, c->last_rank);
        else
            snprintf(buf, sizeof buf, "%.100s: no rank last", name);
        int row = 0;
        while (row < WAIT_ROWS - 1 && row_end[row] > c->ts_ns)
            row++;
        if (c->ts_ns + c->spread_ns > row_end[row])
            row_end[row] = c->ts_ns + c->spread_ns;
        int64_t ctid = row == 0 ? 2 : 3 + row;
        if (begin_x(w, "finding", buf, pid, ctid, c->ts_ns, c->spread_ns)) {
            tl_json_key(j, "args");
            tl_json_object_begin(j);
            tl_json_kv_int(j, "last_rank", c->last_rank);
            us(j, "arrival_spread_us", c->spread_ns);
            us(j, "others_median_wait_us", c->caused_ns);
            tl_json_object_end(j);
            tl_json_object_end(j);
            if (c->last_rank >= 0)
                flows(w, a, ctid, c->ts_ns + c->spread_ns / 2, c->ts_ns + c->spread_ns);
        }
    }
    for (int i = 0; i < a->nrecs; i++) {
        const tl_recommendation *r = &a->recs[i];
        snprintf(buf, sizeof buf, "%s (%s)", r->id ? r->id : "finding", r->severity ? r->severity : "");
        if (begin_x(w, "finding", buf, pid, 3, w->t0, end - w->t0)) {
            tl_json_key(j, "args");
            tl_json_object_begin(j);
            tl_json_kv_int(j, "rank", r->rank);
            char *finding = tl_text_numbers(r->finding), *evidence = tl_text_numbers(r->evidence);
            tl_json_kv_string(j, "finding", finding ? finding : "");
            tl_json_kv_string(j, "advice", r->advice ? r->advice : "");
            tl_json_kv_string(j, "evidence", evidence ? evidence : "");
            free(finding);
            free(evidence);
            tl_json_object_end(j);
            tl_json_object_end(j);
        }
    }
}

/* The end of the job on the aligned clock (the findings' ranges span it). */
static int64_t end_of(const tl_aggregate *a, int64_t t0)
{
    int64_t e = t0;
    for (size_t ri = 0; ri < a->nranks; ri++)
        for (size_t k = 0; k < a->ranks[ri].nsessions; k++) {
            const tl_session *s = &a->sessions[a->ranks[ri].sessions[k]];
            if (s->timeline.start_ns < s->timeline.end_ns && s->timeline.end_ns - offset_of(a, ri) > e)
                e = s->timeline.end_ns - offset_of(a, ri);
        }
    return e;
}

static int write_trace(FILE *out, const tl_aggregate *a, const char *version)
{
    tw *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -1;
    tl_json *j = &w->j;
    tl_json_init(j, sink, out);
    w->t0 = zero_of(a);
    w->wait_tid = calloc(a->nranks + 1, sizeof *w->wait_tid);
    w->wait_row = calloc(a->nranks + 1, sizeof *w->wait_row);
    if (w->wait_tid == NULL || w->wait_row == NULL) {
        free(w->wait_tid);
        free(w->wait_row);
        free(w);
        return -1;
    }
    tl_json_object_begin(j);
    tl_json_kv_string(j, "displayTimeUnit", "ms");
    tl_json_key(j, "traceEvents");
    tl_json_array_begin(j);
    for (size_t ri = 0; ri < a->nranks; ri++)
        rank_events(w, a, ri);
    findings(w, a, end_of(a, w->t0));
    tl_json_array_end(j);
    tl_json_key(j, "otherData");
    tl_json_object_begin(j);
    char buf[96];
    snprintf(buf, sizeof buf, "tally %s", version ? version : "");
    tl_json_kv_string(j, "producer", buf);
    tl_json_kv_int(j, "ranks", (int64_t)a->nranks);
    tl_json_kv_string(
        j, "clock",
        a->waits.source != TL_WAITS_NONE
            ? "each rank shifted by its clock offset from the collectives (Waits); 0 is the job's first event"
            : "as recorded; 0 is the job's first event");
    tl_json_kv_string(j, "contents",
                      "per rank: steps, each timeline lane (a CPU thread's longest calls, a GPU "
                      "stream's busy time merged into ranges at 1/1024 of its session), waits in "
                      "collectives; a 'tally findings' process");
    tl_json_kv_int(j, "max_events", TL_TRACE_MAX_EVENTS);
    tl_json_kv_uint(j, "events_written", w->written);
    tl_json_kv_uint(j, "events_left_out", w->left);
    tl_json_kv_uint(j, "flows", w->flow_id);
    tl_json_object_end(j);
    tl_json_object_end(j);
    int rc = tl_json_finish(j);
    for (size_t ri = 0; ri < a->nranks; ri++)
        free(w->wait_row[ri]);
    free(w->wait_row);
    free(w->wait_tid);
    free(w);
    return rc;
}

/* gzip of what write_trace made in memory (windowBits 31: a gzip member
 * with no name and time 0, so the same inputs give the same bytes). */
static int deflate_to(FILE *out, const char *buf, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    unsigned char o[65536];
    int rc = 0, zr;
    z.next_in = (unsigned char *)buf;
    z.avail_in = (uInt)len; /* the trace is bounded far below 4 GB */
    do {
        z.next_out = o;
        z.avail_out = sizeof o;
        zr = deflate(&z, Z_FINISH);
        if (zr == Z_STREAM_ERROR || fwrite(o, 1, sizeof o - z.avail_out, out) != sizeof o - z.avail_out) {
            rc = -1;
            break;
        }
    } while (zr != Z_STREAM_END);
    deflateEnd(&z);
    return rc;
}

int tl_render_trace(FILE *out, const tl_aggregate *a, const char *version, int gzip)
{
    if (!gzip)
        return write_trace(out, a, version);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m == NULL)
        return -1;
    int rc = write_trace(m, a, version);
    if (fclose(m) != 0)
        rc = -1;
    if (rc == 0)
        rc = deflate_to(out, buf, len);
    free(buf);
    return rc;
}
