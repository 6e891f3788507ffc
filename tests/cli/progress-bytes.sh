#!/bin/sh
# progress-bytes.sh TALLY GENERATOR - progress moves within one input (issue 35):
# a 20 MB trace comes through a FIFO in two halves 1.5 s apart; while the
# second half is awaited, --progress must already have said the first half's
# megabytes for that input ("read 0/1 inputs, N MB" with N >= 9), then the
# whole on the final line.
set -eu
tally=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" --size-mb 20 --layers 2 --out "$tmp/t.json" --quiet
size=$(wc -c <"$tmp/t.json")
half=$((size / 2))
mkfifo "$tmp/rank0.pt.trace.json"
{ head -c "$half" "$tmp/t.json"; sleep 1.5; tail -c +"$((half + 1))" "$tmp/t.json"; } >"$tmp/rank0.pt.trace.json" &
feeder=$!
timeout 60 "$tally" summary --progress "$tmp/rank0.pt.trace.json" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
wait "$feeder"
tr '\r' '\n' <"$tmp/err" >"$tmp/lines"
mid=$(awk -v h="$half" '/^tally: read 0\/1 inputs, / { mb = $5 + 0; if (mb * 1e6 >= 0.9 * h && mb * 1e6 <= h + 1e6) n++ } END { print n + 0 }' "$tmp/lines")
[ "$mid" -ge 1 ] || { echo "FAIL: no progress within the input while its second half was awaited:"; cat "$tmp/lines"; exit 1; }
last=$(grep '^tally: read 1/1 inputs, ' "$tmp/lines" | tail -n 1)
echo "$last" | grep -q "$(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }')" ||
    { echo "FAIL: the final line is not the whole input ($size bytes): $last"; exit 1; }
echo "ok: progress within one input ($mid lines at the first half, then: $last)"
