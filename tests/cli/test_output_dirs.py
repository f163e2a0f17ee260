"""One output-folder rule for every command that writes a folder (issue 27, item 1).

``--force`` may replace only that command's own earlier output (its marker file) or an empty
folder: never the input, a folder above it, anything inside it, the current folder, a file, a
FIFO, a link, or an unrelated folder. Each case is tried for every command, and the whole tree is
compared before and after: nothing may be removed, replaced or created.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.errors import DataError
from reasonaudio.output_dirs import OutputKind, check_output_dir

runner = CliRunner()


BLOCK = 1 << 16
"""the digest's unit: a file is its size and its blocks that hold a non-zero byte"""


def content_digest(path: Path) -> str:
    """sha256 over (offset, bytes) of every ``BLOCK``-aligned block of ``path`` holding a
    non-zero byte: equal for equal contents whatever the layout on disk, and read from the
    file's data extents only. A store's files are mostly holes (Qdrant maps 32 MB pages that
    hold a few KB), which a plain sha256 would read as hundreds of MB of zeros per snapshot."""
    digest = hashlib.sha256()
    zero = bytes(BLOCK)
    with open(path, "rb") as fh:
        size, done = os.fstat(fh.fileno()).st_size, 0  # done: blocks below it are hashed
        while done < size:
            try:
                data = os.lseek(fh.fileno(), done, os.SEEK_DATA)
            except OSError:  # ENXIO: only holes from here on
                break
            end = os.lseek(fh.fileno(), data, os.SEEK_HOLE)
            done = data // BLOCK * BLOCK
            fh.seek(done)
            while done < end:
                block = fh.read(BLOCK)
                if block != zero[:len(block)]:
                    digest.update(done.to_bytes(8, "little") + block)
                done += BLOCK
    return digest.hexdigest()


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: its kind and, for plain files, size and content digest
    (:func:`content_digest`; links and FIFOs are never followed or opened)."""
    out: dict[str, tuple] = {}
    for top, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(top) / name
            st_ = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISREG(st_.st_mode):
                out[rel] = ("file", st_.st_size, content_digest(path))
            elif stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(path))
            else:
                out[rel] = (stat.S_IFMT(st_.st_mode),)
    return out


def _make_bank(root: Path) -> Path:
    import numpy as np
    import soundfile as sf

    for i, label in enumerate(f"sound {c}" for c in "abcdefgh"):
        path = root / label / "a.wav"
        path.parent.mkdir(parents=True, exist_ok=True)
        t = np.arange(int((1.0 + 0.3 * i) * 16_000)) / 16_000
        sf.write(path, (0.3 * np.sin(2 * np.pi * (200 + 50 * i) * t)).astype(np.float32), 16_000)
    return root


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("outdirs") / "work"
    root.mkdir()
    _make_bank(root / "bank")
    bench = root / "bench"
    r = runner.invoke(app, ["build", "--out", str(bench), "--clips", "40", "--queries", "10",
                            "--atoms", str(root / "bank")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["eval", "--data", str(bench), "--retriever", "bag-of-sounds"])
    assert r.exit_code == 0, r.output
    (root / "unrelated").mkdir()
    (root / "unrelated" / "precious.txt").write_text("keep me\n")
    (root / "other-empty").mkdir()
    (root / "empty-link").symlink_to(root / "other-empty", target_is_directory=True)
    (root / "a-file").write_text("a file\n")
    os.mkfifo(root / "a-fifo")
    return root


COMMANDS = {
    "build": lambda w, t: ["build", "--out", t, "--clips", "40", "--queries", "10",
                           "--atoms", str(w / "bank"), "--force"],
    "export": lambda w, t: ["export", "--data", str(w / "bench"), "--to", t, "--format", "hf",
                            "--audio", "none", "--force"],
    "train": lambda w, t: ["train", "--data", str(w / "bench"), "--out", t, "--force",
                           "--epochs", "1", "--max-steps", "1"],
    "report": lambda w, t: ["report", "--data", str(w / "bench"), "--out", t],
}
INPUT = {"build": "bank", "export": "bench", "train": "bench", "report": "bench"}


def targets(command: str) -> dict[str, str]:
    """Name -> target path relative to ``work`` (the current folder while the command runs)."""
    inp = INPUT[command]
    return {
        "the input": inp,
        "the input, spelled with ..": f"unrelated/../{inp}",
        "a folder inside the input": f"{inp}/{'qrels' if inp == 'bench' else 'sound a'}",
        "a new folder inside the input": f"{inp}/new-output",
        "the current folder": ".",
        "the parent of the input, by its path": "../work",
        "a folder above the current one": "..",
        "a regular file": "a-file",
        "a FIFO": "a-fifo",
        "a link to a folder": "empty-link",
        "an unrelated folder": "unrelated",
    }


CASES = [(c, name, rel) for c in COMMANDS for name, rel in targets(c).items()]


@pytest.mark.parametrize("command,case,rel", CASES, ids=[f"{c}: {n}" for c, n, _ in CASES])
def test_force_never_removes_what_the_command_did_not_write(work, monkeypatch, command, case, rel):
    monkeypatch.chdir(work)
    top = work.parent
    before = snapshot(top)
    r = runner.invoke(app, COMMANDS[command](work, rel))
    assert r.exit_code == 2, f"{case}: {r.output}"
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    lines = [ln for ln in r.output.strip().splitlines() if ln.strip()]
    assert lines and "Traceback" not in r.output, r.output
    assert any(rel.split("/")[-1] in ln or "current folder" in ln for ln in lines), r.output
    assert snapshot(top) == before, f"{case}: the tree changed"


def test_the_content_digest_reads_every_byte_and_not_the_layout(tmp_path):
    """A sparse file and a written-out copy of it digest alike; a byte changed anywhere (in a
    hole, in data, in the last partial block, the first byte) digests otherwise. (A size
    change is the snapshot's own field.)"""
    size = 3 * BLOCK + 5
    content = bytearray(size)
    content[BLOCK + 7] = ord("x")
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as fh:
        fh.truncate(size)
        fh.seek(BLOCK + 7)
        fh.write(b"x")
    (tmp_path / "dense").write_bytes(bytes(content))
    assert content_digest(sparse) == content_digest(tmp_path / "dense")
    digests = {content_digest(sparse)}
    for at in (2 * BLOCK + 3, BLOCK + 7, size - 1, 0):
        changed = bytearray(content)
        changed[at] ^= 1
        (tmp_path / "changed").write_bytes(bytes(changed))
        with open(sparse, "r+b") as fh:  # the same byte changed in place in the sparse file
            fh.seek(at)
            fh.write(changed[at:at + 1])
        assert content_digest(sparse) == content_digest(tmp_path / "changed")
        digests.add(content_digest(sparse))
        with open(sparse, "r+b") as fh:  # and back
            fh.seek(at)
            fh.write(content[at:at + 1])
    assert len(digests) == 5


def test_export_replaces_its_own_output_and_an_empty_folder(work, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    args = COMMANDS["export"](work, str(empty))
    assert runner.invoke(app, args).exit_code == 0
    assert (empty / "reasonaudio-export.json").is_file()
    r = runner.invoke(app, args)  # its own earlier export: replaced
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [a for a in args if a != "--force"])
    assert r.exit_code == 2 and "--force" in r.output


def test_build_replaces_its_own_benchmark(work, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    args = COMMANDS["build"](work, str(tmp_path / "b"))
    assert runner.invoke(app, args).exit_code == 0
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output


def test_report_rewrites_its_default_folder_inside_the_benchmark(work, monkeypatch, tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(work / "bench", bench)
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the default DATA/results/plots is the report's own; rewritten each time
        r = runner.invoke(app, ["report", "--data", str(bench)])
        assert r.exit_code == 0, r.output
    assert (bench / "results" / "plots" / "report.json").is_file()
    r = runner.invoke(app, ["report", "--data", str(bench), "--out", str(bench / "results")])
    assert r.exit_code == 2, r.output  # the saved results themselves are not a report


# --- the rule itself, on random trees -----------------------------------------------------------

KIND = OutputKind("thing", "bench thing --out", "thing.json", "thing/1")
NAMES = st.sampled_from(["in", "in/sub", "in/sub/deep", "cwd", "cwd/x", "own", "empty", "other",
                         "other/y", "file", "new", "new/z", ".", "..", "own/..", "in/.."])


def _tree(root: Path) -> None:
    for d in ("in/sub/deep", "cwd/x", "own", "empty", "other/y"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "in" / "data.txt").write_text("input")
    (root / "own" / "thing.json").write_text('{"format": "thing/1"}')
    (root / "own" / "old.bin").write_text("old output")
    (root / "other" / "y" / "mine.txt").write_text("not yours")
    (root / "file").write_text("a file")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rel=NAMES, force=st.booleans())
def test_allowed_target_is_new_empty_or_own(tmp_path_factory, rel, force):
    root = tmp_path_factory.mktemp("rule")
    _tree(root)
    cwd = root / "cwd"
    old = Path.cwd()
    os.chdir(cwd)
    try:
        target = Path(os.path.normpath(root / rel))
        try:
            check_output_dir(root / rel, KIND, force, protect=[root / "in"])
        except DataError as exc:
            assert "\n" not in str(exc)
            return
    finally:
        os.chdir(old)
    real = Path(os.path.realpath(target))
    inp = (root / "in").resolve()
    assert real != inp and inp not in real.parents and real not in inp.parents
    assert real != cwd.resolve() and real not in cwd.resolve().parents
    if real.exists():
        assert force and real.is_dir() and not real.is_symlink()
        assert not any(real.iterdir()) or KIND.written_here(real)
