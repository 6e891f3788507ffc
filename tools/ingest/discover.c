/*
 * discover.c - files, directories and archives (see discover.h).
 */
#define _GNU_SOURCE
#include "discover.h"

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

void tl_limits_init(tl_limits *l)
{
    l->max_members = 100000;
    l->max_input_bytes = 64ull << 30;
    l->max_archive_bytes = 256ull << 30;
    l->max_depth = 64;
}

void tl_item_list_init(tl_item_list *l) { memset(l, 0, sizeof *l); }

void tl_item_list_release(tl_item_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].path);
    for (size_t i = 0; i < l->nerrors; i++)
        free(l->errors[i]);
    free(l->items);
    free(l->errors);
    memset(l, 0, sizeof *l);
}

static void add_error(tl_item_list *l, const char *path, const char *what)
{
    if (l->nerrors == l->errors_cap) {
        size_t cap = l->errors_cap ? l->errors_cap * 2 : 8;
        char **p = realloc(l->errors, cap * sizeof *p);
        if (p == NULL)
            return;
        l->errors = p;
        l->errors_cap = cap;
    }
    size_t len = strlen(path) + strlen(what) + 3;
    char *msg = malloc(len);
    if (msg == NULL)
        return;
    snprintf(msg, len, "%s: %s", path, what);
    l->errors[l->nerrors++] = msg;
}

static void add_item(tl_item_list *l, const char *path, int kind, int from_walk, const struct stat *st)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        tl_item *p = realloc(l->items, cap * sizeof *p);
        if (p == NULL)
            return;
        l->items = p;
        l->cap = cap;
    }
    char *copy = strdup(path);
    if (copy == NULL)
        return;
    l->items[l->n++] = (tl_item){ copy, kind, from_walk, { st->st_dev, st->st_ino } };
}

/* zip, 7z, xz, bzip2, zstd, rar, or a tar (its "ustar" magic at 257). gzip is
 * an archive only if what it inflates to is a tar: that is checked apart. */
int tl_bytes_look_like_archive(const unsigned char *b, size_t n)
{
    if (n >= 4 && b[0] == 'P' && b[1] == 'K' && (b[2] == 3 || b[2] == 5) && (b[3] == 4 || b[3] == 6))
        return 1;
    if (n >= 6 && memcmp(b, "7z\xbc\xaf\x27\x1c", 6) == 0)
        return 1;
    if (n >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0)
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

/* Does the gzip file inflate to a tar? Reads 512 bytes of its content. */
static int gzip_holds_tar(const char *path)
{
    unsigned char out[512];
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL)
        return 0;
    int n = gzread(gz, out, sizeof out);
    gzclose(gz);
    return n >= 262 && memcmp(out + 257, "ustar", 5) == 0;
}

static int classify_file(const char *path)
{
    unsigned char head[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n < 0)
        return -1;
    if (tl_bytes_look_like_archive(head, (size_t)n))
        return TL_ITEM_ARCHIVE;
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b && gzip_holds_tar(path))
        return TL_ITEM_ARCHIVE;
    return TL_ITEM_FILE;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
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
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(names, cap * sizeof *p);
            if (p == NULL)
                break;
            names = p;
        }
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
            } else if (S_ISREG(st.st_mode)) {
                int kind = classify_file(path);
                if (kind < 0)
                    add_error(l, path, strerror(errno));
                else
                    add_item(l, path, kind, 1, &st);
            }
            free(path);
        }
        free(names[i]);
    }
    free(names);
}

size_t tl_inputs_collect(tl_item_list *l, const char *const *paths, size_t npaths,
                         const tl_limits *lim)
{
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            add_error(l, paths[i], strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            walk(l, paths[i], 0, lim);
        } else {
            int kind = classify_file(paths[i]);
            if (kind < 0)
                add_error(l, paths[i], strerror(errno));
            else
                add_item(l, paths[i], kind, 0, &st);
        }
    }
    return l->n;
}

/* ---- reading an item ---------------------------------------------------- */

typedef struct member_source {
    struct archive *a;
    uint64_t read, limit;
    uint64_t *archive_total, archive_limit;
    int over_limit;
} member_source;

static ssize_t member_read(void *ctx, void *buf, size_t cap)
{
    member_source *m = ctx;
    if (m->read >= m->limit || *m->archive_total >= m->archive_limit) {
        m->over_limit = 1;
        errno = EFBIG;
        return -1;
    }
    la_ssize_t n = archive_read_data(m->a, buf, cap);
    if (n < 0) {
        errno = EIO;
        return -1;
    }
    m->read += (uint64_t)n;
    *m->archive_total += (uint64_t)n;
    return (ssize_t)n;
}

/* A plain file, with the per-input size limit. */
typedef struct file_source {
    int fd;
    uint64_t read, limit;
} file_source;

static ssize_t file_read(void *ctx, void *buf, size_t cap)
{
    file_source *f = ctx;
    if (f->read >= f->limit) {
        errno = EFBIG;
        return -1;
    }
    ssize_t n = tl_fd_read(&f->fd, buf, cap);
    if (n > 0)
        f->read += (uint64_t)n;
    return n;
}

static int each_file(const tl_item *item, const tl_limits *lim, tl_input_fn fn,
                     tl_item_problem_fn problem, void *user)
{
    file_source src = { open(item->path, O_RDONLY | O_CLOEXEC), 0, lim->max_input_bytes };
    if (src.fd < 0) {
        problem(item->path, strerror(errno), user);
        return -1;
    }
    struct stat st;
    tl_input in = { item->path, item->path, NULL, item->from_walk, -1, file_read, &src };
    if (fstat(src.fd, &st) == 0)
        in.size = st.st_size;
    fn(&in, user);
    close(src.fd);
    return 0;
}

static int each_member(const tl_item *item, const tl_limits *lim, tl_input_fn fn,
                       tl_item_problem_fn problem, void *user)
{
    int rc = 0;
    uint64_t members = 0, total = 0;
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    if (a == NULL) {
        problem(item->path, "out of memory", user);
        return -1;
    }
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    if (archive_read_open_filename(a, item->path, 1 << 16) != ARCHIVE_OK) {
        problem(item->path, archive_error_string(a) ? archive_error_string(a) : "cannot open archive", user);
        rc = -1;
        goto out;
    }
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r == ARCHIVE_WARN) {
            problem(item->path, archive_error_string(a), user);
        } else if (r != ARCHIVE_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "archive damaged after %llu members: %s",
                     (unsigned long long)members, archive_error_string(a) ? archive_error_string(a) : "read error");
            problem(item->path, msg, user);
            break;
        }
        if (archive_entry_filetype(e) != AE_IFREG)
            continue;
        if (++members > lim->max_members) {
            problem(item->path, "more members than the limit; the rest are not read", user);
            break;
        }
        const char *member = archive_entry_pathname(e);
        if (member == NULL)
            member = "(unnamed)";
        size_t len = strlen(item->path) + strlen(member) + 2;
        char *name = malloc(len);
        if (name == NULL)
            break;
        snprintf(name, len, "%s:%s", item->path, member);
        member_source src = { a, 0, lim->max_input_bytes, &total, lim->max_archive_bytes, 0 };
        /* Members are found, not named: like a directory walk's files, the ones
         * that are not JSON at all (READMEs, licences) are not worth a warning. */
        tl_input in = { name, item->path, member, 1,
                        archive_entry_size_is_set(e) ? archive_entry_size(e) : -1, member_read, &src };
        int stop = fn(&in, user);
        free(name);
        if (src.over_limit) {
            problem(item->path, "decompressed size over the limit (a zip bomb?); the rest is not read", user);
            break;
        }
        if (stop)
            break;
    }
out:
    archive_read_free(a);
    return rc;
}

int tl_item_each(const tl_item *item, const tl_limits *lim, tl_input_fn fn,
                 tl_item_problem_fn problem, void *user)
{
    if (item->kind == TL_ITEM_ARCHIVE)
        return each_member(item, lim, fn, problem, user);
    return each_file(item, lim, fn, problem, user);
}
