/*
 * array.c - how a growing array grows (see array.h).
 */
#include "array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int tl_array_grow_slow(void *arrp, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c <= n) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (elem != 0 && c > SIZE_MAX / elem)
        return -1;
    void *arr;
    memcpy(&arr, arrp, sizeof arr); /* the pointer, whatever its type */
    void *x = realloc(arr, c * elem);
    if (x == NULL)
        return -1;
    memcpy(arrp, &x, sizeof x);
    *cap = c;
    return 0;
}
