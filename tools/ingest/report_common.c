/*
 * report_common.c - what the three report readers share (report_readers.h):
 * loading a document with limits (tl_readers_load), the typed getters that
 * warn with the JSON path of every number they refuse, and the helpers that
 * build the profile from a report's summaries. Nothing here knows a format:
 * report_kind.c tells them apart, read_report.c dispatches, and each reader
 * (read_tally_report.c, read_framepack.c, read_inferix.c) reads its own.
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
void tl_readers_clean_copy(char *out, size_t size, const char *src, size_t n, size_t max)
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
        tl_readers_clean_copy(text, sizeof text, err.text, strlen(err.text), 120);
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
        tl_readers_clean_copy(text, sizeof text, err.text, strlen(err.text), 120);
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

/* ---- typed getters ------------------------------------------------------ */

const char *tl_readers_path(char *out, size_t size, const char *prefix, const char *key)
{
    char k[96];
    tl_readers_clean_copy(k, sizeof k, key, strlen(key), 80);
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
        tl_readers_clean_copy(d->name, sizeof d->name, name, name_len, sizeof d->name - 4);
    if (isfinite(total_memory) && total_memory > d->total_memory)
        d->total_memory = total_memory;
    return 0;
}
