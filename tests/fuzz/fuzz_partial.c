/*
 * fuzz_partial.c - libFuzzer target for the partial-aggregate reader
 * (ingest's tl_partial_read_buffer), the one input tally takes back from a file
 * anybody may have edited. For every document it accepts:
 *   - finishing the aggregate (ranks, across-rank metrics, stragglers, rules)
 *     and rendering it (HTML, Markdown, the aggregate JSON) must not crash or
 *     overflow (UBSan: the reader's ranges are what keep the sums in range);
 *   - writing the partial back and reading that must give the same bytes
 *     again (what tally-mpi and tally merge rely on: a partial round-trips).
 * Seeds: tests/fuzz/seeds/partial (small real partials of every format,
 * and the hostile values of issue 10's attack run, which must be refused).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partial.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct mem {
    char *p;
    size_t len, cap;
} mem;

static int sink(void *ctx, const void *d, size_t n)
{
    mem *m = ctx;
    if (m->len + n > m->cap) {
        size_t c = m->cap ? m->cap * 2 : 4096;
        while (c < m->len + n)
            c *= 2;
        char *x = realloc(m->p, c);
        if (x == NULL)
            return -1;
        m->p = x;
        m->cap = c;
    }
    memcpy(m->p + m->len, d, n);
    m->len += n;
    return 0;
}

/* A partial into a (initialized), as tally merge reads one. */
static int read_partial(tl_aggregate *a, const char *buf, size_t len, char *err, size_t errlen)
{
    tl_partial p;
    tl_partial_init(&p);
    int rc = tl_partial_read_buffer(&p, buf, len, err, errlen) != 0 || tl_aggregate_add_partial(a, &p, err, errlen) != 0
                 ? -1
                 : 0;
    tl_partial_release(&p);
    return rc;
}

static void write_partial(const tl_aggregate *a, mem *m)
{
    tl_json j;
    tl_json_init(&j, sink, m);
    tl_partial_write(&j, a, "fuzz");
    tl_json_finish(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    tl_aggregate a, b;
    tl_aggregate_init(&a, NULL);
    tl_aggregate_init(&b, NULL);
    mem first = { 0 }, second = { 0 }, out = { 0 };
    if (read_partial(&a, (const char *)data, size, err, sizeof err) != 0)
        goto done;
    write_partial(&a, &first);
    if (read_partial(&b, first.p, first.len, err, sizeof err) != 0) {
        fprintf(stderr, "a partial tally wrote does not read back: %s\n", err);
        abort();
    }
    write_partial(&b, &second);
    if (first.len != second.len || memcmp(first.p, second.p, first.len) != 0) {
        fprintf(stderr, "a partial does not round-trip\n");
        abort();
    }
    if (tl_aggregate_finish(&a) != 0)
        goto done;
    tl_json j;
    tl_json_init(&j, sink, &out);
    tl_aggregate_write(&j, &a, "fuzz", 0);
    tl_json_finish(&j);
    char *html = NULL;
    size_t hlen = 0;
    FILE *f = open_memstream(&html, &hlen);
    if (f != NULL) {
        tl_report_options ro = { "fuzz", 0, "fuzz" };
        tl_render_html(f, &a, &ro);
        tl_render_markdown(f, &a, &ro);
        fclose(f);
    }
    free(html);
done:
    free(first.p);
    free(second.p);
    free(out.p);
    tl_aggregate_release(&a);
    tl_aggregate_release(&b);
    return 0;
}
