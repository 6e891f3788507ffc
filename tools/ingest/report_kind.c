/*
 * report_kind.c - what a report document is (report_readers.h): tally's own
 * report, FramePack's, Inferix's, a partial or merged aggregate, or none of
 * them, in which case a short text says what it is instead ("JSON object with
 * keys: a, b, c"), for the warning that skips it.
 */
#include "report_readers.h"

#include <stdio.h>
#include <string.h>

static int has(const json_t *o, const char *key)
{
    return json_object_get(o, key) != NULL;
}

static void set_why(char *why, size_t whylen, const char *text)
{
    if (why != NULL && whylen > 0)
        snprintf(why, whylen, "%s", text);
}

int tl_report_kind(const json_t *root, char *why, size_t whylen)
{
    set_why(why, whylen, "");
    if (root == NULL) {
        set_why(why, whylen, "no JSON document");
        return TL_FMT_UNKNOWN;
    }
    if (!json_is_object(root)) {
        char text[80];
        snprintf(text, sizeof text, "JSON %s, not an object", json_is_array(root) ? "array" : tl_readers_type(root));
        set_why(why, whylen, text);
        return TL_FMT_UNKNOWN;
    }
    const json_t *fmt = json_object_get(root, "format");
    if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-report") == 0)
        return TL_FMT_TALLY_REPORT;
    /* tally's own aggregates: their sessions are taken as they are. */
    if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-partial") == 0)
        return TL_FMT_AGGREGATE;
    if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-aggregate") == 0) {
        if (json_is_array(json_object_get(root, "sessions")))
            return TL_FMT_AGGREGATE;
        set_why(why, whylen,
                "a tally aggregate without its sessions (written by an older tally); "
                "make it again, or pass its partials");
        return TL_FMT_UNKNOWN;
    }
    if (json_is_string(fmt) && strcmp(json_string_value(fmt), "tally-compare") == 0) {
        set_why(why, whylen, "a tally compare result, not a profile");
        return TL_FMT_UNKNOWN;
    }
    if (json_is_object(json_object_get(root, "session_info")))
        return TL_FMT_INFERIX;
    if (has(root, "timing_stats") || has(root, "iteration_stats") ||
        (has(root, "memory_snapshots") && has(root, "timestamp")))
        return TL_FMT_FRAMEPACK;
    /* Files that sit beside Inferix reports but are not profiles. */
    if (has(root, "session_id") && (has(root, "gpu_data") || has(root, "cpu_data"))) {
        set_why(why, whylen, "Inferix raw profiling dump (session_id, gpu_data, cpu_data)");
        return TL_FMT_UNKNOWN;
    }
    if (has(root, "total_reports") && has(root, "rank_count")) {
        set_why(why, whylen, "Inferix aggregated report (total_reports, rank_count)");
        return TL_FMT_UNKNOWN;
    }
    if (has(root, "session_id") && (has(root, "gpu") || has(root, "cpu"))) {
        set_why(why, whylen, "Inferix summary (get_profiling_summary shape)");
        return TL_FMT_UNKNOWN;
    }
    if (has(root, "traceEvents")) {
        set_why(why, whylen, "Chrome trace (traceEvents), not a report");
        return TL_FMT_UNKNOWN;
    }
    if (json_object_size(root) == 0) {
        set_why(why, whylen, "empty JSON object");
        return TL_FMT_UNKNOWN;
    }
    /* "JSON object with keys: a, b, c" - the first few, in document order */
    char text[256];
    size_t o = (size_t)snprintf(text, sizeof text, "JSON object with keys: ");
    const char *key;
    const json_t *v;
    size_t shown = 0, total = json_object_size(root);
    json_object_foreach((json_t *)root, key, v)
    {
        char k[48];
        (void)v;
        if (shown == 8 || o + 40 >= sizeof text)
            break;
        tl_readers_clean_copy(k, sizeof k, key, strlen(key), 32);
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", shown ? ", " : "", k);
        shown++;
    }
    if (shown < total && o < sizeof text)
        snprintf(text + o, sizeof text - o, ", ... (%zu keys)", total);
    set_why(why, whylen, text);
    return TL_FMT_UNKNOWN;
}

int tl_readers_expect(tl_profile *p, const json_t *root, int format, const char *what)
{
    char why[256];
    int kind = tl_report_kind(root, why, sizeof why);
    if (kind == format) {
        p->id.format = format;
        return 0;
    }
    if (kind != TL_FMT_UNKNOWN)
        snprintf(why, sizeof why, "it looks like a %s", tl_format_name(kind));
    tl_profile_warn(p, "not %s: %s", what, why);
    return -1;
}
