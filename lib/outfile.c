/*
 * outfile.c - output files written atomically.
 *
 * A report or trace is written to "{path}.tmp.{pid}" in the same directory
 * and renamed over the final path only after every byte was written and the
 * file closed without error, so readers never see half a file and a crash or
 * a full disk never destroys the previous version. A path that exists and is
 * not a regular file (/dev/stdout, /dev/full, a FIFO) is written in place.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct tl_outfile {
    FILE *fp;
    gzFile gz;
    int atomic;
    char path[1600];
    char tmp[1700];
};

tl_outfile *tl_outfile_open(const char *path, int gzip, char *err, size_t errlen)
{
    struct stat st;
    tl_outfile *f = calloc(1, sizeof *f);
    if (f == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    /* lstat, not stat: a symlink is written through in place. With stat,
     * /dev/stdout -> /proc/self/fd/1 -> a regular file (`prog > log`) looked
     * regular, and the temporary file was renamed over the /dev/stdout link
     * itself (as root) or could not be created in /dev (as a user). */
    f->atomic = lstat(path, &st) != 0 || S_ISREG(st.st_mode);
    if (f->atomic)
        snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%d", path, (int)getpid());
    else
        snprintf(f->tmp, sizeof f->tmp, "%s", path);
    f->fp = fopen(f->tmp, "wb");
    if (f->fp == NULL) {
        snprintf(err, errlen, "cannot write %s: %s", f->atomic ? path : f->tmp, strerror(errno));
        free(f);
        return NULL;
    }
    if (gzip) {
        int fd = dup(fileno(f->fp));
        f->gz = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
        if (f->gz == NULL) {
            if (fd >= 0)
                close(fd);
            snprintf(err, errlen, "cannot write %s: gzip setup failed", path);
            tl_outfile_abort(f);
            return NULL;
        }
        gzbuffer(f->gz, 256 * 1024);
    }
    return f;
}

int tl_outfile_write(tl_outfile *f, const void *buf, size_t len)
{
    if (f->gz != NULL) {
        while (len > 0) {
            unsigned chunk = len > (1u << 30) ? (1u << 30) : (unsigned)len;
            if (gzwrite(f->gz, buf, chunk) != (int)chunk)
                return -1;
            buf = (const char *)buf + chunk;
            len -= chunk;
        }
        return 0;
    }
    return fwrite(buf, 1, len, f->fp) == len ? 0 : -1;
}

void tl_outfile_abort(tl_outfile *f)
{
    if (f == NULL)
        return;
    if (f->gz != NULL)
        gzclose(f->gz);
    if (f->fp != NULL)
        fclose(f->fp);
    if (f->atomic)
        unlink(f->tmp);
    free(f);
}

int tl_outfile_close(tl_outfile *f, char *err, size_t errlen)
{
    int rc = 0;
    int saved = 0;
    if (f->gz != NULL) {
        int zrc = gzclose(f->gz); /* flushes into the dup'ed descriptor */
        f->gz = NULL;
        if (zrc != Z_OK) {
            saved = errno ? errno : EIO;
            rc = -1;
        }
    }
    if (fflush(f->fp) != 0 || ferror(f->fp)) {
        if (!saved)
            saved = errno ? errno : EIO;
        rc = -1;
    }
    if (f->atomic && rc == 0 && fsync(fileno(f->fp)) != 0 && errno != EINVAL) {
        saved = errno;
        rc = -1;
    }
    if (fclose(f->fp) != 0 && rc == 0) {
        saved = errno;
        rc = -1;
    }
    f->fp = NULL;
    if (rc == 0 && f->atomic && rename(f->tmp, f->path) != 0) {
        saved = errno;
        rc = -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", f->path, strerror(saved ? saved : EIO));
        if (f->atomic)
            unlink(f->tmp);
    }
    free(f);
    return rc;
}
