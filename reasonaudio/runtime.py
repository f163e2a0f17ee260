"""Process-wide settings read from the environment, in one place: how many threads numpy,
torch and onnxruntime may use, and where the package keeps its cache (:func:`cache_root`).

On small machines numpy's OpenBLAS workers spin-wait between calls and starve the model's own
threads (torch, onnxruntime): YAMNet ingest ran at 0.80 of its bare forward rate with them and at
0.94-1.00 without (``benchmarks/ingest_overhead.py --model yamnet``). So OpenBLAS gets one thread
(set at package import, before numpy loads; an explicit ``OPENBLAS_NUM_THREADS`` wins), and the
models get every core the process may run on.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def cache_root() -> Path:
    """``$REASONAUDIO_CACHE``, else ``$XDG_CACHE_HOME/reasonaudio``, else ``~/.cache/reasonaudio``:
    the one folder every derived file goes to (model weights, embeddings, fetched banks), so a
    user can find and delete everything the package wrote, and no command writes its output there
    (:mod:`reasonaudio.output_dirs`). A relative ``$REASONAUDIO_CACHE`` is taken from the
    working folder and returned absolute, so a tool run in another folder finds the same one."""
    env = os.environ.get("REASONAUDIO_CACHE")
    if env:
        return Path(env).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "reasonaudio"


def default_blas_threads() -> None:
    """Called by ``reasonaudio/__init__``: one OpenBLAS thread unless the user chose otherwise."""
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask inside containers, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def model_threads(cap: int | None = None) -> int:
    """Intra-op threads for a model runtime (torch, onnxruntime): every usable core, capped."""
    n = usable_cores()
    return max(1, min(n, cap)) if cap else n


@contextlib.contextmanager
def blas_single_thread() -> Iterator[None]:
    """numpy's OpenBLAS on one thread while a model runs beside it, even if numpy was imported
    before ``reasonaudio`` (the environment default then came too late)."""
    from threadpoolctl import threadpool_limits  # ctypes and a scan of the loaded libraries

    with threadpool_limits(limits=1, user_api="blas"):
        yield


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch on ``n`` intra-op threads for a moment (a single short sentence: splitting a
    handful of tokens across threads costs more than it saves), then back to the count before."""
    import torch  # heavy: only when a torch model runs

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


TORCH_THREADS_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
_torch_threads_applied = False


def set_torch_threads() -> None:
    """torch uses every usable core for intra-op work (its default can be lower in containers).

    Applied once per process, at the first model load, and not at all when ``OMP_NUM_THREADS``
    or ``MKL_NUM_THREADS`` is set: a count the user chose (the variable, or
    ``torch.set_num_threads`` after that first load, e.g. to run jobs side by side) is never
    raised behind their back."""
    global _torch_threads_applied
    if _torch_threads_applied or any(os.environ.get(k) for k in TORCH_THREADS_ENV):
        return
    _torch_threads_applied = True
    import torch  # heavy: only when a torch model loads

    want = model_threads()
    if torch.get_num_threads() != want:
        torch.set_num_threads(want)
