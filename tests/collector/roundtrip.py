#!/usr/bin/env python3
"""libtally's files read by tally: the numbers a user reads (issue 13).

usage: roundtrip.py --tally TALLY --pipeline PROG --fake-nvml LIB --out DIR

Runs the sample pipeline (instrumented with libtally) twice as rank 0 into one
directory that does not exist yet, with the background sampler on and the fake
libnvidia-ml of the tests (2 GPUs: 10 and 20 GiB used of 80 GiB), then checks:

  - the directory was created and both runs are kept: 2 reports + 2 traces,
    named {name}-rank0.{pid}-{time}.*; each trace has its report's stem
  - `tally inspect --json`: each trace is the companion of the report of its
    own stem (not of the other run's)
  - `tally aggregate`: median and p95 of sections and iterations come from the
    report's samples (not null); NVML's used memory is "device used" (20 GiB,
    the fuller device), never "allocated" (null: no allocator provider), and
    the device share is 25 %; allocated and reserved are the pipeline's
    allocator provider's figures
  - `tally summary` prints the "Dev used" column with 20.0 GiB
  - the reports and the traces aggregated as two partials and merged give
    the aggregate of all four files (each trace paired with its report in
    the merge);
  - the pipeline stopped by SIGTERM or SIGINT from outside dies of that signal
    and leaves a report and a trace that tally reads (issue 10 item 4)
Exit 0 when all hold; the failed checks on stderr otherwise.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

GIB = 1024 ** 3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--pipeline", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    problems = []

    def check(cond, msg):
        if not cond:
            problems.append(msg)

    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    runs = os.path.join(a.out, "runs", "nested")  # does not exist: libtally makes it
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLY_")}
    env.update({"TALLY_OUTPUT_DIR": runs, "TALLY_NAME": "pipe", "RANK": "0", "WORLD_SIZE": "1",
                "TALLY_SAMPLE_MS": "50", "TALLY_NVML_LIBRARY": a.fake_nvml})
    for seed in ("1", "2"):
        p = subprocess.run([a.pipeline, "--steps", "3", "--blocks", "2", "--seed", seed], env=env,
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"pipeline exited {p.returncode}: {p.stderr}")
        check("tally:" not in p.stderr, f"libtally complained: {p.stderr}")

    files = sorted(os.listdir(runs)) if os.path.isdir(runs) else []
    reports = [f for f in files if f.endswith(".report.json")]
    traces = [f for f in files if f.endswith(".trace.json.gz")]
    check(len(reports) == 2 and len(traces) == 2, f"expected 2 reports and 2 traces, got {files}")
    stem_re = re.compile(r"^pipe-rank0\.\d+-\d{8}T\d{6}Z(-\d+)?$")
    for r in reports:
        stem = r[: -len(".report.json")]
        check(stem_re.match(stem) is not None, f"{r}: not named pipe-rank0.{{pid}}-{{time}}")
        check(stem + ".trace.json.gz" in traces, f"{r}: no trace of the same stem")

    # inspect: companions by stem
    p = subprocess.run([a.tally, "inspect", "--json", runs], capture_output=True, text=True)
    check(p.returncode == 0, f"tally inspect exited {p.returncode}: {p.stderr}")
    try:
        doc = json.loads(p.stdout)
        items = doc if isinstance(doc, list) else doc.get("files", doc.get("inputs", []))
    except ValueError as e:
        items = []
        problems.append(f"inspect --json: {e}")
    seen = 0
    for it in items:
        path = it.get("path", "")
        if path.endswith(".trace.json.gz"):
            seen += 1
            want = path[: -len(".trace.json.gz")] + ".report.json"
            check(it.get("companion_of") == want,
                  f"{path}: companion_of {it.get('companion_of')!r}, expected {want!r}")
    check(seen == 2, f"inspect listed {seen} traces, expected 2")

    # aggregate: median/p95 and the three memory series
    agg_path = os.path.join(a.out, "agg.json")
    p = subprocess.run([a.tally, "aggregate", runs, "-o", agg_path], capture_output=True, text=True)
    check(p.returncode == 0, f"tally aggregate exited {p.returncode}: {p.stderr}")
    agg = json.load(open(agg_path)) if os.path.exists(agg_path) else {"names": [], "ranks": []}
    names = {(n["group"], n["name"]): n for n in agg["names"]}
    for key in (("sections", "transformer_block"), ("iterations", "diffusion_step")):
        n = names.get(key)
        check(n is not None, f"aggregate: no {key}")
        if n:
            check(n["median_ns"] is not None and n["p95_ns"] is not None,
                  f"aggregate: {key} median/p95 are null")
            if n["median_ns"] is not None:
                check(n["min_ns"] <= n["median_ns"] <= n["p95_ns"] <= n["max_ns"],
                      f"aggregate: {key} not min <= median <= p95 <= max: {n}")
    mem = agg["ranks"][0]["memory"] if agg["ranks"] else {}
    # allocated and reserved are the pipeline's allocator provider's (under 1 GiB),
    # never NVML's 10 or 20 GiB of device memory used
    for k in ("peak_allocated_bytes", "peak_reserved_bytes"):
        v = mem.get(k)
        check(v is not None and 0 < v < GIB, f"{k} {v}: expected the provider's figure (< 1 GiB)")
    check(mem.get("peak_device_used_bytes") == 20 * GIB,
          f"device used {mem.get('peak_device_used_bytes')}, expected {20 * GIB}")
    check(mem.get("device_total_bytes") == 80 * GIB, f"device total {mem.get('device_total_bytes')}")
    check(mem.get("peak_device_pct") == 25.0, f"peak_device_pct {mem.get('peak_device_pct')}")

    # The reports and the traces aggregated apart (two partials) and merged:
    # the traces meet their reports only in the merge, and are paired there by
    # the stem of the file name -- the reports named from their folder, the
    # traces by absolute path, as partials made in different places are --
    # so the merge is the aggregate of all four files but for the paths.
    split = os.path.abspath(os.path.join(a.out, "split"))
    os.makedirs(split, exist_ok=True)
    parts = []
    for kind, sel, names in (("reports", reports, reports),
                             ("traces", traces, [os.path.abspath(os.path.join(runs, f)) for f in traces])):
        part = os.path.join(split, kind + ".partial.json")
        p = subprocess.run([a.tally, "aggregate", "--partial", "-o", part] + names, cwd=runs,
                           capture_output=True, text=True)
        check(p.returncode == 0, f"aggregate --partial {kind} exited {p.returncode}: {p.stderr}")
        parts.append(part)
    merged_path = os.path.join(split, "merged.json")
    p = subprocess.run([a.tally, "merge", "-o", merged_path] + parts, capture_output=True, text=True)
    check(p.returncode == 0, f"merge exited {p.returncode}: {p.stderr}")
    if os.path.exists(merged_path):
        merged = json.load(open(merged_path))
        def counted(doc):
            return sorted((i.get("path", "").rsplit("/", 1)[-1], i.get("companion_of") is not None)
                          for i in doc.get("inputs", []))
        check(counted(merged) == counted(agg), f"split partials: inputs {counted(merged)} != {counted(agg)}")
        def by_file_name(ranks):  # the sessions' paths as each partial spelled them: compared by file name
            for r in ranks:
                for se in r.get("sessions", []):
                    se["path"] = os.path.basename(se.get("path", ""))
            return ranks
        check(by_file_name(merged.get("ranks", [])) == by_file_name(agg.get("ranks", [])),
              "split partials: 'ranks' differs from the aggregate of all")
        for key in ("names", "across_ranks"):
            check(merged.get(key) == agg.get(key), f"split partials: '{key}' differs from the aggregate of all")
        mnames = {(n["group"], n["name"]): n["count"] for n in merged.get("names", [])}
        anames = {(n["group"], n["name"]): n["count"] for n in agg.get("names", [])}
        check(mnames == anames and anames, "split partials: name counts differ (a trace counted twice?)")

    # summary: what the user reads
    p = subprocess.run([a.tally, "summary", runs], capture_output=True, text=True)
    check(p.returncode == 0, f"tally summary exited {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    head = [i for i, l in enumerate(lines) if "Peak alloc" in l]
    check(head and "Dev used" in lines[head[0]], "summary: no Dev used column")
    if head:
        k = head[0] + 1
        while k < len(lines) and set(lines[k].strip()) <= set("-"):
            k += 1  # the rule under the header
        row = lines[k].split() if k < len(lines) else []
        check(row[-2:] == ["20.0", "GiB"] and "GiB" not in row[-6:-2],
              f"summary rank row: {lines[k] if k < len(lines) else ''}")

    # Stopped from outside (torchrun, Slurm, Ctrl-C): the pipeline dies of the
    # signal, and its report and trace are there and read by tally.
    import signal
    import time
    for sig in (signal.SIGTERM, signal.SIGINT):
        stopped = os.path.join(a.out, "stopped-%d" % sig)
        env2 = dict(env, TALLY_OUTPUT_DIR=stopped, TALLY_SAMPLE_MS="0")
        p = subprocess.Popen([a.pipeline, "--steps", "100000", "--blocks", "2"], env=env2,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(3.0)  # past load_models, even on a loaded machine
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        check(p.returncode == -sig, f"signal {sig}: exit {p.returncode}, expected death by the signal")
        got = sorted(os.listdir(stopped)) if os.path.isdir(stopped) else []
        check(len([f for f in got if f.endswith(".report.json")]) == 1 and
              len([f for f in got if f.endswith(".trace.json.gz")]) == 1,
              f"signal {sig}: outputs {got}, stderr {err}")
        q = subprocess.run([a.tally, "summary", stopped], capture_output=True, text=True)
        check(q.returncode == 0 and "load_models" in q.stdout,
              f"signal {sig}: tally summary exited {q.returncode}: {q.stderr}")

    for m in problems:
        print("FAIL:", m, file=sys.stderr)
    print(f"collector roundtrip: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
