/*
 * driver.c - runs a libFuzzer target's LLVMFuzzerTestOneInput over files
 * given on the command line (directories are walked), so the fuzz code path
 * runs in every build on the corpus without clang's libFuzzer. Built into
 * the *_regress executables; the real fuzzers use -fsanitize=fuzzer instead.
 *
 * With --extremes first, each file (up to EXTREMES_MAX_BYTES) is also run
 * with every number field set to every extreme value (extremes.h), one
 * field at a time: the structure-aware, deterministic part of the fuzz set.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "extremes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Files larger than this are run as they are, not field by field: the
 * extremes run stays a few seconds in CI (the seeds are small). */
#define EXTREMES_MAX_BYTES (256 << 10)
#define EXTREMES_MAX_FIELDS 2000

static unsigned long files, variants, fields;
static int extremes;

static void run_extremes(const uint8_t *buf, size_t n)
{
    static size_t off[EXTREMES_MAX_FIELDS], len[EXTREMES_MAX_FIELDS];
    size_t nf = tl_fuzz_numbers(buf, n, off, len, EXTREMES_MAX_FIELDS);
    uint8_t *v = malloc(n + 64);
    if (v == NULL)
        return;
    for (size_t k = 0; k < nf; k++)
        for (size_t x = 0; x < tl_fuzz_nextremes; x++) {
            size_t m = tl_fuzz_replace(buf, n, off[k], len[k], tl_fuzz_extremes[x], v, n + 64);
            if (m > 0) {
                LLVMFuzzerTestOneInput(v, m);
                variants++;
            }
        }
    fields += nf;
    free(v);
}

static int one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F || st->st_size > (64 << 20))
        return 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    uint8_t *buf = malloc((size_t)st->st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st->st_size, f) : 0;
    fclose(f);
    if (buf != NULL) {
        LLVMFuzzerTestOneInput(buf, n);
        if (extremes && n <= EXTREMES_MAX_BYTES)
            run_extremes(buf, n);
        free(buf);
        files++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--extremes") == 0) {
        extremes = 1;
        first = 2;
    }
    for (int i = first; i < argc; i++)
        if (nftw(argv[i], one, 16, FTW_PHYS) != 0) {
            fprintf(stderr, "%s: cannot walk\n", argv[i]);
            return 1;
        }
    if (extremes)
        printf("ran %lu inputs through the fuzz target, and %lu variants: %lu number fields x %zu extremes\n", files,
               variants, fields, tl_fuzz_nextremes);
    else
        printf("ran %lu inputs through the fuzz target\n", files);
    return files > 0 ? 0 : 1;
}
