/*
 * read_mem_timeline.c - torch.profiler's export_memory_timeline JSON
 * (read_mem_timeline.h). Small documents (a point per timestamp), loaded
 * with jansson; every number is checked before it is believed.
 */
#include "read_mem_timeline.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* PyTorch's category names are tl_mem_category_name's, in the order of its
 * _CATEGORY_TO_INDEX (the last is the category None: memory the profiler
 * could not categorize). */
_Static_assert(TL_MEM_TIMELINE_COLUMNS - 1 == TL_MEM_CATEGORIES, "one column a category");

/* Times at or beyond this many us are on the wall clock (2001 on): the
 * profiler's timestamps since the epoch. */
#define WALL_CLOCK_US 1000000000000000.0
/* A byte count beyond this (8 EiB / 2) is no byte count. */
#define MAX_BYTES 4.0e18

int tl_bytes_look_like_mem_timeline(const unsigned char *b, size_t n)
{
    size_t i = 0;
    if (n >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    if (i >= n || b[i] != '[')
        return 0;
    for (i++; i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'); i++)
        ;
    return i < n && b[i] == '[';
}

/* The indices of the at most TL_MEMCAT_POINTS points of n (totals[0..n))
 * that are kept, ascending, into idx; how many. Every point of a short
 * timeline; else the first, the last, and of each of TL_MEMCAT_POINTS - 2
 * buckets of the points between, the one with the highest total (the first
 * of equals): the peak is always kept, and the chart keeps every bucket's
 * highest stack. */
static size_t pick_points(const double *totals, size_t n, size_t idx[TL_MEMCAT_POINTS])
{
    size_t k = 0;
    if (n <= TL_MEMCAT_POINTS) {
        for (; k < n; k++)
            idx[k] = k;
        return k;
    }
    size_t m = n - 2, nb = TL_MEMCAT_POINTS - 2;
    idx[k++] = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t lo = 1 + m * b / nb, hi = 1 + m * (b + 1) / nb; /* m * nb fits: m is a JSON array's length */
        size_t best = lo;
        for (size_t i = lo + 1; i < hi; i++)
            if (totals[i] > totals[best])
                best = i;
        if (lo < hi)
            idx[k++] = best;
    }
    idx[k++] = n - 1;
    return k;
}

int tl_read_mem_timeline(tl_profile *p, const char *doc, size_t len)
{
    json_error_t err;
    json_t *root = json_loadb(doc, len, 0, &err);
    int ret = -1;
    double *totals = NULL;
    if (root == NULL) {
        tl_profile_warn_at(p, err.position, "not JSON at byte %d (line %d): %s", err.position, err.line, err.text);
        return -1;
    }
    json_t *times = json_array_get(root, 0), *sizes = json_array_get(root, 1);
    size_t n = json_array_size(times);
    if (!json_is_array(root) || json_array_size(root) != 2 || !json_is_array(times) || !json_is_array(sizes) ||
        json_array_size(sizes) != n) {
        tl_profile_warn(p, "an array of arrays that is not [times, sizes] of equal length (torch.profiler's "
                           "export_memory_timeline JSON): not read");
        goto out;
    }
    if (n == 0) {
        tl_profile_warn(p, "a memory timeline without points (torch.profiler's export_memory_timeline JSON): "
                           "nothing to measure");
        goto out;
    }
    /* The first pass checks every point and finds the time base and the peak. */
    double t0 = INFINITY, peak = -1;
    size_t at_peak = 0;
    totals = malloc(n * sizeof *totals);
    if (totals == NULL) {
        tl_profile_warn(p, "out of memory for a memory timeline of %zu points", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(times, i), *row = json_array_get(sizes, i);
        if (!json_is_number(t) || !isfinite(json_number_value(t)) || fabs(json_number_value(t)) > 9.0e15 ||
            json_array_size(row) != TL_MEM_TIMELINE_COLUMNS) {
            tl_profile_warn(p,
                            "point %zu: expected a time and %d byte counts (the unused first, then PARAMETER ... "
                            "UNKNOWN): not read",
                            i, TL_MEM_TIMELINE_COLUMNS);
            goto out;
        }
        double total = 0;
        for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++) {
            json_t *v = json_array_get(row, c);
            double b = json_number_value(v);
            if (!json_is_number(v) || !isfinite(b) || fabs(b) > MAX_BYTES) {
                tl_profile_warn(p, "point %zu: %s: expected a byte count: not read", i,
                                tl_mem_category_name((int)c - 1));
                goto out;
            }
            total += b;
        }
        totals[i] = total;
        double tv = json_number_value(t);
        if (tv > 0 && tv < t0)
            t0 = tv;
        if (total > peak) { /* the first time the highest total is reached */
            peak = total;
            at_peak = i;
        }
    }
    if (!isfinite(t0))
        t0 = 0;
    /* us since the epoch (PyTorch 2.1 on); earlier versions wrote ns */
    double unit_ns = t0 >= WALL_CLOCK_US * 1000.0 ? 1.0 : 1000.0;
    if (t0 * unit_ns >= WALL_CLOCK_US * 1000.0)
        p->base_time_ns = (int64_t)llround(t0 * unit_ns);
    int64_t base = p->base_time_ns != INT64_MIN ? p->base_time_ns : 0;
    int64_t t0_ns = (int64_t)llround(t0 * unit_ns) - base; /* t0 on the profile's clock */
    uint64_t negative = 0;
    size_t keep[TL_MEMCAT_POINTS], nkeep = pick_points(totals, n, keep), next = 0;
    p->memcats = calloc(nkeep, sizeof *p->memcats);
    if (p->memcats == NULL) {
        tl_profile_warn(p, "out of memory for a memory timeline of %zu points", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *row = json_array_get(sizes, i);
        double t = json_number_value(json_array_get(times, i));
        /* the timeline's pre-existing memory has time -1: it is there from
         * the first time on. From t0 in doubles, exact for whole us (t * 1000
         * is not: 1.7e18 ns are past a double's 2^53) */
        int64_t ts = (int64_t)llround(((t < 0 ? t0 : t) - t0) * unit_ns) + t0_ns;
        double total = 0;
        for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++)
            total += json_number_value(json_array_get(row, c));
        if (total < 0)
            negative++;
        if (next < nkeep && keep[next] == i) {
            next++;
            tl_memcat_point *m = &p->memcats[p->nmemcats++];
            m->ts_ns = ts;
            for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++)
                m->bytes[c - 1] = (int64_t)llround(json_number_value(json_array_get(row, c)));
        }
        tl_mem_point pt = { ts, 0, total, NAN, NAN };
        if (tl_profile_add_mem(p, &pt) != 0)
            goto out;
        tl_profile_span(p, ts, ts);
        if (i == at_peak) {
            for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++) {
                char label[64];
                int k = snprintf(label, sizeof label, "%s at the peak", tl_mem_category_name((int)c - 1));
                tl_mem_snapshot s = { .label = tl_strtab_intern(&p->strs, label, (size_t)k),
                                      .ts_ns = ts,
                                      .allocated = json_number_value(json_array_get(row, c)),
                                      .reserved = NAN,
                                      .peak_allocated = NAN,
                                      .device_used = NAN,
                                      .rss = NAN,
                                      .peak_rss = NAN,
                                      .process_used = NAN };
                if (s.label == UINT32_MAX || tl_profile_add_snapshot(p, &s) != 0)
                    goto out;
            }
        }
    }
    if (negative)
        tl_profile_warn(p,
                        "%llu points whose categories add up to less than 0 bytes (the profiler saw memory freed "
                        "that it had not seen allocated)",
                        (unsigned long long)negative);
    p->events = n;
    p->id.format = TL_FMT_MEM_TIMELINE;
    snprintf(p->format_detail, sizeof p->format_detail, "%zu points, 8 categories", n);
    ret = 0;
out:
    free(totals);
    json_decref(root);
    return ret;
}
