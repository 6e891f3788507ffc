#!/bin/sh
# framepack.sh TALLY PYTHON SCHEMA CORPUS WORKDIR
#
# The seed story: two FramePack profiling_report.json runs, one report each (one
# sample per stage), the candidate's vae_decode stages 9.5x slower and its peak
# memory 8.2 -> 23.8 GB. Nothing can be tested with one run a side, so:
#   - vae_decode_* totals per run are large_increase_untested (+850.0%) with the
#     note saying so, and --fail-on-regression exits 1 naming them on stderr;
#   - the unchanged stages are too_few_samples and do not gate; A/A exits 0;
#   - peak allocated memory is a large increase of a gate row;
#   - --max-untested-change 1000% lets the same comparison pass;
#   - outputs: the JSON validates, the JUnit file has the gate failures, the
#     Markdown and HTML name the untested verdict;
#   - a rank in the baseline only is a warning, and with --strict fails the gate.
set -eu
tally=$1
py=$2
schema=$3
corpus=$4
work=$5
here=$(cd "$(dirname "$0")" && pwd)
check="$py $here/check_compare.py"
rm -rf "$work"
mkdir -p "$work/base" "$work/slow"
cp "$corpus/framepack/generated/profiling_report.json" "$work/base/profiling_report.json"
"$py" - "$work/base/profiling_report.json" "$work/slow/profiling_report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = 0
for name, st in d["timing_stats"].items():
    if name.startswith("vae_decode"):
        n += 1
        for k in ("total", "mean", "min", "max", "last"):
            st[k] = st[k] * 9.5
for snap in d["memory_snapshots"]:
    for k in ("allocated_mb", "reserved_mb", "max_allocated_mb"):
        snap[k] = snap[k] * 23.8 / 8.2
assert n == 2, n
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY

set +e
"$tally" compare "$work/base" "$work/slow" -o "$work/c.html" --json "$work/c.json" --junit "$work/c.xml" \
    --markdown "$work/c.md" --fail-on-regression >"$work/c.out" 2>"$work/c.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "framepack.sh: the 9.5x slower vae_decode exited $rc, not 1" >&2; cat "$work/c.err" >&2; exit 1; }
for name in vae_decode_full_chunk_0 vae_decode_section_chunk_1; do
    grep -F "regression (untested): sections \"$name\" (all ranks): per_run +850.0%, one run each: beyond the large-change threshold (25%), not tested" \
        "$work/c.err" >/dev/null || { echo "framepack.sh: stderr does not name $name" >&2; cat "$work/c.err" >&2; exit 1; }
done
$check schema "$work/c.json" "$schema"
$check junit "$work/c.xml" "$work/c.json"
$check markdown "$work/c.md"
$check html "$work/c.html"
"$py" - "$work/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["name"], r["metric"]): r for r in d["rows"] if r["rank"] is None}
def want(cond, what):
    if not cond:
        sys.exit("framepack.sh: " + what)
for name in ("vae_decode_full_chunk_0", "vae_decode_section_chunk_1"):
    r = rows[(name, "per_run")]
    want(r["verdict"] == "large_increase_untested" and r["gate"] and r["primary"], f"{name}: {r['verdict']}")
    want(abs(r["delta_pct"] - 850) < 1e-6 and r["test"] is None and r["p_value"] is None, f"{name}: {r}")
    want(r["note"].startswith("+850.0%, one run each"), f"{name}: note {r['note']!r}")
for name in ("sampling_chunk_0", "text_encoding_positive", "iteration"):
    r = rows[(name, "per_run")]
    want(r["verdict"] == "too_few_samples" and not r["gate"], f"{name}: {r['verdict']}")
m = rows[("peak_allocated", "peak_allocated")]
want(m["verdict"] == "large_increase_untested" and m["gate"], f"peak_allocated: {m['verdict']}")
want(abs(m["delta_pct"] - 100 * (23.8 / 8.2 - 1)) < 0.01, f"peak_allocated delta {m['delta_pct']}")
gates = sorted(r["name"] for r in d["rows"] if r["gate"] and r["rank"] is None)
want(gates == ["peak_allocated", "peak_reserved", "vae_decode_full_chunk_0", "vae_decode_section_chunk_1"],
     f"gate rows {gates}")
PY
grep -F "large_increase_untested (gate): +850.0%, one run each" "$work/c.md" >/dev/null ||
    { echo "framepack.sh: the Markdown does not show the untested verdict" >&2; exit 1; }
grep -F "large increase, not tested <b>(gate)</b>" "$work/c.html" >/dev/null ||
    { echo "framepack.sh: the HTML does not show the untested verdict" >&2; exit 1; }

# A/A: the same report on both sides passes; so does the slow one above the line.
"$tally" compare -q "$work/base" "$work/base" -o "$work/aa.html" --json "$work/aa.json" --fail-on-regression
$check verdicts "$work/aa.json" --no-regression
"$tally" compare -q "$work/base" "$work/slow" -o "$work/wide.html" --fail-on-regression --max-untested-change 1000%
# A rank missing from the candidate does not pass silently: a warning naming it, and
# with --strict a gate failure (exit 1); without --strict the comparison goes on.
mkdir -p "$work/two/rank_0" "$work/two/rank_1" "$work/first/rank_0"
cp "$work/base/profiling_report.json" "$work/two/rank_0/profiling_report.json"
cp "$work/base/profiling_report.json" "$work/two/rank_1/profiling_report.json"
cp "$work/base/profiling_report.json" "$work/first/rank_0/profiling_report.json"
"$tally" compare -q "$work/two" "$work/first" -o "$work/missing.html" --json "$work/missing.json" \
    --fail-on-regression 2>"$work/missing.err"
grep -F "tally: warning: rank 1 is in the baseline only: the candidate has no input for it" "$work/missing.err" \
    >/dev/null || { echo "framepack.sh: no warning for the missing rank 1" >&2; cat "$work/missing.err" >&2; exit 1; }
"$py" - "$work/missing.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if d["ranks_only_in_baseline"] != [1] or d["ranks_only_in_candidate"] != []:
    sys.exit(f"framepack.sh: ranks only in one side: {d['ranks_only_in_baseline']}, {d['ranks_only_in_candidate']}")
# The all-ranks rows compare rank 0 with rank 0: nothing moved (over each run's
# own ranks every stage's total read -50 %).
if d["ranks_in_both"] != [0] or d["all_ranks_over"] != "ranks_in_both":
    sys.exit(f"framepack.sh: ranks in both {d['ranks_in_both']}, all ranks over {d['all_ranks_over']}")
moved = [r["name"] for r in d["rows"] if r["rank"] is None and r["delta_pct"] not in (None, 0)]
if moved:
    sys.exit(f"framepack.sh: all-ranks rows moved with the same rank 0 on both sides: {moved}")
PY
set +e
"$tally" compare -q --strict "$work/two" "$work/first" -o "$work/missing.html" --fail-on-regression 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "framepack.sh: --strict with a missing rank exited $rc, not 1" >&2; exit 1; }
"$tally" compare -q --strict "$work/first" "$work/first" -o "$work/same.html" --fail-on-regression
echo "framepack.sh: ok"
