#!/bin/sh
# check-demo.sh - the ctest "sample_demo_runs": runs the sample pipeline as 2
# ranks of 3 steps through launch.sh and checks that each rank wrote its
# report and its trace, under the names libtally promises, with the content
# they should have (a tally report of that rank; a complete gzip stream).
#
#   check-demo.sh LAUNCH_SH PROGRAM OUTDIR     (OUTDIR is emptied first)
set -eu

if [ $# -ne 3 ]; then
    echo "usage: check-demo.sh LAUNCH_SH PROGRAM OUTDIR" >&2
    exit 2
fi
launch=$1
prog=$2
out=$3

fail() {
    echo "check-demo.sh: $*" >&2
    exit 1
}

rm -rf "$out"
sh "$launch" -n 2 -o "$out" --name pipeline -q -- "$prog" --steps 3 --blocks 2 \
    --slow-rank 1 --slow-factor 1.2 || fail "launch.sh failed"

nreports=$(find "$out" -maxdepth 1 -name '*.report.json' | wc -l | tr -d ' ')
ntraces=$(find "$out" -maxdepth 1 -name '*.trace.json.gz' | wc -l | tr -d ' ')
[ "$nreports" -eq 2 ] || fail "expected 2 report files in $out, found $nreports"
[ "$ntraces" -eq 2 ] || fail "expected 2 trace files in $out, found $ntraces"

for rank in 0 1; do
    # one stem per run: pipeline-rank{N}.{pid}-{time}
    report=$(find "$out" -maxdepth 1 -name "pipeline-rank$rank.*.report.json" | head -n 1)
    [ -n "$report" ] || fail "$out: no pipeline-rank$rank.{pid}-{time}.report.json"
    trace=${report%.report.json}.trace.json.gz
    [ -s "$report" ] || fail "$report: missing or empty"
    [ -s "$trace" ] || fail "$trace: missing or empty"
    grep -q '"tally-report"' "$report" || fail "$report: not a tally report"
    grep -q '"diffusion_step"' "$report" || fail "$report: no diffusion_step iterations"
    grep -q '"after_vae_decode"' "$report" || fail "$report: no after_vae_decode snapshot"
    grep -q '"frames":8' "$report" || fail "$report: no blocks of 8 frames (tally_block_begin)"
    if command -v gzip >/dev/null 2>&1; then
        gzip -t "$trace" || fail "$trace: not a complete gzip stream"
        gzip -dc "$trace" | grep -q '"transformer_block"' ||
            fail "$trace: no transformer_block events"
    fi
    [ -s "$out/logs/rank$rank.log" ] || fail "$out/logs/rank$rank.log: missing or empty"
done
# Only rank 0 prints libtally's console summary.
grep -q 'TOP SECTIONS' "$out/logs/rank0.log" || fail "rank 0 printed no summary"
if grep -q 'TOP SECTIONS' "$out/logs/rank1.log"; then
    fail "rank 1 printed a summary; only rank 0 should"
fi
echo "sample demo: 2 reports and 2 traces in $out"
