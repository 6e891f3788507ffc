/*
 * spill.c - sessions whose bulk waits on disk (spill.h).
 *
 * One file per process, appended to under a lock (the reading threads spill at once) and read
 * with pread (no shared position). A record is the session's bulk in tally-mpi's wire format
 * (partial.h: tl_partial_session_bulk_fields, the session's own field descriptions, raw values
 * that read back bit for bit); the rest of the session stays in memory as it is.
 */
#define _GNU_SOURCE
#include "spill.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "partial.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_back = PTHREAD_COND_INITIALIZER; /* a session's bulk came back */
static int g_fd = -1;                                    /* the file, once made; -1 before */
static int g_failed;                                     /* it could not be made or written: sessions stay whole */
static uint64_t g_end;                                   /* bytes written */
static size_t g_written;                                 /* sessions written */
static atomic_size_t g_seen;                             /* sessions offered */
static _Atomic uint64_t g_offered;                       /* their details' bytes (with a byte limit) */

/* "256": a count of sessions; "512M", "2G", "100K" (B or iB may follow; powers of 1024): bytes of
 * details. 0 when it is one, -1 when not. */
static int parse_limit(const char *e, size_t *sessions, uint64_t *bytes)
{
    if (*e < '0' || *e > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(e, &end, 10);
    if (errno != 0)
        return -1;
    if (*end == '\0') {
        *sessions = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
        *bytes = UINT64_MAX;
        return 0;
    }
    int shift;
    switch (end[0]) {
    case 'K':
    case 'k':
        shift = 10;
        break;
    case 'M':
    case 'm':
        shift = 20;
        break;
    case 'G':
    case 'g':
        shift = 30;
        break;
    default: /* a space, a fraction, a unit we do not take */
        return -1;
    }
    const char *rest = end + 1;
    if (strcmp(rest, "") != 0 && strcmp(rest, "B") != 0 && strcmp(rest, "iB") != 0)
        return -1;
    if (v > (UINT64_MAX >> shift))
        return -1;
    *sessions = SIZE_MAX;
    *bytes = (uint64_t)v << shift;
    return 0;
}

void tl_spill_limits(size_t *sessions, uint64_t *bytes)
{
    const char *e = getenv("TALLY_SPILL_AFTER");
    if (e != NULL && *e) {
        if (parse_limit(e, sessions, bytes) == 0)
            return;
        fprintf(stderr,
                "tally: TALLY_SPILL_AFTER='%.40s' is neither a count of sessions nor a size (512M, 2G); %d MiB is "
                "used\n",
                e, TL_SPILL_AFTER_MIB_DEFAULT);
    }
    *sessions = SIZE_MAX;
    *bytes = (uint64_t)TL_SPILL_AFTER_MIB_DEFAULT << 20;
}

/* The file in $TMPDIR (else /tmp), unlinked from the start. Called under the lock. */
static int open_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) { /* a filesystem without O_TMPFILE: a named file, unlinked at once */
        char path[4096];
        snprintf(path, sizeof path, "%s/tally-spill-XXXXXX", dir);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0) {
        fprintf(stderr, "tally: cannot make a temporary file in %s (%s): every session is kept in memory\n", dir,
                strerror(errno));
        g_failed = 1;
    }
    return fd;
}

static int has_bulk(const tl_session *s)
{
    return s->nnames > 0 || s->nkernels > 0 || s->nkinfo > 0 || s->timeline.nlanes > 0 || s->calltree.n > 0 ||
           s->nmem > 0;
}

static int write_all(int fd, const char *p, size_t n, uint64_t at)
{
    while (n > 0) {
        ssize_t k = pwrite(fd, p, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
        at += (uint64_t)k;
    }
    return 0;
}

void tl_spill_session(tl_session *s, size_t after, uint64_t after_bytes)
{
    if ((after == SIZE_MAX && after_bytes == UINT64_MAX) || s->spill.out || s->spill.len > 0 || !has_bulk(s))
        return;
    if (after != SIZE_MAX && atomic_fetch_add(&g_seen, 1) < after)
        return;
    if (after_bytes != UINT64_MAX) { /* kept while the details offered so far fit */
        /* unpacked from tally-mpi's wire: its size came with it */
        uint64_t b = s->spill.wire_size ? s->spill.wire_size : tl_partial_wire_bulk_size(s);
        s->spill.wire_size = 0; /* used once: a later offer measures what is there then */
        if (atomic_fetch_add(&g_offered, b) + b <= after_bytes)
            return;
    }
    tl_wire w = { 0 };
    if (tl_partial_wire_pack_bulk(&w, s) != 0) {
        free(w.p);
        return; /* out of memory: kept whole */
    }
    pthread_mutex_lock(&g_lock);
    if (g_fd < 0 && !g_failed)
        g_fd = open_file();
    int ok = 0;
    uint64_t at = g_end;
    if (g_fd >= 0 && !g_failed) {
        if (write_all(g_fd, w.p, w.len, at) == 0) {
            g_end += w.len;
            g_written++;
            ok = 1;
        } else {
            fprintf(stderr,
                    "tally: cannot write its temporary file (%s): the sessions from here on are kept in memory\n",
                    strerror(errno));
            g_failed = 1;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (ok) {
        s->spill.at = at;
        s->spill.len = w.len;
        if (s->mem != NULL && s->nmem > 0) { /* the range stays while out (tl_session_mem_range) */
            s->spill.mem_first_ns = s->mem[0].ts_ns;
            s->spill.mem_last_ns = s->mem[s->nmem - 1].ts_ns;
        }
        tl_session_release_bulk(s);
    }
    free(w.p);
}

/* Read s's record back into `back` (a session holding only the bulk). No lock: the record
 * and the file's descriptor do not change once written. Stops the process when it cannot:
 * every number after would be missing this session's part. */
static void read_back(const tl_session *s, tl_session *back)
{
    char *buf = malloc(s->spill.len ? s->spill.len : 1);
    size_t got = 0;
    while (buf != NULL && got < s->spill.len) {
        ssize_t k = pread(g_fd, buf + got, s->spill.len - got, (off_t)(s->spill.at + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    char err[256] = "";
    tl_session_init(back);
    if (buf == NULL || got < s->spill.len ||
        tl_partial_wire_unpack_bulk(back, buf, s->spill.len, err, sizeof err) != 0) {
        fprintf(stderr,
                "tally: %s: reading its details back from the temporary file failed (%s); stopping: the "
                "numbers would be incomplete\n",
                s->id.path ? s->id.path : "a session",
                buf == NULL ? "out of memory"
                : err[0]    ? err
                            : strerror(errno));
        exit(3);
    }
    free(buf);
}

/* Under the lock: the outputs are written by several threads at once (spill.h). The first
 * holder of a session that is out reads it back outside the lock (`coming`: a second holder
 * waits for it), so that one thread's read does not stall the others' holds and drops. */
void tl_spill_hold(const tl_session *cs)
{
    tl_session *s = (tl_session *)cs; /* the bulk's place only (spill.h) */
    if (s->spill.len == 0)
        return;
    pthread_mutex_lock(&g_lock);
    if (s->spill.held++ == 0 && s->spill.out) {
        s->spill.coming = 1;
        pthread_mutex_unlock(&g_lock);
        tl_session back;
        read_back(s, &back);
        pthread_mutex_lock(&g_lock);
        tl_session_take_bulk(s, &back);
        s->spill.coming = 0;
        pthread_cond_broadcast(&g_back);
        pthread_mutex_unlock(&g_lock);
        tl_session_release(&back);
        return;
    }
    while (s->spill.coming)
        pthread_cond_wait(&g_back, &g_lock);
    pthread_mutex_unlock(&g_lock);
}

void tl_spill_drop(const tl_session *cs)
{
    tl_session *s = (tl_session *)cs;
    if (s->spill.len == 0)
        return;
    pthread_mutex_lock(&g_lock);
    if (s->spill.held > 0 && --s->spill.held == 0)
        tl_session_release_bulk(s);
    pthread_mutex_unlock(&g_lock);
}

int tl_spill_keep_whole(void *ctx, tl_session *s)
{
    (void)ctx;
    if (s->spill.len == 0)
        return 0;
    if (s->spill.out) {
        tl_session back;
        read_back(s, &back);
        tl_session_take_bulk(s, &back);
        tl_session_release(&back);
    }
    s->spill.len = 0;
    s->spill.held = 0;
    return 0;
}

void tl_spill_stats(size_t *sessions, uint64_t *bytes)
{
    pthread_mutex_lock(&g_lock);
    *sessions = g_written;
    *bytes = g_end;
    pthread_mutex_unlock(&g_lock);
}
