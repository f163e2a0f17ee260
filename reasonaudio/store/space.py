"""Room on the disk before Qdrant Edge maps a shard's files.

Edge preallocates its write-ahead log and segment files sparsely (a fresh collection is about
150 MiB apparent, 5 MiB used) and writes them through memory maps. When the disk fills, a write
into a mapped page cannot fail with an error: the kernel kills the process with SIGBUS (a bare
"Bus error", exit 135, no message). So a shard is opened or created only with
:data:`MIN_FREE_BYTES` free, and otherwise refused with one line naming the folder. A disk that
fills up while a shard is already open (another process writing) can still end in SIGBUS;
docs/qdrant.md says so.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

from reasonaudio.errors import StoreError, echo

MIN_FREE_BYTES = 256 << 20
"""Free space needed to open or create an Edge shard (its sparse files, with room to spare)."""
MIN_FREE_ENV = "REASONAUDIO_MIN_FREE_MB"
"""Overrides :data:`MIN_FREE_BYTES` (in MiB) for machines that know better."""


def min_free_bytes() -> int:
    """The free space to require: :data:`MIN_FREE_ENV` in MiB when set (0 turns the guard off on
    purpose), else :data:`MIN_FREE_BYTES`. A negative, infinite or non-number value is refused:
    read as 0 it would turn the guard off silently."""
    raw = os.environ.get(MIN_FREE_ENV)
    if raw is None:
        return MIN_FREE_BYTES
    try:
        mib = float(raw)
    except ValueError:
        raise StoreError(f"{MIN_FREE_ENV}={echo(raw, 40)!r} is not a number of MiB") from None
    if not math.isfinite(mib * (1 << 20)) or mib < 0:
        raise StoreError(f"{MIN_FREE_ENV}={echo(raw, 40)!r}: expected a finite number of MiB >= 0 "
                         "(0 turns the free-space guard off)")
    return int(mib * (1 << 20))


def check_free_space(folder: Path, what: str) -> None:
    """Refuse to map ``what`` under ``folder`` when its disk has less than the minimum free."""
    probe = Path(folder)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return  # cannot tell: let the store try
    need = min_free_bytes()
    if free < need:
        raise StoreError(f"{folder}: only {free / (1 << 20):.0f} MiB free on its disk; {what} maps "
                         f"its files into memory and needs at least {need >> 20} MiB free (a full "
                         f"disk would kill it with SIGBUS); free space, or set {MIN_FREE_ENV}")
