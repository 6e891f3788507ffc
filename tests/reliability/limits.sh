#!/bin/bash
# The reliability suite for the limits and numbers of issue 26 (tools side):
# inputs past a limit are never silently pooled or dropped, numbers from
# hostile inputs are not believed. Each case asserts the exit code, the
# warnings and the numbers.
#
# usage: limits.sh TALLY PYTHON
set -u
tally=$1 python=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0
T=60 # seconds any one tally call may take: more is a hang

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
expect_exit() { if [ "$3" = "$2" ]; then ok; else bad "$1: exit $3, expected $2"; fi; }
has() { if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no '$3' in $(head -c 600 "$2")"; fi; }
hasnt() { if grep -Eq -- "$3" "$2"; then bad "$1: unexpected '$3' in $(head -c 600 "$2")"; else ok; fi; }
jcheck() {
    if "$python" -c "import json,sys; doc=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2" 2>"$tmp/.jerr"; then ok
    else bad "$1: $3 is false for $(head -c 600 "$2") $(cat "$tmp/.jerr")"; fi
}
run() { timeout -k 5 $T "$tally" "$@"; }

# ---- item 1: twenty runs in one folder stay twenty runs ----------------------------
# Nightly runs a day apart, ranks 0 and 1 each in their own process. A run
# table of 16 pooled runs 16-19 into run 15: that run then had the most
# inputs, was analyzed, and compared against one identical run read a
# geomean of 0.2000 (counts and totals x5).
"$python" - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
for r in range(20):
    for rank in (0, 1):
        pid = 1000 + r * 10 + rank
        ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": 1, "ts": 1000.0 * i, "dur": 500}
              for i in range(4)]
        doc = {"distributedInfo": {"rank": rank, "world_size": 2},
               "baseTimeNanoseconds": 1700000000000000000 + r * 86400 * 10**9, "traceEvents": ev}
        d = f"{tmp}/runs/night{r:02d}"
        os.makedirs(d, exist_ok=True)
        json.dump(doc, open(f"{d}/rank{rank}.pt.trace.json", "w"))
PY
mkdir -p "$tmp/one" && cp -r "$tmp/runs/night00" "$tmp/one/"
run compare --metric total "$tmp/runs" "$tmp/one" --json "$tmp/c.json" 2>"$tmp/e"; expect_exit runs-compare 0 $?
jcheck runs-geomean "$tmp/c.json" 'abs(doc["geomean_ratio"] - 1) < 1e-9'
n=$(grep -c "of a different run" "$tmp/e"); [ "$n" = 19 ] && ok || bad "runs-notes: $n notes of other runs, expected 19"
hasnt runs-no-pool "$tmp/e" "put with the last one"
run aggregate "$tmp/runs" -o "$tmp/agg.json" 2>"$tmp/e"; expect_exit runs-aggregate 0 $?
jcheck runs-counts "$tmp/agg.json" 'len(doc["ranks"]) == 2 and all(len(r["sessions"]) == 1 and r["top"]["ops"][0]["count"] == 4 for r in doc["ranks"])'

# ---- item 8: the names budget keeps the names that matter by time -------------------
# 150,000 rare names (1 us each), then one op with 99.5 % of the time: the
# first fold closed the table by first appearance and the top-ops table
# showed only "(other names)".
"$python" - "$tmp/late.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"traceEvents":[\n')
    for i in range(150000):
        f.write('{"ph":"X","cat":"cpu_op","name":"rare_%06d","ts":%d,"dur":1,"pid":1,"tid":1},\n' % (i, 2 * i))
    for k in range(1000):
        f.write('{"ph":"X","cat":"cpu_op","name":"aten::hot","ts":%d,"dur":30000,"pid":1,"tid":1},\n' % (400000 + 30001 * k))
    f.write('{"ph":"X","cat":"cpu_op","name":"end","ts":0,"dur":1,"pid":1,"tid":1}]}\n')
PY
run summary "$tmp/late.json" >"$tmp/o" 2>"$tmp/e"; expect_exit names-late 0 $?
has names-late-top "$tmp/o" '^aten::hot +1000 +30.00 s'
has names-late-said "$tmp/e" '2 folds kept the names with the most time'

echo "limits: $pass passed, $fail failed"
[ "$fail" = 0 ]
