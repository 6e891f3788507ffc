#define _GNU_SOURCE
/*
 * session.c - a session result's lifecycle and the names of its enums
 * (session.h), and the session of an input that is no profile. The analysis
 * that fills one is analyze/session.c's; the partial reader that fills one
 * from a file is read_partial.c; settle.c settles the identity of all.
 */
#include "session.h"
#include "str_pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *tl_group_name(int g)
{
    static const char *names[TL_GROUP_COUNT] = {
        "sections", "iterations", "ops", "kernels", "runtime", "python", "gpu annotations", "other",
    };
    return g >= 0 && g < TL_GROUP_COUNT ? names[g] : "other";
}

const char *tl_lane_kind_name(int kind)
{
    return kind == TL_LANE_GPU ? "gpu" : kind == TL_LANE_CPU ? "cpu" : NULL;
}

const char *tl_growth_metric_name(int metric)
{
    static const char *const names[TL_GROWTH_COUNT] = { "allocated", "device_used", "rss", "process_used" };
    return metric >= 0 && metric < TL_GROWTH_COUNT ? names[metric] : NULL;
}

void tl_session_init(tl_session *s)
{
    memset(s, 0, sizeof *s);
    s->id.format = TL_FMT_UNKNOWN;
    s->id.rank = -1;
    s->start_ns = INT64_MIN;
    s->span_ns = -1;
    s->pid = -1;
    s->peak_allocated = s->peak_reserved = s->device_total = s->peak_rss = s->gpu_util_mean = NAN;
    s->gpu.host_gap_ns = s->gpu.host_short_ns = s->gpu.host_coll_ns = s->gpu.host_load_ns = -1;
    s->gpu.queued_idle = -1;
    s->memops_peak = -1;
    s->peak_device_used = NAN;
    s->sys.memory_bytes = NAN;
    s->diff.size_min = s->diff.size_max = NAN;
    s->diff.mem_peak = s->diff.rss_peak = NAN;
    s->diff.first_block_ns = s->diff.later_median_ns = -1;
}

/* What a session carries besides its timings (events, tags, counters, the
 * host, diffusion, health, growth). */
static void release_extras(tl_session *s)
{
    for (size_t i = 0; i < s->nevents; i++) {
        free(s->events[i].name);
        free(s->events[i].payload);
    }
    free(s->events);
    for (size_t i = 0; i < s->ntags; i++)
        free(s->tags[i]);
    free(s->tags);
    for (size_t i = 0; i < s->ncounters; i++)
        free(s->counters[i].name);
    free(s->counters);
    free(s->sys.hostname);
    free(s->sys.os);
    free(s->diff.top_layer);
    free(s->health);
    free(s->clocks);
    free(s->devmem);
    for (size_t i = 0; i < s->ngrowth; i++)
        free(s->growth[i].what);
    free(s->growth);
}

float *tl_lane_busy_row(tl_lane *l, int k)
{
    if (l->busy[k] == NULL)
        l->busy[k] = calloc(TL_TIMELINE_BINS, sizeof *l->busy[k]);
    return l->busy[k];
}

/* Free the lanes and their names; the range and the count of lanes stay. */
static void timeline_release_lanes(tl_timeline *t)
{
    for (size_t i = 0; t->lanes != NULL && i < t->nlanes; i++) { /* no lanes: out (spill) */
        free(t->lanes[i].label);
        free(t->lanes[i].calls);
        for (int k = 0; k < TL_KT_COUNT; k++)
            free(t->lanes[i].busy[k]);
    }
    free(t->lanes);
    t->lanes = NULL;
    tl_strtab_release(&t->names);
}

void tl_timeline_release(tl_timeline *t)
{
    timeline_release_lanes(t);
    memset(t, 0, sizeof *t);
}

void tl_session_compact(tl_session *s)
{
    for (size_t i = 0; i < s->nnames; i++)
        tl_str_pool_swap(&s->names[i].name);
    for (size_t i = 0; i < s->nkernels; i++)
        tl_str_pool_swap(&s->kernels[i].name);
    for (size_t i = 0; i < s->nkinfo; i++) {
        tl_str_pool_swap(&s->kinfo[i].name);
        tl_str_pool_swap(&s->kinfo[i].op);
    }
    for (size_t i = 0; i < s->nshapes; i++) {
        tl_str_pool_swap(&s->shapes[i].name);
        tl_str_pool_swap(&s->shapes[i].dims);
        tl_str_pool_swap(&s->shapes[i].types);
    }
    for (size_t i = 0; i < s->nnames; i++)
        tl_hist_trim(&s->names[i].d.hist);
    for (size_t i = 0; i < s->nkernels; i++)
        tl_hist_trim(&s->kernels[i].d.hist);
    for (size_t i = 0; i < s->timeline.nlanes; i++) {
        tl_lane *l = &s->timeline.lanes[i];
        if (l->ncalls > 0) { /* (none kept: left as it is, readers tell NULL from empty) */
            tl_lane_call *c = realloc(l->calls, l->ncalls * sizeof *c);
            if (c != NULL)
                l->calls = c;
        }
    }
}

void tl_session_release_bulk(tl_session *s)
{
    for (size_t i = 0; i < s->nnames; i++) {
        tl_str_pool_free(s->names[i].name);
        tl_dur_stat_release(&s->names[i].d);
    }
    free(s->names);
    s->names = NULL;
    s->nnames = 0;
    for (size_t i = 0; i < s->nkernels; i++) {
        tl_str_pool_free(s->kernels[i].name);
        tl_dur_stat_release(&s->kernels[i].d);
    }
    free(s->kernels);
    s->kernels = NULL;
    s->nkernels = 0;
    for (size_t i = 0; i < s->nkinfo; i++) {
        tl_str_pool_free(s->kinfo[i].name);
        tl_str_pool_free(s->kinfo[i].op);
    }
    free(s->kinfo);
    s->kinfo = NULL;
    s->nkinfo = 0;
    /* The timeline's range and count of lanes stay, and the memory series' count: other
     * threads read them while the bulk comes and goes (spill.h), so neither this nor
     * tl_session_take_bulk writes them. */
    timeline_release_lanes(&s->timeline);
    tl_calltree_release(&s->calltree);
    free(s->mem);
    s->mem = NULL;
    s->spill.out = 1;
}

void tl_session_take_bulk(tl_session *s, tl_session *from)
{
    s->names = from->names;
    s->nnames = from->nnames;
    s->kernels = from->kernels;
    s->nkernels = from->nkernels;
    s->kinfo = from->kinfo;
    s->nkinfo = from->nkinfo;
    s->timeline.lanes = from->timeline.lanes; /* the range and nlanes stayed (release_bulk) */
    s->timeline.names = from->timeline.names;
    tl_calltree_move(&s->calltree, &from->calltree);
    s->mem = from->mem; /* nmem stayed */
    from->mem = NULL;
    from->nmem = 0;
    from->names = NULL;
    from->kernels = NULL;
    from->kinfo = NULL;
    from->nnames = from->nkernels = from->nkinfo = 0;
    memset(&from->timeline, 0, sizeof from->timeline);
    s->spill.out = 0;
}

void tl_session_release(tl_session *s)
{
    tl_identity_release(&s->id);
    tl_session_release_bulk(s);
    free(s->steps);
    free(s->stepcats);
    free(s->coll_windows);
    free(s->gpu.streams);
    free(s->colls);
    free(s->insts);
    for (size_t i = 0; i < s->ncoll_names; i++)
        free(s->coll_names[i]);
    free(s->coll_names);
    for (size_t i = 0; i < s->nsnaps; i++)
        free(s->snaps[i].label);
    free(s->snaps);
    free(s->device_name);
    free(s->series);
    for (size_t i = 0; i < s->ndevices; i++)
        free(s->devices[i].name);
    free(s->devices);
    for (size_t i = 0; i < s->nmemops; i++)
        free(s->memops[i].name);
    free(s->memops);
    free(s->memcats);
    for (size_t i = 0; i < s->nshapes; i++) {
        tl_str_pool_free(s->shapes[i].name);
        tl_str_pool_free(s->shapes[i].dims);
        tl_str_pool_free(s->shapes[i].types);
    }
    free(s->shapes);
    release_extras(s);
    memset(s, 0, sizeof *s);
}

static const char *const stepcat_names[TL_SC_COUNT][2] = {
    { "kernel", "Kernel" },     { "memcpy", "Memcpy" },
    { "memset", "Memset" },     { "communication", "Communication" },
    { "runtime", "Runtime" },   { "data_loading", "Data loading" },
    { "cpu_exec", "CPU exec" }, { "other", "Other" },
};

const char *tl_stepcat_name(int c)
{
    return c >= 0 && c < TL_SC_COUNT ? stepcat_names[c][0] : NULL;
}
const char *tl_stepcat_label(int c)
{
    return c >= 0 && c < TL_SC_COUNT ? stepcat_names[c][1] : NULL;
}

const char *tl_stepcat_phrase(int c)
{
    static const char *const phrase[TL_SC_COUNT] = {
        "GPU kernels",
        "GPU copies",
        "GPU memsets",
        "other collectives",
        "CUDA runtime calls",
        "data loading",
        "CPU work (operators, Python, sections)",
        "time the trace shows nothing in",
    };
    return c >= 0 && c < TL_SC_COUNT ? phrase[c] : NULL;
}

int tl_is_data_loading(const char *name)
{
    return strcasestr(name, "DataLoader") != NULL || strcasestr(name, "data_load") != NULL ||
           strcasestr(name, "dataloading") != NULL;
}

int tl_session_from_identity(tl_session *s, const tl_identity *id)
{
    tl_session_init(s);
    if (tl_identity_copy(&s->id, id) != 0)
        return -1;
    /* no data: whatever the profile had found is not this session's */
    s->id.format = TL_FMT_UNKNOWN;
    s->id.rank = -1;
    s->id.world_size = s->id.rank_source = s->id.session = s->id.run = 0;
    free(s->id.rank_detail);
    free(s->id.companion_of);
    s->id.companion_of = NULL;
    s->id.rank_detail = strdup("");
    if (s->id.rank_detail == NULL) {
        tl_session_release(s);
        return -1;
    }
    return 0;
}
