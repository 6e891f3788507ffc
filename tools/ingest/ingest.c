/*
 * ingest.c - one input into one profile: gzip and format sniffing, then the
 * trace reader or a report reader (see ingest.h).
 */
#include "ingest.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gzip_source.h"
#include "read_trace.h"
#include "report_readers.h"

#define PREFIX_SIZE 65536

void tl_ingest_options_init(tl_ingest_options *o)
{
    memset(o, 0, sizeof *o);
    tl_limits_init(&o->limits);
    o->max_report_bytes = 256u << 20;
    o->max_aggregate_bytes = TL_AGGREGATE_MAX_BYTES;
    o->jobs = 1;
}

/* The first bytes of the input are read to sniff the format; this source
 * hands them out again before continuing with the rest. */
typedef struct replay {
    const unsigned char *prefix;
    size_t len, pos;
    tl_gzip_source *g;
} replay;

static ssize_t replay_read(void *ctx, void *buf, size_t cap)
{
    replay *r = ctx;
    if (r->pos < r->len) {
        size_t n = r->len - r->pos < cap ? r->len - r->pos : cap;
        memcpy(buf, r->prefix + r->pos, n);
        r->pos += n;
        return (ssize_t)n;
    }
    return tl_gzip_source_read(r->g, buf, cap);
}

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

/* Skip one value; returns the index after it, or n when the prefix ends in it. */
static size_t skip_value(const unsigned char *b, size_t i, size_t n)
{
    if (i >= n)
        return n;
    if (b[i] == '"')
        return skip_string(b, i, n);
    if (b[i] == '{' || b[i] == '[') {
        int depth = 0;
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

/* Does the object starting at b[i] == '{' have a top-level "traceEvents" key
 * within the prefix? 1 yes, 0 no (the object ended), -1 the prefix ended first. */
static int has_trace_events(const unsigned char *b, size_t i, size_t n)
{
    i++;
    for (;;) {
        i = skip_ws(b, i, n);
        while (i < n && b[i] == ',')
            i = skip_ws(b, i + 1, n);
        if (i >= n)
            return -1;
        if (b[i] == '}')
            return 0;
        if (b[i] != '"')
            return 0; /* not JSON we understand: let the report path say so */
        size_t k = i + 1;
        i = skip_string(b, i, n);
        if (i >= n)
            return -1;
        if (i - k - 1 == 11 && memcmp(b + k, "traceEvents", 11) == 0)
            return 1;
        i = skip_ws(b, i, n);
        if (i >= n)
            return -1;
        if (b[i] != ':')
            return 0;
        i = skip_value(b, skip_ws(b, i + 1, n), n);
        if (i >= n)
            return -1;
    }
}

static int looks_binary(const unsigned char *b, size_t n)
{
    size_t odd = 0;
    for (size_t i = 0; i < n && i < 512; i++)
        if (b[i] == 0 || (b[i] < 0x20 && !isspace(b[i])))
            odd++;
    return odd > 0;
}

static void describe_start(const unsigned char *b, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len && i < 24; i++)
        out[k++] = isprint(b[i]) ? (char)b[i] : '?';
    out[k] = '\0';
}

/* Read the whole document (prefix already read) into memory, bounded. */
static char *read_all(replay *r, size_t max, size_t *len, int *too_big)
{
    size_t cap = r->len + PREFIX_SIZE, n = 0;
    char *buf = malloc(cap + 1);
    *too_big = 0;
    if (buf == NULL)
        return NULL;
    for (;;) {
        if (n == cap) {
            if (cap >= max) {
                *too_big = 1;
                break;
            }
            cap = cap * 2 > max ? max : cap * 2;
            char *x = realloc(buf, cap + 1);
            if (x == NULL) {
                free(buf);
                return NULL;
            }
            buf = x;
        }
        ssize_t got = replay_read(r, buf + n, cap - n);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Does the document open with "format": "tally-partial" or "tally-aggregate"?
 * tally writes "format" first: its aggregates (partial or merged) may be far
 * larger than a report, since they hold every session's statistics, and
 * their size must not send them to the trace reader. */
static int starts_as_aggregate(const replay *r)
{
    const unsigned char *b = r->prefix;
    size_t n = r->len, i = 0;
    if (n >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    i = skip_ws(b, i, n);
    if (i >= n || b[i] != '{')
        return 0;
    i = skip_ws(b, i + 1, n);
    if (n - i < 8 || memcmp(b + i, "\"format\"", 8) != 0)
        return 0;
    i = skip_ws(b, i + 8, n);
    if (i >= n || b[i] != ':')
        return 0;
    i = skip_ws(b, i + 1, n);
    static const char *const kinds[] = { "\"tally-partial\"", "\"tally-aggregate\"" };
    for (size_t k = 0; k < 2; k++) {
        size_t len = strlen(kinds[k]);
        if (n - i >= len && memcmp(b + i, kinds[k], len) == 0)
            return 1;
    }
    return 0;
}

static void read_report(tl_profile *p, replay *r, const tl_ingest_options *opt)
{
    size_t len;
    int too_big;
    size_t max = starts_as_aggregate(r) && opt->max_aggregate_bytes > opt->max_report_bytes ? opt->max_aggregate_bytes
                                                                                           : opt->max_report_bytes;
    char *doc = read_all(r, max, &len, &too_big);
    if (doc == NULL) {
        tl_profile_warn(p, "out of memory");
        p->skipped = p->error = 1;
        return;
    }
    if (too_big) {
        tl_profile_warn(p, "a JSON object without \"traceEvents\" larger than %zu MiB; not read", max >> 20);
        p->skipped = 1;
        goto out;
    }
    /* tl_read_report parses once, recognizes the format (or says what the
     * document is instead: p->skipped with a warning) and reads it. */
    if (tl_read_report(p, doc, len) != 0) {
        /* Not JSON, or not a report: nothing usable. A report whose reader
         * failed half way keeps what it read. */
        if (p->format == TL_FMT_UNKNOWN)
            p->skipped = 1;
        else
            p->error = 1;
    }
    p->bytes = len;
    if (!p->skipped)
        tl_profile_finish(p);
out:
    free(doc);
}

static void note_gzip(tl_profile *p, const tl_gzip_source *g)
{
    if (g->error[0]) {
        tl_profile_warn(p, "compressed data damaged at byte %" PRIu64 " of the file: %s; read up to there",
                        g->error_offset, g->error);
        p->truncated = 1;
    }
    if (g->trailing_garbage)
        tl_profile_warn(p, "bytes after the last gzip member ignored");
}

tl_profile *tl_ingest_one(const tl_input *in, const tl_ingest_options *opt)
{
    tl_profile *p = malloc(sizeof *p);
    unsigned char *prefix = malloc(PREFIX_SIZE);
    tl_gzip_source g;
    int g_ok = 0;
    if (p == NULL || prefix == NULL) {
        free(p);
        free(prefix);
        return NULL;
    }
    tl_profile_init(p, in->name);
    if (tl_gzip_source_init(&g, in->read, in->ctx) != 0) {
        tl_profile_warn(p, "out of memory");
        p->skipped = p->error = 1;
        goto out;
    }
    g_ok = 1;
    g.max_output = opt->limits.max_input_bytes;
    size_t n = 0;
    while (n < PREFIX_SIZE) {
        ssize_t got = tl_gzip_source_read(&g, prefix + n, PREFIX_SIZE - n);
        if (got <= 0) {
            if (got < 0 && n == 0) {
                tl_profile_warn(p, "cannot read: %s", g.error[0] ? g.error : strerror(errno));
                p->skipped = p->error = 1;
                goto out;
            }
            break;
        }
        n += (size_t)got;
    }
    replay r = { prefix, n, 0, &g };
    size_t i = 0;
    if (n >= 3 && memcmp(prefix, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    i = skip_ws(prefix, i, n);
    if (i == n) {
        tl_profile_warn(p, n == 0 ? "empty file" : "only whitespace");
        p->skipped = 1;
    } else if (prefix[i] == '[' ||
               (prefix[i] == '{' && !starts_as_aggregate(&r) && has_trace_events(prefix, i, n) != 0)) {
        /* The skipper is iterative, so the deepest nesting it supports costs
         * nothing; real args (300 levels in the corpus) stay readable. */
        tl_trace_options topt;
        tl_trace_options_init(&topt);
        topt.max_depth = TL_TRACE_DEPTH_LIMIT;
        tl_read_trace(p, replay_read, &r, &topt);
        note_gzip(p, &g);
    } else if (prefix[i] == '{') {
        read_report(p, &r, opt);
        note_gzip(p, &g);
    } else if (tl_bytes_look_like_archive(prefix, n)) {
        tl_profile_warn(p, "an archive inside an archive; not read (unpack the outer one)");
        p->skipped = 1;
    } else if (looks_binary(prefix + i, n - i)) {
        tl_profile_warn(p, "not JSON (binary data)");
        p->skipped = 1;
    } else {
        char start[32];
        describe_start(prefix + i, n - i, start, sizeof start);
        tl_profile_warn(p, "not JSON (starts with \"%s\")", start);
        p->skipped = 1;
    }
out:
    if (g_ok)
        tl_gzip_source_release(&g);
    free(prefix);
    return p;
}
