/*
 * companions.c - files a profiler's tool writes beside its profiles that are
 * not profiles themselves, recognised and named instead of read as a damaged
 * or empty trace (docs/inputs.md, "Companion files"): FramePack's memory log
 * and timing summary, PyTorch memory snapshot pickles.
 *
 * The one idea: a table of (file name, what its first bytes must hold, what
 * it is); the name alone is not enough for JSON (any tool may write a
 * memory_log.json), so a JSON companion is recognised by its keys too.
 */
#define _GNU_SOURCE
#include "profile.h"

#include <string.h>

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s != NULL ? s + 1 : path;
}

/* memmem over the first object of a JSON array: both keys before its '}'. */
static int first_object_has(const unsigned char *b, size_t n, const char *k1, const char *k2)
{
    size_t i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
        i++;
    if (i >= n || b[i] != '[')
        return 0;
    i++;
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
        i++;
    if (i >= n || b[i] != '{')
        return 0;
    const unsigned char *end = memchr(b + i, '}', n - i);
    size_t len = end != NULL ? (size_t)(end - (b + i)) : n - i;
    return memmem(b + i, len, k1, strlen(k1)) != NULL && memmem(b + i, len, k2, strlen(k2)) != NULL;
}

static const struct {
    const char *name;        /* the file name the tool writes */
    const char *key1, *key2; /* JSON: keys of the first array element (NULL: any content) */
    const char *what;
} companions[] = {
    { "memory_log.json", "\"label\"", "\"allocated_mb\"",
      "a FramePack memory log (MemoryTracker.export_json), whose snapshots profiling_report.json's "
      "memory_snapshots also holds" },
    { "timing_summary.txt", NULL, NULL,
      "FramePack's timing summary (console text), whose numbers profiling_report.json's timing_stats also "
      "holds" },
};

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

const char *tl_known_companion(const char *path, const unsigned char *b, size_t n)
{
    const char *base = base_name(path);
    /* a pickle (protocol 2-5 starts with PROTO, 0x80 and the version): PyTorch's
     * memory snapshot (torch.cuda.memory._dump_snapshot), as cache-dit writes it */
    if ((ends_with(base, ".pickle") || ends_with(base, ".pkl")) && b != NULL && n >= 2 && b[0] == 0x80 && b[1] >= 2 &&
        b[1] <= 5)
        return "a Python pickle: PyTorch's CUDA memory snapshot (torch.cuda.memory._dump_snapshot, as cache-dit "
               "writes it), which pytorch.org/memory_viz reads";
    for (size_t i = 0; i < sizeof companions / sizeof companions[0]; i++) {
        if (strcmp(base, companions[i].name) != 0)
            continue;
        if (companions[i].key1 == NULL || (b != NULL && first_object_has(b, n, companions[i].key1, companions[i].key2)))
            return companions[i].what;
    }
    return NULL;
}
