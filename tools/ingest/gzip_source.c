/*
 * gzip_source: sniffing, multi-member gzip decompression behind a tl_read_fn (see the header).
 *
 * zlib's inflate stops at the end of each gzip member (Z_STREAM_END); if the next input bytes
 * are the gzip magic again, the decoder is reset and goes on, which is how multi-member files
 * read as one stream. Input that ends before a member's end is reported as truncation with the
 * compressed offset, after everything decoded up to there has been handed out.
 */
#include "ingest/gzip_source.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GZ_IN_SIZE (64u * 1024u)

enum { M_SNIFF, M_PLAIN, M_GZIP, M_DONE, M_ERROR };

int tl_gzip_source_init(tl_gzip_source *g, tl_read_fn read, void *ctx)
{
	memset(g, 0, sizeof *g);
	g->read = read;
	g->ctx = ctx;
	g->mode = M_SNIFF;
	g->in_cap = GZ_IN_SIZE;
	g->in = malloc(g->in_cap);
	g->zs.next_in = g->in;
	return g->in ? 0 : -1;
}

void tl_gzip_source_release(tl_gzip_source *g)
{
	if (g->z_ready)
		inflateEnd(&g->zs);
	free(g->in);
	g->in = NULL;
	g->z_ready = 0;
}

static ssize_t fail(tl_gzip_source *g, uint64_t offset, const char *what, const char *detail)
{
	g->mode = M_ERROR;
	g->error_offset = offset;
	snprintf(g->error, sizeof g->error, "%s at compressed offset %llu%s%s", what,
	         (unsigned long long)offset, detail ? ": " : "", detail ? detail : "");
	errno = 0; /* the text is in g->error, not in errno */
	return -1;
}

/* Append input behind the unconsumed bytes. Returns 1 when bytes came, 0 at the end, -1. */
static int fill_in(tl_gzip_source *g)
{
	ssize_t n;

	if (g->in_eof)
		return 0;
	if (g->zs.avail_in && g->zs.next_in != g->in)
		memmove(g->in, g->zs.next_in, g->zs.avail_in);
	g->zs.next_in = g->in;
	if (g->zs.avail_in == g->in_cap)
		return 1; /* full already */
	n = g->read(g->ctx, g->in + g->zs.avail_in, g->in_cap - g->zs.avail_in);
	if (n < 0) {
		int err = errno;
		fail(g, g->in_read, "read error", err ? strerror(err) : NULL);
		return -1;
	}
	if (n == 0) {
		g->in_eof = 1;
		return 0;
	}
	g->zs.avail_in += (uInt)n;
	g->in_read += (uint64_t)n;
	return 1;
}

/* Make sure two bytes are buffered (or the input ended): enough to see the gzip magic. */
static int want_two(tl_gzip_source *g)
{
	while (g->zs.avail_in < 2)
		if (fill_in(g) <= 0)
			return g->mode == M_ERROR ? -1 : 0;
	return 0;
}

static int at_magic(const tl_gzip_source *g)
{
	return g->zs.avail_in >= 2 && g->zs.next_in[0] == 0x1f && g->zs.next_in[1] == 0x8b;
}

static int sniff(tl_gzip_source *g)
{
	if (want_two(g) < 0)
		return -1;
	if (!at_magic(g)) {
		g->mode = M_PLAIN;
		return 0;
	}
	if (inflateInit2(&g->zs, 15 + 32) != Z_OK) { /* +32: gzip or zlib header, detected */
		fail(g, 0, "cannot start the gzip decoder", NULL);
		return -1;
	}
	g->z_ready = 1;
	g->is_gzip = 1;
	g->members = 1;
	g->mode = M_GZIP;
	return 0;
}

static ssize_t read_plain(tl_gzip_source *g, void *buf, size_t cap)
{
	ssize_t n;

	if (g->zs.avail_in) { /* the sniffed bytes first */
		size_t k = g->zs.avail_in < cap ? g->zs.avail_in : cap;
		memcpy(buf, g->zs.next_in, k);
		g->zs.next_in += k;
		g->zs.avail_in -= (uInt)k;
		g->out_bytes += k;
		return (ssize_t)k;
	}
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
	if (g->zs.avail_in == 0) {
		g->mode = M_DONE;
		return 0;
	}
	if (!at_magic(g)) {
		g->trailing_garbage = 1; /* as gzip(1) does: ignored, but noted */
		g->mode = M_DONE;
		return 0;
	}
	inflateReset(&g->zs);
	g->members++;
	return 1;
}

static ssize_t read_gzip(tl_gzip_source *g, void *buf, size_t cap)
{
	size_t produced = 0;
	int member_done = 0;

	if (cap > UINT_MAX / 2)
		cap = UINT_MAX / 2;
	while (produced == 0 && g->mode == M_GZIP) {
		int ret;

		if (member_done) {
			int r = next_member(g);
			if (r < 0)
				return -1;
			if (r == 0)
				break;
			member_done = 0;
		}
		if (g->zs.avail_in == 0 && fill_in(g) < 0)
			return -1;
		/* Inflate even when the input has ended: the decoder may still hold output (the rest
		 * of a match or a stored block) that a small `cap` left behind, and a truncated member
		 * must yield the same bytes however the caller sizes its reads. */
		g->zs.next_out = (Bytef *)buf + produced;
		g->zs.avail_out = (uInt)(cap - produced);
		ret = inflate(&g->zs, Z_NO_FLUSH);
		produced = cap - g->zs.avail_out;
		g->in_bytes = g->in_read - g->zs.avail_in;
		if (ret == Z_STREAM_END) {
			member_done = 1;
		} else if (produced == 0 && g->zs.avail_in == 0 && g->in_eof) {
			return fail(g, g->in_read, "gzip data ends early", "truncated input");
		} else if (ret != Z_OK && ret != Z_BUF_ERROR) {
			fail(g, g->in_bytes, "invalid gzip data", g->zs.msg ? g->zs.msg : "corrupt");
			if (produced == 0)
				return -1;
			break; /* hand out what was decoded first; the next call reports the error */
		}
	}
	if (member_done && produced > 0)
		next_member(g); /* a read error there shows on the next call: these bytes are good */
	g->out_bytes += produced;
	if (g->max_output && g->out_bytes > g->max_output)
		return fail(g, g->in_bytes, "decompressed size exceeds the limit", NULL);
	return (ssize_t)produced;
}

ssize_t tl_gzip_source_read(void *ctx, void *buf, size_t cap)
{
	tl_gzip_source *g = ctx;

	if (g->mode == M_SNIFF && sniff(g) < 0)
		return -1;
	switch (g->mode) {
	case M_PLAIN: return read_plain(g, buf, cap);
	case M_GZIP: return read_gzip(g, buf, cap);
	case M_DONE: return 0;
	default: return -1;
	}
}
