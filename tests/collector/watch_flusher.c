/*
 * watch_flusher.c - a libtally program for tests/collector/watch.sh: six
 * steps of "compute" (8 ms) and "io" (2 ms), tally_flush(), then it creates
 * the file argv[1] and waits (at most 60 s) for the file argv[2] before six
 * more steps and its exit, which writes the report again. So `tally watch`
 * can read the flushed report while the program still runs, and the
 * rewritten one after.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <tally/tally.h>

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) != 0)
        ;
}

static void steps(int n)
{
    for (int i = 0; i < n; i++) {
        tally_iteration_begin("step");
        tally_begin("compute");
        sleep_ms(8);
        tally_end();
        tally_begin("io");
        sleep_ms(2);
        tally_end();
        tally_iteration_end("step");
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: watch_flusher FLUSHED_MARK GO_MARK\n");
        return 2;
    }
    tally_init(NULL);
    steps(6);
    sleep_ms(100); /* a few sampler readings */
    if (tally_flush() != 0)
        return 1;
    FILE *f = fopen(argv[1], "w");
    if (f == NULL)
        return 1;
    fclose(f);
    for (int i = 0; i < 600 && access(argv[2], F_OK) != 0; i++)
        sleep_ms(100);
    steps(6);
    return 0;
}
