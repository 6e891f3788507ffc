/*
 * gzip_source: a tl_read_fn that decompresses gzip on the fly, sniffed from the bytes.
 *
 * It wraps another tl_read_fn (a file, an archive member) and looks at the first two bytes:
 * with the gzip magic (1f 8b) it inflates, otherwise it passes the bytes through unchanged, so
 * callers wrap every input in one without trusting file names. Multi-member gzip (what
 * `cat a.gz b.gz` and parallel compressors write) is read as one stream. A truncated or corrupt
 * gzip ends with a read error whose text names the compressed offset; every byte decoded
 * before that point has already been delivered, so a trace reader keeps the events before it.
 * How the caller sizes its reads never changes the bytes delivered or the error.
 *
 * The decoder is isa-l's igzip (about 3-8x zlib's speed) when the build found libisal, else
 * zlib; with isa-l built in, TALLY_GZIP_DECODER=zlib in the environment selects zlib anyway
 * (for benchmarks and for comparing the two). tl_gzip_source_decoder() says which one runs.
 *
 * Thread-safety: one source per thread at a time.
 */
#ifndef TALLY_INGEST_GZIP_SOURCE_H
#define TALLY_INGEST_GZIP_SOURCE_H

#include "ingest/trace_stream.h"

#include <stdint.h>

/* Decoded chunks of 256 KiB the helper thread may be ahead of the reader, plus the one being
 * read: the trace stream takes about 1 MiB per fill, so the helper can decode the next one
 * while the stream parses. */
#define TL_GZIP_CHUNKS 6

typedef struct tl_gzip_source {
    int is_gzip;           /* known after the first read: the input had the gzip magic */
    unsigned members;      /* gzip members started so far */
    int trailing_garbage;  /* bytes after the last member that are not a gzip member */
    uint64_t in_bytes;     /* compressed bytes consumed by the decoder */
    uint64_t out_bytes;    /* bytes handed out */
    uint64_t max_output;   /* 0 = no limit; else an error past this many output bytes */
    int background;        /* set before the first read: inflate in a helper thread, one
	                              chunk ahead of the reader, when the inner source may be read
	                              from another thread (a file). The bytes are the same. */
    char error[200];       /* why the last read failed; "" when none */
    uint64_t error_offset; /* compressed offset of that failure */

    /* private */
    tl_read_fn read;
    void *ctx;
    void *dec;    /* the decoder's state (isa-l or zlib), allocated at the magic */
    int use_isal; /* which decoder `dec` is */
    int mode, in_eof, in_err, in_errno;
    unsigned char *in, *next_in; /* in[0..in_cap): next_in..+avail_in is unconsumed */
    size_t in_cap, avail_in;
    unsigned char *out; /* decoded bytes not yet handed out: out[out_pos..out_len) */
    size_t out_pos, out_len;
    uint64_t in_read; /* bytes taken from the inner source */
    /* Decoded chunks, filled in turn by the decoder (the helper thread or the reader) and
	 * handed out by the reader; chunk_mode is the decoder's mode after each. Each buffer is
	 * allocated, zeroed, when first used. */
    unsigned char *chunk[TL_GZIP_CHUNKS];
    size_t chunk_len[TL_GZIP_CHUNKS];
    int chunk_mode[TL_GZIP_CHUNKS];
    uint64_t chunks_taken;
    int rmode; /* the reader's mode: the last chunk's, M_ERROR on its own errors */
    void *bg;  /* the helper thread, when background */
} tl_gzip_source;

/* Prepare `g` to read from `read(ctx, ...)`. Allocates a 128 KiB input buffer; nothing is read
 * yet (the decoder's state, ~100 KiB for isa-l, is allocated when the gzip magic is seen). Returns 0 or -1 (out of memory). Release with tl_gzip_source_release() either way. */
int tl_gzip_source_init(tl_gzip_source *g, tl_read_fn read, void *ctx);

/* The tl_read_fn: `ctx` is a tl_gzip_source. Returns bytes (decompressed or passed through),
 * 0 at the end, or -1 with g->error and g->error_offset set. */
ssize_t tl_gzip_source_read(void *ctx, void *buf, size_t cap);

/* The reader is done, perhaps before the end: stop the helper thread if there is one, so that
 * the public fields (in_bytes, members, trailing_garbage, error) say what was read, as without
 * the thread. Needed before reading them unless a read returned 0 or -1. */
void tl_gzip_source_finish(tl_gzip_source *g);

/* Stop the helper thread if there is one; free the decoder and buffers. */
void tl_gzip_source_release(tl_gzip_source *g);

/* The decoder a gzip input is read with: "isa-l" or "zlib". */
const char *tl_gzip_source_decoder(void);

#endif
