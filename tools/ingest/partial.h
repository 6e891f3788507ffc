/*
 * partial.h - the partial aggregate format and its reader: the session
 * results of some inputs, as `tally aggregate --partial`, `tally merge` and
 * tally-mpi write them (schema/tally-partial.schema.json); an aggregate
 * carries the same list under "sessions" and reads the same way.
 *
 * The one idea: the format is data. One table of fields per struct (its JSON
 * key, type, member offset, range or enum names, and whether older partials
 * may lack it, with the value then) drives both the writer, render's
 * partial_json.c, and the reader here; a nested array that a table cannot
 * say (sparse histograms, timeline bins, call trees) is a field of type
 * TL_F_CUSTOM written and read by a small dedicated pair of functions, one
 * on each side, named by the same id. A field is added in one place.
 *
 * A partial is a file anybody can hand us, so it is input like any trace and
 * read here, in ingest, into session results (session.h); analyze takes them
 * (tl_aggregate_add_partial). Every number is range-checked before it is
 * believed: a hostile document is an error naming the field and where it
 * is, never an overflow in the analysis.
 */
#ifndef TALLY_PARTIAL_H
#define TALLY_PARTIAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* The version a partial is written in: 2 writes enums by name; version 1
 * (their integers) reads too. An aggregate's "sessions" are written the same
 * way under the aggregate's own version, 1. */
#define TL_PARTIAL_VERSION 2

/* The ranges a partial's numbers must lie in. Durations and sums of them are
 * at most TL_PARTIAL_MAX_NS; timestamps lie within +-TL_PARTIAL_MAX_TS
 * (differences of two fit an int64), with INT64_MIN / INT64_MAX allowed
 * where the writer uses them for "unknown" / "no window". */
#define TL_PARTIAL_MAX_NS 1000000000000000000LL /* 1e18 ns: 31 years */
#define TL_PARTIAL_MAX_TS 4000000000000000000LL /* 4e18 ns: year 2096 */
#define TL_PARTIAL_MAX_RANK 100000000           /* ranks and world sizes */
#define TL_PARTIAL_MAX_COUNT (1LL << 53)        /* event counts (exact in a double) */

/* ---- the format, as data --------------------------------------------------- */

enum tl_field_type {
    TL_F_STR,      /* char *: a string */
    TL_F_STR_NULL, /* char *: a string, or null for NULL */
    TL_F_STR_BUF,  /* char[size]: a string, cut to the buffer */
    TL_F_INT,      /* an integer in [lo, hi] */
    TL_F_TS,       /* a timestamp: within +-TL_PARTIAL_MAX_TS, or INT64_MIN / INT64_MAX */
    TL_F_TS_NULL,  /* a timestamp, or null for INT64_MIN (unknown) */
    TL_F_NUM,      /* a double, or null for NaN (any value that is not finite) */
    TL_F_ENUM,     /* an int in [lo, hi], written by its name (name()); with
                        * TL_FF_ENUM_INT the integer of older partials reads too */
    TL_F_STRINGS,  /* char **: an array of strings, their number at count */
    TL_F_OBJECT,   /* a struct member: an object of sub's fields */
    TL_F_ARRAY,    /* a pointer to count elements of sub: objects, or
                        * arrays of sub's fields in order when sub->tuple */
    TL_F_CUSTOM,   /* a dedicated pair of functions (custom: tl_field_custom) */
};

/* How the C member is stored. */
enum tl_field_ctype { TL_C_INT, TL_C_I64, TL_C_U64, TL_C_U32, TL_C_U8, TL_C_DOUBLE, TL_C_PTR, TL_C_CHARS };

#define TL_FF_OPTIONAL                                                                                                 \
    0x1u                     /* absent in partials of an older tally: reads as def (NUM: NaN,
                              * STR_NULL: NULL, TS_NULL: INT64_MIN, arrays: none, objects:
                              * as tl_session_init leaves them); in a tuple, only at its end */
#define TL_FF_ENUM_INT 0x2u  /* TL_F_ENUM: older partials wrote the integer */
#define TL_FF_PRESENCE 0x4u  /* the object is written as null when every field so marked is 0 */
#define TL_FF_NULLABLE 0x8u  /* TL_F_OBJECT: null reads as absent */
#define TL_FF_POSITIVE 0x10u /* TL_F_NUM: written as null unless > 0 (0 means unknown) */
#define TL_FF_OMIT_EMPTY                                                                                               \
    0x20u /* TL_F_ARRAY (optional): not written when empty; TL_F_INT
                              * (optional, not in a tuple): not written when it is def; so
                              * partials without it keep their bytes */

/* The nested arrays a table does not say. */
enum tl_field_custom {
    TL_FC_STAT_HIST,       /* tl_dur_stat: "hist": [[bucket, count]], bucket = page * 64 + slot */
    TL_FC_STAT_SAMPLES,    /* tl_dur_stat: "samples": [ns], at most TL_PROFILE_MAX_SAMPLES */
    TL_FC_GPU_BY_MASK,     /* tl_gpu_breakdown: "by_mask": 8 times (ns), by kernel-type mask */
    TL_FC_LANE_BUSY,       /* tl_lane: "busy": per kernel type, [] or TL_TIMELINE_BINS fractions */
    TL_FC_LANE_CALLS,      /* tl_lane: "calls": [[ts, dur, row, name id]] and "calls_left";
                            * CPU lanes, written when there are any */
    TL_FC_TIMELINE_NAMES,  /* tl_timeline: "names" of the lanes' calls, written when any */
    TL_FC_SERIES_BINS,     /* tl_tseries: "bins": [[min, mean, max] | null] */
    TL_FC_CALLTREE,        /* tl_session: "calltree": {"dropped", "names", "nodes":
                            * [[parent | -1, name id, incl, self, count]]}, written when any */
    TL_FC_PROBLEMS,        /* tl_session: "warnings": the text of each of its problems, in order
                            * (their kinds follow from the identity: tl_identity_kinds_from_words) */
    TL_FC_PROBLEM_OFFSETS, /* tl_session: "offsets": [[index into "warnings", byte]] of the
                            * problems that name a byte of the input; written when any */
    TL_FC_COUNT
};

/* What the reader checks of a struct once its fields are read (relations a
 * range cannot say). */
enum tl_field_check { TL_FK_NONE, TL_FK_STAT, TL_FK_TIMELINE, TL_FK_DIFFUSION, TL_FK_SESSION };

struct tl_fields;

typedef struct tl_field {
    const char *key;             /* the JSON key; in a tuple, what the position holds */
    unsigned char type;          /* tl_field_type */
    unsigned char ctype;         /* tl_field_ctype */
    unsigned short flags;        /* TL_FF_* */
    size_t offset;               /* of the member in its struct */
    size_t size;                 /* TL_F_STR_BUF: the buffer's size */
    int64_t lo, hi;              /* TL_F_INT, TL_F_ENUM: the range */
    const char *lo_key, *hi_key; /* ... or a bound that is an earlier field of the same struct */
    int64_t def;                 /* TL_FF_OPTIONAL integers: the value when absent */
    const char *(*name)(int);    /* TL_F_ENUM: a value's name (NULL out of range) */
    const struct tl_fields *sub; /* TL_F_OBJECT, TL_F_ARRAY: the element's fields */
    size_t count;                /* TL_F_ARRAY, TL_F_STRINGS: offset of the size_t count */
    size_t max;                  /* ... at most this many (0: no limit) */
    const char *max_key;         /* ... and at most this earlier field's value */
    int custom;                  /* TL_F_CUSTOM: tl_field_custom */
} tl_field;

typedef struct tl_fields {
    const char *what; /* the struct, for messages and tests */
    const tl_field *f;
    size_t n;
    size_t size; /* sizeof the struct (array elements) */
    int tuple;   /* written as an array of the fields' values in order */
    int check;   /* tl_field_check */
} tl_fields;

/* The integer member f of the struct at base, whatever its C type (the writer and
 * the reader both read members this way). */
int64_t tl_field_int(const void *base, const tl_field *f);
/* Set it (v within the field's range, so it fits the member: the readers check
 * first), and a pointer member at offset: the JSON reader and tally-mpi's wire. */
void tl_field_set_int(void *base, const tl_field *f, int64_t v);
void tl_field_set_ptr(void *base, size_t offset, void *v);

/* The session result (tl_session) and the partial's "options" (tl_partial's
 * whole_trace, as "window", kernel_wait_ns, kernel_classes and the read
 * bounds). */
extern const tl_fields tl_partial_session_fields;
/* The part of them that is a session's bulk (analyze/spill.h). */
extern const tl_fields tl_partial_session_bulk_fields;
extern const tl_fields tl_partial_options_fields;
/* "profiler-steps" (0) or "whole-trace" (1): the GPU window of tl_partial's whole_trace. */
const char *tl_partial_window_name(int whole_trace);

/* ---- reading ---------------------------------------------------------------- */

/* What a partial holds: how it was analyzed and its session results. */
typedef struct tl_partial {
    int has_options;        /* the document says how it was analyzed (else: unknown) */
    int whole_trace;        /* the GPU window: every GPU event, not the ProfilerSteps */
    int64_t kernel_wait_ns; /* the gap under which idle time is kernel_wait */
    char *kernel_classes;   /* the --kernel-class patterns (tl_kernel_classes_spec); NULL none */
    /* The read bounds (--max-names, --max-events, --max-input-size); 0: the
     * default (absent in partials of an older tally: they had no other). */
    uint32_t max_names;
    uint64_t max_events, max_input_bytes;
    tl_session *sessions; /* owned; taken by tl_aggregate_add_partial */
    size_t nsessions;
} tl_partial;

void tl_partial_init(tl_partial *p);
/* Free the sessions p still holds; p is empty again. */
void tl_partial_release(tl_partial *p);

/* Read the partial at path into p (initialized, empty). Returns 0, or -1
 * with err saying what is wrong with the file, naming the field and the
 * session; p is then empty. A finished aggregate (tl_aggregate_write)
 * carries its sessions too and reads the same way. */
int tl_partial_read(tl_partial *p, const char *path, char *err, size_t errlen);
/* The same from a document in memory (tally-mpi's messages). */
int tl_partial_read_buffer(tl_partial *p, const char *buf, size_t len, char *err, size_t errlen);
/* The same from a parsed document (ingest recognized it). */
int tl_partial_read_json(tl_partial *p, const json_t *root, char *err, size_t errlen);
/* ---- the wire (partial_wire.c) ----------------------------------------------------
 * Session results as bytes between the processes of one tally-mpi job: the
 * same tables walked in the same order, each value as its raw bits (no text
 * formatted or parsed). Read only by the binary that wrote it, in the same
 * job; bounded by the buffer, not range-checked like a partial file. */
typedef struct tl_wire {
    char *p;
    size_t len, cap;
    int oom;
    int measure; /* count the bytes (len), write none */
} tl_wire;
/* Append the options (tl_partial_options_fields of options, a tl_partial
 * used as their view) and n sessions to w (zeroed
 * first, or holding earlier bytes). 0, or -1 when out of memory or when a
 * session's bulk is on disk (analyze/spill.h: hold it first). */
int tl_partial_wire_pack(tl_wire *w, const tl_partial *options, const tl_session *s, size_t n);
/* What tl_partial_wire_pack wrote, into p (initialized, empty); -1 with err
 * when the bytes end early, do not read back or memory runs out. */
int tl_partial_wire_unpack(tl_partial *p, const char *buf, size_t len, char *err, size_t errlen);
/* A session's bulk alone (tl_partial_session_bulk_fields), appended to w; 0,
 * or -1 when out of memory. */
int tl_partial_wire_pack_bulk(tl_wire *w, const tl_session *s);
/* The bytes tl_partial_wire_pack_bulk would write for s (a walk, no copy): about what its
 * bulk takes in memory. */
size_t tl_partial_wire_bulk_size(const tl_session *s);
/* ... read back into s (tl_session_init'ed, empty) and compacted as a read
 * session is; 0, or -1 with err as above. */
int tl_partial_wire_unpack_bulk(tl_session *s, const char *buf, size_t len, char *err, size_t errlen);

/* Is root a document tl_partial_read_json takes (a partial, or an aggregate
 * with its sessions)? */
int tl_partial_is_document(const json_t *root);

#endif
