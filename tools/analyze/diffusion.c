/*
 * diffusion.c - block-wise video diffusion metrics (Inferix's block_analysis,
 * diffusion_analysis and computation_analysis): per session, per rank and
 * across ranks (aggregate.h; docs/analysis.md, "Video diffusion").
 *
 * The one idea: every figure is computed from the block records themselves,
 * with Inferix's own definitions where they are sound. FPS is the frames the
 * blocks generated over the time the blocks took (block_analysis.fps);
 * Inferix's diffusion_analysis.fps adds each block's frames once per denoising
 * step and so reads several times higher, which is why its "FPS < 10" advice
 * is not carried over as is (docs/analysis.md says how they differ).
 */
#define _GNU_SOURCE
#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int blocks(tl_sdiffusion *d, const tl_profile *p)
{
    for (size_t i = 0; i < p->nblocks; i++) {
        const tl_diff_block *b = &p->blocks[i];
        d->blocks++;
        d->block_ns = tl_ns_add(d->block_ns, b->dur_ns);
        /* the peaks of the blocks that say their memory (fmax: NaN is none) */
        d->mem_peak = fmax(d->mem_peak, b->memory);
        d->rss_peak = fmax(d->rss_peak, b->rss);
        if (isfinite(b->frames) && b->frames >= 0) {
            d->sized++;
            d->frames += b->frames;
            d->sized_ns = tl_ns_add(d->sized_ns, b->dur_ns);
            if (!(b->frames >= d->size_min))
                d->size_min = b->frames;
            if (!(b->frames <= d->size_max))
                d->size_max = b->frames;
        }
    }
    if (p->nblocks == 0)
        return 0;
    d->first_block_ns = p->blocks[0].dur_ns;
    if (p->nblocks < 3)
        return 0;
    size_t n = p->nblocks - 1;
    int64_t *v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = p->blocks[i + 1].dur_ns;
    qsort(v, n, sizeof *v, cmp_i64);
    d->later_median_ns = n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
    free(v);
    return 0;
}

/* The denoising steps and the layers: statistics the readers made
 * (categories "diffusion" and "layer"). */
static int steps_and_layers(tl_sdiffusion *d, const tl_profile *p)
{
    const tl_name_stat *top = NULL;
    for (uint32_t i = 0; i < p->nstats; i++) {
        const tl_name_stat *st = &p->stats[i];
        const char *cat = tl_strtab_get(&p->strs, st->cat);
        if (strcmp(cat, "diffusion") == 0) {
            d->steps += st->d.count;
            d->step_ns = tl_ns_add(d->step_ns, (int64_t)st->d.total);
        } else if (strcmp(cat, "layer") == 0) {
            d->layers++;
            d->layers_ns = tl_ns_add(d->layers_ns, (int64_t)st->d.total);
            if (top == NULL || st->d.total > top->d.total)
                top = st;
        }
    }
    if (top != NULL) {
        d->top_layer = strdup(tl_strtab_get(&p->strs, top->name));
        d->top_layer_ns = (int64_t)top->d.total;
        if (d->top_layer == NULL)
            return -1;
    }
    return 0;
}

/* Blocks come from Inferix's block_analysis and from libtally's
 * tally_block_begin/end; the denoising steps and layers are Inferix's. */
int tl_session_diffusion(tl_session *s, const tl_profile *p)
{
    if (blocks(&s->diff, p) != 0)
        return -1;
    return p->id.format == TL_FMT_INFERIX && steps_and_layers(&s->diff, p) != 0 ? -1 : 0;
}

/* ---- per rank and across ranks ----------------------------------------------- */

void tl_rank_diffusion_init(tl_rank_diffusion *d)
{
    memset(d, 0, sizeof *d);
    d->size_min = d->size_max = NAN;
    d->mem_peak = d->rss_peak = NAN;
    d->first_block_ns = d->later_median_ns = -1;
    d->fps = d->bps = d->block_size = NAN;
}

void tl_rank_diffusion_add(tl_rank_diffusion *d, const tl_sdiffusion *s)
{
    if (s->blocks == 0 && s->steps == 0)
        return;
    d->blocks += s->blocks;
    d->sized += s->sized;
    d->steps += s->steps;
    d->frames += s->frames;
    d->block_ns = tl_ns_add(d->block_ns, s->block_ns);
    d->sized_ns = tl_ns_add(d->sized_ns, s->sized_ns);
    d->step_ns = tl_ns_add(d->step_ns, s->step_ns);
    if (!(s->size_min >= d->size_min))
        d->size_min = s->size_min;
    if (!(s->size_max <= d->size_max))
        d->size_max = s->size_max;
    d->mem_peak = fmax(d->mem_peak, s->mem_peak);
    d->rss_peak = fmax(d->rss_peak, s->rss_peak);
    /* the first block of the rank's first session with blocks */
    if (d->first_block_ns < 0 && s->first_block_ns >= 0) {
        d->first_block_ns = s->first_block_ns;
        d->later_median_ns = s->later_median_ns;
    }
}

void tl_rank_diffusion_finish(tl_rank_diffusion *d)
{
    if (d->sized > 0 && d->sized_ns > 0)
        d->fps = d->frames / ((double)d->sized_ns / 1e9);
    if (d->blocks > 0 && d->block_ns > 0)
        d->bps = (double)d->blocks / ((double)d->block_ns / 1e9);
    if (d->sized > 0)
        d->block_size = d->frames / (double)d->sized;
}
