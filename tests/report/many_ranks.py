#!/usr/bin/env python3
"""many_ranks.py - bounded output at many ranks (issue 35): 300 generated
Kineto ranks (bench_gen_kineto_trace, rank 123 a straggler) through
`tally summary`, `tally report` (HTML, Markdown, JSON), checked for what a
user reads:
  - summary: the per-rank tables list 32 of the 300 ranks -- the straggler,
    the least and most mean step, p10 ... p90 and a sample -- and say how
    many are left out; the whole output stays under 300 lines;
  - Markdown: the ranks table lists the same 32 ranks and says so;
  - HTML: the step chart draws quantile bands (least-most, p10-p90) and the
    median, the straggler's line on top, no line per rank; its band at each
    step spans exactly the least and most of the ranks' step times (from
    the JSON);
  - JSON with --json-all: every rank is there in full (without it, past 256
    ranks it keeps 32: tests/analysis/json_bounded.sh), and every rank's row;
  - 64 ranks (the stated limit) still get one line and one row per rank.

usage: many_ranks.py --tally TALLY --gen GENERATOR --out DIR
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

RANKS, SLOW = 300, 123
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def table(lines, title):
    """The rows of a console table under the heading `title`."""
    i = lines.index(title)
    rows = []
    for line in lines[i + 3:]:
        if not line.strip() or not line[:1].isspace() and not line.strip()[0].isdigit():
            break
        rows.append(line)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    data = os.path.join(a.out, "ranks")
    os.makedirs(a.out)
    subprocess.run([a.gen, "--ranks", str(RANKS), "--dir", data, "--layers", "1", "--steps", "6", "--gzip",
                    "--slow-rank", str(SLOW), "--slow-factor", "1.5", "--quiet", "--jobs", "2"], check=True)
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")

    # summary
    out = subprocess.run([a.tally, "summary", "--width", "100", data], env=env, capture_output=True, text=True)
    check(out.returncode == 0, "summary exits 0 (%d: %s)" % (out.returncode, out.stderr[-300:]))
    lines = out.stdout.splitlines()
    check(len(lines) < 300, "summary of %d ranks in %d lines (< 300)" % (RANKS, len(lines)))
    for title in ("PER RANK: STEPS", "PER RANK: GPU (share of kernel time) AND MEMORY"):
        rows = table(lines, title)
        check(len(rows) == 32, "%s: 32 rows (%d)" % (title, len(rows)))
        tags = " ".join(r.split("  ")[0] + r[:20] for r in rows)
        check(re.search(r"\b%d\b[^\n]*\*" % SLOW, "\n".join(r[:16] for r in rows)) is not None,
              "%s: the straggler, rank %d, listed and marked" % (title, SLOW))
        for tag in ("min", "max", "p10", "p25", "median", "p75", "p90"):
            check(sum(1 for r in rows if re.match(r"\s*\d+ %s\b" % tag, r)) == 1, "%s: one rank tagged %s" % (title, tag))
    note = re.sub(r"\s+", " ", out.stdout)
    check("32 of 300 ranks listed: the stragglers, the shortest and longest mean step" in note and
          "268 left out" in note, "summary says 32 of 300 listed, 268 left out")

    # report: HTML, Markdown, JSON
    html, md, js = (os.path.join(a.out, n) for n in ("r.html", "r.md", "r.json"))
    rc = subprocess.run([a.tally, "report", "-q", data, "-o", html, "--markdown", md, "--json", js, "--json-all"],
                        env=env).returncode
    check(rc == 0, "report exits 0 (%d)" % rc)
    doc = json.load(open(js))
    check(len(doc["ranks"]) == RANKS, "JSON: all %d ranks (%d)" % (RANKS, len(doc["ranks"])))
    check(len(doc["rank_rows"]) == RANKS and doc["detail"]["ranks_left_out"] == 0, "JSON: every rank's row, none left out")
    mdt = open(md).read()
    rows = [l for l in mdt.split("## Ranks", 1)[1].split("\n## ", 1)[0].splitlines() if re.match(r"\| \d", l)]
    check(len(rows) == 32, "Markdown: 32 rank rows (%d)" % len(rows))
    check(any(l.startswith("| %d " % SLOW) and "(straggler)" in l for l in rows), "Markdown: the straggler's row")
    check("_32 of 300 ranks listed" in mdt and "268 left out" in mdt, "Markdown says 32 of 300 listed")
    page = open(html).read()
    m = re.search(r'<section id="steps".*?</section>', page, re.S)
    check(m is not None, "HTML: a steps section")
    sec = m.group(0) if m else ""
    check("over 300 ranks (more than 64: bands instead of a line per rank)" in sec, "HTML: the chart says bands past 64")
    outer = re.search(r'<g class="band outer"><title>ranks: min-max</title><polygon points="([^"]*)"', sec)
    inner = re.search(r'<g class="band inner"><title>ranks: p10-p90</title><polygon points="([^"]*)"', sec)
    check(outer is not None and inner is not None, "HTML: the least-most and p10-p90 bands")
    series = re.findall(r'<g class="series ([^"]*)"><title>([^<]*)</title>', sec)
    check([t for _, t in series] == ["ranks: median", "rank %d (straggler)" % SLOW],
          "HTML: two lines, the median and the straggler's (%s)" % [t for _, t in series][:5])
    check(series and series[-1][0] == "strag", "HTML: the straggler's line drawn last, on top")
    if outer:
        # the band's highest point at each step is the slowest rank's step there: the straggler's
        steps = [r["steps"]["durations_ns"] for r in doc["ranks"]]
        n = max(len(s) for s in steps)
        pts = [tuple(map(float, p.split(","))) for p in outer.group(1).split()]
        check(len(pts) == 2 * n, "HTML: the band has a low and a high point at each of %d steps (%d points)" % (n, len(pts)))
        ylo = [p[1] for p in pts[:n]]
        yhi = [p[1] for p in reversed(pts[n:])]
        # pixel y grows down: the band's top is the highest step time
        lo = [min(s[k] for s in steps if len(s) > k) for k in range(n)]
        hi = [max(s[k] for s in steps if len(s) > k) for k in range(n)]
        order_ok = all(yhi[k] < ylo[k] for k in range(n))
        check(order_ok, "HTML: at every step the band's top is above its bottom")
        ratio = [(276 - yhi[k]) / (276 - ylo[k]) for k in range(n)]  # the plot's bottom: y = 16 + 260 (svg.c)
        want = [hi[k] / lo[k] for k in range(n)]
        check(all(abs(ratio[k] - want[k]) < 0.005 * want[k] for k in range(n)),
              "HTML: the band spans the least to the most step time of the ranks (%s vs %s)" %
              (["%.3f" % x for x in ratio], ["%.3f" % x for x in want]))
    check(len(page) < 3 << 20, "HTML under 3 MiB (%d bytes)" % len(page))

    # at the stated limit: 64 ranks keep a line and a row each
    few = os.path.join(a.out, "few")
    os.makedirs(few)
    for r in range(64):
        os.symlink(os.path.join(data, "rank%d.pt.trace.json.gz" % r), os.path.join(few, "rank%d.pt.trace.json.gz" % r))
    out = subprocess.run([a.tally, "summary", "--width", "100", few], env=env, capture_output=True, text=True)
    lines = out.stdout.splitlines()
    check(len(table(lines, "PER RANK: STEPS")) == 64 and "ranks listed" not in out.stdout,
          "64 ranks: every rank listed, nothing said")
    h2 = os.path.join(a.out, "few.html")
    subprocess.run([a.tally, "report", "-q", few, "-o", h2], env=env, check=True)
    sec = re.search(r'<section id="steps".*?</section>', open(h2).read(), re.S).group(0)
    check("band outer" not in sec and len(re.findall(r'<g class="series ', sec)) == 64,
          "64 ranks: one line per rank, no band")
    print("%d failed" % len(fails) if fails else "all passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
