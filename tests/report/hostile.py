#!/usr/bin/env python3
"""Every string from an input is escaped (docs/architecture.md, "The HTML report": every input string escaped).

Writes a 2-rank Chrome trace set (array form) whose event names, categories,
process and thread names, args and file names are made to break out of HTML,
SVG attributes, CDATA and Markdown tables, renders it with
`tally report --title HOSTILE --markdown --json`, and asserts:

HTML  - the raw markup never appears (`<script>alert(`, `</svg><svg onload`,
        `<img src=x onerror`), and the escaped text does (`&lt;script&gt;`);
      - parsed as a browser would, the page has no element with an on*
        attribute, no <img>, no <script> that mentions alert, and every hostile
        event name reads back exactly as written (not double-escaped);
Markdown - no raw `<script>` or `<img`; every table row has as many cells as
        its header (a `|` or a newline in a name is escaped, not a new cell);
        `pipe|name` is written `pipe\\|name`; no live `[..](javascript:..)` link;
JSON  - parses, and holds the hostile names exactly;
browser (when selenium and chromium are installed) - with JavaScript on, no
        alert is open after the page loads and the DOM has no on* handler.

usage: hostile.py --tally TALLY --out OUT_DIR
"""
import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402

SCRIPT = "<script>alert(1)</script>"
ATTR = '"onmouseover="x'
SVG = "</svg><svg onload=alert(1)>"
NAMES = [
    SCRIPT + " kernel",
    ATTR + " op",
    "it's 'single' quoted",
    "&amp; and &lt; literal",
    SVG,
    "]]> cdata end <![CDATA[",
    "pipe|name|here",
    "`backtick` and ``double``",
    "two\nlines\r\nthree",
    "[click](javascript:alert(4)) *bold* _u_ <!-- c -->",
]
CATEGORY = "cat<script>alert(1)</script>|`x`"
THREAD = "thread " + ATTR + " " + SVG
PROCESS = "proc <b>bold</b> & 'q' | `t`"
TITLE = "<script>alert(3)</script> report | `title` & 'q'"
FILE_STEM = "hostile<img src=x onerror=alert(2)>'&"


def trace(rank):
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": PROCESS}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": THREAD}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "gpu " + SCRIPT}},
    ]
    ts = 1000.0
    for step in range(3):
        ev.append({"ph": "X", "name": f"ProfilerStep#{step}", "cat": "user_annotation", "ts": ts,
                   "dur": 100000.0, "pid": 1, "tid": 1, "args": {}})
        t = ts + 10
        for i, name in enumerate(NAMES):
            dur = 8000.0 - 500 * i + 1000 * rank
            ev.append({"ph": "X", "name": name, "cat": CATEGORY, "ts": t, "dur": dur, "pid": 1, "tid": 1,
                       "args": {SCRIPT: SVG, "k|`'\"": ATTR, "External id": i}})
            ev.append({"ph": "X", "name": name, "cat": "kernel", "ts": t + 50, "dur": dur / 2, "pid": 1,
                       "tid": 2, "args": {"stream": 7, "device": 0, "note": SCRIPT}})
            t += dur + 100
        ev.append({"ph": "i", "name": "mark " + SCRIPT, "s": "t", "ts": t, "pid": 1, "tid": 1,
                   "args": {"msg": SVG}})
        ev.append({"ph": "C", "name": "counter " + ATTR, "ts": t, "pid": 1, "args": {"v" + SCRIPT: step}})
        ts += 100000.0
    return ev


def plain(text):
    return reportlib.norm(re.sub("[\x00-\x1f\x7f\ufffd]", " ", text))


def page_checks(checks, text):
    for raw in ("<script>alert(", "</svg><svg onload", "<img src=x onerror", "<b>bold</b>"):
        checks.check(raw not in text, f"HTML: the raw {raw!r} never appears",
                     f"found at offset {text.find(raw)}: {text[max(0, text.find(raw) - 120):text.find(raw) + 60]!r}")
    checks.check("&lt;script&gt;alert(1)&lt;/script&gt;" in text, "HTML: holds the escaped &lt;script&gt;alert(1)...")
    page = reportlib.static_checks(checks, text, "HTML")
    handlers = [(e.tag, k) for e in page.elements() for k, _ in e.attrs if k.startswith("on")]
    checks.check(not handlers, "HTML: no element has an on* attribute", str(handlers[:5]))
    checks.check(not list(page.elements("img")), "HTML: no <img> element")
    bad = [e for e in page.elements("script") if "alert" in "".join(t for t in e.text if isinstance(t, str))]
    checks.check(not bad, "HTML: no <script> mentions alert")
    # Control characters may be shown as spaces or U+FFFD; everything else exactly.
    shown = plain(page.text())
    for name in NAMES:
        checks.check(plain(name) in shown, f"HTML: the name {name!r} reads back exactly")
    checks.check("&lt;script" not in shown and "&amp;amp;" not in shown, "HTML: text is not escaped twice")
    t = next(page.elements("title"), None)
    checks.check(t is not None and reportlib.norm(TITLE) in reportlib.norm(t.all_text()),
                 "HTML: --title reads back exactly in <title>")
    # Attribute values: whatever tally puts there (titles, data-*, aria-*)
    # decodes back to plain text, never to markup (checked above), and no
    # value carries a javascript: URL.
    js_urls = [(e.tag, k, v) for e in page.elements() for k, v in e.attrs
               if v and k in reportlib.URL_ATTRS and v.strip().lower().startswith("javascript:")]
    checks.check(not js_urls, "HTML: no javascript: URL in an attribute", str(js_urls[:3]))


UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def markdown_checks(checks, md):
    for raw in ("<script>", "<img", "<b>bold</b>", "</svg>"):
        checks.check(raw not in md, f"Markdown: the raw {raw!r} never appears",
                     md[max(0, md.find(raw) - 120):md.find(raw) + 60])
    lines = md.split("\n")
    tables, bad_rows = 0, []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|?\s*$", lines[i + 1]):
            tables += 1
            cols = len(UNESCAPED_PIPE.findall(lines[i]))
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                if len(UNESCAPED_PIPE.findall(lines[j])) != cols:
                    bad_rows.append(lines[j])
                j += 1
            # A row cut short by a newline leaves its tail on a line of its own.
            if j < len(lines) and lines[j].strip() and not lines[j].startswith("|") and "|" in lines[j]:
                bad_rows.append(lines[j])
            i = j
        else:
            i += 1
    checks.check(tables >= 1, "Markdown: has at least one table", f"{tables} tables")
    checks.check(not bad_rows, "Markdown: every table row has its header's number of cells",
                 "\n" + "\n".join(bad_rows[:6]))
    checks.check("pipe\\|name\\|here" in md, "Markdown: `pipe|name|here` is written pipe\\|name\\|here")
    live = re.search(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(javascript:", md)
    checks.check(live is None, "Markdown: no live [..](javascript:..) link", live.group(0) if live else "")
    checks.check(len(md) < 1 << 20, "Markdown: under 1 MiB")


def json_checks(checks, path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except ValueError as e:
        checks.check(False, "JSON: parses", str(e))
        return
    checks.check(True, "JSON: parses")
    strings = set()

    def walk(v):
        if isinstance(v, str):
            strings.add(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                strings.add(k)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(doc)
    for name in (SCRIPT + " kernel", SVG, "pipe|name|here", "two\nlines\r\nthree"):
        checks.check(name in strings, f"JSON: holds the name {name!r} exactly")


def browser_checks(checks, html_path):
    missing = reportlib.browser_missing()
    if missing:
        print(f"browser: skipped (missing {missing})")
        return
    from selenium.common.exceptions import NoAlertPresentException
    b = reportlib.Browser(javascript=True)
    try:
        b.load(html_path)
        time.sleep(0.5)
        try:
            alert = b.driver.switch_to.alert
            text = alert.text
            alert.dismiss()
            checks.check(False, "browser: no alert opens", f"an alert said {text!r}")
        except NoAlertPresentException:
            checks.check(True, "browser: no alert opens")
        n = b.driver.execute_script(
            "var n = 0; document.querySelectorAll('*').forEach(function (e) {"
            " for (var i = 0; i < e.attributes.length; i++)"
            "  if (e.attributes[i].name.indexOf('on') === 0) n++; }); return n;")
        checks.check(n == 0, "browser: the DOM has no on* handler", f"{n} found")
        title = b.driver.title
        checks.check(reportlib.norm(TITLE) in reportlib.norm(title), "browser: document.title is the --title text",
                     repr(title))
        severe = b.severe_console()
        checks.check(not severe, "browser: no SEVERE console entry", "; ".join(e["message"][:200] for e in severe[:3]))
        png = os.path.join(os.path.dirname(html_path), "hostile.png")
        b.screenshot(png)
        print(f"browser: screenshot {png}")
    finally:
        b.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = reportlib.fresh_dir(os.path.abspath(a.out))
    runs = os.path.join(out, "runs")
    os.makedirs(runs)
    for rank in (0, 1):
        with open(os.path.join(runs, f"{FILE_STEM}rank-{rank}.json"), "w", encoding="utf-8") as f:
            json.dump(trace(rank), f, indent=0)
    checks = reportlib.Checks("report_escaping")
    html = os.path.join(out, "hostile.html")
    md = os.path.join(out, "hostile.md")
    js = os.path.join(out, "hostile.json")
    r = reportlib.run_tally(a.tally, ["report", "runs", "-o", html, "--markdown", md, "--json", js,
                                      "--title", TITLE, "--quiet"], cwd=out)
    if not checks.check(r.returncode == 0, "tally report of the hostile traces exits 0",
                        f"exit {r.returncode}: {r.stderr.decode(errors='replace')[-2000:]}"):
        return checks.finish()
    with open(html, encoding="utf-8") as f:
        page_checks(checks, f.read())
    with open(md, encoding="utf-8") as f:
        markdown_checks(checks, f.read())
    json_checks(checks, js)
    browser_checks(checks, html)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
