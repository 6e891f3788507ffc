#!/bin/sh
# stragglers_generated.sh TALLY GENERATOR PYTHON WORKDIR
#
# Stragglers on synthetic Kineto traces from bench_gen_kineto_trace (4 ranks, 8 steps,
# one layer: about 2 MB a file). The generator's --slow-rank R --slow-factor F makes
# every compute kernel (cat "kernel", not NCCL) of rank R take F times longer; the
# collectives then end when R arrives, so the other ranks' NCCL kernels get longer.
#   - rank 2 slowed by 1.4: exactly one compute straggler, rank 2, about +40 %, whose
#     evidence names only compute kernels of the generator's model (never NCCL, copies or
#     syncs), the first of them about 40 % slower on rank 2 than on rank 0; a "straggler"
#     recommendation for rank 2; no other rank is a straggler;
#   - no slow rank (two seeds): no compute straggler, and no "straggler" recommendation
#     of kind compute.
set -eu
tally=$1
gen=$2
py=$3
work=$4
rm -rf "$work"
mkdir -p "$work"

"$gen" --list-kernels >"$work/kernels.txt"
make_set() { # dir, options...
    d=$1
    shift
    mkdir -p "$work/$d"
    "$gen" --ranks 4 --dir "$work/$d" --steps 8 --layers 1 --quiet "$@"
    "$tally" aggregate -q "$work/$d" -o "$work/$d.json"
}
make_set slow --seed 3 --slow-rank 2 --slow-factor 1.4
make_set even1 --seed 5
make_set even2 --seed 11

"$py" - "$work" <<'PY'
import json
import os
import sys

work = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# The generator's kernels: the compute ones are what --slow-rank slows.
names = {}
with open(os.path.join(work, "kernels.txt")) as f:
    for line in f:
        key, _, name = line.rstrip("\n").partition(" ")
        names[key] = name.strip()
non_compute = ("ncclDevKernel", "Memcpy", "Memset", "Stream ")
compute = {n for n in names.values() if not n.startswith(non_compute)}
check(len(compute) > 20, f"only {len(compute)} compute kernels in --list-kernels")


def load(name):
    with open(os.path.join(work, name)) as f:
        return json.load(f)


slow = load("slow.json")
check([r["rank"] for r in slow["ranks"]] == [0, 1, 2, 3], "slow: ranks are not 0..3")
comp = [s for s in slow["stragglers"] if s["kind"] == "compute"]
check(len(comp) == 1, f"slow: {len(comp)} compute stragglers, expected 1")
check(all(s["rank"] == 2 for s in slow["stragglers"]), "slow: a straggler other than rank 2")
check([r["rank"] for r in slow["ranks"] if r["straggler"]] == [2], "slow: ranks marked as stragglers are not [2]")
if comp:
    s = comp[0]
    ev = s["evidence"]
    check(s["rank"] == 2, f"slow: the compute straggler is rank {s['rank']}")
    check(abs(ev["delta_pct"] - 40) < 3, f"slow: delta {ev['delta_pct']:.1f} %, expected about 40 %")
    check(len(ev["names"]) >= 3, f"slow: only {len(ev['names'])} evidence names")
    for n in ev["names"]:
        check(n["name"] in compute, f"slow: evidence {n['name'][:80]} is not a compute kernel the generator slows")
        check(n["delta_per_step_ns"] > 0, "slow: evidence with no delta")
    # "most of it in" only when the top kernel holds half the excess: here
    # every compute kernel is 1.4x slower, so the largest holds a small part
    lead = "most of it in " if ev["names"][0]["delta_per_step_ns"] >= 0.5 * (ev["value"] - ev["others_median"]) \
        else "the largest part in "
    check(lead == "the largest part in ", "slow: one kernel holds half the excess of 40 kernels slowed alike")
    check(lead + ev["names"][0]["name"][:60] in ev["summary"], "slow: summary does not name the top kernel")
    # the top kernel: rank 2 spends about 1.4 x what rank 0 does on it
    top = ev["names"][0]["name"]
    per_rank = {}
    for r in slow["ranks"]:
        for k in r["top"]["kernels"]:
            if k["name"] == top:
                per_rank[r["rank"]] = k["total_ns"]
    if 0 in per_rank and 2 in per_rank:
        ratio = per_rank[2] / per_rank[0]
        check(abs(ratio - 1.4) < 0.05, f"slow: top kernel rank 2 / rank 0 = {ratio:.3f}, expected 1.4")
    else:
        failures.append(f"slow: top evidence kernel not in the per-rank top kernels of ranks 0 and 2")
recs = [r for r in slow["recommendations"] if r["id"] == "straggler"]
check(any(r["rank"] == 2 and "compute per step" in r["evidence"] for r in recs),
      "slow: no compute straggler recommendation for rank 2")
check(all(r["rank"] == 2 for r in recs), "slow: a straggler recommendation for another rank")

for name in ("even1.json", "even2.json"):
    d = load(name)
    check(len(d["ranks"]) == 4, f"{name}: {len(d['ranks'])} ranks")
    comp = [s for s in d["stragglers"] if s["kind"] == "compute"]
    check(not comp, f"{name}: compute stragglers {[s['evidence']['summary'] for s in comp]}")
    check(not any(r["id"] == "straggler" and "compute per step" in r["evidence"] for r in d["recommendations"]),
          f"{name}: a compute straggler recommendation")
    cps = [r["steps"]["compute_per_step_ns"] for r in d["ranks"]]
    check(all(c and abs(c / cps[0] - 1) < 0.05 for c in cps), f"{name}: compute per step differs: {cps}")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
PY
