"""Debian packages through ``apt-get download`` (no root needed once the package lists exist).

``apt-get download NAME=VERSION`` fetches the pinned version into the current directory and checks
it against the signed package lists. When that version has left the archive (a point release),
the current version is fetched instead and the caller relies on the per-file sha256 pins. The
download itself (retries, checks, the cache) is :func:`download.fetch_archive`'s.
"""

from __future__ import annotations

import shutil
from pathlib import Path
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


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run, check: bool = True) -> Download:
    """The package's ``.deb`` in ``cache_dir`` (downloaded unless already there)."""
    return fetch_archive(pkg, cache_dir, CLIENT, runner, check=check)
