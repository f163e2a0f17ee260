"""The install's size on disk: the environment `scripts/install.sh` made and the cache the main
job fills.

    .venv/bin/python benchmarks/install_size.py

Sums the bytes of every file under this interpreter's environment (``sys.prefix``: the packages,
torch's build among them) and under the testbed's cache folder (``$REASONAUDIO_CACHE``, else
``~/.cache/reasonaudio``: the real-sound bank, model files, embeddings), each file once (hard
links counted once, links not followed), and prints both in GiB with the torch build they hold.
Run it after `bash scripts/install.sh && .venv/bin/bench demo`, whose cache it measures.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

from record import Figure, write_record


def tree_bytes(root: Path) -> int:
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def main() -> None:
    from reasonaudio.models.cache_dir import cache_root

    env, cache = Path(sys.prefix), cache_root()
    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = "not installed"
    env_gib, cache_gib = tree_bytes(env) / 2**30, tree_bytes(cache) / 2**30 if cache.is_dir() else 0.0
    print(f"environment {env}: {env_gib:.2f} GiB (torch {torch})")
    print(f"cache {cache}: {cache_gib:.2f} GiB")
    print(f"together: {env_gib + cache_gib:.2f} GiB")
    write_record(__file__, [Figure(f"the environment (torch {torch})", env_gib, "GiB"),
                            Figure("the cache (bank, model files, embeddings)", cache_gib, "GiB"),
                            Figure("together", env_gib + cache_gib, "GiB")])


if __name__ == "__main__":
    main()
