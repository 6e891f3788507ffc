#!/usr/bin/env python3
"""The call tree on real traces, against an independent reading of them.

For each input the traces are read here with the json module (timestamps as
exact decimals), complete events nested per thread as docs/analysis.md
says ("Call tree": operators inside annotations and sections, Python
frames, GPU annotations and other events each among themselves), and the
tree built path by path. Then:

- the report has the Call tree section with a flame graph per rank and a
  merged one, and the tree table prints, for every path it lists, the
  inclusive and self time, calls and share (and rank min/max) computed here,
  in the units a reader sees;
- the aggregate JSON's merged tree has exactly these sums over ranks, the
  least and most of one rank, and each root's inclusive time is the sum of
  its top-level calls;
- merged across ranks equals the per-rank trees summed: the aggregates of
  each rank alone, path by path;
- a few known paths read as written here (hand-checked numbers).

Inputs: HTA's trace_filter (2 ranks), the 8-rank DLRM set, and speedscope's
simple.json fixture (B/E pairs, no categories).

usage: calltree_check.py --tally TALLY --corpus CORPUS_DIR --out OUT_DIR
"""
import argparse
import decimal
import gzip
from html import unescape as html_unescape
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402

# tools/ingest/calltree.c's root labels by nesting class
ROOT = {"ops": "operators (cpu_op)", "ann": "annotations and sections", "py": "Python frames (python_function)",
        "gpuann": "GPU annotations", "other": "events"}
CLASS = {"cpu_op": "ops", "operator": "ops", "user_annotation": "ann", "python_function": "py",
         "gpu_user_annotation": "gpuann"}
# which kinds nest in each other on a thread: operators with annotations and sections, each other kind
# with itself (Python frames, GPU annotations, events of no known category)
GROUP = {"ops": "ops+ann", "ann": "ops+ann"}
NOT_NESTED = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "cuda_runtime", "cuda_driver", "runtime"}


# ---- units.c's durations --------------------------------------------------------------------------

def fixed(v, unit):
    a = abs(v)
    dec = 3 if a < 10 else 2 if a < 100 else 1 if a < 1000 else 0
    return "%.*f %s" % (dec, v, unit)


def dur(ns):
    a = abs(ns)
    if a >= 999.95e6:
        return fixed(ns / 1e9, "s")
    if a >= 999.95e3:
        return fixed(ns / 1e6, "ms")
    if a >= 999.5:
        return fixed(ns / 1e3, "\u00b5s")
    return "%.0f ns" % ns


def pct(v):
    return "%.1f%%" % v


# ---- the traces, read independently -----------------------------------------------------------------

def ns(v):
    return int((decimal.Decimal(v) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if isinstance(e, dict)]


def complete_events(events):
    """(class, pid, tid, ts, dur, name, seq) of the events that nest."""
    out, open_ = [], {}
    for seq, e in enumerate(events):
        ph = e.get("ph")
        cat = str(e.get("cat", "")).lower()
        if ph == "X" and "ts" in e:
            d = ns(e.get("dur", 0))
            out.append((cat, e.get("pid"), e.get("tid"), ns(e["ts"]), max(d, 0), e.get("name", ""), seq))
        elif ph == "B":
            open_.setdefault((e.get("pid"), e.get("tid")), []).append(e)
        elif ph == "E":
            st = open_.get((e.get("pid"), e.get("tid")))
            if st:
                b = st.pop()
                out.append((str(b.get("cat", "")).lower(), b.get("pid"), b.get("tid"), ns(b["ts"]),
                            ns(e["ts"]) - ns(b["ts"]), b.get("name", ""), seq))
    res = []
    for cat, pid, tid, ts, d, name, seq in out:
        if cat in NOT_NESTED:
            continue
        cls = CLASS.get(cat, "other")
        if cls == "ann" and re.fullmatch(r"ProfilerStep#[0-9]+", name):
            name = "ProfilerStep#*"  # the numbered steps are one node
        res.append((cls, pid, tid, ts, d, name, seq))
    return res


def tree_of(paths_list):
    """Build {path tuple: [incl, self, count]} from events of one rank."""
    tree = {}
    by_thread = {}
    for ev in paths_list:
        by_thread.setdefault((GROUP.get(ev[0], ev[0]), ev[1], ev[2]), []).append(ev)
    for _, evs in sorted(by_thread.items(), key=lambda kv: repr(kv[0])):
        # start order, longer first, an annotation before an operator of the same range
        evs.sort(key=lambda e: (e[3], -e[4], e[0] != "ann", e[6]))
        stack = []  # [end, path, children]

        def close(fr):
            node = tree.setdefault(fr[1], [0, 0, 0])
            d = fr[3]
            node[0] += d
            node[1] += max(d - fr[2], 0)
            node[2] += 1
            if len(fr[1]) == 2:
                r = tree.setdefault(fr[1][:1], [0, 0, 0])
                r[0] += d
                r[2] += 1

        for cls_, pid, tid, ts, d, name, seq in evs:
            end = ts + d
            while stack and stack[-1][0] <= ts:
                close(stack.pop())
            while stack and not (stack[-1][4] <= ts and end <= stack[-1][0]):
                close(stack.pop())  # overlapping without nesting: closed as it is
            parent = stack[-1][1] if stack else (ROOT[cls_],)  # the outermost call's kind's root
            if stack:
                stack[-1][2] += d
            stack.append([end, parent + (name,), 0, d, ts])
        while stack:
            close(stack.pop())
    return tree


def add_trees(trees):
    total = {}
    for t in trees:
        for p, v in t.items():
            s = total.setdefault(p, [0, 0, 0])
            for i in range(3):
                s[i] += v[i]
    return total


# ---- what tally wrote ---------------------------------------------------------------------------------

def json_tree(doc):
    """{path: node} of the aggregate JSON's merged tree."""
    nodes = doc["calltree"]["nodes"]
    path = {}
    out = {}
    for n in nodes:
        p = (path[n["parent"]] if n["parent"] is not None else ()) + (n["name"],)
        path[n["id"]] = p
        out[p] = n
    return out


def session_trees(doc):
    """The sessions' trees of an aggregate JSON: [(rank, {path: [incl, self, count]})]."""
    res = []
    for s in doc["sessions"]:
        ct = s.get("calltree")
        if not ct:
            continue
        names, paths, t = ct["names"], [], {}
        for parent, name, incl, self_, count in ct["nodes"]:
            p = (paths[parent] if parent >= 0 else ()) + (names[name],)
            paths.append(p)
            t[p] = [incl, self_, count]
        res.append((s["rank"], t))
    return res


def table_rows(page):
    """The tree table's rows: (path, [cell texts]) with the path rebuilt from the depth classes."""
    rows, stack = [], []
    for t in page.elements("table"):
        if "calltree" not in (t.get("class") or ""):
            continue
        for tr in t.iter():
            if tr.tag != "tr" or tr.nearest("thead") is not None or "more" in (tr.get("class") or ""):
                continue
            th = [c for c in tr.children if c.tag == "th"]
            if not th:
                continue
            depth = int(re.match(r"d(\d+)", th[0].get("class")).group(1))
            code = [c for c in th[0].iter() if c.tag == "code"][0]
            name = code.get("title") or code.all_text()
            del stack[depth:]
            stack.append(name)
            cells = [reportlib.norm(c.all_text()) for c in tr.children if c.tag == "td"]
            rows.append((tuple(stack), cells))
        break
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = reportlib.fresh_dir(args.out)
    checks = reportlib.Checks("calltree_check")

    def report(name, inputs):
        html, js = os.path.join(out, name + ".html"), os.path.join(out, name + ".json")
        r = reportlib.run_tally(args.tally, ["report"] + inputs + ["-o", html, "--json", js, "--quiet"],
                                cwd=args.corpus)
        ok = checks.check(r.returncode == 0, f"{name}: tally report", r.stderr.decode(errors="replace")[-800:])
        if not ok:
            return None, None
        with open(html, encoding="utf-8") as f:
            text = f.read()
        with open(js, encoding="utf-8") as f:
            doc = json.load(f)
        return text, doc

    sets = [
        ("trace_filter", ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"]),
        ("dlrm", sorted(os.path.join("param-dlrm_kineto-8rank", f)
                        for f in os.listdir(os.path.join(args.corpus, "param-dlrm_kineto-8rank"))
                        if f.endswith(".json"))),
        ("speedscope", ["speedscope-trace-event-fixtures/simple.json"]),
    ]
    for name, files in sets:
        text, doc = report(name, files)
        if text is None:
            continue
        page = reportlib.Page(text)
        sec = page.by_id("calltree")
        nflames = text.count('<svg class="chart flame"')
        checks.check(sec is not None, f"{name}: the Call tree section")
        ranks = [tree_of(complete_events(load(os.path.join(args.corpus, f)))) for f in files]
        want = add_trees(ranks)
        checks.check(nflames == (1 + len(files) if len(files) > 1 else 1),
                     f"{name}: a flame graph merged and one per rank", f"{nflames} for {len(files)} ranks")

        # the aggregate JSON's merged tree: sums over ranks, least and most of a rank
        got = json_tree(doc)
        checks.check(doc["calltree"]["ranks"] == len(files) and doc["calltree"]["dropped"] == 0,
                     f"{name}: the merged tree covers every rank, nothing dropped", json.dumps(doc["calltree"])[:200])
        checks.check(len(got) == min(len(want), 500) and doc["calltree"]["paths"] == len(want),
                     f"{name}: the JSON lists the merged tree's paths (at most 500)", f"{len(got)} of {len(want)}")
        bad = []
        for p, n in got.items():
            w = want.get(p)
            if w is None:
                bad.append(f"{p}: not in the trace")
                continue
            per = [r.get(p, [0, 0, 0])[0] for r in ranks]
            if [n["inclusive_ns"], n["self_ns"], n["count"]] != [w[0], w[1] if len(p) > 1 else 0, w[2]] or \
                    n["rank_min_ns"] != min(per) or n["rank_max_ns"] != max(per) or \
                    n["ranks"] != sum(1 for r in ranks if p in r):
                bad.append(f"{p}: {n} != {w} per rank {per}")
        checks.check(not bad, f"{name}: every listed path has the sums, least and most read here",
                     "; ".join(bad[:4]))
        # a root is the sum of its top-level calls
        for p, n in got.items():
            if len(p) == 1:
                top = sum(v[0] for q, v in want.items() if len(q) == 2 and q[0] == p[0])
                calls = sum(v[2] for q, v in want.items() if len(q) == 2 and q[0] == p[0])
                checks.check(n["inclusive_ns"] == top and n["count"] == calls,
                             f"{name}: root {p[0]} = the sum of its top-level calls",
                             f"{n['inclusive_ns']} vs {top}, {n['count']} vs {calls}")
        # the merged tree is the per-rank trees summed (each rank's own aggregate)
        if len(files) > 1:
            alone = []
            for i, f in enumerate(files):
                _, d = report(f"{name}-rank{i}", [f])
                if d is not None:
                    alone.append(json_tree(d))
            mism = []
            for p, n in got.items():
                parts = [a.get(p) for a in alone]
                # each rank's JSON lists its own 500 largest paths: skip a path one of them left out
                if any(x is None and ranks[i].get(p) is not None for i, x in enumerate(parts)):
                    continue
                s = [sum(x[k] for x in parts if x) for k in ("inclusive_ns", "self_ns", "count")]
                incl = [x["inclusive_ns"] if x else 0 for x in parts]
                if s != [n["inclusive_ns"], n["self_ns"], n["count"]] or \
                        min(incl) != n["rank_min_ns"] or max(incl) != n["rank_max_ns"]:
                    mism.append(f"{p}: merged {n} vs per rank {parts}")
            checks.check(len(alone) == len(files) and not mism, f"{name}: merged = the ranks' trees summed",
                         "; ".join(mism[:3]))
            # and the sessions inside the aggregate carry the same per-rank trees
            st = session_trees(doc)
            checks.check(sorted(r for r, _ in st) == list(range(len(files))) and
                         all(t == {p: [v[0], v[1] if len(p) > 1 else 0, v[2]] for p, v in ranks[r].items()}
                             for r, t in st),
                         f"{name}: each session's tree is the rank's, path by path")

        # the tree table: what a reader sees, for every row it lists
        rows = table_rows(page)
        checks.check(len(rows) > 0, f"{name}: the tree table has rows")
        wrong = []
        for p, cells in rows:
            w = want.get(p)
            if w is None:
                wrong.append(f"{p}: not a path of the trace")
                continue
            root = want[p[:1]]
            exp = [dur(w[0]), dur(w[1]) if len(p) > 1 else "\u2013", str(w[2]), pct(100.0 * w[0] / root[0])]
            if len(files) > 1:
                per = [r.get(p, [0, 0, 0])[0] for r in ranks]
                exp += [dur(min(per)), dur(max(per))]
            if cells != exp:
                wrong.append(f"{' / '.join(p)}: {cells} != {exp}")
        checks.check(not wrong, f"{name}: every table row reads as computed here", "; ".join(wrong[:3]))
        print(f"{name}: {len(want)} paths, {len(got)} in the JSON, {len(rows)} table rows, {nflames} flame graphs")

        # known paths, checked by hand
        known = {
            # the two steps of each rank summed (ProfilerStep#551 and #552 are one node): inclusive 190.900 +
            # 198.919 ms (rank 0) + 201.433 + 216.738 ms (rank 1); self each minus the operators it holds
            # directly (136.836, 146.468, 146.851, 162.582 ms); 415.4 ms self in #552 alone while operators did
            # not nest in annotations
            "trace_filter": [(("annotations and sections", "ProfilerStep#*", "## optimizer ##",
                               "Optimizer.step#Shampoo.step"), ["808.0 ms", "215.3 ms", "4"]),
                             (("annotations and sections", "ProfilerStep#*", "## optimizer ##",
                               "Optimizer.step#Shampoo.step", "aten::add_"), None)],
            "speedscope": [(("events", "alpha", "beta", "gamma"), ["5.000 \u00b5s", "5.000 \u00b5s", "1"]),
                           (("events", "alpha"), ["14.00 \u00b5s", "2.000 \u00b5s", "1"])],
        }.get(name, [])
        table = dict(rows)
        for p, cells in known:
            if cells is None:  # an operator under an annotation: in the tree at all
                checks.check(p in want and p in got, f"{name}: {' / '.join(p)} is a path of the tree")
                continue
            checks.check(table.get(p, [])[:3] == cells, f"{name}: {' / '.join(p)} reads {cells}",
                         str(table.get(p)))
        # the root's title in the flame graph: its total and top-level calls
        for p in [q for q in want if len(q) == 1]:
            checks.check(f"{p[0]} \u00b7 {dur(want[p][0])}" in text or dur(want[p][0]) in text,
                         f"{name}: the flame graph's {p[0]} band says its total")
        # the frames' hue: each band in its kind's class; no two labels of one graph name different calls
        # (the DLRM set's "eva\u2026" for both SplitLookupFunction ops before the labels were chosen as a set)
        bands = re.findall(r'<g class="band (k[a-z])">', text)
        checks.check(len(bands) > 0 and all(b in ("ko", "ka", "kp", "kg", "kr", "ke") for b in bands),
                     f"{name}: the flame graphs' bands carry their kind's class", str(sorted(set(bands))))
        # operators under annotations: in the annotations' band, each in the operators' hue
        nested = [b for b in re.findall(r'<g class="band ka">(.*?)\n</g>\n(?=<g class="band|</svg>)', text, re.S)
                  if re.search(r'<g class="f[0-3] ko">', b)]
        if name in ("trace_filter", "dlrm"):
            checks.check(bool(nested), f"{name}: operators drawn in the annotations' band carry the operators' class")
        same, labelled = [], 0
        for svg in re.findall(r'<svg class="chart flame".*?</svg>', text, re.S):
            seen = {}
            for title, label in re.findall(r'<g class="f[0-3](?: k[a-z])?"><title>([^\n<]*)[^<]*</title><rect[^>]*/>'
                                           r'(?:<text[^>]*>([^<]*)</text>)?', svg):
                if label:
                    labelled += 1
                    seen.setdefault(html_unescape(label), set()).add(html_unescape(title))
            same += [f"{t!r}: {sorted(n)[:2]}" for t, n in seen.items() if len(n) > 1]
        checks.check(labelled > 0 and not same, f"{name}: no two flame graph labels read the same ({labelled})",
                     "; ".join(same[:3]))
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
