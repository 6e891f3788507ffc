#!/usr/bin/env python3
"""`tally report --trace`: one Chrome trace of the whole job (docs/analysis.md, "Merged trace").

Read back with Python's json (and gzip for .gz), as a Trace Event reader would:
- h200-ddp-gloo (.json.gz) and DLRM (.json): one process per rank named
  "rank N", each with its steps, its lanes as named threads, CPU calls (the
  gloo run loop's gloo:all_reduce), GPU busy ranges and waits in
  collectives; a "tally findings" process with the collectives' last ranks
  and the recommendations; every complete event with ts >= 0 and dur >= 0;
  otherData states the bound (max_events) and that nothing was left out;
- the same inputs give the same bytes;
- an input is never overwritten (exit 4, the input intact).

usage: trace_check.py --tally TALLY --corpus CORPUS_DIR --out OUT_DIR
"""
import argparse
import gzip
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    c = reportlib.Checks("trace_check")
    out = reportlib.fresh_dir(a.out)

    for name, folder, ranks, fname, coll in (("gloo", "h200-ddp-gloo", 4, "job.trace.json.gz", "gloo:all_reduce"),
                                             ("dlrm", "param-dlrm_kineto-8rank", 8, "job.trace.json", None)):
        path = os.path.join(out, name + "-" + fname)
        r = reportlib.run_tally(a.tally, ["report", os.path.join(a.corpus, folder), "--trace", path, "--quiet"])
        if not c.check(r.returncode == 0, f"{name}: tally report --trace", r.stderr.decode(errors="replace")[-400:]):
            continue
        c.check(not os.path.exists(os.path.join(out, "report.html")), f"{name}: only the trace written")
        c.check((open(path, "rb").read(2) == b"\x1f\x8b") == fname.endswith(".gz"), f"{name}: gzip iff .gz")
        try:
            d = load(path)
        except ValueError as e:
            c.check(False, f"{name}: the trace parses as JSON", str(e))
            continue
        ev = d.get("traceEvents", [])
        other = d.get("otherData", {})
        procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
        threads = {}
        for e in ev:
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                threads.setdefault(e["pid"], set()).add(e["args"]["name"])
        c.check(sorted(v for v in procs.values() if v.startswith("rank ")) == sorted(f"rank {i}" for i in range(ranks)),
                f"{name}: one process per rank", str(procs))
        fp = [p for p, v in procs.items() if v == "tally findings"]
        c.check(len(fp) == 1, f"{name}: a tally findings process")
        xs = [e for e in ev if e.get("ph") == "X"]
        c.check(all(isinstance(e["ts"], (int, float)) and e["ts"] >= 0 and e["dur"] >= 0 for e in xs),
                f"{name}: times from 0, durations not negative")
        c.check(isinstance(other.get("max_events"), int) and other.get("events_left_out") == 0 and
                other.get("events_written") == len(xs) + sum(1 for e in ev if e.get("ph") in ("s", "f")),
                f"{name}: the bound and the count in otherData", str(other))
        for rk in range(ranks):
            pid = next((p for p, v in procs.items() if v == f"rank {rk}"), None)
            mine = [e for e in xs if e["pid"] == pid]
            cats = {e["cat"] for e in mine}
            c.check({"step", "cpu", "gpu"} <= cats, f"{name} rank {rk}: steps, CPU calls and GPU ranges", str(cats))
            c.check(any(t.startswith("GPU") for t in threads.get(pid, ())) and
                    any(t.startswith("thread") for t in threads.get(pid, ())), f"{name} rank {rk}: lanes as threads")
            if coll:
                c.check(any(e["name"] == coll for e in mine), f"{name} rank {rk}: {coll} calls")
        c.check(sum(1 for e in xs if e["cat"] == "wait") > 0 and
                any("waiting in collectives" in t for p, ts in threads.items() for t in ts), f"{name}: waits drawn")
        found = [e for e in xs if fp and e["pid"] == fp[0]]
        c.check(any(e["name"].endswith(" last") and "last_rank" in e["args"] for e in found),
                f"{name}: collectives with their last rank in the findings")
        # waits nest (overlapping ones on threads of their own); flows from a
        # finding to a wait, each end inside a slice of its thread
        slices = {}
        for e in xs:
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        over = 0
        waits = {}
        for e in xs:
            if e["cat"] == "wait":
                waits.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        for v in waits.values():
            v.sort()
            over += sum(1 for p, q in zip(v, v[1:]) if q[0] < p[1])
        c.check(over == 0, f"{name}: waits on one thread do not overlap", str(over))
        # every thread's slices nest (the format's rule for complete events)
        bad = []
        for key, v in slices.items():
            st = []
            for a0, a1 in sorted(v, key=lambda x: (x[0], -x[1])):
                while st and st[-1] <= a0 + 1e-9:
                    st.pop()
                if st and a1 > st[-1] + 1e-9:
                    bad.append(key)
                    continue
                st.append(a1)
        c.check(not bad, f"{name}: every thread's slices nest", str(bad[:5]))
        fl = [e for e in ev if e.get("ph") in ("s", "f")]
        inside = all(any(a0 <= e["ts"] <= a1 for a0, a1 in slices.get((e["pid"], e["tid"]), ())) for e in fl)
        c.check(len(fl) > 0 and len(fl) % 2 == 0 and other.get("flows") == len(fl) // 2 and inside,
                f"{name}: flows from the findings to the waits, bound to slices", f"{len(fl)} flow events")
        c.check(all(e["ts"] + e["dur"] <= max(x["ts"] + x["dur"] for x in xs) + 1 for e in found),
                f"{name}: findings inside the job")
        # the same bytes again
        again = os.path.join(out, name + "-again-" + fname)
        reportlib.run_tally(a.tally, ["report", os.path.join(a.corpus, folder), "--trace", again, "--quiet"])
        c.check(hashlib.sha256(open(path, "rb").read()).digest() == hashlib.sha256(open(again, "rb").read()).digest(),
                f"{name}: deterministic")

    # never over an input
    src = os.path.join(out, "in")
    os.makedirs(src)
    inp = os.path.join(src, "rank0.json")
    body = open(os.path.join(a.corpus, "hta", "trace_filter", os.listdir(os.path.join(a.corpus, "hta", "trace_filter"))[0]), "rb").read() \
        if os.path.isdir(os.path.join(a.corpus, "hta", "trace_filter")) else b"[]"
    open(inp, "wb").write(body)
    r = reportlib.run_tally(a.tally, ["report", src, "--trace", inp, "--quiet"])
    c.check(r.returncode == 4 and open(inp, "rb").read() == body, "an input is never overwritten",
            f"exit {r.returncode}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
