#!/bin/sh
# aa.sh TALLY GENERATOR PYTHON WORKDIR
#
# A/A: `tally compare` of two synthetic runs with the same settings and different
# seeds (the generator's noise: CPU ops about 20 %, kernels 2 %, spikes) reports no
# regression and --fail-on-regression exits 0, for five seeds against one baseline.
# Hundreds of names are tested per comparison; this is what Holm's correction and
# the per-rank test of the all-ranks rows are for (see tools/analyze/compare.h).
set -eu
tally=$1
gen=$2
py=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
"$gen" --ranks 4 --dir "$work/base" --steps 12 --layers 4 --gzip --quiet --seed 1
for seed in 2 3 4 5 6; do
    "$gen" --ranks 4 --dir "$work/s$seed" --steps 12 --layers 4 --gzip --quiet --seed "$seed"
    set +e
    "$tally" compare -q "$work/base" "$work/s$seed" -o "$work/s$seed.html" --json "$work/s$seed.json" \
        --fail-on-regression 2>"$work/s$seed.err"
    rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
        echo "aa.sh: seed $seed: exit $rc, not 0" >&2
        cat "$work/s$seed.err" >&2
        exit 1
    fi
    "$py" "$here/check_compare.py" verdicts "$work/s$seed.json" --no-regression
done
echo "aa.sh: ok"
