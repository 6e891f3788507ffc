/*
 * trace_stream: the streaming reader of Chrome / Kineto trace events (see trace_stream.h).
 *
 * A state machine over the top level of the document, which owns the input buffer. The work on
 * the bytes is done elsewhere, in four files with small internal headers:
 * - trace_scan.c: the scanners over contiguous memory (strings, tokens, numbers, containers).
 *   They never suspend: the stream calls them only on an event (or a top-level key or small
 *   value) and, on P_MORE, reads more input and calls them again from the start of that item.
 *   Warnings found during an attempt are collected in `struct pending` and counted here only
 *   when the attempt completes, so a retry never counts anything twice.
 * - trace_decode.c: an event object into a tl_trace_event, top-level values into tl_trace_meta.
 * - trace_fast.c: the fast path, which walks most events from the structural index of the
 *   buffer (json_scan.c) and gives the rest back to the byte parser.
 * - trace_args.c: an event's "args" read after the fact (tl_args_next), tl_view_unescape.
 *
 * Values the reader does not need at all (unknown top-level keys such as "stackFrames", or the
 * rest of a malformed or oversized event) are passed over by a resumable bracket counter
 * (skip_step) that consumes the buffer as it goes, so their size is not limited by the buffer.
 */
#include "ingest/trace_stream.h"

#include "ingest/trace_decode.h"
#include "ingest/trace_fast.h"
#include "ingest/trace_scan.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const warn_text[W_COUNT] = {
    [W_TRAILING_COMMA] = "trailing comma before a closing bracket (accepted)",
    [W_EXTRA_COMMA] = "extra comma (accepted)",
    [W_MISSING_COMMA] = "missing comma between two values (accepted)",
    [W_NONFINITE] = "NaN or Infinity is not JSON (the value is treated as missing)",
    [W_BAD_NUMBER] = "\"ts\" or \"dur\" is not a usable number (treated as missing)",
    [W_BAD_UTF8] = "invalid UTF-8 in a string (accepted as bytes)",
    [W_CONTROL] = "raw control character in a string (accepted)",
    [W_BAD_ESCAPE] = "escape that JSON does not define in a string (kept as written)",
    [W_DUP_KEY] = "key given twice in one event (the last one wins)",
    [W_OTHER] = "unexpected content (ignored)",
};

/* Top-level state machine of the stream. */
enum {
    ST_START,     /* before the first value: BOM, '[' or '{' */
    ST_OBJ_KEY,   /* object form: expecting a key or '}' */
    ST_OBJ_VALUE, /* object form: after "key": */
    ST_OBJ_AFTER, /* object form: after a value, expecting ',' or '}' */
    ST_EVENTS,    /* inside the traceEvents array, between elements */
    ST_SKIP,      /* passing over a value with skip_step(); then after_state */
    ST_JUNK,      /* inside traceEvents after garbage: looking for the next '{' */
    ST_TAIL,      /* after the document: only whitespace expected */
    ST_END,
};

/* Why a value is being skipped, for the message when the input ends inside it. */
enum { SKIP_VALUE, SKIP_MALFORMED, SKIP_OVERSIZED };

/* What fill() did (TL_TRACE_ERR_NOMEM aside). */
enum { FILL_EOF = 0, FILL_OK = 1, FILL_FULL = 2 };

/* ---------------------------------------------------------------------------------------- */
/* The stream                                                                                 */

static uint64_t *warn_counter(tl_trace_stats *st, int kind)
{
    switch (kind) {
    case W_TRAILING_COMMA:
        return &st->trailing_commas;
    case W_EXTRA_COMMA:
        return &st->extra_commas;
    case W_MISSING_COMMA:
        return &st->missing_commas;
    case W_NONFINITE:
        return &st->nonfinite;
    case W_BAD_NUMBER:
        return &st->bad_numbers;
    case W_BAD_UTF8:
        return &st->invalid_utf8;
    case W_CONTROL:
        return &st->control_chars;
    case W_BAD_ESCAPE:
        return &st->bad_escapes;
    case W_DUP_KEY:
        return &st->duplicate_keys;
    default:
        return &st->other;
    }
}

__attribute__((format(printf, 4, 0))) static void fill_report(tl_trace_stream *s, tl_parse_error *e, uint64_t offset,
                                                              const char *fmt, va_list ap)
{
    memcpy(e->source, s->source, sizeof e->source);
    e->offset = offset;
    vsnprintf(e->text, sizeof e->text, fmt, ap);
}

/* Keep a problem report, if there is room. */
__attribute__((format(printf, 3, 4))) static void problem(tl_trace_stream *s, uint64_t offset, const char *fmt, ...)
{
    va_list ap;

    if (s->problem_count >= TL_TRACE_MAX_PROBLEMS)
        return;
    va_start(ap, fmt);
    fill_report(s, &s->problems[s->problem_count++], offset, fmt, ap);
    va_end(ap);
}

/* Say why the stream ended early, once: in `error` and among the problems. */
__attribute__((format(printf, 3, 4))) static void end_error(tl_trace_stream *s, uint64_t offset, const char *fmt, ...)
{
    va_list ap;

    if (s->has_error)
        return;
    va_start(ap, fmt);
    fill_report(s, &s->error, offset, fmt, ap);
    va_end(ap);
    s->has_error = 1;
    if (s->problem_count < TL_TRACE_MAX_PROBLEMS)
        s->problems[s->problem_count++] = s->error;
}

/* Count a warning; the first of each kind gets a problem report. */
static void stream_warn(tl_trace_stream *s, int kind, uint64_t n, uint64_t offset)
{
    *warn_counter(&s->stats, kind) += n;
    s->stats.warnings += n;
    if (!(s->reported & (1u << kind))) {
        s->reported |= 1u << kind;
        problem(s, offset, "%s", warn_text[kind]);
    }
}

static uint64_t offset_of(const tl_trace_stream *s, const char *p)
{
    return s->base + (uint64_t)(p - s->buf);
}

static void pctx_init(struct pctx *c, const tl_trace_stream *s)
{
    memset(c, 0, sizeof *c);
    c->buf = s->buf;
    c->base = s->base;
    c->end = s->buf + s->len;
    c->max_depth = s->opt.max_depth;
}

/* Count what an attempt that ran to completion (P_OK or P_BAD) found. */
static void commit_pending(tl_trace_stream *s, const struct pctx *c)
{
    for (int k = 0; k < W_COUNT; k++)
        if (c->w.n[k])
            stream_warn(s, k, c->w.n[k], offset_of(s, c->w.first[k]));
}

static void fatal(tl_trace_stream *s, int code, uint64_t offset, const char *what)
{
    end_error(s, offset, "%s", what);
    s->fatal = code;
    s->state = ST_END;
}

/*
 * Read more input behind the unread bytes buf[pos..len), which move to the front. Reads until
 * the buffer is full or the input ends, so that a source returning one byte at a time costs
 * calls, not re-parses. Returns FILL_OK when bytes were added, FILL_EOF at the end of input,
 * FILL_FULL when the unread bytes fill the buffer and it may not grow, or TL_TRACE_ERR_NOMEM.
 */
/* The parser needs bytes past the end of input. If the input ended by a read error, that error
 * now matters (one past the point where parsing stopped would not): report it. */
static int eof_reached(tl_trace_stream *s)
{
    if (s->read_error && !s->read_failed) {
        s->read_failed = 1;
        end_error(s, s->base + s->len, "read error after %llu bytes%s%s", (unsigned long long)(s->base + s->len),
                  s->read_errno ? ": " : "", s->read_errno ? strerror(s->read_errno) : "");
    }
    return FILL_EOF;
}

static int fill(tl_trace_stream *s)
{
    size_t before;

    if (s->eof)
        return eof_reached(s);
    s->idx_valid = 0; /* the bytes move, or more come behind them */
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->base += s->pos;
        s->len -= s->pos;
        s->pos = 0;
        memset(s->buf + s->len, 0, READ_SLACK);
    }
    if (s->len == s->cap) {
        size_t limit = s->opt.max_event_size > s->opt.buffer_size ? s->opt.max_event_size : s->opt.buffer_size;
        size_t ncap = s->cap * 2 < limit ? s->cap * 2 : limit;
        char *nbuf;
        if (s->cap >= limit)
            return FILL_FULL;
        if (!(nbuf = realloc(s->buf, ncap + READ_SLACK)))
            return TL_TRACE_ERR_NOMEM;
        s->buf = nbuf;
        s->cap = ncap;
    }
    before = s->len;
    while (s->len < s->cap) {
        ssize_t n;
        errno = 0;
        n = s->read(s->ctx, s->buf + s->len, s->cap - s->len);
        if (n <= 0) {
            s->eof = 1;
            if (n < 0) {
                s->read_error = 1;
                s->read_errno = errno;
            }
            break;
        }
        s->len += (size_t)n;
        s->stats.bytes_read += (uint64_t)n;
    }
    memset(s->buf + s->len, 0, READ_SLACK); /* sentinels: the index walker's number checks stop there */
    return s->len > before ? FILL_OK : eof_reached(s);
}

static void skip_begin(tl_trace_stream *s, int reason, int after_state)
{
    memset(&s->skip, 0, sizeof s->skip);
    s->skip.reason = reason;
    s->skip.start = s->base + s->pos;
    s->after_state = after_state;
    s->state = ST_SKIP;
}

/*
 * Pass over one value leniently, resumably: only strings and bracket depth are tracked, so it
 * also carries reading past a malformed event to the bracket that closes it. Returns 1 when
 * the value ended (pos is after it), 0 when the buffer was used up first.
 */
static int skip_step(tl_trace_stream *s)
{
    struct tl_trace_skip *k = &s->skip;
    const char *p = s->buf + s->pos, *end = s->buf + s->len;

    while (p < end) {
        if (k->in_string) {
            if (k->escape) {
                k->escape = 0;
                p++;
                continue;
            }
            while (p < end && *p != '"' && *p != '\\')
                p++;
            if (p == end)
                break;
            if (*p++ == '\\') {
                k->escape = 1;
                continue;
            }
            k->in_string = 0;
            if (k->depth == 0)
                goto done; /* the value was a string */
            continue;
        }
        if (!k->started) {
            p = skip_ws(p, end);
            if (p == end)
                break;
            k->started = 1;
            if (*p != '"' && *p != '{' && *p != '[')
                k->scalar = 1;
        }
        if (k->scalar) {
            while (p < end && tl_scan_tok_char[(unsigned char)*p])
                p++;
            if (p == end)
                break;
            goto done;
        }
        switch (*p++) {
        case '"':
            k->in_string = 1;
            break;
        case '{':
        case '[':
            k->depth++;
            break;
        case '}':
        case ']':
            if (--k->depth <= 0)
                goto done;
            break;
        }
    }
    s->pos = (size_t)(p - s->buf);
    return 0;
done:
    s->pos = (size_t)(p - s->buf);
    return 1;
}

static int is_value_start(unsigned char ch)
{
    return ch == '"' || ch == '{' || ch == '[' || tl_scan_tok_char[ch];
}

/* Get past whitespace; when the buffer runs out, read more. Returns 1 at a byte, 0 at the end
 * of input, or a negative error. */
static int next_byte(tl_trace_stream *s)
{
    for (;;) {
        const char *p = skip_ws(s->buf + s->pos, s->buf + s->len);
        int r;
        s->pos = (size_t)(p - s->buf);
        if (s->pos < s->len)
            return 1;
        r = fill(s);
        if (r < 0)
            return r;
        if (r != FILL_OK)
            return 0; /* FILL_FULL cannot happen: nothing unread was kept */
    }
}

static void count_event(tl_trace_stream *s, const tl_trace_event *ev)
{
    s->stats.events++;
    if (!ev->ph.ptr || ev->ph.len == 0)
        s->stats.phase_missing++;
    else if (ev->ph.len == 1)
        s->stats.by_phase[(unsigned char)ev->ph.ptr[0]]++;
    else
        s->stats.phase_long++;
}

/* The input ended at the current position in state `state`: set the flags and say why. */
static void end_of_input(tl_trace_stream *s)
{
    uint64_t at = s->base + s->len;

    if (s->read_failed && s->state != ST_START) {
        /* The input did not end, it broke off: whatever the state, data is missing. */
        s->stats.truncated = 1;
        s->state = ST_END;
        return;
    }
    switch (s->state) {
    case ST_EVENTS:
        if (s->meta.form == TL_TRACE_FORM_ARRAY) {
            /* The format allows an array without ']' (catapult writes one): not a warning. */
            s->stats.unterminated = 1;
            problem(s, at, "the trace array has no closing ']' (accepted)");
            break;
        }
        s->stats.truncated = 1;
        end_error(s, at, "input ends inside \"traceEvents\": expected ']' and '}'");
        break;
    case ST_OBJ_KEY:
    case ST_OBJ_VALUE:
    case ST_OBJ_AFTER:
        s->stats.truncated = 1;
        end_error(s, at, "input ends inside the top-level object: expected '}'");
        break;
    case ST_SKIP:
        s->stats.truncated = 1;
        end_error(s, at, "input ends inside the %s that starts at offset %llu",
                  s->skip.reason == SKIP_VALUE ? "value" : "skipped event", (unsigned long long)s->skip.start);
        break;
    case ST_JUNK:
        s->stats.truncated = 1;
        end_error(s, at, "input ends while looking for the next event");
        break;
    case ST_START:
        if (!s->read_failed) /* else the read error says it all */
            fatal(s, TL_TRACE_ERR_FORMAT, at, "empty input: expected '[' or '{'");
        break;
    }
    s->state = ST_END;
}

/* The first value: a UTF-8 BOM, then '[' (array form) or '{' (object form). */
static int step_start(tl_trace_stream *s)
{
    int r;

    while (s->len - s->pos < 3 && !s->eof)
        if ((r = fill(s)) < 0)
            return r;
    if (s->len - s->pos >= 3 && !memcmp(s->buf + s->pos, "\xEF\xBB\xBF", 3)) {
        s->stats.bom = 1;
        s->pos += 3;
    }
    if ((r = next_byte(s)) <= 0)
        return r ? r : (end_of_input(s), 0);
    switch (s->buf[s->pos]) {
    case '[':
        s->meta.form = TL_TRACE_FORM_ARRAY;
        s->state = ST_EVENTS;
        break;
    case '{':
        s->meta.form = TL_TRACE_FORM_OBJECT;
        s->state = ST_OBJ_KEY;
        break;
    default:
        if (s->len - s->pos >= 2 && !memcmp(s->buf + s->pos, "\x1f\x8b", 2))
            fatal(s, TL_TRACE_ERR_FORMAT, offset_of(s, s->buf + s->pos),
                  "gzip-compressed data: expected a trace ('[' or '{')");
        else
            fatal(s, TL_TRACE_ERR_FORMAT, offset_of(s, s->buf + s->pos), "not a trace: expected '[' or '{'");
        return 0;
    }
    s->pos++;
    s->after_value = s->after_comma = 0;
    return 0;
}

/* Object form: a key (or the end of the object). */
static int step_obj_key(tl_trace_stream *s)
{
    struct pctx c;
    const char *p, *colon = NULL;
    tl_view key = { NULL, 0 };
    int r;

    if ((r = next_byte(s)) <= 0)
        return r ? r : (end_of_input(s), 0);
    p = s->buf + s->pos;
    if (*p == '}') {
        if (s->after_comma)
            stream_warn(s, W_TRAILING_COMMA, 1, offset_of(s, p));
        s->pos++;
        s->state = ST_TAIL;
        return 0;
    }
    if (*p == ',') {
        stream_warn(s, W_EXTRA_COMMA, 1, offset_of(s, p));
        s->pos++;
        return 0;
    }
    if (*p != '"') {
        fatal(s, TL_TRACE_ERR_FORMAT, offset_of(s, p), "expected '\"' (a key) or '}' in the top-level object");
        return 0;
    }
    for (;;) {
        const char *q;
        pctx_init(&c, s);
        p = q = s->buf + s->pos;
        r = tl_scan_string(&c, &q);
        if (r == P_OK) {
            key.ptr = p + 1;
            key.len = (size_t)(q - p) - 2;
            q = skip_ws(q, c.end);
            if (q == c.end)
                r = P_MORE;
            else if (*q != ':')
                r = bad(&c, q, "expected ':' after key");
            else
                colon = q;
        }
        if (r != P_MORE)
            break;
        if ((r = fill(s)) != FILL_OK) {
            if (r < 0)
                return r;
            if (r == FILL_EOF)
                end_of_input(s);
            else /* a key larger than the whole buffer */
                fatal(s, TL_TRACE_ERR_FORMAT, s->base + s->pos, "top-level key too long");
            return 0;
        }
    }
    commit_pending(s, &c);
    if (r == P_BAD) {
        fatal(s, TL_TRACE_ERR_FORMAT, offset_of(s, c.err_at), c.err_what);
        return 0;
    }
    s->key = tl_trace_top_key(key);
    s->pos = (size_t)(colon + 1 - s->buf);
    s->state = ST_OBJ_VALUE;
    return 0;
}

/* Object form: the value of s->key. */
static int step_obj_value(tl_trace_stream *s)
{
    unsigned char ch;
    int r;

    if ((r = next_byte(s)) <= 0)
        return r ? r : (end_of_input(s), 0);
    ch = (unsigned char)s->buf[s->pos];
    if (!is_value_start(ch)) {
        fatal(s, TL_TRACE_ERR_FORMAT, s->base + s->pos, "expected a value after ':'");
        return 0;
    }
    if (s->key == TOP_TRACE_EVENTS) {
        if (ch == '[') {
            s->meta.has_trace_events = 1;
            s->pos++;
            s->state = ST_EVENTS;
            s->after_value = s->after_comma = 0;
            return 0;
        }
        problem(s, s->base + s->pos, "\"traceEvents\" is not an array (ignored)");
        s->stats.other++;
        s->stats.warnings++;
        skip_begin(s, SKIP_VALUE, ST_OBJ_AFTER);
        return 0;
    }
    if (s->key == TOP_OTHER) {
        skip_begin(s, SKIP_VALUE, ST_OBJ_AFTER);
        return 0;
    }
    for (;;) { /* a metadata value: parsed whole, like an event */
        struct pctx c;
        const char *p = s->buf + s->pos;
        pctx_init(&c, s);
        r = tl_trace_meta_parse(&c, &p, s->key, &s->meta);
        if (r == P_OK) {
            commit_pending(s, &c);
            s->pos = (size_t)(p - s->buf);
            s->state = ST_OBJ_AFTER;
            return 0;
        }
        if (r == P_BAD) {
            commit_pending(s, &c);
            problem(s, offset_of(s, c.err_at), "%s in a top-level value (skipped)", c.err_what);
            s->stats.other++;
            s->stats.warnings++;
            skip_begin(s, SKIP_VALUE, ST_OBJ_AFTER);
            return 0;
        }
        if ((r = fill(s)) < 0)
            return r;
        if (r == FILL_EOF) {
            end_of_input(s);
            return 0;
        }
        if (r == FILL_FULL) { /* too big to parse whole: pass over it */
            skip_begin(s, SKIP_VALUE, ST_OBJ_AFTER);
            return 0;
        }
    }
}

/* Object form: after a value, ',' or '}'. */
static int step_obj_after(tl_trace_stream *s)
{
    const char *p;
    int r;

    if ((r = next_byte(s)) <= 0)
        return r ? r : (end_of_input(s), 0);
    p = s->buf + s->pos;
    s->after_comma = 0;
    if (*p == ',') {
        s->pos++;
        s->after_comma = 1;
        s->state = ST_OBJ_KEY;
    } else if (*p == '}') {
        s->pos++;
        s->state = ST_TAIL;
    } else if (*p == '"') {
        stream_warn(s, W_MISSING_COMMA, 1, offset_of(s, p));
        s->state = ST_OBJ_KEY;
    } else {
        fatal(s, TL_TRACE_ERR_FORMAT, offset_of(s, p), "expected ',' or '}' in the top-level object");
    }
    return 0;
}

static void oversized(tl_trace_stream *s, uint64_t offset)
{
    s->stats.oversized++;
    s->stats.warnings++;
    problem(s, offset, "event larger than %zu bytes (skipped)", s->opt.max_event_size);
}

/* The event at pos read by the byte parser (the fast path gave it back): as read_event(). */
static int read_event_bytes(tl_trace_stream *s, tl_trace_event *ev)
{
    for (;;) {
        struct pctx c;
        const char *p = s->buf + s->pos;
        int r;

        pctx_init(&c, s);
        r = tl_trace_event_parse(&c, &p, ev);
        if (r == P_OK && ev->size > s->opt.max_event_size) {
            /* It fit in the buffer this time; it must not matter whether it did. */
            s->pos = (size_t)(p - s->buf);
            s->after_value = 1;
            s->after_comma = 0;
            oversized(s, ev->offset);
            return 0;
        }
        if (r == P_OK) {
            commit_pending(s, &c);
            s->pos = (size_t)(p - s->buf);
            s->after_value = 1;
            s->after_comma = 0;
            count_event(s, ev);
            return 1;
        }
        if (r == P_BAD) {
            commit_pending(s, &c);
            s->stats.malformed++;
            s->stats.warnings++;
            if (c.err_depth)
                problem(s, offset_of(s, c.err_at), "nesting deeper than %d levels (event at offset %llu skipped)",
                        s->opt.max_depth, (unsigned long long)(s->base + s->pos));
            else
                problem(s, offset_of(s, c.err_at), "%s (event at offset %llu skipped)", c.err_what,
                        (unsigned long long)(s->base + s->pos));
            skip_begin(s, SKIP_MALFORMED, ST_EVENTS);
            return 0;
        }
        if (s->len - s->pos >= s->opt.max_event_size) {
            r = FILL_FULL;
        } else if ((r = fill(s)) < 0) {
            return r;
        } else if (r == FILL_EOF) {
            s->stats.truncated = 1;
            end_error(s, s->base + s->pos, "input ends inside the event that starts at offset %llu",
                      (unsigned long long)(s->base + s->pos));
            s->state = ST_END;
            return 0;
        }
        if (r == FILL_FULL) {
            oversized(s, s->base + s->pos);
            skip_begin(s, SKIP_OVERSIZED, ST_EVENTS);
            return 0;
        }
    }
}

/* The event at pos: 1 when `ev` holds it, 0 when it was skipped or the input ended. The fast
 * path first; small, so that it goes inline into its callers and an event read by the fast
 * path costs one call. */
static inline int read_event(tl_trace_stream *s, tl_trace_event *ev)
{
    switch (tl_trace_fast_read(s, ev)) {
    case TL_FAST_READ:
        count_event(s, ev);
        return 1;
    case TL_FAST_OVERSIZED:
        oversized(s, ev->offset);
        return 0;
    default:
        return read_event_bytes(s, ev);
    }
}

/* Inside traceEvents: the next element, separator or the end of the array. */
static int step_events(tl_trace_stream *s, tl_trace_event *ev)
{
    const char *p;
    unsigned char ch;
    int r;

    if ((r = next_byte(s)) <= 0)
        return r ? r : (end_of_input(s), 0);
    p = s->buf + s->pos;
    ch = (unsigned char)*p;
    if (ch == '{') {
        if (s->after_value) {
            stream_warn(s, W_MISSING_COMMA, 1, offset_of(s, p));
            s->after_value = 0; /* once, even if the event is read again */
        }
        return read_event(s, ev);
    }
    if (ch == ',') {
        if (!s->after_value)
            stream_warn(s, W_EXTRA_COMMA, 1, offset_of(s, p));
        s->pos++;
        s->after_value = 0;
        s->after_comma = 1;
        return 0;
    }
    if (ch == ']') {
        if (s->after_comma)
            stream_warn(s, W_TRAILING_COMMA, 1, offset_of(s, p));
        s->pos++;
        s->after_comma = 0;
        s->state = s->meta.form == TL_TRACE_FORM_ARRAY ? ST_TAIL : ST_OBJ_AFTER;
        return 0;
    }
    if (is_value_start(ch)) {
        s->stats.non_objects++;
        s->stats.warnings++;
        problem(s, offset_of(s, p), "element of traceEvents is not an object (skipped)");
        skip_begin(s, SKIP_VALUE, ST_EVENTS);
        return 0;
    }
    s->stats.malformed++;
    s->stats.warnings++;
    problem(s, offset_of(s, p), "expected '{', ',' or ']' in traceEvents (skipping to next '{')");
    s->state = ST_JUNK;
    return 0;
}

/* After garbage in traceEvents: find the next '{' (an event) or ']'. */
static int step_junk(tl_trace_stream *s)
{
    for (;;) {
        const char *p = s->buf + s->pos, *end = s->buf + s->len;
        int r;
        while (p < end && *p != '{' && *p != ']')
            p++;
        s->pos = (size_t)(p - s->buf);
        if (p < end) {
            s->state = ST_EVENTS;
            s->after_value = s->after_comma = 0;
            return 0;
        }
        if ((r = fill(s)) < 0)
            return r;
        if (r == FILL_EOF) {
            end_of_input(s);
            return 0;
        }
    }
}

static int step_skip(tl_trace_stream *s)
{
    int r;

    while (!skip_step(s)) {
        if ((r = fill(s)) < 0)
            return r; /* FILL_FULL cannot happen: the buffer was used up */
        if (r == FILL_EOF) {
            end_of_input(s);
            return 0;
        }
    }
    s->state = s->after_state;
    s->after_value = 1;
    s->after_comma = 0;
    return 0;
}

/* After the document: whitespace only. Anything else is reported and ignored. */
static int step_tail(tl_trace_stream *s)
{
    int r = next_byte(s);

    if (r < 0)
        return r;
    if (r > 0)
        stream_warn(s, W_OTHER, 1, s->base + s->pos);
    s->state = ST_END;
    return 0;
}

int tl_trace_stream_next(tl_trace_stream *s, tl_trace_event *ev)
{
    if (s->fast_next) {
        /* The last event was followed by ',' and '{' (read_event() took them): what
		 * step_events() would find; go to the event directly. */
        int r;
        s->fast_next = 0;
        if ((r = read_event(s, ev)) == 1)
            return 1;
        if (r < 0) {
            fatal(s, r, s->base + s->pos, "out of memory");
            return r;
        }
    }
    for (;;) {
        int r = 0;

        switch (s->state) {
        case ST_START:
            r = step_start(s);
            break;
        case ST_OBJ_KEY:
            r = step_obj_key(s);
            break;
        case ST_OBJ_VALUE:
            r = step_obj_value(s);
            break;
        case ST_OBJ_AFTER:
            r = step_obj_after(s);
            break;
        case ST_EVENTS:
            r = step_events(s, ev);
            break;
        case ST_SKIP:
            r = step_skip(s);
            break;
        case ST_JUNK:
            r = step_junk(s);
            break;
        case ST_TAIL:
            r = step_tail(s);
            break;
        default:
            if (s->fatal)
                return s->fatal;
            return s->read_failed ? TL_TRACE_ERR_READ : 0;
        }
        if (r == 1)
            return 1;
        if (r < 0) {
            fatal(s, r, s->base + s->pos, "out of memory");
            return r;
        }
    }
}

void tl_trace_options_init(tl_trace_options *opt)
{
    opt->buffer_size = 1u << 20;
    opt->max_event_size = 64u << 20;
    opt->max_depth = 256;
    opt->no_index = 0;
}

int tl_trace_stream_open(tl_trace_stream *s, tl_read_fn read, void *ctx, const char *source_name,
                         const tl_trace_options *opt)
{
    memset(s, 0, sizeof *s);
    s->read = read;
    s->ctx = ctx;
    if (opt)
        s->opt = *opt;
    else
        tl_trace_options_init(&s->opt);
    if (s->opt.buffer_size < 16)
        s->opt.buffer_size = 16;
    if (s->opt.max_event_size < 16)
        s->opt.max_event_size = 16;
    if (s->opt.max_depth < 1 || s->opt.max_depth > TL_TRACE_DEPTH_LIMIT)
        s->opt.max_depth = TL_TRACE_DEPTH_LIMIT;
    snprintf(s->source, sizeof s->source, "%s", source_name ? source_name : "");
    s->state = ST_START;
    s->cap = s->opt.buffer_size;
    s->buf = malloc(s->cap + READ_SLACK); /* + the sentinel bytes after the data */
    if (s->buf)
        memset(s->buf, 0, READ_SLACK);
    return s->buf ? 0 : TL_TRACE_ERR_NOMEM;
}

void tl_trace_stream_release(tl_trace_stream *s)
{
    free(s->buf);
    free(s->idx);
    s->idx = NULL;
    s->idx_valid = 0;
    free(s->meta.other_data);
    free(s->meta.metadata);
    s->buf = NULL;
    s->meta.other_data = s->meta.metadata = NULL;
    s->cap = s->len = s->pos = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Helpers on views                                                                           */

ssize_t tl_fd_read(void *ctx, void *buf, size_t cap)
{
    int fd = *(const int *)ctx;
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}
