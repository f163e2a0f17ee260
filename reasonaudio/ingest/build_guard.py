"""What `bench build` checks before it writes anything: where it writes, and whether it fits.

- ``--force`` replaces only a previous benchmark (a folder whose manifest.json is ours) or an
  empty folder; anything else is refused, so a typo in ``--out`` cannot delete someone's files.
- The current folder (or one above it) is never a target.
- A size that cannot fit in memory is refused up front, with the estimate, instead of running
  until the machine swaps.
"""

from __future__ import annotations

import os
from pathlib import Path

from reasonaudio.errors import DataError, echo
from reasonaudio.fileio import read_json
from reasonaudio.dataset.benchmark import FORMAT, MANIFEST

BYTES_PER_CLIP = 6_000
"""Peak memory per clip while composing: tracemalloc measured 5.4 KB per clip for 2,000 and
8,000 clips (the clip specs, the judge's index, the qrels); rounded up."""


def is_previous_benchmark(path: Path) -> bool:
    """Whether ``path`` holds a benchmark `bench build` wrote (its manifest names our format)."""
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        obj = read_json(manifest)
    except DataError:
        return False
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def check_target(out: Path, overwrite: bool) -> None:
    """Refuse an output folder a build must not write or replace (one line naming it and why)."""
    out = Path(out)
    target = Path(os.path.abspath(out))
    cwd = Path.cwd()
    if target == cwd or target in cwd.parents:
        raise DataError(f"{echo(out)}: is the current folder or one above it; build into a new "
                        "folder (e.g. --out data/bench)")
    if not os.path.lexists(out):
        return
    if out.is_symlink() or not out.is_dir():
        raise DataError(f"{echo(out)}: exists and is not a folder; choose another --out")
    if not overwrite:
        raise DataError(f"{echo(out)}: already exists (pass --force to replace it)")
    if any(out.iterdir()) and not is_previous_benchmark(out):
        raise DataError(f"{echo(out)}: not a previous benchmark (no manifest.json of `bench build`) "
                        "and not empty; --force replaces only those, so remove it yourself or "
                        "choose another --out")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


def check_size(n_clips: int, available: int | None = None) -> None:
    """Refuse ``n_clips`` when composing them would need more memory than is available."""
    have = available_memory() if available is None else available
    need = n_clips * BYTES_PER_CLIP
    if have is not None and need > have:
        raise DataError(f"--clips {n_clips:,} needs about {_gib(need)} of memory to compose "
                        f"({BYTES_PER_CLIP:,} bytes a clip), more than the {_gib(have)} available; "
                        f"at most about {have // BYTES_PER_CLIP:,} clips fit here")
