/*
 * driver.c - runs a libFuzzer target's LLVMFuzzerTestOneInput over files
 * given on the command line (directories are walked), so the fuzz code path
 * runs in every build on the corpus without clang's libFuzzer. Built into
 * the *_regress executables; the real fuzzers use -fsanitize=fuzzer instead.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long files;

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
        free(buf);
        files++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (nftw(argv[i], one, 16, FTW_PHYS) != 0) {
            fprintf(stderr, "%s: cannot walk\n", argv[i]);
            return 1;
        }
    printf("ran %lu inputs through the fuzz target\n", files);
    return files > 0 ? 0 : 1;
}
