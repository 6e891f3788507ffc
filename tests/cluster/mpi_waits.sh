#!/bin/sh
# mpi_waits.sh TALLY MPI_WAITS WORKDIR
#
# A real MPI program timed with libtally (mpi_waits.c), run under mpirun with 4 processes:
# with rank 2 sleeping 30 ms in "data_loading" every step (twice the recorded fixture's 15 ms:
# CI machines are loaded, and more ranks than cores share them), `tally summary` of the four ranks'
# reports and traces names rank 2 as the rank the others wait for in MPI_Allreduce, with
# data_loading as the cause; without it, the 12 collectives are matched (that nobody is named
# there is judged on a recorded run: tests/judgment, mpi-libtally-balanced).
# The figures a user reads are checked from the aggregate JSON.
set -eu
tally=$1
prog=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
export OMPI_MCA_btl_base_warn_component_unused=0
unset TALLY_ENABLE TALLY_TRACE TALLY_MAX_EVENTS TALLY_NAME TALLY_SCHEDULE
root=
[ "$(id -u)" != 0 ] || root=--allow-run-as-root

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

run() { # dir, slow rank, slow ms
    mkdir -p "$work/$1"
    TALLY_OUTPUT_DIR="$work/$1" mpirun $root -n 4 "$prog" 12 "$2" "$3" || fail "mpirun $1"
    [ "$(ls "$work/$1" | grep -c '\.report\.json$')" = 4 ] || fail "$1: not 4 reports"
    [ "$(ls "$work/$1" | grep -c '\.trace\.json\.gz$')" = 4 ] || fail "$1: not 4 traces"
    "$tally" aggregate -q "$work/$1" -o "$work/$1.json" || fail "tally aggregate $1"
    "$tally" summary "$work/$1" >"$work/$1.txt" 2>&1 || fail "tally summary $1"
}

run slow 2 30
run balanced -1 0

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def load(name):
    with open(f"{work}/{name}.json") as f:
        return json.load(f)
slow, bal = load("slow"), load("balanced")
w = slow["waits"]
assert w["matched"] == 12, w["matched"]
names = [(s["rank"], s["kind"]) for s in slow["stragglers"]]
assert names == [(2, "last_arrival")], names
s = slow["stragglers"][0]
# last to most of them, as the rule asks (two thirds): a loaded machine may hold another rank
# back now and then (11 of 12 seen in CI, 9 of 12 beside a ctest -j2 with 15 ms)
assert s["compared"] == 12 and s["slower"] >= 8, s
assert s["evidence"]["names"][0]["name"] == "data_loading", s["evidence"]
# the others wait about the 30 ms rank 2 sleeps, every step (15-80 ms: a loaded machine)
waited = [r for r in w["ranks"] if r["rank"] != 2]
assert all(15e3 < r["waited_us"] / 12 < 80e3 for r in waited), waited
assert bal["waits"]["matched"] == 12, bal["waits"]["matched"]
# Whether nobody is named in a balanced run is judged on the recorded one (judgment case
# mpi-libtally-balanced): live, on a loaded machine with more ranks than cores, the scheduler
# can hold one rank back for real.
print("ok: rank 2 named (last to %d of 12), the others wait" % s["slower"],
      ", ".join("%.1f ms" % (r["waited_us"] / 12 / 1e3) for r in waited), "a step; balanced: 12 matched,",
      "named:", [x["rank"] for x in bal["stragglers"]])
PY
grep -q "Rank 2 holds the others back" "$work/slow.txt" || fail "summary does not name rank 2"
echo "mpi_waits: ok"
