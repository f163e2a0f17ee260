"""What `bench build` checks before it writes anything: whether it fits.

Where it writes (and what ``--force`` may replace) is every command's one rule,
:mod:`reasonaudio.output_dirs`, with :data:`reasonaudio.dataset.benchmark.BENCHMARK_OUTPUT`. A size
that cannot fit in memory is refused up front, with the estimate, instead of running until the
machine swaps.
"""

from __future__ import annotations

import os

from reasonaudio.errors import DataError

BYTES_PER_CLIP = 6_000
"""Peak memory per clip while composing: tracemalloc measured 5.4 KB per clip for 2,000 and
8,000 clips (the clip specs, the judge's index, the qrels); rounded up."""


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
