#!/bin/sh
# run-ingest.sh - make the ingest benchmark's data in DIR, then run bench_ingest on it.
#
#   bench/run-ingest.sh DIR [BUILD] [-- bench_ingest options...]
#
# DIR    where the generated traces go (about 3 GB for the defaults); reused when present.
# BUILD  a build directory (default: build-bench next to the sources). When it has no
#        bench_ingest yet it is configured as a Release build and the two programs built.
# The table is printed and also saved as DIR/ingest-<date>.txt. Run it on an idle machine:
# the benchmark warns when the load average says other work shared the CPUs.
set -eu

usage() {
  echo "usage: $0 DIR [BUILD] [-- bench_ingest options...]" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case $1 in -h|--help) usage ;; esac
data=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-bench
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
  build=$1
  shift
fi
if [ $# -ge 1 ] && [ "$1" = "--" ]; then
  shift
fi

if [ ! -x "$build/bench/bench_ingest" ] || [ ! -x "$build/bench/bench_gen_kineto_trace" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTALLY_BUILD_TESTS=OFF
fi
# Always bring the programs up to date with the sources (a no-op when they are).
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target bench_gen_kineto_trace bench_ingest

mkdir -p "$data"
echo "== generating (skipped for data already in $data)"
"$build/bench/bench_ingest" --data-dir "$data" --generate-only "$@"

out=$data/ingest-$(date +%Y%m%d-%H%M%S).txt
echo "== measuring (results also in $out)"
status=0
# The load beside the figures: the machine may be shared (the table's CPU s column and the
# callgrind counts in bench/README.md are what stays comparable then).
{ echo "uptime before: $(uptime)"; "$build/bench/bench_ingest" --data-dir "$data" "$@" || status=$?;
  echo "uptime after: $(uptime)"; } >"$out"
cat "$out"
exit $status
