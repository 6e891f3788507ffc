/*
 * gzip_source: sniffing, multi-member gzip decompression behind a tl_read_fn (see the header).
 *
 * The decoder stops at the end of each gzip member (trailer checked); if the next input bytes
 * are the gzip magic again, it is reset and goes on, which is how multi-member files read as
 * one stream. Input that ends before a member's end is reported as truncation with the
 * compressed offset, after everything decodable up to there has been handed out: the decoder
 * is asked once more with no input before truncation is reported, because it may still hold
 * output (the rest of a match) that a small read left behind.
 *
 * Two decoders sit behind one small interface (dec_start, dec_reset, dec_run, dec_end): isa-l's
 * igzip when the build found it (TALLY_HAVE_ISAL), zlib always. Both see the same input buffer
 * (in/next_in/avail_in), so sniffing, member boundaries, trailing garbage and truncation are
 * handled once, above them.
 */
#include "ingest/gzip_source.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef TALLY_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* Compressed bytes read from the inner source per call: large enough that a file source costs
 * few read() calls, small enough to stay in L2 beside the decoder's window. */
#define GZ_IN_SIZE (128u * 1024u)

/* Output space the decoder gets per call (see decode_some()). */
#define GZ_OUT_SIZE (256u * 1024u)

enum { M_SNIFF, M_PLAIN, M_GZIP, M_DONE, M_ERROR };

/* What one decoder call did. */
enum { DEC_OK, DEC_MEMBER_END, DEC_ERROR };

int tl_gzip_source_init(tl_gzip_source *g, tl_read_fn read, void *ctx)
{
    memset(g, 0, sizeof *g);
    g->read = read;
    g->ctx = ctx;
    g->mode = M_SNIFF;
    g->in_cap = GZ_IN_SIZE;
    g->in = malloc(g->in_cap);
    g->next_in = g->in;
    return g->in ? 0 : -1;
}

const char *tl_gzip_source_decoder(void)
{
#ifdef TALLY_HAVE_ISAL
    const char *e = getenv("TALLY_GZIP_DECODER");
    if (!e || strcmp(e, "zlib") != 0)
        return "isa-l";
#endif
    return "zlib";
}

/* ---------------------------------------------------------------------------------------- */
/* The decoders                                                                               */

static int dec_start(tl_gzip_source *g)
{
#ifdef TALLY_HAVE_ISAL
    if (strcmp(tl_gzip_source_decoder(), "isa-l") == 0) {
        /* Zeroed: on a corrupt member isa-l may copy a match from its history buffer before
		 * any output filled it (it reports the bad distance only afterwards); zeroed, those
		 * bytes are the same on every run instead of stale heap contents. */
        struct inflate_state *st = calloc(1, sizeof *st);
        if (!st)
            return -1;
        isal_inflate_init(st);
        st->crc_flag = ISAL_GZIP; /* parse the header, check the trailer's CRC and size */
        g->dec = st;
        g->use_isal = 1;
        return 0;
    }
#endif
    {
        z_stream *zs = calloc(1, sizeof *zs);
        if (!zs)
            return -1;
        if (inflateInit2(zs, 15 + 16) != Z_OK) { /* +16: a gzip wrapper */
            free(zs);
            return -1;
        }
        g->dec = zs;
        g->use_isal = 0;
        return 0;
    }
}

static void dec_reset(tl_gzip_source *g)
{
#ifdef TALLY_HAVE_ISAL
    if (g->use_isal) {
        struct inflate_state *st = g->dec;
        isal_inflate_reset(st);
        st->crc_flag = ISAL_GZIP;
        return;
    }
#endif
    inflateReset(g->dec);
}

static void dec_end(tl_gzip_source *g)
{
    if (!g->dec)
        return;
    if (!g->use_isal)
        inflateEnd(g->dec);
    free(g->dec);
    g->dec = NULL;
}

#ifdef TALLY_HAVE_ISAL
/* isa-l's error codes in zlib's words, so messages do not depend on the decoder. */
static const char *isal_error_text(int ret)
{
    switch (ret) {
    case ISAL_INVALID_BLOCK:
        return "invalid block type";
    case ISAL_INVALID_SYMBOL:
        return "invalid code";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
        return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
        return "incorrect data check";
    default:
        return "corrupt";
    }
}
#endif

/* Decode from next_in/avail_in into out[0..cap) (cap < 2^31); *produced is what was written.
 * On DEC_ERROR, *why says what was wrong. */
static int dec_run(tl_gzip_source *g, unsigned char *out, size_t cap, size_t *produced, const char **why)
{
#ifdef TALLY_HAVE_ISAL
    if (g->use_isal) {
        struct inflate_state *st = g->dec;
        int ret;
        st->next_in = g->next_in;
        st->avail_in = (uint32_t)g->avail_in;
        st->next_out = out;
        st->avail_out = (uint32_t)cap;
        ret = isal_inflate(st);
        *produced = cap - st->avail_out;
        /* isal_inflate hands back whole bytes it had buffered but not used, so next_in is
		 * exactly after the member's trailer at its end. */
        g->next_in = st->next_in;
        g->avail_in = st->avail_in;
        if (ret < 0) {
            *why = isal_error_text(ret);
            return DEC_ERROR;
        }
        return st->block_state == ISAL_BLOCK_FINISH ? DEC_MEMBER_END : DEC_OK;
    }
#endif
    {
        z_stream *zs = g->dec;
        int ret;
        zs->next_in = g->next_in;
        zs->avail_in = (uInt)g->avail_in;
        zs->next_out = out;
        zs->avail_out = (uInt)cap;
        ret = inflate(zs, Z_NO_FLUSH);
        *produced = cap - zs->avail_out;
        g->next_in = zs->next_in;
        g->avail_in = zs->avail_in;
        if (ret == Z_STREAM_END)
            return DEC_MEMBER_END;
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            *why = zs->msg ? zs->msg : "corrupt";
            return DEC_ERROR;
        }
        return DEC_OK;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* The source                                                                                 */

static void bg_stop(tl_gzip_source *g);

void tl_gzip_source_release(tl_gzip_source *g)
{
    bg_stop(g);
    dec_end(g);
    for (int i = 0; i < TL_GZIP_CHUNKS; i++) {
        free(g->chunk[i]);
        g->chunk[i] = NULL;
    }
    g->out = NULL;
    free(g->in);
    g->in = g->next_in = NULL;
    g->avail_in = 0;
}

static ssize_t fail(tl_gzip_source *g, uint64_t offset, const char *what, const char *detail)
{
    g->mode = M_ERROR;
    g->error_offset = offset;
    snprintf(g->error, sizeof g->error, "%s at compressed offset %llu%s%s", what, (unsigned long long)offset,
             detail ? ": " : "", detail ? detail : "");
    errno = 0; /* the text is in g->error, not in errno */
    return -1;
}

/* Append input behind the unconsumed bytes until the buffer is full or the input ends, so the
 * decoder sees the same input however the inner source splits it. A read error after some
 * bytes is kept for the next call. Returns 1 when bytes came, 0 at the end, -1. */
static int fill_in(tl_gzip_source *g)
{
    size_t before;

    if (g->in_err) {
        fail(g, g->in_read, "read error", g->in_errno ? strerror(g->in_errno) : NULL);
        return -1;
    }
    if (g->in_eof)
        return 0;
    if (g->avail_in && g->next_in != g->in)
        memmove(g->in, g->next_in, g->avail_in);
    g->next_in = g->in;
    before = g->avail_in;
    while (g->avail_in < g->in_cap) {
        ssize_t n;
        errno = 0;
        n = g->read(g->ctx, g->in + g->avail_in, g->in_cap - g->avail_in);
        if (n < 0) {
            g->in_err = 1;
            g->in_errno = errno;
            if (g->avail_in > before)
                return 1;
            return fill_in(g);
        }
        if (n == 0) {
            g->in_eof = 1;
            break;
        }
        g->avail_in += (size_t)n;
        g->in_read += (uint64_t)n;
    }
    return g->avail_in > before || g->avail_in == g->in_cap ? 1 : 0;
}

/* Make sure two bytes are buffered (or the input ended): enough to see the gzip magic. */
static int want_two(tl_gzip_source *g)
{
    while (g->avail_in < 2)
        if (fill_in(g) <= 0)
            return g->mode == M_ERROR ? -1 : 0;
    return 0;
}

static int at_magic(const tl_gzip_source *g)
{
    return g->avail_in >= 2 && g->next_in[0] == 0x1f && g->next_in[1] == 0x8b;
}

static int sniff(tl_gzip_source *g)
{
    if (want_two(g) < 0)
        return -1;
    if (!at_magic(g)) {
        g->mode = M_PLAIN;
        return 0;
    }
    if (dec_start(g) < 0) {
        fail(g, 0, "cannot start the gzip decoder", NULL);
        return -1;
    }
    g->is_gzip = 1;
    g->members = 1;
    g->mode = g->rmode = M_GZIP;
    return 0;
}

static ssize_t read_plain(tl_gzip_source *g, void *buf, size_t cap)
{
    ssize_t n;

    if (g->avail_in) { /* the sniffed bytes first */
        size_t k = g->avail_in < cap ? g->avail_in : cap;
        memcpy(buf, g->next_in, k);
        g->next_in += k;
        g->avail_in -= k;
        g->out_bytes += k;
        return (ssize_t)k;
    }
    if (g->in_err)
        return fail(g, g->in_read, "read error", g->in_errno ? strerror(g->in_errno) : NULL);
    if (g->in_eof)
        return 0;
    n = g->read(g->ctx, buf, cap);
    if (n < 0) {
        int err = errno;
        return fail(g, g->in_read, "read error", err ? strerror(err) : NULL);
    }
    g->in_read += (uint64_t)n;
    g->out_bytes += (uint64_t)n;
    return n;
}

/* After a member ended: another member, the end, or trailing bytes that are not gzip. */
static int next_member(tl_gzip_source *g)
{
    if (want_two(g) < 0)
        return -1;
    if (g->avail_in == 0) {
        g->mode = M_DONE;
        return 0;
    }
    if (!at_magic(g)) {
        g->trailing_garbage = 1; /* as gzip(1) does: ignored, but noted */
        g->mode = M_DONE;
        return 0;
    }
    dec_reset(g);
    g->members++;
    return 1;
}

/*
 * Decode at least one byte into dst[0..GZ_OUT_SIZE) (fewer only at the end, a member's end or
 * an error). The decoder always gets the same output space and fill_in() always fills the
 * input buffer, so the decoder's calls, and what it emits before a corrupt spot, are the same
 * however the caller and the inner source size their reads.
 */
static ssize_t decode_some(tl_gzip_source *g, unsigned char *dst)
{
    size_t produced = 0;
    int member_done = 0, stalled = 0;

    while (produced == 0 && g->mode == M_GZIP) {
        const char *why = NULL;
        size_t before, got = 0;
        int ret;

        if (member_done) {
            int r = next_member(g);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
            member_done = 0;
        }
        /* More input when none is left, or when the decoder could not use what is left (isa-l
		 * hands back the bytes of a symbol it could not finish). */
        if ((g->avail_in == 0 || stalled) && fill_in(g) < 0)
            return -1;
        /* Run the decoder even when the input has ended: it may still hold output. */
        before = g->avail_in;
        ret = dec_run(g, dst, GZ_OUT_SIZE, &got, &why);
        produced += got;
        g->in_bytes = g->in_read - g->avail_in;
        if (ret == DEC_MEMBER_END) {
            member_done = 1;
        } else if (ret == DEC_ERROR) {
            fail(g, g->in_bytes, "invalid gzip data", why);
            if (produced == 0)
                return -1;
            break; /* hand out what was decoded first; the next call reports the error */
        } else if (got == 0 && g->avail_in == before && g->in_eof) {
            /* no input left to give and nothing came out: the member is cut short */
            return fail(g, g->in_read, "gzip data ends early", "truncated input");
        } else if (got == 0 && g->avail_in == before && g->avail_in == g->in_cap) {
            /* a decoder that will not take a full buffer (cannot happen with either) */
            return fail(g, g->in_bytes, "invalid gzip data", "decoder stalled");
        } else {
            stalled = got == 0 && g->avail_in == before;
        }
    }
    if (member_done && produced > 0)
        next_member(g); /* a read error there shows on the next call: these bytes are good */
    return (ssize_t)produced;
}

/* memcpy() of decoded bytes in 16-byte moves. glibc copies blocks of this size with `rep
 * movsb`, which is as fast but which callgrind counts as one instruction per byte, and
 * instruction counts are bench/README.md's stable figures; this keeps them true to the cost.
 * (As a plain loop the compiler would turn it back into memcpy: hence no-tree-loop-distribute.) */
#if defined(__SSE2__) && defined(__GNUC__) && !defined(__clang__)
#include <emmintrin.h>
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void copy_out(unsigned char *dst,
                                                                                   const unsigned char *src, size_t n)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), a);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(dst + i + 48), d);
    }
    memcpy(dst + i, src + i, n - i);
}
#else
#define copy_out memcpy
#endif

/* ---------------------------------------------------------------------------------------- */
/* Chunks, and the helper thread that decodes them ahead of the reader                        */

/* Decode the next chunk into chunk[slot]: decode_some() and the decoder's mode after it. */
static void produce(tl_gzip_source *g, int slot)
{
    ssize_t n;

    if (!g->chunk[slot] && !(g->chunk[slot] = calloc(1, GZ_OUT_SIZE))) {
        fail(g, g->in_bytes, "out of memory", NULL);
        g->chunk_len[slot] = 0;
        g->chunk_mode[slot] = M_ERROR;
        return;
    }
    n = decode_some(g, g->chunk[slot]);
    g->chunk_len[slot] = n > 0 ? (size_t)n : 0;
    g->chunk_mode[slot] = n < 0 ? M_ERROR : g->mode;
}

/* The helper: chunk after chunk into the slots in turn, each once the reader gave it back,
 * until a chunk ends the input. Only the helper touches the decoder's fields while it runs;
 * the mutex orders its writes before the reader's reads of a chunk marked ready. */
/* The public fields the decoder sets, as they were after a chunk: when the reader stops before
 * the end, they are put back to those of the last chunk it took, as if it had decoded itself
 * (the helper may have decoded, and met a new member or damage, one chunk further). */
struct gz_state {
    uint64_t in_bytes, error_offset;
    unsigned members;
    int trailing_garbage;
    char error[sizeof((tl_gzip_source *)0)->error];
};

struct gz_bg {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready[TL_GZIP_CHUNKS]; /* decoded and not yet handed back by the reader */
    int stop, running;
    struct gz_state before, after[TL_GZIP_CHUNKS]; /* at the start, after each slot's chunk */
};

static void save_state(const tl_gzip_source *g, struct gz_state *st)
{
    st->in_bytes = g->in_bytes;
    st->error_offset = g->error_offset;
    st->members = g->members;
    st->trailing_garbage = g->trailing_garbage;
    memcpy(st->error, g->error, sizeof st->error);
}

static void load_state(tl_gzip_source *g, const struct gz_state *st)
{
    g->in_bytes = st->in_bytes;
    g->error_offset = st->error_offset;
    g->members = st->members;
    g->trailing_garbage = st->trailing_garbage;
    memcpy(g->error, st->error, sizeof g->error);
}

static void *bg_main(void *arg)
{
    tl_gzip_source *g = arg;
    struct gz_bg *b = g->bg;
    int slot = 0;

    for (;;) {
        pthread_mutex_lock(&b->mu);
        while (b->ready[slot] && !b->stop)
            pthread_cond_wait(&b->cv, &b->mu);
        if (b->stop) {
            pthread_mutex_unlock(&b->mu);
            break;
        }
        pthread_mutex_unlock(&b->mu);
        produce(g, slot);
        save_state(g, &b->after[slot]);
        pthread_mutex_lock(&b->mu);
        b->ready[slot] = 1;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        if (g->chunk_mode[slot] != M_GZIP)
            break;
        slot = (slot + 1) % TL_GZIP_CHUNKS;
    }
    return NULL;
}

/* Start the helper (when asked for; without a thread the reader decodes itself). */
static void bg_start(tl_gzip_source *g)
{
    struct gz_bg *b = calloc(1, sizeof *b);

    if (!b)
        return;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    save_state(g, &b->before);
    g->bg = b;
    if (pthread_create(&b->thread, NULL, bg_main, g) != 0) {
        pthread_cond_destroy(&b->cv);
        pthread_mutex_destroy(&b->mu);
        free(b);
        g->bg = NULL;
        return;
    }
    b->running = 1;
}

/* Wait for the helper to end (telling it to stop first); the decoder's fields are then the
 * reader's again. */
static void bg_stop(tl_gzip_source *g)
{
    struct gz_bg *b = g->bg;

    if (!b)
        return;
    if (b->running) {
        pthread_mutex_lock(&b->mu);
        b->stop = 1;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->thread, NULL);
        /* as the reader would have left them decoding itself */
        load_state(g, g->chunks_taken ? &b->after[(g->chunks_taken - 1) % TL_GZIP_CHUNKS] : &b->before);
    }
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
    g->bg = NULL;
}

void tl_gzip_source_finish(tl_gzip_source *g)
{
    bg_stop(g);
}

/* The next chunk for the reader, in chunk[slot]: decoded now, or waited for. */
static void take_chunk(tl_gzip_source *g, int slot)
{
    struct gz_bg *b = g->bg;

    if (!b) {
        produce(g, slot);
        return;
    }
    pthread_mutex_lock(&b->mu);
    while (!b->ready[slot])
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

/* The reader is done with chunk[slot]: the helper may decode into it again. */
static void give_back(tl_gzip_source *g, int slot)
{
    struct gz_bg *b = g->bg;

    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->ready[slot] = 0;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/*
 * Hand out decoded bytes, chunk by chunk. The decoder never writes into the caller's buffer:
 * on a corrupt member isa-l may count as output bytes it did not write (the tail of a bad
 * match), which then hold whatever was in the output space before. In the chunks (zeroed when
 * allocated, then only ever written by this decoder, in turn, in the same sequence of calls
 * whoever makes them) that is a function of the input alone; in the caller's buffer it
 * depended on the caller's read size and its earlier data (a fuzz finding: 890 warnings with
 * 1 MiB reads, 895 with 16 bytes). The copy costs about 1 ms per 100 MB of JSON, 3-4 % of
 * inflating alone. With `background`, a helper thread decodes the next chunk while the reader
 * parses this one (gzip ingest then takes about the time of plain ingest, on a spare core).
 */
static ssize_t read_gzip(tl_gzip_source *g, void *buf, size_t cap)
{
    size_t k;

    if (g->out_pos == g->out_len) {
        int slot = (int)(g->chunks_taken % TL_GZIP_CHUNKS);
        if (g->rmode != M_GZIP)
            return g->rmode == M_DONE ? 0 : -1;
        if (g->chunks_taken == 0 && g->background && !g->bg)
            bg_start(g);
        if (g->chunks_taken > 0)
            give_back(g, (slot + TL_GZIP_CHUNKS - 1) % TL_GZIP_CHUNKS);
        take_chunk(g, slot);
        g->chunks_taken++;
        g->out = g->chunk[slot];
        g->out_pos = 0;
        g->out_len = g->chunk_len[slot];
        g->rmode = g->chunk_mode[slot];
        if (g->rmode != M_GZIP)
            bg_stop(g); /* the helper ended with this chunk: its fields are final */
        if (g->out_len == 0)
            return g->rmode == M_DONE ? 0 : -1;
    }
    k = g->out_len - g->out_pos < cap ? g->out_len - g->out_pos : cap;
    copy_out(buf, g->out + g->out_pos, k);
    g->out_pos += k;
    g->out_bytes += k;
    if (g->max_output && g->out_bytes > g->max_output) {
        bg_stop(g);
        g->out_pos = g->out_len = 0;
        g->rmode = M_ERROR;
        return fail(g, g->in_bytes, "decompressed size exceeds the limit", NULL);
    }
    return (ssize_t)k;
}

ssize_t tl_gzip_source_read(void *ctx, void *buf, size_t cap)
{
    tl_gzip_source *g = ctx;

    if (g->is_gzip) /* bytes decoded before an error or the end go out first */
        return read_gzip(g, buf, cap);
    if (g->mode == M_SNIFF && sniff(g) < 0)
        return -1;
    if (g->mode == M_PLAIN)
        return read_plain(g, buf, cap);
    if (g->is_gzip)
        return read_gzip(g, buf, cap);
    return g->mode == M_DONE ? 0 : -1;
}
