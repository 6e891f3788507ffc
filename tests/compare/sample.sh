#!/bin/sh
# sample.sh TALLY PIPELINE LAUNCH PYTHON SCHEMA WORKDIR
#
# The collector sample (samples/collector/pipeline.c) as 1 rank, 12 steps, once
# per variant: the optimized variant's fused attention costs about half as much,
# so `tally compare baseline optimized` lists "attention" (all ranks) as an
# improvement of 30 % or more, and not as a regression on any rank. The sample
# runs real work timed on the wall clock, so only that large, designed change is
# asserted, and with one rank: ranks competing for a loaded machine's cores
# blur their wall-clock times (two ranks on two busy cores did, once).
set -eu
tally=$1
prog=$2
launch=$3
py=$4
schema=$5
work=$6
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
for variant in baseline optimized; do
    sh "$launch" -q -n 1 -o "$work/$variant" --name pipeline -- \
        "$prog" --variant "$variant" --steps 12 --seed 1 >/dev/null
done
"$tally" compare -q "$work/baseline" "$work/optimized" -o "$work/compare.html" --json "$work/compare.json" \
    --markdown "$work/compare.md"
"$py" "$here/check_compare.py" verdicts "$work/compare.json" --improvement attention
"$py" "$here/check_compare.py" schema "$work/compare.json" "$schema"
"$py" - "$work/compare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["rows"] if r["name"] == "attention"]
allr = [r for r in rows if r["rank"] is None][0]
if not allr["delta_pct"] < -30:
    sys.exit(f"sample.sh: attention changed by {allr['delta_pct']:+.1f}%, expected -30% or less")
if any(r["verdict"] == "regression" for r in rows):
    sys.exit("sample.sh: attention is a regression on some rank")
PY
echo "sample.sh: ok"
