/*
 * inspect_text.c - `tally inspect`'s text: a record per input, its path on a
 * line of its own and then one indented field a line (format, rank and how
 * it was found, session, events by phase, categories, contents, time span,
 * truncation, warnings), see render.h. A skipped input says why and stops
 * there; an aggregate says its format only (tally summary shows its ranks).
 */
#include <inttypes.h>
#include <stdio.h>

#include "render.h"
#include "report_text.h" /* tl_text_rank_source: the report's words for a rank source */
#include "term.h"
#include "units.h"

static void text_profile(FILE *out, const tl_profile *p)
{
    static char path[8192];
    /* the name line: a newline in a file name must not start a fake record */
    fprintf(out, "%s\n", tl_term_escape(path, sizeof path, p->id.path));
    if (p->skipped) {
        /* The reason first, then whatever else was found on the way. */
        fprintf(out, "  skipped      %s\n", p->id.problems.n ? p->id.problems.v[0].text : "not a profile");
        for (size_t i = 1; i < p->id.problems.n; i++)
            fprintf(out, "  warning      %s\n", p->id.problems.v[i].text);
        return;
    }
    fprintf(out, "  format       %s%s%s%s\n", tl_format_name(p->id.format), p->format_detail[0] ? " (" : "",
            p->format_detail, p->format_detail[0] ? ")" : "");
    if (tl_profile_is_aggregate(p))
        return; /* its sessions have their ranks: tally summary shows them */
    fprintf(out, "  rank         %d (from %s: %s), session %d", p->id.rank, tl_text_rank_source(p->id.rank_source),
            p->id.rank_detail, p->id.session);
    if (p->id.world_size > 0)
        fprintf(out, ", world size %d", p->id.world_size);
    fputc('\n', out);
    if (p->id.companion_of)
        fprintf(out, "  companion    the trace of %s (its statistics come from the report)\n", p->id.companion_of);
    fprintf(out, "  events       %" PRIu64, p->events);
    const char *sep = " (";
    for (int ph = 1; ph < 128; ph++)
        if (p->by_phase[ph]) {
            fprintf(out, "%s%c %" PRIu64, sep, ph, p->by_phase[ph]);
            sep = ", ";
        }
    fprintf(out, "%s\n", sep[0] == ',' ? ")" : "");
    if (p->cats.n) {
        fprintf(out, "  categories  ");
        for (uint32_t c = 0; c < p->cats.n && c < 12; c++)
            fprintf(out, " %s %" PRIu64 "%s", tl_strtab_get(&p->cats, c), c < p->cat_counts_cap ? p->cat_counts[c] : 0,
                    c + 1 < p->cats.n ? "," : "");
        if (p->cats.n > 12)
            fprintf(out, " ... (%u categories)", p->cats.n);
        fputc('\n', out);
    }
    fprintf(out,
            "  contents     %u name%s, %zu GPU event%s on %u stream%s, %zu step%s, %zu memory point%s, "
            "%zu snapshot%s\n",
            p->nstats, tl_plural_s(p->nstats), p->ngpu, tl_plural_s(p->ngpu), p->nstreams, tl_plural_s(p->nstreams),
            p->nsteps, tl_plural_s(p->nsteps), p->nmem, tl_plural_s(p->nmem), p->nsnapshots,
            tl_plural_s(p->nsnapshots));
    if (p->start_ns <= p->end_ns) {
        char span[48];
        /* the one duration format of every output (units.h) */
        tl_units_dur(span, sizeof span, ((double)p->end_ns - (double)p->start_ns));
        fprintf(out, "  time span    %s\n", span);
    }
    fprintf(out, "  truncated    %s\n", p->truncated ? "yes (read up to the last complete event)" : "no");
    /* its own problems: a rank by input order is said on the rank line (identity.h) */
    if (tl_identity_input_problems(&p->id) == 0)
        fprintf(out, "  warnings     none\n");
    for (size_t i = 0; i < p->id.problems.n; i++)
        if (tl_problem_of_input(&p->id.problems.v[i]))
            fprintf(out, "  warning      %s\n", p->id.problems.v[i].text);
    if (p->id.problems.dropped)
        fprintf(out, "  warning      %" PRIu64 " more\n", p->id.problems.dropped);
}

void tl_render_inspect(FILE *out, const tl_run *run)
{
    for (size_t i = 0; i < run->n; i++)
        text_profile(out, run->profiles[i]);
}
