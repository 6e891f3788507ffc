#!/bin/sh
# launch.sh - run a program as N ranks on this machine, the way torchrun or
# mpirun would, so that libtally writes one report and one trace per rank.
#
# Each rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and
# MASTER_PORT (torchrun's variables, which libtally reads), TALLY_OUTPUT_DIR and
# TALLY_NAME; rank 0 alone prints libtally's console summary (TALLY_SUMMARY=1).
# The ranks run in parallel; each one's stdout and stderr go to
# OUTDIR/logs/rank<N>.log, and rank 0's log is printed when all have ended.
# The launcher fails (exit 1) if any rank fails, and shows the end of its log.
#
#   launch.sh -n NRANKS -o OUTDIR [--name NAME] [-q] [--] PROGRAM [ARGS...]
set -eu

usage() {
    cat <<'EOF'
usage: launch.sh -n NRANKS -o OUTDIR [--name NAME] [-q] [--] PROGRAM [ARGS...]
  -n, --nranks N     number of ranks to start (default 1)
  -o, --output DIR   output directory (TALLY_OUTPUT_DIR), created if missing
  --name NAME        output file prefix (TALLY_NAME; default: PROGRAM's name)
  -q, --quiet        do not print rank 0's log at the end
EOF
}

nranks=1
outdir=""
name=""
quiet=0
while [ $# -gt 0 ]; do
    case $1 in
    -n | --nranks) [ $# -ge 2 ] || { usage >&2; exit 2; }; nranks=$2; shift 2 ;;
    -o | --output) [ $# -ge 2 ] || { usage >&2; exit 2; }; outdir=$2; shift 2 ;;
    --name) [ $# -ge 2 ] || { usage >&2; exit 2; }; name=$2; shift 2 ;;
    -q | --quiet) quiet=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "launch.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
    esac
done
if [ $# -eq 0 ] || [ -z "$outdir" ]; then
    usage >&2
    exit 2
fi
case $nranks in
'' | *[!0-9]*) echo "launch.sh: -n: expected a positive integer, got '$nranks'" >&2; exit 2 ;;
esac
if [ "$nranks" -lt 1 ]; then
    echo "launch.sh: -n: expected a positive integer, got '$nranks'" >&2
    exit 2
fi
[ -n "$name" ] || name=$(basename "$1")

mkdir -p "$outdir/logs"
pids=""
cleanup() {
    for p in $pids; do
        kill "$p" 2>/dev/null || true
    done
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

rank=0
while [ "$rank" -lt "$nranks" ]; do
    summary=0
    [ "$rank" -ne 0 ] || summary=1
    RANK=$rank WORLD_SIZE=$nranks LOCAL_RANK=$rank LOCAL_WORLD_SIZE=$nranks \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29500} \
        TALLY_OUTPUT_DIR=$outdir TALLY_NAME=$name TALLY_SUMMARY=$summary \
        "$@" >"$outdir/logs/rank$rank.log" 2>&1 &
    pids="$pids $!"
    rank=$((rank + 1))
done

failed=0
rank=0
for p in $pids; do
    status=0
    wait "$p" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "launch.sh: rank $rank failed (exit status $status); the end of its log:" >&2
        tail -n 20 "$outdir/logs/rank$rank.log" >&2 || true
        failed=$((failed + 1))
    fi
    rank=$((rank + 1))
done
pids=""

if [ "$quiet" -eq 0 ]; then
    cat "$outdir/logs/rank0.log"
fi
if [ "$failed" -ne 0 ]; then
    echo "launch.sh: $failed of $nranks ranks failed" >&2
    exit 1
fi
