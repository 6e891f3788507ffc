#!/bin/sh
# watch.sh TALLY FLUSHER FAKE_NVML WORKDIR
#
# `tally watch` on a real libtally program while it runs (tests/collector/watch_flusher.c,
# the sampler on with a fake NVML: one GPU):
#   - before the program writes anything, --once says there is no report yet: exit 3;
#   - after its tally_flush() (6 steps of compute 8 ms + io 2 ms), while it still runs:
#     6 steps, about 100 steps/s or less, compute's share above io's, the GPU's
#     utilization, memory, temperature and power lines from the report's telemetry;
#   - after it went on (6 more steps) and exited, which rewrote the report: 12 steps;
#   - without --once, to a file (not a terminal): plain frames without ANSI codes,
#     a blank line between them, and SIGINT ends it with exit 0;
#   - two ranks of one run flushing into one folder: one frame of both (12 steps), an
#     hour-old report of the same name left out.
set -eu
tally=$1
prog=$2
nvml=$3
work=$4
rm -rf "$work"
mkdir -p "$work/out"
fail() { echo "watch.sh: $*" >&2; exit 1; }

set +e
"$tally" watch --once "$work/out" >"$work/none.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "no report yet: exit $rc, not 3"
grep -q "no \*.report.json in it yet; nothing to show" "$work/none.txt" || fail "no report yet: $(cat "$work/none.txt")"

TALLY_OUTPUT_DIR=$work/out TALLY_NAME=flusher TALLY_SAMPLE_MS=20 TALLY_NVML_LIBRARY=$nvml \
    "$prog" "$work/flushed" "$work/go" &
pid=$!
i=0
while [ ! -e "$work/flushed" ]; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || { kill "$pid"; fail "the program never flushed"; }
    kill -0 "$pid" 2>/dev/null || fail "the program exited before flushing"
    sleep 0.1
done
"$tally" watch --once "$work/out" >"$work/live.txt"
kill -0 "$pid" 2>/dev/null || fail "the program was not running while watch read its report"
grep -q "^steps    6 " "$work/live.txt" || fail "flushed report: not 6 steps: $(cat "$work/live.txt")"
for series in "GPU util" "GPU memory" "GPU temp" "GPU power"; do
    grep -q "^rank 0 GPU 0  *$series" "$work/live.txt" || fail "no '$series' line: $(cat "$work/live.txt")"
done
python3 - "$work/live.txt" <<'PY'
import re, sys
t = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"^steps +6 +([0-9.]+)/s overall", t, re.M)
# 10 ms of sleeps a step: at most 100 steps/s, more than 10
if not m or not (10 < float(m.group(1)) <= 100):
    sys.exit(f"watch.sh: steps/s: {m and m.group(1)}\n{t}")
st = re.search(r"^stages +(.*)$", t, re.M).group(1)
shares = dict((n, float(v)) for n, v in re.findall(r"(\w+) ([0-9.]+)%", st))
if not shares.get("compute", 0) > shares.get("io", 100) > 0:
    sys.exit(f"watch.sh: stage shares {shares}")
if "\x1b" in t:
    sys.exit("watch.sh: ANSI codes in a frame written to a file")
PY

# Follow it (plain frames to a file) while it goes on and exits.
"$tally" watch "$work/out" --interval 0.2 >"$work/follow.txt" 2>&1 &
wpid=$!
touch "$work/go"
wait "$pid" || fail "the program failed"
sleep 1
kill -INT "$wpid"
set +e
wait "$wpid"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "watch after SIGINT: exit $rc, not 0"
frames=$(grep -c "^tally watch: " "$work/follow.txt")
[ "$frames" -ge 2 ] || fail "follow: $frames frames"
grep -q "^steps    12 " "$work/follow.txt" || fail "follow: never showed the 12 steps of the rewritten report"
grep -q "^(every 0.2 s; Ctrl-C ends)$" "$work/follow.txt" || fail "follow: no interval line"
"$tally" watch --once "$work/out" >"$work/done.txt"
grep -q "^steps    12 " "$work/done.txt" || fail "final report: not 12 steps: $(cat "$work/done.txt")"
# Two ranks of one run in one folder (and an older run's report beside them): the frame is the run's
# two ranks, 6 steps each; the old report is left out.
mkdir -p "$work/out2"
cp "$(ls "$work"/out/*.report.json | head -1)" "$work/out2/flusher-rank5.1-20260101T000000Z.report.json"
touch -d "-1 hour" "$work/out2/flusher-rank5.1-20260101T000000Z.report.json"
for r in 0 1; do
    RANK=$r WORLD_SIZE=2 TALLY_OUTPUT_DIR=$work/out2 TALLY_NAME=flusher TALLY_SAMPLE_MS=20 TALLY_NVML_LIBRARY=$nvml \
        "$prog" "$work/flushed$r" "$work/go2" &
    eval "pid$r=\$!"
done
i=0
while [ ! -e "$work/flushed0" ] || [ ! -e "$work/flushed1" ]; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || { kill "$pid0" "$pid1"; fail "the two ranks never flushed"; }
    sleep 0.1
done
"$tally" watch --once "$work/out2" >"$work/ranks.txt"
touch "$work/go2"
wait "$pid0" && wait "$pid1" || fail "a rank failed"
grep -q "; 2 ranks$" "$work/ranks.txt" && grep -q "^steps    12 " "$work/ranks.txt" &&
    grep -q "^rank 1 GPU 0 " "$work/ranks.txt" && ! grep -q "^rank 5 " "$work/ranks.txt" ||
    fail "two ranks: $(cat "$work/ranks.txt")"
echo "watch.sh: ok"
