/*
 * test_mpi_shares.c - tally-mpi's shares (tools/mpi/shares.c): every item
 * has exactly one owner, the bytes are balanced (largest first to the least
 * loaded), ties go to the lowest process, and the answer depends only on the
 * list (every process computes it alone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "mpi_analyze.h"

static int64_t load_of(const int64_t *bytes, const int *owner, size_t n, int p)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        if (owner[i] == p)
            sum += bytes[i];
    return sum;
}

static void test_largest_first(void **state)
{
    (void)state;
    /* 10 GB then nine 1 GB files over 2 processes: the big one alone on 0,
     * the nine small ones on 1 (9 GB), not 5 + 5 by count. */
    const int64_t G = 1000000000;
    int64_t b[10] = { 10 * G, G, G, G, G, G, G, G, G, G };
    int owner[10];
    tl_mpi_shares(b, 10, 2, owner);
    assert_int_equal(owner[0], 0);
    for (int i = 1; i < 10; i++)
        assert_int_equal(owner[i], 1);
}

static void test_balanced(void **state)
{
    (void)state;
    /* 1,000 files of pseudo-random sizes over 7 processes: the heaviest share
     * is within the largest file of the lightest one (LPT's bound). */
    enum { N = 1000, P = 7 };
    int64_t b[N], biggest = 0;
    int owner[N];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (int64_t)(x % 1000000) + 1;
        biggest = b[i] > biggest ? b[i] : biggest;
    }
    tl_mpi_shares(b, N, P, owner);
    int64_t lo = INT64_MAX, hi = 0, total = 0;
    for (int p = 0; p < P; p++) {
        int64_t l = load_of(b, owner, N, p);
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
        total += l;
    }
    int64_t all = 0;
    for (int i = 0; i < N; i++) {
        assert_true(owner[i] >= 0 && owner[i] < P);
        all += b[i];
    }
    assert_int_equal(total, all);
    assert_true(hi - lo <= biggest);
}

static void test_more_processes_than_items(void **state)
{
    (void)state;
    int64_t b[2] = { 5, 7 };
    int owner[2];
    tl_mpi_shares(b, 2, 3, owner);
    assert_int_equal(owner[1], 0); /* the larger first, to process 0 */
    assert_int_equal(owner[0], 1);
    tl_mpi_shares(b, 0, 3, owner); /* nothing to share */
}

static void test_equal_sizes_tie_to_lowest(void **state)
{
    (void)state;
    /* equal sizes: in list order, round robin from process 0; empty files count */
    int64_t b[6] = { 0, 0, 0, 0, 0, 0 };
    int owner[6];
    tl_mpi_shares(b, 6, 3, owner);
    for (int i = 0; i < 6; i++)
        assert_int_equal(owner[i], i % 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_largest_first),
        cmocka_unit_test(test_balanced),
        cmocka_unit_test(test_more_processes_than_items),
        cmocka_unit_test(test_equal_sizes_tie_to_lowest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
