/*
 * fuzz_compare.c - libFuzzer target for what `tally compare` and `tally
 * summary` do with what ingest hands them: the input is a baseline and a
 * candidate joined by a marker line ("\n@@candidate@@\n"; without it, the
 * input is both), each ingested and analyzed as one rank's file, compared
 * (median, mean or total, by the input's bytes; the gate), and rendered as the console line, Markdown,
 * JUnit, JSON and the summary tables. None may crash or overflow (UBSan):
 * compare divides, takes logs and ratios of whatever the inputs said.
 * Seeds: tests/fuzz/seeds/compare, and with --extremes every number field of
 * them at its extremes (extremes.h).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "compare.h"
#include "ingest.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char marker[] = "\n@@candidate@@\n";

typedef struct mem {
    const uint8_t *p;
    size_t n, off;
} mem;

static ssize_t mem_read(void *ctx, void *buf, size_t cap)
{
    mem *m = ctx;
    size_t k = m->n - m->off < cap ? m->n - m->off : cap;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (ssize_t)k;
}

/* One side: the bytes as one rank's input, analyzed (as fuzz_ingest does). */
static int side(tl_aggregate *a, const uint8_t *data, size_t size, const char *name)
{
    mem m = { data, size, 0 };
    tl_input in = { name, name, NULL, 0, (int64_t)size, mem_read, &m, NULL };
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    tl_analyze_options aopt;
    tl_analyze_options_init(&aopt);
    tl_aggregate_init(a, &aopt);
    tl_profile *p = tl_ingest_one(&in, &opt);
    if (p == NULL)
        return -1;
    int rc = -1;
    if (tl_profile_usable(p)) {
        if (p->id.rank < 0)
            p->id.rank = 0;
        tl_session s;
        if (tl_session_analyze(&s, p, &aopt) == 0) {
            rc = tl_aggregate_add_session(a, &s);
            if (rc != 0)
                tl_session_release(&s);
        } else {
            tl_session_release(&s);
        }
    }
    tl_profile_free(p);
    return rc == 0 ? tl_aggregate_finish(a) : -1;
}

static int discard(void *ctx, const void *d, size_t n)
{
    (void)ctx;
    (void)d;
    (void)n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *cand = data;
    size_t nbase = size, ncand = size;
    const uint8_t *at = memmem(data, size, marker, sizeof marker - 1);
    if (at != NULL) {
        nbase = (size_t)(at - data);
        cand = at + sizeof marker - 1;
        ncand = size - nbase - (sizeof marker - 1);
    }
    tl_aggregate base, cnd;
    int okb = side(&base, data, nbase, "base.json") == 0;
    int okc = side(&cnd, cand, ncand, "cand.json") == 0;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out != NULL && okb)
        tl_render_summary(out, &base, 0, 80);
    if (out != NULL && okb && okc) {
        tl_cmp_options o;
        tl_cmp_options_init(&o);
        /* one metric an input, chosen by its bytes: every metric is reached,
         * and an input costs one comparison */
        static const int metrics[] = { TL_CMP_MEDIAN, TL_CMP_MEAN, TL_CMP_TOTAL };
        unsigned h = 0;
        for (size_t i = 0; i < size; i += 61)
            h = h * 31 + data[i];
        {
            o.metric = metrics[h % 3];
            tl_compare c;
            memset(&c, 0, sizeof c);
            if (tl_compare_run(&c, &base, &cnd, &o) == 0) {
                tl_render_compare_console(out, &c);
                tl_render_compare_regressions(out, &c);
                tl_render_compare_markdown(out, &c);
                tl_render_compare_junit(out, &c);
                tl_cmp_verdict v;
                tl_compare_verdict(&c, &v);
                tl_json j;
                tl_json_init(&j, discard, NULL);
                tl_compare_write_json(&j, &c, "fuzz");
                tl_json_finish(&j);
            }
            tl_compare_release(&c);
        }
    }
    if (out != NULL)
        fclose(out);
    free(text);
    tl_aggregate_release(&base);
    tl_aggregate_release(&cnd);
    return 0;
}
