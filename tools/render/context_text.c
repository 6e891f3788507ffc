/*
 * context_text.c - the diffusion, counter, event and host texts shared by
 * `tally summary`, the Markdown report and the HTML report (context_text.h).
 */
#define _GNU_SOURCE
#include "context_text.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "text_table.h"
#include "units.h"

/* ---- video diffusion ------------------------------------------------------ */

const char *const tl_diffusion_heads[TL_DIFFUSION_COLS] = { "Rank",  "Blocks",       "Frames",      "Block size",
                                                            "FPS",   "Blocks/s",     "First block", "Later blocks",
                                                            "Steps", "Block memory", "Block RSS" };

int tl_diffusion_any(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].diff.blocks > 0 || a->ranks[i].diff.steps > 0)
            return 1;
    return 0;
}

int tl_diffusion_row_of(const tl_rank_result *rank, tl_diffusion_row *r)
{
    const tl_rank_diffusion *d = &rank->diff;
    if (d->blocks == 0 && d->steps == 0)
        return 0;
    snprintf(r->rank, sizeof r->rank, "%d", rank->rank);
    snprintf(r->blocks, sizeof r->blocks, "%llu", (unsigned long long)d->blocks);
    tl_units_count(r->frames, sizeof r->frames, d->sized ? d->frames : NAN);
    if (isfinite(d->size_min) && d->size_min != d->size_max)
        snprintf(r->size, sizeof r->size, "%.1f (%g-%g)", d->block_size, d->size_min, d->size_max);
    else
        tl_units_count(r->size, sizeof r->size, d->block_size);
    tl_units_count(r->fps, sizeof r->fps, d->fps);
    tl_units_count(r->bps, sizeof r->bps, d->bps);
    tl_units_dur(r->first, sizeof r->first, d->first_block_ns >= 0 ? (double)d->first_block_ns : NAN);
    tl_units_dur(r->later, sizeof r->later, d->later_median_ns >= 0 ? (double)d->later_median_ns : NAN);
    snprintf(r->steps, sizeof r->steps, "%llu", (unsigned long long)d->steps);
    tl_units_bytes(r->mem, sizeof r->mem, d->mem_peak);
    tl_units_bytes(r->rss, sizeof r->rss, d->rss_peak);
    return 1;
}

void tl_diffusion_cells(const tl_diffusion_row *r, const char *cells[TL_DIFFUSION_COLS])
{
    const char *c[TL_DIFFUSION_COLS] = { r->rank,  r->blocks, r->frames, r->size, r->fps, r->bps,
                                         r->first, r->later,  r->steps,  r->mem,  r->rss };
    memcpy(cells, c, sizeof c);
}

void tl_diffusion_summary(FILE *out, const tl_aggregate *a, size_t width)
{
    static const tl_text_col
        cols
            [TL_DIFFUSION_COLS] = {
                { "Rank", 1, 0, 0 },         { "Blocks", 1, 2, 0 },       { "Frames", 1, 3, 0 },
                { "Block size", 1, 4, 0 },   { "FPS", 1, 0, 0 },          { "Blocks/s", 1, 1, 0 },
                { "First block", 1, 0, 0 },  { "Later blocks", 1, 1, 0 }, { "Steps", 1, 5, 0 },
                { "Block memory", 1, 6, 0 }, { "Block RSS", 1, 7, 0 }, /* left out first: the timings come first */
            };
    if (!tl_diffusion_any(a))
        return;
    fputs("\nVIDEO DIFFUSION\n", out);
    tl_text_wrap(
        out, "",
        "Frames and blocks per second of block computation; first block: its time (the "
        "first-block delay); later blocks: their median; block memory and RSS: the most GPU memory and process RSS "
        "of a block.",
        width);
    tl_text_table tt;
    tl_text_table_init(&tt, cols, TL_DIFFUSION_COLS);
    for (size_t i = 0; i < a->nranks; i++) {
        tl_diffusion_row r;
        const char *cells[TL_DIFFUSION_COLS];
        if (!tl_diffusion_row_of(&a->ranks[i], &r))
            continue;
        tl_diffusion_cells(&r, cells);
        tl_text_table_row(&tt, cells);
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
}

void tl_diffusion_markdown(FILE *out, const tl_aggregate *a)
{
    if (!tl_diffusion_any(a))
        return;
    fputs("\n## Video diffusion\n\nFrames and blocks per second of block computation; first block: its "
          "computation time (Inferix's first-block delay); later blocks: their median; block memory and RSS: the most "
          "GPU memory and process RSS of a block.\n\n|",
          out);
    for (int c = 0; c < TL_DIFFUSION_COLS; c++)
        fprintf(out, " %s |", tl_diffusion_heads[c]);
    fputs("\n|", out);
    for (int c = 0; c < TL_DIFFUSION_COLS; c++)
        fputs("---:|", out);
    fputc('\n', out);
    for (size_t i = 0; i < a->nranks; i++) {
        tl_diffusion_row r;
        const char *cells[TL_DIFFUSION_COLS];
        if (!tl_diffusion_row_of(&a->ranks[i], &r))
            continue;
        tl_diffusion_cells(&r, cells);
        fputc('|', out);
        for (int c = 0; c < TL_DIFFUSION_COLS; c++)
            fprintf(out, " %s |", cells[c]);
        fputc('\n', out);
    }
}

/* ---- counters ------------------------------------------------------------- */

size_t tl_counters_count(const tl_aggregate *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        if (tl_session_counts(&a->sessions[i]))
            n += a->sessions[i].ncounters;
    return n;
}

int tl_counters_any_rate(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nsessions; i++)
        for (size_t k = 0; tl_session_counts(&a->sessions[i]) && k < a->sessions[i].ncounters; k++)
            if (a->sessions[i].counters[k].source == TL_COUNTER_RATE)
                return 1;
    return 0;
}

const char *tl_counter_rate_text(const tl_scounter *c, char *buf, size_t len)
{
    if (c->source == TL_COUNTER_RATE && isfinite(c->mean))
        snprintf(buf, len, "%.1f%%", c->mean * 100.0);
    else
        snprintf(buf, len, "%s", "");
    return buf;
}

/* The row cells of one counter: rank, count, min, mean, max, rate. */
static void counter_cells(const tl_session *s, const tl_scounter *c, char (*buf)[48])
{
    snprintf(buf[0], 48, "%d", s->id.rank);
    snprintf(buf[1], 48, "%llu", (unsigned long long)c->count);
    tl_units_count(buf[2], 48, c->min);
    tl_units_count(buf[3], 48, c->mean);
    tl_units_count(buf[4], 48, c->max);
    tl_counter_rate_text(c, buf[5], 48);
}

void tl_counters_summary(FILE *out, const tl_aggregate *a, size_t width, size_t max)
{
    static const tl_text_col cols[] = {
        { "Rank", 1, 0, 0 }, { "Counter", 0, 0, 1 }, { "Count", 1, 1, 0 }, { "Min", 1, 2, 0 },
        { "Mean", 1, 0, 0 }, { "Max", 1, 0, 0 },     { "Rate", 1, 0, 0 },
    };
    size_t total = tl_counters_count(a), shown = 0;
    if (total == 0)
        return;
    fputs("\nCOUNTERS (the program's: tally_counter, trace counter events)\n", out);
    /* the Rate column only where a counter is a rate (tally_counter_rate) */
    int rates = tl_counters_any_rate(a);
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0] - !rates);
    for (size_t i = 0; i < a->nsessions && shown < max; i++) {
        const tl_session *s = &a->sessions[i];
        for (size_t k = 0; tl_session_counts(s) && k < s->ncounters && shown < max; k++, shown++) {
            char b[6][48];
            counter_cells(s, &s->counters[k], b);
            const char *cells[] = { b[0], s->counters[k].name, b[1], b[2], b[3], b[4], b[5] };
            tl_text_table_row(&tt, cells);
        }
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
    if (total > shown)
        fprintf(out, "... and %zu more counters\n", total - shown);
}

void tl_counters_markdown(FILE *out, const tl_aggregate *a, size_t max)
{
    size_t total = tl_counters_count(a), shown = 0;
    if (total == 0)
        return;
    int rates = tl_counters_any_rate(a);
    fprintf(out, "\n## Counters\n\n| Rank | Counter | Count | Min | Mean | Max |%s\n|---:|---|---:|---:|---:|---:|%s\n",
            rates ? " Rate |" : "", rates ? "---:|" : "");
    for (size_t i = 0; i < a->nsessions && shown < max; i++) {
        const tl_session *s = &a->sessions[i];
        for (size_t k = 0; tl_session_counts(s) && k < s->ncounters && shown < max; k++, shown++) {
            char b[6][48];
            counter_cells(s, &s->counters[k], b);
            fprintf(out, "| %s | `", b[0]);
            tl_escape_md_n(out, s->counters[k].name, 200);
            fprintf(out, "` | %s | %s | %s | %s |", b[1], b[2], b[3], b[4]);
            if (rates)
                fprintf(out, " %s |", b[5]);
            fputc('\n', out);
        }
    }
    if (total > shown)
        fprintf(out, "\nand %zu more counters\n", total - shown);
}

/* ---- events ----------------------------------------------------------------- */

typedef struct name_count {
    const char *name;
    size_t n;
} name_count;

static int by_count(const void *x, const void *y)
{
    const name_count *a = x, *b = y;
    if (a->n != b->n)
        return a->n < b->n ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The sentences below are written into memory (open_memstream): the text,
 * its length and the stream that writes it, opened and closed in one place. */
typedef struct sentence {
    char *out;
    size_t len;
    FILE *f;
} sentence;

static FILE *sentence_open(sentence *t)
{
    t->out = NULL;
    t->len = 0;
    t->f = open_memstream(&t->out, &t->len);
    return t->f;
}

/* The sentence written (the caller frees it). */
static char *sentence_close(sentence *t)
{
    fclose(t->f);
    return t->out;
}

#define EVENT_NAMES 8

char *tl_events_sentence(const tl_aggregate *a)
{
    uint64_t total = 0;
    size_t kept = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        if (tl_session_counts(&a->sessions[i])) {
            total += a->sessions[i].events_total;
            kept += a->sessions[i].nevents;
        }
    sentence text;
    FILE *f = sentence_open(&text);
    if (f == NULL)
        return NULL;
    name_count *c = calloc(kept + 1, sizeof *c);
    size_t nc = 0;
    for (size_t i = 0; c && i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        for (size_t k = 0; tl_session_counts(s) && k < s->nevents; k++) {
            size_t j = 0;
            while (j < nc && strcmp(c[j].name, s->events[k].name) != 0)
                j++;
            if (j == nc)
                c[nc++] = (name_count){ s->events[k].name, 0 };
            c[j].n++;
        }
    }
    if (total > 0) {
        fprintf(f, "%llu recorded", (unsigned long long)total);
        if (kept < total)
            fprintf(f, " (the first %d of each session kept: %zu)", TL_SESSION_MAX_EVENTS, kept);
        if (c && nc) {
            qsort(c, nc, sizeof *c, by_count);
            fputs(": ", f);
            for (size_t j = 0; j < nc && j < EVENT_NAMES; j++)
                fprintf(f, "%s%.80s %zu", j ? ", " : "", c[j].name, c[j].n);
            if (nc > EVENT_NAMES)
                fprintf(f, ", and %zu more names", nc - EVENT_NAMES);
        }
    }
    free(c);
    return sentence_close(&text);
}

/* ---- models -------------------------------------------------------------------- */

/* A parameter count as people say it: "1.30 B", "860 M", "12.5 k", "512". */
static void params_text(char *buf, size_t n, double v)
{
    if (v >= 1e9)
        snprintf(buf, n, "%.3g B", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, n, "%.3g M", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, n, "%.3g k", v / 1e3);
    else
        snprintf(buf, n, "%.0f", v);
}

#define MODEL_PARAMS_TAG "model_parameters."
#define MODEL_TYPE_TAG "model_type."
/* Models named in one sentence at most. */
#define MODELS_SHOWN 8

/* The value of the tag "prefix NAME" of s, or NULL. */
static const char *model_tag(const tl_session *s, const char *prefix, const char *name)
{
    size_t pl = strlen(prefix), nl = strlen(name);
    for (size_t i = 0; i < s->ntags; i++)
        if (!strncmp(s->tags[i], prefix, pl) && !strncmp(s->tags[i] + pl, name, nl) && s->tags[i][pl + nl] == '=')
            return s->tags[i] + pl + nl + 1;
    return NULL;
}

char *tl_models_sentence(const tl_aggregate *a)
{
    sentence text;
    FILE *f = sentence_open(&text);
    if (f == NULL)
        return NULL;
    size_t shown = 0, more = 0;
    double total = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (!tl_session_counts(s))
            continue;
        for (size_t t = 0; t < s->ntags; t++) {
            const char *tag = s->tags[t];
            const char *eq = strchr(tag, '=');
            size_t pl = strlen(MODEL_PARAMS_TAG);
            if (strncmp(tag, MODEL_PARAMS_TAG, pl) != 0 || eq == NULL)
                continue;
            char name[160];
            snprintf(name, sizeof name, "%.*s", (int)(eq - tag - pl), tag + pl);
            int seen = 0; /* each model once: every rank of a job names the same ones */
            for (size_t k = 0; k < i && !seen; k++)
                seen = tl_session_counts(&a->sessions[k]) && model_tag(&a->sessions[k], MODEL_PARAMS_TAG, name) != NULL;
            char *end;
            double v = strtod(eq + 1, &end);
            if (seen || end == eq + 1 || !(v >= 0) || !isfinite(v))
                continue;
            total += v;
            if (shown == MODELS_SHOWN) {
                more++;
                continue;
            }
            char num[32];
            params_text(num, sizeof num, v);
            const char *type = model_tag(s, MODEL_TYPE_TAG, name);
            fprintf(f, "%s%.80s %s parameters", shown++ ? "; " : "", name, num);
            if (type && *type)
                fprintf(f, " (%.60s)", type);
        }
    }
    if (more)
        fprintf(f, "; %zu more", more);
    if (shown + more > 1) {
        char num[32];
        params_text(num, sizeof num, total);
        fprintf(f, "; %s in all", num);
    }
    return sentence_close(&text);
}

/* ---- hosts --------------------------------------------------------------------- */

char *tl_hosts_sentence(const tl_aggregate *a)
{
    sentence text;
    FILE *f = sentence_open(&text);
    if (f == NULL)
        return NULL;
    int hosts = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (!tl_session_counts(s) || s->sys.hostname == NULL)
            continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = tl_session_counts(&a->sessions[k]) && a->sessions[k].sys.hostname &&
                   strcmp(a->sessions[k].sys.hostname, s->sys.hostname) == 0;
        if (seen)
            continue;
        /* its ranks, each once (sessions are sorted by rank) */
        int last = -2, n = 0;
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1)
                fprintf(f, "%s%.100s (rank%s", hosts++ ? "; " : "", s->sys.hostname, n > 1 ? "s" : "");
            last = -2;
            int m = 0;
            for (size_t k = i; k < a->nsessions; k++) {
                const tl_session *t = &a->sessions[k];
                if (!tl_session_counts(t) || t->sys.hostname == NULL || strcmp(t->sys.hostname, s->sys.hostname) != 0 ||
                    t->id.rank == last)
                    continue;
                if (pass == 1)
                    fprintf(f, "%s%d", m ? ", " : " ", t->id.rank);
                m++;
                last = t->id.rank;
            }
            n = m;
        }
        if (s->sys.os)
            fprintf(f, "; %.100s", s->sys.os);
        if (s->sys.cpus > 0)
            fprintf(f, "; %d CPUs", s->sys.cpus);
        if (s->sys.memory_bytes > 0) {
            char b[32];
            fprintf(f, "; %s", tl_units_bytes(b, sizeof b, s->sys.memory_bytes));
        }
        fputc(')', f);
    }
    return sentence_close(&text);
}
