/*
 * json_scan: the structural index of a JSON text (see json_scan.h).
 *
 * One block loop (SCAN_LOOP) is stamped out per instruction set: the classification of 64
 * bytes into bitmasks is the only part that differs (SSE2: four 16-byte compares per class;
 * AVX2: a nibble-table lookup per 32 bytes; AVX-512: the same on 64; scalar: a byte loop, for
 * other CPUs and as the tests' reference), plus the prefix xor (PCLMUL's carry-less multiply by
 * all ones, or six shifts) and the flatten (tzcnt with BMI1, or AVX-512's compress). The masks
 * of entries (block_mask) are plain 64-bit arithmetic shared by all.
 */
#include "ingest/json_scan.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define SCAN_X86 1
#include <immintrin.h>
#endif

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* One block's byte classes, bit i for byte i. `odd` is every byte below 0x20 or above 0x7f
 * (whitespace control bytes included: they are odd only inside strings); `wsc` is \t \n \r. */
struct masks {
    uint64_t quote, bslash, structural, space, wsc, digit, odd;
};

/* The loop's state from one block to the next. */
struct carry {
    uint64_t in_string; /* all ones when the previous block ended inside a string */
    uint64_t odd_bs;    /* 1 when it ended in an odd run of backslashes */
    uint64_t token;     /* 1 when its last byte was part of a bare token */
    uint64_t digit;     /* 1 when its last byte was a decimal digit */
};

static void classify_scalar(const unsigned char *p, struct masks *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < TL_JSON_SCAN_BLOCK; i++) {
        unsigned char c = p[i];
        uint64_t bit = 1ull << i;
        if (c == '"')
            m->quote |= bit;
        else if (c == '\\')
            m->bslash |= bit;
        else if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',')
            m->structural |= bit;
        else if (c == ' ')
            m->space |= bit;
        else if (c >= '0' && c <= '9')
            m->digit |= bit;
        if (c == '\t' || c == '\n' || c == '\r')
            m->wsc |= bit;
        if (c < 0x20 || c >= 0x80)
            m->odd |= bit;
    }
}

static ALWAYS_INLINE uint64_t prefix_xor_shift(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/*
 * The bytes escaped by a backslash: those right after a run of backslashes of odd length
 * (simdjson's find_odd_backslash_sequences). Runs starting on even and on odd bit positions
 * are added separately to the backslash mask; where the carry of the addition ends, the run
 * ended, and the parity of start and end says whether the run was odd.
 */
static ALWAYS_INLINE uint64_t escaped_bytes(uint64_t bs, uint64_t *odd_carry)
{
    const uint64_t even_bits = 0x5555555555555555ull, odd_bits = ~even_bits;
    uint64_t start_edges = bs & ~(bs << 1);
    uint64_t even_start_mask = even_bits ^ *odd_carry;
    uint64_t even_starts = start_edges & even_start_mask;
    uint64_t odd_starts = start_edges & ~even_start_mask;
    uint64_t even_carries = bs + even_starts;
    uint64_t odd_carries;
    int overflow = __builtin_add_overflow(bs, odd_starts, &odd_carries);
    uint64_t even_carry_ends, odd_carry_ends;

    odd_carries |= *odd_carry; /* an odd run that ended the previous block ends at bit 0 */
    *odd_carry = overflow ? 1 : 0;
    even_carry_ends = even_carries & ~bs;
    odd_carry_ends = odd_carries & ~bs;
    return (even_carry_ends & odd_bits) | (odd_carry_ends & even_bits);
}

/* Everything after the byte classes: the entries of one block as a bit mask (bit i: byte i),
 * and the carries for the next block updated. */
static ALWAYS_INLINE uint64_t block_mask(const struct masks *m, uint64_t in_str_raw, struct carry *c, uint64_t quote,
                                         uint64_t valid)
{
    uint64_t in_str = in_str_raw ^ c->in_string;
    uint64_t outside = ~in_str;
    uint64_t ws = m->space | m->wsc;
    uint64_t token = ~(m->structural | ws | quote) & outside;
    uint64_t token_start = token & ~((token << 1) | c->token);
    /* the first byte of a token that is not a digit but follows one: a token that starts with a
     * digit and has no such entry is all digits */
    uint64_t after_digits = token & ~m->digit & ((m->digit << 1) | c->digit);
    uint64_t odd = m->bslash | (m->odd & ~(m->wsc & outside));

    c->in_string = (uint64_t)((int64_t)in_str >> 63);
    c->token = token >> 63;
    c->digit = m->digit >> 63;
    /* a string is one entry, its opening quote (in_str is 1 there, 0 at the closing one) */
    return ((m->structural & outside) | (quote & in_str) | token_start | after_digits | odd) & valid;
}

/* The entries of one block appended to out[n..] (the flatten). CTZ is a count of trailing zeros
 * that gives 64 for 0 (tzcnt with BMI1). */
#define BLOCK_ENTRIES(CTZ)                                                                                             \
    static ALWAYS_INLINE size_t block_entries_##CTZ(const struct masks *m, uint64_t in_str_raw, struct carry *c,       \
                                                    uint64_t quote, uint64_t valid, uint32_t base, uint32_t *out,      \
                                                    size_t n)                                                          \
    {                                                                                                                  \
        uint64_t entries = block_mask(m, in_str_raw, c, quote, valid);                                                 \
        uint32_t count = (uint32_t)__builtin_popcountll(entries);                                                      \
        uint32_t *o = out + n;                                                                                         \
                                                                                                                       \
        /* Eight at a time without a branch per entry (simdjson's flatten): the writes past  \
         * `count` are garbage the caller never sees, and stay within the 64 a block may add. */                         \
        for (uint32_t i = 0; i < count; i += 8, o += 8) {                                                              \
            o[0] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[1] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[2] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[3] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[4] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[5] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[6] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
            o[7] = base + (uint32_t)CTZ(entries);                                                                      \
            entries &= entries - 1;                                                                                    \
        }                                                                                                              \
        return n + count;                                                                                              \
    }

/* The portable count: the top bit keeps __builtin_ctzll defined once the mask is used up (the
 * writes it makes are past `count`, so the value does not matter). */
static ALWAYS_INLINE unsigned ctz_portable(uint64_t x)
{
    return (unsigned)__builtin_ctzll(x | (1ull << 63));
}
BLOCK_ENTRIES(ctz_portable)

/* The loop over blocks, for a classifier, a prefix xor and a trailing-zero count. The last,
 * partial block is copied into a block of spaces so that nothing past `len` is read. Blocks
 * without a backslash (nearly all) skip the escape arithmetic. */
#define SCAN_LOOP(CLASSIFY, PREFIX_XOR, CTZ)                                                                           \
    size_t n = 0, off = 0, full = len & ~(size_t)(TL_JSON_SCAN_BLOCK - 1);                                             \
    struct carry c = { 0, 0, 0, 0 };                                                                                   \
    unsigned char pad[TL_JSON_SCAN_BLOCK];                                                                             \
    /* whole blocks, then the last, partial one in a block of spaces */                                                \
    for (; off < full && n + TL_JSON_SCAN_BLOCK <= max_out; off += TL_JSON_SCAN_BLOCK) {                               \
        struct masks m;                                                                                                \
        uint64_t quote;                                                                                                \
        CLASSIFY((const unsigned char *)text + off, &m);                                                               \
        quote = m.quote;                                                                                               \
        if (m.bslash | c.odd_bs)                                                                                       \
            quote &= ~escaped_bytes(m.bslash, &c.odd_bs);                                                              \
        n = block_entries_##CTZ(&m, PREFIX_XOR(quote), &c, quote, ~0ull, (uint32_t)off, out, n);                       \
    }                                                                                                                  \
    if (off == full && off < len && n + TL_JSON_SCAN_BLOCK <= max_out) {                                               \
        struct masks m;                                                                                                \
        uint64_t quote;                                                                                                \
        memset(pad, ' ', sizeof pad);                                                                                  \
        memcpy(pad, text + off, len - off);                                                                            \
        CLASSIFY(pad, &m);                                                                                             \
        quote = m.quote;                                                                                               \
        if (m.bslash | c.odd_bs)                                                                                       \
            quote &= ~escaped_bytes(m.bslash, &c.odd_bs);                                                              \
        n = block_entries_##CTZ(&m, PREFIX_XOR(quote), &c, quote, (1ull << (len - off)) - 1, (uint32_t)off, out, n);   \
        off += TL_JSON_SCAN_BLOCK;                                                                                     \
    }                                                                                                                  \
    *scanned = off < len ? off : len;                                                                                  \
    return n

static size_t scan_scalar(const char *text, size_t len, uint32_t *out, size_t max_out, size_t *scanned)
{
    SCAN_LOOP(classify_scalar, prefix_xor_shift, ctz_portable);
}

#ifdef SCAN_X86
/* SSE2 has no byte shuffle: compares. The six structural characters in four: '{' and '[' differ
 * only in bit 5, as do '}' and ']'. Digits: x - '0' <= 9, unsigned. Odd bytes: a signed x <
 * 0x20 is below 0x20 or above 0x7f. */
__attribute__((target("sse2"))) static ALWAYS_INLINE void classify_sse2(const unsigned char *p, struct masks *m)
{
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i b20 = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
    const __m128i colon = _mm_set1_epi8(':'), comma = _mm_set1_epi8(',');
    const __m128i tab = _mm_set1_epi8('\t'), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);

    memset(m, 0, sizeof *m);
    for (int i = 0; i < 4; i++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        __m128i lower = _mm_or_si128(x, b20), d = _mm_sub_epi8(x, zero);
        __m128i st = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(lower, open), _mm_cmpeq_epi8(lower, close)),
                                  _mm_or_si128(_mm_cmpeq_epi8(x, colon), _mm_cmpeq_epi8(x, comma)));
        __m128i wsc = _mm_or_si128(_mm_cmpeq_epi8(x, tab), _mm_or_si128(_mm_cmpeq_epi8(x, nl), _mm_cmpeq_epi8(x, cr)));
        int sh = 16 * i;
        m->quote |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, quote)) << sh;
        m->bslash |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, bslash)) << sh;
        m->structural |= (uint64_t)(unsigned)_mm_movemask_epi8(st) << sh;
        m->space |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, b20)) << sh;
        m->wsc |= (uint64_t)(unsigned)_mm_movemask_epi8(wsc) << sh;
        m->digit |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d)) << sh;
        m->odd |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, b20)) << sh;
    }
}

/*
 * AVX2: simdjson's nibble lookup. Two byte shuffles give each byte a class byte, the AND of a
 * table entry for its low nibble and one for its high nibble; each class is one bit that is set
 * in both tables only for the class's bytes:
 *   bit 0 ','  (high 2, low C)        bit 4 ' '   (high 2, low 0)
 *   bit 1 ':'  (high 3, low A)        bit 5 digit (high 3, low 0-9)
 *   bit 2 [ ] { } (high 5/7, low B/D) bit 6 '"'   (high 2, low 2)
 *   bit 3 \t \n \r (high 0, low 9/A/D) bit 7 '\\' (high 5, low C)
 * movemask reads bit 7; adding a byte to itself moves the next bit up.
 */
#define NIBBLE_LO 0x30, 0x20, 0x60, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x28, 0x0A, 0x04, 0x81, 0x0C, 0, 0
#define NIBBLE_HI 0x08, 0, 0x51, 0x22, 0, 0x84, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0

__attribute__((target("avx2"))) static ALWAYS_INLINE void classify_avx2(const unsigned char *p, struct masks *m)
{
    const __m256i lo_tab = _mm256_setr_epi8(NIBBLE_LO, NIBBLE_LO);
    const __m256i hi_tab = _mm256_setr_epi8(NIBBLE_HI, NIBBLE_HI);
    const __m256i low4 = _mm256_set1_epi8(0x0f), b20 = _mm256_set1_epi8(0x20);
    const __m256i b07 = _mm256_set1_epi8(0x07);
    uint32_t quote[2], bslash[2], st[2], space[2], wsc[2], digit[2], odd[2];

    for (int i = 0; i < 2; i++) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * i));
        __m256i lo = _mm256_and_si256(x, low4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low4);
        __m256i cls = _mm256_and_si256(_mm256_shuffle_epi8(lo_tab, lo), _mm256_shuffle_epi8(hi_tab, hi));
        __m256i c2 = _mm256_add_epi8(cls, cls), c4 = _mm256_add_epi8(c2, c2);
        __m256i c8 = _mm256_add_epi8(c4, c4), c16 = _mm256_add_epi8(c8, c8);
        bslash[i] = (uint32_t)_mm256_movemask_epi8(cls);
        quote[i] = (uint32_t)_mm256_movemask_epi8(c2);
        digit[i] = (uint32_t)_mm256_movemask_epi8(c4);
        space[i] = (uint32_t)_mm256_movemask_epi8(c8);
        wsc[i] = (uint32_t)_mm256_movemask_epi8(c16);
        st[i] = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(cls, b07), _mm256_setzero_si256()));
        odd[i] = (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(b20, x));
    }
#define JOIN(a) ((uint64_t)(a)[0] | (uint64_t)(a)[1] << 32)
    m->quote = JOIN(quote);
    m->bslash = JOIN(bslash);
    m->structural = JOIN(st);
    m->space = JOIN(space);
    m->wsc = JOIN(wsc);
    m->digit = JOIN(digit);
    m->odd = JOIN(odd);
#undef JOIN
}

/* tzcnt gives 64 for 0: no mask bit needed to keep the count defined. */
__attribute__((target("bmi"))) static ALWAYS_INLINE unsigned ctz_bmi(uint64_t x)
{
    return (unsigned)_tzcnt_u64(x);
}
__attribute__((target("avx2,pclmul,bmi,bmi2"))) BLOCK_ENTRIES(ctz_bmi)

    /* Prefix xor as a carry-less multiply by all ones: bit i of the product is the xor of bits
 * 0..i of x. */
    __attribute__((target("sse2,pclmul"))) static ALWAYS_INLINE uint64_t prefix_xor_clmul(uint64_t x)
{
    __m128i v = _mm_set_epi64x(0, (long long)x);
    __m128i r = _mm_clmulepi64_si128(v, _mm_set1_epi8((char)0xFF), 0);
    return (uint64_t)_mm_cvtsi128_si64(r);
}

__attribute__((target("sse2"))) static size_t scan_sse2(const char *text, size_t len, uint32_t *out, size_t max_out,
                                                        size_t *scanned)
{
    SCAN_LOOP(classify_sse2, prefix_xor_shift, ctz_portable);
}

__attribute__((target("sse2,pclmul"))) static size_t scan_sse2_clmul(const char *text, size_t len, uint32_t *out,
                                                                     size_t max_out, size_t *scanned)
{
    SCAN_LOOP(classify_sse2, prefix_xor_clmul, ctz_portable);
}

__attribute__((target("avx2,pclmul,bmi,bmi2"))) static size_t
scan_avx2_clmul(const char *text, size_t len, uint32_t *out, size_t max_out, size_t *scanned)
{
    SCAN_LOOP(classify_avx2, prefix_xor_clmul, ctz_bmi);
}

/* AVX-512 (F and BW): the AVX2 classification on 64 bytes at once, the class bits read by
 * mask tests instead of movemask; and the flatten by compress: each 16 bits of the entry mask
 * pick their byte offsets out of a vector of 16 (vpcompressd), stored whole, so a block costs
 * four stores and no loop or branch per entry. */
__attribute__((target("avx512f,avx512bw"))) static ALWAYS_INLINE void classify_avx512(const unsigned char *p,
                                                                                      struct masks *m)
{
    const __m512i lo_tab = _mm512_broadcast_i32x4(_mm_setr_epi8(NIBBLE_LO));
    const __m512i hi_tab = _mm512_broadcast_i32x4(_mm_setr_epi8(NIBBLE_HI));
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    __m512i x = _mm512_loadu_si512((const void *)p);
    __m512i lo = _mm512_and_si512(x, low4);
    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), low4);
    __m512i cls = _mm512_and_si512(_mm512_shuffle_epi8(lo_tab, lo), _mm512_shuffle_epi8(hi_tab, hi));

    m->bslash = _mm512_test_epi8_mask(cls, _mm512_set1_epi8((char)0x80));
    m->quote = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(0x40));
    m->digit = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(0x20));
    m->space = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(0x10));
    m->wsc = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(0x08));
    m->structural = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(0x07));
    m->odd = _mm512_cmpgt_epi8_mask(_mm512_set1_epi8(0x20), x); /* signed: below 0x20 or above 0x7f */
}

__attribute__((target("avx512f,avx512bw,popcnt"))) static ALWAYS_INLINE size_t
block_entries_avx512(const struct masks *m, uint64_t in_str_raw, struct carry *c, uint64_t quote, uint64_t valid,
                     uint32_t base, uint32_t *out, size_t n)
{
    uint64_t entries = block_mask(m, in_str_raw, c, quote, valid);
    __m512i at = _mm512_add_epi32(_mm512_set1_epi32((int)base),
                                  _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const __m512i sixteen = _mm512_set1_epi32(16);
    uint32_t *o = out + n;

    /* the stores past the entries are garbage the caller never sees, within the 64 a block may
     * add */
    for (int q = 0; q < 4; q++) {
        __mmask16 k = (__mmask16)(entries >> (16 * q));
        _mm512_storeu_si512((void *)o, _mm512_maskz_compress_epi32(k, at));
        o += __builtin_popcount(k);
        at = _mm512_add_epi32(at, sixteen);
    }
    return (size_t)(o - out);
}

__attribute__((target("avx512f,avx512bw,pclmul,popcnt"))) static size_t
scan_avx512_clmul(const char *text, size_t len, uint32_t *out, size_t max_out, size_t *scanned)
{
    SCAN_LOOP(classify_avx512, prefix_xor_clmul, avx512);
}
#endif

typedef size_t (*scan_fn)(const char *, size_t, uint32_t *, size_t, size_t *);

static const struct {
    const char *name;
    scan_fn fn;
} variants[] = {
#ifdef SCAN_X86
    { "avx512+pclmul", scan_avx512_clmul }, /* F and BW */
    { "avx2+pclmul", scan_avx2_clmul },     /* with BMI1/2 (tzcnt, blsr), which every AVX2 CPU has */
    { "sse2+pclmul", scan_sse2_clmul },
    { "sse2", scan_sse2 },
#endif
    { "scalar", scan_scalar },
};

#define NVARIANTS (sizeof variants / sizeof variants[0])

static int variant_usable(size_t i)
{
#ifdef SCAN_X86
    __builtin_cpu_init();
    if (variants[i].fn == scan_avx512_clmul)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("popcnt");
    if (variants[i].fn == scan_avx2_clmul)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
               __builtin_cpu_supports("bmi2");
    if (variants[i].fn == scan_sse2_clmul)
        return __builtin_cpu_supports("pclmul");
#endif
    (void)i;
    return 1;
}

/* The chosen variant + 1 (0: not chosen yet). Racing first calls choose the same. */
static int g_variant;

static size_t chosen(void)
{
    int v = __atomic_load_n(&g_variant, __ATOMIC_RELAXED);
    if (v == 0) {
        /* TALLY_JSON_SCAN=sse2 (or another name) asks for a lower instruction set: for
		 * tests and benchmarks; a name this CPU cannot run is ignored. */
        const char *want = getenv("TALLY_JSON_SCAN");
        size_t i, pick = NVARIANTS - 1;
        for (i = 0; i < NVARIANTS; i++)
            if (variant_usable(i)) {
                pick = i;
                break;
            }
        for (i = 0; want && i < NVARIANTS; i++)
            if (strcmp(want, variants[i].name) == 0 && variant_usable(i))
                pick = i;
        v = (int)pick + 1;
        __atomic_store_n(&g_variant, v, __ATOMIC_RELAXED);
    }
    return (size_t)v - 1;
}

size_t tl_json_scan_index(const char *text, size_t len, uint32_t *out, size_t max_out, size_t *scanned)
{
    return variants[chosen()].fn(text, len, out, max_out, scanned);
}

const char *tl_json_scan_isa(void)
{
    return variants[chosen()].name;
}

size_t tl_json_scan_index_as(const char *isa, const char *text, size_t len, uint32_t *out, size_t max_out,
                             size_t *scanned)
{
    for (size_t i = 0; i < NVARIANTS; i++)
        if (strcmp(isa, variants[i].name) == 0 && variant_usable(i))
            return variants[i].fn(text, len, out, max_out, scanned);
    return (size_t)-1;
}
