/*
 * trace_args: reading an event's "args" after the tokenizer kept them as text (see
 * trace_stream.h): tl_args_next() walks the members, from the fast path's member index when it
 * kept one, else with a fast pass for the usual plain members and the byte parser's scanners
 * (trace_scan.h) for the rest; and tl_view_unescape() for string contents.
 */
#include "ingest/trace_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 * anything else, which the byte parser then judges. For such an array tl_scan_value() takes the
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
    if (tl_scan_string(&c, &q) != P_OK)
        goto stop;
    key->ptr = p + 1;
    key->len = (size_t)(q - p) - 2;
    q = skip_ws(q, c.end);
    if (q >= c.end || *q != ':')
        goto stop;
    q = skip_ws(q + 1, c.end);
    if (q >= c.end || tl_scan_value(&c, &q, 2, &v) != P_OK)
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
	 * tl_scan_token() takes in its first pass); anything else goes the byte parser's way. */
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
        if (!(d > s && d < end && !tl_scan_tok_char[(unsigned char)*d] && !(*s == '0' && d - s > 1 && s[1] != '.')))
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
