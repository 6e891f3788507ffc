#!/bin/sh
# jobs.sh - the ctest "cli_jobs_affinity": --jobs defaults to the CPUs of the process's affinity
# mask, not the machine's: under `taskset -c 0` tally reads with 1 job (--progress says so);
# --jobs N given is N. Skipped (77) without taskset.
# usage: jobs.sh TALLY_BINARY SOURCE_DIR
set -u
tally=$1 src=$2
command -v taskset >/dev/null 2>&1 || { echo "no taskset: skipped"; exit 77; }
in=$src/samples/reports/pipeline-baseline
fails=0
got=$(taskset -c 0 "$tally" inspect --progress "$in" 2>&1 >/dev/null | grep "reading with")
if [ "$got" = "tally: reading with 1 job" ]; then echo "ok: taskset -c 0: 1 job"; else echo "FAIL: taskset -c 0: '$got'" >&2; fails=1; fi
got=$(taskset -c 0 "$tally" inspect --progress --jobs 3 "$in" 2>&1 >/dev/null | grep "reading with")
if [ "$got" = "tally: reading with 3 jobs" ]; then echo "ok: --jobs 3 under taskset: 3 jobs"; else echo "FAIL: --jobs 3: '$got'" >&2; fails=1; fi
exit $fails
