/*
 * read_nsys.h - Nsight Systems' SQLite export (`nsys export --type sqlite`)
 * into a per-rank profile.
 *
 * The one idea: the export's tables hold the same CUPTI activity records and
 * NVTX ranges that a PyTorch profiler trace writes as Chrome trace events, so
 * each row is turned into the event Kineto would have written for it and
 * streamed, in start order, through the trace reader (read_trace.h). Every
 * analysis of a Kineto trace -- GPU breakdown, launch delays through the
 * correlation ids, nesting, steps, collectives -- then applies unchanged, and
 * an nsys export and a Kineto trace of one run give the same numbers.
 * docs/inputs.md ("Nsight Systems") lists the tables and columns read and
 * what each row becomes.
 *
 * A file is an SQLite database by its first 16 bytes, never by its name. The
 * database is opened read-only (immutable: nothing is ever written beside
 * it); a database inside an archive, compressed, or on stdin is read into
 * memory first, up to TL_NSYS_MAX_MEMORY_BYTES. Only tables (not views or
 * triggers) are queried, so a hostile file cannot run code of its own.
 *
 * Built without SQLite (libsqlite3-dev missing at configure time), the
 * reader skips such a file with a message that says so.
 */
#ifndef TALLY_INGEST_READ_NSYS_H
#define TALLY_INGEST_READ_NSYS_H

#include <stddef.h>

#include "profile.h"
#include "trace_stream.h"

/* An export that is not a regular file (an archive member, gzip, stdin) is
 * read into memory; larger ones are refused with a message to extract them. */
#define TL_NSYS_MAX_MEMORY_BYTES ((size_t)2 << 30)

/* 1 when b[0..n) starts with SQLite's file header ("SQLite format 3\0"). */
int tl_bytes_are_sqlite(const unsigned char *b, size_t n);

/* 1 when the name is an Nsight Systems report (.nsys-rep, or .qdrep before
 * 2021.4): a binary tally cannot read, whose SQLite export it can. */
int tl_nsys_report_name(const char *name);
/* What to tell the user about such a report (a static text). */
extern const char tl_nsys_report_advice[];

/* Read an nsys SQLite export into p (initialized by the caller). path is a
 * regular file that may be opened by name, or NULL: then the database is
 * what read(ctx) returns, from its first byte. Sets the format (TL_FMT_NSYS),
 * counts and warnings; a file that is not an nsys export (no CUDA or NVTX
 * table) or cannot be opened is skipped with the reason. Returns 0, or -1
 * on a fatal error (p->error set). */
int tl_read_nsys(tl_profile *p, const char *path, tl_read_fn read, void *ctx);

#endif
