/*
 * test_compare.c - matching and verdicts of `tally compare`
 * (tools/analyze/compare.c) on synthetic aggregates of two ranks:
 *  - a name 30 % slower on every rank is a regression overall and per rank, a
 *    name 30 % faster an improvement, one with the same distribution
 *    unchanged, and the geomean is the mean of the log ratios;
 *  - a 3 % slowdown is never a regression (threshold 5 %); a 20 % slowdown
 *    with 3 samples a rank is "too few samples" on each rank and over all
 *    ranks (the stratified test of 3 against 3 on 2 ranks cannot reach
 *    significance); names on one side only are added or removed, listed once
 *    (no per-rank rows);
 *  - the all-ranks row's test is the stratified U test: the ranks' U summed;
 *  - one call a rank (FramePack, Inferix, the demo): the untested verdict on
 *    one rank, the rank-level test on 4 and 8 ranks, where a spike on one
 *    rank neither makes nor hides a regression; 4 calls on 4 ranks: the
 *    stratified test finds +25 % on every rank, not +25 % on one rank, and
 *    not a steady +4 % (within the threshold, which is in the hypothesis);
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
#include "text_numbers.h"
#include "units.h"
#include "tt_support.h"

/* The statistical tests below are about the tests, families and untested
 * verdicts, on runs of a few stages each a sizeable share of the run: they
 * run with materiality off (--materiality 0, every primary row may fail the
 * gate), as before it. Materiality has tests of its own (materiality_*),
 * which call tl_compare_run with the defaults. */

/* A row's note as a user reads it: its numbers written by the one formatter
 * (analyze hands them to render as typed values). Valid until the next call. */
static const char *note_of(const tl_cmp_row *r)
{
    static char *text;
    free(text);
    text = r->note ? tl_text_numbers(r->note) : NULL;
    return text;
}

static int run_stat(tl_compare *c, const tl_aggregate *b, const tl_aggregate *k, const tl_cmp_options *o)
{
    tl_cmp_options x;
    if (o)
        x = *o;
    else
        tl_cmp_options_init(&x);
    if (isnan(x.material_pct))
        x.material_pct = 0;
    return tl_compare_run(c, b, k, &x);
}

typedef struct nspec {
    int group;
    const char *name;
    double base_ns; /* each sample: base_ns times about 1 ± 4 % */
    int n;          /* samples */
} nspec;

static uint64_t rng_state;

/* A deterministic factor around 1 (uniform within ±4 %). */
static double noise(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return 0.96 + 0.08 * (double)(rng_state >> 11) / 9007199254740992.0;
}

static void make_session(tl_session *s, int rank, const nspec *spec, size_t n)
{
    memset(s, 0, sizeof *s);
    char path[64];
    snprintf(path, sizeof path, "rank%d.json", rank);
    s->id.path = tt_xstrdup(path);
    s->id.rank_detail = tt_xstrdup("test");
    s->id.format = TL_FMT_KINETO;
    s->id.rank = rank;
    s->id.world_size = 2;
    s->id.rank_source = TL_RANK_CONTENT;
    s->span_ns = 1000000;
    s->peak_allocated = s->peak_reserved = s->device_total = s->peak_rss = s->gpu_util_mean = NAN;
    s->names = calloc(n + 1, sizeof *s->names);
    assert_non_null(s->names);
    for (size_t i = 0; i < n; i++) {
        tl_sname *x = &s->names[s->nnames++];
        x->group = spec[i].group;
        x->name = tt_xstrdup(spec[i].name);
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

static const tl_cmp_row *find_kind(const tl_compare *c, const char *name, int rank, int kind)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (!strcmp(c->rows[i].name, name) && c->rows[i].rank == rank && c->rows[i].kind == kind)
            return &c->rows[i];
    return NULL;
}

static const tl_cmp_row *find(const tl_compare *c, const char *name, int rank)
{
    return find_kind(c, name, rank, TL_CMP_PER_CALL);
}

/* Rows of a verdict among the rows of one kind. */
static size_t count_kind(const tl_compare *c, int kind, int verdict)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nrows; i++)
        n += c->rows[i].kind == kind && c->rows[i].verdict == verdict;
    return n;
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
    assert_int_equal(run_stat(&c, &f->base, &f->cand, NULL), 0);
    for (int rank = -1; rank < 2; rank++) {
        assert_int_equal(verdict_of(&c, "slow_kernel", rank), TL_VERDICT_REGRESSION);
        assert_int_equal(verdict_of(&c, "fast_kernel", rank), TL_VERDICT_IMPROVEMENT);
        assert_int_equal(verdict_of(&c, "same_op", rank), TL_VERDICT_UNCHANGED);
        assert_int_equal(verdict_of(&c, "slightly_slower", rank), TL_VERDICT_UNCHANGED);
    }
    /* 3 calls a rank: too few on each rank; all ranks are not pooled as if
     * the ranks' calls were one sample: the stratified test of 3 against 3
     * calls on each of 2 ranks can give at best (1 / C(6, 3))^2 = 1/400
     * one-sided, never significant over the explanatory family: too few
     * samples (+20 %, inside the large-change threshold). */
    assert_int_equal(verdict_of(&c, "few_calls", 0), TL_VERDICT_TOO_FEW);
    assert_int_equal(verdict_of(&c, "few_calls", 1), TL_VERDICT_TOO_FEW);
    assert_int_equal(verdict_of(&c, "few_calls", -1), TL_VERDICT_TOO_FEW);
    assert_int_equal(find(&c, "few_calls", -1)->test, TL_TEST_NONE);
    assert_true(fabs(find(&c, "few_calls", -1)->p_floor - 1.0 / 400.0) < 1e-12);
    const tl_cmp_row *slow = find(&c, "slow_kernel", -1);
    assert_true(slow->delta_pct > 25 && slow->delta_pct < 35);
    assert_true(slow->significant);
    assert_true(slow->base.ci_lo <= slow->base.median && slow->base.median <= slow->base.ci_hi);
    assert_int_equal(slow->base.nsamples, 120);
    /* The all-ranks test: the ranks' U statistics (60 against 60 calls each)
     * summed, normal: U of each rank is its row's, and the sum is smaller in
     * p than either rank alone. */
    const tl_cmp_row *s0 = find(&c, "slow_kernel", 0), *s1 = find(&c, "slow_kernel", 1);
    assert_int_equal(slow->test, TL_TEST_STRATA);
    assert_int_equal(s0->test, TL_TEST_NORMAL);
    assert_true(fabs(slow->u - (s0->u + s1->u)) < 1e-9);
    assert_true(slow->p_up < fmin(s0->mwu_up.p_greater, s1->mwu_up.p_greater));
    assert_true(slow->p_adjusted >= slow->p_value);
    /* The 3 % change is significant with 400 samples but under the threshold. */
    assert_true(find(&c, "slightly_slower", -1)->delta_pct > 1);
    /* Added and removed names: once, overall. */
    assert_int_equal(verdict_of(&c, "only_in_baseline", -1), TL_VERDICT_REMOVED);
    assert_int_equal(verdict_of(&c, "only_in_candidate", -1), TL_VERDICT_ADDED);
    assert_null(find(&c, "only_in_candidate", 0));
    assert_int_equal(verdict_of(&c, "void foo<float, 4>(float*)", -1), TL_VERDICT_REMOVED);
    assert_int_equal(verdict_of(&c, "void foo<double, 8>(double*)", -1), TL_VERDICT_ADDED);
    assert_int_equal(count_kind(&c, TL_CMP_PER_CALL, TL_VERDICT_REGRESSION), 3);
    assert_int_equal(count_kind(&c, TL_CMP_PER_CALL, TL_VERDICT_IMPROVEMENT), 3);
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
    /* The total per run: the calls' total, summed over the ranks (count x
     * median per call beside it, for the untested verdict); a primary row
     * (kernels) that fails the gate, tested through its ranks. */
    const tl_cmp_row *run = find_kind(&c, "slow_kernel", -1, TL_CMP_PER_RUN);
    assert_non_null(run);
    assert_true(run->primary);
    assert_int_equal(run->verdict, TL_VERDICT_REGRESSION);
    assert_true(run->gate);
    assert_int_equal(run->test, TL_TEST_STRATA);
    double want = 0;
    for (int rank = 0; rank < 2; rank++) {
        const tl_cmp_row *r = find_kind(&c, "slow_kernel", rank, TL_CMP_PER_RUN);
        assert_true(fabs(r->value_base - find(&c, "slow_kernel", rank)->base.total) < 1e-6);
        assert_true(fabs(r->robust_base - 60.0 * find(&c, "slow_kernel", rank)->base.median) < 1e-6);
        assert_true(fabs(r->p_up - find(&c, "slow_kernel", rank)->p_up) < 1e-15);
        want += r->value_base;
    }
    assert_true(fabs(run->value_base - want) < 1e-6);
    /* Ops explain: their totals are not in the gate family. */
    assert_false(find_kind(&c, "few_calls", -1, TL_CMP_PER_RUN)->primary);
    assert_false(find(&c, "slow_kernel", -1)->gate);
    /* Improvements never fail the gate; only slow_kernel's all-ranks per-run row does. */
    assert_int_equal(c.gate_failures, 1);
    assert_false(find_kind(&c, "slow_kernel", 0, TL_CMP_PER_RUN)->primary);
    tl_compare_release(&c);
}

/* ---- one run per side, ranks as samples, memory, counts -------------------- */

typedef struct rank_spec {
    const char *name;
    double ns[8];   /* per rank: the one call's duration; 0: absent */
    uint64_t count; /* calls (each of the same duration) */
} rank_spec;

/* A run of nranks sessions, each with one sample per name (count calls of
 * ns each), steps steps, and the given peak allocated memory. */
static void make_ranks(tl_aggregate *a, int nranks, const rank_spec *spec, size_t n, size_t steps, double peak)
{
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < nranks; rank++) {
        tl_session s;
        make_session(&s, rank, NULL, 0);
        s.id.world_size = nranks;
        s.peak_allocated = peak * (1 + 0.001 * rank);
        free(s.names);
        s.names = calloc(n + 1, sizeof *s.names);
        assert_non_null(s.names);
        for (size_t i = 0; i < n; i++) {
            tl_sname *x = &s.names[s.nnames++];
            x->group = TL_GROUP_SECTIONS;
            x->name = tt_xstrdup(spec[i].name);
            x->exact = 1;
            x->median_ns = x->p95_ns = x->std_ns = NAN;
            for (uint64_t k = 0; k < spec[i].count; k++)
                tl_dur_stat_add(&x->d, (uint64_t)spec[i].ns[rank], TL_PROFILE_MAX_SAMPLES);
        }
        s.steps = calloc(steps + 1, sizeof *s.steps);
        assert_non_null(s.steps);
        for (size_t k = 0; k < steps; k++)
            s.steps[s.nsteps++] = (tl_sstep){ (int64_t)k, 1000000, -1, INT64_MIN, 0 };
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

/* One rank, one call per side (FramePack, Inferix): no test is possible. A
 * 9.5x slower stage is a large increase, labelled as untested, and fails the
 * gate; a 10 % change is "too few samples" and does not; --max-untested-change
 * moves the line. */
static void one_run_each(void **state)
{
    (void)state;
    const rank_spec base[] = { { "vae_decode", { 3.769e9 }, 1 }, { "sampling", { 8.2e9 }, 1 } };
    const rank_spec cand[] = { { "vae_decode", { 3.769e9 * 9.5 }, 1 }, { "sampling", { 9.02e9 }, 1 } };
    tl_aggregate b, c2;
    make_ranks(&b, 1, base, 2, 0, 8.2e9);
    make_ranks(&c2, 1, cand, 2, 0, 23.8e9);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    const tl_cmp_row *r = find_kind(&c, "vae_decode", -1, TL_CMP_PER_RUN);
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_int_equal(r->test, TL_TEST_NONE);
    assert_true(r->gate);
    assert_true(fabs(r->delta_pct - 850.0) < 1e-6);
    assert_string_equal(note_of(r), "+850.0%, one run each: beyond the large-change threshold (25%), not tested");
    r = find_kind(&c, "sampling", -1, TL_CMP_PER_RUN);
    assert_int_equal(r->verdict, TL_VERDICT_TOO_FEW);
    assert_false(r->gate);
    assert_null(r->note);
    /* Peak memory 8.2 -> 23.8 GB: a large increase of a primary row. */
    r = find_kind(&c, "peak_allocated", -1, TL_CMP_PEAK_ALLOCATED);
    assert_non_null(r);
    assert_int_equal(r->group, TL_CMP_GROUP_MEMORY);
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(r->gate);
    assert_int_equal(c.gate_failures, 2); /* vae_decode and memory, all ranks (rank rows explain) */
    assert_int_equal(find_kind(&c, "vae_decode", 0, TL_CMP_PER_RUN)->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_false(find_kind(&c, "vae_decode", 0, TL_CMP_PER_RUN)->gate);
    tl_compare_release(&c);
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.max_untested_pct = 1000;
    assert_int_equal(run_stat(&c, &b, &c2, &o), 0);
    assert_int_equal(find_kind(&c, "vae_decode", -1, TL_CMP_PER_RUN)->verdict, TL_VERDICT_TOO_FEW);
    assert_int_equal(c.gate_failures, 0);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
}

/* A rank on one side only (its file lost, a run on more GPUs): the all-ranks
 * rows compare the ranks both runs have. The same two ranks and a third in
 * the candidate read +50 % in every stage's total over each run's own ranks
 * -- untested (one report a rank), a large increase, the gate failed on
 * nothing slower; now nothing changed. A stage 9.5x slower on the common
 * ranks still fails the gate. */
static void rank_on_one_side(void **state)
{
    (void)state;
    const rank_spec spec[] = { { "vae_decode", { 3.769e9, 3.769e9, 3.769e9 }, 1 },
                               { "sampling", { 8.2e9, 8.2e9, 8.2e9 }, 1 } };
    const rank_spec slow[] = { { "vae_decode", { 3.769e9 * 9.5, 3.769e9 * 9.5, 3.769e9 * 9.5 }, 1 },
                               { "sampling", { 8.2e9, 8.2e9, 8.2e9 }, 1 } };
    tl_aggregate b, c2, c3;
    make_ranks(&b, 2, spec, 2, 0, 8.2e9);
    make_ranks(&c2, 3, spec, 2, 0, 8.2e9);
    make_ranks(&c3, 3, slow, 2, 0, 8.2e9);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    assert_true(c.common_only);
    assert_int_equal(c.nranks, 2);
    assert_int_equal(c.ncand_only, 1);
    const tl_cmp_row *r = find_kind(&c, "vae_decode", -1, TL_CMP_PER_RUN);
    assert_true(fabs(r->value_base - 2 * 3.769e9) < 1 && fabs(r->value_cand - 2 * 3.769e9) < 1);
    assert_true(fabs(r->delta_pct) < 1e-9);
    assert_int_equal(r->verdict, TL_VERDICT_TOO_FEW);
    assert_int_equal(c.gate_failures, 0);
    assert_int_equal(c.counts[TL_VERDICT_LARGE_INCREASE], 0);
    tl_compare_release(&c);
    assert_int_equal(run_stat(&c, &b, &c3, NULL), 0);
    r = find_kind(&c, "vae_decode", -1, TL_CMP_PER_RUN);
    assert_true(fabs(r->delta_pct - 850.0) < 1e-6);
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(r->gate);
    assert_int_equal(find_kind(&c, "sampling", -1, TL_CMP_PER_RUN)->verdict, TL_VERDICT_TOO_FEW);
    assert_int_equal(c.gate_failures, 1);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
    tl_aggregate_release(&c3);
}

/* One rank, one run: a section "wait" with these calls (ms) and five others
 * of three calls of 13 ms (so that wait is a share of the run worth the
 * gate, and three calls against three cannot be significant in a family of
 * six: untested). */
static void make_calls(tl_aggregate *a, const double *ms, int n)
{
    tl_aggregate_init(a, NULL);
    tl_session s;
    make_session(&s, 0, NULL, 0);
    s.id.world_size = 1;
    s.span_ns = 400000000;
    free(s.names);
    s.names = calloc(6, sizeof *s.names);
    assert_non_null(s.names);
    const char *names[6] = { "wait", "work_a", "work_b", "work_c", "work_d", "work_e" };
    for (int k = 0; k < 6; k++) {
        tl_sname *x = &s.names[s.nnames++];
        x->group = TL_GROUP_SECTIONS;
        x->name = tt_xstrdup(names[k]);
        x->exact = 1;
        x->median_ns = x->p95_ns = x->std_ns = NAN;
        for (int i = 0; i < (k ? 3 : n); i++)
            tl_dur_stat_add(&x->d, (uint64_t)((k ? 13 + 0.1 * i : ms[i]) * 1e6), TL_PROFILE_MAX_SAMPLES);
    }
    assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static const tl_cmp_row *compare_calls(tl_compare *c, const double *base, int nb, const double *cand, int nc)
{
    tl_aggregate b, k;
    make_calls(&b, base, nb);
    make_calls(&k, cand, nc);
    assert_int_equal(run_stat(c, &b, &k, NULL), 0);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
    return find_kind(c, "wait", -1, TL_CMP_PER_RUN);
}

/* The total per run is the calls' total: a wait that took 40-53 ms in two
 * calls of six and 1-3 ms in the others (HTA trace_diff's test run), against
 * six of 6.4 ms, fell 62 % -- count x median read +225 % and the gate failed
 * on it. One outlier call among three (too few to test) moves the total
 * (+66.7 %) but not count x median: not a verdict from the effect size
 * alone; all three calls 30 % slower is. */
static void total_per_run(void **state)
{
    (void)state;
    tl_compare c;
    const double bimodal[] = { 1.131, 1.133, 1.316, 2.611, 41.792, 52.989 };
    const double even[] = { 6.38, 6.39, 6.37, 6.38, 6.39, 6.39 };
    const tl_cmp_row *r = compare_calls(&c, bimodal, 6, even, 6);
    assert_true(fabs(r->value_base - 100.972e6) < 1e3 && fabs(r->value_cand - 38.3e6) < 1e3);
    assert_true(fabs(r->delta_pct + 62.07) < 0.01);
    assert_true(r->robust_cand > r->robust_base); /* count x median: +225 % */
    assert_int_not_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_false(r->gate);
    assert_int_equal(c.gate_failures, 0);
    tl_compare_release(&c);

    const double three[] = { 10, 10, 10 }, spike[] = { 10, 10, 30 }, slower[] = { 13, 13, 13 };
    r = compare_calls(&c, three, 3, spike, 3);
    assert_true(fabs(r->delta_pct - 200.0 / 3) < 1e-6);
    assert_int_equal(r->verdict, TL_VERDICT_TOO_FEW);
    assert_false(r->gate);
    tt_assert_contains(note_of(r), "+66.7% in total but +0.0% in calls x median", "note");
    tl_compare_release(&c);

    r = compare_calls(&c, three, 3, slower, 3);
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(r->gate);
    tl_compare_release(&c);
}

/* Four ranks, one call each: no rank can be tested alone, so the ranks are
 * the samples. +20 % on every rank (with ±2 % of noise) is a regression by
 * the rank-level t test (p about 1e-4 with 3 degrees of freedom); a change
 * whose direction differs between ranks is not; and a rank row, untested,
 * does not fail the gate when its all-ranks row was tested. */
static void ranks_as_samples(void **state)
{
    (void)state;
    const rank_spec base[] = {
        { "decode", { 100e6, 120e6, 90e6, 150e6 }, 1 },
        { "mixed", { 100e6, 100e6, 100e6, 100e6 }, 1 },
    };
    const rank_spec cand[] = {
        { "decode", { 121e6, 142e6, 109e6, 183e6 }, 1 },
        { "mixed", { 130e6, 75e6, 125e6, 80e6 }, 1 },
    };
    tl_aggregate b, c2;
    make_ranks(&b, 4, base, 2, 0, NAN);
    make_ranks(&c2, 4, cand, 2, 0, NAN);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    const tl_cmp_row *r = find_kind(&c, "decode", -1, TL_CMP_PER_RUN);
    assert_int_equal(r->test, TL_TEST_RANK_T);
    /* Two rows: too few to pool (TL_CMP_POOL_MIN), so Student's t of the
     * row alone over log ratio - log(1.05), 3 degrees of freedom. */
    assert_true(r->p_value < 1e-3);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    /* The same test for the per-call row (explanatory: no gate). */
    assert_int_equal(find(&c, "decode", -1)->verdict, TL_VERDICT_REGRESSION);
    assert_false(find(&c, "decode", -1)->gate);
    const tl_cmp_row *mixed = find_kind(&c, "mixed", -1, TL_CMP_PER_RUN);
    assert_int_equal(mixed->test, TL_TEST_RANK_T);
    assert_true(mixed->p_value > 0.5);
    assert_int_equal(mixed->verdict, TL_VERDICT_UNCHANGED);
    /* Rank 1's mixed row is -25 %: a large decrease, untested, no gate; its
     * +30 % rank 0 is a large increase that does not gate either (the
     * all-ranks row was tested). */
    assert_int_equal(find_kind(&c, "mixed", 0, TL_CMP_PER_RUN)->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_false(find_kind(&c, "mixed", 0, TL_CMP_PER_RUN)->gate);
    assert_int_equal(c.gate_failures, 1);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
}

/* Peak memory +8 % on each of 4 ranks: the same ratio on every rank, so the
 * rank-level test is certain (no spread), and it is a regression of a gate
 * row at the default threshold (5 %), unchanged with --memory-threshold 10. */
static void memory_rows(void **state)
{
    (void)state;
    const rank_spec spec[] = { { "decode", { 100e6, 100e6, 100e6, 100e6 }, 1 } };
    tl_aggregate b, c2;
    make_ranks(&b, 4, spec, 1, 0, 10e9);
    make_ranks(&c2, 4, spec, 1, 0, 10.8e9);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    const tl_cmp_row *r = find_kind(&c, "peak_allocated", -1, TL_CMP_PEAK_ALLOCATED);
    assert_non_null(r);
    assert_true(fabs(r->value_base - 10e9 * 1.003) < 1 && fabs(r->delta_pct - 8.0) < 1e-6); /* the largest rank */
    assert_int_equal(r->test, TL_TEST_RANK_T);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    /* A rank row: one session a side, too few; explains, does not gate. */
    assert_int_equal(find_kind(&c, "peak_allocated", 2, TL_CMP_PEAK_ALLOCATED)->verdict, TL_VERDICT_TOO_FEW);
    tl_compare_release(&c);
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.memory_threshold_pct = 10;
    assert_int_equal(run_stat(&c, &b, &c2, &o), 0);
    r = find_kind(&c, "peak_allocated", -1, TL_CMP_PEAK_ALLOCATED);
    assert_int_equal(r->verdict, TL_VERDICT_UNCHANGED);
    assert_int_equal(c.gate_failures, 0);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
}

/* Calls per step: 6 chunks of 26 ms instead of 4 of 30 ms, over 10 steps.
 * Each call is faster, the total per run and per step 30 % larger, and the
 * count change is named. */
static void calls_per_step(void **state)
{
    (void)state;
    const rank_spec base[] = { { "chunk", { 30e6, 30e6, 30e6 }, 4 } };
    const rank_spec cand[] = { { "chunk", { 26e6, 26e6, 26e6 }, 6 } };
    tl_aggregate b, c2;
    make_ranks(&b, 3, base, 1, 10, NAN);
    make_ranks(&c2, 3, cand, 1, 10, NAN);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    const tl_cmp_row *r = find_kind(&c, "chunk", -1, TL_CMP_CALLS_PER_STEP);
    assert_non_null(r);
    assert_int_equal(r->verdict, TL_VERDICT_CHANGED);
    assert_true(fabs(r->value_base - 0.4) < 1e-12 && fabs(r->value_cand - 0.6) < 1e-12);
    assert_string_equal(r->note, "called 6 times per run instead of 4 (0.6 per step instead of 0.4)");
    r = find_kind(&c, "chunk", -1, TL_CMP_PER_STEP);
    assert_true(fabs(r->value_base - 12e6) < 1 && fabs(r->value_cand - 15.6e6) < 1);
    assert_true(fabs(r->delta_pct - 30.0) < 1e-6);
    /* Identical ranks: no spread, the change is certain (rank-level t, p = 0). */
    assert_int_equal(find_kind(&c, "chunk", -1, TL_CMP_PER_RUN)->verdict, TL_VERDICT_REGRESSION);
    /* Per call: 4 vs 6 samples a rank, every call 13 % faster, and the ranks
     * copies of each other: one stratum, whose floor is 1 / C(10, 4); the
     * shifted test (candidate over 0.95: still faster than every baseline
     * call) finds it significant -- but 1.5x the calls of a faster function
     * made the total 30 % larger: a change of call mix, never read as an
     * improvement of the per-call time. */
    const tl_cmp_row *call = find(&c, "chunk", -1);
    assert_int_equal(call->test, TL_TEST_STRATA);
    assert_true(fabs(call->p_floor - 1.0 / 210.0) < 1e-12);
    assert_int_equal(call->u, 0);
    assert_true(call->significant);
    assert_int_equal(call->verdict, TL_VERDICT_CHANGED);
    assert_true(call->call_mix);
    assert_string_equal(note_of(call), "call mix: 6 calls per run instead of 4, each -13.3%; the total per run +30.0%");
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
}

/* One session of rank 0 (make_ranks'), taken out of its aggregate: start
 * start_ns, a span of 1 s. */
static tl_session one_session(const rank_spec *spec, size_t steps, int64_t start_ns)
{
    tl_aggregate one;
    make_ranks(&one, 1, spec, 1, steps, NAN);
    tl_session s = one.sessions[0];
    memset(&one.sessions[0], 0, sizeof one.sessions[0]); /* the caller takes it */
    tl_aggregate_release(&one);
    s.start_ns = start_ns;
    s.span_ns = 1000000000;
    return s;
}

/* A run whose one rank was recorded as two sessions (a rerun, a second
 * epoch): "times per run" and the per-rank metrics are per session, not the
 * two added up ("called 12 times per run instead of 12" for 6; a wall time of
 * two sessions read twice as long). */
static void two_sessions_a_run(void **state)
{
    (void)state;
    const rank_spec six[] = { { "chunk", { 26e6 }, 6 } }, twelve[] = { { "chunk", { 26e6 }, 12 } };
    tl_aggregate b, c2;
    tl_aggregate_init(&b, NULL);
    for (int k = 0; k < 2; k++) {
        tl_session s = one_session(six, 10, k * 5000000000LL);
        assert_int_equal(tl_aggregate_add_session(&b, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(&b), 0);
    make_ranks(&c2, 1, twelve, 1, 10, NAN);
    c2.sessions[0].span_ns = 1000000000;
    c2.ranks[0].span_ns = 1000000000;
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    const tl_cmp_row *r = find_kind(&c, "chunk", -1, TL_CMP_CALLS_PER_STEP);
    assert_non_null(r);
    assert_string_equal(r->note, "called 12 times per run instead of 6 (1.2 per step instead of 0.6)");
    const tl_cmp_metric_row *wall = NULL;
    for (size_t i = 0; i < c.nmetrics; i++)
        if (!strcmp(c.metrics[i].info->name, "span_ns"))
            wall = &c.metrics[i];
    assert_non_null(wall);
    assert_true(fabs(wall->value[0] - 1e9) < 1 && fabs(wall->delta_pct) < 1e-9); /* 2 s of two sessions: 1 s a run */
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
}

/* --sessions: the GPU breakdown is each compared session's (idle 40 % in the
 * first, 30 % in the last), not the rank's two pooled (35 % both sides). */
static void sessions_gpu_breakdown(void **state)
{
    (void)state;
    const rank_spec six[] = { { "chunk", { 26e6 }, 6 } };
    tl_aggregate a;
    tl_aggregate_init(&a, NULL);
    for (int k = 0; k < 2; k++) {
        tl_session s = one_session(six, 10, k * 5000000000LL);
        s.gpu.present = 1;
        s.gpu.kernel_time = 100000000;
        s.gpu.idle = k ? 30000000 : 40000000;
        s.gpu.compute = s.gpu.kernel_time - s.gpu.idle;
        assert_int_equal(tl_aggregate_add_session(&a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(&a), 0);
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.session[0] = 0;
    o.session[1] = -2;
    tl_compare c;
    assert_int_equal(run_stat(&c, &a, &a, &o), 0);
    assert_true(c.ngpu >= 2);
    assert_int_equal(c.gpu[0].rank, -1);
    assert_true(fabs(c.gpu[0].idle_pct[0] - 40.0) < 1e-9 && fabs(c.gpu[0].idle_pct[1] - 30.0) < 1e-9);
    assert_true(fabs(c.gpu[1].idle_pct[0] - 40.0) < 1e-9 && fabs(c.gpu[1].idle_pct[1] - 30.0) < 1e-9);
    tl_compare_release(&c);
    tl_aggregate_release(&a);
}

/* Kernels come from the GPU window, which leaves the last (cut-short)
 * ProfilerStep out: 15 kernels in a window of 5 of 6 steps are 3 a step,
 * not 2.5. */
static void kernels_per_window_step(void **state)
{
    (void)state;
    const rank_spec none[] = { { "forward", { 1e6 }, 6 } };
    tl_aggregate a[2];
    for (int side = 0; side < 2; side++) {
        tl_session s = one_session(none, 6, 0);
        s.gpu.present = 1;
        s.gpu.whole_trace = 0;
        s.gpu.steps_in_window = 5;
        s.kernels = calloc(1, sizeof *s.kernels);
        assert_non_null(s.kernels);
        s.kernels[0].name = tt_xstrdup("gemm");
        s.nkernels = 1;
        for (int k = 0; k < (side ? 20 : 15); k++)
            tl_dur_stat_add(&s.kernels[0].d, 100000, TL_PROFILE_MAX_SAMPLES);
        tl_aggregate_init(&a[side], NULL);
        assert_int_equal(tl_aggregate_add_session(&a[side], &s), 0);
        assert_int_equal(tl_aggregate_finish(&a[side]), 0);
    }
    tl_compare c;
    assert_int_equal(run_stat(&c, &a[0], &a[1], NULL), 0);
    const tl_cmp_row *r = find_kind(&c, "gemm", -1, TL_CMP_CALLS_PER_STEP);
    assert_non_null(r);
    assert_true(fabs(r->value_base - 3.0) < 1e-12 && fabs(r->value_cand - 4.0) < 1e-12);
    tl_compare_release(&c);
    tl_aggregate_release(&a[0]);
    tl_aggregate_release(&a[1]);
}

/* ---- the rules that give the gate its power ------------------------------ */

/* A run of nranks sessions of nstages sections "s0".."s<n-1>", `samples`
 * calls each: base 10 ms x (1 + stage) x a fixed pattern of +-3 % per rank
 * and call, another for each side (no randomness: the tests below are
 * exact), times factor(stage, rank, call). */
typedef double (*factor_fn)(int stage, int rank, int call);

static void make_staged(tl_aggregate *a, int nranks, int nstages, int samples, factor_fn factor, int side)
{
    static const double wobble[] = { 1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.015, 0.985, 1.005, 0.995 };
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < nranks; rank++) {
        tl_session s;
        make_session(&s, rank, NULL, 0);
        s.id.world_size = nranks;
        free(s.names);
        s.names = calloc((size_t)nstages + 1, sizeof *s.names);
        assert_non_null(s.names);
        for (int k = 0; k < nstages; k++) {
            tl_sname *x = &s.names[s.nnames++];
            char name[16];
            snprintf(name, sizeof name, "s%d", k);
            x->group = TL_GROUP_SECTIONS;
            x->name = tt_xstrdup(name);
            x->exact = 1;
            x->median_ns = x->p95_ns = x->std_ns = NAN;
            for (int i = 0; i < samples; i++) {
                double w = wobble[(size_t)(rank * 7 + k * 3 + i * 5 + side * 4) % 11];
                double v = 10e6 * (1 + k) * w * (factor ? factor(k, rank, i) : 1.0);
                tl_dur_stat_add(&x->d, (uint64_t)v, TL_PROFILE_MAX_SAMPLES);
            }
        }
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

/* s0 +25 % on every rank, but rank 5's baseline call spiked 1.6x (so rank 5
 * reads -22 %); s1 unchanged but rank 2's candidate call spiked 2.5x. */
static double spiked_cand(int stage, int rank, int call)
{
    (void)call;
    return stage == 0 ? 1.25 : stage == 1 && rank == 2 ? 2.5 : 1.0;
}

static double spiked_base(int stage, int rank, int call)
{
    (void)call;
    return stage == 0 && rank == 5 ? 1.6 : 1.0;
}

static const tl_cmp_row *run_row(const tl_compare *c, const char *name)
{
    const tl_cmp_row *r = find_kind(c, name, -1, TL_CMP_PER_RUN);
    if (r == NULL) {
        print_error("no per_run row %s\n", name);
        fail();
    }
    return r;
}

/* Two staged runs (make_staged, the candidate's calls times cand) and
 * their comparison with default options. */
typedef struct staged {
    tl_aggregate base, cand;
    tl_compare c;
} staged;

static void staged_compare(staged *s, int nranks, int nstages, int samples, factor_fn base, factor_fn cand)
{
    make_staged(&s->base, nranks, nstages, samples, base, 0);
    make_staged(&s->cand, nranks, nstages, samples, cand, 1);
    assert_int_equal(run_stat(&s->c, &s->base, &s->cand, NULL), 0);
}

static void staged_release(staged *s)
{
    tl_compare_release(&s->c);
    tl_aggregate_release(&s->base);
    tl_aggregate_release(&s->cand);
}

/* One call a rank on 8 ranks, 6 stages: the rank-level test. A spike on one
 * rank neither makes a regression (s1: +2.5x on rank 2 alone, the all-ranks
 * total +19 %) nor hides one (s0: +25 % on every rank, rank 5's baseline
 * spiked). The six stages' spreads are pooled (TL_CMP_POOL_MIN), a row
 * noisier than the pool is judged without its farthest rank, and the
 * hypotheses carry the threshold. */
static void spike_on_one_rank(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 8, 6, 1, spiked_base, spiked_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->lr_n, 8);
    assert_int_equal(r->lr_used, 7); /* rank 5, far from the others, left out */
    assert_float_equal(r->lr_est, log(1.25), 0.03);
    assert_int_equal(r->lr_up, 7); /* rank 5 reads -22 % */
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_true(r->p_value == r->p_up); /* a primary row: one-sided, its direction */
    const tl_cmp_row *spike = run_row(c, "s1");
    assert_int_equal(spike->test, TL_TEST_RANK_T);
    assert_true(spike->delta_pct > 15); /* the total moved: rank 2 is 1/8 of it */
    assert_int_equal(spike->lr_up, 1);
    assert_int_not_equal(spike->verdict, TL_VERDICT_REGRESSION);
    assert_false(spike->gate);
    /* its total moved +19 %: never shown as "unchanged" */
    assert_true(spike->verdict != TL_VERDICT_UNCHANGED || spike->inconclusive);
    for (int k = 2; k < 6; k++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", k);
        assert_int_equal(run_row(c, name)->verdict, TL_VERDICT_UNCHANGED);
    }
    assert_int_equal(c->gate_failures, 1);
    staged_release(&st);
}

/* s0 +25 % on every rank, but rank 3's baseline call spiked 2.5x: the
 * total reads 4 x 1.25 against 3 + 2.5, -9 %. */
static double turned_base(int stage, int rank, int call)
{
    (void)call;
    return stage == 0 && rank == 3 ? 2.5 : 1.0;
}

static double turned_cand(int stage, int rank, int call)
{
    (void)rank;
    (void)call;
    return stage == 0 ? 1.25 : 1.0;
}

/* One call a rank on 4 ranks: the verdict weighs the change the test
 * measured on the ranks, not the total a spike turned around; the note says
 * both. */
static void spike_turns_the_total(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 6, 1, turned_base, turned_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_true(r->delta_pct < -5); /* the totals: about -9 % */
    assert_int_equal(r->lr_used, 3);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_non_null(r->note);
    assert_non_null(
        strstr(note_of(r), "on the ranks (3 of 4, the one far from the others left out); the total moved -"));
    assert_int_equal(c->gate_failures, 1);
    staged_release(&st);
}

/* One rank, 8 calls a side: s0 +25 %, but the baseline's call 3 spiked
 * 2.5x, above every candidate call. */
static double one_rank_base(int stage, int rank, int call)
{
    (void)rank;
    return stage == 0 && call == 3 ? 2.5 : 1.0;
}

static double one_rank_cand(int stage, int rank, int call)
{
    (void)rank;
    (void)call;
    return stage == 0 ? 1.25 : 1.0;
}

/* Within one rank, 8 calls a side: the U test of 8 against 8 with one
 * baseline spike above every candidate call gives p = 67 / 12870 = 0.0052,
 * never below Holm's 0.05 / 10 however large the change; the permutation
 * test of the trimmed means drops the spike and finds the +25 %. */
static void one_rank_spike(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 1, 10, 8, one_rank_base, one_rank_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->test, TL_TEST_PERM);
    const tl_cmp_row *call = find_kind(c, "s0", 0, TL_CMP_PER_CALL);
    assert_int_equal(call->test, TL_TEST_PERM);
    tt_assert_close(call->mwu_up.p_greater, 67.0 / 12870.0, 1e-12); /* what U alone would say */
    tt_assert_close(r->p_up, 9.0 / 12870.0, 1e-12);                 /* 9 of the 12870 splits */
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_int_equal(c->gate_failures, 1);
    staged_release(&st);
}

/* s0 +7.6 % on every rank; s1 unchanged but rank 1's candidate call 1.085x. */
static double mild_spike_cand(int stage, int rank, int call)
{
    (void)call;
    return stage == 0 ? 1.076 : stage == 1 && rank == 1 ? 1.085 : 1.0;
}

/* One call a rank on 8 ranks, 10 stages: s1's rank 1 is 0.082 off the
 * others (their spread +-0.02): the row's variance is 3.9x the typical one,
 * which the F test of like noise passes (F(7, 63) at 0.001: 4.05), but the
 * sum of squares its farthest rank adds is 19x the typical variance, beyond
 * F(1, 63) at 0.001 / 8 (16.7): a spike. The row is judged without it, and
 * adds the other ranks' spread to the pool, not the spike's -- which decides
 * s0, +7.6 % on every rank, 2.6 points beyond the 5 % threshold: found with
 * the spike out of the pool (adjusted p 0.035), not with it in (0.080, the
 * former rule). */
static void mild_spike_left_out(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 8, 10, 1, NULL, mild_spike_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *spike = run_row(c, "s1");
    assert_int_equal(spike->test, TL_TEST_RANK_T);
    assert_int_equal(spike->lr_used, 7); /* rank 1 left out */
    assert_true(fabs(spike->lr_est) < 0.01);
    assert_int_equal(spike->verdict, TL_VERDICT_UNCHANGED);
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->lr_used, 8);
    assert_true(r->p_adjusted < 0.05);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_int_equal(c->gate_failures, 1);
    staged_release(&st);
}

/* Ten stages, one call a rank on 4 ranks, each rank's ratio off by the
 * pattern +-s (sd of the log ratios 0.05, the pool). s0: +25 % on ranks 0-2,
 * their ratios 1.35x the pool's spread, and rank 3's baseline spiked 2.5x.
 * Its levels (log baseline + log candidate) / 2 are quiet when only the
 * candidate moves (quiet_spike_*), spread when ranks 0-2 run 1.0, 1.6 and
 * 0.6x as long on both sides (a stage the ranks do not share alike). */
static const double quiet_pattern[] = { 1.0, -1.0, 0.5, -0.5 };

static double quiet_spike_base(int stage, int rank, int call)
{
    (void)call;
    return stage == 0 && rank == 3 ? 2.5 : 1.0;
}

static double quiet_spike_cand(int stage, int rank, int call)
{
    (void)call;
    static const double s0[] = { 0.0675, -0.0675, 0.0 };
    if (stage == 0)
        return rank == 3 ? 1.25 : 1.25 * exp(s0[rank]);
    return exp(0.05 / 0.913 * quiet_pattern[(rank + stage) % 4]);
}

static double spread_levels(int stage, int rank)
{
    static const double level[] = { 1.0, 1.6, 0.6, 1.0 };
    return stage == 0 ? level[rank] : 1.0;
}

static double spread_spike_base(int stage, int rank, int call)
{
    return quiet_spike_base(stage, rank, call) * spread_levels(stage, rank);
}

static double spread_spike_cand(int stage, int rank, int call)
{
    return quiet_spike_cand(stage, rank, call) * spread_levels(stage, rank);
}

/* A spike on one rank of the changed stage, whose other three ranks spread
 * a little more than the pool (1.35x its sd): with only their own variance
 * (2 degrees of freedom) the +25 % is not significant; their levels are as
 * quiet as the pool's, 4 degrees of freedom in all that find no more noise
 * than the pool's, so the row is judged by the pool and the change found
 * (bench_compare_power, 1 x 4 at +25 %: 94.4 -> 96.1 % with the levels). */
static void quiet_spike_judged_by_pool(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 10, 1, quiet_spike_base, quiet_spike_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->test, TL_TEST_RANK_T);
    assert_int_equal(r->lr_used, 3); /* rank 3's spike left out */
    assert_float_equal(r->lr_est, log(1.25), 0.02);
    assert_true(r->p_adjusted < 0.05);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_int_equal(c->gate_failures, 1);
    staged_release(&st);
}

/* The same ratios, but ranks 0-2 of s0 run 1.0, 1.6 and 0.6x as long on both
 * sides: their levels are noisier than the pool's (a noisier stage's would
 * be), so the three ranks' mean (+24 %) is judged by the larger of their
 * own spread and the whole row's, on their 2 degrees of freedom -- not
 * significant, no gate, shown as inconclusive. */
static void spread_spike_judged_alone(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 10, 1, spread_spike_base, spread_spike_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->lr_used, 3);
    assert_float_equal(r->lr_est, log(1.25), 0.02);
    assert_false(r->p_adjusted < 0.05);
    assert_false(r->gate);
    assert_true(r->inconclusive);
    assert_int_equal(c->gate_failures, 0);
    staged_release(&st);
}

/* quiet_spike_* with ranks 0-2 of s0 1.0, 1.08 and 0.92x as long on both
 * sides: levels a little spread. */
static double mild_level(int stage, int rank)
{
    static const double level[] = { 1.0, 1.08, 0.92, 1.0 };
    return stage == 0 ? level[rank] : 1.0;
}

static double mild_spike_base(int stage, int rank, int call)
{
    return quiet_spike_base(stage, rank, call) * mild_level(stage, rank);
}

static double mild_spike_cand_levels(int stage, int rank, int call)
{
    return quiet_spike_cand(stage, rank, call) * mild_level(stage, rank);
}

/* The levels' scale: under one noise for both sides a level's variance is a
 * quarter of a ratio's, so their sum of squares counts 4x. Here the three
 * ranks' levels hold 6.9x the pool's typical variance at that scale: with
 * their ratios (2.5x), F(4, 27) = 2.4, beyond the quiet test's 0.2 point
 * (1.61) -- judged as before, by the larger of their own variance and the
 * pool's, and not significant. Counted at the ratios' scale (1x) they would
 * read as quiet (F 1.07) and the +25 % a regression. */
static void levels_scale_pinned(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 10, 1, mild_spike_base, mild_spike_cand_levels);
    const tl_cmp_row *r = run_row(&st.c, "s0");
    assert_int_equal(r->lr_used, 3);
    assert_float_equal(r->lr_est, log(1.25), 0.02);
    assert_false(r->p_adjusted < 0.05);
    assert_false(r->gate);
    staged_release(&st);
}

/* quiet_spike_* with ranks 0-2 1.0, 1.6 and 0.6x as long in every stage (a
 * rank's effect: another GPU, a straggler). */
static double every_level(int stage, int rank)
{
    static const double level[] = { 1.0, 1.6, 0.6, 1.0 };
    (void)stage;
    return level[rank];
}

static double every_spike_base(int stage, int rank, int call)
{
    return quiet_spike_base(stage, rank, call) * every_level(stage, rank);
}

static double every_spike_cand(int stage, int rank, int call)
{
    return quiet_spike_cand(stage, rank, call) * every_level(stage, rank);
}

/* Ranks that differ in every stage: their effect is taken off the levels,
 * which are then as quiet as quiet_spike_judged_by_pool's, and the change
 * is found the same way (a review's test: it fails without the effect). */
static void rank_effect_removed(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 10, 1, every_spike_base, every_spike_cand);
    const tl_cmp_row *r = run_row(&st.c, "s0");
    assert_int_equal(r->lr_used, 3);
    assert_true(r->p_adjusted < 0.05);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    staged_release(&st);
}

/* A job whose ranks 4-7 run only s9 (ranks 0-3 run s0-s8): s9 is
 * spread_spike's s0 on ranks 4-7 (rank 7's baseline spiked). A rank's
 * effect learnt from the row it judges would be the rank's own deviation,
 * and any levels would read as quiet; a rank in fewer than
 * TL_CMP_LEVELS_MIN_ROWS other rows has no known effect, and the row is
 * judged without levels: by the larger of the pool's and its ranks' own
 * variance, not significant (with the row's own levels taken for the
 * effect, it was significant and the gate failed). Durations of 0 keep a
 * stage off a rank (no ratio). */
static double split_base(int stage, int rank, int call)
{
    if ((stage == 9) != (rank >= 4))
        return 0;
    return stage == 9 ? spread_spike_base(0, rank - 4, call) : 1.0;
}

static double split_cand(int stage, int rank, int call)
{
    if ((stage == 9) != (rank >= 4))
        return 0;
    return stage == 9 ? spread_spike_cand(0, rank - 4, call) : exp(0.05 / 0.913 * quiet_pattern[(rank + stage) % 4]);
}

static void rank_in_one_row_no_levels(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 8, 10, 1, split_base, split_cand);
    const tl_cmp_row *r = run_row(&st.c, "s9");
    assert_int_equal(r->test, TL_TEST_RANK_T);
    assert_int_equal(r->lr_n, 4);
    assert_int_equal(r->lr_used, 3);
    assert_false(r->p_adjusted < 0.05);
    assert_false(r->gate);
    assert_int_equal(st.c.gate_failures, 0);
    staged_release(&st);
}

/* s9 +12 to +28 % on its 4 ranks (sd of the log ratios 0.072, like the
 * pool's 0.05 by the F test), the other stages as in quiet_spike_*; its
 * ranks run 1.0, 1.5, 0.7 and 1.3x as long on both sides in the second
 * case (levels spread, as a noisier stage's are). */
static const double noisy_ratio[] = { 1.20, 1.12, 1.28, 1.16 };

static double levels_cand(int stage, int rank, int call)
{
    (void)call;
    return stage == 9 ? noisy_ratio[rank] : exp(0.05 / 0.913 * quiet_pattern[(rank + stage) % 4]);
}

static double spread_level(int stage, int rank)
{
    static const double level[] = { 1.0, 1.5, 0.7, 1.3 };
    return stage == 9 ? level[rank] : 1.0;
}

static double spread_levels_base(int stage, int rank, int call)
{
    (void)call;
    return spread_level(stage, rank);
}

static double spread_levels_cand(int stage, int rank, int call)
{
    return levels_cand(stage, rank, call) * spread_level(stage, rank);
}

/* Ratios like the pool's and levels as quiet: the row is of like noise,
 * judged by the pool's variance, and +17 % on every rank is a regression. */
static void quiet_levels_judged_by_pool(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 10, 1, NULL, levels_cand);
    const tl_cmp_row *r = run_row(&st.c, "s9");
    assert_int_equal(r->lr_used, 4);
    assert_true(r->p_adjusted < 0.05);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_int_equal(st.c.gate_failures, 1);
    staged_release(&st);
}

/* The same ratios with the ranks' levels spread (1.0, 1.5, 0.7, 1.3x, none
 * of it a rank's effect in the other stages): nothing says the stage is as
 * quiet as the pool -- a stage 3x noisier than the rest has ratios this
 * close in about half of the comparisons, and read "+19 %, regression"
 * with the pool's variance (bench_compare_power --noisy-stage 30, 1 x 4:
 * 4.6 % of A/A comparisons failed the gate, 1.2 % now). Judged by its own
 * spread (3 degrees of freedom): not significant, no gate. */
static void spread_levels_judged_alone(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 10, 1, spread_levels_base, spread_levels_cand);
    const tl_cmp_row *r = run_row(&st.c, "s9");
    assert_int_equal(r->lr_used, 4);
    assert_float_equal(r->lr_est, 0.176, 0.005);
    assert_false(r->p_adjusted < 0.05);
    assert_false(r->gate);
    assert_true(r->inconclusive);
    assert_int_equal(st.c.gate_failures, 0);
    staged_release(&st);
}

/* The sample pipeline's sections at load 4 on 2 cores, where short stages
 * wait for a core and long ones hardly notice: s0 and s1 (vae_decode and its
 * chunks) +35 % on every rank; s2..s8 unchanged, with the spreads over the
 * ranks (sd of the log ratios) of its other stages, 0.036 (sampling) to
 * 0.77 (tokenize, 2 ms). */
static double uneven_noise(int stage, int rank, int call)
{
    (void)call;
    static const double pattern[] = { 1.0, -1.0, 0.5, -0.5 };
    static const double sd[] = { 0, 0, 0.367, 0.050, 0.036, 0.180, 0.161, 0.772, 0.148 };
    if (stage < 2)
        return 1.35;
    return exp(sd[stage] / 0.913 * pattern[(rank + stage) % 4]);
}

/* Stages of very different noise: the changed ones are found, and no
 * unchanged stage, however noisy, fails the gate -- whether the rows' own
 * variances are moderated (Bartlett finds them unlike) or pooled. The real
 * runs where the pooled variance hid the change are compare_demo_loaded's. */
static void uneven_noise_moderated(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 9, 1, NULL, uneven_noise);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->test, TL_TEST_RANK_T);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_int_equal(run_row(c, "s1")->verdict, TL_VERDICT_REGRESSION);
    for (int k = 2; k < 9; k++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", k);
        assert_false(run_row(c, name)->gate); /* the unchanged stages, noisy or not, pass */
    }
    staged_release(&st);
}

/* s0 (10 ms) and s9 (100 ms) 40 % slower. */
static double small_and_large(int stage, int rank, int call)
{
    (void)rank;
    (void)call;
    return stage == 0 || stage == 9 ? 1.4 : 1.0;
}

/* One report a side (one rank, one call a stage), ten stages of 10 to 100 ms
 * (550 ms): s0 and s9 +40 %, both untested large increases. s0 adds 4 ms,
 * 0.73 % of the run's time (the group's: the report's span, 1 ms, is less),
 * below the 1 % floor: not in the gate, and its note says why; s9 adds 40
 * ms, 7.3 %: the gate fails. Against a 10 s profile s9 is 0.4 % and passes
 * too; --untested-floor 0 gates both. */
static void untested_floor(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 1, 10, 1, NULL, small_and_large);
    tl_compare *c = &st.c;
    const tl_cmp_row *small = run_row(c, "s0"), *large = run_row(c, "s9");
    assert_int_equal(small->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_int_equal(large->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(small->run_share_pct > 0.6 && small->run_share_pct < 0.85); /* 4 of 550 ms, wobble aside */
    assert_true(large->run_share_pct > 6.5 && large->run_share_pct < 8.5);
    assert_false(small->gate);
    assert_true(small->floored); /* the outputs say "(under the gate's floor)" */
    assert_non_null(strstr(note_of(small), "of the run's time, below the gate's floor (1%)"));
    assert_true(large->gate);
    assert_false(large->floored);
    assert_null(strstr(large->note, "floor"));
    assert_int_equal(c->gate_failures, 1);
    tl_compare_release(&st.c);

    /* the profile spans 10 s: the run's time is the span */
    st.base.sessions[0].span_ns = 10000000000;
    st.cand.sessions[0].span_ns = 10000000000;
    assert_int_equal(run_stat(&st.c, &st.base, &st.cand, NULL), 0);
    large = run_row(c, "s9");
    assert_true(large->run_share_pct > 0.3 && large->run_share_pct < 0.5);
    assert_false(large->gate);
    assert_int_equal(c->gate_failures, 0);
    tl_compare_release(&st.c);

    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.untested_floor_pct = 0;
    assert_int_equal(run_stat(&st.c, &st.base, &st.cand, &o), 0);
    assert_int_equal(c->gate_failures, 2);
    staged_release(&st);
}

/* A run of 8 ranks, 600 ms profiled each: "fwd" 500 ms on every rank, and
 * "ckpt" on rank 0 alone, ckpt_ns. */
static void make_ckpt_run(tl_aggregate *a, double ckpt_ns)
{
    const nspec all[] = { { TL_GROUP_SECTIONS, "fwd", 500e6, 1 }, { TL_GROUP_SECTIONS, "ckpt", ckpt_ns, 1 } };
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < 8; rank++) {
        tl_session s;
        make_session(&s, rank, all, rank == 0 ? 2 : 1);
        s.id.world_size = 8;
        s.span_ns = 600000000;
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

/* A stage of one rank of 8 (a checkpoint rank 0 writes while the others
 * wait), 49 -> 82 ms: +5.5 % of rank 0's 600 ms. Its share is measured
 * against the time of the ranks that run it, not of all 8 (0.7 %, under the
 * floor): the gate fails. And the smaller of the two runs' spans: a
 * baseline span of 1000 s (a report's timestamps far off) does not hide it. */
static void untested_floor_one_rank_of_eight(void **state)
{
    (void)state;
    tl_aggregate b, k;
    make_ckpt_run(&b, 49e6);
    make_ckpt_run(&k, 82e6);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &k, NULL), 0);
    const tl_cmp_row *r = run_row(&c, "ckpt");
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(r->run_share_pct > 4.5 && r->run_share_pct < 6.5); /* 33 of 600 ms, noise aside */
    assert_true(r->gate);
    assert_int_equal(c.gate_failures, 1);
    tl_compare_release(&c);
    for (size_t i = 0; i < b.nsessions; i++)
        b.sessions[i].span_ns = 1000000000000;
    assert_int_equal(run_stat(&c, &b, &k, NULL), 0);
    r = run_row(&c, "ckpt");
    assert_true(r->run_share_pct > 4.5 && r->run_share_pct < 6.5);
    assert_true(r->gate);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
}

/* One rank, one report a side: "train" holds "fwd" and "bwd" (nested
 * sections), "ckpt" beside them; the profile spans span_ns. */
static void make_nested_run(tl_aggregate *a, double train, double ckpt, int64_t span_ns)
{
    const nspec spec[] = { { TL_GROUP_SECTIONS, "train", train, 1 },
                           { TL_GROUP_SECTIONS, "fwd", 0.4 * train, 1 },
                           { TL_GROUP_SECTIONS, "bwd", 0.5 * train, 1 },
                           { TL_GROUP_SECTIONS, "ckpt", ckpt, 1 } };
    tl_aggregate_init(a, NULL);
    tl_session s;
    make_session(&s, 0, spec, 4);
    s.id.world_size = 1;
    s.span_ns = span_ns;
    assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
}

/* The candidate got faster overall (train 9.5 -> 7.5 s, its profile 10 -> 8
 * s) and ckpt slower, 0.2 -> 0.35 s: 1.9 % of the candidate's 8 s. Each
 * side's span is checked against its own longest name (8 s >= 7.5 s): the
 * smaller span stands, and the nested sections (their sum 17 s) do not
 * dilute the share under the floor. */
static void untested_floor_nested_faster_run(void **state)
{
    (void)state;
    tl_aggregate b, k;
    make_nested_run(&b, 9.5e9, 0.2e9, 10000000000);
    make_nested_run(&k, 7.5e9, 0.35e9, 8000000000);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &k, NULL), 0);
    const tl_cmp_row *r = run_row(&c, "ckpt");
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(r->run_share_pct > 1.5 && r->run_share_pct < 2.5); /* 0.15 of 8 s, noise aside */
    assert_true(r->gate);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
}

/* 8 ranks without a known span: rank 0 runs the sections ("eval" 9 s and
 * "ckpt" 50 -> 80 ms), the others only kernels. The fallback, the group's
 * time per rank, is over the ranks that run the group (9 s), not all 8
 * (1.1 s): ckpt is 0.33 % of its rank's time and stays out of the gate. */
static void untested_floor_group_of_one_rank(void **state)
{
    (void)state;
    tl_aggregate side[2];
    for (int k = 0; k < 2; k++) {
        const nspec zero[] = { { TL_GROUP_SECTIONS, "eval", 9e9, 1 },
                               { TL_GROUP_SECTIONS, "ckpt", k ? 80e6 : 50e6, 1 } };
        const nspec rest[] = { { TL_GROUP_KERNELS, "gemm", 1e9, 1 } };
        tl_aggregate_init(&side[k], NULL);
        for (int rank = 0; rank < 8; rank++) {
            tl_session s;
            make_session(&s, rank, rank == 0 ? zero : rest, rank == 0 ? 2 : 1);
            s.id.world_size = 8;
            s.span_ns = -1;
            assert_int_equal(tl_aggregate_add_session(&side[k], &s), 0);
        }
        assert_int_equal(tl_aggregate_finish(&side[k]), 0);
    }
    tl_compare c;
    assert_int_equal(run_stat(&c, &side[0], &side[1], NULL), 0);
    const tl_cmp_row *r = run_row(&c, "ckpt");
    assert_int_equal(r->verdict, TL_VERDICT_LARGE_INCREASE);
    assert_true(r->run_share_pct > 0.2 && r->run_share_pct < 0.5);
    assert_false(r->gate);
    assert_non_null(strstr(note_of(r), "% of the run's time, below the gate's floor (1%)"));
    tl_compare_release(&c);
    tl_aggregate_release(&side[0]);
    tl_aggregate_release(&side[1]);
}

/* A data-parallel run of 4 ranks, 12 steps of 10 ms, each rank with
 * "load" and "sync" 12 times a run (1 ms and 5 ms a call); on the candidate
 * side each rank's load, sync and step take the given ms more. */
static void make_lone(tl_aggregate *a, int cand, const double *load_ms, const double *sync_ms, const double *step_ms)
{
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < 4; rank++) {
        nspec spec[2] = { { TL_GROUP_SECTIONS, "load", 1e6 + (cand ? load_ms[rank] * 1e6 : 0), 12 },
                          { TL_GROUP_SECTIONS, "sync", 5e6 + (cand ? sync_ms[rank] * 1e6 : 0), 12 } };
        tl_session s;
        make_session(&s, rank, spec, 2);
        s.id.world_size = 4;
        s.steps = calloc(13, sizeof *s.steps);
        assert_non_null(s.steps);
        for (size_t k = 0; k < 12; k++)
            s.steps[s.nsteps++] =
                (tl_sstep){ (int64_t)k, (int64_t)((10e6 + (cand ? step_ms[rank] * 1e6 : 0)) * noise()), -1, INT64_MIN,
                            0 };
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static int lone_of(const double *load_ms, const double *sync_ms, const double *step_ms, tl_compare *c)
{
    tl_aggregate b, k;
    make_lone(&b, 0, load_ms, sync_ms, step_ms);
    make_lone(&k, 1, load_ms, sync_ms, step_ms);
    assert_int_equal(run_stat(c, &b, &k, NULL), 0);
    int found = c->lone.found;
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
    return found;
}

/* Who the others waited for without collectives (tl_cmp_lone_rank): rank 3
 * loads 5 ms more a step, every rank's step grows 5 ms, the others' sync
 * (their wait) too: rank 3 and "load". Not said when two ranks are each
 * alone in something, when the steps grew unevenly, or when the stage is
 * under half the step's growth. */
static void lone_rank(void **state)
{
    (void)state;
    static const double none[4] = { 0 }, step[4] = { 5, 5, 5, 5 }, wait[4] = { 5, 5, 5, 0 };
    static const double load3[4] = { 0, 0, 0, 5 };
    tl_compare c;
    assert_true(lone_of(load3, wait, step, &c));
    assert_int_equal(c.lone.rank, 3);
    assert_string_equal(c.rows[c.lone.row].name, "load");
    assert_int_equal(c.rows[c.lone.row].rank, 3);
    assert_true(c.lone.stage_ns > 4.5e6 && c.lone.stage_ns < 5.5e6);
    assert_true(c.lone.step_ns > 4e6 && c.lone.step_ns < 6e6);
    tl_compare_release(&c);

    /* rank 3's load and rank 1's sync, each alone: not one rank */
    static const double sync1[4] = { 0, 5, 0, 0 };
    assert_false(lone_of(load3, sync1, step, &c));
    tl_compare_release(&c);
    /* ranks 2 and 3 both load slower: nobody alone */
    static const double load23[4] = { 0, 0, 5, 5 };
    assert_false(lone_of(load23, none, step, &c));
    tl_compare_release(&c);
    /* the steps grew unevenly (rank 3 alone slower: the ranks do not wait
     * for each other) */
    static const double uneven[4] = { 0.5, 0.5, 0.5, 5 };
    assert_false(lone_of(load3, none, uneven, &c));
    tl_compare_release(&c);
    /* rank 3's load grew 1 ms a step of the step's 5 ms: under half */
    static const double small3[4] = { 0, 0, 0, 1 };
    assert_false(lone_of(small3, wait, step, &c));
    tl_compare_release(&c);
}

/* The share as notes and the page write it. */
static void share_text(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(tl_units_pct_down(b, sizeof b, 0.99594), "0.99%");
    assert_string_equal(tl_units_pct_down(b, sizeof b, 0.57), "0.57%");
    assert_string_equal(tl_units_pct_down(b, sizeof b, 4.5e-5), "under 0.01%");
    assert_string_equal(tl_units_pct_down(b, sizeof b, -3), "under 0.01%");
    assert_string_equal(tl_units_pct_down(b, sizeof b, 37.52), "37.52%");
}

/* s0 +30 % on every rank; s1 a noisy stage, its ranks -10 % to +60 %. */
static double noisy_cand(int stage, int rank, int call)
{
    static const double noisy[] = { 0.9, 1.6, 1.05, 1.5 };
    (void)call;
    return stage == 0 ? 1.3 : stage == 1 ? noisy[rank] : 1.0;
}

/* One call a rank on 4 ranks, 6 stages, one of them far noisier than the
 * others (a CPU-bound stage on a loaded machine, the demo's tokenize): it
 * leaves the variance pool (its F test against the rest's), so the steady
 * +30 % of s0 is found, and is judged alone, so it is no regression. With it
 * in the pool, s0's t would be about 2: not significant. */
static void noisy_stage_out_of_pool(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 6, 1, NULL, noisy_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->test, TL_TEST_RANK_T);
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    const tl_cmp_row *noisy = run_row(c, "s1");
    assert_int_equal(noisy->test, TL_TEST_RANK_T);
    assert_true(noisy->delta_pct > 15);
    assert_int_not_equal(noisy->verdict, TL_VERDICT_REGRESSION);
    assert_true(noisy->p_up > 0.05); /* Student's t of its own 4 ranks */
    assert_int_equal(c->gate_failures, 1);
    staged_release(&st);
}

/* s0 +25 % on every rank; s1 +25 % on rank 0 only; s2 +4 %, very steady. */
static double strata_cand(int stage, int rank, int call)
{
    (void)call;
    return stage == 0 ? 1.25 : stage == 1 && rank == 0 ? 1.25 : stage == 2 ? 1.04 : 1.0;
}

/* Four calls a rank on four ranks: no rank can be tested alone (4 against 4:
 * at best 1/70), but the ranks' U statistics summed can (at best 1/70^4):
 * +25 % on every rank is a regression of the gate; +25 % on one rank of four
 * is not a change of the run; +4 % on every rank is certain but not beyond
 * the 5 % threshold, so not significant. */
static void stratified_ranks(void **state)
{
    (void)state;
    staged st;
    staged_compare(&st, 4, 4, 4, NULL, strata_cand);
    tl_compare *c = &st.c;
    const tl_cmp_row *r = run_row(c, "s0");
    assert_int_equal(r->test, TL_TEST_STRATA);
    assert_true(fabs(r->p_floor - pow(1.0 / 70.0, 4)) < 1e-15);
    assert_true(fabs(r->u - 64) < 1e-9); /* every candidate call above every baseline call */
    assert_int_equal(r->verdict, TL_VERDICT_REGRESSION);
    assert_true(r->gate);
    assert_int_equal(find_kind(c, "s0", 1, TL_CMP_PER_RUN)->test, TL_TEST_NONE); /* a rank alone: too few */
    const tl_cmp_row *one = run_row(c, "s1");
    assert_int_equal(one->test, TL_TEST_STRATA);
    assert_true(one->delta_pct > 5); /* rank 0 is a quarter of the total */
    assert_int_not_equal(one->verdict, TL_VERDICT_REGRESSION);
    assert_false(one->gate);
    const tl_cmp_row *small = run_row(c, "s2");
    assert_true(small->delta_pct > 3 && small->delta_pct < 5);
    assert_false(small->significant);
    assert_int_equal(small->verdict, TL_VERDICT_UNCHANGED);
    assert_int_equal(c->gate_failures, 1);
    tl_compare_release(c);
    /* Without the threshold in the way (--threshold 0), the steady +4 % is a
     * regression: the tests see it, the threshold decides it is not one. */
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.threshold_pct = 0;
    assert_int_equal(run_stat(c, &st.base, &st.cand, &o), 0);
    assert_int_equal(run_row(c, "s2")->verdict, TL_VERDICT_REGRESSION);
    tl_compare_release(c);
    /* A threshold of 100 % or more: nothing can be that much faster, and
     * every p stays a probability. */
    o.threshold_pct = 200;
    assert_int_equal(run_stat(c, &st.base, &st.cand, &o), 0);
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].test != TL_TEST_NONE)
            assert_true(c->rows[i].p_down >= 0.99 && c->rows[i].p_up >= 0 && c->rows[i].p_up <= 1);
    assert_int_equal(c->counts[TL_VERDICT_REGRESSION] + c->counts[TL_VERDICT_IMPROVEMENT], 0);
    staged_release(&st);
}

static void normalized(void **state)
{
    fixture *f = *state;
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.normalize = 1;
    tl_compare c;
    assert_int_equal(run_stat(&c, &f->base, &f->cand, &o), 0);
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
    assert_int_equal(run_stat(&c, &f->base, &f->cand, &o), 0);
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

/* A run of 2 ranks with a GPU breakdown (comm share), a span and peak memory. */
static void make_gpu_run(tl_aggregate *a, const int64_t comm[2], const int64_t span[2], double peak)
{
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < 2; rank++) {
        tl_session s;
        make_session(&s, rank, NULL, 0);
        s.span_ns = span[rank];
        s.peak_allocated = peak;
        s.gpu.present = 1;
        s.gpu.kernel_time = 1000000;
        s.gpu.busy = s.gpu.compute = 800000;
        s.gpu.idle = 200000;
        s.gpu.comm = comm[rank];
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static const tl_cmp_metric_row *metric_row(const tl_compare *c, const char *name)
{
    for (size_t i = 0; i < c->nmetrics; i++)
        if (strcmp(c->metrics[i].info->name, name) == 0)
            return &c->metrics[i];
    return NULL;
}

/* The registry's metrics side by side: the figure its policy names over the
 * ranks both runs have, % metrics moved by points, the change judged beyond
 * the large-change threshold the way the registry calls better, nothing
 * judged for a metric that is neither or without a common rank; metrics
 * compare has rows of its own for (GPU idle, peak memory) and metrics
 * neither run has are not listed; --sessions lists none. */
static void registry_metrics(void **state)
{
    (void)state;
    tl_aggregate b, c2;
    make_gpu_run(&b, (const int64_t[]){ 100000, 300000 }, (const int64_t[]){ 1000000, 3000000 }, 1e9);
    make_gpu_run(&c2, (const int64_t[]){ 300000, 500000 }, (const int64_t[]){ 1000000, 1000000 }, 2e9);
    tl_compare c;
    assert_int_equal(run_stat(&c, &b, &c2, NULL), 0);
    const tl_cmp_metric_row *comm = metric_row(&c, "gpu.comm_pct");
    assert_non_null(comm);
    assert_int_equal(comm->common, 1);
    assert_float_equal(comm->value[0], 20.0, 1e-9); /* mean of 10 % and 30 % */
    assert_float_equal(comm->value[1], 40.0, 1e-9);
    assert_float_equal(comm->delta_pp, 20.0, 1e-9);
    assert_float_equal(comm->delta_pct, 100.0, 1e-9);
    assert_int_equal(comm->change, TL_CHANGE_WITHIN); /* 20 points: within the untested rows' 25 */
    assert_int_equal(comm->ranks[0], 2);
    const tl_cmp_metric_row *span = metric_row(&c, "span_ns");
    assert_non_null(span);
    assert_float_equal(span->value[0], 3e6, 1e-9); /* the most: the longest rank */
    assert_float_equal(span->value[1], 1e6, 1e-9);
    assert_true(isnan(span->delta_pp));
    assert_int_equal(span->change, TL_CHANGE_NONE); /* a profile's length is neither better nor worse */
    assert_string_equal(tl_cmp_change_name(span->change), "");
    assert_null(tl_cmp_change_key(span->change));
    assert_null(metric_row(&c, "gpu.idle_pct"));                /* the GPU breakdown's */
    assert_null(metric_row(&c, "memory.peak_allocated_bytes")); /* the memory rows' */
    assert_null(metric_row(&c, "diffusion.fps"));               /* neither run has it */
    tl_compare_release(&c);

    /* beyond a lower large-change threshold: worse, and the other way better */
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.max_untested_pct = 15;
    assert_int_equal(run_stat(&c, &b, &c2, &o), 0);
    assert_int_equal(metric_row(&c, "gpu.comm_pct")->change, TL_CHANGE_WORSE);
    assert_string_equal(tl_cmp_change_key(metric_row(&c, "gpu.comm_pct")->change), "worse");
    tl_compare_release(&c);
    assert_int_equal(run_stat(&c, &c2, &b, &o), 0);
    assert_int_equal(metric_row(&c, "gpu.comm_pct")->change, TL_CHANGE_BETTER);
    tl_compare_release(&c);

    /* a candidate of rank 0 alone: the figures are rank 0's on both sides (10 % -> 30 %), not a mean of
     * two ranks against one */
    tl_aggregate one;
    tl_aggregate_init(&one, NULL);
    tl_session s;
    make_session(&s, 0, NULL, 0);
    s.gpu.present = 1;
    s.gpu.kernel_time = 1000000;
    s.gpu.busy = s.gpu.compute = 800000;
    s.gpu.idle = 200000;
    s.gpu.comm = 100000;
    assert_int_equal(tl_aggregate_add_session(&one, &s), 0);
    assert_int_equal(tl_aggregate_finish(&one), 0);
    assert_int_equal(run_stat(&c, &b, &one, &o), 0);
    comm = metric_row(&c, "gpu.comm_pct");
    assert_true(comm->common && comm->ranks[0] == 1 && comm->ranks[1] == 1);
    assert_float_equal(comm->value[0], 10.0, 1e-9);
    assert_float_equal(comm->value[1], 10.0, 1e-9);
    assert_int_equal(comm->change, TL_CHANGE_WITHIN);
    tl_compare_release(&c);
    tl_aggregate_release(&one);

    o.session[0] = o.session[1] = -2;
    assert_int_equal(run_stat(&c, &c2, &b, &o), 0);
    assert_int_equal(c.nmetrics, 0);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c2);
}

/* ---- materiality: the gate follows the step ---------------------------------- */

/* A stepped run of nranks ranks: in each of nsteps steps every rank calls
 * each stage once, ms(stage, rank, step) long, and the step lasts the
 * stages' sum plus 2 ms; ranks wait for one another (DDP), so every rank's
 * step is as long as the slowest rank's. Kernels k0..k(nkernels - 1), 0.3 ms
 * a call, about 2 % noise, are there to be many rows of the gate family. */
typedef double (*stage_ms_fn)(int stage, int rank, int step);

static void make_stepped(tl_aggregate *a, int nranks, int nsteps, int nstages, stage_ms_fn ms, int nkernels)
{
    tl_aggregate_init(a, NULL);
    double step_ms[64];
    for (int i = 0; i < nsteps; i++) {
        step_ms[i] = 0;
        for (int rank = 0; rank < nranks; rank++) {
            double sum = 2;
            for (int k = 0; k < nstages; k++)
                sum += ms(k, rank, i);
            step_ms[i] = sum > step_ms[i] ? sum : step_ms[i];
        }
    }
    for (int rank = 0; rank < nranks; rank++) {
        tl_session s;
        make_session(&s, rank, NULL, 0);
        s.id.world_size = nranks;
        s.span_ns = -1;
        free(s.names);
        s.names = calloc((size_t)(nstages + nkernels) + 1, sizeof *s.names);
        assert_non_null(s.names);
        for (int k = 0; k < nstages + nkernels; k++) {
            tl_sname *x = &s.names[s.nnames++];
            char name[16];
            snprintf(name, sizeof name, k < nstages ? "s%d" : "k%d", k < nstages ? k : k - nstages);
            x->group = k < nstages ? TL_GROUP_SECTIONS : TL_GROUP_KERNELS;
            x->name = tt_xstrdup(name);
            x->exact = 1;
            x->median_ns = x->p95_ns = x->std_ns = NAN;
            for (int i = 0; i < nsteps; i++) {
                double v = k < nstages ? ms(k, rank, i) * 1e6 : 0.3e6 * (0.98 + 0.04 * (noise() - 0.96) / 0.08);
                tl_dur_stat_add(&x->d, (uint64_t)v, TL_PROFILE_MAX_SAMPLES);
            }
        }
        s.steps = calloc((size_t)nsteps + 1, sizeof *s.steps);
        assert_non_null(s.steps);
        for (int i = 0; i < nsteps; i++)
            s.steps[s.nsteps++] = (tl_sstep){ i, (int64_t)(step_ms[i] * 1e6), -1, INT64_MIN, 0 };
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static const double wob8[] = { 1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.015 };

/* The DDP fix: rank 2's data loading took 10 ms a step instead of 2
 * (the step 52 -> 44 ms), and the optimizer got 13 % slower (1.5 -> 1.7 ms,
 * 0.4 % of the step). */
static double fix_base(int stage, int rank, int step)
{
    static const double ms[] = { 2, 20, 20, 1.5 }; /* data, fwd, bwd, optim */
    double v = ms[stage] * wob8[(size_t)(step + rank + stage) % 8];
    return stage == 0 && rank == 2 ? 10 * wob8[(size_t)step % 8] : v;
}

static double fix_cand(int stage, int rank, int step)
{
    static const double ms[] = { 2, 20, 20, 1.7 };
    return ms[stage] * wob8[(size_t)(step + 3 * rank + stage + 1) % 8];
}

/* The optimizer's +13 % is real (8 steps on 4 ranks) and a regression of its
 * own row, but it adds 0.2 ms to a 44-52 ms step: not material, so it is not
 * in the gate -- the job that got 16 % faster passes. Before materiality the
 * row failed the gate. */
static void materiality_fix_passes(void **state)
{
    (void)state;
    tl_aggregate b, k;
    make_stepped(&b, 4, 8, 4, fix_base, 0);
    make_stepped(&k, 4, 8, 4, fix_cand, 0);
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &b, &k, NULL), 0);
    const tl_cmp_row *optim = run_row(&c, "s3");
    assert_int_equal(optim->verdict, TL_VERDICT_REGRESSION);
    assert_true(optim->primary);
    assert_false(optim->material);
    assert_true(optim->step_share_pct > 0.2 && optim->step_share_pct < 0.6);
    assert_false(optim->gate);
    const tl_cmp_row *step = find(&c, TL_CMP_STEP_NAME, -1);
    assert_int_equal(step->verdict, TL_VERDICT_IMPROVEMENT);
    assert_int_equal(c.gate_failures, 0);
    tl_compare_release(&c);
    /* --materiality 0: every primary row may fail the gate again. */
    tl_cmp_options o;
    tl_cmp_options_init(&o);
    o.material_pct = 0;
    assert_int_equal(tl_compare_run(&c, &b, &k, &o), 0);
    assert_true(run_row(&c, "s3")->gate);
    assert_int_equal(c.gate_failures, 1);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
}

/* The reverse pair with noisy steps: rank 2's data loading 5.3x slower in
 * all 8 steps (2 -> 10.6 ms), every rank's step +17 to +20 %, beside 40
 * unchanged kernels that are stages of the gate family. */
static const double wide8[] = { 1.00, 1.22, 0.80, 1.14, 0.88, 1.28, 0.74, 1.07 };

static double slow_base(int stage, int rank, int step)
{
    static const double ms[] = { 2, 20, 20, 1.5 };
    (void)rank;
    return ms[stage] * (stage == 1 ? wide8[(size_t)step % 8] : 1.0);
}

static double slow_cand(int stage, int rank, int step)
{
    static const double ms[] = { 2, 20, 20, 1.5 };
    double v = ms[stage] * (stage == 1 ? wide8[(size_t)(step + 3) % 8] : 1.0);
    return stage == 0 && rank == 2 ? 5.3 * v : v;
}

/* The step is tested first, at alpha / 2, not drowned by Holm's correction
 * over dozens of immaterial rows: the gate fails on the step time. Rank 2's
 * data rows (8 calls a side) are tested, not "untested". */
static void materiality_step_first(void **state)
{
    (void)state;
    tl_aggregate b, k;
    rng_state = 7;
    make_stepped(&b, 4, 8, 4, slow_base, 40);
    make_stepped(&k, 4, 8, 4, slow_cand, 40);
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &b, &k, NULL), 0);
    const tl_cmp_row *step = find(&c, TL_CMP_STEP_NAME, -1);
    assert_true(step->delta_pct > 15 && step->delta_pct < 22);
    /* p 0.0074: Holm over the 49 rows of the former gate family (40 kernels,
     * 4 stages, 5 step rows) made it 0.36 and the gate passed. */
    assert_true(step->p_up > 0.002 && step->p_up < 0.01);
    assert_true(step->p_adjusted < 0.05);
    assert_int_equal(step->verdict, TL_VERDICT_REGRESSION);
    assert_true(step->gate);
    assert_true(c.gate_failures >= 1);
    for (size_t i = 0; i < c.nrows; i++)
        if (c.rows[i].group == TL_GROUP_KERNELS)
            assert_false(c.rows[i].material || c.rows[i].gate);
    const tl_cmp_row *data = find(&c, "s0", 2);
    assert_int_not_equal(data->test, TL_TEST_NONE);
    assert_int_not_equal(data->verdict, TL_VERDICT_LARGE_INCREASE);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
}

/* A change of call mix: an op called 740 times a run at 1 us became 20 calls
 * of 35 us (+3400 % a call), its total fell 5 %. Not a per-call regression. */
static void call_mix_not_regression(void **state)
{
    (void)state;
    const rank_spec base[] = { { "op", { 1e3, 1e3, 1e3, 1e3 }, 740 }, { "work", { 5e6, 5e6, 5e6, 5e6 }, 10 } };
    const rank_spec cand[] = { { "op", { 35e3, 35e3, 35e3, 35e3 }, 20 }, { "work", { 5e6, 5e6, 5e6, 5e6 }, 10 } };
    tl_aggregate b, k;
    make_ranks(&b, 4, base, 2, 10, NAN);
    make_ranks(&k, 4, cand, 2, 10, NAN);
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &b, &k, NULL), 0);
    for (int rank = -1; rank < 4; rank++) {
        const tl_cmp_row *r = find(&c, "op", rank);
        assert_non_null(r);
        assert_int_equal(r->verdict, TL_VERDICT_CHANGED);
        assert_true(r->call_mix);
        tt_assert_contains(note_of(r), "call mix: 20 calls per run instead of 740, each +3400.0%", "note");
    }
    assert_int_equal(c.counts[TL_VERDICT_REGRESSION], 0);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
}

/* Counters (tally_counter, a trace's C events) are compared by name: a 70x
 * drop of "tokens" is a row beyond the large-change threshold, a counter on
 * one side only has a row with the other side unknown; not in the gate. */
static void make_counter_run(tl_aggregate *a, double tokens, int with_hits)
{
    tl_aggregate_init(a, NULL);
    for (int rank = 0; rank < 2; rank++) {
        tl_session s;
        const nspec spec[] = { { TL_GROUP_SECTIONS, "work", 1e6, 8 } };
        make_session(&s, rank, spec, 1);
        s.counters = calloc(2, sizeof *s.counters);
        assert_non_null(s.counters);
        s.counters[s.ncounters++] = (tl_scounter){ tt_xstrdup("tokens"), 0, 10, tokens * 0.9, tokens, tokens * 1.1 };
        if (with_hits)
            s.counters[s.ncounters++] = (tl_scounter){ tt_xstrdup("cache_hits"), 0, 4, 1, 2, 3 };
        s.counters_total = s.ncounters;
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static void counters_compared(void **state)
{
    (void)state;
    tl_aggregate b, k;
    make_counter_run(&b, 512, 0);
    make_counter_run(&k, 512.0 / 70, 1);
    tl_compare c;
    assert_int_equal(tl_compare_run(&c, &b, &k, NULL), 0);
    assert_int_equal(c.ncounters, 2);
    const tl_cmp_counter_row *hits = &c.counters[0], *tokens = &c.counters[1]; /* by name */
    assert_string_equal(hits->name, "cache_hits");
    assert_true(isnan(hits->mean[0]) && fabs(hits->mean[1] - 2) < 1e-12 && isnan(hits->delta_pct));
    assert_false(hits->beyond);
    assert_string_equal(tokens->name, "tokens");
    assert_true(fabs(tokens->mean[0] - 512) < 1e-9);
    assert_true(fabs(tokens->delta_pct - 100.0 * (1.0 / 70 - 1)) < 1e-9);
    assert_true(tokens->beyond);
    assert_int_equal(tokens->count[0], 20);
    assert_true(fabs(tokens->max[1] - 512.0 / 70 * 1.1) < 1e-9);
    assert_int_equal(c.gate_failures, 0);
    tl_compare_release(&c);
    tl_aggregate_release(&b);
    tl_aggregate_release(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_run_each),
        cmocka_unit_test(ranks_as_samples),
        cmocka_unit_test(calls_per_step),
        cmocka_unit_test(memory_rows),
        cmocka_unit_test(spike_on_one_rank),
        cmocka_unit_test(spike_turns_the_total),
        cmocka_unit_test(one_rank_spike),
        cmocka_unit_test(stratified_ranks),
        cmocka_unit_test(noisy_stage_out_of_pool),
        cmocka_unit_test(mild_spike_left_out),
        cmocka_unit_test(quiet_spike_judged_by_pool),
        cmocka_unit_test(spread_spike_judged_alone),
        cmocka_unit_test(levels_scale_pinned),
        cmocka_unit_test(rank_effect_removed),
        cmocka_unit_test(rank_in_one_row_no_levels),
        cmocka_unit_test(quiet_levels_judged_by_pool),
        cmocka_unit_test(spread_levels_judged_alone),
        cmocka_unit_test(uneven_noise_moderated),
        cmocka_unit_test(untested_floor),
        cmocka_unit_test(untested_floor_one_rank_of_eight),
        cmocka_unit_test(rank_on_one_side),
        cmocka_unit_test(total_per_run),
        cmocka_unit_test(two_sessions_a_run),
        cmocka_unit_test(kernels_per_window_step),
        cmocka_unit_test(sessions_gpu_breakdown),
        cmocka_unit_test(untested_floor_nested_faster_run),
        cmocka_unit_test(untested_floor_group_of_one_rank),
        cmocka_unit_test(share_text),
        cmocka_unit_test(lone_rank),
        cmocka_unit_test_setup_teardown(verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(normalized, setup, teardown),
        cmocka_unit_test_setup_teardown(metric_total_and_no_correction, setup, teardown),
        cmocka_unit_test(normalize_rules),
        cmocka_unit_test(registry_metrics),
        cmocka_unit_test(materiality_fix_passes),
        cmocka_unit_test(materiality_step_first),
        cmocka_unit_test(call_mix_not_regression),
        cmocka_unit_test(counters_compared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
