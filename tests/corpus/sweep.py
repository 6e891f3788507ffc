#!/usr/bin/env python3
"""Every file of ../shared/corpus through `tally inspect --json`, checked against
an independent reading with Python's json module.

The corpus is swept three ways: as a directory, packed into a .zip, and packed
into a .tar.gz (built here, in a temporary directory). For each file:

- Python can parse it and it is a trace (a list, or an object with a
  "traceEvents" list): tally must call it a trace, count exactly the objects
  of traceEvents, and take the rank from distributedInfo when it is there.
- Python can parse it and it is some other object: tally must recognize the
  report formats (FramePack, Inferix, tally) listed in REPORTS and skip the rest
  with a warning that says what they are.
- Python cannot parse it: tally must not crash and must say where the problem
  is (a warning with a byte offset or a line), whether it kept events or not.

usage: sweep.py TALLY_BINARY CORPUS_DIR
"""
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

# Report documents and the format and rank tally must find in them.
REPORTS = {
    "framepack/generated/profiling_report.json": ("framepack-report", None),
    "framepack/generated/as_demo_gradio/profiling_report.json": ("framepack-report", None),
    "inferix/generated/multi_rank_reports/rank_0/profiling_report_t2v_generation_20261121_215140.json": ("inferix-report", 0),
    "inferix/generated/multi_rank_reports/rank_1/profiling_report_t2v_generation_20261121_215140.json": ("inferix-report", 1),
}
# Not profiles, and the words tally's warning must use to say what they are.
NOT_PROFILES = {
    "inferix/generated/multi_rank_reports/rank_0/raw_profiling_data_t2v_generation_20261121_215140.json": "raw",
    "inferix/generated/multi_rank_reports/rank_1/raw_profiling_data_t2v_generation_20261121_215140.json": "raw",
    "inferix/generated/aggregated_report_from_real_layout.json": "aggregate",
    "inferix/generated/summary_shaped/aggregated_report.json": "aggregate",
    "inferix/generated/summary_shaped/inputs/rank_0/summary.json": "summary",
    "inferix/generated/summary_shaped/inputs/rank_1/summary.json": "summary",
}
TRACE_FORMATS = {"chrome-trace", "pytorch-profiler", "tally-trace"}

failures = []


def fail(msg):
    failures.append(msg)


def python_reading(path):
    """(kind, value): ("trace", events, rank) / ("object", keys) / ("broken", why) / ("other", why)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except Exception as e:  # truncated gzip: broken
            return ("broken", str(e))
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    try:
        doc = json.loads(data.decode("utf-8"))
    except Exception as e:
        stripped = data.lstrip()
        if not stripped[:1] in (b"[", b"{"):
            return ("other", "not JSON")
        return ("broken", str(e))
    if isinstance(doc, list):
        return ("trace", sum(isinstance(e, dict) for e in doc), None)
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        info = doc.get("distributedInfo")
        rank = info.get("rank") if isinstance(info, dict) else None
        return ("trace", sum(isinstance(e, dict) for e in doc["traceEvents"]), rank)
    if isinstance(doc, dict):
        return ("object", sorted(doc.keys()))
    return ("other", "JSON but not an object or array")


def inspect(tally, args):
    r = subprocess.run([tally, "inspect", "--json", "--jobs", "2"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode not in (0, 3) or r.returncode < 0:
        fail(f"tally inspect {args}: exit {r.returncode}: {r.stderr.decode()[-2000:]}")
        return []
    try:
        return json.loads(r.stdout)
    except Exception as e:
        fail(f"tally inspect {args}: output is not JSON: {e}")
        return []


def inspect_text(tally, corpus, by_path):
    """The whole corpus through `tally inspect` in text too (what crashed on events
    without "cat"): it must not crash (a signal), and for every input its event
    count must be the one --json gave. Every category listed in the JSON must have
    been counted (no {"": 0} for events without "cat")."""
    r = subprocess.run([tally, "inspect", "--jobs", "2", corpus], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode < 0 or r.returncode not in (0, 3):
        fail(f"text: tally inspect exit {r.returncode}: {r.stderr.decode()[-1000:]}")
        return
    events, path = {}, None
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if line and not line.startswith(" "):
            path = os.path.relpath(line, corpus)
        elif path and line.startswith("  events       "):
            events[path] = int(line.split()[1])
    for rel, o in by_path.items():
        cats = o.get("categories", {})
        if any(v <= 0 for v in cats.values()):
            fail(f"json:{rel}: a category listed with no events: {cats}")
        if sum(cats.values()) > o.get("events", 0):
            fail(f"json:{rel}: categories count {sum(cats.values())} > {o.get('events')} events")
        if not o.get("skipped") and o.get("format") != "unreadable" and events.get(rel) != o.get("events"):
            fail(f"text:{rel}: {events.get(rel)} events in text, {o.get('events')} in JSON")


def check(rel, got, expect, where):
    kind = expect[0]
    label = f"{where}:{rel}"
    fmt = got.get("format")
    warnings = got.get("warnings", [])
    if kind == "trace":
        _, events, rank = expect
        if got.get("events") == 0 or (events and got.get("by_phase", {}).get("M") == got.get("events")):
            # nothing to measure: not a usable rank, and it says so
            if not got.get("skipped") or not any("no events" in w for w in warnings):
                fail(f"{label}: a trace without events must be skipped with 'no events': {warnings}")
            return
        if fmt not in TRACE_FORMATS:
            fail(f"{label}: format {fmt}, expected a trace ({warnings[:2]})")
            return
        if got.get("events") != events:
            fail(f"{label}: {got.get('events')} events, Python counts {events}")
        if isinstance(rank, int) and (got.get("rank") != rank or got.get("rank_source") != "content"):
            fail(f"{label}: rank {got.get('rank')} from {got.get('rank_source')}, distributedInfo says {rank}")
    elif kind == "object":
        if rel in REPORTS:
            want_fmt, want_rank = REPORTS[rel]
            if fmt != want_fmt:
                fail(f"{label}: format {fmt}, expected {want_fmt} ({warnings[:2]})")
            if want_rank is not None and got.get("rank") != want_rank:
                fail(f"{label}: rank {got.get('rank')}, expected {want_rank}")
        elif rel in NOT_PROFILES:
            if not got.get("skipped"):
                fail(f"{label}: read as {fmt}, but it is not a profile")
            elif not any(NOT_PROFILES[rel] in w.lower() for w in warnings):
                fail(f"{label}: skipped without saying it is {NOT_PROFILES[rel]}: {warnings}")
        elif not got.get("skipped") and fmt not in TRACE_FORMATS:
            fail(f"{label}: unexpected format {fmt} for an object with keys {expect[1][:8]}")
    elif kind == "broken":
        precise = any(("offset" in w or "line" in w or "byte" in w) for w in warnings)
        if not precise:
            fail(f"{label}: broken input ({expect[1][:60]}) without a precise warning: {warnings}")


def main():
    tally, corpus = sys.argv[1], os.path.abspath(sys.argv[2])
    files = []
    for root, dirs, names in os.walk(corpus):
        dirs.sort()
        for n in sorted(names):
            files.append(os.path.relpath(os.path.join(root, n), corpus))
    expect = {rel: python_reading(os.path.join(corpus, rel)) for rel in files}
    relevant = {rel: e for rel, e in expect.items() if e[0] != "other"}

    # 1. the directory
    by_path = {os.path.relpath(o["path"], corpus): o for o in inspect(tally, [corpus]) if "path" in o}
    # 2. a .zip and 3. a .tar.gz of the corpus
    with tempfile.TemporaryDirectory() as tmp:
        zpath, tpath = os.path.join(tmp, "corpus.zip"), os.path.join(tmp, "corpus.tar.gz")
        with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
            for rel in files:
                z.write(os.path.join(corpus, rel), rel)
        with tarfile.open(tpath, "w:gz") as t:
            for rel in files:
                t.add(os.path.join(corpus, rel), rel)
        by_zip = {o["path"].split(":", 1)[1]: o for o in inspect(tally, [zpath]) if ":" in o.get("path", "")}
        by_tar = {o["path"].split(":", 1)[1]: o for o in inspect(tally, [tpath]) if ":" in o.get("path", "")}

    inspect_text(tally, corpus, by_path)
    checked = 0
    for where, results in (("dir", by_path), ("zip", by_zip), ("tar.gz", by_tar)):
        for rel, e in relevant.items():
            # A corpus .zip inside our archives is an archive in an archive: not read.
            if where != "dir" and rel.endswith(".zip"):
                continue
            if rel not in results:
                # A nested .zip found in the directory walk is read member by member.
                if where == "dir" and rel.endswith(".zip"):
                    continue
                fail(f"{where}:{rel}: missing from tally's output")
                continue
            check(rel, results[rel], e, where)
            checked += 1
    traces = sum(1 for e in relevant.values() if e[0] == "trace")
    broken = sum(1 for e in relevant.values() if e[0] == "broken")
    print(f"corpus sweep: {len(files)} files, {traces} traces, {broken} broken, {checked} checks")
    for f in failures:
        print("FAIL", f)
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
