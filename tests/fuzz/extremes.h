/*
 * extremes.h - the structure-aware part of the fuzz set: every number of a
 * JSON document (of any format tally reads) is a field, and each field is
 * tried at the values that break arithmetic -- the ends of int64 and uint64,
 * 2^31 and 2^32 - 1 (NVML's "not available"), -1, 0, the ends of double, a
 * subnormal, 3e18 (tally's time bound). Byte-level fuzzers reach such values
 * rarely; a field-wise mutator found three signed overflows after 4,947
 * files that the fuzzers had missed (issue 26).
 *
 * Used two ways: the regression drivers (driver.c, --extremes) run every
 * field of every seed at every extreme, deterministically, in ctest; the
 * libFuzzer binaries take it as their custom mutator (half of the mutations
 * set one random field to one random extreme, the rest are libFuzzer's own).
 */
#ifndef TALLY_FUZZ_EXTREMES_H
#define TALLY_FUZZ_EXTREMES_H

#include <stddef.h>
#include <stdint.h>

/* The extreme values, as JSON number text. */
extern const char *const tl_fuzz_extremes[];
extern const size_t tl_fuzz_nextremes;

/* The numbers of data[0..size) outside strings, at most max of them: their
 * offsets and lengths. Returns how many were found (<= max). Not a JSON
 * parser: a number is a maximal run of [-+0-9.eE] that starts with a digit
 * or '-' outside a string. */
size_t tl_fuzz_numbers(const uint8_t *data, size_t size, size_t *off, size_t *len, size_t max);

/* data with the number at [off, off + len) replaced by text, into out (of
 * out_cap bytes). Returns the new size, or 0 when it does not fit. */
size_t tl_fuzz_replace(const uint8_t *data, size_t size, size_t off, size_t len, const char *text, uint8_t *out,
                       size_t out_cap);

#endif
