/*
 * ingest.h - one input into one per-rank profile, and a whole run of inputs
 * into its profiles with ranks and sessions assigned.
 *
 * The format is sniffed from content: gzip by its magic bytes, then the first
 * 64 KiB of the text. An array, or an object with "traceEvents", is a trace
 * and is streamed (never loaded whole); any other JSON object is a small
 * report document, loaded with jansson and recognized by its keys (libtally
 * report, FramePack, Inferix). Anything else is skipped with a warning that
 * says what it is.
 */
#ifndef TALLY_INGEST_H
#define TALLY_INGEST_H

#include "discover.h"
#include "profile.h"

/* A partial or merged aggregate holds every session's statistics: about
 * 150 KB a rank for Kineto traces, so this admits some 25,000 ranks. */
#define TL_AGGREGATE_MAX_BYTES ((size_t)4 << 30)

typedef struct tl_ingest_options {
    tl_limits limits;
    size_t max_report_bytes;   /* report documents larger than this are refused (256 MiB) */
    size_t max_aggregate_bytes;/* tally's aggregates likewise (TL_AGGREGATE_MAX_BYTES) */
    int jobs;                  /* worker threads across files (>= 1) */
    int progress;              /* progress lines on stderr (callers check isatty) */
    /* Called on the worker thread for every profile as soon as it is read
     * (before ranks are assigned, so p->rank may still be -1). A consumer
     * that analyzes it there can store its result in p->result and call
     * tl_profile_shrink(p): memory then stays bounded by the inputs being
     * read at once, not by all of them. May be NULL. */
    void (*on_profile)(tl_profile *p, void *user);
    void *user;
} tl_ingest_options;

void tl_ingest_options_init(tl_ingest_options *o);

/* Read one input. Returns a new profile (never NULL unless out of memory);
 * p->skipped says the input was not a profile, with the reason as a warning. */
tl_profile *tl_ingest_one(const tl_input *in, const tl_ingest_options *opt);

/* Rank from a path: rank-3, rank3, rank_3, -rank3., rank_3/ folders,
 * graph_capture_rank_0.<ns>..., then TensorBoard's worker3. Returns 1 and fills
 * rank and a description ("file name: rank-3"), or 0. */
int tl_rank_from_path(const char *path, int *rank, char *detail, size_t detail_len);

/* The profiles of a run, in input order. */
typedef struct tl_run {
    tl_profile **profiles;
    size_t n, cap;
    char **problems;           /* "name: what" for inputs that could not be read at all */
    size_t nproblems, problems_cap;
    tl_file_id *ids;           /* every file discovered (read or skipped), for the output check */
    size_t nids;
    uint64_t bytes;            /* decompressed bytes read */
    int nranks;                /* distinct ranks among usable profiles */
} tl_run;

void tl_run_init(tl_run *run);
void tl_run_release(tl_run *run);

/* Discover and read every input of paths, --jobs wide, then assign ranks (content,
 * then name, then sorted order with a warning) and sessions (profiles of one rank
 * ordered by start time). Returns the number of usable profiles. */
size_t tl_run_ingest(tl_run *run, const char *const *paths, size_t npaths,
                     const tl_ingest_options *opt);

/* The two halves of tl_run_ingest after discovery, for tally-mpi, where each
 * process reads a share of the items and ranks are assigned once over the
 * profiles of all of them. Reading appends to run (profiles in item order,
 * each with its item index in p->item). */
void tl_run_read_items(tl_run *run, const tl_item_list *items, const tl_ingest_options *opt);
/* Companions, ranks (content, name, then input order) and sessions over
 * run's profiles, which must be in input order; sets run->nranks. */
void tl_run_assign_ranks(tl_run *run);

#endif
