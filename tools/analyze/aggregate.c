/*
 * aggregate.c - session results into per-rank results and the across-rank
 * view (see aggregate.h). Everything here is a function of the set of
 * sessions: they are sorted first, so the order they arrived in (one run,
 * or partials merged in any order) does not matter.
 */
#define _GNU_SOURCE
#include "aggregate.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_aggregate_init(tl_aggregate *a, const tl_analyze_options *opt)
{
    memset(a, 0, sizeof *a);
    if (opt)
        a->opt = *opt;
    else
        tl_analyze_options_init(&a->opt);
}

static void release_derived(tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks; i++) {
        free(a->ranks[i].sessions);
        free(a->ranks[i].steps);
        free(a->ranks[i].gpu.streams);
        tl_calltree_release(&a->ranks[i].own_calltree);
    }
    tl_calltree_release(&a->calltree);
    a->calltree_ranks = 0;
    free(a->ranks);
    a->ranks = NULL;
    a->nranks = 0;
    tl_name_table_release(&a->names);
    for (int i = 0; i < a->nstragglers; i++) {
        free(a->stragglers[i].kind);
        free(a->stragglers[i].summary);
        for (int k = 0; k < a->stragglers[i].nitems; k++)
            free(a->stragglers[i].items[k].name);
    }
    a->nstragglers = 0;
    for (int i = 0; i < a->nrecs; i++) {
        free(a->recs[i].message);
        free(a->recs[i].finding);
        free(a->recs[i].evidence);
    }
    a->nrecs = 0;
    for (int i = 0; i < a->nskips; i++)
        free(a->skips[i].why);
    a->nskips = 0;
    free(a->straggler_note);
    free(a->headline);
    a->straggler_note = a->headline = NULL;
    a->steps_compared = 0;
    for (size_t i = 0; i < a->nnotes; i++)
        free(a->notes[i]);
    free(a->notes);
    a->notes = NULL;
    a->nnotes = 0;
    a->nacross = 0;
    tl_drift_release(&a->drift);
}

void tl_aggregate_release(tl_aggregate *a)
{
    release_derived(a);
    for (size_t i = 0; i < a->nsessions; i++)
        tl_session_release(&a->sessions[i]);
    free(a->sessions);
    memset(a, 0, sizeof *a);
}

int tl_aggregate_add_session(tl_aggregate *a, tl_session *s)
{
    if (a->nsessions == a->sessions_cap) {
        size_t cap = a->sessions_cap ? a->sessions_cap * 2 : 16;
        tl_session *x = realloc(a->sessions, cap * sizeof *x);
        if (x == NULL)
            return -1;
        a->sessions = x;
        a->sessions_cap = cap;
    }
    a->sessions[a->nsessions++] = *s;
    memset(s, 0, sizeof *s);
    return 0;
}

int tl_aggregate_add_partial(tl_aggregate *a, tl_partial *p, char *err, size_t errlen)
{
    if (p->has_options) {
        if (a->nsessions > 0 &&
            (p->whole_trace != a->opt.whole_trace || p->kernel_wait_ns != a->opt.kernel_wait_ns)) {
            snprintf(err, errlen, "analyzed with other options (window, kernel wait) than the inputs before it");
            return -1;
        }
        a->opt.whole_trace = p->whole_trace;
        a->opt.kernel_wait_ns = p->kernel_wait_ns;
    }
    for (size_t i = 0; i < p->nsessions; i++)
        if (p->sessions[i].path != NULL && tl_aggregate_add_session(a, &p->sessions[i]) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    tl_partial_release(p);
    return 0;
}

/* A session that counts: read as a profile, not a companion of another input,
 * of the run analyzed. */
static int counts(const tl_session *s)
{
    return s->rank >= 0 && s->companion_of == NULL && s->run == 0;
}

/* ---- run identity ------------------------------------------------------------------ */

#define TL_MAX_RUNS 16 /* distinct runs told apart; more join the last one (said in the note) */

static int format_family(int f)
{
    return f == TL_FMT_CHROME_TRACE ? TL_FMT_KINETO : f == TL_FMT_TALLY_TRACE ? TL_FMT_TALLY_REPORT : f;
}

typedef struct run_key {
    int world_size, family;
    const char *device;
    size_t sessions;
    int last_rank, last_abs, last_session;
    int64_t last_end, last_pid;
    const char *last_host;
    const char *first_path, *first_host;
    int64_t first_pid;
    char why[160];             /* why the last session tried did not join it */
} run_key;

/* Why session s (of a rank the run r already has) cannot be its next
 * session, or NULL when it can: one process records a rank's sessions one
 * after the other, so they share the device, the format, the host and the
 * pid, and each starts after the one before ended. Times are compared when
 * both are on the wall clock, or when both come from one process (then one
 * clock, whatever it is). */
static const char *not_next_session(run_key *r, const tl_session *s)
{
    if (r->family != format_family(s->format))
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

char *tl_vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *tl_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = tl_vformat(fmt, ap);
    va_end(ap);
    return s;
}

static void add_note(tl_aggregate *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(tl_aggregate *a, const char *fmt, ...)
{
    char **x = realloc(a->notes, (a->nnotes + 1) * sizeof *x);
    if (x == NULL)
        return;
    a->notes = x;
    va_list ap;
    va_start(ap, fmt);
    a->notes[a->nnotes] = tl_vformat(fmt, ap);
    va_end(ap);
    if (a->notes[a->nnotes])
        a->nnotes++;
}

/* Which sessions belong together, before several inputs of one rank are
 * pooled as its sessions: the same declared world size everywhere; and for a
 * second session of a rank, the same device and format family as the first,
 * starting after it ended on the wall clock (one process cannot record two
 * sessions at once). Inputs that do not belong form other runs; the run with
 * the most inputs is analyzed, the others are left out of the numbers and
 * named in a note (a warning, an error under --strict). */
static void run_identity(tl_aggregate *a)
{
    run_key runs[TL_MAX_RUNS];
    int nruns = 0, joined = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        tl_session *s = &a->sessions[i];
        s->run = 0;
        if (s->rank < 0 || s->companion_of != NULL)
            continue;
        int64_t end = s->start_ns + (s->span_ns > 0 ? s->span_ns : 0);
        int k;
        for (k = 0; k < nruns; k++) {
            run_key *r = &runs[k];
            if (r->world_size && s->world_size && r->world_size != s->world_size)
                continue;
            /* Another session of a rank this run already has: it must be the
             * same kind of process (device, format) and come after it. */
            if (r->last_rank == s->rank && not_next_session(r, s) != NULL)
                continue;
            break;
        }
        if (k == nruns) {
            if (nruns == TL_MAX_RUNS) {
                k = nruns - 1;
                joined++;
            } else {
                runs[nruns++] = (run_key){ .world_size = s->world_size, .family = format_family(s->format),
                                           .device = s->device_name, .last_rank = -1, .first_path = s->path,
                                           .first_host = s->sys.hostname, .first_pid = s->pid };
            }
        }
        run_key *r = &runs[k];
        if (!r->world_size)
            r->world_size = s->world_size;
        if (!r->device)
            r->device = s->device_name;
        r->sessions++;
        /* sessions numbered within their run (build_ranks renumbers the
         * analyzed run's; the others keep these, whatever the input order) */
        r->last_session = r->last_rank == s->rank ? r->last_session + 1 : 0;
        s->session = r->last_session;
        r->last_rank = s->rank;
        r->last_abs = s->abs_time;
        r->last_end = end;
        r->last_pid = s->pid;
        r->last_host = s->sys.hostname;
        s->run = k;
    }
    if (nruns <= 1)
        return;
    int main_run = 0;
    for (int k = 1; k < nruns; k++)
        if (runs[k].sessions > runs[main_run].sessions)
            main_run = k;
    /* renumber: the analyzed run is 0 */
    for (size_t i = 0; i < a->nsessions; i++) {
        tl_session *s = &a->sessions[i];
        if (s->rank < 0 || s->companion_of != NULL)
            continue;
        s->run = s->run == main_run ? 0 : s->run + 1;
    }
    int pool = a->opt.sessions_across_runs;
    for (int k = 0; k < nruns; k++) {
        if (k == main_run)
            continue;
        char files[400] = "";
        size_t len = 0, n = 0;
        for (size_t i = 0; i < a->nsessions; i++) {
            const tl_session *s = &a->sessions[i];
            if (s->run != k + 1 || s->rank < 0 || s->companion_of != NULL)
                continue;
            if (n < 3 && len < sizeof files)
                len += (size_t)snprintf(files + len, sizeof files - len, "%s%s", n ? ", " : "", s->path);
            n++;
        }
        const run_key *r = &runs[k], *m = &runs[main_run];
        char why[200];
        if (r->world_size && m->world_size && r->world_size != m->world_size)
            snprintf(why, sizeof why, "world size %d, not %d", r->world_size, m->world_size);
        else if (r->device && m->device && strcmp(r->device, m->device) != 0)
            snprintf(why, sizeof why, "device %.60s, not %.60s", r->device, m->device);
        else if (r->family != m->family)
            snprintf(why, sizeof why, "format %s, not %s", tl_format_name(r->family), tl_format_name(m->family));
        else if (r->first_host && m->first_host && strcmp(r->first_host, m->first_host) != 0)
            snprintf(why, sizeof why, "host %.60s, not %.60s", r->first_host, m->first_host);
        else if (r->first_pid > 0 && m->first_pid > 0 && r->first_pid != m->first_pid)
            snprintf(why, sizeof why, "process %" PRId64 ", not %" PRId64, r->first_pid, m->first_pid);
        else
            snprintf(why, sizeof why, "its sessions overlap in time with the same ranks' sessions of the other run");
        if (pool)
            add_note(a, "%zu input%s of a different run (%s) compared as later sessions of %s ranks, as "
                        "--sessions asks: %s%s",
                     n, n == 1 ? "" : "s", why, n == 1 ? "its" : "their", files, n > 3 ? ", ..." : "");
        else
            add_note(a, "%zu input%s of a different run (%s) left out of the numbers: %s%s; analyze %s on %s own "
                        "(the run analyzed includes %s)",
                     n, n == 1 ? "" : "s", why, files, n > 3 ? ", ..." : "", n == 1 ? "it" : "them",
                     n == 1 ? "its" : "their", m->first_path);
    }
    if (pool)
        for (size_t i = 0; i < a->nsessions; i++)
            a->sessions[i].run = 0;
    if (joined)
        add_note(a, "more than %d runs among the inputs: %d inputs were put with the last one (TL_MAX_RUNS)",
                 TL_MAX_RUNS, joined);
}

/* "1 of 8 ranks present": the ranks a declared world size promises. */
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
                                     ? snprintf(list + llen, sizeof list - llen, "%s%d-%d", shown ? ", " : "", prev + 1, cur - 1)
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
        snprintf(buf + len, size - len, "%s%zu rank%s numbered at or beyond the world size %d", len ? "; " : "",
                 beyond, beyond == 1 ? "" : "s", world);
    return buf[0] != '\0';
}

/* One run gives every input without a rank a rank of its own; two sessions
 * of one rank that both got it from the input order were numbered apart, in
 * partials aggregated separately (`tally aggregate --partial` per file) and
 * merged: nothing says they are one rank. Said, not guessed away. */
static int order_ranked(const tl_session *s)
{
    return counts(s) && s->rank_source == TL_RANK_ORDER;
}

static void order_ranks(tl_aggregate *a)
{
    size_t inputs = 0, ranks = 0;
    int first = -1;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (!order_ranked(s))
            continue;
        int prev = i > 0 && order_ranked(&a->sessions[i - 1]) && a->sessions[i - 1].rank == s->rank;
        int next = i + 1 < a->nsessions && order_ranked(&a->sessions[i + 1]) && a->sessions[i + 1].rank == s->rank;
        if (!prev && !next)
            continue;
        inputs++;
        if (!prev && ranks++ == 0)
            first = s->rank;
    }
    if (inputs)
        add_note(a, "%zu inputs share a rank only by input order (rank %d%s): partials aggregated apart each "
                    "numbered their unranked inputs from 0, so these are pooled as sessions of one rank; name the "
                    "files by rank (rank3, rank_3/) or aggregate them in one run",
                 inputs, first, ranks > 1 ? " and others" : "");
}

static void missing_ranks(tl_aggregate *a)
{
    int world = 0;
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].world_size > world)
            world = a->ranks[i].world_size;
    int *ranks = malloc((a->nranks + 1) * sizeof *ranks);
    if (ranks == NULL)
        return;
    for (size_t i = 0; i < a->nranks; i++)
        ranks[i] = a->ranks[i].rank;
    char text[400];
    if (tl_missing_ranks(ranks, a->nranks, world, text, sizeof text))
        add_note(a, "%s", text);
    free(ranks);
}

/* Usable sessions by rank then start then path; the others last, by path. */
static int by_rank_start_path(const void *x, const void *y)
{
    const tl_session *a = x, *b = y;
    int ua = counts(a), ub = counts(b);
    if (ua != ub)
        return ua ? -1 : 1;
    if (!ua)
        return strcmp(a->path, b->path);
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return strcmp(a->path, b->path);
}

static void take_max(double *acc, double v)
{
    if (isfinite(v) && !(v <= *acc))
        *acc = v;
}

static void add_gpu(tl_gpu_breakdown *dst, const tl_gpu_breakdown *src)
{
    if (!src->present)
        return;
    if (!dst->present) {
        dst->whole_trace = src->whole_trace;
        dst->window_start = src->window_start;
        dst->window_end = src->window_end;
    }
    dst->present = 1;
    dst->whole_trace = dst->whole_trace && src->whole_trace;
    dst->steps_in_window = src->steps_in_window > INT32_MAX - dst->steps_in_window ? INT32_MAX
                                                                                   : dst->steps_in_window + src->steps_in_window;
    dst->events += src->events;
    dst->kernel_time = tl_ns_add(dst->kernel_time, src->kernel_time);
    dst->busy = tl_ns_add(dst->busy, src->busy);
    dst->idle = tl_ns_add(dst->idle, src->idle);
    dst->compute = tl_ns_add(dst->compute, src->compute);
    dst->non_compute = tl_ns_add(dst->non_compute, src->non_compute);
    dst->comm = tl_ns_add(dst->comm, src->comm);
    dst->comm_compute = tl_ns_add(dst->comm_compute, src->comm_compute);
    for (int m = 0; m < 8; m++)
        dst->by_mask[m] = tl_ns_add(dst->by_mask[m], src->by_mask[m]);
    dst->blocked_idle = tl_ns_add(dst->blocked_idle, src->blocked_idle);
    if (src->blocking_call_ns > dst->blocking_call_ns) {
        dst->blocking_call_ns = src->blocking_call_ns;
        memcpy(dst->blocking_call, src->blocking_call, sizeof dst->blocking_call);
    }
    for (size_t i = 0; i < src->nstreams; i++) {
        const tl_stream_idle *si = &src->streams[i];
        size_t k;
        for (k = 0; k < dst->nstreams; k++)
            if (dst->streams[k].device == si->device && dst->streams[k].stream == si->stream)
                break;
        if (k == dst->nstreams) {
            tl_stream_idle *x = realloc(dst->streams, (dst->nstreams + 1) * sizeof *x);
            if (x == NULL)
                continue;
            dst->streams = x;
            memset(&dst->streams[k], 0, sizeof *x);
            dst->streams[k].device = si->device;
            dst->streams[k].stream = si->stream;
            dst->nstreams++;
        }
        dst->streams[k].host_wait = tl_ns_add(dst->streams[k].host_wait, si->host_wait);
        dst->streams[k].kernel_wait = tl_ns_add(dst->streams[k].kernel_wait, si->kernel_wait);
        dst->streams[k].other = tl_ns_add(dst->streams[k].other, si->other);
        dst->streams[k].gaps += si->gaps;
        dst->streams[k].host_gaps += si->host_gaps;
        dst->streams[k].busy = tl_ns_add(dst->streams[k].busy, si->busy);
    }
}

static int by_stream(const void *x, const void *y)
{
    const tl_stream_idle *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* Step statistics of a rank: its steps, else its main loop's summary. */
static void rank_steps(tl_aggregate *a, tl_rank_result *r)
{
    r->step_mean = r->step_median = r->step_min = r->step_max = r->step_std = r->step_spread = NAN;
    r->compute_per_step = NAN;
    r->step_count = r->nsteps;
    r->steps_summarized = 0;
    if (r->nsteps > 0) {
        double *v = malloc(r->nsteps * sizeof *v);
        double *c = malloc(r->nsteps * sizeof *c);
        if (v == NULL || c == NULL) {
            free(v);
            free(c);
            return;
        }
        double sum = 0;
        size_t nc = 0;
        for (size_t i = 0; i < r->nsteps; i++) {
            v[i] = (double)r->steps[i].dur_ns;
            sum += v[i];
            if (r->steps[i].compute_ns >= 0)
                c[nc++] = (double)r->steps[i].compute_ns;
        }
        r->step_mean = sum / (double)r->nsteps;
        double ss = 0;
        for (size_t i = 0; i < r->nsteps; i++)
            ss += (v[i] - r->step_mean) * (v[i] - r->step_mean);
        r->step_std = r->nsteps > 1 ? sqrt(ss / (double)(r->nsteps - 1)) : 0;
        r->step_median = tl_median_sort(v, r->nsteps);
        r->step_min = v[0];
        r->step_max = v[r->nsteps - 1];
        if (nc)
            r->compute_per_step = tl_median_sort(c, nc);
        free(v);
        free(c);
    } else {
        /* A report with a loop summary but no samples (FramePack). */
        const tl_sname *loop = NULL;
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_session *s = &a->sessions[r->sessions[k]];
            for (size_t i = 0; i < s->nnames; i++)
                if (s->names[i].group == TL_GROUP_ITERATIONS &&
                    (loop == NULL || s->names[i].d.total > loop->d.total))
                    loop = &s->names[i];
        }
        if (loop == NULL || loop->d.count == 0)
            return;
        r->step_count = loop->d.count;
        r->steps_summarized = 1;
        r->step_mean = loop->d.mean;
        r->step_min = (double)loop->d.min;
        r->step_max = (double)loop->d.max;
        r->step_median = loop->exact ? tl_dur_stat_quantile(&loop->d, 0.5) : loop->median_ns;
        r->step_std = loop->exact ? tl_dur_stat_std(&loop->d) : loop->std_ns;
    }
    if (isfinite(r->step_median) && r->step_median > 0)
        r->step_spread = (r->step_max - r->step_min) / r->step_median;
}

static int build_ranks(tl_aggregate *a)
{
    size_t usable = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        usable += counts(&a->sessions[i]);
    a->ranks = calloc(usable ? usable : 1, sizeof *a->ranks);
    if (a->ranks == NULL)
        return -1;
    for (size_t i = 0; i < a->nsessions; i++) {
        tl_session *s = &a->sessions[i];
        if (!counts(s))
            continue;
        if (a->nranks == 0 || a->ranks[a->nranks - 1].rank != s->rank) {
            tl_rank_result *r = &a->ranks[a->nranks++];
            r->rank = s->rank;
            r->peak_allocated = r->peak_reserved = r->device_total = r->peak_rss = r->gpu_util_mean = NAN;
            r->peak_device_used = NAN;
            r->span_ns = 0;
            tl_rank_telemetry_init(&r->tel);
            tl_rank_diffusion_init(&r->diff);
        }
        tl_rank_result *r = &a->ranks[a->nranks - 1];
        s->session = (int)r->nsessions;
        /* Keep each block as soon as its realloc succeeds: when one failed after
         * the other had moved its block, the old pointer was left in r and
         * release_derived freed it a second time. */
        size_t *x = realloc(r->sessions, (r->nsessions + 1) * sizeof *x);
        if (x == NULL)
            return -1;
        r->sessions = x;
        tl_sstep *st = realloc(r->steps, (r->nsteps + s->nsteps + 1) * sizeof *st);
        if (st == NULL)
            return -1;
        r->steps = st;
        r->sessions[r->nsessions++] = i;
        if (s->nsteps > 0) /* s->steps is NULL without steps: memcpy from NULL is undefined (UBSan) */
            memcpy(r->steps + r->nsteps, s->steps, s->nsteps * sizeof *st);
        r->nsteps += s->nsteps;
        if (s->world_size > r->world_size)
            r->world_size = s->world_size;
        add_gpu(&r->gpu, &s->gpu);
        take_max(&r->peak_allocated, s->peak_allocated);
        take_max(&r->peak_reserved, s->peak_reserved);
        take_max(&r->device_total, s->device_total);
        take_max(&r->peak_rss, s->peak_rss);
        take_max(&r->peak_device_used, s->peak_device_used);
        take_max(&r->gpu_util_mean, s->gpu_util_mean);
        tl_rank_telemetry_add(&r->tel, s->series, s->nseries);
        tl_rank_diffusion_add(&r->diff, &s->diff);
        if (s->span_ns > 0)
            r->span_ns = tl_ns_add(r->span_ns, s->span_ns);
    }
    for (size_t i = 0; i < a->nranks; i++) {
        tl_rank_result *r = &a->ranks[i];
        if (r->gpu.nstreams > 1)
            qsort(r->gpu.streams, r->gpu.nstreams, sizeof *r->gpu.streams, by_stream);
        rank_steps(a, r);
        tl_rank_telemetry_finish(&r->tel);
        tl_rank_diffusion_finish(&r->diff);
    }
    return 0;
}

static int build_names(tl_aggregate *a)
{
    int *ranks = malloc((a->nranks + 1) * sizeof *ranks);
    if (ranks == NULL)
        return -1;
    for (size_t i = 0; i < a->nranks; i++)
        ranks[i] = a->ranks[i].rank;
    int rc = tl_name_table_begin(&a->names, ranks, (int)a->nranks);
    free(ranks);
    for (size_t i = 0; rc == 0 && i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (!counts(s))
            continue;
        /* Kernels come from the GPU window, so they add up to the breakdown;
         * the whole-trace kernel statistics are used only without GPU analysis. */
        int windowed = s->gpu.present;
        for (size_t k = 0; rc == 0 && k < s->nnames; k++)
            if (!(windowed && s->names[k].group == TL_GROUP_KERNELS))
                rc = tl_name_table_add_nested(&a->names, s->rank, s->names[k].group, s->names[k].name,
                                              &s->names[k].d, s->names[k].exact, s->names[k].incl_ns,
                                              s->names[k].self_ns);
        for (size_t k = 0; rc == 0 && windowed && k < s->nkernels; k++)
            rc = tl_name_table_add(&a->names, s->rank, TL_GROUP_KERNELS, s->kernels[k].name, &s->kernels[k].d, 1);
    }
    return rc == 0 ? tl_name_table_end(&a->names) : rc;
}

double tl_pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Add the across-rank summary of one metric (NaN values are skipped). */
void tl_aggregate_across_values(tl_aggregate *a, const char *metric, const double *vals)
{
    if (a->nacross == TL_MAX_ACROSS)
        return;
    double *v = malloc((a->nranks + 1) * sizeof *v);
    if (v == NULL)
        return;
    tl_across *x = &a->across[a->nacross];
    memset(x, 0, sizeof *x);
    x->metric = metric;
    double sum = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        double val = vals[i];
        if (!isfinite(val))
            continue;
        if (x->n == 0 || val < x->min) {
            x->min = val;
            x->min_rank = a->ranks[i].rank;
        }
        if (x->n == 0 || val > x->max) {
            x->max = val;
            x->max_rank = a->ranks[i].rank;
        }
        v[x->n++] = val;
        sum += val;
    }
    if (x->n > 0) {
        x->mean = sum / x->n;
        double ss = 0;
        for (int i = 0; i < x->n; i++)
            ss += (v[i] - x->mean) * (v[i] - x->mean);
        x->std = x->n > 1 ? sqrt(ss / (x->n - 1)) : 0;
        x->median = tl_median_sort(v, (size_t)x->n);
        x->imbalance = x->mean > 0 ? x->max / x->mean : 1.0;
        a->nacross++;
    }
    free(v);
}

static void across(tl_aggregate *a, const char *metric, double (*get)(const tl_rank_result *))
{
    double *v = malloc((a->nranks + 1) * sizeof *v);
    if (v == NULL)
        return;
    for (size_t i = 0; i < a->nranks; i++)
        v[i] = get(&a->ranks[i]);
    tl_aggregate_across_values(a, metric, v);
    free(v);
}

static double m_step_mean(const tl_rank_result *r) { return r->step_mean; }
static double m_step_median(const tl_rank_result *r) { return r->step_median; }
static double m_compute_step(const tl_rank_result *r) { return r->compute_per_step; }
static double m_span(const tl_rank_result *r) { return r->span_ns > 0 ? (double)r->span_ns : NAN; }
static double m_kernel_time(const tl_rank_result *r) { return r->gpu.present ? (double)r->gpu.kernel_time : NAN; }
static double m_idle_pct(const tl_rank_result *r) { return r->gpu.present ? tl_pct(r->gpu.idle, r->gpu.kernel_time) : NAN; }
static double m_compute_pct(const tl_rank_result *r) { return r->gpu.present ? tl_pct(r->gpu.compute, r->gpu.kernel_time) : NAN; }
static double m_noncompute_pct(const tl_rank_result *r) { return r->gpu.present ? tl_pct(r->gpu.non_compute, r->gpu.kernel_time) : NAN; }
static double m_overlap_pct(const tl_rank_result *r) { return r->gpu.present && r->gpu.comm > 0 ? tl_pct(r->gpu.comm_compute, r->gpu.comm) : NAN; }
static double m_comm_pct(const tl_rank_result *r) { return r->gpu.present ? tl_pct(r->gpu.comm, r->gpu.kernel_time) : NAN; }
static double m_peak_alloc(const tl_rank_result *r) { return r->peak_allocated; }

double tl_rank_peak_device_pct(const tl_rank_result *r)
{
    double peak = NAN;
    take_max(&peak, r->peak_allocated);
    take_max(&peak, r->peak_reserved);
    take_max(&peak, r->peak_device_used);
    if (!isfinite(peak) || !isfinite(r->device_total) || r->device_total <= 0)
        return NAN;
    return 100 * peak / r->device_total;
}
static double m_peak_resv(const tl_rank_result *r) { return r->peak_reserved; }
static double m_peak_used(const tl_rank_result *r) { return r->peak_device_used; }

const tl_across *tl_aggregate_across(const tl_aggregate *a, const char *metric)
{
    for (int i = 0; i < a->nacross; i++)
        if (strcmp(a->across[i].metric, metric) == 0)
            return &a->across[i];
    return NULL;
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

/* A libtally report has no events, so no timeline or memory series; its
 * companion trace (same process) has them. The report's session takes them
 * over, so the rank's timeline shows however the inputs were split. */
static void adopt_companion_timelines(tl_aggregate *a)
{
    for (size_t i = 0; i < a->nsessions; i++) {
        tl_session *c = &a->sessions[i];
        if (c->companion_of == NULL || (c->timeline.nlanes == 0 && c->nmem == 0 && c->calltree.n == 0))
            continue;
        for (size_t k = 0; k < a->nsessions; k++) {
            tl_session *r = &a->sessions[k];
            if (r->companion_of != NULL || strcmp(r->path, c->companion_of) != 0)
                continue;
            if (r->timeline.nlanes == 0 && c->timeline.nlanes > 0) {
                r->timeline = c->timeline;
                memset(&c->timeline, 0, sizeof c->timeline);
            }
            if (r->nmem == 0 && c->nmem > 0) {
                r->mem = c->mem;
                r->nmem = c->nmem;
                c->mem = NULL;
                c->nmem = 0;
            }
            if (r->calltree.n == 0 && c->calltree.n > 0)
                tl_calltree_move(&r->calltree, &c->calltree);
            adopt_nesting(r, c);
            break;
        }
    }
}

int tl_aggregate_finish(tl_aggregate *a)
{
    release_derived(a);
    adopt_companion_timelines(a);
    if (a->nsessions > 1)
        qsort(a->sessions, a->nsessions, sizeof *a->sessions, by_rank_start_path);
    run_identity(a);
    if (build_ranks(a) != 0 || build_names(a) != 0 || tl_aggregate_calltrees(a) != 0)
        return -1;
    missing_ranks(a);
    order_ranks(a);
    across(a, "step_time_ns", m_step_mean);
    across(a, "step_median_ns", m_step_median);
    across(a, "compute_per_step_ns", m_compute_step);
    across(a, "span_ns", m_span);
    across(a, "gpu.kernel_time_ns", m_kernel_time);
    across(a, "gpu.idle_pct", m_idle_pct);
    across(a, "gpu.compute_pct", m_compute_pct);
    across(a, "gpu.non_compute_pct", m_noncompute_pct);
    across(a, "gpu.comm_pct", m_comm_pct);
    across(a, "gpu.comm_comp_overlap_pct", m_overlap_pct);
    across(a, "memory.peak_allocated_bytes", m_peak_alloc);
    across(a, "memory.peak_reserved_bytes", m_peak_resv);
    across(a, "memory.peak_device_used_bytes", m_peak_used);
    tl_telemetry_across(a);
    tl_diffusion_across(a);
    if (tl_drift_compute(&a->drift, a) != 0)
        return -1;
    tl_find_stragglers(a);
    tl_apply_rules(a);
    return 0;
}
