#!/bin/sh
# spill.sh TALLY TALLY_MPI_OR_EMPTY GEN CORPUS FIXTURES WORKDIR
#
# Sessions whose details wait in a temporary file (tools/analyze/spill.h) give the bytes of a
# run that holds every session whole: the limit (TALLY_SPILL_AFTER) changes where the details
# are, never a number. Over 300 generated ranks (one of them a slow data loader: a straggler
# to find, ranks to pick) and real folders (FramePack's report, trace and memory log, which
# lend each other parts; libtally's reports and traces of an MPI job and of a DDP job, whose
# traces lend their reports collectives and timelines; a real 4-rank DDP job and PARAM's 8
# DLRM ranks), with
# every session whole (a limit above the count), past a count (256), past a budget of 8 MiB of
# details (the default is 512 MiB) and with every session spilled (0), byte for byte:
#   - tally report: HTML, JSON (the picked ranks in full past 256 ranks), Markdown, the
#     merged Chrome trace; and --json-all (every session in full);
#   - tally summary: stdout;
#   - tally aggregate --partial of two halves, then tally merge (spilled at the merge);
#   - tally-mpi -n 2 (when built and mpirun is there): process 0 spills what it receives;
#   - --progress says how many sessions wait on disk, and nothing when none does;
#   - with no place for the file ($TMPDIR missing), one message, the same outputs.
set -eu
tally=$1
mpi=$2
gen=$3
corpus=$(cd "$4" && pwd)
fixtures=$(cd "$5" && pwd)
work=$6
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
export SOURCE_DATE_EPOCH=1700000000
export TMPDIR="$work/tmp" # the file is made here, unlinked at once: nothing stays
mkdir -p "$TMPDIR"

root=
[ "$(id -u)" != 0 ] || root=--allow-run-as-root

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

"$gen" --ranks 300 --dir "$work/ranks" --layers 1 --steps 3 --gzip --quiet --data-rank 7 --data-ms 20

# run LIMIT LABEL: every output of every command into $work/LABEL
run() {
    limit=$1
    out="$work/$2"
    mkdir -p "$out"
    export TALLY_SPILL_AFTER=$limit
    "$tally" report -q --jobs 2 "$work/ranks" -o "$out/r.html" --json "$out/r.json" --markdown "$out/r.md" \
        --trace "$out/r.trace.json"
    "$tally" report -q --jobs 2 "$work/ranks" --json "$out/all.json" --json-all
    "$tally" summary --jobs 2 "$work/ranks" >"$out/summary.txt" 2>"$out/summary.err" || true
    ls "$work/ranks"/*.gz | sort >"$out/list"
    head -n 150 "$out/list" >"$out/first"
    tail -n +151 "$out/list" >"$out/second"
    "$tally" aggregate -q --partial @"$out/first" -o "$out/p1.json"
    "$tally" aggregate -q --partial @"$out/second" -o "$out/p2.json"
    "$tally" merge -q "$out/p1.json" "$out/p2.json" -o "$out/merged.json"
    for d in "$fixtures/framepack-profiling_results" "$fixtures/mpi-libtally/slow-rank2" \
        "$fixtures/ddp-cpu-tally/slow-rank3" "$corpus/h200-ddp-gloo" "$corpus/param-dlrm_kineto-8rank"; do
        [ -d "$d" ] || fail "$d: not there"
        name=$(basename "$d")
        "$tally" report -q "$d" -o "$out/$name.html" --json "$out/$name.json"
    done
    if [ -n "$mpi" ] && command -v mpirun >/dev/null 2>&1; then
        # OpenMPI's own allocations are not ours to leak-check under ASan
        ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun $root --oversubscribe -n 2 -x TALLY_SPILL_AFTER -x TMPDIR "$mpi" report -q --jobs 1 \
            "$work/ranks" -o "$out/mpi.html" --json "$out/mpi.json"
    fi
    unset TALLY_SPILL_AFTER
}

run 1000000 whole
run 256 count
run 8M bytes
run 0 all

for label in count bytes all; do
    for f in $(cd "$work/whole" && ls); do
        case $f in list | first | second | summary.err | p1.json | p2.json) continue ;; esac
        cmp "$work/whole/$f" "$work/$label/$f" || fail "$f differs with TALLY_SPILL_AFTER of '$label'"
    done
    echo "ok: every output the same with the limit '$label'"
done
# the picked ranks in full past 256 ranks, every rank with --json-all: both paths exercised
grep -q '"ranks_in_full":32' "$work/whole/r.json" || fail "the JSON does not pick ranks past 256"
grep -q '"straggler":true' "$work/whole/r.json" || fail "no straggler named: the picks are not exercised"
[ -s "$work/whole/mpi.json" ] && { cmp "$work/whole/r.json" "$work/whole/mpi.json" ||
    fail "tally-mpi differs from tally"; }

# --progress: how many wait on disk, and nothing when none does
TALLY_SPILL_AFTER=256 "$tally" summary --progress --jobs 2 "$work/ranks" >/dev/null 2>"$work/progress.err" || true
grep -q "^tally: 44 sessions keep their details in a temporary file until read (.*; the first 256 sessions stay whole in memory: TALLY_SPILL_AFTER)" \
    "$work/progress.err" || fail "--progress does not say that 44 sessions wait on disk: $(cat "$work/progress.err")"
TALLY_SPILL_AFTER=1000 "$tally" summary --progress --jobs 2 "$work/ranks" >/dev/null 2>"$work/progress.err" || true
! grep -q "temporary file" "$work/progress.err" || fail "--progress speaks of a temporary file none was made"
# by default a budget of 512 MiB of details: these 300 ranks (tens of MB) all stay whole
"$tally" summary --progress --jobs 2 "$work/ranks" >/dev/null 2>"$work/progress.err" || true
! grep -q "temporary file" "$work/progress.err" || fail "the default budget spilled 300 small ranks"
# a budget of 4 MiB: the first ranks stay whole, the rest wait on disk (a count between 1 and 299)
TALLY_SPILL_AFTER=4M "$tally" summary --progress --jobs 1 "$work/ranks" >/dev/null 2>"$work/progress.err" || true
grep -Eq "^tally: ([2-9][0-9]|[12][0-9][0-9]) sessions keep their details in a temporary file until read \(.*; the first 4 MiB of details stay in memory: TALLY_SPILL_AFTER\)" \
    "$work/progress.err" || fail "--progress with a 4 MiB budget: $(cat "$work/progress.err")"
# not a count nor a size: said, the default used (a trailing space once read as a TiB unit)
for bad in 4X "512 " 1.5G; do
    TALLY_SPILL_AFTER="$bad" "$tally" summary --jobs 2 "$work/ranks" >/dev/null 2>"$work/progress.err" || true
    grep -q "^tally: TALLY_SPILL_AFTER='$bad' is neither a count of sessions nor a size (512M, 2G); 512 MiB is used" \
        "$work/progress.err" || fail "a bad TALLY_SPILL_AFTER ('$bad') is not said: $(cat "$work/progress.err")"
done
# a budget under 1 MiB is said in KiB
TALLY_SPILL_AFTER=100K "$tally" summary --progress --jobs 2 "$work/ranks" >/dev/null 2>"$work/progress.err" || true
grep -q "the first 100 KiB of details stay in memory: TALLY_SPILL_AFTER)" "$work/progress.err" ||
    fail "--progress with a 100 KiB budget: $(cat "$work/progress.err")"
[ -z "$(ls -A "$TMPDIR")" ] || fail "a temporary file was left behind: $(ls -A "$TMPDIR")"

# a partial whose sessions say no GPU window but carry kernels, and whose matrix products
# launched none (a hand-made or edited partial): whether operators ran beside kernels (which
# time the shapes table's TFLOPS divide by) is read before the kernels go to disk
sed -E -e 's/"gpu":\{"present":1/"gpu":{"present":0/g' \
    -e 's/("aten::(mm|addmm)","[^"]*","[^"]*",[0-9]+,[0-9]+,[0-9]+,[0-9]+,[^,]*,[0-9]+,[0-9]+),[0-9]+\]/\1,0]/g' \
    "$work/whole/p1.json" >"$work/nowindow.json"
grep -q '"aten::mm","[^"]*","[^"]*",[0-9,.e+null-]*,0\]' "$work/nowindow.json" || fail "the edit of the partial did not apply"
for limit in 1000000 0; do
    TALLY_SPILL_AFTER=$limit "$tally" report -q "$work/nowindow.json" --json "$work/nowindow-$limit.json"
done
cmp "$work/nowindow-1000000.json" "$work/nowindow-0.json" || fail "a partial without GPU windows: the JSON differs"

# no place for the file: said once, every session kept in memory, the same outputs
TMPDIR="$work/missing" TALLY_SPILL_AFTER=0 "$tally" report -q --jobs 2 "$work/ranks" -o "$work/nodir.html" \
    --json "$work/nodir.json" 2>"$work/nodir.err"
grep -q "^tally: cannot make a temporary file in $work/missing (No such file or directory): every session is kept in memory" \
    "$work/nodir.err" || fail "no temporary directory: not said: $(cat "$work/nodir.err")"
[ "$(grep -c 'temporary file' "$work/nodir.err")" = 1 ] || fail "no temporary directory: said more than once"
cmp "$work/whole/r.json" "$work/nodir.json" || fail "no temporary directory: the JSON differs"
echo "ok: spill"
