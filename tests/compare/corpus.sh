#!/bin/sh
# corpus.sh TALLY PYTHON SCHEMA CORPUS WORKDIR
#
# `tally compare` on Holistic Trace Analysis' own comparison inputs in the shared
# corpus: hta/trace_diff/{control,test} (a model before and after torch.compile,
# ranks 3 and 1: compared over all ranks only) and hta/trace_compare/{base,test}.
# Both compare without error; the names HTA's trace_diff lists as added, removed
# and changed are listed so (CompiledFunction only in the test run, AddBackward0
# and MmBackward0 only in the control; aten::mm and aten::addmm slower a call but called
# 4x less, their total down 55-62 %, and aten::copy_ faster a call but called 12x more:
# each a change of call mix, never a per-call regression or improvement; in
# trace_compare AddmmBackward0 and All2All_Pooled_Req only in the test run); the
# outputs are valid (schema, JUnit, balanced HTML) and the Markdown stays under
# 1 MiB on the largest of them.
set -eu
tally=$1
py=$2
schema=$3
corpus=$4
work=$5
here=$(cd "$(dirname "$0")" && pwd)
check="$py $here/check_compare.py"
rm -rf "$work"
mkdir -p "$work"

run() { # name baseline candidate
    "$tally" compare -q "$2" "$3" -o "$work/$1.html" --json "$work/$1.json" --junit "$work/$1.xml" \
        --markdown "$work/$1.md"
    $check schema "$work/$1.json" "$schema"
    $check junit "$work/$1.xml" "$work/$1.json"
    $check markdown "$work/$1.md"
    $check html "$work/$1.html"
}
run diff "$corpus/hta/trace_diff/control" "$corpus/hta/trace_diff/test"
$check verdicts "$work/diff.json" --added CompiledFunction --added CompiledFunctionBackward \
    --removed AddBackward0 --removed MmBackward0 --removed ReluBackward0 \
    --changed aten::mm --changed aten::addmm --changed aten::copy_
grep -F "call mix: 276 calls per run instead of 1092" "$work/diff.json" >/dev/null
grep -F "CompiledFunction" "$work/diff.md" >/dev/null
grep -F "### Removed (only in the baseline)" "$work/diff.md" >/dev/null

run compare "$corpus/hta/trace_compare/base" "$corpus/hta/trace_compare/test"
$check verdicts "$work/compare.json" --added AddmmBackward0 --added All2All_Pooled_Req --added CatBackward0 \
    --no-regression
# The same kernel with other template arguments is one name with --normalize.
"$tally" compare -q --normalize "$corpus/hta/trace_diff/control" "$corpus/hta/trace_diff/test" \
    -o "$work/norm.html" --json "$work/norm.json"
$check schema "$work/norm.json" "$schema"
"$py" - "$work/diff.json" "$work/norm.json" <<'PY'
import json, sys
exact, norm = (json.load(open(p)) for p in sys.argv[1:3])
def matched(d):
    return sum(r["rank"] is None and r["verdict"] not in ("added", "removed") for r in d["rows"])
if not matched(norm) > 0 or any("<" in r["name"] for r in norm["rows"] if r["group"] == "kernels"):
    sys.exit("corpus.sh: --normalize left template arguments in kernel names")
overall = [r for r in norm["rows"] if r["rank"] is None]
if len(overall) != len(set((r["group"], r["name"], r["metric"]) for r in overall)):
    sys.exit("corpus.sh: --normalize gave two all-ranks rows of one name and metric")
if not norm["normalize"] or exact["normalize"]:
    sys.exit("corpus.sh: \"normalize\" is not what was asked")
PY
echo "corpus.sh: ok"
