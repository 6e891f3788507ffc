/*
 * test_labels.c - names people can tell apart (tools/render/labels.c), on the
 * real kernel and op names of the corpus: the 8-rank DLRM set, HTA's
 * trace_filter ranks, the Kineto docs' H100 traces and HTA's NCCL trace with
 * mangled cutlass kernels. Every set of labels must be pairwise distinct,
 * fit its width, and keep the part of the name that tells it apart.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest.h"
#include "labels.h"
#include "names.h"
#include "text_table.h"

/* ---- real names --------------------------------------------------------------------------- */

typedef struct nameset {
    char **v;
    size_t n, cap;
} nameset;

static void add(nameset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        assert_non_null(s->v);
    }
    s->v[s->n] = strdup(name);
    assert_non_null(s->v[s->n]);
    s->n++;
}

static void release(nameset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The distinct names of one group (TL_GROUP_KERNELS, ...) in a corpus path. */
static void corpus_names(nameset *s, const char *rel, int group)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TALLY_CORPUS_DIR, rel);
    const char *paths[] = { path };
    tl_ingest_options o;
    tl_ingest_options_init(&o);
    o.jobs = 1;
    tl_run run;
    tl_run_init(&run);
    assert_true(tl_run_ingest(&run, paths, 1, &o) > 0);
    for (size_t i = 0; i < run.n; i++) {
        const tl_profile *p = run.profiles[i];
        for (uint32_t k = 0; k < p->nstats; k++)
            if (tl_group_of(p->stats[k].cat_class) == group)
                add(s, tl_strtab_get(&p->strs, p->stats[k].name));
    }
    tl_run_release(&run);
}

static void check_distinct_fit(const char *const *names, size_t n, size_t width)
{
    tl_labels l;
    assert_int_equal(tl_labels_make(&l, names, n, width), 0);
    for (size_t i = 0; i < n; i++) {
        if (tl_labels_cols(l.text[i]) > width)
            fail_msg("label '%s' is %zu columns, more than %zu", l.text[i], tl_labels_cols(l.text[i]), width);
        for (size_t j = 0; j < i; j++)
            if (strcmp(l.text[i], l.text[j]) == 0)
                fail_msg("two names print as '%s' at width %zu:\n  %s\n  %s", l.text[i], width, l.full[i], l.full[j]);
    }
    tl_labels_release(&l);
}

/* Every set is distinct and fits, at the widths the outputs use. */
static void test_corpus_sets_distinct(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int group;
    } sets[] = {
        { "param-dlrm_kineto-8rank", TL_GROUP_KERNELS }, { "param-dlrm_kineto-8rank", TL_GROUP_OPS },
        { "hta/trace_filter", TL_GROUP_KERNELS },        { "hta/trace_filter", TL_GROUP_OPS },
        { "kineto-docs-traces", TL_GROUP_KERNELS },      { "hta/nccl_parser_config", TL_GROUP_KERNELS },
    };
    static const size_t widths[] = { 21, 30, 46, 60 };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        nameset s = { 0 };
        corpus_names(&s, sets[i].path, sets[i].group);
        assert_true(s.n > 0);
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            check_distinct_fit((const char *const *)s.v, s.n, widths[w]);
        release(&s);
    }
}

/* The issue's case: the DLRM set has eight and more vectorized_elementwise
 * kernels that a plain cut printed as one prefix; their labels differ, and
 * each keeps the functor that tells it apart. */
static void test_vectorized_kernels(void **state)
{
    (void)state;
    nameset s = { 0 }, v = { 0 };
    corpus_names(&s, "param-dlrm_kineto-8rank", TL_GROUP_KERNELS);
    for (size_t i = 0; i < s.n; i++)
        if (strstr(s.v[i], "vectorized_elementwise_kernel<"))
            add(&v, s.v[i]);
    assert_true(v.n >= 8);
    tl_labels l;
    assert_int_equal(tl_labels_make(&l, (const char *const *)v.v, v.n, 46), 0);
    for (size_t i = 0; i < v.n; i++) {
        assert_int_equal(strncmp(l.text[i], "vectorized_elementwise", 22), 0);
        assert_null(strstr(l.text[i], "at::native::")); /* namespaces dropped */
        assert_null(strstr(l.text[i], "void "));        /* and the return type */
    }
    int fill = 0;
    for (size_t i = 0; i < v.n; i++)
        if (strstr(l.full[i], "FillFunctor<float>") && strstr(l.full[i], "Array<char*, 1>")) {
            assert_non_null(strstr(l.text[i], "FillFunctor"));
            fill = 1;
        }
    assert_true(fill);
    tl_labels_release(&l);
    release(&v);
    release(&s);
}

/* Demangling: the mangled form of a DLRM kernel gives exactly the name the
 * DLRM trace carries (Kineto writes it demangled). */
static void test_demangle(void **state)
{
    (void)state;
    nameset s = { 0 };
    corpus_names(&s, "param-dlrm_kineto-8rank", TL_GROUP_KERNELS);
    char *d = tl_labels_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5"
                                 "ArrayIPcLi1EEEEEviT0_T1_");
    assert_non_null(d);
    int found = 0;
    for (size_t i = 0; i < s.n; i++)
        found |= strcmp(s.v[i], d) == 0;
    if (!found)
        fail_msg("'%s' is not a DLRM kernel name", d);
    free(d);
    assert_null(tl_labels_demangle("aten::mm"));      /* not mangled */
    assert_null(tl_labels_demangle("_Znot mangled")); /* does not demangle: shown as it is */
    release(&s);
}

/* HTA's NCCL trace carries two mangled cutlass kernels that differ only in a
 * GemmShape deep inside, and that neither libiberty nor c++filt demangles
 * (shown as they are): their labels keep the shapes that differ. */
static void test_mangled_cutlass(void **state)
{
    (void)state;
    nameset s = { 0 }, m = { 0 };
    corpus_names(&s, "hta/nccl_parser_config", TL_GROUP_KERNELS);
    for (size_t i = 0; i < s.n; i++)
        if (strncmp(s.v[i], "_ZN19cutlass_cudnn_train", 24) == 0)
            add(&m, s.v[i]);
    assert_int_equal(m.n, 2);
    tl_labels l;
    assert_int_equal(tl_labels_make(&l, (const char *const *)m.v, 2, 46), 0);
    assert_string_not_equal(l.text[0], l.text[1]);
    int i128 = strstr(l.full[0], "GemmShapeILi128") != NULL ? 0 : 1;
    assert_non_null(strstr(l.text[i128], "GemmShapeILi128"));
    assert_non_null(strstr(l.text[1 - i128], "GemmShapeILi64"));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(strncmp(l.text[i], "_ZN19cutlass_cudnn_tra", 22), 0);
        assert_string_equal(l.full[i], m.v[i]); /* the tooltip's name, whole */
    }
    tl_labels_release(&l);
    release(&m);
    release(&s);
}

static void test_compact(void **state)
{
    (void)state;
    char *c = tl_labels_compact("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                                "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
                                "at::detail::Array<char*, 1>)",
                                0);
    assert_string_equal(c, "vectorized_elementwise_kernel<4, FillFunctor<float>, Array<char*, 1>>");
    free(c);
    c = tl_labels_compact("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
                          "sqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::"
                          "operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
                          "at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::"
                          "{lambda()#2}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
                          "at::native::gpu_kernel_impl<at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::"
                          "{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>"
                          "(at::TensorIteratorBase&, at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::"
                          "{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1} "
                          "const&)::{lambda(int)#1})",
                          0);
    assert_string_equal(c, "elementwise_kernel<128, 2, gpu_kernel_impl<sqrt_kernel_cuda::{lambda}>::{lambda}>");
    free(c);
    c = tl_labels_compact("void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, "
                          "int const*, int const*, int const*, int*, int*, decltype(nullptr))",
                          0);
    assert_string_equal(c, "permute_2D_data_kernel<false, int, int, decltype(nullptr)>");
    free(c);
    /* not C++: kept as it is */
    c = tl_labels_compact("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0);
    assert_string_equal(c, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    free(c);
    c = tl_labels_compact("Memcpy HtoD (Pageable -> Device)", 0);
    assert_string_equal(c, "Memcpy HtoD (Pageable -> Device)");
    free(c);
    /* a phrase before the name stays */
    c = tl_labels_compact("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 0);
    assert_string_equal(c, "evaluate_function: torch::autograd::AccumulateGrad");
    free(c);
    /* unbalanced brackets: never invents text */
    c = tl_labels_compact("a::b<c::d(", 0);
    assert_non_null(c);
    free(c);
}

static void test_fit(void **state)
{
    (void)state;
    char *f = tl_labels_fit("short", 10, 0, 0);
    assert_string_equal(f, "short");
    free(f);
    /* middle ellipsis, UTF-8 safe, exactly the width */
    f = tl_labels_fit("\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5"
                      "abcdefghij",
                      10, 0, 0);
    assert_int_equal(tl_labels_cols(f), 10);
    assert_non_null(strstr(f, "\xe2\x80\xa6"));
    free(f);
    /* a focus in the middle stays visible */
    const char *s = "kernel<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaXYZaaaaaaaaaaaaaaaaaaaaaaaaaa>";
    size_t at = (size_t)(strstr(s, "XYZ") - s);
    f = tl_labels_fit(s, 30, at, at + 3);
    assert_int_equal(tl_labels_cols(f), 30);
    assert_non_null(strstr(f, "XYZ"));
    assert_int_equal(strncmp(f, "kernel<", 7), 0);
    free(f);
}

/* Names that are equal after any cut still get distinct labels; duplicates
 * in the input (two lanes named alike) get " #2". */
static void test_last_resort(void **state)
{
    (void)state;
    const char *names[] = { "same", "same", "same" };
    tl_labels l;
    assert_int_equal(tl_labels_make(&l, names, 3, 20), 0);
    assert_string_equal(l.text[0], "same");
    assert_string_equal(l.text[1], "same #2");
    assert_string_equal(l.text[2], "same #3");
    tl_labels_release(&l);
}

/* The console: a table fits the width and says what it left out. */
static void test_text_table(void **state)
{
    (void)state;
    static const tl_text_col cols[] = { { "Name", 0, 0, 1 }, { "Total", 1, 0, 0 }, { "Extra", 1, 1, 0 } };
    tl_text_table t;
    tl_text_table_init(&t, cols, 3);
    const char *r1[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "1.246 ms", "123456789012345678901234567890"
    };
    const char *r2[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, 1>)",
        "317.5 \xc2\xb5s", "x"
    };
    tl_text_table_row(&t, r1);
    tl_text_table_row(&t, r2);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    assert_int_equal(tl_text_table_print(f, &t, 50), 0);
    fclose(f);
    tl_text_table_release(&t);
    /* every line within 50 columns (the note wraps too); the Extra column
     * left out and named; the two names tell their functors apart */
    assert_non_null(strstr(out, "(not shown at 50 columns: Extra;"));
    char *save = NULL;
    int lines = 0;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
        if (tl_labels_cols(line) > 50)
            fail_msg("line wider than 50 columns: '%s'", line);
        if (lines == 2)
            assert_non_null(strstr(line, "FillFunctor<float"));
        if (lines == 3)
            assert_non_null(strstr(line, "FillFunctor<int"));
    }
    assert_true(lines >= 5);
    free(out);
}

/* A name in a box: whole when it fits, else never wider than the box. */
static void test_box(void **state)
{
    (void)state;
    char *l = tl_labels_box("aten::copy_", 20);
    assert_string_equal(l, "aten::copy_");
    free(l);
    assert_null(tl_labels_box("aten::copy_", 1));
    /* compacted first (namespaces dropped), then a short cut: the start and an ellipsis */
    l = tl_labels_box("aten::copy_", 5);
    assert_string_equal(l, "copy_");
    free(l);
    l = tl_labels_box("DistributedDataParallel.forward", 6);
    assert_string_equal(l, "Distr\xe2\x80\xa6");
    free(l);
    /* torchrec's markers go first */
    l = tl_labels_box("## KJTAllToAllTensorsAwaitable wait() ##", 20);
    assert_true(tl_labels_cols(l) <= 20);
    assert_null(strstr(l, "##"));
    assert_int_equal(strncmp(l, "KJTAll", 6), 0);
    free(l);
    l = tl_labels_box("## forward ##", 14);
    assert_string_equal(l, "## forward ##");
    free(l);
    l = tl_labels_box("## forward ##", 8);
    assert_string_equal(l, "forward");
    free(l);
    /* a C++ name: compacted, then cut in the middle, within the width at every width */
    const char *cxx =
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
    assert_null(tl_labels_box(cxx, 3));
    l = tl_labels_box("E", 1);
    assert_string_equal(l, "E");
    free(l);
    for (size_t w = 4; w < 120; w++) {
        l = tl_labels_box(cxx, w);
        assert_non_null(l);
        assert_true(tl_labels_cols(l) <= w);
        free(l);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_box),
        cmocka_unit_test(test_last_resort),
        cmocka_unit_test(test_text_table),
        cmocka_unit_test(test_vectorized_kernels),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_mangled_cutlass),
        cmocka_unit_test(test_corpus_sets_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
