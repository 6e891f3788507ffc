/*
 * discover.c - files, directories and archives (see discover.h).
 */
#define _GNU_SOURCE
#include "discover.h"
#include "array.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <stdint.h>

void tl_limits_init(tl_limits *l)
{
    l->max_members = 100000;
    l->max_input_bytes = 64ull << 30;
    l->max_archive_bytes = 256ull << 30;
    l->max_depth = 64;
}

void tl_item_list_init(tl_item_list *l)
{
    memset(l, 0, sizeof *l);
}

void tl_item_list_release(tl_item_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].path);
    for (size_t i = 0; i < l->nerrors; i++) {
        free(l->errors[i].path);
        free(l->errors[i].what);
    }
    for (size_t i = 0; i < l->nnotes; i++)
        free(l->notes[i]);
    free(l->items);
    free(l->errors);
    free(l->notes);
    memset(l, 0, sizeof *l);
}

static void push_msg(char ***arr, size_t *n, size_t *cap, const char *path, const char *what)
{
    if (tl_array_grow(arr, *n, cap, sizeof **arr, TL_ARRAY_FIRST) != 0)
        return;
    size_t len = strlen(path) + strlen(what) + 3;
    char *msg = malloc(len);
    if (msg == NULL)
        return;
    snprintf(msg, len, "%s: %s", path, what);
    (*arr)[(*n)++] = msg;
}

void tl_item_errors_add(tl_item_error **v, size_t *n, size_t *cap, const char *path, const char *what)
{
    if (tl_array_grow(v, *n, cap, sizeof **v, TL_ARRAY_FIRST) != 0)
        return;
    tl_item_error e = { strdup(path), strdup(what) };
    if (e.path == NULL || e.what == NULL) {
        free(e.path);
        free(e.what);
        return;
    }
    (*v)[(*n)++] = e;
}

static void add_error(tl_item_list *l, const char *path, const char *what)
{
    tl_item_errors_add(&l->errors, &l->nerrors, &l->errors_cap, path, what);
}

static void add_note(tl_item_list *l, const char *path, const char *what)
{
    push_msg(&l->notes, &l->nnotes, &l->notes_cap, path, what);
}

static void add_item(tl_item_list *l, const char *path, int from_walk, int is_stdin, const struct stat *st)
{
    if (tl_array_grow(&l->items, l->n, &l->cap, sizeof *l->items, 32) != 0)
        return;
    char *copy = strdup(path);
    if (copy == NULL)
        return;
    tl_file_id id = { st ? st->st_dev : 0, st ? st->st_ino : 0 };
    l->items[l->n++] = (tl_item){ copy, from_walk, is_stdin, st != NULL, id };
}

/* zip, 7z, xz, bzip2, zstd, rar, or a tar (its "ustar" magic at 257). gzip is
 * an archive only if what it inflates to is a tar: that is checked apart. */
int tl_bytes_look_like_archive(const unsigned char *b, size_t n)
{
    if (n >= 4 && b[0] == 'P' && b[1] == 'K' && (b[2] == 3 || b[2] == 5) && (b[3] == 4 || b[3] == 6))
        return 1;
    if (n >= 6 && memcmp(b, "7z\xbc\xaf\x27\x1c", 6) == 0)
        return 1;
    if (n >= 6 && memcmp(b,
                         "\xfd"
                         "7zXZ\0",
                         6) == 0)
        return 1;
    if (n >= 3 && memcmp(b, "BZh", 3) == 0)
        return 1;
    if (n >= 4 && memcmp(b, "\x28\xb5\x2f\xfd", 4) == 0)
        return 1;
    if (n >= 4 && memcmp(b, "Rar!", 4) == 0)
        return 1;
    if (n >= 262 && memcmp(b + 257, "ustar", 5) == 0)
        return 1;
    return 0;
}

/* zstd, xz or bzip2: a compression of one stream, which holds a tar (an
 * archive) or a single file (`trace.json.zst`), told apart by libarchive. */
static int compressed_stream(const unsigned char *b, size_t n)
{
    return (n >= 4 && memcmp(b, "\x28\xb5\x2f\xfd", 4) == 0) ||
           (n >= 6 && memcmp(b,
                             "\xfd"
                             "7zXZ\0",
                             6) == 0) ||
           (n >= 3 && memcmp(b, "BZh", 3) == 0);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is st the regular file this process's standard output goes to? */
static int is_own_stdout(const struct stat *st)
{
    struct stat out;
    return fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode) && out.st_dev == st->st_dev &&
           out.st_ino == st->st_ino;
}

static void walk(tl_item_list *l, const char *dir, int depth, const tl_limits *lim)
{
    if (depth > lim->max_depth) {
        add_error(l, dir, "directory nesting deeper than the limit; not read");
        return;
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        add_error(l, dir, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
            continue;
        if (tl_array_grow(&names, n, &cap, sizeof *names, 64) != 0)
            break;
        names[n] = strdup(e->d_name);
        if (names[n] != NULL)
            n++;
    }
    closedir(d);
    /* Byte order, not the locale's: the same tree gives the same order everywhere. */
    if (n > 1)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (path != NULL) {
            int slash = dir[0] && dir[strlen(dir) - 1] == '/';
            /* "./x" is just "x": the same file gets the same name however it was reached. */
            if (strcmp(dir, ".") == 0 || strcmp(dir, "./") == 0)
                snprintf(path, len, "%s", names[i]);
            else
                snprintf(path, len, "%s%s%s", dir, slash ? "" : "/", names[i]);
            struct stat st, lst;
            if (lstat(path, &lst) != 0 || stat(path, &st) != 0) {
                add_error(l, path, strerror(errno));
            } else if (S_ISDIR(st.st_mode)) {
                /* Symlinked directories are not followed: they can loop. */
                if (!S_ISLNK(lst.st_mode))
                    walk(l, path, depth + 1, lim);
                else
                    add_note(l, path, "a symbolic link to a directory; not followed");
            } else if (S_ISREG(st.st_mode) && is_own_stdout(&st)) {
                /* `tally aggregate run > run/all.json`: the shell made the
                 * file before tally ran, empty; read, it was a damaged rank */
                add_note(l, path, "this command's standard output; not read");
            } else if (S_ISREG(st.st_mode)) {
                add_item(l, path, 1, 0, &st);
            } else {
                /* A FIFO or device found by walking would block or never end:
                 * only ones named on the command line are read. */
                add_note(l, path, "not a regular file (FIFO, socket or device); not read (name it to read it)");
            }
            free(path);
        }
        free(names[i]);
    }
    free(names);
}

/* Same (dev, ino), then first found first. */
typedef struct id_ref {
    dev_t dev;
    ino_t ino;
    size_t at;
} id_ref;

static int by_id(const void *a, const void *b)
{
    const id_ref *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Drop every item whose (dev, ino) an earlier item has: O(n log n), order kept.
 * One note names the first pair; the count says how many were dropped. */
static void dedup(tl_item_list *l)
{
    if (l->n < 2)
        return;
    id_ref *ids = malloc(l->n * sizeof *ids);
    unsigned char *drop = calloc(l->n, 1);
    size_t nids = 0;
    if (ids == NULL || drop == NULL)
        goto out;
    for (size_t i = 0; i < l->n; i++)
        if (l->items[i].has_id)
            ids[nids++] = (id_ref){ l->items[i].id.dev, l->items[i].id.ino, i };
    qsort(ids, nids, sizeof *ids, by_id);
    size_t first_dup = SIZE_MAX, first_of = 0;
    for (size_t k = 1; k < nids; k++) {
        if (ids[k].dev != ids[k - 1].dev || ids[k].ino != ids[k - 1].ino)
            continue;
        drop[ids[k].at] = 1;
        l->duplicates++;
        if (first_dup == SIZE_MAX || ids[k].at < first_dup) {
            first_dup = ids[k].at;
            size_t j = k;
            while (j > 0 && ids[j - 1].dev == ids[k].dev && ids[j - 1].ino == ids[k].ino)
                j--;
            first_of = ids[j].at;
        }
    }
    if (l->duplicates) {
        char what[600];
        snprintf(what, sizeof what, "the same file as %.400s; read once%s", l->items[first_of].path,
                 l->duplicates > 1 ? " (and more inputs reached twice: see the count)" : "");
        add_note(l, l->items[first_dup].path, what);
        if (l->duplicates > 1) {
            snprintf(what, sizeof what,
                     "%zu inputs were reached more than once (the same path twice, "
                     "a directory and a file in it, a link); each is read once",
                     l->duplicates);
            add_note(l, "inputs", what);
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (drop[i])
            free(l->items[i].path);
        else
            l->items[m++] = l->items[i];
    }
    l->n = m;
out:
    free(ids);
    free(drop);
}

size_t tl_inputs_collect(tl_item_list *l, const char *const *paths, size_t npaths, const tl_limits *lim)
{
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (strcmp(paths[i], TL_STDIN_PATH) == 0) {
            add_item(l, TL_STDIN_PATH, 0, 1, fstat(STDIN_FILENO, &st) == 0 ? &st : NULL);
            continue;
        }
        if (stat(paths[i], &st) != 0) {
            add_error(l, paths[i], strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode))
            walk(l, paths[i], 0, lim);
        else
            add_item(l, paths[i], 0, 0, &st);
    }
    dedup(l);
    return l->n;
}

/* ---- reading an item ---------------------------------------------------- */

/* An opened item: its descriptor and the first bytes already read from it
 * (to tell an archive from a file), handed out again before the rest. This is
 * what lets a pipe be read once. */
typedef struct head_source {
    int fd;
    unsigned char *head;
    size_t len, pos;
    uint64_t read, limit; /* bytes handed out; the per-input limit */
    int over_limit;
    unsigned char *block; /* libarchive's read buffer (archives only) */
} head_source;

#define TL_DISCOVER_BLOCK 65536

static ssize_t head_read(void *ctx, void *buf, size_t cap)
{
    head_source *h = ctx;
    if (h->read >= h->limit) {
        h->over_limit = 1;
        errno = EFBIG;
        return -1;
    }
    ssize_t n;
    if (h->pos < h->len) {
        n = (ssize_t)(h->len - h->pos < cap ? h->len - h->pos : cap);
        memcpy(buf, h->head + h->pos, (size_t)n);
        h->pos += (size_t)n;
    } else {
        n = tl_fd_read(&h->fd, buf, cap);
    }
    if (n > 0)
        h->read += (uint64_t)n;
    return n;
}

/* Read into h->head until it holds want bytes or the input ends. */
static int head_fill(head_source *h, size_t want)
{
    if (want > TL_DISCOVER_GZIP_HEAD)
        want = TL_DISCOVER_GZIP_HEAD;
    unsigned char *x = realloc(h->head, want);
    if (x == NULL)
        return -1;
    h->head = x;
    while (h->len < want) {
        ssize_t n = tl_fd_read(&h->fd, h->head + h->len, want - h->len);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        h->len += (size_t)n;
    }
    return 0;
}

/* Does the gzip in h->head inflate to a tar? Inflates the first 512 bytes,
 * reading more of the compressed stream into the head when needed (it is
 * handed out again either way). */
static int gzip_holds_tar(head_source *h)
{
    unsigned char out[512];
    int tar = 0;
    for (;;) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
            return 0;
        zs.next_in = h->head;
        zs.avail_in = (uInt)h->len;
        zs.next_out = out;
        zs.avail_out = sizeof out;
        int r = inflate(&zs, Z_SYNC_FLUSH);
        size_t got = sizeof out - zs.avail_out;
        inflateEnd(&zs);
        if (got >= 262) {
            tar = memcmp(out + 257, "ustar", 5) == 0;
            break;
        }
        /* More compressed bytes could give more output: read them, up to the cap. */
        size_t before = h->len;
        if ((r != Z_OK && r != Z_BUF_ERROR) || h->len >= TL_DISCOVER_GZIP_HEAD || head_fill(h, h->len * 2) != 0 ||
            h->len == before)
            break;
    }
    return tar;
}

/* Open the item once and read its head. Returns the kind, or -1 (errno). */
static int open_item(const tl_item *item, const tl_limits *lim, head_source *h)
{
    memset(h, 0, sizeof *h);
    h->limit = lim->max_input_bytes;
    h->fd = item->is_stdin ? STDIN_FILENO : open(item->path, O_RDONLY | O_CLOEXEC);
    if (h->fd < 0)
        return -1;
    if (head_fill(h, TL_DISCOVER_HEAD) != 0) {
        int err = errno;
        if (!item->is_stdin)
            close(h->fd);
        free(h->head);
        h->head = NULL;
        errno = err;
        return -1;
    }
    if (tl_bytes_look_like_archive(h->head, h->len))
        return TL_ITEM_ARCHIVE;
    if (h->len >= 2 && h->head[0] == 0x1f && h->head[1] == 0x8b && gzip_holds_tar(h))
        return TL_ITEM_ARCHIVE;
    return TL_ITEM_FILE;
}

static void close_item(const tl_item *item, head_source *h)
{
    if (h->fd >= 0 && !item->is_stdin)
        close(h->fd);
    free(h->head);
    free(h->block);
}

static const char *display_name(const tl_item *item)
{
    return item->is_stdin ? TL_STDIN_NAME : item->path;
}

typedef struct member_source {
    struct archive *a;
    uint64_t read, limit;
    uint64_t *archive_total, archive_limit;
    int over_limit;
    char error[200]; /* libarchive's words when the member's data broke */
    /* The current data block (archive_read_data_block): handed out in
     * pieces, so a member cut short keeps every byte before the cut
     * (archive_read_data drops the bytes of a call that hits the cut). */
    const unsigned char *blk;
    size_t blk_len, blk_pos;
    int64_t at;      /* member offset of the next byte handed out */
    int64_t blk_off; /* member offset of blk[0]: past `at` for a sparse hole */
    int eof;
} member_source;

static ssize_t member_read(void *ctx, void *buf, size_t cap)
{
    member_source *m = ctx;
    if (m->read >= m->limit || *m->archive_total >= m->archive_limit) {
        m->over_limit = 1;
        errno = EFBIG;
        return -1;
    }
    while (m->blk_pos == m->blk_len && !m->eof) {
        const void *b;
        size_t len;
        la_int64_t off;
        int r = archive_read_data_block(m->a, &b, &len, &off);
        if (r == ARCHIVE_EOF) {
            m->eof = 1;
            break;
        }
        if (r < ARCHIVE_WARN) {
            if (m->error[0] == '\0')
                snprintf(m->error, sizeof m->error, "%s",
                         archive_error_string(m->a) ? archive_error_string(m->a) : "read error");
            errno = EIO;
            return -1;
        }
        m->blk = b;
        m->blk_len = len;
        m->blk_pos = 0;
        m->blk_off = off;
    }
    if (m->blk_pos == m->blk_len)
        return 0;
    size_t n;
    if (m->blk_off > m->at) {
        /* a hole of a sparse member reads as zeros */
        uint64_t hole = (uint64_t)(m->blk_off - m->at);
        n = hole < cap ? (size_t)hole : cap;
        memset(buf, 0, n);
    } else {
        n = m->blk_len - m->blk_pos < cap ? m->blk_len - m->blk_pos : cap;
        memcpy(buf, m->blk + m->blk_pos, n);
        m->blk_pos += n;
        m->blk_off += (int64_t)n;
    }
    m->at += (int64_t)n;
    m->read += (uint64_t)n;
    *m->archive_total += (uint64_t)n;
    return (ssize_t)n;
}

static int each_file(const tl_item *item, head_source *h, tl_input_fn fn, void *user)
{
    struct stat st;
    const char *name = display_name(item);
    tl_input in = { name, item->path, NULL, item->from_walk, -1, head_read, h, item };
    if (fstat(h->fd, &st) == 0 && S_ISREG(st.st_mode))
        in.size = st.st_size;
    fn(&in, user);
    return 0;
}

/* libarchive's read callback over a head_source: the head, then the descriptor. */
static la_ssize_t archive_cb_read(struct archive *a, void *ctx, const void **buf)
{
    head_source *h = ctx;
    if (h->pos < h->len) {
        *buf = h->head + h->pos;
        size_t n = h->len - h->pos;
        h->pos = h->len;
        return (la_ssize_t)n;
    }
    ssize_t n = tl_fd_read(&h->fd, h->block, TL_DISCOVER_BLOCK);
    if (n < 0) {
        archive_set_error(a, errno, "%s", strerror(errno));
        return -1;
    }
    *buf = h->block;
    return (la_ssize_t)n;
}

/* What a member that is not a regular file is, for the message. */
static const char *member_type(struct archive_entry *e)
{
    switch (archive_entry_filetype(e)) {
    case AE_IFLNK:
        return "a symbolic link";
    case AE_IFCHR:
        return "a character device";
    case AE_IFBLK:
        return "a block device";
    case AE_IFIFO:
        return "a FIFO";
    case AE_IFSOCK:
        return "a socket";
    default:
        return "not a regular file";
    }
}

/* Member paths seen in this archive (a tar may hold one path twice: appended
 * copies). A small open-addressing set of hashes with the names kept. */
typedef struct member_set {
    char **names;
    uint64_t *hashes;
    size_t n, cap;
} member_set;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* 1 if name was already in the set, 0 if added (or no memory to remember it). */
static int member_set_seen(member_set *m, const char *name)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char **names = calloc(cap, sizeof *names);
        uint64_t *hashes = calloc(cap, sizeof *hashes);
        if (names == NULL || hashes == NULL) {
            free(names);
            free(hashes);
            return 0;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->names[i] == NULL)
                continue;
            size_t k = m->hashes[i] & (cap - 1);
            while (names[k])
                k = (k + 1) & (cap - 1);
            names[k] = m->names[i];
            hashes[k] = m->hashes[i];
        }
        free(m->names);
        free(m->hashes);
        m->names = names;
        m->hashes = hashes;
        m->cap = cap;
    }
    uint64_t h = str_hash(name);
    size_t k = h & (m->cap - 1);
    while (m->names[k]) {
        if (m->hashes[k] == h && strcmp(m->names[k], name) == 0)
            return 1;
        k = (k + 1) & (m->cap - 1);
    }
    m->names[k] = strdup(name);
    if (m->names[k] == NULL)
        return 0;
    m->hashes[k] = h;
    m->n++;
    return 0;
}

static void member_set_release(member_set *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->names[i]);
    free(m->names);
    free(m->hashes);
}

static int each_member(const tl_item *item, head_source *h, const tl_limits *lim, tl_input_fn fn,
                       tl_item_problem_fn problem, void *user)
{
    int rc = 0;
    uint64_t members = 0, total = 0;
    const char *aname = display_name(item);
    member_set seen = { 0 };
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    char msg[600];
    if (a == NULL) {
        problem(aname, "out of memory", user);
        return -1;
    }
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    /* A compressed single file (`trace.json.zst`) is libarchive's "raw"
     * format: one member, read as the file itself. Only behind a
     * compression's magic: a damaged zip is still an unrecognized archive. */
    int maybe_raw = compressed_stream(h->head, h->len);
    if (maybe_raw)
        archive_read_support_format_raw(a);
    int opened;
    /* A regular file is rewound and read with seeks (zip's central directory
     * is at the end); anything else streams from the head already read. */
    struct stat st;
    /* (Only when the item started at offset 0: stdin may be a file read part way.) */
    if (fstat(h->fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(h->fd, 0, SEEK_CUR) == (off_t)h->len &&
        lseek(h->fd, 0, SEEK_SET) == 0) {
        h->pos = h->len;
        opened = archive_read_open_fd(a, h->fd, TL_DISCOVER_BLOCK);
    } else {
        h->block = malloc(TL_DISCOVER_BLOCK);
        if (h->block == NULL) {
            problem(aname, "out of memory", user);
            rc = -1;
            goto out;
        }
        opened = archive_read_open(a, h, NULL, archive_cb_read, NULL);
    }
    if (opened != ARCHIVE_OK) {
        problem(aname, archive_error_string(a) ? archive_error_string(a) : "cannot open archive", user);
        rc = -1;
        goto out;
    }
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r == ARCHIVE_WARN) {
            problem(aname, archive_error_string(a), user);
        } else if (r != ARCHIVE_OK) {
            snprintf(msg, sizeof msg, "archive damaged after %llu members: %s", (unsigned long long)members,
                     archive_error_string(a) ? archive_error_string(a) : "read error");
            problem(aname, msg, user);
            break;
        }
        if (maybe_raw && archive_format(a) == ARCHIVE_FORMAT_RAW) {
            /* the decompressed file, under the file's own name */
            member_source src = {
                a, 0, lim->max_input_bytes, &total, lim->max_archive_bytes, 0, "", NULL, 0, 0, 0, 0, 0
            };
            tl_input in = { aname, item->path, NULL, item->from_walk, -1, member_read, &src, item };
            fn(&in, user);
            if (src.error[0]) {
                snprintf(msg, sizeof msg, "damaged after %llu decompressed bytes: %s", (unsigned long long)src.read,
                         src.error);
                problem(aname, msg, user);
            }
            if (src.over_limit)
                problem(aname, "decompressed size over the limit (a bomb?); the rest is not read", user);
            break;
        }
        const char *member = archive_entry_pathname(e);
        if (member == NULL)
            member = "(unnamed)";
        size_t len = strlen(aname) + strlen(member) + 2;
        char *name = malloc(len);
        if (name == NULL)
            break;
        snprintf(name, len, "%s:%s", aname, member);
        int type = archive_entry_filetype(e);
        const char *hardlink = archive_entry_hardlink(e);
        if (type == AE_IFDIR) {
            free(name);
            continue;
        }
        if (hardlink != NULL) {
            /* A tar hard link holds no data: the target is read on its own. */
            snprintf(msg, sizeof msg, "a hard link to %.400s (the same data, read once there)", hardlink);
            problem(name, msg, user);
            free(name);
            continue;
        }
        if (type != AE_IFREG) {
            const char *target = archive_entry_symlink(e);
            snprintf(msg, sizeof msg, "%s%s%.400s; archive members that are not regular files are not read",
                     member_type(e), target ? " to " : "", target ? target : "");
            problem(name, msg, user);
            free(name);
            continue;
        }
        if (member_set_seen(&seen, member)) {
            problem(name, "a second member with this path; only the first is read (counted once)", user);
            free(name);
            continue;
        }
        if (++members > lim->max_members) {
            problem(aname, "more members than the limit; the rest are not read", user);
            free(name);
            break;
        }
        member_source src = { a, 0, lim->max_input_bytes, &total, lim->max_archive_bytes, 0, "", NULL, 0, 0, 0, 0, 0 };
        /* Members are found, not named: like a directory walk's files. */
        tl_input in = { name,        item->path, member, 1, archive_entry_size_is_set(e) ? archive_entry_size(e) : -1,
                        member_read, &src,       item };
        int stop = fn(&in, user);
        if (src.error[0]) {
            /* What was read of the member is kept (marked truncated by its reader). */
            snprintf(msg, sizeof msg, "archive damaged inside this member after %llu bytes: %s",
                     (unsigned long long)src.read, src.error);
            problem(name, msg, user);
        }
        free(name);
        if (src.over_limit) {
            problem(aname, "decompressed size over the limit (a zip bomb?); the rest is not read", user);
            break;
        }
        if (stop)
            break;
    }
out:
    archive_read_free(a);
    member_set_release(&seen);
    return rc;
}

int tl_item_each(const tl_item *item, const tl_limits *lim, tl_input_fn fn, tl_item_problem_fn problem, void *user)
{
    head_source h;
    int kind = open_item(item, lim, &h);
    if (kind < 0) {
        problem(display_name(item), strerror(errno), user);
        return -1;
    }
    int rc = kind == TL_ITEM_ARCHIVE ? each_member(item, &h, lim, fn, problem, user) : each_file(item, &h, fn, user);
    close_item(item, &h);
    return rc;
}
