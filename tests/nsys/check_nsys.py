#!/usr/bin/env python3
"""Nsight Systems SQLite exports read as what they are (tools/ingest/read_nsys.c).

1. A hand-made export with nsys' documented schema (make_nsys_sqlite.py) is read: format
   nsys-sqlite, rank from its name, the device from TARGET_INFO_GPU, and the numbers a user reads
   -- kernels by name, NVTX ranges as sections with their nesting, runtime calls without their
   "_v7000" suffix, the GPU breakdown (kernel time, busy, idle, compute, communication), launch
   delays through the correlation ids -- computed here from the rows themselves.
2. The same workload written as a PyTorch profiler (Kineto) trace gives the same session: the
   nsys reader is the Chrome-trace reader fed with the export's rows.
3. The export gzip-compressed and inside a .tar.gz (read in memory) gives the same numbers.
4. Bad inputs: a cut export, an SQLite file that is no nsys export, a .nsys-rep -- each a clear
   message naming the file, never a crash.

usage: check_nsys.py [--without-sqlite] TALLY WORKDIR
  --without-sqlite: tally was built without SQLite: the export is skipped with a message saying so
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_nsys_sqlite as mk  # noqa: E402

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def tally(*args):
    return subprocess.run([TALLY, *args], capture_output=True, text=True, timeout=300)


def aggregate(path, out):
    r = tally("aggregate", "-q", path, "-o", out)
    check(r.returncode == 0, f"aggregate {path}: exit {r.returncode}: {r.stderr}")
    with open(out) as f:
        return json.load(f)


def union(iv):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def kineto_trace(rows):
    """The workload as the PyTorch profiler writes it (categories and args of Kineto)."""
    ev = []

    def us(t):
        return t / 1000.0

    for x in rows["runtime"]:
        name = x["name"].rsplit("_v", 1)[0] if "_v" in x["name"] else x["name"]
        cat = "cuda_driver" if name.startswith("cu") and not name.startswith("cuda") else "cuda_runtime"
        ev.append(dict(ph="X", cat=cat, name=name, pid=mk.PID, tid=mk.TID, ts=us(x["start"]),
                       dur=us(x["end"] - x["start"]), args=dict(correlation=x["corr"])))
    for x in rows["kernels"]:
        ev.append(dict(ph="X", cat="kernel", name=x["name"], pid=mk.DEVICE, tid=x["stream"], ts=us(x["start"]),
                       dur=us(x["end"] - x["start"]),
                       args=dict(device=mk.DEVICE, stream=x["stream"], correlation=x["corr"], grid=list(x["grid"]),
                                 block=list(x["block"]))))
    for x in rows["memcpy"]:
        ev.append(dict(ph="X", cat="gpu_memcpy", name="Memcpy HtoD (Pinned -> Device)", pid=mk.DEVICE,
                       tid=x["stream"], ts=us(x["start"]), dur=us(x["end"] - x["start"]),
                       args=dict(device=mk.DEVICE, stream=x["stream"], correlation=x["corr"], bytes=x["bytes"])))
    for x in rows["memset"]:
        ev.append(dict(ph="X", cat="gpu_memset", name="Memset (Device)", pid=mk.DEVICE, tid=x["stream"],
                       ts=us(x["start"]), dur=us(x["end"] - x["start"]),
                       args=dict(device=mk.DEVICE, stream=x["stream"], correlation=x["corr"], bytes=x["bytes"])))
    for x in rows["sync"]:
        ev.append(dict(ph="X", cat="cuda_sync", name="Event Sync", pid=mk.DEVICE, tid=-1, ts=us(x["start"]),
                       dur=us(x["end"] - x["start"]), args=dict(device=mk.DEVICE, stream=-1,
                                                                correlation=x["corr"])))
    for x in rows["nvtx"]:
        if x["eventType"] in (59, 60):
            ev.append(dict(ph="X", cat="user_annotation", name=x["text"], pid=mk.PID, tid=mk.TID,
                           ts=us(x["start"]), dur=us(x["end"] - x["start"])))
    ev.sort(key=lambda e: (e["ts"], -e["dur"]))
    return dict(traceName="kineto", baseTimeNanoseconds=mk.SESSION_START_UTC_NS,
                deviceProperties=[dict(id=0, name="NVIDIA H100 80GB HBM3", totalGlobalMem=85520809984, numSms=132,
                                       computeMajor=9, computeMinor=0)],
                traceEvents=ev)


def stat(s, group, name):
    for n in s["names"]:
        if n["group"] == group and n["name"] == name:
            return n["stat"]
    return None


def kernel(s, name):
    for k in s["kernels"]:
        if k["name"] == name:
            return k
    return None


def main():
    global TALLY
    args = sys.argv[1:]
    without = args[:1] == ["--without-sqlite"]
    TALLY, work = args[-2], args[-1]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    db = os.path.join(work, "report_rank1.sqlite")
    mk.write(db)
    if without:
        r = tally("summary", db)
        check(r.returncode == 3 and "built without SQLite" in r.stderr and "report_rank1.sqlite" in r.stderr,
              f"built without SQLite: {r.stderr}")
        return 1 if fails else 0
    rows = mk.rows()

    # ---- 1. the numbers, from the rows ----
    a = aggregate(db, os.path.join(work, "nsys.json"))
    check(len(a["sessions"]) == 1, "one session")
    s = a["sessions"][0]
    inp = a["inputs"][0]
    check(inp["format"] == "nsys-sqlite", f"format {inp['format']}")
    check(inp["rank"] == 1 and inp["rank_source"] == "name", f"rank {inp['rank']} from {inp['rank_source']}")
    check(inp["warnings"] == [], f"no warnings: {inp['warnings']}")
    check(s["device_name"] == "NVIDIA H100 80GB HBM3", f"device {s['device_name']}")
    gemm = kernel(s, mk.GEMM)
    gemm_rows = [k for k in rows["kernels"] if k["name"] == mk.GEMM]
    check(gemm is not None and gemm["stat"]["count"] == len(gemm_rows) == 6, "6 GEMMs")
    check(gemm is not None and gemm["stat"]["total"] == sum(k["end"] - k["start"] for k in gemm_rows) == 10_500_000,
          f"GEMM total {gemm and gemm['stat']['total']}")
    check(gemm is not None and gemm["type"] == "compute", "GEMM is compute")
    nccl = kernel(s, mk.NCCL)
    check(nccl is not None and nccl["type"] == "communication" and nccl["stat"]["total"] == 3_000_000,
          f"NCCL kernel: {nccl}")
    check(kernel(s, "Memcpy HtoD (Pinned -> Device)") is not None, "the copy named as Kineto names it")
    check(kernel(s, "Memset (Device)") is not None, "the memset named as Kineto names it")
    ts = stat(s, "sections", "train_step")
    check(ts is not None and ts["count"] == 3 and ts["total"] == 30_000_000, f"train_step: {ts}")
    check(stat(s, "sections", "forward") is not None and stat(s, "sections", "forward")["total"] == 11_700_000,
          "forward (a registered NVTX string, textId) read")
    check(stat(s, "sections", "dataset ready") is None, "an NVTX mark is no range")
    check(stat(s, "sections", "app") is None, "an NVTX domain is no range")
    lk = stat(s, "runtime", "cudaLaunchKernel")
    check(lk is not None and lk["count"] == 9, f"cudaLaunchKernel without its _v7000: {lk}")
    check(stat(s, "runtime", "cuLaunchKernel") is not None, "driver calls kept")
    gpu_iv = [(k["start"], k["end"]) for t in ("kernels", "memcpy", "memset") for k in rows[t]]
    g = s["gpu"]
    span = max(e for _, e in gpu_iv) - min(b for b, _ in gpu_iv)
    busy = union(gpu_iv)
    compute = union([(k["start"], k["end"]) for k in rows["kernels"] if k["name"] != mk.NCCL])
    comm = union([(k["start"], k["end"]) for k in rows["kernels"] if k["name"] == mk.NCCL])
    check(g["kernel_time"] == span == 27_330_000, f"kernel time {g['kernel_time']} (expected {span})")
    check(g["busy"] == busy == 11_350_000, f"busy {g['busy']} (expected {busy})")
    check(g["idle"] == span - busy, f"idle {g['idle']}")
    check(g["compute"] == compute, f"compute {g['compute']} (expected {compute})")
    check(g["comm"] == comm == 3_000_000, f"communication {g['comm']} (expected {comm})")
    check(g["comm_compute"] == comm, "the all-reduce runs entirely under a GEMM")
    # launch delays: the idle breakdown's host_wait needs each kernel's launch time, linked by
    # correlation id; without it every gap would count as "other"
    check(g["streams"] and g["streams"][0][2] > 0, f"host_wait from correlated launches: {g['streams']}")

    # ---- 2. the same workload as a Kineto trace ----
    kt = os.path.join(work, "rank1.pt.trace.json")
    with open(kt, "w") as f:
        json.dump(kineto_trace(rows), f)
    b = aggregate(kt, os.path.join(work, "kineto.json"))
    sb = b["sessions"][0]
    check(sb["gpu"] == s["gpu"], f"GPU breakdown equal to the Kineto trace's:\n {s['gpu']}\n {sb['gpu']}")
    check(sb["kernels"] == s["kernels"], "kernels equal to the Kineto trace's")
    names_a = {(n["group"], n["name"]): n["stat"] for n in s["names"]}
    names_b = {(n["group"], n["name"]): n["stat"] for n in sb["names"]}
    check(names_a == names_b, f"names equal to the Kineto trace's: {set(names_a) ^ set(names_b)}")
    check(s["steps"] == sb["steps"], "steps equal")

    # ---- 3. compressed and archived: read in memory ----
    gz = os.path.join(work, "gz", "report_rank1.sqlite.gz")
    os.makedirs(os.path.dirname(gz))
    with open(db, "rb") as f, gzip.open(gz, "wb") as o:
        o.write(f.read())
    c = aggregate(gz, os.path.join(work, "gz.json"))
    check(c["sessions"][0]["gpu"] == s["gpu"] and c["sessions"][0]["kernels"] == s["kernels"], "gzip: same numbers")
    tgz = os.path.join(work, "job.tar.gz")
    with tarfile.open(tgz, "w:gz") as t:
        t.add(db, arcname="job/report_rank1.sqlite")
    d = aggregate(tgz, os.path.join(work, "tgz.json"))
    check(d["sessions"][0]["gpu"] == s["gpu"] and d["inputs"][0]["rank"] == 1, "tar.gz member: same numbers")

    # ---- 4. bad inputs ----
    cut = os.path.join(work, "bad", "cut_rank0.sqlite")
    os.makedirs(os.path.dirname(cut))
    with open(db, "rb") as f:
        data = f.read()
    with open(cut, "wb") as o:
        o.write(data[: len(data) // 3])
    r = tally("inspect", cut)
    check(r.returncode in (0, 3) and "cut_rank0.sqlite" in r.stderr + r.stdout and r.returncode < 128,
          f"a cut export: a message naming it (exit {r.returncode}): {r.stderr}")
    other = os.path.join(work, "bad", "other.sqlite")
    import sqlite3
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.close()
    r = tally("summary", other)
    check(r.returncode == 3 and "without Nsight Systems' CUDA or NVTX tables" in r.stderr,
          f"an SQLite file that is no export (exit {r.returncode}): {r.stderr}")
    rep = os.path.join(work, "bad", "report1.nsys-rep")
    with open(rep, "wb") as o:
        o.write(b"\x00\x01QDSTRM\x00" + bytes(range(256)) * 8)
    r = tally("summary", rep)
    check(r.returncode == 3 and "nsys export --type sqlite" in r.stderr, f".nsys-rep named: {r.stderr}")
    # found by walking beside its export: a note, no problem (--strict passes)
    both = os.path.join(work, "both")
    os.makedirs(both)
    shutil.copy(db, both)
    shutil.copy(rep, both)
    r = tally("validate", "--strict", both)
    check(r.returncode == 0 and "nsys export --type sqlite" in r.stdout + r.stderr,
          f".nsys-rep beside its export: a note (exit {r.returncode}): {r.stdout} {r.stderr}")

    if fails:
        print(f"{len(fails)} check(s) failed")
        return 1
    print("nsys: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
