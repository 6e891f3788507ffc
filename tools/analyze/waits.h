/*
 * waits.h - who waits for whom: collectives matched across ranks, each rank's
 * arrival, its wait, and the rank the others wait for (docs/analysis.md,
 * "Waits", defines every number here).
 *
 * The one idea: every rank of a collective leaves it together (the release),
 * so a rank that arrives early waits until the last one arrives. The ends
 * line up on every rank, which also tells how far apart the ranks' clocks
 * are: each rank's offset is the median of its ends off the instances'
 * median end, and what remains of the ends after the offsets (the residual)
 * is how far an arrival can be trusted. A rank is last in an instance only
 * when it arrives later than the next one by more than that.
 *
 * Computed by tl_waits_compute (tl_aggregate_finish, after the ranks are
 * built), read by the straggler analysis (the rank that arrives last), the
 * rules (time waiting in a collective is the waited-for rank's, not the
 * waiter's) and render. Computes, never formats: the sentences are render's.
 */
#ifndef TALLY_WAITS_H
#define TALLY_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

struct tl_aggregate;

/* Where the instances came from: the first of these that at least two ranks
 * have (a trace with NCCL kernels waits on the GPU; a gloo or MPI job waits
 * in the CPU range that runs the collective). */
enum tl_waits_source { TL_WAITS_NONE = 0, TL_WAITS_GPU, TL_WAITS_CPU };
enum tl_waits_match { TL_WAITS_BY_ORDER = 0, TL_WAITS_BY_SEQ };

typedef struct tl_rank_waits {
    int rank;
    int used;            /* took part in the matching (else why_out says why not) */
    const char *why_out; /* "no collectives", "truncated", ... ; NULL when used */
    uint64_t instances;  /* matched instances it took part in */
    uint64_t last;       /* instances it arrived last in, beyond the residual */
    int64_t waited_ns;   /* its waits added up */
    int64_t caused_ns;   /* over the instances it was last in: the other ranks' median wait, added up */
    int64_t offset_ns;   /* its clock's offset estimate (ends minus the instances' median end) */
    int64_t *inst_wait;  /* per instance of its first session (tl_session.insts): its wait in
                                * a matched instance, -1 otherwise; NULL when not used (collbw.c
                                * takes the time after the last arrival from it) */
} tl_rank_waits;

/* One matched instance, for the per-instance chart (the first TL_WAITS_MAX_CHART). */
typedef struct tl_wait_inst {
    int64_t ts_ns;     /* the first arrival, on rank 0's clock (offsets removed) */
    int64_t spread_ns; /* last arrival minus first */
    int64_t caused_ns; /* the other ranks' median wait */
    int last_rank;     /* the last to arrive; -1 when not beyond the residual */
    int name;          /* index into tl_waits.names */
} tl_wait_inst;
#define TL_WAITS_MAX_CHART 256
#define TL_WAITS_MAX_NAMES 16

/* The cause on the rank waited for: a name it spends more time in per step
 * than the median of the other ranks. */
typedef struct tl_wait_cause {
    char *name;
    int group;       /* tl_group */
    double delta_ns; /* per step (per instance when the ranks have no steps) */
} tl_wait_cause;

typedef struct tl_waits {
    int source;           /* tl_waits_source; NONE: nothing to match (then the rest is empty) */
    int matched_by;       /* tl_waits_match */
    uint64_t matched;     /* instances matched on every rank used */
    uint64_t partial;     /* instances some used rank lacks (not judged) */
    uint64_t instances;   /* instances of the chosen source on the used ranks, added up */
    int64_t residual_ns;  /* median |end - offset - release| over matched instances and ranks */
    int64_t trust_ns;     /* the margin an arrival needs to count as last: max(3 x residual, 10 µs) */
    tl_rank_waits *ranks; /* by rank index (tl_aggregate.ranks) */
    size_t nranks, used;
    tl_wait_inst *chart; /* the first TL_WAITS_MAX_CHART matched instances */
    size_t nchart;
    char *names[TL_WAITS_MAX_NAMES]; /* the chart's collective names ("(other)" past the limit) */
    int nnames;
    int64_t waited_ns; /* every used rank's waits added up */

    /* The rank waited for, when one is (tl_waits_compute's rule): -1 none. */
    int straggler;             /* rank number */
    int straggler_ri;          /* its rank index */
    uint64_t straggler_last;   /* instances it was last in (beyond the residual) */
    double straggler_p;        /* one-sided binomial p of so many lasts by chance (1 / ranks each) */
    double steps;              /* the waiting ranks' median step count; 0 without steps */
    double caused_per_step_ns; /* the others' median wait it caused, per step (per instance without steps) */
    double others_step_ns;     /* the waiting ranks' median step time; NaN without steps */
    double step_share_pct;     /* caused_per_step / others_step, %; NaN without steps */
    tl_wait_cause cause[5];
    int ncause;
    /* Before its late arrivals: each window from the previous release on its
     * side to its arrival (tl_session.coll_windows), by the steps' categories
     * (tl_stepcat), on the rank waited for and -- at the same instances -- the
     * median of the other ranks, per late instance. window_n 0: no window to
     * compare (reports, partials of an older tally, no late instance after a
     * first). window_cause: the category it spends the most more time in,
     * when that explains at least WAITS_CAUSE_SHARE of the wait it causes;
     * -1 none. */
    uint64_t window_n;
    double window_mine_ns[TL_SC_COUNT], window_others_ns[TL_SC_COUNT];
    int window_cause;
    /* The rank last most often (for the sentence when none is named), and
     * why none is named; NULL when one is. */
    int most_last; /* rank number, -1 none */
    uint64_t most_last_n;
    /* The rank judged (named or not): the one that causes two thirds of
     * the waiting when one does, else most_last; -1 none. Its share of the
     * waiting all the ranks cause (tl_rank_waits.caused_ns added up), %. */
    int judged;
    double caused_share_pct;
    int by_cause; /* 1: judged for the waiting it causes, being last in under two thirds */
    const char *why_none;
} tl_waits;

/* Match the collectives of the ranks' first sessions and compute every number
 * above into a->waits (released by tl_waits_release). 0, or -1 out of memory. */
int tl_waits_compute(struct tl_aggregate *a);
void tl_waits_release(tl_waits *w);

/* Per rank: how much of its step it waits in collectives for another rank
 * (tl_rank_waits.waited_ns per step over its step time, %); NaN unknown. */
double tl_waits_waited_pct(const struct tl_aggregate *a, size_t ri);

#endif
