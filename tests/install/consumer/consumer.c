/*
 * consumer.c - the smallest program of a libtally user: a section and an
 * iteration, then the files written at exit (checked by tests/install/check.sh).
 * Built against the installed headers and library only.
 */
#include <tally/tally.h>

int main(void)
{
    tally_begin("load");
    tally_end();
    for (int i = 0; i < 3; i++) {
        tally_iteration_begin("step");
        tally_iteration_end("step");
    }
    return 0;
}
