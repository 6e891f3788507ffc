/*
 * counter_rates.c - rates of counter pairs (tally_counter_rate): a cache's
 * hits and misses, recorded as two counters, give its hit rate.
 *
 * The one idea: the rate is computed when the report is written, from the
 * two counters' sums merged over every thread, so recording stays two plain
 * tally_counter() calls; rate = hits / (hits + misses), the share of the
 * lookups that hit. A counter that was never recorded counts 0.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int tally_counter_rate(const char *name, const char *hits, const char *misses)
{
    int rc = 0;
    if (name == NULL || *name == '\0' || hits == NULL || *hits == '\0' || misses == NULL || *misses == '\0')
        return TALLY_EINVAL;
    if (strlen(name) >= sizeof tl_g.rates[0].name || strlen(hits) >= sizeof tl_g.rates[0].hits ||
        strlen(misses) >= sizeof tl_g.rates[0].misses)
        return TALLY_EINVAL;
    pthread_mutex_lock(&tl_g.lock);
    int i;
    for (i = 0; i < tl_g.nrates && strcmp(tl_g.rates[i].name, name) != 0; i++)
        ;
    if (i == TL_MAX_RATES) {
        rc = TALLY_EFULL;
        goto out;
    }
    if (i == tl_g.nrates)
        tl_g.nrates++;
    /* registering a name again replaces its pair */
    snprintf(tl_g.rates[i].name, sizeof tl_g.rates[i].name, "%s", name);
    snprintf(tl_g.rates[i].hits, sizeof tl_g.rates[i].hits, "%s", hits);
    snprintf(tl_g.rates[i].misses, sizeof tl_g.rates[i].misses, "%s", misses);
out:
    pthread_mutex_unlock(&tl_g.lock);
    return rc;
}

/* The sum of the counter name over every thread, 0 when never recorded. */
static double counter_sum(const tl_merged *m, const char *name)
{
    uint32_t id = tl_intern_find(name);
    if (id == UINT32_MAX || id >= m->nnames || m->counters[id].count == 0)
        return 0;
    return m->counters[id].sum;
}

/* The report's "counter_rates" (under tl_g.lock). */
void tl_rates_write_report(tl_json *j, const tl_merged *m)
{
    tl_json_key(j, "counter_rates");
    tl_json_array_begin(j);
    for (int i = 0; i < tl_g.nrates; i++) {
        const tl_rate *r = &tl_g.rates[i];
        double h = counter_sum(m, r->hits), x = counter_sum(m, r->misses);
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", r->name);
        tl_json_kv_string(j, "hits", r->hits);
        tl_json_kv_string(j, "misses", r->misses);
        tl_json_kv_double(j, "hits_total", h);
        tl_json_kv_double(j, "misses_total", x);
        tl_json_key(j, "rate");
        if (h >= 0 && x >= 0 && h + x > 0 && isfinite(h + x))
            tl_json_double(j, h / (h + x));
        else
            tl_json_null(j); /* nothing looked up yet */
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
}
