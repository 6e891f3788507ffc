#!/usr/bin/env python3
"""pipeline.py - an example Python program instrumented with the tally module, shaped like
samples/collector/pipeline.c (and like the video-diffusion pipelines tally's users profile:
FramePack, HunyuanVideo): load the models, encode the prompt and the input image, encode the
image into latents, run N diffusion steps through a stack of transformer blocks, then decode
the latents in chunks.

Copy it as a starting point: every tally call a real pipeline needs is here (sections as
context managers and decorators, a timed loop, nested sections, memory snapshots with a
provider for the program's own allocator, counters, an event, tags, the schedule step). The
"GPU" is simulated: each stage waits for a cost in milliseconds (with noise), the way a host
waits for its device; a bookkeeping allocator stands in for torch.cuda's caching allocator.
With PyTorch, `tally.torch.register_memory()` registers the real one instead.

    PYTHONPATH=BUILD/python python3 samples/python/pipeline.py [--steps N] [--blocks N]
        [--variant baseline|optimized] [--slow-rank R --slow-factor F] [--seed S]

The rank comes from RANK (the module reads it, as libtally does); samples/collector/launch.sh
starts N ranks. The files go to TALLY_OUTPUT_DIR (default "."), named after TALLY_NAME or
the script ("pipeline-rank0.{pid}-{time}.report.json").
"""
import argparse
import os
import random
import sys
import threading
import time

import tally

MIB = 1 << 20
SEGMENT = 2 * MIB

# Milliseconds per call, as in pipeline.c: the optimized variant has a faster attention but
# decodes in more, smaller chunks (slower overall).
COSTS = {
    "baseline": dict(load=300, tokenize=2, text_encoder=40, image_encoder=25, vae_encode=30,
                     norm=2, attention=12, mlp=8, scheduler=3, decode_chunk=50, decode_chunks=4,
                     attention_workspace=6 * MIB, decode_chunk_bytes=3 * MIB),
    "optimized": dict(load=300, tokenize=2, text_encoder=40, image_encoder=25, vae_encode=30,
                      norm=2, attention=6.4, mlp=8, scheduler=3, decode_chunk=45, decode_chunks=6,
                      attention_workspace=1 * MIB, decode_chunk_bytes=2 * MIB),
}


class SimAllocator:
    """Like PyTorch's caching allocator: allocated is what live tensors use, reserved what the
    allocator holds (2 MiB segments, kept after frees until empty_cache)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.allocated = self.reserved = self.peak = 0

    def alloc(self, nbytes):
        with self.lock:
            self.allocated += nbytes
            self.peak = max(self.peak, self.allocated)
            if self.allocated > self.reserved:
                self.reserved = -(-self.allocated // SEGMENT) * SEGMENT
        return nbytes

    def free(self, nbytes):
        with self.lock:
            self.allocated -= nbytes

    def empty_cache(self):
        with self.lock:
            self.reserved = -(-self.allocated // SEGMENT) * SEGMENT

    def readings(self):
        """The memory provider: called at every tally.memory_snapshot()."""
        with self.lock:
            return {"allocated": self.allocated, "reserved": self.reserved,
                    "peak_allocated": self.peak}


class Worker:
    def __init__(self, seed, speed):
        self.rng = random.Random(seed)
        self.speed = speed

    def stage(self, cost_ms, spiky=False):
        """Waits cost_ms (x speed, +-4 % noise; spiky stages now and then 1.5x): sleeps until
        a millisecond before the deadline, then watches the clock, so a late wake-up on a
        loaded machine does not lengthen the stage."""
        ms = cost_ms * self.speed * (0.96 + 0.08 * self.rng.random())
        if spiky and self.rng.random() < 0.02:
            ms *= 1.5
        due = time.perf_counter() + ms / 1e3
        rest = due - time.perf_counter() - 1e-3
        if rest > 0:
            time.sleep(rest)
        while time.perf_counter() < due:
            pass
        return self.rng.random()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--variant", choices=sorted(COSTS), default="baseline")
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-factor", type=float, default=1.5)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    if not 1 <= o.steps <= 100000 or not 1 <= o.blocks <= 1000 or not 0.1 <= o.slow_factor <= 100:
        ap.error("--steps in [1, 100000], --blocks in [1, 1000], --slow-factor in [0.1, 100]")
    c = COSTS[o.variant]
    rank = int(os.environ.get("RANK", "0") or 0)
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    t0 = time.perf_counter()

    tally.tag("model", "framepack-sim")
    tally.tag("variant", o.variant)
    tally.tag("steps", o.steps)
    tally.tag("seed", o.seed)
    tally.tag("language", "python")
    gpu = SimAllocator()
    tally.register_memory_provider("gpu", gpu.readings)
    w = Worker(o.seed * 1000003 + rank, o.slow_factor if rank == o.slow_rank else 1.0)

    with tally.section("load_models"):
        models = {k: gpu.alloc(n * MIB) for k, n in
                  (("text_encoder", 16), ("image_encoder", 6), ("transformer", 32), ("vae", 8))}
        w.stage(c["load"])
    tally.memory_snapshot("after_load")

    with tally.section("text_encoding"):
        with tally.section("tokenize"):
            w.stage(c["tokenize"])
            tally.counter("tokens", 77 + w.rng.randrange(436))
        hidden = gpu.alloc(2 * MIB)
        with tally.section("text_encoder_forward"):
            w.stage(c["text_encoder"])
        gpu.free(hidden)
    gpu.free(models.pop("text_encoder"))  # offloaded, as FramePack does on small GPUs
    tally.memory_snapshot("after_text_encoding")

    with tally.section("image_encoder"):
        image_embeds = gpu.alloc(1 * MIB)
        w.stage(c["image_encoder"])
    with tally.section("vae_encode"):
        latents = gpu.alloc(4 * MIB)
        w.stage(c["vae_encode"])

    # Decorated functions are sections too, timed at every call.
    @tally.section("transformer_block")
    def transformer_block():
        with tally.section("norm"):
            w.stage(c["norm"], spiky=True)
        with tally.section("attention"):
            workspace = gpu.alloc(c["attention_workspace"])
            w.stage(c["attention"], spiky=True)
            gpu.free(workspace)
        with tally.section("mlp"):
            w.stage(c["mlp"], spiky=True)

    with tally.section("sampling"):
        for step in range(o.steps):
            with tally.iteration("diffusion_step"):
                for _ in range(o.blocks):
                    transformer_block()
                with tally.section("scheduler_step"):
                    sigma = 1.0 - 0.8 * (step + 1) / o.steps
                    norm = (0.5 + w.stage(c["scheduler"])) * (0.2 + sigma)
            tally.counter("latent_norm", norm)
            if (step + 1) % 5 == 0 or step + 1 == o.steps:
                tally.event("checkpoint", step=step + 1, latent_norm=round(norm, 4))
            tally.step()  # one step of the profiling schedule (TALLY_SCHEDULE)
    tally.memory_snapshot("after_sampling")

    frames = []
    with tally.section("vae_decode"):
        for _ in range(c["decode_chunks"]):
            with tally.section("vae_decode_chunk"):
                frames.append(gpu.alloc(c["decode_chunk_bytes"]))
                w.stage(c["decode_chunk"])
    tally.memory_snapshot("after_vae_decode")

    for f in frames + [latents, image_embeds] + list(models.values()):
        gpu.free(f)
    gpu.empty_cache()
    print(f"rank {rank}/{world}: {o.variant} (python), {o.steps} steps x {o.blocks} blocks, "
          f"{(time.perf_counter() - t0) * 1e3:.0f} ms" + (" (slow rank)" if rank == o.slow_rank else ""))
    sys.stdout.flush()
    # Also done at interpreter exit; calling it here writes the files now.
    tally.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
