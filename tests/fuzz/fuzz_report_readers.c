/*
 * fuzz_report_readers.c - libFuzzer target for the report readers (tally,
 * FramePack, Inferix). Every reader sees every input, whatever its format, so
 * each one meets documents meant for the others; tl_read_report (format
 * recognition) runs too. A reader must never crash and never leave a profile
 * its own release cannot free.
 */
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "report_readers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int (*readers[])(tl_profile *, const char *, size_t) = {
        tl_read_report,
        tl_read_tally_report,
        tl_read_framepack,
        tl_read_inferix,
    };
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        tl_profile p;
        tl_profile_init(&p, "fuzz");
        readers[i](&p, (const char *)data, size);
        tl_profile_finish(&p);
        tl_profile_release(&p);
    }
    return 0;
}
