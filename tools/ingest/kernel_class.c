/*
 * kernel_class.c - the one table that says what kind of work a GPU event is:
 * communication, memory, compute, or other (sync). Every consumer (the GPU
 * breakdown, the overlap, the stragglers, the timelines) asks this table, and
 * docs/analysis.md's "Kernel type" section is generated from it
 * (render/docs_tables.c writes it from tl_kernel_class_table;
 * tests/unit/test_docs.c checks they agree).
 *
 * Patterns are shell globs (`*` any run of characters, `?` one character)
 * over the whole kernel name, case-insensitive. Users put their own patterns
 * in front of the table with `--kernel-class PATTERN=TYPE`: the first match
 * wins, theirs before ours.
 */
#define _GNU_SOURCE
#include "kernel_class.h"
#include "profile.h" /* enum tl_cat_class */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tl_kernel_class_row kclass;

/* Communication first: a collective that also moves memory is communication. */
static const kclass table[] = {
    { "nccl*", TL_KT_COMM, "NCCL: `ncclKernel_*` (NCCL < 2.19), `ncclDevKernel_*` (NCCL >= 2.19)" },
    { "*ncclKernel*", TL_KT_COMM, "NCCL kernels behind a template prefix (`void ncclKernel_...`)" },
    { "*ncclDevKernel*", TL_KT_COMM, "the same for NCCL >= 2.19" },
    { "rccl*", TL_KT_COMM, "RCCL on ROCm (RCCL also names kernels `ncclKernel_*`/`ncclDevKernel_*`)" },
    { "hccl*", TL_KT_COMM, "HCCL on Ascend NPUs" },
    { "*multimem_all_reduce*", TL_KT_COMM, "PyTorch symmetric memory (`c10d/symm_mem/CUDASymmetricMemoryOps.cu`)" },
    { "*multimem_all_gather*", TL_KT_COMM, "PyTorch symmetric memory" },
    { "*multimem_reduce_scatter*", TL_KT_COMM, "PyTorch symmetric memory" },
    { "*one_shot_all_reduce*", TL_KT_COMM, "PyTorch symmetric memory one-shot all-reduce" },
    { "*two_shot_all_reduce*", TL_KT_COMM, "PyTorch symmetric memory two-shot all-reduce" },
    { "*cross_device_reduce*", TL_KT_COMM, "vLLM custom all-reduce (`csrc/custom_all_reduce.cuh`)" },
    { "*nvshmem*", TL_KT_COMM, "NVSHMEM device kernels (`nvshmemi_*`, `nvshmem_*`)" },
    { "*oneccl*", TL_KT_COMM, "oneCCL kernels on Intel GPUs" },
    { "*AllReduce*", TL_KT_COMM,
      "collective kernels named by their operation (NCCL, TensorRT-LLM, DeepSpeed, custom)" },
    { "*all_reduce*", TL_KT_COMM, "the same, snake case (SGLang, vLLM, FlashInfer custom all-reduce)" },
    { "*AllGather*", TL_KT_COMM, "collective kernels named by their operation" },
    { "*all_gather*", TL_KT_COMM, "the same, snake case" },
    { "*ReduceScatter*", TL_KT_COMM, "collective kernels named by their operation" },
    { "*reduce_scatter*", TL_KT_COMM, "the same, snake case" },
    { "*AllToAll*", TL_KT_COMM, "collective kernels named by their operation (MoE dispatch)" },
    { "*all_to_all*", TL_KT_COMM, "the same, snake case (DeepEP, MoE dispatch/combine)" },
    { "memcpy*", TL_KT_MEMORY, "CUDA/HIP copies (`Memcpy HtoD (Pageable -> Device)`), also by category" },
    { "memset*", TL_KT_MEMORY, "CUDA/HIP fills (`Memset (Device)`), also by category" },
    { "dma*", TL_KT_MEMORY, "DMA engines (MTIA, HTA's pattern)" },
};

/* The user's patterns: a value the analysis options carry, never process
 * state (kernel_class.h). */
struct tl_kernel_classes {
    kclass user[TL_KERNEL_CLASS_MAX_USER];
    int n;
    /* The patterns as one string ("pattern=type; pattern=type", in the order
     * given, types by their canonical names): how partials record them, so
     * that partials made with different tables are never merged. */
    char *spec;
};

/* Glob match, case-insensitive, iterative with one backtrack point. */
static int glob_ci(const char *p, const char *s, size_t len)
{
    const char *star = NULL;
    size_t i = 0, mark = 0;
    while (i < len) {
        if (*p == '*') {
            star = ++p;
            mark = i;
        } else if (*p && (*p == '?' || tolower((unsigned char)*p) == tolower((unsigned char)s[i]))) {
            p++;
            i++;
        } else if (star) {
            p = star;
            i = ++mark;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

int tl_kernel_type_parse(const char *s)
{
    if (!strcasecmp(s, "compute"))
        return TL_KT_COMPUTE;
    if (!strcasecmp(s, "communication") || !strcasecmp(s, "comm"))
        return TL_KT_COMM;
    if (!strcasecmp(s, "memory"))
        return TL_KT_MEMORY;
    if (!strcasecmp(s, "other") || !strcasecmp(s, "sync"))
        return TL_KT_OTHER;
    return -1;
}

tl_kernel_classes *tl_kernel_classes_new(void)
{
    return calloc(1, sizeof(tl_kernel_classes));
}

void tl_kernel_classes_free(tl_kernel_classes *k)
{
    if (k == NULL)
        return;
    for (int i = 0; i < k->n; i++)
        free((char *)k->user[i].pattern);
    free(k->spec);
    free(k);
}

/* The separator of the recorded form: a pattern holding it could not be read back. */
#define SPEC_SEP "; "

static int add_pattern(tl_kernel_classes *k, const char *spec, size_t len)
{
    const char *eq = NULL;
    for (const char *c = spec; c < spec + len; c++)
        if (*c == '=')
            eq = c;
    if (eq == NULL || eq == spec || k->n == TL_KERNEL_CLASS_MAX_USER)
        return -1;
    char tname_in[32];
    size_t tlen = (size_t)(spec + len - eq - 1);
    if (tlen >= sizeof tname_in)
        return -1;
    memcpy(tname_in, eq + 1, tlen);
    tname_in[tlen] = '\0';
    int type = tl_kernel_type_parse(tname_in);
    if (type < 0)
        return -1;
    char *pat = strndup(spec, (size_t)(eq - spec));
    if (pat == NULL)
        return -1;
    if (strstr(pat, SPEC_SEP) != NULL) {
        free(pat);
        return -1;
    }
    const char *tname = tl_kernel_type_name(type);
    size_t old = k->spec ? strlen(k->spec) : 0;
    size_t more = (old ? strlen(SPEC_SEP) : 0) + strlen(pat) + 1 + strlen(tname) + 1;
    char *spec2 = realloc(k->spec, old + more);
    if (spec2 == NULL) {
        free(pat);
        return -1;
    }
    snprintf(spec2 + old, more, "%s%s=%s", old ? SPEC_SEP : "", pat, tname);
    k->spec = spec2;
    k->user[k->n++] = (kclass){ pat, type, "--kernel-class" };
    return 0;
}

int tl_kernel_classes_add(tl_kernel_classes *k, const char *spec)
{
    return k != NULL && spec != NULL ? add_pattern(k, spec, strlen(spec)) : -1;
}

int tl_kernel_classes_parse(tl_kernel_classes *k, const char *recorded)
{
    for (const char *p = recorded; p != NULL && *p != '\0';) {
        const char *end = strstr(p, SPEC_SEP);
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (add_pattern(k, p, len) != 0)
            return -1;
        p = end != NULL ? end + strlen(SPEC_SEP) : NULL;
    }
    return 0;
}

const char *tl_kernel_classes_spec(const tl_kernel_classes *k)
{
    return k != NULL ? k->spec : NULL;
}

/* ASCII lower case, as tolower() in the C locale (tally never calls setlocale). */
static unsigned char lower_ascii(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/*
 * glob_ci(pattern, name) for a name already in lower case (`lname`): the table's
 * shapes "*literal*" and "literal*" are a substring search and a prefix compare
 * (kernel names run to a thousand bytes, and the general glob backtracks at
 * every character); other patterns take glob_ci.
 */
static int match(const char *pattern, const char *name, const char *lname, size_t len)
{
    const char *lit = pattern + (pattern[0] == '*');
    size_t n = strcspn(lit, "*?");
    char low[64];

    if (lname == NULL || n >= sizeof low || lit[n] != '*' || lit[n + 1] != '\0')
        return glob_ci(pattern, name, len);
    for (size_t i = 0; i < n; i++)
        low[i] = (char)lower_ascii((unsigned char)lit[i]);
    if (lit == pattern) /* "literal*" */
        return len >= n && memcmp(lname, low, n) == 0;
    return memmem(lname, len, low, n) != NULL; /* "*literal*" */
}

/* Names longer than this are matched with the general glob. */
#define LOWER_MAX 4096

int tl_kernel_type_of(const tl_kernel_classes *k, const char *name, size_t len, int cat_class)
{
    char buf[LOWER_MAX];
    const char *lname = NULL;
    if (len <= sizeof buf) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)lower_ascii((unsigned char)name[i]);
        lname = buf;
    }
    for (int i = 0; k != NULL && i < k->n; i++)
        if (match(k->user[i].pattern, name, lname, len))
            return k->user[i].type;
    if (cat_class == TL_CC_SYNC)
        return TL_KT_OTHER;
    int memory_cat = cat_class == TL_CC_MEMCPY || cat_class == TL_CC_MEMSET;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (memory_cat && table[i].type == TL_KT_COMM)
            continue; /* a copy is a copy whatever its name */
        if (match(table[i].pattern, name, lname, len))
            return table[i].type;
    }
    return memory_cat ? TL_KT_MEMORY : TL_KT_COMPUTE;
}

const tl_kernel_class_row *tl_kernel_class_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}
