"""Shared by the report tests (tests/report/*.py): running tally, counting
checks, reading a page's structure, and driving headless Chromium.

The page is read with Python's html.parser, so the checks see what a browser's
parser sees (entities decoded, script and style as raw text) without a browser.
"""
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE_DATE_EPOCH = "1700000000"


class Checks:
    """Counts named checks; prints each failure at once and the tally at the end."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 and self.passed > 0 else 1


def run_tally(tally, args, cwd=None, env=None):
    """Run tally with SOURCE_DATE_EPOCH fixed; returns the CompletedProcess."""
    e = dict(os.environ)
    e["SOURCE_DATE_EPOCH"] = SOURCE_DATE_EPOCH
    if env:
        e.update(env)
    return subprocess.run([tally] + list(args), cwd=cwd, env=e,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


# ---- the page, parsed ------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr", "param"}
# Elements whose end tag HTML lets a page leave out.
OPTIONAL_END = {"html", "head", "body", "p", "li", "dt", "dd", "tr", "td", "th", "thead",
                "tbody", "tfoot", "option", "optgroup", "colgroup", "caption", "rt", "rp"}
RAW_TEXT = {"script", "style"}


def norm(text):
    return " ".join(text.split())


class Element:
    __slots__ = ("tag", "attrs", "parent", "children", "text", "line")

    def __init__(self, tag, attrs, parent, line):
        self.tag = tag
        self.attrs = attrs          # list of (name, value), names lower-cased
        self.parent = parent
        self.children = []
        self.text = []              # text chunks directly inside, in order
        self.line = line

    def get(self, name, default=None):
        for k, v in self.attrs:
            if k == name:
                return v
        return default

    def ancestors(self):
        p = self.parent
        while p is not None:
            yield p
            p = p.parent

    def nearest(self, tag):
        for a in self.ancestors():
            if a.tag == tag:
                return a
        return None

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def all_text(self):
        """The element's text content, as a browser's textContent (without raw text)."""
        out = []

        def walk(e):
            if e.tag in RAW_TEXT:
                return
            # text and children interleave; the parser records them in order
            for part in e.text:
                if isinstance(part, Element):
                    walk(part)
                else:
                    out.append(part)
        walk(self)
        return "".join(out)


class Page(html.parser.HTMLParser):
    """A tree of the page's elements plus what a strict reader would object to."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", [], None, 0)
        self.stack = [self.root]
        self.problems = []          # mis-nesting, stray end tags, unclosed elements
        self.doctype = None
        self.comments = []
        self.feed(text)
        self.close()
        for e in self.stack[1:]:
            if e.tag not in OPTIONAL_END:
                self.problems.append(f"<{e.tag}> opened on line {e.line} is never closed")

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_comment(self, data):
        self.comments.append(data)

    def _open(self, tag, attrs):
        parent = self.stack[-1]
        e = Element(tag, [(k.lower(), v) for k, v in attrs], parent, self.getpos()[0])
        parent.children.append(e)
        parent.text.append(e)
        return e

    def handle_starttag(self, tag, attrs):
        e = self._open(tag, attrs)
        if tag not in VOID:
            self.stack.append(e)

    def handle_startendtag(self, tag, attrs):
        self._open(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                for e in self.stack[i + 1:]:
                    if e.tag not in OPTIONAL_END:
                        self.problems.append(
                            f"<{e.tag}> opened on line {e.line} is closed by </{tag}> on line {self.getpos()[0]}")
                del self.stack[i:]
                return
        self.problems.append(f"stray </{tag}> on line {self.getpos()[0]}")

    def handle_data(self, data):
        self.stack[-1].text.append(data)

    # -- queries --

    def elements(self, tag=None):
        for e in self.root.iter():
            if e is not self.root and (tag is None or e.tag == tag):
                yield e

    def by_id(self, ident):
        for e in self.elements():
            if e.get("id") == ident:
                return e
        return None

    def text(self):
        return self.root.all_text()


def table_shape(table):
    """(header cells, body row count) of a <table>: th of the thead (or of the
    first row), and the rows of its tbody elements (or the rows with td)."""
    rows = [e for e in table.iter() if e.tag == "tr" and e.nearest("table") is table]
    head = [r for r in rows if r.nearest("thead") is not None and r.nearest("thead").nearest("table") is table]
    body = [r for r in rows if r.nearest("tbody") is not None and r.nearest("tbody").nearest("table") is table]
    if not head and rows and all(c.tag == "th" for c in rows[0].children if c.tag in ("td", "th")):
        head = rows[:1]
    if not any(e.tag == "tbody" for e in table.children):
        body = [r for r in rows if r not in head]
    cells = []
    if head:
        cells = [norm(c.all_text()) for c in head[-1].children if c.tag in ("th", "td")]
    return cells, len(body)


def outline(page):
    """The page reduced to its structure, one line per item, indented by
    section depth: section ids, h1-h3 texts, tables (id, caption, header
    cells, body rows), details/summary texts, and the number of SVG charts
    per section."""
    lines = []

    def depth(e):
        return sum(1 for a in e.ancestors() if a.tag == "section")

    def walk(e):
        for c in e.children:
            d = "  " * depth(c)
            if c.tag == "section":
                lines.append(f"{d}section #{c.get('id', '?')}")
                walk(c)
                n = sum(1 for s in c.iter() if s.tag == "svg" and s.nearest("svg") is None
                        and s.nearest("section") is c)
                if n:
                    lines.append(f"{d}  svg x{n}")
                continue
            if c.tag in ("h1", "h2", "h3"):
                lines.append(f"{d}{c.tag}: {norm(c.all_text())}")
                continue
            if c.tag == "table":
                cells, rows = table_shape(c)
                ident = c.get("id")
                cap = next((norm(x.all_text()) for x in c.children if x.tag == "caption"), None)
                lines.append(f"{d}table{' #' + ident if ident else ''}{' (' + cap + ')' if cap else ''}"
                             f" [{' | '.join(cells)}] rows={rows}")
                walk_inside_table(c)
                continue
            if c.tag == "summary":
                lines.append(f"{d}details: {norm(c.all_text())}")
                continue
            if c.tag in RAW_TEXT or c.tag == "svg":
                continue
            walk(c)

    def walk_inside_table(t):
        # details or headings inside cells are part of the structure too; a
        # long signature's <details class="sig"> only opens the text it shows
        for e in t.iter():
            if e is not t and e.tag == "summary" and "sig" not in (e.parent.get("class") or "").split():
                lines.append(f"{'  ' * depth(e)}details: {norm(e.all_text())}")

    title = next(page.elements("title"), None)
    if title is not None:
        lines.append(f"title: {norm(title.all_text())}")
    body = next(page.elements("body"), page.root)
    walk(body)
    return lines


# ---- static checks of a page -----------------------------------------------

URL_ATTRS = {"src", "href", "xlink:href", "action", "formaction", "data", "poster",
             "srcset", "background", "ping", "cite", "manifest"}
LOCAL_URL = re.compile(r"^(#|data:|about:blank$|$)", re.I)


def external_urls(page, text):
    """Every reference that would make a browser fetch (or navigate to) something
    outside the file: URL attributes, CSS url() and @import."""
    found = []
    for e in page.elements():
        for k, v in e.attrs:
            if k in URL_ATTRS and v is not None and not LOCAL_URL.match(v.strip()):
                found.append(f"<{e.tag} {k}={v!r}>")
    css = " ".join("".join(t for t in s.text if isinstance(t, str)) for s in page.elements("style"))
    css += " ".join(v for e in page.elements() for k, v in e.attrs if k == "style" and v)
    for m in re.finditer(r"url\(\s*['\"]?([^'\")]*)", css):
        if not LOCAL_URL.match(m.group(1).strip()):
            found.append(f"url({m.group(1)})")
    for m in re.finditer(r"@import\s+[^;]*", css):
        found.append(m.group(0))
    return found


def static_checks(checks, text, label):
    """What every page must be, whatever its input: one document, parsed
    without mis-nesting, self-contained, no leftover template fields, unique ids."""
    page = Page(text)
    checks.check(page.doctype is not None and page.doctype.lower() == "doctype html",
                 f"{label}: starts with <!doctype html>", str(page.doctype))
    checks.check(len(list(page.elements("html"))) == 1 and len(list(page.elements("body"))) == 1,
                 f"{label}: one <html> and one <body>")
    checks.check(not page.problems, f"{label}: elements nest properly",
                 "; ".join(page.problems[:5]) + (f" (+{len(page.problems) - 5} more)" if len(page.problems) > 5 else ""))
    ext = external_urls(page, text)
    checks.check(not ext, f"{label}: references nothing outside the file", ", ".join(ext[:5]))
    links = [e for e in page.elements("link")]
    checks.check(not links, f"{label}: no <link> (CSS is inline)", str([e.attrs for e in links][:3]))
    ext_scripts = [e for e in page.elements("script") if e.get("src") is not None]
    checks.check(not ext_scripts, f"{label}: no <script src>")
    checks.check(len(list(page.elements("style"))) >= 1, f"{label}: has inline CSS (<style>)")
    left = re.findall(r"\{\{\s*\w+\s*\}\}", text)
    checks.check(not left, f"{label}: no template field left unfilled", ", ".join(sorted(set(left))))
    ids = [e.get("id") for e in page.elements() if e.get("id") is not None]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    checks.check(not dup, f"{label}: element ids are unique", ", ".join(dup[:10]))
    # An in-page link must land somewhere.
    dangling = sorted({e.get("href") for e in page.elements("a")
                       if (e.get("href") or "").startswith("#") and len(e.get("href")) > 1
                       and e.get("href")[1:] not in ids})
    checks.check(not dangling, f"{label}: every in-page link has its target", ", ".join(dangling[:10]))
    charset = [e for e in page.elements("meta") if (e.get("charset") or "").lower() == "utf-8"]
    checks.check(bool(charset), f"{label}: declares <meta charset=utf-8>")
    return page


# ---- the browser -----------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# This machine (and CI) has no network: everything that would call home is off.
CHROME_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--disable-quic", "--disable-default-apps", "--disable-extensions",
                "--hide-scrollbars", "--force-device-scale-factor=1"]


def browser_missing():
    """None when selenium, chromium and chromedriver are all there, else what is missing."""
    missing = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium (for " + sys.executable + ")")
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            missing.append(f"{pkg} ({path})")
    return ", ".join(missing) or None


def browser_test(name, argv=None):
    """The start of a browser test: its arguments (--tally, --corpus, --out),
    its Checks and a fresh output folder; or 77 (ctest: skipped) after saying
    what is missing."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    missing = browser_missing()
    if missing:
        print(f"{name}: skipped: missing {missing} (scripts/install-deps.sh test installs them)")
        return 77
    return args, Checks(name), fresh_dir(os.path.abspath(args.out))


class Browser:
    """Headless Chromium through chromedriver, with a fresh profile, browser and
    performance (network) logs on, and JavaScript on or off."""

    def __init__(self, javascript, width=1280, height=900):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        self.profile = tempfile.mkdtemp(prefix="tally-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for flag in CHROME_FLAGS:
            opts.add_argument(flag)
        opts.add_argument(f"--window-size={width},{height}")
        opts.add_argument("--user-data-dir=" + self.profile)
        opts.add_experimental_option("prefs", {
            "profile.managed_default_content_settings.javascript": 1 if javascript else 2,
        })
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        # An alert must stay up so that a test can see it, not be dismissed for us.
        opts.set_capability("unhandledPromptBehavior", "ignore")
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        self.driver.set_page_load_timeout(60)
        self.javascript = javascript

    def load(self, path):
        import time
        url = "file://" + os.path.abspath(path)
        t = time.monotonic()
        self.driver.get(url)
        return time.monotonic() - t

    def count(self, css):
        from selenium.webdriver.common.by import By
        return len(self.driver.find_elements(By.CSS_SELECTOR, css))

    def severe_console(self):
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def requested_urls(self):
        """Every URL the page asked the network stack for (Network.requestWillBeSent)."""
        import json
        urls = []
        for entry in self.driver.get_log("performance"):
            try:
                msg = json.loads(entry["message"])["message"]
            except (KeyError, ValueError):
                continue
            if msg.get("method") == "Network.requestWillBeSent":
                urls.append(msg["params"]["request"]["url"])
        return urls

    def page_size(self):
        m = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        size = m.get("cssContentSize") or m["contentSize"]
        return int(size["width"]), int(size["height"])

    def screenshot(self, path, width=1280, max_height=16000):
        """The whole page: the viewport is made as tall as the document (capped)."""
        _, h = self.page_size()
        h = min(max(h, 200), max_height)
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": h, "deviceScaleFactor": 1, "mobile": False})
        ok = self.driver.save_screenshot(path)
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        return ok, h

    def emulate_media(self, media="", dark=False):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "media": media,
            "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}],
        })

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
