"""What a fetch may remove: only files its own record says it wrote, in a folder it made.

A folder bank of the user's own (``docs/atom-banks.md``: label folders, optional ``atoms.jsonl``)
is never written into; a fetched bank whose resume records are gone (``cp -r bank/*``, or the
``.cache`` deleted) keeps every recording ``--only`` does not select; rows and files a user added
to a fetched bank stay. Each case compares a digest of the folder's files before and after.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from test_fetch_run import run, world  # noqa: F401  (the fixture)
from typer.testing import CliRunner

from reasonaudio.atoms.fetch import debian, npm, process, soundfont
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.fetch import check_fetch_dest
from reasonaudio.atoms.registry import open_bank


def tree(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """sha256 of every file under ``root`` by relative path, but those under a ``skip`` name."""
    return {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(root.rglob("*"))
            if f.is_file() and not set(f.relative_to(root).parts) & set(skip)}


def digest(root: Path, skip: tuple[str, ...] = ()) -> str:
    return hashlib.sha256(json.dumps(tree(root, skip), sort_keys=True).encode()).hexdigest()


def users_bank(root: Path, world) -> Path:
    """A folder bank of the user's own, with a manifest, one file where a fetch would put its
    dog barking, and one a fetched manifest could name."""
    for rel, data in (("dog_barking/dog_barking.wav", world["files"]["k1"]),
                      ("dog_barking/mine.wav", world["files"]["k2"]),
                      ("siren/s1.wav", world["files"]["cat"])):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    rows = [{"label": "dog barking", "file": "dog_barking/dog_barking.wav", "source": "my garden",
             "license": "CC0-1.0"},
            {"label": "siren", "file": "siren/s1.wav", "source": "my street", "license": "CC0-1.0"}]
    (root / "atoms.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def cli(world, monkeypatch, *args: str):
    from reasonaudio.cli import app

    monkeypatch.setattr(process, "run", world["clients"])
    monkeypatch.setattr(debian, "apt_problem", lambda: None)
    monkeypatch.setattr(npm, "npm_problem", lambda: None)
    monkeypatch.setattr(soundfont, "fluidsynth_problem", lambda: None)
    return CliRunner().invoke(app, ["atoms", "fetch", "packages", "--recipes", str(world["recipe"]),
                                    *args])


def test_a_users_own_bank_is_refused_and_left_as_it_was(world, monkeypatch) -> None:
    bank = users_bank(world["tmp"] / "mine", world)
    before = digest(bank)
    for extra in ([], ["--only", "dog barking"]):
        res = cli(world, monkeypatch, "--dest", str(bank), *extra)
        assert res.exit_code == 2, res.output
        assert len(res.output.strip().splitlines()) == 1 and str(bank.name) in res.output
        assert "is the atom bank" in res.output  # the output rule refuses it as --dest is read
        assert digest(bank) == before and not (bank / ".cache").exists()
    with pytest.raises(FetchError, match="fetch-report.json"):  # and so does the fetch itself
        check_fetch_dest(bank)
    assert digest(bank) == before
    assert set(open_bank(str(bank)).labels) == {"dog barking", "siren"}


def test_a_folder_of_other_files_is_refused_and_a_new_or_empty_one_is_not(world) -> None:
    other = world["tmp"] / "music"
    other.mkdir()
    (other / "song.txt").write_text("la")
    with pytest.raises(FetchError, match="music: holds files"):
        run(world, other)
    assert tree(other) == {"song.txt": hashlib.sha256(b"la").hexdigest()}
    empty = world["tmp"] / "empty"
    empty.mkdir()
    assert not run(world, empty, only=["cow mooing"]).failed
    assert not run(world, world["tmp"] / "new" / "bank", only=["cow mooing"]).failed


@pytest.mark.parametrize("how", ["cache deleted", "copied without dot files"])
def test_only_keeps_every_other_recording_when_the_resume_records_are_gone(world, how) -> None:
    dest = world["tmp"] / "bank"
    run(world, dest)
    if how == "cache deleted":
        shutil.rmtree(dest / ".cache")
    else:  # cp -r bank/* copy
        copy = world["tmp"] / "copy"
        copy.mkdir()
        for item in dest.iterdir():
            if not item.name.startswith("."):
                (shutil.copytree if item.is_dir() else shutil.copy2)(item, copy / item.name)
        dest = copy
    before = digest(dest, skip=(".cache", "fetch-report.json"))
    s = run(world, dest, only=["dog barking"])
    assert [a.status for a in s.atoms] == ["ok"] and s.published == 8
    # the one atom fetched again is the same bytes; nothing else moved
    assert digest(dest, skip=(".cache", "fetch-report.json")) == before
    assert len(open_bank(str(dest)).labels) == 8


def test_rows_and_files_a_user_added_to_a_fetched_bank_stay(world) -> None:
    dest = world["tmp"] / "bank"
    run(world, dest, only=["cow mooing", "dog barking"])
    (dest / "my_bell").mkdir()
    (dest / "my_bell" / "bell.wav").write_bytes(world["files"]["piano"])
    mine = json.dumps({"label": "my bell", "file": "my_bell/bell.wav", "source": "me",
                       "license": "CC0-1.0"})
    with (dest / "atoms.jsonl").open("a") as fh:
        fh.write(mine + "\n")
    # a fetched file the user changed is no longer the fetch's: it is not removed either
    cow = dest / "cow_mooing" / "cow_mooing.wav"
    cow.write_bytes(world["files"]["k1"])
    lines = [l for l in (dest / "atoms.jsonl").read_text().splitlines()
             if json.loads(l)["label"] != "cow mooing"]
    (dest / "atoms.jsonl").write_text("\n".join(lines) + "\n")
    before = tree(dest, skip=(".cache",))
    run(world, dest, only=["dog barking"])
    after = tree(dest, skip=(".cache",))
    assert after["my_bell/bell.wav"] == before["my_bell/bell.wav"]
    assert after["cow_mooing/cow_mooing.wav"] == before["cow_mooing/cow_mooing.wav"]
    assert mine in (dest / "atoms.jsonl").read_text().splitlines()
    assert "my bell" in open_bank(str(dest)).labels


def test_a_bank_whose_recording_left_the_recipes_loses_only_that_file(world) -> None:
    dest = world["tmp"] / "bank"
    run(world, dest)
    lines = [l for l in world["recipe"].read_text().splitlines() if '"label": "cow mooing"' not in l]
    world["recipe"].write_text("\n".join(lines) + "\n")
    before = tree(dest, skip=(".cache", "fetch-report.json", "atoms.jsonl"))
    run(world, dest)
    after = tree(dest, skip=(".cache", "fetch-report.json", "atoms.jsonl"))
    assert set(before) - set(after) == {"cow_mooing/cow_mooing.wav"}
    assert all(after[k] == before[k] for k in after)


def test_a_first_fetch_cut_short_can_be_run_again(world, monkeypatch) -> None:
    from reasonaudio.atoms.fetch import convert

    real = convert.convert

    def boom(*a, **k):
        raise KeyboardInterrupt

    dest = world["tmp"] / "bank"
    monkeypatch.setattr(convert, "convert", boom)
    with pytest.raises(KeyboardInterrupt):
        run(world, dest)
    assert not (dest / "fetch-report.json").exists() and any(dest.iterdir())
    monkeypatch.setattr(convert, "convert", real)
    assert run(world, dest).failed == []


def test_a_rerun_writes_the_banks_rows_byte_for_byte(world) -> None:
    dest = world["tmp"] / "bank"
    run(world, dest)
    first = (dest / "atoms.jsonl").read_bytes()
    assert [a.status for a in run(world, dest).atoms] == ["cached"] * 8
    assert (dest / "atoms.jsonl").read_bytes() == first    # no resume key leaks into the rows
