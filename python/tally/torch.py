"""PyTorch's CUDA allocator as a tally memory provider, and DDP's all-reduce as collectives.

    import tally.torch
    tally.torch.register_memory()        # then every tally.memory_snapshot(...)
                                         # records cuda.allocated / reserved / peak_allocated
    model = DistributedDataParallel(model)
    tally.torch.register_ddp(model)      # each bucket's all-reduce timed as a collective

Importing tally never imports torch; this module imports it only inside
register_memory() and the DDP hook. The readings are the caching allocator's, for this process
only (torch.cuda.memory_allocated, memory_reserved, max_memory_allocated), beside
NVML's device-wide used memory, which other processes share.
"""

__all__ = ["register_memory", "register_ddp", "ddp_allreduce_hook"]


def register_memory(device=None, name="cuda"):
    """Register torch.cuda's allocator as the memory provider name.

    device: a device index or torch.device (None: the current device at each
    snapshot). Returns True when registered, False when torch is not
    importable or CUDA is not available (nothing is registered then).
    Raises ValueError when 8 providers are registered already.
    """
    try:
        import torch  # noqa: PLC0415 - imported only when asked for
    except ImportError:
        return False
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_available():
        return False

    def read():
        return {
            "allocated": float(cuda.memory_allocated(device)),
            "reserved": float(cuda.memory_reserved(device)),
            "peak_allocated": float(cuda.max_memory_allocated(device)),
        }

    from . import _tally

    _tally.register_memory_provider(name, read)
    return True


def ddp_allreduce_hook(process_group, bucket):
    """DDP's default all-reduce of a bucket (the average over the group), timed.

    A DDP communication hook (model.register_comm_hook(process_group, hook); or
    register_ddp(model)). The section runs from the hook's call -- this rank's
    gradients of the bucket are ready: its arrival -- to the callback of the
    all-reduce's future, and is recorded there with tally.record_range. With
    gloo the future completes when every rank has arrived and the sum is back
    (the release): a "gloo:all_reduce" range, which tally matches across ranks
    to tell who waits for whom. With NCCL the future completes once the kernel
    is queued: an "nccl:all_reduce" range, which tally counts as enqueueing
    (the wait is on the GPU: a torch.profiler trace has its kernels).
    """
    import torch.distributed as dist  # noqa: PLC0415 - torch is imported only when asked for

    from . import _tally

    group = process_group if process_group is not None else dist.group.WORLD
    start = _tally.now()
    tensor = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
    tensor.div_(dist.get_world_size(group))
    name = "nccl:all_reduce" if dist.get_backend(group) == "nccl" else "gloo:all_reduce"
    fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()

    def done(f):
        _tally.record_range(name, start, _tally.now())
        return f.value()[0]

    return fut.then(done)


def register_ddp(model, process_group=None):
    """Time model's (a DistributedDataParallel) bucket all-reduces: ddp_allreduce_hook.

    Replaces DDP's default hook with the same all-reduce, timed; DDP takes one
    hook only, so a model with a hook of its own keeps it (and DDP raises).
    """
    model.register_comm_hook(process_group, ddp_allreduce_hook)
