"""One output rule, one matrix (issue 56): every option of every command that writes a file or a
folder is tried against every target no command may write (inside a benchmark, an atom bank, a
trained model, the cache, a results tree; a device, a FIFO, a system folder; the command's own
input) and must refuse it in one line, exit 2, with the whole workspace unchanged.

The options come from the typer application itself: an option is an output when its callback
carries the rule's :class:`reasonaudio.commands.app.Writes`, so a new output option is in the
matrix without an edit here, and a path option that is neither an output nor a known input fails
:func:`test_every_path_option_writes_by_the_rule_or_only_reads`.
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import shutil
import stat
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest
import soundfile as sf
import typer
from typer.testing import CliRunner

from hostile import one_line_error, small_build
from reasonaudio.cli import app
from reasonaudio.commands.app import PATH_TEXT_OPTIONS, read_paths
from reasonaudio.errors import DataError
from reasonaudio.output_dirs import (
    DETECTOR_OUTPUT,
    ENCODER_OUTPUT,
    FETCH_OUTPUT,
    PACKAGE,
    check_output_dir,
    check_output_path,
)
from test_output_dirs import snapshot

runner = CliRunner()


# --- the options, from the application ----------------------------------------------------------

def _commands(cmd: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    cmd = typer.main.get_command(app) if cmd is None else cmd
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from _commands(sub, path + (name,))
    else:
        yield " ".join(path), cmd


def _writes(param: Any) -> Any:
    return getattr(param.callback, "writes", None)


OUTPUTS = [(name, param) for name, cmd in _commands() for param in cmd.params if _writes(param)]
"""(command, parameter) for every option that writes a file or folder"""

READS = {
    ("build", "calibration_for"), ("ingest", "vectors"), ("ingest", "ids"),
    ("ingest", "query_vectors"), ("ingest", "query_ids"), ("parse", "labels"), ("serve", "plots"),
    ("detect", "model_path"), ("detect", "calibration"), ("tune", "calibration"),
    ("replicate", "detector_model"), ("atoms identify", "model_path"),
    ("atoms fetch packages", "recipes"), ("atoms fetch beds", "recipes"),
}
"""Path options that only read (besides every ``--data``)"""
WRITING_NAMES = ("--out", "--to", "--dest", "--trec", "--json", "--record-recipe", "--report")


def _is_path(param: Any) -> bool:
    return param.type_descriptor.annotation in (Path, list[Path])


def test_every_path_option_writes_by_the_rule_or_only_reads():
    """A path option is an output under the rule or a known input; an option named like an
    output (``--out``, ``--json PATH``, ``--*-results``) that takes a value is an output."""
    unknown, unruled = [], []
    for name, cmd in _commands():
        for param in cmd.params:
            if _writes(param) is not None:
                continue
            if _is_path(param) and param.name != "data" and (name, param.name) not in READS:
                unknown.append(f"{name} {param.opts[0]}")
            flag = getattr(param, "is_flag", False)
            named = any(o in WRITING_NAMES or o.endswith("-results") for o in param.opts)
            if named and not flag:
                unruled.append(f"{name} {param.opts[0]}")
    assert not unknown, f"path options neither under the output rule nor known inputs: {unknown}"
    assert not unruled, f"options that write without the output rule: {unruled}"
    assert {f"{n} {p.opts[0]}" for n, p in OUTPUTS} >= {
        "build --out", "export --to", "train --out", "train-detector --out", "report --out",
        "demo --out", "render --out", "eval --json", "eval --trec", "eval --mteb-results",
        "compare --json", "detect --json", "sweep perception --json", "atoms fetch packages --dest",
        "atoms fetch packages --record-recipe", "atoms fetch beds --dest"}


# --- the workspace --------------------------------------------------------------------------

def _bank(root: Path) -> Path:
    """A folder bank with its manifest (atoms.jsonl): eight sine recordings."""
    rows = []
    for i, label in enumerate(f"tone {c}" for c in "abcdefgh"):
        path = root / label / "a.wav"
        path.parent.mkdir(parents=True)
        t = np.arange(int((1.0 + 0.3 * i) * 16_000)) / 16_000
        sf.write(path, (0.3 * np.sin(2 * np.pi * (200 + 50 * i) * t)).astype(np.float32), 16_000)
        rows.append({"label": label, "file": f"{label}/a.wav", "license": "CC0"})
    (root / "atoms.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _model(root: Path, kind: Any) -> Path:
    """A trained model's folder as far as the rule reads it: its card naming the trainer's format."""
    root.mkdir()
    (root / kind.marker).write_text(json.dumps({"format": kind.format, "format_version": 1}))
    (root / "model.safetensors").write_bytes(bytes(range(256)) * 4)
    return root


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("outmatrix")
    w = {"root": root, "bench": small_build(root / "bench", clips=40, queries=10),
         "bank": _bank(root / "bank"), "model": _model(root / "model", ENCODER_OUTPUT),
         "detector": _model(root / "detector", DETECTOR_OUTPUT), "cache": root / "cache"}
    (w["cache"] / "embeddings").mkdir(parents=True)
    (w["cache"] / "embeddings" / "clap-0.sqlite").write_bytes(b"SQLite format 3\x00" * 8)
    qid = json.loads((w["bench"] / "queries.jsonl").read_text().splitlines()[0])["_id"]
    w["run"] = root / "run.json"
    w["run"].write_text(json.dumps({qid: {"clip-00001": 1.0}}))
    w["recipes"] = root / "recipes.jsonl"
    shutil.copy(PACKAGE / "data" / "atom_recipes.jsonl", w["recipes"])
    os.mkfifo(root / "fifo")
    try:  # a private /dev/null: a regression replaces only it
        os.mknod(root / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        (root / "null").symlink_to("/dev/null")
    return w


@pytest.fixture(autouse=True)
def _cache(ws, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(ws["cache"]))


BASE: dict[str, Callable[[dict[str, Path]], list[list[str]]]] = {
    "build": lambda w: [["--atoms", str(w["bank"]), "--clips", "40", "--queries", "10", "--force"],
                        ["--calibration-for", str(w["bench"]), "--force"]],
    "demo": lambda w: [["--atoms", str(w["bank"])]],
    "render": lambda w: [["clip-00001", "--data", str(w["bench"])]],
    "export": lambda w: [["--data", str(w["bench"]), "--audio", "none", "--force"]],
    "eval": lambda w: [["--data", str(w["bench"]), "-r", "oracle", "--run", f"mine={w['run']}"]],
    "compare": lambda w: [["oracle", "random", "--data", str(w["bench"])]],
    "report": lambda w: [["--data", str(w["bench"])]],
    "detect": lambda w: [["--data", str(w["bench"]), "--mode", "trained",
                          "--model-path", str(w["detector"])]],
    "train": lambda w: [["--data", str(w["bench"]), "--max-steps", "1", "--force"]],
    "train-detector": lambda w: [["--data", str(w["bench"]), "--epochs", "1", "--force"]],
    "atoms fetch packages": lambda w: [["--recipes", str(w["recipes"]), "--max-download-mb", "1"]],
    "atoms fetch beds": lambda w: [["--atoms", str(w["bank"]), "--max-download-mb", "1"]],
    "sweep perception": lambda w: [["--data", str(w["bench"])]],
    "replicate": lambda w: [["--atoms", str(w["bank"]), "-r", "oracle", "--clips", "40", "--queries", "10"]],
}
"""Per command, the arguments besides the output that make a valid command line (each list is
one variant; every path in it that exists is an input the outputs are tried against)."""

TARGETS: dict[str, Callable[[dict[str, Path]], Path]] = {
    "the benchmark": lambda w: w["bench"],
    "a benchmark's manifest": lambda w: w["bench"] / "manifest.json",
    "a benchmark's corpus": lambda w: w["bench"] / "corpus.jsonl",
    "a benchmark's qrels": lambda w: w["bench"] / "qrels" / "test.tsv",
    "a new path in a benchmark": lambda w: w["bench"] / "new-output",
    "a benchmark's results tree": lambda w: w["bench"] / "results" / "conditions" / "snr5" / "new",
    "the atom bank": lambda w: w["bank"],
    "the bank's manifest": lambda w: w["bank"] / "atoms.jsonl",
    "a new path in the bank": lambda w: w["bank"] / "new-output",
    "a trained model": lambda w: w["model"],
    "a trained model's card": lambda w: w["model"] / "card.json",
    "a new path in a trained model": lambda w: w["model"] / "new-output",
    "a trained detector": lambda w: w["detector"],
    "the cache": lambda w: w["cache"],
    "a file in the cache": lambda w: w["cache"] / "embeddings" / "clap-0.sqlite",
    "a new path in the cache": lambda w: w["cache"] / "new-output",
    "a device": lambda w: w["root"] / "null",
    "a FIFO": lambda w: w["root"] / "fifo",
    "a system device": lambda w: Path("/dev/full"),
    "a new path in /dev": lambda w: Path("/dev/reasonaudio-output-matrix"),
}


def _inputs(args: list[str]) -> list[str]:
    """The paths a base command line reads: each value that names something on disk."""
    return [p for a in args for p in read_paths("atoms", a) if os.path.isabs(p)]


def _variants(command: str) -> int:
    """How many command lines BASE gives ``command`` (one when none: the case then fails)."""
    if command not in BASE:
        return 1
    return len(BASE[command](collections.defaultdict(lambda: Path("/nowhere"))))


def _cases() -> list[tuple[str, str, int, str]]:
    return [(command, param.opts[0], variant, target)
            for command, param in OUTPUTS for variant in range(_variants(command))
            for target in [*TARGETS, "the input"]]


def _case_targets(ws: dict[str, Path], target: str, args: list[str], writes: Any) -> list[Path]:
    """The paths of ``target``; one that holds the command's own earlier output (which
    ``--force`` may replace: test_output_dirs) is left out unless it is the command's input."""
    inputs = [Path(p) for p in _inputs(args)]
    paths = inputs if target == "the input" else [TARGETS[target](ws)]
    assert paths, f"{target}: no such path in {args}"
    return [p for p in paths if p in inputs or writes.kind is None or not writes.kind.written_here(p)]


@pytest.mark.parametrize("command,option,variant,target", _cases(),
                         ids=[f"{c} {o}#{v}: {t}" for c, o, v, t in _cases()])
def test_every_output_refuses_what_no_command_may_write(ws, command, option, variant, target):
    assert command in BASE, f"{command}: add its arguments to BASE (it has an output option)"
    variants = BASE[command](ws)
    args = variants[variant]
    param = next(p for c, p in OUTPUTS if c == command and p.opts[0] == option)
    for path in _case_targets(ws, target, args, _writes(param)):
        before = snapshot(ws["root"])
        line = one_line_error(runner.invoke(app, [*command.split(), *args, option, str(path)]),
                              str(path))
        assert "pass --force" not in line and "--force`" not in line, line
        assert snapshot(ws["root"]) == before, f"{command} {option} {path}: the workspace changed"
        assert not Path("/dev/reasonaudio-output-matrix").exists()


# --- the defects that made the rule ---------------------------------------------------------

@pytest.fixture
def bench_copy(ws, tmp_path) -> Path:
    dst = tmp_path / "data"
    shutil.copytree(ws["bench"], dst)
    return dst


@pytest.mark.parametrize("target", ["manifest.json", "corpus.jsonl", "qrels/test.tsv", "bank"])
def test_a_sweeps_json_never_replaces_a_benchmarks_or_a_banks_files(ws, bench_copy, tmp_path, target):
    """D1: ``bench sweep perception --json`` replaced a benchmark's and a bank's files."""
    bank = tmp_path / "bank"
    shutil.copytree(ws["bank"], bank)
    path = bank / "atoms.jsonl" if target == "bank" else bench_copy / target
    before = snapshot(tmp_path)
    one_line_error(runner.invoke(app, ["sweep", "perception", "--data", str(bench_copy),
                                       "--levels", "0", "--json", str(path)]), str(path), "inside the")
    assert snapshot(tmp_path) == before


def test_a_calibration_build_never_replaces_its_input(ws, tmp_path):
    """D2: ``--calibration-for D --out D`` was refused with a hint to add ``--force``, which
    replaced D by its own calibration build; an input named ``X-calibration`` was lost to
    ``--out X`` (the calibration build's own calibration build goes there)."""
    data = tmp_path / "x-calibration"
    shutil.copytree(ws["bench"], data)
    before = snapshot(tmp_path)
    for extra in ([], ["--force"]):
        line = one_line_error(runner.invoke(app, ["build", "--calibration-for", str(data),
                                                  "--out", str(data), *extra]), "is the input")
        assert "--force" not in line, line
        one_line_error(runner.invoke(app, ["build", "--calibration-for", str(data), "--out",
                                           str(tmp_path / "x"), "--clips", "40", "--queries", "10",
                                           *extra]), "is the input")
        assert snapshot(tmp_path) == before
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.generator.calibration import make_calibration_builds

    with pytest.raises(DataError, match="is the input"):
        make_calibration_builds(load_benchmark(data), tmp_path / "x", 40, 10, overwrite=True)
    assert snapshot(tmp_path) == before


def test_a_calibration_refusal_suggests_only_what_leaves_the_input_whole(ws, tmp_path):
    """The command a refusal suggests, run as printed, replaces the other build it named and
    never the input."""
    data = tmp_path / "data"
    shutil.copytree(ws["bench"], data)
    small_build(tmp_path / "other", clips=40, queries=10, seed=7)
    line = one_line_error(runner.invoke(app, ["build", "--calibration-for", str(data), "--out",
                                              str(tmp_path / "other"), "--clips", "40",
                                              "--queries", "10"]), "holds another build")
    suggested = shlex.split(line.split("`")[1])
    assert suggested[0] == "bench" and "--force" in suggested
    before = snapshot(data)
    r = runner.invoke(app, suggested[1:])
    assert r.exit_code == 0, r.output
    assert snapshot(data) == before
    assert json.loads((tmp_path / "other" / "manifest.json").read_text())["seed"] == 1


def test_a_report_never_writes_into_the_results_tree(ws, bench_copy):
    """A report written into ``DATA/results/conditions/`` became a results folder the evaluator
    read; only the report's own ``DATA/results/plots`` is open to it."""
    r = runner.invoke(app, ["eval", "--data", str(bench_copy), "-r", "bag-of-sounds"])
    assert r.exit_code == 0, r.output
    before = snapshot(bench_copy)
    for rel in ("results/conditions/snr5", "results/conditions/x/plots", "results/new"):
        one_line_error(runner.invoke(app, ["report", "--data", str(bench_copy), "--out",
                                           str(bench_copy / rel)]), rel, "inside the benchmark")
    assert snapshot(bench_copy) == before
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.evaluation.report import run_report

    with pytest.raises(DataError, match="inside the benchmark"):
        run_report(load_benchmark(bench_copy), bench_copy / "results" / "conditions" / "snr5")
    assert snapshot(bench_copy) == before
    r = runner.invoke(app, ["report", "--data", str(bench_copy)])  # its own default: written
    assert r.exit_code == 0, r.output
    assert (bench_copy / "results" / "plots" / "report.json").is_file()


# --- the rule's places and markers ----------------------------------------------------------

def test_the_package_and_the_systems_folders_are_never_an_output(tmp_path):
    for path in (PACKAGE / "data" / "new.json", Path("/proc/self/new"), Path("/sys/new")):
        with pytest.raises(DataError, match="is inside"):
            check_output_path(path, "--json")


def test_a_fetch_owns_its_default_bank_in_the_cache_and_its_interrupted_work(ws, tmp_path):
    default = ws["cache"] / "atoms" / "packages"
    check_output_dir(default, FETCH_OUTPUT, True, owned=[default])  # its own: open
    with pytest.raises(DataError, match="inside the cache"):
        check_output_dir(ws["cache"] / "atoms" / "other", FETCH_OUTPUT, True, owned=[default])
    stopped = tmp_path / "stopped"
    (stopped / ".cache" / "done").mkdir(parents=True)
    check_output_dir(stopped, FETCH_OUTPUT, True)  # a run stopped before its report: resumed
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine\n")
    with pytest.raises(DataError, match="not empty and not a previous fetched bank"):
        check_output_dir(tmp_path / "mine", FETCH_OUTPUT, True)
    r = runner.invoke(app, ["atoms", "fetch", "packages", "--dest", str(default),
                            "--recipes", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 2 and "recipe file not found" in r.output  # past the rule, to the work
    assert not default.exists()


def test_path_text_options_are_real_parameters():
    names = {p.name for _, cmd in _commands() for p in cmd.params}
    assert PATH_TEXT_OPTIONS <= names


def test_the_fetch_marker_is_what_a_fetch_writes(tmp_path):
    """The rule reads a fetched bank by the report a fetch writes and the resume records a
    stopped one leaves (``reasonaudio/atoms/fetch/fetch.py``)."""
    from reasonaudio.atoms.fetch.fetch import CLAIM_NAME, REPORT_NAME, Fetcher, load_recipes

    fetcher = Fetcher(tmp_path / "bank", load_recipes(None), environment={})
    assert FETCH_OUTPUT.marker == REPORT_NAME
    assert FETCH_OUTPUT.also == (str(fetcher.done_dir.relative_to(tmp_path / "bank")),
                                 str((fetcher.cache / CLAIM_NAME).relative_to(tmp_path / "bank")))
