/*
 * test_shapes.c - operators by input shape, FLOPs and achieved TFLOP/s
 * (tools/ingest/shape_table.c, tools/analyze/shapes.c):
 *  - two ranks' traces recorded with record_shapes: aten::mm calls keyed by
 *    their shapes whatever the spacing, the kernels they launched linked by
 *    "External id" (a kernel written before its operator too, once the
 *    trace showed an operator with shapes), a call with
 *    the profiler's "flops"; across ranks the rows add up, FLOPs come from
 *    the shapes (2MKN) and TFLOP/s is over the kernels' time, against the
 *    H100's dense peak for float;
 *  - the FLOPs formulas one by one, and shapes that do not fit them;
 *  - the device peak table;
 *  - the "External id" map's dense array and hash (issue 33).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "read_trace.h"
#include "shape_table.h"
#include "tt_support.h"

static void read_session(tl_session *s, const char *text, const char *path)
{
    tl_profile p;
    tl_profile_init(&p, path);
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(&p, tt_mem_read, &m, &opt), 0);
    tl_analyze_options aopt;
    tl_analyze_options_init(&aopt);
    assert_int_equal(tl_session_analyze(s, &p, &aopt), 0);
    tl_identity_take_settled(&s->id, &p.id);
    tl_profile_release(&p);
}

#define HEAD(rank)                                                                                                     \
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}], \"distributedInfo\": "                 \
    "{\"rank\": " #rank ", \"world_size\": 2}, \"traceEvents\":["
#define MM(ts, ext, dims)                                                                                              \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":20,"            \
    "\"args\":{\"External id\":" #ext ",\"Input Dims\":" dims ",\"Input type\":[\"float\", \"float\"]}},"
#define KERNEL(ts, ext)                                                                                                \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm\",\"pid\":0,\"tid\":7,\"ts\":" #ts ",\"dur\":10,"           \
    "\"args\":{\"device\":0,\"stream\":7,\"External id\":" #ext ",\"correlation\":" #ext "}},"
#define END                                                                                                            \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":500,\"dur\":5,"               \
    "\"args\":{\"External id\":99,\"Input Dims\":[[512, 1024]],\"Input type\":[\"float\"],\"flops\":1000}}]}"

static void test_two_ranks(void **state)
{
    (void)state;
    static const char r0[] = HEAD(0) MM(100, 1, "[[512, 1024], [1024, 1024]]") KERNEL(110, 1)
        MM(200, 2, "[[512,1024],[1024,1024]]") KERNEL(210, 2) MM(300, 3, "[[16, 32], [32, 8]]") END;
    /* rank 1: a kernel written before its operator (once an operator with shapes was read) */
    static const char r1[] =
        HEAD(1) MM(50, 7, "[[512, 1024],[1024, 1024]]") KERNEL(110, 1) MM(100, 1, "[[512, 1024],[1024, 1024]]") END;
    tl_session s[2];
    read_session(&s[0], r0, "rank0.pt.trace.json");
    read_session(&s[1], r1, "rank1.pt.trace.json");
    /* rank 0: two keys of aten::mm (the spacing does not matter) and relu */
    assert_int_equal(s[0].nshapes, 3);
    assert_string_equal(s[0].shapes[0].name, "aten::mm");
    assert_string_equal(s[0].shapes[0].dims, "[[512,1024],[1024,1024]]");
    assert_string_equal(s[0].shapes[0].types, "float,float");
    assert_int_equal(s[0].shapes[0].count, 2);
    assert_int_equal(s[0].shapes[0].kernels, 2);
    assert_int_equal(s[0].shapes[0].gpu_ns, 20000);
    assert_int_equal(s[1].shapes[0].kernels, 1);
    tl_aggregate a;
    tl_aggregate_init(&a, NULL);
    for (int i = 0; i < 2; i++)
        assert_int_equal(tl_aggregate_add_session(&a, &s[i]), 0);
    assert_int_equal(tl_aggregate_finish(&a), 0);
    const tl_shapes *sh = &a.shapes;
    assert_int_equal(sh->sessions, 2);
    assert_int_equal(sh->ops_total, 2);
    assert_true(sh->peak_known);
    assert_string_equal(sh->ops[0].name, "aten::mm");
    assert_int_equal(sh->ops[0].shapes, 2);
    const tl_shape_row *r = &sh->rows[sh->ops[0].first];
    assert_string_equal(r->dims, "[[512,1024],[1024,1024]]");
    assert_int_equal(r->count, 4);
    assert_int_equal(r->nranks, 2);
    assert_int_equal(r->total_ns, 80000);
    assert_int_equal(r->rank_max_ns, 40000);
    assert_int_equal(r->kernels, 3);
    assert_int_equal(r->flops_source, TL_FLOPS_SHAPES);
    double f = 2.0 * 512 * 1024 * 1024;
    assert_true(fabs(r->flops - 4 * f) < 1);
    /* over the 3 kernels' 30 µs (one call launched none) */
    assert_int_equal(r->time_source, TL_TFLOPS_GPU);
    assert_true(fabs(r->tflops - 4 * f / 30e-6 / 1e12) < 1e-9);
    assert_true(fabs(r->peak_tflops - 66.9) < 1e-9);
    /* relu: the trace's flops, no kernel: no TFLOP/s on a GPU input */
    const tl_shape_row *relu = &sh->rows[sh->ops[1].first];
    assert_string_equal(relu->name, "aten::relu");
    assert_int_equal(relu->flops_source, TL_FLOPS_TRACE);
    assert_true(fabs(relu->flops - 2000) < 1e-9);
    assert_true(isnan(relu->tflops));
    tl_aggregate_release(&a);
}

static void test_formulas(void **state)
{
    (void)state;
    assert_true(fabs(tl_shape_flops("aten::mm", "[[4,8],[8,16]]") - 2.0 * 4 * 8 * 16) < 1e-9);
    assert_true(fabs(tl_shape_flops("aten::addmm", "[[16],[4,8],[8,16],[],[]]") - 2.0 * 4 * 8 * 16) < 1e-9);
    assert_true(fabs(tl_shape_flops("aten::bmm", "[[3,4,8],[3,8,16]]") - 2.0 * 3 * 4 * 8 * 16) < 1e-9);
    assert_true(fabs(tl_shape_flops("aten::baddbmm", "[[3,4,16],[3,4,8],[3,8,16],[],[]]") - 2.0 * 3 * 4 * 8 * 16) <
                1e-9);
    /* linear: x[2,5,8] W[16,8] -> 2 x 10 rows x 8 x 16 */
    assert_true(fabs(tl_shape_flops("aten::linear", "[[2,5,8],[16,8],[16]]") - 2.0 * 10 * 8 * 16) < 1e-9);
    /* attention q[2,4,128,64] k,v[2,4,256,64]: 4 x B H L S E */
    assert_true(fabs(tl_shape_flops("aten::_scaled_dot_product_flash_attention",
                                    "[[2,4,128,64],[2,4,256,64],[2,4,256,64],[],[]]") -
                     4.0 * 2 * 4 * 128 * 256 * 64) < 1e-9);
    /* shapes that do not fit, and operators without a standard cost */
    assert_true(isnan(tl_shape_flops("aten::mm", "[[4,8],[9,16]]")));
    assert_true(isnan(tl_shape_flops("aten::mm", "[[4,8]]")));
    assert_true(isnan(tl_shape_flops("aten::mm", "[[[4,8]],[8,16]]")));
    assert_true(isnan(tl_shape_flops("aten::relu", "[[4,8]]")));
    assert_true(isnan(tl_shape_flops("aten::mm", "[[-4,8],[8,16]]")));
    assert_true(isnan(tl_shape_flops("aten::bmm", "[[999999999999,999999999999,999999999999],"
                                                  "[999999999999,999999999999,999999999999]]")) ||
                isfinite(tl_shape_flops("aten::bmm", "[[999999999999,999999999999,999999999999],"
                                                     "[999999999999,999999999999,999999999999]]")));
    assert_true(isnan(tl_shape_flops("aten::conv2d", "[[1,3,224,224],[64,3,7,7],[64],[],[],[],[]]")));
}

static void test_peaks(void **state)
{
    (void)state;
    assert_true(fabs(tl_device_peak_tflops("NVIDIA H200", "float,float") - 66.9) < 1e-9);
    assert_true(fabs(tl_device_peak_tflops("NVIDIA H200", "c10::BFloat16,c10::BFloat16") - 989.4) < 1e-9);
    assert_true(fabs(tl_device_peak_tflops("NVIDIA H100 PCIe", "c10::Half") - 756.5) < 1e-9);
    assert_true(fabs(tl_device_peak_tflops("Tesla V100-SXM2-32GB", "float") - 15.7) < 1e-9);
    assert_true(fabs(tl_device_peak_tflops("NVIDIA A100-SXM4-80GB", "c10::BFloat16") - 312) < 1e-9);
    assert_true(isnan(tl_device_peak_tflops("NVIDIA A100-SXM4-80GB", "long int")));
    assert_true(isnan(tl_device_peak_tflops("Some Future GPU", "float")));
    assert_true(isnan(tl_device_peak_tflops(NULL, "float")));
}

/* The operators' "External id" -> call map: ids that count up go to a dense
 * array, ids below its base or far beyond its end to a hash, and an id the
 * hash took before the array grew over it is the array's on its next call
 * (the later call wins, as in one hash): each kernel goes to the right row. */
static void test_ext_map(void **state)
{
    (void)state;
    tl_shape_table t;
    tl_shape_table_init(&t);
    /* rows: "a" for the ids that count up, "below", "far" and "again" */
    for (int64_t ext = 1000; ext < 1100; ext++)
        assert_int_equal(tl_shape_table_add(&t, "a", 1, "[[1]]", 5, "", 0, 10, NAN, ext), 0);
    assert_int_equal(tl_shape_table_add(&t, "below", 5, "[[2]]", 5, "", 0, 10, NAN, 500), 0);
    assert_int_equal(tl_shape_table_add(&t, "far", 3, "[[3]]", 5, "", 0, 10, NAN, 1000000000000LL), 0);
    assert_int_equal(tl_shape_table_add(&t, "far", 3, "[[3]]", 5, "", 0, 10, NAN, 71000), 0); /* the hash */
    for (int64_t ext = 1100; ext < 20000; ext++) /* the array grows over 71000 */
        assert_int_equal(tl_shape_table_add(&t, "a", 1, "[[1]]", 5, "", 0, 10, NAN, ext), 0);
    assert_int_equal(tl_shape_table_add(&t, "again", 5, "[[4]]", 5, "", 0, 10, NAN, 71000), 0);
    assert_int_equal(t.op_n, 100 + 1 + 1 + 1 + 18900); /* 71000 once */
    static const struct {
        int64_t ext, dur;
    } k[] = { { 1000, 1 }, { 19999, 2 }, { 500, 4 }, { 1000000000000LL, 8 }, { 71000, 16 }, { 30000, 32 } };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        assert_int_equal(tl_shape_table_kernel(&t, k[i].ext, k[i].dur), 0);
    tl_shape_table_link(&t);
    int64_t got[4] = { -1, -1, -1, -1 };
    static const char *names[4] = { "a", "below", "far", "again" };
    for (size_t i = 0; i < t.n; i++)
        for (int j = 0; j < 4; j++)
            if (strcmp(tl_strtab_get(&t.strs, t.v[i].name), names[j]) == 0)
                got[j] = t.v[i].gpu_ns;
    assert_int_equal(got[0], 1 + 2); /* 30000: no operator */
    assert_int_equal(got[1], 4);
    assert_int_equal(got[2], 8);
    assert_int_equal(got[3], 16); /* the later call of 71000 */
    tl_shape_table_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_ranks),
        cmocka_unit_test(test_formulas),
        cmocka_unit_test(test_peaks),
        cmocka_unit_test(test_ext_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
