/*
 * test_array.c - common/array.h: an array grows by doubling from its first
 * block, only when it is full; a size that would overflow is refused and
 * leaves the array as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "array.h"

static void test_doubling(void **state)
{
    (void)state;
    int *v = NULL;
    size_t n = 0, cap = 0, grew = 0, last = 0;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(TL_ARRAY_GROW(v, n, cap), 0);
        assert_true(cap > n);
        grew += cap != last;
        last = cap;
        v[n++] = i;
    }
    assert_int_equal(cap, 1024); /* 8, 16, ..., 1024 */
    assert_int_equal(grew, 8);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i);
    free(v);
}

static void test_first_and_full(void **state)
{
    (void)state;
    double *v = NULL;
    size_t cap = 0;
    assert_int_equal(tl_array_grow(&v, 0, &cap, sizeof *v, 64), 0);
    assert_int_equal(cap, 64);
    double *before = v;
    assert_int_equal(tl_array_grow(&v, 63, &cap, sizeof *v, 64), 0); /* room left: untouched */
    assert_ptr_equal(v, before);
    assert_int_equal(cap, 64);
    free(v);
}

static void test_overflow_refused(void **state)
{
    (void)state;
    char *v = NULL;
    size_t cap = 0;
    assert_int_equal(tl_array_grow(&v, 0, &cap, SIZE_MAX / 4, 8), -1);
    assert_null(v);
    assert_int_equal(cap, 0);
    cap = SIZE_MAX / 2 + 1;
    assert_int_equal(tl_array_grow(&v, cap, &cap, 1, 8), -1);
    assert_null(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubling),
        cmocka_unit_test(test_first_and_full),
        cmocka_unit_test(test_overflow_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
