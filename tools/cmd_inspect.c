/*
 * cmd_inspect.c - `tally inspect FILE...`: what each input is: format, rank
 * and how it was found, session, world size, events by phase and category,
 * time span, truncation, warnings. --json prints one array with an object
 * per input (and one per input that could not be read at all).
 */
#include <stdio.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "render.h"

static int write_json(tl_output *o, size_t i, void *run)
{
    tl_json j;
    (void)i;
    tl_json_init(&j, tl_output_write, o);
    tl_inspect_write_json(&j, run);
    tl_json_finish(&j);
    return 0;
}

int tl_cmd_inspect(int argc, char **argv, const tl_engine *engine)
{
    int json = 0;
    const tl_cli_opt opts[] = {
        { "--json", NULL, 0, &json, NULL, "one JSON array with an object per input", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "inspect", "FILE...", "What each input is: format, rank and how it was found, session, events, time span.",
        NULL,      opts,      1,
        -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    tl_run run;
    cli.quiet = cli.quiet || json; /* problems are in the JSON */
    size_t usable = tl_pipeline_read(&cli, &run, NULL, NULL);
    size_t warnings = run.nunreadable;
    /* The JSON is a document: written as it is (not through the console's
     * escaping stream), with every write checked. */
    const char *doc = "-";
    int out_rc = TL_EXIT_OK;
    if (json)
        out_rc = tl_cli_write_outputs(&cli, &doc, 1, 1, write_json, &run);
    else
        tl_render_inspect(stdout, &run);
    /* Inputs lost to memory: the listing is not the inputs' (it exited 0 on
     * 120,000 small members under a memory limit, the last ones "skipped out
     * of memory" on stdout only). */
    size_t oom = 0;
    for (size_t i = 0; i < run.n; i++) {
        warnings += tl_identity_input_problems(&run.profiles[i]->id);
        oom += (size_t)tl_pipeline_lost_to_memory(&run.profiles[i]->id);
    }
    for (size_t i = 0; i < run.nunreadable; i++)
        oom += (size_t)tl_pipeline_lost_to_memory(&run.unreadable[i]);
    if (oom)
        fprintf(stderr,
                "tally: out of memory: the listing is incomplete, %zu input%s not read whole (--max-names, "
                "--max-events and --max-input-size bound what one input takes)\n",
                oom, oom == 1 ? "" : "s");
    rc = out_rc != TL_EXIT_OK || tl_cli_close_output(stdout, "standard output") != 0 ? TL_EXIT_OUTPUT
         : oom                                                                       ? TL_EXIT_NOMEM
         : usable == 0                                                               ? TL_EXIT_NO_INPUT
                                                                                     : TL_EXIT_OK;
    rc = tl_cli_strict(&cli, rc, warnings);
    tl_run_release(&run);
    tl_cli_release(&cli);
    return rc;
}
