/*
 * ingest.c - one input into one profile: gzip and format sniffing, then the
 * trace reader or a report reader (see ingest.h).
 */
#include "ingest.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gzip_source.h"
#include "read_mem_timeline.h"
#include "read_nsys.h"
#include "read_stacks.h"
#include "read_trace.h"
#include "report_readers.h"
#include "sniff.h"

/* The first read of an input; the buffer doubles (up to max_report_bytes)
 * while the top-level keys have not decided trace or report (sniff.h). */
#define TL_SNIFF_FIRST_BYTES 65536

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
    size_t cap = r->len + TL_SNIFF_FIRST_BYTES, n = 0;
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
int tl_aggregate_doc_kind(const unsigned char *b, size_t n)
{
    size_t i = 0;
    if (n >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    i = skip_ws(b, i, n);
    if (i >= n || b[i] != '{')
        return TL_DOC_OTHER;
    i = skip_ws(b, i + 1, n);
    if (n - i < 8 || memcmp(b + i, "\"format\"", 8) != 0)
        return TL_DOC_OTHER;
    i = skip_ws(b, i + 8, n);
    if (i >= n || b[i] != ':')
        return TL_DOC_OTHER;
    i = skip_ws(b, i + 1, n);
    static const struct {
        const char *text;
        int kind;
    } kinds[] = { { "\"tally-partial\"", TL_DOC_PARTIAL }, { "\"tally-aggregate\"", TL_DOC_AGGREGATE } };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t len = strlen(kinds[k].text);
        if (n - i >= len && memcmp(b + i, kinds[k].text, len) == 0)
            return kinds[k].kind;
    }
    return TL_DOC_OTHER;
}

int tl_file_is_partial(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    unsigned char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return tl_aggregate_doc_kind(buf, n) == TL_DOC_PARTIAL;
}

static void read_report(tl_profile *p, replay *r, const tl_ingest_options *opt)
{
    size_t len;
    int too_big;
    int aggregate = tl_aggregate_doc_kind(r->prefix, r->len) != TL_DOC_OTHER;
    size_t max = aggregate && opt->max_aggregate_bytes > opt->max_report_bytes ? opt->max_aggregate_bytes
                                                                               : opt->max_report_bytes;
    char *doc = read_all(r, max, &len, &too_big);
    if (doc == NULL) {
        tl_profile_skip(p, "out of memory");
        p->error = 1;
        return;
    }
    if (too_big) {
        tl_profile_skip(p, "a JSON object without \"traceEvents\" larger than %zu MiB; not read", max >> 20);
        goto out;
    }
    /* tl_read_report parses once, recognizes the format (or says what the
     * document is instead: p->skipped with a warning) and reads it. */
    if (tl_read_report(p, doc, len) != 0) {
        /* Not JSON, or not a report: nothing usable. A report whose reader
         * failed half way keeps what it read. */
        if (p->id.format == TL_FMT_UNKNOWN && !p->skipped)
            tl_profile_skip_last(p);
        else
            p->error = 1;
    }
    p->bytes = len;
    if (!p->skipped)
        tl_profile_finish(p);
out:
    free(doc);
}

/* torch.profiler's memory timeline: a small document, read whole (bounded
 * like a report) */
static void read_mem_timeline(tl_profile *p, replay *r, const tl_ingest_options *opt)
{
    size_t len;
    int too_big;
    char *doc = read_all(r, opt->max_report_bytes, &len, &too_big);
    if (doc == NULL) {
        tl_profile_skip(p, "out of memory");
        p->error = 1;
        return;
    }
    if (too_big)
        tl_profile_skip(p, "an array of arrays (a PyTorch memory timeline?) larger than %zu MiB; not read",
                        opt->max_report_bytes >> 20);
    else if (tl_read_mem_timeline(p, doc, len) != 0)
        tl_profile_skip_last(p);
    p->bytes = len;
    if (!p->skipped)
        tl_profile_finish(p);
    free(doc);
}

/* FramePack's memory_log.json: a small document, read whole like a report */
static void read_memlog(tl_profile *p, replay *r, const tl_ingest_options *opt)
{
    size_t len;
    int too_big;
    char *doc = read_all(r, opt->max_report_bytes, &len, &too_big);
    if (doc == NULL) {
        tl_profile_skip(p, "out of memory");
        p->error = 1;
        return;
    }
    if (too_big)
        tl_profile_skip(p, "a FramePack memory log larger than %zu MiB; not read", opt->max_report_bytes >> 20);
    else if (tl_read_framepack_memlog(p, doc, len) != 0)
        tl_profile_skip_last(p);
    p->bytes = len;
    if (!p->skipped)
        tl_profile_finish(p);
    free(doc);
}

static void note_gzip(tl_profile *p, const tl_gzip_source *g, uint64_t limit)
{
    /* The per-input size limit (a bomb guard), not damage: say which limit. */
    if (g->error[0] && (strstr(g->error, "exceeds the limit") || strstr(g->error, strerror(EFBIG)))) {
        tl_profile_warn(p,
                        "more than %" PRIu64 " bytes%s (the input size limit, --max-input-size): the rest "
                        "is not read",
                        limit, g->is_gzip ? " decompressed" : "");
        p->truncated = 1;
    } else if (g->error[0] && !g->is_gzip) {
        tl_profile_warn_at(p, (int64_t)g->error_offset, "the input broke off at byte %" PRIu64 ": %s; read up to there",
                           g->error_offset, g->error);
        p->truncated = 1;
    } else if (g->error[0]) {
        tl_profile_warn_at(p, (int64_t)g->error_offset,
                           "compressed data damaged at byte %" PRIu64 " of the file: %s; read up to there",
                           g->error_offset, g->error);
        p->truncated = 1;
    }
    if (g->trailing_garbage)
        tl_profile_warn(p, "bytes after the last gzip member ignored");
}

/* Read from g into buf[*n..cap) until it is full or the input ends.
 * Returns 1 at the end of the input, 0 when full, -1 on a read error. */
static int fill(tl_gzip_source *g, unsigned char *buf, size_t *n, size_t cap)
{
    while (*n < cap) {
        ssize_t got = tl_gzip_source_read(g, buf + *n, cap - *n);
        if (got < 0)
            return -1;
        if (got == 0)
            return 1;
        *n += (size_t)got;
    }
    return 0;
}

/* What the bytes of an unreadable input say about it (tl_profile.content_hint). */
static const char *content_hint(const unsigned char *b, size_t n)
{
    size_t z = 0;
    while (z < n && b[z] == 0)
        z++;
    if (n > 0 && z == n)
        return "its bytes are all NUL (a crash before the data was written?)";
    if (z > 0 && (b[z] == '{' || b[z] == '['))
        return "JSON after NUL bytes";
    return NULL;
}

tl_profile *tl_ingest_one(const tl_input *in, const tl_ingest_options *opt)
{
    tl_profile *p = malloc(sizeof *p);
    size_t cap = TL_SNIFF_FIRST_BYTES;
    unsigned char *prefix = malloc(cap);
    tl_gzip_source g;
    int g_ok = 0;
    if (p == NULL || prefix == NULL) {
        free(p);
        free(prefix);
        return NULL;
    }
    tl_profile_init(p, in->name);
    p->max_names = opt->max_names;
    p->max_events = opt->max_events;
    p->kernel_classes = opt->kernel_classes;
    if (tl_gzip_source_init(&g, in->read, in->ctx) != 0) {
        tl_profile_skip(p, "out of memory");
        p->error = 1;
        goto out;
    }
    g_ok = 1;
    g.max_output = opt->limits.max_input_bytes;
    /* A file may be read from the inflating thread; an archive member is read through
     * libarchive, which stays on this one. */
    g.background = in->member == NULL;
    size_t n = 0, i = 0;
    int eof = 0, kind = TL_SNIFF_MORE;
    size_t max_sniff = opt->max_report_bytes > cap ? opt->max_report_bytes : cap;
    /* Read until the first bytes decide: an array, something that is not an
     * object, or an object whose top-level keys say trace or report. */
    for (;;) {
        int r = fill(&g, prefix, &n, cap);
        if (r < 0 && n == 0) {
            tl_profile_skip(p, "cannot read: %s", g.error[0] ? g.error : strerror(errno));
            p->error = 1;
            goto out;
        }
        eof = r != 0; /* a read error after some bytes: the readers see it again and say where */
        i = n >= 3 && memcmp(prefix, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        i = skip_ws(prefix, i, n);
        if (i < n && prefix[i] != '{')
            break;
        if (i < n && (kind = tl_sniff_object(prefix, i, n)) != TL_SNIFF_MORE)
            break;
        if (eof || cap >= max_sniff)
            break;
        size_t grown = cap * 2 > max_sniff ? max_sniff : cap * 2;
        unsigned char *x = realloc(prefix, grown);
        if (x == NULL) {
            tl_profile_skip(p, "out of memory");
            p->error = 1;
            goto out;
        }
        prefix = x;
        cap = grown;
    }
    replay r = { prefix, n, 0, &g };
    if (i < n && prefix[i] == '[' && (p->known_kind = tl_known_companion(in->name, prefix, n)) != NULL &&
        tl_framepack_memlog_name(in->name)) {
        /* FramePack's memory log: its snapshots, read as a memory series */
        p->known_kind = NULL;
        read_memlog(p, &r, opt);
        tl_gzip_source_finish(&g);
    } else if (i < n && prefix[i] == '[' && p->known_kind != NULL) {
        p->skipped = 1; /* named by run.c, not read */
    } else if (tl_bytes_look_like_mem_timeline(prefix, n)) {
        /* an array of arrays: torch.profiler's export_memory_timeline JSON, not a trace */
        read_mem_timeline(p, &r, opt);
        tl_gzip_source_finish(&g);
        note_gzip(p, &g, opt->limits.max_input_bytes);
    } else if (i == n) {
        tl_profile_skip(p, n == 0 ? "empty file" : "only whitespace");
    } else if (prefix[i] == '[' || (prefix[i] == '{' && kind != TL_SNIFF_REPORT)) {
        /* An array, "traceEvents", or an object cut before any deciding key
         * (a truncated trace): the trace reader says what it finds. The
         * skipper is iterative, so the deepest nesting it supports costs
         * nothing; real args (300 levels in the corpus) stay readable. */
        tl_trace_options topt;
        tl_trace_options_init(&topt);
        topt.max_depth = TL_TRACE_DEPTH_LIMIT;
        tl_read_trace(p, replay_read, &r, &topt);
        tl_gzip_source_finish(&g);
        note_gzip(p, &g, opt->limits.max_input_bytes);
    } else if (prefix[i] == '{') {
        read_report(p, &r, opt);
        tl_gzip_source_finish(&g);
        note_gzip(p, &g, opt->limits.max_input_bytes);
    } else if (tl_bytes_look_like_stacks(prefix + i, n - i)) {
        /* torch.profiler's export_stacks text: "frame;frame;frame value" lines */
        tl_read_stacks(p, replay_read, &r);
        tl_gzip_source_finish(&g);
        note_gzip(p, &g, opt->limits.max_input_bytes);
    } else if (tl_bytes_are_sqlite(prefix, n)) {
        /* Nsight Systems' SQLite export: a plain file is opened by name (SQLite
         * reads pages, not a stream); anything else is read into memory */
        struct stat st;
        int plain = in->member == NULL && !g.is_gzip && in->path != NULL && !(in->item != NULL && in->item->is_stdin) &&
                    stat(in->path, &st) == 0 && S_ISREG(st.st_mode);
        tl_read_nsys(p, plain ? in->path : NULL, replay_read, &r);
        tl_gzip_source_finish(&g);
    } else if (tl_nsys_report_name(in->name) && !tl_bytes_look_like_archive(prefix, n)) {
        /* named on the command line, it is a problem with the advice; found
         * by walking (beside its export, usually), a note */
        if (in->from_walk) {
            p->known_kind = tl_nsys_report_advice;
            p->skipped = 1;
        } else {
            tl_profile_skip(p, "%s", tl_nsys_report_advice);
        }
    } else if ((p->known_kind = tl_known_companion(in->name, prefix + i, n - i)) != NULL) {
        p->skipped = 1; /* a known companion file (a memory snapshot pickle): named by run.c, not read */
    } else if (tl_bytes_look_like_archive(prefix, n)) {
        tl_profile_skip(p, "an archive inside an archive; not read (unpack the outer one)");
    } else if (looks_binary(prefix + i, n - i)) {
        p->content_hint = content_hint(prefix, n);
        tl_profile_skip(p, "not JSON (%s)", p->content_hint ? p->content_hint : "binary data");
    } else {
        char start[32];
        describe_start(prefix + i, n - i, start, sizeof start);
        tl_profile_skip(p, "not JSON (starts with \"%s\")", start);
        p->content_hint = content_hint(prefix, n);
    }
out:
    if (g_ok)
        tl_gzip_source_release(&g);
    free(prefix);
    return p;
}
