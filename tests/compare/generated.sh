#!/bin/sh
# generated.sh TALLY GENERATOR PYTHON SCHEMA WORKDIR
#
# `tally compare` on synthetic Kineto traces from bench_gen_kineto_trace: 4 ranks,
# 12 steps, 4 layers, gzip (about 1 MB a rank file), with realistic noise (CPU ops
# about 20 %, kernels 2 %, spikes). The candidate has another seed and
# --kernel-scale flash_fwd=1.3: that kernel 30 % slower on every rank.
#   - it is the only regression (all ranks and each rank, per call, per run and per step,
#     +20..40 %); its total per run adds about 1 % to the step (the step moved +0.6 %,
#     inside the threshold): not material, so the gate passes by default (exit 0,
#     the regression still listed); with --materiality 0 (every stage may fail the
#     gate) its total per run fails the gate, and --fail-on-regression exits 1 and
#     names it on stderr;
#   - the JSON validates against schema/tally-compare.schema.json, the JUnit file
#     is well-formed with one failure per regression row, the Markdown is under
#     1 MiB, the HTML page is self-contained with balanced tags;
#   - a partial aggregate (tally aggregate --partial) as the baseline gives the
#     same rows as the directory it was made from;
#   - without --fail-on-regression the same comparison exits 0, and writes the
#     same HTML and Markdown bytes again.
set -eu
tally=$1
gen=$2
py=$3
schema=$4
work=$5
here=$(cd "$(dirname "$0")" && pwd)
check="$py $here/check_compare.py"
rm -rf "$work"
mkdir -p "$work"

# The generator is a test tool: a leak report from it (sanitized builds) is not ours to fail on.
make_run() { # dir, options...
    d=$1
    shift
    ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 "$gen" --ranks 4 --dir "$work/$d" --steps 12 --layers 4 --gzip --quiet "$@"
}
make_run base --seed 1
make_run slow --seed 2 --kernel-scale flash_fwd=1.3
flash=$("$gen" --list-kernels | awk '$1 == "flash_fwd" { sub(/^[^ ]+ +/, ""); print; exit }')
[ -n "$flash" ] || { echo "generated.sh: no flash_fwd in --list-kernels" >&2; exit 1; }

# By default the gate follows the step: a kernel that adds 1 % to it is not material.
set +e
"$tally" compare -q "$work/base" "$work/slow" --json "$work/material.json" --fail-on-regression 2>"$work/material.err"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    echo "generated.sh: an immaterial regression (1 % of the step) failed the gate: exit $rc" >&2
    cat "$work/material.err" >&2
    exit 1
fi
$check verdicts "$work/material.json" --only-regression "$flash"
grep -F '"material":false' "$work/material.json" >/dev/null

set +e
"$tally" compare "$work/base" "$work/slow" -o "$work/slow.html" --json "$work/slow.json" \
    --junit "$work/slow.xml" --markdown "$work/slow.md" --fail-on-regression --materiality 0 \
    >"$work/slow.out" 2>"$work/slow.err"
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
    echo "generated.sh: --fail-on-regression with a regression exited $rc, not 1" >&2
    cat "$work/slow.err" >&2
    exit 1
fi
grep -F "regression: kernels \"$flash\" (all ranks)" "$work/slow.err" >/dev/null || {
    echo "generated.sh: stderr does not name the regression" >&2
    cat "$work/slow.err" >&2
    exit 1
}
$check verdicts "$work/slow.json" --only-regression "$flash"
$check schema "$work/slow.json" "$schema"
$check junit "$work/slow.xml" "$work/slow.json"
$check markdown "$work/slow.md"
$check html "$work/slow.html"
# 11 regressions: per call and per run (all ranks and 4 ranks each) and per step (all ranks);
# the gate row among them is the all-ranks total per run (kernels are stages of the gate family).
grep -F "11 regressions, 0 improvements" "$work/slow.out" >/dev/null &&
grep -F "; 1 gate failure;" "$work/slow.out" >/dev/null || {
    echo "generated.sh: the summary on stdout does not say 11 regressions and 1 gate failure:" >&2
    cat "$work/slow.out" >&2
    exit 1
}

# A partial aggregate is an input like the directory it came from.
"$tally" aggregate -q --partial "$work/base" -o "$work/base.partial.json"
"$tally" compare -q --materiality 0 "$work/base.partial.json" "$work/slow" -o "$work/partial.html" --json "$work/partial.json"
$check same-rows "$work/slow.json" "$work/partial.json"

# No gate without --fail-on-regression; the same inputs give the same bytes.
"$tally" compare -q --materiality 0 "$work/base" "$work/slow" -o "$work/nogate.html" --markdown "$work/nogate.md"
cmp "$work/slow.html" "$work/nogate.html"
cmp "$work/slow.md" "$work/nogate.md"
echo "generated.sh: ok"
