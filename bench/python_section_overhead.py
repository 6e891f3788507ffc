#!/usr/bin/env python3
"""Cost of one timed section in Python: tally's module against what pipelines use today.

usage: PYTHONPATH=BUILD/python python3 bench/python_section_overhead.py [--n N] [--rounds R]

Four ways to time an empty block, interleaved round by round in one process so that
a busy machine slows them all alike (the figure is each one's median over rounds):

  empty      an empty context manager (a class with __enter__/__exit__): the floor
             a `with` statement costs whatever it does
  tally      `with tally.section("s"):` (libtally underneath, recording)
  framepack  FramePack's pattern: time.perf_counter() on entry and exit, then a
             threading.Lock and a dict of lists (timings[name].append(duration)),
             as a @contextlib.contextmanager generator
  framepack_class  the same pattern as a hand-written class (no generator): the
             cheapest a pure-Python profiler of that kind can be
  record_function  torch.profiler.record_function("s") with no profiler running,
             only when torch is importable

Prints ns per section (also minus the bare loop's cost per turn) and the ratios of
each to tally, minus the loop. The goal of issue 30: tally >= 3x cheaper than FramePack's
pattern. Nothing is timed by the tests; this is a benchmark (bench/README.md).
"""
import argparse
import collections
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100000, help="sections per round (default 100000)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds (default 15)")
    a = ap.parse_args()

    # The outputs go to a temporary directory; nothing is kept.
    out = tempfile.mkdtemp(prefix="tally-pybench-")
    os.environ["TALLY_OUTPUT_DIR"] = out
    # Trace events on, as users run it, with room for every section of the run (beyond
    # TALLY_MAX_EVENTS events are dropped, which costs less and would flatter tally).
    os.environ.setdefault("TALLY_MAX_EVENTS", str(4 * (a.rounds + 1) * a.n))
    import tally

    class Empty:
        __slots__ = ()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    timings = collections.defaultdict(list)
    lock = threading.Lock()
    perf = time.perf_counter

    @contextlib.contextmanager
    def profile_section(name):
        start = perf()
        try:
            yield
        finally:
            d = perf() - start
            with lock:
                timings[name].append(d)

    class ProfileSection:
        __slots__ = ("name", "start")

        def __init__(self, name):
            self.name = name

        def __enter__(self):
            self.start = perf()
            return self

        def __exit__(self, *exc):
            d = perf() - self.start
            with lock:
                timings[self.name].append(d)
            return False

    def run_empty(n):
        for _ in range(n):
            with Empty():
                pass

    def run_tally(n):
        section = tally.section
        for _ in range(n):
            with section("s"):
                pass

    def run_framepack(n):
        for _ in range(n):
            with profile_section("s"):
                pass

    def run_framepack_class(n):
        for _ in range(n):
            with ProfileSection("s"):
                pass

    def run_loop(n):
        for _ in range(n):
            pass

    cases = [("loop", run_loop), ("empty", run_empty), ("tally", run_tally),
             ("framepack", run_framepack), ("framepack_class", run_framepack_class)]
    try:
        import torch  # noqa: F401
        from torch.profiler import record_function

        def run_record_function(n):
            for _ in range(n):
                with record_function("s"):
                    pass

        cases.append(("record_function", run_record_function))
    except ImportError:
        print("torch is not importable: record_function is not measured")

    if not tally.enabled():
        print("tally is disabled (TALLY_ENABLE=0): measuring the disabled cost")
    for _, fn in cases:  # warm up
        fn(a.n // 10)
    per = {name: [] for name, _ in cases}
    for _ in range(a.rounds):
        for name, fn in cases:
            timings.clear()
            t0 = time.perf_counter_ns()
            fn(a.n)
            per[name].append((time.perf_counter_ns() - t0) / a.n)
    med = {name: statistics.median(v) for name, v in per.items()}
    loop = med["loop"]
    print(f"python {sys.version.split()[0]}, {a.rounds} rounds x {a.n} sections, median ns per section")
    print(f"{'case':18}{'ns':>9}{'minus loop':>12}   (minus loop: without the bare for loop's cost)")
    for name, _ in cases:
        if name != "loop":
            print(f"{name:18}{med[name]:9.1f}{med[name] - loop:12.1f}")
    t = med["tally"] - loop
    print(f"ratio framepack / tally:        {(med['framepack'] - loop) / t:6.2f}x")
    print(f"ratio framepack_class / tally:  {(med['framepack_class'] - loop) / t:6.2f}x")
    print(f"ratio empty / tally:            {(med['empty'] - loop) / t:6.2f}x"
          " (> 1: a tally section costs less than an empty Python context manager)")
    if "record_function" in med:
        print(f"ratio record_function / tally:  {(med['record_function'] - loop) / t:6.2f}x")
    st = tally.stats("s")
    tally.shutdown()
    ok = st is not None and st["count"] >= a.rounds * a.n
    print(f"tally recorded {st['count'] if st else 0} sections" + ("" if ok else " (expected more)"))
    return 0 if ok or not tally.enabled() else 1


if __name__ == "__main__":
    sys.exit(main())
