/*
 * compare_power.c - how often `tally compare` finds a real change, and how
 * often it reports one that is not there (tools/analyze/compare.c,
 * docs/compare.md).
 *
 * Runs are simulated as tally's analysis sees them (aggregates of sessions),
 * so thousands of comparisons take seconds and every figure is the real code
 * path of `tally compare` from matching to the gate. A run has NAMES stages
 * (group "sections"); each rank calls each stage `samples` times a run. A
 * call's duration is
 *
 *   base x run factor x rank factor x exp(N(0, CALL_SIGMA)) [x spike],
 *
 * with probability SPIKE_P a spike of 1.5-3x (a GC pause, a preemption), and
 * for the last table a run factor exp(N(0, 1 %)) shared by all ranks of a run
 * (the run's conditions) and a rank factor exp(N(0, 2 %)) per rank and run
 * (its node): run-to-run variation that no test within one run can see. Each
 * of a rank's `samples` rounds is a step: stage k's i-th call in step i, the
 * step as long as its calls (the stages take 20 to 200 ms, 1.1 s a step).
 * The planted change makes the step slower by 5, 10, 25 or 100 %: one stage's
 * calls on every rank of the candidate slower by what adds that much to the
 * step (the gate follows the step: a stage fails it only when material).
 *
 * Printed: for each planted change (5, 10, 25, 100 % of the step), steps per
 * rank (1, 4, 8, 16) and ranks (1, 4, 8), the detection rate (the comparison
 * fails the gate) over --seeds comparisons; and for A/A pairs (no change)
 * the share of comparisons with any false gate failure and with any
 * regression verdict at all (explanatory rows included).
 * --threshold PCT sets compare's threshold (default 5): at 0 the tests have
 * no margin, and the A/A tables show their level (one-sided Holm at 5 %).
 *
 *   bench_compare_power [--seeds N] [--quick] [--threshold PCT] [--max-untested PCT]
 *                       [--noisy-stage PCT] [--cell SAMPLES RANKS]
 *
 * --max-untested sets compare's large-change threshold of untested rows
 * (default 25): the 1 x 1 cells' trade-off between finding a one-report
 * change and a spike failing the gate.
 *
 * --noisy-stage PCT gives the last of the ten stages that noise per call
 * instead of 5 % (a stage noisier than the rest: I/O, a CPU-bound stage on a
 * loaded machine), the case where a pooled variance must not judge a stage.
 *
 * --cell prints the one cell (of the sizes above) only: more seeds where a
 * figure is close to its goal.
 *
 * Not a timed test: its figures are rates, the same on any machine.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

#define NAMES 10
#define NSAMPLES 4 /* rows of samples per rank: 1, 4, 8, 16 */
#define CALL_SIGMA 0.05
#define SPIKE_P 0.01
/* Run-to-run variation: 0 in the main tables (the null of an A/A pair holds
 * exactly), set for the last table (--rank-sigma, --run-sigma). */
static double rank_sigma = 0, run_sigma = 0;
/* --noisy-stage SIGMA: the last stage's calls have this noise instead of
 * CALL_SIGMA (an I/O or CPU-bound stage among quiet GPU stages); 0: none. */
static double noisy_sigma = 0;
#define BASE_NS 20e6

static uint64_t rng;
static tl_cmp_options opts;          /* default options, --threshold */
static int only_samples, only_ranks; /* --cell: 0 for every cell */

static int in_cell(int samples, int ranks)
{
    return only_samples == 0 || (samples == only_samples && ranks == only_ranks);
}

static double uniform(void)
{
    /* splitmix64 */
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2.0 * log(uniform())) * cos(2.0 * M_PI * uniform());
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (d == NULL) {
        fprintf(stderr, "bench_compare_power: out of memory\n");
        exit(1);
    }
    return d;
}

/* One simulated run: nranks sessions of NAMES stages, `samples` calls each;
 * stage `changed` (or none: -1) slower by factor. */
static void make_run(tl_aggregate *a, int nranks, int samples, int changed, double factor)
{
    tl_aggregate_init(a, NULL);
    double run = exp(run_sigma * normal());
    for (int rank = 0; rank < nranks; rank++) {
        tl_session s;
        memset(&s, 0, sizeof s);
        char path[32];
        snprintf(path, sizeof path, "rank%d.json", rank);
        s.id.path = xstrdup(path);
        s.id.rank_detail = xstrdup("simulated");
        s.id.format = TL_FMT_TALLY_REPORT;
        s.id.rank = rank;
        s.id.world_size = nranks;
        s.id.rank_source = TL_RANK_CONTENT;
        s.span_ns = -1;
        s.peak_allocated = s.peak_reserved = s.device_total = s.peak_rss = s.gpu_util_mean = NAN;
        s.names = calloc(NAMES, sizeof *s.names);
        if (s.names == NULL) {
            fprintf(stderr, "bench_compare_power: out of memory\n");
            exit(1);
        }
        double rf = exp(rank_sigma * normal());
        double step_ns[16] = { 0 };
        for (int k = 0; k < NAMES; k++) {
            tl_sname *x = &s.names[s.nnames++];
            char name[32];
            snprintf(name, sizeof name, "stage_%d", k);
            x->group = TL_GROUP_SECTIONS;
            x->name = xstrdup(name);
            x->exact = 1;
            x->median_ns = x->p95_ns = x->std_ns = NAN;
            double base = BASE_NS * (1 + k) * run * rf * (k == changed ? factor : 1.0);
            for (int i = 0; i < samples; i++) {
                double sigma = k == NAMES - 1 && noisy_sigma > 0 ? noisy_sigma : CALL_SIGMA;
                double v = base * exp(sigma * normal());
                if (uniform() < SPIKE_P)
                    v *= 1.5 + 1.5 * uniform();
                tl_dur_stat_add(&x->d, (uint64_t)v, TL_PROFILE_MAX_SAMPLES);
                step_ns[i] += (double)(uint64_t)v;
            }
        }
        s.steps = calloc((size_t)samples + 1, sizeof *s.steps);
        if (s.steps == NULL) {
            fprintf(stderr, "bench_compare_power: out of memory\n");
            exit(1);
        }
        for (int i = 0; i < samples; i++)
            s.steps[s.nsteps++] = (tl_sstep){ i, (int64_t)step_ns[i], -1, INT64_MIN, 0 };
        if (tl_aggregate_add_session(a, &s) != 0) {
            fprintf(stderr, "bench_compare_power: out of memory\n");
            exit(1);
        }
    }
    if (tl_aggregate_finish(a) != 0) {
        fprintf(stderr, "bench_compare_power: out of memory\n");
        exit(1);
    }
}

typedef struct outcome {
    int detected;      /* the comparison fails the gate (the step row, or a material stage) */
    int false_gate;    /* another row fails the gate */
    int false_verdict; /* a (tested) regression verdict on any row of an unchanged stage */
} outcome;

static outcome compare_once(int nranks, int samples, int changed, double factor)
{
    tl_aggregate b, c;
    make_run(&b, nranks, samples, -1, 1.0);
    make_run(&c, nranks, samples, changed, factor);
    tl_compare cmp;
    if (tl_compare_run(&cmp, &b, &c, &opts) != 0) {
        fprintf(stderr, "bench_compare_power: out of memory\n");
        exit(1);
    }
    outcome o = { 0, 0, 0 };
    char target[32];
    snprintf(target, sizeof target, "stage_%d", changed);
    for (size_t i = 0; i < cmp.nrows; i++) {
        const tl_cmp_row *r = &cmp.rows[i];
        int hit = changed >= 0 && !strcmp(r->name, target);
        if (changed >= 0 && r->gate)
            o.detected = 1;
        if (!hit && r->gate)
            o.false_gate = 1;
        if (!hit && r->verdict == TL_VERDICT_REGRESSION)
            o.false_verdict = 1;
    }
    tl_compare_release(&cmp);
    tl_aggregate_release(&b);
    tl_aggregate_release(&c);
    return o;
}

/* The A/A table: comparisons with any false gate failure, and with any
 * (tested) regression verdict on any row, explanatory rows included. */
static void aa_table(int seeds, const int *samples, const int *ranks, const char *title)
{
    printf("\n%s: comparisons with any false gate failure / with any regression verdict (%d pairs per cell)\n\n", title,
           seeds);
    printf("| samples/rank | ranks | false gate | any regression verdict |\n|---:|---:|---:|---:|\n");
    long total = 0, gates = 0, verdicts = 0;
    for (size_t si = 0; si < NSAMPLES; si++)
        for (size_t ri = 0; ri < 3; ri++) {
            if (!in_cell(samples[si], ranks[ri]))
                continue;
            int g = 0, v = 0;
            for (int s = 0; s < seeds; s++) {
                outcome o = compare_once(ranks[ri], samples[si], -1, 1.0);
                g += o.false_gate;
                v += o.false_verdict;
            }
            total += seeds;
            gates += g;
            verdicts += v;
            printf("| %d | %d | %5.1f %% | %5.1f %% |\n", samples[si], ranks[ri], 100.0 * g / seeds, 100.0 * v / seeds);
            fflush(stdout);
        }
    printf("| all | all | %5.2f %% | %5.2f %% |\n", 100.0 * (double)gates / (double)total,
           100.0 * (double)verdicts / (double)total);
}

int main(int argc, char **argv)
{
    int seeds = 200;
    tl_cmp_options_init(&opts);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            seeds = 10;
        } else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            seeds = atoi(argv[++i]);
            if (seeds < 1 || seeds > 100000) {
                fprintf(stderr, "bench_compare_power: --seeds wants 1..100000\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--threshold") && i + 1 < argc) {
            opts.threshold_pct = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--max-untested") && i + 1 < argc) {
            opts.max_untested_pct = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--noisy-stage") && i + 1 < argc) {
            noisy_sigma = atof(argv[++i]) / 100;
        } else if (!strcmp(argv[i], "--cell") && i + 2 < argc) {
            only_samples = atoi(argv[++i]);
            only_ranks = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_compare_power [--seeds N] [--quick] [--threshold PCT] [--max-untested PCT] "
                            "[--noisy-stage PCT] [--cell SAMPLES RANKS]\n");
            return 2;
        }
    }
    static const int changes[] = { 5, 10, 25, 100 };
    static const int samples[] = { 1, 4, 8, 16 };
    static const int ranks[] = { 1, 4, 8 };
    printf("tally compare power: %d stages, noise per call %.0f %% (lognormal), spikes %.0f %% of calls (1.5-3x); "
           "%d comparisons per cell; default options (alpha 0.05, threshold %g %%, untested beyond %.0f %%)\n",
           NAMES, 100 * CALL_SIGMA, 100 * SPIKE_P, seeds, opts.threshold_pct, opts.max_untested_pct);
    if (noisy_sigma > 0)
        printf("The last stage is noisier: %.0f %% per call\n", 100 * noisy_sigma);
    putchar('\n');
    printf("Detection rate (the step planted slower by 5..100 %%: the comparison fails the gate)\n\n");
    printf("| steps/rank | ranks |   +5 %% |  +10 %% |  +25 %% | +100 %% |\n|---:|---:|---:|---:|---:|---:|\n");
    rng = 20251125;
    for (size_t si = 0; si < NSAMPLES; si++)
        for (size_t ri = 0; ri < 3; ri++) {
            if (!in_cell(samples[si], ranks[ri]))
                continue;
            printf("| %d | %d |", samples[si], ranks[ri]);
            for (size_t ci = 0; ci < 4; ci++) {
                int hits = 0;
                for (int s = 0; s < seeds; s++) {
                    /* stage k is (k + 1) / 55 of the step: slower by what adds the change to the step */
                    int k = s % NAMES;
                    double factor = 1.0 + changes[ci] / 100.0 * 55.0 / (k + 1);
                    hits += compare_once(ranks[ri], samples[si], k, factor).detected;
                }
                printf(" %5.1f %% |", 100.0 * hits / seeds);
            }
            putchar('\n');
            fflush(stdout);
        }
    aa_table(seeds, samples, ranks, "A/A (no change), noise within runs only");
    rank_sigma = 0.02;
    run_sigma = 0.01;
    aa_table(seeds, samples, ranks, "A/A with run-to-run variation (rank 2 %, run 1 %)");
    return 0;
}
