/*
 * gzip_source: a tl_read_fn that decompresses gzip on the fly, sniffed from the bytes.
 *
 * It wraps another tl_read_fn (a file, an archive member) and looks at the first two bytes:
 * with the gzip magic (1f 8b) it inflates, otherwise it passes the bytes through unchanged, so
 * callers wrap every input in one without trusting file names. Multi-member gzip (what
 * `cat a.gz b.gz` and parallel compressors write) is read as one stream. A truncated or corrupt
 * gzip ends with a read error whose text names the compressed offset; every byte decoded
 * before that point has already been delivered, so a trace reader keeps the events before it.
 *
 * Thread-safety: one source per thread at a time.
 */
#ifndef TALLY_INGEST_GZIP_SOURCE_H
#define TALLY_INGEST_GZIP_SOURCE_H

#include "ingest/trace_stream.h"

#include <stdint.h>
#include <zlib.h>

typedef struct tl_gzip_source {
	int is_gzip;               /* known after the first read: the input had the gzip magic */
	unsigned members;          /* gzip members started so far */
	int trailing_garbage;      /* bytes after the last member that are not a gzip member */
	uint64_t in_bytes;         /* compressed bytes consumed by the decoder */
	uint64_t out_bytes;        /* bytes handed out */
	uint64_t max_output;       /* 0 = no limit; else an error past this many output bytes */
	char error[200];           /* why the last read failed; "" when none */
	uint64_t error_offset;     /* compressed offset of that failure */

	/* private */
	tl_read_fn read;
	void *ctx;
	z_stream zs;
	int z_ready, mode, in_eof;
	unsigned char *in;
	size_t in_cap;
	uint64_t in_read; /* bytes taken from the inner source */
} tl_gzip_source;

/* Prepare `g` to read from `read(ctx, ...)`. Allocates a 64 KiB input buffer; nothing is read
 * yet. Returns 0 or -1 (out of memory). Release with tl_gzip_source_release() either way. */
int tl_gzip_source_init(tl_gzip_source *g, tl_read_fn read, void *ctx);

/* The tl_read_fn: `ctx` is a tl_gzip_source. Returns bytes (decompressed or passed through),
 * 0 at the end, or -1 with g->error and g->error_offset set. */
ssize_t tl_gzip_source_read(void *ctx, void *buf, size_t cap);

/* Free the decoder and buffer. */
void tl_gzip_source_release(tl_gzip_source *g);

#endif
