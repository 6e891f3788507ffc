/*
 * read_mem_timeline.c - torch.profiler's export_memory_timeline JSON
 * (read_mem_timeline.h). Small documents (a point per timestamp), loaded
 * with jansson; every number is checked before it is believed.
 */
#include "read_mem_timeline.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* PyTorch's category names, in the order of its _CATEGORY_TO_INDEX (the
 * last is the category None: memory the profiler could not categorize). */
static const char *const categories[TL_MEM_TIMELINE_COLUMNS - 1] = {
    "PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", "UNKNOWN",
};

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

int tl_read_mem_timeline(tl_profile *p, const char *doc, size_t len)
{
    json_error_t err;
    json_t *root = json_loadb(doc, len, 0, &err);
    int ret = -1;
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
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(times, i), *row = json_array_get(sizes, i);
        if (!json_is_number(t) || !isfinite(json_number_value(t)) || fabs(json_number_value(t)) > 9.0e15 ||
            json_array_size(row) != TL_MEM_TIMELINE_COLUMNS) {
            tl_profile_warn(p, "point %zu: expected a time and %d byte counts (the unused first, then PARAMETER ... "
                               "UNKNOWN): not read", i, TL_MEM_TIMELINE_COLUMNS);
            goto out;
        }
        double total = 0;
        for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++) {
            json_t *v = json_array_get(row, c);
            double b = json_number_value(v);
            if (!json_is_number(v) || !isfinite(b) || fabs(b) > MAX_BYTES) {
                tl_profile_warn(p, "point %zu: %s: expected a byte count: not read", i, categories[c - 1]);
                goto out;
            }
            total += b;
        }
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
    uint64_t negative = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *row = json_array_get(sizes, i);
        double t = json_number_value(json_array_get(times, i));
        /* the timeline's pre-existing memory has time -1: it is there from the first time on */
        int64_t ts = t < 0 ? 0 : (int64_t)llround(t * unit_ns) - base;
        double total = 0;
        for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++)
            total += json_number_value(json_array_get(row, c));
        if (total < 0)
            negative++;
        tl_mem_point pt = { ts, 0, total, NAN, NAN };
        if (tl_profile_add_mem(p, &pt) != 0)
            goto out;
        tl_profile_span(p, ts, ts);
        if (i == at_peak) {
            for (size_t c = 1; c < TL_MEM_TIMELINE_COLUMNS; c++) {
                char label[64];
                int k = snprintf(label, sizeof label, "%s at the peak", categories[c - 1]);
                tl_mem_snapshot s = { .label = tl_strtab_intern(&p->strs, label, (size_t)k), .ts_ns = ts,
                                      .allocated = json_number_value(json_array_get(row, c)),
                                      .reserved = NAN, .peak_allocated = NAN, .device_used = NAN, .rss = NAN,
                                      .peak_rss = NAN, .process_used = NAN };
                if (s.label == UINT32_MAX || tl_profile_add_snapshot(p, &s) != 0)
                    goto out;
            }
        }
    }
    if (negative)
        tl_profile_warn(p, "%llu points whose categories add up to less than 0 bytes (the profiler saw memory freed "
                           "that it had not seen allocated)", (unsigned long long)negative);
    p->events = n;
    p->id.format = TL_FMT_MEM_TIMELINE;
    snprintf(p->format_detail, sizeof p->format_detail, "%zu points, 8 categories", n);
    ret = 0;
out:
    json_decref(root);
    return ret;
}
