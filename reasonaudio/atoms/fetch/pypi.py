"""PyPI packages through ``pip download --no-deps`` (wheels only: nothing is built or run)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from reasonaudio.atoms.fetch.debian import Download
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.process import Runner, last_line, run
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


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run) -> Download:
    """The pinned wheel in ``cache_dir`` (downloaded unless already there)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    hit = cached(pkg, cache_dir)
    if hit is not None:
        return Download(hit, pkg.version, fetched=False)
    tmp = cache_dir / f".tmp-{_norm(pkg.name)}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        res = runner([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                      "--disable-pip-version-check", "--no-input", "-q", "-d", str(tmp),
                      f"{pkg.name}=={pkg.version}"], tmp)
        if res.returncode != 0:
            why = last_line(res.stderr) or last_line(res.stdout)
            raise FetchError(f"pypi:{pkg.name}=={pkg.version}: pip download failed ({why})")
        wheels = sorted(tmp.glob("*.whl"))
        if len(wheels) != 1:
            raise FetchError(f"pypi:{pkg.name}: pip download produced {len(wheels)} wheels")
        final = cache_dir / wheels[0].name
        wheels[0].replace(final)
        return Download(final, wheel_version(final) or pkg.version, fetched=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
