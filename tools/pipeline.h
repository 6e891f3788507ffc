/*
 * pipeline.h - the spine of every command that analyzes, stage by stage
 * (docs/architecture.md, "One run of tally report, stage by stage"):
 *
 *   tl_pipeline_run            the command's engine (cli.h's tl_engine: tally-mpi's), else
 *   tl_pipeline_local:
 *     1. read       tl_pipeline_read: discover the inputs, read each into a profile on a
 *                   worker thread (ingest.h) and there analyze it into its session
 *                   (tl_pipeline_analyze_profile: analyze/session_analysis.c); settle ranks and
 *                   companions over the whole run (ingest/settle.c)
 *     2. warn       tl_pipeline_warnings: every input's problems, printed and counted
 *     3. gather     tl_pipeline_sessions: the sessions take their settled identity and
 *                   join the aggregate (an aggregate input's sessions too)
 *     4. finish     tl_pipeline_finish: something usable? then tl_aggregate_finish (runs,
 *                   across ranks, stragglers, waits, rules: analyze/aggregate.c)
 *     5. notes      tl_pipeline_notes: the run-identity notes, printed and counted
 *
 * A command parses its options (cli.c), calls tl_pipeline_run (or
 * tl_pipeline_run_arg for one of several runs), and renders (render.h).
 */
#ifndef TALLY_PIPELINE_H
#define TALLY_PIPELINE_H

#include "cli.h"

/* Read the inputs and analyze them into a finished aggregate (initialized
 * here; release it either way), through cli->engine when the caller gave one.
 * Prints warnings unless --quiet and counts them in *warnings. Returns
 * TL_EXIT_OK, TL_EXIT_NO_INPUT (nothing usable), TL_EXIT_NOMEM, or an
 * engine's TL_EXIT_WORKER. */
int tl_pipeline_run(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings);
/* The same in this process, the stages above in order (what tally does). */
int tl_pipeline_local(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings);

/* Argument k of the command (a path, or an input list's paths: compare's
 * side, one run of trend) read and analyzed into a finished aggregate
 * (initialized here; release it either way): a partial aggregate
 * (tally aggregate --partial) taken as it is, anything else through
 * tl_pipeline_run. TL_EXIT_OK, TL_EXIT_NO_INPUT or TL_EXIT_NOMEM. */
int tl_pipeline_run_arg(const tl_cli *cli, int k, tl_aggregate *agg, size_t *warnings);

/* ---- the stages, for commands that stop early (inspect, validate, merge) and
 * for engines that spread them over processes (tally-mpi) ------------------- */

/* The options of reading (jobs, progress, read bounds, kernel classes) from
 * the command line and the analysis options: every reader of inputs starts
 * from them (tl_pipeline_read, tally-mpi's share). */
void tl_pipeline_ingest_options(tl_ingest_options *io, const tl_cli *cli, const tl_analyze_options *opt);
/* 1. Read the inputs into run with the parsed options (on_profile and user as
 * in tl_ingest_options; may be NULL). Prints discovery problems unless --quiet.
 * Records the identity of every input file in cli for the output check. */
size_t tl_pipeline_read(const tl_cli *cli, tl_run *run, void (*on_profile)(tl_profile *, void *), void *user);
/* The analysis on the ingest worker threads (tl_ingest_options.on_profile with
 * user = the tl_analyze_options): the profile's session in p->result, or an
 * aggregate input's sessions (checked against the options). */
void tl_pipeline_analyze_profile(tl_profile *p, void *opt);

/* 2. Print every problem of the run's inputs (unless --quiet), one
 * "tally: NAME: TEXT" line each, ranks only guessed from the input order
 * included; returns how many there are (what --strict turns into an error).
 * The inputs that could not be read at all were printed by tl_pipeline_read
 * and are counted here. */
size_t tl_pipeline_warnings(const tl_cli *cli, const tl_run *run);
/* The same for one input's identity: its problems printed (unless --quiet)
 * and counted, those beyond TL_IDENTITY_MAX_PROBLEMS included. */
size_t tl_pipeline_problems(const tl_cli *cli, const tl_identity *id);
/* Whether an input's reading ran out of memory (a problem says so): exit 5. */
int tl_pipeline_lost_to_memory(const tl_identity *id);

/* 3. The run's results (ranks assigned) into agg's sessions, aggregate inputs'
 * sessions too, whose warnings are printed unless --quiet and counted. */
int tl_pipeline_sessions(const tl_cli *cli, tl_run *run, tl_aggregate *agg, size_t *warnings);
/* Read one partial aggregate (tally aggregate --partial) at path into agg
 * (initialized, not finished), recorded as an input so that no output
 * replaces it; made with other analysis options than opt (the command's;
 * NULL: merge, which takes the partials' own) or than the partials before it
 * in agg, it is refused (tl_partial_options_check). 0, or -1 after printing
 * "tally: PATH: what is wrong". */
int tl_pipeline_add_partial(const tl_cli *cli, tl_aggregate *agg, const char *path, const tl_analyze_options *opt);

/* 4. The check that something was usable, then tl_aggregate_finish. */
int tl_pipeline_finish(tl_aggregate *agg, size_t usable);
/* With --progress, how many sessions keep their details on disk (spill.h). */
void tl_pipeline_spill_note(const tl_cli *cli, const tl_analyze_options *opt);

/* 5. Print the finished aggregate's run-identity notes (inputs of another run
 * left out, missing ranks) as warnings unless --quiet; returns how many
 * (what --strict counts). */
size_t tl_pipeline_notes(const tl_cli *cli, const tl_aggregate *agg);

#endif
