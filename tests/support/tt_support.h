/*
 * tt_support.h - the helpers every test program shares: reading and writing
 * files, directories, strings, numbers compared with a tolerance, and a
 * seeded random generator. One copy here instead of one per test file; every
 * unit test links it (tally_add_unit_test in tests/CMakeLists.txt).
 *
 * Functions that check something fail the current cmocka test on their own
 * (fail_msg), so they are for the test process. The tt_ prefix is the tests'
 * (collector_test_util.h uses it too); nothing here knows tally's own types.
 */
#ifndef TALLY_TT_SUPPORT_H
#define TALLY_TT_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The whole file as bytes, NUL-terminated (malloc'd; *len if not NULL), or
 * NULL when it cannot be read. */
char *tt_read_file(const char *path, size_t *len);
/* The same, but fails the test when the file cannot be read. */
char *tt_slurp(const char *path, size_t *len);
/* The whole file, gunzipped when it is gzip (plain files as they are), or NULL. */
char *tt_read_gunzip(const char *path, size_t *len);
/* Write text to path (fails the test on error). */
void tt_write_file(const char *path, const char *text);
/* rm -rf. */
void tt_rmtree(const char *path);
/* Does path exist? (lstat) */
int tt_exists(const char *path);
/* Entries of dir whose names contain needle ("" for all). */
int tt_count_files(const char *dir, const char *needle);
/* Lines of text that start with prefix. */
int tt_count_lines(const char *text, const char *prefix);
/* The file name part of path (borrowed). */
const char *tt_basename(const char *path);

/* Bytes in memory as a stream, read by tt_mem_read (the shape of ingest's
 * tl_read_fn): at most chunk bytes a call (0: as many as asked for), and with
 * fail_at_end a read error (-1, errno EIO) where the end would be. */
typedef struct tt_mem_src {
    const char *d;
    size_t n, pos, chunk;
    int fail_at_end;
} tt_mem_src;
ssize_t tt_mem_read(void *ctx, void *buf, size_t cap);

/* strdup that fails the test when out of memory. */
char *tt_xstrdup(const char *s);
/* Fail unless hay (may be NULL) contains needle; what names hay in the
 * message (NULL: unnamed). */
void tt_assert_contains(const char *hay, const char *needle, const char *what);
/* Fail unless got is within relative error rel of want (absolute when want is
 * 0; rel 0 asks for equality). NaN never passes. */
void tt_assert_close(double got, double want, double rel);

/* CLOCK_MONOTONIC in seconds. */
double tt_now_s(void);
/* splitmix64: the next number of the sequence in *state (seed it by setting
 * *state). Deterministic, so a failing case can be replayed. */
uint64_t tt_splitmix64(uint64_t *state);

#endif
