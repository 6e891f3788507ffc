#!/usr/bin/env python3
"""Independent reference for tally's GPU analyses of PyTorch profiler (Kineto) traces.

Written from the definitions in docs/architecture.md ("The analyses") and docs/analysis.md, which follow
Holistic Trace Analysis (HTA); it does not share code with tally's C implementation. Standard
library only, so it runs with the system python3.

For every input trace (plain JSON or gzip, Kineto object form with "traceEvents") it computes,
for the rank named by distributedInfo.rank:

  GPU events    complete events ("ph": "X") of category kernel / gpu_memcpy / gpu_memset
                (legacy Kernel / Memcpy / Memset), plus cuda_sync events whose args carry a
                "stream" other than -1. gpu_user_annotation is not a GPU event.
  times         ts and dur are microseconds written in decimal; they are converted exactly to
                integer nanoseconds (decimal arithmetic, round half to even past 3 decimals).
  kernel type   communication: name starts with nccl / hccl / rccl (any case) or contains
                ncclKernel / ncclDevKernel; memory: memcpy/memset category or a name starting
                with memcpy / memset / dma (any case); cuda_sync: other; everything else: compute.
  window        ProfilerStep#N events (cat user_annotation, cpu_op or legacy Operator). With two
                or more distinct N the highest N is dropped and the window is
                [min start of the kept steps, max end of the kept steps], both ends included.
                A GPU event is in the window when the launch (cuda_runtime / cuda_driver /
                legacy Runtime event with the same args.correlation) starts inside the window;
                a GPU event without a matching launch is in when its own ts is inside.
                Fewer than two steps, or --whole-trace: every GPU event.
  kernel_time   max end - min start of the window's GPU events
  busy          |union of all GPU event intervals|;  idle = kernel_time - busy
  compute       |union of compute intervals|;        non_compute = busy - compute
  percentages   of kernel_time
  overlap       comm_comp_overlap_pct = 100 * |U(comm) & U(compute)| / |U(comm)|, 0 without comm
  type breakdown  time covered by exactly {compute}, {comm}, {memory} and each combination
                (events of type "other" do not take part)
  idle by stream  per (args.device, args.stream), events sorted by (ts, end): gap = ts - end of the
                previous event on that stream; gaps <= 0 are ignored; host_wait when the event's
                launch started after that previous end, else kernel_wait when gap < 30 us, else other.

Usage:
  gpu_reference.py FILE... [--whole-trace] [--json]
  gpu_reference.py --compare-aggregate AGG.json FILE... [--whole-trace] [--tolerance 0.1]
  gpu_reference.py --hta FILE...      emulate HTA itself (see below), for checking against HTA

--compare-aggregate reads tally's aggregate JSON ({"ranks": [{"rank": R, "gpu": {...} | null}]}),
compares idle_pct, compute_pct, non_compute_pct and comm_comp_overlap_pct of every rank with this
reference (|difference| <= tolerance, percentage points), prints both side by side, ends with
"N passed, M failed" and exits 0 only when every rank agrees.

--hta reproduces what HTA's code computes (not tally's definitions) so that HTA's published test
values can be checked: HTA's integer-microsecond rounding (ceil ts, floor end when the trace has
fractional timestamps), any event with a stream other than -1 counted as a GPU event, HTA's
window filter (GPU events whose correlated CPU event starts before the last ProfilerStep, only
when the loaded traces hold two or more ProfilerStep names) and HTA's name-only kernel types
(^nccl.*Kernel, ^Memcpy|^Memset|^dma, names matching .*Sync are "other"). Values are in us.
"""
import argparse
import decimal
import gzip
import json
import math
import os
import re
import sys

# ---------------------------------------------------------------------------------------------
# reading

KERNEL_CATS = {"kernel", "Kernel"}
MEMORY_CATS = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}
GPU_CATS = KERNEL_CATS | MEMORY_CATS
SYNC_CATS = {"cuda_sync"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
STEP_CATS = {"user_annotation", "cpu_op", "Operator"}
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")

KERNEL_WAIT_NS = 30_000  # 30 us

_D1000 = decimal.Decimal(1000)


def load_trace(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    # parse_float keeps the decimal text exact; integers stay int.
    return json.loads(data.decode("utf-8-sig", "surrogateescape"), strict=False,
                      parse_float=decimal.Decimal)


def to_ns(v):
    """Microseconds (int, Decimal, or numeric string) -> integer ns, or None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v * 1000
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        v = decimal.Decimal(repr(v))
    if isinstance(v, str):
        try:
            v = decimal.Decimal(v.strip())
        except decimal.InvalidOperation:
            return None
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return None
        return int((v * _D1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    return None


def as_int(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal) and v.is_finite() and v == v.to_integral_value():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            return None
    return None


RANK_NAME_RE = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)


def find_rank(doc, path, index):
    if isinstance(doc, dict):
        di = doc.get("distributedInfo")
        if isinstance(di, dict):
            r = as_int(di.get("rank"))
            if r is not None:
                return r, "distributedInfo.rank"
    m = RANK_NAME_RE.search(os.path.basename(path))
    if m:
        return int(m.group(1)), "file name"
    return index, "input order"


def kernel_type(name, cat):
    """compute / comm / memory / other, tally's definition."""
    if cat in SYNC_CATS:
        return "other"
    low = name.lower()
    if low.startswith(("nccl", "hccl", "rccl")) or "ncclKernel" in name or "ncclDevKernel" in name:
        return "comm"
    if cat in MEMORY_CATS or low.startswith(("memcpy", "memset", "dma")):
        return "memory"
    return "compute"


class Trace:
    """The parts of one trace file that the GPU analyses need."""

    def __init__(self, path, index):
        self.path = path
        doc = load_trace(path)
        if isinstance(doc, dict):
            events = doc.get("traceEvents")
        else:
            events = doc
        if not isinstance(events, list):
            raise ValueError(f"{path}: not a trace (no traceEvents array)")
        self.rank, self.rank_source = find_rank(doc, path, index)
        self.gpu = []       # dicts: ts, end, name, cat, type, stream, corr
        self.launch = {}    # correlation -> earliest launch ts (ns)
        self.steps = {}     # N -> [start, end]
        self.skipped = 0
        self.raw_events = events  # kept for --hta
        for e in events:
            if not isinstance(e, dict) or e.get("ph") != "X":
                continue
            cat = e.get("cat")
            name = e.get("name")
            if not isinstance(name, str):
                name = "" if name is None else str(name)
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            if cat in GPU_CATS or (cat in SYNC_CATS and "stream" in args
                                   and as_int(args.get("stream")) != -1):
                ts = to_ns(e.get("ts"))
                dur = to_ns(e.get("dur", 0))
                if ts is None or dur is None:
                    self.skipped += 1
                    continue
                if dur < 0:
                    dur = 0
                stream = args.get("stream", e.get("tid"))
                device = as_int(args.get("device"))
                if device is None:
                    device = as_int(e.get("pid"))
                self.gpu.append({
                    "device": 0 if device is None else device,
                    "ts": ts, "end": ts + dur, "name": name, "cat": cat,
                    "type": kernel_type(name, cat),
                    "stream": str(as_int(stream) if as_int(stream) is not None else stream),
                    "corr": as_int(args.get("correlation")),
                })
            elif cat in LAUNCH_CATS:
                corr = as_int(args.get("correlation"))
                ts = to_ns(e.get("ts"))
                if corr is None or ts is None:
                    continue
                if corr not in self.launch or ts < self.launch[corr]:
                    self.launch[corr] = ts
            elif cat in STEP_CATS:
                m = STEP_RE.match(name)
                if not m:
                    continue
                ts = to_ns(e.get("ts"))
                dur = to_ns(e.get("dur", 0))
                if ts is None or dur is None:
                    continue
                n = int(m.group(1))
                if n in self.steps:
                    self.steps[n][0] = min(self.steps[n][0], ts)
                    self.steps[n][1] = max(self.steps[n][1], ts + dur)
                else:
                    self.steps[n] = [ts, ts + dur]


# ---------------------------------------------------------------------------------------------
# interval arithmetic


def merge(intervals):
    """Sorted, disjoint union of [start, end) intervals (touching ones merge)."""
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(merged):
    return sum(e - s for s, e in merged)


def intersect_len(a, b):
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if e > s:
            total += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


TYPE_BITS = {"compute": 1, "comm": 2, "memory": 4}
COMBOS = {
    1: "compute", 2: "comm", 4: "memory",
    3: "compute+comm", 5: "compute+memory", 6: "comm+memory", 7: "compute+comm+memory",
}


def type_breakdown(events):
    """Time covered by exactly each combination of kernel types (sweep over the points)."""
    points = []
    for t, bit in TYPE_BITS.items():
        for s, e in merge([(ev["ts"], ev["end"]) for ev in events if ev["type"] == t]):
            points.append((s, bit))
            points.append((e, -bit))
    points.sort()
    out = {name: 0 for name in COMBOS.values()}
    mask = 0
    prev = None
    for t, delta in points:
        if prev is not None and mask and t > prev:
            out[COMBOS[mask]] += t - prev
        # merged intervals of one type never overlap, so +bit / -bit toggles the bit
        mask = mask | delta if delta > 0 else mask & ~(-delta)
        prev = t
    return out


# ---------------------------------------------------------------------------------------------
# tally's definitions


def choose_window(tr, whole_trace):
    steps = sorted(tr.steps)
    info = {"steps": [], "dropped_step": None, "whole_trace": True,
            "start_ns": None, "end_ns": None, "reason": ""}
    if whole_trace:
        info["reason"] = "--whole-trace"
        return info
    if len(steps) < 2:
        info["reason"] = f"{len(steps)} ProfilerStep(s): whole trace"
        info["steps"] = steps
        return info
    kept = steps[:-1]
    info.update({
        "steps": kept, "dropped_step": steps[-1], "whole_trace": False,
        "start_ns": min(tr.steps[n][0] for n in kept),
        "end_ns": max(tr.steps[n][1] for n in kept),
        "reason": f"ProfilerStep#{kept[0]}..#{kept[-1]} (last step #{steps[-1]} dropped)",
    })
    return info


def analyze(tr, whole_trace=False):
    win = choose_window(tr, whole_trace)
    matched = 0
    events = []
    for ev in tr.gpu:
        launch = tr.launch.get(ev["corr"]) if ev["corr"] is not None else None
        ev = dict(ev, launch=launch)
        if launch is not None:
            matched += 1
        if not win["whole_trace"]:
            t = launch if launch is not None else ev["ts"]
            if not (win["start_ns"] <= t <= win["end_ns"]):
                continue
        events.append(ev)
    res = {
        "file": tr.path, "rank": tr.rank, "rank_source": tr.rank_source,
        "window": win, "gpu_events": len(events), "gpu_events_in_trace": len(tr.gpu),
        "launch_matched": matched, "skipped_events": tr.skipped,
    }
    if not events:
        res["gpu"] = None
        return res
    start = min(ev["ts"] for ev in events)
    end = max(ev["end"] for ev in events)
    kernel_time = end - start
    allm = merge([(ev["ts"], ev["end"]) for ev in events])
    by_type = {t: merge([(ev["ts"], ev["end"]) for ev in events if ev["type"] == t])
               for t in ("compute", "comm", "memory", "other")}
    busy = length(allm)
    compute = length(by_type["compute"])
    comm = length(by_type["comm"])
    overlap = intersect_len(by_type["comm"], by_type["compute"])

    def pct(x):
        return 100.0 * x / kernel_time if kernel_time > 0 else 0.0

    g = {
        "first_start_ns": start, "last_end_ns": end,
        "kernel_time_ns": kernel_time, "busy_ns": busy, "idle_ns": kernel_time - busy,
        "compute_ns": compute, "non_compute_ns": busy - compute,
        "comm_ns": comm, "memory_ns": length(by_type["memory"]),
        "other_ns": length(by_type["other"]), "comm_compute_overlap_ns": overlap,
        "idle_pct": pct(kernel_time - busy), "compute_pct": pct(compute),
        "non_compute_pct": pct(busy - compute),
        "comm_comp_overlap_pct": 100.0 * overlap / comm if comm > 0 else 0.0,
        "type_breakdown_ns": type_breakdown(events),
        "counts": {t: sum(1 for ev in events if ev["type"] == t)
                   for t in ("compute", "comm", "memory", "other")},
    }
    g["idle_by_stream"], g["idle_breakdown_ns"] = idle_by_stream(events)
    res["gpu"] = g
    return res


def stream_sort_key(key):
    device, stream = key
    return (device, 0, int(stream), "") if stream.lstrip("-").isdigit() else (device, 1, 0, stream)


def idle_by_stream(events):
    """Per (device, stream): a list like tally's aggregate, plus the totals over streams."""
    streams = {}
    for ev in events:
        streams.setdefault((ev["device"], ev["stream"]), []).append(ev)
    out = []
    tot = {"host_wait_ns": 0, "kernel_wait_ns": 0, "other_ns": 0}
    for key in sorted(streams, key=stream_sort_key):
        evs = sorted(streams[key], key=lambda ev: (ev["ts"], ev["end"]))
        st = key[1]
        r = {"device": key[0], "stream": int(st) if st.lstrip("-").isdigit() else st,
             "events": len(evs), "gaps": 0,
             "host_wait_ns": 0, "kernel_wait_ns": 0, "other_ns": 0}
        for prev, ev in zip(evs, evs[1:]):
            gap = ev["ts"] - prev["end"]
            if gap <= 0:
                continue
            r["gaps"] += 1
            if ev["launch"] is not None and ev["launch"] > prev["end"]:
                k = "host_wait_ns"
            elif gap < KERNEL_WAIT_NS:
                k = "kernel_wait_ns"
            else:
                k = "other_ns"
            r[k] += gap
            tot[k] += gap
        out.append(r)
    return out, tot


# ---------------------------------------------------------------------------------------------
# --hta: what HTA's own code computes (units: us, as HTA works)

HTA_COMM_RE = re.compile(r"^nccl.*Kernel")
HTA_MEM_RE = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
HTA_NONCOMPUTE_RE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")


def hta_kernel_type(name):
    if HTA_COMM_RE.match(name):
        return "comm"
    if HTA_MEM_RE.match(name):
        return "memory"
    if not HTA_NONCOMPUTE_RE.match(name):
        return "compute"
    return "other"


def hta_rows(tr):
    """HTA's data frame rows: events with dur and cat (cat != Trace), times in HTA's units."""
    events = tr.raw_events
    # pandas makes the ts column float64 when any ts is a non-integer JSON number or missing
    float_ts = any(isinstance(e, dict) and (not isinstance(e.get("ts"), int)
                                            or isinstance(e.get("ts"), bool))
                   for e in events)
    rows = []
    for e in events:
        if not isinstance(e, dict):
            continue
        cat, dur, ts = e.get("cat"), e.get("dur"), e.get("ts")
        if cat is None or dur is None or cat == "Trace" or ts is None:
            continue
        try:
            tsf, durf = float(ts), float(dur)
        except (TypeError, ValueError):
            continue
        if float_ts:
            end = math.floor(tsf + durf)
            tsf = math.ceil(tsf)
        else:
            end = tsf + durf
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        st = as_int(args.get("stream", -1))
        corr = as_int(args.get("correlation", -1))
        name = e.get("name")
        rows.append({"ts": tsf, "end": end, "name": name if isinstance(name, str) else str(name),
                     "stream": -1 if st is None else st, "corr": -1 if corr is None else corr,
                     "cat": cat, "tid": e.get("tid")})
    # HTA's _fix_mtia_memory_kernels: MTIA device events without a stream that start inside a
    # ProfilerStep take their tid as the stream (this is what makes HTA's published MTIA numbers).
    steps = [(r["ts"], r["end"]) for r in rows if r["name"].startswith("ProfilerStep")]
    for r in rows:
        if r["cat"] == "mtia_ccp_events" and r["stream"] == -1 and as_int(r["tid"]) is not None \
                and any(s <= r["ts"] <= e for s, e in steps):
            r["stream"] = as_int(r["tid"])
    return rows


def hta_merge(rows):
    """HTA's merge_kernel_intervals: groups by ts > cummax(previous ends)."""
    rows = sorted(rows, key=lambda r: r["ts"])
    groups = []
    cummax = None
    for r in rows:
        if cummax is None or r["ts"] > cummax:
            groups.append([r["ts"], r["end"]])
        else:
            groups[-1][0] = min(groups[-1][0], r["ts"])
            groups[-1][1] = max(groups[-1][1], r["end"])
        cummax = r["end"] if cummax is None else max(cummax, r["end"])
    return groups


def hta_analyze(traces):
    step_names = set()
    per = []
    for tr in traces:
        rows = hta_rows(tr)
        step_names |= {r["name"] for r in rows if r["name"].startswith("ProfilerStep")}
        per.append((tr, rows))
    results = []
    for tr, rows in per:
        filtered = len(step_names) >= 2
        if filtered:
            cpu = [r for r in rows if r["stream"] == -1]
            if cpu:
                steps = [r for r in cpu if r["name"] in step_names]
                last_start = max(r["ts"] for r in steps) if steps else min(r["ts"] for r in cpu)
                corrs = {r["corr"] for r in cpu if r["ts"] < last_start}
                gpu = [r for r in rows if r["stream"] > 0 and r["corr"] in corrs]
            else:
                gpu = [r for r in rows if r["stream"] != -1]
                cpu = []
        else:
            cpu = [r for r in rows if r["stream"] == -1]
            gpu = [r for r in rows if r["stream"] != -1]
        res = {"file": tr.path, "rank": tr.rank, "hta_window_filter": filtered,
               "gpu_events": len(gpu)}
        if not gpu:
            res["gpu"] = None
            results.append(res)
            continue
        for r in gpu:
            r["type"] = hta_kernel_type(r["name"])
        groups = hta_merge(gpu)
        kernel_time = groups[-1][1] - groups[0][0]
        idle = kernel_time - sum(e - s for s, e in groups)
        comp = hta_merge([r for r in gpu if r["type"] == "compute"])
        comm = hta_merge([r for r in gpu if r["type"] == "comm"])
        compute = sum(e - s for s, e in comp)
        comm_len = sum(e - s for s, e in comm)
        ov = intersect_len(comm, comp)
        # idle breakdown: runtime ts via correlation (CPU side: stream == -1 rows)
        cpu_ts = {}
        for r in (cpu if filtered else [r for r in rows if r["stream"] == -1]):
            if r["corr"] not in (-1, 0):
                cpu_ts[r["corr"]] = r["ts"]
        streams = {}
        for r in gpu:
            streams.setdefault(r["stream"], []).append(r)
        idle_st = {}
        for st, evs in sorted(streams.items()):
            evs.sort(key=lambda r: r["ts"])
            acc = {"host_wait": 0.0, "kernel_wait": 0.0, "other": 0.0}
            for prev, r in zip(evs, evs[1:]):
                gap = r["ts"] - prev["end"]
                rt = cpu_ts.get(r["corr"]) if r["stream"] > 0 else None
                if rt is not None and rt > prev["end"]:
                    acc["host_wait"] += gap
                elif gap < 30:
                    acc["kernel_wait"] += gap
                else:
                    acc["other"] += gap
            idle_st[str(st)] = acc
        res["gpu"] = {
            "kernel_time_us": kernel_time, "idle_us": idle, "compute_us": compute,
            "non_compute_us": kernel_time - compute - idle,
            "idle_pct": 100.0 * idle / kernel_time if kernel_time else 0.0,
            "compute_pct": 100.0 * compute / kernel_time if kernel_time else 0.0,
            "non_compute_pct": 100.0 * (kernel_time - compute - idle) / kernel_time
            if kernel_time else 0.0,
            "comm_comp_overlap_pct": 100.0 * ov / comm_len if comm_len else float("nan"),
            "idle_by_stream_us": idle_st,
        }
        results.append(res)
    return results


# ---------------------------------------------------------------------------------------------
# output


def fmt_ns(ns):
    if ns is None:
        return "-"
    if abs(ns) >= 1_000_000:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e3:.3f} us"


def print_text(results, out=sys.stdout):
    for r in results:
        w = r["window"]
        print(f"== rank {r['rank']} ({r['rank_source']})  {r['file']}", file=out)
        if w["whole_trace"]:
            print(f"   window: whole trace ({w['reason']})", file=out)
        else:
            print(f"   window: [{w['start_ns']}, {w['end_ns']}] ns = {fmt_ns(w['end_ns'] - w['start_ns'])}"
                  f"  {w['reason']}", file=out)
        print(f"   GPU events: {r['gpu_events']} in window of {r['gpu_events_in_trace']}"
              f" (launch found for {r['launch_matched']})", file=out)
        g = r["gpu"]
        if g is None:
            print("   no GPU events", file=out)
            continue
        print(f"   kernel_time {g['kernel_time_ns']} ns ({fmt_ns(g['kernel_time_ns'])})", file=out)
        for k in ("idle", "compute", "non_compute"):
            print(f"   {k:<12} {g[k + '_ns']:>14} ns  {g[k + '_pct']:8.3f} %", file=out)
        print(f"   comm {g['comm_ns']} ns, memory {g['memory_ns']} ns, other {g['other_ns']} ns;"
              f" comm/compute overlap {g['comm_compute_overlap_ns']} ns ="
              f" {g['comm_comp_overlap_pct']:.3f} % of comm", file=out)
        tb = ", ".join(f"{k} {v}" for k, v in g["type_breakdown_ns"].items() if v)
        print(f"   type breakdown (ns): {tb or '-'}", file=out)
        ib = g["idle_breakdown_ns"]
        print(f"   idle breakdown (ns, all streams): host_wait {ib['host_wait_ns']},"
              f" kernel_wait {ib['kernel_wait_ns']}, other {ib['other_ns']}", file=out)
        for v in g["idle_by_stream"]:
            print(f"     device {v['device']} stream {v['stream']!s:>4}: {v['events']:>6} events"
                  f" {v['gaps']:>5} gaps  host_wait {v['host_wait_ns']:>12}"
                  f"  kernel_wait {v['kernel_wait_ns']:>10}  other {v['other_ns']:>12}", file=out)


def results_json(results):
    ranks = {}
    for r in results:
        key = str(r["rank"])
        n = 1
        while key in ranks:
            key = f"{r['rank']}#{n}"
            n += 1
        flat = {k: v for k, v in r.items() if k != "gpu"}
        if r["gpu"] is None:
            flat["no_gpu_events"] = True
        else:
            flat.update(r["gpu"])
        ranks[key] = flat
    return {"ranks": ranks}


def load_all(paths):
    traces = []
    for i, p in enumerate(expand(paths)):
        traces.append(Trace(p, i))
    return traces


def expand(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, files in os.walk(p):
                for f in sorted(files):
                    if f.endswith((".json", ".gz")):
                        out.append(os.path.join(root, f))
        else:
            out.append(p)
    return sorted(out) if any(os.path.isdir(p) for p in paths) else out


# ---------------------------------------------------------------------------------------------
# --compare-aggregate

METRICS = ("idle_pct", "compute_pct", "non_compute_pct", "comm_comp_overlap_pct")


def compare(agg_path, results, tol):
    with open(agg_path, "rb") as f:
        agg = json.loads(f.read().decode("utf-8-sig"))
    tally = {}
    for entry in agg.get("ranks", []):
        if isinstance(entry, dict) and as_int(entry.get("rank")) is not None:
            tally[as_int(entry["rank"])] = entry.get("gpu")
    ref = {}
    dup = set()
    for r in results:
        if r["rank"] in ref:
            dup.add(r["rank"])
        ref[r["rank"]] = r
    passed = failed = 0
    for rank in sorted(set(tally) | set(ref)):
        t = tally.get(rank)
        r = ref.get(rank)
        g = r["gpu"] if r else None
        if rank in dup:
            print(f"rank {rank}: FAIL: several reference files have this rank")
            failed += 1
            continue
        if r is None:
            if t is None:
                print(f"rank {rank}: no GPU numbers in tally and no reference file: not checked")
                continue
            print(f"rank {rank}: FAIL: tally has GPU numbers but no reference file has this rank")
            failed += 1
            continue
        if rank not in tally:
            print(f"rank {rank}: FAIL: missing from the aggregate ({r['file']})")
            failed += 1
            continue
        if g is None or t is None:
            ok = g is None and t is None
            print(f"rank {rank}: {'ok' if ok else 'FAIL'}: reference "
                  f"{'has no' if g is None else 'has'} GPU events, tally gpu is "
                  f"{'null' if t is None else 'set'}")
            passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
            continue
        bad = []
        print(f"rank {rank}: {r['file']}; reference window: {r['window']['reason'] or 'steps'},"
              f" {r['gpu_events']} GPU events")
        print(f"rank {rank}: {'metric':<22} {'tally':>10} {'reference':>10} {'diff':>8}")
        for m in METRICS:
            tv = t.get(m)
            rv = g[m]
            try:
                diff = float(tv) - rv
            except (TypeError, ValueError):
                diff = float("inf")
            flag = "" if abs(diff) <= tol else "  <-- differs"
            if flag:
                bad.append(m)
            tvs = f"{float(tv):10.3f}" if isinstance(tv, (int, float)) else f"{str(tv):>10}"
            print(f"        {m:<22} {tvs} {rv:10.3f} {diff:8.3f}{flag}")
        for key, mine in (("events", r["gpu_events"]), ("kernel_time_us", g["kernel_time_ns"] / 1000),
                          ("idle_us", g["idle_ns"] / 1000), ("compute_us", g["compute_ns"] / 1000),
                          ("comm_us", g["comm_ns"] / 1000)):
            if key in t:  # shown for diagnosis, not checked
                print(f"        {key:<22} {t[key]!s:>10} {mine:10.3f}   (not checked)")
        if bad:
            failed += 1
            print(f"rank {rank}: FAIL ({', '.join(bad)})")
        else:
            passed += 1
            print(f"rank {rank}: ok")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="trace files or directories")
    ap.add_argument("--whole-trace", action="store_true", help="use every GPU event")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--compare-aggregate", metavar="AGG.json",
                    help="check tally's aggregate JSON against this reference")
    ap.add_argument("--tolerance", type=float, default=0.1,
                    help="allowed difference in percentage points (default 0.1)")
    ap.add_argument("--hta", action="store_true",
                    help="emulate Holistic Trace Analysis' own computation (us, HTA window)")
    a = ap.parse_args(argv)
    traces = load_all(a.files)
    if a.hta:
        res = hta_analyze(traces)
        if a.json:
            json.dump({"ranks": {str(r["rank"]): r for r in res}}, sys.stdout, indent=1,
                      default=str)
            print()
        else:
            for r in res:
                g = r["gpu"]
                print(f"== rank {r['rank']}  {r['file']}  HTA window filter: {r['hta_window_filter']},"
                      f" {r['gpu_events']} GPU rows")
                if g is None:
                    print("   no GPU events")
                    continue
                print(f"   kernel_time {g['kernel_time_us']} us  idle {g['idle_us']}  compute"
                      f" {g['compute_us']}  non_compute {g['non_compute_us']}")
                print(f"   idle {g['idle_pct']:.3f} %  compute {g['compute_pct']:.3f} %  non_compute"
                      f" {g['non_compute_pct']:.3f} %  comm/comp overlap {g['comm_comp_overlap_pct']:.3f} %")
                for st, v in g["idle_by_stream_us"].items():
                    print(f"     stream {st:>4}: " + "  ".join(f"{k} {x:.0f}" for k, x in v.items()))
        return 0
    results = [analyze(t, a.whole_trace) for t in traces]
    if a.compare_aggregate:
        return compare(a.compare_aggregate, results, a.tolerance)
    if a.json:
        json.dump(results_json(results), sys.stdout, indent=1, sort_keys=False)
        print()
    else:
        print_text(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
