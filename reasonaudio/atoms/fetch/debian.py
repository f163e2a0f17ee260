"""Debian packages through ``apt-get download`` (no root needed once the package lists exist).

``apt-get download NAME=VERSION`` fetches the pinned version into the current directory and checks
it against the signed package lists. When that version has left the archive (a point release),
the current version is fetched instead and the caller relies on the per-file sha256 pins.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.process import Runner, last_line, run
from reasonaudio.atoms.fetch.recipes import PackageRecipe

APT_UPDATE_HINT = ("the package lists may be missing or stale: run `apt-get update` (as root) "
                   "once, then fetch again")


@dataclass(frozen=True)
class Download:
    path: Path
    version: str
    fetched: bool
    """True when this call downloaded it, False when it came from the cache"""

    @property
    def size(self) -> int:
        return self.path.stat().st_size


def apt_problem() -> str | None:
    """Why Debian packages cannot be downloaded here, or None when ``apt-get`` is present."""
    if shutil.which("apt-get") is None:
        return ("apt-get not found: this machine has no apt, so the Debian-packaged atoms are "
                "skipped (the PyPI and npm ones are still fetched)")
    return None


def deb_version(path: Path) -> str:
    """The version in an ``apt-get download`` file name (``name_1%3a2.0-1_all.deb``)."""
    parts = path.name[:-len(".deb")].split("_")
    return unquote(parts[1]) if len(parts) >= 3 else ""


def cached(pkg: PackageRecipe, cache_dir: Path) -> Path | None:
    exact = sorted(cache_dir.glob(f"{pkg.name}_{quote(pkg.version, safe='+~.-')}_*.deb"))
    if exact:
        return exact[0]
    exact = sorted(p for p in cache_dir.glob(f"{pkg.name}_*.deb") if deb_version(p) == pkg.version)
    if exact:
        return exact[0]
    others = sorted(p for p in cache_dir.glob(f"{pkg.name}_*_*.deb")
                    if p.name.split("_")[0] == pkg.name)
    return others[-1] if others else None


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run) -> Download:
    """The package's ``.deb`` in ``cache_dir`` (downloaded unless already there)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    hit = cached(pkg, cache_dir)
    if hit is not None:
        return Download(hit, deb_version(hit), fetched=False)
    problem = apt_problem()
    if problem:
        raise FetchError(problem)
    tmp = cache_dir / f".tmp-{pkg.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        res = runner(["apt-get", "download", "-q", f"{pkg.name}={pkg.version}"], tmp)
        if res.returncode != 0:
            first = last_line(res.stderr) or last_line(res.stdout)
            res = runner(["apt-get", "download", "-q", pkg.name], tmp)
            if res.returncode != 0:
                why = last_line(res.stderr) or last_line(res.stdout) or first
                raise FetchError(f"debian:{pkg.name}: apt-get download failed ({why}); "
                                 f"{APT_UPDATE_HINT}")
        debs = sorted(tmp.glob("*.deb"))
        if len(debs) != 1:
            raise FetchError(f"debian:{pkg.name}: apt-get download produced {len(debs)} .deb files")
        final = cache_dir / debs[0].name
        debs[0].replace(final)
        return Download(final, deb_version(final), fetched=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
