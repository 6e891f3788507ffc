#!/bin/sh
# size_check.sh - the HTML report stays small however big its input (docs/architecture.md:
# "HTML size bounded (a few MB) whatever the input size"; the Markdown summary
# under 1 MiB so that it fits a CI job summary).
#
#   big:  8 ranks of synthetic Kineto traces from bench_gen_kineto_trace, about
#         TALLY_SIZE_MB (default 130) MB and 375,000 events each, 3 million in
#         all (1 GB, kept in the build tree); rank 5 a straggler. Generated
#         once into OUT_DIR/data and reused while the generator and its
#         arguments are unchanged.
#         report.html < 3 MiB, summary.md < 1 MiB.
#   tiny: one FramePack profiling_report.json: report.html < 150 KiB (the
#         page's fixed weight, CSS and template, stays small).
#
# Prints the sizes and times. No timing is asserted.
#
# usage: size_check.sh TALLY GENERATOR CORPUS_DIR OUT_DIR
set -eu
if [ $# -ne 4 ]; then
    echo "usage: size_check.sh TALLY GENERATOR CORPUS_DIR OUT_DIR" >&2
    exit 2
fi
tally=$1 gen=$2 corpus=$3 out=$4
mb=${TALLY_SIZE_MB:-130}
ranks=8
export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$out"
data=$out/data
pass=0 fail=0

check() { # check WHAT BYTES LIMIT
    if [ "$2" -lt "$3" ]; then
        pass=$((pass + 1))
        printf 'ok   %-40s %10s bytes < %s\n' "$1" "$2" "$3"
    else
        fail=$((fail + 1))
        printf 'FAIL %-40s %10s bytes, limit %s\n' "$1" "$2" "$3"
    fi
}
now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.1f", $1 - $2 }'; }
size() { wc -c <"$1" | tr -d ' '; }

stamp="ranks=$ranks size-mb=$mb seed=1 slow-rank=5 slow-factor=1.4 $(cksum <"$gen")"
if [ ! -f "$data/.stamp" ] || [ "$(cat "$data/.stamp")" != "$stamp" ]; then
    rm -rf "$data"
    t=$(now)
    mkdir -p "$data"
    # The generator says per file: "PATH: rank R/W, N steps, E events, S MB".
    "$gen" --ranks $ranks --dir "$data" --size-mb "$mb" --seed 1 --slow-rank 5 --slow-factor 1.4 \
        --jobs 2 2>"$data/.generated"
    echo "$stamp" >"$data/.stamp"
    echo "generated $ranks ranks x ~$mb MB into $data in $(since "$t") s"
else
    echo "reusing $data ($stamp)"
fi
bytes=$(wc -c "$data"/rank*.pt.trace.json | tail -n 1 | awk '{ print $1 }')
events=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^events/) n += $(i - 1) } END { print n + 0 }' "$data/.generated")
echo "input: $ranks files, $bytes bytes, $events events"
if [ -z "${TALLY_SIZE_MB:-}" ] && [ "$events" -lt 2000000 ]; then
    echo "FAIL the input should hold millions of events, has $events"
    fail=$((fail + 1))
fi

t=$(now)
if "$tally" report --quiet --jobs 2 "$data" -o "$out/report.html" --markdown "$out/summary.md" \
    --json "$out/aggregate.json"; then
    echo "tally report of $bytes bytes took $(since "$t") s"
    check "big: report.html" "$(size "$out/report.html")" 3145728
    check "big: summary.md" "$(size "$out/summary.md")" 1048576
    printf '     %-40s %10s bytes\n' "big: aggregate.json" "$(size "$out/aggregate.json")"
    rows=$(grep -o '<tr' "$out/report.html" | wc -l | tr -d ' ')
    svgs=$(grep -o '<svg' "$out/report.html" | wc -l | tr -d ' ')
    echo "     big: report.html has $rows table rows and $svgs SVG charts"
else
    echo "FAIL tally report of the big input: exit $?"
    fail=$((fail + 1))
fi

tiny=$corpus/framepack/generated/profiling_report.json
if "$tally" report --quiet "$tiny" -o "$out/tiny.html" --markdown "$out/tiny.md"; then
    check "tiny: report.html (one FramePack report)" "$(size "$out/tiny.html")" 153600
    printf '     %-40s %10s bytes\n' "tiny: summary.md" "$(size "$out/tiny.md")"
else
    echo "FAIL tally report $tiny: exit $?"
    fail=$((fail + 1))
fi

echo "report_size: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
