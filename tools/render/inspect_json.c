/*
 * inspect_json.c - `tally inspect --json`: one JSON array with an object per
 * input read (its format, rank and how it was found, session, events by
 * phase and category, time span, truncation, warnings) and one per input
 * that could not be read at all (render.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "report_text.h" /* tl_text_rank_source: the report's words for a rank source */

static const char *phase_name(int ph)
{
    static char one[2];
    one[0] = (char)ph;
    one[1] = '\0';
    return one;
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
        if (tl_problem_of_input(&p->id.problems.v[i])) /* a rank by order is the rank's to say */
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

void tl_inspect_write_json(tl_json *j, const tl_run *run)
{
    tl_json_array_begin(j);
    for (size_t i = 0; i < run->n; i++)
        json_profile(j, run->profiles[i]);
    for (size_t i = 0; i < run->nunreadable; i++)
        json_unreadable(j, &run->unreadable[i]);
    tl_json_array_end(j);
    tl_json_write(j, "\n", 1);
}
