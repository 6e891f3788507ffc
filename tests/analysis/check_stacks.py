#!/usr/bin/env python3
"""torch.profiler's export_stacks text read into the call tree (the flame graph's data).

A stacks file as EventList.export_stacks writes it ("frame;frame;frame value", frames outermost
first, their spaces written as '_', the value the event's self time in us), recognised by its
content whatever its name: each line's value is the inclusive time of every frame on its path and
the self time (and one call) of its last frame, under the "Python frames" root -- checked against
sums worked out here. A malformed line is counted and warned about; a text file that is not a
stacks file is not read as one; beside the trace the same profiler exported, the stacks file is
that trace's companion (one rank).

usage: check_stacks.py TALLY WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


LINES = [
    ("train.py(88):_<module>;train.py(61):_train_step;model.py(40):_forward;torch/nn/modules/linear.py(125):_forward", 1200),
    ("train.py(88):_<module>;train.py(61):_train_step;model.py(40):_forward;torch/nn/modules/linear.py(125):_forward", 800),
    ("train.py(88):_<module>;train.py(61):_train_step;model.py(44):_forward;torch/nn/functional.py(2035):_softmax", 300),
    ("train.py(88):_<module>;train.py(61):_train_step;torch/_tensor.py(522):_backward", 4000),
    ("train.py(88):_<module>;train.py(70):_log", 50),
]


def main():
    tally, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    d = os.path.join(work, "stacks")
    os.makedirs(d)
    with open(os.path.join(d, "profiler_stacks.txt"), "w") as f:
        for frames, v in LINES:
            f.write(f"{frames} {v}\n")
        f.write("this is not a stack line\n")
    with open(os.path.join(d, "NOTES.txt"), "w") as f:
        f.write("run 3 of the sweep\nbatch size 64\n")
    out = os.path.join(work, "a.json")
    r = subprocess.run([tally, "aggregate", "-q", d, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"aggregate: exit {r.returncode}: {r.stderr}")
    a = json.load(open(out))
    inputs = {os.path.basename(x["path"]): x for x in a["inputs"]}
    st = inputs.get("profiler_stacks.txt")
    check(st is not None and st["format"] == "torch-stacks", f"format: {st}")
    check(st is not None and any("1 lines that are not" in w for w in st["warnings"]), f"malformed line: {st}")
    check("NOTES.txt" not in inputs, "a plain text file is no stacks file")
    ct = a["sessions"][0]["calltree"]
    names = ct["names"]
    # expected inclusive and self time (ns) and calls by path
    incl, self_, calls = {}, {}, {}
    for frames, v in LINES:
        parts = frames.split(";")
        for i in range(len(parts)):
            path = tuple(parts[: i + 1])
            incl[path] = incl.get(path, 0) + v * 1000
        self_[tuple(parts)] = self_.get(tuple(parts), 0) + v * 1000
        calls[tuple(parts)] = calls.get(tuple(parts), 0) + 1
    got = {}
    paths = {}
    for i, (parent, name, inc, sf, cnt) in enumerate(ct["nodes"]):
        paths[i] = (paths[parent] if parent >= 0 else ()) + ((names[name],) if parent >= 0 else ())
        if parent >= 0:
            got[paths[i]] = (inc, sf, cnt)
        else:
            check(names[name] == "Python frames (python_function)" and inc == sum(v for _, v in LINES) * 1000,
                  f"root: {names[name]} {inc}")
    check(set(got) == set(incl), f"paths: {sorted(set(got) ^ set(incl))}")
    for p, v in incl.items():
        g = got.get(p)
        check(g is not None and g[0] == v and g[1] == self_.get(p, 0) and g[2] == calls.get(p, 0),
              f"{p[-1]}: got {g}, expected {(v, self_.get(p, 0), calls.get(p, 0))}")
    # beside its trace: one rank
    both = os.path.join(work, "both")
    os.makedirs(both)
    shutil.copy(os.path.join(d, "profiler_stacks.txt"), both)
    trace = dict(traceEvents=[dict(ph="X", cat="cpu_op", name="aten::mm", pid=1, tid=1, ts=0, dur=10),
                              dict(ph="X", cat="kernel", name="gemm", pid=0, tid=7, ts=2, dur=5,
                                   args=dict(device=0, stream=7))], schemaVersion=1)
    with open(os.path.join(both, "worker0.pt.trace.json"), "w") as f:
        json.dump(trace, f)
    out = os.path.join(work, "b.json")
    subprocess.run([tally, "aggregate", "-q", both, "-o", out], capture_output=True, text=True)
    b = json.load(open(out))
    counted = [x for x in b["inputs"] if x["companion_of"] is None]
    check(len(b["ranks"]) == 1 and len(counted) == 1 and counted[0]["format"] == "pytorch-profiler",
          f"stacks beside its trace: one rank: {[(x['path'], x['companion_of']) for x in b['inputs']]}")
    if fails:
        print(f"{len(fails)} check(s) failed")
        return 1
    print("stacks: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
