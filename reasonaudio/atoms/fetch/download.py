"""One download routine for the three registries: run the registry's own client into a private
folder, retry, check what came back, verify the pins, and move the archive into the cache in one
rename.

Each registry (``debian``, ``pypi``, ``npm``) describes only what differs as a :class:`Client`: the
argument lists to try, the file its client writes, the archive's name and version, and how a
cached copy is found. :func:`fetch_archive` does the rest the same way for all three:

- a cached archive is used as it is (no client runs);
- the client runs (argument lists only) up to :data:`ATTEMPTS` times, :data:`RETRY_WAIT_S`
  apart, each try in a fresh private folder; the last line of the client's error is kept;
- exactly one archive must come back;
- when the archive is the pinned version, its size and sha256 must equal the recipe's (a cached
  one too): a mismatch deletes it and fails with one line (``verify=False``, the authoring run,
  records instead);
- the archive is moved into the cache with one rename; a run cut short leaves no partial file.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from reasonaudio.fileio import sha256_file
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.process import Runner, last_line, run
from reasonaudio.atoms.fetch.recipes import PackageRecipe

ATTEMPTS = 3
"""tries of a registry client before a package fails (a network blip is not a missing package)"""
RETRY_WAIT_S = 2.0
"""seconds before the second try, doubled before each later one"""


@dataclass(frozen=True)
class Download:
    path: Path
    version: str
    fetched: bool
    """True when this call downloaded it, False when it came from the cache"""

    @property
    def size(self) -> int:
        return self.path.stat().st_size


@dataclass(frozen=True)
class Client:
    """What one registry's client does differently (module docstring)."""

    tool: str
    """the client's name, for messages (``apt-get download``)"""
    commands: Callable[[PackageRecipe, Path], list[list[str]]]
    """argument lists to try in order within one attempt (Debian: the pinned version, then the
    current one); the first that exits 0 is used"""
    suffix: str
    """the archive's file name ending (``.deb``, ``.whl``, ``.tgz``)"""
    cached: Callable[[PackageRecipe, Path], "Path | None"]
    """the archive already in the cache folder, or None"""
    version_of: Callable[[Path, PackageRecipe], str]
    """the version an archive holds, from its file name"""
    final_name: Callable[[Path, PackageRecipe], str] = lambda path, pkg: path.name
    """the archive's name in the cache"""
    problem: Callable[[], "str | None"] = lambda: None
    """why the client cannot run on this machine, or None"""
    hint: str = ""
    """appended to a failure's message (what to try)"""


def _short(sha: str) -> str:
    return sha[:12]


def verify(pkg: PackageRecipe, dl: Download) -> None:
    """The pinned version's size and sha256 equal the recipe's, else the archive is deleted and a
    one-line FetchError says which differs (another version is checked by its files' own pins)."""
    if not pkg.sha256 or dl.version != pkg.version:
        return
    size = dl.size
    if size != pkg.size:
        dl.path.unlink(missing_ok=True)
        raise FetchError(f"{pkg.spec}: archive is {size} bytes, the recipe pins {pkg.size} "
                         "(deleted; not used)")
    got = sha256_file(dl.path)
    if got != pkg.sha256:
        dl.path.unlink(missing_ok=True)
        raise FetchError(f"{pkg.spec}: archive sha256 {_short(got)}... differs from the pinned "
                         f"{_short(pkg.sha256)}... (deleted; not used)")


def _attempt(pkg: PackageRecipe, client: Client, tmp: Path, runner: Runner) -> str:
    """One try: run the client's argument lists in turn; '' when one succeeded, else why not."""
    why = ""
    for argv in client.commands(pkg, tmp):
        res = runner(argv, tmp)
        if res.returncode == 0:
            return ""
        why = why or last_line(res.stderr) or last_line(res.stdout) or f"exit {res.returncode}"
    return why or "no command to run"


def _run_client(pkg: PackageRecipe, client: Client, tmp: Path, runner: Runner,
                attempts: int, wait_s: float) -> Path:
    """Run the client until it succeeds (``attempts`` tries); the one archive it wrote in ``tmp``."""
    why = ""
    for attempt in range(max(1, attempts)):
        if attempt:
            time.sleep(wait_s * 2 ** (attempt - 1))
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        why = _attempt(pkg, client, tmp, runner)
        if not why:
            break
    else:
        tries = f" after {attempts} tries" if attempts > 1 else ""
        raise FetchError(f"{pkg.registry}:{pkg.name}: {client.tool} failed{tries} ({why})"
                         + (f"; {client.hint}" if client.hint else ""))
    found = sorted(tmp.glob(f"*{client.suffix}"))
    if len(found) != 1:
        raise FetchError(f"{pkg.registry}:{pkg.name}: {client.tool} produced {len(found)} "
                         f"{client.suffix} files, expected one")
    return found[0]


def fetch_archive(pkg: PackageRecipe, cache_dir: Path, client: Client, runner: Runner = run, *,
                  check: bool = True, attempts: int | None = None,
                  wait_s: float | None = None) -> Download:
    """The package's archive in ``cache_dir``, downloaded unless cached (module docstring);
    ``check=False`` (authoring) skips :func:`verify`."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    hit = client.cached(pkg, cache_dir)
    if hit is not None:
        dl = Download(hit, client.version_of(hit, pkg), fetched=False)
    else:
        problem = client.problem()
        if problem:
            raise FetchError(problem)
        tmp = cache_dir / f".tmp-{pkg.registry}-{pkg.name}".replace("/", "_").replace("@", "")
        try:
            got = _run_client(pkg, client, tmp, runner, ATTEMPTS if attempts is None else attempts,
                              RETRY_WAIT_S if wait_s is None else wait_s)
            final = cache_dir / client.final_name(got, pkg)
            got.replace(final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        dl = Download(final, client.version_of(final, pkg), fetched=True)
    if check:
        verify(pkg, dl)
    return dl
