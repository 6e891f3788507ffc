/*
 * trace_fast: the fast path of the trace tokenizer (see trace_fast.h).
 *
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
#include "ingest/trace_fast.h"

#include "ingest/json_scan.h"
#include "ingest/trace_decode.h"
#include "ingest/trace_scan.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { FW_OK, FW_FALLBACK };

/* Entries after the last one, each pointing at the sentinel byte after the data: the walker
 * looks at the byte of every entry it takes before it takes another, and no grammar accepts
 * that byte, so it needs no bounds check per entry. */
#define INDEX_SENTINELS 4

/* Containers nested deeper than this inside a skipped value are left to the byte parser (one
 * bit per level says object or array). */
#define FAST_MAX_NEST 64

/* Every FAST_WINDOW events read with the index, if more than half fell back to the byte
 * parser, the next FAST_PAUSE events skip the index. */
#define FAST_WINDOW 64
#define FAST_PAUSE 4096

/* Bytes that may follow a token in the fast path: whitespace and the structural characters. A
 * token glued to anything else (junk, the sentinel at the end of the data) is left to the byte
 * parser. */
static const unsigned char ends_token[256] = {
    [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1, [','] = 1, ['}'] = 1,
    [']'] = 1, [':'] = 1,  ['"'] = 1,  ['{'] = 1,  ['['] = 1,
};

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
        m = run_value(q, ni) * tl_pow10_u64[nf] + run_value(p + 1, nf);
        p += 1 + nf;
    } else {
        if (ni > 19)
            return NULL;
        m = run_value(q, ni);
    }
    if (nf <= 3) {
        uint64_t f = tl_pow10_u64[3 - nf];
        if (m > (uint64_t)INT64_MAX / f)
            return NULL;
        *out = (int64_t)(m * f);
    } else { /* below a ns: round half away from zero (m < 10^19, so the result fits) */
        uint64_t d = tl_pow10_u64[nf - 3], r = m % d;
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
    m = m * tl_pow10_u64[nf] + digits_value(dot + 1, nf);
    if (nf <= 3) {
        if (__builtin_mul_overflow(m, tl_pow10_u64[3 - nf], &m) || m > (uint64_t)INT64_MAX)
            return NULL;
    } else { /* below a ns: round half away from zero (m < 10^19, so the result fits) */
        uint64_t d = tl_pow10_u64[nf - 3], r = m % d;
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
 * numbers (-?digits(.digits)?, no leading zero) are checked here, the rest by tl_scan_token().
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
    if (tl_scan_token(c, &p, kind) != P_OK || *kind == TL_JSON_NONFINITE || !ends_token[(unsigned char)*p])
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
        return tl_trace_event_key(k);
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
 * those of the byte parser (tl_scan_members, tl_scan_value): the event is 1, "args" 2, what is in args 3.
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
    case K_BP: /* a flow's end: "bp": "e" */
        if (ch != '"')
            goto other;
        NEXT();
        if (ch != ',' && ch != '}')
            goto out;
        *(k == K_BP ? &ev->bp : (tl_view *)((char *)ev + string_member[k])) = string_at(text + vo, text + o);
        goto after;
    case K_ID: /* a flow's id, a number in Kineto's traces: its digits, as the byte parser keeps them */
        if (!is_digit((char)ch) || (text[*cur] != ',' && text[*cur] != '}'))
            goto other;
        ev->id = (tl_view){ text + vo, digit_run(text + vo) };
        NEXT();
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
    if (ch == '[' && c->max_depth >= 3) {
        /* A kernel's "grid" and "block", [8192, 1, 1]: plain integers, taken here without a
         * call (what skip_fast() would do with them); anything else goes to skip_fast() from
         * the '[' again. */
        const uint32_t *open = cur;
        uint32_t at = o;
        NEXT();
        while (is_digit((char)ch)) { /* all digits: an entry ',' or ']' follows right away */
            NEXT();
            if (ch == ']') {
                NEXT();
                goto arg_after;
            }
            if (ch != ',')
                break;
            NEXT();
        }
        cur = open;
        o = at;
        ch = '[';
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

    /* The steps above for a value of "args", and those below for a value of the event, and
     * skip_fast()'s for arrays and objects, repeat one another on purpose: each set goes on to
     * its own labels, and a helper shared by them would take the cursor out of its register,
     * which is what makes this walk fast. */
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
    tl_trace_event_field(c, ev, k, &v);
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
static inline int fast_event(tl_trace_stream *s, tl_trace_event *ev, const char **endp)
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

int tl_trace_fast_read(tl_trace_stream *s, tl_trace_event *ev)
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
    if (!fast)
        return TL_FAST_NO;
    if (!fast_event(s, ev, &end)) {
        s->fast_fallbacks++;
        return TL_FAST_NO;
    }
    s->pos = (size_t)(end - s->buf);
    s->after_value = 1;
    s->after_comma = 0;
    if (ev->size > s->opt.max_event_size)
        return TL_FAST_OVERSIZED;
    /* The separator and the next event's '{', from the index: what the stream's step_events()
     * finds after skipping whitespace (between entries there is only whitespace), taken here
     * so that the next call starts at the '{' (fast_next: straight to the next event). */
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
    return TL_FAST_READ;
}
