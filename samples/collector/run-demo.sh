#!/bin/sh
# run-demo.sh - what `make demo` runs once the build is done: the sample
# pipeline as 4 ranks, rank 3 a straggler (1.5x slower), once per variant:
#
#   BUILD_DIR/demo/baseline/    the baseline variant
#   BUILD_DIR/demo/optimized/   the optimized variant (faster attention, slower decode)
#   BUILD_DIR/demo/python/      samples/python/pipeline.py, the same pipeline through the
#                               tally Python module (when it is built; skipped otherwise)
#
# It prints rank 0's console summary of each run, then the files written, and
# ends by rendering HTML reports with `tally report`:
#
#   BUILD_DIR/demo/report.html            the baseline run
#   BUILD_DIR/demo/report-optimized.html  the optimized run
#   BUILD_DIR/demo/report-dlrm.html       samples/traces/dlrm-8rank (a real 8-rank trace set)
#   BUILD_DIR/demo/report-python.html     the Python sample's run
# Usage: run-demo.sh BUILD_DIR   (from any directory)
set -eu

if [ $# -ne 1 ]; then
    echo "usage: run-demo.sh BUILD_DIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if ! build=$(cd "$1" 2>/dev/null && pwd); then
    echo "run-demo.sh: $1: no such build directory (run 'make build' first)" >&2
    exit 1
fi
prog=$build/samples/collector/tally_sample_pipeline
if [ ! -x "$prog" ]; then
    echo "run-demo.sh: $prog: not built (cmake --build $1 --target tally_sample_pipeline)" >&2
    exit 1
fi

for variant in baseline optimized; do
    out=$build/demo/$variant
    # Only the demo's own directories are cleared, so that ranks of an earlier
    # run cannot be mistaken for this one's.
    rm -rf "$out"
    echo "== $variant: 4 ranks, rank 3 slower by 1.5x, into $out"
    sh "$here/launch.sh" -n 4 -o "$out" --name pipeline -- \
        "$prog" --variant "$variant" --steps 10 --slow-rank 3 --slow-factor 1.5 --seed 1
    echo
done

# The same pipeline in Python (samples/python/pipeline.py, the tally module), when the module
# is built: CMake builds it into BUILD_DIR/python when Python's headers (python3-dev) are found.
pydir=$build/python
py_out=$build/demo/python
rm -rf "$py_out"
if ls "$pydir"/tally/_tally*.so >/dev/null 2>&1; then
    python=$(cat "$pydir/interpreter.txt" 2>/dev/null || command -v python3)
    echo "== python: samples/python/pipeline.py, 4 ranks, rank 3 slower by 1.5x, into $py_out"
    PYTHONPATH=$pydir${PYTHONPATH:+:$PYTHONPATH} sh "$here/launch.sh" -n 4 -o "$py_out" \
        --name pipeline-py -q -- "$python" "$here/../python/pipeline.py" --variant baseline \
        --steps 10 --slow-rank 3 --slow-factor 1.5 --seed 1
    cat "$py_out"/logs/rank*.log | grep '^rank ' || true
    echo
else
    echo "== python: skipped: the tally module is not built in $pydir (install python3-dev and" \
        "build again to run samples/python/pipeline.py)"
    echo
fi

tally=$build/tools/tally
if [ -x "$tally" ]; then
    echo "== tally summary of the baseline run (rank 3 was made 1.5x slower)"
    "$tally" summary --quiet "$build/demo/baseline"
    echo
fi

echo "== outputs (bytes)"
find "$build/demo" -type f ! -name '*.html' | sort | while IFS= read -r f; do
    printf '%10s  %s\n' "$(wc -c <"$f" | tr -d ' ')" "$f"
done
echo
echo "Each rank wrote {name}-rank{N}.{pid}-{time}.report.json (statistics) and the .trace.json.gz of the same stem"
echo "(a Chrome trace: open it in https://ui.perfetto.dev or chrome://tracing);"
echo "logs/rank{N}.log holds each rank's console output."

if [ ! -x "$tally" ]; then
    echo "run-demo.sh: $tally: not built, so no HTML report (cmake --build $1 --target tally_cli)" >&2
    exit 1
fi
echo
echo "== HTML reports (one self-contained file each: open it in a browser)"
# Each rank's trace is read as the companion of its report (same rank, same run).
"$tally" report --quiet "$build/demo/baseline" -o "$build/demo/report.html" \
    --title "tally demo: baseline, 4 ranks (rank 3 made 1.5x slower)"
"$tally" report --quiet "$build/demo/optimized" -o "$build/demo/report-optimized.html" \
    --title "tally demo: optimized, 4 ranks (rank 3 made 1.5x slower)"
"$tally" report --quiet "$here/../traces/dlrm-8rank" -o "$build/demo/report-dlrm.html" \
    --title "DLRM, 8 ranks (samples/traces/dlrm-8rank)"
reports="report.html report-optimized.html report-dlrm.html"
if [ -d "$py_out" ]; then
    "$tally" report --quiet "$py_out" -o "$build/demo/report-python.html" \
        --title "tally demo: the Python sample, 4 ranks (rank 3 made 1.5x slower)"
    reports="$reports report-python.html"
fi
for f in $reports; do
    printf '%10s  %s\n' "$(wc -c <"$build/demo/$f" | tr -d ' ')" "$build/demo/$f"
done

echo
echo "== tally compare: baseline vs optimized (faster attention, slower decode)"
"$tally" compare "$build/demo/baseline" "$build/demo/optimized" \
    -o "$build/demo/compare.html" --markdown "$build/demo/compare.md"
printf '%10s  %s\n' "$(wc -c <"$build/demo/compare.html" | tr -d ' ')" "$build/demo/compare.html"
echo
cat "$build/demo/compare.md"
