/*
 * sniff.c - trace or report, from the top-level keys (see sniff.h).
 */
#include "sniff.h"

#include <string.h>

static size_t skip_ws(const unsigned char *b, size_t i, size_t n)
{
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i;
}

/* Skip a JSON string starting at b[i] == '"'; returns the index after it, or n. */
static size_t skip_string(const unsigned char *b, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (b[i] == '\\')
            i++;
        else if (b[i] == '"')
            return i + 1;
    }
    return n;
}

/* Skip one value; returns the index after it, or n when the bytes end in it. */
static size_t skip_value(const unsigned char *b, size_t i, size_t n)
{
    if (i >= n)
        return n;
    if (b[i] == '"')
        return skip_string(b, i, n);
    if (b[i] == '{' || b[i] == '[') {
        size_t depth = 0;
        for (; i < n; i++) {
            if (b[i] == '"') {
                i = skip_string(b, i, n) - 1;
            } else if (b[i] == '{' || b[i] == '[') {
                depth++;
            } else if (b[i] == '}' || b[i] == ']') {
                if (--depth == 0)
                    return i + 1;
            }
        }
        return n;
    }
    while (i < n && b[i] != ',' && b[i] != '}')
        i++;
    return i;
}

static int key_is(const unsigned char *b, size_t k, size_t len, const char *lit)
{
    return strlen(lit) == len && memcmp(b + k, lit, len) == 0;
}

/* Top-level keys that make the object a report (report_readers.h's
 * tl_report_kind decides which one; "format" only with "tally-report"). */
static const char *const report_keys[] = {
    "session_info",
    "timing_stats",
    "iteration_stats",
    "memory_snapshots",
};

int tl_sniff_object(const unsigned char *b, size_t i, size_t n)
{
    i++;
    for (;;) {
        i = skip_ws(b, i, n);
        while (i < n && b[i] == ',')
            i = skip_ws(b, i + 1, n);
        if (i >= n)
            return TL_SNIFF_MORE;
        if (b[i] == '}')
            return TL_SNIFF_REPORT;
        if (b[i] != '"')
            return TL_SNIFF_REPORT;
        size_t k = i + 1;
        i = skip_string(b, i, n);
        if (i >= n)
            return TL_SNIFF_MORE;
        size_t klen = i - k - 1;
        if (key_is(b, k, klen, "traceEvents"))
            return TL_SNIFF_TRACE;
        for (size_t r = 0; r < sizeof report_keys / sizeof report_keys[0]; r++)
            if (key_is(b, k, klen, report_keys[r]))
                return TL_SNIFF_REPORT;
        i = skip_ws(b, i, n);
        if (i >= n)
            return TL_SNIFF_MORE;
        if (b[i] != ':')
            return TL_SNIFF_REPORT;
        i = skip_ws(b, i + 1, n);
        if (key_is(b, k, klen, "format") && i < n && b[i] == '"') {
            size_t v = i + 1, end = skip_string(b, i, n);
            if (end >= n)
                return TL_SNIFF_MORE;
            /* tally's own documents: its report, and its aggregates (partial
             * or merged), which may be far larger than any report */
            if (key_is(b, v, end - v - 1, "tally-report") || key_is(b, v, end - v - 1, "tally-partial") ||
                key_is(b, v, end - v - 1, "tally-aggregate"))
                return TL_SNIFF_REPORT;
        }
        i = skip_value(b, i, n);
        if (i >= n)
            return TL_SNIFF_MORE;
    }
}
