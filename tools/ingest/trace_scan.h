/*
 * trace_scan: the byte-level scanners of the trace tokenizer (internal to tools/ingest/trace_*.c).
 *
 * Small scanners over contiguous memory (tl_scan_string, tl_scan_token, tl_scan_value,
 * tl_scan_members) that return P_OK, P_MORE ("the data ended first") or P_BAD (a syntax error,
 * with where and what was expected). They never suspend: the stream (trace_stream.c) calls them
 * on one item at a time and, on P_MORE, reads more input and calls them again from the start of
 * that item. Warnings found during an attempt are collected in `struct pending` and counted by
 * the stream only when the attempt completes, so a retry never counts anything twice.
 *
 * Speed comes from not decoding: strings are scanned 16 (SSE2) or 8 (SWAR) bytes at a time for
 * the four bytes that matter (quote, backslash, control, non-ASCII), numbers are only delimited
 * unless the field is one we decode. The helpers on the hot paths of the fast path
 * (trace_fast.c) and of tl_args_next() (trace_args.c) are inline here for that reason. The
 * structural index the fast path walks is json_scan.c's.
 */
#ifndef TALLY_INGEST_TRACE_SCAN_H
#define TALLY_INGEST_TRACE_SCAN_H

#include "ingest/trace_stream.h"

#include <stdint.h>
#include <string.h>

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

/* A value as read by tl_scan_value(): its kind and text (string content without the quotes). */
struct jval {
    enum tl_json_kind kind;
    tl_view text;
};

/* Zero bytes kept after the data in the buffer: the walker's digit loops stop at the first and
 * read up to 8 bytes at a time. */
#define READ_SLACK 8

/* Bytes of a bare token: numbers and the literals true/false/null/NaN/Infinity. */
extern const unsigned char tl_scan_tok_char[256];

static inline int is_digit(char ch)
{
    return (unsigned)((unsigned char)ch - '0') < 10;
}

/* 10^0 .. 10^19. */
extern const uint64_t tl_pow10_u64[20];

/* ---------------------------------------------------------------------------------------- */
/* Inline helpers: used on the hot paths of trace_scan.c, trace_fast.c and trace_args.c       */

static inline void warn(struct pctx *c, int kind, const char *at)
{
    c->w.any++;
    if (c->w.n[kind]++ == 0)
        c->w.first[kind] = at;
}

static inline int bad(struct pctx *c, const char *at, const char *what)
{
    c->err_at = at;
    c->err_what = what;
    return P_BAD;
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
    return v * tl_pow10_u64[n] + digits_value(p, n);
}

/* *pp is at an opening quote; on P_OK it is just past the closing quote. */
int tl_scan_string(struct pctx *c, const char **pp);

/* A bare token at *pp: a number or a literal; its kind in *kind. */
int tl_scan_token(struct pctx *c, const char **pp, enum tl_json_kind *kind);

/* Read (and check) the value at *pp, which is not whitespace; `depth` is the nesting level a
 * container there would have (the event object is 1). */
int tl_scan_value(struct pctx *c, const char **pp, int depth, struct jval *v);

/* Called for each member of an object by tl_scan_members(), with its key and *pp at the value,
 * or for each element of an array, with an empty key and *pp at the element's first byte. It
 * must read the value (tl_scan_value() or a nested walk) and leave *pp after it. */
typedef int (*tl_scan_member_fn)(struct pctx *c, void *obj, tl_view key, const char **pp, int depth);

/* Walk the object or array at *pp (its '{' or '['; depth as for tl_scan_value), handing each
 * member or element to `fn`. Tolerates extra, trailing and missing commas (counted). */
int tl_scan_members(struct pctx *c, const char **pp, int depth, tl_scan_member_fn fn, void *obj);

#endif
