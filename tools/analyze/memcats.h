/*
 * memcats.h - a session's memory by category (torch.profiler's
 * export_memory_timeline; ingest/read_mem_timeline.h): what each category
 * held at the peak, and how much each grew from the first point to the last
 * (docs/analysis.md, "Memory by category").
 */
#ifndef TALLY_ANALYZE_MEMCATS_H
#define TALLY_ANALYZE_MEMCATS_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

typedef struct tl_memcat_summary {
    size_t points;                     /* the session's points (downsampled: at most TL_MEMCAT_POINTS) */
    int64_t span_ns;                   /* the last point's time less the first's */
    size_t peak;                       /* the point whose categories add up to the most (the first of equals) */
    int64_t peak_bytes;                /* ... that sum */
    int64_t peak_at_ns;                /* ... its time less the first point's */
    double share[TL_MEM_CATEGORIES];   /* each category's bytes at the peak / peak_bytes; NaN when peak_bytes <= 0 */
    int64_t first[TL_MEM_CATEGORIES];  /* bytes at the first point */
    int64_t last[TL_MEM_CATEGORIES];   /* ... at the last */
    int64_t growth[TL_MEM_CATEGORIES]; /* last - first (saturating) */
    int grown;                         /* the category with the largest growth above 0; -1 when none grew */
} tl_memcat_summary;

/* s's summary into *out; 0, or -1 when s has no memory timeline. */
int tl_memcat_summarize(const tl_session *s, tl_memcat_summary *out);

/* Whether any session that counts has a memory timeline. */
int tl_memcats_any(const tl_session *sessions, size_t n);

#endif
