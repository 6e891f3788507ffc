#!/bin/sh
# CLI tests as data (zstd's tests/cli-tests): each folder in tests/cli/cases holds
#   cmd     the arguments of one `tally` call, one line; $CORPUS is ../shared/corpus,
#           $SAMPLES the repository's samples/, $TMP a fresh scratch directory
#   exit    the expected exit code
#   stdout  the expected standard output (absent: not compared)
#   stderr  the expected standard error (absent: not compared)
# The command runs in $CORPUS so paths in outputs are relative and stable.
# TALLY_REGEN=1 rewrites the expected files from what the command prints now.
#
# usage: run-cases.sh TALLY_BINARY CASES_DIR CORPUS_DIR SOURCE_DIR [CASE...]
set -u
tally=$1 cases=$2 corpus=$3 src=$4
shift 4
fail=0 pass=0
names=${*:-$(ls "$cases")}
for name in $names; do
    dir=$cases/$name
    [ -f "$dir/cmd" ] || continue
    tmp=$(mktemp -d)
    args=$(sed -e "s|\$CORPUS|$corpus|g" -e "s|\$SAMPLES|$src/samples|g" -e "s|\$TMP|$tmp|g" "$dir/cmd")
    # shellcheck disable=SC2086
    (cd "$corpus" && SOURCE_DATE_EPOCH=1700000000 eval "\"$tally\" $args" >"$tmp/.out" 2>"$tmp/.err")
    code=$?
    if [ "${TALLY_REGEN:-0}" = 1 ]; then
        echo "$code" >"$dir/exit"
        cp "$tmp/.out" "$dir/stdout"
        if [ -s "$tmp/.err" ] || [ -f "$dir/stderr" ]; then cp "$tmp/.err" "$dir/stderr"; fi
        echo "regenerated $name"
        rm -rf "$tmp"
        continue
    fi
    ok=1
    want=$(cat "$dir/exit")
    if [ "$code" != "$want" ]; then
        echo "FAIL $name: exit $code, expected $want"; ok=0
    fi
    for stream in stdout stderr; do
        [ -f "$dir/$stream" ] || continue
        got=$tmp/.out; [ $stream = stderr ] && got=$tmp/.err
        if ! diff -u "$dir/$stream" "$got" >"$tmp/.diff"; then
            echo "FAIL $name: $stream differs"; head -40 "$tmp/.diff"; ok=0
        fi
    done
    if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    rm -rf "$tmp"
done
echo "cli cases: $pass passed, $fail failed"
[ $fail = 0 ]
