/*
 * json_writer.h - a small streaming JSON writer.
 *
 * Writes through a sink callback with a 64 KiB buffer, inserting commas by
 * itself. Strings are escaped for JSON and made valid UTF-8 (invalid bytes
 * become U+FFFD), so any name a program passes produces a parseable file.
 * Non-finite numbers are written as null. An error from the sink sticks and
 * is returned by tl_json_finish().
 */
#ifndef TALLY_JSON_WRITER_H
#define TALLY_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef int (*tl_json_sink)(void *ctx, const void *buf, size_t len);

#define TL_JSON_MAX_DEPTH 64

typedef struct tl_json {
    tl_json_sink sink;
    void *ctx;
    char buf[65536];
    size_t len;
    int depth;
    unsigned char first[TL_JSON_MAX_DEPTH]; /* no element yet at this depth */
    int after_key;
    int error;
} tl_json;

void tl_json_init(tl_json *j, tl_json_sink sink, void *ctx);
int tl_json_finish(tl_json *j); /* flush; 0 or -1 if any write failed */

/* A sink into memory: a growing, NUL-terminated buffer (start with { NULL, 0, 0 }; free data). */
typedef struct tl_json_membuf {
    char *data;
    size_t len, cap;
} tl_json_membuf;
int tl_json_mem_sink(void *ctx, const void *buf, size_t len);

void tl_json_object_begin(tl_json *j);
void tl_json_object_end(tl_json *j);
void tl_json_array_begin(tl_json *j);
void tl_json_array_end(tl_json *j);
void tl_json_key(tl_json *j, const char *key);
void tl_json_string(tl_json *j, const char *s);
void tl_json_string_n(tl_json *j, const char *s, size_t n);
void tl_json_int(tl_json *j, int64_t v);
void tl_json_uint(tl_json *j, uint64_t v);
void tl_json_double(tl_json *j, double v);              /* %.17g, shortest that round-trips */
void tl_json_fixed(tl_json *j, double v, int decimals); /* e.g. µs with 3 decimals */
void tl_json_bool(tl_json *j, int v);
void tl_json_null(tl_json *j);
/* Insert already-valid JSON text as a value (e.g. an event's args). */
void tl_json_raw(tl_json *j, const char *text);
/* Insert an already-formatted element of n bytes (a value) with its separator:
 * for hand-formatted hot loops. */
void tl_json_raw_element(tl_json *j, const char *text, size_t n);
/* Room for one element of at most n bytes (n <= the buffer, 64 KiB) after its
 * separator: format it at the pointer returned, then say how many bytes it
 * took with tl_json_element_end. Saves a copy per element in hot loops. */
char *tl_json_element_begin(tl_json *j, size_t n);
void tl_json_element_end(tl_json *j, size_t used);
/* Write raw bytes with no separator logic. */
void tl_json_write(tl_json *j, const void *p, size_t n);

/* key + value shorthands */
void tl_json_kv_string(tl_json *j, const char *key, const char *s);
void tl_json_kv_int(tl_json *j, const char *key, int64_t v);
void tl_json_kv_uint(tl_json *j, const char *key, uint64_t v);
void tl_json_kv_double(tl_json *j, const char *key, double v);
void tl_json_kv_bool(tl_json *j, const char *key, int v);

/* Is text one complete JSON value of type object (with nothing after it)? */
int tl_json_is_object(const char *text);
/* A malloc'd copy of text if it is a JSON object, else {"text": text}; NULL text -> "{}". */
char *tl_json_object_or_text(const char *text);
/* s as a JSON string literal (quoted, escaped) in a malloc'd NUL-terminated
 * buffer the caller frees; NULL when out of memory. */
char *tl_json_quote(const char *s);

#endif
