#!/bin/sh
# threads.sh TALLY GEN FIXTURES WORKDIR
#
# tally report's threads: inputs read --jobs at once, the outputs (HTML, JSON, Markdown, merged
# Chrome trace) written at once, each holding the sessions it reads back from the temporary
# file (tools/analyze/spill.h, every session spilled here) under one lock. The bytes are those
# of one thread. Under ThreadSanitizer (make test-tsan, label tsan) a data race makes tally
# exit 66, which fails the test.
set -eu
tally=$1
gen=$2
fixtures=$(cd "$3" && pwd)
work=$4
rm -rf "$work"
mkdir -p "$work/tmp"
export SOURCE_DATE_EPOCH=1700000000 TMPDIR="$work/tmp" TALLY_SPILL_AFTER=0
export TSAN_OPTIONS="${TSAN_OPTIONS:-} exitcode=66 halt_on_error=1"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

"$gen" --ranks 40 --dir "$work/ranks" --layers 1 --steps 3 --gzip --quiet --data-rank 7 --data-ms 20
for d in "$work/ranks" "$fixtures/framepack-profiling_results" "$fixtures/ddp-cpu-tally/slow-rank3"; do
    name=$(basename "$d")
    for j in 1 4; do
        "$tally" report -q --jobs $j "$d" -o "$work/$name.$j.html" --json "$work/$name.$j.json" \
            --markdown "$work/$name.$j.md" --trace "$work/$name.$j.trace.json.gz" ||
            fail "$name: tally report --jobs $j exited $?"
    done
    for e in html json md trace.json.gz; do
        cmp -s "$work/$name.1.$e" "$work/$name.4.$e" || fail "$name: the $e of --jobs 4 differs from --jobs 1"
    done
    [ -s "$work/$name.4.html" ] || fail "$name: no HTML"
done
# what a user reads: rank 7, the slow data loader, is the straggler
python3 - "$work/ranks.4.json" <<'PY' || fail "the straggler is not rank 7"
import json, sys
s = json.load(open(sys.argv[1]))["stragglers"]
assert [x["rank"] for x in s] == [7], s
PY
echo "threads: 3 folders, 4 outputs each, --jobs 4 byte for byte --jobs 1, every session spilled"
