#!/usr/bin/env python3
"""check_compare.py - assertions on the outputs of `tally compare`.

    check_compare.py verdicts JSON [--only-regression NAME [--delta-range LO HI]] [--no-regression]
                                   [--regression N] [--improvement N] [--unchanged N]
                                   [--added N] [--removed N] [--changed N]
    check_compare.py schema JSON SCHEMA     validates (Draft 2020-12)
    check_compare.py junit XML JSON         well-formed, counts agree with the JSON
    check_compare.py html HTML              self-contained, no script, tags balanced
    check_compare.py markdown MD            under 1 MiB, the headline first
    check_compare.py same-rows A.json B.json   the same rows (inputs aside)

A NAME matches a row's name exactly, or as a prefix when it ends with '*'.
Each check prints what failed and exits 1, or exits 0 quietly.
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import re
import sys
import xml.etree.ElementTree as ET

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def matches(name, pattern):
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def overall(doc, pattern, metrics=("per_call",)):
    rows = [r for r in doc["rows"] if r["rank"] is None and matches(r["name"], pattern) and r["metric"] in metrics]
    check(rows, f"no all-ranks row named {pattern!r}")
    return rows


def cmd_verdicts(a):
    doc = load(a.json)
    regs = [r for r in doc["rows"] if r["verdict"] == "regression"]
    check(doc["regressions"] == len(regs), f"\"regressions\" {doc['regressions']} but {len(regs)} rows")
    check(doc["counts"]["regression"] == len(regs), "counts.regression disagrees with the rows")
    gates = [r for r in doc["rows"] if r["gate"]]
    check(doc["gate_failures"] == len(gates), f"\"gate_failures\" {doc['gate_failures']} but {len(gates)} rows")
    for r in gates:
        check(r["primary"] and (r["verdict"] == "regression" or r["verdict"] == "large_increase_untested"),
              f"{r['name'][:60]} ({r['metric']}) fails the gate with verdict {r['verdict']}")
    if a.no_regression:
        check(not regs, "regressions in an A/A comparison: " +
              ", ".join(f"{r['name'][:60]} ({r['metric']}, rank {r['rank']}, {r['delta_pct']:+.1f}%, "
                        f"p_adj {r['p_adjusted']:.3g})" for r in regs))
        check(not gates, f"gate failures in an A/A comparison: {[r['name'][:60] for r in gates]}")
    if a.only_regression:
        pat = a.only_regression
        others = sorted({r["name"][:80] for r in regs if not matches(r["name"], pat)})
        check(not others, f"regressions other than {pat[:60]!r}: {others}")
        timed = ("per_call", "per_run", "per_step")
        for r in overall(doc, pat, timed):
            check(r["verdict"] == "regression",
                  f"{pat[:60]!r} (all ranks, {r['metric']}) is {r['verdict']}, not a regression")
        per_rank = [r for r in doc["rows"] if r["rank"] is not None and matches(r["name"], pat) and r["metric"] in timed]
        check(per_rank, f"no per-rank rows of {pat[:60]!r}")
        for r in per_rank:
            check(r["verdict"] == "regression", f"{pat[:60]!r} rank {r['rank']} is {r['verdict']}")
            lo, hi = a.delta_range
            check(lo < r["delta_pct"] < hi, f"{pat[:60]!r} rank {r['rank']}: delta {r['delta_pct']:.1f}%")
    for verdict, names in (("regression", a.regression), ("improvement", a.improvement),
                           ("unchanged", a.unchanged), ("added", a.added), ("removed", a.removed),
                           ("changed", a.changed)):
        for pat in names or []:
            for r in overall(doc, pat, (a.metric,)):
                check(r["verdict"] == verdict,
                      f"{pat[:60]!r} (all ranks, {a.metric}) is {r['verdict']}, not {verdict}")


def cmd_schema(a):
    import jsonschema
    schema = load(a.schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(load(a.json)))
    for e in errors[:10]:
        check(False, f"{a.json}: {'/'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}")


def cmd_junit(a):
    doc = load(a.json)
    try:
        root = ET.parse(a.xml).getroot()
    except ET.ParseError as e:
        check(False, f"{a.xml}: not well-formed XML: {e}")
        return
    check(root.tag == "testsuites", f"root element <{root.tag}>, not <testsuites>")
    compared = [r for r in doc["rows"] if r["verdict"] not in ("added", "removed")]
    # One failure per gate failure (what the exit code counts), whatever the
    # other regressions; too few samples: skipped.
    want = {
        "tests": len(compared),
        "failures": sum(r["gate"] for r in compared),
        "skipped": sum(r["verdict"] == "too_few_samples" and not r["gate"] for r in compared),
    }
    check(want["failures"] == doc["gate_failures"], f"JUnit failures {want['failures']} != gate_failures")
    cases = root.findall("testsuite/testcase")
    got = {
        "tests": len(cases),
        "failures": sum(c.find("failure") is not None for c in cases),
        "skipped": sum(c.find("skipped") is not None for c in cases),
    }
    check(got == want, f"test cases {got}, the JSON says {want}")
    for key in ("tests", "failures"):
        check(int(root.get(key, -1)) == want[key], f"<testsuites {key}={root.get(key)!r}>, want {want[key]}")
    # Jenkins xUnit's JUnit schema (junit-10.xsd): the attributes each element may have, and
    # what a test case may hold (Ant's JUnit schema allows a subset of these).
    allowed = {
        "testsuites": {"name", "time", "tests", "failures", "disabled", "errors"},
        "testsuite": {"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp",
                      "hostname", "id", "package"},
        "testcase": {"name", "assertions", "time", "classname", "status"},
    }
    check(set(root.attrib) <= allowed["testsuites"], f"<testsuites> attributes {sorted(root.attrib)}")
    for suite in root.findall("testsuite"):
        check(set(suite.attrib) <= allowed["testsuite"], f"<testsuite> attributes {sorted(suite.attrib)}")
    for c in cases:
        check(set(c.attrib) <= allowed["testcase"], f"<testcase> attributes {sorted(c.attrib)}")
        kids = [k.tag for k in c]
        check(set(kids) <= {"skipped", "error", "failure", "system-out", "system-err"}, f"<testcase> holds {kids}")
        check(sum(k in ("skipped", "error", "failure") for k in kids) <= 1, f"<testcase> holds {kids}")
    for suite in root.findall("testsuite"):
        n = len(suite.findall("testcase"))
        check(int(suite.get("tests", -1)) == n, f"suite {suite.get('name')}: tests={suite.get('tests')}, has {n}")
        f = sum(c.find("failure") is not None for c in suite.findall("testcase"))
        check(int(suite.get("failures", -1)) == f, f"suite {suite.get('name')}: failures={suite.get('failures')}")
    # Jenkins xUnit's JUnit schema (junit-jenkins.xsd, written after the plugin's junit-10.xsd),
    # when xmllint is there (scripts/install-deps.sh test installs it)
    xsd = os.path.join(os.path.dirname(os.path.abspath(__file__)), "junit-jenkins.xsd")
    if shutil.which("xmllint"):
        r = subprocess.run(["xmllint", "--noout", "--schema", xsd, a.xml], capture_output=True, text=True)
        check(r.returncode == 0, f"{a.xml} is not valid against junit-jenkins.xsd: {r.stderr.strip()[:400]}")
    ids = {(c.get("classname"), c.get("name")) for c in cases}
    check(len(ids) == len(cases), f"{len(cases) - len(ids)} test cases share a class name and name")


class Balance(html.parser.HTMLParser):
    VOID = {"meta", "br", "link", "img", "hr", "input", "wbr", "col", "area", "base", "source"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.tags = [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for k, v in attrs:
            if k in ("src", "href") and v and "://" in v:
                self.problems.append(f"<{tag} {k}={v!r}> fetches from the network")
            if k.startswith("on"):
                self.problems.append(f"<{tag} {k}=...>: an event handler (script)")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            return
        self.stack.pop()


def cmd_html(a):
    with open(a.html, encoding="utf-8") as f:
        text = f.read()
    check(text.startswith("<!doctype html>"), "no <!doctype html> first")
    check("<script" not in text.lower(), "a <script> in the page")
    p = Balance()
    p.feed(text)
    p.close()
    for problem in p.problems[:10]:
        check(False, problem)
    check(not p.stack, f"unclosed tags at the end: {p.stack[-5:]}")
    for section in ("headline", "deltas", "steps", "gpu", "timelines", "names", "changes", "method"):
        check(f'<section id="{section}">' in text, f"no section {section}")
    check(len(text) < 8 << 20, f"the page is {len(text)} bytes")


def cmd_markdown(a):
    with open(a.md, "rb") as f:
        data = f.read()
    check(len(data) < 1 << 20, f"{a.md}: {len(data)} bytes, over 1 MiB")
    check(data.startswith(b"## tally compare"), "the Markdown does not start with its headline")
    text = data.decode("utf-8")
    # A GitHub job summary is 1012 px wide: table rows of at most 7 cells, no word in a cell
    # longer than 48 characters (a cell wraps at spaces only), a status line first.
    for line in text.splitlines():
        if not line.startswith("| "):
            continue
        cells = [c for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        check(len(cells) <= 7, f"a table row of {len(cells)} cells: {line[:120]}")
        long = [w for w in line.replace("\\", "").split() if len(w) > 48]
        check(not long, f"a word of {len(long[0]) if long else 0} characters in a table row: {line[:160]}")
    first = text.split("\n\n")[1] if text.count("\n\n") else ""
    if first and not first.startswith(("\u2705", "\u274c")):
        first = text.split("\n\n")[2] if text.count("\n\n") > 1 else ""  # after --labels' line
    check(first.startswith(("\u2705 **gate passes", "\u274c **gate fails")), f"no status line first: {first[:80]!r}")


def cmd_same_rows(a):
    x, y = load(a.a), load(a.b)
    for key in ("rows", "gpu", "geomean_ratio", "counts"):
        check(x[key] == y[key], f"{key} differ between {a.a} and {a.b}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verdicts")
    v.add_argument("json")
    v.add_argument("--only-regression")
    v.add_argument("--delta-range", type=float, nargs=2, default=(20.0, 40.0),
                   help="with --only-regression: the per-rank deltas lie in (LO, HI) percent")
    v.add_argument("--no-regression", action="store_true")
    v.add_argument("--metric", default="per_call", help="the metric of the rows --regression etc. check")
    for k in ("regression", "improvement", "unchanged", "added", "removed", "changed"):
        v.add_argument("--" + k, action="append")
    s = sub.add_parser("schema")
    s.add_argument("json")
    s.add_argument("schema")
    j = sub.add_parser("junit")
    j.add_argument("xml")
    j.add_argument("json")
    h = sub.add_parser("html")
    h.add_argument("html")
    m = sub.add_parser("markdown")
    m.add_argument("md")
    r = sub.add_parser("same-rows")
    r.add_argument("a")
    r.add_argument("b")
    a = ap.parse_args()
    globals()["cmd_" + a.cmd.replace("-", "_")](a)
    for f in failures:
        print(f"check_compare.py {a.cmd}: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
