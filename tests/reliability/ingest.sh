#!/bin/bash
# The reliability suite for ingest (issue 10): small replays of the attacks,
# each asserting no crash, no hang (every tally call runs under `timeout`),
# the right warnings and the exit codes. Bounded memory is checked with
# RLIMIT_AS (prlimit) where the build is not sanitized (ASan reserves terabytes
# of address space): see memory cases below.
#
# usage: ingest.sh TALLY GEN_LOOP CORPUS PYTHON
set -u
tally=$1 gen_loop=$2 corpus=$3 python=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0
T=30 # seconds any one tally call may take: more is a hang

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# expect NAME WANT_EXIT GOT_EXIT
expect_exit() { if [ "$3" = "$2" ]; then ok; else bad "$1: exit $3, expected $2"; fi; }
# has NAME FILE PATTERN: the file holds the (grep -E) pattern
has() { if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no '$3' in $(head -c 600 "$2")"; fi; }
hasnt() { if grep -Eq -- "$3" "$2"; then bad "$1: unexpected '$3' in $(head -c 600 "$2")"; else ok; fi; }
# jq-like check with Python: jcheck NAME FILE EXPR (doc is the parsed JSON)
jcheck() {
    if "$python" -c "import json,sys; doc=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2" 2>"$tmp/.jerr"; then ok
    else bad "$1: $3 is false for $(head -c 600 "$2") $(cat "$tmp/.jerr")"; fi
}
run() { timeout -k 5 $T "$tally" "$@"; }

trace0=$corpus/param-dlrm_kineto-8rank/worker0_step_12.1694128201545.pt.trace.json
trace1=$corpus/param-dlrm_kineto-8rank/worker1_step_12.1694128201556.pt.trace.json
trace2=$corpus/param-dlrm_kineto-8rank/worker2_step_12.1694128201556.pt.trace.json
[ -f "$trace2" ] || trace2=$(ls "$corpus"/param-dlrm_kineto-8rank/worker2_*.json | head -1)
events0=$("$python" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['traceEvents']))" "$trace0")

# ---- 1. reports past 64 KiB are read as reports --------------------------------
mkdir -p "$tmp/lt"
TALLY_OUTPUT_DIR=$tmp/lt TALLY_NAME=loop RANK=0 timeout 60 "$gen_loop" 9000 || bad "gen_loop 8000 failed"
report=$(ls "$tmp"/lt/*report.json 2>/dev/null | head -1)
if [ -z "$report" ]; then bad "libtally wrote no report"; else
    size=$(stat -c %s "$report")
    [ "$size" -gt 65536 ] && ok || bad "libtally report is only $size bytes: the case needs > 64 KiB"
    run inspect --json "$report" >"$tmp/o" 2>"$tmp/e"; expect_exit big-libtally 0 $?
    jcheck big-libtally "$tmp/o" 'doc[0]["format"] == "tally-report" and not doc[0]["skipped"]'
    # item 6: all 9,000 iterations are steps, not the first 1,000
    jcheck big-libtally-steps "$tmp/o" 'doc[0]["steps"] == 9000'
    run aggregate "$report" -o "$tmp/agg.json" 2>"$tmp/e"; expect_exit big-libtally-aggregate 0 $?
    jcheck big-libtally-step-count "$tmp/agg.json" 'doc["ranks"][0]["steps"]["count"] == 9000'
fi
# past the collector's own cap (TALLY_MAX_SAMPLES, 10,000): no silent cut, the report says it
mkdir -p "$tmp/lt12"
TALLY_OUTPUT_DIR=$tmp/lt12 TALLY_NAME=loop RANK=0 timeout 60 "$gen_loop" 12000 || bad "gen_loop 12000 failed"
run inspect --json "$tmp"/lt12/*report.json >"$tmp/o" 2>"$tmp/e"; expect_exit capped-steps 0 $?
jcheck capped-steps "$tmp/o" 'doc[0]["steps"] == 10000 and any("holds the first 10000 of 12000 iterations" in w for w in doc[0]["warnings"])'
"$python" - "$corpus" "$tmp" <<'PY'
import json, sys, copy
corpus, tmp = sys.argv[1], sys.argv[2]
fp = json.load(open(corpus + "/framepack/generated/profiling_report.json"))
base = fp["timing_stats"]["vae_encode"]
fp["timing_stats"] = {f"stage_{i:05d}": dict(base) for i in range(3000)}
json.dump(fp, open(tmp + "/big_framepack.json", "w"))
ix = json.load(open(corpus + "/inferix/generated/multi_rank_reports/rank_0/profiling_report_t2v_generation_20261121_215140.json"))
ev = ix["events"]
ix["events"] = [copy.deepcopy(ev[i % len(ev)]) for i in range(3000)]
info = ix.pop("session_info")   # the deciding key after 64 KiB of events
ix["session_info"] = info
json.dump(ix, open(tmp + "/big_inferix.json", "w"))
# a trace whose "traceEvents" comes after 100 KiB of another key
tr = json.load(open(sys.argv[1] + "/param-dlrm_kineto-8rank/worker0_step_12.1694128201545.pt.trace.json"))
big = {"padding": "x" * 100000}
big.update(tr)
json.dump(big, open(tmp + "/late_trace_events.json", "w"))
PY
for f in big_framepack big_inferix; do
    [ "$(stat -c %s "$tmp/$f.json")" -gt 65536 ] && ok || bad "$f is not > 64 KiB"
done
run inspect --json "$tmp/big_framepack.json" >"$tmp/o" 2>"$tmp/e"; expect_exit big-framepack 0 $?
jcheck big-framepack "$tmp/o" 'doc[0]["format"] == "framepack-report" and doc[0]["names"] >= 3000'
run inspect --json "$tmp/big_inferix.json" >"$tmp/o" 2>"$tmp/e"; expect_exit big-inferix 0 $?
jcheck big-inferix "$tmp/o" 'doc[0]["format"] == "inferix-report" and doc[0]["rank"] == 0'
run inspect --json "$tmp/late_trace_events.json" >"$tmp/o" 2>"$tmp/e"; expect_exit late-trace-events 0 $?
jcheck late-trace-events "$tmp/o" "doc[0]['format'] == 'pytorch-profiler' and doc[0]['events'] == $events0"

# ---- 3. damaged rank files: a warning, an input entry, and gates fail -----------
mkdir -p "$tmp/runs"
cp "$trace0" "$tmp/runs/rank0.pt.trace.json"
: >"$tmp/runs/rank1.pt.trace.json"                                   # empty
head -c 8192 /dev/zero >"$tmp/runs/rank2.pt.trace.json"               # NUL-filled
head -c 5000 "$trace2" >"$tmp/runs/rank3.pt.trace.json"               # truncated
printf 'not json at all\n' >"$tmp/runs/rank4.pt.trace.json"           # not JSON
printf '# how to read these\n' >"$tmp/runs/README.md"                 # not a rank file
run validate "$tmp/runs" >"$tmp/o" 2>"$tmp/e"; expect_exit damaged-validate 1 $?
has damaged-validate "$tmp/o" 'rank1.pt.trace.json: damaged profile .*empty file'
has damaged-validate "$tmp/o" 'rank2.pt.trace.json: damaged profile .*NUL'
has damaged-validate "$tmp/o" 'rank3.pt.trace.json: offset [0-9]+: input ends inside'
has damaged-validate "$tmp/o" 'rank4.pt.trace.json: damaged profile .*not JSON'
hasnt damaged-validate "$tmp/o" 'README'
has damaged-validate-count "$tmp/e" '1 clean'
run summary --strict "$tmp/runs" >"$tmp/o" 2>"$tmp/e"; expect_exit damaged-strict 1 $?
run summary "$tmp/runs" >"$tmp/o" 2>"$tmp/e"; expect_exit damaged-summary 0 $?
has damaged-summary "$tmp/e" 'rank2.pt.trace.json: damaged profile'
has damaged-summary-note "$tmp/e" 'note: 1 file .* README.md'
run aggregate "$tmp/runs" -o "$tmp/agg.json" >"$tmp/o" 2>"$tmp/e"; expect_exit damaged-aggregate 0 $?
jcheck damaged-inputs-table "$tmp/agg.json" 'sum(1 for i in doc["inputs"] if "rank" in i["path"].split("/")[-1] and i["warnings"] and i["warnings"][0].startswith("damaged")) == 3'
# the same in a compare: the candidate's slow rank left a NUL-filled file
mkdir -p "$tmp/base" "$tmp/cand"
cp "$trace0" "$tmp/base/rank0.pt.trace.json"; cp "$trace1" "$tmp/base/rank1.pt.trace.json"
cp "$trace0" "$tmp/cand/rank0.pt.trace.json"; head -c 65536 /dev/zero >"$tmp/cand/rank1.pt.trace.json"
run compare --strict --fail-on-regression "$tmp/base" "$tmp/cand" -o "$tmp/cmp.html" >"$tmp/o" 2>"$tmp/e"
expect_exit damaged-compare-strict 1 $?
has damaged-compare "$tmp/e" 'rank1.pt.trace.json: damaged profile'

# ---- 10. FIFOs, stdin, process substitution: opened once, read as streams ------
mkfifo "$tmp/fifo"
(cat "$trace0" >"$tmp/fifo" &)
run inspect --json "$tmp/fifo" >"$tmp/o" 2>"$tmp/e"; expect_exit fifo 0 $?
jcheck fifo "$tmp/o" "doc[0]['events'] == $events0 and doc[0]['rank'] == 0"
run inspect --json - <"$trace0" >"$tmp/o" 2>"$tmp/e"; expect_exit stdin-file 0 $?
jcheck stdin-file "$tmp/o" "doc[0]['events'] == $events0 and doc[0]['path'] == '(stdin)'"
cat "$trace0" | run inspect --json - >"$tmp/o" 2>"$tmp/e"; expect_exit stdin-pipe 0 $?
jcheck stdin-pipe "$tmp/o" "doc[0]['events'] == $events0"
gzip -c "$trace0" | run inspect --json - >"$tmp/o" 2>"$tmp/e"; expect_exit stdin-gzip 0 $?
jcheck stdin-gzip "$tmp/o" "doc[0]['events'] == $events0"
tar -C "$tmp/base" -czf - . | run inspect --json - >"$tmp/o" 2>"$tmp/e"; expect_exit stdin-tgz 0 $?
jcheck stdin-tgz "$tmp/o" "sorted(o['events'] for o in doc if o['path'].startswith('(stdin):')) == sorted([$events0, $("$python" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['traceEvents']))" "$trace1")])"
run inspect --json <(cat "$trace0") >"$tmp/o" 2>"$tmp/e"; expect_exit process-substitution 0 $?
jcheck process-substitution "$tmp/o" "doc[0]['events'] == $events0"
# a FIFO nobody writes, found by walking: not opened (no hang), a note
mkdir -p "$tmp/withfifo"; cp "$trace0" "$tmp/withfifo/rank0.json"; mkfifo "$tmp/withfifo/stale.fifo"
run inspect "$tmp/withfifo" >"$tmp/o" 2>"$tmp/e"; expect_exit walked-fifo 0 $?
has walked-fifo "$tmp/e" 'stale.fifo: not a regular file'

# ---- 7. the same file twice is read once ----------------------------------------
mkdir -p "$tmp/dup"; cp "$trace0" "$tmp/dup/rank0.json"; cp "$trace1" "$tmp/dup/rank1.json"
ln "$tmp/dup/rank1.json" "$tmp/dup/rank1-hardlink.json"
(cd "$tmp" && run summary dup dup/rank0.json ./dup "$tmp/dup" >"$tmp/o" 2>"$tmp/e"); expect_exit dup 0 $?
# The one warning is the world size's: 2 of DLRM's 8 ranks are here.
has dup "$tmp/o" '^tally summary: 2 sessions of 2 ranks, 1 warning'
has dup-missing "$tmp/e" 'warning: 2 of 8 ranks present'
has dup-note "$tmp/e" 'note: .*read once'
(cd "$tmp" && run inspect --json dup dup/rank0.json ./dup >"$tmp/o" 2>"$tmp/e")
jcheck dup-inspect "$tmp/o" 'len(doc) == 2'
cat "$trace0" > "$tmp/stdin-copy.json"
run inspect --json - "$tmp/stdin-copy.json" <"$tmp/stdin-copy.json" >"$tmp/o" 2>"$tmp/e"
jcheck dup-stdin "$tmp/o" 'len(doc) == 1'

# ---- 15. a trace with no events is not a usable rank -----------------------------
printf '{"traceEvents": []}' >"$tmp/empty_events.json"
run summary "$tmp/empty_events.json" >"$tmp/o" 2>"$tmp/e"; expect_exit no-events 3 $?
has no-events "$tmp/e" 'no events'

# ---- 15. smaller ones -------------------------------------------------------------
# names with \u0000 stay distinct (not cut at the NUL and merged with "a")
printf '[{"ph":"X","name":"a\\u0000b","ts":0,"dur":5,"pid":1,"tid":1},{"ph":"X","name":"a","ts":10,"dur":7,"pid":1,"tid":1},{"ph":"X","name":"a\\u0000c","ts":20,"dur":9,"pid":1,"tid":1}]' >"$tmp/nul.json"
run aggregate "$tmp/nul.json" -o "$tmp/agg.json" >"$tmp/o" 2>"$tmp/e"; expect_exit nul-names 0 $?
jcheck nul-names "$tmp/agg.json" 'sorted((n["name"], n["count"], n["total_ns"]) for n in doc["names"]) == [("a", 1, 7000), ("a\\u0000b", 1, 5000), ("a\\u0000c", 1, 9000)]'
# more than 65,535 GPU streams: each keeps its own, nothing shared silently
"$python" - "$tmp/streams.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"traceEvents":[')
    f.write(",".join('{"ph":"X","cat":"kernel","name":"k","ts":%d,"dur":1,"pid":0,"tid":%d,"args":{"device":0,"stream":%d}}' % (i, i, i) for i in range(70000)))
    f.write(']}')
PY
run inspect "$tmp/streams.json" >"$tmp/o" 2>"$tmp/e"; expect_exit streams 0 $?
has streams "$tmp/o" '70000 GPU events on 70000 streams'
# a truncated plain tar keeps its partial last member, like a tar.gz
mkdir -p "$tmp/tarin"; cp "$trace0" "$tmp/tarin/rank0.json"; cp "$trace1" "$tmp/tarin/rank1.json"
tar -C "$tmp/tarin" -cf "$tmp/full.tar" rank0.json rank1.json
head -c $(( $(stat -c %s "$tmp/full.tar") - 200000 )) "$tmp/full.tar" >"$tmp/cut.tar"
gzip -c "$tmp/cut.tar" >"$tmp/cut.tar.gz"
for f in cut.tar cut.tar.gz; do
    run inspect --json "$tmp/$f" >"$tmp/o" 2>"$tmp/e"
    jcheck "truncated-$f" "$tmp/o" '[(o["truncated"], o["events"] > 2000) for o in doc if o["path"].endswith("rank1.json") and o["events"]] == [(True, True)]'
    has "truncated-$f" "$tmp/o" 'archive damaged inside this member after 7[0-9]{5} bytes'
done
# archive members that are not regular files, and a README in a zip: a message each
"$python" - "$tmp" "$trace0" <<'PY'
import sys, tarfile, zipfile, io
tmp, trace = sys.argv[1], sys.argv[2]
with tarfile.open(tmp + "/odd.tar", "w") as t:
    t.add(trace, "rank0.json")
    for name, kind in (("latest.json", tarfile.SYMTYPE), ("pipe", tarfile.FIFOTYPE), ("dev", tarfile.CHRTYPE)):
        i = tarfile.TarInfo(name); i.type = kind; i.linkname = "rank0.json" if kind == tarfile.SYMTYPE else ""
        t.addfile(i)
    i = tarfile.TarInfo("copy.json"); i.type = tarfile.LNKTYPE; i.linkname = "rank0.json"; t.addfile(i)
with zipfile.ZipFile(tmp + "/withreadme.zip", "w") as z:
    z.write(trace, "rank0.json")
    z.writestr("README.md", "# the job\n")
PY
run inspect --json "$tmp/odd.tar" >"$tmp/o" 2>"$tmp/e"; expect_exit archive-members 0 $?
has archive-symlink "$tmp/o" 'latest.json.*a symbolic link to rank0.json; archive members that are not regular files are not read'
has archive-fifo "$tmp/o" 'pipe.*a FIFO'
has archive-device "$tmp/o" 'dev.*a character device'
has archive-hardlink "$tmp/o" 'copy.json.*a hard link to rank0.json'
jcheck archive-members "$tmp/o" 'sum(1 for o in doc if o.get("events")) == 1'
run inspect "$tmp/withreadme.zip" >"$tmp/o" 2>"$tmp/e"; expect_exit zip-readme 0 $?
has zip-readme "$tmp/e" 'note: 1 file found by walking or in archives is not a profile .* README.md'

# the names budget folds while calls are open on the nesting stacks: the
# indices they hold are renumbered (a stale one read another name's statistic,
# or past the table); "outer" keeps its exact inclusive and self time
"$python" - "$tmp/fold.json" <<'PY'
import json, sys
ev = []
for i in range(4):  # rare names first: folded, so every later index moves
    ev.append({"ph": "X", "cat": "cpu_op", "name": "rare%d" % i, "pid": 1, "tid": 1, "ts": i * 10, "dur": 5})
for i in range(5):
    ev.append({"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 100 + i * 20, "dur": 10})
ev.append({"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 1000, "dur": 2000})
t = 1010
for k in range(3):
    for c in range(3):
        ev.append({"ph": "X", "cat": "cpu_op", "name": "kept%d" % c, "pid": 1, "tid": 1, "ts": t, "dur": 10}); t += 20
for i in range(30):
    ev.append({"ph": "X", "cat": "cpu_op", "name": "new%d" % i, "pid": 1, "tid": 1, "ts": t, "dur": 10}); t += 20
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
run aggregate -q --max-names 8 "$tmp/fold.json" -o "$tmp/fold.agg.json"; expect_exit fold-nesting 0 $?
jcheck fold-nesting "$tmp/fold.agg.json" '[(n["count"], n["inclusive_ns"], n["self_ns"]) for n in doc["names"] if n["name"] == "outer"] == [(6, 2050000, 1660000)]'
jcheck fold-nesting-kept "$tmp/fold.agg.json" 'all(n["self_ns"] == 30000 for n in doc["names"] if n["name"].startswith("kept"))'

echo "reliability (ingest): $pass passed, $fail failed"
[ $fail = 0 ]
