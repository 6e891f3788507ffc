#!/usr/bin/env python3
"""Count the trace events of every .json / .gz file of the corpus, independently of tally.

This is the reference the trace_stream unit test compares against: for each file, the number
of elements of "traceEvents" (or of the top-level array) that are objects, as Python's json
module sees them. Python is made as lenient as it can be without changing what counts: bytes
are decoded as UTF-8 with a BOM allowed and invalid bytes kept (surrogateescape), raw control
characters are allowed in strings (strict=False), NaN/Infinity are accepted (the default).
Gzip is recognised by its magic bytes, not by the name. Output, one line per file, sorted:

    <path relative to the corpus>\t<count>        a trace
    <path>\tnot-a-trace                            JSON, but neither a list nor {"traceEvents": [...]}
    <path>\tunparsable                             Python cannot read it (tally must still cope)

Usage: count_events.py CORPUS_DIR > counts.txt
       count_events.py --check counts.txt CORPUS_DIR   (exit 1 and a diff when they differ)
"""
import difflib
import gzip
import json
import os
import sys
import zlib


def count(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        doc = json.loads(data.decode("utf-8-sig", "surrogateescape"), strict=False)
    except (ValueError, EOFError, OSError, zlib.error, RecursionError):
        return "unparsable"
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events = doc["traceEvents"]
    elif isinstance(doc, list):
        events = doc
    else:
        return "not-a-trace"
    return str(sum(1 for e in events if isinstance(e, dict)))


def table(corpus):
    lines = []
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".json") or name.endswith(".gz"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, corpus)
                lines.append("%s\t%s\n" % (rel, count(path)))
    return sorted(lines)


def main(argv):
    if len(argv) == 4 and argv[1] == "--check":
        with open(argv[2]) as f:
            want = f.readlines()
        have = table(argv[3])
        if want != have:
            sys.stdout.writelines(difflib.unified_diff(want, have, argv[2], "corpus now"))
            print("the corpus changed: regenerate with tests/tools/count_events.py CORPUS > %s" % argv[2])
            return 1
        print("%d files agree" % len(have))
        return 0
    if len(argv) == 2:
        sys.stdout.writelines(table(argv[1]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
