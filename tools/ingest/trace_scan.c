/*
 * trace_scan: the trace tokenizer's scanners over contiguous memory (see trace_scan.h): strings,
 * tokens and numbers, containers passed over with their syntax checked, objects and arrays
 * walked member by member, and the exact conversions of number text (tl_view_to_int64,
 * tl_trace_us_to_ns). Nothing here reads input or keeps state between calls: the stream
 * (trace_stream.c) owns the buffer and retries an item whole on P_MORE.
 */
#include "ingest/trace_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a bare token: numbers and the literals true/false/null/NaN/Infinity. */
const unsigned char tl_scan_tok_char[256] = {
    ['0' ... '9'] = 1, ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,
};

static int bad_depth(struct pctx *c, const char *at)
{
    c->err_depth = 1;
    return bad(c, at, "nesting too deep");
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

/* *pp is at an opening quote; on P_OK it is just past the closing quote. */
int tl_scan_string(struct pctx *c, const char **pp)
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
int tl_scan_token(struct pctx *c, const char **pp, enum tl_json_kind *kind)
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
        if (d > q && d < end && !tl_scan_tok_char[(unsigned char)*d] && !(*q == '0' && d - q > 1 && q[1] != '.')) {
            *kind = TL_JSON_NUMBER;
            *pp = d;
            return P_OK;
        }
    }
    while (p < end && tl_scan_tok_char[(unsigned char)*p])
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
            if (ch == '"' || ch == '{' || ch == '[' || tl_scan_tok_char[ch]) {
                warn(c, W_MISSING_COMMA, p);
                comma = 0;
                st = in_obj ? S_KEY : S_VALUE;
                continue;
            }
            return bad(c, p, in_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        if (st == S_KEY || st == S_VALUE) { /* a member or an element, or the container's end */
            if (ch == (st == S_KEY ? '}' : ']')) {
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
        if (st == S_KEY) {
            if (ch != '"')
                return bad(c, p, "expected '\"' (a key) or '}'");
            if ((rc = tl_scan_string(c, &p)) != P_OK)
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
        /* a value */
        if (ch == '"') {
            if ((rc = tl_scan_string(c, &p)) != P_OK)
                return rc;
        } else if (ch == '{' || ch == '[') {
            goto open;
        } else {
            enum tl_json_kind kind;
            if ((rc = tl_scan_token(c, &p, &kind)) != P_OK)
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

/* Read (and check) the value at *pp, which is not whitespace; `depth` as for skip_container.
 * Declared in trace_scan.h. */
int tl_scan_value(struct pctx *c, const char **pp, int depth, struct jval *v)
{
    const char *p = *pp;
    int rc;

    if (*p == '"') {
        if ((rc = tl_scan_string(c, pp)) != P_OK)
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
    } else if ((rc = tl_scan_token(c, pp, &v->kind)) != P_OK) {
        return rc;
    }
    v->text.ptr = p;
    v->text.len = (size_t)(*pp - p);
    return P_OK;
}

/*
 * Walk the object or array at *pp, handing each member (its key, *pp at its value) or element
 * (an empty key, *pp at its first byte) to `fn`. Tolerates extra, trailing and missing commas
 * (counted). One walker for both: they differ only in the key and ':' before each value and in
 * the closing bracket.
 */
int tl_scan_members(struct pctx *c, const char **pp, int depth, tl_scan_member_fn fn, void *obj)
{
    const char *p = *pp, *end = c->end;
    const int is_obj = *p == '{';
    const char close = is_obj ? '}' : ']';
    int comma = 0, after = 0, rc;

    if (depth > c->max_depth)
        return bad_depth(c, p);
    p++;
    for (;;) {
        tl_view key = { NULL, 0 };

        p = skip_ws(p, end);
        if (p == end)
            return P_MORE;
        if (*p == close) {
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
        if (is_obj) {
            const char *k = p;
            if (*p != '"')
                return bad(c, p, after ? "expected ',' or '}'" : "expected '\"' (a key) or '}'");
            if (after)
                warn(c, W_MISSING_COMMA, p);
            if ((rc = tl_scan_string(c, &p)) != P_OK)
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
        } else if (after) {
            warn(c, W_MISSING_COMMA, p);
        }
        if ((rc = fn(c, obj, key, &p, depth + 1)) != P_OK)
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

const uint64_t tl_pow10_u64[20] = {
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
        if (exp10 > 19 || m > UINT64_MAX / tl_pow10_u64[exp10])
            return -2;
        q = m * tl_pow10_u64[exp10];
    } else if (exp10 < -19) {
        q = 0;
    } else {
        uint64_t d = tl_pow10_u64[-exp10], r = m % d;
        q = m / d;
        if (r >= d - r) /* r >= d/2 without overflow: half rounds away from zero */
            q++;
    }
    if (q > (uint64_t)INT64_MAX)
        return -2;
    *out = neg ? -(int64_t)q : (int64_t)q;
    return 0;
}
