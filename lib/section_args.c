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
 * them (section_args, at most TL_MAX_INSTANTS, the rest counted) and the
 * trace has each as an instant of category "section_args" at the section's
 * start on its thread, with the metadata as its args.
 */
#include "internal.h"
#include "array.h"

#include <math.h>
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

/* The trace's instants, one per section with metadata (under tl_g.lock). */
void tl_sargs_write_trace(tl_json *j, double ns_per_tick, int pid)
{
    for (size_t i = 0; i < tl_g.nsargs; i++) {
        const tl_instant *e = &tl_g.sargs[i];
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
