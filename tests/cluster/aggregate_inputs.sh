#!/bin/sh
# aggregate_inputs.sh TALLY CORPUS WORKDIR
#
# Partial and merged aggregates are inputs like traces: `tally report`, `summary`,
# `compare` and `aggregate` over them give the bytes of a run over the raw inputs
# (SOURCE_DATE_EPOCH fixes the report's date):
#   - the HTML report, its JSON and Markdown from: the raw files; the merged aggregate
#     of two partials (tally merge); the two partials themselves; a partial mixed with
#     the raw files of the other half; a merged partial (merge --partial);
#   - `tally summary` stdout, and its warning count, likewise;
#   - `tally compare` of raw against the merged aggregate: JSON byte-equal to raw
#     against raw, and no regression;
#   - a rank without a rank of its own (input order) does not take a rank a partial holds;
#   - hostile partials (a span of 2^63-1, an idle time of -2^63, a negative count, a
#     busy fraction of 7) are refused with a message naming the field, exit 3, no crash;
#   - a partial made with other analysis options (--whole-trace, --kernel-class,
#     --max-names, --max-events, --max-input-size) is refused by a command or a merge
#     with others, the message naming the option and both values;
#   - an old aggregate without sessions is named as such.
# Runs inside the corpus set with relative names, so the paths in the outputs match.
set -eu
tally=$1
corpus=$(cd "$2" && pwd)
work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
export SOURCE_DATE_EPOCH=1700000000

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cd "$corpus/param-dlrm_kineto-8rank"
files=$(ls | grep -E '\.json$' | sort)
first=$(echo "$files" | head -n 4)
second=$(echo "$files" | tail -n +5)

"$tally" report -q $files -o "$work/raw.html" --json "$work/raw.json" --markdown "$work/raw.md"
"$tally" aggregate -q --partial $first -o "$work/p1.json"
"$tally" aggregate -q --partial $second -o "$work/p2.json"
"$tally" merge -q "$work/p2.json" "$work/p1.json" -o "$work/merged.json"
"$tally" merge -q --partial "$work/p1.json" "$work/p2.json" -o "$work/merged.partial.json"
cmp "$work/raw.json" "$work/merged.json" || fail "tally merge differs from the aggregate of the raw files"
grep -q '"sessions":\[{' "$work/merged.json" || fail "the aggregate does not carry its sessions"

same_report() { # label, inputs...
    label=$1
    shift
    "$tally" report -q "$@" -o "$work/r.html" --json "$work/r.json" --markdown "$work/r.md" ||
        fail "$label: tally report failed"
    cmp "$work/raw.html" "$work/r.html" || fail "$label: HTML differs from the raw run"
    cmp "$work/raw.json" "$work/r.json" || fail "$label: JSON differs from the raw run"
    cmp "$work/raw.md" "$work/r.md" || fail "$label: Markdown differs from the raw run"
    echo "ok: report: $label"
}
same_report "merged aggregate" "$work/merged.json"
same_report "two partials" "$work/p1.json" "$work/p2.json"
same_report "merged partial" "$work/merged.partial.json"
same_report "partial + raw files" "$work/p1.json" $second
same_report "raw files + partial" $first "$work/p2.json"

"$tally" summary $files >"$work/s.raw" 2>"$work/s.raw.err"
"$tally" summary "$work/merged.json" >"$work/s.agg" 2>"$work/s.agg.err"
cmp "$work/s.raw" "$work/s.agg" || fail "summary of the merged aggregate differs from the raw run"
grep -q '^tally summary: 8 sessions of 8 ranks' "$work/s.agg" || fail "summary does not see 8 ranks"
"$tally" summary "$work/p1.json" $second >"$work/s.mix" 2>/dev/null
cmp "$work/s.raw" "$work/s.mix" || fail "summary of a partial + raw files differs from the raw run"
echo "ok: summary"

"$tally" compare -q . . --json "$work/c.raw.json" -o "$work/c.raw.html" --fail-on-regression ||
    fail "compare raw vs raw failed"
"$tally" compare -q . "$work/merged.json" --json "$work/c.agg.json" -o "$work/c.agg.html" --fail-on-regression ||
    fail "compare raw vs the merged aggregate found a regression"
cmp "$work/c.raw.json" "$work/c.agg.json" || fail "compare against the merged aggregate differs from raw vs raw"
"$tally" compare -q "$work/merged.json" "$work/p1.json" --json "$work/c.half.json" -o "$work/c.half.html" || true
grep -q '"format"' "$work/c.half.json" || fail "compare of two aggregates wrote no JSON"
echo "ok: compare"

# A trace without a rank of its own next to a partial holding ranks 0..3: it gets 4, not 0.
mkdir -p "$work/norank"
sed 's/"distributedInfo"/"distributedInfoX"/' "$corpus/param-dlrm_kineto-8rank/$(echo "$first" | head -n 1)" \
    >"$work/norank/trace.json"
"$tally" aggregate "$work/p1.json" "$work/norank/trace.json" -o "$work/norank.json" 2>"$work/norank.err"
grep -q 'rank 4 assigned by input order' "$work/norank.err" || fail "an unranked trace took a rank a partial holds"
echo "ok: input-order ranks skip the partial's"

# Hostile partials: every one is refused with its field named, and nothing crashes.
hostile() { # label, python expression editing d (the partial), expected message
    label=$1
    python3 - "$work/p1.json" "$work/hostile.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sessions"][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
    set +e
    "$tally" report "$work/hostile.json" -o "$work/h.html" 2>"$work/h.err"
    rc=$?
    set -e
    [ "$rc" -eq 3 ] || fail "hostile $label: exit $rc, expected 3 (no usable input)"
    grep -q "$3" "$work/h.err" || { cat "$work/h.err" >&2; fail "hostile $label: no message naming $3"; }
    echo "ok: hostile partial refused: $label"
}
hostile "span 2^63-1" 'd["sessions"] = [s]; s["span_ns"] = 2**63 - 1' '"span_ns": out of range'
hostile "idle -2^63" 'd["sessions"] = [s]; s["gpu"]["idle"] = -2**63' '"idle": out of range'
hostile "idle 2^63-1 on two sessions" \
    'd["sessions"] = d["sessions"][:2]; [x["gpu"].update(idle=2**63-1) for x in d["sessions"]]' '"idle": out of range'
hostile "negative count" 'd["sessions"] = [s]; s["names"][0]["stat"]["count"] = -1' '"count": out of range'
hostile "busy fraction 7" 'd["sessions"] = [s]; s["timeline"]["lanes"][0]["busy"][0] = [7.0] * 1024' 'a fraction out of'
hostile "rank -5" 'd["sessions"] = [s]; s["rank"] = -5' '"rank": out of range'
hostile "step ts 2^63-2" 'd["sessions"] = [s]; s["steps"][0][3] = 2**63 - 2' 'timestamp out of range'

# The largest values the reader takes, summed over 12 sessions of one rank, saturate
# instead of overflowing (UBSan in make test-sanitize would stop on a signed overflow).
python3 - "$work/p1.json" "$work/big.json" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
base = d["sessions"][0]
d["sessions"] = []
for i in range(12):
    s = copy.deepcopy(base)
    s["path"] = "big%02d.json" % i
    s["span_ns"] = 10**18
    s["start_ns"] = i
    # overlapping sessions of one rank pool only when nothing says they are
    # of two processes or on one clock (run identity)
    s["pid"] = -1
    s["abs_time"] = 0
    g = s["gpu"]
    for k in ("kernel_time", "busy", "idle", "compute", "non_compute", "comm", "comm_compute"):
        g[k] = 10**18
    g["by_mask"] = [10**18] * 8
    g["streams"] = [[0, 7, 10**18, 10**18, 10**18, 5]]
    d["sessions"].append(s)
json.dump(d, open(sys.argv[2], "w"))
PY
"$tally" report -q "$work/big.json" -o "$work/big.html" --json "$work/big.agg.json" ||
    fail "a partial at the reader's limits is not reported"
grep -q '"span_ns":9223372036854775807' "$work/big.agg.json" || fail "the rank's span did not saturate at INT64_MAX"
"$tally" summary -q "$work/big.json" >/dev/null || fail "summary of a partial at the reader's limits"
"$tally" compare -q "$work/big.json" "$work/big.agg.json" -o "$work/big.cmp.html" --json "$work/big.cmp.json" ||
    fail "compare of partials at the reader's limits"
echo "ok: sums at the limits saturate"

# Options must agree.
"$tally" aggregate -q --partial --whole-trace $first -o "$work/whole.json"
set +e
"$tally" report "$work/whole.json" -o "$work/w.html" 2>"$work/w.err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "a --whole-trace partial was taken by a command without --whole-trace (exit $rc)"
grep -q "whole.json: made with --whole-trace, this command with no --whole-trace; not read" "$work/w.err" ||
    fail "no message on the options of a --whole-trace partial: $(cat "$work/w.err")"
"$tally" report -q --whole-trace "$work/whole.json" -o "$work/w.html" || fail "--whole-trace partial with --whole-trace"
# ... a lone partial as one side of compare too (the other side is analyzed with the command's options)
set +e
one=$(echo "$first" | head -n 1)
"$tally" compare "$work/whole.json" "$one" -o "$work/wc.html" 2>"$work/wc.err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "compare took a --whole-trace partial against traces read without it (exit $rc)"
grep -q "whole.json: made with --whole-trace, this command with no --whole-trace; not read" "$work/wc.err" ||
    fail "no message on the options of compare's partial side: $(cat "$work/wc.err")"
"$tally" compare -q --whole-trace "$work/whole.json" "$one" -o "$work/wc.html" || fail "compare --whole-trace of a --whole-trace partial"
# ... the kernel-class table too: partials made with different --kernel-class
# patterns are never merged (one rank's communication counted as compute).
kc='*ncclKernel*=compute'
"$tally" aggregate -q --partial --kernel-class "$kc" $second -o "$work/kc.json"
grep -q '"kernel_classes":"\*ncclKernel\*=compute"' "$work/kc.json" || fail "the partial does not record --kernel-class"
set +e
"$tally" merge "$work/p1.json" "$work/kc.json" -o "$work/kcm.json" 2>"$work/kc.err"
set -e
grep -q "kc.json: made with --kernel-class '\*ncclKernel\*=compute', the inputs before it with no --kernel-class; not read" \
    "$work/kc.err" || fail "a partial with another kernel-class table was merged: $(cat "$work/kc.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["sessions"]) == 4, len(d["sessions"])' \
    "$work/kcm.json" || fail "the merge took the partial made with another kernel-class table"
set +e
"$tally" report --kernel-class "$kc" "$work/p1.json" -o "$work/kc.html" 2>"$work/kc.err"
set -e
grep -q "p1.json: made with no --kernel-class, this command with --kernel-class '\*ncclKernel\*=compute'; not read" \
    "$work/kc.err" || fail "a partial without --kernel-class taken by a command with it: $(cat "$work/kc.err")"
# the same table joins, and a merge keeps it for the next stage of a tree merge
"$tally" aggregate -q --partial --kernel-class "$kc" $first -o "$work/kc1.json"
"$tally" merge -q "$work/kc1.json" "$work/kc.json" -o "$work/kcm.json" || fail "partials with the same table"
grep -q '"kernel_classes":"\*ncclKernel\*=compute"' "$work/kcm.json" || fail "the merge dropped the kernel-class table"
"$tally" report -q --kernel-class "$kc" "$work/kcm.json" -o "$work/kc.html" || fail "the merged partial with its table"
# ... and the read bounds, which change the numbers when an input reaches them
bound_refused() { # option, value, what the default is called
    "$tally" aggregate -q --partial "$1" "$2" $second -o "$work/bound.json"
    grep -q "\"$4\":$2" "$work/bound.json" || fail "the partial does not record $1"
    set +e
    "$tally" merge "$work/p1.json" "$work/bound.json" -o "$work/bm.json" 2>"$work/bound.err"
    "$tally" report "$work/bound.json" -o "$work/bound.html" 2>>"$work/bound.err"
    rc=$?
    set -e
    [ "$rc" -eq 3 ] || fail "a partial made with $1 $2 was taken by a command without it (exit $rc)"
    grep -q "bound.json: made with $1 $2, the inputs before it with the default $1 ($3); not read" "$work/bound.err" ||
        fail "a partial made with $1 $2 was merged: $(cat "$work/bound.err")"
    grep -q "bound.json: made with $1 $2, this command with the default $1 ($3); not read" "$work/bound.err" ||
        fail "a partial made with $1 $2 was read: $(cat "$work/bound.err")"
    "$tally" report -q "$1" "$2" "$work/bound.json" -o "$work/bound.html" || fail "a $1 $2 partial with $1 $2"
}
bound_refused --max-names 50 100000 max_names
bound_refused --max-events 5000000 100000000 max_events
bound_refused --max-input-size 1000000000 64G max_input_bytes
# the default spelled out is the default
"$tally" report -q --max-names 100000 "$work/p1.json" -o "$work/bound.html" || fail "--max-names 100000 is the default"
echo "ok: options"

# An aggregate without its sessions (older tally) is named.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["sessions"]; json.dump(d, open(sys.argv[2], "w"))' \
    "$work/merged.json" "$work/old.json"
set +e
"$tally" report "$work/old.json" -o "$work/o.html" 2>"$work/o.err"
set -e
grep -q 'aggregate without its sessions' "$work/o.err" || fail "an aggregate without sessions is not named"
# Inputs without a rank, aggregated apart (a partial per file) and merged: each
# partial numbered its input rank 0, so the merge pools them as sessions of one
# rank, and says so (a run over both gives ranks 0 and 1 and says nothing).
python3 - "$corpus/framepack/generated/profiling_report.json" "$work/fp" <<'PY'
import json, os, sys
os.makedirs(sys.argv[2], exist_ok=True)
d = json.load(open(sys.argv[1]))
json.dump(d, open(sys.argv[2] + "/a.json", "w"))
def shift(o):  # the second run a day later
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "timestamp" and isinstance(v, (int, float)): o[k] = v + 86400
            else: shift(v)
    elif isinstance(o, list):
        for v in o: shift(v)
shift(d)
json.dump(d, open(sys.argv[2] + "/b.json", "w"))
PY
"$tally" aggregate -q --partial "$work/fp/a.json" -o "$work/fp/pa.json"
"$tally" aggregate -q --partial "$work/fp/b.json" -o "$work/fp/pb.json"
"$tally" merge "$work/fp/pa.json" "$work/fp/pb.json" -o "$work/fp/m.json" 2>"$work/fp/m.err"
grep -q '2 inputs share a rank only by input order (rank 0)' "$work/fp/m.err" || { cat "$work/fp/m.err" >&2; fail "merge pooled unranked inputs silently"; }
set +e
"$tally" merge -q --strict "$work/fp/pa.json" "$work/fp/pb.json" -o "$work/fp/m.json"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "merge --strict passed inputs pooled by input order (exit $rc)"
"$tally" aggregate "$work/fp/a.json" "$work/fp/b.json" -o "$work/fp/r.json" 2>"$work/fp/r.err"
! grep -q 'share a rank' "$work/fp/r.err" || fail "one run over unranked inputs says they share a rank"
echo "ok: unranked inputs merged from separate partials are named"
echo "all aggregate inputs agree"
