/*
 * trace_stream: read a Chrome Trace Event Format / PyTorch Kineto trace one event at a time.
 *
 * Traces can be hundreds of MB, so no DOM is ever built. The reader pulls bytes through a read
 * callback into one buffer and hands out each event of "traceEvents" as a struct of borrowed
 * views into that buffer: only the fields the analysis needs (name, ph, ts, dur, pid, tid, ids,
 * a few Kineto args) are decoded; everything else is skipped without being decoded. The one
 * idea: an event is parsed only once it lies whole in the buffer; when the buffer ends inside
 * an event, the reader reads more (growing the buffer up to a limit) and parses that event again
 * from its start, so the parser itself never has to suspend.
 *
 * Each event is first walked from a SIMD structural index of the buffer (json_scan.h: the
 * positions of brackets, colons, commas, string starts, token starts and where a token stops
 * being digits), which passes over strings, numbers and skipped values without reading their
 * bytes, checking the grammar of every entry; at anything the walk is not sure of (an escape,
 * a non-ASCII or control byte, a comma out of place, a bad number, a duplicate key) the
 * careful byte parser reads the event instead, so every warning, error and offset is the byte
 * parser's. Results never depend on which of the two read an event.
 *
 * What real producers write is accepted and counted (see tl_trace_stats): a UTF-8 BOM, trailing,
 * leading and missing commas, numbers written as strings, NaN/Infinity, invalid UTF-8, raw
 * control characters, a missing closing ']'. A malformed event is counted, reported with its
 * byte offset, and skipped; reading resumes at the next event. A cut in the middle of an event
 * ends the stream with `truncated` set, after every complete event before the cut.
 *
 * Choices a reader must know: a key given twice in an event counts the last one (as Python's
 * json, jansson and JavaScript do); "args" objects and other skipped values are checked for
 * syntax but decoded only on request (tl_args_next); nesting deeper than max_depth makes the
 * event malformed; numbers are never converted through a double where precision matters (ts,
 * dur, ids). In the object form every "traceEvents" array is read, should there be several.
 *
 * Thread-safety: a stream is used by one thread at a time; distinct streams are independent.
 */
#ifndef TALLY_INGEST_TRACE_STREAM_H
#define TALLY_INGEST_TRACE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A borrowed byte range. `ptr == NULL` means "absent"; an empty string is a non-NULL ptr with
 * len 0. Views handed out by the stream stay valid until the next call on that stream. */
typedef struct tl_view {
    const char *ptr;
    size_t len;
} tl_view;

/* The byte source: fill `buf` with up to `cap` bytes; return how many, 0 at end of input, or a
 * negative number on error (the source keeps its own error text; see gzip_source.h). */
typedef ssize_t (*tl_read_fn)(void *ctx, void *buf, size_t cap);

/* A tl_read_fn over a file descriptor: `ctx` points to an int holding the descriptor. Retries
 * on EINTR; returns -1 with errno set on a read error. */
ssize_t tl_fd_read(void *ctx, void *buf, size_t cap);

/* The JSON type of a value, as seen by tl_args_next(). NONFINITE is NaN, Infinity or
 * -Infinity, which JSON does not allow but some producers write. */
enum tl_json_kind {
    TL_JSON_NONE = 0,
    TL_JSON_STRING,
    TL_JSON_NUMBER,
    TL_JSON_OBJECT,
    TL_JSON_ARRAY,
    TL_JSON_TRUE,
    TL_JSON_FALSE,
    TL_JSON_NULL,
    TL_JSON_NONFINITE,
};

/* Where the members of an event's "args" are, as the index walker found them (offsets from
 * `text`): tl_args_iter_init_event() iterates them without parsing the object again. Kept by
 * the stream for events whose phase is one whose args tally reads (i, I, C, M, and X: kernels'
 * launch configuration, operators' shapes) and that have at most TL_ARGS_INDEX_MAX members. */
#define TL_ARGS_INDEX_MAX 32
typedef struct tl_args_index {
    const char *text;
    uint32_t n;     /* members */
    uint32_t close; /* the '}' of args */
    uint32_t key[TL_ARGS_INDEX_MAX], colon[TL_ARGS_INDEX_MAX], value[TL_ARGS_INDEX_MAX];
} tl_args_index;

/* One event of "traceEvents". All views borrow the stream's buffer. String views hold the raw
 * content between the quotes, still JSON-escaped: compare with tl_view_eq() when the literal
 * has no escapes, decode with tl_view_unescape(). */
typedef struct tl_trace_event {
    tl_view name, cat, ph, scope, bp, s;
    char phase; /* ph[0] when ph is exactly one byte, else 0 */

    /* "id": the raw text of a string or of a number (never converted through a double, so ids
	 * beyond 2^53 and hex strings survive). "id2": {"local": ...} / {"global": ...}. */
    tl_view id, id2_local, id2_global;
    unsigned char id_quoted; /* "id" was a JSON string */

    /* ts and dur are microseconds in the file (number, exponent or numeric string); kept
	 * here as nanoseconds, rounded to the nearest ns (half away from zero). A value that is
	 * missing, null, NaN, not a number or out of int64 range leaves has_ts/has_dur at 0. */
    int64_t ts_ns, dur_ns;
    unsigned char has_ts, has_dur;

    /* pid/tid may be integers or strings. *_str is the raw text either way (ptr NULL when
	 * absent); pid/tid hold the value when the text is an integer (then *_int is 1), which
	 * includes strings such as "7". *_quoted says the file had a string. */
    int64_t pid, tid;
    tl_view pid_str, tid_str;
    unsigned char pid_int, tid_int, pid_quoted, tid_quoted;

    /* The raw JSON text of "args", braces included, for lazy decoding with tl_args_next(). */
    tl_view args;
    const tl_args_index *args_index; /* its members when the index walker kept them, or NULL */

    /* Kineto args the analysis always needs, decoded on the way: "stream", "device",
	 * "correlation", "External id" (integers only). */
    int64_t stream, device, correlation, external_id;
    unsigned char has_stream, has_device, has_correlation, has_external_id;

    /* 1: no string of the event has a backslash (its views need no unescaping); 0: not
	 * known (the byte parser read the event). */
    unsigned char plain;

    uint64_t offset; /* byte offset of the event's '{' in the (decompressed) input */
    size_t size;     /* bytes from '{' to '}' inclusive */
} tl_trace_event;

/* What the counters count. Everything but events, by_phase and bytes_read is also a warning
 * and adds to `warnings` (what --strict turns into errors). */
typedef struct tl_trace_stats {
    uint64_t events;            /* objects returned from traceEvents */
    uint64_t by_phase[256];     /* events whose ph is one byte, indexed by that byte */
    uint64_t phase_missing;     /* events without a "ph" string */
    uint64_t phase_long;        /* events whose ph is longer than one byte, e.g. "XXX" */
    uint64_t malformed;         /* events skipped because they are not valid JSON */
    uint64_t oversized;         /* events skipped because they exceed max_event_size */
    uint64_t non_objects;       /* elements of traceEvents that are not objects */
    uint64_t trailing_commas;   /* ",]" or ",}" */
    uint64_t extra_commas;      /* "[," or ",," */
    uint64_t missing_commas;    /* two values with no comma between them */
    uint64_t nonfinite;         /* NaN, Infinity, -Infinity literals */
    uint64_t bad_numbers;       /* ts/dur present but not a usable number */
    uint64_t invalid_utf8;      /* bytes that are not part of a valid UTF-8 sequence */
    uint64_t control_chars;     /* raw bytes < 0x20 inside strings */
    uint64_t bad_escapes;       /* backslash escapes JSON does not define, e.g. "C:\Users" */
    uint64_t duplicate_keys;    /* a decoded event key given twice (the last one wins) */
    uint64_t other;             /* anything else: data after the end, a non-array traceEvents */
    uint64_t warnings;          /* sum of the above warnings */
    uint64_t bytes_read;        /* bytes taken from the read callback */
    unsigned char bom;          /* the input started with a UTF-8 BOM (accepted, not a warning) */
    unsigned char unterminated; /* array form ended after a complete event without ']' */
    unsigned char truncated;    /* input ended inside an event or inside the object form */
} tl_trace_stats;

enum tl_trace_form {
    TL_TRACE_FORM_UNKNOWN = 0,
    TL_TRACE_FORM_ARRAY,  /* [ {event}, ... ] */
    TL_TRACE_FORM_OBJECT, /* { "traceEvents": [...], other keys } */
};

#define TL_TRACE_MAX_DEVICES 16

typedef struct tl_trace_device {
    int64_t id;
    char name[64];
    int64_t total_global_mem; /* bytes */
    int64_t compute_major, compute_minor, num_sms;
} tl_trace_device;

/* The object form's top-level keys other than traceEvents. Keys before "traceEvents" are known
 * when the first event is returned, keys after it only once tl_trace_stream_next() returned 0. */
typedef struct tl_trace_meta {
    enum tl_trace_form form;
    unsigned char has_trace_events; /* the object form had a "traceEvents" array */
    unsigned char has_rank, has_world_size, has_base_time, has_schema_version;
    int64_t rank, world_size;  /* "distributedInfo" */
    char backend[32];          /* "distributedInfo.backend", e.g. "nccl" */
    int64_t base_time_ns;      /* "baseTimeNanoseconds" */
    int64_t schema_version;    /* "schemaVersion" */
    char display_time_unit[8]; /* "displayTimeUnit": "ms" or "ns"; "" when absent */
    char trace_name[256];      /* "traceName" (escaped text, cut to fit) */
    int device_count;          /* entries in "deviceProperties" (may exceed the array) */
    tl_trace_device devices[TL_TRACE_MAX_DEVICES];
    /* Raw JSON copies of "otherData" and "metadata" when at most 64 KiB; owned by the stream. */
    char *other_data, *metadata;
    size_t other_data_len, metadata_len;
} tl_trace_meta;

/* A problem report: which input, where, and what was expected. */
typedef struct tl_parse_error {
    char source[256];
    uint64_t offset;
    char text[200];
} tl_parse_error;

#define TL_TRACE_MAX_PROBLEMS 20

/* Limits, with the defaults set by tl_trace_options_init(). */
typedef struct tl_trace_options {
    size_t buffer_size;    /* first buffer size: 1 MiB */
    size_t max_event_size; /* an event (or top-level value parsed whole) larger than this is
	                          skipped with a warning: 64 MiB */
    int max_depth;         /* nesting limit inside an event, the event object being 1: 256
	                          (at most TL_TRACE_DEPTH_LIMIT) */
    int no_index;          /* 1: read every event with the byte parser, never from the
	                          structural index (json_scan.h); for tests and benchmarks, the
	                          results are the same either way */
} tl_trace_options;

/* Entries of the structural index kept per stream (4 bytes each): a window of about 300 KB of
 * trace text. An event with more entries is read by the byte parser. */
#define TL_TRACE_INDEX_ENTRIES (64u * 1024u)

#define TL_TRACE_DEPTH_LIMIT 1024

/* Return codes. */
#define TL_TRACE_ERR_NOMEM (-1)  /* out of memory */
#define TL_TRACE_ERR_READ (-2)   /* the read callback failed */
#define TL_TRACE_ERR_FORMAT (-3) /* not a trace: neither '[' nor '{' first, or a broken top level */

/* The stream. Callers read `stats`, `meta`, `problems`/`problem_count` and `error`; the rest
 * is private. */
typedef struct tl_trace_stream {
    tl_trace_stats stats;
    tl_trace_meta meta;
    /* The first problems, in input order: each malformed or skipped event, and the first
	 * occurrence of each kind of accepted quirk (the counters in stats have them all). */
    tl_parse_error problems[TL_TRACE_MAX_PROBLEMS];
    unsigned problem_count; /* how many are stored in problems[] */
    tl_parse_error error;   /* why the stream ended early: truncation, read or format error */
    int has_error;

    /* private */
    char source[256];
    unsigned reported; /* warning kinds already reported once */
    tl_read_fn read;
    void *ctx;
    tl_trace_options opt;
    char *buf;
    size_t cap, pos, len; /* buf[pos..len) is unread */
    uint64_t base;        /* input offset of buf[0] */
    int eof, fatal;
    int read_error, read_errno;   /* the input ended with a read error ... */
    int read_failed;              /* ... and parsing got that far: the stream reports it */
    int state, after_state;       /* where the top-level state machine is, and where skipping returns */
    int key;                      /* the top-level key whose value is being read */
    int after_value, after_comma; /* the last thing read was a value, a comma */
    int fast_next;                /* pos is at the '{' of an event, the separator before it taken */
    uint32_t *idx;                /* the structural index of buf[idx_from..idx_to), allocated once */
    size_t idx_n, idx_k;          /* its entries, the next one to look at */
    size_t idx_from, idx_to;
    int idx_valid;
    uint64_t fast_events;  /* events read from the index (the rest by the byte parser) */
    tl_args_index args_ix; /* what args_index points to */
    struct fast_ints {     /* the last pid and tid the index walker decoded */
        uint64_t w[2];
        int64_t v[2];
        unsigned n[2];
    } fast_ints;
    unsigned fast_tries, fast_fallbacks, fast_pause; /* see read_event() */
    struct tl_trace_skip {
        int64_t depth;
        int started, in_string, escape, scalar;
        int reason;
        uint64_t start;
    } skip;
} tl_trace_stream;

/* Set `opt` to the defaults. */
void tl_trace_options_init(tl_trace_options *opt);

/* Prepare `s` to read a trace through `read(ctx, ...)`. `source_name` (copied, may be NULL)
 * names the input in problem reports. `opt` may be NULL for the defaults. Allocates the
 * buffer; nothing is read yet. Returns 0, or TL_TRACE_ERR_NOMEM. Release with
 * tl_trace_stream_release() either way. */
int tl_trace_stream_open(tl_trace_stream *s, tl_read_fn read, void *ctx, const char *source_name,
                         const tl_trace_options *opt);

/* Read the next event into `ev` (fully overwritten; its views stay valid until the next call).
 * Returns 1 for an event, 0 at the end of the trace (check stats.truncated, has_error), or a
 * negative TL_TRACE_ERR_* (details in s->error); after 0 or an error it keeps returning the
 * same. Cost: linear in the bytes read; each byte is scanned about once. */
int tl_trace_stream_next(tl_trace_stream *s, tl_trace_event *ev);

/* Free the buffer and the meta copies. `s` may then be opened again. */
void tl_trace_stream_release(tl_trace_stream *s);

/* Decode the JSON string content `v` (as found in an event) into `buf` as UTF-8, writing at
 * most `cap` bytes including a terminating NUL (none when cap is 0). Returns the decoded
 * length, which may exceed cap - 1 (then the output was cut, like snprintf). \u escapes
 * become UTF-8 (a lone surrogate becomes U+FFFD, \u0000 a NUL byte); an escape JSON does not
 * define is kept as written (backslash and character), so Windows paths survive. */
size_t tl_view_unescape(tl_view v, char *buf, size_t cap);

/* 1 if `v` is present and its bytes equal the NUL-terminated `lit`, else 0. Inline, so that
 * the length of a literal is known when compiling. */
static inline int tl_view_eq(tl_view v, const char *lit)
{
    size_t n = __builtin_strlen(lit);
    return v.ptr && v.len == n && __builtin_memcmp(v.ptr, lit, n) == 0;
}

/* 1 if the n bytes of `lit` (n >= 2) occur anywhere in `v`, else 0: memmem()'s answer, found by
 * memchr() on lit[1] (readers ask for a quoted key such as "\"grid\"", whose second byte is rare
 * in args text), without memmem()'s set-up, which cost more than the search on short args. */
static inline int tl_view_contains(tl_view v, const char *lit, size_t n)
{
    if (v.ptr == NULL || n < 2 || v.len < n)
        return 0;
    const char *p = v.ptr + 1, *lim = v.ptr + v.len - n + 2; /* where lit[1] may be */
    while (p < lim) {
        const char *q = (const char *)__builtin_memchr(p, lit[1], (size_t)(lim - p));
        if (q == NULL)
            return 0;
        if (q[-1] == lit[0] && __builtin_memcmp(q + 1, lit + 2, n - 2) == 0)
            return 1;
        p = q + 1;
    }
    return 0;
}

/* Parse `v` as a whole decimal integer (optional sign). Returns 0 and sets *out, or -1. */
int tl_view_to_int64(tl_view v, int64_t *out);

/* Convert microseconds written as a decimal number (optional sign, fraction, exponent) to
 * nanoseconds, exactly and rounded half away from zero, without going through a double.
 * Returns 0, -1 when `v` is not a number, -2 when the result does not fit int64. */
int tl_trace_us_to_ns(tl_view v, int64_t *out);

/* One member of an args object, for tl_args_next(). */
typedef struct tl_json_value {
    enum tl_json_kind kind;
    tl_view text;  /* string content (escaped) or the raw text of any other value */
    double number; /* for TL_JSON_NUMBER, and for strings that are a whole number */
    int is_number; /* number is valid */
} tl_json_value;

/* An iterator over the members of a raw JSON object such as tl_trace_event.args. */
typedef struct tl_args_iter {
    const char *p, *end;
    const tl_args_index *ix; /* members found by the index walker, or NULL */
    uint32_t i;
} tl_args_iter;

/* Start iterating the object `args` (may be absent: then there are no members). */
void tl_args_iter_init(tl_args_iter *it, tl_view args);

/* The same over ev->args, from the members the index walker kept when it has (the same
 * members, without parsing the object again). */
void tl_args_iter_init_event(tl_args_iter *it, const tl_trace_event *ev);

/* Member i (< x->n) of an args index (tl_trace_event.args_index): its key alone, for readers
 * that look at a few keys of many (no value decoded), and the member as tl_args_next() gives it. */
tl_view tl_args_member_key(const tl_args_index *x, uint32_t i);
void tl_args_member(const tl_args_index *x, uint32_t i, tl_view *key, tl_json_value *val);

/* Step to the next member: sets *key (escaped content) and *val, returns 1; returns 0 after
 * the last member or at the first thing that is not a member. The views borrow `args`. Counter
 * events ("ph":"C") keep their series this way: each key with a number. */
int tl_args_next(tl_args_iter *it, tl_view *key, tl_json_value *val);

/* tl_args_next() for a reader that wants a few keys: the next member whose key `pick` maps to
 * a non-zero number (stored in *picked). Members of other keys are passed over without decoding
 * their values when the index walker kept the members (tl_args_iter_init_event), so the cost is
 * a key compare per member rather than a value's decoding. The members found are those
 * tl_args_next() would give, in the same order. */
int tl_args_next_picked(tl_args_iter *it, int (*pick)(tl_view key), int *picked, tl_view *key, tl_json_value *val);

#endif
