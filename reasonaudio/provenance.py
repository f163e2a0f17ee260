"""Versions recorded in every artefact (benchmark manifests, results), read from installed
package metadata so that nothing heavy is imported just to name a version."""

from __future__ import annotations

import platform
from importlib import metadata

RECORDED_PACKAGES = ("reasonaudio", "numpy", "soundfile", "soxr", "pyloudnorm", "qdrant-client",
                     "qdrant-edge-py", "torch", "transformers", "sentence-transformers",
                     "onnxruntime")


def versions(packages: tuple[str, ...] = RECORDED_PACKAGES) -> dict[str, str | None]:
    """Python's version and each package's (None when it is not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
