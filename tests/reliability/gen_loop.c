/*
 * gen_loop.c - a libtally program for the reliability suite: a loop of N
 * iterations with a nested section, so its report grows with N (8,000
 * iterations make a report well past the 64 KiB that format sniffing once
 * looked at, and past the 1,000 steps the step table once kept).
 *
 *   tally_rel_gen_loop N     (outputs go where TALLY_OUTPUT_DIR says)
 */
#include <tally/tally.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 8000;
    volatile double x = 0;
    tally_init(NULL);
    for (long i = 0; i < n; i++) {
        tally_iteration_begin("train_step");
        tally_begin("forward");
        for (int k = 0; k < 200; k++)
            x += (double)k * 0.5;
        tally_end();
        tally_iteration_end("train_step");
    }
    tally_shutdown();
    return x < 0;
}
