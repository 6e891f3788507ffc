/*
 * test_sniff.c - trace or report from the top-level keys (tools/ingest/sniff.c):
 * the first deciding key decides whatever comes before it, values are skipped
 * whatever their size or nesting, and a cut before any deciding key asks for
 * more instead of guessing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest.h"
#include "sniff.h"

static int sniff(const char *s)
{
    return tl_sniff_object((const unsigned char *)s, 0, strlen(s));
}

static void test_deciding_keys(void **state)
{
    (void)state;
    assert_int_equal(sniff("{\"traceEvents\": ["), TL_SNIFF_TRACE);
    assert_int_equal(sniff("{\"schemaVersion\": 1, \"traceEvents\": []}"), TL_SNIFF_TRACE);
    assert_int_equal(sniff("{\"format\": \"tally-report\", \"version\": 1"), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{\"format\": \"tally-partial\", \"sessions\": ["), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{\"format\": \"tally-aggregate\", \"ranks\": ["), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{\"timestamp\": 1.5, \"timing_stats\": {"), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{\"session_info\": {"), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{\"iteration_stats\": {"), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{\"memory_snapshots\": ["), TL_SNIFF_REPORT);
    /* "format" decides only as "tally-report": another value goes on */
    assert_int_equal(sniff("{\"format\": \"other\", \"traceEvents\": []}"), TL_SNIFF_TRACE);
    /* an object that ends without a deciding key: the report reader says what it is */
    assert_int_equal(sniff("{\"a\": 1, \"b\": [1, {\"traceEvents\": 2}]}"), TL_SNIFF_REPORT);
    assert_int_equal(sniff("{}"), TL_SNIFF_REPORT);
    /* not JSON this scan understands: jansson will say where it breaks */
    assert_int_equal(sniff("{a: 1}"), TL_SNIFF_REPORT);
}

static void test_cut_asks_for_more(void **state)
{
    (void)state;
    assert_int_equal(sniff("{"), TL_SNIFF_MORE);
    assert_int_equal(sniff("{\"traceEv"), TL_SNIFF_MORE);
    assert_int_equal(sniff("{\"otherData\": {\"a\": [1, 2"), TL_SNIFF_MORE);
    assert_int_equal(sniff("{\"format\": \"tally-rep"), TL_SNIFF_MORE);
    assert_int_equal(sniff("{\"x\": \"a \\\"quoted\\\" traceEvents"), TL_SNIFF_MORE);
    assert_int_equal(sniff("{\"x\": 12"), TL_SNIFF_MORE);
}

/* The case of issue 10: the deciding key after far more than 64 KiB. */
static void test_key_after_a_big_value(void **state)
{
    (void)state;
    size_t pad = 300000;
    const char *tails[] = { "\"], \"traceEvents\": []}", "\"], \"timing_stats\": {}}" };
    int want[] = { TL_SNIFF_TRACE, TL_SNIFF_REPORT };
    for (int t = 0; t < 2; t++) {
        size_t cap = pad + 64;
        char *s = malloc(cap);
        assert_non_null(s);
        size_t n = (size_t)snprintf(s, cap, "{\"pad\": [\"");
        memset(s + n, 'x', pad);
        n += pad;
        n += (size_t)snprintf(s + n, cap - n, "%s", tails[t]);
        /* cut anywhere before the deciding key: more; whole: decided */
        assert_int_equal(tl_sniff_object((unsigned char *)s, 0, 65536), TL_SNIFF_MORE);
        assert_int_equal(tl_sniff_object((unsigned char *)s, 0, n), want[t]);
        free(s);
    }
}

/* Nesting costs nothing: the skipper counts, it does not recurse. */
static void test_deep_nesting(void **state)
{
    (void)state;
    size_t depth = 200000, cap = 2 * depth + 64;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t n = (size_t)snprintf(s, cap, "{\"a\": ");
    memset(s + n, '[', depth);
    n += depth;
    memset(s + n, ']', depth);
    n += depth;
    n += (size_t)snprintf(s + n, cap - n, ", \"traceEvents\": []}");
    assert_int_equal(tl_sniff_object((unsigned char *)s, 0, n), TL_SNIFF_TRACE);
    free(s);
}

/* tally's aggregates say what they are first: the prefix decides (the
 * reader's size limit, compare's partial inputs). */
static void test_aggregate_doc_kind(void **state)
{
    (void)state;
    static const struct {
        const char *doc;
        int kind;
    } cases[] = {
        { "{\"format\": \"tally-partial\", \"version\": 2}", TL_DOC_PARTIAL },
        { "\xef\xbb\xbf \n{ \"format\" :\t\"tally-aggregate\"", TL_DOC_AGGREGATE },
        { "{\"format\":\"tally-partial", TL_DOC_OTHER },                     /* cut inside the value */
        { "{\"version\": 2, \"format\": \"tally-partial\"}", TL_DOC_OTHER }, /* not first */
        { "{\"format\": \"tally-report\"}", TL_DOC_OTHER },
        { "[{\"format\": \"tally-partial\"}]", TL_DOC_OTHER },
        { "", TL_DOC_OTHER },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(tl_aggregate_doc_kind((const unsigned char *)cases[i].doc, strlen(cases[i].doc)),
                         cases[i].kind);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deciding_keys),         cmocka_unit_test(test_cut_asks_for_more),
        cmocka_unit_test(test_key_after_a_big_value), cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_aggregate_doc_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
