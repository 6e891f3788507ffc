/*
 * test_sort_stable.c - tools/ingest/sort_stable.h: tl_sort_stable() gives
 * exactly the order of a stable sort (equal keys in input order) for every
 * shape of input it takes a different path for: sorted, a few runs, runs
 * interleaved in blocks (a trace's threads), reversed, random with many ties
 * (past the run limit: qsort), and element sizes inlined or not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sort_stable.h"

/* An element of `size` bytes: its key, its input position, then padding. */
typedef struct elem {
    int32_t key;
    uint32_t pos;
} elem;

static int by_key(const void *x, const void *y)
{
    int32_t a, b;
    memcpy(&a, x, sizeof a);
    memcpy(&b, y, sizeof b);
    return (a > b) - (a < b);
}

static int by_key_pos(const void *x, const void *y)
{
    elem a, b;
    memcpy(&a, x, sizeof a);
    memcpy(&b, y, sizeof b);
    if (a.key != b.key)
        return (a.key > b.key) - (a.key < b.key);
    return (a.pos > b.pos) - (a.pos < b.pos);
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

enum shape { SORTED, TWO_RUNS, BLOCKS, REVERSED, RANDOM, FEW_KEYS, SHAPES };

static int32_t key_of(enum shape s, size_t i, size_t n)
{
    switch (s) {
    case SORTED:
        return (int32_t)(i / 3); /* ties in threes */
    case TWO_RUNS:
        return (int32_t)(i < n / 2 ? i : i - n / 2);
    case BLOCKS:
        return (int32_t)((i / 50) % 2 ? 1000000 + i / 7 : i / 7); /* two threads in blocks */
    case REVERSED:
        return (int32_t)(n - i);
    case RANDOM:
        return (int32_t)(next_rand() % 1000);
    case FEW_KEYS:
        return (int32_t)(next_rand() % 3);
    default:
        return 0;
    }
}

/* Sort n elements of each shape and size both ways; the bytes must agree. */
static void check(size_t n, size_t size)
{
    for (int s = 0; s < SHAPES; s++) {
        char *a = calloc(n ? n : 1, size), *b = calloc(n ? n : 1, size);
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            elem e = { key_of((enum shape)s, i, n), (uint32_t)i };
            memcpy(a + i * size, &e, sizeof e);
            memset(a + i * size + sizeof e, (int)(i & 0xff), size - sizeof e); /* padding travels too */
        }
        memcpy(b, a, n * size);
        tl_sort_stable(a, n, size, by_key);
        qsort(b, n, size, by_key_pos); /* position breaks ties: the stable order */
        assert_memory_equal(a, b, n * size);
        free(a);
        free(b);
    }
}

static void test_shapes_and_sizes(void **state)
{
    (void)state;
    static const size_t sizes[] = { 8, 16, 24, 32, 40, 12, 56 };
    static const size_t counts[] = { 0, 1, 2, 3, 17, 1000, 20000 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof counts / sizeof *counts; j++)
            check(counts[j], sizes[i]);
}

/* A left run that sorts wholly after the right one, and one whose first half
 * stays in place: the merge moves only what it must. */
static void test_merge_moves(void **state)
{
    (void)state;
    elem v[6] = { { 4, 0 }, { 5, 1 }, { 6, 2 }, { 1, 3 }, { 2, 4 }, { 3, 5 } };
    tl_sort_stable(v, 6, sizeof *v, by_key);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(v[i].key, i + 1);
        assert_int_equal(v[i].pos, (uint32_t)((i + 3) % 6));
    }
    elem w[6] = { { 1, 0 }, { 2, 1 }, { 5, 2 }, { 2, 3 }, { 5, 4 }, { 9, 5 } };
    tl_sort_stable(w, 6, sizeof *w, by_key);
    static const uint32_t pos[6] = { 0, 1, 3, 2, 4, 5 }; /* the equal 2s and 5s: the left run's first */
    for (int i = 0; i < 6; i++)
        assert_int_equal(w[i].pos, pos[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_and_sizes),
        cmocka_unit_test(test_merge_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
