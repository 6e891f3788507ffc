#!/usr/bin/env python3
"""The pages as a person sees them: full-page screenshots at 1280 and 1920 px,
light and dark (prefers-color-scheme through CDP Emulation.setEmulatedMedia),
saved as artifacts, and layout checks in the DOM of each:

- the page does not scroll sideways (only a table's own box may);
- no table cell's content overflows its cell (scrollWidth > clientWidth);
- every chart label (bar labels, lane labels, legends) lies inside its
  chart's drawing (SVG getBBox against the viewBox), and no two labels of
  one chart read the same.

Pages: `tally report` of the 8-rank DLRM set, HTA's trace_filter, a FramePack
report, and `tally compare` of HTA's trace_diff pair. Screenshots go to
OUT/<page>-<width>-<light|dark>.png.

Exits 77 (ctest: skipped) when selenium, chromium or chromedriver is missing.

usage: layout_check.py --tally TALLY --corpus CORPUS_DIR --out OUT_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402

PAGES = [
    ("dlrm", ["report", "param-dlrm_kineto-8rank"]),
    ("trace_filter", ["report", "hta/trace_filter"]),
    ("framepack", ["report", "framepack/generated/profiling_report.json"]),
    ("compare", ["compare", "hta/trace_diff/control", "hta/trace_diff/test"]),
]
WIDTHS = (1280, 1920)

# Runs in the page: what overflows, which chart labels stick out or repeat.
PROBE = r"""
const out = {pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
             cells: [], outside: [], repeats: [], labels: 0, scrolled: []};
for (const s of document.querySelectorAll('.scroll')) {
  if (s.closest('details:not([open])')) continue;
  if (s.scrollWidth > s.clientWidth + 1) {
    const t = s.querySelector('table');
    out.scrolled.push((t && (t.id || (t.caption && t.caption.textContent.slice(0, 50)))) + ' (' + s.scrollWidth + ' in ' + s.clientWidth + ')');
  }
}
for (const c of document.querySelectorAll('td, th')) {
  if (c.closest('details:not([open])')) continue;
  if (c.scrollWidth > c.clientWidth + 1)
    out.cells.push(c.tagName + ': ' + c.textContent.slice(0, 80) + ' (' + c.scrollWidth + ' > ' + c.clientWidth + ')');
}
for (const svg of document.querySelectorAll('svg.chart')) {
  const vb = svg.viewBox.baseVal;
  const seen = new Map();
  for (const t of svg.querySelectorAll('text.lbl, text.lanelbl, text.legend')) {
    if (t.closest('svg') !== svg && !t.closest('svg.plot')) continue;
    out.labels++;
    const b = t.getBBox();
    if (b.x < -0.5 || b.x + b.width > vb.width + 0.5)
      out.outside.push((svg.id || svg.getAttribute('aria-labelledby')) + ': "' + t.textContent + '" x ' +
                       b.x.toFixed(0) + '..' + (b.x + b.width).toFixed(0) + ' of ' + vb.width);
    const k = t.getAttribute('class') + '\u0000' + t.textContent;
    if (seen.has(k)) out.repeats.push(svg.getAttribute('aria-labelledby') + ': "' + t.textContent + '"');
    seen.set(k, 1);
  }
}
return out;
"""


def main():
    start = reportlib.browser_test("layout_check")
    if start == 77:
        return 77
    args, checks, out = start
    pages = []
    for name, argv in PAGES:
        path = os.path.join(out, name + ".html")
        r = reportlib.run_tally(args.tally, argv + ["-o", path, "--quiet"], cwd=args.corpus)
        if checks.check(r.returncode in (0, 1) and os.path.isfile(path), f"{name}: tally {argv[0]} writes the page",
                        f"exit {r.returncode}: {r.stderr.decode(errors='replace')[-1000:]}"):
            pages.append((name, path))
    b = reportlib.Browser(javascript=True)
    try:
        for name, path in pages:
            for width in WIDTHS:
                b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                         {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
                b.load(path)
                for dark in (False, True):
                    b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                             {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
                    b.emulate_media("", dark)
                    scheme = "dark" if dark else "light"
                    png = os.path.join(out, f"{name}-{width}-{scheme}.png")
                    ok, h = b.screenshot(png, width=width)
                    checks.check(ok and os.path.getsize(png) > 10000, f"{name} {width} {scheme}: screenshot", png)
                    print(f"{name}: {png} ({width}x{h})", flush=True)
                b.emulate_media("", False)
                b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                         {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
                r = b.driver.execute_script(PROBE)
                label = f"{name} at {width} px"
                for t in r["scrolled"]:
                    print(f"{label}: note: a table scrolls inside its box: {t}", flush=True)
                checks.check(r["pageWidth"] <= r["viewport"], f"{label}: the page does not scroll sideways",
                             f"{r['pageWidth']} px wide in {r['viewport']}")
                checks.check(not r["cells"], f"{label}: no table cell overflows", "; ".join(r["cells"][:5]))
                checks.check(r["labels"] > 0, f"{label}: the charts have labels")
                checks.check(not r["outside"], f"{label}: every chart label lies inside its chart",
                             "; ".join(r["outside"][:5]))
                checks.check(not r["repeats"], f"{label}: no two labels of one chart are the same",
                             "; ".join(r["repeats"][:5]))
            b.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    finally:
        b.quit()
    return checks.finish()


if __name__ == "__main__":
    t = time.monotonic()
    rc = main()
    print(f"({time.monotonic() - t:.1f} s)")
    sys.exit(rc)
