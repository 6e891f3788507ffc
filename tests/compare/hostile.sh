#!/bin/sh
# hostile.sh TALLY PYTHON SCHEMA WORKDIR
#
# Names that try to break out of their context: HTML (<script>, quotes, comments),
# XML (]]>, &), Markdown (| * _ [ ] `), control characters and an escape sequence,
# a newline, and bytes that are not UTF-8. Two small traces (the first name 50 %
# slower in the candidate) are compared; every output stays well-formed: the HTML
# has no <script> and balanced tags, and is valid UTF-8; the JUnit XML parses with
# the right counts; the Markdown table rows keep their cells; the JSON validates.
set -eu
tally=$1
py=$2
schema=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
check="$py $here/check_compare.py"
rm -rf "$work"
mkdir -p "$work"
"$py" - "$work" <<'PY'
import json, os, sys
names = ['<script>alert(1)</script>', 'a|b*c_[d]`e`', '"quote\' &amp; ]]> --> <!--',
         'ctl\x01\x1b[31m\nline', 'kernel_\udcff_bad']
def trace(path, scale):
    ev, t = [], 0
    for k in range(30):
        for i, n in enumerate(names):
            d = (100 + 10 * i) * (scale if i == 0 else 1) + (k % 7)
            ev.append({"ph": "X", "cat": "cpu_op", "name": n, "ts": t, "dur": d, "pid": 1, "tid": 1})
            t += d + 5
    text = json.dumps({"traceEvents": ev}, ensure_ascii=False)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8", "surrogateescape"))
trace(os.path.join(sys.argv[1], "base.json"), 1.0)
trace(os.path.join(sys.argv[1], "cand.json"), 1.5)
PY
"$tally" compare -q "$work/base.json" "$work/cand.json" -o "$work/h.html" --json "$work/h.json" \
    --junit "$work/h.xml" --markdown "$work/h.md"
$check html "$work/h.html"
$check junit "$work/h.xml" "$work/h.json"
$check markdown "$work/h.md"
$check schema "$work/h.json" "$schema"
$check verdicts "$work/h.json" --only-regression '<script>alert(1)</script>' --delta-range 40 60
"$py" - "$work/h.md" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1], encoding="utf-8") if l.startswith("| ") and re.search(r"\| ops per_", l)]
bad = [l for l in rows if len(re.findall(r"(?<!\\)\|", l)) != 7]  # 6 cells: 7 unescaped pipes
if not rows or bad:
    sys.exit(f"hostile.sh: Markdown rows with the wrong number of cells: {bad[:2]}")
if "\x1b" in open(sys.argv[1], encoding="utf-8").read():
    sys.exit("hostile.sh: an escape character in the Markdown")
PY
echo "hostile.sh: ok"
