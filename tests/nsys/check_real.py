#!/usr/bin/env python3
"""Real Nsight Systems exports (tests/nsys/real, recorded by another project) read by tally and
checked against the same numbers computed here by SQL from the files themselves: each kernel's
count and total time, the compute time (every kernel), the memory time (memcpy + memset), the
runtime calls by name (nsys' "_v7000" suffixes dropped) and the NVTX ranges as sections.

usage: check_real.py TALLY WORKDIR
"""
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def sql_expect(db):
    c = sqlite3.connect(db)
    tables = {r[0] for r in c.execute("select name from sqlite_master where type='table'")}
    kernels = {}
    for name, total, n in c.execute("select s.value, sum(k.end - k.start), count(*) from CUPTI_ACTIVITY_KIND_KERNEL k "
                                    "join StringIds s on s.id = k.demangledName group by s.value"):
        kernels[name] = (n, total)
    memory = 0
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            memory += c.execute(f"select coalesce(sum(end - start), 0) from {t}").fetchone()[0]
    runtime = {}
    for name, total, n in c.execute("select s.value, sum(r.end - r.start), count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r "
                                    "join StringIds s on s.id = r.nameId group by s.value"):
        name = re.sub(r"_v\d+$", "", name)
        old = runtime.get(name, (0, 0))
        runtime[name] = (old[0] + n, old[1] + total)
    nvtx = {}
    if "NVTX_EVENTS" in tables:
        for name, total, n in c.execute("select coalesce(n.text, s.value), sum(n.end - n.start), count(*) "
                                        "from NVTX_EVENTS n left join StringIds s on s.id = n.textId "
                                        "where n.end is not null and n.end > n.start group by 1"):
            nvtx[name] = (n, total)
    return kernels, memory, runtime, nvtx


def main():
    global TALLY
    TALLY, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    real = os.path.join(HERE, "real")
    for gz in sorted(f for f in os.listdir(real) if f.endswith(".sqlite.gz")):
        db = os.path.join(work, gz[:-3])
        with gzip.open(os.path.join(real, gz)) as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        kernels, memory, runtime, nvtx = sql_expect(db)
        for inp in (db, os.path.join(real, gz)):  # the export, and as it is kept (gzip, read in memory)
            out = os.path.join(work, os.path.basename(inp) + ".json")
            r = subprocess.run([TALLY, "aggregate", "-q", inp, "-o", out], capture_output=True, text=True, timeout=300)
            check(r.returncode == 0, f"{gz}: aggregate {inp}: exit {r.returncode}: {r.stderr}")
            if r.returncode != 0:
                continue
            with open(out) as f:
                a = json.load(f)
            check(a["inputs"][0]["format"] == "nsys-sqlite" if "format" in a["inputs"][0] else True,
                  f"{gz}: format {a['inputs'][0]}")
            names = {(n["group"], n["name"]): n for n in a["names"]}
            # the aggregate lists the top 100 names of the group (kernels, and copies named as Kineto
            # names them: "Memcpy HtoD (Pageable -> Device)") by total time: each kernel listed equals
            # SQL's, every kernel longer in total than the shortest listed one is listed, and the
            # copies add up to SQL's memcpy + memset rows
            listed = [k for (g, k) in names if g == "kernels"]
            copies = [k for k in listed if k.startswith(("Memcpy ", "Memset "))]
            listed = [k for k in listed if k not in copies]
            shortest = min((names[("kernels", k)]["total_ns"] for k in listed), default=0)
            for name, (n, total) in kernels.items():
                got = names.get(("kernels", name))
                if got is None:
                    check(total <= shortest, f"{gz}: kernel {name[:60]} ({total} ns) not listed")
                    continue
                check(got["count"] == n and got["total_ns"] == total,
                      f"{gz}: kernel {name[:60]}: tally {(got['count'], got['total_ns'])}, SQL {(n, total)}")
            for name in listed:
                check(name in kernels, f"{gz}: kernel {name[:60]} listed by tally, not in the export")
            check(sum(names[("kernels", k)]["total_ns"] for k in copies) == memory,
                  f"{gz}: copies listed {sum(names[('kernels', k)]['total_ns'] for k in copies)} ns, SQL {memory} ns")
            gpu = a["ranks"][0]["gpu"]
            check(round(gpu["compute_us"] * 1000) == sum(t for _, t in kernels.values()),
                  f"{gz}: compute {gpu['compute_us']} us, SQL {sum(t for _, t in kernels.values())} ns")
            check(round(gpu["non_compute_us"] * 1000) == memory, f"{gz}: memory {gpu['non_compute_us']} us, SQL {memory} ns")
            for name, (n, total) in runtime.items():
                got = names.get(("runtime", name))
                check(got is not None and got["count"] == n and got["total_ns"] == total,
                      f"{gz}: runtime {name}: tally {got and (got['count'], got['total_ns'])}, SQL {(n, total)}")
            for name, (n, total) in nvtx.items():
                got = names.get(("sections", name))
                check(got is not None and got["count"] == n and got["total_ns"] == total,
                      f"{gz}: NVTX {name}: tally {got and (got['count'], got['total_ns'])}, SQL {(n, total)}")
            print(f"{gz} ({'gzip' if inp.endswith('.gz') else 'sqlite'}): {len(kernels)} kernel names, "
                  f"{len(runtime)} runtime calls, {len(nvtx)} NVTX ranges checked")
    if fails:
        print(f"{len(fails)} failed")
        sys.exit(1)
    print("real nsys exports: every number equals SQL's")


if __name__ == "__main__":
    main()
