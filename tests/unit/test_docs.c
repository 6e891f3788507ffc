/*
 * test_docs.c - docs/analysis.md says what the code does: its kernel-type
 * table, its rule table and its table of per-rank metrics are written by
 * render (render/docs_tables.c) from the tables in the code
 * (tools/ingest/kernel_class.c, tools/analyze/rules.c, the registry of
 * tools/analyze/metrics.c) between marker comments, and this test fails when
 * they differ. TALLY_REGEN=1 rewrites the
 * sections from the code.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "docs_tables.h"
#include "tt_support.h"

#define DOC TALLY_SOURCE_DIR "/docs/analysis.md"

static char *generate(void (*fn)(FILE *))
{
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    assert_non_null(m);
    fn(m);
    fclose(m);
    return out;
}

/* The text between "<!-- BEGIN name -->\n" and "<!-- END name -->" must be
 * what fn writes; with TALLY_REGEN=1 it is made so. */
static void check_section(const char *name, void (*fn)(FILE *))
{
    size_t len;
    char *doc = tt_read_file(DOC, &len);
    assert_non_null(doc);
    char begin[96], end[96];
    snprintf(begin, sizeof begin, "<!-- BEGIN %s (generated from the code: TALLY_REGEN=1 ctest -R test_docs) -->\n",
             name);
    snprintf(end, sizeof end, "<!-- END %s -->", name);
    char *b = strstr(doc, begin), *e = b ? strstr(b, end) : NULL;
    if (b == NULL || e == NULL)
        fail_msg("docs/analysis.md has no section \"%s\" (%s ... %s)", name, begin, end);
    b += strlen(begin);
    char *want = generate(fn);
    const char *regen = getenv("TALLY_REGEN");
    if (regen && strcmp(regen, "1") == 0) {
        FILE *f = fopen(DOC, "wb");
        assert_non_null(f);
        fwrite(doc, 1, (size_t)(b - doc), f);
        fputs(want, f);
        fputs(e, f);
        assert_int_equal(fclose(f), 0);
    } else if ((size_t)(e - b) != strlen(want) || memcmp(b, want, strlen(want)) != 0) {
        fail_msg("docs/analysis.md's %s section differs from the code; run TALLY_REGEN=1 ctest -R test_docs\n"
                 "--- code says:\n%s",
                 name, want);
    }
    free(want);
    free(doc);
}

static void test_kernel_types(void **state)
{
    (void)state;
    check_section("kernel-types", tl_docs_kernel_types);
}

static void test_metrics(void **state)
{
    (void)state;
    check_section("metrics", tl_docs_metrics);
}

/* The registry is what the aggregate computes: one across row per entry a
 * rank has, in the registry's order, each pointing at its entry. */
static void test_metrics_registry(void **state)
{
    (void)state;
    size_t n;
    const tl_metric *m = tl_metrics(&n);
    assert_true(n > 0 && n <= TL_MAX_ACROSS);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(tl_metric_find(m[i].name), &m[i]);
        assert_non_null(m[i].get);
        assert_true(strlen(m[i].definition) > 10);
        for (size_t k = 0; k < i; k++)
            assert_string_not_equal(m[i].name, m[k].name);
    }
    assert_null(tl_metric_find("no.such_metric"));
    /* every sampled series has its two rows, under the name the telemetry
     * section looks them up by (telemetry_text.c) */
    for (int k = 0; k < TL_SERIES_COUNT; k++)
        for (int w = 0; w < 2; w++) {
            char name[96];
            snprintf(name, sizeof name, "telemetry.%s.%s", tl_series_kind_name(k), w ? "max" : "mean");
            const tl_metric *e = tl_metric_find(name);
            if (e == NULL || e->section != TL_SECTION_TELEMETRY)
                fail_msg("no telemetry row %s in the registry", name);
        }
    assert_string_equal(tl_better_name(tl_metric_find("diffusion.fps")->better), "higher");
    assert_string_equal(tl_across_policy_name(tl_metric_find("memory.peak_reserved_bytes")->policy), "max");
}

/* docs/analysis.md's "Across ranks": min and max with the first rank that
 * has them, mean, median, std (n - 1), imbalance = max / mean; ranks
 * without a value (NaN) are left out. */
static void test_spread(void **state)
{
    (void)state;
    const double v[] = { 4, NAN, 2, 6, 2, 6 };
    const int rank[] = { 0, 1, 2, 3, 4, 5 };
    double scratch[6];
    tl_spread sp;
    tl_spread_of(&sp, v, rank, 6, scratch);
    assert_int_equal(sp.n, 5);
    assert_true(sp.min == 2 && sp.min_rank == 2 && sp.max == 6 && sp.max_rank == 3);
    assert_true(sp.mean == 4 && sp.median == 4 && sp.std == 2 && sp.imbalance == 1.5);
    tl_spread_of(&sp, v + 1, rank + 1, 1, scratch); /* only NaN */
    assert_int_equal(sp.n, 0);
    tl_spread_of(&sp, v, rank, 1, scratch); /* one rank: no spread */
    assert_true(sp.n == 1 && sp.std == 0 && sp.imbalance == 1 && sp.median == 4);
    const double zero[] = { 0, 0 };
    tl_spread_of(&sp, zero, rank, 2, scratch);
    assert_true(sp.n == 2 && sp.imbalance == 1.0); /* mean 0: balanced, not a division by 0 */
}

static void test_rules(void **state)
{
    (void)state;
    check_section("rules", tl_docs_rules);
}

/* The rule table carries each rule's check and texts together, and its
 * texts name thresholds by {NAME}: every name is a threshold of
 * tl_rule_thresholds (so the docs show the value the check uses), every
 * threshold is named by some text, the advice (shown with every finding)
 * names none, and the rules one check decides sit next to each other. */
static void test_rule_table(void **state)
{
    (void)state;
    size_t n, nt;
    const tl_rule_info *rules = tl_rules(&n);
    const tl_rule_threshold *t = tl_rule_thresholds(&nt);
    unsigned char *named = calloc(nt, 1);
    assert_non_null(named);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(rules[i].check);
        for (size_t k = 0; k + 1 < i; k++) /* one check's rules are adjacent */
            if (rules[k].check == rules[i].check && rules[k + 1].check != rules[i].check)
                fail_msg("%s and %s share a check but are apart in the table", rules[k].id, rules[i].id);
        if (strchr(rules[i].advice, '{') != NULL)
            fail_msg("%s: its advice names a threshold", rules[i].id);
        const char *texts[] = { rules[i].condition, rules[i].preconditions, rules[i].evidence, rules[i].scale };
        for (size_t k = 0; k < 4; k++)
            for (const char *p = texts[k] ? strchr(texts[k], '{') : NULL; p; p = strchr(p + 1, '{')) {
                const char *close = strchr(p, '}');
                const tl_rule_threshold *th = close ? tl_docs_threshold(p + 1, (size_t)(close - p - 1)) : NULL;
                if (th == NULL)
                    fail_msg("%s: \"%.40s\" names no threshold of tl_rule_thresholds", rules[i].id, p);
                named[th - t] = 1;
            }
    }
    for (size_t k = 0; k < nt; k++)
        if (!named[k])
            fail_msg("threshold %s is named by no rule's text", t[k].name);
    free(named);
    /* the docs write a threshold as the findings do */
    char *doc = generate(tl_docs_rules);
    tt_assert_contains(doc, "| `low-gpu-utilization` | warning | the GPU is busy less than 50% of the kernel time",
                       NULL);
    tt_assert_contains(doc, "at least 1 ms of kernel time and 5 GPU events", NULL);
    tt_assert_contains(doc, "reserved memory is over 1.5x the allocated memory and over 1 GiB more", NULL);
    tt_assert_contains(doc, "grows by 256 MiB and 10% or more", NULL);
    assert_null(strchr(doc, '{'));
    free(doc);
}

/* The table means what it says: a few names from it and from the issue. */
static void test_kernel_class_examples(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int cc, type;
    } cases[] = {
        { "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", TL_CC_KERNEL, TL_KT_COMM },
        { "ncclDevKernel_AllGather_RING_LL", TL_CC_KERNEL, TL_KT_COMM },
        { "void multimem_all_reduce_kernel<float, 4>(...)", TL_CC_KERNEL, TL_KT_COMM },
        { "void c10d::symmetric_memory::one_shot_all_reduce_kernel<__nv_bfloat16, 16, 8>", TL_CC_KERNEL, TL_KT_COMM },
        { "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>", TL_CC_KERNEL, TL_KT_COMM },
        { "nvshmemi_transfer_rma_kernel", TL_CC_KERNEL, TL_KT_COMM },
        { "rccl_AllReduce_kernel", TL_CC_KERNEL, TL_KT_COMM },
        { "hcclAllReduce", TL_CC_KERNEL, TL_KT_COMM },
        { "trtllm::allreduce_fusion_kernel_oneshot_lamport", TL_CC_KERNEL, TL_KT_COMM }, /* any case */
        { "my_custom_ar_kernel", TL_CC_KERNEL, TL_KT_COMPUTE },
        { "tensorrt_llm::kernels::AllReduceKernel<float>", TL_CC_KERNEL, TL_KT_COMM },
        { "void at::native::reduce_kernel<512, 1>", TL_CC_KERNEL, TL_KT_COMPUTE },
        { "void at::native::vectorized_elementwise_kernel<4>", TL_CC_KERNEL, TL_KT_COMPUTE },
        { "Memcpy HtoD (Pageable -> Device)", TL_CC_MEMCPY, TL_KT_MEMORY },
        { "Memset (Device)", TL_CC_MEMSET, TL_KT_MEMORY },
        { "ncclKernel_SendRecv (a copy by category)", TL_CC_MEMCPY, TL_KT_MEMORY },
        { "Stream Wait Event", TL_CC_SYNC, TL_KT_OTHER },
    };
    static char longer[6000];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int t = tl_kernel_type_of(NULL, cases[i].name, strlen(cases[i].name), cases[i].cc);
        if (t != cases[i].type)
            fail_msg("%s: %s, want %s", cases[i].name, tl_kernel_type_name(t), tl_kernel_type_name(cases[i].type));
        /* names beyond the lower-case buffer take the general glob: the same answers */
        size_t n = strlen(cases[i].name);
        memcpy(longer, cases[i].name, n);
        memset(longer + n, 'x', sizeof longer - n);
        assert_int_equal(tl_kernel_type_of(NULL, longer, sizeof longer, cases[i].cc), cases[i].type);
    }
    /* '?' and upper case in a user's pattern */
    tl_kernel_classes *k = tl_kernel_classes_new();
    assert_non_null(k);
    assert_null(tl_kernel_classes_spec(k));
    assert_int_equal(tl_kernel_classes_add(k, "*MY_?USTOM*=memory"), 0);
    assert_int_equal(tl_kernel_type_of(k, "x_my_custom_ar_kernel", 21, TL_CC_KERNEL), TL_KT_MEMORY);
    assert_int_equal(tl_kernel_classes_add(k, "*FUSED_ALLREDUCE*=memory"), 0);
    assert_int_equal(tl_kernel_type_of(k, "void fused_AllReduce_k", 22, TL_CC_KERNEL), TL_KT_MEMORY);
    tl_kernel_classes_free(k);
    /* a user's pattern comes first */
    k = tl_kernel_classes_new();
    assert_non_null(k);
    assert_int_equal(tl_kernel_classes_add(k, "my_custom_ar*=comm"), 0);
    assert_int_equal(tl_kernel_type_of(k, "my_custom_ar_kernel", 19, TL_CC_KERNEL), TL_KT_COMM);
    assert_int_equal(tl_kernel_classes_add(k, "nccl*=compute"), 0);
    assert_int_equal(tl_kernel_type_of(k, "ncclDevKernel_AllGather", 23, TL_CC_KERNEL), TL_KT_COMPUTE);
    assert_int_equal(tl_kernel_classes_add(k, "no-type"), -1);
    assert_int_equal(tl_kernel_classes_add(k, "x=bogus"), -1);
    assert_int_equal(tl_kernel_classes_add(k, "a; b=memory"), -1); /* the recorded form's separator */
    /* the recorded form, types by their canonical names, reads back into the same table */
    assert_string_equal(tl_kernel_classes_spec(k), "my_custom_ar*=communication; nccl*=compute");
    tl_kernel_classes *back = tl_kernel_classes_new();
    assert_non_null(back);
    assert_int_equal(tl_kernel_classes_parse(back, tl_kernel_classes_spec(k)), 0);
    assert_string_equal(tl_kernel_classes_spec(back), tl_kernel_classes_spec(k));
    assert_int_equal(tl_kernel_type_of(back, "ncclDevKernel_AllGather", 23, TL_CC_KERNEL), TL_KT_COMPUTE);
    assert_int_equal(tl_kernel_classes_parse(back, "x=bogus"), -1);
    /* two tables at once in one process: each classifies by its own patterns */
    assert_int_equal(tl_kernel_type_of(NULL, "ncclDevKernel_AllGather", 23, TL_CC_KERNEL), TL_KT_COMM);
    assert_int_equal(tl_kernel_type_of(k, "ncclDevKernel_AllGather", 23, TL_CC_KERNEL), TL_KT_COMPUTE);
    tl_kernel_classes_free(k);
    tl_kernel_classes_free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_types),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_rule_table),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_metrics_registry),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_kernel_class_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
