/*
 * json_writer.c - streaming JSON writer and a strict validator for the JSON
 * objects programs pass to tally_event() (see json_writer.h).
 */
#include "json_writer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_json_init(tl_json *j, tl_json_sink sink, void *ctx)
{
    memset(j, 0, sizeof *j);
    j->sink = sink;
    j->ctx = ctx;
    j->first[0] = 1;
}

static void flush_buf(tl_json *j)
{
    if (j->len && !j->error && j->sink(j->ctx, j->buf, j->len) != 0)
        j->error = 1;
    j->len = 0;
}

void tl_json_write(tl_json *j, const void *p, size_t n)
{
    if (n > sizeof j->buf - j->len) {
        flush_buf(j);
        if (n > sizeof j->buf) {
            if (!j->error && j->sink(j->ctx, p, n) != 0)
                j->error = 1;
            return;
        }
    }
    memcpy(j->buf + j->len, p, n);
    j->len += n;
}

static void put(tl_json *j, char c)
{
    if (j->len == sizeof j->buf)
        flush_buf(j);
    j->buf[j->len++] = c;
}

int tl_json_finish(tl_json *j)
{
    flush_buf(j);
    return j->error ? -1 : 0;
}

/* Separator before a value or key at the current depth. */
static void sep(tl_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (!j->first[j->depth])
        put(j, ',');
    j->first[j->depth] = 0;
}

static void open_(tl_json *j, char c)
{
    sep(j);
    put(j, c);
    if (j->depth + 1 < TL_JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(tl_json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    put(j, c);
}

void tl_json_object_begin(tl_json *j)
{
    open_(j, '{');
}
void tl_json_object_end(tl_json *j)
{
    close_(j, '}');
}
void tl_json_array_begin(tl_json *j)
{
    open_(j, '[');
}
void tl_json_array_end(tl_json *j)
{
    close_(j, ']');
}

/* Length of a valid UTF-8 sequence at s (max n bytes), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    unsigned cp = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void tl_json_string_n(tl_json *j, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    sep(j);
    put(j, '"');
    size_t i = 0;
    while (i < n) {
        /* Copy the longest run that needs no escaping at once. */
        size_t run = i;
        while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
            run++;
        if (run > i) {
            tl_json_write(j, s + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            put(j, '\\');
            put(j, (char)c);
            i++;
        } else if (c < 0x20) {
            const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (esc) {
                tl_json_write(j, esc, 2);
            } else {
                char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                tl_json_write(j, u, 6);
            }
            i++;
        } else {
            size_t len = utf8_len(s + i, n - i);
            if (len == 0) {
                tl_json_write(j, "\xef\xbf\xbd", 3); /* U+FFFD */
                i++;
            } else {
                tl_json_write(j, s + i, len);
                i += len;
            }
        }
    }
    put(j, '"');
}

void tl_json_string(tl_json *j, const char *s)
{
    if (s == NULL) {
        tl_json_null(j);
        return;
    }
    tl_json_string_n(j, s, strlen(s));
}

void tl_json_key(tl_json *j, const char *key)
{
    tl_json_string(j, key);
    put(j, ':');
    j->after_key = 1;
}

static void number(tl_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void number(tl_json *j, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sep(j);
    if (n > 0)
        tl_json_write(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* v in decimal, without printf: integers are most of what a partial or an
 * aggregate writes (times, counts, samples), and vsnprintf's parsing of the
 * format was a third of writing one (perf, a 512-rank report's JSON). The
 * digits are written backwards into the end of a 24-byte buffer. */
static void unsigned_digits(tl_json *j, uint64_t v, int negative)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (negative)
        *--p = '-';
    sep(j);
    tl_json_write(j, p, (size_t)(tmp + sizeof tmp - p));
}

void tl_json_int(tl_json *j, int64_t v)
{
    /* the magnitude as unsigned: -INT64_MIN does not fit an int64_t */
    unsigned_digits(j, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}
void tl_json_uint(tl_json *j, uint64_t v)
{
    unsigned_digits(j, v, 0);
}

void tl_json_double(tl_json *j, double v)
{
    if (!isfinite(v)) {
        tl_json_null(j);
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        if (v == 0 && signbit(v))
            number(j, "%.0f", v); /* "-0", as it always read */
        else
            tl_json_int(j, (int64_t)v); /* exact: an integer below 2^53 */
        return;
    }
    /* Shortest of %.15g..%.17g that reads back as the same double. */
    char tmp[64];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    number(j, "%s", tmp);
}

void tl_json_fixed(tl_json *j, double v, int decimals)
{
    if (!isfinite(v)) {
        tl_json_null(j);
        return;
    }
    number(j, "%.*f", decimals, v);
}

void tl_json_bool(tl_json *j, int v)
{
    sep(j);
    tl_json_write(j, v ? "true" : "false", v ? 4 : 5);
}

void tl_json_null(tl_json *j)
{
    sep(j);
    tl_json_write(j, "null", 4);
}

void tl_json_raw_element(tl_json *j, const char *text, size_t n)
{
    sep(j);
    tl_json_write(j, text, n);
}

char *tl_json_element_begin(tl_json *j, size_t n)
{
    sep(j);
    if (n > sizeof j->buf - j->len)
        flush_buf(j);
    return j->buf + j->len;
}

void tl_json_element_end(tl_json *j, size_t used)
{
    j->len += used;
}

void tl_json_raw(tl_json *j, const char *text)
{
    sep(j);
    tl_json_write(j, text, strlen(text));
}

/* A key and its value, one function per type of value: C has no overloading,
 * and a macro or _Generic over them would lose the call's type check, so the
 * two-line bodies repeat on purpose. */
void tl_json_kv_string(tl_json *j, const char *k, const char *s)
{
    tl_json_key(j, k);
    tl_json_string(j, s);
}
void tl_json_kv_int(tl_json *j, const char *k, int64_t v)
{
    tl_json_key(j, k);
    tl_json_int(j, v);
}
void tl_json_kv_uint(tl_json *j, const char *k, uint64_t v)
{
    tl_json_key(j, k);
    tl_json_uint(j, v);
}
void tl_json_kv_double(tl_json *j, const char *k, double v)
{
    tl_json_key(j, k);
    tl_json_double(j, v);
}
void tl_json_kv_bool(tl_json *j, const char *k, int v)
{
    tl_json_key(j, k);
    tl_json_bool(j, v);
}

/* ---- a strict RFC 8259 validator (recursive descent, bounded depth) ---- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *value(const char *p, int depth);

static const char *string_(const char *p)
{
    if (*p != '"')
        return NULL;
    p++;
    while (*p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f') || (p[i] >= 'A' && p[i] <= 'F')))
                        return NULL;
                p += 5;
            } else if (*p && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return NULL;
            }
        } else if (c < 0x80) {
            p++;
        } else {
            size_t len = utf8_len((const unsigned char *)p, strnlen(p, 4));
            if (len == 0)
                return NULL;
            p += len;
        }
    }
    return p + 1;
}

static const char *number_(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

static const char *container(const char *p, int depth, char close)
{
    p = ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            p = string_(p);
            if (p == NULL)
                return NULL;
            p = ws(p);
            if (*p != ':')
                return NULL;
            p = ws(p + 1);
        }
        p = value(p, depth + 1);
        if (p == NULL)
            return NULL;
        p = ws(p);
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return NULL;
        p = ws(p + 1);
    }
}

static const char *value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    switch (*p) {
    case '{':
        return container(p, depth, '}');
    case '[':
        return container(p, depth, ']');
    case '"':
        return string_(p);
    case 't':
        return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f':
        return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n':
        return strncmp(p, "null", 4) ? NULL : p + 4;
    default:
        return number_(p);
    }
}

int tl_json_is_object(const char *text)
{
    const char *p = ws(text);
    if (*p != '{')
        return 0;
    p = value(p, 0);
    return p != NULL && *ws(p) == '\0';
}

int tl_json_mem_sink(void *ctx, const void *buf, size_t len)
{
    tl_json_membuf *m = ctx;
    if (m->len + len + 1 > m->cap) {
        size_t cap = (m->len + len + 1) * 2;
        char *p = realloc(m->data, cap);
        if (p == NULL)
            return -1;
        m->data = p;
        m->cap = cap;
    }
    memcpy(m->data + m->len, buf, len);
    m->len += len;
    m->data[m->len] = '\0';
    return 0;
}

char *tl_json_object_or_text(const char *text)
{
    if (text == NULL)
        return strdup("{}");
    if (tl_json_is_object(text))
        return strdup(text);
    tl_json_membuf m = { NULL, 0, 0 };
    tl_json *j = malloc(sizeof *j);
    if (j == NULL)
        return NULL;
    tl_json_init(j, tl_json_mem_sink, &m);
    tl_json_object_begin(j);
    tl_json_kv_string(j, "text", text);
    tl_json_object_end(j);
    int rc = tl_json_finish(j);
    free(j);
    if (rc != 0) {
        free(m.data);
        return NULL;
    }
    return m.data;
}

char *tl_json_quote(const char *s)
{
    tl_json_membuf m = { NULL, 0, 0 };
    tl_json *j = malloc(sizeof *j);
    if (j == NULL)
        return NULL;
    tl_json_init(j, tl_json_mem_sink, &m);
    tl_json_string(j, s);
    int rc = tl_json_finish(j);
    free(j);
    if (rc != 0) {
        free(m.data);
        return NULL;
    }
    return m.data;
}
