#!/bin/sh
# mpi.sh TALLY TALLY_MPI GENERATOR CORPUS WORKDIR
#
# tally-mpi under mpirun with 1, 2 and 3 processes writes the bytes tally writes in one
# process: the HTML report, its JSON and Markdown, `summary` stdout and the partial
# aggregate, over
#   - the corpus' 8-rank DLRM set and HTA's 2-rank set (3 processes, 2 inputs: more
#     processes than inputs), and one file alone under 3 processes;
#   - a generated 6-rank Kineto set (bench_gen_kineto_trace) with a truncated trace, a
#     NUL-filled rank file, a README and a missing path added: the bad inputs land on
#     some process and are reported like any bad input, with tally's warnings and exit
#     code (0, and 1 with --strict);
#   - 40 generated ranks under 2 and 4 processes (sessions sent in pieces, passed on);
#   - no usable input: exit 3 from mpirun, as from tally.
# OpenMPI is told to stay on this machine (shared memory, no network probing) and to
# allow more processes than cores; --allow-run-as-root only when running as root.
set -eu
tally=$1
tmpi=$2
gen=$3
corpus=$(cd "$4" && pwd)
work=$5
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
export SOURCE_DATE_EPOCH=1700000000
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_orte_base_help_aggregate=0
root=
[ "$(id -u)" != 0 ] || root=--allow-run-as-root

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

run_mpi() { # n, args...
    n=$1
    shift
    timeout 120 mpirun $root --oversubscribe -n "$n" "$tmpi" "$@"
}

# check LABEL DIR INPUTS...: every output of tally-mpi -n 1, 2, 3 (or $NPROCS) equals tally's.
check() {
    label=$1
    dir=$2
    shift 2
    cd "$dir"
    out=$work/$label
    mkdir -p "$out"
    set +e
    "$tally" report "$@" -o "$out/t.html" --json "$out/t.json" --markdown "$out/t.md" 2>"$out/t.err"
    trc=$?
    "$tally" summary "$@" >"$out/t.summary" 2>/dev/null
    "$tally" aggregate -q --partial "$@" -o "$out/t.partial.json"
    set -e
    for n in ${NPROCS:-1 2 3}; do
        set +e
        run_mpi "$n" report "$@" -o "$out/m$n.html" --json "$out/m$n.json" --markdown "$out/m$n.md" 2>"$out/m$n.err"
        mrc=$?
        set -e
        [ "$mrc" -eq "$trc" ] || { cat "$out/m$n.err" >&2; fail "$label: -n $n: exit $mrc, tally exits $trc"; }
        for f in html json md; do
            cmp "$out/t.$f" "$out/m$n.$f" || fail "$label: -n $n: the $f output differs from tally's"
        done
        # the same warnings, each once (process 0 prints them; order may differ)
        sort "$out/t.err" >"$out/t.err.sorted"
        # (notes -- files skipped as not profiles, inputs read once -- are not
        # warnings; tally-mpi does not gather them from its processes yet)
        grep -v -e '^tally: wrote' -e '^tally: note: ' "$out/m$n.err" | sort >"$out/m$n.err.sorted"
        grep -v -e '^tally: wrote' -e '^tally: note: ' "$out/t.err.sorted" >"$out/t.err.cmp" || true
        cmp "$out/t.err.cmp" "$out/m$n.err.sorted" || fail "$label: -n $n: warnings differ from tally's"
        run_mpi "$n" summary "$@" >"$out/m$n.summary" 2>/dev/null || true
        cmp "$out/t.summary" "$out/m$n.summary" || fail "$label: -n $n: summary differs from tally's"
        run_mpi "$n" aggregate -q --partial "$@" -o "$out/m$n.partial.json" || true
        cmp "$out/t.partial.json" "$out/m$n.partial.json" || fail "$label: -n $n: the partial differs from tally's"
        echo "ok: $label: -n $n"
    done
}

check dlrm "$corpus/param-dlrm_kineto-8rank" .
check hta2 "$corpus/hta/trace_filter" .
one=$(ls "$corpus/param-dlrm_kineto-8rank" | grep json | head -n 1)
check one "$corpus/param-dlrm_kineto-8rank" "$one"
# every analysis option reaches tally-mpi's readers too (it read without
# --max-names and the other read bounds before they were analysis options)
check opts "$corpus/param-dlrm_kineto-8rank" --max-names 20 --max-events 20000 --kernel-class '*ncclKernel*=compute' "$one"
grep -q '"max_names":20,"max_events":20000' "$work/opts/m3.partial.json" || fail "tally-mpi's partial lost the read bounds"

# A generated 6-rank set with bad inputs among the good ones.
gset=$work/genset
mkdir -p "$gset"
"$gen" --ranks 6 --dir "$gset" --steps 4 --layers 1 --seed 7 --quiet
head -c 200000 "$gset/rank2.pt.trace.json" >"$gset/rank6.pt.trace.json"   # truncated
head -c 4096 /dev/zero >"$gset/rank7.pt.trace.json"                         # a crashed rank's file
echo "notes" >"$gset/README.md"
"$tally" aggregate -q "$corpus/hta/trace_filter" -o "$gset/aggregate.json" # found by the walk: not read
check gen "$gset" . missing-rank.json
grep -q 'rank6.pt.trace.json' "$work/gen/m3.err" || fail "the truncated trace is not reported by tally-mpi"
grep -q 'missing-rank.json' "$work/gen/m3.err" || fail "the missing input is not reported by tally-mpi"
grep -q '"truncated":true' "$work/gen/m3.json" || fail "the truncated trace is not marked in the aggregate"
grep -q 'aggregate.json: a tally aggregate found in a directory: not read' "$work/gen/m3.err" ||
    fail "an aggregate found by the walk is read, or not said"

# 40 ranks under 2 and 4 processes: each process sends its sessions in pieces of 16
# (mpi_analyze.c, TL_MPI_WIRE_SESSIONS), more than one piece a process, and under 4 process
# 2 passes process 3's pieces on to process 0 (the tree's inner step).
many=$work/manyset
mkdir -p "$many"
"$gen" --ranks 40 --dir "$many" --steps 2 --layers 1 --seed 3 --quiet
NPROCS="2 4" check many "$many" .

# Bound to a CPU each (as mpirun binds to a core by default; unlike the rest of this test),
# process 0 takes the CPUs of the job's processes on its node once they are done
# (mpi_analyze.c, take_node_cores) and writes the outputs on them: the same bytes, and
# --progress says so. Bound by hardware thread, so that a core of two threads is two CPUs.
bind="OMPI_MCA_hwloc_base_binding_policy=hwthread OMPI_MCA_hwloc_base_use_hwthreads_as_cpus=1"
bind="$bind OMPI_MCA_rmaps_base_oversubscribe=0"
if [ "$(nproc)" -ge 2 ] && env $bind timeout 60 mpirun $root -n 2 true >/dev/null 2>&1; then
    cd "$many"
    env $bind timeout 120 mpirun $root -n 2 "$tmpi" report --progress . -o "$work/many/bound.html" \
        --json "$work/many/bound.json" --markdown "$work/many/bound.md" 2>"$work/many/bound.err" ||
        { cat "$work/many/bound.err" >&2; fail "bound to cores: tally-mpi failed"; }
    for f in html json md; do
        cmp "$work/many/t.$f" "$work/many/bound.$f" || fail "bound to cores: the $f output differs from tally's"
    done
    grep -q 'process 0 was bound to 1 of the 2 CPUs the job.s processes on its node were bound to, and takes them all' \
        "$work/many/bound.err" || { cat "$work/many/bound.err" >&2; fail "bound to cores: process 0 did not take the other core"; }
    echo "ok: bound to a CPU each, process 0 takes the node's"
else
    echo "skip: bound to a CPU each (mpirun cannot bind two processes here)"
fi

# --strict: warnings fail the run, with tally's code.
cd "$gset"
set +e
"$tally" report -q --strict . -o "$work/strict.t.html"
trc=$?
run_mpi 3 report -q --strict . -o "$work/strict.m.html"
mrc=$?
set -e
[ "$trc" -eq 1 ] && [ "$mrc" -eq 1 ] || fail "--strict: tally exits $trc, tally-mpi $mrc (expected 1)"
echo "ok: --strict exit code"

# No usable input: exit 3, from every process.
mkdir -p "$work/empty"
echo "nothing here" >"$work/empty/notes.txt"
set +e
run_mpi 2 report "$work/empty" -o "$work/empty.html" 2>"$work/empty.err"
mrc=$?
set -e
[ "$mrc" -eq 3 ] || fail "no usable input: tally-mpi exits $mrc, expected 3"
[ "$(grep -c 'no usable input' "$work/empty.err")" -eq 1 ] || fail "no usable input: not said exactly once"
[ ! -e "$work/empty.html" ] || fail "no usable input: a report was written"
echo "ok: no usable input"

# A usage error is printed once, not once per process.
set +e
run_mpi 3 report --no-such-option . 2>"$work/usage.err"
mrc=$?
set -e
[ "$mrc" -eq 2 ] || fail "usage error: exit $mrc, expected 2"
[ "$(grep -c 'unknown option' "$work/usage.err")" -eq 1 ] || fail "usage error: not printed exactly once"
echo "ok: usage error"
# --help prints once, on process 0 (and must not hang the others); compare is tally's.
run_mpi 2 report --help >"$work/help.out" 2>&1 || fail "tally-mpi report --help failed"
[ "$(grep -c '^usage: tally report' "$work/help.out")" -eq 1 ] || fail "--help not printed exactly once"
set +e
run_mpi 2 compare a b 2>"$work/compare.err"
mrc=$?
set -e
[ "$mrc" -eq 2 ] && grep -q 'tally compare' "$work/compare.err" || fail "tally-mpi compare: exit $mrc, not pointed to tally compare"
echo "ok: --help, compare"

# A process that stops answering (SIGSTOP after its read, under a test-only
# variable) ends the job after --timeout with a message naming it; the others
# wait without spinning (CPU time well below the wall time).
cd "$gset"
set +e
start=$(date +%s)
TALLY_MPI_TEST_STOP_PROCESS=2 timeout 60 mpirun $root --oversubscribe -n 3 -x TALLY_MPI_TEST_STOP_PROCESS \
    /usr/bin/time -f 'cpu %U %S wall %e' "$tmpi" report -q --timeout 4 . -o "$work/stopped.html" 2>"$work/stopped.err"
mrc=$?
set -e
took=$(( $(date +%s) - start ))
[ "$mrc" -ne 0 ] && [ "$mrc" -ne 124 ] || { cat "$work/stopped.err" >&2; fail "stopped process: exit $mrc (124: the job hung)"; }
[ "$took" -lt 40 ] || fail "stopped process: the job ended after $took s, --timeout was 4"
grep -q 'tally-mpi: process 0: process 2 sent nothing for 4 s while this one waited for its message (--timeout 4): it stopped answering; ending the job' \
    "$work/stopped.err" || { cat "$work/stopped.err" >&2; fail "stopped process: not named"; }
[ ! -e "$work/stopped.html" ] || fail "stopped process: a report was written"
grep -q 'process 1: process 0 sent nothing' "$work/stopped.err" && fail "stopped process: process 0 blamed"
awk '/^cpu / { if ($2 + $3 > 0.5 * $5) bad = 1; n++ } END { exit !(n > 0 && !bad) }' "$work/stopped.err" ||
    fail "stopped process: the waiting processes spun ($(grep '^cpu ' "$work/stopped.err"))"
# a bad --timeout is a usage error
set +e
run_mpi 2 report --timeout=0 . 2>"$work/timeout.err"
mrc=$?
set -e
[ "$mrc" -eq 2 ] && grep -q -- '--timeout (or TALLY_MPI_TIMEOUT) takes seconds' "$work/timeout.err" ||
    fail "--timeout=0: exit $mrc, not a usage error"
echo "ok: a stopped process is named after --timeout"
echo "tally-mpi agrees with tally"
