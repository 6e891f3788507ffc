/*
 * gpu_health.c - each GPU's temperature and power against their limits, per
 * session: what the thermal and power-at-cap rules read (aggregate.h;
 * docs/analysis.md, "GPU temperature and power").
 *
 * The one idea: the rules need shares of the sampled time (how long a GPU
 * was above 85 C, how much of it at its power limit), which the telemetry's
 * bins cannot give back exactly, so they are counted here once from every
 * sample and carried in the session as a few numbers per GPU.
 */
#define _GNU_SOURCE
#include "session_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_device_time(const void *x, const void *y)
{
    const tl_gpu_sample *a = *(const tl_gpu_sample *const *)x, *b = *(const tl_gpu_sample *const *)y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

/* The device's limit from the system section (libtally's system.gpus), 0 unknown. */
static double device_limit(const tl_profile *p, int64_t device)
{
    for (uint32_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].id == device)
            return p->devices[i].power_limit_w;
    return 0;
}

/* One device's samples [lo, hi), sorted by time. */
static void one(tl_shealth *h, const tl_profile *p, const tl_gpu_sample *const *g, size_t n)
{
    memset(h, 0, sizeof *h);
    h->device = g[0]->device;
    h->temp_max = h->power_limit_w = h->power_max = NAN;
    double dev_limit = device_limit(p, h->device);
    for (size_t i = 0; i < n; i++) {
        const tl_gpu_sample *s = g[i];
        if (isfinite(s->temperature_c)) {
            h->temp_n++;
            if (!(s->temperature_c <= h->temp_max))
                h->temp_max = s->temperature_c;
            if (s->temperature_c > TL_HOT_C) {
                h->hot_n++;
                /* until the next sample with a temperature */
                for (size_t k = i + 1; k < n; k++)
                    if (isfinite(g[k]->temperature_c)) {
                        h->hot_ns = tl_ns_add(h->hot_ns, g[k]->ts_ns - s->ts_ns);
                        break;
                    }
            }
        }
        if (isfinite(s->power_w) && !(s->power_w <= h->power_max))
            h->power_max = s->power_w;
        double limit = s->power_limit_w > 0 ? s->power_limit_w : dev_limit;
        if (isfinite(s->power_w) && limit > 0) {
            h->power_n++;
            h->cap_n += s->power_w >= TL_POWER_CAP_SHARE * limit;
            if (!(limit <= h->power_limit_w))
                h->power_limit_w = limit;
        }
        if (s->has_throttle) {
            h->reasons_n++;
            h->thermal_n += (s->throttle & TL_THROTTLE_THERMAL) != 0;
            h->power_throttle_n += (s->throttle & TL_THROTTLE_POWER) != 0;
        }
    }
}

/* One device's busy samples against its base clock (clocks-below-base). */
static void one_clock(tl_sclock *c, const tl_gpu_sample *const *g, size_t n)
{
    memset(c, 0, sizeof *c);
    c->device = g[0]->device;
    for (size_t i = 0; i < n; i++) {
        const tl_gpu_sample *s = g[i];
        if (!(s->sm_clock_mhz > 0 && s->base_clock_mhz > 0 && s->util_pct >= TL_LOADED_UTIL_PCT))
            continue;
        c->n++;
        if (s->base_clock_mhz > c->base_mhz)
            c->base_mhz = s->base_clock_mhz;
        if (c->n == 1 || s->sm_clock_mhz < c->min_mhz)
            c->min_mhz = s->sm_clock_mhz;
        if (s->sm_clock_mhz < s->base_clock_mhz) {
            c->slow_n++;
            c->slow_reason_n += s->has_throttle && (s->throttle & (TL_THROTTLE_THERMAL | TL_THROTTLE_POWER)) != 0;
        }
    }
}

int tl_session_health(tl_session *s, const tl_profile *p)
{
    if (p->ngpu_samples == 0)
        return 0;
    const tl_gpu_sample **g = malloc(p->ngpu_samples * sizeof *g);
    if (g == NULL)
        return -1;
    for (size_t i = 0; i < p->ngpu_samples; i++)
        g[i] = &p->gpu_samples[i];
    qsort(g, p->ngpu_samples, sizeof *g, by_device_time);
    size_t ndev = 0;
    for (size_t i = 0; i < p->ngpu_samples; i++)
        ndev += i == 0 || g[i]->device != g[i - 1]->device;
    if (ndev > TL_SESSION_MAX_DEVICES)
        ndev = TL_SESSION_MAX_DEVICES;
    s->health = calloc(ndev, sizeof *s->health);
    s->clocks = calloc(ndev, sizeof *s->clocks);
    if (s->health == NULL || s->clocks == NULL) {
        free(g);
        return -1;
    }
    for (size_t lo = 0, hi; lo < p->ngpu_samples && s->nhealth < ndev; lo = hi) {
        for (hi = lo + 1; hi < p->ngpu_samples && g[hi]->device == g[lo]->device; hi++)
            ;
        tl_shealth h;
        one(&h, p, g + lo, hi - lo);
        if (h.temp_n > 0 || h.power_n > 0 || h.reasons_n > 0 || isfinite(h.power_max))
            s->health[s->nhealth++] = h;
        tl_sclock c;
        one_clock(&c, g + lo, hi - lo);
        if (c.n > 0)
            s->clocks[s->nclocks++] = c;
    }
    free(g);
    return 0;
}
