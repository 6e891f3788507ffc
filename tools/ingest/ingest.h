/*
 * ingest.h - one input into one per-rank profile, and a whole run of inputs
 * into its profiles with ranks and sessions assigned: the first stage, where
 * every input's identity is settled.
 *
 * The format is sniffed from content: gzip by its magic bytes, then the text
 * itself. An array, or an object whose top-level keys reach "traceEvents"
 * before a report key (sniff.h: the keys are streamed, whatever their values'
 * size), is a trace and is streamed (never loaded whole); any other JSON
 * object is a report document, loaded with jansson and recognized by its keys
 * (libtally report, FramePack, Inferix). Anything else is skipped with a
 * problem that says what it is.
 *
 * Identity (identity.h): the readers give each profile its name, format,
 * content rank and problems; tl_run_ingest then settles, over the whole run,
 * ranks from names and input order, session numbers and companions, and
 * lists the inputs that could not be opened (run->unreadable). What the
 * later stages may rely on when it returns: every profile's identity is
 * final but for its run, which only the list of every session can decide
 * (tl_sessions_settle, session.h, called by tl_aggregate_finish).
 *
 * Reading on, one input's way to the page: profile.h (what it becomes),
 * identity.h (who it is), session.h (its session result, and the last of
 * identity), aggregate.h (across ranks), render.h (the outputs).
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
    size_t max_report_bytes;    /* report documents larger than this are refused (256 MiB) */
    size_t max_aggregate_bytes; /* tally's aggregates likewise (TL_AGGREGATE_MAX_BYTES) */
    int jobs;                   /* worker threads across files (>= 1) */
    uint32_t max_names;         /* distinct names kept per input (0: TL_PROFILE_DEFAULT_MAX_NAMES) */
    uint64_t max_events;        /* events read per trace (0: TL_PROFILE_DEFAULT_MAX_EVENTS) */
    int progress;               /* progress lines on stderr (callers check isatty) */
    /* The --kernel-class patterns GPU events are classified with (not owned;
     * NULL: the built-in table only). */
    const tl_kernel_classes *kernel_classes;
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

/* What a JSON document's first bytes say it is: tally writes "format"
 * first in its aggregates, so a prefix tells (a UTF-8 BOM and white space
 * allowed). */
enum { TL_DOC_OTHER = 0, TL_DOC_PARTIAL, TL_DOC_AGGREGATE };
int tl_aggregate_doc_kind(const unsigned char *prefix, size_t n);
/* A regular file that opens as a partial aggregate ({"format": "tally-partial", ...}). */
int tl_file_is_partial(const char *path);

/* Why the input named name looks like a profile that should have been
 * readable (a static text), or NULL: see tl_run_ingest. */
const char *tl_looks_like_rank_file(const char *name, const tl_profile *p);

/* Rank from a path: rank-3, rank3, rank_3, -rank3., rank_3/ folders,
 * graph_capture_rank_0.<ns>..., then TensorBoard's worker3. Returns 1 and fills
 * rank and a description ("file name: rank-3"), or 0. */
int tl_rank_from_path(const char *path, int *rank, char *detail, size_t detail_len);

/* The profiles of a run, in input order. */
typedef struct tl_run {
    tl_profile **profiles;
    size_t n, cap;
    /* Inputs that could not be read at all (a missing path, an archive that
     * does not open, a member over the limits): an identity each, named,
     * with one problem (TL_PROBLEM_UNREADABLE) saying why; never a profile. */
    tl_identity *unreadable;
    size_t nunreadable, unreadable_cap;
    char **notes; /* "name: what" worth saying that is not a problem (--strict ignores) */
    size_t nnotes, notes_cap;
    size_t ignored;    /* files found by walking (or in archives) that are not profiles */
    size_t duplicates; /* inputs reached twice and read once */
    tl_file_id *ids;   /* every file discovered (read or skipped), for the output check */
    size_t nids;
    uint64_t bytes; /* decompressed bytes read */
    int nranks;     /* distinct ranks among usable profiles */
} tl_run;

void tl_run_init(tl_run *run);
void tl_run_release(tl_run *run);
/* Add an input that could not be read at all (run->unreadable). 0, or -1 out of memory. */
int tl_run_add_unreadable(tl_run *run, const char *name, const char *what);

/* Discover and read every input of paths, --jobs wide, then assign ranks (content,
 * then name, then sorted order with a warning) and sessions (profiles of one rank
 * ordered by start time). Returns the number of usable profiles.
 *
 * Which unreadable inputs are problems: a file named on the command line is
 * always reported. A file found by walking a directory (or a member of an
 * archive) that is empty or not JSON is a problem -- "damaged profile", kept
 * in the run as a skipped profile with its warning, so --strict, validate and
 * the compare gate fail -- when it looks like a rank file: by its name (a
 * rank in it, *.json, *.json.gz, *.trace, "trace" or "profil" in it) or by
 * its bytes (all NUL, JSON after NULs: p->content_hint). Anything else found by
 * walking (READMEs, licences, logs, images) is only counted in run->ignored
 * and named in one note. */
size_t tl_run_ingest(tl_run *run, const char *const *paths, size_t npaths, const tl_ingest_options *opt);

/* The two halves of tl_run_ingest after discovery, for tally-mpi, where each
 * process reads a share of the items and ranks are assigned once over the
 * profiles of all of them. Reading appends to run (profiles in item order,
 * each with its item index in p->item). */
void tl_run_read_items(tl_run *run, const tl_item_list *items, const tl_ingest_options *opt);
/* Settle the identity of run's profiles (identity.h), which must be in
 * input order: companions paired, ranks (content, name, then input order,
 * the last a problem of the input) and session numbers by start time within
 * each rank; sets run->nranks. The only place that pairs companions and
 * assigns ranks: a session takes the result (tl_identity_take_settled), and
 * tl_sessions_settle (session.h) later settles runs over all sessions. */
void tl_run_assign_ranks(tl_run *run);

#endif
