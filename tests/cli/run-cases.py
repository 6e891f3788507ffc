#!/usr/bin/env python3
"""CLI tests as data (zstd's tests/cli-tests): one folder per case in tests/cli/cases.

A case folder holds the command and everything it must do:

  cmd       the arguments of one `tally` call, on one line, as shell words (quotes and
            globs work). $CORPUS is ../shared/corpus, $SAMPLES the repository's samples/,
            $SOURCE the repository, $TMP the case's fresh scratch directory.
  cwd       where the call runs: `corpus` (the default: corpus paths are relative, as
            in `summary param-dlrm_kineto-8rank`) or `source` (the repository: `report
            samples/traces/dlrm-8rank`). A `source` case needs no corpus.
  setup     (optional) tally calls, one a line, run first in the same place; each must
            exit 0. What they write into $TMP is the call's input, not its output.
  stdin     (optional) the call's standard input (otherwise empty).
  exit      the expected exit code.
  stdout    the expected standard output.
  stderr    the expected standard error.
  files/    every file the call writes into $TMP: files/NAME byte for byte; for an HTML
            page NAME, files/NAME.outline holds its outline instead (section ids,
            headings, tables with their header cells and row counts, details, charts per
            section: tests/report/reportlib.py's outline), so that a change of numbers
            or styling does not churn it while a lost section or row does fail.

A missing expectation means "must be empty": no `exit` file is exit 0, no `stderr` file
is an empty standard error (no warnings), no `files/` is no file written. In what is
compared, the paths of $TMP, $SOURCE and $CORPUS are written as those names.

TALLY_REGEN=1 rewrites every expectation from what the command does now (and removes
those that are now empty); review the diff before committing it.

usage: run-cases.py --tally TALLY --cases DIR --corpus DIR --source DIR --work DIR [CASE...]
Exit 0 when every case passes, 1 when one fails, 77 when cases needing the corpus were
skipped (no corpus) and the rest passed.
"""
import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "report"))
import reportlib  # noqa: E402

CASE_FILES = {"cmd", "cwd", "setup", "stdin", "exit", "stdout", "stderr", "files"}
OUTLINE = ".outline"
TIMEOUT = 600


class Case:
    def __init__(self, a, name):
        self.a = a
        self.name = name
        self.dir = os.path.join(a.cases, name)
        self.work = os.path.join(a.work, name)
        self.tmp = os.path.join(self.work, "tmp")
        self.problems = []

    def read(self, what, default=None):
        path = os.path.join(self.dir, what)
        if not os.path.exists(path):
            return default
        with open(path, "rb") as f:
            return f.read()

    def fail(self, what, detail=""):
        self.problems.append((what, detail))

    # ---- running -------------------------------------------------------------------

    def where(self):
        cwd = (self.read("cwd", b"corpus").decode().strip() or "corpus")
        if cwd not in ("corpus", "source"):
            raise SystemExit(f"{self.name}/cwd: {cwd!r}: corpus or source")
        return self.a.corpus if cwd == "corpus" else self.a.source

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
        env.update(SOURCE_DATE_EPOCH="1700000000", TALLY=self.a.tally, CORPUS=self.a.corpus,
                   SAMPLES=os.path.join(self.a.source, "samples"), SOURCE=self.a.source, TMP=self.tmp)
        return env

    def call(self, line, stdin=b""):
        r = subprocess.run(["sh", "-c", 'exec "$TALLY" ' + line], cwd=self.where(), env=self.env(),
                           input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        return r.returncode, r.stdout, r.stderr

    def run(self):
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.tmp)
        for line in self.read("setup", b"").decode().splitlines():
            if not line.strip():
                continue
            code, out, err = self.call(line)
            if code != 0:
                self.fail(f"setup `tally {line}` exited {code}", self.norm(out + err).decode(errors="replace"))
                return None
        before = snapshot(self.tmp)
        lines = [x for x in self.read("cmd", b"").decode().splitlines() if x.strip()]
        if len(lines) != 1:
            raise SystemExit(f"{self.name}/cmd: one line of arguments, not {len(lines)}")
        code, out, err = self.call(lines[0], self.read("stdin", b""))
        written = {p: d for p, d in snapshot(self.tmp).items() if before.get(p) != d}
        return code, self.norm(out), self.norm(err), written

    # ---- what is compared ------------------------------------------------------------

    def norm(self, data):
        """The bytes with the machine's paths written as $TMP, $SOURCE and $CORPUS."""
        subs = [(self.tmp, "$TMP"), (os.path.realpath(self.tmp), "$TMP"),
                (self.a.corpus_given, "$CORPUS"), (self.a.corpus, "$CORPUS"),
                (self.a.source, "$SOURCE")]
        for path, name in sorted(subs, key=lambda s: -len(s[0])):
            data = data.replace(path.encode(), name.encode())
        return data

    def actual_files(self, written):
        """{expected file name: the bytes to compare} for the files the call wrote."""
        got = {}
        for rel, data in written.items():
            if rel.endswith(".html"):
                page = reportlib.Page(data.decode("utf-8", errors="replace"))
                lines = reportlib.outline(page) + [f"problem: {p}" for p in page.problems]
                got[rel + OUTLINE] = self.norm(("\n".join(lines) + "\n").encode())
            else:
                got[rel] = self.norm(data)
        return got

    def expected_files(self):
        root = os.path.join(self.dir, "files")
        return snapshot(root) if os.path.isdir(root) else {}

    def check(self, result):
        code, out, err, written = result
        want_code = int(self.read("exit", b"0").decode().strip() or 0)
        if code != want_code:
            self.fail(f"exit {code}, expected {want_code}", err.decode(errors="replace")[-2000:])
        for stream, data in (("stdout", out), ("stderr", err)):
            self.compare(stream, self.read(stream, b""), data)
        want, got = self.expected_files(), self.actual_files(written)
        for rel in sorted(set(want) | set(got)):
            if rel not in got:
                self.fail(f"files/{rel}: expected, but the call wrote no {strip_outline(rel)}")
            elif rel not in want:
                self.fail(f"files/{rel}: the call wrote {strip_outline(rel)}, which no expectation names "
                          f"(TALLY_REGEN=1 adds it)")
            else:
                self.compare("files/" + rel, want[rel], got[rel])

    def compare(self, what, want, got):
        if want == got:
            return
        if not want:
            head = "must be empty (no expectation file)"
        else:
            head = "differs"
        try:
            a, b = readable(want), readable(got)
            diff = difflib.unified_diff(a, b, f"{self.name}/{what}", "now", lineterm="", n=2)
            detail = "\n".join(line[:300] for line in list(diff)[:60])
        except UnicodeDecodeError:
            detail = f"binary: {len(want)} bytes expected, {len(got)} written"
        self.fail(f"{what} {head}", detail)

    # ---- regenerating ----------------------------------------------------------------

    def regen(self, result):
        code, out, err, written = result
        put(os.path.join(self.dir, "exit"), b"%d\n" % code if code else b"")
        put(os.path.join(self.dir, "stdout"), out)
        put(os.path.join(self.dir, "stderr"), err)
        root = os.path.join(self.dir, "files")
        shutil.rmtree(root, ignore_errors=True)
        for rel, data in self.actual_files(written).items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)


def readable(data):
    """The lines to show in a diff: JSON (tally writes it on one line) one member a line;
    what is compared stays the bytes."""
    text = data.decode()
    if text.startswith(("{", "[")):
        try:
            return json.dumps(json.loads(text), indent=1, ensure_ascii=False).splitlines()
        except ValueError:
            pass
    return text.splitlines()


def strip_outline(rel):
    return rel[:-len(OUTLINE)] if rel.endswith(OUTLINE) else rel


def snapshot(root):
    """{path relative to root: bytes} of every file below root."""
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, root)] = f.read()
    return files


def put(path, data):
    """Write data, or remove the file when data is empty: an absent file means empty."""
    if data:
        with open(path, "wb") as f:
            f.write(data)
    elif os.path.exists(path):
        os.remove(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tally", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    a.tally = os.path.abspath(a.tally)
    a.cases = os.path.abspath(a.cases)
    a.corpus_given = os.path.abspath(a.corpus)
    a.corpus = os.path.realpath(a.corpus)
    a.source = os.path.realpath(a.source)
    a.work = os.path.abspath(a.work)
    regen = os.environ.get("TALLY_REGEN") == "1"

    names = a.names or sorted(n for n in os.listdir(a.cases) if os.path.isfile(os.path.join(a.cases, n, "cmd")))
    passed, failed, skipped, regenerated = 0, [], [], 0
    for name in names:
        case = Case(a, name)
        if not os.path.isfile(os.path.join(case.dir, "cmd")):
            raise SystemExit(f"{case.dir}: no such case (a folder with a cmd file)")
        unknown = sorted(set(os.listdir(case.dir)) - CASE_FILES)
        if unknown:
            raise SystemExit(f"{name}: unknown files {unknown}: a case holds only {sorted(CASE_FILES)}")
        if not os.path.isdir(case.where()):
            print(f"SKIP {name}: runs in {case.where()}, which does not exist")
            skipped.append(name)
            continue
        result = case.run()
        if result is not None and regen:
            case.regen(result)
            print(f"regenerated {name}")
            regenerated += 1
            continue
        if result is not None:
            case.check(result)
        if case.problems:
            failed.append(name)
            for what, detail in case.problems:
                print(f"FAIL {name}: {what}")
                if detail:
                    print("    " + detail.rstrip().replace("\n", "\n    "))
            print(f"     (the call's files are in {case.tmp})")
        else:
            passed += 1
    if regen:
        print(f"cli cases: {regenerated} regenerated, {len(failed)} failed, {len(skipped)} skipped")
    else:
        print(f"cli cases: {passed} passed, {len(failed)} failed, {len(skipped)} skipped"
              + (f" (failed: {' '.join(failed)})" if failed else ""))
    if failed:
        return 1
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
