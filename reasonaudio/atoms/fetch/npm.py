"""npm packages through ``npm pack NAME@VERSION`` (a tarball; no install, no scripts run)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from reasonaudio.atoms.fetch.debian import Download
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.process import Runner, last_line, run
from reasonaudio.atoms.fetch.recipes import PackageRecipe


def tarball_name(pkg: PackageRecipe) -> str:
    """npm's file name for a packed package: ``@scope/name`` -> ``scope-name-VERSION.tgz``."""
    return re.sub(r"^@", "", pkg.name).replace("/", "-") + f"-{pkg.version}.tgz"


def cached(pkg: PackageRecipe, cache_dir: Path) -> Path | None:
    path = cache_dir / tarball_name(pkg)
    return path if path.is_file() else None


def npm_problem() -> str | None:
    if shutil.which("npm") is None:
        return "npm not found: the npm-packaged atoms are skipped (install Node.js/npm to fetch them)"
    return None


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run) -> Download:
    cache_dir.mkdir(parents=True, exist_ok=True)
    final = cache_dir / tarball_name(pkg)
    if final.is_file():
        return Download(final, pkg.version, fetched=False)
    problem = npm_problem()
    if problem:
        raise FetchError(problem)
    tmp = cache_dir / f".tmp-{tarball_name(pkg)}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        res = runner(["npm", "pack", "--ignore-scripts", "--silent", f"{pkg.name}@{pkg.version}"], tmp)
        if res.returncode != 0:
            why = last_line(res.stderr) or last_line(res.stdout)
            raise FetchError(f"npm:{pkg.name}@{pkg.version}: npm pack failed ({why})")
        tgz = sorted(tmp.glob("*.tgz"))
        if len(tgz) != 1:
            raise FetchError(f"npm:{pkg.name}: npm pack produced {len(tgz)} tarballs")
        tgz[0].replace(final)
        return Download(final, pkg.version, fetched=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
