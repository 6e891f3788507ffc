/*
 * query.c - reading statistics in-process (tally_stats_get), like FramePack's
 * profiler.get_stats().
 *
 * The one idea: a query is a tiny flush. It merges one name's per-thread
 * statistics under the same locks as tl_merged_build() (the registry lock,
 * then each thread's flag, briefly), so it sees every completed section of
 * every thread, and converts ticks to ns like the report does.
 */
#include "internal.h"

#include <string.h>

/* Merge the statistics of kind/id over all threads into *out (caller releases). */
static void merge_one(int kind, uint32_t id, tl_dur_stat *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&tl_g.lock);
    for (tl_thread *t = tl_g.threads; t != NULL; t = t->next) {
        tl_thread_lock(t);
        tl_thread_fold(t);
        if (id < t->stats_cap[kind] && t->stats[kind][id] != NULL)
            tl_dur_stat_merge(out, t->stats[kind][id], 0); /* no samples needed */
        tl_thread_unlock(t);
    }
    pthread_mutex_unlock(&tl_g.lock);
}

int tally_stats_get(const char *name, tally_stats *out)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (name == NULL || out == NULL)
        return TALLY_EINVAL;
    /* Never initialized, or disabled from the start: nothing was recorded.
     * After tally_shutdown() the statistics are still there. */
    if (atomic_load(&tl_g.state) == TL_UNINIT || tl_g.start_ticks == 0)
        return TALLY_ESTATE;
    uint32_t id = tl_intern_find(name);
    if (id == UINT32_MAX)
        return TALLY_ENOENT;
    tl_dur_stat s;
    int kind = TL_SECTION;
    merge_one(kind, id, &s);
    if (s.count == 0) {
        tl_dur_stat_release(&s);
        kind = TL_ITERATION;
        merge_one(kind, id, &s);
    }
    if (s.count == 0) {
        tl_dur_stat_release(&s);
        return TALLY_ENOENT;
    }
    double k = tl_clock_ns_per_tick_now();
    out->iteration = kind == TL_ITERATION;
    out->count = s.count;
    out->total_ns = (double)s.total * k;
    out->mean_ns = s.mean * k;
    out->min_ns = (double)s.min * k;
    out->max_ns = (double)s.max * k;
    out->std_ns = tl_dur_stat_std(&s) * k;
    out->median_ns = tl_dur_stat_quantile(&s, 0.5) * k;
    out->p95_ns = tl_dur_stat_quantile(&s, 0.95) * k;
    tl_dur_stat_release(&s);
    return 0;
}
