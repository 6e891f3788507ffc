/*
 * calltree.h - the call tree: where CPU-side time was spent, by call path.
 *
 * A node is one call path: (parent node, name). Its inclusive time is the
 * sum of the durations of the calls on that path, its self time the sum of
 * each call's duration minus its direct children's, its count the number of
 * calls. Recursion gives distinct paths (a -> a -> b is three nodes), so a
 * node's inclusive time is a plain sum, never counted twice.
 *
 * Roots are per kind of event (nesting.h's classes: operators, annotations
 * and sections, Python frames, GPU annotations, other events): a call with
 * no enclosing call on its thread goes under the root of its own kind. Below
 * a root the kinds mix: operators, annotations, sections and other events of
 * one thread nest in each other by time (an aten::mm under ProfilerStep#5
 * under the annotations' root), so each node carries its own kind. Python
 * frames and GPU annotations nest only in their own kind (nesting.h says
 * why). A root's inclusive time is the sum of its top-level calls, its self
 * time 0, its count the number of top-level calls.
 *
 * The same structure holds the tree of a profile (ingest: names are ids in
 * the profile's string table), of a session, a rank and the merge across
 * ranks (analyze: names are ids in the tree's own table, `names`). Nodes are
 * in creation order, so a parent always comes before its children (parent <
 * own index), which is what readers of a serialized tree check.
 *
 * Bounded: at most TL_CALLTREE_MAX_NODES nodes. Beyond it a call is not
 * recorded as a node (nor are its descendants); its time stays in its
 * parent's inclusive time and is subtracted from the parent's self time as
 * every child's is, so the recorded nodes stay exact, and the calls left out
 * are counted in `dropped`, which the report states.
 */
#ifndef TALLY_CALLTREE_H
#define TALLY_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define TL_CALLTREE_MAX_NODES 20000u
#define TL_CALLTREE_NONE UINT32_MAX /* no node: a root's parent, a call not recorded */

/* The kinds of roots: nesting.h's classes (read_trace.c's nest_class). */
enum tl_calltree_kind {
    TL_CTK_OTHER = 0,       /* events without a known category (plain Chrome traces) */
    TL_CTK_OPS,             /* cpu_op, Operator */
    TL_CTK_ANNOTATIONS,     /* user_annotation, sections, iterations */
    TL_CTK_RUNTIME,         /* cuda_runtime: leaves, never in the tree */
    TL_CTK_PYTHON,          /* python_function */
    TL_CTK_GPU_ANNOTATIONS, /* gpu_user_annotation */
    TL_CTK_COUNT
};
/* The root's name of a kind ("operators (cpu_op)"), the label every reader sees. */
const char *tl_calltree_kind_label(int kind);
/* The kind whose root is named label; TL_CTK_OTHER for any other name. */
int tl_calltree_kind_of_label(const char *label);

typedef struct tl_cnode {
    uint32_t parent; /* index, TL_CALLTREE_NONE for a root */
    uint32_t name;   /* string id (see above) */
    int64_t incl_ns, self_ns;
    uint64_t count;
    uint8_t kind; /* enum tl_calltree_kind of the calls (a new node takes its parent's) */
} tl_cnode;

typedef struct tl_calltree {
    tl_cnode *nodes;
    uint32_t n, cap;
    tl_strtab names;  /* the names of a session's, rank's or merged tree */
    uint64_t dropped; /* calls not recorded as nodes (beyond the cap) */
    uint32_t *slots;  /* hash (parent, name) -> index + 1 */
    uint32_t nslots;
    /* The merge across ranks only (NULL otherwise), per node: the least and
     * most inclusive time of one rank (a rank without the node counts 0),
     * and the ranks that have it. */
    int64_t *min_ns, *max_ns;
    uint32_t *ranks;
} tl_calltree;

void tl_calltree_init(tl_calltree *t);
void tl_calltree_release(tl_calltree *t);
/* The node (parent, name), created if new: its index, or TL_CALLTREE_NONE
 * when the tree is full or out of memory (the caller counts the call in
 * dropped). parent is TL_CALLTREE_NONE for a root. O(1) expected. */
uint32_t tl_calltree_child(tl_calltree *t, uint32_t parent, uint32_t name);
/* The node (parent, name) if present, else TL_CALLTREE_NONE. */
uint32_t tl_calltree_find(const tl_calltree *t, uint32_t parent, uint32_t name);
/* Rebuild the (parent, name) index after nodes were filled in directly (a
 * tree read back from JSON); 0, or -1 when out of memory. */
int tl_calltree_reindex(tl_calltree *t);
/* Move src into dst (dst released first); src is left empty. */
void tl_calltree_move(tl_calltree *dst, tl_calltree *src);

/* Add the tree src, whose names are strings of src_strs (NULL: src's own
 * names table), into dst path by path (dst's names are its own table): each
 * node's inclusive and self time and count are added to the node of the same
 * path in dst, and src->dropped to dst->dropped. Paths beyond dst's cap add
 * their calls to dst->dropped. map, when not NULL, has room for src->n and
 * gets the dst node of each src node (TL_CALLTREE_NONE: not recorded).
 * 0, or -1 when out of memory. */
int tl_calltree_add(tl_calltree *dst, const tl_calltree *src, const tl_strtab *src_strs, uint32_t *map);

/* The children of every node, largest inclusive time first (ties by name,
 * then index): kids of node i are list[start[i] .. start[i + 1]), the roots
 * are those of the virtual node t->n, by kind (annotations and sections,
 * operators, Python frames, GPU annotations, other events), then largest
 * first. For walking a tree top-down. */
typedef struct tl_calltree_kids {
    uint32_t *start; /* [n + 2] */
    uint32_t *list;  /* [n] */
} tl_calltree_kids;
int tl_calltree_kids_build(tl_calltree_kids *k, const tl_calltree *t);
void tl_calltree_kids_release(tl_calltree_kids *k);

/* The name of node i as a string (a tree with its own names table). */
const char *tl_calltree_name(const tl_calltree *t, uint32_t i);

#endif
