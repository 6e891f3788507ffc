/*
 * extremes.c - numbers of a JSON document at their extremes (extremes.h),
 * and, in the libFuzzer builds (TALLY_FUZZ_LIBFUZZER), the custom mutator
 * that uses them.
 */
#include "extremes.h"

#include <stdlib.h>
#include <string.h>

const char *const tl_fuzz_extremes[] = {
    "9223372036854775807",  /* INT64_MAX */
    "-9223372036854775808", /* INT64_MIN */
    "9223372036854775808",  /* INT64_MAX + 1: only a double holds it */
    "18446744073709551615", /* UINT64_MAX */
    "4294967295",           /* 2^32 - 1: NVML's "not available" */
    "2147483648",           /* 2^31 */
    "-1",
    "0",
    "-0",
    "3000000000000000001", /* just past tally's time bound (TL_TRACE_TS_MAX) */
    "1e308",
    "-1e308",
    "4.9e-324", /* the smallest subnormal */
};
const size_t tl_fuzz_nextremes = sizeof tl_fuzz_extremes / sizeof tl_fuzz_extremes[0];

static int number_char(uint8_t c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

size_t tl_fuzz_numbers(const uint8_t *data, size_t size, size_t *off, size_t *len, size_t max)
{
    size_t n = 0;
    int in_string = 0;
    for (size_t i = 0; i < size && n < max; i++) {
        uint8_t c = data[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
            continue;
        }
        if (c == '"') {
            in_string = 1;
            continue;
        }
        if ((c >= '0' && c <= '9') || c == '-') {
            size_t k = i;
            while (k < size && number_char(data[k]))
                k++;
            off[n] = i;
            len[n] = k - i;
            n++;
            i = k - 1;
        }
    }
    return n;
}

size_t tl_fuzz_replace(const uint8_t *data, size_t size, size_t off, size_t len, const char *text, uint8_t *out,
                       size_t out_cap)
{
    size_t t = strlen(text), n = size - len + t;
    if (off + len > size || n > out_cap)
        return 0;
    memmove(out, data, off);
    memcpy(out + off, text, t);
    memcpy(out + off + t, data + off + len, size - off - len);
    return n;
}

#ifdef TALLY_FUZZ_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Half of the mutations: one number field of the input set to one extreme. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    enum { MAX_FIELDS = 4096 };
    static size_t off[MAX_FIELDS], len[MAX_FIELDS];
    if (seed & 1) {
        size_t n = tl_fuzz_numbers(data, size, off, len, MAX_FIELDS);
        if (n > 0) {
            size_t k = (seed >> 1) % n;
            const char *x = tl_fuzz_extremes[(seed >> 13) % tl_fuzz_nextremes];
            uint8_t *tmp = malloc(max_size ? max_size : 1);
            if (tmp != NULL) {
                size_t m = tl_fuzz_replace(data, size, off[k], len[k], x, tmp, max_size);
                if (m > 0)
                    memcpy(data, tmp, m);
                free(tmp);
                if (m > 0)
                    return m;
            }
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
#endif
