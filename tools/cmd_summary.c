/*
 * cmd_summary.c - `tally summary INPUT...`: the aggregate as console tables,
 * in the spirit of the seed profilers. Stragglers and recommendations first,
 * then the top names by total time for each group with the across-rank
 * columns (the per-rank totals' min and max with their ranks, imbalance),
 * then per rank: steps, GPU breakdown, memory; the across-rank metrics; and
 * memory snapshots.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "term.h"
#include "text_table.h"

#define TOP_N 15
#define RULE "----------------------------------------------------------------------------------------------------------------------------"

static void findings(FILE *out, const tl_aggregate *a)
{
    /* findings quote names from the inputs: one line each, newlines escaped */
    static char msg[4096], evidence[4096];
    if (a->nstragglers == 0 && a->nrecs == 0)
        return;
    fprintf(out, "\nFINDINGS\n%.124s\n", RULE);
    for (int i = 0; i < a->nstragglers; i++)
        fprintf(out, "straggler  %s\n", tl_term_escape(msg, sizeof msg, a->stragglers[i].summary));
    for (int i = 0; i < a->nrecs; i++)
        fprintf(out, "%-9s  [%s] %s\n           evidence: %s\n", a->recs[i].severity, a->recs[i].id,
                tl_term_escape(msg, sizeof msg, a->recs[i].message),
                tl_term_escape(evidence, sizeof evidence, a->recs[i].evidence));
}

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

static void rank_table(FILE *out, const tl_aggregate *agg)
{
    char a[24], b[24], c[24], d[24], e[24], f[24];
    fprintf(out, "\nPER RANK\n%.124s\n", RULE);
    fprintf(out, "%6s %4s %6s %11s %11s %11s %11s %8s | %7s %8s %8s %8s | %10s %10s\n", "Rank", "Ses", "Steps",
            "Step mean", "Step med", "Step min", "Step max", "it/s", "Idle%", "Compute%", "NonComp%", "Overlap%",
            "Peak alloc", "Peak resv");
    for (size_t i = 0; i < agg->nranks; i++) {
        const tl_rank_result *r = &agg->ranks[i];
        const tl_gpu_breakdown *g = &r->gpu;
        char rank[16];
        snprintf(rank, sizeof rank, "%d%s", r->rank, r->straggler ? " *" : "");
        /* it/s only when there is a step time to take it from */
        char its[16] = "-";
        if (isfinite(r->step_mean) && r->step_mean > 0)
            snprintf(its, sizeof its, "%.2f", 1e9 / r->step_mean);
        fprintf(out, "%6s %4zu %6zu %11s %11s %11s %11s %8s | ", rank, r->nsessions, r->nsteps,
                tl_fmt_duration(a, sizeof a, r->step_mean), tl_fmt_duration(b, sizeof b, r->step_median),
                tl_fmt_duration(c, sizeof c, r->step_min), tl_fmt_duration(d, sizeof d, r->step_max), its);
        if (g->present)
            fprintf(out, "%7.2f %8.2f %8.2f %8.2f | ", tl_pct(g->idle, g->kernel_time),
                    tl_pct(g->compute, g->kernel_time), tl_pct(g->non_compute, g->kernel_time),
                    g->comm > 0 ? tl_pct(g->comm_compute, g->comm) : 0.0);
        else
            fprintf(out, "%7s %8s %8s %8s | ", "-", "-", "-", "-");
        fprintf(out, "%10s %10s\n", tl_fmt_bytes(e, sizeof e, r->peak_allocated),
                tl_fmt_bytes(f, sizeof f, r->peak_reserved));
    }
    int any = 0;
    for (size_t i = 0; i < agg->nranks; i++)
        any |= agg->ranks[i].straggler;
    if (any)
        fprintf(out, "* straggler (see FINDINGS)\n");
}

static void across_table(FILE *out, const tl_aggregate *a)
{
    if (a->nranks < 2 || a->nacross == 0)
        return;
    fprintf(out, "\nACROSS RANKS\n%.124s\n", RULE);
    fprintf(out, "%-30s %5s %14s %5s %14s %5s %14s %14s %6s\n", "Metric", "Ranks", "Min", "(rank)", "Max", "(rank)",
            "Mean", "Median", "imbal");
    for (int i = 0; i < a->nacross; i++) {
        const tl_across *x = &a->across[i];
        char mn[24], mx[24], me[24], md[24];
        int is_time = strstr(x->metric, "_ns") != NULL, is_bytes = strstr(x->metric, "bytes") != NULL;
        if (is_time) {
            tl_fmt_duration(mn, sizeof mn, x->min);
            tl_fmt_duration(mx, sizeof mx, x->max);
            tl_fmt_duration(me, sizeof me, x->mean);
            tl_fmt_duration(md, sizeof md, x->median);
        } else if (is_bytes) {
            tl_fmt_bytes(mn, sizeof mn, x->min);
            tl_fmt_bytes(mx, sizeof mx, x->max);
            tl_fmt_bytes(me, sizeof me, x->mean);
            tl_fmt_bytes(md, sizeof md, x->median);
        } else {
            snprintf(mn, sizeof mn, "%.2f", x->min);
            snprintf(mx, sizeof mx, "%.2f", x->max);
            snprintf(me, sizeof me, "%.2f", x->mean);
            snprintf(md, sizeof md, "%.2f", x->median);
        }
        fprintf(out, "%-30s %5d %14s %5d %14s %5d %14s %14s %6.2f\n", x->metric, x->n, mn, x->min_rank, mx,
                x->max_rank, me, md, x->imbalance);
    }
}

static void snapshot_table(FILE *out, const tl_aggregate *agg)
{
    int any = 0;
    char a[24], b[24], c[24], d[24], name[40];
    for (size_t i = 0; i < agg->nsessions; i++) {
        const tl_session *s = &agg->sessions[i];
        if (s->rank < 0)
            continue;
        for (size_t k = 0; k < s->nsnaps; k++) {
            const tl_ssnap *m = &s->snaps[k];
            if (!any) {
                fprintf(out, "\nMEMORY SNAPSHOTS\n%.124s\n", RULE);
                fprintf(out, "%4s %-32s %12s %12s %12s %12s\n", "Rank", "Label", "Allocated", "Reserved",
                        "Max alloc", "RSS");
                any = 1;
            }
            fprintf(out, "%4d %-32s %12s %12s %12s %12s\n", s->rank, tl_fmt_cut(name, sizeof name, m->label, 32),
                    tl_fmt_bytes(a, sizeof a, m->allocated), tl_fmt_bytes(b, sizeof b, m->reserved),
                    tl_fmt_bytes(c, sizeof c, m->peak_allocated), tl_fmt_bytes(d, sizeof d, m->rss));
        }
    }
}

int tl_cmd_summary(int argc, char **argv)
{
    int whole = 0;
    const tl_cli_opt opts[] = {
        { "--whole-trace", NULL, 0, &whole, NULL, "GPU breakdown over the whole trace, not the ProfilerStep window", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "summary", "INPUT...", "Console tables: findings, top names by total time, per rank and across ranks.",
        NULL, opts, 1, -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    tl_analyze_options opt;
    tl_analyze_options_init(&opt);
    opt.whole_trace = whole;
    tl_aggregate agg;
    size_t warnings = 0;
    rc = tl_cli_analyze(&cli, &opt, &agg, &warnings);
    if (rc == TL_EXIT_OK) {
        size_t sessions = 0, companions = 0;
        for (size_t i = 0; i < agg.nsessions; i++) {
            sessions += agg.sessions[i].rank >= 0 && agg.sessions[i].companion_of == NULL;
            companions += agg.sessions[i].companion_of != NULL;
        }
        printf("tally summary: %zu sessions of %zu ranks", sessions, agg.nranks);
        if (companions)
            printf(" (%zu traces counted with their reports)", companions);
        printf(", %zu warnings\n", warnings);
        findings(stdout, &agg);
        static const int order[] = { TL_GROUP_SECTIONS, TL_GROUP_ITERATIONS, TL_GROUP_OPS, TL_GROUP_KERNELS,
                                     TL_GROUP_RUNTIME, TL_GROUP_GPU_ANNOTATIONS, TL_GROUP_PYTHON, TL_GROUP_OTHER };
        for (size_t g = 0; g < sizeof order / sizeof order[0]; g++)
            group_table(stdout, &agg.names, order[g]);
        rank_table(stdout, &agg);
        across_table(stdout, &agg);
        snapshot_table(stdout, &agg);
        rc = tl_cli_close_output(stdout, "standard output") != 0 ? TL_EXIT_OUTPUT
             : cli.strict && warnings                ? TL_EXIT_GATE
                                                     : TL_EXIT_OK;
    }
    tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
