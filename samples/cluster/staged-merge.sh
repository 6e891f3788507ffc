#!/bin/sh
# staged-merge.sh LIST WORKDIR - merge the partials of LIST (one path a line) in
# a tree: groups of FANIN (default 64) merged into one partial each, FANIN at
# a time side by side (srun per group under Slurm when SRUN is set, else
# locally JOBS at a time), level after level until one remains; prints its path.
# Each merge holds only its group's sessions; the last one holds them all.
set -eu
list=$1 work=$2
TALLY=${TALLY:-tally}
FANIN=${FANIN:-64}
JOBS=${JOBS:-2}
mkdir -p "$work"
level=0
cp "$list" "$work/level0.txt"
while [ "$(grep -c '' "$work/level$level.txt")" -gt 1 ]; do
    next=$((level + 1))
    mkdir -p "$work/level$next"
    split -l "$FANIN" -d -a 6 "$work/level$level.txt" "$work/level$next/group-"
    ls "$work/level$next"/group-* | sort | xargs -P "$JOBS" -I{} sh -c '
        ${SRUN:-} "$0" merge -q --jobs 1 --inputs-from "$1" -o "$1.json"' "$TALLY" {}
    ls "$work/level$next"/group-*.json | sort >"$work/level$next.txt"
    level=$next
done
cat "$work/level$level.txt"
