#!/bin/sh
# inputs-list.sh - the ctest "cli_input_lists": an input list (@FILE, --inputs-from FILE) reads
# the same as the paths on the command line, on every kind of command:
#   merge of 8 partials through a list = merge of the 8 on the command line (byte for byte);
#   aggregate of the partials through a list on stdin = through the command line;
#   compare of two lists = compare of the two directories;
#   a list's own path is an input: no output may replace it;
#   500 partials of distinct ranks merge through one list.
# usage: inputs-list.sh TALLY_BINARY SOURCE_DIR [TALLY_MPI_BINARY]
set -u
tally=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tally-lists.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1" >&2; fails=$((fails + 1)); }
export SOURCE_DATE_EPOCH=1700000000

# 8 partials, one per rank trace
i=0
for t in "$src"/samples/traces/dlrm-8rank/*.pt.trace.json*; do
    "$tally" aggregate -q --partial "$t" -o "$tmp/part$i.json" || bad "aggregate --partial $t"
    i=$((i + 1))
done
[ $i = 8 ] || bad "expected 8 rank traces in samples/traces/dlrm-8rank, found $i"
{
    echo "# the partials of samples/traces/dlrm-8rank"
    for k in 0 1 2 3 4 5 6 7; do echo "$tmp/part$k.json"; echo; done
} >"$tmp/parts.txt"

"$tally" merge "$tmp"/part0.json "$tmp"/part1.json "$tmp"/part2.json "$tmp"/part3.json \
    "$tmp"/part4.json "$tmp"/part5.json "$tmp"/part6.json "$tmp"/part7.json -o "$tmp/args.json"
"$tally" merge @"$tmp/parts.txt" -o "$tmp/list.json"
if cmp -s "$tmp/args.json" "$tmp/list.json"; then
    ok "merge @LIST = merge of the paths"
else
    bad "merge @LIST differs from merge of the same paths"
fi

"$tally" aggregate -q "$tmp"/part*.json -o "$tmp/agg-args.json"
"$tally" aggregate -q --inputs-from - -o "$tmp/agg-list.json" <"$tmp/parts.txt"
if cmp -s "$tmp/agg-args.json" "$tmp/agg-list.json"; then
    ok "aggregate --inputs-from - = aggregate of the paths"
else
    bad "aggregate --inputs-from - differs"
fi

b=$src/samples/reports/pipeline-baseline c=$src/samples/reports/pipeline-optimized
ls "$b"/*.json >"$tmp/b.txt"
ls "$c"/*.json >"$tmp/c.txt"
"$tally" compare -q "$b" "$c" --json "$tmp/cmp-dirs.json" >/dev/null 2>&1
"$tally" compare -q @"$tmp/b.txt" @"$tmp/c.txt" --json "$tmp/cmp-lists.json" >/dev/null 2>&1
# the inputs' paths differ (directory vs files): compare without them
strip() { grep -v '"path"\|"input"\|"inputs"\|"generated' "$1"; }
if [ -s "$tmp/cmp-lists.json" ] && [ "$(strip "$tmp/cmp-dirs.json")" = "$(strip "$tmp/cmp-lists.json")" ]; then
    ok "compare @BASE @CAND = compare of the directories"
else
    bad "compare of two lists differs from compare of the directories"
fi

# the list is an input: writing over it is refused
cp "$tmp/parts.txt" "$tmp/keep.txt"
"$tally" merge @"$tmp/parts.txt" -o "$tmp/parts.txt" 2>"$tmp/err"
rc=$?
if [ $rc = 4 ] && cmp -s "$tmp/parts.txt" "$tmp/keep.txt"; then
    ok "the list itself is not overwritten (exit 4)"
else
    bad "output over the input list: rc $rc, $(cat "$tmp/err")"
fi

# 500 tiny partials of distinct ranks (one report's partial with its rank rewritten) merge
# through one list with no warning: every rank of the world size is there
"$tally" aggregate -q --partial "$b"/pipeline-rank0.*.report.json -o "$tmp/tiny.json"
mkdir "$tmp/many"
k=0
while [ $k -lt 500 ]; do
    sed "s/\"rank\":0,\"world_size\":2,/\"rank\":$k,\"world_size\":500,/" "$tmp/tiny.json" >"$tmp/many/p$k.json"
    echo "$tmp/many/p$k.json"
    k=$((k + 1))
done >"$tmp/many.txt"
"$tally" merge @"$tmp/many.txt" -o "$tmp/many.json" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && [ -s "$tmp/many.json" ] && [ ! -s "$tmp/err" ] &&
   [ "$(grep -o '"rank":499,' "$tmp/many.json" | head -1)" = '"rank":499,' ]; then
    ok "500 partials of 500 ranks through one list"
else
    bad "500 partials through a list: rc $rc: $(head -3 "$tmp/err")"
fi

# tally-mpi (third argument, with mpirun): a list file is read by every process; a list on
# standard input, which only one process has, is refused by all (it would leave the others waiting)
mpi=${3:-}
if [ -n "$mpi" ] && [ -x "$mpi" ] && command -v mpirun >/dev/null 2>&1; then
    export OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    timeout 120 mpirun -n 2 --oversubscribe "$mpi" aggregate -q @"$tmp/parts.txt" -o "$tmp/mpi.json" >"$tmp/mpi.out" 2>&1
    rc=$?
    if [ $rc = 0 ] && cmp -s "$tmp/mpi.json" "$tmp/agg-args.json"; then
        ok "tally-mpi aggregate @LIST = tally aggregate of the paths"
    else
        bad "tally-mpi aggregate @LIST: rc $rc: $(head -3 "$tmp/mpi.out")"
    fi
    timeout 120 mpirun -n 2 --oversubscribe "$mpi" aggregate -q --inputs-from - -o "$tmp/mpi2.json" \
        <"$tmp/parts.txt" >"$tmp/mpi.out" 2>&1
    rc=$?
    if [ $rc = 2 ] && grep -q "cannot be shared between processes" "$tmp/mpi.out"; then
        ok "tally-mpi --inputs-from -: refused (exit 2)"
    else
        bad "tally-mpi --inputs-from -: rc $rc: $(head -3 "$tmp/mpi.out")"
    fi
else
    echo "skipped: tally-mpi with an input list (no tally-mpi or mpirun)"
fi

if [ $fails != 0 ]; then
    echo "$fails failed" >&2
    exit 1
fi
echo "all input-list checks passed"
