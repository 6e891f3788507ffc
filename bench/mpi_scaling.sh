#!/bin/sh
# mpi_scaling.sh BUILD_DIR [DATA_DIR] [LAYERS] [STEPS]
#
# tally-mpi with 1 and 2 processes (one thread each: --jobs 1) on 8 and 32 generated
# Kineto ranks (bench_gen_kineto_trace, --layers 8 --steps 8 by default: about 13 MB a
# rank), printed side by side with their ratio, measured in the same run so a busy
# machine shows in both. Each figure is the median wall time of 3 runs of
# `tally-mpi report` (HTML and JSON written), with the peak RSS of the largest process.
# Also printed: the per-core ingest rate (bytes read / time with 1 process) and the
# partial's size per rank, plain and zlib-compressed as tally-mpi sends it: the inputs
# of docs/cluster.md's model. Then 512 small ranks, -n 1 against -n 2 (see below). Not a
# test: run it on an idle machine and note `uptime`.
set -eu
build=$(cd "$1" && pwd)
data=${2:-$build/bench-data/mpi}
layers=${3:-8}
steps=${4:-8}
gen=$build/bench/bench_gen_kineto_trace
tally=$build/tools/tally
tmpi=$build/tools/mpi/tally-mpi
for b in "$gen" "$tally" "$tmpi"; do
    [ -x "$b" ] || { echo "$b: not built (cmake --build $build --target tally_cli tally_mpi bench_gen_kineto_trace)"; exit 1; }
done
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
root=
[ "$(id -u)" != 0 ] || root=--allow-run-as-root
export SOURCE_DATE_EPOCH=1700000000

set32=$data/ranks32-l$layers-s$steps
set8=$data/ranks8-l$layers-s$steps
if [ ! -f "$set32.done" ]; then
    rm -rf "$set32" "$set8"
    mkdir -p "$set32" "$set8"
    "$gen" --ranks 32 --dir "$set32" --layers "$layers" --steps "$steps" --seed 1 --quiet
    for r in 0 1 2 3 4 5 6 7; do cp "$set32/rank$r.pt.trace.json" "$set8/"; done
    touch "$set32.done"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# median of 3 runs of: wall seconds, the read phase (slowest process), max RSS (MB)
# measure N DIR
measure() {
    n=$1 dir=$2
    for i in 1 2 3; do
        start=$(date +%s.%N)
        mpirun $root --oversubscribe -n "$n" /usr/bin/time -f "rss %M" -a -o "$out/rss.$n" \
            "$tmpi" report -q --progress --jobs 1 "$dir" -o "$out/r.html" --json "$out/r.json" 2>"$out/err"
        end=$(date +%s.%N)
        read=$(sed -n 's/.* processes in \([0-9.]*\) s.*/\1/p' "$out/err")
        echo "$start $end $read" | awk '{ printf "%.3f %s\n", $2 - $1, $3 }'
    done | sort -n | sed -n 2p >"$out/t.$n"
    rss=$(awk '{ if ($2 > m) m = $2 } END { printf "%.0f", m / 1024 }' "$out/rss.$n")
    rm -f "$out/rss.$n"
    echo "$(cat "$out/t.$n") $rss"
}

startup() { # n: median wall seconds of mpirun -n N tally-mpi --version
    for i in 1 2 3; do
        start=$(date +%s.%N)
        mpirun $root --oversubscribe -n "$1" "$tmpi" --version >/dev/null
        end=$(date +%s.%N)
        echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }'
    done | sort -n | sed -n 2p
}

echo "tally-mpi scaling: $(nproc) cores; before: $(uptime | sed 's/.*load/load/')"
echo "mpirun start-up alone (tally-mpi --version): 1 process $(startup 1) s, 2 processes $(startup 2) s"
printf "%-6s %6s | %8s %8s %6s | %8s %8s %6s | %6s %6s\n" ranks MB "1p wall" "1p read" "RSS" "2p wall" "2p read" \
    "RSS" "wall" "read"
printf "%-6s %6s | %8s %8s %6s | %8s %8s %6s | %6s %6s\n" "" "" s s MB s s MB "1p/2p" "1p/2p"
for dir in "$set8" "$set32"; do
    ranks=$(ls "$dir" | grep -c 'trace.json$')
    mb=$(du -sm --apparent-size "$dir" | cut -f1)
    set -- $(measure 1 "$dir")
    w1=$1 rd1=$2 r1=$3
    set -- $(measure 2 "$dir")
    w2=$1 rd2=$2 r2=$3
    printf "%-6s %6s | %8s %8s %6s | %8s %8s %6s | %6s %6s\n" "$ranks" "$mb" "$w1" "$rd1" "$r1" "$w2" "$rd2" "$r2" \
        "$(echo "$w1 $w2" | awk '{ printf "%.2f", $1 / $2 }')" "$(echo "$rd1 $rd2" | awk '{ printf "%.2f", $1 / $2 }')"
    if [ "$ranks" = 32 ]; then
        rate=$(echo "$mb $rd1" | awk '{ printf "%.0f", $1 / $2 }')
        "$tally" aggregate -q --partial --jobs 1 "$dir" -o "$out/p.json"
        pbytes=$(wc -c <"$out/p.json")
        zbytes=$(gzip -1 -c "$out/p.json" | wc -c)
        echo "per-core read+analyze rate (1 process, read phase): $rate MB/s"
        echo "partial per rank: $((pbytes / ranks / 1024)) KiB as JSON, $((zbytes / ranks / 1024)) KiB compressed (what is sent)"
    fi
done

# 512 small ranks (issue 33's figure: -n 2 >= 1.6x one process): 512 generated ranks of ~1.2 MB
# (--layers 1 --steps 4, gzip), -n 1 and -n 2 alternating, REPS runs each (default 8), the
# medians and their ratio. Two settings: OpenMPI's defaults (each process bound to a core),
# and the same with OMPI_MCA_pml=ob1, the messaging layer OpenMPI runs on one machine anyway:
# it skips the probe of the Omni-Path libraries (PSM, PSM2) that Debian's OpenMPI makes in
# MPI_Init, ~0.2 s without that fabric, the same in both runs and none of tally's, which
# flattens the ratio.
set512=$data/ranks512-l1-s4
if [ ! -f "$set512.done" ]; then
    rm -rf "$set512"
    "$gen" --ranks 512 --dir "$set512" --layers 1 --steps 4 --gzip --seed 1 --quiet
    touch "$set512.done"
fi
alternate() { # label: medians of -n 1 and -n 2 wall seconds, alternating, and the ratio
    for i in $(seq "${REPS:-8}"); do
        for n in 1 2; do
            start=$(date +%s.%N)
            mpirun $root -n "$n" "$tmpi" report -q --jobs 1 "$set512" -o "$out/r.html" --json "$out/r.json"
            end=$(date +%s.%N)
            echo "$n $start $end" | awk '{ printf "%s %.3f\n", $1, $3 - $2 }'
        done
    done >"$out/alt"
    m1=$(awk '$1 == 1 { print $2 }' "$out/alt" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    m2=$(awk '$1 == 2 { print $2 }' "$out/alt" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    echo "$1: -n 1 $m1 s, -n 2 $m2 s: $(echo "$m1 $m2" | awk '{ printf "%.2fx", $1 / $2 }') (goal >= 1.6x)"
}
echo "512 ranks of $(du -sm --apparent-size "$set512" | cut -f1) MB (gzip), medians of ${REPS:-8} alternating runs:"
(
    unset OMPI_MCA_hwloc_base_binding_policy OMPI_MCA_rmaps_base_oversubscribe
    alternate "OpenMPI's defaults (bound to cores)"
    export OMPI_MCA_pml=ob1
    alternate "the same with OMPI_MCA_pml=ob1"
)
echo "after: $(uptime | sed 's/.*load/load/')"
