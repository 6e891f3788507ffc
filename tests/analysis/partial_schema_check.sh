#!/bin/sh
# partial_schema_check.sh TALLY CORPUS SCHEMA PYTHON WORKDIR SOURCE_DIR
#
# The partials tally writes must validate against schema/tally-partial.schema.json (Draft
# 2020-12): `tally aggregate --partial` on the in-repo DLRM traces and on corpus sets of every
# input format (Kineto multi-rank and single, HTA, FramePack, Inferix, TensorBoard samples
# with several sessions of a rank, call trees from the speedscope fixtures, edge cases), a
# partial of partials (`tally merge --partial`), and the version 2 seeds of the fuzz target.
# And a few things a reader of the format relies on:
#   - enums are names: DLRM's sessions are "pytorch-profiler", ranks from "content", kernels
#     of type "communication" among them, GPU lanes "gpu"; Inferix's growth metric "allocated";
#   - the speedscope set's CPU lanes are "cpu" and carry calls, names and a call tree;
#   - merging the partials of two halves lists every session of both.
set -eu
tally=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
corpus=$2
schema=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
py=$4
work=$5
src=$(cd "$6" && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

"$tally" aggregate -q --partial "$src/samples/traces/dlrm-8rank" -o "$work/samples_dlrm.json"
if [ -d "$corpus" ]; then
    corpus=$(cd "$corpus" && pwd)
    cd "$corpus"
    for set in param-dlrm_kineto-8rank param-kineto-single hta/trace_filter hta/df_index_resolver framepack inferix \
        kineto-tb_plugin-samples speedscope-trace-event-fixtures derived-edge-cases; do
        out="$work/$(echo "$set" | tr / _).json"
        "$tally" aggregate -q --partial "$set" -o "$out" 2>/dev/null ||
            { echo "FAIL: tally aggregate --partial $set" >&2; exit 1; }
    done
    "$tally" aggregate -q --partial param-dlrm_kineto-8rank/worker[0-3]* -o "$work/half1.part"
    "$tally" aggregate -q --partial param-dlrm_kineto-8rank/worker[4-7]* -o "$work/half2.part"
    "$tally" merge -q --partial "$work/half1.part" "$work/half2.part" -o "$work/merged_halves.json"
else
    echo "note: no corpus at $corpus; only the in-repo samples and seeds are checked"
fi
for f in "$src"/tests/fuzz/seeds/partial/*.v2.partial.json; do
    cp "$f" "$work/seed_$(basename "$f")"
done

"$py" - "$schema" "$work" <<'PY'
import json
import os
import sys

import jsonschema

schema_path, work = sys.argv[1], sys.argv[2]
with open(schema_path) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failures = []
docs = {}


def check(cond, what):
    if not cond:
        failures.append(what)


for name in sorted(os.listdir(work)):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(work, name)) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:10]:
        failures.append(f"{name}: schema: {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
    check(doc.get("format") == "tally-partial" and doc.get("version") == 2, f"{name}: format and version")
    check(len(doc["sessions"]) > 0, f"{name}: no sessions")
    print(f"{name}: {len(doc['sessions'])} sessions, {'valid' if not errors else f'{len(errors)} schema errors'}")
    docs[name] = doc

dlrm = docs["samples_dlrm.json"]
usable = [s for s in dlrm["sessions"] if s["rank"] >= 0]
check(len(usable) == 8, "samples dlrm: not 8 sessions")
check(all(s["format"] == "pytorch-profiler" and s["rank_source"] == "content" for s in usable),
      "samples dlrm: format or rank_source not by name")
check(any(k["type"] == "communication" for s in usable for k in s["kernels"]), "samples dlrm: no communication kernel")
# the CPU threads that carry work, then the GPU streams (docs/analysis.md, Timelines)
check(all([l["kind"] for l in s["timeline"]["lanes"]] == sorted((l["kind"] for l in s["timeline"]["lanes"]),
                                                                 key=lambda k: k != "cpu")
          and any(l["kind"] == "cpu" for l in s["timeline"]["lanes"])
          and any(l["kind"] == "gpu" for l in s["timeline"]["lanes"]) for s in usable),
      "samples dlrm: lanes not CPU threads then GPU streams")
check(any(n["group"] == "kernels" for s in usable for n in s["names"]), "samples dlrm: no name of group kernels")

if "hta_df_index_resolver.json" in docs:
    # the allocator's lowest reading in each of 4 steps (Inferix's block
    # memory is a high-water mark, not a growth sequence)
    growth = [g for s in docs["hta_df_index_resolver.json"]["sessions"] for g in s.get("growth", [])]
    check(any(g[1] == "allocated" and g[2] == 4 for g in growth), "df_index_resolver: no growth of metric allocated")
if "inferix.json" in docs:
    growth = [g for s in docs["inferix.json"]["sessions"] for g in s.get("growth", [])]
    check(not growth, "inferix: a growth sequence from the blocks' high-water mark")
if "speedscope-trace-event-fixtures.json" in docs:
    ss = docs["speedscope-trace-event-fixtures.json"]["sessions"]
    cpu = [l for s in ss for l in s["timeline"]["lanes"] if l["kind"] == "cpu"]
    check(any("calls" in l for l in cpu), "speedscope: no CPU lane with calls")
    check(any("calltree" in s for s in ss), "speedscope: no call tree")
if "merged_halves.json" in docs:
    paths = sorted(s["path"] for s in docs["merged_halves.json"]["sessions"])
    check(paths == sorted(s["path"] for s in docs["param-dlrm_kineto-8rank.json"]["sessions"]),
          "merge --partial of two halves: not the sessions of the whole")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
