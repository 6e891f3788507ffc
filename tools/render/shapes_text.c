/*
 * shapes_text.c - the operators-by-input-shape table as text (shapes_text.h).
 */
#include "shapes_text.h"

#include <math.h>
#include <stdio.h>

#include "escape.h"
#include "units.h"

#define DASH "\xe2\x80\x93"

void tl_shapes_row_text(const tl_shape_row *r, tl_shapes_text *t)
{
    char a[32], b[32];
    snprintf(t->calls, sizeof t->calls, "%llu", (unsigned long long)r->count);
    tl_units_dur(t->total, sizeof t->total, (double)r->total_ns);
    tl_units_dur(t->mean, sizeof t->mean, r->count ? (double)r->total_ns / (double)r->count : NAN);
    if (r->nranks > 1)
        snprintf(t->ranks, sizeof t->ranks, "%s (rank %d) \xe2\x80\x93 %s (rank %d)",
                 tl_units_dur(a, sizeof a, (double)r->rank_min_ns), r->min_rank,
                 tl_units_dur(b, sizeof b, (double)r->rank_max_ns), r->max_rank);
    else
        snprintf(t->ranks, sizeof t->ranks, "rank %d", r->min_rank);
    if (r->kernels > 0)
        tl_units_dur(t->gpu, sizeof t->gpu, (double)r->gpu_ns);
    else
        snprintf(t->gpu, sizeof t->gpu, DASH);
    if (isfinite(r->flops))
        snprintf(t->flops, sizeof t->flops, "%.3g%s", r->flops / (double)r->count,
                 r->flops_source == TL_FLOPS_TRACE ? " (trace)" : "");
    else
        snprintf(t->flops, sizeof t->flops, DASH);
    if (isfinite(r->tflops))
        snprintf(t->tflops, sizeof t->tflops, "%.2f%s", r->tflops, r->time_source == TL_TFLOPS_CPU ? " (CPU)" : "");
    else
        snprintf(t->tflops, sizeof t->tflops, DASH);
    if (isfinite(r->tflops) && isfinite(r->peak_tflops) && r->peak_tflops > 0)
        snprintf(t->peak, sizeof t->peak, "%.1f%% of %.4g", 100.0 * r->tflops / r->peak_tflops, r->peak_tflops);
    else
        snprintf(t->peak, sizeof t->peak, DASH);
}

void tl_shapes_sentence(FILE *out, const tl_aggregate *a, void (*esc)(FILE *, const char *))
{
    const tl_shapes *sh = &a->shapes;
    fprintf(out,
            "Operators by the input shapes and dtypes they were called with (record_shapes), every rank "
            "added up: the %zu of %zu operators with the most time, the %d shapes of each with the most time",
            sh->nops, sh->ops_total, TL_SHAPES_PER_OP);
    if (sh->dropped_keys > 0)
        fprintf(out, "; %llu rarer shape keys (%llu calls) were not kept per input",
                (unsigned long long)sh->dropped_keys, (unsigned long long)sh->dropped_calls);
    fputs(". Time is the operator's own (CPU) range; GPU is the kernels it launched itself. FLOPs per call from the "
          "trace's flops when every call has one, else from the shapes for mm, addmm, bmm, baddbmm, linear and "
          "scaled dot-product attention; TFLOP/s over the GPU time. ",
          out);
    if (sh->device != NULL && sh->peak_known) {
        fputs("Peak: ", out);
        esc(out, sh->device);
        fputs("'s dense peak for the first input's dtype (float: without TF32).", out);
    } else if (sh->device != NULL) {
        fputs("Peak: unknown for ", out);
        esc(out, sh->device);
        fputs(" (not in the table).", out);
    } else {
        fputs("Peak: unknown (the inputs do not name their device).", out);
    }
}

static void md_escape(FILE *out, const char *s)
{
    tl_escape_md_n(out, s, 200);
}

static void md_code(FILE *out, const char *s)
{
    fputs("`", out);
    for (const char *p = s; *p; p++)
        fputc(*p == '`' ? '\'' : *p == '|' ? '/' : *p, out);
    fputs("`", out);
}

void tl_shapes_markdown(FILE *out, const tl_aggregate *a)
{
    const tl_shapes *sh = &a->shapes;
    if (sh->nrows == 0)
        return;
    fputs("\n## Operators by input shape\n\n", out);
    tl_shapes_sentence(out, a, md_escape);
    fputs("\n\n| Operator | Input dims | Types | Calls | Total | Mean | GPU | FLOPs/call | TFLOP/s | of peak |\n"
          "|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n",
          out);
    for (size_t i = 0; i < sh->nrows; i++) {
        const tl_shape_row *r = &sh->rows[i];
        tl_shapes_text t;
        tl_shapes_row_text(r, &t);
        fputs("| ", out);
        md_code(out, r->name);
        fputs(" | ", out);
        md_code(out, r->dims);
        fputs(" | ", out);
        md_code(out, r->types);
        fprintf(out, " | %s | %s | %s | %s | %s | %s | %s |\n", t.calls, t.total, t.mean, t.gpu, t.flops, t.tflops,
                t.peak);
    }
}
