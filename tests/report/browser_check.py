#!/usr/bin/env python3
"""The HTML report in a real browser: `tally report` of the 8-rank DLRM set
(../shared/corpus/param-dlrm_kineto-8rank) loaded from file:// in headless
Chromium, with JavaScript disabled and enabled, and once more under a strict
Content-Security-Policy. For each load:

- the per-rank table (#ranks) has one body row per rank: 8;
- the timelines section (#timelines) holds at least one SVG, drawn at a
  non-zero size, and the charts carry <title> tooltips;
- the console has no SEVERE entry (no error, no refused resource, no CSP
  violation);
- the page asks the network for nothing but file: and data: URLs (Chromium's
  network log; with JavaScript on, also performance.getEntriesByType('resource')).

A probe page first proves the JavaScript switch does what it says. Full-page
screenshots go next to the report: report-nojs.png, report-js.png,
report-dark.png (prefers-color-scheme: dark) and report-print.png (print media).

Exits 77 (ctest: skipped) when selenium, chromium or chromedriver is missing.

usage: browser_check.py --tally TALLY --corpus CORPUS_DIR --out OUT_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402

RANKS = 8
INPUT = "param-dlrm_kineto-8rank"
STRICT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"


def non_local(urls):
    return [u for u in urls if not (u.startswith("file:") or u.startswith("data:") or u == "about:blank")]


def check_page(checks, b, label, path, csp=False):
    from selenium.webdriver.common.by import By
    b.driver.get_log("browser")          # drain what earlier pages left
    b.driver.get_log("performance")
    secs = b.load(path)
    print(f"{label}: loaded in {secs:.2f} s", flush=True)
    rows = b.count("#ranks tbody tr")
    checks.check(rows == RANKS, f"{label}: #ranks has one body row per rank", f"{rows} rows, expected {RANKS}")
    svgs = b.driver.find_elements(By.CSS_SELECTOR, "#timelines svg")
    checks.check(len(svgs) >= 1, f"{label}: #timelines holds an <svg>", f"{len(svgs)} found")
    if svgs:
        s = svgs[0].size
        checks.check(s["width"] > 100 and s["height"] > 10, f"{label}: the first timeline is drawn at a visible size",
                     f"{s['width']}x{s['height']} px")
    checks.check(b.count("svg title") >= 1, f"{label}: charts carry <title> tooltips")
    severe = b.severe_console()
    if csp:
        # The page may carry a small optional script (docs/architecture.md); under a CSP
        # without script-src it is refused, and the page must work without it.
        blocked = [e for e in severe if "Executing inline script violates" in e.get("message", "")]
        if blocked:
            print(f"{label}: note: the CSP refused {len(blocked)} inline script(s); the page works without them")
        severe = [e for e in severe if e not in blocked]
    checks.check(not severe, f"{label}: no SEVERE console entry",
                 "; ".join(e.get("message", "")[:200] for e in severe[:5]))
    urls = b.requested_urls()
    bad = non_local(urls)
    checks.check(not bad, f"{label}: no request beyond the file", ", ".join(bad[:5]))
    if b.javascript:
        res = b.driver.execute_script(
            "return performance.getEntriesByType('resource').map(function (e) { return e.name; });")
        bad = non_local(res)
        checks.check(not bad, f"{label}: performance.getEntriesByType('resource') lists no remote resource",
                     ", ".join(bad[:5]))
    w, h = b.page_size()
    print(f"{label}: page is {w}x{h} CSS px at a 1280 px wide window; {len(urls)} request(s): "
          + ", ".join(sorted({u.split(':', 1)[0] for u in urls})), flush=True)
    if w > 1280:
        print(f"{label}: note: the page is wider than the window ({w} px): something overflows horizontally")


def main():
    start = reportlib.browser_test("browser_check")
    if start == 77:
        return 77
    args, checks, out = start
    report = os.path.join(out, "report.html")
    r = reportlib.run_tally(args.tally, ["report", INPUT, "-o", report, "--quiet"], cwd=args.corpus)
    if not checks.check(r.returncode == 0 and os.path.isfile(report),
                        f"tally report {INPUT} exits 0 and writes the page",
                        f"exit {r.returncode}: {r.stderr.decode(errors='replace')[-2000:]}"):
        return checks.finish()
    print(f"page: {report} ({os.path.getsize(report)} bytes)")

    # The probe: its title says whether its script ran.
    probe = os.path.join(out, "js-probe.html")
    with open(probe, "w") as f:
        f.write("<!doctype html><html><head><meta charset=utf-8><title>no-js</title></head>"
                "<body><script>document.title = 'js-ran';</script></body></html>")
    # The report under a strict CSP, as an artifact viewer might serve it.
    strict = os.path.join(out, "report-csp.html")
    with open(report, encoding="utf-8") as f:
        text = f.read()
    at = text.lower().find("<head>")
    if checks.check(at >= 0, "the page has a <head>"):
        at += len("<head>")
        with open(strict, "w", encoding="utf-8") as f:
            f.write(text[:at] + f'<meta http-equiv="Content-Security-Policy" content="{STRICT_CSP}">' + text[at:])

    for js in (False, True):
        label = "javascript " + ("on" if js else "off")
        b = reportlib.Browser(javascript=js)
        try:
            b.load(probe)
            title = b.driver.title
            checks.check(title == ("js-ran" if js else "no-js"), f"{label}: the probe page's script "
                         + ("ran" if js else "did not run"), f"title {title!r}")
            check_page(checks, b, label, report)
            png = os.path.join(out, "report-js.png" if js else "report-nojs.png")
            ok, h = b.screenshot(png)
            checks.check(ok and os.path.getsize(png) > 10000, f"{label}: full-page screenshot saved", png)
            print(f"{label}: screenshot {png} (1280x{h})")
            if not js:
                for name, media, dark in (("report-dark.png", "", True), ("report-print.png", "print", False)):
                    b.emulate_media(media, dark)
                    png = os.path.join(out, name)
                    ok, h = b.screenshot(png)
                    checks.check(ok, f"{label}: screenshot {name}")
                    print(f"{label}: screenshot {png} (1280x{h}, media {media or 'screen'}, "
                          f"{'dark' if dark else 'light'})")
                b.emulate_media("", False)
            else:
                check_page(checks, b, "strict CSP, javascript on", strict, csp=True)
        finally:
            b.quit()
    return checks.finish()


if __name__ == "__main__":
    t = time.monotonic()
    rc = main()
    print(f"({time.monotonic() - t:.1f} s)")
    sys.exit(rc)
