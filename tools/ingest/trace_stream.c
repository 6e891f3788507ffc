/*
 * trace_stream: the streaming reader of Chrome / Kineto trace events (see trace_stream.h).
 *
 * Two layers. The lower one is a set of small scanners over contiguous memory (scan_string,
 * scan_token, skip_container, parse_object) that return P_OK, P_MORE ("the data ended first")
 * or P_BAD (a syntax error, with where and what was expected). They never suspend: the upper
 * layer, a state machine over the top level of the document, calls them only on an event (or
 * a top-level key or small value) and, on P_MORE, reads more input and calls them again from
 * the start of that item. Warnings found during an attempt are collected in `struct pending`
 * and counted only when the attempt completes, so a retry never counts anything twice.
 *
 * Values the reader does not need at all (unknown top-level keys such as "stackFrames", or the
 * rest of a malformed or oversized event) are passed over by a resumable bracket counter
 * (skip_step) that consumes the buffer as it goes, so their size is not limited by the buffer.
 *
 * Speed comes from not decoding: strings are scanned 8 bytes at a time for the four bytes that
 * matter (quote, backslash, control, non-ASCII), numbers are only delimited unless the field is
 * one we decode, and there are no per-byte function calls on the hot paths.
 *
 * Above both, the fast path (fast_walk and its helpers) walks most events from the structural
 * index instead: per entry a load and a compare or two, the fields decoded from their bytes
 * with SWAR arithmetic (8 digits at a time), keys named by a perfect hash; see its comment.
 */
#define _GNU_SOURCE /* memrchr */
#include "ingest/trace_stream.h"

#include "ingest/json_scan.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { P_OK = 0, P_MORE = 1, P_BAD = 2 };

/* Warning kinds found while scanning; each maps to a counter in tl_trace_stats. */
enum {
    W_TRAILING_COMMA,
    W_EXTRA_COMMA,
    W_MISSING_COMMA,
    W_NONFINITE,
    W_BAD_NUMBER,
    W_BAD_UTF8,
    W_CONTROL,
    W_BAD_ESCAPE,
    W_DUP_KEY,
    W_OTHER,
    W_COUNT
};

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

/* Warnings of one parse attempt: how many of each kind, and where each kind first occurred. */
struct pending {
    uint32_t n[W_COUNT];
    uint32_t any;               /* the sum of n[] */
    const char *first[W_COUNT]; /* set when n[] goes from 0 to 1 */
};

/* One parse attempt over the contiguous bytes [buf, end). */
struct pctx {
    const char *buf; /* the buffer start, for turning pointers into input offsets */
    uint64_t base;   /* input offset of buf[0] */
    const char *end;
    int max_depth;
    struct pending w;
    const char *err_at;   /* P_BAD: where */
    const char *err_what; /* P_BAD: what was expected (a static string) */
    int err_depth;        /* P_BAD because of the nesting limit */
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

/* Top-level keys of the object form that the reader looks at. */
enum {
    TOP_OTHER,
    TOP_TRACE_EVENTS,
    TOP_DISTRIBUTED_INFO,
    TOP_DEVICE_PROPERTIES,
    TOP_BASE_TIME,
    TOP_SCHEMA_VERSION,
    TOP_DISPLAY_TIME_UNIT,
    TOP_TRACE_NAME,
    TOP_OTHER_DATA,
    TOP_METADATA,
};

#define META_COPY_MAX (64u * 1024u)

/* Zero bytes kept after the data in the buffer: the walker's digit loops stop at the first and
 * read up to 8 bytes at a time. */
#define READ_SLACK 8

/* What fill() did (TL_TRACE_ERR_NOMEM aside). */
enum { FILL_EOF = 0, FILL_OK = 1, FILL_FULL = 2 };

/* Bytes of a bare token: numbers and the literals true/false/null/NaN/Infinity. */
static const unsigned char tok_char[256] = {
    ['0' ... '9'] = 1, ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,
};

static inline int is_digit(char ch)
{
    return (unsigned)((unsigned char)ch - '0') < 10;
}

/* ---------------------------------------------------------------------------------------- */
/* Scanners over contiguous memory                                                            */

static inline void warn(struct pctx *c, int kind, const char *at)
{
    c->w.any++;
    if (c->w.n[kind]++ == 0)
        c->w.first[kind] = at;
}

static int bad(struct pctx *c, const char *at, const char *what)
{
    c->err_at = at;
    c->err_what = what;
    return P_BAD;
}

static int bad_depth(struct pctx *c, const char *at)
{
    c->err_depth = 1;
    return bad(c, at, "nesting too deep");
}

#if defined(__SSE2__)
#include <emmintrin.h>
#define SCAN_SSE2 1
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SCAN_SWAR 1
/* High bit set in each byte of `w` that is '"', '\\', < 0x20 or >= 0x80. The classic
 * "has zero byte" trick may flag bytes above a true hit, never below one, so the lowest flagged
 * byte is exact. */
static inline uint64_t special_mask(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t m = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w;
    return m & high;
}
#endif

/* The first byte in [p, end) that ends a plain run of string content: '"', '\\', a control
 * byte or a non-ASCII byte. 16 bytes a step with SSE2 (every x86-64 has it), 8 with SWAR. */
static inline const char *find_special(const char *p, const char *end)
{
#if defined(SCAN_SSE2)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* signed compare: bytes >= 0x80 are negative, so "< 0x20" also catches them */
        __m128i m =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)), _mm_cmplt_epi8(x, space));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits)
            return p + __builtin_ctz(bits);
        p += 16;
    }
#elif defined(SCAN_SWAR)
    while (end - p >= 8) {
        uint64_t w, m;
        memcpy(&w, p, 8);
        m = special_mask(w);
        if (m)
            return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < end) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x80)
            break;
        p++;
    }
    return p;
}

static inline const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, surrogates or values past
 * U+10FFFF), -1 when invalid, 0 when the data ends inside it. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char b = p[0], lo = 0x80, hi = 0xBF;
    int n;

    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0)
            lo = 0xA0;
        else if (b == 0xED)
            hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F;
    } else {
        return -1;
    }
    for (int i = 1; i < n; i++) {
        if (p + i >= end)
            return 0;
        if (p[i] < lo || p[i] > hi)
            return -1;
        lo = 0x80;
        hi = 0xBF;
    }
    return n;
}

static inline int hexval(unsigned char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* *pp is at an opening quote; on P_OK it is just past the closing quote. */
static int scan_string(struct pctx *c, const char **pp)
{
    const char *p = *pp + 1, *end = c->end;

    for (;;) {
        unsigned char ch;

        p = find_special(p, end);
        if (p == end)
            return P_MORE;
        ch = (unsigned char)*p;
        if (ch == '"') {
            *pp = p + 1;
            return P_OK;
        }
        if (ch == '\\') {
            if (end - p < 2)
                return P_MORE;
            if (p[1] == 'u') {
                if (end - p < 6)
                    return P_MORE;
                if (hexval((unsigned char)p[2]) < 0 || hexval((unsigned char)p[3]) < 0 ||
                    hexval((unsigned char)p[4]) < 0 || hexval((unsigned char)p[5]) < 0) {
                    warn(c, W_BAD_ESCAPE, p);
                    p += 2;
                } else {
                    p += 6;
                }
            } else {
                if (!strchr("\"\\/bfnrt", p[1]) || p[1] == '\0')
                    warn(c, W_BAD_ESCAPE, p);
                p += 2; /* even a bad escape covers the next byte: "\"" stays inside */
            }
        } else if (ch < 0x20) {
            warn(c, W_CONTROL, p);
            p++;
        } else {
            int n = utf8_len((const unsigned char *)p, (const unsigned char *)end);
            if (n == 0)
                return P_MORE;
            if (n < 0) {
                warn(c, W_BAD_UTF8, p);
                n = 1;
            }
            p += n;
        }
    }
}

/* A JSON number, leniently: leading zeros and a bare '.' fraction are let through. */
static int is_number_text(const char *p, size_t n)
{
    const char *end = p + n;
    int digits = 0;

    if (p < end && *p == '-')
        p++;
    while (p < end && *p >= '0' && *p <= '9')
        p++, digits++;
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits)
        return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        int edigits = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        while (p < end && *p >= '0' && *p <= '9')
            p++, edigits++;
        if (!edigits)
            return 0;
    }
    return p == end;
}

static int text_is(const char *p, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(p, lit, n) == 0;
}

/* A bare token at *pp: a number or a literal. */
static int scan_token(struct pctx *c, const char **pp, enum tl_json_kind *kind)
{
    const char *s = *pp, *p = s, *end = c->end;
    size_t n;

    /* Plain numbers (ids, shapes, sizes, and every ts and dur) in one pass: digits after an
	 * optional '-' with no leading zero, then optionally '.' and digits, ended by a byte that
	 * cannot continue a token. Anything else (exponents, NaN, junk) takes the full path. */
    {
        const char *q = s + (s < end && *s == '-');
        const char *d = q;
        while (d < end && (unsigned)(*d - '0') < 10)
            d++;
        if (d > q && d < end && *d == '.') {
            const char *f = d + 1;
            while (f < end && (unsigned)(*f - '0') < 10)
                f++;
            d = f > d + 1 ? f : q; /* "1." is not a number: let the full path say so */
        }
        if (d > q && d < end && !tok_char[(unsigned char)*d] && !(*q == '0' && d - q > 1 && q[1] != '.')) {
            *kind = TL_JSON_NUMBER;
            *pp = d;
            return P_OK;
        }
    }
    while (p < end && tok_char[(unsigned char)*p])
        p++;
    if (p == end)
        return P_MORE; /* the token may go on in the next read */
    n = (size_t)(p - s);
    if (n == 0)
        return bad(c, s, "expected a value");
    if ((*s >= '0' && *s <= '9') || *s == '-') {
        if (is_number_text(s, n))
            *kind = TL_JSON_NUMBER;
        else if (text_is(s, n, "-Infinity") || text_is(s, n, "-NaN"))
            *kind = TL_JSON_NONFINITE;
        else
            return bad(c, s, "expected a number");
    } else if (text_is(s, n, "true")) {
        *kind = TL_JSON_TRUE;
    } else if (text_is(s, n, "false")) {
        *kind = TL_JSON_FALSE;
    } else if (text_is(s, n, "null")) {
        *kind = TL_JSON_NULL;
    } else if (text_is(s, n, "NaN") || text_is(s, n, "Infinity")) {
        *kind = TL_JSON_NONFINITE;
    } else {
        return bad(c, s, "expected a value (string, number, object, array, true, false, null)");
    }
    if (*kind == TL_JSON_NONFINITE)
        warn(c, W_NONFINITE, s);
    *pp = p;
    return P_OK;
}

/*
 * Pass over the object or array at *pp, checking its syntax without decoding it. `depth` is
 * the nesting level of that container (the event object is 1). Iterative: one bit per open
 * container says object or array, so a hostile input cannot exhaust the C stack.
 */
static int skip_container(struct pctx *c, const char **pp, int depth)
{
    enum { S_VALUE, S_MEMBER_VALUE, S_KEY, S_AFTER } st;
    uint64_t is_obj[TL_TRACE_DEPTH_LIMIT / 64];
    const char *p = *pp, *end = c->end;
    int top = 0, comma = 0, rc;

    goto open;
    for (;;) {
        unsigned char ch;
        int in_obj;

        p = skip_ws(p, end);
        if (p == end)
            return P_MORE;
        ch = (unsigned char)*p;
        in_obj = (int)(is_obj[(top - 1) / 64] >> ((top - 1) % 64)) & 1;

        if (st == S_AFTER) {
            if (ch == ',') {
                p++;
                comma = 1;
                st = in_obj ? S_KEY : S_VALUE;
                continue;
            }
            if (ch == (in_obj ? '}' : ']'))
                goto close;
            if (ch == '"' || ch == '{' || ch == '[' || tok_char[ch]) {
                warn(c, W_MISSING_COMMA, p);
                comma = 0;
                st = in_obj ? S_KEY : S_VALUE;
                continue;
            }
            return bad(c, p, in_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        if (st == S_KEY) {
            if (ch == '}') {
                if (comma)
                    warn(c, W_TRAILING_COMMA, p);
                goto close;
            }
            if (ch == ',') {
                warn(c, W_EXTRA_COMMA, p);
                p++;
                continue;
            }
            if (ch != '"')
                return bad(c, p, "expected '\"' (a key) or '}'");
            if ((rc = scan_string(c, &p)) != P_OK)
                return rc;
            p = skip_ws(p, end);
            if (p == end)
                return P_MORE;
            if (*p != ':')
                return bad(c, p, "expected ':' after key");
            p++;
            st = S_MEMBER_VALUE;
            continue;
        }
        if (st == S_VALUE) { /* an array element, or the array's end */
            if (ch == ']') {
                if (comma)
                    warn(c, W_TRAILING_COMMA, p);
                goto close;
            }
            if (ch == ',') {
                warn(c, W_EXTRA_COMMA, p);
                p++;
                continue;
            }
        }
        /* a value */
        if (ch == '"') {
            if ((rc = scan_string(c, &p)) != P_OK)
                return rc;
        } else if (ch == '{' || ch == '[') {
            goto open;
        } else {
            enum tl_json_kind kind;
            if ((rc = scan_token(c, &p, &kind)) != P_OK)
                return rc;
        }
        st = S_AFTER;
        comma = 0;
        continue;

    open:
        if (depth + top > c->max_depth)
            return bad_depth(c, p);
        if (*p == '{') {
            is_obj[top / 64] |= 1ull << (top % 64);
            st = S_KEY;
        } else {
            is_obj[top / 64] &= ~(1ull << (top % 64));
            st = S_VALUE;
        }
        top++;
        p++;
        comma = 0;
        continue;

    close:
        p++;
        if (--top == 0) {
            *pp = p;
            return P_OK;
        }
        st = S_AFTER;
        comma = 0;
    }
}

/* A value as read by read_value(): its kind and text (string content without the quotes). */
struct jval {
    enum tl_json_kind kind;
    tl_view text;
};

/* Read (and check) the value at *pp, which is not whitespace; `depth` as for skip_container. */
static int read_value(struct pctx *c, const char **pp, int depth, struct jval *v)
{
    const char *p = *pp;
    int rc;

    if (*p == '"') {
        if ((rc = scan_string(c, pp)) != P_OK)
            return rc;
        v->kind = TL_JSON_STRING;
        v->text.ptr = p + 1;
        v->text.len = (size_t)(*pp - p) - 2;
        return P_OK;
    }
    if (*p == '{' || *p == '[') {
        if ((rc = skip_container(c, pp, depth)) != P_OK)
            return rc;
        v->kind = *p == '{' ? TL_JSON_OBJECT : TL_JSON_ARRAY;
    } else if ((rc = scan_token(c, pp, &v->kind)) != P_OK) {
        return rc;
    }
    v->text.ptr = p;
    v->text.len = (size_t)(*pp - p);
    return P_OK;
}

/* Called for each member of an object by parse_object(), with *pp at the value. It must read
 * the value (read_value() or a nested parse) and leave *pp after it. */
typedef int (*member_fn)(struct pctx *c, void *obj, tl_view key, const char **pp, int depth);

/* Walk the object at *pp (depth as for skip_container), handing each member to `fn`.
 * Tolerates extra, trailing and missing commas (counted). */
static int parse_object(struct pctx *c, const char **pp, int depth, member_fn fn, void *obj)
{
    const char *p = *pp, *end = c->end;
    int comma = 0, after = 0, rc;

    if (depth > c->max_depth)
        return bad_depth(c, p);
    p++;
    for (;;) {
        const char *k;
        tl_view key;

        p = skip_ws(p, end);
        if (p == end)
            return P_MORE;
        if (*p == '}') {
            if (comma)
                warn(c, W_TRAILING_COMMA, p);
            *pp = p + 1;
            return P_OK;
        }
        if (*p == ',') {
            if (!after)
                warn(c, W_EXTRA_COMMA, p);
            p++;
            comma = 1;
            after = 0;
            continue;
        }
        if (*p != '"')
            return bad(c, p, after ? "expected ',' or '}'" : "expected '\"' (a key) or '}'");
        if (after)
            warn(c, W_MISSING_COMMA, p);
        k = p;
        if ((rc = scan_string(c, &p)) != P_OK)
            return rc;
        key.ptr = k + 1;
        key.len = (size_t)(p - k) - 2;
        p = skip_ws(p, end);
        if (p == end)
            return P_MORE;
        if (*p != ':')
            return bad(c, p, "expected ':' after key");
        p = skip_ws(p + 1, end);
        if (p == end)
            return P_MORE;
        if ((rc = fn(c, obj, key, &p, depth + 1)) != P_OK)
            return rc;
        after = 1;
        comma = 0;
    }
}

/* Walk the array at *pp, handing each element (at its first byte) to `fn`. */
typedef int (*element_fn)(struct pctx *c, void *obj, const char **pp, int depth);

static int parse_array(struct pctx *c, const char **pp, int depth, element_fn fn, void *obj)
{
    const char *p = *pp, *end = c->end;
    int comma = 0, after = 0, rc;

    if (depth > c->max_depth)
        return bad_depth(c, p);
    p++;
    for (;;) {
        p = skip_ws(p, end);
        if (p == end)
            return P_MORE;
        if (*p == ']') {
            if (comma)
                warn(c, W_TRAILING_COMMA, p);
            *pp = p + 1;
            return P_OK;
        }
        if (*p == ',') {
            if (!after)
                warn(c, W_EXTRA_COMMA, p);
            p++;
            comma = 1;
            after = 0;
            continue;
        }
        if (after)
            warn(c, W_MISSING_COMMA, p);
        if ((rc = fn(c, obj, &p, depth + 1)) != P_OK)
            return rc;
        after = 1;
        comma = 0;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Numbers                                                                                    */

int tl_view_to_int64(tl_view v, int64_t *out)
{
    const char *p = v.ptr, *end;
    uint64_t acc = 0, limit;
    int neg = 0;

    if (!p || v.len == 0)
        return -1;
    end = p + v.len;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (p == end)
        return -1;
    if (end - p <= 18) { /* at most 18 digits cannot overflow: no check per digit */
        for (; p < end; p++) {
            unsigned d = (unsigned)(*p - '0');
            if (d > 9)
                return -1;
            acc = acc * 10 + d;
        }
        *out = neg ? -(int64_t)acc : (int64_t)acc;
        return 0;
    }
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9)
            return -1;
        if (acc > (limit - d) / 10)
            return -1;
        acc = acc * 10 + d;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

static const uint64_t pow10_u64[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/*
 * Decimal µs text to integer ns, exactly: the digits are read as an integer mantissa m (up to
 * 19 significant digits, which cover every double and every int64) and a power of ten e, and
 * ns = m * 10^(e + 3) is computed in integers, rounding half away from zero when e + 3 < 0.
 * Going through a double would turn 1740461679470692.999 µs into ...693000 ns.
 */
int tl_trace_us_to_ns(tl_view v, int64_t *out)
{
    const char *p = v.ptr, *end;
    uint64_t m = 0, q;
    int neg = 0, nd = 0, any = 0, e = 0;
    long exp10 = 0;

    if (!p)
        return -1;
    end = p + v.len;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    /* The usual "1694128202546738.267": digits, '.', digits, at most 19 in all, read in one
	 * tight pass; anything else (exponents, more digits, leading zeros) takes the loops below. */
    if (end - p <= 20 && p < end && *p >= '1' && *p <= '9') {
        const char *t = p;
        int frac = 0, digits = 0;
        while (t < end && (unsigned)(*t - '0') < 10) {
            m = m * 10 + (uint64_t)(*t++ - '0');
            digits++;
        }
        if (t < end && *t == '.')
            for (t++; t < end && (unsigned)(*t - '0') < 10; t++, frac++)
                m = m * 10 + (uint64_t)(*t - '0');
        if (t == end && digits + frac <= 19) {
            exp10 = 3 - frac;
            goto scaled;
        }
        m = 0;
    }
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        any = 1;
        if (m == 0 && *p == '0')
            continue; /* leading zero */
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            nd++;
        } else {
            e++; /* a digit we cannot keep; only magnitude matters (it overflows anyway) */
        }
    }
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9'; p++) {
            any = 1;
            if (m == 0 && *p == '0') {
                e--;
            } else if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd++;
                e--;
            }
            /* further fraction digits are below the 19th significant one: ignored */
        }
    }
    if (!any)
        return -1;
    if (p < end && (*p == 'e' || *p == 'E')) {
        int eneg = 0, edigits = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        for (; p < end && *p >= '0' && *p <= '9'; p++, edigits++)
            if (exp10 < 100000)
                exp10 = exp10 * 10 + (*p - '0');
        if (!edigits)
            return -1;
        if (eneg)
            exp10 = -exp10;
    }
    if (p != end)
        return -1;
    exp10 += e + 3; /* µs -> ns */
scaled:
    if (m == 0) {
        q = 0;
    } else if (exp10 >= 0) {
        if (exp10 > 19 || m > UINT64_MAX / pow10_u64[exp10])
            return -2;
        q = m * pow10_u64[exp10];
    } else if (exp10 < -19) {
        q = 0;
    } else {
        uint64_t d = pow10_u64[-exp10], r = m % d;
        q = m / d;
        if (r >= d - r) /* r >= d/2 without overflow: half rounds away from zero */
            q++;
    }
    if (q > (uint64_t)INT64_MAX)
        return -2;
    *out = neg ? -(int64_t)q : (int64_t)q;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Events                                                                                     */

enum {
    K_NAME = 1 << 0,
    K_CAT = 1 << 1,
    K_PH = 1 << 2,
    K_TS = 1 << 3,
    K_DUR = 1 << 4,
    K_PID = 1 << 5,
    K_TID = 1 << 6,
    K_ID = 1 << 7,
    K_ID2 = 1 << 8,
    K_BP = 1 << 9,
    K_S = 1 << 10,
    K_SCOPE = 1 << 11,
    K_ARGS = 1 << 12,
};

static int event_key(tl_view k)
{
    const char *s = k.ptr;

    switch (k.len) {
    case 1:
        return s[0] == 's' ? K_S : 0;
    case 2:
        if (s[0] == 'p' && s[1] == 'h')
            return K_PH;
        if (s[0] == 't' && s[1] == 's')
            return K_TS;
        if (s[0] == 'i' && s[1] == 'd')
            return K_ID;
        if (s[0] == 'b' && s[1] == 'p')
            return K_BP;
        return 0;
    case 3:
        if (!memcmp(s, "pid", 3))
            return K_PID;
        if (!memcmp(s, "tid", 3))
            return K_TID;
        if (!memcmp(s, "dur", 3))
            return K_DUR;
        if (!memcmp(s, "cat", 3))
            return K_CAT;
        if (!memcmp(s, "id2", 3))
            return K_ID2;
        return 0;
    case 4:
        if (!memcmp(s, "name", 4))
            return K_NAME;
        if (!memcmp(s, "args", 4))
            return K_ARGS;
        return 0;
    case 5:
        return memcmp(s, "scope", 5) ? 0 : K_SCOPE;
    }
    return 0;
}

/* A string field: the string's content, or the raw text of a number; absent otherwise. */
static tl_view text_field(const struct jval *v)
{
    tl_view none = { NULL, 0 };
    return v->kind == TL_JSON_STRING || v->kind == TL_JSON_NUMBER ? v->text : none;
}

static void set_time(struct pctx *c, const struct jval *v, int64_t *ns, unsigned char *has)
{
    *has = 0;
    if (v->kind == TL_JSON_NUMBER || v->kind == TL_JSON_STRING) {
        if (tl_trace_us_to_ns(v->text, ns) == 0)
            *has = 1;
        else
            warn(c, W_BAD_NUMBER, v->text.ptr);
    } else if (v->kind != TL_JSON_NULL && v->kind != TL_JSON_NONFINITE) {
        warn(c, W_BAD_NUMBER, v->text.ptr); /* nonfinite was counted as such already */
    }
}

static void set_pid(const struct jval *v, int64_t *val, tl_view *str, unsigned char *is_int, unsigned char *quoted)
{
    *str = text_field(v);
    *quoted = v->kind == TL_JSON_STRING;
    *is_int = str->ptr && tl_view_to_int64(*str, val) == 0;
    if (!*is_int)
        *val = 0;
}

/* A Kineto arg the analysis always needs, from one member of "args". */
static void arg_field(tl_trace_event *ev, tl_view key, const struct jval *v)
{
    int64_t *dst = NULL;
    unsigned char *has = NULL;

    if (key.len == 6 && !memcmp(key.ptr, "stream", 6)) {
        dst = &ev->stream;
        has = &ev->has_stream;
    } else if (key.len == 6 && !memcmp(key.ptr, "device", 6)) {
        dst = &ev->device;
        has = &ev->has_device;
    } else if (key.len == 11 && !memcmp(key.ptr, "correlation", 11)) {
        dst = &ev->correlation;
        has = &ev->has_correlation;
    } else if (key.len == 11 && !memcmp(key.ptr, "External id", 11)) {
        dst = &ev->external_id;
        has = &ev->has_external_id;
    }
    if (dst)
        *has = tl_view_to_int64(text_field(v), dst) == 0;
}

static int on_arg_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct jval v;
    int rc;

    if ((rc = read_value(c, pp, depth, &v)) != P_OK)
        return rc;
    arg_field(obj, key, &v);
    return P_OK;
}

/* Store the value of the event key `k` (a K_* bit, 0 for keys not decoded) in `ev`. */
static void event_field(struct pctx *c, tl_trace_event *ev, int k, const struct jval *vp)
{
    const struct jval v = *vp;

    switch (k) {
    case K_NAME:
        ev->name = text_field(&v);
        break;
    case K_CAT:
        ev->cat = text_field(&v);
        break;
    case K_PH:
        ev->ph = text_field(&v);
        break;
    case K_BP:
        ev->bp = text_field(&v);
        break;
    case K_S:
        ev->s = text_field(&v);
        break;
    case K_SCOPE:
        ev->scope = text_field(&v);
        break;
    case K_TS:
        set_time(c, &v, &ev->ts_ns, &ev->has_ts);
        break;
    case K_DUR:
        set_time(c, &v, &ev->dur_ns, &ev->has_dur);
        break;
    case K_PID:
        set_pid(&v, &ev->pid, &ev->pid_str, &ev->pid_int, &ev->pid_quoted);
        break;
    case K_TID:
        set_pid(&v, &ev->tid, &ev->tid_str, &ev->tid_int, &ev->tid_quoted);
        break;
    case K_ID:
        ev->id = text_field(&v);
        ev->id_quoted = v.kind == TL_JSON_STRING;
        break;
    case K_ID2:
        if (v.kind == TL_JSON_OBJECT) {
            tl_args_iter it;
            tl_view k2;
            tl_json_value v2;
            tl_args_iter_init(&it, v.text);
            while (tl_args_next(&it, &k2, &v2)) {
                tl_view t = v2.kind == TL_JSON_STRING || v2.kind == TL_JSON_NUMBER ? v2.text : (tl_view){ NULL, 0 };
                if (tl_view_eq(k2, "local"))
                    ev->id2_local = t;
                else if (tl_view_eq(k2, "global"))
                    ev->id2_global = t;
            }
        }
        break;
    case K_ARGS: /* not an object: keep no args */
        ev->args = (tl_view){ NULL, 0 };
        break;
    }
}

struct event_parse {
    tl_trace_event *ev;
    unsigned seen;
};

static int on_event_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct event_parse *ep = obj;
    tl_trace_event *ev = ep->ev;
    int k = event_key(key), rc;
    struct jval v;

    if (k & ep->seen)
        warn(c, W_DUP_KEY, key.ptr);
    ep->seen |= (unsigned)k;
    if (k == K_ARGS && **pp == '{') {
        const char *start = *pp;
        ev->has_stream = ev->has_device = ev->has_correlation = ev->has_external_id = 0;
        if ((rc = parse_object(c, pp, depth, on_arg_member, ev)) != P_OK)
            return rc;
        ev->args.ptr = start;
        ev->args.len = (size_t)(*pp - start);
        return P_OK;
    }
    if ((rc = read_value(c, pp, depth, &v)) != P_OK)
        return rc;
    event_field(c, ev, k, &v);
    return P_OK;
}

/* Parse the event object at *pp into `ev`. */
static int parse_event(struct pctx *c, const char **pp, tl_trace_event *ev)
{
    struct event_parse ep = { ev, 0 };
    const char *start = *pp;
    int rc;

    memset(ev, 0, sizeof *ev);
    rc = parse_object(c, pp, 1, on_event_member, &ep);
    if (rc != P_OK)
        return rc;
    ev->offset = c->base + (uint64_t)(start - c->buf);
    ev->size = (size_t)(*pp - start);
    ev->phase = ev->ph.len == 1 ? ev->ph.ptr[0] : 0;
    return P_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Top-level metadata (object form)                                                           */

struct meta_parse {
    tl_trace_meta *m;
    int ndev; /* devices seen so far in this attempt; committed to m->device_count on success */
    tl_trace_device *dev;
};

static void copy_text(char *dst, size_t cap, tl_view t)
{
    size_t n = t.ptr ? t.len : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, t.ptr, n);
    dst[n] = '\0';
}

static int on_dist_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct meta_parse *mp = obj;
    struct jval v;
    int rc;

    if ((rc = read_value(c, pp, depth, &v)) != P_OK)
        return rc;
    if (tl_view_eq(key, "rank"))
        mp->m->has_rank = tl_view_to_int64(text_field(&v), &mp->m->rank) == 0;
    else if (tl_view_eq(key, "world_size"))
        mp->m->has_world_size = tl_view_to_int64(text_field(&v), &mp->m->world_size) == 0;
    else if (tl_view_eq(key, "backend"))
        copy_text(mp->m->backend, sizeof mp->m->backend, text_field(&v));
    return P_OK;
}

static int on_device_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    tl_trace_device *d = obj;
    struct jval v;
    int rc;

    if ((rc = read_value(c, pp, depth, &v)) != P_OK)
        return rc;
    if (tl_view_eq(key, "id"))
        tl_view_to_int64(text_field(&v), &d->id);
    else if (tl_view_eq(key, "name"))
        copy_text(d->name, sizeof d->name, text_field(&v));
    else if (tl_view_eq(key, "totalGlobalMem"))
        tl_view_to_int64(text_field(&v), &d->total_global_mem);
    else if (tl_view_eq(key, "computeMajor"))
        tl_view_to_int64(text_field(&v), &d->compute_major);
    else if (tl_view_eq(key, "computeMinor"))
        tl_view_to_int64(text_field(&v), &d->compute_minor);
    else if (tl_view_eq(key, "numSms"))
        tl_view_to_int64(text_field(&v), &d->num_sms);
    return P_OK;
}

static int on_device(struct pctx *c, void *obj, const char **pp, int depth)
{
    struct meta_parse *mp = obj;
    struct jval v;

    if (**pp == '{' && mp->ndev < TL_TRACE_MAX_DEVICES) {
        tl_trace_device *d = &mp->m->devices[mp->ndev++];
        memset(d, 0, sizeof *d);
        return parse_object(c, pp, depth, on_device_member, d);
    }
    if (**pp == '{')
        mp->ndev++;
    return read_value(c, pp, depth, &v);
}

static char *dup_text(tl_view t)
{
    char *p = malloc(t.len + 1);
    if (p) {
        memcpy(p, t.ptr, t.len);
        p[t.len] = '\0';
    }
    return p;
}

/* Parse the value at *pp of the top-level key `key` into `m`. */
static int parse_meta_value(struct pctx *c, const char **pp, int key, tl_trace_meta *m)
{
    struct meta_parse mp = { m, 0, NULL };
    struct jval v;
    int rc;

    if (key == TOP_DISTRIBUTED_INFO && **pp == '{')
        return parse_object(c, pp, 1, on_dist_member, &mp);
    if (key == TOP_DEVICE_PROPERTIES && **pp == '[') {
        if ((rc = parse_array(c, pp, 1, on_device, &mp)) == P_OK)
            m->device_count = mp.ndev;
        return rc;
    }
    if ((rc = read_value(c, pp, 1, &v)) != P_OK)
        return rc;
    switch (key) {
    case TOP_BASE_TIME:
        m->has_base_time = tl_view_to_int64(text_field(&v), &m->base_time_ns) == 0;
        break;
    case TOP_SCHEMA_VERSION:
        m->has_schema_version = tl_view_to_int64(text_field(&v), &m->schema_version) == 0;
        break;
    case TOP_DISPLAY_TIME_UNIT:
        copy_text(m->display_time_unit, sizeof m->display_time_unit, text_field(&v));
        break;
    case TOP_TRACE_NAME:
        copy_text(m->trace_name, sizeof m->trace_name, text_field(&v));
        break;
    case TOP_OTHER_DATA:
    case TOP_METADATA: {
        char **dst = key == TOP_OTHER_DATA ? &m->other_data : &m->metadata;
        size_t *len = key == TOP_OTHER_DATA ? &m->other_data_len : &m->metadata_len;
        free(*dst);
        *dst = NULL;
        *len = 0;
        if (v.text.len <= META_COPY_MAX && (*dst = dup_text(v.text)) != NULL)
            *len = v.text.len;
        break;
    }
    }
    return P_OK;
}

static int top_key(tl_view k)
{
    static const struct {
        const char *name;
        int key;
    } keys[] = {
        { "traceEvents", TOP_TRACE_EVENTS },
        { "distributedInfo", TOP_DISTRIBUTED_INFO },
        { "deviceProperties", TOP_DEVICE_PROPERTIES },
        { "baseTimeNanoseconds", TOP_BASE_TIME },
        { "schemaVersion", TOP_SCHEMA_VERSION },
        { "displayTimeUnit", TOP_DISPLAY_TIME_UNIT },
        { "traceName", TOP_TRACE_NAME },
        { "otherData", TOP_OTHER_DATA },
        { "metadata", TOP_METADATA },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tl_view_eq(k, keys[i].name))
            return keys[i].key;
    return TOP_OTHER;
}

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

/* pctx_init() for the fast path, which only asks whether anything warned: the counters are
 * zeroed, not the rest (the `first` pointers are written with the first count). */
static inline void pctx_init_fast(struct pctx *c, const tl_trace_stream *s)
{
    memset(&c->w, 0, offsetof(struct pending, first));
    c->buf = s->buf;
    c->base = s->base;
    c->end = s->buf + s->len;
    c->max_depth = s->opt.max_depth;
}

/* memset(ev, 0, ...) in 16-byte stores (the compiler's rep stos costs more on a struct this
 * small, and callgrind counts it per word). */
static inline void zero_event(tl_trace_event *ev)
{
#if defined(SCAN_SSE2)
    /* Written out: as a loop, the compiler would turn it back into memset. */
    char *p = (char *)ev;
    const __m128i z = _mm_setzero_si128();
    _Static_assert(sizeof *ev >= 16 * 16 && sizeof *ev <= 16 * 20, "zero_event: adjust the stores");
#define Z(i) _mm_storeu_si128((__m128i *)(void *)(p + 16 * (i)), z)
    Z(0), Z(1), Z(2), Z(3), Z(4), Z(5), Z(6), Z(7), Z(8), Z(9), Z(10), Z(11), Z(12), Z(13), Z(14), Z(15);
    if (sizeof *ev > 16 * 16)
        Z(16);
    if (sizeof *ev > 16 * 17)
        Z(17);
    if (sizeof *ev > 16 * 18)
        Z(18);
    if (sizeof *ev % 16)
        _mm_storeu_si128((__m128i *)(void *)(p + sizeof *ev - 16), z);
#undef Z
#else
    memset(ev, 0, sizeof *ev);
#endif
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
            while (p < end && tok_char[(unsigned char)*p])
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
    return ch == '"' || ch == '{' || ch == '[' || tok_char[ch];
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
        r = scan_string(&c, &q);
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
    s->key = top_key(key);
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
        r = parse_meta_value(&c, &p, s->key, &s->meta);
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

/* ---------------------------------------------------------------------------------------- */
/* The fast path: events walked from the structural index                                     */

/*
 * An event is first walked from the structural index (json_scan.h): entry after entry, with
 * the grammar checked at each one, string contents and whitespace never read, skipped values
 * passed over by their entries alone. The walk accepts only what the byte parser would accept
 * without a single warning; at anything else (an odd byte, a comma the grammar does not want,
 * a bad number, a duplicate key, the nesting limit, the end of the buffer) it gives up and the
 * byte parser reads the event from its start, so warnings, errors and their offsets are the
 * byte parser's alone.
 *
 * What the index gives makes most values one entry: a string is its opening quote (its end is
 * the last quote before the next entry, with only whitespace between); a token whose first byte
 * is a digit (or '-' and a digit) and that is followed by an entry for ',', '}' or ']' is all
 * digits, a number the byte parser accepts without a look (any other byte after a digit would
 * have its own entry). Other tokens (fractions, exponents, literals, junk) are checked byte by
 * byte by fast_token(), and the values the analysis decodes (ts, dur, pid, tid, four args) are
 * decoded from their bytes.
 */
enum { FW_OK, FW_FALLBACK };

/* Entries after the last one, each pointing at the sentinel byte after the data: the walker
 * looks at the byte of every entry it takes before it takes another, and no grammar accepts
 * that byte, so it needs no bounds check per entry. */
#define INDEX_SENTINELS 4

/* Every FAST_WINDOW events read with the index, if more than half fell back to the byte
 * parser, the next FAST_PAUSE events skip the index. */
#define FAST_WINDOW 64
#define FAST_PAUSE 4096

/* Containers nested deeper than this inside a skipped value are left to the byte parser (one
 * bit per level says object or array). */
#define FAST_MAX_NEST 64

/* Bytes that may follow a token in the fast path: whitespace and the structural characters. A
 * token glued to anything else (junk, the sentinel at the end of the data) is left to the byte
 * parser. */
static const unsigned char ends_token[256] = {
    [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1, [','] = 1, ['}'] = 1,
    [']'] = 1, [':'] = 1,  ['"'] = 1,  ['{'] = 1,  ['['] = 1,
};

/* Leading decimal digits of the 8 bytes at p (little-endian SWAR: a byte is a digit when
 * it is >= '0' and <= '9'; the first byte that is not ends the run). */
static inline unsigned digits8(const char *p)
{
    uint64_t w, nd;

    memcpy(&w, p, 8);
    nd = ((w - 0x3030303030303030ull) | (w + 0x4646464646464646ull)) & 0x8080808080808080ull;
    return nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
}

/* The digits at p: the zero bytes after the data (READ_SLACK) end every run, so the 8-byte
 * loads stay in the allocation. */
static inline unsigned digit_run(const char *p)
{
    unsigned n = 0, k;

    while ((k = digits8(p + n)) == 8)
        n += 8;
    return n + k;
}

/* The value of the n <= 8 decimal digits at p (8 bytes readable): the bytes after them are
 * shifted out (a borrow from a byte below '0' only goes up, into them), then pairs, quads and
 * the two halves are combined by multiplication (the usual SWAR conversion). */
static inline uint64_t digits_value(const char *p, unsigned n)
{
    uint64_t w;

    if (n == 0)
        return 0;
    memcpy(&w, p, 8);
    w = (w - 0x3030303030303030ull) << (8 * (8 - n));
    w = w * 10 + (w >> 8);
    w = (((w & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((w >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
        32;
    return w;
}

/* The value of the digit run [p, p + n), n <= 19 (it fits: below 10^19). */
static inline uint64_t run_value(const char *p, unsigned n)
{
    uint64_t v = 0;

    while (n > 8) {
        v = v * 100000000u + digits_value(p, 8);
        p += 8;
        n -= 8;
    }
    return v * pow10_u64[n] + digits_value(p, n);
}

/* µs written as digits[.digits] (19 digits at most, no sign) to ns, exactly as
 * tl_trace_us_to_ns() would; returns the end of the number, or NULL for anything else
 * (including a result it would reject), which the careful path then judges. */
static inline const char *fast_us_to_ns(const char *q, int64_t *out)
{
    unsigned ni = digit_run(q), nf = 0;
    const char *p = q + ni;
    uint64_t m;

    if (ni == 0)
        return NULL;
    if (*p == '.') {
        nf = digit_run(p + 1);
        if (nf == 0 || ni + nf > 19)
            return NULL;
        m = run_value(q, ni) * pow10_u64[nf] + run_value(p + 1, nf);
        p += 1 + nf;
    } else {
        if (ni > 19)
            return NULL;
        m = run_value(q, ni);
    }
    if (nf <= 3) {
        uint64_t f = pow10_u64[3 - nf];
        if (m > (uint64_t)INT64_MAX / f)
            return NULL;
        *out = (int64_t)(m * f);
    } else { /* below a ns: round half away from zero (m < 10^19, so the result fits) */
        uint64_t d = pow10_u64[nf - 3], r = m % d;
        *out = (int64_t)(m / d + (r >= d - r));
    }
    return p;
}

/* A whole number token [q, e) as tl_view_to_int64() reads it. */
static inline int fast_int(const char *q, const char *e, int64_t *out)
{
    size_t n = (size_t)(e - q);

    if (n <= 18 && *q != '-') {
        *out = (int64_t)run_value(q, (unsigned)n);
        return 0;
    }
    return tl_view_to_int64((tl_view){ q, n }, out);
}

/* "digits.digits" µs whose '.' is at `dot` (the digits before it known to be digits when
 * dot[-1] is one: no entry came between), as fast_us_to_ns() reads it; returns the end. Up to
 * 16 digits before the '.' and 7 after it; no division unless the fraction is below a ns. */
static inline const char *fast_us_frac(const char *q, const char *dot, int64_t *out)
{
    unsigned ni = (unsigned)(dot - q), nf = digits8(dot + 1);
    const char *e = dot + 1 + nf;
    uint64_t m;

    if (!is_digit(dot[-1]) || nf - 1 > 6 || ni > 16 || ni + nf > 19 || !ends_token[(unsigned char)*e])
        return NULL;
    m = ni > 8 ? digits_value(q, ni - 8) * 100000000u + digits_value(q + ni - 8, 8) : digits_value(q, ni);
    m = m * pow10_u64[nf] + digits_value(dot + 1, nf);
    if (nf <= 3) {
        if (__builtin_mul_overflow(m, pow10_u64[3 - nf], &m) || m > (uint64_t)INT64_MAX)
            return NULL;
    } else { /* below a ns: round half away from zero (m < 10^19, so the result fits) */
        uint64_t d = pow10_u64[nf - 3], r = m % d;
        m = m / d + (r >= d - r);
    }
    *out = (int64_t)m;
    return e;
}

/* pid and tid repeat from event to event: the 8 bytes at a value that was all digits and
 * shorter than 8 (so its end is among them) give the same value again. */
static inline void fast_pid(struct fast_ints *ints, int which, const char *q, tl_view *str, int64_t *val,
                            unsigned char *is_int)
{
    uint64_t w;
    unsigned n;

    memcpy(&w, q, 8);
    if (ints->n[which] && w == ints->w[which]) {
        *str = (tl_view){ q, ints->n[which] };
        *val = ints->v[which];
        *is_int = 1;
        return;
    }
    n = digit_run(q);
    *str = (tl_view){ q, n };
    *is_int = fast_int(q, q + n, val) == 0;
    if (!*is_int)
        *val = 0;
    ints->n[which] = *is_int && n < 8 ? n : 0;
    ints->w[which] = w;
    ints->v[which] = *val;
}

/* The bare token at `q`; returns its end, or NULL when the byte parser must judge it. Plain
 * numbers (-?digits(.digits)?, no leading zero) are checked here, the rest by scan_token().
 * The sentinel after the data stops the digit loops. */
static const char *fast_token(struct pctx *c, const char *q, enum tl_json_kind *kind)
{
    const char *p = q + (*q == '-'), *d = p;

    p += digit_run(p);
    if (p > d && *p == '.') {
        const char *frac = ++p;
        p += digit_run(p);
        if (p == frac)
            p = d; /* "1." */
    }
    if (p > d && ends_token[(unsigned char)*p] && !(*d == '0' && p - d > 1 && d[1] != '.')) {
        *kind = TL_JSON_NUMBER;
        return p;
    }
    p = q;
    if (scan_token(c, &p, kind) != P_OK || *kind == TL_JSON_NONFINITE || !ends_token[(unsigned char)*p])
        return NULL;
    return p;
}

/* A string whose opening quote is `open`, the next entry being `next` (a structural byte
 * outside strings): its content ends at the last quote before `next`. */
static inline tl_view string_at(const char *open, const char *next)
{
    const char *e = next - 1;

    while (*e != '"')
        e--;
    return (tl_view){ open + 1, (size_t)(e - open) - 1 };
}

/* The length of the key whose opening quote is `kq`, the ':' after it at `colon`. */
static inline size_t key_len(const char *kq, const char *colon)
{
    const char *e = colon - 1;

    while (*e != '"')
        e--;
    return (size_t)(e - kq) - 1;
}

/* Up to 4 bytes as a little-endian number, for comparing short keys in one go. */
#define KW(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

/* An event key (a K_* bit, 0 for keys not decoded), the key's quote at text[ko] and the ':'
 * after it at text[co]. When the closing quote is right before the ':' (always, in practice),
 * the 4 bytes after the opening quote and the distance to the ':' (the length + 2) decide it:
 * for keys of 2 to 4 bytes those 4 bytes are the key, its quote and ':'; for "s" the fourth is
 * masked off, for "scope" the fifth is checked. They are looked up in a perfect hash of 16
 * slots (the multiplier was searched for these 13 keys). */
static inline int fast_event_key(const char *text, uint32_t ko, uint32_t co)
{
    static const struct {
        uint64_t x;
        int k;
    } slots[16] = {
        [0] = { 0x673677261ull, K_ARGS },   /* "args" */
        [1] = { 0x6656d616eull, K_NAME },   /* "name" */
        [3] = { 0x522727564ull, K_DUR },    /* "dur" */
        [6] = { 0x522646974ull, K_TID },    /* "tid" */
        [7] = { 0x43a226870ull, K_PH },     /* "ph" */
        [8] = { 0x43a227062ull, K_BP },     /* "bp" */
        [9] = { 0x522326469ull, K_ID2 },    /* "id2" */
        [10] = { 0x3003a2273ull, K_S },     /* "s" */
        [11] = { 0x43a226469ull, K_ID },    /* "id" */
        [12] = { 0x7706f6373ull, K_SCOPE }, /* "scope" */
        [13] = { 0x43a227374ull, K_TS },    /* "ts" */
        [14] = { 0x522746163ull, K_CAT },   /* "cat" */
        [15] = { 0x522646970ull, K_PID },   /* "pid" */
    };
    uint32_t d = co - ko, w;
    uint64_t x;
    unsigned h;

    if (text[co - 1] != '"') { /* whitespace before the ':' */
        tl_view k = { text + ko + 1, key_len(text + ko, text + co) };
        return event_key(k);
    }
    memcpy(&w, text + ko + 1, 4); /* within the key, its quote, the ':' and the value */
    x = (w & (0xffffffffu >> (d == 3 ? 8 : 0))) | (uint64_t)d << 32;
    h = (unsigned)((x * 0x1eb8143249799085ull) >> 60);
    if (slots[h].x != x)
        return 0;
    return slots[h].k != K_SCOPE || text[ko + 5] == 'e' ? slots[h].k : 0;
}

/* The Kineto arg of the key at `kq` (its ':' at `colon`): where its value goes, or NULL. */
static inline int64_t *fast_arg_key(tl_trace_event *ev, const char *kq, const char *colon, unsigned char **has)
{
    size_t len = key_len(kq, colon);

    if (len == 6) {
        if (!memcmp(kq + 1, "stream", 6)) {
            *has = &ev->has_stream;
            return &ev->stream;
        }
        if (!memcmp(kq + 1, "device", 6)) {
            *has = &ev->has_device;
            return &ev->device;
        }
    } else if (len == 11) {
        if (!memcmp(kq + 1, "correlation", 11)) {
            *has = &ev->has_correlation;
            return &ev->correlation;
        }
        if (!memcmp(kq + 1, "External id", 11)) {
            *has = &ev->has_external_id;
            return &ev->external_id;
        }
    }
    return NULL;
}

/* The walker's cursor: `o` is the offset of the entry just taken (in `text`), `ch` its byte. */
#define NEXT() (o = *cur++, ch = (unsigned char)text[o])
#define NOT_FOUND UINT32_MAX

/*
 * Pass over the container whose opening bracket is the entry just taken (at text[o]), checking
 * its grammar entry by entry; `depth` is its nesting level (the event is 1). Returns the offset
 * of its closing bracket (the cursor after it), or NOT_FOUND at anything the byte parser must
 * judge. The states are labels, one set for arrays and one for objects, so the common steps
 * (a string or a number, then ',') are two compares and two entries; one bit per level says
 * what to return to.
 */
static uint32_t skip_fast(const char *text, const uint32_t **curp, struct pctx *c, uint32_t o, int depth)
{
    const uint32_t *cur = *curp;
    const char *e;
    uint64_t obj = 0; /* bit i: the container i levels in is an object */
    uint32_t tok;
    int top = 0, room = c->max_depth - depth; /* levels that may still open */
    unsigned ch = (unsigned char)text[o];
    enum tl_json_kind kind;

open: /* ch is '{' or '[' */
    if (top == FAST_MAX_NEST || top > room)
        return NOT_FOUND;
    if (ch == '{') {
        obj |= 1ull << top++;
        NEXT();
        if (ch == '}')
            goto close;
        goto obj_key;
    }
    obj &= ~(1ull << top++);
    NEXT();
    if (ch == ']')
        goto close;
arr_value: /* an element of an array */
    if (ch == '"') {
        NEXT();
        goto arr_after;
    }
    if (is_digit((char)ch)) {
        tok = o;
        NEXT();
        if (ch == ',')
            goto arr_next;
        if (ch == ']')
            goto close;
        goto arr_token;
    }
    if (ch == '[') {
        if (text[*cur] == ']' && top <= room) { /* [] */
            cur++;
            NEXT();
            goto arr_after;
        }
        goto open;
    }
    if (ch == '{')
        goto open;
    tok = o;
    NEXT();
arr_token: /* the token at `tok`, byte by byte (a sign, fractions, literals, junk) */
    if (!(e = fast_token(c, text + tok, &kind)))
        return NOT_FOUND;
    while (text + o < e)
        NEXT();
arr_after:
    if (ch == ',') {
    arr_next:
        NEXT();
        goto arr_value;
    }
    if (ch != ']')
        return NOT_FOUND;
    goto close;

obj_next:
    NEXT();
obj_key: /* a member of an object */
    if (ch != '"')
        return NOT_FOUND;
    NEXT();
    if (ch != ':')
        return NOT_FOUND;
    NEXT();
    if (ch == '"') {
        NEXT();
        goto obj_after;
    }
    if (is_digit((char)ch)) {
        tok = o;
        NEXT();
        if (ch == ',')
            goto obj_next;
        if (ch == '}')
            goto close;
        goto obj_token;
    }
    if (ch == '[' || ch == '{')
        goto open;
    tok = o;
    NEXT();
obj_token:
    if (!(e = fast_token(c, text + tok, &kind)))
        return NOT_FOUND;
    while (text + o < e)
        NEXT();
obj_after:
    if (ch == ',')
        goto obj_next;
    if (ch != '}')
        return NOT_FOUND;
close: /* ch closes the innermost open container, of the right kind */
    if (--top == 0) {
        *curp = cur;
        return o;
    }
    NEXT();
    if ((obj >> (top - 1)) & 1)
        goto obj_after;
    goto arr_after;
}

/* Read the value whose first entry was just taken (at text[o]) into `v`, any kind, of nesting
 * level `depth` if a container. Takes the entry after it: returns its offset, or NOT_FOUND. */
static uint32_t read_value_fast(const char *text, const uint32_t **curp, struct pctx *c, uint32_t o, int depth,
                                struct jval *v)
{
    const uint32_t *cur = *curp;
    const char *vq = text + o, *e;
    uint32_t close;
    unsigned ch = (unsigned char)*vq;

    if (ch == '"') {
        NEXT();
        if (ch != ',' && ch != '}')
            return NOT_FOUND;
        v->kind = TL_JSON_STRING;
        v->text = string_at(vq, text + o);
    } else if (ch == '{' || ch == '[') {
        if ((close = skip_fast(text, &cur, c, o, depth)) == NOT_FOUND)
            return NOT_FOUND;
        v->kind = ch == '{' ? TL_JSON_OBJECT : TL_JSON_ARRAY;
        v->text = (tl_view){ vq, (size_t)(text + close + 1 - vq) };
        NEXT();
    } else {
        if (!(e = fast_token(c, vq, &v->kind)))
            return NOT_FOUND;
        v->text = (tl_view){ vq, (size_t)(e - vq) };
        do
            NEXT();
        while (text + o < e);
    }
    *curp = cur;
    return o;
}

/*
 * Walk the event whose '{' was the last entry taken. One function with the cursor in a
 * register: the event's members and its "args" members (one level); other values are passed
 * over entry by entry (containers by skip_fast()). Returns FW_OK with `ev` filled and *endp
 * after the '}', or FW_FALLBACK at the first thing the byte parser has to judge. Depths are
 * those of parse_object()/skip_container(): the event is 1, "args" 2, what is in args 3.
 */
/* The event's member of each string key the walker decodes (by key: no branch). */
static const size_t string_member[K_PH + 1] = {
    [K_NAME] = offsetof(tl_trace_event, name),
    [K_CAT] = offsetof(tl_trace_event, cat),
    [K_PH] = offsetof(tl_trace_event, ph),
};

/* Phases whose args read_trace.c iterates: their members are kept (tl_args_index). X: a
 * kernel's grid and block, an operator's shapes, a collective's sizes. */
static const unsigned char keep_args[256] = { ['i'] = 1, ['I'] = 1, ['C'] = 1, ['M'] = 1, ['X'] = 1 };

static int fast_walk(const char *text, const uint32_t **curp, struct pctx *c, tl_trace_event *ev,
                     struct fast_ints *ints, tl_args_index *argsix, const char **endp)
{
    const uint32_t *cur = *curp;
    const char *e;
    tl_args_index *ix = NULL;
    uint32_t o, ko, vo, tok, ao, na = 0;
    unsigned ch, seen = 0;
    int rc = FW_FALLBACK, k;
    enum tl_json_kind kind;
    struct jval v;

    NEXT();
    if (ch == '}')
        goto done;
member:
    if (ch != '"')
        goto out;
    ko = o;
    NEXT();
    if (ch != ':')
        goto out;
    k = fast_event_key(text, ko, o);
    if (k & seen)
        goto out; /* a duplicate key: the byte parser warns */
    seen |= (unsigned)k;
    NEXT();
    vo = o;
    switch (k) {
    case 0:
        goto skip;
    case K_NAME:
    case K_CAT:
    case K_PH:
        if (ch != '"')
            goto other;
        NEXT();
        if (ch != ',' && ch != '}')
            goto out;
        *(tl_view *)((char *)ev + string_member[k]) = string_at(text + vo, text + o);
        goto after;
    case K_TS:
    case K_DUR:
        if (!is_digit((char)ch))
            goto other;
        if (text[*cur] == '.') {
            /* "1694128202548380.777": the '.' is an entry (the first byte after the
			 * digits), so the digits before it need no scan */
            if (!fast_us_frac(text + vo, text + *cur, k == K_TS ? &ev->ts_ns : &ev->dur_ns))
                goto other;
            cur++;
        } else if (text[*cur] == ',' || text[*cur] == '}') { /* all digits */
            if (!fast_us_to_ns(text + vo, k == K_TS ? &ev->ts_ns : &ev->dur_ns))
                goto other;
        } else {
            goto other;
        }
        *(k == K_TS ? &ev->has_ts : &ev->has_dur) = 1;
        NEXT(); /* after the number: no entry inside it is left */
        goto after;
    case K_PID:
    case K_TID:
        if (!is_digit((char)ch) || (text[*cur] != ',' && text[*cur] != '}'))
            goto other;
        fast_pid(ints, k == K_TID, text + vo, k == K_PID ? &ev->pid_str : &ev->tid_str,
                 k == K_PID ? &ev->pid : &ev->tid, k == K_PID ? &ev->pid_int : &ev->tid_int);
        NEXT();
        goto after;
    case K_ARGS:
        if (ch != '{')
            goto other;
        if (2 > c->max_depth)
            goto out;
        ao = o;
        /* the members of the args tally reads (memory instants, counters, thread names) */
        ix = ev->ph.len == 1 && keep_args[(unsigned char)ev->ph.ptr[0]] ? argsix : NULL;
        na = 0;
        NEXT();
        if (ch == '}')
            goto args_end;
        goto arg_member;
    default:
        goto other;
    }

arg_next:
    NEXT();
arg_member: /* a member of "args": one of the four decoded, or passed over like any value */
    if (ch != '"')
        goto out;
    ko = o;
    NEXT();
    if (ch != ':')
        goto out;
    if (ix) {
        if (na == TL_ARGS_INDEX_MAX) {
            ix = NULL; /* too many: tl_args_next() parses them */
        } else {
            ix->key[na] = ko;
            ix->colon[na] = o;
            ix->value[na] = *cur;
            na++;
        }
    }
    if (o - ko == 8 || o - ko == 13 || text[o - 1] != '"') { /* a key of 6 or 11 bytes */
        unsigned char *has;
        int64_t *dst = fast_arg_key(ev, text + ko, text + o, &has);
        if (dst) {
            NEXT();
            if (is_digit((char)ch) && (text[*cur] == ',' || text[*cur] == '}')) {
                *has = fast_int(text + o, text + o + digit_run(text + o), dst) == 0;
                NEXT();
            } else {
                if ((o = read_value_fast(text, &cur, c, o, 3, &v)) == NOT_FOUND)
                    goto out;
                ch = (unsigned char)text[o];
                *has = tl_view_to_int64(text_field(&v), dst) == 0;
            }
            goto arg_after;
        }
    }
    NEXT();
    if (ch == '"') {
        NEXT();
        goto arg_after;
    }
    if (is_digit((char)ch)) {
        tok = o;
        NEXT();
        if (ch == ',')
            goto arg_next;
        if (ch == '}')
            goto args_end;
        goto arg_token;
    }
    if (ch == '[' || ch == '{') {
        if (skip_fast(text, &cur, c, o, 3) == NOT_FOUND)
            goto out;
        NEXT();
        goto arg_after;
    }
    tok = o;
    NEXT();
arg_token:
    if (!(e = fast_token(c, text + tok, &kind)))
        goto out;
    while (text + o < e)
        NEXT();
arg_after:
    if (ch == ',')
        goto arg_next;
    if (ch != '}')
        goto out;
args_end:
    ev->args = (tl_view){ text + ao, o + 1 - ao };
    if (ix) {
        ix->text = text;
        ix->n = na;
        ix->close = o;
        ev->args_index = ix;
    }
    NEXT();
    goto after;

skip: /* a value nobody reads */
    if (ch == '"') {
        NEXT();
        goto after;
    }
    if (is_digit((char)ch)) {
        tok = o;
        NEXT();
        if (ch == ',' || ch == '}')
            goto after;
        goto token;
    }
    if (ch == '[' || ch == '{') {
        if (skip_fast(text, &cur, c, o, 2) == NOT_FOUND)
            goto out;
        NEXT();
        goto after;
    }
    tok = o;
    NEXT();
token:
    if (!(e = fast_token(c, text + tok, &kind)))
        goto out;
    while (text + o < e)
        NEXT();
    goto after;

other: /* a rarer key or kind: through the byte parser's field decoding */
    if ((o = read_value_fast(text, &cur, c, vo, 2, &v)) == NOT_FOUND)
        goto out;
    ch = (unsigned char)text[o];
    event_field(c, ev, k, &v);
after:
    if (ch == ',') {
        NEXT();
        goto member;
    }
    if (ch != '}')
        goto out;
done:
    *endp = text + o + 1;
    rc = FW_OK;
out:
    *curp = cur;
    return rc;
}
#undef NEXT
#undef NOT_FOUND

/* Index the buffer from `from` (a position outside any string) on. */
static int index_from(tl_trace_stream *s, size_t from)
{
    size_t scanned;

    if (!s->idx && !(s->idx = malloc((TL_TRACE_INDEX_ENTRIES + INDEX_SENTINELS) * sizeof *s->idx)))
        return -1;
    s->idx_n = tl_json_scan_index(s->buf + from, s->len - from, s->idx, TL_TRACE_INDEX_ENTRIES, &scanned);
    for (int i = 0; i < INDEX_SENTINELS; i++)
        s->idx[s->idx_n + (size_t)i] = (uint32_t)(s->len - from); /* buf[len] is '\0' */
    s->idx_from = from;
    s->idx_to = from + scanned;
    s->idx_k = 0;
    s->idx_valid = 1;
    return 0;
}

/*
 * Walk the event whose '{' is at s->pos from the index. Returns 1 with `ev` filled and *endp
 * after the event, or 0 when the byte parser must read it. The index is reused from event to
 * event and rebuilt when the buffer moved, when the event lies beyond it, or when the event's
 * '{' is not an entry (after junk the byte parser skipped, the index may see strings where the
 * byte parser does not: indexing again from a position both agree on makes them agree).
 */
static int fast_event(tl_trace_stream *s, tl_trace_event *ev, const char **endp)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        struct pctx c;
        const uint32_t *cur;
        const char *text;
        int r;

        if (!s->idx_valid || s->pos < s->idx_from || s->pos >= s->idx_to) {
            if (index_from(s, s->pos) < 0)
                return 0;
        } else {
            size_t rel = s->pos - s->idx_from;
            while (s->idx_k < s->idx_n && s->idx[s->idx_k] < rel)
                s->idx_k++;
            if ((s->idx_k == s->idx_n || s->idx[s->idx_k] != rel) && index_from(s, s->pos) < 0)
                return 0;
        }
        pctx_init_fast(&c, s);
        text = s->buf + s->idx_from;
        cur = s->idx + s->idx_k;
        if (text[*cur++] != '{')
            return 0;
        zero_event(ev);
        r = fast_walk(text, &cur, &c, ev, &s->fast_ints, &s->args_ix, endp);
        if (r == FW_OK && cur <= s->idx + s->idx_n) {
            if (c.w.any)
                return 0; /* a field decoder warned (a bad "ts"): the byte parser says so */
            s->idx_k = (size_t)(cur - s->idx);
            ev->plain = 1; /* a backslash is an odd entry: the walk would have given up */
            ev->offset = s->base + s->pos;
            ev->size = (size_t)(*endp - (s->buf + s->pos));
            ev->phase = ev->ph.len == 1 ? ev->ph.ptr[0] : 0;
            s->fast_events++;
            return 1;
        }
        /* The index ended inside the event but the buffer goes on: index again from the
		 * event's start, once. */
        if (cur <= s->idx + s->idx_n || s->idx_to >= s->len || s->idx_from == s->pos)
            return 0;
        s->idx_valid = 0;
    }
    return 0;
}

static void oversized(tl_trace_stream *s, uint64_t offset)
{
    s->stats.oversized++;
    s->stats.warnings++;
    problem(s, offset, "event larger than %zu bytes (skipped)", s->opt.max_event_size);
}

/* The event at pos: 1 when `ev` holds it, 0 when it was skipped or the input ended. */
static int read_event(tl_trace_stream *s, tl_trace_event *ev)
{
    const char *end;
    int fast = !s->opt.no_index && s->fast_pause == 0;

    /* Where most events need the byte parser anyway (names with escapes or non-ASCII bytes in
	 * every event), indexing first only adds work: after a window of mostly fallbacks the index
	 * rests for a while. Either way the results are the same. */
    if (s->fast_pause > 0)
        s->fast_pause--;
    if (fast && ++s->fast_tries == FAST_WINDOW) {
        if (s->fast_fallbacks * 2 > FAST_WINDOW)
            s->fast_pause = FAST_PAUSE;
        s->fast_tries = s->fast_fallbacks = 0;
    }
    if (fast && !fast_event(s, ev, &end))
        s->fast_fallbacks++;
    else if (fast) {
        s->pos = (size_t)(end - s->buf);
        s->after_value = 1;
        s->after_comma = 0;
        if (ev->size > s->opt.max_event_size) {
            oversized(s, ev->offset);
            return 0;
        }
        count_event(s, ev);
        /* The separator and the next event's '{', from the index: what step_events() finds
		 * after skipping whitespace (between entries there is only whitespace), taken here
		 * so that the next call starts at the '{' (fast_next: straight to read_event()). */
        {
            const char *text = s->buf + s->idx_from;
            const uint32_t *cur = s->idx + s->idx_k; /* at most the first sentinel */
            if (text[cur[0]] == ',' && text[cur[1]] == '{') {
                s->pos = s->idx_from + cur[1];
                s->idx_k++;
                s->after_value = 0;
                s->after_comma = 1;
                s->fast_next = 1;
            }
        }
        return 1;
    }
    for (;;) {
        struct pctx c;
        const char *p = s->buf + s->pos;
        int r;

        pctx_init(&c, s);
        r = parse_event(&c, &p, ev);
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

static size_t put_utf8(char *buf, size_t cap, size_t at, uint32_t cp)
{
    unsigned char u[4];
    size_t n;

    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6);
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12);
        u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | cp >> 18);
        u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    for (size_t i = 0; i < n; i++)
        if (at + i + 1 < cap)
            buf[at + i] = (char)u[i];
    return n;
}

static int read_hex4(const char *p, const char *end, uint32_t *out)
{
    uint32_t v = 0;

    if (end - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)p[i]);
        if (h < 0)
            return -1;
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return 0;
}

size_t tl_view_unescape(tl_view v, char *buf, size_t cap)
{
    const char *p = v.ptr ? v.ptr : "", *end = p + (v.ptr ? v.len : 0);
    size_t n = 0;

    while (p < end) {
        uint32_t cp, lo;
        char ch = *p;

        if (ch != '\\' || end - p < 2) {
            if (n + 1 < cap)
                buf[n] = ch;
            n++;
            p++;
            continue;
        }
        switch (p[1]) {
        case '"':
        case '\\':
        case '/':
            ch = p[1];
            break;
        case 'b':
            ch = '\b';
            break;
        case 'f':
            ch = '\f';
            break;
        case 'n':
            ch = '\n';
            break;
        case 'r':
            ch = '\r';
            break;
        case 't':
            ch = '\t';
            break;
        case 'u':
            if (read_hex4(p + 2, end, &cp) < 0)
                goto verbatim;
            p += 6;
            if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                read_hex4(p + 2, end, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD; /* a lone surrogate has no UTF-8 form */
            }
            n += put_utf8(buf, cap, n, cp);
            continue;
        default:
            goto verbatim;
        }
        if (n + 1 < cap)
            buf[n] = ch;
        n++;
        p += 2;
        continue;
    verbatim: /* an escape JSON does not define: keep the backslash and go on after it */
        if (n + 1 < cap)
            buf[n] = '\\';
        n++;
        p++;
    }
    if (cap)
        buf[n < cap ? n : cap - 1] = '\0';
    return n;
}

void tl_args_iter_init_event(tl_args_iter *it, const tl_trace_event *ev)
{
    tl_args_iter_init(it, ev->args);
    if (ev->args_index && it->p) {
        it->ix = ev->args_index;
        it->i = 0;
    }
}

static int text_to_double(tl_view t, double *out);

static inline int is_ws(char ch)
{
    return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

/* tl_args_next() from the members the index walker kept: the object was checked whole, so
 * each value runs from its first byte to the last one before the ',' or '}' after it. */
tl_view tl_args_member_key(const tl_args_index *x, uint32_t i)
{
    const char *t = x->text, *k;

    for (k = t + x->colon[i] - 1; *k != '"'; k--)
        ;
    return (tl_view){ t + x->key[i] + 1, (size_t)(k - (t + x->key[i] + 1)) };
}

static int args_next_indexed(tl_args_iter *it, tl_view *key, tl_json_value *val)
{
    const tl_args_index *x = it->ix;
    uint32_t i = it->i;

    if (i >= x->n) {
        it->ix = NULL;
        it->p = it->end = NULL;
        return 0;
    }
    it->i = i + 1;
    tl_args_member(x, i, key, val);
    return 1;
}

void tl_args_member(const tl_args_index *x, uint32_t i, tl_view *key, tl_json_value *val)
{
    const char *t = x->text, *v, *e;

    *key = tl_args_member_key(x, i);
    if (i + 1 < x->n) { /* back from the next key over whitespace, ',' and whitespace */
        for (e = t + x->key[i + 1] - 1; is_ws(*e); e--)
            ;
        e--;
    } else {
        e = t + x->close - 1;
    }
    while (is_ws(*e))
        e--;
    e++;
    v = t + x->value[i];
    switch (*v) {
    case '"':
        val->kind = TL_JSON_STRING;
        val->text = (tl_view){ v + 1, (size_t)(e - v) - 2 };
        break;
    case '{':
        val->kind = TL_JSON_OBJECT;
        break;
    case '[':
        val->kind = TL_JSON_ARRAY;
        break;
    case 't':
        val->kind = TL_JSON_TRUE;
        break;
    case 'f':
        val->kind = TL_JSON_FALSE;
        break;
    case 'n':
        val->kind = TL_JSON_NULL;
        break;
    default:
        val->kind = TL_JSON_NUMBER;
        break; /* a number: nothing else passed the walk */
    }
    if (*v != '"')
        val->text = (tl_view){ v, (size_t)(e - v) };
    if (e - v <= 15 && is_digit(*v) && v + digit_run(v) == e) {
        /* a plain integer, as text_to_double() reads it (the buffer goes on past it) */
        val->number = (double)run_value(v, (unsigned)(e - v));
        val->is_number = 1;
        return;
    }
    val->number = 0;
    val->is_number =
        (val->kind == TL_JSON_NUMBER || val->kind == TL_JSON_STRING) && text_to_double(val->text, &val->number);
}

int tl_args_next_picked(tl_args_iter *it, int (*pick)(tl_view key), int *picked, tl_view *key, tl_json_value *val)
{
    if (it->ix) {
        const tl_args_index *x = it->ix;
        for (uint32_t i = it->i; i < x->n; i++) {
            int k = pick(tl_args_member_key(x, i));
            if (k != 0) {
                it->i = i + 1;
                tl_args_member(x, i, key, val);
                *picked = k;
                return 1;
            }
        }
        it->ix = NULL;
        it->p = it->end = NULL;
        return 0;
    }
    while (tl_args_next(it, key, val))
        if ((*picked = pick(*key)) != 0)
            return 1;
    return 0;
}

void tl_args_iter_init(tl_args_iter *it, tl_view args)
{
    it->ix = NULL;
    it->i = 0;
    it->p = it->end = NULL;
    if (args.ptr && args.len >= 2 && args.ptr[0] == '{') {
        it->p = args.ptr + 1;
        it->end = args.ptr + args.len;
    }
}

/* A whole-string number for counter values such as "1.5": digits, sign, '.', exponent only
 * (strtod alone would also take "inf", "nan" and hex). */
static int text_to_double(tl_view t, double *out)
{
    char tmp[64], *end;

    if (!t.ptr || t.len == 0 || t.len >= sizeof tmp)
        return 0;
    /* Most args are plain integers (sizes, addresses, ids): up to 15 digits a double holds
	 * them exactly, so they need no strtod. */
    {
        size_t i = t.ptr[0] == '-', n = 0;
        uint64_t v = 0;
        while (i < t.len && t.ptr[i] >= '0' && t.ptr[i] <= '9' && n < 16) {
            v = v * 10 + (uint64_t)(t.ptr[i] - '0');
            i++;
            n++;
        }
        if (i == t.len && n > 0 && n <= 15) {
            *out = t.ptr[0] == '-' ? -(double)v : (double)v;
            return 1;
        }
    }
    for (size_t i = 0; i < t.len; i++) {
        char ch = t.ptr[i];
        if (!(ch >= '0' && ch <= '9') && ch != '+' && ch != '-' && ch != '.' && ch != 'e' && ch != 'E')
            return 0;
    }
    memcpy(tmp, t.ptr, t.len);
    tmp[t.len] = '\0';
    *out = strtod(tmp, &end); /* tally never calls setlocale, so '.' is the decimal point */
    return end == tmp + t.len;
}

/* The end (after its ']') of the array at q when it is valid JSON made only of plain integers
 * (no fraction or exponent), strings without escapes and such arrays one level down; NULL for
 * anything else, which the byte parser then judges. For such an array read_value() takes the
 * same bytes. */
static const char *plain_array(const char *q, const char *end)
{
    const char *d = skip_ws(q + 1, end);
    int depth = 1;

    if (d < end && *d == ']')
        return d + 1;
    for (;;) { /* d: at an element */
        if (d >= end)
            return NULL;
        if (*d == '"') {
            const char *x = find_special(d + 1, end);
            if (x == end || *x != '"')
                return NULL;
            d = x + 1;
        } else if (*d == '[') {
            if (depth == 2)
                return NULL;
            depth = 2;
            d = skip_ws(d + 1, end);
            if (d < end && *d == ']') {
                d++;
                depth = 1;
            } else {
                continue;
            }
        } else {
            const char *s = d + (d < end && *d == '-'), *x = s;
            while (x < end && is_digit(*x))
                x++;
            if (x == s || (*s == '0' && x - s > 1))
                return NULL;
            d = x;
        }
        /* after an element: ',' and the next one, or the end of its array(s) */
        for (;;) {
            d = skip_ws(d, end);
            if (d >= end)
                return NULL;
            if (*d == ',') {
                d = skip_ws(d + 1, end);
                break;
            }
            if (*d != ']')
                return NULL;
            d++;
            if (--depth == 0)
                return d;
        }
    }
}

/* A member the fast path of tl_args_next() did not take (escapes, containers, exponents...),
 * from its key's quote at p, with the byte parser's scanners. */
static int args_next_slow(tl_args_iter *it, const char *p, tl_view *key, tl_json_value *val)
{
    struct pctx c;
    struct jval v;
    const char *q;

    memset(&c, 0, sizeof c);
    c.buf = p;
    c.end = it->end;
    c.max_depth = TL_TRACE_DEPTH_LIMIT;
    q = p;
    if (scan_string(&c, &q) != P_OK)
        goto stop;
    key->ptr = p + 1;
    key->len = (size_t)(q - p) - 2;
    q = skip_ws(q, c.end);
    if (q >= c.end || *q != ':')
        goto stop;
    q = skip_ws(q + 1, c.end);
    if (q >= c.end || read_value(&c, &q, 2, &v) != P_OK)
        goto stop;
    val->kind = v.kind;
    val->text = v.text;
    val->number = 0;
    val->is_number = (v.kind == TL_JSON_NUMBER || v.kind == TL_JSON_STRING) && text_to_double(v.text, &val->number);
    it->p = q;
    return 1;
stop:
    it->p = it->end = NULL;
    return 0;
}

int tl_args_next(tl_args_iter *it, tl_view *key, tl_json_value *val)
{
    const char *p = it->p, *end = it->end, *q, *e;

    if (it->ix)
        return args_next_indexed(it, key, val);
    if (!p)
        return 0;
    p = skip_ws(p, end);
    while (p < end && *p == ',')
        p = skip_ws(p + 1, end);
    if (p >= end || *p != '"')
        goto stop;
    /* The usual member: a key without escapes, then a plain string or a plain number (what
	 * scan_token() takes in its first pass); anything else goes the byte parser's way. */
    q = find_special(p + 1, end);
    if (q == end || *q != '"')
        return args_next_slow(it, p, key, val);
    key->ptr = p + 1;
    key->len = (size_t)(q - p) - 1;
    q = skip_ws(q + 1, end);
    if (q >= end || *q != ':')
        return args_next_slow(it, p, key, val);
    q = skip_ws(q + 1, end);
    if (q >= end)
        return args_next_slow(it, p, key, val);
    if (*q == '"') {
        e = find_special(q + 1, end);
        if (e == end || *e != '"')
            return args_next_slow(it, p, key, val);
        val->kind = TL_JSON_STRING;
        val->text = (tl_view){ q + 1, (size_t)(e - q) - 1 };
        e++;
    } else if (*q == '[') {
        /* kernels' "grid"/"block", record_shapes' dims and types: arrays of plain integers
		 * and strings, at most one level deep, are checked here; anything else (a fraction,
		 * an escape, a comma out of place) goes the byte parser's way */
        if (!(e = plain_array(q, end)))
            return args_next_slow(it, p, key, val);
        val->kind = TL_JSON_ARRAY;
        val->text = (tl_view){ q, (size_t)(e - q) };
        val->number = 0;
        val->is_number = 0;
        it->p = e;
        return 1;
    } else {
        const char *s = q + (*q == '-'), *d = s;
        uint64_t v = 0;
        int frac = 0;
        unsigned n;
        if (end - s >= 24 && (n = digits8(s), n == 8 ? (n += digits8(s + 8)) < 16 : 1)) {
            d = s + n; /* up to 15 digits, 8 bytes at a time */
            v = run_value(s, n);
        } else {
            while (d < end && is_digit(*d))
                v = v * 10 + (uint64_t)(*d++ - '0'); /* wraps past 19 digits: unused then */
        }
        if (d > s && d < end && *d == '.') {
            const char *f = d + 1;
            while (f < end && is_digit(*f))
                f++;
            d = f > d + 1 ? f : s;
            frac = 1;
        }
        if (!(d > s && d < end && !tok_char[(unsigned char)*d] && !(*s == '0' && d - s > 1 && s[1] != '.')))
            return args_next_slow(it, p, key, val);
        val->kind = TL_JSON_NUMBER;
        val->text = (tl_view){ q, (size_t)(d - q) };
        e = d;
        if (!frac && d - s <= 15) { /* what text_to_double() does with a plain integer */
            val->number = *q == '-' ? -(double)v : (double)v;
            val->is_number = 1;
            it->p = e;
            return 1;
        }
    }
    val->number = 0;
    val->is_number = text_to_double(val->text, &val->number);
    it->p = e;
    return 1;
stop:
    it->p = it->end = NULL;
    return 0;
}
