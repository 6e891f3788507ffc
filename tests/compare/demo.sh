#!/bin/sh
# demo.sh TALLY PIPELINE LAUNCH PYTHON SCHEMA WORKDIR
#
# The story `make demo` tells, asserted: the sample pipeline (samples/collector/
# pipeline.c) as 4 ranks of 10 steps, rank 3 made 1.5x slower, once per variant
# (run-demo.sh's settings). Its stage costs are set by the clock (a virtual
# timeline of sleeps), not by the CPU, so these hold on a loaded machine too:
#   - baseline vs optimized: vae_decode's total per run (+35 % by design: 6 chunks of
#     45 ms instead of 4 of 50) is a regression that fails the gate, and
#     --fail-on-regression exits 1 naming it; vae_decode_chunk is
#     "called 6 times per run instead of 4"; attention (6.4 ms instead of 12) is an
#     improvement per call and per run; step time an improvement;
#   - the baseline's aggregate names rank 3 as a straggler;
#   - A/A: the baseline against a baseline run with another seed passes the gate
#     (at --threshold 25 %: runs apart in time on a loaded machine differ by more than 5 %);
#   - --sessions over one directory holding both runs (two sessions a rank) finds
#     the same regression and improvement.
# The stages keep their costs while the ranks get a core when they wake; on a
# machine loaded beyond 3 runnable tasks per core (measured: a rank descheduled for
# 800 ms at load 15 on 2 cores) no wall-clock story holds, and the test says so and
# is skipped (exit 77) instead of failing for a reason outside the code.
set -eu
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
cores=$(nproc 2>/dev/null || echo 1)
if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 3 * c) }'; then
    echo "demo.sh: skipped: load average $load on $cores cores (over 3 per core)"
    exit 77
fi
tally=$1
prog=$2
launch=$3
py=$4
schema=$5
work=$6
here=$(cd "$(dirname "$0")" && pwd)
check="$py $here/check_compare.py"
rm -rf "$work"
mkdir -p "$work"
run() { # dir variant seed
    sh "$launch" -q -n 4 -o "$work/$1" --name pipeline -- \
        "$prog" --variant "$2" --steps 10 --slow-rank 3 --slow-factor 1.5 --seed "$3" >/dev/null
    rm -rf "$work/$1/logs"
}
run baseline baseline 1
run optimized optimized 1
run again baseline 2
uptime >"$work/load.txt" 2>/dev/null || true

set +e
"$tally" compare "$work/baseline" "$work/optimized" -o "$work/c.html" --json "$work/c.json" \
    --markdown "$work/c.md" --junit "$work/c.xml" --fail-on-regression >"$work/c.out" 2>"$work/c.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "demo.sh: baseline vs optimized exited $rc, not 1 (load: $(cat "$work/load.txt"))" >&2;
    cat "$work/c.err" "$work/c.out" >&2; exit 1; }
grep -F 'regression: sections "vae_decode" (all ranks): per_run +' "$work/c.err" >/dev/null ||
    { echo "demo.sh: stderr does not name vae_decode" >&2; cat "$work/c.err" >&2; exit 1; }
$check schema "$work/c.json" "$schema"
$check junit "$work/c.xml" "$work/c.json"
$check markdown "$work/c.md"
$check verdicts "$work/c.json" --regression vae_decode --improvement attention --improvement step --metric per_call
$check verdicts "$work/c.json" --regression vae_decode --regression vae_decode_chunk --improvement attention \
    --metric per_run
"$py" - "$work/c.json" "$(cat "$work/load.txt")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["name"], r["metric"]): r for r in d["rows"] if r["rank"] is None}
def want(cond, what):
    if not cond:
        sys.exit(f"demo.sh: {what} (load: {sys.argv[2]})")
dec = rows[("vae_decode", "per_run")]
want(dec["gate"] and dec["primary"] and 20 < dec["delta_pct"] < 50, f"vae_decode per run: {dec['verdict']} "
     f"{dec['delta_pct']:+.1f}%, gate {dec['gate']}")
calls = rows[("vae_decode_chunk", "calls_per_step")]
want(calls["verdict"] == "changed" and calls["note"].startswith("called 6 times per run instead of 4"),
     f"vae_decode_chunk calls per step: {calls['verdict']} {calls['note']!r}")
att = rows[("attention", "per_call")]
want(-65 < att["delta_pct"] < -35, f"attention per call {att['delta_pct']:+.1f}%, expected about -47%")
gates = sorted({r["name"] for r in d["rows"] if r["gate"]})
want(gates == ["vae_decode", "vae_decode_chunk"], f"gate rows {gates}, expected vae_decode and its chunks only")
PY

"$tally" aggregate -q "$work/baseline" -o "$work/agg.json"
"$py" - "$work/agg.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ranks = [s["rank"] for s in d["stragglers"]]
if 3 not in ranks:
    sys.exit(f"demo.sh: stragglers {ranks}, expected rank 3 among them")
PY

set +e
# Two runs minutes apart on a shared machine see different loads, and wall-clock stages
# move with it (on 2 cores at load 16: steps +16 % on a rank); the A/A gate is checked
# beyond that, at 25 %.
"$tally" compare -q "$work/baseline" "$work/again" -o "$work/aa.html" --json "$work/aa.json" \
    --threshold 25% --fail-on-regression 2>"$work/aa.err"
rc=$?
set -e
[ "$rc" -eq 0 ] || { echo "demo.sh: A/A exited $rc (load: $(cat "$work/load.txt"))" >&2; cat "$work/aa.err" >&2; exit 1; }
$check verdicts "$work/aa.json" --no-regression

mkdir -p "$work/both"
mv "$work/baseline" "$work/both/1-baseline"
mv "$work/optimized" "$work/both/2-optimized"
set +e
"$tally" compare -q --sessions "$work/both" -o "$work/s.html" --json "$work/s.json" --fail-on-regression 2>"$work/s.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "demo.sh: --sessions exited $rc, not 1" >&2; cat "$work/s.err" >&2; exit 1; }
$check schema "$work/s.json" "$schema"
$check verdicts "$work/s.json" --regression vae_decode --improvement attention --metric per_run
echo "demo.sh: ok ($(cat "$work/load.txt"))"
