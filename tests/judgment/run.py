#!/usr/bin/env python3
"""run.py TALLY CORPUS CASES WORKDIR [CASE...] - the judgment set.

Each case of CASES (cases.json) is one `tally aggregate` over its inputs (corpus paths as
$CORPUS/..., generated traces as $GEN/..., written by gen_traces.py into WORKDIR/gen, real runs
recorded for these tests as $FIXTURES/..., tests/fixtures) and two
lists: findings that must appear and findings that must not. A finding is one of
  {"rule": ID [, "rank": N] [, "severity": S] [, "text": SUBSTRING]}  a recommendation
  {"straggler": RANK [, "kind": K] [, "severity": S]}                 a named straggler
  {"straggler": "any"}                                                 any straggler
  {"straggler_note": SUBSTRING}                                        why none was named
  {"skipped": ID [, "why": SUBSTRING]}                                 a rule that did not apply
  {"note": SUBSTRING}                                                  a run-identity warning
  {"headline": SUBSTRING [, "severity": S]}                            the headline
  {"text": SUBSTRING}                                                  anywhere in the findings' text
  {"name": NAME, "group": G, "inclusive_ns": N | "self_ns": N}         a name's time (exact)
  {"gpu": METRIC, "rank": N, "min": X, "max": Y}                       a rank's GPU number
  {"memory": METRIC, "rank": N, "min": X, "max": Y}                    a rank's memory number
  {"exit": CODE}                                                       the exit code
  {"warning": SUBSTRING}                                               a line tally wrote to stderr
  {"waits": KEY, "equals": V}                                          a number or word of the waits (KEY may be dotted)
  {"waits_rank": N, "left_out": SUBSTRING}                             why a rank was left out of them
Every case states why it is there ("why"). Exit 0 when every case holds."""
import json
import os
import subprocess
import sys


def findings_text(agg):
    parts = [r["message"] + " " + r["evidence"] for r in agg["recommendations"]]
    parts.append(agg["headline"]["text"])
    parts += [s["evidence"]["summary"] for s in agg["stragglers"]]
    return "\n".join(parts)


def holds(f, agg, code, stderr=""):
    """Whether the finding f is in the aggregate, the exit code or stderr."""
    if "rule" in f:
        for r in agg["recommendations"]:
            if r["id"] != f["rule"]:
                continue
            if "rank" in f and r["rank"] != f["rank"]:
                continue
            if "severity" in f and r["severity"] != f["severity"]:
                continue
            if "text" in f and f["text"] not in r["message"] + " " + r["evidence"]:
                continue
            return True
        return False
    if "straggler" in f:
        for s in agg["stragglers"]:
            if f["straggler"] != "any" and s["rank"] != f["straggler"]:
                continue
            if "kind" in f and s["kind"] != f["kind"]:
                continue
            if "severity" in f and s["severity"] != f["severity"]:
                continue
            return True
        return False
    if "straggler_note" in f:
        return agg["straggler_note"] is not None and f["straggler_note"] in agg["straggler_note"]
    if "skipped" in f:
        return any(s["id"] == f["skipped"] and f.get("why", "") in s["why"] for s in agg["rules_not_applied"])
    if "note" in f:
        return any(f["note"] in n for n in agg["notes"])
    if "headline" in f:
        h = agg["headline"]
        return f["headline"] in h["text"] and ("severity" not in f or h["severity"] == f["severity"])
    if "name" in f:
        for n in agg["names"]:
            if n["name"] == f["name"] and n["group"] == f.get("group", n["group"]):
                return all(n.get(k) == f[k] for k in ("inclusive_ns", "self_ns", "count") if k in f)
        return False
    if "gpu" in f:
        for r in agg["ranks"]:
            if r["rank"] == f["rank"] and r["gpu"] is not None:
                v = r["gpu"][f["gpu"]]
                return f.get("min", v) <= v <= f.get("max", v)
        return False
    if "memory" in f:
        for r in agg["ranks"]:
            v = r["memory"][f["memory"]]
            if r["rank"] == f["rank"] and v is not None:
                return f.get("min", v) <= v <= f.get("max", v)
        return False
    if "waits" in f:  # a dotted key reads inside objects ("window.cause")
        v = agg["waits"]
        for k in f["waits"].split("."):
            v = v.get(k) if isinstance(v, dict) else None
        return v == f["equals"]
    if "waits_rank" in f:
        return any(r["rank"] == f["waits_rank"] and f["left_out"] in (r["left_out"] or "") for r in agg["waits"]["ranks"])
    if "text" in f:
        return f["text"] in findings_text(agg)
    if "exit" in f:
        return code == f["exit"]
    if "warning" in f:
        return any(f["warning"] in line for line in stderr.splitlines())
    raise ValueError(f"unknown finding {f}")


def main():
    tally, corpus, cases_path, work = sys.argv[1:5]
    only = set(sys.argv[5:])
    gen = os.path.join(work, "gen")
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = os.path.join(here, "..", "fixtures")
    subprocess.run([sys.executable, os.path.join(here, "gen_traces.py"), gen, corpus], check=True)
    with open(cases_path) as f:
        cases = json.load(f)
    failed = 0
    for case in cases:
        name = case["name"]
        if only and name not in only:
            continue
        inputs = [i.replace("$CORPUS", corpus).replace("$GEN", gen).replace("$FIXTURES", fixtures)
                  for i in case["inputs"]]
        out = os.path.join(work, name + ".json")
        if os.path.exists(out):
            os.remove(out)
        p = subprocess.run([tally, "aggregate", *case.get("args", []), *inputs, "-o", out],
                           capture_output=True, text=True)
        problems = []
        if not os.path.exists(out):
            problems.append(f"no aggregate (exit {p.returncode}): {p.stderr.strip()[:500]}")
        else:
            with open(out) as f:
                agg = json.load(f)
            for must in case.get("must", []):
                if not holds(must, agg, p.returncode, p.stderr):
                    problems.append(f"missing: {json.dumps(must)}")
            for must_not in case.get("must_not", []):
                if holds(must_not, agg, p.returncode, p.stderr):
                    problems.append(f"present but must not be: {json.dumps(must_not)}")
        if problems:
            failed += 1
            print(f"FAIL {name} ({case['why']})")
            for x in problems:
                print(f"    {x}")
            if os.path.exists(out):
                print(f"    headline: {agg['headline']['text']}")
                for r in agg["recommendations"]:
                    print(f"    fired: {r['severity']} {r['id']} rank {r['rank']}: {r['evidence'][:200]}")
                print(f"    straggler note: {agg['straggler_note']}")
        else:
            print(f"ok   {name}")
    print(f"{len(cases) - failed if not only else len(only) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
