/*
 * test_rank_from_path.c - the rank from an input's name (tools/ingest/run.c,
 * tl_rank_from_path), docs/architecture.md's rules after the content: rank-3,
 * rank3, rank_3, -rank3., rank_3/ folders, graph_capture_rank_0.<ns>..., then
 * TensorBoard's worker3. Each case is a name people's runs really have (the
 * corpus' among them) with the rank and the "how it was found" text the
 * report shows, or no rank where a careless match would invent one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ingest.h"

typedef struct rank_case {
    const char *path;
    int rank;           /* -1: no rank from the name */
    const char *detail; /* what the report says */
} rank_case;

static void check(const rank_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rank = -99;
        char detail[128] = "untouched";
        int found = tl_rank_from_path(c[i].path, &rank, detail, sizeof detail);
        if (c[i].rank < 0) {
            if (found)
                fail_msg("%s: rank %d (%s) found, expected none", c[i].path, rank, detail);
            continue;
        }
        if (!found)
            fail_msg("%s: no rank found, expected %d", c[i].path, c[i].rank);
        if (rank != c[i].rank)
            fail_msg("%s: rank %d, expected %d", c[i].path, rank, c[i].rank);
        if (strcmp(detail, c[i].detail) != 0)
            fail_msg("%s: \"%s\", expected \"%s\"", c[i].path, detail, c[i].detail);
    }
}

/* docs/architecture.md's spellings in a file name; the text quotes the name
 * from the word on. */
static void test_file_names(void **state)
{
    (void)state;
    static const rank_case cases[] = {
        { "rank-3.json", 3, "file name: rank-3.json" },
        { "rank3.pt.trace.json", 3, "file name: rank3.pt.trace.json" },
        { "rank_3.json.gz", 3, "file name: rank_3.json.gz" },
        { "trace-rank3.json", 3, "file name: rank3.json" },
        { "runs/job42/profile-rank12.pt.trace.json.gz", 12, "file name: rank12.pt.trace.json.gz" },
        { "Rank7.json", 7, "file name: Rank7.json" },
        { "graph_capture_rank_0.1700000000123456789.pt.trace.json.gz", 0,
          "file name: rank_0.1700000000123456789.pt.trace.json" },
        /* the corpus' */
        { "hta/trace_filter/sampled_rank-1.json.gz", 1, "file name: rank-1.json.gz" },
        { "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 0,
          "file name: rank-0.Apr_03_18_51_38.1102.pt.trace.jso" },
        { "hta/mtia_trace_single_rank/mtia_rank_0.json.gz", 0, "file name: rank_0.json.gz" },
        { "derived-edge-cases/rank0_multimember.json.gz", 0, "file name: rank0_multimember.json.gz" },
        /* the first match, and large ranks */
        { "rank2-of-rank5.json", 2, "file name: rank2-of-rank5.json" },
        { "rank_1048575.json", 1048575, "file name: rank_1048575.json" },
        /* the text is cut at 40 bytes of the name */
        { "rank-4-with-a-very-long-name-that-goes-on-and-on.json", 4,
          "file name: rank-4-with-a-very-long-name-that-goes-o" },
    };
    check(cases, sizeof cases / sizeof cases[0]);
}

/* rank_3/ folders, innermost first; the file's own name wins over them. */
static void test_folders(void **state)
{
    (void)state;
    static const rank_case cases[] = {
        { "runs/rank_3/trace.json", 3, "folder name: rank_3" },
        { "inferix/generated/multi_rank_reports/rank_1/profiling_report_t2v_generation_20261121_215140.json", 1,
          "folder name: rank_1" },
        { "rank-1/node/rank-2/trace.json", 2, "folder name: rank-2" },
        { "rank_3/rank-5.json", 5, "file name: rank-5.json" },
        { "/abs/rank7/x/trace.json", 7, "folder name: rank7" },
        /* an archive member: the member's path counts, not the archive's name */
        { "job.tar.gz:rank_2/trace.json", 2, "folder name: rank_2" },
        { "rank_9.tar.gz:trace.json", -1, NULL },
    };
    check(cases, sizeof cases / sizeof cases[0]);
}

/* TensorBoard's profiler plugin names a rank's trace worker<N>; only when
 * nothing says rank. */
static void test_worker(void **state)
{
    (void)state;
    static const rank_case cases[] = {
        { "kineto-tb_plugin-samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", 0,
          "file name: worker0.1623143089861.pt.trace.json.gz" },
        { "param-dlrm_kineto-8rank/worker3_step_12.1694128201557.pt.trace.json", 3,
          "file name: worker3_step_12.1694128201557.pt.trace.j" },
        { "worker-5.json", 5, "file name: worker-5.json" },
        /* a rank anywhere in the path comes first */
        { "rank_1/worker0.pt.trace.json", 1, "folder name: rank_1" },
        { "worker0-rank4.json", 4, "file name: rank4.json" },
        /* folders are only searched for "rank" */
        { "worker3/trace.json", -1, NULL },
    };
    check(cases, sizeof cases / sizeof cases[0]);
}

/* Names that only look like one: no rank rather than a wrong one. */
static void test_no_rank(void **state)
{
    (void)state;
    static const rank_case cases[] = {
        { "trace.json", -1, NULL },
        { "", -1, NULL },
        { "frank3.json", -1, NULL }, /* a word that ends in "rank" */
        { "ranks3.json", -1, NULL }, /* not the word rank */
        { "rank.json", -1, NULL },
        { "rank-.json", -1, NULL },
        { "rank--3.json", -1, NULL }, /* one separator at most */
        { "ranking_3.json", -1, NULL },
        { "param-dlrm_kineto-8rank/LICENSE", -1, NULL }, /* "8rank": no number after the word */
        { "resnet50_num_workers_4/trace.json", -1, NULL },
        { "coworker3.json", -1, NULL },
        { "rank123456789.json", -1, NULL },   /* beyond any real rank: not a rank number */
        { "rank_3", 3, "file name: rank_3" }, /* (a name that ends in the number is one) */
    };
    check(cases, sizeof cases / sizeof cases[0]);
}

/* The detail buffer is the caller's: a short one is cut, never overrun. */
static void test_short_detail(void **state)
{
    (void)state;
    char detail[12];
    memset(detail, 'x', sizeof detail);
    int rank = -1;
    assert_true(tl_rank_from_path("rank-3.pt.trace.json", &rank, detail, sizeof detail));
    assert_int_equal(rank, 3);
    assert_string_equal(detail, "file name: ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_names), cmocka_unit_test(test_folders),      cmocka_unit_test(test_worker),
        cmocka_unit_test(test_no_rank),    cmocka_unit_test(test_short_detail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
