/*
 * collector_test_util.h - the fork-and-inspect pattern of the collector's
 * end-to-end tests.
 *
 * libtally keeps global state and initializes once per process, so each
 * scenario runs in a forked child: the child starts from a clean TALLY_*
 * environment plus the scenario's variables, runs a body that records, and
 * leaves through exit() so that the library's atexit handler writes the files,
 * as in a real program. The test process itself never calls libtally; it
 * reads the child's exit status, stdout and stderr, and the files it wrote
 * (jansson, zlib), and runs tests/collector/check_outputs.py on them.
 *
 * Helpers that check something fail the current cmocka test on their own, so
 * they must only be called from the test process, never from a child body.
 */
#ifndef TALLY_COLLECTOR_TEST_UTIL_H
#define TALLY_COLLECTOR_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <sys/types.h>

#include "tt_support.h" /* files, directories, strings: the helpers all tests share */

/* One scenario: a temporary directory and what its child process did. */
typedef struct tt_scenario {
    char base[512]; /* mkdtemp directory; removed by tt_end() */
    char dir[600];  /* base/out: TALLY_OUTPUT_DIR of the child */
    pid_t pid;      /* the child's pid */
    int status;     /* its exit status, or 128 + the signal that killed it */
    char *out;      /* its stdout and stderr (NUL-terminated) */
    char *err;
    int slot; /* (internal: for tt_teardown) */
} tt_scenario;

/* A child body: records, returns the exit status (the child calls exit() with it). */
typedef int (*tt_body)(void *arg);

/* A check inside a child body: on failure, say which on stderr and return 99
 * (tt_run prints the child's stderr when it exits nonzero). */
#define TT_REQUIRE(cond)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "child check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);                            \
            return 99;                                                                                                 \
        }                                                                                                              \
    } while (0)

/* Make the directories of a scenario (base and base/out). */
void tt_begin(tt_scenario *s);
/* Remove the directories and free the captured output. */
void tt_end(tt_scenario *s);
/* A cmocka teardown: what tt_end() would have released for the scenarios a
 * failed test left without reaching it. Register the end-to-end tests with
 * cmocka_unit_test_teardown(test, tt_teardown). */
int tt_teardown(void **state);

/*
 * Run body in a forked child with every TALLY_* and launcher rank variable
 * removed, then TALLY_OUTPUT_DIR=s->dir, TALLY_NAME=t,
 * TALLY_NVML_LIBRARY=/nonexistent (the host's GPUs stay out of the tests), then
 * env ("K=V" strings, NULL-terminated; NULL for none). Waits for it (killed
 * after 60 s) and fills s->pid, s->status, s->out, s->err; prints the child's
 * stderr when it failed a TT_REQUIRE or crashed. Returns s->status.
 */
int tt_run(tt_scenario *s, const char *const *env, tt_body body, void *arg);

/* A path inside the output directory (one of 8 rotating static buffers). */
const char *tt_out(const tt_scenario *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The path of a run's report / trace in the output directory: the one file
 * named {stem}.{pid}-{time}[-{random}].report.json (trace.json.gz or trace.json),
 * e.g. stem "t-rank0", where pid is the scenario's child (or, called inside
 * a child body, the calling process). Fails the test when there is none or
 * more than one. (One of 8 rotating static buffers.) */
const char *tt_report(const tt_scenario *s, const char *stem);
const char *tt_trace(const tt_scenario *s, const char *stem);
/* The same for the files of process pid (a fork child). */
const char *tt_report_of(const tt_scenario *s, const char *stem, long pid);
const char *tt_trace_of(const tt_scenario *s, const char *stem, long pid);
/* Any suffix, any pid when pid is 0; NULL when there is none. */
const char *tt_output(const tt_scenario *s, const char *stem, long pid, const char *suffix);
/* Parse a JSON file, gzip or plain (fails the test when it cannot). */
json_t *tt_load_json(const char *path);
/* The element of an array of objects whose string member key equals value, or NULL. */
json_t *tt_find(json_t *array, const char *key, const char *value);
/* A member that must exist and be an integer / a number (fails the test otherwise). */
long long tt_int(json_t *obj, const char *key);
double tt_num(json_t *obj, const char *key);
const char *tt_str(json_t *obj, const char *key);
/* The number of elements of the array member key. */
size_t tt_len(json_t *obj, const char *key);

/*
 * Run check_outputs.py on paths (NULL-terminated: reports, directories, and
 * options such as "--trace", "file"). Fails the test, printing the checker's
 * findings, unless it exits 0. Returns its summary ({"reports": {basename:
 * ...}}); json_decref it.
 */
json_t *tt_check(const char *const *args);
/* Same, but returns the checker's exit status (for tests of the checker). */
int tt_check_status(const char *const *args);
/* The summary of one report file, by basename (borrowed from summary);
 * "t-rank0.report.json" finds the run's t-rank0.{pid}-{time}.report.json. */
json_t *tt_summary_of(json_t *summary, const char *basename);

#endif
