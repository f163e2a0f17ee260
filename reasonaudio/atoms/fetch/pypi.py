"""PyPI packages through ``pip download --no-deps`` (wheels only: nothing is built or run); the
download itself is :func:`download.fetch_archive`'s."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from reasonaudio.atoms.fetch.download import Client, Download, fetch_archive
from reasonaudio.atoms.fetch.process import Runner, run
from reasonaudio.atoms.fetch.recipes import PackageRecipe


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def wheel_version(path: Path) -> str:
    parts = path.name.split("-")
    return parts[1] if len(parts) >= 5 else ""


def cached(pkg: PackageRecipe, cache_dir: Path) -> Path | None:
    hits = sorted(p for p in cache_dir.glob("*.whl")
                  if _norm(p.name.split("-")[0]) == _norm(pkg.name) and wheel_version(p) == pkg.version)
    return hits[0] if hits else None


def _commands(pkg: PackageRecipe, tmp: Path) -> list[list[str]]:
    """pip runs in ``tmp`` (the runner's cwd): its destination is named absolutely, so a
    relative cache folder does not nest a second copy of its path inside ``tmp``."""
    return [[sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "--disable-pip-version-check", "--no-input", "-q", "-d", str(tmp.absolute()),
             f"{pkg.name}=={pkg.version}"]]


CLIENT = Client(tool="pip download", commands=_commands, suffix=".whl", cached=cached,
                version_of=lambda path, pkg: wheel_version(path) or pkg.version)


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run, check: bool = True) -> Download:
    """The pinned wheel in ``cache_dir`` (downloaded unless already there)."""
    return fetch_archive(pkg, cache_dir, CLIENT, runner, check=check)
