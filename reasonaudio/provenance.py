"""Versions recorded in every artefact (benchmark manifests, results), read from installed
package metadata so that nothing heavy is imported just to name a version."""

from __future__ import annotations

import hashlib
import platform
import re
from importlib import metadata
from pathlib import Path

RECORDED_PACKAGES = ("reasonaudio", "numpy", "soundfile", "soxr", "pyloudnorm", "qdrant-client",
                     "qdrant-edge-py", "torch", "transformers", "sentence-transformers",
                     "onnxruntime")


LOCK_FILE = Path(__file__).resolve().parent / "data" / "constraints.txt"
"""the exact versions the docs' figures were measured with (``scripts/install.sh`` installs them)"""


def lock_digest() -> str:
    """sha256 (16 hex) of the lock file: recorded as ``versions.lock`` in every artefact."""
    return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()[:16]


def lock_pins() -> dict[str, str]:
    """Canonical package name -> pinned version, from the lock file."""
    pins = {}
    for line in LOCK_FILE.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep and name:
            pins[canonical_name(name)] = version.strip()
    return pins


def canonical_name(name: str) -> str:
    """PEP 503's normal form (``Jinja2`` -> ``jinja2``, ``typing_extensions`` -> ``typing-extensions``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions(packages: tuple[str, ...] = RECORDED_PACKAGES) -> dict[str, str | None]:
    """Python's version, each package's (None when it is not installed) and the lock's digest."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        out[name] = installed_version(name)
    out["lock"] = lock_digest()
    return out
