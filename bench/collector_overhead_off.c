/*
 * collector_overhead_off.c - the "compiled out" row of bench_collector_overhead.
 *
 * This translation unit is compiled with TALLY_DISABLE, so tally.h turns every
 * call below into nothing. The loop is otherwise the same as the measured
 * loops in collector_overhead.c (same compiler barrier per pair), so what it
 * measures is the cost that instrumentation leaves behind when compiled out:
 * none beyond the empty loop itself.
 */
#ifndef TALLY_DISABLE
#error "collector_overhead_off.c must be compiled with -DTALLY_DISABLE"
#endif
#include <tally/tally.h>

long bench_pairs_compiled_out(long n);

long bench_pairs_compiled_out(long n)
{
    for (long i = 0; i < n; i++) {
        tally_begin("bench_pair");
        tally_end();
        __asm__ volatile("" ::: "memory");
    }
    return n;
}
