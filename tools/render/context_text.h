/*
 * context_text.h - what every output shows of a session besides its timings
 * (aggregate.h): the video diffusion metrics per rank, the program's
 * counters, its events and the hosts, formatted once for `tally summary`,
 * the Markdown report and the HTML report.
 */
#ifndef TALLY_RENDER_CONTEXT_TEXT_H
#define TALLY_RENDER_CONTEXT_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "aggregate.h"

/* ---- video diffusion ------------------------------------------------------ */

/* Whether some rank has block or denoising-step records. */
int tl_diffusion_any(const tl_aggregate *a);
/* One rank's row, formatted ("–" unknown). */
typedef struct tl_diffusion_row {
    char rank[16], blocks[24], frames[24], size[32], fps[24], bps[24], first[32], later[32], steps[24];
    char mem[24], rss[24];
} tl_diffusion_row;
#define TL_DIFFUSION_COLS 11
extern const char *const tl_diffusion_heads[TL_DIFFUSION_COLS];
/* Fill r for rank r; 0 when the rank has no diffusion records. */
int tl_diffusion_row_of(const tl_rank_result *rank, tl_diffusion_row *r);
/* The cells of a row in the order of tl_diffusion_heads. */
void tl_diffusion_cells(const tl_diffusion_row *r, const char *cells[TL_DIFFUSION_COLS]);
/* The console table (DIFFUSION) and the Markdown section; nothing without records. */
void tl_diffusion_summary(FILE *out, const tl_aggregate *a, size_t width);
void tl_diffusion_markdown(FILE *out, const tl_aggregate *a);

/* ---- counters, events, hosts ----------------------------------------------- */

/* Counters of the analyzed sessions (the program's; docs/analysis.md). */
size_t tl_counters_count(const tl_aggregate *a);
/* Whether a counter of the sessions is a rate (tally_counter_rate), and a
 * rate counter's rate as "75.0 %" ("" for any other counter). */
int tl_counters_any_rate(const tl_aggregate *a);
const char *tl_counter_rate_text(const tl_scounter *c, char *buf, size_t len);
/* The console table (COUNTERS: rank, name, count, min, mean, max, and the
 * rate where a counter is one), at most
 * max rows, and the Markdown one; nothing without counters. */
void tl_counters_summary(FILE *out, const tl_aggregate *a, size_t width, size_t max);
void tl_counters_markdown(FILE *out, const tl_aggregate *a, size_t max);
/* Events recorded by the analyzed sessions: the total, and how many of each
 * name the sessions kept (the commonest first, at most 8 names). Empty when
 * there are none. The caller frees the text. */
char *tl_events_sentence(const tl_aggregate *a);
/* Each host the collector recorded with its ranks, OS, CPUs and memory, one
 * per "; ". Empty when no input recorded its host. The caller frees it. */
char *tl_hosts_sentence(const tl_aggregate *a);
/* The models and their parameter counts the inputs carry (the tags
 * "model_parameters.NAME" and "model_type.NAME": Inferix's model_analysis,
 * or a libtally program's tally_tag), each model once: "dit 1.3 B
 * parameters (diffusion); t5 4.76 B parameters (text_encoder); 6.06 B in
 * all"; "" when none (malloc'd; NULL when out of memory). */
char *tl_models_sentence(const tl_aggregate *a);

#endif
