#!/bin/sh
# trend.sh TALLY GENERATOR PYTHON SCHEMA CORPUS WORKDIR
#
# `tally trend` on generated 4-rank DDP runs (8 steps, 4 layers; the generator's noise):
#   - a shift: runs 1-3 as usual, runs 4-6 with rank 2's DataLoader 7 ms slower a step (the
#     step +19 %): one change point, at run 4, slower; nothing else marked; the series ends
#     slower, so --fail-on-regression exits 1 and names run 4;
#   - one run out of line: the same jump in run 4 only, runs 5-6 back: no change point, run 4
#     "outlier", exit 0 with --fail-on-regression;
#   - a quiet archive: 8 runs of other seeds, each with one rank's DataLoader 0-1.5 ms slower
#     (the step 0-4 % up: the run-to-run noise of nightly runs): no mark at all;
#   - the jump at the last run: "unconfirmed", counts for the gate (exit 1);
#   - FramePack's one report a run: "no samples, no verdict";
#   - the JSON validates against schema/tally-trend.schema.json.
set -eu
tally=$1
gen=$2
py=$3
schema=$4
corpus=$5
work=$6
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
make_run() { # dir seed [generator options]
    d=$1
    s=$2
    shift 2
    ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 "$gen" --ranks 4 --dir "$d" --steps 8 --layers 4 --gzip --quiet --seed "$s" "$@"
}
for s in 1 2 3 5 6; do make_run b$s $s; done
for s in 4 5 6; do make_run s$s $s --data-rank 2 --data-ms 7; done
i=0
for spec in "0 0" "1 1.0" "2 0.5" "3 1.5" "0 0.8" "1 0" "2 1.2" "3 0.3"; do
    i=$((i + 1))
    set -- $spec
    if [ "$2" = 0 ]; then make_run q$i $((30 + i)); else make_run q$i $((30 + i)) --data-rank "$1" --data-ms "$2"; fi
done

trend() { # name runs...: exit code in $rc
    n=$1
    shift
    set +e
    "$tally" trend -q "$@" --json "$n.json" --fail-on-regression 2>"$n.err"
    rc=$?
    set -e
}
expect() { # name exit marks (one word a run)
    n=$1
    want_rc=$2
    shift 2
    [ "$rc" -eq "$want_rc" ] || { echo "trend.sh: $n: exit $rc, not $want_rc" >&2; cat "$n.err" >&2; exit 1; }
    "$py" - "$n.json" "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
got = [r["mark"] for r in doc["runs"]]
if got != sys.argv[2:]:
    sys.exit(f"trend.sh: {sys.argv[1]}: marks {got}, not {sys.argv[2:]}")
PY
}
trend shift b1 b2 b3 s4 s5 s6
expect shift 1 first same same change same same
grep -F "regression: the series ends slower: run 4's step time is +" shift.err >/dev/null || {
    echo "trend.sh: stderr does not name run 4" >&2; cat shift.err >&2; exit 1; }
"$py" "$here/check_compare.py" schema shift.json "$schema"
"$py" - shift.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["runs"][3]
# the step moved about +19 % (7 ms of DataLoader on one rank, the others wait for it)
if not (15 < r["delta_pct"] < 25) or r["direction"] != 1 or r["reference"] != 2 or not r["p_value"] < 0.01 / 5:
    sys.exit(f"trend.sh: run 4's change: {r}")
if doc["last_change"] != 3 or not doc["ends_slower"] or doc["counts"]["change"] != 1:
    sys.exit(f"trend.sh: last_change {doc['last_change']}, ends_slower {doc['ends_slower']}")
med = [r["step_median_ns"] for r in doc["runs"]]
if not all(30e6 < m < 40e6 for m in med[:3]) or not all(m > 1.15 * med[2] for m in med[3:]):
    sys.exit(f"trend.sh: step medians {med}")
if any(not (r["step_p90_ns"] >= r["step_median_ns"]) or abs(r["steps_per_s"] - 1e9 / r["step_median_ns"]) > 1e-6
       for r in doc["runs"]):
    sys.exit("trend.sh: p90 below the median, or it/s not 1/median")
PY

trend outlier b1 b2 b3 s4 b5 b6
expect outlier 0 first same same outlier same same

trend quiet q1 q2 q3 q4 q5 q6 q7 q8
expect quiet 0 first same same same same same same same

trend last b1 b2 b3 b5 b6 s6
expect last 1 first same same same same unconfirmed

fp=$corpus/framepack/generated
trend framepack "$fp/profiling_report.json" "$fp/as_demo_gradio/profiling_report.json"
expect framepack 0 first no_verdict

# usage: one run, a bad threshold
set +e
"$tally" trend b1 >/dev/null 2>usage.err
rc1=$?
"$tally" trend b1 b2 --threshold x >/dev/null 2>>usage.err
rc2=$?
set -e
[ "$rc1" -eq 2 ] && [ "$rc2" -eq 2 ] || { echo "trend.sh: usage errors exited $rc1 $rc2, not 2" >&2; exit 1; }
echo "trend.sh: ok"
