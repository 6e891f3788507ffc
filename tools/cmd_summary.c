/*
 * cmd_summary.c - `tally summary INPUT...`: console tables in the spirit of
 * the seed profilers. Top names by total time for each group (sections, ops,
 * kernels, ...) with the across-rank columns (min and max of the per-rank
 * totals and the ranks they belong to, mean, imbalance); then per rank: the
 * inputs, steps and memory.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "names.h"
#include "text_table.h"

#define TOP_N 15
#define RULE "----------------------------------------------------------------------------------------------------------------------------"

static void group_table(FILE *out, const tl_name_table *t, int group)
{
    size_t n;
    size_t *idx = tl_name_table_top(t, group, &n);
    if (idx == NULL || n == 0) {
        free(idx);
        return;
    }
    char name[48], a[24], b[24], c[24], d[24], e[24], f[24];
    fprintf(out, "\nTOP %s BY TOTAL TIME (all ranks)\n%.124s\n", tl_group_name(group), RULE);
    fprintf(out, "%-40s %9s %11s %11s %11s %11s | %17s %17s %6s\n", "Name", "Count", "Total", "Mean", "Min",
            "Max", "rank min (rank)", "rank max (rank)", "imbal");
    for (size_t k = 0; k < n && k < TOP_N; k++) {
        const tl_name_row *r = &t->rows[idx[k]];
        char rmin[32], rmax[32];
        snprintf(rmin, sizeof rmin, "%s (%d)", tl_fmt_duration(e, sizeof e, r->rank_min), r->rank_of_min);
        snprintf(rmax, sizeof rmax, "%s (%d)", tl_fmt_duration(f, sizeof f, r->rank_max), r->rank_of_max);
        fprintf(out, "%-40s %9" PRIu64 " %11s %11s %11s %11s | %17s %17s %6.2f\n",
                tl_fmt_cut(name, sizeof name, r->name, 40), r->all.count,
                tl_fmt_duration(a, sizeof a, (double)r->all.total), tl_fmt_duration(b, sizeof b, r->all.mean),
                tl_fmt_duration(c, sizeof c, (double)r->all.min), tl_fmt_duration(d, sizeof d, (double)r->all.max),
                rmin, rmax, r->imbalance);
    }
    if (n > TOP_N)
        fprintf(out, "... and %zu more %s\n", n - TOP_N, tl_group_name(group));
    free(idx);
}

static double step_median(const tl_step *s, size_t n)
{
    double *v = malloc(n * sizeof *v);
    if (v == NULL || n == 0) {
        free(v);
        return NAN;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (double)s[i].dur_ns;
    for (size_t i = 1; i < n; i++) /* n is small: insertion sort */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

static void peak_memory(const tl_profile *p, double *alloc, double *reserved)
{
    *alloc = *reserved = NAN;
    for (size_t i = 0; i < p->nmem; i++) {
        if (isfinite(p->mem[i].allocated) && !(p->mem[i].allocated <= *alloc))
            *alloc = p->mem[i].allocated;
        if (isfinite(p->mem[i].reserved) && !(p->mem[i].reserved <= *reserved))
            *reserved = p->mem[i].reserved;
    }
    for (size_t i = 0; i < p->nsnapshots; i++) {
        double a = isfinite(p->snapshots[i].peak_allocated) ? p->snapshots[i].peak_allocated
                                                             : p->snapshots[i].allocated;
        if (isfinite(a) && !(a <= *alloc))
            *alloc = a;
        if (isfinite(p->snapshots[i].reserved) && !(p->snapshots[i].reserved <= *reserved))
            *reserved = p->snapshots[i].reserved;
    }
}

static void rank_table(FILE *out, const tl_run *run)
{
    char a[24], b[24], c[24], d[24], e[24], f[24], g[24], name[48];
    fprintf(out, "\nPER RANK\n%.124s\n", RULE);
    fprintf(out, "%4s %3s %-34s %-16s %10s %11s %6s %11s %11s %11s %10s %10s\n", "Rank", "Ses", "Input",
            "Format", "Events", "Span", "Steps", "Step mean", "Step med", "Step max", "Peak alloc",
            "Peak resv");
    for (size_t i = 0; i < run->n; i++) {
        const tl_profile *p = run->profiles[i];
        if (!tl_profile_usable(p))
            continue;
        double sum = 0, max = NAN;
        for (size_t s = 0; s < p->nsteps; s++) {
            sum += (double)p->steps[s].dur_ns;
            if (!(p->steps[s].dur_ns <= max))
                max = (double)p->steps[s].dur_ns;
        }
        double alloc, resv;
        peak_memory(p, &alloc, &resv);
        const char *base = strrchr(p->path, '/');
        fprintf(out, "%4d %3d %-34s %-16s %10" PRIu64 " %11s %6zu %11s %11s %11s %10s %10s\n", p->rank,
                p->session, tl_fmt_cut(name, sizeof name, base ? base + 1 : p->path, 34),
                tl_format_name(p->format), p->events,
                p->start_ns <= p->end_ns ? tl_fmt_duration(a, sizeof a, (double)(p->end_ns - p->start_ns)) : "-",
                p->nsteps, tl_fmt_duration(b, sizeof b, p->nsteps ? sum / (double)p->nsteps : NAN),
                tl_fmt_duration(c, sizeof c, step_median(p->steps, p->nsteps)), tl_fmt_duration(d, sizeof d, max),
                tl_fmt_bytes(e, sizeof e, alloc), tl_fmt_bytes(f, sizeof f, resv));
        (void)g;
    }
}

static void snapshot_table(FILE *out, const tl_run *run)
{
    int any = 0;
    char a[24], b[24], c[24], d[24], name[40];
    for (size_t i = 0; i < run->n; i++) {
        const tl_profile *p = run->profiles[i];
        if (!tl_profile_usable(p) || p->nsnapshots == 0)
            continue;
        if (!any) {
            fprintf(out, "\nMEMORY SNAPSHOTS\n%.124s\n", RULE);
            fprintf(out, "%4s %-32s %12s %12s %12s %12s\n", "Rank", "Label", "Allocated", "Reserved",
                    "Max alloc", "RSS");
            any = 1;
        }
        for (size_t s = 0; s < p->nsnapshots; s++) {
            const tl_mem_snapshot *m = &p->snapshots[s];
            fprintf(out, "%4d %-32s %12s %12s %12s %12s\n", p->rank,
                    tl_fmt_cut(name, sizeof name, tl_strtab_get(&p->strs, m->label), 32),
                    tl_fmt_bytes(a, sizeof a, m->allocated), tl_fmt_bytes(b, sizeof b, m->reserved),
                    tl_fmt_bytes(c, sizeof c, m->peak_allocated), tl_fmt_bytes(d, sizeof d, m->rss));
        }
    }
}

int tl_cmd_summary(int argc, char **argv)
{
    static const char usage[] = "usage: tally summary INPUT...";
    tl_cli cli;
    int rc = tl_cli_parse(&cli, argc, argv, NULL, usage);
    if (rc != 0) {
        free(cli.inputs);
        return rc > 0 ? TL_EXIT_OK : TL_EXIT_USAGE;
    }
    if (cli.ninputs == 0) {
        fprintf(stderr, "%s\n", usage);
        free(cli.inputs);
        return TL_EXIT_USAGE;
    }
    tl_run run;
    size_t usable = tl_cli_ingest(&cli, &run);
    size_t warnings = tl_cli_warnings(&cli, &run);
    if (usable == 0) {
        fprintf(stderr, "tally: no usable input among %zu\n", run.n + run.nproblems);
        tl_run_release(&run);
        free(cli.inputs);
        return TL_EXIT_NO_INPUT;
    }
    tl_name_table t;
    if (tl_name_table_build(&t, run.profiles, run.n) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        tl_name_table_release(&t);
        tl_run_release(&run);
        free(cli.inputs);
        return TL_EXIT_NO_INPUT;
    }
    printf("tally summary: %zu inputs, %d ranks, %zu warnings\n", usable, t.nranks, warnings);
    static const int order[] = { TL_GROUP_SECTIONS, TL_GROUP_ITERATIONS, TL_GROUP_OPS, TL_GROUP_KERNELS,
                                 TL_GROUP_RUNTIME, TL_GROUP_GPU_ANNOTATIONS, TL_GROUP_PYTHON, TL_GROUP_OTHER };
    for (size_t g = 0; g < sizeof order / sizeof order[0]; g++)
        group_table(stdout, &t, order[g]);
    rank_table(stdout, &run);
    snapshot_table(stdout, &run);
    tl_name_table_release(&t);
    rc = tl_cli_close_output(stdout, "stdout") != 0 ? TL_EXIT_OUTPUT
         : cli.strict && warnings                ? TL_EXIT_GATE
                                                 : TL_EXIT_OK;
    tl_run_release(&run);
    free(cli.inputs);
    return rc;
}
