/*
 * mpi_analyze.c - the analysis of tally report|summary|aggregate spread over
 * MPI processes (tally-mpi): the map of `tally aggregate --partial` and the
 * reduce of `tally merge`, run by one mpirun/srun line.
 *
 * The one idea: the result must be the bytes a single process would write,
 * so nothing that depends on seeing all inputs is decided on a share of them.
 *   1. Process 0 discovers the sorted input list (one directory walk instead
 *      of one per process, and every process gets the same list) and
 *      broadcasts it with each item's size.
 *   2. Every process takes a share balanced by bytes (largest item first to
 *      the least loaded process) and reads and analyzes it into session
 *      results, --jobs threads wide, as tally does.
 *   3. Ranks that depend on all inputs (companions, ranks by input order,
 *      session order) are assigned once: each process sends the identity of
 *      its profiles to process 0, which runs the same assignment over all of
 *      them in input order and sends each its answer.
 *   4. Each process's sessions (already reduced from its traces) travel as
 *      bytes, their raw values by the partial's field tables (partial.h's
 *      wire: no JSON text), up a binomial tree (log2 P rounds); the merge
 *      is tally merge's, the unpacking done once, at the root, in parallel
 *      (see reduce_tree).
 *   5. Process 0 finishes the aggregate; the command renders its outputs.
 * Inputs a process cannot read (a file missing on its node) become sessions
 * with a warning, like any bad input; other failures travel up the tree as
 * an exit code. Progress is shown by process 0 only.
 */
#define _GNU_SOURCE
#include <mpi.h> /* before mpi_analyze.h: its MPI declarations */

#include "mpi_analyze.h"
#include "pipeline.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "partial.h"

/* MPI counts are ints: larger messages go in pieces of this size. */
#define TL_MPI_CHUNK ((size_t)1 << 30)

enum { TAG_SIZE = 1, TAG_DATA = 2 };

/* How long a wait polls without sleeping before it backs off. OpenMPI moves
 * a large message in fragments, each needing a call into MPI on both sides:
 * a receiver asleep for up to 1 ms between calls moved the 56.5 MB of 512
 * ranks' sessions at 74 MB/s (0.765 s, 0.11 s of it CPU); polling the first
 * 5 ms of each wait moves them in 0.1 s, and a long wait (a process still
 * reading its share) still sleeps after those 5 ms instead of spinning. */
#define TL_MPI_SPIN_S 0.005

static int g_rank, g_size;
static size_t g_wire_bytes; /* process 0: the sessions' bytes it received */

/* This process's CPU time, all threads, in seconds (the progress lines'). */
static double cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec / 1e9 : 0.0;
}
static int g_stderr = -1; /* a worker's real stderr while the command parses */
double tl_mpi_timeout_s = TL_MPI_TIMEOUT_DEFAULT;

void tl_mpi_wait(MPI_Request *req, int peer, const char *what)
{
    int done = 0;
    double start = MPI_Wtime();
    /* process 0 hears from every process and names the one that stopped; a
     * process waiting for process 0 (which may itself be waiting for that
     * one) gives it twice as long before it speaks */
    double limit = g_rank != 0 && peer <= 0 ? 2 * tl_mpi_timeout_s : tl_mpi_timeout_s;
    long ns = 20000;
    for (;;) {
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done)
            return;
        double waited = MPI_Wtime() - start;
        if (waited > limit)
            break;
        if (waited < TL_MPI_SPIN_S)
            continue;
        struct timespec t = { 0, ns };
        nanosleep(&t, NULL);
        ns = ns < 1000000 ? 2 * ns : 1000000;
    }
    tl_mpi_restore_stderr();
    char who[32] = "a process";
    if (peer >= 0)
        snprintf(who, sizeof who, "process %d", peer);
    fprintf(stderr,
            "tally-mpi: process %d: %s sent nothing for %.0f s while this one waited for %s "
            "(--timeout %.0f): it stopped answering; ending the job\n",
            g_rank, who, limit, what, tl_mpi_timeout_s);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, TL_EXIT_NO_INPUT);
}

/* ---- a byte buffer and the records in it ----------------------------------- */

typedef struct buf {
    char *p;
    size_t len, cap, pos;
    int oom;
} buf;

static void buf_put(buf *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap &&
        tl_array_grow(&b->p, b->len + n - 1, &b->cap, 1, 4096) != 0) { /* room for the last byte */
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void put_i64(buf *b, int64_t v)
{
    buf_put(b, &v, sizeof v);
}

static void put_str(buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_i64(b, (int64_t)n);
    buf_put(b, s ? s : "", n);
}

static int64_t get_i64(buf *b)
{
    int64_t v = 0;
    if (b->pos + sizeof v <= b->len)
        memcpy(&v, b->p + b->pos, sizeof v);
    else
        b->oom = 1;
    b->pos += sizeof v;
    return v;
}

/* A new NUL-terminated copy (caller frees). */
static char *get_str(buf *b)
{
    int64_t n = get_i64(b);
    if (b->oom || n < 0 || (size_t)n > b->len - b->pos) {
        b->oom = 1;
        return strdup("");
    }
    char *s = strndup(b->p + b->pos, (size_t)n);
    b->pos += (size_t)n;
    return s;
}

/* ---- messages of any size ---------------------------------------------------- */

static void send_bytes(const void *p, size_t n, int to)
{
    uint64_t len = n;
    MPI_Request r;
    MPI_Isend(&len, 1, MPI_UINT64_T, to, TAG_SIZE, MPI_COMM_WORLD, &r);
    tl_mpi_wait(&r, to, "it to take a message");
    for (size_t off = 0; off < n; off += TL_MPI_CHUNK) {
        size_t k = n - off < TL_MPI_CHUNK ? n - off : TL_MPI_CHUNK;
        MPI_Isend((const char *)p + off, (int)k, MPI_BYTE, to, TAG_DATA, MPI_COMM_WORLD, &r);
        tl_mpi_wait(&r, to, "it to take a message");
    }
}

/* Returns a malloc'ed block. Out of memory here ends the job: the sender
 * cannot be told to stop, and a partial missing from the merge would be a
 * wrong answer, not a smaller one. */
static char *recv_bytes(size_t *n, int from)
{
    uint64_t len = 0;
    MPI_Request r;
    MPI_Irecv(&len, 1, MPI_UINT64_T, from, TAG_SIZE, MPI_COMM_WORLD, &r);
    tl_mpi_wait(&r, from, "its message");
    char *p = malloc(len ? len : 1);
    if (p == NULL) {
        fprintf(stderr, "tally-mpi: process %d: out of memory receiving %llu bytes from process %d\n", g_rank,
                (unsigned long long)len, from);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (uint64_t off = 0; off < len; off += TL_MPI_CHUNK) {
        size_t k = len - off < TL_MPI_CHUNK ? (size_t)(len - off) : TL_MPI_CHUNK;
        MPI_Irecv(p + off, (int)k, MPI_BYTE, from, TAG_DATA, MPI_COMM_WORLD, &r);
        tl_mpi_wait(&r, from, "its message");
    }
    *n = (size_t)len;
    return p;
}

/* Broadcast a buffer from process 0 (its b is filled; the others' is set). */
static void bcast_buf(buf *b)
{
    uint64_t len = b->len;
    MPI_Request r;
    MPI_Ibcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &r);
    tl_mpi_wait(&r, g_rank == 0 ? -1 : 0, "the input list");
    if (g_rank != 0) {
        b->p = malloc(len ? len : 1);
        b->len = b->cap = b->p ? (size_t)len : 0;
        b->oom = b->p == NULL;
    }
    for (uint64_t off = 0; off < len; off += TL_MPI_CHUNK) {
        size_t k = len - off < TL_MPI_CHUNK ? (size_t)(len - off) : TL_MPI_CHUNK;
        /* out of memory on a process is fatal for the collective: abort cleanly */
        if (b->p == NULL) {
            fprintf(stderr, "tally-mpi: process %d: out of memory for the input list\n", g_rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Ibcast(b->p + off, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
        tl_mpi_wait(&r, g_rank == 0 ? -1 : 0, "the input list");
    }
}

/* ---- 1, 2: the input list and the shares ---------------------------------- */

/* Process 0 lists the items; everyone gets them (and their sizes). */
static int share_inputs(const tl_cli *cli, const tl_limits *limits, tl_item_list *items, int64_t **bytes)
{
    buf b = { 0 };
    if (g_rank == 0) {
        tl_item_list_init(items);
        tl_inputs_collect(items, cli->inputs, (size_t)cli->ninputs, limits);
        /* Outputs are written here, by process 0: none may name an input. */
        for (size_t i = 0; i < items->n; i++)
            tl_cli_seen_path(cli, items->items[i].path);
        put_i64(&b, (int64_t)items->n);
        for (size_t i = 0; i < items->n; i++) {
            struct stat st;
            const tl_item *it = &items->items[i];
            put_str(&b, it->path);
            put_i64(&b, it->is_stdin); /* what an item is is decided from its bytes, when read */
            put_i64(&b, it->from_walk);
            put_i64(&b, stat(it->path, &st) == 0 ? (int64_t)st.st_size : 0);
        }
    }
    bcast_buf(&b);
    b.pos = 0;
    size_t n = (size_t)get_i64(&b);
    if (b.oom || n > b.len) {
        free(b.p);
        return -1;
    }
    *bytes = calloc(n ? n : 1, sizeof **bytes);
    if (g_rank != 0) {
        tl_item_list_init(items);
        items->items = calloc(n ? n : 1, sizeof *items->items);
        items->cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        char *path = get_str(&b);
        int is_stdin = (int)get_i64(&b), walk = (int)get_i64(&b);
        int64_t size = get_i64(&b);
        if (*bytes)
            (*bytes)[i] = size;
        if (g_rank != 0 && items->items) {
            items->items[items->n++] = (tl_item){ .path = path, .is_stdin = is_stdin, .from_walk = walk };
        } else {
            free(path);
        }
    }
    int bad = b.oom || *bytes == NULL || (g_rank != 0 && items->items == NULL);
    free(b.p);
    return bad ? -1 : 0;
}

/* ---- 3: ranks over all inputs --------------------------------------------- */

/* What rank assignment reads of a profile (run.c's assign_ranks and
 * pair_companions), as one table that both directions walk, so the sender
 * and the receiver cannot drift apart; a member's C type picks its kind (an
 * unlisted type does not compile). The ranks an aggregate input holds follow
 * the table as a counted list. */
enum { WIRE_INT, WIRE_I64, WIRE_STR };
#define WIRE(m)                                                                                                        \
    {                                                                                                                  \
        offsetof(tl_profile, m), _Generic(((tl_profile *)0)->m, int : WIRE_INT, int64_t : WIRE_I64, char * : WIRE_STR) \
    }
static const struct wire_field {
    size_t offset;
    int kind;
} identity_wire[] = {
    WIRE(skipped),      WIRE(id.format), WIRE(id.rank), WIRE(id.world_size), WIRE(id.rank_source),
    WIRE(base_time_ns), WIRE(start_ns),  WIRE(end_ns),  WIRE(id.path),       WIRE(id.rank_detail),
};
#undef WIRE

static void put_identity(buf *b, const tl_profile *p, size_t global_item)
{
    put_i64(b, (int64_t)global_item);
    for (size_t i = 0; i < sizeof identity_wire / sizeof identity_wire[0]; i++) {
        const char *m = (const char *)p + identity_wire[i].offset;
        if (identity_wire[i].kind == WIRE_INT) {
            int v;
            memcpy(&v, m, sizeof v);
            put_i64(b, v);
        } else if (identity_wire[i].kind == WIRE_I64) {
            int64_t v;
            memcpy(&v, m, sizeof v);
            put_i64(b, v);
        } else {
            const char *v;
            memcpy(&v, m, sizeof v);
            put_str(b, v);
        }
    }
    put_i64(b, (int64_t)p->naggregate_ranks);
    for (size_t k = 0; k < p->naggregate_ranks; k++)
        put_i64(b, p->aggregate_ranks[k]);
}

static tl_profile *get_identity(buf *b, size_t *item)
{
    tl_profile *p = malloc(sizeof *p);
    if (p == NULL) {
        b->oom = 1;
        return NULL;
    }
    tl_profile_init(p, "");
    *item = (size_t)get_i64(b);
    for (size_t i = 0; i < sizeof identity_wire / sizeof identity_wire[0]; i++) {
        char *m = (char *)p + identity_wire[i].offset;
        if (identity_wire[i].kind == WIRE_INT) {
            int v = (int)get_i64(b);
            memcpy(m, &v, sizeof v);
        } else if (identity_wire[i].kind == WIRE_I64) {
            int64_t v = get_i64(b);
            memcpy(m, &v, sizeof v);
        } else {
            char *old, *v = get_str(b); /* replaces what tl_profile_init set */
            memcpy(&old, m, sizeof old);
            free(old);
            memcpy(m, &v, sizeof v);
        }
    }
    int64_t n = get_i64(b);
    if (!b->oom && n > 0 && (size_t)n <= (b->len - b->pos) / sizeof(int64_t)) {
        p->aggregate_ranks = malloc((size_t)n * sizeof *p->aggregate_ranks);
        for (int64_t k = 0; k < n; k++) {
            int64_t r = get_i64(b);
            if (p->aggregate_ranks)
                p->aggregate_ranks[p->naggregate_ranks++] = (int)r;
        }
    }
    return p;
}

/* What a profile learns back: what tl_run_assign_ranks settled. The rank
 * goes through tl_identity_set_rank, so a rank by input order becomes the
 * input's problem here as it did on process 0. */
static void put_assigned(buf *b, const tl_profile *p)
{
    put_i64(b, p->id.rank);
    put_i64(b, p->id.rank_source);
    put_i64(b, p->id.session);
    put_i64(b, p->id.companion_of != NULL);
    put_str(b, p->id.rank_detail);
    put_str(b, p->id.companion_of);
}

static void get_assigned(buf *b, tl_profile *p)
{
    int rank = (int)get_i64(b);
    int source = (int)get_i64(b);
    p->id.session = (int)get_i64(b);
    int companion = (int)get_i64(b);
    char *detail = get_str(b);
    if (tl_identity_set_rank(&p->id, rank, source, detail) != 0)
        b->oom = 1;
    free(detail);
    free(p->id.companion_of);
    p->id.companion_of = get_str(b);
    if (p->id.companion_of && !companion) {
        free(p->id.companion_of);
        p->id.companion_of = NULL;
    }
}

typedef struct shell {
    tl_profile *p;
    size_t item, seq;
    int from;
} shell;

static int by_input_order(const void *x, const void *y)
{
    const shell *a = x, *b = y;
    if (a->item != b->item)
        return a->item < b->item ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Process 0 gathers every profile's identity, assigns ranks over all of them
 * in input order and sends each process the answers for its profiles. */
static int assign_ranks_globally(tl_run *run, const size_t *global_item)
{
    buf mine = { 0 };
    for (size_t i = 0; i < run->n; i++)
        put_identity(&mine, run->profiles[i], global_item[run->profiles[i]->item]);
    int rc = 0;
    if (g_rank != 0) {
        send_bytes(mine.p, mine.len, 0);
        size_t n;
        buf back = { 0 };
        back.p = recv_bytes(&n, 0);
        back.len = n;
        for (size_t i = 0; i < run->n; i++)
            get_assigned(&back, run->profiles[i]);
        rc = back.oom || back.p == NULL ? -1 : 0;
        free(back.p);
        free(mine.p);
        return rc;
    }
    /* process 0 */
    shell *all = NULL;
    size_t nall = 0, cap = 0;
    size_t *count = calloc((size_t)g_size, sizeof *count);
    tl_run shells;
    tl_run_init(&shells);
    for (int from = 0; from < g_size; from++) {
        buf in = { 0 };
        if (from == 0) {
            in.p = mine.p;
            in.len = mine.len;
        } else {
            in.p = recv_bytes(&in.len, from);
        }
        for (size_t seq = 0; in.pos < in.len && !in.oom; seq++) {
            size_t item;
            tl_profile *p = get_identity(&in, &item);
            if (p == NULL)
                break;
            if (tl_array_grow(&all, nall, &cap, sizeof *all, 64) != 0) {
                tl_profile_free(p);
                rc = -1;
                break;
            }
            all[nall++] = (shell){ p, item, seq, from };
            if (count)
                count[from]++;
        }
        rc |= in.oom ? -1 : 0;
        if (from != 0)
            free(in.p);
    }
    if (all != NULL)
        qsort(all, nall, sizeof *all, by_input_order);
    shells.profiles = malloc((nall ? nall : 1) * sizeof *shells.profiles);
    if (shells.profiles != NULL) {
        for (size_t i = 0; i < nall; i++)
            shells.profiles[i] = all[i].p;
        shells.n = shells.cap = nall;
        tl_run_assign_ranks(&shells);
    } else {
        rc = -1;
    }
    /* Answers go back in each process's own order: its shells sorted by seq
     * within the global order are in its order already (items ascend). */
    for (int to = 0; to < g_size; to++) {
        buf out = { 0 };
        for (size_t i = 0; i < nall; i++)
            if (all[i].from == to)
                put_assigned(&out, all[i].p);
        if (to == 0) {
            out.pos = 0;
            for (size_t i = 0; i < run->n; i++)
                get_assigned(&out, run->profiles[i]);
        } else {
            send_bytes(out.p, out.len, to);
        }
        rc |= out.oom ? -1 : 0;
        free(out.p);
    }
    run->nranks = shells.nranks;
    tl_run_release(&shells); /* frees the shell profiles */
    free(all);
    free(count);
    free(mine.p);
    return rc;
}

/* ---- 4: the tree of merges ---------------------------------------------- */

/* This process's sessions as one message: [i64 exit code] then the wire
 * (partial.h, partial_wire.c): the session results as their raw bits, by the
 * partial's field tables. No JSON text is made here nor parsed at process 0,
 * and nothing is compressed: the wire is about the size of the partial's
 * JSON, and a copy over shared memory or InfiniBand costs less than zlib. */
static int pack_partial(const tl_aggregate *agg, size_t lo, size_t hi, int code, buf *out)
{
    tl_partial view = tl_partial_options_of(&agg->opt);
    tl_wire w = { 0 };
    int64_t c = code;
    if (tl_array_grow(&w.p, sizeof c, &w.cap, 1, 1 << 16) != 0)
        return -1;
    memcpy(w.p, &c, sizeof c);
    w.len = sizeof c;
    if (tl_partial_wire_pack(&w, &view, agg->sessions + lo, hi - lo) != 0) {
        free(w.p);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->p = w.p;
    out->len = w.len;
    out->cap = w.cap;
    return 0;
}

/* Read the sessions of a packed message into part; *code takes the worst exit code. */
static int unpack_partial(tl_partial *part, const char *p, size_t n, int *code, int from)
{
    int64_t c;
    if (p == NULL || n < sizeof c) {
        fprintf(stderr, "tally-mpi: the sessions of process %d were lost (out of memory)\n", from);
        return -1;
    }
    memcpy(&c, p, sizeof c);
    if (c > *code)
        *code = (int)c;
    char err[512] = "";
    int rc = tl_partial_wire_unpack(part, p + sizeof c, n - sizeof c, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "tally-mpi: process %d: the sessions of process %d: %s\n", g_rank, from, err);
    return rc;
}

/* The partials travel up a binomial tree: in round k (step 2^k) process r
 * with r % 2^(k+1) == 2^k sends what it holds to r - 2^k and is done; the
 * others receive from r + 2^k. What a process holds is its own sessions and
 * the packed partials of the processes below it: merging partials is
 * concatenating their sessions, so the inner processes pass the packed ones
 * on instead of unpacking and packing them again. A process packs its own
 * sessions TL_MPI_WIRE_SESSIONS at a time, each piece a partial of its own,
 * and every piece travels as a message of its own: [u64 count] first, then
 * the pieces in list order. Process 0 unpacks the pieces as they come,
 * --jobs pieces at a time (a copy of each session's values, in its order),
 * and lets each go once unpacked, so it holds the sessions added so far and
 * at most --jobs pieces: where it held every process's whole partial until
 * the last had come, and each twice while it was split (issue 45: process
 * 0's memory, bounded by the sessions it keeps, not by the partials it is
 * sent). The messages come in list order (round k brings the processes
 * 2^k .. 2^(k+1) - 1), so the sessions are added in it. */
#define TL_MPI_WIRE_SESSIONS 16

typedef struct blob {
    char *p;
    size_t n;
    int from;
} blob;

typedef struct blobs {
    blob *v;
    size_t n, cap;
} blobs;

static int blobs_push(blobs *l, char *p, size_t n, int from)
{
    if (TL_ARRAY_GROW(l->v, l->n, l->cap) != 0)
        return -1;
    l->v[l->n++] = (blob){ p, n, from };
    return 0;
}

static void blobs_release(blobs *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].p);
    free(l->v);
    memset(l, 0, sizeof *l);
}

typedef struct parse_job {
    blobs *l;
    tl_aggregate *agg;
    int code, rc;
    size_t next, added; /* the next partial to parse; the partials added so far */
    pthread_mutex_t lock;
    pthread_cond_t turn;
} parse_job;

/* Parse partial i, then wait for its turn and add it to the aggregate: they
 * are added in the order of the list, as tally merge adds them, so the
 * result does not depend on which thread finished first. A partial is freed
 * as soon as it is added, and its packed bytes as soon as it is parsed: at
 * most `jobs` parsed partials are held beside the aggregate, not all of them. */
static void *parse_worker(void *arg)
{
    parse_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->l->n)
            return NULL;
        blob *b = &j->l->v[i];
        tl_partial part;
        tl_partial_init(&part);
        int code = 0;
        int bad = unpack_partial(&part, b->p, b->n, &code, b->from) != 0;
        free(b->p); /* parsed: its packed bytes are not held until the end */
        b->p = NULL;
        pthread_mutex_lock(&j->lock);
        while (j->added != i)
            pthread_cond_wait(&j->turn, &j->lock);
        if (code > j->code)
            j->code = code;
        if (bad)
            j->rc = -1;
        char err[512] = "";
        if (!bad && tl_aggregate_add_partial(j->agg, &part, err, sizeof err) != 0) {
            fprintf(stderr, "tally-mpi: the partial of process %d: %s\n", b->from, err);
            j->rc = -1;
        }
        j->added++;
        pthread_cond_broadcast(&j->turn);
        pthread_mutex_unlock(&j->lock);
        tl_partial_release(&part);
    }
}

/* Process 0: every packed partial into agg, jobs threads wide. */
static int parse_all(tl_aggregate *agg, blobs *l, int jobs, int *code)
{
    parse_job j = { .l = l, .agg = agg, .code = *code };
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.turn, NULL);
    int n = jobs < 1 ? 1 : (size_t)jobs > l->n ? (int)(l->n ? l->n : 1) : jobs;
    pthread_t *t = calloc((size_t)n + 1, sizeof *t);
    int started = 0;
    for (int k = 1; t && k < n; k++)
        if (pthread_create(&t[started + 1], NULL, parse_worker, &j) == 0)
            started++;
    parse_worker(&j);
    for (int k = 1; t && k <= started; k++)
        pthread_join(t[k], NULL);
    free(t);
    pthread_cond_destroy(&j.turn);
    pthread_mutex_destroy(&j.lock);
    *code = j.code;
    return j.rc;
}

/* Send this process's sessions, in pieces, then the pieces it holds from
 * the processes below it (freed as they go). */
static void send_partials(const tl_aggregate *agg, int code, blobs *held, int to)
{
    size_t own = agg->nsessions ? (agg->nsessions + TL_MPI_WIRE_SESSIONS - 1) / TL_MPI_WIRE_SESSIONS : 1;
    uint64_t count = own + held->n;
    send_bytes(&count, sizeof count, to);
    for (size_t k = 0; k < own; k++) {
        size_t lo = k * TL_MPI_WIRE_SESSIONS, hi = lo + TL_MPI_WIRE_SESSIONS;
        if (hi > agg->nsessions)
            hi = agg->nsessions;
        buf b = { 0 };
        if (pack_partial(agg, lo, hi, code, &b) != 0) {
            fprintf(stderr, "tally-mpi: process %d: out of memory packing its partial\n", g_rank);
            MPI_Abort(MPI_COMM_WORLD, TL_EXIT_NO_INPUT);
        }
        send_bytes(b.p, b.len, to);
        free(b.p);
    }
    for (size_t i = 0; i < held->n; i++) {
        send_bytes(held->v[i].p, held->v[i].n, to);
        free(held->v[i].p);
        held->v[i].p = NULL;
    }
}

/* Receive the pieces of process `from` (and those below it): process 0
 * unpacks them into agg, `threads` at a time; the others keep them, to pass
 * them on. */
static int recv_partials(tl_aggregate *agg, blobs *held, int from, int *code, int threads)
{
    size_t n;
    char *c = recv_bytes(&n, from);
    uint64_t count = 0;
    int rc = 0;
    if (n == sizeof count)
        memcpy(&count, c, n);
    else {
        fprintf(stderr, "tally-mpi: process %d: the message of process %d is not a count of partials\n", g_rank, from);
        rc = -1;
    }
    free(c);
    blobs batch = { 0 };
    for (uint64_t i = 0; i < count; i++) {
        size_t len;
        char *p = recv_bytes(&len, from);
        if (blobs_push(g_rank == 0 ? &batch : held, p, len, from) != 0) {
            fprintf(stderr, "tally-mpi: process %d: out of memory taking the partials of process %d\n", g_rank, from);
            MPI_Abort(MPI_COMM_WORLD, TL_EXIT_NO_INPUT);
        }
        if (g_rank != 0)
            continue;
        g_wire_bytes += len;
        if (batch.n == (size_t)threads || i + 1 == count) {
            if (parse_all(agg, &batch, threads, code) != 0)
                rc = -1;
            blobs_release(&batch);
        }
    }
    blobs_release(&batch);
    return rc;
}

/* Process 0's threads once the others are done and wait without spinning (tally_mpi.c): the
 * cores this process may use, at most 64. */
static int node_cores(void)
{
    int cores = tl_cli_cpus();
    return cores > 64 ? 64 : cores;
}

/* The CPUs this job's processes on process 0's node are bound to, together (process 0;
 * node_cpus_known once gathered). mpirun binds each process to a core of its own by default
 * (srun's --cpu-bind may too), so process 0's threads would share one core in the last
 * round and the outputs while the others', given to this job, sit idle: process 0 then
 * takes them (take_node_cores). Only those: never a CPU no process of the job was given. */
static cpu_set_t g_node_cpus;
static int g_node_cpus_known;

int tl_mpi_node_processes(void)
{
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return local;
    MPI_Comm_size(node, &local);
    enum { WORDS = sizeof(cpu_set_t) / sizeof(unsigned long) };
    unsigned long mine[WORDS], all[WORDS];
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        CPU_ZERO(&set); /* adds nothing */
    memcpy(mine, &set, sizeof mine);
    memset(all, 0, sizeof all);
    /* ranks of the node in world order (key 0 for all): world rank 0 is its node's rank 0
     * (elsewhere a node's first process gathers them, and nobody reads them) */
    MPI_Request r;
    if (MPI_Ireduce(mine, all, WORDS, MPI_UNSIGNED_LONG, MPI_BOR, 0, node, &r) == MPI_SUCCESS) {
        tl_mpi_wait(&r, -1, "the CPUs of its node");
        if (g_rank == 0) {
            memcpy(&g_node_cpus, all, sizeof all);
            g_node_cpus_known = CPU_COUNT(&g_node_cpus) > 0;
        }
    }
    MPI_Comm_free(&node);
    return local;
}

/* Process 0, once every other process on its node is done: its threads from here on may run
 * on every CPU the node's processes were bound to (tl_mpi_node_processes). */
static void take_node_cores(int progress)
{
    cpu_set_t now;
    if (!g_node_cpus_known || sched_getaffinity(0, sizeof now, &now) != 0 || CPU_COUNT(&g_node_cpus) <= CPU_COUNT(&now))
        return;
    int before = CPU_COUNT(&now);
    CPU_OR(&now, &now, &g_node_cpus);
    /* refused: the same threads, on fewer CPUs; trimmed (a cpuset): what it got is said */
    if (sched_setaffinity(0, sizeof now, &now) != 0 || sched_getaffinity(0, sizeof now, &now) != 0)
        return;
    if (progress && CPU_COUNT(&now) > before)
        fprintf(stderr,
                "tally-mpi: process 0 was bound to %d of the %d CPUs the job's processes on its node "
                "were bound to, and takes them all for the last round and the outputs\n",
                before, CPU_COUNT(&now));
}

static int reduce_tree(tl_aggregate *agg, int *code, int jobs, int progress)
{
    int rc = 0;
    blobs held = { 0 };
    for (int step = 1; step < g_size; step *= 2) {
        if (g_rank % (2 * step) == step) {
            send_partials(agg, *code, &held, g_rank - step);
            blobs_release(&held);
            return 0;
        }
        if (g_rank % (2 * step) == 0 && g_rank + step < g_size) {
            /* Process 0 unpacks as it receives. In the last round every
             * other process is done and waits without spinning
             * (tally_mpi.c) but the one sending, which packs as it sends:
             * this may use every core of the job here but that one's;
             * before, the others may still be reading, and it keeps to
             * --jobs. (Two threads where the sender packs on the second
             * core were slower than one: 0.082-0.092 s against 0.065-0.072 s
             * for 512 ranks on two cores.) */
            int threads = jobs < 1 ? 1 : jobs;
            if (2 * step >= g_size) {
                take_node_cores(progress);
                if (node_cores() - 1 > threads)
                    threads = node_cores() - 1;
            }
            if (recv_partials(agg, &held, g_rank + step, code, threads) != 0)
                rc = -1;
        }
    }
    blobs_release(&held);
    return rc;
}

/* ---- the hook ---------------------------------------------------------- */

static int analyze(const tl_cli *cli, const tl_analyze_options *opt_in, tl_aggregate *agg, size_t *warnings)
{
    tl_mpi_restore_stderr();
    /* A process other than 0 sends its sessions whole: its bulk stays in
     * memory (it holds its share only); process 0 holds every rank and keeps
     * the bulk of those past the limit on disk (spill.h). */
    tl_analyze_options mine_opt = *opt_in;
    if (g_rank != 0) {
        mine_opt.spill_after = SIZE_MAX;
        mine_opt.spill_after_bytes = UINT64_MAX;
    }
    const tl_analyze_options *opt = &mine_opt;
    tl_aggregate_init(agg, opt);
    *warnings = 0;
    for (int i = 0; i < cli->ninputs; i++)
        if (strcmp(cli->inputs[i], "-") == 0) {
            if (g_rank == 0)
                fprintf(stderr, "tally-mpi: '-' (standard input) cannot be shared between processes\n");
            return g_rank == 0 ? TL_EXIT_USAGE : TL_EXIT_WORKER;
        }
    tl_ingest_options io;
    tl_pipeline_ingest_options(&io, cli, opt);
    io.on_profile = tl_pipeline_analyze_profile;
    io.user = (void *)opt;
    io.progress = g_rank == 0 && cli->progress;

    tl_item_list all;
    int64_t *bytes = NULL;
    int code = TL_EXIT_OK;
    if (share_inputs(cli, &io.limits, &all, &bytes) != 0) {
        fprintf(stderr, "tally-mpi: process %d: out of memory for the input list\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, TL_EXIT_NO_INPUT);
    }
    /* my share, in input order, and where each of its items is in the list */
    int *owner = malloc((all.n ? all.n : 1) * sizeof *owner);
    size_t *global = malloc((all.n ? all.n : 1) * sizeof *global);
    tl_item_list mine;
    tl_item_list_init(&mine);
    mine.items = malloc((all.n ? all.n : 1) * sizeof *mine.items);
    if (owner == NULL || global == NULL || mine.items == NULL) {
        fprintf(stderr, "tally-mpi: process %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, TL_EXIT_NO_INPUT);
    }
    tl_mpi_shares(bytes, all.n, g_size, owner);
    for (size_t i = 0; i < all.n; i++)
        if (owner[i] == g_rank) {
            global[mine.n] = i;
            mine.items[mine.n++] = all.items[i];
        }

    tl_run run;
    tl_run_init(&run);
    if (g_rank == 0) /* discovery problems were found once, here */
        for (size_t i = 0; i < all.nerrors; i++)
            tl_run_add_unreadable(&run, all.errors[i].path, all.errors[i].what);
    double t0 = MPI_Wtime(), c0 = cpu_s();
    tl_run_read_items(&run, &mine, &io);
    double t_read = MPI_Wtime() - t0, c_read = cpu_s() - c0;
    /* Test only: this process stops answering after its read, as a process
     * stopped by a signal or stuck on a filesystem would (tests/cluster/mpi.sh). */
    const char *stop = getenv("TALLY_MPI_TEST_STOP_PROCESS");
    if (stop != NULL && atoi(stop) == g_rank && g_rank != 0)
        raise(SIGSTOP);
    t0 = MPI_Wtime();
    c0 = cpu_s();
    /* the first message every process sends to process 0: one that stopped
     * answering during its read is named here (tl_mpi_wait) */
    if (assign_ranks_globally(&run, global) != 0) {
        fprintf(stderr, "tally-mpi: process %d: out of memory assigning ranks\n", g_rank);
        code = TL_EXIT_NO_INPUT;
    }
    unsigned long long usable = 0;
    for (size_t i = 0; i < run.n; i++)
        usable += tl_profile_usable(run.profiles[i]);
    /* read time and its CPU (the slowest's), bytes and usable profiles, reduced without spinning */
    double tin[4] = { t_read, c_read, (double)run.bytes, (double)usable }, tout[4] = { 0, 0, 0, 0 };
    MPI_Request rq[2];
    MPI_Ireduce(tin, tout, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &rq[0]);
    tl_mpi_wait(&rq[0], -1, "the read times");
    MPI_Ireduce(tin + 2, tout + 2, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &rq[1]);
    tl_mpi_wait(&rq[1], -1, "the counts of profiles");
    unsigned long long total_usable = (unsigned long long)tout[3];
    if (g_rank == 0 && cli->progress)
        fprintf(stderr,
                "tally-mpi: %zu inputs, %.1f MB read and analyzed by %d processes in %.3f s (slowest; %.3f s of CPU, "
                "the most of one process)\n",
                all.n, tout[2] / 1e6, g_size, tout[0], tout[1]);

    /* sessions with their final ranks; warnings are printed by process 0 */
    tl_cli quiet = *cli;
    quiet.quiet = 1;
    size_t ignored = 0;
    int rc = tl_pipeline_sessions(&quiet, &run, agg, &ignored);
    if (rc > code)
        code = rc;
    tl_run_release(&run);
    mine.n = 0; /* the items belong to `all` */
    free(mine.items);
    mine.items = NULL;
    tl_item_list_release(&mine);
    tl_item_list_release(&all);
    free(owner);
    free(global);
    free(bytes);

    if (reduce_tree(agg, &code, cli->jobs, cli->progress) != 0 && code == TL_EXIT_OK)
        code = TL_EXIT_NO_INPUT;
    if (g_rank != 0)
        return TL_EXIT_WORKER;
    /* The other processes are done and wait without spinning (tally_mpi.c): the outputs may
     * be written on every core the job's processes on this node were given (take_node_cores,
     * in the last round). */
    if (g_size > 1 && node_cores() > agg->opt.output_jobs)
        agg->opt.output_jobs = node_cores();
    tl_pipeline_spill_note(cli, opt);
    if (cli->progress)
        fprintf(stderr,
                "tally-mpi: ranks assigned and %zu sessions merged in %.3f s (%.3f s of CPU; %.1f MB received)\n",
                agg->nsessions, MPI_Wtime() - t0, cpu_s() - c0, (double)g_wire_bytes / 1e6);
    for (size_t i = 0; i < agg->nsessions; i++)
        *warnings += tl_pipeline_problems(cli, &agg->sessions[i].id);
    int frc = tl_pipeline_finish(agg, (size_t)total_usable);
    if (frc == TL_EXIT_OK)
        *warnings += tl_pipeline_notes(cli, agg); /* run identity, as tally prints it */
    return frc != TL_EXIT_OK ? frc : code;
}

const tl_engine *tl_mpi_setup(int rank, int size)
{
    static tl_engine engine;
    g_rank = rank;
    g_size = size;
    engine.analyze = analyze;
    engine.shared_argv = 1;
    engine.writes_nothing = rank != 0;
    /* Argument errors would be printed by every process: the workers' stderr
     * goes to a scratch file until the analysis starts (every process parses
     * the same argv, so process 0 says it once). */
    if (rank != 0) {
        FILE *scratch = tmpfile();
        fflush(stderr);
        g_stderr = dup(STDERR_FILENO);
        if (scratch != NULL && g_stderr >= 0)
            dup2(fileno(scratch), STDERR_FILENO);
    }
    return &engine;
}

void tl_mpi_restore_stderr(void)
{
    if (g_stderr >= 0) {
        fflush(stderr);
        dup2(g_stderr, STDERR_FILENO);
        close(g_stderr);
        g_stderr = -1;
    }
}
