#!/bin/sh
# merge_split.sh TALLY CORPUS WORKDIR
#
# `tally aggregate` over all the files of a corpus set must be byte-identical to
# `tally aggregate --partial` over any split of them merged with `tally merge`, in any
# order and through a tree of merges (merge --partial, then merge again):
#   - each file alone, merged in several shuffled orders and reversed;
#   - the first 3 and the rest; odd and even ranks; the first 1 and the rest;
#   - two levels: merge --partial of two partials, then merge with a third (both orders);
# and the partial of everything equals the merged partial of the singles. A control
# checks that leaving one file out does change the output (so cmp can see a difference).
# The commands run inside the corpus directory with relative names, so paths match.
set -eu
tally=$1
corpus=$(cd "$2" && pwd)
work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Lines of stdin in an order fixed by the seed.
shuffle() {
    awk -v seed="$1" 'BEGIN { srand(seed) } { printf "%.12f\t%s\n", rand(), $0 }' | sort | cut -f2-
}

check_set() {
    dir=$1
    name=$2
    ranks=$3
    out=$work/$name
    mkdir -p "$out"
    cd "$corpus/$dir"
    files=$(ls | grep -E '\.json(\.gz)?$' | sort)
    n=$(echo "$files" | wc -l)
    [ "$n" -eq "$ranks" ] || fail "$name: expected $ranks files, found $n"

    "$tally" aggregate -q $files -o "$out/all.json"
    grep -q "\"world_size_seen\":$ranks," "$out/all.json" || fail "$name: the aggregate does not see $ranks ranks"
    "$tally" aggregate -q --partial $files -o "$out/all.partial.json"
    grep -q '"format":"tally-partial"' "$out/all.partial.json" || fail "$name: --partial did not write a partial"

    same() { # label, merge arguments...
        label=$1
        shift
        "$tally" merge -q "$@" -o "$out/merged.json" || fail "$name: $label: tally merge failed"
        cmp "$out/all.json" "$out/merged.json" || fail "$name: $label: merged aggregate differs from the whole"
        echo "ok: $name: $label"
    }
    part() { # output, inputs...
        o=$1
        shift
        "$tally" aggregate -q --partial "$@" -o "$out/$o"
    }

    # each file alone
    i=0
    singles=
    for f in $files; do
        part "single.$i.json" "$f"
        singles="$singles $out/single.$i.json"
        i=$((i + 1))
    done
    same "each file alone" $singles
    same "each file alone, reversed" $(echo $singles | tr ' ' '\n' | sort -r)
    for seed in 1 2; do
        same "each file alone, shuffled ($seed)" $(echo $singles | tr ' ' '\n' | shuffle $seed)
    done

    # the merged partial of the singles is the partial of everything
    "$tally" merge -q --partial $(echo $singles | tr ' ' '\n' | shuffle 4) -o "$out/singles.partial.json"
    cmp "$out/all.partial.json" "$out/singles.partial.json" || fail "$name: merged partial differs from the partial of all"
    same "one partial of everything" "$out/all.partial.json"

    # first k (3, or fewer for small sets) and the rest
    k=3
    [ "$k" -lt "$n" ] || k=$((n - 1))
    part head.json $(echo "$files" | head -n "$k")
    part tail.json $(echo "$files" | tail -n +"$((k + 1))")
    same "first $k + last $((n - k))" "$out/tail.json" "$out/head.json"

    # odd and even ranks (the files sort by rank)
    part even.json $(echo "$files" | awk 'NR % 2 == 1')
    part odd.json $(echo "$files" | awk 'NR % 2 == 0')
    same "odd/even ranks" "$out/odd.json" "$out/even.json"

    # the first alone and the rest
    part first.json $(echo "$files" | head -n 1)
    part rest.json $(echo "$files" | tail -n +2)
    same "1 + $((n - 1))" "$out/rest.json" "$out/first.json"

    # two levels: merge --partial of two partials, then merge with a third
    if [ "$n" -ge 3 ]; then
        part a.json $(echo "$files" | head -n 1)
        part b.json $(echo "$files" | awk 'NR == 2 || NR == 3')
        part c.json $(echo "$files" | tail -n +4)
        "$tally" merge -q --partial "$out/c.json" "$out/a.json" -o "$out/ac.json"
        same "merge --partial (a, c) then merge with b" "$out/b.json" "$out/ac.json"
        same "merge --partial (a, c) then merge with b, other order" "$out/ac.json" "$out/b.json"
        "$tally" merge -q --partial "$out/ac.json" "$out/b.json" -o "$out/acb.json"
        same "three levels" "$out/acb.json"
    else
        "$tally" merge -q --partial "$out/single.1.json" "$out/single.0.json" -o "$out/ab.json"
        same "merge --partial (a, b) then merge" "$out/ab.json"
        "$tally" merge -q --partial "$out/ab.json" -o "$out/abb.json"
        same "merge --partial of a merged partial, then merge" "$out/abb.json"
    fi

    # control: without one file the aggregate is different
    "$tally" merge -q $(echo $singles | tr ' ' '\n' | tail -n +2) -o "$out/missing.json"
    if cmp -s "$out/all.json" "$out/missing.json"; then
        fail "$name: leaving a file out changes nothing: the comparison cannot see differences"
    fi
}

check_set param-dlrm_kineto-8rank dlrm 8
check_set hta/trace_filter hta 2
# real CPU-side collectives (gloo): the waits, matched across ranks, survive any split
check_set h200-ddp-gloo gloo 4
grep -q '"waits":{"source":"cpu_ranges","matched_by":"order","matched":16,' "$work/gloo/all.json" ||
    fail "gloo: the merged aggregate lost the waits"
echo "all splits agree"
