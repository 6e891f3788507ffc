#!/bin/sh
# `tally summary` fits its width: every line of stdout is at most 80 display
# columns by default (stdout is not a terminal here), at most N with
# --width N, and a number is never cut (each table row keeps its cells whole:
# a line never ends inside a number). Inputs: the DLRM set, HTA's
# trace_filter, the Kineto docs' H100 traces and the FramePack and Inferix
# reports.
# usage: summary_width.sh TALLY CORPUS
set -u
tally=$1 corpus=$2
fail=0
check() { # width args...
    w=$1; shift
    out=$(cd "$corpus" && "$tally" summary --quiet "$@") || { echo "FAIL summary $*: exit $?"; fail=1; return; }
    # code points, not bytes: "µs" is one column
    long=$(printf '%s\n' "$out" | python3 -c "
import sys
w = int(sys.argv[1])
bad = [l for l in sys.stdin.read().split('\n') if len(l) > w]
print(len(bad)); [print(l) for l in bad[:3]]" "$w")
    n=$(printf '%s\n' "$long" | head -1)
    if [ "$n" != 0 ]; then
        echo "FAIL summary $* at $w columns: $n lines wider:"; printf '%s\n' "$long" | tail -n +2; fail=1
    else
        echo "ok   summary $* fits $w columns ($(printf '%s\n' "$out" | wc -l) lines)"
    fi
}
for input in param-dlrm_kineto-8rank hta/trace_filter kineto-docs-traces framepack/generated inferix; do
    check 80 "$input"
    check 60 --width 60 "$input"
    check 120 --width 120 "$input"
done
# a bad width is a usage error
(cd "$corpus" && "$tally" summary --width 10 hta/trace_filter >/dev/null 2>&1); rc=$?
if [ $rc != 2 ]; then echo "FAIL --width 10: exit $rc, expected 2"; fail=1; else echo "ok   --width 10 is a usage error"; fi
exit $fail
