/*
 * identity.h - who an input is: its name, format, rank and how the rank was
 * found, world size, session, run, the report it accompanies, and what is
 * wrong with it. Settled once, in ingest; every later stage reads it.
 *
 * The one idea: an input's identity is decided in one place per fact and
 * then only carried. A profile (profile.h) holds one from the moment it is
 * opened; its session result (session.h) takes it over once ingest has
 * settled it; partials (partial.h) carry it field by field -- all but run
 * and session number, settled again over whatever sessions are read, and
 * the problems' kinds, which follow from the rest -- so a session read back
 * from one is the same input. Who decides what:
 *   - the readers: the path, the format, a rank and world size found in the
 *     content, and the problems they meet (with the byte offset when they
 *     know it);
 *   - run.c, over every profile of the run: ranks from names, then from the
 *     input order (a problem of its own), companions (a libtally trace whose
 *     report is also an input), and inputs that could not be opened at all
 *     (an identity with one problem, never a profile);
 *   - settle.c, over every session once all are known (tl_sessions_settle,
 *     session.h): which run each belongs to and its session number in it.
 * analyze and render never test these fields to decide whether an input
 * counts: they ask tl_identity_counts (tl_session_counts), or
 * tl_identity_standing when they say why it does not.
 */
#ifndef TALLY_IDENTITY_H
#define TALLY_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

/* What kind of problem: who found it and what it means for the input. */
enum tl_problem_kind {
    TL_PROBLEM_WARNING = 0, /* the input was read; something about it is worth saying */
    TL_PROBLEM_SKIPPED,     /* why the input is not read as a profile (its first problem) */
    TL_PROBLEM_UNREADABLE,  /* the input could not be opened or listed at all (discovery) */
    TL_PROBLEM_RANK_ORDER,  /* no rank in the content or the name: one given by input order */
    TL_PROBLEM_COUNT
};

/* One problem of an input. Every problem is a warning of the run (--strict
 * turns each into an error); validate and inspect list those of the input
 * itself (tl_problem_of_input). */
typedef struct tl_problem {
    int kind;       /* tl_problem_kind */
    int64_t offset; /* the byte of the input the text names; -1 none */
    char *text;     /* one sentence, without the input's name (messages put
                                * "tally: NAME: " in front) */
} tl_problem;

/* A problem of the input itself (what validate and inspect list), not of
 * how it sits among the others (a rank only guessed from the input order:
 * a warning of the run, which --strict counts, not a fault of the file). */
static inline int tl_problem_of_input(const tl_problem *p)
{
    return p->kind != TL_PROBLEM_RANK_ORDER;
}

/* Problems kept per input; beyond it they are counted in tl_problems.dropped. */
#define TL_IDENTITY_MAX_PROBLEMS 32
/* Bytes of a problem's text at most (a longer one is cut). */
#define TL_PROBLEM_TEXT_MAX 511

typedef struct tl_problems {
    tl_problem *v; /* in the order they were found */
    size_t n, cap;
    uint64_t dropped; /* beyond TL_IDENTITY_MAX_PROBLEMS (said as "N more") */
} tl_problems;

/* Add a problem (printf-style text, cut to TL_PROBLEM_TEXT_MAX bytes);
 * beyond TL_IDENTITY_MAX_PROBLEMS it is only counted. offset -1: none.
 * Returns the problem, or NULL when it was dropped or memory ran out. */
tl_problem *tl_problems_add(tl_problems *l, int kind, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Add a copy of text as it is (no limit of count or length: a partial's
 * problems were limited when they were found). 0, or -1 out of memory. */
int tl_problems_add_text(tl_problems *l, int kind, int64_t offset, const char *text);
/* Free the problems and leave l empty. */
void tl_problems_release(tl_problems *l);

/* How an input's rank was found, in docs/architecture.md's order of preference. */
enum tl_rank_source { TL_RANK_UNKNOWN = 0, TL_RANK_CONTENT, TL_RANK_NAME, TL_RANK_ORDER };
/* "unknown", "content", "name", "order" (as the aggregate's inputs and partials say it). */
const char *tl_rank_source_name(int source);

/* rank_detail is cut to this many bytes (a folder name, a JSON path). */
#define TL_RANK_DETAIL_MAX 95

typedef struct tl_identity {
    char *path;        /* display name: a file path or "archive.zip:member/path" */
    int format;        /* tl_format (profile.h); TL_FMT_UNKNOWN: not a profile */
    int rank;          /* -1 until known; -1 for an input that is not a profile */
    int world_size;    /* declared by the content; 0 unknown */
    int rank_source;   /* tl_rank_source */
    char *rank_detail; /* where: "distributedInfo.rank", "file name: rank3", ...; never NULL */
    int session;       /* 0-based, among the inputs of its rank (in its run), by start time */
    int run;           /* 0: the run analyzed; k > 0: another run, left out of the numbers */
    /* A libtally trace whose report (same process) is also an input: the
     * report's path. The two are one session, counted once, as the report;
     * the trace lends it what a report lacks (timeline, memory series,
     * call tree: tl_sessions_settle). NULL for every other input. */
    char *companion_of;
    tl_problems problems;
} tl_identity;

/* An identity with nothing known (rank -1, rank_detail ""), named path (may
 * be NULL: ""). 0, or -1 out of memory (then it holds nothing). */
int tl_identity_init(tl_identity *id, const char *path);
/* Free what id holds and leave it zeroed. */
void tl_identity_release(tl_identity *id);
/* dst (released first) becomes a deep copy of src. 0, or -1 out of memory. */
int tl_identity_copy(tl_identity *dst, const tl_identity *src);
/* How many of id's problems are of the input itself (tl_problem_of_input). */
size_t tl_identity_input_problems(const tl_identity *id);

/* Set the rank and how it was found, with detail cut to
 * TL_RANK_DETAIL_MAX bytes. A rank given by input order is a problem of
 * the input: it is added here (TL_PROBLEM_RANK_ORDER), so whoever assigns
 * such a rank says so the same way. 0, or -1 out of memory. */
int tl_identity_set_rank(tl_identity *id, int rank, int source, const char *detail);

/* Give the problems of an identity read back from their words (a partial
 * writes each problem's text, and where it is when it names a byte) their
 * kinds, which follow from the identity itself: the first problem of an
 * input that is not a profile (format unknown) is why it was not read
 * (TL_PROBLEM_SKIPPED: an unreadable input's too); the one that says its
 * rank was given by input order is TL_PROBLEM_RANK_ORDER; the rest are
 * warnings. */
void tl_identity_kinds_from_words(tl_identity *id);

/* What ingest settles after an input's session was made from its profile
 * (analyze runs on the reading threads, before ranks can be assigned): the
 * rank fields, the session and the companion pairing of src, and the
 * problems settling added to src (TL_PROBLEM_RANK_ORDER), into dst. Other
 * fields and problems of dst stay. 0, or -1 out of memory. */
int tl_identity_take_settled(tl_identity *dst, const tl_identity *src);

/* The file name of an input's path (identity.path): of an archive member,
 * the member's ("a.zip:run/rank3.json" -> "rank3.json"). */
const char *tl_path_file_name(const char *path);

/* A libtally report and trace of one process: {stem}.report.json and
 * {stem}.trace.json(.gz), as libtally names them ({name}-rank{N}.{pid}-{time}).
 * Both ways of pairing a companion use it (run.c, settle.c). */
int tl_identity_same_stem(const char *report_path, const char *trace_path);

/* Two inputs in one folder: the same directory part of their paths (exact),
 * or, for inputs read apart into partials that may spell the folder
 * differently ("runs/x" and "/home/u/runs/x"), the same last folder name
 * (!exact). What pairs FramePack's profiling_results/ trace.json with its
 * profiling_report.json (run.c, settle.c). */
int tl_identity_same_folder(const char *a, const char *b, int exact);

/* Where an input stands in the numbers. */
enum tl_standing {
    TL_STANDING_COUNTED = 0, /* a session of the run analyzed: it counts */
    TL_STANDING_NOT_READ,    /* not a profile (skipped, unreadable): only listed */
    TL_STANDING_COMPANION,   /* a libtally trace counted with its report (companion_of) */
    TL_STANDING_OTHER_RUN,   /* a session of another run: left out, with a note */
};

/* A session of its own: read as a profile with a rank, not a companion
 * (whose session is its report's). What run identity sorts into runs. */
static inline int tl_identity_is_session(const tl_identity *id)
{
    return id->rank >= 0 && id->companion_of == NULL;
}

/* The one test of "does this input count": a session of its own, of the
 * run analyzed. Valid once tl_sessions_settle ran (tl_aggregate_finish). */
static inline int tl_identity_counts(const tl_identity *id)
{
    return tl_identity_is_session(id) && id->run == 0;
}

/* tl_standing of id: counted, or why not. */
static inline int tl_identity_standing(const tl_identity *id)
{
    if (id->companion_of != NULL)
        return TL_STANDING_COMPANION;
    if (id->rank < 0)
        return TL_STANDING_NOT_READ;
    return id->run > 0 ? TL_STANDING_OTHER_RUN : TL_STANDING_COUNTED;
}

#endif
