/*
 * cmd_inspect.c - `tally inspect FILE...`: what each input is: format, rank
 * and how it was found, session, world size, events by phase and category,
 * time span, truncation, warnings. --json prints one array with an object
 * per input (and one per input that could not be read at all).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "report_text.h" /* tl_text_rank_source: the report's words for a rank source */
#include "term.h"
#include "units.h"

static const char *phase_name(int ph)
{
    static char one[2];
    one[0] = (char)ph;
    one[1] = '\0';
    return one;
}

/* The problems of the input itself (not a rank guessed from the input
 * order: the rank line says that). */
static size_t own_problems(const tl_profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->id.problems.n; i++)
        n += tl_problem_of_input(&p->id.problems.v[i]);
    return n;
}

static void json_profile(tl_json *j, const tl_profile *p)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "path", p->id.path);
    tl_json_kv_string(j, "format", p->skipped ? "not-a-profile" : tl_format_name(p->id.format));
    tl_json_kv_string(j, "format_detail", p->format_detail);
    tl_json_kv_bool(j, "skipped", p->skipped);
    tl_json_key(j, "rank");
    if (p->id.rank >= 0 && !p->skipped)
        tl_json_int(j, p->id.rank);
    else
        tl_json_null(j);
    tl_json_key(j, "rank_source");
    if (p->skipped)
        tl_json_null(j);
    else
        tl_json_string(j, tl_text_rank_source(p->id.rank_source));
    tl_json_kv_string(j, "rank_detail", p->id.rank_detail);
    tl_json_kv_int(j, "session", p->id.session);
    tl_json_key(j, "companion_of");
    p->id.companion_of ? tl_json_string(j, p->id.companion_of) : tl_json_null(j);
    tl_json_key(j, "world_size");
    if (p->id.world_size > 0)
        tl_json_int(j, p->id.world_size);
    else
        tl_json_null(j);
    tl_json_kv_uint(j, "events", p->events);
    tl_json_key(j, "by_phase");
    tl_json_object_begin(j);
    for (int ph = 1; ph < 128; ph++)
        if (p->by_phase[ph])
            tl_json_kv_uint(j, phase_name(ph), p->by_phase[ph]);
    tl_json_object_end(j);
    tl_json_key(j, "categories");
    tl_json_object_begin(j);
    for (uint32_t c = 0; c < p->cats.n; c++)
        tl_json_kv_uint(j, tl_strtab_get(&p->cats, c), c < p->cat_counts_cap ? p->cat_counts[c] : 0);
    tl_json_object_end(j);
    tl_json_kv_uint(j, "malformed", p->malformed);
    tl_json_kv_uint(j, "names", p->nstats);
    tl_json_kv_uint(j, "gpu_events", p->ngpu);
    tl_json_kv_uint(j, "steps", p->nsteps);
    int has_span = p->start_ns <= p->end_ns;
    tl_json_key(j, "start_ns");
    has_span ? tl_json_int(j, p->start_ns) : tl_json_null(j);
    tl_json_key(j, "end_ns");
    has_span ? tl_json_int(j, p->end_ns) : tl_json_null(j);
    tl_json_key(j, "base_time_ns");
    p->base_time_ns != INT64_MIN ? tl_json_int(j, p->base_time_ns) : tl_json_null(j);
    tl_json_kv_bool(j, "truncated", p->truncated);
    tl_json_kv_bool(j, "unterminated", p->unterminated);
    tl_json_kv_uint(j, "bytes", p->bytes);
    tl_json_key(j, "warnings");
    tl_json_array_begin(j);
    for (size_t i = 0; i < p->id.problems.n; i++)
        if (tl_problem_of_input(&p->id.problems.v[i]))
            tl_json_string(j, p->id.problems.v[i].text);
    if (p->id.problems.dropped) {
        char more[64];
        snprintf(more, sizeof more, "%" PRIu64 " more warnings", p->id.problems.dropped);
        tl_json_string(j, more);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

/* An input that could not be read at all: its identity (ingest.h's run->unreadable). */
static void json_unreadable(tl_json *j, const tl_identity *id)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "path", id->path);
    tl_json_kv_string(j, "format", "unreadable");
    tl_json_kv_bool(j, "skipped", 1);
    tl_json_key(j, "rank");
    tl_json_null(j);
    tl_json_key(j, "rank_source");
    tl_json_null(j);
    tl_json_kv_uint(j, "events", 0);
    tl_json_kv_bool(j, "truncated", 0);
    tl_json_key(j, "warnings");
    tl_json_array_begin(j);
    for (size_t i = 0; i < id->problems.n; i++)
        tl_json_string(j, id->problems.v[i].text);
    tl_json_array_end(j);
    tl_json_object_end(j);
}

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
            fprintf(out, " %s %" PRIu64 "%s", tl_strtab_get(&p->cats, c),
                    c < p->cat_counts_cap ? p->cat_counts[c] : 0,
                    c + 1 < p->cats.n ? "," : "");
        if (p->cats.n > 12)
            fprintf(out, " ... (%u categories)", p->cats.n);
        fputc('\n', out);
    }
    fprintf(out, "  contents     %u names, %zu GPU events on %u streams, %zu steps, %zu memory points, "
                 "%zu snapshots\n", p->nstats, p->ngpu, p->nstreams, p->nsteps, p->nmem, p->nsnapshots);
    if (p->start_ns <= p->end_ns) {
        char span[48];
        /* the one duration format of every output (units.h) */
        tl_units_dur(span, sizeof span, (double)(p->end_ns - p->start_ns));
        fprintf(out, "  time span    %s\n", span);
    }
    fprintf(out, "  truncated    %s\n", p->truncated ? "yes (read up to the last complete event)" : "no");
    if (own_problems(p) == 0)
        fprintf(out, "  warnings     none\n");
    for (size_t i = 0; i < p->id.problems.n; i++)
        if (tl_problem_of_input(&p->id.problems.v[i]))
            fprintf(out, "  warning      %s\n", p->id.problems.v[i].text);
    if (p->id.problems.dropped)
        fprintf(out, "  warning      %" PRIu64 " more\n", p->id.problems.dropped);
}

int tl_cmd_inspect(int argc, char **argv)
{
    int json = 0;
    const tl_cli_opt opts[] = {
        { "--json", NULL, 0, &json, NULL, "one JSON array with an object per input", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "inspect", "FILE...", "What each input is: format, rank and how it was found, session, events, time span.",
        NULL, opts, 1, -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    tl_run run;
    cli.quiet = cli.quiet || json; /* problems are in the JSON */
    size_t usable = tl_cli_ingest(&cli, &run, NULL, NULL);
    int warnings = (int)run.nunreadable;
    /* The JSON is a document: written as it is (not through the console's
     * escaping stream), with every write checked. */
    tl_output *o = json ? tl_cli_open_output(&cli, "-", 0) : NULL;
    int out_rc = json && o == NULL ? TL_EXIT_OUTPUT : TL_EXIT_OK;
    if (o != NULL) {
        tl_json j;
        tl_json_init(&j, tl_output_write, o);
        tl_json_array_begin(&j);
        for (size_t i = 0; i < run.n; i++)
            json_profile(&j, run.profiles[i]);
        for (size_t i = 0; i < run.nunreadable; i++)
            json_unreadable(&j, &run.unreadable[i]);
        tl_json_array_end(&j);
        tl_json_write(&j, "\n", 1);
        tl_json_finish(&j);
        out_rc = tl_cli_commit_outputs(&cli);
    } else {
        for (size_t i = 0; i < run.n; i++)
            text_profile(stdout, run.profiles[i]);
    }
    for (size_t i = 0; i < run.n; i++)
        warnings += (int)own_problems(run.profiles[i]);
    rc = out_rc != TL_EXIT_OK || tl_cli_close_output(stdout, "standard output") != 0 ? TL_EXIT_OUTPUT
         : usable == 0                           ? TL_EXIT_NO_INPUT
         : cli.strict && warnings                ? TL_EXIT_GATE
                                                 : TL_EXIT_OK;
    tl_run_release(&run);
    tl_cli_release(&cli);
    return rc;
}
