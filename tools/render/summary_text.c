/*
 * summary_text.c - `tally summary`: the aggregate as console tables
 * (render.h), in the spirit of the seed profilers. A line counting the
 * sessions, ranks and warnings; stragglers and recommendations; the top
 * names by total time for each group with the across-rank columns (the
 * per-rank totals' least and most with their ranks, imbalance); per rank:
 * steps, GPU breakdown and memory; the across-rank metrics; memory
 * snapshots; and, when ranks have several sessions, each stage per session
 * with its trend (drift.h).
 *
 * Everything fits the width the command chose: 80 columns, the terminal's
 * when stdout is one, or --width N (text_table.h). Text wraps at spaces;
 * tables leave out their least important columns and say so; names become
 * labels that fit and never repeat (labels.h); numbers come whole from
 * units.h. Text from the inputs (names, findings that quote them) has its
 * control characters and newlines shown escaped (term.h), one finding per
 * paragraph.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_text.h"
#include "rank_pick.h"
#include "render.h"
#include "term.h" /* tl_plural_s */
#include "report_text.h"
#include "telemetry_text.h"
#include "text_numbers.h"
#include "text_table.h"
#include "units.h"

#define TOP_N 15

static void heading(FILE *out, const char *title)
{
    fprintf(out, "\n%s\n", title);
}

static void fputs_text(FILE *f, const char *s)
{
    fputs(s, f);
}

static void findings(FILE *out, const tl_aggregate *a, size_t width)
{
    /* the headline (decided in analyze), calm when nothing is wrong */
    if (a->headline) {
        char *headline = tl_text_numbers(a->headline);
        fputc('\n', out);
        tl_text_wrap(out,
                     strcmp(a->headline_severity, "ok") == 0 || strcmp(a->headline_severity, "info") == 0
                         ? "Summary: "
                         : "HEADLINE: ",
                     headline ? headline : "", width);
        free(headline);
    }
    for (size_t i = 0; i < a->nnotes; i++)
        tl_text_wrap(out, "note: ", a->notes[i], width);
    if (a->nstragglers == 0 && a->straggler_note) {
        char *note = tl_text_numbers(a->straggler_note);
        tl_text_wrap(out, "stragglers: ", note ? note : "", width);
        free(note);
    }
    char *waits = tl_text_waits(a);
    if (waits != NULL) {
        tl_text_wrap(out, "waits: ", waits, width);
        free(waits);
    }
    if (a->nrecs > 0)
        heading(out, "FINDINGS");
    for (int i = 0; i < a->nrecs; i++) {
        char first[32], *msg = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&msg, &len);
        if (m == NULL)
            continue;
        fprintf(m, "[%s] ", a->recs[i].id);
        tl_text_numbers_put(m, a->recs[i].message, fputs_text);
        fclose(m);
        char *evidence = tl_text_numbers(a->recs[i].evidence);
        snprintf(first, sizeof first, "%-9s  ", a->recs[i].severity);
        tl_text_wrap(out, first, msg, width);
        tl_text_wrap(out, "           evidence: ", evidence ? evidence : "", width);
        free(evidence);
        free(msg);
    }
    if (a->nskips > 0) {
        heading(out, "RULES THAT DID NOT APPLY");
        /* the ids in one column, as wide as the longest (at least 21); rules
         * for data these inputs do not carry by id only, on one line */
        int idw = 21, absent = 0;
        for (int i = 0; i < a->nskips; i++) {
            absent += a->skips[i].absent;
            if (!a->skips[i].absent && (int)strlen(a->skips[i].id) + 1 > idw)
                idw = (int)strlen(a->skips[i].id) + 1;
        }
        for (int i = 0; i < a->nskips; i++) {
            if (a->skips[i].absent)
                continue;
            char first[48];
            snprintf(first, sizeof first, "%-*.40s", idw > 41 ? 41 : idw, a->skips[i].id);
            char *why = tl_text_numbers(a->skips[i].why);
            tl_text_wrap(out, first, why ? why : "", width);
            free(why);
        }
        if (absent) {
            char *ids = tl_rule_skip_absent_list(a);
            tl_text_wrap(out, "no data for ", ids ? ids : "", width);
            free(ids);
        }
    }
}

/* "3.659 ms (r6)": a per-rank value with the rank it belongs to. */
static const char *with_rank(char *buf, size_t len, double v, int unit, int rank)
{
    char b[48];
    snprintf(buf, len, "%s (r%d)", tl_units_fmt(b, sizeof b, v, unit), rank);
    return buf;
}

static void group_table(FILE *out, const tl_name_table *t, int group, size_t width)
{
    static const tl_text_col cols[] = {
        { "Name", 0, 0, 1 },     { "Calls", 1, 4, 0 }, { "Total", 1, 0, 0 }, { "Self", 1, 2, 0 },
        { "Mean", 1, 3, 0 },     { "Min", 1, 6, 0 },   { "Max", 1, 5, 0 },   { "Rank min", 1, 7, 0 },
        { "Rank max", 1, 2, 0 }, { "Imbal", 1, 1, 0 },
    };
    size_t n;
    size_t *idx = tl_name_table_top(t, group, &n);
    if (idx == NULL || n == 0) {
        free(idx);
        return;
    }
    char title[96];
    int len = snprintf(title, sizeof title, "TOP %s", tl_group_name(group));
    for (char *p = title; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    if (len > 0 && (size_t)len < sizeof title)
        snprintf(title + len, sizeof title - (size_t)len, " BY TOTAL TIME (all ranks)");
    heading(out, title);
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    for (size_t k = 0; k < n && k < TOP_N; k++) {
        const tl_name_row *r = &t->rows[idx[k]];
        char c[32], tot[48], self[48] = "-", me[48], mn[48], mx[48], lo[64], hi[64], im[32];
        snprintf(c, sizeof c, "%" PRIu64, r->all.count);
        if (r->self_total >= 0)
            tl_units_dur(self, sizeof self, r->self_total);
        /* Total is inclusive: a name nested in itself counts once (docs/analysis.md) */
        const char *cells[] = { r->name,
                                c,
                                tl_units_dur(tot, sizeof tot, r->incl_total),
                                self,
                                tl_units_dur(me, sizeof me, r->all.mean),
                                tl_units_dur(mn, sizeof mn, (double)r->all.min),
                                tl_units_dur(mx, sizeof mx, (double)r->all.max),
                                with_rank(lo, sizeof lo, r->rank_min, TL_UNIT_NS, r->rank_of_min),
                                with_rank(hi, sizeof hi, r->rank_max, TL_UNIT_NS, r->rank_of_max),
                                tl_units_fmt(im, sizeof im, r->imbalance, TL_UNIT_RATIO) };
        tl_text_table_row(&tt, cells);
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
    if (n > TOP_N)
        fprintf(out, "... and %zu more %s\n", n - TOP_N, tl_group_name(group));
    free(idx);
}

/* "12 *" a straggler; past TL_RANKS_LISTED ranks, why a rank is listed:
 * "4711 p90", "80 max *" (rank_pick.h). */
static void rank_label(char *buf, size_t len, const tl_rank_result *r, unsigned char why)
{
    const char *tag = tl_rank_pick_tag(why);
    snprintf(buf, len, "%d%s%s%s", r->rank, *tag ? " " : "", tag, r->straggler ? " *" : "");
}

/* The ranks the per-rank tables list: all of them up to TL_RANKS_LISTED,
 * else TL_RANKS_PICKED chosen by rank_pick.h. */
static unsigned char *ranks_listed(const tl_aggregate *a, size_t *n)
{
    return tl_rank_pick(a, a->nranks <= TL_RANKS_LISTED ? TL_RANKS_LISTED : TL_RANKS_PICKED, n);
}

static void rank_steps(FILE *out, const tl_aggregate *agg, const unsigned char *why, size_t width)
{
    static const tl_text_col cols[] = {
        { "Rank", 1, 0, 0 },   { "Sessions", 1, 5, 0 }, { "Steps", 1, 1, 0 }, { "Step mean", 1, 0, 0 },
        { "Median", 1, 2, 0 }, { "Min", 1, 3, 0 },      { "Max", 1, 3, 0 },   { "it/s", 1, 4, 0 },
    };
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    heading(out, "PER RANK: STEPS");
    for (size_t i = 0; i < agg->nranks; i++) {
        const tl_rank_result *r = &agg->ranks[i];
        if (!why[i])
            continue;
        char rank[32], ses[16], st[16], a[48], b[48], c[48], d[48], its[48];
        rank_label(rank, sizeof rank, r, why[i]);
        snprintf(ses, sizeof ses, "%zu", r->nsessions);
        /* a loop summary's count (FramePack): the steps it ran, without their times */
        snprintf(st, sizeof st, "%llu%s", (unsigned long long)r->step_count, r->steps_summarized ? " (s)" : "");
        /* it/s only when there is a step time to take it from */
        tl_units_count(its, sizeof its, isfinite(r->step_mean) && r->step_mean > 0 ? 1e9 / r->step_mean : NAN);
        const char *cells[] = { rank,
                                ses,
                                st,
                                tl_units_dur(a, sizeof a, r->step_mean),
                                tl_units_dur(b, sizeof b, r->step_median),
                                tl_units_dur(c, sizeof c, r->step_min),
                                tl_units_dur(d, sizeof d, r->step_max),
                                its };
        tl_text_table_row(&tt, cells);
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
    for (size_t i = 0; i < agg->nranks; i++)
        if (why[i] && agg->ranks[i].steps_summarized) {
            tl_text_wrap(out, "",
                         "(s) from the report's loop summary: the count, mean, min and max it recorded, not "
                         "each step",
                         width);
            break;
        }
}

static void rank_gpu(FILE *out, const tl_aggregate *agg, const unsigned char *why, size_t width)
{
    static const tl_text_col cols[] = {
        { "Rank", 1, 0, 0 },    { "GPU idle", 1, 0, 0 },   { "Compute", 1, 1, 0 },   { "Non-compute", 1, 3, 0 },
        { "Overlap", 1, 2, 0 }, { "Peak alloc", 1, 0, 0 }, { "Peak resv", 1, 4, 0 }, { "Dev used", 1, 0, 0 },
    };
    /* NVML's device memory used is a column of its own (never "allocated"),
     * only where some rank has it */
    int with_used = 0;
    for (size_t i = 0; i < agg->nranks; i++)
        with_used |= isfinite(agg->ranks[i].peak_device_used);
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0] - !with_used);
    heading(out, "PER RANK: GPU (share of kernel time) AND MEMORY");
    for (size_t i = 0; i < agg->nranks; i++) {
        const tl_rank_result *r = &agg->ranks[i];
        const tl_gpu_breakdown *g = &r->gpu;
        if (!why[i])
            continue;
        char rank[32], a[32], b[32], c[32], d[32], e[48], f[48], u[48];
        rank_label(rank, sizeof rank, r, why[i]);
        tl_units_pct(a, sizeof a, g->present ? tl_pct(g->idle, g->kernel_time) : NAN);
        tl_units_pct(b, sizeof b, g->present ? tl_pct(g->compute, g->kernel_time) : NAN);
        tl_units_pct(c, sizeof c, g->present ? tl_pct(g->non_compute, g->kernel_time) : NAN);
        tl_units_pct(d, sizeof d, g->present && g->comm > 0 ? tl_pct(g->comm_compute, g->comm) : NAN);
        const char *cells[] = { rank,
                                a,
                                b,
                                c,
                                d,
                                tl_units_bytes(e, sizeof e, r->peak_allocated),
                                tl_units_bytes(f, sizeof f, r->peak_reserved),
                                tl_units_bytes(u, sizeof u, r->peak_device_used) };
        tl_text_table_row(&tt, cells);
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
}

static void rank_tables(FILE *out, const tl_aggregate *agg, const unsigned char *why, size_t listed, size_t width)
{
    rank_steps(out, agg, why, width);
    rank_gpu(out, agg, why, width);
    int any = 0;
    for (size_t i = 0; i < agg->nranks; i++)
        any |= why[i] && agg->ranks[i].straggler;
    if (any)
        fprintf(out, "* straggler (see FINDINGS)\n");
    char note[512];
    tl_rank_pick_note(note, sizeof note, listed, agg->nranks);
    if (*note)
        tl_text_wrap(out, "", note, width);
}

static void across_table(FILE *out, const tl_aggregate *a, size_t width)
{
    static const tl_text_col cols[] = {
        { "Metric", 0, 0, 1 }, { "Ranks", 1, 4, 0 }, { "Least", 1, 0, 0 }, { "Median", 1, 3, 0 },
        { "Mean", 1, 2, 0 },   { "Most", 1, 0, 0 },  { "Imbal", 1, 1, 0 },
    };
    if (a->nranks < 2 || a->nacross == 0)
        return;
    heading(out, "ACROSS RANKS");
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    for (int i = 0; i < a->nacross; i++) {
        const tl_across *x = &a->across[i];
        if (x->info->section == TL_SECTION_TELEMETRY)
            continue; /* the TELEMETRY table */
        int unit = x->info->unit;
        const char *label = x->info->label;
        char n[16], mn[64], md[48], me[48], mx[64], im[32];
        snprintf(n, sizeof n, "%d", x->n);
        const char *cells[] = { label,
                                n,
                                with_rank(mn, sizeof mn, x->min, unit, x->min_rank),
                                tl_units_fmt(md, sizeof md, x->median, unit),
                                tl_units_fmt(me, sizeof me, x->mean, unit),
                                with_rank(mx, sizeof mx, x->max, unit, x->max_rank),
                                tl_units_fmt(im, sizeof im, x->imbalance, TL_UNIT_RATIO) };
        tl_text_table_row(&tt, cells);
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
}

/* Each stage per session (drift.h): median over the ranks, the change from
 * the first session to the last, the trend; "drifts" beyond TL_DRIFT_PCT.
 * At most DRIFT_COLS sessions get a column: the first ones and the last. */
#define DRIFT_COLS 5
static void drift_table(FILE *out, const tl_aggregate *agg, size_t width)
{
    const tl_drift *d = &agg->drift;
    if (d->nstages == 0)
        return;
    int ncols = d->nsessions < DRIFT_COLS ? d->nsessions : DRIFT_COLS;
    char heads[DRIFT_COLS][24];
    tl_text_col cols[DRIFT_COLS + 4];
    size_t n = 0;
    cols[n++] = (tl_text_col){ "Stage", 0, 0, 1 };
    for (int k = 0; k < ncols; k++) {
        snprintf(heads[k], sizeof heads[k], "Session %d", k == ncols - 1 ? d->nsessions : k + 1);
        cols[n++] = (tl_text_col){ heads[k], 1, k == 0 || k == ncols - 1 ? 0 : 2, 0 };
    }
    cols[n++] = (tl_text_col){ "Change", 1, 0, 0 };
    cols[n++] = (tl_text_col){ "Per session", 1, 1, 0 };
    cols[n++] = (tl_text_col){ "", 0, 0, 0 };
    tl_text_table tt;
    tl_text_table_init(&tt, cols, n);
    for (size_t i = 0; i < d->nstages && i < TOP_N; i++) {
        const tl_drift_stage *s = &d->stages[i];
        char vals[DRIFT_COLS][48], change[32] = "-", slope[32] = "-";
        const char *cells[DRIFT_COLS + 4];
        size_t c = 0;
        cells[c++] = s->name;
        for (int k = 0; k < ncols; k++)
            cells[c++] = tl_units_dur(vals[k], sizeof vals[k], s->value[k == ncols - 1 ? d->nsessions - 1 : k]);
        if (isfinite(s->change_pct)) {
            snprintf(change, sizeof change, "%+.1f%%", s->change_pct);
            snprintf(slope, sizeof slope, "%+.1f%%", s->slope_pct);
        }
        cells[c++] = change;
        cells[c++] = slope;
        cells[c++] = s->drifts ? "drifts" : "";
        tl_text_table_row(&tt, cells);
    }
    char title[128];
    snprintf(title, sizeof title, "SESSIONS (each stage per call per session, median over the ranks; %d session%s)",
             d->nsessions + d->sessions_dropped, tl_plural_s((size_t)(d->nsessions + d->sessions_dropped)));
    heading(out, title);
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
    if (d->nstages > TOP_N || d->stages_dropped)
        fprintf(out, "... and %zu more stages\n",
                d->nstages - (d->nstages > TOP_N ? TOP_N : d->nstages) + d->stages_dropped);
}

/* Whether rank number `rank` is listed (why, by index of agg->ranks). */
static int rank_listed(const tl_aggregate *agg, const unsigned char *why, int rank)
{
    size_t lo = 0, hi = agg->nranks;
    while (lo < hi) { /* ranks ascend by number */
        size_t mid = lo + (hi - lo) / 2;
        if (agg->ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < agg->nranks && agg->ranks[lo].rank == rank)
        return why[lo] != 0;
    for (size_t i = 0; i < agg->nranks; i++) /* not in order: look at every one */
        if (agg->ranks[i].rank == rank)
            return why[i] != 0;
    return 0;
}

static void snapshot_table(FILE *out, const tl_aggregate *agg, const unsigned char *why, size_t listed, size_t width)
{
    static const tl_text_col cols[] = {
        { "Rank", 1, 0, 0 },      { "Label", 0, 0, 1 }, { "Allocated", 1, 0, 0 },   { "Reserved", 1, 1, 0 },
        { "Max alloc", 1, 2, 0 }, { "RSS", 1, 3, 0 },   { "Device used", 1, 1, 0 },
    };
    int with_used = 0;
    for (size_t i = 0; i < agg->nsessions; i++)
        for (size_t k = 0; tl_session_counts(&agg->sessions[i]) && k < agg->sessions[i].nsnaps; k++)
            with_used |= isfinite(agg->sessions[i].snaps[k].device_used);
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0] - !with_used);
    for (size_t i = 0; i < agg->nsessions; i++) {
        const tl_session *s = &agg->sessions[i];
        if (!tl_session_counts(s) || (listed < agg->nranks && !rank_listed(agg, why, s->id.rank)))
            continue;
        for (size_t k = 0; k < s->nsnaps; k++) {
            const tl_ssnap *m = &s->snaps[k];
            char rank[16], a[48], b[48], c[48], d[48], u[48];
            snprintf(rank, sizeof rank, "%d", s->id.rank);
            const char *cells[] = { rank,
                                    m->label,
                                    tl_units_bytes(a, sizeof a, m->allocated),
                                    tl_units_bytes(b, sizeof b, m->reserved),
                                    tl_units_bytes(c, sizeof c, m->peak_allocated),
                                    tl_units_bytes(d, sizeof d, m->rss),
                                    tl_units_bytes(u, sizeof u, m->device_used) };
            tl_text_table_row(&tt, cells);
        }
    }
    if (tt.nrows > 0) {
        heading(out, "MEMORY SNAPSHOTS");
        tl_text_table_print(out, &tt, width);
        if (listed < agg->nranks)
            fprintf(out, "(the %zu ranks listed above only)\n", listed);
    }
    tl_text_table_release(&tt);
}

/* The events (counted by name), the hosts and the models, one wrapped line each. */
static void context_lines(FILE *out, const tl_aggregate *a, size_t width)
{
    char *ev = tl_events_sentence(a), *hosts = tl_hosts_sentence(a), *models = tl_models_sentence(a);
    if ((ev && *ev) || (hosts && *hosts) || (models && *models))
        fputc('\n', out);
    if (ev && *ev)
        tl_text_wrap(out, "events: ", ev, width);
    if (hosts && *hosts)
        tl_text_wrap(out, "hosts: ", hosts, width);
    if (models && *models)
        tl_text_wrap(out, "models: ", models, width);
    free(ev);
    free(hosts);
    free(models);
}

void tl_render_summary(FILE *out, const tl_aggregate *a, size_t warnings, size_t width)
{
    size_t sessions = 0, companions = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        sessions += tl_session_counts(&a->sessions[i]);
        companions += tl_identity_standing(&a->sessions[i].id) == TL_STANDING_COMPANION;
    }
    char head[256];
    int len = snprintf(head, sizeof head, "%zu session%s of %zu rank%s", sessions, tl_plural_s(sessions), a->nranks,
                       tl_plural_s(a->nranks));
    if (companions && len > 0 && (size_t)len < sizeof head)
        len +=
            snprintf(head + len, sizeof head - (size_t)len, " (%zu companion file%s counted with %s report%s)",
                     companions, tl_plural_s(companions), companions == 1 ? "its" : "their", tl_plural_s(companions));
    if (len > 0 && (size_t)len < sizeof head)
        snprintf(head + len, sizeof head - (size_t)len, ", %zu warning%s", warnings, tl_plural_s(warnings));
    tl_text_wrap(out, "tally summary: ", head, width);
    findings(out, a, width);
    static const int order[] = { TL_GROUP_SECTIONS, TL_GROUP_ITERATIONS,      TL_GROUP_OPS,    TL_GROUP_KERNELS,
                                 TL_GROUP_RUNTIME,  TL_GROUP_GPU_ANNOTATIONS, TL_GROUP_PYTHON, TL_GROUP_OTHER };
    for (size_t g = 0; g < sizeof order / sizeof order[0]; g++)
        group_table(out, &a->names, order[g], width);
    size_t listed = 0;
    unsigned char *why = ranks_listed(a, &listed);
    if (why != NULL)
        rank_tables(out, a, why, listed, width);
    across_table(out, a, width);
    tl_diffusion_summary(out, a, width);
    tl_telemetry_summary(out, a, width);
    tl_counters_summary(out, a, width, TOP_N);
    context_lines(out, a, width);
    if (why != NULL)
        snapshot_table(out, a, why, listed, width);
    drift_table(out, a, width);
    free(why);
}
