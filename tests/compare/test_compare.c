/*
 * test_compare.c - matching and verdicts of `tally compare`
 * (tools/analyze/compare.c) on synthetic aggregates of two ranks:
 *  - a name 30 % slower on every rank is a regression overall and per rank, a
 *    name 30 % faster an improvement, one with the same distribution
 *    unchanged, and the geomean is the mean of the log ratios;
 *  - a 3 % slowdown is never a regression (threshold 5 %); a 20 % slowdown
 *    with 3 samples a rank is "too few samples" on each rank, and a
 *    regression over all ranks (6 samples, exact test); names on one side only
 *    are added or removed, listed once (no per-rank rows);
 *  - the all-ranks row's p is the smallest per-rank p times the ranks;
 *  - --normalize matches "void foo<float, 4>(float*)" with "void
 *    foo<double, 8>(double*)" as "foo", which exact matching lists as one
 *    removed and one added;
 *  - the normalization rules on real kernel names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

typedef struct nspec {
    int group;
    const char *name;
    double base_ns;     /* each sample: base_ns times about 1 ± 4 % */
    int n;              /* samples */
} nspec;

static uint64_t rng_state;

/* A deterministic factor around 1 (uniform within ±4 %). */
static double noise(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return 0.96 + 0.08 * (double)(rng_state >> 11) / 9007199254740992.0;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

static void make_session(tl_session *s, int rank, const nspec *spec, size_t n)
{
    memset(s, 0, sizeof *s);
    char path[64];
    snprintf(path, sizeof path, "rank%d.json", rank);
    s->path = xstrdup(path);
    s->rank_detail = xstrdup("test");
    s->format = TL_FMT_KINETO;
    s->rank = rank;
    s->world_size = 2;
    s->rank_source = TL_RANK_CONTENT;
    s->span_ns = 1000000;
    s->peak_allocated = s->peak_reserved = s->device_total = s->peak_rss = s->gpu_util_mean = NAN;
    s->names = calloc(n + 1, sizeof *s->names);
    assert_non_null(s->names);
    for (size_t i = 0; i < n; i++) {
        tl_sname *x = &s->names[s->nnames++];
        x->group = spec[i].group;
        x->name = xstrdup(spec[i].name);
        x->exact = 1;
        x->median_ns = x->p95_ns = x->std_ns = NAN;
        for (int k = 0; k < spec[i].n; k++)
            tl_dur_stat_add(&x->d, (uint64_t)(spec[i].base_ns * noise()), TL_PROFILE_MAX_SAMPLES);
    }
}

static void make_run(tl_aggregate *a, const nspec *spec, size_t n)
{
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < 2; rank++) {
        tl_session s;
        make_session(&s, rank, spec, n);
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static const nspec base_spec[] = {
    { TL_GROUP_KERNELS, "slow_kernel", 100000, 60 },
    { TL_GROUP_KERNELS, "fast_kernel", 100000, 60 },
    { TL_GROUP_OPS, "same_op", 20000, 60 },
    { TL_GROUP_OPS, "slightly_slower", 20000, 200 },
    { TL_GROUP_OPS, "few_calls", 50000, 3 },
    { TL_GROUP_OPS, "only_in_baseline", 1000, 10 },
    { TL_GROUP_KERNELS, "void foo<float, 4>(float*)", 5000, 30 },
};

static const nspec cand_spec[] = {
    { TL_GROUP_KERNELS, "slow_kernel", 130000, 60 },
    { TL_GROUP_KERNELS, "fast_kernel", 70000, 60 },
    { TL_GROUP_OPS, "same_op", 20000, 60 },
    { TL_GROUP_OPS, "slightly_slower", 20600, 200 },
    { TL_GROUP_OPS, "few_calls", 60000, 3 },
    { TL_GROUP_SECTIONS, "only_in_candidate", 1000, 10 },
    { TL_GROUP_KERNELS, "void foo<double, 8>(double*)", 5000, 30 },
};

typedef struct fixture {
    tl_aggregate base, cand;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    rng_state = 42;
    make_run(&f->base, base_spec, sizeof base_spec / sizeof base_spec[0]);
    make_run(&f->cand, cand_spec, sizeof cand_spec / sizeof cand_spec[0]);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tl_aggregate_release(&f->base);
    tl_aggregate_release(&f->cand);
    free(f);
    return 0;
}

static const tl_cmp_row *find(const tl_compare *c, const char *name, int rank)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (!strcmp(c->rows[i].name, name) && c->rows[i].rank == rank)
            return &c->rows[i];
    return NULL;
}

static int verdict_of(const tl_compare *c, const char *name, int rank)
{
    const tl_cmp_row *r = find(c, name, rank);
    if (r == NULL) {
        print_error("no row %s rank %d\n", name, rank);
        fail();
    }
    return r->verdict;
}

static void verdicts(void **state)
{
    fixture *f = *state;
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &f->base, &f->cand, NULL), 0);
    for (int rank = -1; rank < 2; rank++) {
        assert_int_equal(verdict_of(&c, "slow_kernel", rank), TL_VERDICT_REGRESSION);
        assert_int_equal(verdict_of(&c, "fast_kernel", rank), TL_VERDICT_IMPROVEMENT);
        assert_int_equal(verdict_of(&c, "same_op", rank), TL_VERDICT_UNCHANGED);
        assert_int_equal(verdict_of(&c, "slightly_slower", rank), TL_VERDICT_UNCHANGED);
    }
    /* 3 calls a rank: too few on each rank; the 6 of all ranks get the pooled, exact, test. */
    assert_int_equal(verdict_of(&c, "few_calls", 0), TL_VERDICT_TOO_FEW);
    assert_int_equal(verdict_of(&c, "few_calls", 1), TL_VERDICT_TOO_FEW);
    assert_int_equal(verdict_of(&c, "few_calls", -1), TL_VERDICT_REGRESSION);
    assert_int_equal(find(&c, "few_calls", -1)->test, TL_TEST_EXACT);
    assert_true(fabs(find(&c, "few_calls", -1)->p_value - 2.0 / 924.0) < 1e-12); /* 2 / C(12, 6) */
    const tl_cmp_row *slow = find(&c, "slow_kernel", -1);
    assert_true(slow->delta_pct > 25 && slow->delta_pct < 35);
    assert_true(slow->significant);
    assert_true(slow->base.ci_lo <= slow->base.median && slow->base.median <= slow->base.ci_hi);
    assert_int_equal(slow->base.nsamples, 120);
    /* The all-ranks p: the smaller per-rank p times 2. */
    double p0 = find(&c, "slow_kernel", 0)->p_value, p1 = find(&c, "slow_kernel", 1)->p_value;
    assert_int_equal(slow->test, TL_TEST_RANKS);
    assert_true(fabs(slow->p_value - fmin(1.0, 2 * fmin(p0, p1))) < 1e-15);
    assert_true(slow->p_adjusted >= slow->p_value);
    /* The 3 % change is significant with 400 samples but under the threshold. */
    assert_true(find(&c, "slightly_slower", -1)->delta_pct > 1);
    /* Added and removed names: once, overall. */
    assert_int_equal(verdict_of(&c, "only_in_baseline", -1), TL_VERDICT_REMOVED);
    assert_int_equal(verdict_of(&c, "only_in_candidate", -1), TL_VERDICT_ADDED);
    assert_null(find(&c, "only_in_candidate", 0));
    assert_int_equal(verdict_of(&c, "void foo<float, 4>(float*)", -1), TL_VERDICT_REMOVED);
    assert_int_equal(verdict_of(&c, "void foo<double, 8>(double*)", -1), TL_VERDICT_ADDED);
    assert_int_equal(c.counts[TL_VERDICT_REGRESSION], 4);
    assert_int_equal(c.counts[TL_VERDICT_IMPROVEMENT], 3);
    assert_int_equal(c.counts[TL_VERDICT_ADDED], 2);
    assert_int_equal(c.counts[TL_VERDICT_REMOVED], 2);
    assert_int_equal(c.nbase_only + c.ncand_only, 0);
    /* Geomean of the medians over the 5 names in both runs. */
    assert_int_equal(c.geomean_n, 5);
    double logs = 0;
    const char *both[] = { "slow_kernel", "fast_kernel", "same_op", "slightly_slower", "few_calls" };
    for (int i = 0; i < 5; i++) {
        const tl_cmp_row *r = find(&c, both[i], -1);
        logs += log(r->cand.median / r->base.median);
    }
    assert_true(fabs(c.geomean_ratio - exp(logs / 5)) < 1e-12);
    tl_compare_release(&c);
}

static void normalized(void **state)
{
    fixture *f = *state;
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.normalize = 1;
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &f->base, &f->cand, &o), 0);
    assert_int_equal(verdict_of(&c, "foo", -1), TL_VERDICT_UNCHANGED);
    assert_int_equal(verdict_of(&c, "foo", 1), TL_VERDICT_UNCHANGED);
    assert_int_equal(c.counts[TL_VERDICT_ADDED], 1);
    assert_int_equal(c.counts[TL_VERDICT_REMOVED], 1);
    tl_compare_release(&c);
}

static void metric_total_and_no_correction(void **state)
{
    fixture *f = *state;
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.metric = TL_CMP_TOTAL;
    o.correction = TL_CMP_NO_CORRECTION;
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &f->base, &f->cand, &o), 0);
    const tl_cmp_row *r = find(&c, "slow_kernel", 0);
    assert_true(fabs(r->value_base - r->base.total) < 1e-9);
    assert_true(fabs(r->delta_pct - 100 * (r->cand.total - r->base.total) / r->base.total) < 1e-9);
    assert_true(r->p_adjusted == r->p_value);
    tl_compare_release(&c);
}

static void check_norm(const char *in, const char *want)
{
    char *got = tl_compare_normalize(in);
    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        print_error("normalize(\"%s\") = \"%s\", want \"%s\"\n", in, got, want);
        free(got);
        fail();
    }
    free(got);
}

static void normalize_rules(void **state)
{
    (void)state;
    check_norm("void foo<float, 4>(float*, int)", "foo");
    check_norm("ProfilerStep#12", "ProfilerStep");
    check_norm("layer_3", "layer");
    check_norm("aten::mm", "aten::mm");
    check_norm("conv2d", "conv2d");
    check_norm("void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, "
               "2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, long)",
               "at::native::(anonymous namespace)::indexSelectLargeIndex");
    check_norm("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
               "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    check_norm("at::native::(anonymous namespace)::foo", "at::native::(anonymous namespace)::foo");
    check_norm("Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pinned -> Device)");
    check_norm("operator<<", "operator<<");
    check_norm("<unknown>", "<unknown>");
    check_norm("42", "42");
    check_norm("", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(normalized, setup, teardown),
        cmocka_unit_test_setup_teardown(metric_total_and_no_correction, setup, teardown),
        cmocka_unit_test(normalize_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
