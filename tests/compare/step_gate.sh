#!/bin/sh
# step_gate.sh TALLY GENERATOR PYTHON CORPUS WORKDIR
#
# The gate follows the step (docs/compare.md, Materiality), on generated
# equivalents of the real pairs of issue 29 (4 ranks, 8 steps, 4 layers) and on
# the TensorBoard plugin's ResNet-50 pair:
#   - a DDP fix: rank 2's DataLoader 8 ms a step slower in the baseline only (the
#     step -16 %), and the optimizer's Adam kernel 13 % slower in the candidate
#     (+1 % of the step): the Adam row is a regression, but not material, and the
#     gate passes (it failed before materiality);
#   - the reverse: rank 2's DataLoader 7 ms slower in all 8 steps (the step
#     +19 %): the step row fails the gate, and rank 2's DataLoader rows are tested;
#   - resnet50 num_workers 0 -> 4 (the step -22 %): a cuDNN algorithm swap (one
#     kernel 6 -> 72 calls, +581 %, about 1 % of the step) is not material and the
#     gate passes (it failed before).
set -eu
tally=$1
gen=$2
py=$3
corpus=$4
work=$5
rm -rf "$work"
mkdir -p "$work"
make_run() { # dir, options...
    d=$1
    shift
    ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 "$gen" --ranks 4 --dir "$work/$d" --steps 8 --layers 4 --gzip --quiet "$@"
}
gate() { # name baseline candidate: exit code in $rc
    set +e
    "$tally" compare -q "$2" "$3" --json "$work/$1.json" --fail-on-regression 2>"$work/$1.err"
    rc=$?
    set -e
}
make_run slowdata --seed 1 --data-rank 2 --data-ms 7
make_run fixed --seed 2 --kernel-scale adam=1.13
make_run base --seed 1
make_run slow --seed 2 --data-rank 2 --data-ms 7

gate fix "$work/slowdata" "$work/fixed"
if [ "$rc" -ne 0 ]; then
    echo "step_gate.sh: the fix (step -16 %) failed the gate: exit $rc" >&2
    cat "$work/fix.err" >&2
    exit 1
fi
gate regress "$work/base" "$work/slow"
if [ "$rc" -ne 1 ] || ! grep -q 'regression: steps "step" (all ranks)' "$work/regress.err"; then
    echo "step_gate.sh: one rank's slow data loading (step +19 %): exit $rc, not 1 naming the step" >&2
    cat "$work/regress.err" >&2
    exit 1
fi
gate tb "$corpus/kineto-tb_plugin-samples/resnet50_num_workers_0" "$corpus/kineto-tb_plugin-samples/resnet50_num_workers_4"
if [ "$rc" -ne 0 ]; then
    echo "step_gate.sh: resnet50 num_workers 0 -> 4 (step -22 %) failed the gate: exit $rc" >&2
    cat "$work/tb.err" >&2
    exit 1
fi
"$py" - "$work/fix.json" "$work/regress.json" "$work/tb.json" <<'PY'
import json, sys
fix, regress, tb = (json.load(open(p)) for p in sys.argv[1:4])
def rows(d, pred):
    return [r for r in d["rows"] if pred(r)]
adam = rows(fix, lambda r: r["rank"] is None and r["metric"] == "per_run" and "FusedAdamMathFunctor" in r["name"])
if not adam or adam[0]["verdict"] != "regression" or adam[0]["material"] or adam[0]["gate"]:
    sys.exit(f"step_gate.sh: the Adam kernel +13 % is not an immaterial regression: {adam[:1]}")
step = rows(fix, lambda r: r["group"] == "steps" and r["rank"] is None)
if step[0]["verdict"] != "improvement":
    sys.exit(f"step_gate.sh: the fix's step is {step[0]['verdict']}")
data = rows(regress, lambda r: r["rank"] == 2 and r["metric"] == "per_call" and "DataLoader" in r["name"]
            and r["group"] == "sections")
if not data or data[0]["test"] is None:
    sys.exit(f"step_gate.sh: rank 2's DataLoader row was not tested: {data[:1]}")
swap = rows(tb, lambda r: r["rank"] is None and r["metric"] == "per_run" and r["name"].startswith("volta_scudnn_128x128_stridedB_splitK"))
if not swap or swap[0]["material"] or swap[0]["gate"]:
    sys.exit(f"step_gate.sh: the cuDNN swap is material: {swap[:1]}")
PY

# The page leads with the verdict; a chart's first bar has a verdict (a non-significant row never
# leads it); its labels are distinct; --title and --labels reach the page, the Markdown and the JSON.
"$tally" compare -q "$work/base" "$work/slow" --title "DDP data loading" --labels "main@abc1234,PR 42" \
    -o "$work/labels.html" --markdown "$work/labels.md" --json "$work/labels.json"
"$py" - "$work/labels.html" "$work/labels.md" "$work/labels.json" <<'PY'
import json, re, sys
page, md, doc = open(sys.argv[1], encoding="utf-8").read(), open(sys.argv[2], encoding="utf-8").read(), json.load(open(sys.argv[3]))
if "<title>tally compare: DDP data loading</title>" not in page or "<b>main@abc1234</b>" not in page:
    sys.exit("step_gate.sh: the page has not the title and labels")
head = page[page.index('<section id="headline">'):]
if not head.split("</p>")[0].endswith("adjusted p &lt; 0.001; 5 more gate failures; 31 regression verdicts do not fail it (immaterial to the step, or explanatory)</b>") or "Gate fails: step time +" not in head.split("</p>")[0]:
    sys.exit("step_gate.sh: the headline does not lead with the step's verdict: " + head[:400])
deltas = page[page.index('<section id="deltas">'):page.index("</section>", page.index('<section id="deltas">'))]
classes = re.findall(r'<rect class="(\w+)"', deltas)
if not classes or classes[0] == "neu":
    sys.exit(f"step_gate.sh: the chart leads with a row without a verdict: {classes[:3]}")
if "neu" in classes and any(c != "neu" for c in classes[classes.index("neu"):]):
    sys.exit(f"step_gate.sh: a row with a verdict after one without: {classes}")
labels = re.findall(r'text-anchor="end">([^<]*)</text><rect', deltas)
if len(labels) != len(set(labels)):
    sys.exit(f"step_gate.sh: a label twice in the chart: {sorted(l for l in labels if labels.count(l) > 1)[:3]}")
if not md.startswith("## tally compare: DDP data loading\n\nmain&#64;abc1234 (baseline) \u2192 PR 42 (candidate)\n\n\u274c **gate fails: step time +"):
    sys.exit("step_gate.sh: the Markdown's head: " + md[:300])
if doc["title"] != "DDP data loading" or doc["labels"] != {"baseline": "main@abc1234", "candidate": "PR 42"}:
    sys.exit(f"step_gate.sh: JSON title/labels {doc['title']!r} {doc['labels']!r}")
if not doc["status"].startswith("gate fails: step time +"):
    sys.exit(f"step_gate.sh: JSON status {doc['status']!r}")
PY
set +e
"$tally" compare -q "$work/base" "$work/slow" --labels "one-name-only" -o "$work/x.html" 2>"$work/labels.err"
rc=$?
set -e
if [ "$rc" -ne 2 ] || ! grep -q -- "--labels wants BASE,CAND" "$work/labels.err"; then
    echo "step_gate.sh: --labels without a comma: exit $rc, not 2 with a message" >&2
    exit 1
fi
echo "step_gate.sh: ok"
