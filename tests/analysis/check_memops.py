#!/usr/bin/env python3
"""Memory by operator (docs/analysis.md): PyTorch profiler [memory] instants under the operator
open on their thread, followed to their frees, with each operator's share of the device peak.

Two ranks of hand-made Kineto traces (profile_memory=True shape: "[memory]" instants with
"Bytes", "Addr", "Total Allocated", "Device Type", "Device Id"), written out of time order (the
instants first) so the attribution cannot depend on file order. The expected numbers are worked
out here from the events: allocations and bytes per operator, the innermost operator (aten::mm
inside aten::linear), an instant at an operator's start (inside) and at its end (outside), another
thread's operator, a host allocation (not counted), a free of memory allocated before the trace
(matched to nothing), and the peak contribution at each rank's highest Total Allocated.

And torch.profiler's export_memory_timeline JSON ([times, sizes], sizes 1 + 8 categories): read as
the memory series (the categories added up) and one snapshot per category at the peak, on its own
and beside the trace the same profiler exported (then one rank: the timeline is the trace's
companion).

usage: check_memops.py TALLY WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

MIB = 1 << 20
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def trace(rank, mm_bytes):
    ops, mem = [], []
    base = 1024 * MIB  # allocated before the trace (weights): no instant of its own
    total = [base]

    def op(name, ts, dur, tid=1):
        ops.append(dict(ph="X", cat="cpu_op", name=name, pid=7, tid=tid, ts=ts, dur=dur))

    def m(ts, nbytes, addr, tid=1, host=False):
        if not host:
            total[0] += nbytes
        mem.append(dict(ph="i", s="t", cat="cpu_instant_event", name="[memory]", pid=7, tid=tid, ts=ts,
                        args={"Device Type": 0 if host else 1, "Device Id": -1 if host else 0, "Addr": addr,
                              "Bytes": nbytes, "Total Allocated": total[0] if not host else 5 * MIB,
                              "Total Reserved": 2048 * MIB}))

    op("ProfilerStep#1", 0, 1000)
    op("aten::linear", 0, 100)
    op("aten::mm", 10, 50)
    m(20, mm_bytes, 0x1000)            # aten::mm (innermost)
    m(70, 16 * MIB, 0x2000)            # aten::linear, after its aten::mm ended
    m(150, 8 * MIB, 0x3000)            # inside ProfilerStep#1 only: a user annotation is no operator
    op("aten::relu", 200, 60)
    m(210, 32 * MIB, 0x4000)           # aten::relu: the peak
    m(250, -mm_bytes, 0x1000)          # aten::mm's output freed (inside aten::relu: no new allocation)
    op("aten::add", 300, 100, tid=2)
    m(310, 4 * MIB, 0x5000, tid=2)     # another thread's operator, after the peak
    m(320, 1 * MIB, 0x6000, tid=2, host=True)  # the CPU allocator: not counted
    m(390, -4 * MIB, 0x5000, tid=2)
    m(500, -2 * MIB, 0x9999)           # allocated before the trace: matched to nothing
    op("aten::copy_", 600, 50)
    m(600, 2 * MIB, 0x7000)            # at aten::copy_'s start: inside it
    m(650, 1 * MIB, 0x8000)            # at its end: outside
    # ops already in the ProfilerStep's user_annotation are not user_annotation here: make the step
    # an annotation as Kineto writes it
    ops[0]["cat"] = "user_annotation"
    ev = mem + ops  # out of time order: the instants first
    return dict(schemaVersion=1, distributedInfo=dict(rank=rank, world_size=2), traceEvents=ev,
                deviceProperties=[dict(id=0, name="NVIDIA H100 80GB HBM3", totalGlobalMem=85520809984)])


def main():
    tally, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for rank, mm in ((0, 64 * MIB), (1, 128 * MIB)):
        with open(os.path.join(work, f"rank{rank}.pt.trace.json"), "w") as f:
            json.dump(trace(rank, mm), f)
    out = os.path.join(work, "agg.json")
    md = os.path.join(work, "summary.md")
    html = os.path.join(work, "report.html")
    r = subprocess.run([tally, "report", "-q", work, "--json", out, "--markdown", md, "-o", html],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr}")
    a = json.load(open(out))
    m = a.get("memory_by_op")
    check(m is not None, "memory_by_op present")
    if m is None:
        return 1
    rows = {x["name"]: x for x in m["ops"]}
    # per rank: mm 1 allocation (64 / 128 MiB), linear 16, outside 8 + 1, relu 32, add 4, copy_ 2
    expect = {
        "aten::mm": (2, 192 * MIB, 128 * MIB, 1),
        "aten::linear": (2, 32 * MIB, 16 * MIB, 0),
        "aten::relu": (2, 64 * MIB, 32 * MIB, 0),
        "": (4, 18 * MIB, 8 * MIB, 0),
        "aten::add": (2, 8 * MIB, 0, 0),
        "aten::copy_": (2, 4 * MIB, 0, 0),
    }
    check(set(rows) == set(expect), f"operators: {sorted(rows)}")
    for name, (allocs, nbytes, peak, peak_rank) in expect.items():
        x = rows.get(name)
        if x is None:
            continue
        check(x["allocs"] == allocs, f"{name or '(outside)'}: allocs {x['allocs']}, expected {allocs}")
        check(x["bytes"] == nbytes, f"{name or '(outside)'}: bytes {x['bytes']}, expected {nbytes}")
        check(x["peak_bytes"] == peak, f"{name or '(outside)'}: peak contribution {x['peak_bytes']}, expected {peak}")
        if peak > 0:
            check(x["peak_rank"] == peak_rank, f"{name}: peak rank {x['peak_rank']}, expected {peak_rank}")
    # rank 1's peak: 1024 + 128 + 16 + 8 + 32 MiB
    check(m["peak_bytes"] == (1024 + 128 + 16 + 8 + 32) * MIB, f"peak {m['peak_bytes']}")
    check([x["name"] for x in m["ops"]][:2] == ["aten::mm", "aten::relu"], "by bytes allocated")
    for s in a["sessions"]:
        peak = s.get("mem_ops_peak")
        live = sum(op[3] for op in s["mem_ops"] if op[3] > 0)
        check(peak is not None and live <= peak - 1024 * MIB, f"rank {s['rank']}: contributions within the peak")
    text = open(md).read()
    check("## Memory by operator" in text and "| `aten::mm` | 2 | 192.0 MiB | 128.0 MiB" in text,
          "Markdown table: " + text[text.find("## Memory by operator"):][:600])
    page = open(html).read()
    check('id="memory-by-op"' in page and "(outside any operator)" in page, "HTML table")
    memory_timeline(tally, work)
    framepack_memory_log(tally, work)
    if fails:
        print(f"{len(fails)} check(s) failed")
        return 1
    print("memory by operator, memory timeline: all checks passed")
    return 0


def framepack_memory_log(tally, work):
    """FramePack's profiling_results/ folder: memory_log.json's snapshots are the report's memory series."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "framepack-profiling_results")
    log = json.load(open(os.path.join(folder, "memory_log.json")))
    out = os.path.join(work, "framepack.json")
    r = subprocess.run([tally, "aggregate", "-q", folder, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"framepack folder: exit {r.returncode}: {r.stderr}")
    a = json.load(open(out))
    check(len(a["ranks"]) == 1, f"framepack folder: one rank, not {len(a['ranks'])}")
    by = {os.path.basename(s["path"]): s for s in a["sessions"]}
    m = by.get("memory_log.json")
    check(m is not None and m["format"] == "framepack-memory-log" and m["companion_of"].endswith("profiling_report.json"),
          f"memory_log.json: the report's companion: {m and (m['format'], m['companion_of'])}")
    rep = by.get("profiling_report.json")
    mem = rep["mem"] if rep else []
    want = [x["allocated_mb"] * MIB for x in log]
    got = [pt[1] if isinstance(pt, list) else pt.get("allocated") for pt in mem]
    check(got == want, f"the report's memory series is the log's snapshots: {got} vs {want}")
    # alone, the log is a rank of its own
    alone = os.path.join(work, "memlog-alone")
    os.makedirs(alone)
    shutil.copy(os.path.join(folder, "memory_log.json"), alone)
    out = os.path.join(work, "memlog.json")
    subprocess.run([tally, "aggregate", "-q", alone, "-o", out], capture_output=True, text=True)
    b = json.load(open(out))
    check(b["inputs"][0]["format"] == "framepack-memory-log" and len(b["sessions"][0]["snapshots"]) == len(log),
          "memory_log.json alone: its snapshots")


CATEGORIES = ["PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL",
              "UNKNOWN"]


def memory_timeline(tally, work):
    gib = 1 << 30
    t0 = 1764000000000000  # us since the epoch, as PyTorch 2.1+ writes them
    times = [-1, t0, t0 + 1000, t0 + 2000, t0 + 3000]  # -1: memory there before the profile
    sizes = [[0, 2 * gib, 0, 0, 0, 0, 0, 0, 0],
             [0, 2 * gib, 0, 64 * MIB, 0, 0, 0, 0, 0],
             [0, 2 * gib, 0, 64 * MIB, 8 * MIB, gib, 0, 0, 4 * MIB],
             [0, 2 * gib, 4 * gib, 64 * MIB, 0, 512 * MIB, 2 * gib, 16 * MIB, 4 * MIB],
             [0, 2 * gib, 4 * gib, 0, 0, 0, 0, 0, 4 * MIB]]
    peak_row = sizes[3]
    d = os.path.join(work, "timeline")
    os.makedirs(d)
    with open(os.path.join(d, "rank0_memory_timeline.json"), "w") as f:
        json.dump([times, sizes], f)
    out = os.path.join(work, "timeline.json")
    r = subprocess.run([tally, "aggregate", "-q", d, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"memory timeline: exit {r.returncode}: {r.stderr}")
    a = json.load(open(out))
    s = a["sessions"][0]
    check(a["inputs"][0]["format"] == "torch-memory-timeline", f"format {a['inputs'][0]['format']}")
    check(s["peak_allocated"] == sum(peak_row), f"peak {s['peak_allocated']}, expected {sum(peak_row)}")
    snaps = {x[0]: x for x in s["snapshots"]} if s["snapshots"] and isinstance(s["snapshots"][0], list) else \
        {x["label"]: x for x in s["snapshots"]}
    for i, c in enumerate(CATEGORIES):
        x = snaps.get(f"{c} at the peak")
        got = (x[2] if isinstance(x, list) else x.get("allocated")) if x is not None else None
        check(got == peak_row[i + 1], f"{c} at the peak: {got}, expected {peak_row[i + 1]}")
    check(len(s["mem"]) > 0, "the memory series")
    # beside the trace of the same profiler: one rank
    both = os.path.join(work, "timeline-and-trace")
    shutil.copytree(d, both)
    with open(os.path.join(both, "rank0.pt.trace.json"), "w") as f:
        json.dump(trace(0, 64 * MIB), f)
    out = os.path.join(work, "both.json")
    r = subprocess.run([tally, "aggregate", "-q", both, "-o", out], capture_output=True, text=True)
    b = json.load(open(out))
    counted = [x for x in b["inputs"] if x["companion_of"] is None]
    check(len(b["ranks"]) == 1 and len(counted) == 1 and counted[0]["format"] == "pytorch-profiler",
          f"timeline and trace: one rank, the trace's: {[(x['path'], x['companion_of']) for x in b['inputs']]}")
    tr = [x for x in b["sessions"] if x["companion_of"] is None][0]
    check(any("GRADIENT at the peak" in json.dumps(x) for x in tr["snapshots"]), "the trace's session has the categories")


if __name__ == "__main__":
    sys.exit(main())
