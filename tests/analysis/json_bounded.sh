#!/bin/sh
# json_bounded.sh TALLY GENERATOR PYTHON WORKDIR SCHEMA
#
# The aggregate JSON is bounded past TL_JSON_RANKS_FULL (256) ranks (render.h;
# docs/analysis.md, "The aggregate JSON"). 300 generated Kineto ranks (one
# layer, 4 steps, rank 123's compute 1.5x slower):
#   - tally aggregate: "ranks" and "sessions" hold the 32 ranks rank_pick.h
#     picks, and exactly those: the straggler 123, the ranks of the least and
#     most mean step and at its p10/p25/median/p75/p90 (worked out here from the
#     rows' step means), an even sample; "rank_rows" every rank; "detail" counts
#     what was left out; the document is at most a seventh of --json-all's;
#   - --json-all: every rank and session in full, "detail" says none was left out;
#   - the bounded document is refused as an input (exit 3, the message says why
#     and what to do); the --json-all one is read;
#   - a partial keeps all 300 sessions, and tally merge of it writes the bytes of
#     tally aggregate over the traces;
#   - both documents validate against schema/tally-aggregate.schema.json.
set -eu
tally=$1
gen=$2
py=$3
work=$4
schema=$5
rm -rf "$work"
mkdir -p "$work"

"$gen" --ranks 300 --dir "$work/ranks" --steps 4 --layers 1 --gzip --quiet --slow-rank 123 --slow-factor 1.5
"$tally" aggregate -q "$work/ranks" -o "$work/bounded.json"
"$tally" aggregate -q --json-all "$work/ranks" -o "$work/all.json"
"$tally" aggregate -q --partial "$work/ranks" -o "$work/part.json"
"$tally" merge -q "$work/part.json" -o "$work/merged.json"
cmp "$work/bounded.json" "$work/merged.json"

rc=0
"$tally" summary "$work/bounded.json" >"$work/refused.out" 2>"$work/refused.err" || rc=$?
[ "$rc" -eq 3 ] || { echo "summary of the bounded aggregate: exit $rc, expected 3"; exit 1; }
grep -q "bounded.json: a bounded aggregate (32 ranks in full, 268 sessions of the other ranks left out)" \
    "$work/refused.err" || { cat "$work/refused.err"; echo "no message naming the bounded aggregate"; exit 1; }
grep -q -- "--json-all" "$work/refused.err" || { echo "the refusal does not say how to get every rank"; exit 1; }
"$tally" summary -q "$work/all.json" >"$work/all.txt"
grep -q "300 ranks" "$work/all.txt" || { echo "the --json-all aggregate was not read back"; exit 1; }

"$py" - "$work" "$schema" <<'PY'
import json
import math
import os
import sys

import jsonschema

work = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def load(name):
    with open(os.path.join(work, name)) as f:
        return json.load(f)


b, a, p = load("bounded.json"), load("all.json"), load("part.json")
with open(sys.argv[2]) as f:
    schema = json.load(f)
for name, doc in (("bounded", b), ("all", a)):
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        failures.append(f"{name}: {e.message} at {list(e.absolute_path)}")
bsize = os.path.getsize(os.path.join(work, "bounded.json"))
asize = os.path.getsize(os.path.join(work, "all.json"))

check(b["world_size_seen"] == 300, f"world_size_seen {b['world_size_seen']}")
check(b["detail"]["full_up_to_ranks"] == 256, f"detail {b['detail']}")
check(b["detail"]["ranks_in_full"] == 32 and b["detail"]["ranks_left_out"] == 268, f"detail {b['detail']}")
check(b["detail"]["sessions_in_full"] == 32 and b["detail"]["sessions_left_out"] == 268, f"detail {b['detail']}")
check("--json-all" in (b["detail"]["note"] or ""), f"note {b['detail']['note']}")
check(len(b["ranks"]) == 32, f"{len(b['ranks'])} ranks in full")
check(len(b["sessions"]) == 32, f"{len(b['sessions'])} sessions")
check(len(b["rank_rows"]) == 300, f"{len(b['rank_rows'])} rank rows")
check(len(b["inputs"]) == 300, f"{len(b['inputs'])} inputs")
# the size bound: 32 ranks' sessions and a short row a rank, not 300 ranks' sessions
check(bsize * 7 < asize, f"bounded {bsize} bytes vs all {asize}: not bounded")
check(bsize < 32 * (asize / 300) + 300 * 2048 + 600_000, f"bounded {bsize} bytes over the bound")

# the picked ranks, worked out from the rows
rows = b["rank_rows"]
full = {r["rank"] for r in rows if r["in_full"]}
check(full == {r["rank"] for r in b["ranks"]}, "rank_rows' in_full differs from the ranks in full")
check(full == {s["rank"] for s in b["sessions"]}, "the sessions are not those of the ranks in full")
why = {r["rank"]: r["picked"] for r in rows}
check(123 in full and "straggler" in why[123], f"straggler 123: {why.get(123)}")
check([s["rank"] for s in b["stragglers"]] == [123], f"stragglers {[s['rank'] for s in b['stragglers']]}")
keyed = sorted((r["step_mean_ns"], i) for i, r in enumerate(rows) if r["step_mean_ns"] is not None)
want = {"min": keyed[0][1], "max": keyed[-1][1]}
for q, tag in ((0.10, "p10"), (0.25, "p25"), (0.50, "median"), (0.75, "p75"), (0.90, "p90")):
    want[tag] = keyed[int(math.floor(q * (len(keyed) - 1) + 0.5))][1]
for tag, i in want.items():
    r = rows[i]["rank"]
    check(r in full and tag in why[r], f"the {tag} rank {r} is not in full as {tag}: {why.get(r)}")
check(sum(1 for r in rows if "sample" in r["picked"]) == 32 - len({123, *(rows[i]["rank"] for i in want.values())}),
      "the sample does not fill the 32")
for r in rows:
    check(r["in_full"] == bool(r["picked"]), f"rank {r['rank']}: in_full {r['in_full']} picked {r['picked']}")

# the rows carry the numbers of the full document
full_ranks = {r["rank"]: r for r in a["ranks"]}
for r in rows:
    f = full_ranks[r["rank"]]
    check(r["step_mean_ns"] == f["steps"]["mean_ns"] and r["steps"] == f["steps"]["count"],
          f"rank {r['rank']}: row's steps differ from the full rank's")
    check(r["gpu_idle_pct"] == f["gpu"]["idle_pct"], f"rank {r['rank']}: gpu_idle_pct differs")
for rb in b["ranks"]:
    check(rb == full_ranks[rb["rank"]], f"rank {rb['rank']} in full differs from --json-all's")

# everything with --json-all, and in the partial
check(a["detail"]["ranks_left_out"] == 0 and a["detail"]["sessions_left_out"] == 0 and a["detail"]["note"] is None,
      f"--json-all detail {a['detail']}")
check(len(a["ranks"]) == 300 and len(a["sessions"]) == 300, "--json-all lost ranks")
check(all(r["in_full"] and r["picked"] == ["all"] for r in a["rank_rows"]), "--json-all rows not all in full")
check(len(p["sessions"]) == 300, f"the partial holds {len(p['sessions'])} sessions")
# the tables of every rank agree whichever the detail
for k in ("across_ranks", "names", "stragglers", "waits", "collectives", "headline", "recommendations"):
    check(a[k] == b[k], f"{k} differs between the bounded and the whole document")

print(f"bounded {bsize} bytes, all {asize} bytes, {len(full)} ranks in full")
if failures:
    print("\n".join(failures))
    sys.exit(1)
PY
