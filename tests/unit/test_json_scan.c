/*
 * Tests of ingest/json_scan: every instruction set the CPU has gives the same structural index
 * as a byte-by-byte reference, on random texts made of the bytes that matter (quotes, runs of
 * backslashes across block boundaries, structural characters, whitespace, control and
 * non-ASCII bytes), and the entry limit is honoured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ingest/json_scan.h"

static const char *const isas[] = { "avx512+pclmul", "avx2+pclmul", "sse2+pclmul", "sse2", "scalar" };

/* The index as a byte parser sees it: a backslash escapes the next byte (inside or outside a
 * string, as the bitmask arithmetic does); a quote not escaped opens or closes a string, and
 * the opening one is the string's entry; a token byte that is not a digit but follows one is
 * an entry (so a token starting with a digit and without such an entry is all digits). */
static size_t reference(const char *t, size_t len, uint32_t *out)
{
    size_t n = 0;
    int in = 0, esc = 0, tok = 0, prev_digit = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        int ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        int odd = c == '\\' || c >= 0x80 || (c < 0x20 && (in || !ws));
        int digit = c >= '0' && c <= '9';
        int entry = 0, escaped = esc;
        esc = c == '\\' && !escaped;
        if (in) {
            if (!escaped && c == '"')
                in = 0;
            tok = 0;
        } else if (c == '"' && !escaped) {
            in = 1; /* the opening quote is the string's entry */
            entry = 1;
            tok = 0;
        } else if (c && strchr("{}[]:,", c)) {
            entry = 1;
            tok = 0;
        } else if (ws) {
            tok = 0;
        } else {
            entry = !tok || (!digit && prev_digit);
            tok = 1;
        }
        prev_digit = digit;
        if (entry || odd)
            out[n++] = (uint32_t)i;
    }
    return n;
}

static void test_same_index_as_reference(void **state)
{
    static const char mix[] = "\"\\{}[]:, \t\na1\x80\x01x9.-";
    enum { MAXLEN = 400 };
    static char text[MAXLEN];
    static uint32_t want[MAXLEN + 64], got[MAXLEN + 64];
    int variants = 0;
    (void)state;

    srand(7);
    for (int it = 0; it < 40000; it++) {
        size_t len = (size_t)rand() % MAXLEN, n;
        int mode = it % 3;
        for (size_t i = 0; i < len; i++)
            text[i] = mode == 0   ? mix[rand() % (int)(sizeof mix - 1)]
                      : mode == 1 ? "\"\\ab"[rand() % 4]
                                  : "\\\\\\\"a "[rand() % 6];
        n = reference(text, len, want);
        for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
            size_t scanned = 0, m;
            m = tl_json_scan_index_as(isas[k], text, len, got, sizeof got / sizeof got[0], &scanned);
            if (m == (size_t)-1)
                continue; /* this CPU cannot run it */
            if (it == 0) {
                variants++;
                print_message("checking %s\n", isas[k]);
            }
            assert_int_equal(scanned, len);
            assert_int_equal(m, n);
            assert_memory_equal(got, want, n * sizeof want[0]);
        }
    }
    assert_true(variants >= 1); /* scalar at least; on x86-64 also sse2 */
}

/* A JSON text: the entries are where a walker must look. */
static void test_entries_of_json(void **state)
{
    static const char text[] = "{\"a\": [1, -2.5e3, true, 10x], \"b\\\"c\": \"x{y\"}";
    uint32_t out[128];
    size_t scanned, n;
    (void)state;

    n = tl_json_scan_index(text, sizeof text - 1, out, 128, &scanned);
    assert_int_equal(scanned, sizeof text - 1);
    /* { "a : [ 1 , -2.5e3 (. and e follow digits) , true , 10x (x follows a digit) ] ,
	 * "b\"c (opening quotes; the backslash is odd) : "x{y } */
    {
        static const char expect[] = "{\":[1,-.e,t,1x],\"\\:\"}";
        assert_int_equal(n, sizeof expect - 1);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(text[out[i]], expect[i]);
    }
}

/* Indexing stops before a block whose entries might not fit. */
static void test_entry_limit(void **state)
{
    char text[1000];
    uint32_t out[200];
    size_t scanned, n;
    (void)state;

    memset(text, ',', sizeof text); /* one entry per byte */
    n = tl_json_scan_index(text, sizeof text, out, 200, &scanned);
    assert_int_equal(scanned, 192); /* three blocks: a fourth might not fit in 200 */
    assert_int_equal(n, 192);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(out[i], i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_index_as_reference),
        cmocka_unit_test(test_entries_of_json),
        cmocka_unit_test(test_entry_limit),
    };
    print_message("json_scan uses %s on this CPU\n", tl_json_scan_isa());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
