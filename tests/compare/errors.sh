#!/bin/sh
# errors.sh TALLY WORKDIR
#
# The exit codes of docs/architecture.md: 2 for usage errors (one input, three inputs, a bad
# --threshold, --metric or --correction), 3 when a side has no usable input, 4 when
# an output cannot be written, 0 for --help.
set -eu
tally=$1
work=$2
rm -rf "$work"
mkdir -p "$work/notes"
echo "not a profile" >"$work/notes/README.txt"
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","ts":1,"dur":5,"pid":1,"tid":1}]}' >"$work/t.json"
expect() { # code, args...
    want=$1
    shift
    set +e
    "$tally" compare "$@" >"$work/out" 2>"$work/err"
    rc=$?
    set -e
    if [ "$rc" -ne "$want" ]; then
        echo "errors.sh: tally compare $*: exit $rc, not $want" >&2
        cat "$work/err" >&2
        exit 1
    fi
}
expect 0 --help
expect 2 "$work/t.json"
expect 2 "$work/t.json" "$work/t.json" "$work/t.json"
expect 2 "$work/t.json" "$work/t.json" --threshold five
expect 2 "$work/t.json" "$work/t.json" --threshold -3%
expect 2 "$work/t.json" "$work/t.json" --metric p99
expect 2 "$work/t.json" "$work/t.json" --correction bonferroni
expect 2 "$work/t.json" "$work/t.json" --no-such-option
expect 3 -q "$work/t.json" "$work/notes" -o "$work/x.html"
expect 3 -q "$work/missing.json" "$work/t.json" -o "$work/x.html"
expect 4 -q "$work/t.json" "$work/t.json" -o "$work/no/such/dir/x.html"
expect 0 -q "$work/t.json" "$work/t.json" -o "$work/ok.html" --threshold 2.5% --metric total --correction none
[ -s "$work/ok.html" ]
echo "errors.sh: ok"
