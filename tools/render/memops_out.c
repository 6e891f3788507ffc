/*
 * memops_out.c - device memory by operator in JSON, Markdown and HTML
 * (memops_out.h).
 */
#include "memops_out.h"

#include <stdlib.h>

#include "escape.h"
#include "memops.h"
#include "units.h"

#define DASH "\xe2\x80\x93"

int tl_memops_any(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nsessions; i++)
        if (tl_session_counts(&a->sessions[i]) && a->sessions[i].nmemops > 0)
            return 1;
    return 0;
}

/* The highest device peak among the sessions, and how many have one. */
static int64_t top_peak(const tl_aggregate *a, size_t *sessions)
{
    int64_t peak = -1;
    *sessions = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (!tl_session_counts(s) || s->nmemops == 0)
            continue;
        (*sessions)++;
        if (s->memops_peak > peak)
            peak = s->memops_peak;
    }
    return peak;
}

static const char *op_name(const char *name)
{
    return name[0] ? name : "(outside any operator)";
}

void tl_memops_json(tl_json *j, const tl_aggregate *a)
{
    size_t n, sessions;
    tl_memop_row *v = tl_memops_across(a->sessions, a->nsessions, &n);
    int64_t peak = top_peak(a, &sessions);
    tl_json_object_begin(j);
    tl_json_kv_int(j, "sessions", (int64_t)sessions);
    tl_json_key(j, "peak_bytes");
    peak >= 0 ? tl_json_int(j, peak) : tl_json_null(j);
    tl_json_kv_int(j, "operators", (int64_t)n);
    tl_json_key(j, "ops");
    tl_json_array_begin(j);
    for (size_t i = 0; i < n && i < TL_MEMOPS_JSON_ROWS; i++) {
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", v[i].name);
        tl_json_kv_int(j, "allocs", (int64_t)v[i].allocs);
        tl_json_kv_int(j, "bytes", v[i].bytes);
        tl_json_key(j, "peak_bytes");
        v[i].peak_bytes >= 0 ? tl_json_int(j, v[i].peak_bytes) : tl_json_null(j);
        tl_json_key(j, "peak_rank");
        v[i].peak_bytes >= 0 ? tl_json_int(j, v[i].peak_rank) : tl_json_null(j);
        tl_json_kv_int(j, "sessions", v[i].sessions);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
    free(v);
}

typedef struct row_text {
    char allocs[24], bytes[32], peak[48];
} row_text;

/* The device peak of the session of rank the row's contribution is on: its percentage is of that. */
static int64_t rank_peak(const tl_aggregate *a, int rank)
{
    int64_t peak = -1;
    for (size_t i = 0; i < a->nsessions; i++)
        if (tl_session_counts(&a->sessions[i]) && a->sessions[i].id.rank == rank && a->sessions[i].memops_peak > peak)
            peak = a->sessions[i].memops_peak;
    return peak;
}

static void row_text_of(const tl_aggregate *a, const tl_memop_row *r, row_text *t)
{
    char b[32];
    int64_t peak = r->peak_bytes >= 0 ? rank_peak(a, r->peak_rank) : -1;
    snprintf(t->allocs, sizeof t->allocs, "%llu", (unsigned long long)r->allocs);
    tl_units_bytes(t->bytes, sizeof t->bytes, (double)r->bytes);
    if (r->peak_bytes < 0)
        snprintf(t->peak, sizeof t->peak, DASH);
    else if (peak > 0)
        snprintf(t->peak, sizeof t->peak, "%s (%.1f%%)", tl_units_bytes(b, sizeof b, (double)r->peak_bytes),
                 100.0 * (double)r->peak_bytes / (double)peak);
    else
        tl_units_bytes(t->peak, sizeof t->peak, (double)r->peak_bytes);
}

static void sentence(FILE *out, const tl_aggregate *a, size_t n)
{
    size_t sessions;
    char b[32];
    int64_t peak = top_peak(a, &sessions);
    fprintf(out,
            "Device memory allocated under each operator (the profiler's [memory] events, each under the "
            "operator open on its thread), %zu operator%s, every rank added up; the peak contribution is what "
            "an operator's allocations still held when its device's allocated memory was at its highest",
            n, n == 1 ? "" : "s");
    if (peak >= 0)
        fprintf(out, " (%s%s)", sessions > 1 ? "the highest peak: " : "", tl_units_bytes(b, sizeof b, (double)peak));
    fputs(", the largest on any rank, as a share of that rank's peak.", out);
}

static void md_code(FILE *out, const char *s)
{
    fputs("`", out);
    for (const char *p = s; *p; p++)
        fputc(*p == '`' ? '\'' : *p == '|' ? '/' : *p == '\n' || *p == '\r' ? ' ' : *p, out);
    fputs("`", out);
}

void tl_memops_markdown(FILE *out, const tl_aggregate *a)
{
    size_t n;
    tl_memop_row *v = tl_memops_across(a->sessions, a->nsessions, &n);
    if (n == 0)
        return;
    fputs("\n## Memory by operator\n\n", out);
    sentence(out, a, n);
    fputs("\n\n| Operator | Allocations | Bytes allocated | Peak contribution |\n|---|--:|--:|--:|\n", out);
    for (size_t i = 0; i < n && i < TL_MEMOPS_TOP; i++) {
        row_text t;
        row_text_of(a, &v[i], &t);
        fputs("| ", out);
        if (v[i].name[0])
            md_code(out, v[i].name);
        else
            fputs(op_name(v[i].name), out);
        fprintf(out, " | %s | %s | %s |\n", t.allocs, t.bytes, t.peak);
    }
    if (n > TL_MEMOPS_TOP)
        fprintf(out, "\n%zu operators more in the aggregate JSON (`memory_by_op`).\n", n - TL_MEMOPS_TOP);
    free(v);
}

void tl_html_memops(tl_html *h)
{
    size_t n;
    tl_memop_row *v = tl_memops_across(h->a->sessions, h->a->nsessions, &n);
    if (n == 0)
        return;
    FILE *f = h->f;
    fputs("<h3 id=\"memory-by-op\">Memory by operator</h3>\n<p class=\"note\">", f);
    sentence(f, h->a, n);
    fputs("</p>\n<table>\n<caption>Device memory by operator: allocations, bytes allocated, and what was still "
          "held at the peak</caption>\n<thead><tr><th scope=\"col\">operator</th><th scope=\"col\">allocations</th>"
          "<th scope=\"col\">bytes allocated</th><th scope=\"col\">peak contribution</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < n && i < TL_MEMOPS_TOP; i++) {
        row_text t;
        row_text_of(h->a, &v[i], &t);
        fputs("<tr><td>", f);
        if (v[i].name[0])
            tl_html_code(f, v[i].name, TL_HTML_LABEL_COLS);
        else
            fputs(op_name(v[i].name), f);
        fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n", t.allocs,
                t.bytes, t.peak);
    }
    fputs("</tbody>\n</table>\n", f);
    tl_html_more(h, n < TL_MEMOPS_TOP ? n : TL_MEMOPS_TOP, n, "operators");
    free(v);
}
