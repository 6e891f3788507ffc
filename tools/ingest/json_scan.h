/*
 * json_scan: the structural index of a JSON text, 64 bytes at a time (simdjson's stage 1).
 *
 * For a byte range that starts outside any string, it lists the offsets of every byte a JSON
 * walker has to look at, in order: the structural characters { } [ ] : , outside strings, the
 * opening quote of every string (one entry per string: its content ends at the last quote
 * before the next entry, since only whitespace can come between), the first byte of every
 * bare token (number, true, false, null, or junk), the first byte of a token that is not a
 * decimal digit but follows one (so a token that starts with a digit and has no entry of its
 * own after that is all digits: a number a walker can take without reading it), and every
 * "odd" byte: a backslash, a byte >= 0x80, or a control byte other than whitespace outside
 * strings. A walker that finds an odd entry (or anything else it does not expect) hands the
 * item to a careful byte parser, which gives the exact warnings and errors; everything else it
 * walks from the index alone, so string contents and whitespace are never looked at byte by
 * byte.
 *
 * The one idea: per 64-byte block, vector compares (SSE2) or two byte shuffles on the nibbles
 * (AVX2, simdjson's classification) give bitmasks of quotes, backslashes and the other
 * classes; quotes escaped by an odd run of backslashes are removed with carry arithmetic (only
 * in blocks with a backslash); the in-string mask is the prefix xor of the quote mask (a
 * carry-less multiply by all ones with PCLMUL, a shift cascade without); the entries are the
 * set bits of the union. SSE2 is the baseline; AVX-512 (F and BW), AVX2 and PCLMUL are used
 * when the CPU has them (chosen once, at run time). Cost, AVX2: about 1.3 instructions per input
 * byte plus about 7 per entry (3.5 per byte on Kineto traces, one entry per 4.4 bytes); AVX-512
 * classifies 64 bytes in one register and writes the entries by compress (vpcompressd), four
 * stores a block whatever their number.
 *
 * Thread-safety: pure functions; the one-time CPU choice is idempotent.
 */
#ifndef TALLY_INGEST_JSON_SCAN_H
#define TALLY_INGEST_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Bytes per block: every call covers whole blocks (the last one padded with spaces). */
#define TL_JSON_SCAN_BLOCK 64

/*
 * Index `text[0..len)`, which must start outside a string and be shorter than 4 GiB. Writes
 * entry offsets (relative to `text`) to `out`, at most `max_out` of them: indexing stops before
 * a block whose entries might not fit (a block has at most 64). Returns the number of entries;
 * *scanned is how many bytes the entries cover (a multiple of 64, or `len` at the end), so an
 * offset >= *scanned was not looked at. `max_out` must be at least 64.
 */
size_t tl_json_scan_index(const char *text, size_t len, uint32_t *out, size_t max_out, size_t *scanned);

/* The instruction set the indexer uses on this CPU: "avx512+pclmul", "avx2+pclmul",
 * "sse2+pclmul", "sse2" or "scalar" (TALLY_JSON_SCAN=<name> asks for a lower one). */
const char *tl_json_scan_isa(void);

/* tl_json_scan_index() with a named instruction set (see tl_json_scan_isa()), for tests that
 * compare them; returns (size_t)-1 when this CPU cannot run it. */
size_t tl_json_scan_index_as(const char *isa, const char *text, size_t len, uint32_t *out, size_t max_out,
                             size_t *scanned);

#endif
