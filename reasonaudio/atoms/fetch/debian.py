"""Debian packages through ``apt-get download`` (no root needed once the package lists exist).

``apt-get download NAME=VERSION`` fetches the pinned version into the current directory and checks
it against the signed package lists. When that version has left the archive (a point release),
the current version is fetched instead and the caller relies on the per-file sha256 pins. The
download itself (retries, checks, the cache) is :func:`download.fetch_archive`'s.

Every ``apt-get`` run first loads the package lists (about a second of CPU), so a fetch asks for
its packages in a few runs of many (:func:`prefetch`) before each package's own download finds
its archive in the cache; a package a batch did not bring is downloaded on its own as before.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Sequence
from urllib.parse import quote, unquote

from reasonaudio.atoms.fetch.download import Client, Download, fetch_archive
from reasonaudio.atoms.fetch.process import Runner, run
from reasonaudio.atoms.fetch.recipes import PackageRecipe

APT_UPDATE_HINT = ("the package lists may be missing or stale: run `apt-get update` (as root) "
                   "once, then fetch again")


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


def _commands(pkg: PackageRecipe, _tmp: Path) -> list[list[str]]:
    return [["apt-get", "download", "-q", f"{pkg.name}={pkg.version}"],
            ["apt-get", "download", "-q", pkg.name]]


CLIENT = Client(tool="apt-get download", commands=_commands, suffix=".deb", cached=cached,
                version_of=lambda path, pkg: deb_version(path), problem=apt_problem,
                hint=APT_UPDATE_HINT)


def prefetch(pkgs: Sequence[PackageRecipe], cache_dir: Path, runner: Runner = run) -> list[str]:
    """One ``apt-get download`` of every pinned version in ``pkgs`` into a private folder, then
    each archive it brought moved into ``cache_dir`` with one rename (where :func:`cached` finds
    it); the names moved. A run that fails (a pin gone from the archive, the network) moves
    nothing: each package's own :func:`download` then tries as it always did."""
    if not pkgs:
        return []
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-debian-batch-", dir=cache_dir))
    moved: list[str] = []
    try:
        done = runner(["apt-get", "download", "-q", *(f"{p.name}={p.version}" for p in pkgs)], tmp)
        if done.returncode != 0:
            return []
        for pkg in pkgs:
            found = [f for f in sorted(tmp.glob(f"{pkg.name}_*.deb"))
                     if f.name.split("_")[0] == pkg.name and deb_version(f) == pkg.version]
            if len(found) == 1 and cached(pkg, cache_dir) is None:
                found[0].replace(cache_dir / found[0].name)
                moved.append(pkg.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return moved


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run, check: bool = True) -> Download:
    """The package's ``.deb`` in ``cache_dir`` (downloaded unless already there)."""
    return fetch_archive(pkg, cache_dir, CLIENT, runner, check=check)
