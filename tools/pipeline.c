/*
 * pipeline.c - the spine of every command that analyzes (pipeline.h;
 * docs/architecture.md, "One run of tally report, stage by stage"): read each input into a
 * profile and analyze it into its session on the reading thread, settle ranks
 * and companions, gather the sessions into an aggregate, finish it across
 * ranks. Commands parse options (cli.c), call tl_pipeline_run, and render.
 */
#define _GNU_SOURCE
#include "pipeline.h"
#include "term.h"

#include "partial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- read ---------------------------------------------------------------- */
void tl_pipeline_ingest_options(tl_ingest_options *io, const tl_cli *cli, const tl_analyze_options *opt)
{
    tl_ingest_options_init(io);
    io->jobs = cli->jobs;
    io->progress = cli->progress;
    io->max_names = opt->max_names;
    io->max_events = opt->max_events;
    if (opt->max_input_bytes)
        io->limits.max_input_bytes = opt->max_input_bytes;
    io->kernel_classes = opt->kernel_classes;
}

size_t tl_pipeline_read(const tl_cli *cli, tl_run *run, void (*on_profile)(tl_profile *, void *), void *user)
{
    tl_ingest_options opt;
    tl_pipeline_ingest_options(&opt, cli, &cli->analyze);
    opt.on_profile = on_profile;
    opt.user = user;
    tl_run_init(run);
    if (cli->progress)
        fprintf(stderr, "tally: reading with %d job%s\n", cli->jobs, cli->jobs == 1 ? "" : "s");
    size_t usable = tl_run_ingest(run, cli->inputs, (size_t)cli->ninputs, &opt);
    static char what[TL_CLI_ESCAPED_MAX];
    for (size_t i = 0; i < run->nunreadable; i++)
        tl_pipeline_problems(cli, &run->unreadable[i]);
    /* Notes are not warnings: --strict does not count them. */
    for (size_t i = 0; i < run->nnotes && !cli->quiet; i++)
        fprintf(stderr, "tally: note: %s\n", tl_term_escape(what, sizeof what, run->notes[i]));
    /* The inputs' identities outlive the run: outputs are checked against
     * them after the analysis. Standard input counts when it is a file. */
    for (size_t i = 0; i < run->nids; i++)
        tl_cli_seen_file(cli, run->ids[i].dev, run->ids[i].ino);
    for (int i = 0; i < cli->ninputs; i++)
        if (strcmp(cli->inputs[i], "-") == 0)
            tl_cli_seen_path(cli, "-");
    return usable;
}

size_t tl_pipeline_problems(const tl_cli *cli, const tl_identity *id)
{
    /* A newline inside a file name or a warning (which may quote a name)
     * could forge a line of its own: escaped (the stream escapes the rest). */
    static char path[TL_CLI_ESCAPED_MAX], what[TL_CLI_ESCAPED_MAX];
    if (!cli->quiet && id->problems.n > 0) {
        tl_term_escape(path, sizeof path, id->path);
        for (size_t w = 0; w < id->problems.n; w++) {
            tl_term_mark(stderr, TL_TERM_WARNING); /* an input's problem is a warning (--strict: an error) */
            fprintf(stderr, "tally: %s: %s\n", path, tl_term_escape(what, sizeof what, id->problems.v[w].text));
        }
    }
    return id->problems.n + (size_t)id->problems.dropped;
}

size_t tl_pipeline_warnings(const tl_cli *cli, const tl_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->nunreadable; i++)
        n += run->unreadable[i].problems.n;
    for (size_t i = 0; i < run->n; i++)
        n += tl_pipeline_problems(cli, &run->profiles[i]->id);
    return n;
}

/* On the worker thread: an aggregate input's sessions read by ingest into a
 * tl_partial (p->result), the document let go. A document that is not what it
 * claims, or was analyzed with other options than this command's, makes the
 * input skipped with the reason, like any other bad input. */
static void take_aggregate(tl_profile *p, const tl_analyze_options *opt)
{
    char err[512] = "";
    tl_partial *part = malloc(sizeof *part);
    if (part == NULL) {
        tl_profile_skip(p, "out of memory");
        goto bad;
    }
    tl_partial_init(part);
    if (tl_partial_read_json(part, p->aggregate_doc, err, sizeof err) != 0) {
        tl_profile_skip(p, "%s", err);
        goto bad;
    }
    char why[700];
    if (tl_partial_options_check(part, opt, "this command", why, sizeof why) != 0) {
        tl_profile_skip(p, "%s; not read", why);
        goto bad;
    }
    tl_profile_drop_aggregate_doc(p);
    for (size_t i = 0; i < part->nsessions; i++)
        tl_spill_session(&part->sessions[i], opt->spill_after, opt->spill_after_bytes);
    p->result = part;
    return;
bad:
    if (part != NULL) {
        tl_partial_release(part);
        free(part);
    }
    tl_profile_drop_aggregate_doc(p);
    p->error = 1;
}

/* On the worker thread: analyze the profile into a session and let go of its data. */
void tl_pipeline_analyze_profile(tl_profile *p, void *user)
{
    const tl_analyze_options *opt = user;
    if (tl_profile_is_aggregate(p) && !p->skipped) {
        take_aggregate(p, opt);
        if (!p->skipped)
            return;
    }
    tl_session *s = calloc(1, sizeof *s);
    if (s == NULL)
        return;
    int rc = !p->skipped ? tl_session_analyze(s, p, opt) : tl_session_from_identity(s, &p->id);
    if (rc != 0) {
        tl_session_release(s);
        free(s);
        return;
    }
    if (opt->drop_samples)
        tl_session_drop_samples(s);
    if (opt->drop_bins)
        tl_session_drop_bins(s);
    tl_spill_session(s, opt->spill_after,
                     opt->spill_after_bytes); /* past the limit, its bulk waits on disk (spill.h) */
    p->result = s;
    tl_profile_shrink(p);
}

/* Move the sessions of an aggregate input into agg (part is freed; its
 * options were checked on the worker thread). Their warnings were the
 * warnings of the inputs they came from: they are printed and counted again,
 * so --strict and the summary's count are those of a run over the raw
 * inputs. */
static int add_aggregate(const tl_cli *cli, tl_aggregate *agg, tl_partial *part, size_t *warnings)
{
    int rc = 0;
    for (size_t k = 0; k < part->nsessions; k++) {
        tl_session *s = &part->sessions[k];
        *warnings += tl_pipeline_problems(cli, &s->id);
        if (tl_aggregate_add_session(agg, s) != 0)
            rc = -1;
    }
    tl_partial_release(part);
    free(part);
    return rc;
}

int tl_pipeline_lost_to_memory(const tl_identity *id)
{
    for (size_t k = 0; k < id->problems.n; k++)
        if (strstr(id->problems.v[k].text, "out of memory") != NULL)
            return 1;
    return 0;
}

int tl_pipeline_sessions(const tl_cli *cli, tl_run *run, tl_aggregate *agg, size_t *warnings)
{
    int rc = TL_EXIT_OK;
    for (size_t i = 0; i < run->n; i++) {
        tl_profile *p = run->profiles[i];
        /* an input read short of memory (its reader said so): the numbers
         * would be incomplete, and it is not the input's fault */
        if (tl_pipeline_lost_to_memory(&p->id))
            rc = TL_EXIT_NOMEM;
        if (tl_profile_is_aggregate(p) && !p->skipped && p->result != NULL) {
            if (add_aggregate(cli, agg, p->result, warnings) != 0)
                rc = TL_EXIT_NOMEM;
            p->result = NULL;
            continue;
        }
        tl_session *s = p->result;
        if (s == NULL) {
            fprintf(stderr, "tally: %s: out of memory while analyzing\n", p->id.path);
            rc = TL_EXIT_NOMEM;
            continue;
        }
        /* Ranks and companions were settled after the analysis: take them now. */
        if (!p->skipped && tl_identity_take_settled(&s->id, &p->id) != 0)
            rc = TL_EXIT_NOMEM;
        if (tl_aggregate_add_session(agg, s) != 0) {
            tl_session_release(s);
            rc = TL_EXIT_NOMEM;
        }
        free(s);
        p->result = NULL;
    }
    /* Inputs that could not be read at all are listed too. */
    for (size_t i = 0; i < run->nunreadable; i++) {
        tl_session s;
        if (tl_session_from_identity(&s, &run->unreadable[i]) != 0 || tl_aggregate_add_session(agg, &s) != 0) {
            tl_session_release(&s);
            rc = TL_EXIT_NOMEM;
        }
    }
    return rc;
}

size_t tl_pipeline_notes(const tl_cli *cli, const tl_aggregate *agg)
{
    static char what[TL_CLI_ESCAPED_MAX];
    for (size_t i = 0; i < agg->nnotes && !cli->quiet; i++)
        fprintf(stderr, "tally: warning: %s\n", tl_term_escape(what, sizeof what, agg->notes[i]));
    return agg->nnotes;
}

int tl_pipeline_finish(tl_aggregate *agg, size_t usable)
{
    /* Aggregates are usable inputs that may hold no usable session. */
    size_t ranked = 0;
    for (size_t i = 0; i < agg->nsessions; i++)
        ranked += agg->sessions[i].id.rank >= 0;
    if (usable == 0 || ranked == 0) {
        fprintf(stderr, "tally: no usable input\n");
        return TL_EXIT_NO_INPUT;
    }
    if (tl_aggregate_finish(agg) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        return TL_EXIT_NOMEM;
    }
    return TL_EXIT_OK;
}

int tl_pipeline_run(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings)
{
    if (cli->engine != NULL && cli->engine->analyze != NULL)
        return cli->engine->analyze(cli, opt, agg, warnings);
    return tl_pipeline_local(cli, opt, agg, warnings);
}

void tl_pipeline_spill_note(const tl_cli *cli, const tl_analyze_options *opt)
{
    size_t n;
    uint64_t bytes;
    tl_spill_stats(&n, &bytes);
    if (!cli->progress || n == 0)
        return;
    char kept[96] = "none stays whole in memory";
    if (opt->spill_after > 0 && opt->spill_after != SIZE_MAX)
        snprintf(kept, sizeof kept, "the first %zu sessions stay whole in memory", opt->spill_after);
    else if (opt->spill_after_bytes > 0 && opt->spill_after_bytes != UINT64_MAX)
        snprintf(kept, sizeof kept, "the first %.0f %s of details stay in memory",
                 (double)opt->spill_after_bytes / (opt->spill_after_bytes < (1u << 20) ? 1024.0 : 1048576.0),
                 opt->spill_after_bytes < (1u << 20) ? "KiB" : "MiB");
    fprintf(stderr,
            "tally: %zu session%s %s their details in a temporary file until read (%.1f MB; %s: TALLY_SPILL_AFTER)\n",
            n, n == 1 ? "" : "s", n == 1 ? "keeps" : "keep", (double)bytes / 1e6, kept);
}

int tl_pipeline_local(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings)
{
    tl_run run;
    tl_aggregate_init(agg, opt);
    /* read every input, each analyzed into its session on the reading thread; ranks settled */
    size_t usable = tl_pipeline_read(cli, &run, tl_pipeline_analyze_profile, (void *)opt);
    *warnings = tl_pipeline_warnings(cli, &run);
    int rc = tl_pipeline_sessions(cli, &run, agg, warnings);
    tl_run_release(&run);
    tl_pipeline_spill_note(cli, opt);
    /* An input lost to memory is not "no usable input": say what happened. */
    size_t ranked = 0;
    for (size_t i = 0; i < agg->nsessions; i++)
        ranked += agg->sessions[i].id.rank >= 0;
    if (rc == TL_EXIT_NOMEM && ranked == 0) {
        fprintf(stderr, "tally: out of memory: nothing could be analyzed (--max-names, --max-events and "
                        "--max-input-size bound what one input takes)\n");
        return TL_EXIT_NOMEM;
    }
    int frc = tl_pipeline_finish(agg, usable);
    if (frc != TL_EXIT_OK)
        return frc;
    *warnings += tl_pipeline_notes(cli, agg);
    if (rc == TL_EXIT_NOMEM)
        fprintf(stderr, "tally: out of memory; the results would be incomplete\n");
    return rc;
}

int tl_pipeline_add_partial(const tl_cli *cli, tl_aggregate *agg, const char *path, const tl_analyze_options *opt)
{
    char err[800] = "", why[700];
    tl_cli_seen_path(cli, path); /* the output may not replace it */
    tl_partial part;
    tl_partial_init(&part);
    int bad = tl_partial_read(&part, path, err, sizeof err) != 0;
    if (!bad && opt != NULL && tl_partial_options_check(&part, opt, "this command", why, sizeof why) != 0) {
        snprintf(err, sizeof err, "%s; not read", why);
        bad = 1;
    }
    bad = bad || tl_aggregate_add_partial(agg, &part, err, sizeof err) != 0;
    tl_partial_release(&part);
    if (bad)
        fprintf(stderr, "tally: %s: %s\n", path, err);
    return bad ? -1 : 0;
}

/* A partial aggregate as one argument's finished aggregate: made with the
 * command's analysis options, as any input of the command (the other side
 * of a comparison is analyzed with them). */
static int analyze_partial(const tl_cli *cli, const char *path, tl_aggregate *agg)
{
    tl_aggregate_init(agg, &cli->analyze); /* compare --sessions applies to it too */
    if (tl_pipeline_add_partial(cli, agg, path, &cli->analyze) != 0)
        return TL_EXIT_NO_INPUT;
    if (tl_aggregate_finish(agg) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        return TL_EXIT_NOMEM;
    }
    if (agg->nranks == 0) {
        fprintf(stderr, "tally: %s: no usable session in the partial aggregate\n", path);
        return TL_EXIT_NO_INPUT;
    }
    return TL_EXIT_OK;
}

int tl_pipeline_run_arg(const tl_cli *cli, int k, tl_aggregate *agg, size_t *warnings)
{
    const char **inputs = cli->inputs + cli->arg_start[k];
    int n = cli->arg_start[k + 1] - cli->arg_start[k];
    if (n == 1 && tl_file_is_partial(inputs[0]))
        return analyze_partial(cli, inputs[0], agg);
    tl_cli one = *cli; /* shares cli->seen: the inputs of every argument are recorded */
    one.inputs = inputs;
    one.ninputs = n;
    return tl_pipeline_run(&one, &cli->analyze, agg, warnings);
}
