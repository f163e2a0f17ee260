"""Opening an atom bank from its spec string: the one place that knows every bank kind.

Adding a bank kind is one branch here plus its module beside this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reasonaudio.errors import DataError
from reasonaudio.atoms.fetch.recipes import SECOND_RECIPES, THIRD_RECIPES
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.folder import FolderBank
from reasonaudio.atoms.fsd50k import FSD50KBank
from reasonaudio.atoms.split import PREFIX as SPLIT_PREFIX, SplitBank, parse_spec
from reasonaudio.atoms.synthetic import SyntheticBank
from reasonaudio.models.cache_dir import cache_root

FETCHED_PREFIX = "fetched:"


@dataclass(frozen=True)
class FetchedBank:
    """One bank ``bench atoms fetch packages`` publishes in the cache: ``fetched:NAME``."""

    name: str
    books: tuple[str, ...]
    """the shipped recipe files chained onto the default book, in order (none: the default book)"""
    flag: str
    """the ``bench atoms fetch packages`` option that publishes it ("" for the default bank)"""
    max_download_mb: int = 1024
    """its fetch's default download budget (MiB): every package of its books fits"""

    @property
    def command(self) -> str:
        return f"bench atoms fetch packages {self.flag}".strip()


FETCHED_BANKS = {b.name: b for b in (
    FetchedBank("packages", (), ""),
    FetchedBank("packages-second", (SECOND_RECIPES,), "--second-recordings"),
    FetchedBank("packages-third", (SECOND_RECIPES, THIRD_RECIPES), "--third-recordings", 3072),
)}
"""every fetched bank; each one's books extend the one before, so each opt-in bank holds the
default bank's recordings unchanged (builds from ``fetched:packages`` never change)"""


def fetched_bank_dir(name: str) -> Path:
    """Where ``bench atoms fetch packages`` publishes the bank NAME: ``$REASONAUDIO_CACHE/atoms/NAME``."""
    if name not in FETCHED_BANKS:
        raise DataError(f"atom bank {FETCHED_PREFIX}{name}: unknown fetched bank "
                        f"(known: {', '.join(FETCHED_PREFIX + n for n in FETCHED_BANKS)})")
    return cache_root() / "atoms" / name


def open_fetched(spec: str, errors: list[str] | None = None) -> FolderBank:
    """The fetched bank ``fetched:NAME`` (a one-line error when it is not fetched); with
    ``errors``, bad files are collected there instead of raised (``bench atoms check``)."""
    name = spec[len(FETCHED_PREFIX):]
    root = fetched_bank_dir(name)
    if not root.is_dir():
        raise DataError(f"atom bank {spec}: not fetched yet (run `{FETCHED_BANKS[name].command}`)")
    bank = FolderBank.from_path(root, errors=errors)
    bank.spec = spec
    return bank


def open_bank(spec: str) -> AtomBank:
    """``synthetic``, ``fetched:packages`` (the bank ``bench atoms fetch packages`` published in
    this user's cache; ``fetched:packages-second`` / ``-third`` with more recordings), ``fsd50k:PATH``, a folder ``PATH`` (Scaper layout, optional manifest), or
    ``split:train:SPEC`` / ``split:test:SPEC`` (one part of the bank SPEC's recordings)."""
    spec = spec.strip()
    if spec.startswith(SPLIT_PREFIX):
        return SplitBank(spec, open_bank(parse_spec(spec)[1]))
    if spec == "synthetic" or spec.startswith("synthetic:"):
        return SyntheticBank.from_spec(spec)
    if spec.startswith(FETCHED_PREFIX):
        return open_fetched(spec)
    if spec.startswith("fsd50k:"):
        return FSD50KBank.from_path(spec.split(":", 1)[1])
    return FolderBank.from_path(spec)
