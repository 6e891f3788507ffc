#!/bin/sh
# A short fuzzing run of every libFuzzer target, seeded with the corpus and
# the test fixtures: what CI runs. New inputs go to a scratch directory; a
# crash leaves its reproducer (crash-*) in the build directory and fails.
# Half of the mutations are the structure-aware ones of extremes.c (its
# LLVMFuzzerCustomMutator): one number field set to an extreme value. Measured
# (issue 26, 2 shared cores): fuzz_ingest 41,025 runs in 121 s after its one
# finding (a [memory] Device Id of 9.2e18, at run 3,807); fuzz_compare's first
# finding at run 938 (tests/fuzz/open/compare-walk-null-items.json).
# usage: run-fuzzers.sh FUZZ_BUILD_DIR CORPUS_DIR SOURCE_DIR [SECONDS]
set -eu
build=$(cd "$1" && pwd) corpus=$(cd "$2" && pwd) src=$(cd "$3" && pwd) secs=${4:-60}
status=0
for f in fuzz_trace_stream fuzz_report_readers fuzz_ingest fuzz_partial fuzz_compare; do
    bin=$build/tests/fuzz/$f
    [ -x "$bin" ] || { echo "$bin: not built"; exit 1; }
    work=$(mktemp -d)
    log=$work.log
    echo "== $f for ${secs}s"
    # -max_len keeps the big seeds from slowing every iteration: their first
    # 256 KiB still reach every parser state of interest.
    # tests/fuzz/seeds holds one folder of seeds per target (libFuzzer reads
    # folders recursively; another target's seeds are harmless inputs).
    if (cd "$build" && "$bin" -max_total_time="$secs" -max_len=262144 -timeout=20 -rss_limit_mb=4096 \
            "$work" "$corpus" "$src/tests/fixtures" "$src/tests/fuzz/seeds" >"$log" 2>&1); then
        grep -E "^Done|DONE" "$log" | tail -2
    else
        echo "FAILED: $f (reproducer in $build/crash-* or the log below)"
        tail -60 "$log"
        status=1
    fi
    rm -rf "$work" "$log"
done
exit $status
