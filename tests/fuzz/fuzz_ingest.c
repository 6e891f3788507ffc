/*
 * fuzz_ingest.c - libFuzzer target for one input end to end: gzip sniffing,
 * format sniffing, the trace reader or a report reader, then the analysis of
 * the resulting profile into a session result (the GPU window, interval
 * unions, idle breakdown), as `tally aggregate` does for each file.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "aggregate.h"
#include "ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mem m = { data, size, 0 };
    tl_input in = { "fuzz", "fuzz", NULL, 0, (int64_t)size, mem_read, &m, NULL };
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    tl_profile *p = tl_ingest_one(&in, &opt);
    if (p == NULL)
        return 0;
    /* What `tally inspect` reads: every category listed has a count, and it
     * was counted (issue 10: events without "cat" listed "" with no count
     * slot, and inspect read past cat_counts). */
    for (uint32_t c = 0; c < p->cats.n; c++)
        if (c >= p->cat_counts_cap || p->cat_counts[c] == 0)
            __builtin_trap();
    /* GPU events point at a stream that exists (streams are found by hash). */
    for (size_t i = 0; i < p->ngpu; i++)
        if (p->gpu[i].stream >= p->nstreams)
            __builtin_trap();
    if (tl_profile_usable(p)) {
        if (p->id.rank < 0)
            p->id.rank = 0;
        tl_analyze_options aopt;
        tl_analyze_options_init(&aopt);
        tl_session s;
        if (tl_session_analyze(&s, p, &aopt) == 0) {
            tl_aggregate a;
            tl_aggregate_init(&a, &aopt);
            if (tl_aggregate_add_session(&a, &s) == 0)
                tl_aggregate_finish(&a);
            tl_aggregate_release(&a);
        } else {
            tl_session_release(&s);
        }
    }
    tl_profile_free(p);
    return 0;
}
