/*
 * test_json_writer.c - the streaming JSON writer and the object validator
 * (common/json_writer.c).
 *
 * Every name a program passes ends up in a JSON string, so the writer must
 * escape quotes, backslashes and control characters, replace invalid UTF-8
 * with U+FFFD and keep valid multibyte text as it is; numbers must read back
 * as the same double, non-finite ones as null. Outputs larger than the 64 KiB
 * buffer go through the sink in pieces. Output is compared as text and read
 * back with jansson. tl_json_is_object() decides whether tally_event() args
 * are kept as given or wrapped as {"text": ...}.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"

/* A sink into a growing buffer that counts its calls and can fail on call N. */
typedef struct sink {
    char *data;
    size_t len, cap;
    int calls, fail_at;
    int big_calls; /* calls with more than the writer's 64 KiB buffer */
} sink;

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *s = ctx;
    s->calls++;
    s->big_calls += len > 65536;
    if (s->fail_at && s->calls >= s->fail_at)
        return -1;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->data = realloc(s->data, s->cap);
    }
    memcpy(s->data + s->len, buf, len);
    s->len += len;
    s->data[s->len] = '\0';
    return 0;
}

static tl_json *writer(sink *s)
{
    memset(s, 0, sizeof *s);
    tl_json *j = malloc(sizeof *j); /* 64 KiB: not on the stack */
    tl_json_init(j, sink_write, s);
    return j;
}

/* Finish j and return the text (owned by s). */
static const char *finish(tl_json *j, sink *s)
{
    assert_int_equal(tl_json_finish(j), 0);
    free(j);
    return s->data ? s->data : "";
}

/* The JSON text of one string written by the writer. */
static char *string_json(const char *in, size_t n)
{
    sink s;
    tl_json *j = writer(&s);
    tl_json_string_n(j, in, n);
    finish(j, &s);
    return s.data;
}

static void check_string(const char *in, const char *want_json, const char *want_value)
{
    char *got = string_json(in, strlen(in));
    assert_string_equal(got, want_json);
    json_error_t e;
    json_t *v = json_loads(got, JSON_DECODE_ANY, &e);
    if (v == NULL)
        fail_msg("jansson rejects %s: %s", got, e.text);
    assert_string_equal(json_string_value(v), want_value);
    json_decref(v);
    free(got);
}

static void test_escaping(void **state)
{
    (void)state;
    check_string("plain", "\"plain\"", "plain");
    check_string("", "\"\"", "");
    check_string("a\"b\\c", "\"a\\\"b\\\\c\"", "a\"b\\c");
    check_string("l1\nl2\tx\ry", "\"l1\\nl2\\tx\\ry\"", "l1\nl2\tx\ry");
    check_string("\x01\x1f\x7f/", "\"\\u0001\\u001f\x7f/\"", "\x01\x1f\x7f/");
    check_string("\b\f", "\"\\u0008\\u000c\"", "\b\f");
    /* An embedded NUL through the _n variant. */
    char *nul = string_json("a\0b", 3);
    assert_string_equal(nul, "\"a\\u0000b\"");
    free(nul);
}

static void test_utf8(void **state)
{
    (void)state;
    /* Valid 2, 3 and 4 byte sequences are kept byte for byte. */
    check_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad",
                 "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\"",
                 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad");
    /* Invalid bytes become U+FFFD, one per byte that cannot start a sequence. */
#define R "\xef\xbf\xbd"
    check_string("a\xff"
                 "b",
                 "\"a" R "b\"", "a" R "b");
    check_string("\xc0\x80", "\"" R R "\"", R R);                 /* overlong NUL */
    check_string("\xe0\x80\xaf", "\"" R R R "\"", R R R);         /* overlong '/' */
    check_string("\xed\xa0\x80", "\"" R R R "\"", R R R);         /* surrogate D800 */
    check_string("\xf4\x90\x80\x80", "\"" R R R R "\"", R R R R); /* > U+10FFFF */
    check_string("x\xe2\x82", "\"x" R R "\"", "x" R R);           /* truncated at the end */
    check_string("\xe2\x82"
                 "A",
                 "\"" R R "A\"", R R "A");        /* truncated before ASCII */
    check_string("\x80\xbf", "\"" R R "\"", R R); /* lone continuations */
    check_string("\xf5\x80", "\"" R R "\"", R R);
#undef R
}

static char *numbers_json(void (*fn)(tl_json *))
{
    sink s;
    tl_json *j = writer(&s);
    tl_json_array_begin(j);
    fn(j);
    tl_json_array_end(j);
    finish(j, &s);
    return s.data;
}

static void write_nonfinite(tl_json *j)
{
    tl_json_double(j, NAN);
    tl_json_double(j, INFINITY);
    tl_json_double(j, -INFINITY);
    tl_json_fixed(j, NAN, 3);
    tl_json_fixed(j, -INFINITY, 3);
}

static const double doubles[] = { 0.1,      1.0 / 3.0, 2.0 / 3.0,          1e300,
                                  -1e-300,  5e-324,    123456.789,         1e15,
                                  1e16 + 2, -0.5,      4503599627370497.0, 0.30000000000000004 };

static void write_doubles(tl_json *j)
{
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++)
        tl_json_double(j, doubles[i]);
}

static void write_ints(tl_json *j)
{
    tl_json_int(j, INT64_MIN);
    tl_json_int(j, INT64_MAX);
    tl_json_uint(j, UINT64_MAX);
    tl_json_int(j, 0);
    tl_json_fixed(j, 1.23456, 3);
    tl_json_fixed(j, 2.0, 0);
    tl_json_double(j, 300.0);
    tl_json_double(j, -0.0);
}

static void test_numbers(void **state)
{
    (void)state;
    char *t = numbers_json(write_nonfinite);
    assert_string_equal(t, "[null,null,null,null,null]");
    free(t);

    t = numbers_json(write_ints);
    assert_string_equal(t, "[-9223372036854775808,9223372036854775807,18446744073709551615,0,"
                           "1.235,2,300,-0]");
    free(t);

    /* Doubles read back as exactly the same value. */
    t = numbers_json(write_doubles);
    json_error_t e;
    json_t *a = json_loads(t, 0, &e);
    if (a == NULL)
        fail_msg("jansson rejects %s: %s", t, e.text);
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++) {
        double got = json_number_value(json_array_get(a, i));
        if (got != doubles[i])
            fail_msg("%.17g came back as %.17g (text %s)", doubles[i], got, t);
    }
    assert_non_null(strstr(t, "[0.1,")); /* shortest form, not 0.10000000000000001 */
    json_decref(a);
    free(t);
}

static void test_structure(void **state)
{
    (void)state;
    sink s;
    tl_json *j = writer(&s);
    tl_json_object_begin(j);
    tl_json_key(j, "a");
    tl_json_array_begin(j);
    tl_json_int(j, 1);
    tl_json_int(j, 2);
    tl_json_object_begin(j);
    tl_json_key(j, "b");
    tl_json_null(j);
    tl_json_object_end(j);
    tl_json_array_begin(j);
    tl_json_array_end(j);
    tl_json_array_end(j);
    tl_json_kv_bool(j, "c", 1);
    tl_json_kv_bool(j, "d", 0);
    tl_json_kv_string(j, "e", NULL);
    tl_json_kv_uint(j, "f", 7);
    tl_json_kv_double(j, "g", 2.5);
    tl_json_key(j, "h");
    tl_json_raw(j, "{\"x\":[1]}");
    tl_json_key(j, "i");
    tl_json_object_begin(j);
    tl_json_object_end(j);
    tl_json_object_end(j);
    assert_string_equal(finish(j, &s), "{\"a\":[1,2,{\"b\":null},[]],\"c\":true,\"d\":false,"
                                       "\"e\":null,\"f\":7,\"g\":2.5,\"h\":{\"x\":[1]},\"i\":{}}");
    free(s.data);
}

static void test_large_output(void **state)
{
    (void)state;
    /* 200000 array elements (~2.6 MB) through the 64 KiB buffer, plus
     * strings longer than the buffer, one of them all escapes. */
    size_t big = 200000;
    char *long_plain = malloc(big + 1), *long_quotes = malloc(70001);
    for (size_t i = 0; i < big; i++)
        long_plain[i] = (char)('a' + i % 26);
    long_plain[big] = '\0';
    memset(long_quotes, '"', 70000);
    long_quotes[70000] = '\0';

    sink s;
    tl_json *j = writer(&s);
    tl_json_object_begin(j);
    tl_json_key(j, "items");
    tl_json_array_begin(j);
    for (size_t i = 0; i < big; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%zu", i);
        tl_json_string(j, name);
    }
    tl_json_array_end(j);
    tl_json_kv_string(j, "plain", long_plain);
    tl_json_kv_string(j, "quotes", long_quotes);
    tl_json_object_end(j);
    const char *text = finish(j, &s);
    assert_true(s.len > 2 * 1024 * 1024);
    /* Written in buffer-sized pieces; only the 200000-byte run of plain
     * text went to the sink in one piece, bypassing the buffer. */
    assert_true(s.calls >= (int)((s.len - big) / 65536));
    assert_int_equal(s.big_calls, 1);

    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    if (doc == NULL)
        fail_msg("jansson rejects the large output: %s at %d", e.text, e.position);
    json_t *items = json_object_get(doc, "items");
    assert_int_equal(json_array_size(items), big);
    assert_string_equal(json_string_value(json_array_get(items, 0)), "n0");
    assert_string_equal(json_string_value(json_array_get(items, 123456)), "n123456");
    assert_string_equal(json_string_value(json_array_get(items, big - 1)), "n199999");
    assert_string_equal(json_string_value(json_object_get(doc, "plain")), long_plain);
    assert_string_equal(json_string_value(json_object_get(doc, "quotes")), long_quotes);
    json_decref(doc);
    free(s.data);
    free(long_plain);
    free(long_quotes);
}

static void test_sink_error_sticks(void **state)
{
    (void)state;
    sink s;
    tl_json *j = writer(&s);
    s.fail_at = 2;
    tl_json_array_begin(j);
    for (int i = 0; i < 100000; i++)
        tl_json_string(j, "0123456789");
    tl_json_array_end(j);
    assert_int_equal(tl_json_finish(j), -1);
    assert_int_equal(s.calls, 2); /* no writes after the failure */
    free(j);
    free(s.data);
}

static void test_is_object(void **state)
{
    (void)state;
    static const char *const good[] = {
        "{}",
        " {\"a\":1} \n",
        "{\"a\":[1,2,{\"b\":\"c\"}],\"d\":-1.5e3,\"e\":true,\"f\":null}",
        "{\"u\":\"\\u00e9\\n\\\"\\/\"}",
        "{\"s\":\"caf\xc3\xa9\"}",
        "{\"n\":0,\"m\":-0.25,\"k\":1E+2}",
        "{\"a\":{\"b\":{\"c\":{}}}}",
        "{\"a\":[]}",
    };
    static const char *const bad[] = {
        "",
        "   ",
        "[]",
        "\"x\"",
        "1",
        "null",
        "{",
        "}",
        "{\"a\":1,}",
        "{\"a\":1}x",
        "{'a':1}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":\"\x01\"}",
        "{\"a\":\"\\q\"}",
        "{\"a\" 1}",
        "{\"a\":tru}",
        "{\"a\":\"\xff\"}",
        "{\"a\":\"\\u12\"}",
        "{} {}",
        "{\"a\":1}{\"b\":2}",
        "{a:1}",
        "{\"a\":-}",
        "{\"a\":1e}",
        "{\"a\":[1,]}",
        "{\"a\"}",
        "{\"a\":\"unterminated}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!tl_json_is_object(good[i]))
            fail_msg("rejected a valid object: %s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tl_json_is_object(bad[i]))
            fail_msg("accepted: %s", bad[i]);

    /* Nesting is bounded: 60 levels pass, 100 do not (no stack overflow). */
    char deep[512];
    for (int depth = 60; depth <= 100; depth += 40) {
        size_t n = 0;
        n += (size_t)snprintf(deep + n, sizeof deep - n, "{\"a\":");
        for (int i = 0; i < depth; i++)
            deep[n++] = '[';
        for (int i = 0; i < depth; i++)
            deep[n++] = ']';
        deep[n++] = '}';
        deep[n] = '\0';
        assert_int_equal(tl_json_is_object(deep), depth == 60);
    }
}

static void test_object_or_text(void **state)
{
    (void)state;
    char *a = tl_json_object_or_text("{\"epoch\":3}");
    assert_string_equal(a, "{\"epoch\":3}");
    free(a);
    a = tl_json_object_or_text(NULL);
    assert_string_equal(a, "{}");
    free(a);
    a = tl_json_object_or_text("loss went \"up\"\n");
    assert_string_equal(a, "{\"text\":\"loss went \\\"up\\\"\\n\"}");
    free(a);
    a = tl_json_object_or_text("[1,2]"); /* valid JSON, but not an object */
    assert_string_equal(a, "{\"text\":\"[1,2]\"}");
    free(a);
    a = tl_json_object_or_text("bad \xff byte");
    json_t *v = json_loads(a, 0, NULL);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "text")), "bad \xef\xbf\xbd byte");
    json_decref(v);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),     cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_numbers),      cmocka_unit_test(test_structure),
        cmocka_unit_test(test_large_output), cmocka_unit_test(test_sink_error_sticks),
        cmocka_unit_test(test_is_object),    cmocka_unit_test(test_object_or_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
