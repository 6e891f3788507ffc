/*
 * context.c - what a session carries besides its timings: the events a
 * report recorded, its tags, the program's counters and the host the
 * collector ran on (aggregate.h; docs/analysis.md, "Events, tags, counters
 * and the host").
 *
 * The one idea: these are shown, never analyzed, so each is bounded to what
 * a table can show (the first TL_SESSION_MAX_EVENTS events by time, the
 * first TL_SESSION_MAX_COUNTERS counters by name) with the count of all of
 * them, and a partial aggregate carries them whole.
 */
#define _GNU_SOURCE
#include "session_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events by time (unknown times last), then in file order: a stable order
 * for the table whatever the input's. */
static int by_time(const void *x, const void *y)
{
    const tl_ievent *a = *(const tl_ievent *const *)x, *b = *(const tl_ievent *const *)y;
    if (a->ts_ns != b->ts_ns) {
        if (a->ts_ns == INT64_MIN)
            return 1;
        if (b->ts_ns == INT64_MIN)
            return -1;
        return a->ts_ns < b->ts_ns ? -1 : 1;
    }
    return a < b ? -1 : a > b;
}

static int events(tl_session *s, const tl_profile *p)
{
    s->events_total = p->nievents + p->ievents_dropped;
    if (p->nievents == 0)
        return 0;
    const tl_ievent **order = malloc(p->nievents * sizeof *order);
    if (order == NULL)
        return -1;
    for (size_t i = 0; i < p->nievents; i++)
        order[i] = &p->ievents[i];
    qsort(order, p->nievents, sizeof *order, by_time);
    size_t n = p->nievents < TL_SESSION_MAX_EVENTS ? p->nievents : TL_SESSION_MAX_EVENTS;
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    s->events = calloc(n, sizeof *s->events);
    int rc = s->events ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const tl_ievent *e = order[i];
        tl_sevent *d = &s->events[s->nevents++];
        d->ts_ns = e->ts_ns == INT64_MIN ? INT64_MIN : tl_ns_add(e->ts_ns, base);
        d->name = strdup(tl_strtab_get(&p->strs, e->name));
        d->payload = strdup(tl_strtab_get(&p->strs, e->payload));
        if (d->name == NULL || d->payload == NULL)
            rc = -1;
    }
    free(order);
    return rc;
}

static int tags(tl_session *s, const tl_profile *p)
{
    if (p->ntags == 0)
        return 0;
    s->tags = calloc(p->ntags, sizeof *s->tags);
    if (s->tags == NULL)
        return -1;
    for (uint32_t i = 0; i < p->ntags && s->ntags < TL_SESSION_MAX_TAGS; i++)
        if (asprintf(&s->tags[s->ntags++], "%s=%s", tl_strtab_get(&p->strs, p->tags[i].key),
                     tl_strtab_get(&p->strs, p->tags[i].value)) < 0) {
            s->tags[--s->ntags] = NULL;
            return -1;
        }
    return 0;
}

static int by_counter_name(const void *x, const void *y, void *ctx)
{
    const tl_profile *p = ctx;
    const tl_counter *a = *(const tl_counter *const *)x, *b = *(const tl_counter *const *)y;
    return strcmp(tl_strtab_get(&p->strs, a->name), tl_strtab_get(&p->strs, b->name));
}

/* The program's counters (not the readers' own, which are telemetry). */
static int counters(tl_session *s, const tl_profile *p)
{
    size_t n = 0;
    for (uint32_t i = 0; i < p->ncounters; i++)
        n += p->counters[i].source != TL_COUNTER_DERIVED && p->counters[i].v.count > 0;
    s->counters_total = n;
    if (n == 0)
        return 0;
    const tl_counter **order = malloc(n * sizeof *order);
    if (order == NULL)
        return -1;
    n = 0;
    for (uint32_t i = 0; i < p->ncounters; i++)
        if (p->counters[i].source != TL_COUNTER_DERIVED && p->counters[i].v.count > 0)
            order[n++] = &p->counters[i];
    qsort_r(order, n, sizeof *order, by_counter_name, (void *)p);
    size_t keep = n < TL_SESSION_MAX_COUNTERS ? n : TL_SESSION_MAX_COUNTERS;
    s->counters = calloc(keep, sizeof *s->counters);
    int rc = s->counters ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < keep; i++) {
        const tl_counter *c = order[i];
        tl_scounter *d = &s->counters[s->ncounters++];
        *d = (tl_scounter){
            strdup(tl_strtab_get(&p->strs, c->name)), c->source, c->v.count, c->v.min, c->v.mean, c->v.max
        };
        if (d->name == NULL)
            rc = -1;
    }
    free(order);
    return rc;
}

int tl_session_context(tl_session *s, const tl_profile *p)
{
    if (events(s, p) != 0 || tags(s, p) != 0 || counters(s, p) != 0)
        return -1;
    if (p->host.hostname[0] && (s->sys.hostname = strdup(p->host.hostname)) == NULL)
        return -1;
    if (p->host.os[0] && (s->sys.os = strdup(p->host.os)) == NULL)
        return -1;
    s->sys.cpus = p->host.cpus;
    s->sys.memory_bytes = p->host.memory_bytes;
    return 0;
}
