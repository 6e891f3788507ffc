#!/usr/bin/env python3
"""`pip install ./python` works offline and the installed module records (issue 30).

usage: pip_install.py SOURCE_DIR WORK_DIR

Copies python/, lib/, common/ and include/ of the checkout into WORK_DIR/src (so that
setup.py's build folders land there, not in the checkout), installs with the
interpreter's pip into WORK_DIR/site (--no-build-isolation --no-index: nothing is
downloaded; --target: no venv needed, Debian's pip allows it), then imports tally
from there in a fresh interpreter and checks that a section reaches the report.
"""
import glob
import json
import os
import shutil
import subprocess
import sys


def main():
    src, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    tree = os.path.join(work, "src")
    for d in ("python", "lib", "common", "include"):
        shutil.copytree(os.path.join(src, d), os.path.join(tree, d),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "*.so", "__pycache__"))
    site = os.path.join(work, "site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--no-deps", "--disable-pip-version-check", "--target", site,
                        os.path.join(tree, "python")], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"pip_install.py: pip install failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    out = os.path.join(work, "out")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_") and k != "RANK"}
    env.update(PYTHONPATH=site, TALLY_OUTPUT_DIR=out, TALLY_SIGNALS="0")
    code = ("import tally, os, sys\n"
            "assert tally.__file__.startswith(sys.argv[1]), tally.__file__\n"
            "with tally.section('installed'):\n    pass\n"
            "print(tally.__version__)\n")
    r = subprocess.run([sys.executable, "-c", code, site], cwd=work, env=env,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"pip_install.py: the installed module failed:\n{r.stdout}\n{r.stderr}")
    reports = glob.glob(os.path.join(out, "python-rank0.*.report.json"))
    if len(reports) != 1:
        sys.exit(f"pip_install.py: expected one report python-rank0.*.report.json in {out}, "
                 f"found {os.listdir(out) if os.path.isdir(out) else 'no directory'}")
    with open(reports[0]) as f:
        sections = {s["name"]: s["count"] for s in json.load(f)["sections"]}
    if sections != {"installed": 1}:
        sys.exit(f"pip_install.py: {reports[0]}: expected the section 'installed' once, got {sections}")
    stubs = [p for p in ("__init__.pyi", "_tally.pyi", "torch.pyi", "py.typed")
             if not os.path.exists(os.path.join(site, "tally", p))]
    if stubs:
        sys.exit(f"pip_install.py: the installed package lacks {stubs}")
    print(f"pip install ./python: tally {r.stdout.strip()} in {site}, report {reports[0]}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
