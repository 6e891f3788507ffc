/*
 * read_tally_report.c - the reader of tally's own report (what libtally's
 * lib/report.c writes, shaped by schema/tally-report.schema.json), plus what
 * the three report readers share: loading a document with limits, telling the
 * formats apart (tl_report_kind), and typed getters that warn with the JSON
 * path of every number they refuse.
 *
 * A tally report is already in tally's units (ns, bytes) and carries both the
 * summary of every section and iteration and its raw samples: the summary
 * numbers become the statistic (from_summary), the samples are kept beside
 * them because compare's significance test needs them.
 */
#include "report_readers.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest value that llround() can return as an int64 without overflow. */
#define NS_LIMIT 9.2e18

/* ---- loading ------------------------------------------------------------ */

/* Copy src[0..n) into out for a message: control bytes become '?', and a
 * long text is cut (at a UTF-8 character boundary) and marked "...". */
static void clean_copy(char *out, size_t size, const char *src, size_t n, size_t max)
{
    size_t o = 0;
    if (size == 0)
        return;
    if (n > max) {
        while (max > 0 && ((unsigned char)src[max] & 0xC0) == 0x80)
            max--;
    }
    for (size_t i = 0; i < n && o + 1 < size; i++) {
        if (i == max && n > max) {
            for (const char *d = "..."; *d && o + 1 < size; d++)
                out[o++] = *d;
            break;
        }
        unsigned char c = (unsigned char)src[i];
        out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    out[o] = '\0';
}

/* Line and column (1-based, columns in UTF-8 characters) of byte offset pos. */
static void line_col(const char *buf, size_t len, size_t pos, long *line, long *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos && i < len; i++) {
        if (buf[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '+' || c == '-';
}

/* Length of a Python non-finite literal (NaN, Infinity, -Infinity) at s, or 0. */
static size_t nonfinite_at(const char *s, size_t n, size_t i)
{
    static const char *lits[] = { "NaN", "Infinity", "-Infinity" };
    if (i > 0 && is_word(s[i - 1]))
        return 0;
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lits[k]);
        if (i + l <= n && memcmp(s + i, lits[k], l) == 0 && (i + l == n || !is_word(s[i + l])))
            return l;
    }
    return 0;
}

/* One pass outside strings: nesting depth (refused beyond the limit) and the
 * non-finite literals Python's json.dump writes by default (allow_nan=True). */
typedef struct scan_result {
    size_t too_deep_at; /* offset of the bracket that went too deep, or SIZE_MAX */
    size_t nonfinite;   /* NaN / Infinity / -Infinity literals */
    size_t nan;         /* of which NaN (3 bytes, one short of "null") */
} scan_result;

static void scan_document(const char *s, size_t n, scan_result *r)
{
    int in_str = 0;
    size_t depth = 0;
    r->too_deep_at = SIZE_MAX;
    r->nonfinite = r->nan = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > TL_REPORT_MAX_DEPTH) {
                r->too_deep_at = i;
                return;
            }
        } else if (c == ']' || c == '}') {
            if (depth > 0)
                depth--;
        } else if (c == 'N' || c == 'I' || c == '-') {
            size_t l = nonfinite_at(s, n, i);
            if (l > 0) {
                r->nonfinite++;
                r->nan += l == 3;
                i += l - 1;
            }
        }
    }
}

/* A copy of s with every non-finite literal replaced by null (padded with
 * spaces; NaN grows by one byte). ins[] receives the offsets, in the copy,
 * after which a byte was inserted, so error positions can be mapped back. */
static char *replace_nonfinite(const char *s, size_t n, size_t nnan, size_t *outlen, size_t *ins)
{
    char *out = malloc(n + nnan + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0, k = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            out[o++] = c;
            if (c == '\\' && i + 1 < n)
                out[o++] = s[++i];
            else if (c == '"')
                in_str = 0;
            continue;
        }
        size_t l = (c == 'N' || c == 'I' || c == '-') ? nonfinite_at(s, n, i) : 0;
        if (l == 0) {
            in_str = c == '"';
            out[o++] = c;
            continue;
        }
        memcpy(out + o, "null", 4);
        if (l == 3)
            ins[k++] = o + 3;
        for (size_t x = 4; x < l; x++)
            out[o + x] = ' ';
        o += l > 4 ? l : 4;
        i += l - 1;
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

int tl_readers_load(tl_profile *p, const char *buf, size_t len, json_t **root)
{
    int ret = -1;
    char *copy = NULL;
    size_t *ins = NULL;
    size_t skip = 0, nins = 0;
    json_error_t err;

    *root = NULL;
    if (len > TL_REPORT_MAX_BYTES) {
        tl_profile_warn(p, "the document is %zu bytes; a report larger than %zu MiB is not read", len,
                        TL_REPORT_MAX_BYTES >> 20);
        goto out;
    }
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        skip = 3; /* a UTF-8 byte order mark, which jansson refuses */
    scan_result sc;
    scan_document(buf + skip, len - skip, &sc);
    if (sc.too_deep_at != SIZE_MAX) {
        long line, col;
        size_t at = sc.too_deep_at + skip;
        line_col(buf, len, at, &line, &col);
        tl_profile_warn_at(p, (int64_t)at,
                           "invalid report: nested deeper than %d levels at line %ld, column %ld "
                           "(byte %zu)",
                           TL_REPORT_MAX_DEPTH, line, col, at);
        goto out;
    }
    const char *doc = buf + skip;
    size_t doclen = len - skip;
    if (sc.nonfinite > 0) {
        ins = malloc((sc.nan ? sc.nan : 1) * sizeof *ins);
        if (ins != NULL)
            copy = replace_nonfinite(doc, doclen, sc.nan, &doclen, ins);
        if (copy == NULL) {
            tl_profile_warn(p, "out of memory reading the report");
            goto out;
        }
        nins = sc.nan;
        doc = copy;
        tl_profile_warn(p,
                        "%zu NaN/Infinity literal%s (not JSON; Python's json writes them) "
                        "read as null",
                        sc.nonfinite, sc.nonfinite == 1 ? "" : "s");
    }
    *root = json_loadb(doc, doclen, JSON_REJECT_DUPLICATES, &err);
    if (*root == NULL && json_error_code(&err) == json_error_duplicate_key) {
        char text[JSON_ERROR_TEXT_LENGTH];
        clean_copy(text, sizeof text, err.text, strlen(err.text), 120);
        tl_profile_warn(p,
                        "%s at line %d: a key appears twice in one object; the last value is "
                        "used",
                        text, err.line);
        *root = json_loadb(doc, doclen, 0, &err);
    }
    if (*root == NULL && (json_error_code(&err) == json_error_out_of_memory || (err.text[0] == '\0' && err.line < 0))) {
        /* not the input's fault: jansson reports every syntax error with a
         * text and a line, and an allocation that failed with neither (it
         * read "invalid JSON at line -1, column -1 (byte 0): ") */
        tl_profile_warn(p, "out of memory reading the report");
        goto out;
    }
    if (*root == NULL) {
        char text[JSON_ERROR_TEXT_LENGTH];
        long line = err.line, col = err.column;
        size_t pos = err.position > 0 ? (size_t)err.position : 0;
        if (skip > 0 || nins > 0) {
            /* positions are in the modified copy: map them back to the file */
            size_t before = 0;
            while (before < nins && ins[before] < pos)
                before++;
            pos = pos - before + skip;
            line_col(buf, len, pos > 0 ? pos - 1 : 0, &line, &col);
        }
        /* jansson's position counts the bytes read up to and including the
         * offending one; the message gives that byte's 0-based offset */
        clean_copy(text, sizeof text, err.text, strlen(err.text), 120);
        tl_profile_warn_at(p, (int64_t)(pos > 0 ? pos - 1 : 0), "invalid JSON at line %ld, column %ld (byte %zu): %s",
                           line, col, pos > 0 ? pos - 1 : 0, text);
        goto out;
    }
    ret = 0;
out:
    free(copy);
    free(ins);
    return ret;
}

/* ---- what a document is ------------------------------------------------- */

static int has(const json_t *o, const char *key)
{
    return json_object_get(o, key) != NULL;
}

static void set_why(char *why, size_t whylen, const char *text)
{
    if (why != NULL && whylen > 0)
        snprintf(why, whylen, "%s", text);
}

const char *tl_readers_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
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
        clean_copy(k, sizeof k, key, strlen(key), 32);
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

/* A partial or merged aggregate: its sessions are already analyzed, so the
 * document is kept for the analysis to take them (tl_partial_read_json);
 * here only the ranks they hold are noted, for rank assignment. */
static int read_aggregate(tl_profile *p, json_t *root)
{
    p->id.format = TL_FMT_AGGREGATE;
    json_t *sessions = json_object_get(root, "sessions"), *s;
    size_t i, n = json_array_size(sessions);
    p->aggregate_ranks = malloc((n ? n : 1) * sizeof *p->aggregate_ranks);
    if (p->aggregate_ranks == NULL) {
        tl_profile_warn(p, "out of memory");
        return -1;
    }
    json_array_foreach(sessions, i, s)
    {
        json_t *r = json_object_get(s, "rank");
        if (json_is_integer(r) && json_integer_value(r) >= 0 && json_integer_value(r) <= INT_MAX)
            p->aggregate_ranks[p->naggregate_ranks++] = (int)json_integer_value(r);
    }
    int lo = INT_MAX, hi = -1;
    for (size_t k = 0; k < p->naggregate_ranks; k++) {
        lo = p->aggregate_ranks[k] < lo ? p->aggregate_ranks[k] : lo;
        hi = p->aggregate_ranks[k] > hi ? p->aggregate_ranks[k] : hi;
    }
    const char *kind = json_string_value(json_object_get(root, "format"));
    if (hi >= 0)
        snprintf(p->format_detail, sizeof p->format_detail, "%s: %zu sessions, ranks %d to %d",
                 kind && !strcmp(kind, "tally-partial") ? "partial" : "merged", n, lo, hi);
    else
        snprintf(p->format_detail, sizeof p->format_detail, "%s: %zu sessions, none usable",
                 kind && !strcmp(kind, "tally-partial") ? "partial" : "merged", n);
    p->aggregate_doc = json_incref(root);
    return 0;
}

int tl_read_report(tl_profile *p, const char *buf, size_t len)
{
    json_t *root;
    char why[256];
    int ret = -1;
    if (tl_readers_load(p, buf, len, &root) != 0)
        return -1;
    switch (tl_report_kind(root, why, sizeof why)) {
    case TL_FMT_TALLY_REPORT:
        ret = tl_read_tally_report_json(p, root);
        break;
    case TL_FMT_FRAMEPACK:
        ret = tl_read_framepack_json(p, root);
        break;
    case TL_FMT_INFERIX:
        ret = tl_read_inferix_json(p, root);
        break;
    case TL_FMT_AGGREGATE:
        ret = read_aggregate(p, root);
        break;
    default:
        tl_profile_skip(p, "not a profile: %s", why);
        break;
    }
    json_decref(root);
    return ret;
}

/* ---- typed getters ------------------------------------------------------ */

const char *tl_readers_path(char *out, size_t size, const char *prefix, const char *key)
{
    char k[96];
    clean_copy(k, sizeof k, key, strlen(key), 80);
    if (prefix == NULL || prefix[0] == '\0')
        snprintf(out, size, "%s", k);
    else
        snprintf(out, size, "%s.%s", prefix, k);
    return out;
}

const char *tl_readers_index(char *out, size_t size, const char *prefix, size_t i)
{
    snprintf(out, size, "%s[%zu]", prefix, i);
    return out;
}

/* obj[key] for the getters: NULL and return code 1 or -1 when absent/null. */
static const json_t *lookup(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags,
                            const char *expected, int *rc)
{
    char full[256];
    if (obj == NULL) {
        /* the parent was missing or of the wrong type, and said so */
        *rc = (flags & TL_RD_OPTIONAL) ? 1 : -1;
        return NULL;
    }
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (v == NULL) {
        *rc = (flags & TL_RD_OPTIONAL) ? 1 : -1;
        if (*rc < 0)
            tl_profile_warn(p, "%s: missing (expected %s)", tl_readers_path(full, sizeof full, path, key), expected);
        return NULL;
    }
    if (json_is_null(v)) {
        *rc = (flags & TL_RD_NULLABLE) ? 1 : -1;
        if (*rc < 0)
            tl_profile_warn(p, "%s: expected %s, got null", tl_readers_path(full, sizeof full, path, key), expected);
        return NULL;
    }
    *rc = 0;
    return v;
}

int tl_readers_number(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, double *out)
{
    char full[256];
    const char *expected = (flags & TL_RD_SIGNED) ? "a number" : "a number >= 0";
    int rc;
    *out = NAN;
    const json_t *v = lookup(p, obj, path, key, flags, expected, &rc);
    if (v == NULL)
        return rc;
    if (!json_is_number(v)) {
        tl_profile_warn(p, "%s: expected %s, got %s", tl_readers_path(full, sizeof full, path, key), expected,
                        tl_readers_type(v));
        return -1;
    }
    double x = json_number_value(v);
    if (!isfinite(x) || (x < 0 && !(flags & TL_RD_SIGNED))) {
        tl_profile_warn(p, "%s: expected %s, got %g", tl_readers_path(full, sizeof full, path, key), expected, x);
        return -1;
    }
    *out = x;
    return 0;
}

int tl_readers_int(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, int64_t min,
                   int64_t max, int64_t *out)
{
    char full[256], expected[80];
    int rc;
    if (max == INT64_MAX)
        snprintf(expected, sizeof expected, "an integer >= %lld", (long long)min);
    else
        snprintf(expected, sizeof expected, "an integer in [%lld, %lld]", (long long)min, (long long)max);
    *out = 0;
    const json_t *v = lookup(p, obj, path, key, flags, expected, &rc);
    if (v == NULL)
        return rc;
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x >= min && x <= max) {
            *out = (int64_t)x;
            return 0;
        }
        tl_profile_warn(p, "%s: expected %s, got %lld", tl_readers_path(full, sizeof full, path, key), expected,
                        (long long)x);
        return -1;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x == floor(x) && x >= (double)min && x <= (double)max && fabs(x) < NS_LIMIT) {
            *out = (int64_t)x;
            return 0;
        }
        tl_profile_warn(p, "%s: expected %s, got %g", tl_readers_path(full, sizeof full, path, key), expected, x);
        return -1;
    }
    tl_profile_warn(p, "%s: expected %s, got %s", tl_readers_path(full, sizeof full, path, key), expected,
                    tl_readers_type(v));
    return -1;
}

int tl_readers_ns(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, double scale,
                  int64_t *out)
{
    char full[256];
    double x;
    *out = INT64_MIN;
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (scale == 1.0 && json_is_integer(v)) {
        /* ns already: keep every digit (a double would round above 2^53) */
        json_int_t i = json_integer_value(v);
        if (i > TL_TRACE_TS_MAX || i < -TL_TRACE_TS_MAX) {
            /* beyond 95 years: not a time, and a sum with it would overflow */
            tl_profile_warn(p, "%s: %lld is too large for a time in ns", tl_readers_path(full, sizeof full, path, key),
                            (long long)i);
            return -1;
        }
        if (i < 0 && !(flags & TL_RD_SIGNED)) {
            tl_profile_warn(p, "%s: expected a number >= 0, got %lld", tl_readers_path(full, sizeof full, path, key),
                            (long long)i);
            return -1;
        }
        *out = (int64_t)i;
        return 0;
    }
    int rc = tl_readers_number(p, obj, path, key, flags & ~TL_RD_SIGNED, &x);
    if (rc != 0)
        return rc;
    double ns = x * scale;
    if (!(fabs(ns) <= (double)TL_TRACE_TS_MAX)) {
        tl_profile_warn(p, "%s: %g is too large for a time in ns", tl_readers_path(full, sizeof full, path, key), x);
        return -1;
    }
    *out = llround(ns);
    return 0;
}

int tl_readers_string(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, const char **s,
                      size_t *len)
{
    char full[256];
    int rc;
    *s = "";
    *len = 0;
    const json_t *v = lookup(p, obj, path, key, flags, "a string", &rc);
    if (v == NULL)
        return rc;
    if (!json_is_string(v)) {
        tl_profile_warn(p, "%s: expected a string, got %s", tl_readers_path(full, sizeof full, path, key),
                        tl_readers_type(v));
        return -1;
    }
    *s = json_string_value(v);
    *len = json_string_length(v);
    return 0;
}

static const json_t *typed(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, int type,
                           const char *expected)
{
    char full[256];
    int rc;
    const json_t *v = lookup(p, obj, path, key, flags, expected, &rc);
    if (v == NULL)
        return NULL;
    if ((int)json_typeof(v) != type) {
        tl_profile_warn(p, "%s: expected %s, got %s", tl_readers_path(full, sizeof full, path, key), expected,
                        tl_readers_type(v));
        return NULL;
    }
    return v;
}

const json_t *tl_readers_object(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags)
{
    return typed(p, obj, path, key, flags, JSON_OBJECT, "an object");
}

const json_t *tl_readers_array(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags)
{
    return typed(p, obj, path, key, flags, JSON_ARRAY, "an array");
}

/* ---- building the profile ----------------------------------------------- */

int tl_readers_names_left(tl_profile *p)
{
    if (p->nstats < TL_REPORT_MAX_NAMES)
        return 1;
    tl_profile_warn(p, "more than %u names in one report: the rest are ignored", TL_REPORT_MAX_NAMES);
    return 0;
}

tl_name_stat *tl_readers_summary_stat(tl_profile *p, const char *path, const char *cat, const char *name,
                                      size_t name_len, uint64_t count, int64_t total, int64_t min, int64_t max,
                                      double mean, double median, double p95, double std)
{
    if (min > max) {
        tl_profile_warn(p, "%s: min %lld ns is above max %lld ns; entry skipped", path, (long long)min, (long long)max);
        return NULL;
    }
    /* the mean of values in [min, max] lies in [min, max] (1 ns of rounding allowed) */
    if (mean < (double)min - 1.0 - 1e-9 * (double)min || mean > (double)max + 1.0 + 1e-9 * (double)max) {
        tl_profile_warn(p,
                        "%s: mean %.0f ns is outside [min, max] = [%lld, %lld] ns; entry "
                        "skipped",
                        path, mean, (long long)min, (long long)max);
        return NULL;
    }
    /* read from a histogram clamped to [min, max] (stats.h), so inside it too */
    if ((isfinite(median) && (median < (double)min - 1.0 || median > (double)max + 1.0)) ||
        (isfinite(p95) && (p95 < (double)min - 1.0 || p95 > (double)max + 1.0))) {
        tl_profile_warn(p,
                        "%s: median or p95 is outside [min, max] = [%lld, %lld] ns; entry "
                        "skipped",
                        path, (long long)min, (long long)max);
        return NULL;
    }
    if (!tl_readers_names_left(p))
        return NULL;
    tl_name_stat *s = tl_profile_stat(p, cat, strlen(cat), name, name_len);
    if (s == NULL) {
        tl_profile_warn(p, "%s: out of memory", path);
        return NULL;
    }
    if (p->names_closed && s->name != tl_strtab_find(&p->strs, name, name_len)) {
        /* Beyond the names budget: the name is one of "(other names)", which
         * takes its summary like a folded name's statistics (the budget's
         * warning says so). Its samples are not the pool's: NULL. */
        tl_dur_stat d = { .count = count,
                          .total = (uint64_t)total,
                          .min = (uint64_t)min,
                          .max = (uint64_t)max,
                          .mean = mean,
                          .m2 = isfinite(std) && count > 1 ? std * std * (double)(count - 1) : 0.0 };
        tl_dur_stat_merge(&s->d, &d, TL_PROFILE_MAX_SAMPLES);
        s->median_ns = s->p95_ns = s->std_ns = NAN;
        return NULL;
    }
    if (s->d.count != 0 || s->from_summary) {
        tl_profile_warn(p, "%s: a second %s of this name; the first is kept", path, cat);
        return NULL;
    }
    s->from_summary = 1;
    s->d.count = count;
    s->d.total = (uint64_t)total;
    s->d.min = (uint64_t)min;
    s->d.max = (uint64_t)max;
    s->d.mean = mean;
    s->d.m2 = isfinite(std) && count > 1 ? std * std * (double)(count - 1) : 0.0;
    s->median_ns = median;
    s->p95_ns = p95;
    s->std_ns = std;
    return s;
}

char *tl_readers_text(const json_t *v)
{
    if (json_is_string(v))
        return strndup(json_string_value(v), json_string_length(v));
    if (v == NULL)
        return strdup("");
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

void tl_readers_tags(tl_profile *p, const json_t *tags)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)tags, key, v)
    {
        char *text = tl_readers_text(v);
        if (text == NULL || tl_profile_add_tag(p, key, strlen(key), text, strlen(text)) != 0)
            tl_profile_warn(p, "tags.%.80s: out of memory", key);
        free(text);
    }
}

int tl_readers_add_device(tl_profile *p, int64_t id, const char *name, size_t name_len, double total_memory)
{
    tl_device_info *d = NULL;
    for (uint32_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].id == id)
            d = &p->devices[i];
    if (d == NULL) {
        if (p->ndevices >= 1024)
            return -1;
        tl_device_info *x = realloc(p->devices, (p->ndevices + 1) * sizeof *x);
        if (x == NULL)
            return -1;
        p->devices = x;
        d = &p->devices[p->ndevices++];
        memset(d, 0, sizeof *d);
        d->id = id;
    }
    if (name != NULL && name_len > 0)
        clean_copy(d->name, sizeof d->name, name, name_len, sizeof d->name - 4);
    if (isfinite(total_memory) && total_memory > d->total_memory)
        d->total_memory = total_memory;
    return 0;
}

/* ---- the tally report --------------------------------------------------- */

/* Every sample of the entry is in the report (none dropped, all valid): the
 * histogram is rebuilt from them (all of them, beyond the profile's kept
 * samples), so the statistic is exact like one read from events, and median
 * and p95 merge across ranks and sessions instead of being "unknown". */
static void exact_from_samples(tl_name_stat *s, const json_t *samples)
{
    size_t k;
    const json_t *x;
    json_array_foreach(samples, k, x)
    {
        json_int_t v = json_is_integer(x) ? json_integer_value(x) : -1;
        /* beyond the kept samples they were not checked yet; out of memory */
        if (v < 0 || (uint64_t)v < s->d.min || (uint64_t)v > s->d.max || tl_hist_add(&s->d.hist, (uint64_t)v) != 0) {
            tl_hist_release(&s->d.hist); /* stays a summary statistic */
            return;
        }
    }
    s->from_summary = 0;
}

/* sections[] / iterations[]: one statistic per entry from its summary numbers,
 * with its raw samples. The first entry of iterations[] (the writer sorts by
 * total time, so it is the main loop) also becomes the step table: step k is
 * its k-th sample. The report has no start times for iterations, so a step's
 * ts is the sum of the durations before it: iterations are taken as
 * back to back from 0, which is only an approximation of their wall-clock
 * position but keeps step order and lengths exact. */
static void read_durations(tl_profile *p, const json_t *root, const char *list, const char *cat, int steps)
{
    const json_t *arr = tl_readers_array(p, root, "", list, 0);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, list, i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        const char *name;
        size_t name_len;
        int64_t count, total, min, max, dropped;
        double mean, std, median, p95;
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_int(p, e, path, "count", 0, 1, INT64_MAX, &count) != 0 ||
            tl_readers_ns(p, e, path, "total_ns", 0, 1.0, &total) != 0 ||
            tl_readers_ns(p, e, path, "min_ns", 0, 1.0, &min) != 0 ||
            tl_readers_ns(p, e, path, "max_ns", 0, 1.0, &max) != 0 ||
            tl_readers_number(p, e, path, "mean_ns", 0, &mean) != 0 ||
            tl_readers_number(p, e, path, "std_ns", 0, &std) != 0 ||
            tl_readers_number(p, e, path, "median_ns", 0, &median) != 0 ||
            tl_readers_number(p, e, path, "p95_ns", 0, &p95) != 0 ||
            tl_readers_int(p, e, path, "samples_dropped", 0, 0, INT64_MAX, &dropped) != 0)
            continue;
        const json_t *samples = tl_readers_array(p, e, path, "samples_ns", 0);
        if (samples == NULL)
            continue;
        tl_name_stat *s = tl_readers_summary_stat(p, path, cat, name, name_len, (uint64_t)count, total, min, max, mean,
                                                  median, p95, std);
        if (s == NULL)
            continue;
        size_t n = json_array_size(samples);
        size_t keep = n < TL_PROFILE_MAX_SAMPLES ? n : TL_PROFILE_MAX_SAMPLES;
        s->d.samples_dropped = (uint64_t)dropped + (n - keep);
        if (keep > 0) {
            s->d.samples = malloc(keep * sizeof *s->d.samples);
            if (s->d.samples == NULL) {
                s->d.samples_dropped += keep;
                keep = 0;
            }
            s->d.samples_cap = (uint32_t)keep;
        }
        size_t bad = 0;
        int64_t ts = 0;
        /* Every sample is a step (the step table is not capped: 2,000
         * iterations are 2,000 steps); only the first TL_PROFILE_MAX_SAMPLES
         * are also kept as samples for compare's tests, and the rest are
         * counted in samples_dropped. */
        int is_steps = steps && i == 0;
        size_t upto = is_steps ? n : keep;
        for (size_t k = 0; k < upto; k++) {
            const json_t *x = json_array_get(samples, k);
            json_int_t v = json_is_integer(x) ? json_integer_value(x) : -1;
            if (v < min || v > max) {
                if (bad++ == 0)
                    tl_profile_warn(p,
                                    "%s.samples_ns[%zu]: expected an integer in [min_ns, "
                                    "max_ns] = [%lld, %lld]; such samples are skipped",
                                    path, k, (long long)min, (long long)max);
                if (k < keep)
                    s->d.samples_dropped++;
                continue;
            }
            if (k < keep)
                s->d.samples[s->d.nsamples++] = (uint64_t)v;
            if (is_steps) {
                tl_profile_add_step(p, (int64_t)k, ts, (int64_t)v);
                ts += (int64_t)v;
            }
        }
        /* The collector keeps at most TALLY_MAX_SAMPLES samples per name: then
         * the step table holds the first of them only. Say so, with the cap. */
        if (is_steps && dropped > 0)
            tl_profile_warn(p,
                            "%s (\"%.*s\"): the step table holds the first %zu of %lld iterations: the "
                            "collector kept %zu samples (TALLY_MAX_SAMPLES); step statistics cover those, "
                            "the section totals all %lld",
                            path, (int)(name_len > 80 ? 80 : name_len), name, n, (long long)count, n, (long long)count);
        if ((uint64_t)n + (uint64_t)dropped != (uint64_t)count)
            tl_profile_warn(p, "%s: %zu samples + %lld dropped does not make count %lld", path, n, (long long)dropped,
                            (long long)count);
        else if (dropped == 0 && bad == 0)
            exact_from_samples(s, samples);
    }
}

static void read_counters(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "counters", 0);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "counters", i);
        const char *name;
        size_t name_len;
        int64_t count;
        double sum, mean, min, max, std, last;
        const int f = TL_RD_SIGNED | TL_RD_NULLABLE; /* null: a non-finite value was counted */
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_int(p, e, path, "count", 0, 1, INT64_MAX, &count) != 0 ||
            tl_readers_number(p, e, path, "sum", f, &sum) < 0 || tl_readers_number(p, e, path, "mean", f, &mean) < 0 ||
            tl_readers_number(p, e, path, "min", f, &min) < 0 || tl_readers_number(p, e, path, "max", f, &max) < 0 ||
            tl_readers_number(p, e, path, "std", TL_RD_NULLABLE, &std) < 0 ||
            tl_readers_number(p, e, path, "last", f, &last) < 0)
            continue;
        if (min > max) {
            tl_profile_warn(p, "%s: min %g is above max %g; entry skipped", path, min, max);
            continue;
        }
        tl_counter *c = tl_profile_counter(p, name, name_len);
        if (c == NULL) {
            tl_profile_warn(p, "%s: out of memory", path);
            continue;
        }
        c->source = TL_COUNTER_USER;
        if (c->v.count != 0) {
            tl_profile_warn(p, "%s: a second counter of this name; the first is kept", path);
            continue;
        }
        c->v.count = (uint64_t)count;
        c->v.sum = sum;
        c->v.mean = mean;
        c->v.min = min;
        c->v.max = max;
        c->v.m2 = count > 1 ? std * std * (double)(count - 1) : 0.0; /* NaN if std unknown */
        c->v.last = last;
    }
}

/* events[]: {name, time_ns, tid, args} (tally_event), kept for the report's
 * table and timeline markers with their args as text; counted as instants. */
static void read_events(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "events", 0);
    size_t i;
    const json_t *e;
    char path[160];
    p->events += json_array_size(arr);
    p->by_phase['i'] += json_array_size(arr);
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "events", i);
        const char *name;
        size_t name_len;
        int64_t t;
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0)
            continue;
        char *args = tl_readers_text(json_object_get(e, "args"));
        if (args == NULL || tl_profile_add_event(p, t, name, name_len, args, strlen(args)) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        free(args);
    }
}

/* counter_rates[] (tally_counter_rate): each rate, hits / (hits + misses)
 * of a counter pair, as a counter of its own name with that one value (0 to
 * 1), so every table of counters shows it beside its pair. */
static void read_counter_rates(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "counter_rates", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        const char *name;
        size_t name_len;
        double rate;
        tl_readers_index(path, sizeof path, "counter_rates", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_number(p, e, path, "rate", TL_RD_NULLABLE, &rate) < 0)
            continue;
        if (isnan(rate))
            continue; /* nothing looked up */
        if (!(rate >= 0 && rate <= 1)) {
            tl_profile_warn(p, "%s: rate %g is not a share from 0 to 1; left out", path, rate);
            continue;
        }
        tl_counter *c = tl_profile_counter(p, name, name_len);
        if (c == NULL) {
            tl_profile_warn(p, "%s: out of memory", path);
            continue;
        }
        if (c->v.count != 0) {
            tl_profile_warn(p, "%s: a counter of this name exists; the rate is left out", path);
            continue;
        }
        c->source = TL_COUNTER_RATE; /* shown as a rate (%) beside its pair */
        tl_value_stat_add(&c->v, rate, 0);
    }
}

/* section_args[] (tally_begin_args): a section's metadata, shown with the
 * events (at the section's start, under its name). */
static void read_section_args(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "section_args", TL_RD_OPTIONAL);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "section_args", i);
        const char *name;
        size_t name_len;
        int64_t t;
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_string(p, e, path, "name", 0, &name, &name_len) != 0 ||
            tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0)
            continue;
        char *args = tl_readers_text(json_object_get(e, "args"));
        if (args == NULL || tl_profile_add_event(p, t, name, name_len, args, strlen(args)) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        free(args);
    }
    int64_t n;
    if (tl_readers_int(p, root, "", "section_args_dropped", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p, "section_args_dropped: %lld sections' metadata beyond the collector's 100000 not kept",
                        (long long)n);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

#define TL_GPU_MAX_BYTES 72057594037927936.0 /* 2^56 (64 PiB): beyond, not a memory size */

/* memory_snapshots[]: host memory from rss/peak_rss; allocator memory from
 * the first registered provider that reports "<provider>.allocated" (etc.);
 * device used from NVML's used_bytes of the fullest of gpus[] (what the
 * device has in use, including the allocator's cache and other processes:
 * a different thing from allocated, kept apart); the program's own device
 * memory from NVML's per-process process_used_bytes, summed over gpus[]
 * (its own series: never merged with device used). */
static void read_snapshots(tl_profile *p, const json_t *root)
{
    const json_t *arr = tl_readers_array(p, root, "", "memory_snapshots", 0);
    size_t i;
    const json_t *e;
    char path[160];
    const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
    json_array_foreach(arr, i, e)
    {
        tl_readers_index(path, sizeof path, "memory_snapshots", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        const char *label;
        size_t label_len;
        int64_t t;
        tl_mem_snapshot s = {
            .allocated = NAN, .reserved = NAN, .peak_allocated = NAN, .device_used = NAN, .process_used = NAN
        };
        if (tl_readers_string(p, e, path, "label", 0, &label, &label_len) != 0 ||
            tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0 ||
            tl_readers_number(p, e, path, "rss_bytes", f, &s.rss) < 0 ||
            tl_readers_number(p, e, path, "peak_rss_bytes", f, &s.peak_rss) < 0)
            continue;
        s.ts_ns = t;
        const json_t *prov = tl_readers_object(p, e, path, "providers", TL_RD_OPTIONAL);
        const char *key;
        const json_t *v;
        char pp[192];
        tl_readers_path(pp, sizeof pp, path, "providers");
        int ok = 1;
        json_object_foreach((json_t *)prov, key, v)
        {
            double *dst = NULL;
            if (ends_with(key, ".allocated"))
                dst = &s.allocated;
            else if (ends_with(key, ".reserved"))
                dst = &s.reserved;
            else if (ends_with(key, ".peak_allocated") || ends_with(key, ".max_allocated"))
                dst = &s.peak_allocated;
            if (dst == NULL || !isnan(*dst))
                continue;
            double x;
            if (tl_readers_number(p, prov, pp, key, TL_RD_NULLABLE, &x) < 0)
                ok = 0;
            else
                *dst = x;
        }
        const json_t *gpus = tl_readers_array(p, e, path, "gpus", TL_RD_OPTIONAL);
        for (size_t g = 0; ok && g < json_array_size(gpus); g++) {
            char gp[192];
            double used, own;
            snprintf(gp, sizeof gp, "%s.gpus[%zu]", path, g);
            if (tl_readers_number(p, json_array_get(gpus, g), gp, "used_bytes", TL_RD_NULLABLE, &used) < 0 ||
                tl_readers_number(p, json_array_get(gpus, g), gp, "process_used_bytes", f, &own) < 0)
                ok = 0;
            if (ok && isfinite(used) && !(used <= s.device_used))
                s.device_used = used;
            if (ok && isfinite(own) && own < TL_GPU_MAX_BYTES)
                s.process_used = (isfinite(s.process_used) ? s.process_used : 0) + own;
        }
        if (!ok)
            continue;
        s.label = tl_strtab_intern(&p->strs, label, label_len);
        if (s.label == UINT32_MAX || tl_profile_add_snapshot(p, &s) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
    }
}

/* One GPU reading of the sampler or of system.gpus. 0 or -1 (warned). */
/* GPU readings that cannot be real (NVML's "not available" is 0xFFFFFFFF,
 * 4294967295; a wedged driver returns anything): a utilization outside
 * 0-100 %, memory used above the total, a temperature or power no GPU has.
 * Left out (NaN), counted, and said once per report with the first. */
typedef struct gpu_garbage {
    uint64_t n;
    char first[200];
} gpu_garbage;

#define TL_GPU_MAX_WATTS 10000.0
#define TL_GPU_MIN_CELSIUS (-100.0)
#define TL_GPU_MAX_CELSIUS 200.0
#define TL_GPU_MAX_MHZ 100000.0

static void not_a_reading(gpu_garbage *gb, double *v, const char *path, const char *key)
{
    if (gb->n++ == 0)
        snprintf(gb->first, sizeof gb->first, "%s.%s = %.15g", path, key, *v);
    *v = NAN;
}

static void drop_garbage(gpu_garbage *gb, tl_gpu_sample *s, const char *path)
{
    if (!isnan(s->util_pct) && !(s->util_pct >= 0 && s->util_pct <= 100))
        not_a_reading(gb, &s->util_pct, path, "utilization_pct");
    if (!isnan(s->temperature_c) && !(s->temperature_c >= TL_GPU_MIN_CELSIUS && s->temperature_c <= TL_GPU_MAX_CELSIUS))
        not_a_reading(gb, &s->temperature_c, path, "temperature_c");
    if (!isnan(s->power_w) && !(s->power_w <= TL_GPU_MAX_WATTS))
        not_a_reading(gb, &s->power_w, path, "power_w");
    if (s->power_limit_w > TL_GPU_MAX_WATTS)
        not_a_reading(gb, &s->power_limit_w, path, "power_limit_w");
    if (!isnan(s->mem_total) && !(s->mem_total < TL_GPU_MAX_BYTES))
        not_a_reading(gb, &s->mem_total, path, "total_bytes");
    if (!isnan(s->mem_used) && !(s->mem_used < TL_GPU_MAX_BYTES && !(s->mem_total > 0 && s->mem_used > s->mem_total)))
        not_a_reading(gb, &s->mem_used, path, "used_bytes");
    if (!isnan(s->proc_used) &&
        !(s->proc_used < TL_GPU_MAX_BYTES && !(s->mem_total > 0 && s->proc_used > s->mem_total)))
        not_a_reading(gb, &s->proc_used, path, "process_used_bytes");
}

static void say_garbage(tl_profile *p, const gpu_garbage *gb)
{
    if (gb->n)
        tl_profile_warn(p,
                        "%" PRIu64 " GPU reading%s that cannot be real left out (a utilization outside 0-100 %%, "
                        "memory used above the total, 4294967295: NVML's \"not available\"); the first: %s",
                        gb->n, gb->n == 1 ? "" : "s", gb->first);
}

static int read_gpu(tl_profile *p, const json_t *g, const char *path, tl_gpu_sample *s, const char **name,
                    size_t *name_len, gpu_garbage *gb)
{
    const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
    int64_t index;
    if (!json_is_object(g)) {
        tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(g));
        return -1;
    }
    if (tl_readers_int(p, g, path, "index", 0, 0, INT32_MAX, &index) != 0 ||
        tl_readers_number(p, g, path, "used_bytes", TL_RD_NULLABLE, &s->mem_used) < 0 ||
        tl_readers_number(p, g, path, "total_bytes", TL_RD_NULLABLE, &s->mem_total) < 0 ||
        tl_readers_number(p, g, path, "utilization_pct", f, &s->util_pct) < 0 ||
        tl_readers_number(p, g, path, "temperature_c", f | TL_RD_SIGNED, &s->temperature_c) < 0 ||
        tl_readers_number(p, g, path, "power_w", f, &s->power_w) < 0 ||
        tl_readers_number(p, g, path, "power_limit_w", f, &s->power_limit_w) < 0 ||
        tl_readers_number(p, g, path, "process_used_bytes", f, &s->proc_used) < 0 ||
        tl_readers_number(p, g, path, "sm_clock_mhz", f, &s->sm_clock_mhz) < 0 ||
        tl_readers_number(p, g, path, "memory_clock_mhz", f, &s->mem_clock_mhz) < 0 ||
        tl_readers_number(p, g, path, "base_sm_clock_mhz", f, &s->base_clock_mhz) < 0)
        return -1;
    drop_garbage(gb, s, path);
    /* clocks: 0 unknown (absent, null, or not a clock: NaN or beyond 100 GHz) */
    double *clk[3] = { &s->sm_clock_mhz, &s->mem_clock_mhz, &s->base_clock_mhz };
    for (int k = 0; k < 3; k++)
        if (!(*clk[k] > 0 && *clk[k] <= TL_GPU_MAX_MHZ))
            *clk[k] = 0;
    if (!(s->power_limit_w > 0))
        s->power_limit_w = 0; /* unknown */
    int64_t reasons;
    int rc = tl_readers_int(p, g, path, "throttle_reasons", f, 0, INT64_MAX, &reasons);
    if (rc < 0)
        return -1;
    s->throttle = rc == 0 ? (uint64_t)reasons : 0;
    s->has_throttle = rc == 0;
    s->device = index;
    if (name != NULL && tl_readers_string(p, g, path, "name", TL_RD_OPTIONAL, name, name_len) < 0)
        return -1;
    return 0;
}

/* sampler.series[]: a GPU sample per GPU, a host memory point (RSS) and the
 * process CPU usage as the counter "cpu_usage_pct" (named as for Inferix). */
static void read_sampler(tl_profile *p, const json_t *root)
{
    const json_t *sampler = tl_readers_object(p, root, "", "sampler", TL_RD_NULLABLE);
    if (sampler == NULL)
        return;
    int64_t dropped;
    if (tl_readers_int(p, sampler, "sampler", "points_dropped", TL_RD_OPTIONAL, 0, INT64_MAX, &dropped) == 0 &&
        dropped > 0)
        tl_profile_warn(p,
                        "sampler.points_dropped: the collector dropped %lld sampler points; "
                        "the series has gaps",
                        (long long)dropped);
    /* the point budget reached: the series keeps every stride-th point */
    int64_t decimated, budget = 0, stride = 0;
    if (tl_readers_int(p, sampler, "sampler", "points_decimated", TL_RD_OPTIONAL, 0, INT64_MAX, &decimated) == 0 &&
        decimated > 0) {
        (void)tl_readers_int(p, sampler, "sampler", "points_budget", TL_RD_OPTIONAL, 0, INT64_MAX, &budget);
        (void)tl_readers_int(p, sampler, "sampler", "stride", TL_RD_OPTIONAL, 1, INT64_MAX, &stride);
        tl_profile_warn(p,
                        "sampler: the collector's point budget (%lld points, TALLY_SAMPLE_POINTS) was reached; "
                        "%lld points were decimated and the series keeps every %lld%s point taken",
                        (long long)budget, (long long)decimated, (long long)stride,
                        stride == 2   ? "nd"
                        : stride == 3 ? "rd"
                                      : "th");
    }
    /* why a part has no readings (NVML absent, /proc/self/io unreadable) */
    static const char *const status_keys[2] = { "gpu_status", "disk_status" };
    for (int k = 0; k < 2; k++) {
        const char *why;
        size_t why_len;
        char text[200];
        if (tl_readers_string(p, sampler, "sampler", status_keys[k], TL_RD_OPTIONAL, &why, &why_len) != 0)
            continue;
        clean_copy(text, sizeof text, why, why_len, sizeof text - 4);
        tl_profile_warn(p, "sampler.%s: %s: %s", status_keys[k], text,
                        k == 0 ? "no GPU series from the collector's sampler" : "no disk rates");
    }
    const json_t *series = tl_readers_array(p, sampler, "sampler", "series", 0);
    size_t i;
    const json_t *e;
    char path[160];
    gpu_garbage gb = { 0, "" };
    json_array_foreach(series, i, e)
    {
        tl_readers_index(path, sizeof path, "sampler.series", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        int64_t t;
        double cpu, rss, avail, load, drd, dwr, vrd, vwr;
        const int f = TL_RD_OPTIONAL | TL_RD_NULLABLE;
        if (tl_readers_ns(p, e, path, "time_ns", 0, 1.0, &t) != 0 ||
            tl_readers_number(p, e, path, "cpu_pct", f, &cpu) < 0 ||
            tl_readers_number(p, e, path, "rss_bytes", f, &rss) < 0 ||
            tl_readers_number(p, e, path, "system_available_bytes", f, &avail) < 0 ||
            tl_readers_number(p, e, path, "load1", f, &load) < 0 ||
            tl_readers_number(p, e, path, "disk_read_bytes_per_s", f, &drd) < 0 ||
            tl_readers_number(p, e, path, "disk_write_bytes_per_s", f, &dwr) < 0 ||
            tl_readers_number(p, e, path, "device_read_bytes_per_s", f, &vrd) < 0 ||
            tl_readers_number(p, e, path, "device_write_bytes_per_s", f, &vwr) < 0)
            continue;
        /* a negative rate is not a reading */
        if (drd < 0)
            drd = NAN;
        if (dwr < 0)
            dwr = NAN;
        if (vrd < 0)
            vrd = NAN;
        if (vwr < 0)
            vwr = NAN;
        /* the telemetry series (a NaN reading is not recorded) */
        if (tl_profile_add_point(p, TL_SERIES_CPU, -1, t, cpu) != 0 ||
            tl_profile_add_point(p, TL_SERIES_RSS, -1, t, rss) != 0 ||
            tl_profile_add_point(p, TL_SERIES_SYS_AVAIL, -1, t, avail) != 0 ||
            tl_profile_add_point(p, TL_SERIES_LOAD, -1, t, load) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DISK_READ, -1, t, drd) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DISK_WRITE, -1, t, dwr) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DEVICE_READ, -1, t, vrd) != 0 ||
            tl_profile_add_point(p, TL_SERIES_DEVICE_WRITE, -1, t, vwr) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
        if (!isnan(cpu)) {
            tl_counter *c = tl_profile_counter(p, "cpu_usage_pct", strlen("cpu_usage_pct"));
            if (c != NULL)
                tl_value_stat_add(&c->v, cpu, (uint64_t)t);
        }
        if (!isnan(rss)) {
            /* the process RSS: host memory in use, not allocator-allocated */
            tl_mem_point pt = { .ts_ns = t, .device = -1, .allocated = NAN, .reserved = NAN, .used = rss };
            tl_profile_add_mem(p, &pt);
        }
        const json_t *gpus = tl_readers_array(p, e, path, "gpus", TL_RD_OPTIONAL);
        size_t g;
        const json_t *ge;
        json_array_foreach(gpus, g, ge)
        {
            char gp[192];
            snprintf(gp, sizeof gp, "%s.gpus[%zu]", path, g);
            tl_gpu_sample s = { .ts_ns = t };
            if (read_gpu(p, ge, gp, &s, NULL, NULL, &gb) == 0)
                tl_profile_add_gpu_sample(p, &s);
        }
    }
    say_garbage(p, &gb);
}

/* blocks (tally_block_begin/end): each block's time and frames, read like
 * Inferix's block_analysis.blocks[] (FPS, first-block delay: diffusion.c). */
static void read_blocks(tl_profile *p, const json_t *root)
{
    const json_t *b = tl_readers_object(p, root, "", "blocks", TL_RD_OPTIONAL | TL_RD_NULLABLE);
    if (b == NULL)
        return;
    const json_t *items = tl_readers_array(p, b, "blocks", "items", 0);
    size_t i;
    const json_t *e;
    char path[160];
    json_array_foreach(items, i, e)
    {
        int64_t dur;
        double frames, rss, gpu;
        tl_readers_index(path, sizeof path, "blocks.items", i);
        if (!json_is_object(e)) {
            tl_profile_warn(p, "%s: expected an object, got %s", path, tl_readers_type(e));
            continue;
        }
        if (tl_readers_ns(p, e, path, "dur_ns", 0, 1.0, &dur) != 0 ||
            tl_readers_number(p, e, path, "frames", TL_RD_OPTIONAL | TL_RD_NULLABLE, &frames) < 0 ||
            tl_readers_number(p, e, path, "rss_bytes", TL_RD_OPTIONAL | TL_RD_NULLABLE, &rss) < 0 ||
            tl_readers_number(p, e, path, "gpu_memory_bytes", TL_RD_OPTIONAL | TL_RD_NULLABLE, &gpu) < 0)
            continue;
        /* memory at the block's end (absent in older reports): a negative
         * amount is not one */
        tl_diff_block blk = { dur, frames, gpu >= 0 ? gpu : NAN, rss >= 0 ? rss : NAN };
        if (tl_profile_add_block(p, &blk) != 0)
            tl_profile_warn(p, "%s: out of memory", path);
    }
    static const char *const counts[3] = { "dropped", "unmatched_ends", "restarted" };
    static const char *const what[3] = {
        "blocks beyond the collector's 100000 are not listed: FPS and the block count cover the listed ones",
        "tally_block_end() calls without an open block",
        "tally_block_begin() calls while a block was open (the earlier begin was dropped)",
    };
    for (int k = 0; k < 3; k++) {
        int64_t n;
        if (tl_readers_int(p, b, "blocks", counts[k], TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
            tl_profile_warn(p, "blocks.%s: %lld %s", counts[k], (long long)n, what[k]);
    }
}

static void read_system(tl_profile *p, const json_t *root)
{
    const json_t *sys = tl_readers_object(p, root, "", "system", 0);
    const json_t *gpus = tl_readers_array(p, sys, "system", "gpus", 0);
    size_t i;
    const json_t *g;
    gpu_garbage gb = { 0, "" };
    json_array_foreach(gpus, i, g)
    {
        char path[160];
        const char *name = NULL;
        size_t name_len = 0;
        tl_gpu_sample s;
        tl_readers_index(path, sizeof path, "system.gpus", i);
        if (read_gpu(p, g, path, &s, &name, &name_len, &gb) == 0 &&
            tl_readers_add_device(p, s.device, name, name_len, s.mem_total) == 0)
            for (uint32_t k = 0; k < p->ndevices; k++)
                if (p->devices[k].id == s.device && s.power_limit_w > 0)
                    p->devices[k].power_limit_w = s.power_limit_w;
    }
    say_garbage(p, &gb);
    /* the host (what the collector recorded of it) */
    const char *text;
    size_t len;
    if (tl_readers_string(p, sys, "system", "hostname", TL_RD_OPTIONAL | TL_RD_NULLABLE, &text, &len) == 0)
        clean_copy(p->host.hostname, sizeof p->host.hostname, text, len, sizeof p->host.hostname - 4);
    if (tl_readers_string(p, sys, "system", "os", TL_RD_OPTIONAL | TL_RD_NULLABLE, &text, &len) == 0)
        clean_copy(p->host.os, sizeof p->host.os, text, len, sizeof p->host.os - 4);
    int64_t cpus;
    if (tl_readers_int(p, sys, "system", "cpus", TL_RD_OPTIONAL | TL_RD_NULLABLE, 1, 1 << 24, &cpus) == 0)
        p->host.cpus = (int)cpus;
    double mem;
    if (tl_readers_number(p, sys, "system", "memory_bytes", TL_RD_OPTIONAL | TL_RD_NULLABLE, &mem) == 0 && mem > 0)
        p->host.memory_bytes = mem;
    /* no GPU in system (NVML opened late, or not at all): the sampler's readings */
    if (p->ndevices == 0)
        for (size_t k = 0; k < p->ngpu_samples; k++)
            tl_readers_add_device(p, p->gpu_samples[k].device, NULL, 0, p->gpu_samples[k].mem_total);
}

/* problems and drop counters: what the numbers do not show by themselves */
static void read_problems(tl_profile *p, const json_t *root)
{
    const json_t *pr = tl_readers_object(p, root, "", "problems", 0);
    int64_t n;
    if (tl_readers_int(p, pr, "problems", "unclosed", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.unclosed: %lld sections or iterations were still open at "
                        "shutdown; they are not in the statistics",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "unmatched_ends", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p, "problems.unmatched_ends: %lld end calls had no matching begin", (long long)n);
    if (tl_readers_int(p, pr, "problems", "names_overflowed", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.names_overflowed: %lld names did not fit the collector's "
                        "name table; their timings are under \"(other names)\"",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "depth_overflow", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.depth_overflow: %lld sections were nested deeper than the "
                        "collector's limit; they are not in the statistics",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "rank_rejected", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.rank_rejected: %lld tally_set_rank calls gave an impossible "
                        "rank or world size",
                        (long long)n);
    if (tl_readers_int(p, pr, "problems", "threads_skipped", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "problems.threads_skipped: %lld threads were left out of this report "
                        "(written at a signal that interrupted them)",
                        (long long)n);
    const json_t *tr = tl_readers_object(p, root, "", "trace", 0);
    if (tl_readers_int(p, tr, "trace", "events_dropped", 0, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p,
                        "trace.events_dropped: the collector dropped %lld trace events "
                        "(max_events reached); the trace file is incomplete, the statistics "
                        "are not",
                        (long long)n);
    if (tl_readers_int(p, root, "", "events_dropped", TL_RD_OPTIONAL, 0, INT64_MAX, &n) == 0 && n > 0)
        tl_profile_warn(p, "events_dropped: the collector dropped %lld events (tally_event)", (long long)n);
}

int tl_read_tally_report_json(tl_profile *p, const json_t *root)
{
    int64_t version, rank, world, start, duration;
    const char *src, *prod;
    size_t src_len, prod_len;

    if (tl_readers_expect(p, root, TL_FMT_TALLY_REPORT, "a tally report") != 0)
        return -1;
    if (tl_readers_int(p, root, "", "version", 0, 0, INT64_MAX, &version) != 0)
        return -1;
    if (version != 1) {
        tl_profile_warn(p,
                        "tally report version %lld is not supported (this tally reads "
                        "version 1)",
                        (long long)version);
        return -1;
    }
    snprintf(p->format_detail, sizeof p->format_detail, "version 1");
    const json_t *producer = tl_readers_object(p, root, "", "producer", TL_RD_OPTIONAL);
    if (tl_readers_string(p, producer, "producer", "name", TL_RD_OPTIONAL, &prod, &prod_len) == 0) {
        char pn[40];
        clean_copy(pn, sizeof pn, prod, prod_len, 32);
        snprintf(p->format_detail, sizeof p->format_detail, "version 1, written by %s", pn);
    }

    if (tl_readers_int(p, root, "", "rank", 0, 0, INT_MAX - 1, &rank) == 0) {
        char s[48] = "unknown";
        if (tl_readers_string(p, root, "", "rank_source", TL_RD_OPTIONAL, &src, &src_len) == 0)
            clean_copy(s, sizeof s, src, src_len, 40);
        char detail[TL_RANK_DETAIL_MAX + 1];
        snprintf(detail, sizeof detail, "report rank (%s)", s);
        tl_identity_set_rank(&p->id, (int)rank, TL_RANK_CONTENT, detail);
    }
    if (tl_readers_int(p, root, "", "world_size", TL_RD_NULLABLE, 1, INT_MAX, &world) == 0) {
        p->id.world_size = (int)world;
        if (p->id.rank >= p->id.world_size)
            tl_profile_warn(p, "rank %d is not below world_size %d", p->id.rank, p->id.world_size);
    }
    if (tl_readers_ns(p, root, "", "start_time_unix_ns", 0, 1.0, &start) == 0)
        p->base_time_ns = start;
    if (tl_readers_ns(p, root, "", "duration_ns", 0, 1.0, &duration) == 0)
        tl_profile_span(p, 0, duration);
    /* the process, for run identity (the host is read with the system info) */
    int64_t pid;
    if (tl_readers_int(p, root, "", "pid", TL_RD_OPTIONAL, 0, INT64_MAX, &pid) == 0)
        p->pid = pid;

    read_durations(p, root, "sections", "section", 0);
    read_durations(p, root, "iterations", "iteration", 1);
    read_counters(p, root);
    read_counter_rates(p, root);
    read_snapshots(p, root);
    read_events(p, root);
    tl_readers_tags(p, tl_readers_object(p, root, "", "tags", TL_RD_OPTIONAL | TL_RD_NULLABLE));
    read_sampler(p, root);
    read_blocks(p, root);
    read_section_args(p, root);
    read_system(p, root);
    read_problems(p, root);
    tl_profile_finish(p);
    return 0;
}

int tl_read_tally_report(tl_profile *p, const char *buf, size_t len)
{
    json_t *root;
    if (tl_readers_load(p, buf, len, &root) != 0)
        return -1;
    int ret = tl_read_tally_report_json(p, root);
    json_decref(root);
    return ret;
}
