"""Versions recorded in every artefact (benchmark manifests, results), read from installed
package metadata so that nothing heavy is imported just to name a version."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any

RECORDED_PACKAGES = ("reasonaudio", "numpy", "soundfile", "soxr", "pyloudnorm", "qdrant-client",
                     "qdrant-edge-py", "torch", "transformers", "sentence-transformers",
                     "onnxruntime")


LOCK_FILE = Path(__file__).resolve().parent / "data" / "constraints.txt"
"""the exact versions the docs' figures were measured with (``scripts/install.sh`` installs them)"""


TEST_ONLY_HEADER = "# test-only: installed by `scripts/install.sh test`, never imported by the main job"
"""the line of the lock after which its pins are test-only (``scripts/lock.py`` writes the split)"""


def lock_digest() -> str:
    """sha256 (16 hex) of the lock file: recorded as ``versions.lock`` in every artefact."""
    return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()[:16]


def _pins(lines: list[str]) -> dict[str, str]:
    pins = {}
    for line in lines:
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep and name:
            pins[canonical_name(name)] = version.strip()
    return pins


def lock_pins(runtime_only: bool = False) -> dict[str, str]:
    """Canonical package name -> pinned version, from the lock file (with ``runtime_only``, the
    pins above its :data:`TEST_ONLY_HEADER`)."""
    lines = LOCK_FILE.read_text(encoding="utf-8").splitlines()
    if runtime_only and TEST_ONLY_HEADER in lines:
        lines = lines[:lines.index(TEST_ONLY_HEADER)]
    return _pins(lines)


def runtime_digest() -> str:
    """sha256 (16 hex) of the lock's runtime pins (``name==version`` lines, sorted; comments and
    test-only pins left out): recorded as ``versions.runtime``, named in every figure's header, so
    only a change that could change a figure stales one."""
    text = "".join(f"{n}=={v}\n" for n, v in sorted(lock_pins(runtime_only=True).items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def canonical_name(name: str) -> str:
    """PEP 503's normal form (``Jinja2`` -> ``jinja2``, ``typing_extensions`` -> ``typing-extensions``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=None)
def installed_version(name: str) -> str | None:
    """The installed distribution's version (None when absent), read once per process: every
    evaluation records a dozen, and a metadata lookup scans ``sys.path``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions(packages: tuple[str, ...] = RECORDED_PACKAGES) -> dict[str, str | None]:
    """Python's version, each package's (None when it is not installed), the lock's digest and its
    runtime section's (:func:`runtime_digest`)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        out[name] = installed_version(name)
    out["lock"] = lock_digest()
    out["runtime"] = runtime_digest()
    return out


FLOAT_KERNEL_SETTINGS = ("MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY")
"""the environment variables that choose the code paths of torch's float kernels on CPU (MKL's
conditional numerical reproducibility branch, oneDNN's instruction set, ATen's vector width)"""


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (``unknown`` where it does not)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or "unknown"


def float_kernels() -> dict[str, str | None]:
    """What a trained model's weight bytes depend on beyond its seeds, data, recipe and threads:
    torch's float kernels (MKL, oneDNN, ATen) take code paths by CPU, so the CPU model, the
    vector width torch chose and the settings of :data:`FLOAT_KERNEL_SETTINGS` (None: unset)."""
    import torch

    out: dict[str, str | None] = {"cpu": cpu_model(),
                                  "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}
    out.update({name: os.environ.get(name) for name in FLOAT_KERNEL_SETTINGS})
    return out


def float_kernels_text(card: dict[str, Any]) -> str:
    """A model card's :func:`float_kernels` in words (a card written before cards recorded them:
    "not recorded")."""
    fk = card.get("float_kernels")
    if not fk:
        return "float kernels: not recorded"
    settings = ", ".join(f"{k}={fk[k]}" for k in FLOAT_KERNEL_SETTINGS if fk.get(k)) or "none set"
    return (f"float kernels: CPU {fk.get('cpu')}, torch {fk.get('torch_cpu_capability')}, settings "
            f"{settings} (the weights' bytes are those of this kind of CPU: another may differ)")
