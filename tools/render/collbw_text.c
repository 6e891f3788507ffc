/*
 * collbw_text.c - the collective bandwidth table as text (collbw_text.h).
 */
#include "collbw_text.h"

#include <math.h>
#include <stdio.h>

#include "units.h"

/* A bucket bound in the largest binary unit it is a whole number of ("256 MiB", not "0.25 GiB"). */
static const char *bound(char *buf, size_t len, double b)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (u < 4 && b >= 1024 && fmod(b, 1024) == 0) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%.0f %s", b, units[u]);
    return buf;
}

const char *tl_collbw_bucket_text(char *buf, size_t len, int bucket)
{
    char lo[24], hi[24];
    double l = tl_collbw_bucket_lo(bucket), h = tl_collbw_bucket_lo(bucket + 1);
    if (bucket <= 0)
        snprintf(buf, len, "< %s", bound(hi, sizeof hi, h));
    else if (bucket + 1 >= TL_COLLBW_BUCKETS)
        snprintf(buf, len, "\xe2\x89\xa5 %s", bound(lo, sizeof lo, l));
    else
        snprintf(buf, len, "%s \xe2\x80\x93 %s", bound(lo, sizeof lo, l), bound(hi, sizeof hi, h));
    return buf;
}

const char *tl_collbw_gbps(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "\xe2\x80\x93");
    else
        snprintf(buf, len, "%.2f GB/s", v / 1e9);
    return buf;
}

void tl_collbw_row_text(const tl_aggregate *a, const tl_collbw_row *r, tl_collbw_text *t)
{
    (void)a;
    char g[24];
    snprintf(t->kind, sizeof t->kind, "%s", tl_coll_kind_name(r->kind));
    tl_collbw_bucket_text(t->size, sizeof t->size, r->bucket);
    snprintf(t->count, sizeof t->count, "%llu", (unsigned long long)r->all.count);
    tl_units_bytes(t->bytes, sizeof t->bytes, r->all.bytes);
    tl_units_dur(t->time, sizeof t->time, (double)r->all.time_ns);
    tl_collbw_gbps(t->algbw, sizeof t->algbw, tl_collbw_algbw(&r->all));
    tl_collbw_gbps(t->busbw, sizeof t->busbw, tl_collbw_busbw(&r->all));
    tl_collbw_gbps(t->med, sizeof t->med, r->busbw_median);
    if (r->min_rank >= 0)
        snprintf(t->lo, sizeof t->lo, "%s (rank %d)", tl_collbw_gbps(g, sizeof g, r->busbw_min), r->min_rank);
    else
        snprintf(t->lo, sizeof t->lo, "\xe2\x80\x93");
    if (r->max_rank >= 0)
        snprintf(t->hi, sizeof t->hi, "%s (rank %d)", tl_collbw_gbps(g, sizeof g, r->busbw_max), r->max_rank);
    else
        snprintf(t->hi, sizeof t->hi, "\xe2\x80\x93");
}

void tl_collbw_sentence(FILE *out, const tl_aggregate *a)
{
    const tl_collbw *c = &a->collbw;
    fprintf(out, "%llu of %llu collectives (%s) have a size", (unsigned long long)c->sized,
            (unsigned long long)c->instances,
            c->source == TL_WAITS_GPU ? "GPU communication kernels" : "CPU ranges that run a collective");
    if (c->paired > 0)
        fprintf(out, ", %llu from the CPU-side annotation that launched them", (unsigned long long)c->paired);
    uint64_t whole = c->sized - c->untimed - c->after_arrival;
    if (c->after_arrival > 0)
        fprintf(out, ". Time: after the last rank arrived (the waits matched them) for %llu",
                (unsigned long long)c->after_arrival);
    if (whole > 0)
        fprintf(out, "%s the whole duration, waiting for other ranks included, for %llu",
                c->after_arrival > 0 ? ";" : ". Time:", (unsigned long long)whole);
    if (c->untimed > 0)
        fprintf(out, "; %llu left out (no time after the last arrival)", (unsigned long long)c->untimed);
    fputs(". Algorithm bandwidth = bytes / time; bus bandwidth = algorithm bandwidth x 2(n-1)/n for all_reduce, "
          "(n-1)/n for all_gather, reduce_scatter and all_to_all, 1 for the rest (NCCL's definitions).",
          out);
}

void tl_collbw_markdown(FILE *out, const tl_aggregate *a)
{
    const tl_collbw *c = &a->collbw;
    if (c->nrows == 0)
        return;
    fputs("\n## Collective bandwidth\n\n", out);
    tl_collbw_sentence(out, a);
    fputs("\n\n| collective | size | count | bytes | time | algbw | busbw | busbw lowest rank | median | highest |\n"
          "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
          out);
    for (size_t i = 0; i < c->nrows; i++) {
        tl_collbw_text t;
        tl_collbw_row_text(a, &c->rows[i], &t);
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.kind, t.size, t.count, t.bytes, t.time,
                t.algbw, t.busbw, t.lo, t.med, t.hi);
    }
}
