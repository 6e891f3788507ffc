#!/usr/bin/env python3
"""check_telemetry.py TALLY FIXTURES CORPUS WORKDIR [PIPELINE FAKE_NVML]

The sampled telemetry (docs/analysis.md, Telemetry) end to end, on the numbers a
user reads in `tally summary`, the aggregate JSON, the Markdown and the HTML:

  crafted libtally reports: rank 0 with one GPU (utilization 60/80, temperature
      ramping 60..80 C, 300 W for 10 s), rank 1 with two GPUs (90/86 C, 500 + 400 W),
      on two hosts; per rank means and peaks, energy 3000 J and 9000 J, the rows across
      ranks, the small multiples (one row per rank and GPU), and the merge of partials
      byte-identical to the whole;
  the same two ranks on one host, both sampling GPU 0 and GPU 1 (each rank's sampler
      reads every GPU of its node): each GPU counted once in the totals;
  crafted Inferix reports: a monitor that could not read temperature (0 in every
      point) has no temperature series (must not be shown as 0 C);
  the corpus Inferix reports: every number computed here from the files themselves;
  a real run of the sample program with the fake NVML (2 GPUs): 2 GPUs, 75 %, 60 C,
      600 W for the rank, energy = 600 W x the sampled time;
  an input without samples: no telemetry table, section says so, totals null;
  what the seeds record besides telemetry (issue 13): the corpus Inferix reports' diffusion
      metrics (FPS, blocks per second, first-block delay, block size) computed here from the
      files, their events and tags; the crafted libtally reports' events, counters, tags and
      host; FramePack's step count from its loop summary and its snapshots as a chart; in
      summary, JSON, Markdown and HTML.
"""
import copy
import glob
import json
import math
import os
import re
import subprocess
import sys

tally, fixtures, corpus, work = sys.argv[1:5]
pipeline = sys.argv[5] if len(sys.argv) > 5 else None
fake_nvml = sys.argv[6] if len(sys.argv) > 6 else None
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(a, b, what, tol=1e-6):
    ok = a is not None and b is not None and abs(a - b) <= tol * max(1.0, abs(b))
    check(ok, "%s: got %r, expected %r" % (what, a, b))


def run(*args, cwd=None):
    p = subprocess.run([tally] + list(args), cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr)
    check(p.returncode == 0, "tally %s exited %d" % (" ".join(args), p.returncode))
    return p.stdout


def trapezoid(ts, vs):
    return sum(0.5 * (vs[i] + vs[i - 1]) * (ts[i] - ts[i - 1]) for i in range(1, len(ts)))


os.makedirs(work, exist_ok=True)

# ---- crafted libtally reports -------------------------------------------------
base = json.load(open(os.path.join(fixtures, "tally-report-v1.json")))
N = 21  # every 0.5 s for 10 s


def report(rank, gpus, path, host=None):
    d = copy.deepcopy(base)
    d["rank"], d["world_size"] = rank, 2
    d["system"]["hostname"] = host or "node%d" % rank
    d["start_time_unix_ns"] = 1750000000000000000
    series = []
    for i in range(N):
        pt = {"time_ns": i * 500000000, "cpu_pct": 100.0 + 10 * rank + (i % 2) * 20,
              "rss_bytes": 2e9 + i * 1e8, "system_available_bytes": 6e10 - i * 1e9,
              "load1": 1.0 + rank, "gpus": []}
        for g in gpus:
            pt["gpus"].append({"index": g["index"], "used_bytes": g["mem"] + i * 1e8, "total_bytes": 85520809984,
                               "utilization_pct": g["util"](i), "memory_utilization_pct": 40,
                               "temperature_c": g["temp"](i), "power_w": g["power"]})
        series.append(pt)
    d["sampler"] = {"interval_ms": 500, "points_dropped": 0, "series": series}
    d["system"]["gpus"] = [{"index": g["index"], "name": "GPU %d of rank %d" % (g["index"], rank),
                            "used_bytes": 1000000, "total_bytes": 85520809984} for g in gpus]
    json.dump(d, open(path, "w"))


crafted = os.path.join(work, "crafted")
os.makedirs(crafted, exist_ok=True)
report(0, [{"index": 0, "mem": 1e10, "util": lambda i: 60 if i % 2 == 0 else 80,
            "temp": lambda i: 60 + i, "power": 300.0}], os.path.join(crafted, "r0.report.json"))
report(1, [{"index": 0, "mem": 2e10, "util": lambda i: 90, "temp": lambda i: 90, "power": 500.0},
           {"index": 1, "mem": 3e10, "util": lambda i: 50, "temp": lambda i: 86, "power": 400.0}],
       os.path.join(crafted, "r1.report.json"))

agg_path = os.path.join(work, "crafted.json")
run("aggregate", "-q", "r0.report.json", "r1.report.json", "-o", agg_path, cwd=crafted)
agg = json.load(open(agg_path))
r0, r1 = agg["ranks"][0]["telemetry"], agg["ranks"][1]["telemetry"]
check(r0["gpus"] == 1 and r1["gpus"] == 2, "GPUs per rank: %r %r" % (r0["gpus"], r1["gpus"]))
ut0 = [60 if i % 2 == 0 else 80 for i in range(N)]
close(r0["series"]["gpu_util_pct"]["mean"], sum(ut0) / N, "rank 0 utilization mean")
close(r0["series"]["gpu_temperature_c"]["mean"], 70.0, "rank 0 temperature mean")
close(r0["series"]["gpu_temperature_c"]["max"], 80.0, "rank 0 temperature max")
close(r1["series"]["gpu_temperature_c"]["mean"], 88.0, "rank 1 temperature mean (2 GPUs)")
close(r1["series"]["gpu_temperature_c"]["max"], 90.0, "rank 1 temperature max")
check(r1["series"]["gpu_temperature_c"]["samples"] == 2 * N, "rank 1 temperature samples")
close(r0["energy_j"], 3000.0, "rank 0 energy (300 W x 10 s)")
close(r1["energy_j"], 9000.0, "rank 1 energy (900 W x 10 s)")
close(r0["energy_wh"], 3000.0 / 3600, "rank 0 energy in Wh")
close(r1["power_w"], 900.0, "rank 1 power (both GPUs)")
close(agg["telemetry"]["energy_j"], 12000.0, "energy across ranks")
close(agg["telemetry"]["power_w"], 1200.0, "power across ranks")
close(r0["series"]["process_cpu_pct"]["max"], 120.0, "rank 0 CPU max")
close(r1["series"]["load1"]["mean"], 2.0, "rank 1 load")
close(r0["series"]["rss_bytes"]["max"], 2e9 + 20 * 1e8, "rank 0 RSS max")
x = agg["across_ranks"]["telemetry.gpu_temperature_c.mean"]
check(x["ranks"] == 2 and x["min_rank"] == 0 and x["max_rank"] == 1, "across temperature ranks")
close(x["min"], 70.0, "across temperature min")
close(x["max"], 88.0, "across temperature max")
close(x["median"], 79.0, "across temperature median")
close(x["imbalance"], 88.0 / 79.0, "across temperature imbalance")
close(agg["across_ranks"]["telemetry.energy_j"]["max"], 9000.0, "across energy max")
check("telemetry.gpu_sm_clock_mhz.mean" not in agg["across_ranks"], "no SM clock row without SM clock samples")
ser = [s for s in agg["sessions"] if s["rank"] == 1][0]["telemetry"]
check(len(ser) == 4 * 2 + 4, "rank 1: 4 series per GPU and 4 host series, got %d" % len(ser))
check(all(len(s["bins"]) <= 120 for s in ser), "bins bounded by TL_SERIES_BINS")
# the schema validates (the aggregate_schema test checks the corpus sets)
try:
    import jsonschema
    schema = json.load(open(os.path.join(os.path.dirname(fixtures), "..", "schema", "tally-aggregate.schema.json")))
    jsonschema.validate(agg, schema)
except ImportError:
    pass

out = run("summary", "--width", "200", "r0.report.json", "r1.report.json", cwd=crafted)
check(re.search(r"^GPU temperature\s+2\s+70 °C \(r0\)\s+79 °C\s+88 °C \(r1\)\s+90 °C \(r1\)\s+1\.11x$", out, re.M),
      "summary: the temperature row")
check(re.search(r"^GPU power\s+2\s+300 W \(r0\)\s+375 W\s+450 W \(r1\)\s+500 W \(r1\)", out, re.M),
      "summary: the power row (per GPU: rank 1's mean is 450 W, not 900)")
check("GPU energy 3.333 Wh (12000 J) over 2 ranks (3 GPUs by host and device: a GPU several ranks sampled counts "
      "once), least 0.833 Wh (3000 J) (r0), most 2.500 Wh (9000 J) (r1); mean draw of all GPUs 1200 W"
      in " ".join(out.split()), "summary: the energy line")
check(agg["telemetry"]["gpus"] == 3 and agg["telemetry"]["counted_by"] == "host and device", "totals: 3 GPUs by host")
check("telemetry." not in out, "summary: the ACROSS RANKS table leaves the telemetry rows to TELEMETRY")

html_path = os.path.join(work, "crafted.html")
md_path = os.path.join(work, "crafted.md")
run("report", "-q", "r0.report.json", "r1.report.json", "-o", html_path, "--markdown", md_path, cwd=crafted)
md = open(md_path).read()
check("| GPU temperature | 2 | 70 °C (r0) | 79 °C | 88 °C (r1) | 90 °C (r1) | 1.11x |" in md, "markdown: temperature row")
check("GPU energy 3.333 Wh (12000 J)" in md, "markdown: energy")
html = open(html_path).read()
sec = html[html.index('<section id="telemetry"'):]
sec = sec[:sec.index("</section>")]
check(sec.count('<svg class="chart small"') == 3 * 4 + 2, "HTML: 3 GPU rows x 4 charts + 2 CPU charts, got %d"
      % sec.count('<svg class="chart small"'))
for label in ("rank 0, GPU 0", "rank 1, GPU 0", "rank 1, GPU 1"):
    check("<th scope=\"row\">%s" % label in sec, "HTML: a row for " + label)
check("<td class=\"num\">88 °C (r1)</td>" in sec, "HTML: the temperature row across ranks")
check("GPU energy 3.333 Wh (12000 J)" in sec, "HTML: energy")
check("<td>GPU 1</td><td>GPU temperature</td><td class=\"num\">21</td><td class=\"num\">86 °C</td>" in sec,
      "HTML: the series table lists rank 1's second GPU")
check("<li>rank 1: GPU 0 GPU 0 of rank 1 (79.6 GiB); GPU 1 GPU 1 of rank 1 (79.6 GiB)</li>" in html,
      "HTML System: every GPU of rank 1")
check('id="telemetry-across"' not in html[:html.index('<section id="telemetry"')], "HTML: one telemetry table")

# partials of each rank merged == the whole
for r in (0, 1):
    run("aggregate", "-q", "--partial", "r%d.report.json" % r, "-o", os.path.join(work, "p%d.json" % r), cwd=crafted)
run("merge", "-q", os.path.join(work, "p1.json"), os.path.join(work, "p0.json"), "-o", os.path.join(work, "m.json"))
check(open(os.path.join(work, "m.json"), "rb").read() == open(agg_path, "rb").read(),
      "merged partials equal the whole aggregate")

# ---- one host, two ranks, both sampling both GPUs: each GPU once in the totals ------------
same = os.path.join(work, "samehost")
os.makedirs(same, exist_ok=True)
both = [{"index": 0, "mem": 2e10, "util": lambda i: 90, "temp": lambda i: 70, "power": 500.0},
        {"index": 1, "mem": 3e10, "util": lambda i: 50, "temp": lambda i: 66, "power": 400.0}]
for r in (0, 1):
    report(r, both, os.path.join(same, "r%d.report.json" % r), host="node7")
sa = json.loads(run("aggregate", "-q", "r0.report.json", "r1.report.json", "-o", "-", cwd=same))
close(sa["ranks"][0]["telemetry"]["energy_j"], 9000.0, "one host: rank 0's own energy (both GPUs it sampled)")
close(sa["ranks"][1]["telemetry"]["energy_j"], 9000.0, "one host: rank 1's own energy")
close(sa["telemetry"]["energy_j"], 9000.0, "one host: each GPU once in the total (not 18000 J)")
close(sa["telemetry"]["power_w"], 900.0, "one host: 900 W, not 1800 W")
check(sa["telemetry"]["gpus"] == 2 and sa["telemetry"]["counted_by"] == "host and device", "one host: 2 GPUs")
out = run("summary", "--width", "200", "r0.report.json", "r1.report.json", cwd=same)
check("GPU energy 2.500 Wh (9000 J) over 2 ranks (2 GPUs by host and device" in out, "one host: the energy line")

# ---- crafted Inferix: a monitor that could not read the temperature -----------------
src = sorted(glob.glob(os.path.join(corpus, "inferix/generated/multi_rank_reports/rank_0/profiling_report_*.json")))[0]
inf = json.load(open(src))
for p in inf["gpu_metrics"]["timeline"]:
    p["temperature"] = 0
    p["power"] = 250.0
ipath = os.path.join(work, "inferix_notemp.json")
json.dump(inf, open(ipath, "w"))
ia = json.loads(run("aggregate", "-q", ipath, "-o", "-"))
s = ia["ranks"][0]["telemetry"]["series"]
check("gpu_temperature_c" not in s, "Inferix: temperature 0 in every point is not a series")
close(s["gpu_power_w"]["mean"], 250.0, "Inferix: power")
ts = [p["timestamp"] for p in inf["gpu_metrics"]["timeline"]]
close(ia["ranks"][0]["telemetry"]["energy_j"], 250.0 * (ts[-1] - ts[0]), "Inferix: energy")

# ---- the corpus Inferix reports: numbers from the files ---------------------------------
files = sorted(glob.glob(os.path.join(corpus, "inferix/generated/multi_rank_reports/rank_*/profiling_report_*.json")))
ca = json.loads(run("aggregate", "-q", *files, "-o", "-"))
for f in files:
    d = json.load(open(f))
    rank = d["session_info"].get("rank", 0) if isinstance(d.get("session_info"), dict) else 0
    tl = d["gpu_metrics"]["timeline"]
    r = [x for x in ca["ranks"] if x["rank"] == rank][0]["telemetry"]
    for key, name in (("utilization", "gpu_util_pct"), ("temperature", "gpu_temperature_c"), ("power", "gpu_power_w")):
        v = [p[key] for p in tl]
        close(r["series"][name]["mean"], sum(v) / len(v), "corpus Inferix rank %d %s mean" % (rank, key))
        close(r["series"][name]["max"], max(v), "corpus Inferix rank %d %s max" % (rank, key))
    close(r["series"]["gpu_memory_used_bytes"]["max"], max(p["memory_used_mb"] for p in tl) * 1048576,
          "corpus Inferix rank %d memory max" % rank)
    close(r["energy_j"], trapezoid([p["timestamp"] for p in tl], [p["power"] for p in tl]),
          "corpus Inferix rank %d energy" % rank)
    cpu = [p["cpu_usage"] for p in d["cpu_metrics"]["timeline"]]
    close(r["series"]["system_cpu_pct"]["mean"], sum(cpu) / len(cpu), "corpus Inferix rank %d system CPU" % rank)
# no host in Inferix reports: the totals add up the ranks' samples, and say so
check(ca["telemetry"]["counted_by"] == "rank", "corpus Inferix: totals by rank (hosts unknown)")
close(ca["telemetry"]["energy_j"], sum(x["telemetry"]["energy_j"] for x in ca["ranks"]), "corpus Inferix: summed")
out = run("summary", "--width", "200", *files)
check("the sum over the ranks' samples: hosts not recorded" in out, "corpus Inferix: the energy line says how")

# ---- no samples: nothing claimed ----------------------------------------------------------
dl = sorted(glob.glob(os.path.join(corpus, "hta/trace_filter/*.json*")))
out = run("summary", *dl)
check("TELEMETRY" not in out, "no samples: no TELEMETRY table")
na = json.loads(run("aggregate", "-q", *dl, "-o", "-"))
check(na["telemetry"] == {"power_w": None, "energy_j": None, "energy_wh": None, "gpus": 0, "counted_by": None},
      "no samples: null totals")
nh = os.path.join(work, "none.html")
run("report", "-q", *dl, "-o", nh)
check("No sampled telemetry" in open(nh).read(), "no samples: the HTML section says so")

# ---- a real run with the fake NVML (2 GPUs) ------------------------------------------------
if pipeline and fake_nvml and os.path.exists(pipeline) and os.path.exists(fake_nvml):
    rd = os.path.join(work, "real")
    os.makedirs(rd, exist_ok=True)
    for f in glob.glob(os.path.join(rd, "*")):
        os.unlink(f)
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", TALLY_ENABLE="1", TALLY_OUTPUT_DIR=rd, TALLY_SAMPLE_MS="100",
               TALLY_NVML_LIBRARY=fake_nvml)
    subprocess.run([pipeline, "--steps", "4", "--seed", "1"], env=env, check=True, capture_output=True)
    reps = glob.glob(os.path.join(rd, "*report*.json"))
    check(len(reps) == 1, "the sample program wrote one report")
    rep = json.load(open(reps[0]))
    pts = rep["sampler"]["series"]
    ra = json.loads(run("aggregate", "-q", reps[0], "-o", "-"))
    t = ra["ranks"][0]["telemetry"]
    check(t["gpus"] == 2, "fake NVML: 2 GPUs")
    close(t["series"]["gpu_util_pct"]["mean"], 75.0, "fake NVML: utilization")
    close(t["series"]["gpu_temperature_c"]["max"], 60.0, "fake NVML: temperature")
    close(t["power_w"], 600.0, "fake NVML: the rank's power (2 x 300 W)")
    span = (pts[-1]["time_ns"] - pts[0]["time_ns"]) / 1e9
    close(t["energy_j"], 600.0 * span, "fake NVML: energy = 600 W x the sampled time")
    check(t["series"]["gpu_util_pct"]["samples"] == 2 * len(pts), "fake NVML: a sample per GPU per point")
    ids = {r["id"] for r in ra["recommendations"]}
    skipped = {r["id"] for r in ra["rules_not_applied"]}
    check(not ids & {"thermal", "power-at-cap", "low-sampled-utilization"},
          "fake NVML at 60 C, 300 of 400 W, 75 %%: no thermal, power or utilization finding, got %r" % ids)
    check(not skipped & {"thermal", "power-at-cap", "low-sampled-utilization"},
          "fake NVML: the rules apply (limit and temperatures recorded), skipped %r" % skipped)

    # one GPU, 91 C with NVML's thermal slowdown, at 395 of 400 W with the power cap: the rules fire
    for f in glob.glob(os.path.join(rd, "*")):
        os.unlink(f)
    hot = dict(env, FAKE_NVML_DEVICES="1", FAKE_NVML_TEMP="91", FAKE_NVML_POWER_MW="395000",
               FAKE_NVML_THROTTLE=str(0x20 | 0x4))
    subprocess.run([pipeline, "--steps", "4", "--seed", "1"], env=hot, check=True, capture_output=True)
    reps = glob.glob(os.path.join(rd, "*report*.json"))
    ha = json.loads(run("aggregate", "-q", reps[0], "-o", "-"))
    check(ha["ranks"][0]["telemetry"]["gpus"] == 1, "fake NVML, one GPU: 1 GPU")
    rec = {r["id"]: r for r in ha["recommendations"]}
    check("thermal" in rec and rec["thermal"]["severity"] == "critical" and "peak 91" in rec["thermal"]["evidence"],
          "fake NVML, hot: thermal critical at 91 C with NVML's slowdown, got %r" % rec.get("thermal"))
    check("power-at-cap" in rec and "400 W limit" in rec["power-at-cap"]["evidence"],
          "fake NVML, capped: power-at-cap with the 400 W limit, got %r" % rec.get("power-at-cap"))
    check(ha["headline"]["severity"] == "critical" and "91" in ha["headline"]["text"], "fake NVML, hot: the headline")

# ---- the seeds besides telemetry ---------------------------------------------------------
# Inferix: diffusion metrics from the block records, events, tags
for f in files:
    d = json.load(open(f))
    rank = d["session_info"]["tags"]["rank"]
    r = [x for x in ca["ranks"] if x["rank"] == rank][0]["diffusion"]
    blocks = d["block_analysis"]["blocks"]
    secs = sum(b["computation_time_ms"] for b in blocks) / 1000
    frames = sum(b["block_size"] for b in blocks)
    check(r["blocks"] == len(blocks) and r["frames"] == frames, "Inferix rank %d: blocks and frames" % rank)
    close(r["fps"], frames / secs, "Inferix rank %d: FPS = frames / block time" % rank)
    close(r["fps"], d["block_analysis"]["fps"], "Inferix rank %d: FPS as Inferix's block_analysis" % rank)
    close(r["blocks_per_s"], len(blocks) / secs, "Inferix rank %d: blocks per second" % rank)
    close(r["first_block_ns"], blocks[0]["computation_time_ms"] * 1e6, "Inferix rank %d: first-block delay" % rank,
          tol=1e-9)
    close(r["block_size"], frames / len(blocks), "Inferix rank %d: block size" % rank)
    # the most memory of a block: Inferix's memory_usage_mb (MiB); no RSS per block there
    close(r["block_memory_peak_bytes"], max(b["memory_usage_mb"] for b in blocks) * 2**20,
          "Inferix rank %d: block memory peak" % rank)
    check(r["block_rss_peak_bytes"] is None, "Inferix rank %d: no block RSS" % rank)
    check(r["steps"] == len(d["diffusion_analysis"]["steps"]), "Inferix rank %d: denoising steps" % rank)
    ses = [x for x in ca["sessions"] if x["rank"] == rank][0]
    check(ses["events_total"] == len(d["events"]) and len(ses["events"]) == len(d["events"]),
          "Inferix rank %d: every event kept" % rank)
    check("model=self_forcing" in ses["tags"] and "ring_size=2" in ses["tags"], "Inferix rank %d: tags" % rank)
fps = [x["diffusion"]["fps"] for x in ca["ranks"]]
close(ca["across_ranks"]["diffusion.fps"]["min"], min(fps), "Inferix: FPS across ranks")
out = run("summary", "--width", "120", *files)
check(re.search(r"^VIDEO DIFFUSION$", out, re.M) and re.search(r"^\s+0\s+7\s+21\s+3\s+1\.937\s+0\.646\s+2\.320 s\s+"
                                                              r"1\.420 s\s+28\s+20\.1 GiB\s+–$", out, re.M),
      "summary: the video diffusion table")
check(re.search(r"^Frames per second \(blocks\)\s+2\s+1\.703 \(r1\)", out, re.M), "summary: FPS across ranks")
check("events: 74 recorded: diffusion_step 56, block_computation 14, checkpoint_loaded 2, generation_completed 2"
      in " ".join(out.split()), "summary: the events by name")
ih, im = os.path.join(work, "inferix.html"), os.path.join(work, "inferix.md")
run("report", "-q", *files, "-o", ih, "--markdown", im)
md = open(im).read()
check("| 1 | 7 | 21 | 3 | 1.703 | 0.568 | 2.533 s | 1.633 s | 28 |" in md, "markdown: the video diffusion row")
html = open(ih).read().replace("<wbr>", "")
check('<table id="diffusion-table">' in html and "<td class=\"num\">1.937</td>" in html, "HTML: the diffusion table")
ev = html[html.index('<table id="events-table">'):]
ev = ev[:ev.index("</table>")]
check(ev.count("<tr>") == 1 + 74 and "checkpoint_loaded" in ev and '<code>{"checkpoint_path":null,"use_ema":true}' in ev,
      "HTML: the events table, escaped")
check(html.count('<path class="event"') == 74, "HTML: a marker per event")
check("<code>model=self_forcing</code>" in html, "HTML: tags in the sessions table")
check("<code>model=self_forcing</code>" in open(ih).read(), "HTML: a short tag does not wrap inside")
# a utilization's axis tops at 100% (the samples reach 92%), not 10% above
util = re.findall(r'<text class="tick"[^>]*>([0-9.]+)%</text>', html)
check(util and all(float(u) == 100 for u in util), "HTML: the %% axes of the sparklines top at 100%%: %s" % util)
# the ranks table's device share names the figure it is of (Inferix has NVML's used, no allocated)
check(html.count("<td class=\"num\">\u2013 (NVML used 21.0 GiB: 26.4% of device)</td>") == 2,
      "HTML: the ranks' peak memory share names NVML's used figure")

# libtally (crafted): events, counters, tags, the host
lh, lm = os.path.join(work, "crafted-ctx.html"), os.path.join(work, "crafted-ctx.md")
run("report", "-q", "r0.report.json", "r1.report.json", "-o", lh, "--markdown", lm, cwd=crafted)
html = open(lh).read().replace("<wbr>", "")
check("<dt>Hosts</dt><dd>node0 (rank 0; Linux 6.1 x86_64; 64 CPUs; 64.0 GiB); node1 (rank 1; Linux 6.1 x86_64; "
      "64 CPUs; 64.0 GiB)</dd>" in html, "HTML: the hosts")
check("<dt>Devices</dt><dd>GPU 0 of rank 0 (listed by 1 session); GPU 0 of rank 1 (listed by 1 session); "
      "GPU 1 of rank 1 (listed by 1 session)</dd>" in html, "HTML: the Devices line lists every GPU")
ct = html[html.index('<table id="counters-table">'):]
check("<code>tokens</code></th><td class=\"num\">4</td><td class=\"num\">256</td><td class=\"num\">512</td>"
      "<td class=\"num\">768</td>" in ct, "HTML: the counters table")
check('<code>{"epoch":3}</code>' in html and "<code>job=fixture</code>" in html, "HTML: events and tags")
md = open(lm).read()
check("| 0 | `tokens` | 4 | 256 | 512 | 768 |" in md, "markdown: counters")
out = run("summary", "--width", "120", "r0.report.json", "r1.report.json", cwd=crafted)
check(re.search(r"^\s+0\s+tokens\s+4\s+256\s+512\s+768$", out, re.M), "summary: counters")
check("hosts: node0 (rank 0; Linux 6.1 x86_64; 64 CPUs; 64.0 GiB)" in out, "summary: hosts")

# FramePack: the loop summary's count, and the snapshots drawn
fp = os.path.join(corpus, "framepack/generated/profiling_report.json")
fa = json.loads(run("aggregate", "-q", fp, "-o", "-"))
st = fa["ranks"][0]["steps"]
check(st["count"] == 5 and st["from_summary"] is True and st["durations_ns"] == [], "FramePack: 5 steps from its summary")
out = run("summary", fp)
check(re.search(r"^\s+0\s+1\s+5 \(s\)\s+2\.617 s", out, re.M), "summary: FramePack's 5 steps, marked")
fh = os.path.join(work, "framepack.html")
run("report", "-q", fp, "-o", fh)
html = open(fh).read()
check("<td class=\"num\" title=\"from the report's loop summary" in html and ">5 (summary)</td>" in html,
      "HTML: FramePack's steps, marked")
mem = html[html.index('<section id="memory"'):]
mem = mem[:mem.index("</section>")]
check("<title id=" in mem and "Memory snapshots in order" in mem and mem.count('<g class="note series') == 5
      and mem.count('class="notelbl"') == 5, "HTML: FramePack's snapshots as a chart with 5 labelled points")

if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("ok: telemetry")
