#!/bin/sh
# drift.sh TALLY PYTHON CORPUS WORKDIR
#
# Sessions kept apart, compared and shown (tools/analyze/drift.h): one rank, two
# FramePack reports (rank_0/a and rank_0/b, the second 1000 s later), the second
# with vae_decode 9.5x slower.
#   - `tally summary` shows each stage per session, vae_decode_* at +850.0% marked
#     "drifts", the others not, and the finding [session-drift] names the largest;
#   - `tally report` has the table and the finding; `tally aggregate` the finding;
#   - `tally compare --sessions` fails the gate on the untested +850 %;
#   - must not fire: two identical sessions (no drift, no finding, the gate passes),
#     and one session (no table at all).
set -eu
tally=$1
py=$2
corpus=$3
work=$4
rm -rf "$work"
mkdir -p "$work/run/rank_0/a" "$work/run/rank_0/b" "$work/same/rank_0/a" "$work/same/rank_0/b" "$work/one/rank_0/a"
src=$corpus/framepack/generated/profiling_report.json
cp "$src" "$work/run/rank_0/a/profiling_report.json"
cp "$src" "$work/same/rank_0/a/profiling_report.json"
cp "$src" "$work/one/rank_0/a/profiling_report.json"
"$py" - "$src" "$work/run/rank_0/b/profiling_report.json" "$work/same/rank_0/b/profiling_report.json" <<'PY'
import json, sys
def later(d):
    d["timestamp"] += 1000
    for s in d["memory_snapshots"]:
        s["timestamp"] += 1000
    return d
d = later(json.load(open(sys.argv[1])))
json.dump(d, open(sys.argv[3], "w"))
for name, st in d["timing_stats"].items():
    if name.startswith("vae_decode"):
        for k in ("total", "mean", "min", "max", "last"):
            st[k] *= 9.5
json.dump(d, open(sys.argv[2], "w"))
PY
fail() {
    echo "drift.sh: $*" >&2
    exit 1
}

"$tally" summary -q --width 1000 "$work/run" >"$work/run.txt"
grep -E '^vae_decode_full_chunk_0 +3\.769 s +35\.81 s +\+850\.0% +\+850\.0% +drifts *$' "$work/run.txt" >/dev/null ||
    fail "summary: no drifting vae_decode_full_chunk_0 row: $(sed -n '/SESSIONS/,$p' "$work/run.txt")"
grep -E '^sampling_chunk_0 +8\.234 s +8\.234 s +\+0\.0% +\+0\.0% *$' "$work/run.txt" >/dev/null ||
    fail "summary: sampling_chunk_0 should be unchanged: $(sed -n '/SESSIONS/,$p' "$work/run.txt")"
grep -F '[session-drift] "vae_decode_full_chunk_0" is 850% slower a call in the last of 2 sessions than in the first (2 stages drift).' \
    "$work/run.txt" >/dev/null || fail "summary: no session-drift finding: $(cat "$work/run.txt")"

"$tally" report -q "$work/run" -o "$work/run.html"
grep -F 'id="drift-table"' "$work/run.html" >/dev/null || fail "report: no drift table"
grep -F 'session-drift' "$work/run.html" >/dev/null || fail "report: no session-drift finding"
"$tally" aggregate -q "$work/run" -o "$work/run.json"
"$py" - "$work/run.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = [r["id"] for r in d["recommendations"]]
if "session-drift" not in ids:
    sys.exit(f"drift.sh: aggregate recommendations {ids}, no session-drift")
PY

set +e
"$tally" compare -q --sessions "$work/run" -o "$work/s.html" --json "$work/s.json" --fail-on-regression 2>"$work/s.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "compare --sessions exited $rc, not 1: $(cat "$work/s.err")"
grep -F 'regression (untested): sections "vae_decode_full_chunk_0" (all ranks): per_run +850.0%' "$work/s.err" >/dev/null ||
    fail "compare --sessions does not name vae_decode_full_chunk_0: $(cat "$work/s.err")"

# The page of a comparison of sessions draws each side's session only: the
# TensorBoard ResNet's two sessions of 6 steps (one trace each, 470 s apart)
# drew all 12 steps on both sides, and both sessions on a 0-470 s timeline.
tb=$corpus/kineto-tb_plugin-samples/resnet50_num_workers_0
if [ -d "$tb" ]; then
    "$tally" compare -q --sessions "$tb" -o "$work/tb.html"
    "$py" - "$work/tb.html" <<'PY' || fail "compare --sessions page draws other sessions"
import re, sys
h = open(sys.argv[1]).read()
steps = h[h.index('id="steps"'):]
steps = steps[:steps.index("</section>")]
points = [len(p.split()) for p in re.findall(r'<polyline[^>]*points="([^"]*)"', steps)]
if points != [6, 6]:
    sys.exit(f"step lines of {points} points, not [6, 6]")
tl = h[h.index('id="timelines"'):]
ticks = re.findall(r">([0-9.]+) (ms|s)</text>", tl)
if not ticks or any(u == "s" and float(v) > 2 for v, u in ticks):
    sys.exit(f"timeline ticks {ticks[:12]}: not one session's ~1.2 s")
PY
fi

# Must not fire: two identical sessions, and one session.
"$tally" summary -q "$work/same" >"$work/same.txt"
grep -F 'SESSIONS' "$work/same.txt" >/dev/null || fail "summary of two sessions: no SESSIONS table"
if grep -E 'drifts *$|\[session-drift\]' "$work/same.txt" >/dev/null; then
    fail "identical sessions drift: $(cat "$work/same.txt")"
fi
"$tally" compare -q --sessions "$work/same" -o "$work/same.html" --fail-on-regression
"$tally" summary -q "$work/one" >"$work/one.txt"
if grep -E 'SESSIONS|\[session-drift\]' "$work/one.txt" >/dev/null; then
    fail "one session shows a sessions table or a drift: $(cat "$work/one.txt")"
fi
echo "drift.sh: ok"
