/*
 * report_readers.h - readers of the three report formats: tally's own report
 * (schema/tally-report.schema.json), FramePack's profiling_report.json and
 * Inferix's per-rank profiling report. Each fills a tl_profile (profile.h).
 *
 * Reports are small documents (KB to a few MB), so unlike traces they are
 * loaded whole with jansson's DOM. The one idea: a report is a summary made by
 * someone else, so every number is checked before it is believed. A number
 * that is missing, of the wrong type, negative, or out of range gives a
 * warning naming its JSON path ("timing_stats.vae_decode.total: expected a
 * number >= 0, got a string") and the entry holding it is skipped; the rest of
 * the document is still read. Units are converted once, here: seconds and
 * milliseconds to int64 ns (llround of value * 1e9), MB to bytes as MiB
 * (FramePack divides torch's byte counts by 1024**2, Inferix reads NVML's
 * bytes // 1024**2).
 *
 * Every string from the input goes through the profile's string table. The
 * readers set p->format; they never set p->skipped or p->error: what a -1
 * means for the run (skip the file, fail under --strict) is the caller's call.
 *
 * Thread-safety: the readers share no state; one profile per thread.
 */
#ifndef TALLY_INGEST_REPORT_READERS_H
#define TALLY_INGEST_REPORT_READERS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "profile.h"

/* Larger documents are refused: a report this big is not a report. */
#define TL_REPORT_MAX_BYTES ((size_t)256 << 20)
/* Deeper nesting is refused before jansson sees the document. */
#define TL_REPORT_MAX_DEPTH 512
/* At most this many (category, name) statistics are taken from one report. */
#define TL_REPORT_MAX_NAMES (1u << 20)

/*
 * Parse a whole document (buf, len) already read into memory and fill p
 * (initialized by the caller with tl_profile_init(p, display_name)). Return
 * 0, or -1 when the document is not valid for this format: not JSON (the
 * warning gives jansson's text and the line, column and byte position), too
 * large or too deep, not this format (the warning says what it is), or an
 * unsupported version. Entries with bad numbers are skipped with a warning
 * and do not make the result -1; what could be read is kept either way.
 * Cost: one DOM of the document (jansson uses a few times its size).
 */
int tl_read_tally_report(tl_profile *p, const char *buf, size_t len);
int tl_read_framepack(tl_profile *p, const char *buf, size_t len);
int tl_read_inferix(tl_profile *p, const char *buf, size_t len);

/*
 * Parse once, decide the format with tl_report_kind() and call the matching
 * reader. When the document is none of the three, adds the warning
 * "not a profile: <why>", sets p->skipped and returns -1.
 */
int tl_read_report(tl_profile *p, const char *buf, size_t len);

/*
 * Given an already-parsed top-level value, which of the report formats is
 * it? Returns TL_FMT_TALLY_REPORT, TL_FMT_FRAMEPACK, TL_FMT_INFERIX or
 * TL_FMT_UNKNOWN. When it is not a profile, `why` (if not NULL) receives a
 * short description of what it is, e.g. "Inferix raw profiling dump
 * (session_id, gpu_data, cpu_data)" or "JSON object with keys: a, b, c", so
 * the caller can skip it with a warning that says what it is; otherwise `why`
 * is set to "". Key names quoted in `why` have control bytes replaced by '?'.
 */
int tl_report_kind(const json_t *root, char *why, size_t whylen);

/* The same readers on a document already parsed (root is borrowed). */
int tl_read_tally_report_json(tl_profile *p, const json_t *root);
int tl_read_framepack_json(tl_profile *p, const json_t *root);
/* FramePack's memory_log.json (its snapshots, as a memory series too):
 * doc[0..len). 0, or -1 when it is not one (a warning says why). */
int tl_read_framepack_memlog(tl_profile *p, const char *doc, size_t len);
/* The name FramePack's MemoryTracker.export_json is called with. */
int tl_framepack_memlog_name(const char *path);
int tl_read_inferix_json(tl_profile *p, const json_t *root);

/* ---- helpers shared by the three readers (report_common.c) -------------
 * Not for other modules: they exist so that the three readers check numbers
 * and word their warnings the same way. */

/* Load buf as JSON into *root (the caller json_decref()s it). Skips a UTF-8
 * BOM; reads Python's NaN/Infinity/-Infinity literals as null with one
 * warning; refuses documents over TL_REPORT_MAX_BYTES or nested deeper than
 * TL_REPORT_MAX_DEPTH; warns on duplicate keys (the last one wins, as in
 * Python). 0, or -1 with a warning naming the position: line and column as
 * jansson counts them (1-based, columns in characters) and the 0-based byte
 * offset of the offending byte in buf. */
int tl_readers_load(tl_profile *p, const char *buf, size_t len, json_t **root);

/* 0 when root is of `format` (sets p->format), else -1 with the warning
 * "not <what>: <why>" (report_kind.c). */
int tl_readers_expect(tl_profile *p, const json_t *root, int format, const char *what);

/* Copy src[0..n) into out (size bytes) for a message: control bytes become
 * '?', and a text longer than max is cut (at a UTF-8 character boundary) and
 * marked "...". */
void tl_readers_clean_copy(char *out, size_t size, const char *src, size_t n, size_t max);
/* Write "prefix.key" (or just key when prefix is empty) into out, with control
 * bytes replaced by '?' and a long key shortened; returns out. */
const char *tl_readers_path(char *out, size_t size, const char *prefix, const char *key);
/* Write "prefix[i]" into out; returns out. */
const char *tl_readers_index(char *out, size_t size, const char *prefix, size_t i);

/* "an object", "a string", "null", ... for messages. */
const char *tl_readers_type(const json_t *v);

/* Flags of the getters below. */
enum {
    TL_RD_OPTIONAL = 1, /* absent is fine: return 1 without a warning */
    TL_RD_NULLABLE = 2, /* null is fine: return 1 without a warning */
    TL_RD_SIGNED = 4,   /* negative numbers are fine */
};

/* The number obj[key], path naming obj. Returns 0 with *out set; 1 when the
 * value is absent or null and the flags allow it (*out = NAN); -1 with a
 * warning ("path.key: expected a number >= 0, got a string") otherwise.
 * obj may be NULL (a parent that was missing, already reported): then 1 or
 * -1 as for an absent value, without a warning. The same holds for all the
 * getters. */
int tl_readers_number(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, double *out);
/* An integer in [min, max] (a real with an integral value is accepted). */
int tl_readers_int(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, int64_t min,
                   int64_t max, int64_t *out);
/* A duration or time >= 0 in units of `scale` ns (1e9 for seconds, 1e6 for
 * ms, 1 for ns) as int64 ns: llround(value * scale), refused when it would
 * not fit. On 1 (absent/null allowed), *out = INT64_MIN. */
int tl_readers_ns(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, double scale,
                  int64_t *out);
/* A string (borrowed from the DOM, with its length). */
int tl_readers_string(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags, const char **s,
                      size_t *len);
/* obj[key] as an object / an array, or NULL (with a warning unless absent or
 * null is allowed by the flags). */
const json_t *tl_readers_object(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags);
const json_t *tl_readers_array(tl_profile *p, const json_t *obj, const char *path, const char *key, int flags);

/* A statistic built from a report's summary numbers (from_summary = 1):
 * count/total/min/max (ns) and mean (ns, not rounded); median/p95/std NaN
 * when unknown. Inconsistent numbers (min > max; mean, median or p95 outside
 * [min, max]) are refused with a warning: one of them is wrong. When std is known, d.m2 is set to std^2 * (count - 1) so that
 * merging such statistics (Chan et al.) keeps the right variance. Returns the
 * stat, or NULL with a warning (path names the entry) when (cat, name)
 * already has data, the name table is full, or memory ran out. */
tl_name_stat *tl_readers_summary_stat(tl_profile *p, const char *path, const char *cat, const char *name,
                                      size_t name_len, uint64_t count, int64_t total, int64_t min, int64_t max,
                                      double mean, double median, double p95, double std);
/* Room for another stat? Warns once per profile when TL_REPORT_MAX_NAMES is reached. */
int tl_readers_names_left(tl_profile *p);

/* A JSON value as text for a table (the caller frees it; NULL out of
 * memory): a string as itself, anything else as compact JSON. */
char *tl_readers_text(const json_t *v);
/* Every key of a tags object as a tag of p (values as tl_readers_text). */
void tl_readers_tags(tl_profile *p, const json_t *tags);

/* Add (or update, same id) a device; total_memory in bytes. 0 or -1. */
int tl_readers_add_device(tl_profile *p, int64_t id, const char *name, size_t name_len, double total_memory);

#endif
