#!/usr/bin/env python3
"""Memory by category over time (docs/analysis.md, "Memory by category"): torch.profiler's
export_memory_timeline JSON ([times, sizes], each size 1 + 8 categories, as
torch/profiler/_memory_profiler.py's MemoryProfileTimeline writes it) into each category's bytes at
the peak, its share of the peak, its growth from the first point to the last, and a stacked-area
chart in the HTML report.

The expected numbers are worked out here from the points:
- a short timeline (5 points, a -1 time for memory there before the profile, us since the epoch
  as PyTorch 2.1+ writes them): every category at the peak, the shares, first/last/growth, the
  largest growth (OPTIMIZER_STATE: Adam's state made in the first step), times exact to the ns;
- a long one (20,001 points, one spike off any bucket edge): at most 240 points kept, the spike
  and the first and last points among them, so the peak and the growth equal the full data's;
- a category below 0 (memory freed that the profiler had not seen allocated): a negative growth,
  no category grown;
- the same through `aggregate --partial` + `merge` (sessions[].mem_categories), and beside the
  trace the same profiler exported (the trace's session takes the categories).

usage: check_memcats.py TALLY WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

MIB = 1 << 20
GIB = 1 << 30
CATS = ["PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", "UNKNOWN"]
T0 = 1764000000000000  # us since the epoch
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    check(r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}: {r.stderr[-800:]}")
    return r


def write(d, name, times, sizes):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        json.dump([times, sizes], f)


def expected(times, sizes):
    """The numbers from the full points, as docs/analysis.md defines them."""
    tot = [sum(r[1:]) for r in sizes]
    peak = max(range(len(tot)), key=lambda i: (tot[i], -i))  # the first of equals
    t = [T0 if x < 0 else x for x in times]
    growth = [sizes[-1][c + 1] - sizes[0][c + 1] for c in range(8)]
    grown = [c for c in range(8) if growth[c] > 0]
    largest = max(grown, key=lambda c: (growth[c], -c)) if grown else None
    return {
        "peak_bytes": tot[peak], "peak_at_ns": (t[peak] - t[0]) * 1000, "span_ns": (t[-1] - t[0]) * 1000,
        "at_peak": [sizes[peak][c + 1] for c in range(8)],
        "share": [round(sizes[peak][c + 1] / tot[peak], 4) if tot[peak] > 0 else None for c in range(8)],
        "first": [sizes[0][c + 1] for c in range(8)], "last": [sizes[-1][c + 1] for c in range(8)],
        "growth": growth,
        "largest": None if largest is None else {"category": CATS[largest], "bytes": growth[largest]},
    }


def check_session(s, exp, what, points=None):
    for k in ("peak_bytes", "peak_at_ns", "span_ns"):
        check(s[k] == exp[k], f"{what}: {k} {s[k]}, expected {exp[k]}")
    if points is not None:
        check(s["points"] == points, f"{what}: points {s['points']}, expected {points}")
    check([c["category"] for c in s["categories"]] == CATS, f"{what}: the categories in PyTorch's order")
    for i, c in enumerate(s["categories"]):
        for k, e in (("at_peak_bytes", "at_peak"), ("at_peak_share", "share"), ("first_bytes", "first"),
                     ("last_bytes", "last"), ("growth_bytes", "growth")):
            check(c[k] == exp[e][i], f"{what}: {CATS[i]} {k} {c[k]}, expected {exp[e][i]}")
    check(s["largest_growth"] == exp["largest"], f"{what}: largest growth {s['largest_growth']}, expected {exp['largest']}")


def short(tally, work):
    times = [-1, T0, T0 + 1000, T0 + 2000, T0 + 3000]
    sizes = [[0, 2 * GIB, 0, 0, 0, 0, 0, 0, 0],
             [0, 2 * GIB, 0, 64 * MIB, 0, 0, 0, 0, 0],
             [0, 2 * GIB, 0, 64 * MIB, 8 * MIB, GIB, 0, 0, 4 * MIB],
             [0, 2 * GIB, 4 * GIB, 64 * MIB, 0, 512 * MIB, 2 * GIB, 16 * MIB, 4 * MIB],
             [0, 2 * GIB, 4 * GIB, 0, 0, 0, 0, 0, 4 * MIB]]
    d = os.path.join(work, "short")
    write(d, "rank0_memory_timeline.json", times, sizes)
    out, md, html = (os.path.join(work, "short" + x) for x in (".json", ".md", ".html"))
    run([tally, "report", "-q", d, "--json", out, "--markdown", md, "-o", html])
    a = json.load(open(out))
    exp = expected(times, sizes)
    # worked out by hand too: the peak is the fourth point, 8 GiB + 596 MiB at 2 ms
    check(exp["peak_bytes"] == 8 * GIB + 512 * MIB + 64 * MIB + 16 * MIB + 4 * MIB, "the expected peak")
    mc = a.get("memory_categories")
    check(mc is not None and mc["categories"] == CATS and len(mc["sessions"]) == 1, f"memory_categories: {mc}")
    if mc:
        s = mc["sessions"][0]
        check_session(s, exp, "short", points=5)
        check(s["peak_at_ns"] == 2000000 and s["span_ns"] == 3000000, "times exact to the ns (us since the epoch)")
        check(s["categories"][1]["at_peak_share"] == 0.4661, "OPTIMIZER_STATE's share: 4 GiB of 8.58 GiB")
    text = open(md).read()
    sec = text[text.find("## Memory by category"):]
    check("## Memory by category" in text and "the largest growth from the first point to the last: "
          "OPTIMIZER_STATE, +4.0 GiB" in sec and "| OPTIMIZER_STATE | 4.0 GiB | 46.6% | 0 B | 4.0 GiB | +4.0 GiB |" in sec,
          "Markdown: " + sec[:900])
    page = open(html).read()
    sec = page[page.find('id="memory-by-category"'):]
    check('id="memory-by-category"' in page and sec.count('<g class="stack s') == 8 and
          "Rank 0: memory by category over time" in sec and "<td>OPTIMIZER_STATE</td><td class=\"num\">4.0 GiB</td>"
          "<td class=\"num\">46.6%</td>" in sec, "HTML: a chart of 8 areas and the table")
    # the same through a partial and merge
    part, merged = os.path.join(work, "short.partial.json"), os.path.join(work, "short-merged.json")
    run([tally, "aggregate", "-q", "--partial", d, "-o", part])
    p = json.load(open(part))
    check(len(p["sessions"][0].get("mem_categories", [])) == 5, "the partial's sessions[].mem_categories")
    run([tally, "merge", "-q", part, "-o", merged])
    b = json.load(open(merged))
    check(b.get("memory_categories") == mc, "merge of the partial: the same memory_categories")
    # beside the trace the same profiler exported: the trace's session
    both = os.path.join(work, "with-trace")
    shutil.copytree(d, both)
    trace = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                              "ts": T0, "dur": 3000}], "displayTimeUnit": "ms"}
    with open(os.path.join(both, "rank0.pt.trace.json"), "w") as f:
        json.dump(trace, f)
    out = os.path.join(work, "with-trace.json")
    run([tally, "aggregate", "-q", both, "-o", out])
    c = json.load(open(out)).get("memory_categories")
    check(c is not None and len(c["sessions"]) == 1 and c["sessions"][0]["path"].endswith("rank0.pt.trace.json"),
          f"beside its trace: the trace's session has the categories: {c and c['sessions'][0]['path']}")
    if c:
        check_session(c["sessions"][0], exp, "beside its trace")


def long(tally, work):
    n = 20001
    times = [T0 + 10 * i for i in range(n)]
    sizes = []
    for i in range(n):
        act = (i % 500) * MIB           # a saw tooth of activations
        temp = 3 * GIB if i == 12345 else 0  # one spike, off any bucket edge
        opt = 2 * GIB if i >= 7000 else 0
        sizes.append([0, GIB, opt, 0, temp, act, 0, 0, 0])
    sizes[-1][6] = 8 * MIB  # the last point: a gradient kept
    d = os.path.join(work, "long")
    write(d, "rank0_memory_timeline.json", times, sizes)
    out, part = os.path.join(work, "long.json"), os.path.join(work, "long.partial.json")
    run([tally, "aggregate", "-q", d, "-o", out])
    mc = json.load(open(out)).get("memory_categories")
    exp = expected(times, sizes)
    check(exp["peak_at_ns"] == 123450 * 1000, "the expected peak: the spike")
    if mc:
        check_session(mc["sessions"][0], exp, "long", points=240)
    run([tally, "aggregate", "-q", "--partial", d, "-o", part])
    pts = json.load(open(part))["sessions"][0]["mem_categories"]
    ts = [x[0] for x in pts]
    check(len(pts) == 240 and ts == sorted(ts), f"240 points kept, in time order: {len(pts)}")
    check(any(x[4] == 3 * GIB for x in pts), "the spike is kept")


def negative(tally, work):
    times = [T0, T0 + 500, T0 + 1000]
    sizes = [[0, GIB, 0, 0, 0, 64 * MIB, 0, 0, 0],
             [0, GIB, 0, 0, 0, 128 * MIB, 0, 0, 0],
             [0, GIB, 0, 0, 0, 0, 0, 0, -32 * MIB]]
    d = os.path.join(work, "negative")
    write(d, "rank0_memory_timeline.json", times, sizes)
    out = os.path.join(work, "negative.json")
    run([tally, "aggregate", "-q", d, "-o", out])
    mc = json.load(open(out)).get("memory_categories")
    exp = expected(times, sizes)
    check(exp["largest"] is None and exp["growth"][7] == -32 * MIB, "expected: nothing grew")
    if mc:
        check_session(mc["sessions"][0], exp, "negative", points=3)


def main():
    tally, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    short(tally, work)
    long(tally, work)
    negative(tally, work)
    # a trace without a memory timeline: no memory_categories at all (aggregates keep their bytes)
    d = os.path.join(work, "none")
    os.makedirs(d)
    with open(os.path.join(d, "rank0.pt.trace.json"), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1,
                                    "dur": 3}]}, f)
    out = os.path.join(work, "none.json")
    run([tally, "aggregate", "-q", d, "-o", out])
    check("memory_categories" not in json.load(open(out)), "no timeline: no memory_categories")
    if fails:
        print(f"{len(fails)} check(s) failed")
        return 1
    print("memory by category: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
