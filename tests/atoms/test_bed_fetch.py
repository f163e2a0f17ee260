"""Bed recipes and `bench atoms fetch beds`, offline: a Debian package the test makes (a pk3 with
two ambience loops) served by the fake apt client; the fetched folder is a bed bank `open_beds`
reads, a loop keeps its ends, and the tagger check runs where the beds are fetched, refusing the
bed that sounds like a label of the atom bank and keeping the verdicts."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from test_fetch_fixtures import FakeClients, manual_deb, zip_bytes

from reasonaudio.atoms.fetch.bed_recipes import fetch_beds, load_bed_recipes, parse_bed_recipes
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.beds import MIN_RECORDING_S, open_beds

NO_PROBLEMS = {"debian": None, "pypi": None, "npm": None, "fluidsynth": None}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wav(x: np.ndarray, sr: int = 22_050) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x.astype(np.float32), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


@pytest.fixture()
def world(tmp_path: Path):
    sr = 22_050
    rng = np.random.default_rng(0)
    hiss = wav(0.3 * rng.standard_normal(2 * sr))
    t = np.arange(3 * sr) / sr
    hum = wav(0.3 * np.sin(2 * np.pi * 440 * t))
    pk3 = zip_bytes({"sound/amb/hiss.wav": hiss, "sound/amb/hum.wav": hum})
    deb = manual_deb(tmp_path / "amb.deb", [
        ("./usr/share/amb/0snd.pk3", pk3, None),
        ("./usr/share/doc/amb-sounds/copyright", b"Files: *\nLicense: CC0-1.0\n", None)])
    pkg = {"record": "package", "registry": "debian", "name": "amb-sounds", "version": "1.0-1",
           "size": deb.stat().st_size, "sha256": sha(deb.read_bytes()),
           "copyright": "usr/share/doc/amb-sounds/copyright"}
    beds = [{"record": "bed", "bed_id": bid, "registry": "debian", "package": "amb-sounds",
             "path": "usr/share/amb/0snd.pk3", "container": "zip", "entry": f"sound/amb/{name}.wav",
             "sha256": sha(data), "trim": {"silence_db": -120.0}, "license": "CC0-1.0"}
            for bid, name, data in (("test-hiss", "hiss", hiss), ("test-hum", "hum", hum))]
    recipe = tmp_path / "bed_recipes.jsonl"
    recipe.write_text("\n".join(json.dumps(r) for r in [pkg, *beds]) + "\n")
    # an atom bank with one label the hiss sounds like
    bank = tmp_path / "bank"
    (bank / "white_noise").mkdir(parents=True)
    sf.write(str(bank / "white_noise" / "a.wav"), 0.3 * rng.standard_normal(sr), sr, subtype="PCM_16")
    return {"tmp": tmp_path, "recipe": recipe, "bank": bank, "hum": hum,
            "clients": FakeClients(debs={"amb-sounds": ("1.0-1", deb)})}


def test_fetched_beds_are_a_bed_bank_and_the_check_refuses_a_labels_sound(world) -> None:
    dest = world["tmp"] / "beds"
    summary = fetch_beds(dest, recipes=world["recipe"], atoms_spec=str(world["bank"]),
                         runner=world["clients"], environment=NO_PROBLEMS,
                         check_cache=world["tmp"] / "cache", atom_dest=world["tmp"] / "none")
    assert [r["bed_id"] for r in summary.beds] == ["test-hiss", "test-hum"]
    assert all(r["license"] == "CC0-1.0" and "amb-sounds=1.0-1" in r["source"] for r in summary.beds)
    bank = open_beds(f"folder:{dest}")
    assert [b.bed_id for b in bank.beds] == ["test-hiss", "test-hum"]
    # the loop keeps its ends (no fade), and a short one is repeated whole to MIN_RECORDING_S
    x, sr = bank.load("test-hum")
    src, ssr = sf.read(io.BytesIO(world["hum"]))
    assert sr == 48_000 and len(x) >= MIN_RECORDING_S * sr
    assert abs(x[1] - np.sin(2 * np.pi * 440 / 48_000) * 0.3) < 0.01  # not faded in
    # the check ran here, against the bank's labels; its verdicts are kept beside the beds
    kept = json.loads((dest / "bed-check.json").read_text())
    assert kept == summary.check
    verdicts = {v["bed_id"]: v for v in kept["verdicts"]}
    assert verdicts["test-hiss"]["heard"] == ["white noise"] and not verdicts["test-hiss"]["ok"]
    assert verdicts["test-hum"]["ok"] and kept["accepted"] == ["test-hum"]
    # a rerun downloads nothing
    calls = world["clients"].count("apt-get download")
    fetch_beds(dest, recipes=world["recipe"], atoms_spec=str(world["bank"]), runner=world["clients"],
               environment=NO_PROBLEMS, check_cache=world["tmp"] / "cache",
               atom_dest=world["tmp"] / "none")
    assert world["clients"].count("apt-get download") == calls


def test_a_folder_no_fetch_made_is_refused_before_an_archive_is_linked_into_it(world) -> None:
    """The user's atom bank named as the bed folder: refused in one line, not one file changed,
    though the atom fetch's cache holds the package (which a fetch links into its own cache)."""
    from test_fetch_ownership import tree

    atom_dest = world["tmp"] / "atoms"
    (atom_dest / ".cache" / "debian").mkdir(parents=True)
    (atom_dest / ".cache" / "debian" / "amb-sounds_1.0-1_all.deb").write_bytes(b"deb")
    before = tree(world["bank"])
    with pytest.raises(FetchError, match="holds files no fetch wrote"):
        fetch_beds(world["bank"], recipes=world["recipe"], runner=world["clients"],
                   environment=NO_PROBLEMS, atom_dest=atom_dest, atoms_spec=None)
    assert tree(world["bank"]) == before


def test_a_changed_file_is_not_a_bed(world) -> None:
    rows = [json.loads(line) for line in world["recipe"].read_text().splitlines()]
    rows[1]["sha256"] = "0" * 64
    world["recipe"].write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    dest = world["tmp"] / "beds"
    summary = fetch_beds(dest, recipes=world["recipe"], runner=world["clients"],
                         environment=NO_PROBLEMS, atom_dest=world["tmp"] / "none",
                         atoms_spec=None)
    assert [r["bed_id"] for r in summary.beds] == ["test-hum"]
    assert "differs from the recipe" in summary.fetch.failed[0].reason


@pytest.mark.parametrize("row, field", [
    ({"bed_id": "Bad Id"}, "bed_id"),
    ({"label": "rain"}, "label"),
    ({"license": None}, "license"),
    ({"record": "atom", "label": "rain", "category": "x"}, "record"),
])
def test_bad_bed_rows_are_named(row: dict, field: str) -> None:
    base = {"record": "bed", "bed_id": "ok-bed", "registry": "debian", "package": "p",
            "path": "a.wav", "sha256": "0" * 64, "license": "CC0-1.0"}
    pkg = {"record": "package", "registry": "debian", "name": "p", "version": "1", "size": 1}
    obj = {**base, **row}
    obj = {k: v for k, v in obj.items() if v is not None}
    with pytest.raises(FetchError, match=f"beds.jsonl:2: field '{field}'"):
        parse_bed_recipes([json.dumps(pkg), json.dumps(obj)], "beds.jsonl")


def test_shipped_bed_recipes_pin_every_file() -> None:
    book = load_bed_recipes()
    assert 3 <= len(book.atoms) <= 10
    for bed in book.atoms:
        assert bed.sha256 and bed.license and bed.category == "bed"
        assert book.package_of(bed).sha256


def test_build_with_the_fetched_beds(world, tonal_bank, tmp_path, monkeypatch) -> None:  # noqa: F811
    """`bench build --conditions ... --beds packages` records the fetched bed bank by name, its
    check against the build's bank, and a render under the condition lays a fetched bed."""
    from typer.testing import CliRunner

    from reasonaudio.cli import app
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.atoms.fetch.bed_recipes import default_bed_dest
    from reasonaudio.render.clips import bench_renderer

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    fetch_beds(default_bed_dest(), recipes=world["recipe"], atoms_spec=str(tonal_bank),
               runner=world["clients"], environment=NO_PROBLEMS, atom_dest=tmp_path / "none")
    runner = CliRunner()
    out = tmp_path / "b"
    res = runner.invoke(app, ["build", "--atoms", str(tonal_bank), "--clips", "20", "--queries", "4",
                              "--out", str(out), "--conditions", "clean,snr5", "--beds", "packages"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    records = {r["name"]: r for r in manifest["conditions"]["records"]}
    assert records["snr5"]["beds"] == "packages" and records["clean"]["beds"] == "generated"
    assert "test-hiss" in manifest["conditions"]["beds"]["packages"]["accepted"]
    assert manifest["parameters"]["beds"] == "packages"
    renderer = bench_renderer(load_benchmark(out).with_condition("snr5"))
    clip = load_benchmark(out).clips[0]
    assert renderer.bed_spans(clip)[0].bed_id in renderer.accepted
    assert set(renderer.accepted) <= {"test-hiss", "test-hum"}
    res = runner.invoke(app, ["build", "--atoms", str(tonal_bank), "--clips", "20", "--queries", "4",
                              "--out", str(tmp_path / "c"), "--beds", "packages"])
    assert res.exit_code == 2 and "--beds" in res.output
