/*
 * settle.c - the last of every input's identity, over all sessions at once
 * (session.h's tl_sessions_settle): companions read apart are paired and
 * lend their reports what they lack, the sessions are sorted, split into runs, numbered, and what the
 * ranks leave unsaid becomes a note.
 *
 * The one idea: this is the only code that decides whether an input counts.
 * It sets tl_identity.run and .session; from here on tl_session_counts is
 * the one answer, and run identity is never decided twice.
 */
#define _GNU_SOURCE
#include "session.h"
#include "array.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- notes ------------------------------------------------------------------------------ */

typedef struct notes {
    char ***v;
    size_t *n;
    int oom;
} notes;

static void add_note(notes *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(notes *l, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    char **x = rc < 0 ? NULL : realloc(*l->v, (*l->n + 1) * sizeof *x);
    if (x == NULL) {
        free(rc < 0 ? NULL : s);
        l->oom = 1;
        return;
    }
    *l->v = x;
    x[(*l->n)++] = s;
}

/* ---- 1. companions ----------------------------------------------------------------------- */

/* A libtally trace and its report read apart (`tally aggregate --partial`
 * of each, then `tally merge`, or tally-mpi's shares) meet only here: the
 * trace becomes the report's companion as if both had been read in one run
 * (run.c's pair_companions). By the stem of the file name, not the whole
 * path: partials made from different directories spell the same folder
 * differently ("runs/x" and "/home/u/runs/x"), and libtally's stems carry the
 * process and its start time. The rank-and-start-time match run.c also uses
 * needs the profiles' clocks, which sessions do not keep, so renamed files
 * split apart stay two sessions. */
static int pair_split_companions(tl_session *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tl_session *t = &v[i];
        if (t->id.format != TL_FMT_TALLY_TRACE || !tl_identity_is_session(&t->id))
            continue;
        for (size_t k = 0; k < n; k++) {
            const tl_session *r = &v[k];
            if (r->id.format == TL_FMT_TALLY_REPORT && tl_identity_is_session(&r->id) &&
                tl_identity_same_stem(tl_path_file_name(r->id.path), tl_path_file_name(t->id.path))) {
                t->id.companion_of = strdup(r->id.path);
                if (t->id.companion_of == NULL)
                    return -1;
                break;
            }
        }
    }
    /* FramePack's profiling_results/ folder read apart (run.c pairs it when
     * read together): by the folder's name, one report and one trace in it */
    for (size_t k = 0; k < n; k++) {
        const tl_session *r = &v[k];
        if (r->id.format != TL_FMT_FRAMEPACK || !tl_identity_is_session(&r->id))
            continue;
        tl_session *trace = NULL, *memlog = NULL;
        size_t traces = 0, reports = 0, memlogs = 0;
        for (size_t i = 0; i < n; i++) {
            tl_session *t = &v[i];
            if (!tl_identity_same_folder(r->id.path, t->id.path, 0))
                continue;
            if (t->id.companion_of != NULL && strcmp(t->id.companion_of, r->id.path) == 0) {
                /* paired when read: nothing to do */
                traces += t->id.format != TL_FMT_FRAMEPACK_MEMLOG ? 2 : 0;
                memlogs += t->id.format == TL_FMT_FRAMEPACK_MEMLOG ? 2 : 0;
            }
            if (!tl_identity_is_session(&t->id))
                continue;
            reports += t->id.format == TL_FMT_FRAMEPACK;
            if (tl_identity_framepack_trace(&t->id)) {
                traces++;
                trace = t;
            }
            if (t->id.format == TL_FMT_FRAMEPACK_MEMLOG) {
                memlogs++;
                memlog = t;
            }
        }
        if (reports == 1 && traces == 1) {
            trace->id.companion_of = strdup(r->id.path);
            if (trace->id.companion_of == NULL)
                return -1;
        }
        if (reports == 1 && memlogs == 1) {
            memlog->id.companion_of = strdup(r->id.path);
            if (memlog->id.companion_of == NULL)
                return -1;
        }
    }
    /* a PyTorch memory timeline or stacks file beside its trace, read apart
     * (run.c pairs it when read together) */
    for (size_t k = 0; k < n; k++) {
        tl_session *m = &v[k];
        if ((m->id.format != TL_FMT_MEM_TIMELINE && m->id.format != TL_FMT_STACKS) || !tl_identity_is_session(&m->id))
            continue;
        const tl_session *trace = NULL;
        size_t traces = 0, timelines = 0;
        for (size_t i = 0; i < n; i++) {
            const tl_session *t = &v[i];
            if (!tl_identity_is_session(&t->id) || !tl_identity_same_folder(m->id.path, t->id.path, 0))
                continue;
            timelines += t->id.format == m->id.format;
            if (t->id.format == TL_FMT_KINETO) {
                traces++;
                trace = t;
            }
        }
        if (timelines == 1 && traces == 1) {
            m->id.companion_of = strdup(trace->id.path);
            if (m->id.companion_of == NULL)
                return -1;
        }
    }
    return 0;
}

/* A libtally report's sections carry no nesting; its companion trace (the
 * same process's events) does: the report's names take the trace's self and
 * inclusive time where the trace saw as many occurrences (a trace cut by
 * TALLY_MAX_EVENTS saw fewer, and then self time stays unknown). */
static void adopt_nesting(tl_session *r, const tl_session *c)
{
    tl_strtab keys;
    tl_strtab_init(&keys);
    char key[1100];
    for (size_t i = 0; i < c->nnames; i++) {
        int n = snprintf(key, sizeof key, "%d\x1f%s", c->names[i].group, c->names[i].name);
        if (n < 0 || (size_t)n >= sizeof key || tl_strtab_intern(&keys, key, (size_t)n) != i)
            goto out; /* a duplicate or a failure: the ids no longer index c->names */
    }
    for (size_t i = 0; i < r->nnames; i++) {
        tl_sname *x = &r->names[i];
        if (x->incl_ns > 0)
            continue;
        int n = snprintf(key, sizeof key, "%d\x1f%s", x->group, x->name);
        if (n < 0 || (size_t)n >= sizeof key)
            continue;
        uint32_t id = tl_strtab_find(&keys, key, (size_t)n);
        if (id == UINT32_MAX || c->names[id].incl_ns <= 0 || c->names[id].d.count != x->d.count)
            continue;
        x->incl_ns = c->names[id].incl_ns;
        x->self_ns = c->names[id].self_ns;
    }
out:
    tl_strtab_release(&keys);
}

static int call_by_ts(const void *x, const void *y)
{
    const tl_lane_call *a = x, *b = y;
    return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

/* A libtally report's steps have lengths but no start times (the reader
 * lays them back to back from the report's start); its companion trace has
 * each iteration as a call on a CPU lane. Each step takes the start of the
 * next call of the main loop's name (the report's iteration with the most
 * total time, as the reader chose it) whose length is the step's within
 * TL_STEP_MATCH_NS or 0.1 %; a step without such a call (a trace cut by
 * TALLY_MAX_EVENTS, calls beyond the lane's TL_LANE_TOP_EVENTS) is placed
 * right after the step before it (or right before the step after it).
 * Nothing matched: the steps stay where the reader put them.
 * docs/analysis.md, "Steps". */
#define TL_STEP_MATCH_NS 1000
static void place_report_steps(tl_session *r, const tl_timeline *t)
{
    const tl_sname *loop = NULL;
    for (size_t i = 0; i < r->nnames; i++)
        if (r->names[i].group == TL_GROUP_ITERATIONS && (loop == NULL || r->names[i].d.total > loop->d.total))
            loop = &r->names[i];
    if (loop == NULL || r->nsteps == 0 || t->nlanes == 0)
        return;
    uint32_t id = tl_strtab_find(&t->names, loop->name, strlen(loop->name));
    if (id == UINT32_MAX)
        return;
    size_t n = 0;
    for (size_t l = 0; l < t->nlanes; l++)
        for (uint32_t k = 0; k < t->lanes[l].ncalls; k++)
            n += t->lanes[l].calls[k].name == id;
    tl_lane_call *calls = n ? malloc(n * sizeof *calls) : NULL;
    int64_t *ts = malloc(r->nsteps * sizeof *ts);
    if (calls == NULL || ts == NULL)
        goto out;
    n = 0;
    for (size_t l = 0; l < t->nlanes; l++)
        for (uint32_t k = 0; k < t->lanes[l].ncalls; k++)
            if (t->lanes[l].calls[k].name == id)
                calls[n++] = t->lanes[l].calls[k];
    qsort(calls, n, sizeof *calls, call_by_ts);
    size_t next = 0, matched = 0;
    for (size_t s = 0; s < r->nsteps; s++) {
        int64_t d = r->steps[s].dur_ns, tol = d / 1000 > TL_STEP_MATCH_NS ? d / 1000 : TL_STEP_MATCH_NS;
        ts[s] = INT64_MIN;
        for (size_t k = next; k < n; k++) {
            int64_t diff = calls[k].dur_ns - d;
            if (diff >= -tol && diff <= tol) {
                ts[s] = calls[k].ts_ns;
                next = k + 1;
                matched++;
                break;
            }
        }
    }
    if (matched == 0)
        goto out;
    for (size_t s = 1; s < r->nsteps; s++)
        if (ts[s] == INT64_MIN && ts[s - 1] != INT64_MIN)
            ts[s] = tl_ns_add(ts[s - 1], r->steps[s - 1].dur_ns);
    for (size_t s = r->nsteps - 1; s-- > 0;)
        if (ts[s] == INT64_MIN && ts[s + 1] != INT64_MIN)
            ts[s] = tl_ns_add(ts[s + 1], r->steps[s].dur_ns > 0 ? -r->steps[s].dur_ns : 0);
    for (size_t s = 0; s < r->nsteps; s++)
        r->steps[s].ts_ns = ts[s];
out:
    free(calls);
    free(ts);
}

/* A libtally report's steps by category (docs/analysis.md, "Step time by
 * category"): its companion trace has the loop's iterations with their times
 * and the sections, so the trace's session has them (stepcats.c); the
 * report, whose steps are the same iterations, takes them when the trace saw
 * every step: as many, each as long within TL_STEP_MATCH_NS or 0.1 %. A
 * trace cut short (TALLY_MAX_EVENTS) or of another run's loop lends none,
 * and the report's section says the steps have no categories. Each step's
 * "other" is made up to the report's length of it. */
static void lend_stepcats(tl_session *r, tl_session *c)
{
    if (r->nstepcats > 0 || c->nstepcats == 0 || c->nstepcats != c->nsteps || r->nsteps != c->nsteps)
        return;
    for (size_t s = 0; s < r->nsteps; s++) {
        int64_t d = r->steps[s].dur_ns, diff = c->steps[s].dur_ns - d;
        int64_t tol = d / 1000 > TL_STEP_MATCH_NS ? d / 1000 : TL_STEP_MATCH_NS;
        if (diff < -tol || diff > tol || c->stepcats[s].number != r->steps[s].number)
            return;
    }
    for (size_t s = 0; s < r->nsteps; s++) {
        tl_sstepcat *o = &c->stepcats[s];
        int64_t sum = 0;
        for (int k = 0; k < TL_SC_OTHER; k++)
            sum = tl_ns_add(sum, o->ns[k]);
        int64_t other = r->steps[s].dur_ns - sum;
        o->ns[TL_SC_OTHER] = other > 0 ? other : 0;
    }
    free(r->stepcats);
    r->stepcats = c->stepcats;
    r->nstepcats = c->nstepcats;
    r->stepcats_cut = c->stepcats_cut;
    c->stepcats = NULL;
    c->nstepcats = 0;
}

/* Move the names of c that r has none of (same group and name) to r. */
static void lend_names(tl_session *r, tl_session *c)
{
    size_t add = 0;
    for (size_t i = 0; i < c->nnames; i++)
        add += c->names[i].group != TL_GROUP_SECTIONS && c->names[i].group != TL_GROUP_ITERATIONS;
    if (add == 0)
        return;
    tl_sname *v = realloc(r->names, (r->nnames + add) * sizeof *v);
    if (v == NULL)
        return;
    r->names = v;
    size_t kept = 0;
    for (size_t i = 0; i < c->nnames; i++) {
        tl_sname *x = &c->names[i];
        int have = x->group == TL_GROUP_SECTIONS || x->group == TL_GROUP_ITERATIONS;
        for (size_t k = 0; k < r->nnames && !have; k++)
            have = r->names[k].group == x->group && strcmp(r->names[k].name, x->name) == 0;
        if (have)
            c->names[kept++] = *x;
        else
            r->names[r->nnames++] = *x;
    }
    c->nnames = kept;
}

/* A FramePack report holds its sections' totals, memory snapshots and
 * iteration times, no events; the PyTorch profiler trace its process wrote
 * beside it (profiling_results/trace.json) holds the operators, kernels,
 * GPU breakdown, shapes and devices. The report's session takes what it
 * lacks, so the folder reads as one process: the report's own sections and
 * steps stay its own (the trace covers only the profiler's window). */
static void lend_trace_analysis(tl_session *r, tl_session *c)
{
    lend_names(r, c);
    if (r->nkernels == 0 && c->nkernels > 0) {
        free(r->kernels);
        r->kernels = c->kernels;
        r->nkernels = c->nkernels;
        c->kernels = NULL;
        c->nkernels = 0;
    }
    if (!r->gpu.present && c->gpu.present) {
        free(r->gpu.streams);
        r->gpu = c->gpu;
        memset(&c->gpu, 0, sizeof c->gpu);
    }
    if (r->nshapes == 0 && c->nshapes > 0) {
        free(r->shapes);
        r->shapes = c->shapes;
        r->nshapes = c->nshapes;
        r->shapes_dropped_keys = c->shapes_dropped_keys;
        r->shapes_dropped_calls = c->shapes_dropped_calls;
        c->shapes = NULL;
        c->nshapes = 0;
    }
    if (r->device_name == NULL && c->device_name != NULL) {
        r->device_name = c->device_name;
        c->device_name = NULL;
    }
    if (r->ndevices == 0 && c->ndevices > 0) {
        free(r->devices);
        r->devices = c->devices;
        r->ndevices = c->ndevices;
        c->devices = NULL;
        c->ndevices = 0;
    }
    if (r->nmemops == 0 && c->nmemops > 0) {
        free(r->memops);
        r->memops = c->memops;
        r->nmemops = c->nmemops;
        r->memops_dropped = c->memops_dropped;
        r->memops_peak = c->memops_peak;
        c->memops = NULL;
        c->nmemops = 0;
    }
    r->graph_launches += c->graph_launches;
    r->graph_captures += c->graph_captures;
}

/* The collective instances of a report's companion trace, with their names
 * and windows, for "who waits for whom": a program timed with libtally that
 * names its collectives ("MPI_Allreduce", "gloo:all_reduce" sections) has
 * their instances in its trace only (the report keeps statistics). */
static void lend_collectives(tl_session *r, tl_session *c)
{
    if (r->ninsts > 0 || c->ninsts == 0)
        return;
    free(r->insts);
    for (size_t i = 0; i < r->ncoll_names; i++)
        free(r->coll_names[i]);
    free(r->coll_names);
    free(r->coll_windows);
    r->insts = c->insts;
    r->ninsts = c->ninsts;
    r->insts_dropped = c->insts_dropped;
    r->coll_names = c->coll_names;
    r->ncoll_names = c->ncoll_names;
    r->coll_windows = c->coll_windows;
    r->ncoll_windows = c->ncoll_windows;
    c->insts = NULL;
    c->coll_names = NULL;
    c->coll_windows = NULL;
    c->ninsts = c->ncoll_names = c->ncoll_windows = 0;
    c->insts_dropped = 0;
}

/* A libtally report has no events, so no timeline or memory series; its
 * companion trace (same process) has them. The report's session takes them
 * over, so the rank's timeline shows however the inputs were split (the two
 * may come from different partials: hence here, not when pairing). */
static int lend_to_reports(tl_session *v, size_t n, const tl_settle_hooks *hooks)
{
    for (size_t i = 0; i < n; i++) {
        tl_session *c = &v[i];
        if (c->id.companion_of == NULL)
            continue;
        for (size_t k = 0; k < n; k++) {
            tl_session *r = &v[k];
            if (r->id.companion_of != NULL || strcmp(r->id.path, c->id.companion_of) != 0)
                continue;
            /* both whole in memory from here on: what one lends the other is not on disk */
            if (hooks != NULL && hooks->keep_whole != NULL &&
                (hooks->keep_whole(hooks->ctx, r) != 0 || hooks->keep_whole(hooks->ctx, c) != 0))
                return -1;
            /* A report read from a partial holds empty arrays where a
             * report made from its profile holds none: freed, not dropped. */
            if (r->timeline.nlanes == 0 && c->timeline.nlanes > 0) {
                tl_timeline_release(&r->timeline);
                r->timeline = c->timeline;
                memset(&c->timeline, 0, sizeof c->timeline);
                if (r->id.format == TL_FMT_TALLY_REPORT)
                    place_report_steps(r, &r->timeline);
            }
            if (r->id.format == TL_FMT_TALLY_REPORT)
                lend_stepcats(r, c);
            /* FramePack's memory log is the report's own clock and the whole
             * run: its series, not the trace's profiler window, is the report's */
            if (c->id.format == TL_FMT_FRAMEPACK_MEMLOG && c->nmem > 0 && r->nmem > 0) {
                free(r->mem);
                r->mem = NULL;
                r->nmem = 0;
            }
            if (r->nmem == 0 && c->nmem > 0) {
                free(r->mem);
                r->mem = c->mem;
                r->nmem = c->nmem;
                c->mem = NULL;
                c->nmem = 0;
            }
            if (r->calltree.n == 0 && c->calltree.n > 0)
                tl_calltree_move(&r->calltree, &c->calltree);
            /* a memory timeline's categories at its peak (read_mem_timeline.h) */
            if (r->nsnaps == 0 && c->nsnaps > 0) {
                free(r->snaps);
                r->snaps = c->snaps;
                r->nsnaps = c->nsnaps;
                c->snaps = NULL;
                c->nsnaps = 0;
            }
            if (r->nmemcats == 0 && c->nmemcats > 0) { /* ... and over time */
                free(r->memcats);
                r->memcats = c->memcats;
                r->nmemcats = c->nmemcats;
                c->memcats = NULL;
                c->nmemcats = 0;
            }
            adopt_nesting(r, c);
            lend_collectives(r, c);
            if (r->id.format == TL_FMT_FRAMEPACK)
                lend_trace_analysis(r, c);
            break;
        }
    }
    return 0;
}

/* ---- 2. order ------------------------------------------------------------------------------- */

/* Sessions of their own by rank then start then path; the others last, by path. */
static int by_rank_start_path(const void *x, const void *y)
{
    const tl_session *a = x, *b = y;
    int ua = tl_identity_is_session(&a->id), ub = tl_identity_is_session(&b->id);
    if (ua != ub)
        return ua ? -1 : 1;
    if (!ua)
        return strcmp(a->id.path, b->id.path);
    if (a->id.rank != b->id.rank)
        return a->id.rank < b->id.rank ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return strcmp(a->id.path, b->id.path);
}

/* ---- 3. runs ------------------------------------------------------------------------------- */

static int format_family(int f)
{
    return f == TL_FMT_CHROME_TRACE ? TL_FMT_KINETO : f == TL_FMT_TALLY_TRACE ? TL_FMT_TALLY_REPORT : f;
}

typedef struct run_key {
    int world_size, family;
    const char *device;
    size_t sessions;
    int last_rank, last_abs;
    int64_t last_end, last_pid;
    const char *last_host;
    const char *first_path;
    int64_t t0, t1; /* the wall-clock span of its sessions on the wall clock */
    int timed;      /* t0, t1 hold one at least */
    int unranked;   /* a session's rank was given by input order (a guess) */
    char why[160];  /* why the last session tried did not join it */
} run_key;

/* Why session s (of a rank the run r already has) cannot be its next
 * session, or NULL when it can: one process records a rank's sessions one
 * after the other, so they share the device, the format, the host and the
 * pid, and each starts after the one before ended. Times are compared when
 * both are on the wall clock, or when both come from one process (then one
 * clock, whatever it is). */
static const char *not_next_session(run_key *r, const tl_session *s)
{
    if (r->family != format_family(s->id.format))
        return "format";
    if (r->device && s->device_name && strcmp(r->device, s->device_name) != 0)
        return "device";
    if (r->last_host && s->sys.hostname && strcmp(r->last_host, s->sys.hostname) != 0) {
        snprintf(r->why, sizeof r->why, "host %.60s, not %.60s", s->sys.hostname, r->last_host);
        return r->why;
    }
    if (r->last_pid > 0 && s->pid > 0 && r->last_pid != s->pid) {
        snprintf(r->why, sizeof r->why, "process %" PRId64 ", not %" PRId64, s->pid, r->last_pid);
        return r->why;
    }
    int one_clock = (r->last_abs && s->abs_time) || (r->last_pid > 0 && r->last_pid == s->pid);
    if (one_clock && s->start_ns < r->last_end)
        return "overlap";
    return NULL;
}

/* b - a for a <= b, INT64_MAX where it does not fit: a partial's times are
 * whatever its file says (start_ns = INT64_MIN), and a difference of two
 * times from different inputs must not overflow. */
static int64_t ns_after(int64_t b, int64_t a)
{
    int64_t d;
    return __builtin_sub_overflow(b, a, &d) ? INT64_MAX : d;
}

/* Why run r (number rn after renumbering) is not the analyzed run m (run 0),
 * in the words of the rule that split them: world size, device, format; a
 * rank both have, recorded by another host or process or at the same time;
 * else the time between them. */
static void run_why(const tl_session *v, size_t n, const run_key *r, int rn, const run_key *m, char *why, size_t size)
{
    if (r->world_size && m->world_size && r->world_size != m->world_size) {
        snprintf(why, size, "world size %d, not %d", r->world_size, m->world_size);
        return;
    }
    if (r->device && m->device && strcmp(r->device, m->device) != 0) {
        snprintf(why, size, "device %.60s, not %.60s", r->device, m->device);
        return;
    }
    if (r->family != m->family) {
        snprintf(why, size, "format %s, not %s", tl_format_name(r->family), tl_format_name(m->family));
        return;
    }
    /* The sessions come sorted by rank: a rank's sessions are one block, so
     * a rank both runs have is found in one pass. */
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && v[hi].id.rank == v[lo].id.rank; hi++)
            ;
        const tl_session *a = NULL, *b = NULL;
        for (size_t i = lo; i < hi; i++)
            if (tl_identity_is_session(&v[i].id)) {
                if (v[i].id.run == rn && a == NULL)
                    a = &v[i];
                else if (v[i].id.run == 0 && b == NULL)
                    b = &v[i];
            }
        if (a == NULL || b == NULL)
            continue;
        if (a->sys.hostname && b->sys.hostname && strcmp(a->sys.hostname, b->sys.hostname) != 0)
            snprintf(why, size, "rank %d on host %.60s, not %.60s", a->id.rank, a->sys.hostname, b->sys.hostname);
        else if (a->pid > 0 && b->pid > 0 && a->pid != b->pid)
            snprintf(why, size, "rank %d in process %" PRId64 ", not %" PRId64, a->id.rank, a->pid, b->pid);
        else
            snprintf(why, size, "its sessions overlap in time with the same ranks' sessions of the other run");
        return;
    }
    int64_t apart = r->timed && m->timed ? (r->t0 > m->t1   ? ns_after(r->t0, m->t1)
                                            : m->t0 > r->t1 ? ns_after(m->t0, r->t1)
                                                            : 0)
                                         : 0;
    double h = (double)apart / 3.6e12;
    if (h >= 48)
        snprintf(why, size, "recorded %.0f days %s it", h / 24, r->t0 > m->t1 ? "after" : "before");
    else if (h >= 1)
        snprintf(why, size, "recorded %.1f hours %s it", h, r->t0 > m->t1 ? "after" : "before");
    else if (apart > TL_UNRANKED_APART_NS && (r->unranked || m->unranked))
        snprintf(why, size,
                 "recorded %.1f s %s it, and no rank declared: inputs that did not record at the same time "
                 "are not ranks of one job",
                 (double)apart / 1e9, r->t0 > m->t1 ? "after" : "before");
    else
        snprintf(why, size, "its ranks' inputs could not be told apart from another run's");
}

/* How far session s [start, end] recorded from run r's sessions on the wall
 * clock (0 when they overlap), or -1 when either time is not on it. */
static int64_t time_apart(const run_key *r, const tl_session *s, int64_t end)
{
    if (!r->timed || !s->abs_time)
        return -1;
    return s->start_ns > r->t1 ? ns_after(s->start_ns, r->t1) : r->t0 > end ? ns_after(r->t0, end) : 0;
}

/* Which sessions belong together, before several inputs of one rank are
 * pooled as its sessions: the same declared world size everywhere; for a
 * second session of a rank, the same device and format family as the first,
 * starting after it ended on the wall clock (one process cannot record two
 * sessions at once); for a rank the run does not have yet, a recording
 * within TL_RUN_APART_NS of the run's (the ranks of one job record together:
 * HTA's trace_filter ranks 0 and 1 of a 128-GPU job, 0.5 ms apart, and
 * trace_compare's rank 1, 8 months before them, are two runs; not "the
 * closest in time": the sample pipeline runs its ranks one after the other,
 * and its baseline's rank 1 ends nearer the optimized run's rank 0 than it
 * starts after its own rank 0). The first run that takes it. Inputs that do
 * not belong form other runs; the run with
 * the most inputs is analyzed, the others are left out of the numbers and
 * named in a note (a warning, an error under --strict). Sessions come sorted. */
static void split_runs(tl_session *v, size_t nsessions, int pool, notes *nt)
{
    /* The run table grows with the inputs: a folder of many nightly runs
     * keeps each run apart (a fixed table once pooled every run past its
     * size into the last one, counts and totals x5 over 20 runs). */
    run_key *runs = NULL;
    int nruns = 0;
    size_t runs_cap = 0, beyond = 0;
    /* per run: its inputs and the first three of their paths, for the notes (one pass, not one per run) */
    size_t *count = NULL;
    char(*files)[400] = NULL;
    for (size_t i = 0; i < nsessions; i++) {
        tl_session *s = &v[i];
        s->id.run = 0;
        if (!tl_identity_is_session(&s->id))
            continue;
        int64_t end = tl_ns_add(s->start_ns, s->span_ns > 0 ? s->span_ns : 0);
        int k;
        for (k = 0; k < nruns; k++) {
            run_key *r = &runs[k];
            if (r->world_size && s->id.world_size && r->world_size != s->id.world_size)
                continue;
            /* Another session of a rank this run already has: it must be the
             * same kind of process (device, format) and come after it; a
             * rank it does not have must have recorded near its time. */
            /* Ranks by input order are a guess, and a guess never pools two
             * recordings that did not run together: without a declared rank
             * on either side, a rank joins only a run whose time it overlaps
             * (within TL_UNRANKED_APART_NS); two inference runs 39 s apart
             * were ranks 0 and 1 of one job, one a "straggler" */
            int unranked = r->unranked || s->id.rank_source == TL_RANK_ORDER;
            if (r->last_rank == s->id.rank
                    ? not_next_session(r, s) != NULL
                    : time_apart(r, s, end) > (unranked ? TL_UNRANKED_APART_NS : TL_RUN_APART_NS))
                continue;
            break;
        }
        if (k == nruns && nruns == TL_MAX_RUNS) {
            /* past the limit: a run of their own, left out, never pooled */
            s->id.run = TL_MAX_RUNS;
            beyond++;
            continue;
        }
        if (k == nruns) {
            if (tl_array_grow(&runs, (size_t)nruns, &runs_cap, sizeof *runs, 16) != 0) {
                nt->oom = 1;
                goto out;
            }
            runs[nruns++] = (run_key){ .world_size = s->id.world_size,
                                       .family = format_family(s->id.format),
                                       .device = s->device_name,
                                       .last_rank = -1,
                                       .first_path = s->id.path };
        }
        run_key *r = &runs[k];
        if (!r->world_size)
            r->world_size = s->id.world_size;
        if (!r->device)
            r->device = s->device_name;
        if (s->abs_time) {
            r->t0 = r->timed && r->t0 < s->start_ns ? r->t0 : s->start_ns;
            r->t1 = r->timed && r->t1 > end ? r->t1 : end;
            r->timed = 1;
        }
        r->sessions++;
        r->unranked |= s->id.rank_source == TL_RANK_ORDER;
        r->last_rank = s->id.rank;
        r->last_abs = s->abs_time;
        r->last_end = end;
        r->last_pid = s->pid;
        r->last_host = s->sys.hostname;
        s->id.run = k;
    }
    if (nruns <= 1)
        goto out;
    int main_run = 0;
    for (int k = 1; k < nruns; k++)
        if (runs[k].sessions > runs[main_run].sessions)
            main_run = k;
    /* renumber: the analyzed run is 0 */
    for (size_t i = 0; i < nsessions; i++)
        if (tl_identity_is_session(&v[i].id))
            v[i].id.run = v[i].id.run == main_run ? 0 : v[i].id.run + 1;
    count = calloc((size_t)nruns + 1, sizeof *count);
    files = calloc((size_t)nruns + 1, sizeof *files);
    if (count == NULL || files == NULL) {
        nt->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < nsessions; i++) {
        const tl_session *s = &v[i];
        if (!tl_identity_is_session(&s->id) || s->id.run == 0 || s->id.run > nruns)
            continue;
        int k = s->id.run - 1;
        size_t len = strlen(files[k]);
        if (count[k] < 3 && len < sizeof files[k])
            snprintf(files[k] + len, sizeof files[k] - len, "%s%s", count[k] ? ", " : "", s->id.path);
        count[k]++;
    }
    /* Each other run is named in a note of its own, up to TL_RUN_NOTES of
     * them; the rest are counted in one. */
    int noted = 0;
    size_t rest_runs = 0, rest_inputs = 0;
    for (int k = 0; k < nruns; k++) {
        if (k == main_run)
            continue;
        size_t n = count[k];
        if (noted == TL_RUN_NOTES) {
            rest_runs++;
            rest_inputs += n;
            continue;
        }
        noted++;
        char why[200];
        run_why(v, nsessions, &runs[k], k + 1, &runs[main_run], why, sizeof why);
        if (pool)
            add_note(nt,
                     "%zu input%s of a different run (%s) compared as later sessions of %s ranks, as "
                     "--sessions asks: %s%s",
                     n, n == 1 ? "" : "s", why, n == 1 ? "its" : "their", files[k], n > 3 ? ", ..." : "");
        else
            add_note(nt,
                     "%zu input%s of a different run (%s) left out of the numbers: %s%s; analyze %s on %s own "
                     "(the run analyzed includes %s)",
                     n, n == 1 ? "" : "s", why, files[k], n > 3 ? ", ..." : "", n == 1 ? "it" : "them",
                     n == 1 ? "its" : "their", runs[main_run].first_path);
    }
    if (rest_runs)
        add_note(nt, "%zu more runs (%zu inputs) %s (%d runs are named one by one, TL_RUN_NOTES)", rest_runs,
                 rest_inputs, pool ? "compared as later sessions, as --sessions asks" : "left out of the numbers",
                 TL_RUN_NOTES);
    if (pool)
        for (size_t i = 0; i < nsessions; i++)
            v[i].id.run = 0;
out:
    if (beyond)
        add_note(nt, "more than %d runs among the inputs: %zu inputs of further runs %s (TL_MAX_RUNS)", TL_MAX_RUNS,
                 beyond, pool ? "compared as later sessions, as --sessions asks" : "left out of the numbers");
    free(count);
    free(files);
    free(runs);
}

/* ---- 4. session numbers --------------------------------------------------------------------- */

/* Each session of its own is numbered among its rank's in its run, in the
 * sorted order (by start); the others are session 0. */
static void number_sessions(tl_session *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tl_identity *id = &v[i].id;
        id->session = 0;
        if (!tl_identity_is_session(id))
            continue;
        for (size_t k = i; k-- > 0;)
            if (tl_identity_is_session(&v[k].id) && v[k].id.run == id->run && v[k].id.rank == id->rank) {
                id->session = v[k].id.session + 1;
                break;
            } else if (v[k].id.rank != id->rank) {
                break;
            }
    }
}

/* ---- 5. notes on ranks -------------------------------------------------------------------- */

int tl_missing_ranks(const int *ranks, size_t n, int world, char *buf, size_t size)
{
    size_t present = 0, beyond = 0, len = 0;
    buf[0] = '\0';
    if (world <= 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (ranks[i] < world)
            present++;
        else
            beyond++;
    }
    if (present < (size_t)world) {
        /* the gaps between the ranks present (sorted): O(R), whatever the world size */
        char list[200] = "";
        size_t llen = 0, shown = 0;
        int prev = -1;
        for (size_t k = 0; k <= n && shown < 8; k++) {
            int cur = k < n && ranks[k] < world ? ranks[k] : world;
            if (cur > prev + 1 && llen < sizeof list) {
                llen += (size_t)(cur - 1 > prev + 1
                                     ? snprintf(list + llen, sizeof list - llen, "%s%d-%d", shown ? ", " : "", prev + 1,
                                                cur - 1)
                                     : snprintf(list + llen, sizeof list - llen, "%s%d", shown ? ", " : "", prev + 1));
                shown++;
            }
            if (cur == world)
                break;
            prev = cur;
        }
        len += (size_t)snprintf(buf, size, "%zu of %d ranks present (world size %d): missing rank%s %s%s", present,
                                world, world, world - (int)present == 1 ? "" : "s", list, shown == 8 ? ", ..." : "");
    }
    if (beyond && len < size)
        snprintf(buf + len, size - len, "%s%zu rank%s numbered at or beyond the world size %d", len ? "; " : "", beyond,
                 beyond == 1 ? "" : "s", world);
    return buf[0] != '\0';
}

/* The ranks the counted sessions hold (each once, ascending: the sessions
 * are sorted) against the largest world size they declare. */
static void missing_ranks(const tl_session *v, size_t n, notes *nt)
{
    int world = 0, *ranks = malloc((n + 1) * sizeof *ranks);
    size_t nranks = 0;
    if (ranks == NULL) {
        nt->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!tl_identity_counts(&v[i].id))
            continue;
        if (nranks == 0 || ranks[nranks - 1] != v[i].id.rank)
            ranks[nranks++] = v[i].id.rank;
        if (v[i].id.world_size > world)
            world = v[i].id.world_size;
    }
    char text[400];
    if (tl_missing_ranks(ranks, nranks, world, text, sizeof text))
        add_note(nt, "%s", text);
    free(ranks);
}

/* One run gives every input without a rank a rank of its own; two sessions
 * of one rank that both got it from the input order were numbered apart, in
 * partials aggregated separately (`tally aggregate --partial` per file) and
 * merged: nothing says they are one rank. Said, not guessed away. */
static int order_ranked(const tl_session *s)
{
    return tl_identity_counts(&s->id) && s->id.rank_source == TL_RANK_ORDER;
}

static void order_ranks(const tl_session *v, size_t n, notes *nt)
{
    size_t inputs = 0, ranks = 0;
    int first = -1;
    for (size_t i = 0; i < n; i++) {
        const tl_session *s = &v[i];
        if (!order_ranked(s))
            continue;
        int prev = i > 0 && order_ranked(&v[i - 1]) && v[i - 1].id.rank == s->id.rank;
        int next = i + 1 < n && order_ranked(&v[i + 1]) && v[i + 1].id.rank == s->id.rank;
        if (!prev && !next)
            continue;
        inputs++;
        if (!prev && ranks++ == 0)
            first = s->id.rank;
    }
    if (inputs)
        add_note(nt,
                 "%zu inputs share a rank only by input order (rank %d%s): partials aggregated apart each "
                 "numbered their unranked inputs from 0, so these are pooled as sessions of one rank; name the "
                 "files by rank (rank3, rank_3/) or aggregate them in one run",
                 inputs, first, ranks > 1 ? " and others" : "");
}

int tl_sessions_settle(tl_session *v, size_t n, int pool, char ***out, size_t *nout, const tl_settle_hooks *hooks)
{
    notes nt = { out, nout, 0 };
    if (pair_split_companions(v, n) != 0 || lend_to_reports(v, n, hooks) != 0)
        return -1;
    if (n > 1)
        qsort(v, n, sizeof *v, by_rank_start_path);
    split_runs(v, n, pool, &nt);
    number_sessions(v, n);
    missing_ranks(v, n, &nt);
    order_ranks(v, n, &nt);
    return nt.oom ? -1 : 0;
}
