/*
 * clock.c - the time source of the hot path.
 *
 * clock_gettime(CLOCK_MONOTONIC) costs ~30 ns on common virtual machines,
 * which alone would spend most of a 100 ns begin/end budget. Where the kernel
 * itself trusts the TSC (its clocksource is "tsc": invariant and synchronized
 * across cores), we read the TSC directly (~7 ns) and convert ticks to ns at
 * write time with a ratio measured against CLOCK_MONOTONIC over the whole
 * run, so the conversion gets more precise the longer the program runs.
 * Elsewhere ticks are nanoseconds from CLOCK_MONOTONIC.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int tl_clock_use_tsc;
static uint64_t start_ticks;
static uint64_t start_mono_ns;
static int64_t start_real_ns;

uint64_t tl_clock_ns_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t tl_clock_ns_realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int kernel_trusts_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    char buf[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f == NULL)
        return 0;
    if (fgets(buf, sizeof buf, f) == NULL)
        buf[0] = '\0';
    fclose(f);
    return strncmp(buf, "tsc", 3) == 0;
#else
    return 0;
#endif
}

void tl_clock_setup(const char *mode)
{
    int tsc;
    if (mode != NULL && strcmp(mode, "monotonic") == 0)
        tsc = 0;
    else if (mode != NULL && strcmp(mode, "tsc") == 0)
#if defined(__x86_64__) || defined(__i386__)
        tsc = 1;
#else
        tsc = 0;
#endif
    else
        tsc = kernel_trusts_tsc();
    /* Other threads read it on the hot path (tl_now), possibly before they
     * synchronize with the end of initialization: an atomic store. */
    TL_STORE(tl_clock_use_tsc, tsc);
    start_mono_ns = tl_clock_ns_monotonic();
    start_real_ns = tl_clock_ns_realtime();
    start_ticks = tl_now();
}

const char *tl_clock_source(void)
{
    return TL_LOAD(tl_clock_use_tsc) ? "tsc" : "CLOCK_MONOTONIC";
}

uint64_t tl_clock_start_ticks(void)
{
    return start_ticks;
}
int64_t tl_clock_start_realtime_ns(void)
{
    return start_real_ns;
}

/* ns per tick from the start of recording to now: the TSC read between two
 * monotonic reads to pair them tightly. */
static double ratio_now(void)
{
    uint64_t m1 = tl_clock_ns_monotonic();
    uint64_t t = tl_now();
    uint64_t m2 = tl_clock_ns_monotonic();
    double mono_mid = (double)m1 / 2 + (double)m2 / 2;
    double ticks = (double)(t - start_ticks);
    if (ticks <= 0 || mono_mid <= (double)start_mono_ns)
        return 1.0;
    return (mono_mid - (double)start_mono_ns) / ticks;
}

double tl_clock_ns_per_tick(void)
{
    if (!TL_LOAD(tl_clock_use_tsc))
        return 1.0;
    /* A ratio over less than 20 ms would carry the jitter of the two reads;
     * wait out the rest (only ever at the end of a very short run). */
    uint64_t mono = tl_clock_ns_monotonic();
    if (mono - start_mono_ns < 20000000u) {
        uint64_t left = 20000000u - (mono - start_mono_ns);
        struct timespec ts = { 0, (long)left };
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return ratio_now();
}

double tl_clock_ns_per_tick_now(void)
{
    return TL_LOAD(tl_clock_use_tsc) ? ratio_now() : 1.0;
}

double tl_clock_ticks_to_ns_since_start(uint64_t ticks, double ns_per_tick)
{
    if (ticks < start_ticks)
        return 0;
    return (double)(ticks - start_ticks) * ns_per_tick;
}
