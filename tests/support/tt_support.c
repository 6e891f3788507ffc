/*
 * tt_support.c - the helpers every test program shares (see tt_support.h).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_support.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

char *tt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;

    if (f == NULL)
        return NULL;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 65536 * 2;
            char *x = realloc(buf, cap);
            if (x == NULL)
                goto fail;
            buf = x;
        }
        size_t got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f))
        goto fail;
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
fail:
    free(buf);
    fclose(f);
    return NULL;
}

char *tt_slurp(const char *path, size_t *len)
{
    char *buf = tt_read_file(path, len);
    if (buf == NULL)
        fail_msg("cannot read %s", path);
    return buf;
}

char *tt_read_gunzip(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb"); /* reads plain files as they are */
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (buf == NULL) {
        gzclose(f);
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            char *x = realloc(buf, cap * 2 + 1);
            if (x == NULL) {
                gzclose(f);
                free(buf);
                return NULL;
            }
            buf = x;
            cap *= 2;
        }
        int got = gzread(f, buf + n, (unsigned)(cap - n));
        if (got < 0) {
            gzclose(f);
            free(buf);
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void tt_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        fail_msg("cannot write %s", path);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void tt_rmtree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tt_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int tt_count_files(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    int n = 0;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, needle))
            n++;
    closedir(d);
    return n;
}

int tt_count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t plen = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, prefix, plen) == 0)
            n++;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

const char *tt_basename(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

ssize_t tt_mem_read(void *ctx, void *buf, size_t cap)
{
    tt_mem_src *m = ctx;
    size_t k = m->n - m->pos;

    if (k > cap)
        k = cap;
    if (m->chunk && k > m->chunk)
        k = m->chunk;
    if (k == 0 && m->fail_at_end) {
        errno = EIO;
        return -1;
    }
    memcpy(buf, m->d + m->pos, k);
    m->pos += k;
    return (ssize_t)k;
}

char *tt_xstrdup(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

void tt_assert_contains(const char *hay, const char *needle, const char *what)
{
    if (hay == NULL || strstr(hay, needle) == NULL)
        fail_msg("%s%s\"%s\" does not contain \"%s\"", what ? what : "", what ? " " : "", hay ? hay : "(null)", needle);
}

void tt_assert_close(double got, double want, double rel)
{
    double err = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);
    if (!(err <= rel))
        fail_msg("got %.17g, want %.17g (relative error %g > %g)", got, want, err, rel);
}

double tt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t tt_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
