/*
 * summary.c - the console tables printed at exit with TALLY_SUMMARY=1, in the
 * spirit of the profilers tally's users already know (FramePack's summary):
 * top sections by total time, memory snapshots, iteration statistics.
 */
#include "internal.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RULE "--------------------------------------------------------------------------------------------"
#define TOP_N 25

/* Durations and bytes in the units every tally output uses (units.h),
 * right-aligned to 10 display columns here: "µ" is two bytes but one column,
 * so printf's byte widths alone would shift those rows. */
static const char *pad10(char *buf, size_t len, const char *text)
{
    int cols = tl_units_cols(text);
    snprintf(buf, len, "%*s%s", cols < 10 ? 10 - cols : 0, "", text);
    return buf;
}

static const char *fmt_dur(char *buf, size_t len, double ns)
{
    char t[32];
    return pad10(buf, len, tl_units_dur(t, sizeof t, ns));
}

static const char *fmt_bytes(char *buf, size_t len, double b)
{
    char t[32];
    return pad10(buf, len, tl_units_bytes(t, sizeof t, b));
}

static void sections_table(FILE *out, const tl_merged *m, double k)
{
    uint32_t n;
    uint32_t *ids = tl_sorted_ids(m->stats[TL_SECTION], m->nnames, &n);
    char a[32], b[32], c[32], d[32];
    fprintf(out, "%.92s\nTOP SECTIONS BY TOTAL TIME (rank %d)\n%.92s\n", RULE, tl_g.rank.rank, RULE);
    fprintf(out, "%-44s %8s %10s %10s %10s %10s\n", "Section", "Count", "Total", "Mean", "Min", "Max");
    for (uint32_t i = 0; ids && i < n && i < TOP_N; i++) {
        const tl_dur_stat *s = &m->stats[TL_SECTION][ids[i]];
        fprintf(out, "%-44.44s %8llu %10s %10s %10s %10s\n", tl_name(ids[i]), (unsigned long long)s->count,
                fmt_dur(a, sizeof a, (double)s->total * k), fmt_dur(b, sizeof b, s->mean * k),
                fmt_dur(c, sizeof c, (double)s->min * k), fmt_dur(d, sizeof d, (double)s->max * k));
    }
    if (ids && n > TOP_N)
        fprintf(out, "... and %u more sections (see the report)\n", n - TOP_N);
    if (n == 0)
        fprintf(out, "(no sections recorded)\n");
    free(ids);
}

static void memory_table(FILE *out)
{
    char a[32], b[32];
    if (tl_g.nsnapshots == 0)
        return;
    fprintf(out, "%.92s\nMEMORY SNAPSHOTS\n%.92s\n", RULE, RULE);
    fprintf(out, "%-32s %10s %10s  %s\n", "Label", "RSS", "Peak RSS", "Providers");
    for (size_t i = 0; i < tl_g.nsnapshots; i++) {
        const tl_snapshot *s = &tl_g.snapshots[i];
        fprintf(out, "%-32.32s %10s %10s ", s->label, fmt_bytes(a, sizeof a, s->mem.rss),
                fmt_bytes(b, sizeof b, s->mem.peak_rss));
        for (int r = 0; r < s->mem.nreadings; r++)
            fprintf(out, " %s=%s", s->mem.readings[r].key, tl_units_bytes(a, sizeof a, s->mem.readings[r].value));
        for (int g = 0; g < s->mem.ngpus; g++)
            if (s->mem.gpus[g].has_mem)
                fprintf(out, " gpu%d=%s", s->mem.gpus[g].index, tl_units_bytes(a, sizeof a, s->mem.gpus[g].mem_used));
        fputc('\n', out);
    }
}

static void iterations_table(FILE *out, const tl_merged *m, double k)
{
    uint32_t n;
    uint32_t *ids = tl_sorted_ids(m->stats[TL_ITERATION], m->nnames, &n);
    char a[32], b[32], c[32], d[32], e[32];
    if (ids && n > 0) {
        fprintf(out, "%.92s\nITERATIONS\n%.92s\n", RULE, RULE);
        fprintf(out, "%-24s %7s %10s %10s %10s %10s %10s %8s\n", "Loop", "Count", "Total", "Mean", "Median", "Min",
                "Max", "it/s");
    }
    for (uint32_t i = 0; ids && i < n; i++) {
        const tl_dur_stat *s = &m->stats[TL_ITERATION][ids[i]];
        double med = tl_dur_stat_quantile(s, 0.5);
        double mean = s->mean * k;
        fprintf(out, "%-24.24s %7llu %10s %10s %10s %10s %10s %8.2f\n", tl_name(ids[i]), (unsigned long long)s->count,
                fmt_dur(a, sizeof a, (double)s->total * k), fmt_dur(b, sizeof b, mean), fmt_dur(c, sizeof c, med * k),
                fmt_dur(d, sizeof d, (double)s->min * k), fmt_dur(e, sizeof e, (double)s->max * k),
                mean > 0 ? 1e9 / mean : 0.0);
    }
    free(ids);
}

void tl_summary_print(FILE *out, const tl_merged *m)
{
    double k = m->ns_per_tick;
    pthread_mutex_lock(&tl_g.lock);
    sections_table(out, m, k);
    memory_table(out);
    iterations_table(out, m, k);
    pthread_mutex_unlock(&tl_g.lock);
    if (m->dropped)
        fprintf(out, "tally: %llu trace events dropped beyond TALLY_MAX_EVENTS=%ld (statistics are complete)\n",
                (unsigned long long)m->dropped, tl_g.max_events);
    fprintf(out, "%.92s\n", RULE);
    fflush(out);
}
