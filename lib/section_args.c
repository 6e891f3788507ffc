/*
 * section_args.c - metadata of a section (tally_begin_args, tally_section_args):
 * a JSON object attached to one occurrence of a section, as Inferix's stages
 * and Kineto's operators carry theirs (a resolution, a batch size, a model
 * variant).
 *
 * The one idea: the begin/end pair stays what it is (no argument slot on the
 * hot path). The metadata is kept beside it, under the global lock like an
 * event: the section's name and start (read from the calling thread's own
 * stack of open sections), the thread and the JSON text. The report lists
 * them (section_args, at most TL_MAX_INSTANTS, the rest counted), each
 * section's entry has the latest metadata of its name (args, args_count),
 * and in the trace the metadata is the args of the section's own complete
 * event (found by thread, start and name); one whose section has no event
 * (dropped, still open) is an instant of category "section_args" at the
 * section's start on its thread instead.
 */
#include "internal.h"
#include "array.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tally_section_args(const char *args_json)
{
    if (atomic_load_explicit(&tl_g.state, memory_order_acquire) != TL_RUNNING && !tl_ensure_running())
        return;
    tl_thread *t = tl_thread_self();
    if (t == NULL)
        return;
    /* the innermost open section of this thread (only its owner changes it) */
    int depth = TL_LOAD(t->depth);
    if (depth <= 0 || t->depth_overflow) {
        pthread_mutex_lock(&tl_g.lock);
        tl_g.sargs_orphans++;
        pthread_mutex_unlock(&tl_g.lock);
        return;
    }
    const tl_open *o = &t->stack[depth - 1];
    char *name = strdup(tl_name(o->name));
    char *args = tl_json_object_or_text(args_json ? args_json : "{}");
    if (name == NULL || args == NULL)
        goto fail;
    pthread_mutex_lock(&tl_g.lock);
    if (tl_g.nsargs >= TL_MAX_INSTANTS ||
        tl_array_grow(&tl_g.sargs, tl_g.nsargs, &tl_g.sargs_cap, sizeof *tl_g.sargs, 32) != 0) {
        tl_g.sargs_dropped++;
        pthread_mutex_unlock(&tl_g.lock);
        goto fail;
    }
    tl_g.sargs[tl_g.nsargs++] = (tl_instant){ name, args, o->t0, t->tid };
    pthread_mutex_unlock(&tl_g.lock);
    return;
fail:
    free(name);
    free(args);
}

void tally_begin_args(const char *name, const char *args_json)
{
    tally_begin(name);
    tally_section_args(args_json);
}

/* The report's "section_args" and its counts (under tl_g.lock). */
void tl_sargs_write_report(tl_json *j, double ns_per_tick)
{
    tl_json_key(j, "section_args");
    tl_json_array_begin(j);
    for (size_t i = 0; i < tl_g.nsargs; i++) {
        const tl_instant *e = &tl_g.sargs[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", e->name);
        tl_json_kv_int(j, "time_ns", llround(tl_clock_ticks_to_ns_since_start(e->ticks, ns_per_tick)));
        tl_json_kv_int(j, "tid", e->tid);
        tl_json_key(j, "args");
        tl_json_raw(j, e->args);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_kv_uint(j, "section_args_dropped", tl_g.sargs_dropped);
    tl_json_kv_uint(j, "section_args_orphans", tl_g.sargs_orphans);
}

/* Per name id below nnames: the metadata of the name's latest occurrence
 * with some, and how many occurrences had some (the report's section
 * entries). NULL arrays when there is none. 0, or -1 out of memory. Under
 * tl_g.lock. */
int tl_sargs_by_name(uint32_t nnames, const char ***last, uint32_t **count)
{
    *last = NULL;
    *count = NULL;
    if (tl_g.nsargs == 0 || nnames == 0)
        return 0;
    *last = calloc(nnames, sizeof **last);
    *count = calloc(nnames, sizeof **count);
    if (*last == NULL || *count == NULL) {
        free(*last);
        free(*count);
        *last = NULL;
        *count = NULL;
        return -1;
    }
    for (size_t i = 0; i < tl_g.nsargs; i++) { /* in the order recorded: the last wins */
        uint32_t id = tl_intern_find(tl_g.sargs[i].name);
        if (id < nnames) {
            (*last)[id] = tl_g.sargs[i].args;
            (*count)[id]++;
        }
    }
    return 0;
}

static int by_tid_ticks(const void *x, const void *y)
{
    const tl_sargs_ref *a = x, *b = y;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return (a->ticks > b->ticks) - (a->ticks < b->ticks);
}

/* A copy of the metadata's places, sorted by thread and start, for the
 * trace writer to find a section's metadata while it writes the section's
 * own event, outside tl_g.lock: the texts are never freed while the process
 * runs (a fork child frees them, and it forks under the writer's lock).
 * Under tl_g.lock; 0, or -1 out of memory (no metadata in the events then:
 * every one is written as an instant). */
int tl_sargs_snapshot(tl_sargs_view *v)
{
    v->refs = NULL;
    v->n = 0;
    if (tl_g.nsargs == 0)
        return 0;
    v->refs = malloc(tl_g.nsargs * sizeof *v->refs);
    if (v->refs == NULL)
        return -1;
    for (size_t i = 0; i < tl_g.nsargs; i++) {
        const tl_instant *e = &tl_g.sargs[i];
        v->refs[i] = (tl_sargs_ref){ e->ticks, tl_intern_find(e->name), e->tid, 0, e->name, e->args };
    }
    v->n = tl_g.nsargs;
    qsort(v->refs, v->n, sizeof *v->refs, by_tid_ticks);
    return 0;
}

/* The metadata of thread tid's section name that started at ticks, or NULL;
 * the one found is marked written. */
const char *tl_sargs_find(tl_sargs_view *v, int tid, uint64_t ticks, uint32_t name)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) { /* the first (tid, ticks) not below the one asked */
        size_t mid = lo + (hi - lo) / 2;
        const tl_sargs_ref *r = &v->refs[mid];
        if (r->tid < tid || (r->tid == tid && r->ticks < ticks))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < v->n && v->refs[lo].tid == tid && v->refs[lo].ticks == ticks; lo++)
        if (v->refs[lo].name_id == name && !v->refs[lo].written) {
            v->refs[lo].written = 1;
            return v->refs[lo].args;
        }
    return NULL;
}

/* Whether thread tid has any metadata (the writer looks no further when not). */
int tl_sargs_thread_has(const tl_sargs_view *v, int tid)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->refs[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->n && v->refs[lo].tid == tid;
}

/* The trace's instants for the metadata whose section has no event in the
 * trace (dropped beyond the event budget, still open): the rest is in the
 * sections' own args. */
void tl_sargs_write_unwritten(tl_json *j, const tl_sargs_view *v, double ns_per_tick, int pid)
{
    for (size_t i = 0; i < v->n; i++) {
        const tl_sargs_ref *e = &v->refs[i];
        if (e->written)
            continue;
        tl_json_object_begin(j);
        tl_json_kv_string(j, "ph", "i");
        tl_json_kv_string(j, "cat", "section_args");
        tl_json_kv_string(j, "name", e->name);
        tl_json_kv_int(j, "pid", pid);
        tl_json_kv_int(j, "tid", e->tid);
        tl_json_key(j, "ts");
        tl_json_fixed(j, tl_clock_ticks_to_ns_since_start(e->ticks, ns_per_tick) / 1000.0, 3);
        tl_json_kv_string(j, "s", "t");
        tl_json_key(j, "args");
        tl_json_raw(j, e->args);
        tl_json_object_end(j);
    }
}

/* A fork child starts without the parent's metadata (tl_g.lock is held
 * across the fork). */
void tl_sargs_atfork_child(void)
{
    for (size_t i = 0; i < tl_g.nsargs; i++) {
        free(tl_g.sargs[i].name);
        free(tl_g.sargs[i].args);
    }
    free(tl_g.sargs);
    tl_g.sargs = NULL;
    tl_g.nsargs = tl_g.sargs_cap = 0;
    tl_g.sargs_dropped = tl_g.sargs_orphans = 0;
}
