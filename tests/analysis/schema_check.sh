#!/bin/sh
# schema_check.sh TALLY CORPUS SCHEMA PYTHON WORKDIR
#
# `tally aggregate` on several corpus sets (two Kineto multi-rank runs, FramePack and
# Inferix reports, TensorBoard plugin samples with several sessions of one rank) must
# validate against schema/tally-aggregate.schema.json (Draft 2020-12), and a few numbers
# a user reads must be right:
#   - DLRM (8 ranks): 8 ranks, world_size 8, every rank has a GPU breakdown whose
#     idle, compute and non-compute percentages add up to 100 (± 0.01);
#   - HTA trace_filter (2 ranks): the ProfilerStep window with the last step dropped;
#   - Inferix: ranks 0 and 1 found in the content; the raw dumps listed as not a profile;
#   - FramePack: a step mean of 2.6166 s;
#   - TensorBoard samples: one rank, three sessions.
set -eu
tally=$1
corpus=$(cd "$2" && pwd)
schema=$3
py=$4
work=$5
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

cd "$corpus"
for set in param-dlrm_kineto-8rank hta/trace_filter framepack/generated inferix/generated/multi_rank_reports \
    kineto-tb_plugin-samples; do
    out="$work/$(echo "$set" | tr / _).json"
    "$tally" aggregate -q "$set" -o "$out" || { echo "FAIL: tally aggregate $set" >&2; exit 1; }
done

"$py" - "$schema" "$work" <<'PY'
import json
import math
import os
import sys

import jsonschema

schema_path, work = sys.argv[1], sys.argv[2]
with open(schema_path) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def load(name):
    with open(os.path.join(work, name)) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:10]:
        failures.append(f"{name}: schema: {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
    check(doc.get("format") == "tally-aggregate", f"{name}: format")
    print(f"{name}: {'valid' if not errors else f'{len(errors)} schema errors'}")
    return doc


dlrm = load("param-dlrm_kineto-8rank.json")
check(dlrm["world_size_seen"] == 8, "dlrm: world_size_seen != 8")
check([r["rank"] for r in dlrm["ranks"]] == list(range(8)), "dlrm: ranks are not 0..7")
for r in dlrm["ranks"]:
    check(r["world_size"] == 8, f"dlrm: rank {r['rank']}: world_size {r['world_size']}")
    g = r["gpu"]
    check(g is not None, f"dlrm: rank {r['rank']}: no GPU breakdown")
    if g is not None:
        total = g["idle_pct"] + g["compute_pct"] + g["non_compute_pct"]
        check(abs(total - 100) <= 0.01, f"dlrm: rank {r['rank']}: idle+compute+non_compute = {total}")
        check(g["events"] > 0 and g["kernel_time_us"] > 0, f"dlrm: rank {r['rank']}: empty breakdown")
        check(abs(g["idle_us"] + g["compute_us"] + g["non_compute_us"] - g["kernel_time_us"]) < 0.01,
              f"dlrm: rank {r['rank']}: idle + compute + non_compute != kernel_time")
check(all(i["rank_source"] == "content" for i in dlrm["inputs"]), "dlrm: ranks not from the content")

hta = load("hta_trace_filter.json")
check([r["rank"] for r in hta["ranks"]] == [0, 1], "hta: ranks are not 0, 1")
for r in hta["ranks"]:
    g = r["gpu"]
    check(g is not None and g["window"] == {"kind": "profiler-steps", "steps": 1},
          f"hta: rank {r['rank']}: window {g and g['window']} (2 ProfilerSteps, the last dropped)")
    check(r["steps"]["count"] == 2, f"hta: rank {r['rank']}: {r['steps']['count']} steps")

inferix = load("inferix_generated_multi_rank_reports.json")
check([r["rank"] for r in inferix["ranks"]] == [0, 1], "inferix: ranks are not 0, 1")
usable = [i for i in inferix["inputs"] if i["rank"] is not None]
check(sorted(i["rank"] for i in usable) == [0, 1], "inferix: usable inputs are not ranks 0 and 1")
check(all(i["rank_source"] == "content" for i in usable), "inferix: ranks not from the content")
check(all(i["format"] == "inferix-report" for i in usable), "inferix: format")
check(any(i["format"] == "not-a-profile" for i in inferix["inputs"]), "inferix: the raw dumps are not listed")

fp = load("framepack_generated.json")
means = [r["steps"]["mean_ns"] for r in fp["ranks"] if r["steps"]["mean_ns"] is not None]
check(any(abs(m / 1e9 - 2.6166) < 5e-5 for m in means), f"framepack: no step mean of 2.6166 s in {means}")
check(all(i["format"] == "framepack-report" for i in fp["inputs"]), "framepack: format")

tb = load("kineto-tb_plugin-samples.json")
check(len(tb["ranks"]) == 1 and len(tb["ranks"][0]["sessions"]) == 2, "tb samples: not one rank with 2 sessions")
check(any("process 5555, not 25738" in n for n in tb["notes"]), "tb samples: the num_workers_4 file is not another run")
check(tb["ranks"][0]["gpu"] is not None, "tb samples: no GPU breakdown")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
