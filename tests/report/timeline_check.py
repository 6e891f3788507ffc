#!/usr/bin/env python3
"""The timelines on real inputs (docs/analysis.md, "Timelines", "Steps", "Waits").

- h200-ddp-gloo (4 ranks, gloo over the CPU, 17 GPU streams a rank): every
  rank has CPU thread lanes, gloo's run loop among them with its
  gloo:all_reduce calls drawn by name, stream 7 and one lane of its 16 side
  streams ("GPU 0, 16 other streams"), no other GPU lane, and a row of its
  waits in collectives drawn in the wait color;
- DLRM (8 ranks, NCCL): CPU threads first, then streams 7 and 84 of each
  rank, and a row of waits for every rank that waited;
- the collector's demo (reports with their companion traces): every step
  mark stands where a diffusion_step call of the trace starts (the report
  alone has no start times).

usage: timeline_check.py --tally TALLY --corpus CORPUS_DIR --demo DEMO_DIR --out OUT_DIR
"""
import argparse
import glob
import gzip
import json
import html
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402


def timelines(path):
    s = open(path, encoding="utf-8").read()
    i = s.index('<section id="timelines"')
    return s[i:s.index("</section>", i)]


def lanes(sec):
    """(label, note, classes of its paths) of every lane, in order."""
    out = []
    for m in re.finditer(r'<g><title>(.*?)</title><rect class="lane"[^>]*/>(.*?)</g>', sec, re.S):
        title = html.unescape(m.group(1))
        label, _, note = title.partition(": ")
        out.append((label, note, set(re.findall(r'<path class="([a-z]+) l\d"', m.group(2)))))
    return out


def calls(sec):
    """(name, x) of every call drawn by name."""
    return [(html.unescape(m.group(1)), float(m.group(2)))
            for m in re.finditer(r'<g class="call"><title>([^\n<]*)\n[^<]*</title><rect x="([\d.]+)"', sec)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--demo", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    c = reportlib.Checks("timeline_check")
    out = reportlib.fresh_dir(a.out)

    def report(name, inp):
        page = os.path.join(out, name + ".html")
        r = reportlib.run_tally(a.tally, ["report", inp, "-o", page, "--quiet"])
        c.check(r.returncode == 0, f"{name}: tally report", r.stderr.decode(errors="replace")[-400:])
        return timelines(page) if r.returncode == 0 else ""

    # gloo DDP
    sec = report("gloo", os.path.join(a.corpus, "h200-ddp-gloo"))
    ls = lanes(sec)
    for r in range(4):
        mine = [x for x in ls if x[0].startswith(f"rank {r} \u00b7 ")]
        cpu = [x for x in mine if "thread" in x[0]]
        gpu = [x for x in mine if "GPU" in x[0]]
        c.check(any("gloo_runloop" in x[0] for x in cpu), f"gloo rank {r}: gloo's run loop has a lane",
                str([x[0] for x in mine]))
        c.check(sorted(x[0].split(" \u00b7 ")[1] for x in gpu) == ["GPU 0 stream 7", "GPU 0, 16 other streams"],
                f"gloo rank {r}: stream 7 and 16 side streams in one lane", str([x[0] for x in gpu]))
        first_gpu = min((i for i, x in enumerate(mine) if "GPU" in x[0]), default=-1)
        c.check(all("GPU" not in x[0] for x in mine[:first_gpu]) and first_gpu > 0,
                f"gloo rank {r}: CPU threads first")
        w = [x for x in mine if x[0].endswith("waiting in collectives")]
        c.check(len(w) == 1 and "wait" in w[0][2] and re.search(r"waited \S+ \S+ in \d+ collective", w[0][1]),
                f"gloo rank {r}: a row of waits in the wait color", str(w))
    c.check(sum(1 for n, _ in calls(sec) if n == "gloo:all_reduce") >= 8, "gloo: gloo:all_reduce calls drawn by name")

    # DLRM
    sec = report("dlrm", os.path.join(a.corpus, "param-dlrm_kineto-8rank"))
    ls = lanes(sec)
    waits = 0
    for r in range(8):
        mine = [x[0].split(" \u00b7 ")[1] for x in lanes(sec) if x[0].startswith(f"rank {r} \u00b7 ")]
        c.check(any(x.startswith("thread") for x in mine), f"dlrm rank {r}: CPU thread lanes", str(mine))
        c.check(f"GPU {r} stream 7" in mine and f"GPU {r} stream 84" in mine, f"dlrm rank {r}: streams 7 and 84",
                str(mine))
        waits += "waiting in collectives" in mine
    c.check(waits >= 7, "dlrm: rows of waits", str(waits))

    # the demo: steps at the trace's iterations
    sec = report("demo", a.demo)
    xs = [x for n, x in calls(sec) if n == "diffusion_step"]
    marks = [(html.unescape(m.group(2)), float(m.group(1)))
             for m in re.finditer(r'<line class="step" x1="([\d.]+)"[^>]*><title>([^<]*)</title>', sec)]
    c.check(len(marks) == 40 and len(xs) >= 40, "demo: 40 step marks and the iterations drawn",
            f"{len(marks)} marks, {len(xs)} calls")
    off = [(t, x) for t, x in marks if not any(abs(x - cx) < 0.6 for cx in xs)]
    c.check(not off, "demo: every step mark at a diffusion_step call's start", str(off[:3]))

    # the demo's steps by category (libtally reports: the companion traces' iterations and sections), against
    # the traces read here: each diffusion_step's time covered by a section is CPU exec (data loading where
    # the section is named so), the rest other
    agg = os.path.join(out, "demo.json")
    r = reportlib.run_tally(a.tally, ["aggregate", a.demo, "-o", agg])
    c.check(r.returncode == 0, "demo: tally aggregate", r.stderr.decode(errors="replace")[-400:])
    doc = json.load(open(agg))
    got = {rk["rank"]: (rk.get("steps") or {}).get("by_category") for rk in doc["ranks"]}
    c.check(sorted(got) == [0, 1, 2, 3] and all(g and g["steps"] == 10 for g in got.values()),
            "demo: every rank has its 10 steps by category", str({k: g and g["steps"] for k, g in got.items()}))
    for rank, g in sorted(got.items()):
        if not g:
            continue
        path = [f for f in glob.glob(os.path.join(a.demo, f"*-rank{rank}.*.trace.json.gz"))][0]
        with gzip.open(path) as f:
            ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
        steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("name") == "diffusion_step")
        secs = sorted((e["ts"], e["ts"] + e["dur"], "data" in e["name"].lower()) for e in ev
                      if e.get("cat") == "section")
        want = {"cpu_exec": 0.0, "data_loading": 0.0, "other": 0.0}
        for a0, b0 in steps:
            covered = []
            for x, y, data in secs:  # the union of the sections inside the step
                x, y = max(x, a0), min(y, b0)
                if y > x:
                    covered.append((x, y))
            covered.sort()
            cov, end = 0.0, a0
            for x, y in covered:
                if y > end:
                    cov += y - max(x, end)
                    end = y
            want["cpu_exec"] += cov
            want["other"] += (b0 - a0) - cov
        mean = g["mean_ns"]
        bad = [k for k in want if abs(mean[k] - want[k] * 1000 / len(steps)) > 1000]  # within 1 us of the trace's
        c.check(not bad and all(mean[k] == 0 for k in mean if k not in want),
                f"demo rank {rank}: mean step by category as the trace says", f"{mean} vs {want}")
    page = open(os.path.join(out, "demo.html")).read()
    sc = page[page.find('id="step-categories"'):]
    sc = sc[:sc.find("</section>")]
    c.check("No step to split" not in sc and "<svg" in sc and "libtally report" in sc,
            "demo: the Step time by category section draws the libtally steps and says what they can show")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
