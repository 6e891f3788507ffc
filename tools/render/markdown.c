/*
 * markdown.c - tl_render_markdown: the summary for a CI job page (GitHub's
 * job summary takes Markdown up to 1 MiB). Headline, recommendations, the
 * per-rank and across-rank tables, the top sections and kernels, and what
 * happened to the inputs; no links. Every table is cut to a few rows with a
 * count of the rest and every cell to a few hundred bytes, so the size is
 * bounded (tens of KB) whatever the input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "labels.h"
#include "render.h"
#include "report_text.h"
#include "text_numbers.h"
#include "collbw_text.h"
#include "shapes_text.h"
#include "memcats_out.h"
#include "memops_out.h"
#include "context_text.h"
#include "rank_pick.h"
#include "telemetry_text.h"
#include "term.h" /* tl_plural_s */
#include "units.h"

#define MD_RANKS 32
#define MD_NAMES 10
#define MD_WARNINGS 10
#define MD_CELL 300 /* bytes of a free-text cell */
#define MD_NAME 60  /* columns of a name's label (labels.h), as in the HTML tables */
#define MD_PATH 200 /* bytes of a path */

/* A name outside a table: its label on its own. */
static void md_name(FILE *f, const char *name)
{
    tl_labels l;
    if (tl_labels_make(&l, &name, 1, MD_NAME) == 0) {
        tl_escape_md(f, l.text[0]);
        tl_labels_release(&l);
    } else {
        tl_escape_md_n(f, name, MD_NAME);
    }
}

static void md_text(FILE *f, const char *s)
{
    tl_escape_md_n(f, s, MD_CELL);
}

static void cell(FILE *f, double v, int unit)
{
    char b[48];
    fprintf(f, " %s |", tl_units_fmt(b, sizeof b, v, unit));
}

static void more(FILE *f, size_t shown, size_t total, const char *what)
{
    if (total > shown)
        fprintf(f, "\n_and %zu more %s_\n", total - shown, what);
}

static void recommendations(FILE *f, const tl_aggregate *a)
{
    fputs("\n## Recommendations\n\n", f);
    if (a->nrecs == 0)
        fputs("No rule fired.\n", f);
    else
        fputs("| Severity | Rule | Rank | Finding | Evidence |\n|---|---|---:|---|---|\n", f);
    for (int i = 0; i < a->nrecs; i++) {
        const tl_recommendation *r = &a->recs[i];
        char *finding = tl_text_finding(r);
        if (finding == NULL)
            continue;
        fprintf(f, "| %s | %s | ", r->severity, r->id);
        r->rank >= 0 ? fprintf(f, "%d", r->rank) : fputs("all", f);
        fputs(" | ", f);
        md_text(f, finding);
        fputs(" | ", f);
        tl_text_numbers_put(f, r->evidence, md_text);
        fputs(" |\n", f);
        free(finding);
    }
    if (a->nskips > 0) {
        fputs("\nRules that did not apply:\n\n", f);
        int absent = 0;
        for (int i = 0; i < a->nskips; i++) {
            absent += a->skips[i].absent;
            if (a->skips[i].absent)
                continue;
            fprintf(f, "- `%s`: ", a->skips[i].id);
            tl_text_numbers_put(f, a->skips[i].why, md_text);
            fputc('\n', f);
        }
        if (absent) {
            char *ids = tl_rule_skip_absent_list(a);
            fputs("- no data for ", f);
            md_text(f, ids ? ids : "");
            fputc('\n', f);
            free(ids);
        }
    }
}

static void rank_row(FILE *f, const tl_rank_result *r, unsigned char why)
{
    char b[48];
    const char *tag = tl_rank_pick_tag(why);
    /* a loop summary's count (FramePack) is marked: its steps ran, their times were not recorded */
    fprintf(f, "| %d%s%s%s | %llu%s |", r->rank, *tag ? " " : "", tag, r->straggler ? " (straggler)" : "",
            (unsigned long long)r->step_count, r->steps_summarized ? " (summary)" : "");
    cell(f, r->step_mean, TL_UNIT_NS);
    cell(f, r->step_median, TL_UNIT_NS);
    cell(f, r->step_min, TL_UNIT_NS);
    cell(f, r->step_max, TL_UNIT_NS);
    cell(f, isfinite(r->step_mean) && r->step_mean > 0 ? 1e9 / r->step_mean : NAN, TL_UNIT_COUNT);
    cell(f, r->gpu.present ? tl_pct(r->gpu.idle, r->gpu.kernel_time) : NAN, TL_UNIT_PCT);
    cell(f, r->gpu.present ? tl_pct(r->gpu.compute, r->gpu.kernel_time) : NAN, TL_UNIT_PCT);
    cell(f, r->gpu.present && r->gpu.comm > 0 ? tl_pct(r->gpu.comm_compute, r->gpu.comm) : NAN, TL_UNIT_PCT);
    fprintf(f, " %s |\n", tl_units_bytes(b, sizeof b, r->peak_allocated));
}

/* Every rank up to MD_RANKS, else MD_RANKS of them picked (rank_pick.h). */
static void ranks(FILE *f, const tl_aggregate *a)
{
    size_t shown = 0;
    if (a->nranks == 0)
        return;
    unsigned char *why = tl_rank_pick(a, MD_RANKS, &shown);
    if (why == NULL)
        return;
    fputs("\n## Ranks\n\n| Rank | Steps | Step mean | Median | Min | Max | it/s | GPU idle | Compute | Overlap | "
          "Peak memory |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (size_t i = 0; i < a->nranks; i++)
        if (why[i])
            rank_row(f, &a->ranks[i], why[i]);
    free(why);
    char note[512];
    tl_rank_pick_note(note, sizeof note, shown, a->nranks);
    if (*note)
        fprintf(f, "\n_%s_\n", note);
}

/* Each rank's mean step by category (docs/analysis.md, "Step time by
 * category"): the categories some rank has, each cell the mean time and its
 * share of the mean step; ranks picked as in the Ranks table. */
static void stepcats(FILE *f, const tl_aggregate *a)
{
    int used[TL_SC_COUNT] = { 0 }, any = 0;
    for (size_t i = 0; i < a->nranks; i++)
        for (int c = 0; c < TL_SC_COUNT && a->ranks[i].stepcat_steps; c++)
            any |= used[c] |= a->ranks[i].stepcat_mean[c] > 0;
    if (!any)
        return;
    size_t shown = 0;
    unsigned char *why = tl_rank_pick(a, MD_RANKS, &shown);
    if (why == NULL)
        return;
    fputs("\n## Step time by category\n\nEach rank's mean step, split as TensorBoard's overview splits it "
          "(GPU kernels first, then copies, sets, communication, runtime calls, data loading, CPU execution).\n\n"
          "| Rank | Steps | Step |",
          f);
    for (int c = 0; c < TL_SC_COUNT; c++)
        if (used[c])
            fprintf(f, " %s |", tl_stepcat_label(c));
    fputs("\n|---:|---:|---:|", f);
    for (int c = 0; c < TL_SC_COUNT; c++)
        if (used[c])
            fputs("---:|", f);
    fputc('\n', f);
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (!why[i] || r->stepcat_steps == 0)
            continue;
        double step = 0;
        for (int c = 0; c < TL_SC_COUNT; c++)
            step += r->stepcat_mean[c];
        char b[48], p[32];
        fprintf(f, "| %d%s | %zu |", r->rank, r->straggler ? " (straggler)" : "", r->stepcat_steps);
        cell(f, step, TL_UNIT_NS);
        for (int c = 0; c < TL_SC_COUNT; c++)
            if (used[c])
                fprintf(f, " %s (%s) |", tl_units_fmt(b, sizeof b, r->stepcat_mean[c], TL_UNIT_NS),
                        tl_units_pct(p, sizeof p, step > 0 ? 100 * r->stepcat_mean[c] / step : 0));
        fputc('\n', f);
    }
    free(why);
    char note[512];
    tl_rank_pick_note(note, sizeof note, shown, a->nranks);
    if (*note)
        fprintf(f, "\n_%s_\n", note);
}

/* How the top kernels were launched (kinfo.c): the operator that launched
 * them and their launch configuration, for those the trace says it of. */
#define MD_KERNEL_LAUNCHES 10
static void kernel_launches(FILE *f, const tl_aggregate *a)
{
    size_t n = 0, shown = 0;
    size_t *idx = tl_name_table_top(&a->names, TL_GROUP_KERNELS, &n);
    const tl_skinfo *rows[MD_KERNEL_LAUNCHES];
    const char *names[MD_KERNEL_LAUNCHES];
    for (size_t i = 0; idx != NULL && i < n && shown < MD_KERNEL_LAUNCHES; i++) {
        const tl_skinfo *k = tl_kernel_info(a, a->names.rows[idx[i]].name);
        if (k != NULL) {
            rows[shown] = k;
            names[shown++] = k->name;
        }
    }
    free(idx);
    /* one set of labels, so no two kernels read the same (labels.h) */
    tl_labels lab;
    int labelled = shown > 0 && tl_labels_make(&lab, names, shown, MD_NAME) == 0;
    for (size_t i = 0; i < shown; i++) {
        const tl_skinfo *k = rows[i];
        if (i == 0)
            fputs("\n## How the top kernels were launched\n\n| Kernel | Launched by | Grid | Block | Registers | "
                  "Shared memory | Occupancy |\n|---|---|---:|---:|---:|---:|---:|\n",
                  f);
        char b[48], p[32];
        fputs("| ", f);
        if (labelled)
            tl_escape_md(f, lab.text[i]);
        else
            md_name(f, k->name);
        fputs(" | ", f);
        if (k->op != NULL) {
            md_name(f, k->op);
            if (k->ops > 1 && k->linked_ns > 0)
                fprintf(f, " (%s; %lld ops)",
                        tl_units_pct(p, sizeof p, 100.0 * (double)k->op_ns / (double)k->linked_ns), (long long)k->ops);
        } else {
            fputs("–", f);
        }
        for (int g = 0; g < 2; g++) {
            const int64_t *d = g ? k->block : k->grid;
            if (d[0] < 0)
                fputs(" | –", f);
            else
                fprintf(f, " | %lld×%lld×%lld%s", (long long)d[0], (long long)d[1], (long long)d[2],
                        k->varies ? " (varies)" : "");
        }
        if (k->regs >= 0)
            fprintf(f, " | %lld", (long long)k->regs);
        else
            fputs(" | –", f);
        fprintf(f, " | %s | %s |\n", k->smem >= 0 ? tl_units_bytes(b, sizeof b, (double)k->smem) : "–",
                isfinite(k->occupancy) ? tl_units_pct(p, sizeof p, k->occupancy) : "–");
    }
    if (labelled)
        tl_labels_release(&lab);
}

static void across(FILE *f, const tl_aggregate *a)
{
    char lo[48], hi[48];
    if (a->nacross == 0)
        return;
    fputs("\n## Across ranks\n\n| Metric | Ranks | Min | Median | Mean | Max | Imbalance |\n"
          "|---|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (int i = 0; i < a->nacross; i++) {
        const tl_across *x = &a->across[i];
        if (x->info->section == TL_SECTION_TELEMETRY)
            continue; /* the Telemetry section */
        int unit = x->info->unit;
        const char *label = x->info->label;
        fprintf(f, "| %s | %d | %s (rank %d) |", label, x->n, tl_units_fmt(lo, sizeof lo, x->min, unit), x->min_rank);
        cell(f, x->median, unit);
        cell(f, x->mean, unit);
        fprintf(f, " %s (rank %d) |", tl_units_fmt(hi, sizeof hi, x->max, unit), x->max_rank);
        cell(f, x->imbalance, TL_UNIT_RATIO);
        fputc('\n', f);
    }
}

static void names(FILE *f, const tl_aggregate *a, int group, const char *title)
{
    size_t n;
    size_t *idx = tl_name_table_top(&a->names, group, &n);
    if (idx == NULL || n == 0) {
        free(idx);
        return;
    }
    fprintf(f,
            "\n## %s\n\n| Name | Calls | Total | Rank mean | Rank max | Imbalance |\n"
            "|---|---:|---:|---:|---:|---:|\n",
            title);
    size_t m = n < MD_NAMES ? n : MD_NAMES;
    const char *nm[MD_NAMES];
    tl_labels lab;
    for (size_t i = 0; i < m; i++)
        nm[i] = a->names.rows[idx[i]].name;
    int labelled = tl_labels_make(&lab, nm, m, MD_NAME) == 0;
    for (size_t i = 0; i < m; i++) {
        const tl_name_row *r = &a->names.rows[idx[i]];
        char b[48];
        fputs("| ", f);
        if (labelled)
            tl_escape_md(f, lab.text[i]);
        else
            tl_escape_md_n(f, r->name, MD_NAME);
        fprintf(f, " | %llu |", (unsigned long long)r->all.count);
        cell(f, (double)r->all.total, TL_UNIT_NS);
        cell(f, r->rank_mean, TL_UNIT_NS);
        fprintf(f, " %s (rank %d) |", tl_units_dur(b, sizeof b, r->rank_max), r->rank_of_max);
        cell(f, r->imbalance, TL_UNIT_RATIO);
        fputc('\n', f);
    }
    if (labelled)
        tl_labels_release(&lab);
    more(f, m, n, "names");
    free(idx);
}

static void inputs(FILE *f, const tl_aggregate *a)
{
    size_t used = 0, skipped = 0, warnings = 0, shown = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        used += tl_session_counts(&a->sessions[i]);
        skipped += tl_identity_standing(&a->sessions[i].id) == TL_STANDING_NOT_READ;
        warnings += a->sessions[i].id.problems.n;
    }
    fprintf(f, "\n## Inputs\n\n%zu input%s: %zu used, %zu skipped; %zu warning%s.\n", a->nsessions,
            tl_plural_s(a->nsessions), used, skipped, warnings, tl_plural_s(warnings));
    if (warnings)
        fputc('\n', f);
    for (size_t i = 0; i < a->nsessions && shown < MD_WARNINGS; i++)
        for (size_t w = 0; w < a->sessions[i].id.problems.n && shown < MD_WARNINGS; w++, shown++) {
            fputs("- ", f);
            tl_escape_md_n(f, a->sessions[i].id.path, MD_PATH);
            fputs(": ", f);
            md_text(f, a->sessions[i].id.problems.v[w].text);
            fputc('\n', f);
        }
    more(f, shown, warnings, "warnings");
}

/* The events (counted by name), the hosts and the models, a line each. */
static void context(FILE *f, const tl_aggregate *a)
{
    char *ev = tl_events_sentence(a), *hosts = tl_hosts_sentence(a);
    if (ev && *ev) {
        fputs("\nEvents: ", f);
        md_text(f, ev);
        fputc('\n', f);
    }
    if (hosts && *hosts) {
        fputs("\nHosts: ", f);
        md_text(f, hosts);
        fputc('\n', f);
    }
    char *models = tl_models_sentence(a);
    if (models && *models) {
        fputs("\nModels: ", f);
        md_text(f, models);
        fputc('\n', f);
    }
    free(models);
    free(ev);
    free(hosts);
}

int tl_render_markdown(FILE *out, const tl_aggregate *a, const tl_report_options *o)
{
    char d[40];
    fputs("# ", out);
    tl_escape_md_n(out, o->title ? o->title : "tally report", 200);
    int calm = tl_text_headline_calm(a);
    fputs(calm ? "\n\n" : "\n\n**", out);
    tl_text_headline(out, a, md_name, md_text);
    fputs(calm ? "\n" : "**\n", out);
    for (size_t i = 0; i < a->nnotes; i++) {
        fputs("\n> Inputs: ", out);
        md_text(out, a->notes[i]);
        fputc('\n', out);
    }
    if (a->nstragglers == 0 && a->straggler_note) {
        fputs("\nStragglers: ", out);
        tl_text_numbers_put(out, a->straggler_note, md_text);
        fputc('\n', out);
    }
    char *waits = tl_text_waits(a);
    if (waits != NULL) {
        fputs("\nWaits: ", out);
        md_text(out, waits);
        fputc('\n', out);
        free(waits);
    }
    recommendations(out, a);
    ranks(out, a);
    stepcats(out, a);
    across(out, a);
    tl_collbw_markdown(out, a);
    tl_diffusion_markdown(out, a);
    tl_telemetry_markdown(out, a);
    tl_counters_markdown(out, a, MD_NAMES);
    context(out, a);
    names(out, a, TL_GROUP_SECTIONS, "Top sections");
    names(out, a, TL_GROUP_OPS, "Top ops");
    tl_shapes_markdown(out, a);
    tl_memops_markdown(out, a);
    tl_memcats_markdown(out, a);
    names(out, a, TL_GROUP_KERNELS, "Top kernels (GPU window)");
    kernel_launches(out, a);
    inputs(out, a);
    fputs("\n_Generated by tally ", out);
    tl_escape_md_n(out, o->version, 100);
    fprintf(out, " on %s._\n", tl_units_date(d, sizeof d, o->generated_unix_s));
    return 0;
}
