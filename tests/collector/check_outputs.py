#!/usr/bin/env python3
"""Check the files libtally wrote: reports against the schema, traces against the reports.

usage: check_outputs.py [--schema FILE] [--trace FILE] REPORT_OR_DIR...

Every *.report.json given (or found in a given directory) is validated against
schema/tally-report.schema.json (Draft 2020-12). When the report says a trace was
written (trace.enabled, and no trace.lost), the trace (gzip or plain, from report.trace.path unless --trace is given
for a single report) is parsed back and checked against the report:

  - every event has ph, name, pid (the report's pid), tid; every non-metadata event
    has ts >= 0; every X event has dur >= 0
  - every (pid, tid) used by an event has thread_name metadata, the pid process_name
  - distributedInfo.rank == report rank; distributedInfo.world_size == report
    world_size (an unknown world size, null in the report, is written as 1)
  - X events + counter C events == trace.events_recorded (block X events == blocks.count)
  - when nothing was dropped: X events per (category, name) == the section and
    iteration counts, counter C events per name == the counter counts, and the sum
    of a name's X durations == its total_ns within rounding (0.5 ns per event)
  - memory-snapshot and tally_event instants == the report's lists

Exit status 0 when everything holds, 1 with the problems on stderr otherwise. On
stdout, a JSON summary of what was found (per report: X counts and duration sums,
C counts and last args, per-thread names and X counts) that the C tests assert on.
Run it with the Python that has jsonschema (Debian's /usr/bin/python3).
"""
import argparse
import gzip
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("check_outputs.py needs jsonschema (Debian: python3-jsonschema); run it with /usr/bin/python3")

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "..", "schema", "tally-report.schema.json")


def load_trace(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def check_trace(report, trace, problems):
    """Check one trace against its report; return the summary of the trace."""
    def bad(msg):
        problems.append(msg)

    summary = {"x": {}, "c": {}, "i": {}, "threads": {}, "events": 0,
               "distributedInfo": trace.get("distributedInfo")}
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        bad("traceEvents is not a list")
        return summary
    summary["events"] = len(events)

    di = trace.get("distributedInfo") or {}
    if di.get("rank") != report["rank"]:
        bad(f"distributedInfo.rank {di.get('rank')} != report rank {report['rank']}")
    ws = report["world_size"]
    if di.get("world_size") != (ws if ws is not None else 1):
        bad(f"distributedInfo.world_size {di.get('world_size')} != report world_size {ws}")

    pid = report["pid"]
    process_named = set()
    thread_names = {}
    used = set()
    x_total = c_counter = x_blocks = 0
    for n, e in enumerate(events):
        if not isinstance(e, dict):
            bad(f"event {n} is not an object")
            continue
        ph, name = e.get("ph"), e.get("name")
        if not isinstance(ph, str) or not isinstance(name, str):
            bad(f"event {n} lacks ph or name: {e}")
            continue
        if e.get("pid") != pid:
            bad(f"event {n} has pid {e.get('pid')}, the report's is {pid}")
        tid = e.get("tid")
        if not isinstance(tid, int):
            bad(f"event {n} has no integer tid: {e}")
            continue
        if ph == "M":
            args = e.get("args") or {}
            if name == "process_name":
                process_named.add(e["pid"])
            elif name == "thread_name":
                if not isinstance(args.get("name"), str):
                    bad(f"thread_name without a name: {e}")
                thread_names[(e["pid"], tid)] = args.get("name")
            continue
        used.add((e["pid"], tid))
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            bad(f"event {n} ({name}) has ts {ts!r}")
        cat = e.get("cat", "")
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                bad(f"X event {n} ({name}) has dur {dur!r}")
                dur = 0
            if cat == "block":
                x_blocks += 1  # tally_block_begin/end: listed in the report's blocks, not events_recorded
            else:
                x_total += 1
            key = f"{cat}/{name}"
            slot = summary["x"].setdefault(key, {"count": 0, "dur_ns": 0.0})
            slot["count"] += 1
            slot["dur_ns"] += dur * 1000.0
            th = summary["threads"].setdefault(str(tid), {"name": None, "x": {}})
            th["x"][key] = th["x"].get(key, 0) + 1
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args:
                bad(f"C event {n} ({name}) has no args")
                args = {}
            for k, v in args.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    bad(f"C event {n} ({name}) has a non-numeric {k}: {v!r}")
            if cat == "counter":
                c_counter += 1
            key = f"{cat}/{name}"
            slot = summary["c"].setdefault(key, {"count": 0, "last": None})
            slot["count"] += 1
            slot["last"] = args
        elif ph == "i":
            key = f"{cat}/{name}"
            summary["i"][key] = summary["i"].get(key, 0) + 1
        else:
            bad(f"event {n} has an unexpected ph {ph!r}")

    for p, t in sorted(used):
        if (p, t) not in thread_names:
            bad(f"(pid {p}, tid {t}) has events but no thread_name metadata")
        if p not in process_named:
            bad(f"pid {p} has events but no process_name metadata")
    for (p, t), tname in thread_names.items():
        summary["threads"].setdefault(str(t), {"name": None, "x": {}})["name"] = tname

    if x_blocks != report.get("blocks", {}).get("count", 0):
        bad(f"{x_blocks} block events in the trace, report lists {report.get('blocks', {}).get('count', 0)} blocks")
    tr = report["trace"]
    if x_total + c_counter != tr["events_recorded"]:
        bad(f"{x_total} X + {c_counter} counter events in the trace, "
            f"report says events_recorded {tr['events_recorded']}")
    if tr["events_dropped"] == 0:
        for cat, section in (("section", "sections"), ("iteration", "iterations")):
            for s in report[section]:
                slot = summary["x"].get(f"{cat}/{s['name']}", {"count": 0, "dur_ns": 0.0})
                if slot["count"] != s["count"]:
                    bad(f"{cat} {s['name']!r}: {slot['count']} X events, report count {s['count']}")
                    continue
                tol = 0.5 * s["count"] + 2 + 1e-9 * s["total_ns"]
                if abs(slot["dur_ns"] - s["total_ns"]) > tol:
                    bad(f"{cat} {s['name']!r}: X durations sum to {slot['dur_ns']:.1f} ns, "
                        f"report total_ns {s['total_ns']}")
            names = {s["name"] for s in report[section]}
            for key in summary["x"]:
                c, _, name = key.partition("/")
                if c == cat and name not in names:
                    bad(f"X events of {cat} {name!r} that the report does not list")
        for c in report["counters"]:
            got = summary["c"].get(f"counter/{c['name']}", {"count": 0})["count"]
            if got != c["count"]:
                bad(f"counter {c['name']!r}: {got} C events, report count {c['count']}")
    labels = {}
    for s in report["memory_snapshots"]:
        labels[s["label"]] = labels.get(s["label"], 0) + 1
    for label, count in labels.items():
        if summary["i"].get(f"memory/{label}", 0) != count:
            bad(f"memory snapshot {label!r}: {summary['i'].get(f'memory/{label}', 0)} "
                f"instants, report has {count}")
    ev = {}
    for e in report["events"]:
        ev[e["name"]] = ev.get(e["name"], 0) + 1
    for name, count in ev.items():
        if summary["i"].get(f"event/{name}", 0) != count:
            bad(f"event {name!r}: {summary['i'].get(f'event/{name}', 0)} instants, report has {count}")
    if report["sampler"] is not None:
        # a counter event per point that has the reading (a point of the GPU
        # part alone has no cpu_pct; TALLY_SAMPLE may turn readings off)
        for key, counter in (("cpu_pct", "cpu_pct"), ("rss_bytes", "memory_bytes"), ("load1", "load1"),
                             ("disk_read_bytes_per_s", "disk_bytes_per_s"),
                             ("device_read_bytes_per_s", "device_bytes_per_s")):
            want = sum(1 for pt in report["sampler"]["series"] if key in pt)
            got = summary["c"].get(f"sampler/{counter}", {"count": 0})["count"]
            if got != want:
                bad(f"{got} sampler {counter} events, report series has {want} points with {key}")
    return summary


def check_report(path, trace_path, validator, problems):
    def bad(msg):
        problems.append(f"{path}: {msg}")

    summary = {"report": path, "trace": None, "valid": False}
    try:
        with open(path, "rb") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        bad(f"cannot read: {e}")
        return summary
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    for e in errors[:20]:
        bad(f"schema: {'/'.join(str(p) for p in e.path)}: {e.message}")
    if errors:
        return summary
    summary["valid"] = True
    if not report["trace"]["enabled"]:
        if report["trace"]["path"] is not None:
            bad("trace disabled but trace.path is set")
        return summary
    if report["trace"].get("lost") is not None:
        # the trace could not be written; the report was written without it
        if report["trace"]["path"] is not None:
            bad("trace lost but trace.path is set")
        summary["trace_lost"] = report["trace"]["lost"]
        return summary
    if report["trace"]["path"] is None and trace_path is None:
        bad("trace enabled, not lost, but trace.path is null")
        return summary
    trace_path = trace_path or report["trace"]["path"]
    summary["trace"] = trace_path
    try:
        trace = load_trace(trace_path)
    except (OSError, ValueError, EOFError) as e:
        bad(f"trace {trace_path}: cannot read: {e}")
        return summary
    tproblems = []
    summary.update(check_trace(report, trace, tproblems))
    problems.extend(f"{path}: trace {trace_path}: {p}" for p in tproblems)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("--trace", help="the trace of the (single) report, instead of report.trace.path")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()

    with open(args.schema, "rb") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    reports = []
    for p in args.paths:
        if os.path.isdir(p):
            reports += sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".report.json"))
        else:
            reports.append(p)
    problems = []
    if not reports:
        problems.append("no report to check")
    if args.trace and len(reports) != 1:
        problems.append("--trace needs exactly one report")
    out = {}
    for r in reports:
        out[os.path.basename(r)] = check_report(r, args.trace, validator, problems)
    json.dump({"reports": out}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    for p in problems[:200]:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
