"""tally: time sections of a Python program with libtally, the collector.

    import tally

    with tally.section("vae_decode"):        # a timed section (nests, per thread)
        decode()

    @tally.section("text_encoding")          # or a decorator
    def encode(prompt): ...

    for step in range(steps):
        with tally.iteration("diffusion_step"):   # loop timings, with it/s
            ...
        tally.step()                          # TALLY_SCHEDULE's step

    tally.memory_snapshot("after_load")      # RSS, peak RSS, NVML, providers
    tally.counter("tokens", 512)
    tally.event("checkpoint", epoch=3)       # fields as JSON
    tally.tag("model", "framepack")
    tally.current()                          # the sampler's latest reading (a dict)

Everything is recorded by libtally (the C library of this repository): the
same per-thread buffers, statistics, schedule, NVML sampler and files as a C
program. When the program ends (or tally.shutdown() is called) each process
writes {dir}/{name}-rank{N}.{pid}-{time}.report.json and the .trace.json.gz of
the same stem; `tally report DIR` reads them.

Configuration comes from the TALLY_* environment variables (TALLY_OUTPUT_DIR,
TALLY_NAME, TALLY_ENABLE, TALLY_TRACE, TALLY_SAMPLE_MS, TALLY_SCHEDULE, ...;
see include/tally/tally.h) or from tally.init(...) before the first record.
The file name prefix defaults to the script's name (train.py -> "train").
The rank comes from tally.set_rank() or RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK,
PMI_RANK, SLURM_PROCID..., as in C.

Threads: each thread records on its own lane. asyncio: see the README section
"Instrument a Python program" (a section held across an await measures wall
time, including the other tasks that ran meanwhile).
"""

import atexit as _atexit
import json as _json
import os as _os
import sys as _sys

from . import _tally
from ._tally import (
    counter,
    counter_rate,
    current,
    enabled,
    flush,
    init,
    iteration,
    memory_snapshot,
    now,
    record_range,
    register_memory_provider,
    section,
    set_rank,
    shutdown,
    stats,
    step,
)

__all__ = [
    "section",
    "iteration",
    "block",
    "stage",
    "section_args",
    "counter_rate",
    "now",
    "record_range",
    "memory_snapshot",
    "counter",
    "event",
    "tag",
    "set_rank",
    "step",
    "flush",
    "shutdown",
    "enabled",
    "init",
    "stats",
    "current",
    "register_memory_provider",
]

__version__ = _tally.libtally_version


def event(name, **fields):
    """Record an instant event named name; fields become its JSON arguments.

    tally.event("checkpoint", epoch=3, loss=0.25). A value JSON cannot encode
    is written as its str(). Not for the hot path: it formats text.
    """
    args = _json.dumps(fields, default=str, allow_nan=False) if fields else None
    _tally.event(name, args)


def section_args(**meta):
    """Attach metadata to the innermost open section of this thread.

    with tally.section("vae_decode"):
        tally.section_args(resolution="720p", frames=33)

    The fields become a JSON object (a value JSON cannot encode is written as its
    str()); the report lists it with the section's name and start (section_args) and
    tally shows it with the events. Not for the hot path: it formats text.
    """
    _tally.section_args(_json.dumps(meta, default=str, allow_nan=False))


class stage:
    """A section with metadata: with tally.stage("vae_decode", resolution="720p"): ...

    The section is timed as tally.section(name) is; the keyword fields are attached
    to this occurrence (tally_begin_args). Formats text: for stages, not inner loops.
    """

    __slots__ = ("_section", "_meta")

    def __init__(self, name, **meta):
        self._section = section(name)
        self._meta = _json.dumps(meta, default=str, allow_nan=False)

    def __enter__(self):
        self._section.__enter__()
        _tally.section_args(self._meta)
        return self

    def __exit__(self, *exc):
        return self._section.__exit__(*exc)


class block:
    """A block of a block-wise generation (a video diffusion pipeline that makes its
    frames a chunk at a time): tally gives FPS and the first-block delay from them.

        with tally.block(frames=4):
            latents = sample_block(...)

    frames: the frames this block generates (None: unknown). One block is open per
    process at a time; libtally's tally_block_begin/tally_block_end.
    """

    __slots__ = ("frames",)

    def __init__(self, frames=None):
        self.frames = -1.0 if frames is None else float(frames)

    def __enter__(self):
        _tally.block_begin(self.frames)
        return self

    def __exit__(self, *exc):
        _tally.block_end()
        return False


def tag(key, value):
    """Attach a tag to the report (model name, batch size, git commit).

    value is written as str(value); setting a key again replaces its value.
    At most 64 tags (ValueError beyond).
    """
    _tally.tag(str(key), str(value))


def _script_name():
    """The default file name prefix: the script's stem, else "python"."""
    argv0 = _sys.argv[0] if getattr(_sys, "argv", None) else ""
    stem = _os.path.basename(argv0)
    if stem.endswith(".py"):
        stem = stem[:-3]
    if stem in ("", "-c", "-m", "-") or stem.startswith("<") or stem == "__main__":
        main = _sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        stem = spec.name.rsplit(".", 1)[-1] if spec is not None and spec.name else ""
        if stem in ("", "__main__"):
            stem = "python"
    return stem


_tally._set_default_name(_script_name())


def _shutdown_at_exit():
    # Written before the interpreter tears down (a provider registered from
    # Python can still run); libtally's own atexit handler then finds it done.
    _tally.shutdown()


_atexit.register(_shutdown_at_exit)


class _ForkToken:
    """Kept alive for multiprocessing.util.register_after_fork (a weak registry)."""


_fork_token = _ForkToken()


def _finalize_in_child(_token):
    _sys.modules["multiprocessing.util"].Finalize(None, _tally.shutdown, exitpriority=-100)


def _after_fork_in_child():
    # A multiprocessing child started by fork ends with os._exit(), which runs
    # no atexit handler: it writes its files from multiprocessing's own exit
    # hook instead. The hook is armed from multiprocessing's after-fork
    # registry, which the child runs after clearing the parent's finalizers.
    util = _sys.modules.get("multiprocessing.util")
    if util is not None:
        util.register_after_fork(_fork_token, _finalize_in_child)


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)
