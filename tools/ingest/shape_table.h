/*
 * shape_table.h - operators by input shape: per (operator name, "Input Dims",
 * "Input type") of a trace recorded with record_shapes, the calls, their
 * time and the profiler's "flops" (with_flops). read_trace.c fills one per
 * profile; analyze/session_analysis.c keeps the top of it in the session
 * (tl_sshape); analyze/shapes.c adds the ranks up. A kernel whose
 * "External id" is an operator's adds its time to that operator's key (the
 * operator that launched it itself: aten::addmm, not the aten::linear
 * around it).
 *
 * The one idea: a key is the text the trace wrote, normalized (no
 * whitespace, dtypes without quotes), so two calls with the same shapes and
 * dtypes are one row whatever the producer's spacing; a key longer than
 * TL_SHAPE_TEXT_MAX is cut (and ends in "..."), and keys beyond
 * TL_SHAPES_MAX are counted in dropped, never silently merged.
 */
#ifndef TALLY_SHAPE_TABLE_H
#define TALLY_SHAPE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define TL_SHAPES_MAX 20000   /* distinct (name, dims, types) keys per profile */
#define TL_SHAPE_TEXT_MAX 400 /* bytes of a key's dims or types text kept */

typedef struct tl_shape_stat {
    uint32_t name, dims, types; /* ids in the table's strs */
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    double flops;     /* the trace's "flops" args added up */
    uint64_t flops_n; /* calls that had one */
    int64_t gpu_ns;   /* the kernels its calls launched themselves ("External id"), added up */
    uint64_t kernels; /* ... how many */
} tl_shape_stat;

/* A kernel and the "External id" of the operator that launched it. */
typedef struct tl_shape_link {
    int64_t ext, dur_ns;
} tl_shape_link;
#define TL_SHAPE_MAX_LINKS 4000000 /* operators and kernels linked per profile (the rest are counted) */

typedef struct tl_shape_table {
    tl_strtab strs;
    tl_shape_stat *v;
    size_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, or 0 */
    size_t nslots;
    uint64_t dropped; /* calls of keys beyond TL_SHAPES_MAX */
    /* operator "External id" -> key, and the kernels to link (tl_shape_table_link) */
    int64_t *op_ext;
    uint32_t *op_key;      /* key index + 1, or 0: an empty slot */
    size_t op_slots, op_n; /* op_n: distinct ids, in the hash and the dense array */
    /* Ids count up, so most live in a dense array, op_dense[ext - op_base] (key
     * index + 1, or 0), and only the ids it cannot take go to the hash above
     * (a hashed insert per operator was 9 % of a record_shapes trace's read). */
    int64_t op_base;
    uint32_t *op_dense;
    size_t op_dcap, op_dn, op_hashed;
    tl_shape_link *kern;
    size_t nkern, kern_cap;
    uint64_t links_dropped; /* operators or kernels beyond TL_SHAPE_MAX_LINKS */
    /* The fast path: the raw texts of a call as the trace wrote them
     * (name, dims, types joined) -> its key, so a repeated call costs one
     * lookup; at most TL_SHAPE_RAW_MAX raw texts, then the slow path only. */
    tl_strtab raw;
    uint32_t *raw_key; /* raw id -> key index */
    size_t raw_cap;
} tl_shape_table;
#define TL_SHAPE_RAW_MAX (4 * TL_SHAPES_MAX)

void tl_shape_table_init(tl_shape_table *t);
void tl_shape_table_release(tl_shape_table *t);
/* Add one call: dims and types as the raw JSON text of the args' arrays
 * (normalized here); flops NaN when the call has none. 0, or -1 out of memory. */
int tl_shape_table_add(tl_shape_table *t, const char *name, size_t nlen, const char *dims, size_t dlen,
                       const char *types, size_t tlen, int64_t dur, double flops, int64_t ext);
/* An operator with "External id" ext but no shapes (once the table exists):
 * its kernels are not kept for linking. 0, or -1 out of memory. */
int tl_shape_table_op_no_shapes(tl_shape_table *t, int64_t ext);
/* A kernel launched by the operator of "External id" ext: linked at once when
 * that operator was added already (by the key its id maps to now), else kept
 * for tl_shape_table_link. 0, or -1 out of memory. */
int tl_shape_table_kernel(tl_shape_table *t, int64_t ext, int64_t dur);
/* Add each kernel's time to the key of the operator that launched it (in
 * either order in the file); once, after reading. */
void tl_shape_table_link(tl_shape_table *t);

#endif
