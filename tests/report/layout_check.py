#!/usr/bin/env python3
"""The pages as a person sees them: full-page screenshots at 1280 and 1920 px,
light and dark (prefers-color-scheme through CDP Emulation.setEmulatedMedia),
saved as artifacts, and layout checks in the DOM of each:

- the page does not scroll sideways (only a table's own box may), and the
  name, kernel and sessions tables fit without scrolling (long signatures
  show two lines until opened);
- no table cell's content overflows its cell (scrollWidth > clientWidth);
- every chart label (bar labels, lane labels, legends) lies inside its
  chart's drawing (SVG getBBox against the viewBox), and no two labels of
  one chart read the same;
- a bar chart's axis reaches its longest bar and whisker (the last grid line
  lies at or beyond them), and a chart that draws self/inclusive parts or
  whiskers keys them in a legend;
- a timeline keys the colors it draws in a legend, and its <desc> promises
  no marks it does not draw (named calls, steps, events);
- every name written in a box (a flame graph's frame, a timeline's CPU call)
  lies inside its box, in every flame graph (collapsed ones opened).

Pages: `tally report` of the 8-rank DLRM set, HTA's trace_filter and
nccl_parser_config (mangled CUTLASS kernel names), a FramePack
report, a CPU-only Chrome trace (catapult's big_trace: named calls in its
timeline lanes), the TensorFlow profiler's trace, and `tally compare` of
HTA's trace_diff pair. Screenshots go to OUT/<page>-<width>-<light|dark>.png.

Exits 77 (ctest: skipped) when selenium, chromium or chromedriver is missing.

usage: layout_check.py --tally TALLY --corpus CORPUS_DIR --out OUT_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reportlib  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = [
    ("dlrm", ["report", "param-dlrm_kineto-8rank"]),
    ("trace_filter", ["report", "hta/trace_filter"]),
    ("nccl", ["report", "hta/nccl_parser_config"]),
    ("framepack", ["report", "framepack/generated/profiling_report.json"]),
    ("cpu_trace", ["report", "catapult-test_data/big_trace.json"]),
    ("tf", ["report", "tensorflow-profiler"]),
    ("compare", ["compare", "hta/trace_diff/control", "hta/trace_diff/test"]),
    # the demo's own kind of input: the sample pipeline's libtally reports (samples/reports)
    ("pipeline", ["report", os.path.join(SOURCE, "samples/reports/pipeline-baseline")]),
    ("pipeline_compare", ["compare", os.path.join(SOURCE, "samples/reports/pipeline-baseline"),
                          os.path.join(SOURCE, "samples/reports/pipeline-optimized")]),
]
WIDTHS = (1280, 1920)

# Runs in the page: what overflows, which chart labels stick out or repeat.
PROBE = r"""
const out = {pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
             cells: [], outside: [], repeats: [], labels: 0, scrolled: [], wide: []};
for (const s of document.querySelectorAll('.scroll')) {
  if (s.closest('details:not([open])')) continue;
  if (s.scrollWidth > s.clientWidth + 1) {
    const t = s.querySelector('table');
    const what = (t && (t.id || (t.caption && t.caption.textContent.slice(0, 50)))) + ' (' + s.scrollWidth + ' in ' + s.clientWidth + ')';
    out.scrolled.push(what);
    if (t && (t.classList.contains('names') || t.id === 'sessions-table')) out.wide.push(what);
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
// bar charts: the axis covers what is drawn; what is drawn is keyed
out.axis = []; out.keys = [];
for (const svg of document.querySelectorAll('svg.hbars')) {
  let grid = 0, drawn = 0;
  for (const l of svg.querySelectorAll('line.grid')) grid = Math.max(grid, l.x1.baseVal.value);
  for (const e of svg.querySelectorAll('g.row rect.bar, g.row path.whisker')) {
    const b = e.getBBox(); drawn = Math.max(drawn, b.x + b.width);
  }
  if (drawn > grid + 0.5) out.axis.push(svg.getAttribute('aria-labelledby') + ': drawn to ' + drawn.toFixed(1) + ', axis to ' + grid.toFixed(1));
  const legends = Array.from(svg.querySelectorAll('text.legend')).map(t => t.textContent).join(' | ');
  if (svg.querySelector('g.row rect.incl') && !legends.includes('self time'))
    out.keys.push(svg.getAttribute('aria-labelledby') + ': self/inclusive without a legend');
  if (svg.querySelector('g.row path.whisker') && !/range/.test(legends))
    out.keys.push(svg.getAttribute('aria-labelledby') + ': whiskers without a legend');
}
// timelines: a legend for what is drawn, a <desc> true to the marks
for (const svg of document.querySelectorAll('svg.timeline')) {
  const who = svg.getAttribute('aria-labelledby'), desc = svg.querySelector('desc').textContent;
  const keys = Array.from(svg.querySelectorAll('.tlkey text')).map(t => t.textContent).join(' | ');
  const kinds = {compute: 'compute', comm: 'communication', memory: 'memory', other: 'other'};
  for (const [cls, word] of Object.entries(kinds))
    if (svg.querySelector('svg.plot g:not(.cpu) path.' + cls) && !keys.includes(word) && !keys.includes('CPU thread'))
      out.keys.push(who + ': lanes of ' + cls + ' without a legend entry');
  if (svg.querySelector('line.step, path.step') && !keys.includes('step')) out.keys.push(who + ': steps without a legend entry');
  if (/triangles/.test(desc) && !svg.querySelector('path.event:not(.swatch)')) out.keys.push(who + ': <desc> promises events');
  if (/by name/.test(desc) && !svg.querySelector('g.call')) out.keys.push(who + ': <desc> promises named calls');
  if (/vertical lines/.test(desc) && !svg.querySelector('line.step, path.step')) out.keys.push(who + ': <desc> promises steps');
}
// names in boxes: flame graph frames and timeline calls, collapsed sections opened
out.boxed = 0; out.spill = [];
for (const d of document.querySelectorAll('details')) d.open = true;
for (const g of document.querySelectorAll('svg.flame g, svg.timeline g.call')) {
  const r = g.querySelector(':scope > rect'), t = g.querySelector(':scope > text');
  if (!r || !t) continue;
  out.boxed++;
  const rb = r.getBBox(), tb = t.getBBox();
  if (tb.x < rb.x - 0.5 || tb.x + tb.width > rb.x + rb.width + 0.5 || tb.y < rb.y - 1 || tb.y + tb.height > rb.y + rb.height + 1)
    out.spill.push('"' + t.textContent + '" ' + tb.x.toFixed(1) + '..' + (tb.x + tb.width).toFixed(1) +
                   ' in ' + rb.x.toFixed(1) + '..' + (rb.x + rb.width).toFixed(1));
}
for (const d of document.querySelectorAll('details')) d.open = false;
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
            if name == "cpu_trace":
                # no GPU events: the header names no GPU window
                text = open(path, encoding="utf-8").read()
                meta = text[text.index('<p class="meta">'):]
                checks.check("GPU window" not in meta[:meta.index("</p>")],
                             "cpu_trace: the header names no GPU window without GPU events")
            if name == "tf":
                # a thread with one call drawn by name says so in the singular
                text = open(path, encoding="utf-8").read()
                checks.check("its longest call drawn below it" in text and "its 1 longest calls" not in text,
                             "tf: 'its longest call', in the singular")
            if name == "nccl":
                # a path wraps at its '/'; a short part stays whole (not "nccl_<wbr>parser")
                text = open(path, encoding="utf-8").read()
                checks.check("nccl_parser_config/<wbr>nccl_data.json.gz" in text,
                             "nccl: a path wraps between its parts, not inside a short one")
                checks.check('<details class="sig">' in text, "nccl: a long kernel signature opens in a <details>")
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
                checks.check(not r["wide"], f"{label}: the name, kernel and sessions tables fit the page",
                             "; ".join(r["wide"][:5]))
                checks.check(r["labels"] > 0, f"{label}: the charts have labels")
                checks.check(not r["axis"], f"{label}: every bar chart's axis reaches its longest bar and whisker",
                             "; ".join(r["axis"][:5]))
                checks.check(not r["keys"], f"{label}: bar charts and timelines key what they draw; <desc> promises nothing more",
                             "; ".join(r["keys"][:5]))
                checks.check(not r["outside"], f"{label}: every chart label lies inside its chart",
                             "; ".join(r["outside"][:5]))
                checks.check(not r["repeats"], f"{label}: no two labels of one chart are the same",
                             "; ".join(r["repeats"][:5]))
                if name in ("dlrm", "trace_filter", "cpu_trace"):
                    checks.check(r["boxed"] > 0, f"{label}: names are written in flame graph and call boxes")
                checks.check(not r["spill"], f"{label}: every name in a box stays inside its box ({r['boxed']} boxes)",
                             "; ".join(r["spill"][:5]))
            b.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    finally:
        b.quit()
    return checks.finish()


if __name__ == "__main__":
    t = time.monotonic()
    rc = main()
    print(f"({time.monotonic() - t:.1f} s)")
    sys.exit(rc)
