/*
 * memcats.c - a session's memory by category (memcats.h).
 */
#include "memcats.h"

#include <math.h>
#include <string.h>

/* b - a, saturating like tl_ns_add (a category may be below 0; a partial may hold any int64) */
static int64_t sat_diff(int64_t b, int64_t a)
{
    int64_t r;
    if (__builtin_sub_overflow(b, a, &r))
        return a < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t total_of(const tl_memcat_point *p)
{
    int64_t t = 0;
    for (int c = 0; c < TL_MEM_CATEGORIES; c++)
        t = tl_ns_add(t, p->bytes[c]); /* saturating: bytes, not ns, but the same int64 */
    return t;
}

int tl_memcat_summarize(const tl_session *s, tl_memcat_summary *out)
{
    memset(out, 0, sizeof *out);
    if (s->nmemcats == 0 || s->memcats == NULL)
        return -1;
    const tl_memcat_point *v = s->memcats, *first = &v[0], *last = &v[s->nmemcats - 1];
    out->points = s->nmemcats;
    out->span_ns = sat_diff(last->ts_ns, first->ts_ns);
    out->peak_bytes = total_of(first);
    for (size_t i = 1; i < s->nmemcats; i++) {
        int64_t t = total_of(&v[i]);
        if (t > out->peak_bytes) {
            out->peak_bytes = t;
            out->peak = i;
        }
    }
    out->peak_at_ns = sat_diff(v[out->peak].ts_ns, first->ts_ns);
    out->grown = -1;
    for (int c = 0; c < TL_MEM_CATEGORIES; c++) {
        out->share[c] = out->peak_bytes > 0 ? (double)v[out->peak].bytes[c] / (double)out->peak_bytes : NAN;
        out->first[c] = first->bytes[c];
        out->last[c] = last->bytes[c];
        out->growth[c] = sat_diff(last->bytes[c], first->bytes[c]);
        if (out->growth[c] > 0 && (out->grown < 0 || out->growth[c] > out->growth[out->grown]))
            out->grown = c;
    }
    return 0;
}

int tl_memcats_any(const tl_session *sessions, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tl_session_counts(&sessions[i]) && sessions[i].nmemcats > 0)
            return 1;
    return 0;
}
