#!/bin/bash
# Bounded memory in distinct names and events (issue 10, item 8): 100,000
# distinct kernel names under a names budget of 1,000 and an address-space
# limit (RLIMIT_AS) that the unbudgeted run does not fit in. Not run under
# ASan (label nosan): it reserves terabytes of address space.
#
# usage: memory.sh TALLY PYTHON GEN_NAMES
set -u
tally=$1 python=$2 gen=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
jcheck() {
    if "$python" -c "import json,sys; doc=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2" 2>"$tmp/.jerr"; then ok
    else bad "$1: $3 is false for $(head -c 800 "$2") $(cat "$tmp/.jerr")"; fi
}
"$python" "$gen" 100000 "$tmp/names.json" || { echo "FAIL generator"; exit 1; }
as=$((192 << 20))
# 1. within 192 MiB of address space, exact for what is kept
timeout -k 5 120 prlimit --as=$as "$tally" aggregate --jobs 1 --max-names 1000 "$tmp/names.json" \
    -o "$tmp/agg.json" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 0 ] && ok || bad "budget 1000 under RLIMIT_AS 192 MiB: exit $rc: $(tail -3 "$tmp/e")"
grep -q 'more than 1000 distinct names (the names budget, --max-names): 8 folds kept the names with the most time' "$tmp/e" && ok ||
    bad "no names-budget warning: $(cat "$tmp/e")"
# every kernel event is still a GPU event (the breakdown does not depend on the budget)
jcheck names-gpu-exact "$tmp/agg.json" 'doc["ranks"][0]["gpu"]["events"] == 399995'
# the names kept have exact statistics: kernel_i has (i % 7) + 1 calls of 5 + (i % 3) us
jcheck names-kept "$tmp/agg.json" 'all(n["count"] == int(n["name"][7:]) % 7 + 1 and n["total_ns"] == n["count"] * (5 + int(n["name"][7:]) % 3) * 1000 for n in doc["names"] if n["group"] == "kernels" and n["name"] != "(other names)")'
# and the heaviest by time are among them (7 calls of 7 us, the most any name has): the pool holds the rest
jcheck names-heaviest "$tmp/agg.json" 'sorted((n["total_ns"] for n in doc["names"] if n["group"] == "kernels" and n["name"] != "(other names)"), reverse=True)[:50] == [49000] * 50'
jcheck names-pool "$tmp/agg.json" 'any(n["name"] == "(other names)" for n in doc["names"])'
# 2. the same input with no budget does not fit: the budget is what bounds it
timeout -k 5 120 prlimit --as=$as "$tally" aggregate --jobs 1 --max-names 4000000 "$tmp/names.json" \
    -o "$tmp/agg2.json" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc != 0 ] && ok || bad "100k names without a budget fit in 192 MiB: the limit proves nothing"
[ $rc -lt 128 ] && ok || bad "100k names without a budget crashed (exit $rc) instead of failing cleanly"
# out of memory is its own exit code and message, not "no usable input" (3)
[ $rc = 5 ] && ok || bad "out of memory exited $rc, not 5"
grep -q "out of memory" "$tmp/e" && ! grep -q "no usable input" "$tmp/e" && ok ||
    bad "out of memory not said as such: $(tail -2 "$tmp/e")"
# 3. the events limit and the input size limit: warnings, truncated, numbers for what was read
timeout -k 5 60 "$tally" inspect --json --max-events 1000 "$tmp/names.json" >"$tmp/o" 2>"$tmp/e"
jcheck max-events "$tmp/o" 'doc[0]["events"] == 1000 and doc[0]["truncated"] and any("the events limit" in w for w in doc[0]["warnings"])'
gzip -c "$tmp/names.json" >"$tmp/names.json.gz"
timeout -k 5 60 "$tally" inspect --json --max-input-size 1M "$tmp/names.json.gz" >"$tmp/o" 2>"$tmp/e"
jcheck max-input-size "$tmp/o" 'doc[0]["truncated"] and doc[0]["events"] > 0 and any("more than 1048576 bytes decompressed (the input size limit" in w for w in doc[0]["warnings"])'
# 4. 2,000 ranks (issue 10: straggler detection was O(R^2 log R)): one slow rank
# named, within the hang guard and 512 MiB, every rank counted
"$python" - "$tmp/ranks" <<'PY'
import json, os, sys
out = sys.argv[1]
os.makedirs(out)
for r in range(2000):
    slow = 1.3 if r == 1234 else 1.0
    ev, ts = [], 1000
    for n in range(6):
        d = int((9000 + (r * 7 + n * 13) % 50) * slow)
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": 1, "tid": 1, "ts": ts, "dur": d})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 10, "dur": 5,
                   "args": {"correlation": n + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": ts + 20, "dur": d - 100,
                   "args": {"device": 0, "stream": 7, "correlation": n + 1}})
        ts += d + 10
    json.dump({"distributedInfo": {"rank": r, "world_size": 2000}, "traceEvents": ev},
              open("%s/rank%d.json" % (out, r), "w"))
PY
timeout -k 5 120 prlimit --as=$((512 * 1024 * 1024)) "$tally" summary --jobs 2 --width 120 "$tmp/ranks" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 0 ] && ok || bad "2000 ranks: exit $rc: $(tail -3 "$tmp/e")"
grep -q "2000 sessions of 2000 ranks, 0 warnings" "$tmp/o" && ok || bad "2000 ranks: not every rank counted: $(head -2 "$tmp/o")"
grep -Eq "^critical +\[straggler\] Rank 1234 is a straggler" "$tmp/o" && ok || bad "2000 ranks: the slow rank 1234 is not named"
[ "$(grep -Ec "\[straggler\] Rank [0-9]+ is a straggler" "$tmp/o")" = 1 ] && ok || bad "2000 ranks: more than the slow rank named"

echo "reliability (memory): $pass passed, $fail failed"
[ $fail = 0 ]
