"""PyTorch's CUDA allocator as a tally memory provider.

    import tally.torch
    tally.torch.register_memory()        # then every tally.memory_snapshot(...)
                                         # records cuda.allocated / reserved / peak_allocated

Importing tally never imports torch; this module imports it only inside
register_memory(). The readings are the caching allocator's, for this process
only (torch.cuda.memory_allocated, memory_reserved, max_memory_allocated), beside
NVML's device-wide used memory, which other processes share.
"""

__all__ = ["register_memory"]


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
