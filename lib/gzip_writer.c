/*
 * gzip_writer.c - the gzip stream of the trace (*.trace.json.gz), between
 * the JSON writer and the output file.
 *
 * The one idea: the trace is written once, at exit, while the program (and
 * torchrun or Slurm behind it) waits, so compression must cost less than
 * formatting. zlib's default level 6 took 920 ms for 10^6 events, 4.6x the
 * plain write; isa-l's igzip at level 1 compresses the same text several
 * times faster than zlib's own level 1 and about as small. libtally uses
 * isa-l where it was built with it (Debian libisal-dev, TALLY_HAVE_ISAL),
 * else zlib at level 1; TALLY_GZIP_ENCODER=zlib picks zlib in a build with
 * both (to compare them). Either writes one ordinary gzip member, which
 * gzip -t, Python's gzip and tally read.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef TALLY_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* Compressed bytes handed to the output at once. */
#define TL_GZIP_OUT_BUFFER (256 * 1024)
/* zlib's level where isa-l is absent (or not chosen). */
#define TL_GZIP_ZLIB_LEVEL 1

struct tl_gzip {
    tl_output *out;
    int use_isal;
    int failed;
    z_stream z;
#ifdef TALLY_HAVE_ISAL
    struct isal_zstream *isal;
    uint8_t *level_buf;
#endif
    unsigned char buf[TL_GZIP_OUT_BUFFER];
};

static int use_isal(void)
{
#ifdef TALLY_HAVE_ISAL
    const char *e = getenv("TALLY_GZIP_ENCODER");
    return !(e != NULL && strcmp(e, "zlib") == 0);
#else
    return 0;
#endif
}

const char *tl_gzip_method(void)
{
    return use_isal() ? "isa-l level 1" : "zlib level 1";
}

tl_gzip *tl_gzip_open(tl_output *out)
{
    tl_gzip *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->out = out;
    g->use_isal = use_isal();
#ifdef TALLY_HAVE_ISAL
    if (g->use_isal) {
        g->isal = malloc(sizeof *g->isal);
        g->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
        if (g->isal == NULL || g->level_buf == NULL)
            goto fail;
        isal_deflate_init(g->isal);
        g->isal->level = 1;
        g->isal->level_buf = g->level_buf;
        g->isal->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
        g->isal->gzip_flag = IGZIP_GZIP; /* a gzip header and trailer (CRC-32, size) */
        g->isal->flush = NO_FLUSH;
        return g;
    }
#endif
    /* windowBits 15 + 16: a gzip wrapper */
    if (deflateInit2(&g->z, TL_GZIP_ZLIB_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        goto fail;
    return g;
fail:
#ifdef TALLY_HAVE_ISAL
    free(g->isal);
    free(g->level_buf);
#endif
    free(g);
    return NULL;
}

/* Hand what is in buf to the output. */
static int drain(tl_gzip *g, size_t n)
{
    if (n > 0 && tl_output_write(g->out, g->buf, n) != 0)
        g->failed = 1;
    return g->failed ? -1 : 0;
}

/* Compress in[0, len) (finish: and end the stream). */
static int deflate_some(tl_gzip *g, const void *in, size_t len, int finish)
{
    if (g->failed)
        return -1;
#ifdef TALLY_HAVE_ISAL
    if (g->use_isal) {
        struct isal_zstream *s = g->isal;
        do {
            uint32_t chunk = len > (1u << 30) ? (1u << 30) : (uint32_t)len;
            s->next_in = (uint8_t *)(uintptr_t)in;
            s->avail_in = chunk;
            s->end_of_stream = finish && chunk == len;
            in = (const char *)in + chunk;
            len -= chunk;
            do {
                s->next_out = g->buf;
                s->avail_out = sizeof g->buf;
                if (isal_deflate(s) != COMP_OK) {
                    errno = EIO;
                    g->failed = 1;
                    return -1;
                }
                if (drain(g, sizeof g->buf - s->avail_out) != 0)
                    return -1;
            } while (s->avail_in > 0 || s->avail_out == 0 ||
                     (s->end_of_stream && s->internal_state.state != ZSTATE_END));
        } while (len > 0);
        return 0;
    }
#endif
    z_stream *z = &g->z;
    do {
        uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
        int flush = finish && chunk == len ? Z_FINISH : Z_NO_FLUSH;
        z->next_in = (Bytef *)(uintptr_t)in;
        z->avail_in = chunk;
        in = (const char *)in + chunk;
        len -= chunk;
        int rc;
        do {
            z->next_out = g->buf;
            z->avail_out = sizeof g->buf;
            rc = deflate(z, flush);
            if (rc == Z_STREAM_ERROR) {
                errno = EIO;
                g->failed = 1;
                return -1;
            }
            if (drain(g, sizeof g->buf - z->avail_out) != 0)
                return -1;
        } while (z->avail_in > 0 || z->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    } while (len > 0);
    return 0;
}

int tl_gzip_write(void *ctx, const void *buf, size_t len)
{
    return len > 0 ? deflate_some(ctx, buf, len, 0) : 0;
}

int tl_gzip_finish(tl_gzip *g)
{
    return deflate_some(g, "", 0, 1);
}

void tl_gzip_free(tl_gzip *g)
{
    if (g == NULL)
        return;
#ifdef TALLY_HAVE_ISAL
    if (g->use_isal) {
        free(g->isal);
        free(g->level_buf);
        free(g);
        return;
    }
#endif
    deflateEnd(&g->z);
    free(g);
}
