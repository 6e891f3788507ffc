/*
 * run.c - every input of a run into profiles, --jobs wide, then ranks and
 * sessions (see ingest.h).
 *
 * Items (files, whole archives) are handed to worker threads in order; each
 * item's profiles are kept with the item and flattened in item order at the
 * end, so the result does not depend on the number of jobs.
 */
#define _GNU_SOURCE
#include "ingest.h"
#include "array.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void tl_run_init(tl_run *run)
{
    memset(run, 0, sizeof *run);
}

void tl_run_release(tl_run *run)
{
    for (size_t i = 0; i < run->n; i++)
        tl_profile_free(run->profiles[i]);
    for (size_t i = 0; i < run->nunreadable; i++)
        tl_identity_release(&run->unreadable[i]);
    for (size_t i = 0; i < run->nnotes; i++)
        free(run->notes[i]);
    free(run->profiles);
    free(run->unreadable);
    free(run->notes);
    free(run->ids);
    memset(run, 0, sizeof *run);
}

static void push_profile(tl_profile ***arr, size_t *n, size_t *cap, tl_profile *p)
{
    if (tl_array_grow(arr, *n, cap, sizeof **arr, 16) != 0) {
        tl_profile_free(p);
        return;
    }
    (*arr)[(*n)++] = p;
}

/* Take ownership of msg ("name: what"). */
static void push_msg(char ***arr, size_t *n, size_t *cap, char *msg)
{
    if (msg == NULL)
        return;
    if (tl_array_grow(arr, *n, cap, sizeof **arr, TL_ARRAY_FIRST) != 0) {
        free(msg);
        return;
    }
    (*arr)[(*n)++] = msg;
}

int tl_run_add_unreadable(tl_run *run, const char *name, const char *what)
{
    if (TL_ARRAY_GROW(run->unreadable, run->nunreadable, run->unreadable_cap) != 0)
        return -1;
    tl_identity *id = &run->unreadable[run->nunreadable];
    if (tl_identity_init(id, name) != 0)
        return -1;
    if (tl_problems_add_text(&id->problems, TL_PROBLEM_UNREADABLE, -1, what) != 0) {
        tl_identity_release(id);
        return -1;
    }
    run->nunreadable++;
    return 0;
}

static void push_note(tl_run *run, char *msg)
{
    push_msg(&run->notes, &run->nnotes, &run->notes_cap, msg);
}

/* ---- damaged rank files ------------------------------------------------- */

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int contains_ci(const char *s, const char *needle)
{
    size_t m = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, m) == 0)
            return 1;
    return 0;
}

/* Extensions of what sits beside traces and is never one: a name with a
 * rank or "trace" in it and one of these is still not a rank file. */
static const char *const document_ext[] = {
    ".html", ".htm", ".md",   ".txt", ".log",  ".out", ".err", ".csv", ".png", ".jpg", ".jpeg",
    ".svg",  ".pdf", ".yaml", ".yml", ".toml", ".ini", ".sh",  ".py",  ".xml", ".mp4", ".gif",
};

const char *tl_looks_like_rank_file(const char *name, const tl_profile *p)
{
    const char *base = tl_path_file_name(name);
    int document = 0;
    for (size_t i = 0; i < sizeof document_ext / sizeof document_ext[0]; i++)
        document |= ends_with_ci(base, document_ext[i]);
    int rank;
    char detail[96];
    /* The file's own name, not its folder's: rank_0/README is no rank file. */
    if (!document && tl_rank_from_path(base, &rank, detail, sizeof detail))
        return "a rank in its name";
    if (ends_with_ci(base, ".json") || ends_with_ci(base, ".json.gz") || ends_with_ci(base, ".json.zst") ||
        ends_with_ci(base, ".trace") || ends_with_ci(base, ".trace.gz"))
        return "named like a profile";
    if (!document && (contains_ci(base, "trace") || contains_ci(base, "profil")))
        return "named like a profile";
    return p != NULL ? p->content_hint : NULL;
}

/* The first warnings that mean "nothing here is JSON at all". */
static int unreadable_kind(const tl_profile *p)
{
    if (!p->skipped || p->id.problems.n == 0)
        return 0;
    const char *w = p->id.problems.v[0].text;
    return strncmp(w, "not JSON", 8) == 0 || strncmp(w, "empty file", 10) == 0 ||
           strncmp(w, "only whitespace", 15) == 0;
}

/* Make the first warning say the input is a damaged profile and why we think so. */
static void mark_damaged(tl_profile *p, const char *why)
{
    char buf[640];
    snprintf(buf, sizeof buf, "damaged profile (%s): %s", why, p->id.problems.v[0].text);
    char *w = strdup(buf);
    if (w == NULL)
        return;
    free(p->id.problems.v[0].text);
    p->id.problems.v[0].text = w;
}

/* ---- rank from a path ----------------------------------------------------- */

/* Find "<word><sep><digits>" in s[0..len) where the word starts at the
 * beginning or after a non-letter, and the digits end at a non-digit. */
static int find_numbered(const char *s, size_t len, const char *word, int *out, size_t *at)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl < len; i++) {
        if (i > 0 && isalpha((unsigned char)s[i - 1]))
            continue;
        if (strncasecmp(s + i, word, wl) != 0)
            continue;
        size_t j = i + wl;
        if (j < len && (s[j] == '-' || s[j] == '_'))
            j++;
        if (j >= len || !isdigit((unsigned char)s[j]))
            continue;
        long v = 0;
        size_t k = j;
        while (k < len && isdigit((unsigned char)s[k]) && v < 10000000)
            v = v * 10 + (s[k++] - '0');
        if (k < len && isdigit((unsigned char)s[k]))
            continue;
        *out = (int)v;
        *at = i;
        return 1;
    }
    return 0;
}

int tl_rank_from_path(const char *path, int *rank, char *detail, size_t dlen)
{
    /* For archive members the member path counts, not the archive's. */
    const char *colon = strrchr(path, ':');
    const char *s = colon && colon[1] ? colon + 1 : path;
    const char *base = tl_path_file_name(path);
    size_t at;
    if (find_numbered(base, strlen(base), "rank", rank, &at)) {
        snprintf(detail, dlen, "file name: %.40s", base + at);
        return 1;
    }
    /* Folders, innermost first: .../rank_3/trace.json */
    for (const char *end = base; end > s;) {
        const char *e = end - 1; /* the '/' */
        const char *b = e;
        while (b > s && b[-1] != '/')
            b--;
        if (find_numbered(b, (size_t)(e - b), "rank", rank, &at)) {
            snprintf(detail, dlen, "folder name: %.*s", (int)(e - b > 40 ? 40 : e - b), b);
            return 1;
        }
        end = b;
    }
    if (find_numbered(base, strlen(base), "worker", rank, &at)) {
        snprintf(detail, dlen, "file name: %.40s", base + at);
        return 1;
    }
    return 0;
}

/* ---- workers ------------------------------------------------------------ */

typedef struct item_result {
    tl_profile **profiles;
    size_t n, cap;
    tl_item_error *problems; /* inputs of the item that could not be read at all */
    size_t nproblems, problems_cap;
    char *ignored_example; /* the first input of this item skipped as not a profile */
    size_t ignored;
} item_result;

typedef struct shared {
    const tl_item_list *items;
    const tl_ingest_options *opt;
    item_result *results;
    atomic_size_t next;
    atomic_size_t done;
    atomic_ullong bytes;
    atomic_ullong reading; /* bytes read so far of the inputs being read (progress) */
    pthread_mutex_t progress_lock;
    struct timespec last_progress;
} shared;

typedef struct item_ctx {
    shared *sh;
    item_result *res;
} item_ctx;

static void progress(shared *sh, int final);

/* An input's reads counted as they go, so that progress moves within one
 * large input (a 10 GB trace shows its megabytes, not nothing for a minute). */
typedef struct counted {
    tl_read_fn read;
    void *ctx;
    shared *sh;
    unsigned long long n;
} counted;

static ssize_t counted_read(void *ctx, void *buf, size_t cap)
{
    counted *c = ctx;
    ssize_t r = c->read(c->ctx, buf, cap);
    if (r > 0) {
        c->n += (unsigned long long)r;
        atomic_fetch_add(&c->sh->reading, (unsigned long long)r);
        progress(c->sh, 0);
    }
    return r;
}

static int on_input(const tl_input *in, void *user)
{
    item_ctx *c = user;
    tl_profile *p;
    if (c->sh->opt->progress) {
        counted cnt = { in->read, in->ctx, c->sh, 0 };
        tl_input mine = *in;
        mine.read = counted_read;
        mine.ctx = &cnt;
        p = tl_ingest_one(&mine, c->sh->opt);
        atomic_fetch_sub(&c->sh->reading, cnt.n); /* counted in bytes once read */
    } else {
        p = tl_ingest_one(in, c->sh->opt);
    }
    if (p == NULL)
        return 1;
    if (p->known_kind == NULL && p->skipped)
        p->known_kind = tl_known_companion(in->name, NULL, 0);
    if (p->known_kind != NULL) { /* named in a note by tl_run_ingest, not read */
        push_profile(&c->res->profiles, &c->res->n, &c->res->cap, p);
        return 0;
    }
    /* Files a directory walk found that are not JSON at all (HTML reports,
     * logs, images next to the traces) are noise, not problems -- unless the
     * name or the bytes say it was meant to be a profile: then it is a
     * damaged rank file (a crashed rank's empty or NUL-filled trace), and
     * that must never vanish (see tl_run_ingest in ingest.h). */
    if (unreadable_kind(p)) {
        const char *why = tl_looks_like_rank_file(in->name, p);
        if (why != NULL) {
            mark_damaged(p, why);
        } else if (in->from_walk) {
            if (c->res->ignored++ == 0)
                c->res->ignored_example = strdup(tl_path_file_name(in->name));
            tl_profile_free(p);
            return 0;
        }
    }
    /* An aggregate is read when it is named. One found by walking a directory
     * is usually a report's --json written next to the traces it summarizes:
     * reading both would count every session twice. */
    if (tl_profile_is_aggregate(p) && !p->skipped && in->from_walk) {
        tl_profile_skip(p, "a tally aggregate found in a directory: not read, so the sessions it holds are not "
                           "counted twice next to their traces; name it to read it");
        tl_profile_drop_aggregate_doc(p);
    }
    atomic_fetch_add(&c->sh->bytes, p->bytes);
    if (c->sh->opt->on_profile != NULL)
        c->sh->opt->on_profile(p, c->sh->opt->user);
    push_profile(&c->res->profiles, &c->res->n, &c->res->cap, p);
    return 0;
}

static void on_problem(const char *name, const char *what, void *user)
{
    item_ctx *c = user;
    tl_item_errors_add(&c->res->problems, &c->res->nproblems, &c->res->problems_cap, name, what);
}

static void progress(shared *sh, int final)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&sh->progress_lock);
    double since =
        (double)(now.tv_sec - sh->last_progress.tv_sec) + (double)(now.tv_nsec - sh->last_progress.tv_nsec) / 1e9;
    if (final || since >= 0.2) {
        sh->last_progress = now;
        /* the inputs read, and the bytes read: of those and of the ones being read */
        fprintf(stderr, "\rtally: read %zu/%zu inputs, %.1f MB%s", atomic_load(&sh->done), sh->items->n,
                (double)(atomic_load(&sh->bytes) + atomic_load(&sh->reading)) / 1e6, final ? "\n" : "");
        fflush(stderr);
    }
    pthread_mutex_unlock(&sh->progress_lock);
}

static void *worker(void *arg)
{
    shared *sh = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&sh->next, 1);
        if (i >= sh->items->n)
            break;
        item_ctx c = { sh, &sh->results[i] };
        tl_item_each(&sh->items->items[i], &sh->opt->limits, on_input, on_problem, &c);
        atomic_fetch_add(&sh->done, 1);
        if (sh->opt->progress)
            progress(sh, 0);
    }
    return NULL;
}

/* ---- ranks and sessions -------------------------------------------------- */

static int64_t abs_start(const tl_profile *p)
{
    int64_t s = p->start_ns <= p->end_ns ? p->start_ns : 0;
    return p->base_time_ns != INT64_MIN ? p->base_time_ns + s : s;
}

static int by_rank_then_start(const void *a, const void *b)
{
    const tl_profile *x = *(tl_profile *const *)a, *y = *(tl_profile *const *)b;
    if (x->id.rank != y->id.rank)
        return x->id.rank < y->id.rank ? -1 : 1;
    int64_t sx = abs_start(x), sy = abs_start(y);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return strcmp(x->id.path, y->id.path);
}

/* libtally writes a report and a trace per process: when both are inputs,
 * the trace is the report's companion (the report's statistics are complete
 * even when trace events were dropped). They match by file stem, else (files
 * renamed) on rank and start time. Pairs split across partials meet only in
 * tl_sessions_settle, which pairs them by stem (settle.c). */
static void pair_companions(tl_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        tl_profile *t = run->profiles[i];
        if (!tl_profile_usable(t) || t->id.format != TL_FMT_TALLY_TRACE)
            continue;
        for (size_t k = 0; k < run->n; k++) {
            const tl_profile *r = run->profiles[k];
            if (tl_profile_usable(r) && r->id.format == TL_FMT_TALLY_REPORT &&
                (tl_identity_same_stem(r->id.path, t->id.path) ||
                 (t->id.rank >= 0 && t->base_time_ns != INT64_MIN && r->id.rank == t->id.rank &&
                  r->base_time_ns == t->base_time_ns))) {
                t->id.companion_of = strdup(r->id.path);
                break;
            }
        }
    }
    /* FramePack's profiling_results/ folder (PROFILING_GUIDE.md's output files):
     * the PyTorch profiler's trace.json of the process that wrote
     * profiling_report.json beside it -- one process, one rank. Paired only
     * when the folder holds one FramePack report and one trace. */
    for (size_t k = 0; k < run->n; k++) {
        const tl_profile *r = run->profiles[k];
        if (!tl_profile_usable(r) || r->id.format != TL_FMT_FRAMEPACK)
            continue;
        tl_profile *trace = NULL, *memlog = NULL;
        size_t traces = 0, reports = 0, memlogs = 0;
        for (size_t i = 0; i < run->n; i++) {
            tl_profile *t = run->profiles[i];
            if (!tl_profile_usable(t) || !tl_identity_same_folder(r->id.path, t->id.path, 1))
                continue;
            reports += t->id.format == TL_FMT_FRAMEPACK;
            if (tl_identity_framepack_trace(&t->id)) {
                traces++;
                trace = t;
            }
            if (t->id.format == TL_FMT_FRAMEPACK_MEMLOG) { /* its memory_log.json */
                memlogs++;
                memlog = t;
            }
        }
        if (reports == 1 && traces == 1)
            trace->id.companion_of = strdup(r->id.path);
        if (reports == 1 && memlogs == 1)
            memlog->id.companion_of = strdup(r->id.path);
    }
    /* torch.profiler's export_memory_timeline JSON or export_stacks text
     * beside the trace the same profiler exported (export_chrome_trace): one
     * process, when the folder holds one such trace and one such file */
    for (size_t k = 0; k < run->n; k++) {
        tl_profile *m = run->profiles[k];
        if (!tl_profile_usable(m) || (m->id.format != TL_FMT_MEM_TIMELINE && m->id.format != TL_FMT_STACKS))
            continue;
        const tl_profile *trace = NULL;
        size_t traces = 0, timelines = 0;
        for (size_t i = 0; i < run->n; i++) {
            const tl_profile *t = run->profiles[i];
            if (!tl_profile_usable(t) || !tl_identity_same_folder(m->id.path, t->id.path, 1))
                continue;
            timelines += t->id.format == m->id.format;
            if (t->id.format == TL_FMT_KINETO) {
                traces++;
                trace = t;
            }
        }
        if (timelines == 1 && traces == 1)
            m->id.companion_of = strdup(trace->id.path);
    }
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* The ranks the sessions of aggregate inputs hold, sorted (NULL when none). */
static int *aggregate_ranks(const tl_run *run, size_t *n)
{
    size_t total = 0;
    *n = 0;
    for (size_t i = 0; i < run->n; i++)
        if (tl_profile_usable(run->profiles[i]) && tl_profile_is_aggregate(run->profiles[i]))
            total += run->profiles[i]->naggregate_ranks;
    int *v = total ? malloc(total * sizeof *v) : NULL;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < run->n; i++) {
        const tl_profile *p = run->profiles[i];
        if (tl_profile_usable(p) && tl_profile_is_aggregate(p))
            for (size_t k = 0; k < p->naggregate_ranks; k++)
                v[(*n)++] = p->aggregate_ranks[k];
    }
    qsort(v, *n, sizeof *v, by_int);
    return v;
}

static void assign_ranks(tl_run *run)
{
    pair_companions(run);
    size_t n = 0, nagg = 0;
    tl_profile **usable = malloc((run->n ? run->n : 1) * sizeof *usable);
    if (usable == NULL)
        return;
    /* Ranks in aggregate inputs are taken: a raw input without a rank of
     * its own does not get one of them. */
    int *agg = aggregate_ranks(run, &nagg);
    for (size_t i = 0; i < run->n; i++) {
        tl_profile *p = run->profiles[i];
        if (!tl_profile_usable(p) || tl_profile_is_aggregate(p))
            continue;
        usable[n++] = p;
        int rank;
        char detail[TL_RANK_DETAIL_MAX + 1];
        if (p->id.rank < 0 && tl_rank_from_path(p->id.path, &rank, detail, sizeof detail))
            tl_identity_set_rank(&p->id, rank, TL_RANK_NAME, detail);
    }
    /* The rest get the lowest ranks nobody has, in input (sorted) order. */
    int next = 0;
    for (size_t i = 0; i < n; i++) {
        if (usable[i]->id.rank >= 0)
            continue;
        for (;;) {
            int taken = 0;
            for (size_t j = 0; j < n && !taken; j++)
                taken = usable[j]->id.rank == next;
            taken = taken || (nagg && bsearch(&next, agg, nagg, sizeof *agg, by_int) != NULL);
            if (!taken)
                break;
            next++;
        }
        tl_identity_set_rank(&usable[i]->id, next, TL_RANK_ORDER,
                             "no rank in the content or the name; assigned by input order");
        /* The only input of a run (a single-process trace): rank 0 is no guess
         * among several inputs, so not a warning -- validate says nothing of
         * it either, and --strict must not fail what validate passes. */
        tl_problems *pl = &usable[i]->id.problems;
        if (n == 1 && nagg == 0 && pl->n > 0 && pl->v[pl->n - 1].kind == TL_PROBLEM_RANK_ORDER) {
            free(pl->v[--pl->n].text);
            tl_identity_set_rank(&usable[i]->id, next, TL_RANK_ORDER,
                                 "no rank in the content or the name; the only input");
            free(pl->v[--pl->n].text);
        }
        next++;
    }
    qsort(usable, n, sizeof *usable, by_rank_then_start);
    int ranks = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && usable[i]->id.rank == usable[i - 1]->id.rank) {
            usable[i]->id.session = usable[i - 1]->id.session + 1;
        } else {
            usable[i]->id.session = 0;
            ranks++;
        }
    }
    run->nranks = ranks;
    free(usable);
    free(agg);
}

void tl_run_assign_ranks(tl_run *run)
{
    assign_ranks(run);
}

size_t tl_run_ingest(tl_run *run, const char *const *paths, size_t npaths, const tl_ingest_options *opt)
{
    tl_item_list items;
    tl_item_list_init(&items);
    tl_inputs_collect(&items, paths, npaths, &opt->limits);
    for (size_t i = 0; i < items.nerrors; i++)
        tl_run_add_unreadable(run, items.errors[i].path, items.errors[i].what);
    for (size_t i = 0; i < items.nnotes; i++)
        push_note(run, strdup(items.notes[i]));
    run->duplicates = items.duplicates;
    run->ids = malloc((items.n ? items.n : 1) * sizeof *run->ids);
    for (size_t i = 0; run->ids != NULL && i < items.n; i++)
        if (items.items[i].has_id)
            run->ids[run->nids++] = items.items[i].id;
    tl_run_read_items(run, &items, opt);
    assign_ranks(run);
    tl_item_list_release(&items);
    size_t usable = 0;
    for (size_t i = 0; i < run->n; i++)
        usable += tl_profile_usable(run->profiles[i]);
    return usable;
}

void tl_run_read_items(tl_run *run, const tl_item_list *list, const tl_ingest_options *opt)
{
    const tl_item_list items = *list;
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.items = &items;
    sh.opt = opt;
    sh.results = calloc(items.n ? items.n : 1, sizeof *sh.results);
    pthread_mutex_init(&sh.progress_lock, NULL);
    if (sh.results == NULL)
        goto out;
    int jobs = opt->jobs < 1 ? 1 : opt->jobs;
    if ((size_t)jobs > items.n)
        jobs = items.n ? (int)items.n : 1;
    pthread_t *threads = calloc((size_t)jobs, sizeof *threads);
    int started = 0;
    for (int j = 1; threads && j < jobs; j++)
        if (pthread_create(&threads[j], NULL, worker, &sh) == 0)
            started++;
    worker(&sh); /* this thread works too */
    for (int j = 1; threads && j <= started; j++)
        pthread_join(threads[j], NULL);
    free(threads);
    if (opt->progress && items.n)
        progress(&sh, 1);
    char *example = NULL;
    for (size_t i = 0; i < items.n; i++) {
        item_result *r = &sh.results[i];
        for (size_t k = 0; k < r->n; k++) {
            r->profiles[k]->item = i;
            const tl_profile *p = r->profiles[k];
            if (p->nest_lost[0]) {
                size_t len = strlen(p->id.path) + sizeof p->nest_lost + 8;
                char *msg = malloc(len);
                if (msg != NULL)
                    snprintf(msg, len, "%s: %s", p->id.path, p->nest_lost);
                push_note(run, msg);
            }
            if (p->unread_device_events) {
                size_t len = strlen(p->id.path) + 256;
                char *msg = malloc(len);
                if (msg != NULL)
                    snprintf(msg, len,
                             "%s: %" PRIu64 " events of category %s (an MTIA accelerator's device events) "
                             "are not analysed: the GPU breakdown and its rules read CUDA and ROCm device events only",
                             p->id.path, p->unread_device_events, p->unread_device_cat);
                push_note(run, msg);
            }
            if (p->known_kind != NULL) {
                size_t len = strlen(p->id.path) + strlen(p->known_kind) + 32;
                char *msg = malloc(len);
                if (msg != NULL)
                    snprintf(msg, len, "%s: %s; not read as a profile", p->id.path, p->known_kind);
                push_note(run, msg);
                tl_profile_free(r->profiles[k]);
                continue;
            }
            push_profile(&run->profiles, &run->n, &run->cap, r->profiles[k]);
        }
        for (size_t k = 0; k < r->nproblems; k++) {
            tl_run_add_unreadable(run, r->problems[k].path, r->problems[k].what);
            free(r->problems[k].path);
            free(r->problems[k].what);
        }
        free(r->profiles);
        free(r->problems);
        if (r->ignored && example == NULL) {
            example = r->ignored_example;
            r->ignored_example = NULL;
        }
        run->ignored += r->ignored;
        free(r->ignored_example);
    }
    if (run->ignored) {
        /* One note for all of them: a job directory has READMEs, logs, HTML.
         * (Read in parts, as tally-mpi does, the last part's note has the total.) */
        size_t len = (example ? strlen(example) : 0) + 200;
        char *msg = malloc(len);
        if (msg != NULL)
            snprintf(msg, len,
                     "%zu file%s found by walking or in archives %s (not JSON, not named like "
                     "one) and %s skipped, e.g. %s",
                     run->ignored, run->ignored == 1 ? "" : "s",
                     run->ignored == 1 ? "is not a profile" : "are not profiles", run->ignored == 1 ? "was" : "were",
                     example ? example : "?");
        push_note(run, msg);
    }
    free(example);
    run->bytes += atomic_load(&sh.bytes);
out:
    free(sh.results);
    pthread_mutex_destroy(&sh.progress_lock);
}
