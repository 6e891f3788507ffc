/*
 * output.c - atomic, device- and symlink-safe output files (see output.h).
 *
 * Every step works on a descriptor of the target's directory (openat,
 * linkat, renameat), so a directory swapped under us between the checks and
 * the rename cannot redirect the write.
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Symlink hops followed when resolving an output path (the kernel's limit). */
#define TL_OUTPUT_MAX_LINKS 40
/* Random temporary names tried before giving up (each collision is a file
 * somebody else created with that name). */
#define TL_OUTPUT_NAME_TRIES 100
/* Bytes of the output's own name kept in its temporary name. */
#define TL_OUTPUT_NAME_KEEP 64
/* gzip level of compressed outputs, and zlib's buffer. */
#define TL_OUTPUT_GZIP_MODE "wb6"
#define TL_OUTPUT_GZIP_BUFFER (256 * 1024)

int tl_output_named_temps;

static const char *errtext(int e, char *buf, size_t len)
{
    /* GNU strerror_r: thread-safe, may return a static string instead of buf */
    return strerror_r(e, buf, len);
}

static void set_err(tl_output *o, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(tl_output *o, const char *path, const char *fmt, ...)
{
    va_list ap;
    /* A path too long for the message is shown by its two ends: it said
     * only "File name too long", not which output. */
    size_t len = strlen(path);
    int n = len + 160 < sizeof o->err
                ? snprintf(o->err, sizeof o->err, "%s: ", path)
                : snprintf(o->err, sizeof o->err, "%.60s...%s (%zu bytes): ", path, path + len - 60, len);
    if (n < 0 || (size_t)n >= sizeof o->err)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(o->err + n, sizeof o->err - (size_t)n, fmt, ap);
    va_end(ap);
    o->failed = 1;
}

static void set_errno(tl_output *o, const char *path, const char *what, int e)
{
    char buf[128];
    set_err(o, path, "%s%s%s", what ? what : "", what ? ": " : "", errtext(e, buf, sizeof buf));
}

static void release(tl_output *o)
{
    if (o->gz != NULL)
        gzclose(o->gz);
    if (o->f != NULL)
        fclose(o->f);
    else if (o->fd >= 0)
        close(o->fd);
    if (o->dirfd >= 0)
        close(o->dirfd);
    free(o->path);
    free(o->target);
    free(o->base);
    free(o->tmpname);
    free(o->backup);
    o->gz = NULL;
    o->f = NULL;
    o->fd = o->dirfd = -1;
    o->path = o->target = o->base = o->tmpname = o->backup = NULL;
    o->kind = 0;
}

/* ---- names ------------------------------------------------------------ */

/* A random name next to base: ".base.XXXXXXXXXXXX.tmp" (base cut short). */
static int random_name(char *buf, size_t len, const char *base, const char *what)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char r[12];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        /* no entropy yet (early boot): still unpredictable enough to not collide */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^ (uintptr_t)buf;
        for (size_t i = 0; i < sizeof r; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
            r[i] = (unsigned char)(x >> 56);
    }
    char tail[sizeof r + 1];
    for (size_t i = 0; i < sizeof r; i++)
        tail[i] = digits[r[i] % (sizeof digits - 1)];
    tail[sizeof r] = '\0';
    int n = snprintf(buf, len, ".%.*s.%s.%s", TL_OUTPUT_NAME_KEEP, base, tail, what);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    return p;
}

/* Split path into its directory ("." when none) and last name. */
static int split(const char *path, char **dir, char **base)
{
    const char *slash = strrchr(path, '/');
    *dir = slash == NULL ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    *base = strdup(slash ? slash + 1 : path);
    if (*dir == NULL || *base == NULL) {
        free(*dir);
        free(*base);
        return -1;
    }
    return 0;
}

/*
 * Follow symlinks from path to the file that would be written: the path
 * itself, a link's (final) target, or a name that does not exist yet (a new
 * file, or a dangling link's target). Returns a new string, or NULL with
 * o->err set. A link in a sticky world-writable directory is followed only
 * when it belongs to us or to the directory's owner: the rule of the
 * kernel's fs.protected_symlinks, which our own resolution would bypass.
 */
static char *resolve(tl_output *o, const char *path)
{
    char *cur = strdup(path);
    if (cur == NULL)
        goto nomem;
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0) {
            if (errno == ENOENT)
                return cur; /* a new file */
            set_errno(o, path, NULL, errno);
            free(cur);
            return NULL;
        }
        if (!S_ISLNK(st.st_mode))
            return cur;
        if (hops == TL_OUTPUT_MAX_LINKS) {
            set_err(o, path, "more than %d symbolic links to follow", TL_OUTPUT_MAX_LINKS);
            free(cur);
            return NULL;
        }
        char *dir, *base;
        if (split(cur, &dir, &base) != 0)
            goto nomem_cur;
        struct stat dst;
        int sticky = stat(dir, &dst) == 0 && (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH);
        if (sticky && st.st_uid != geteuid() && st.st_uid != dst.st_uid) {
            set_err(o, path,
                    "%s is a symbolic link in a shared sticky directory owned by someone else; "
                    "refusing to follow it",
                    cur);
            free(dir);
            free(base);
            free(cur);
            return NULL;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        free(base);
        if (n < 0) {
            set_errno(o, path, NULL, errno);
            free(dir);
            free(cur);
            return NULL;
        }
        link[n] = '\0';
        char *next = link[0] == '/' ? strdup(link) : join(dir, link);
        free(dir);
        free(cur);
        cur = next;
        if (cur == NULL)
            goto nomem;
    }
nomem_cur:
    free(cur);
nomem:
    set_err(o, path, "out of memory");
    return NULL;
}

/* ---- checks shared by open and check ----------------------------------- */

static int same_as_stdout(const struct stat *st)
{
    struct stat so;
    return fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st->st_dev && so.st_ino == st->st_ino;
}

/* What stat says about an existing path: 0 to go on, -1 with err set. */
static int check_existing(tl_output *o, const char *path, const struct stat *st, tl_output_is_input_fn is_input,
                          void *user)
{
    if (S_ISDIR(st->st_mode)) {
        set_err(o, path, "is a directory; give a file name");
        return -1;
    }
    if (S_ISBLK(st->st_mode)) {
        set_err(o, path, "is a block device; refusing to write a report over it");
        return -1;
    }
    if (is_input != NULL && is_input(st->st_dev, st->st_ino, user)) {
        set_err(o, path, "is one of the inputs; refusing to overwrite it");
        return -1;
    }
    return 0;
}

/* Open the directory the target lives in; -1 with err set. */
static int open_dir(tl_output *o, const char *path, const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    if (errno == ENOENT)
        set_err(o, path, "the directory %s does not exist", dir);
    else if (errno == ENOTDIR)
        set_err(o, path, "%s is not a directory", dir);
    else
        set_errno(o, path, dir, errno);
    return -1;
}

/* The parts of open that create nothing: resolve, look at the target and its
 * directory. Fills o->target, o->base, o->dirfd, o->kind (DIRECT/STDOUT are
 * decided here and opened by the caller); *st is the target's (st_mode 0
 * when it does not exist). */
static int inspect(tl_output *o, const char *path, struct stat *st, tl_output_is_input_fn is_input, void *user)
{
    memset(st, 0, sizeof *st);
    /* stat follows magic links (/dev/stdout -> /proc/self/fd/1 -> pipe:[…])
     * that readlink-based resolution cannot. */
    if (stat(path, st) == 0) {
        if (check_existing(o, path, st, is_input, user) != 0)
            return -1;
        if (same_as_stdout(st)) {
            o->kind = TL_OUTPUT_STDOUT;
            return 0;
        }
        if (!S_ISREG(st->st_mode)) {
            o->kind = TL_OUTPUT_DIRECT;
            return 0;
        }
    } else if (errno != ENOENT) {
        set_errno(o, path, NULL, errno);
        return -1;
    }
    o->target = resolve(o, path);
    if (o->target == NULL)
        return -1;
    char *dir;
    if (split(o->target, &dir, &o->base) != 0) {
        set_err(o, path, "out of memory");
        return -1;
    }
    o->dirfd = open_dir(o, path, dir);
    free(dir);
    if (o->dirfd < 0)
        return -1;
    if (path[0] == '\0') {
        set_err(o, "''", "is an empty file name");
        return -1;
    }
    if (o->base[0] == '\0' || !strcmp(o->base, ".") || !strcmp(o->base, "..")) {
        set_err(o, path, "is a directory; give a file name");
        return -1;
    }
    memset(st, 0, sizeof *st);
    if (fstatat(o->dirfd, o->base, st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (check_existing(o, path, st, is_input, user) != 0)
            return -1;
        if (!S_ISREG(st->st_mode)) {
            set_err(o, path, "changed while it was being opened; not written");
            return -1;
        }
        /* A read-only file is not replaced, as `>` would not write it. */
        if (faccessat(o->dirfd, o->base, W_OK, AT_EACCESS) != 0 && errno == EACCES) {
            set_err(o, path, "the file is read-only; not replaced");
            return -1;
        }
        o->existed = 1;
    } else if (errno != ENOENT) {
        set_errno(o, path, NULL, errno);
        return -1;
    } else {
        memset(st, 0, sizeof *st);
    }
    o->kind = TL_OUTPUT_ATOMIC;
    return 0;
}

int tl_output_check(const char *path, char *err, size_t errlen)
{
    tl_output *o = calloc(1, sizeof *o);
    if (o == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    o->fd = o->dirfd = -1;
    struct stat st;
    int rc = strcmp(path, "-") == 0 ? 0 : inspect(o, path, &st, NULL, NULL);
    if (rc != 0)
        snprintf(err, errlen, "%s", o->err);
    release(o);
    free(o);
    return rc;
}

/* ---- opening ------------------------------------------------------------ */

static int open_socket(const char *path)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        fd = -1;
    }
    return fd;
}

/* A device, FIFO or socket, opened as it is. */
static int open_direct(tl_output *o, const char *path, const struct stat *st)
{
    int fd = S_ISSOCK(st->st_mode) ? open_socket(path) : open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        set_errno(o, path, NULL, errno);
        return -1;
    }
    /* It must still be what was checked: a regular file swapped in now would
     * be written over in place, not atomically. */
    struct stat now;
    if (fstat(fd, &now) != 0 || S_ISREG(now.st_mode) || S_ISDIR(now.st_mode) || S_ISBLK(now.st_mode)) {
        close(fd);
        set_err(o, path, "changed while it was being opened; not written");
        return -1;
    }
    o->fd = fd;
    return 0;
}

/* Can a file be linked in from /proc/self/fd (O_TMPFILE needs that)? */
static int proc_fd_usable(void)
{
    return access("/proc/self/fd", X_OK) == 0;
}

/* A temporary file in the target's directory: unnamed, else named at random
 * with O_EXCL|O_NOFOLLOW. Mode 0666 less the umask, as fopen would make a new
 * file. Returns the descriptor, or -1 with errno. */
static int create_temp(tl_output *o)
{
#ifdef O_TMPFILE
    if (!tl_output_named_temps && proc_fd_usable()) {
        int fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (fd >= 0) {
            o->unnamed = 1;
            return fd;
        }
        /* EOPNOTSUPP/EISDIR/EINVAL: the file system cannot; fall back to a name */
        if (errno == EACCES || errno == EROFS || errno == ENOSPC || errno == EDQUOT)
            return -1;
    }
#endif
    char name[NAME_MAX + 1];
    for (int i = 0; i < TL_OUTPUT_NAME_TRIES; i++) {
        if (random_name(name, sizeof name, o->base, "tmp") != 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = openat(o->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            o->tmpname = strdup(name);
            if (o->tmpname == NULL) {
                unlinkat(o->dirfd, name, 0);
                close(fd);
                errno = ENOMEM;
                return -1;
            }
            return fd;
        }
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Give the temporary file the old file's mode and owner. -1 when the owner
 * cannot be kept (then the caller rewrites in place). */
static int keep_attributes(int fd, const struct stat *st)
{
    if ((st->st_uid != geteuid() || st->st_gid != getegid()) && fchown(fd, st->st_uid, st->st_gid) != 0)
        return -1;
    return fchmod(fd, st->st_mode & 07777) == 0 ? 0 : -1;
}

/* Staging for an in-place rewrite: an unnamed file in $TMPDIR (or /tmp). */
static int create_stage(void)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    FILE *f = tmpfile();
    if (f == NULL)
        return -1;
    int fd2 = dup(fileno(f));
    fclose(f);
    return fd2;
}

static void drop_temp(tl_output *o)
{
    if (o->tmpname != NULL && o->dirfd >= 0)
        unlinkat(o->dirfd, o->tmpname, 0);
    free(o->tmpname);
    o->tmpname = NULL;
}

int tl_output_open(tl_output *o, const char *path, unsigned flags, tl_output_is_input_fn is_input, void *user)
{
    memset(o, 0, sizeof *o);
    o->fd = o->dirfd = -1;
    o->path = strdup(path);
    if (o->path == NULL) {
        set_err(o, path, "out of memory");
        return -1;
    }
    struct stat st;
    if ((flags & TL_OUTPUT_OWN_NAME) && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        set_err(o, path,
                "is not a regular file (%s at a name this program chose for its own output); refusing "
                "to follow or write it",
                S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
        goto fail;
    }
    if (strcmp(path, "-") == 0) {
        o->kind = TL_OUTPUT_STDOUT;
    } else if (inspect(o, path, &st, is_input, user) != 0) {
        goto fail;
    }
    if (o->kind == TL_OUTPUT_STDOUT) {
        /* Its own stream over a copy of the descriptor: the document's bytes
         * go out as they are, whatever the program did to stdout (the command
         * escapes control characters there), and every write is checked. */
        fflush(stdout);
        if ((o->fd = dup(STDOUT_FILENO)) < 0) {
            set_errno(o, path, NULL, errno);
            goto fail;
        }
    } else if (o->kind == TL_OUTPUT_DIRECT) {
        if (open_direct(o, path, &st) != 0)
            goto fail;
    } else {
        int fd = create_temp(o);
        if (fd < 0 && o->existed && (errno == EACCES || errno == EROFS || errno == EPERM)) {
            o->kind = TL_OUTPUT_IN_PLACE; /* a writable file in a read-only directory */
        } else if (fd < 0) {
            set_errno(o, path, "cannot create a temporary file beside it", errno);
            goto fail;
        } else if (o->existed && keep_attributes(fd, &st) != 0) {
            close(fd);
            drop_temp(o);
            o->unnamed = 0;
            o->kind = TL_OUTPUT_IN_PLACE; /* the owner could not be kept: keep the file */
        } else {
            o->fd = fd;
        }
        if (o->kind == TL_OUTPUT_IN_PLACE && (o->fd = create_stage()) < 0) {
            set_errno(o, path, "cannot create a temporary file to stage it", errno);
            goto fail;
        }
    }
    o->f = fdopen(o->fd, "wb");
    if (o->f == NULL) {
        set_errno(o, path, NULL, errno);
        goto fail;
    }
    if (flags & TL_OUTPUT_GZIP) {
        fflush(o->f);
        int fd = dup(o->fd);
        o->gz = fd >= 0 ? gzdopen(fd, TL_OUTPUT_GZIP_MODE) : NULL;
        if (o->gz == NULL) {
            if (fd >= 0)
                close(fd);
            set_err(o, path, "gzip setup failed");
            goto fail;
        }
        gzbuffer(o->gz, TL_OUTPUT_GZIP_BUFFER);
    }
    return 0;
fail:
    drop_temp(o);
    release(o);
    o->failed = 1;
    return -1;
}

int tl_output_write(void *out, const void *buf, size_t len)
{
    tl_output *o = out;
    if (o->gz == NULL) {
        errno = 0;
        if (fwrite(buf, 1, len, o->f) == len)
            return 0;
        if (o->write_errno == 0)
            o->write_errno = errno ? errno : EIO;
        return -1;
    }
    while (len > 0) {
        unsigned chunk = len > (1u << 30) ? (1u << 30) : (unsigned)len;
        errno = 0;
        if (gzwrite(o->gz, buf, chunk) != (int)chunk) {
            if (o->write_errno == 0)
                o->write_errno = errno ? errno : EIO;
            return -1;
        }
        buf = (const char *)buf + chunk;
        len -= chunk;
    }
    return 0;
}

/* ---- finishing and committing -------------------------------------------- */

int tl_output_finish(tl_output *o)
{
    if (o->finished)
        return o->failed ? -1 : 0;
    o->finished = 1;
    const char *path = o->path;
    int e = 0;
    if (o->gz != NULL) {
        int zrc = gzclose(o->gz); /* flushes into its own descriptor */
        o->gz = NULL;
        if (zrc != Z_OK)
            e = errno ? errno : EIO;
    }
    errno = 0;
    if ((fflush(o->f) != 0 || ferror(o->f)) && e == 0)
        e = errno ? errno : o->write_errno ? o->write_errno : EIO;
    /* fsync: a regular file's data must be on disk before the rename makes it
     * the file; devices and pipes answer EINVAL, which is no failure. */
    if (e == 0 && o->kind != TL_OUTPUT_STDOUT && fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS)
        e = errno;
    if (o->kind == TL_OUTPUT_DIRECT || o->kind == TL_OUTPUT_STDOUT) {
        if (fclose(o->f) != 0 && e == 0)
            e = errno;
        o->f = NULL;
        o->fd = -1;
    }
    if (e != 0) {
        set_errno(o, path, "write failed", e);
        return -1;
    }
    return 0;
}

static int link_unnamed(tl_output *o, char *name, size_t len)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
    for (int i = 0; i < TL_OUTPUT_NAME_TRIES; i++) {
        if (random_name(name, len, o->base, "tmp") != 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (linkat(AT_FDCWD, proc, o->dirfd, name, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Copy the staged bytes over the old file's contents. */
static int copy_in_place(tl_output *o)
{
    int e = 0;
    int out = openat(o->dirfd, o->base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (out < 0)
        return -1;
    char buf[1 << 16];
    off_t total = 0;
    /* The room first: a full disk then fails before a byte of the old file
     * is touched (where the file system cannot reserve, it is tried as is). */
    struct stat st;
    if (fstat(o->fd, &st) != 0)
        e = errno;
    else if (st.st_size > 0 && fallocate(out, FALLOC_FL_KEEP_SIZE, 0, st.st_size) != 0 && errno != EOPNOTSUPP &&
             errno != ENOSYS && errno != EINVAL)
        e = errno;
    if (e == 0 && lseek(o->fd, 0, SEEK_SET) != 0)
        e = errno;
    while (e == 0) {
        ssize_t n = read(o->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            break;
        }
        if (n == 0)
            break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = pwrite(out, buf + done, (size_t)(n - done), total + done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                e = w < 0 ? errno : EIO;
                break;
            }
            done += w;
        }
        total += n;
    }
    if (e == 0 && ftruncate(out, total) != 0)
        e = errno;
    if (e == 0 && fsync(out) != 0 && errno != EINVAL)
        e = errno;
    if (close(out) != 0 && e == 0)
        e = errno;
    errno = e;
    return e ? -1 : 0;
}

/* Move a finished output into place (the rename); its temporary file is
 * named first when unnamed. 0, or -1 with errno. */
static int place(tl_output *o)
{
    if (o->kind == TL_OUTPUT_IN_PLACE)
        return copy_in_place(o);
    if (o->kind != TL_OUTPUT_ATOMIC)
        return 0;
    if (o->unnamed) {
        char name[NAME_MAX + 1];
        if (link_unnamed(o, name, sizeof name) != 0)
            return -1;
        o->tmpname = strdup(name);
        o->unnamed = 0;
        if (o->tmpname == NULL) {
            unlinkat(o->dirfd, name, 0);
            errno = ENOMEM;
            return -1;
        }
    }
    if (renameat(o->dirfd, o->tmpname, o->dirfd, o->base) != 0)
        return -1;
    free(o->tmpname);
    o->tmpname = NULL;
    o->placed = 1;
    /* the rename itself must survive a crash too */
    fsync(o->dirfd);
    return 0;
}

static void place_failed(tl_output *o, int e)
{
    set_errno(o, o->path, o->kind == TL_OUTPUT_IN_PLACE ? "cannot rewrite it" : "cannot move the new file into place",
              e);
}

int tl_output_commit(tl_output *o)
{
    tl_output *one[1] = { o };
    return tl_output_commit_all(one, 1);
}

/* A hard link to the old file, so that a later failure can put it back. */
static void make_backup(tl_output *o)
{
    if (o->kind != TL_OUTPUT_ATOMIC || !o->existed)
        return;
    char name[NAME_MAX + 1];
    for (int i = 0; i < TL_OUTPUT_NAME_TRIES; i++) {
        if (random_name(name, sizeof name, o->base, "old") != 0)
            return;
        if (linkat(o->dirfd, o->base, o->dirfd, name, 0) == 0) {
            o->backup = strdup(name);
            if (o->backup == NULL)
                unlinkat(o->dirfd, name, 0);
            return;
        }
        if (errno != EEXIST)
            return; /* no hard links here: no way back for this one */
    }
}

static void drop_backup(tl_output *o)
{
    if (o->backup != NULL)
        unlinkat(o->dirfd, o->backup, 0);
    free(o->backup);
    o->backup = NULL;
}

/* Undo place(): the old file back, or the new one removed. */
static void unplace(tl_output *o)
{
    if (o->backup != NULL) {
        if (renameat(o->dirfd, o->backup, o->dirfd, o->base) == 0) {
            free(o->backup);
            o->backup = NULL;
        }
    } else if (!o->existed) {
        unlinkat(o->dirfd, o->base, 0);
    }
}

/* The signals that end a process by default and that a user or a system
 * sends (Ctrl-C, kill, a closed terminal, a CPU or file size limit): held
 * while the outputs are put in place, so that an interrupt comes after every
 * output is replaced or every one is back as it was, never between (three
 * outputs, the second rename interrupted: one new, two old, and the backups
 * left in the user's directory). SIGKILL cannot be held. */
static void hold_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    static const int sigs[] = { SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,   SIGALRM, SIGUSR1,
                                SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPIPE };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&set, sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, old); /* this thread: the collector commits from a program's own thread */
}

int tl_output_commit_all(tl_output *const *outs, size_t n)
{
    int bad = 0;
    /* First every byte, everywhere: direct outputs are done after this. */
    for (size_t i = 0; i < n; i++)
        if (outs[i]->kind && tl_output_finish(outs[i]) != 0)
            bad = 1;
    for (size_t i = 0; i < n; i++)
        if (outs[i]->kind == 0)
            bad = 1; /* opened with an error, or released */
    /* not while writing to a pipe or a device, which can block for ever */
    sigset_t old_mask;
    hold_signals(&old_mask);
    if (!bad) {
        if (n > 1)
            for (size_t i = 0; i < n; i++)
                make_backup(outs[i]);
        /* Renames first (they can be undone), in-place rewrites last (they
         * cannot): a failing rename then leaves every old file as it was. */
        size_t placed = 0, pass;
        for (pass = 0; pass < 2 && !bad; pass++) {
            for (size_t i = 0; i < n; i++) {
                if ((outs[i]->kind == TL_OUTPUT_IN_PLACE) != (pass == 1))
                    continue;
                if (place(outs[i]) != 0) {
                    place_failed(outs[i], errno);
                    bad = 1;
                    break;
                }
                placed++;
            }
        }
        for (size_t i = 0; bad && placed > 0 && i < n; i++)
            if (outs[i]->placed)
                unplace(outs[i]);
    }
    for (size_t i = 0; i < n; i++) {
        drop_backup(outs[i]);
        drop_temp(outs[i]);
        release(outs[i]);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return bad ? -1 : 0;
}

void tl_output_abort(tl_output *o)
{
    drop_temp(o);
    drop_backup(o);
    release(o);
}
