"""Every shell block of README.md and docs/*.md runs as printed, or its marker says why not (issue 54).

A *shell block* is a fenced block tagged ``bash``, ``sh`` or ``console`` (a block of commands must
be tagged so). Each runs in bash, as printed, in a folder laid out like a user's checkout after
the main job, and fails its test when a command exits non-zero. The folder:

- ``.venv/bin/bench`` and ``.venv/bin/python`` (``.venv/bin`` on ``PATH``, as after
  ``. .venv/bin/activate``) and ``scripts/``; ``bench`` is the real CLI of this checkout, started
  from one process that imported it (prewarmed_bench.py);
- ``data/demo/bench`` and ``data/demo/calibration``, the main job's folders as small stand-ins
  made by the main job's steps as commands (:data:`STAND_IN`), and ``data/demo-full``, a copy;
- the real-sound bank the main job fetches, ``~/.cache/reasonaudio/atoms/packages`` (so
  ``fetched:packages`` opens it), made of ten labels with one generated recording each; ``HOME``
  is a folder of the checkout;
- what the docs name as the reader's own: ``DATA`` and ``DIR`` (copies of the demo benchmark),
  ``CALIB`` (of its calibration build), ``~/sounds/my-bank`` (a folder bank), ``bark.wav``,
  vectors and ids (``clips.npy``, ``clip_ids.txt``, ``queries.npy``, ``query_ids.txt``) and run
  files (``runs/mymodel.trec``, ``runs/other.json``).

Made in the test only (README.md's development section says so too):

- **sizes**: every ``bench build`` runs with ``--clips 48 --queries 10`` (the printed sizes
  replaced, or added), so a recipe's build is seconds, not minutes;
- **synopses**: a line with ``[optional parts]`` runs once with every one of them, ``a|b`` as its
  first choice and a repeat mark `` ...`` dropped.

A page's blocks run in order in one fresh copy of that folder (a later block may read what an
earlier one wrote); a generated block, whose recipe starts from the main job, in a copy of its
own. The blocks of :data:`SLOW` run with ``REASONAUDIO_SLOW=1`` only.

A command that is not run is named by a marker, an HTML comment on the line before the block's
opening fence (or before the ``<!-- figures:NAME -->`` line opening the generated part that holds
the block; a generated block also skips what :data:`GENERATED` names)::

    <!-- not run: REASON (FRAGMENT); REASON -->

where REASON is one of :data:`REASONS` and FRAGMENT a piece of text of the commands it skips (a
command is one part of an ``A && B`` line, so ``main job (bench demo)`` skips ``bench demo`` and
runs what follows it); a reason without a fragment skips the whole block. Each fragment must
select a command, so a marker cannot outlive its command. A console block's printed output must
be what its command prints.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREWARMED = Path(__file__).resolve().parents[1] / "prewarmed_bench.py"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_TAGS = ("bash", "sh", "console")
CLIPS, QUERIES = 48, 10
"""the sizes every ``bench build`` of a recipe runs with here"""

REASONS = {
    "install": "installs packages (scripts/install.sh, pip); .ci/run runs the install",
    "suite": "runs the whole test suite, which holds this test; .ci/run runs it",
    "main job": "`bench demo` (minutes at either size; tests/experiments/test_mainjob.py runs it small, and "
                "the stand-in folders here are made by its steps)",
    "full size": "a multi-minute job at the size its result needs: doc_figures.py --check refuses "
                 "any bank but the full install's, and training jobs train on thousands of clips",
    "model hub": "weights from the Hugging Face hub (the tests run offline)",
    "GPU": "needs a CUDA device",
    "server": "starts a server that runs until stopped, or needs one running (the explorer, "
              "Qdrant, Docker)",
    "download": "downloads data (FSD50K, the package registries' files; the tests run offline)",
    "Ray": "starts a Ray cluster (tests/ingest/test_ray_*.py run the engine, one Ray at a time)",
}
"""the closed list of reasons a marker may give"""

SLOW = {
    ("docs/conditions.md", "for c in snr20 snr0; do"):
        "two noisy ingests, evaluations and detections: a minute of YAMNet here",
    ("docs/training.md", "bench build --atoms fetched:packages --seed 3 --clips 6000 --queries 2200 "
                         "--out data/train-s3"): "trains two dual encoders: half a minute here",
    ("docs/interleaved.md", "bench eval --data data/bench -r oracle -r oracle-perceived -r bag-of-sounds"):
        "the by-example recipe further down evaluates these retrievers both ways and reports",
    **{(page, "bash scripts/install.sh && .venv/bin/bench demo --full"):
       "`bench report` of the demo stand-in, which the README's tour runs on the same folder"
       for page in ("docs/evaluation.md", "docs/qdrant.md")},
}
"""blocks, by page and first command (its comment left out), that run only in the slow tier
(``REASONAUDIO_SLOW=1``): the costliest here, or ones whose costly commands a block of the default
tier runs as well"""

MARKER = re.compile(r"^<!-- not run: (?P<items>.*?) -->$")
ITEM = re.compile(r"^(?P<reason>[^()]+?)(?: \((?P<fragment>.+)\))?$")
FENCE = re.compile(r"^(?P<fence>```|~~~)(?P<tag>[\w-]*)\s*$")
FIGURES = re.compile(r"^<!-- (?P<close>/)?(?:detector-)?figures:[\w.-]+ -->$")
COMMAND_WORDS = ("bench", "bash", "python", "pip", "docker", "export", "ray", "huggingface-cli",
                 "cp", "for", ".venv/bin/bench", ".venv/bin/python", ".venv/bin/pip", "$")


# --- finding the blocks and their markers -----------------------------------------------------------

@dataclass(frozen=True)
class Block:
    page: str
    line: int
    """the opening fence's line (1-based)"""
    tag: str
    body: tuple[str, ...]
    marker: str | None
    """the marker's items, or None"""
    generated: bool = False
    """inside a ``<!-- figures:NAME -->`` part (scripts/doc_figures.py writes it)"""

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def slow(self) -> str | None:
        """Why the block runs in the slow tier only, or None."""
        return SLOW.get((self.page, first_command(self)))


def first_command(block: Block) -> str:
    return split_comment(block.body[0])[0] if block.body else ""


def runs_now(block: Block) -> bool:
    return block.slow is None or os.environ.get("REASONAUDIO_SLOW") == "1"


def fenced(text: str, page: str) -> list[Block]:
    """Every fenced block of ``text`` with the marker that applies to it."""
    lines = text.splitlines()
    out: list[Block] = []
    i, region = 0, None
    while i < len(lines):
        figures = FIGURES.match(lines[i])
        if figures:
            region = None if figures.group("close") else i
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == m.group("fence"))
        anchor = region if region is not None and not any(
            FENCE.match(x) for x in lines[region + 1:i]) else i
        before = MARKER.match(lines[anchor - 1]) if anchor > 0 else None
        out.append(Block(page, i + 1, m.group("tag"), tuple(lines[i + 1:end]),
                         before.group("items") if before else None, region is not None))
        i = end + 1
    return out


def all_blocks() -> list[Block]:
    return [b for p in PAGES for b in fenced(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]


def shell_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.tag in SHELL_TAGS]


GENERATED = "install (install.sh); main job (bench demo); full size (doc_figures.py); full size (train_vs_test.py)"
"""the marker every generated block has (scripts/doc_figures.py writes its body, so it carries none):
its recipe's install, main job, training experiment and figures check"""


def marker_items(marker: str | None) -> list[tuple[str, str | None]]:
    """``[(reason, fragment or None)]``; an item that does not parse is ``(item, None)`` (the
    marker test then names it as an unknown reason)."""
    if marker is None:
        return []
    out = []
    for item in marker.split("; "):
        m = ITEM.match(item.strip())
        out.append((m.group("reason"), m.group("fragment")) if m else (item, None))
    return out


# --- commands: parts, skips, substitutions -------------------------------------------------------------

def split_comment(line: str) -> tuple[str, str]:
    """``(command, comment)``: the comment starts at a ``#`` after a blank, outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i:]
    return line.rstrip(), ""


def parts(command: str) -> list[str]:
    """The commands of an ``A && B && C`` line (split outside quotes)."""
    out, quote, start, i = [], None, 0, 0
    while i < len(command):
        c = command[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif command.startswith(" && ", i):
            out.append(command[start:i].strip())
            start = i = i + 4
            continue
        i += 1
    return out + [command[start:].strip()]


def logical_lines(block: Block) -> list[str]:
    """The block's command lines, backslash continuations joined; a console block's ``$`` lines."""
    if block.tag == "console":
        return [line[2:] for line in block.body if line.startswith("$ ")]
    out: list[str] = []
    pending = ""
    for line in block.body:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].rstrip() + " "
            continue
        out.append(pending + line.strip() if pending else line)
        pending = ""
    return [line for line in out if line.strip()]


def sized(part: str) -> str:
    """A ``bench build`` with the test's sizes (replaced, or added)."""
    words = part.split()
    if words[:2] not in (["bench", "build"], [".venv/bin/bench", "build"]):
        return part
    for flag, n in (("--clips", CLIPS), ("--queries", QUERIES)):
        part, found = re.subn(rf"{flag} \S+", f"{flag} {n}", part)
        if not found:
            part += f" {flag} {n}"
    return part


def with_options(part: str) -> str:
    """A synopsis as a command: every ``[optional part]``, its ``a|b`` choices as the first."""
    def one(m: re.Match) -> str:
        words = [w.split("|")[0] for w in m.group(1).split() if w != "..."]
        return " ".join(words)

    return re.sub(r"\[([^\[\]]*)\]", one, part)


def skips_of(block: Block) -> list[tuple[str, str | None]]:
    """What a block's marker skips (a generated block's: :data:`GENERATED` as well)."""
    return marker_items(block.marker) + (marker_items(GENERATED) if block.generated else [])


def runnable(part: str, skips: list[tuple[str, str | None]]) -> tuple[str, str | None]:
    """``(command to run, None)`` or ``(':', reason)`` for a command a marker skips."""
    for reason, fragment in skips:
        if fragment is None or fragment in part:
            return ":", reason
    return sized(with_options(part)), None


def unused_fragments(block: Block) -> list[str]:
    """The marker's fragments that select no command of the block."""
    commands = [p for line in logical_lines(block) for p in parts(split_comment(line)[0])]
    return [f for _, f in marker_items(block.marker) if f is not None and not any(f in c for c in commands)]


CHECK = 'rc=$?; if [ "$rc" != 0 ]; then echo "exit $rc" >&2; exit "$rc"; fi'


def script(block: Block) -> str:
    """The bash script a block runs as: each line as printed (with the test's sizes and synopsis
    options), a skipped command as ``:``, a status check after every line."""
    skips = skips_of(block)
    out = ["set -o pipefail"]
    for line in logical_lines(block):
        command, comment = split_comment(line)
        done = []
        for part in parts(command):
            text, reason = runnable(part, skips)
            done.append(text if reason is None else f": {shlex.quote('not run: ' + reason)}")
        shown = " && ".join(done)
        out += [f"echo {shlex.quote('+ ' + shown)} >&2", shown, CHECK]
    return "\n".join(out) + "\n"


def printed_output(block: Block) -> list[str]:
    """A console block's output lines (those not after ``$``), blanks dropped, spaces squeezed."""
    return [" ".join(line.split()) for line in block.body if not line.startswith("$ ") and line.strip()]


# --- the checkout the recipes run in ---------------------------------------------------------------------

STAND_IN = f"""\
bench build --atoms fetched:packages --out data/demo/bench --clips {CLIPS} --queries {QUERIES}
bench build --calibration-for data/demo/bench --out data/demo/calibration --clips 24 --queries 5
bench ingest --data data/demo/bench --model two-stage:oracle-caption+minilm
bench ingest --data data/demo/bench --model two-stage:yamnet-caption+minilm
bench eval --data data/demo/bench -r oracle -r bag-of-sounds -r random -r two-stage:oracle-caption+minilm -r two-stage:yamnet-caption+minilm
bench detect --data data/demo/bench --calibration data/demo/calibration
bench build --atoms fetched:packages --seed 11 --out data/demo/detector/train-11 --clips {CLIPS} --queries {QUERIES}
bench train-detector --data data/demo/detector/train-11 --out data/demo/detector/model --epochs 1 --hidden 16
bench detect --data data/demo/bench --calibration data/demo/calibration --mode trained --model-path data/demo/detector/model
cp -r data/demo data/demo-full && cp -r data/demo/bench DATA && cp -r data/demo/bench DIR && cp -r data/demo/calibration CALIB
"""
"""the main job's steps (build, calibration build, the offline learned ingests, eval, detect, the
trained detector's training build, training and detection: ``bench demo --full``'s) as commands: the small stand-ins for ``bench demo``'s folders, and copies as the reader's own"""

LABELS = ("dog barking", "siren", "rain", "thunder", "car horn", "church bell", "cat meowing",
          "door creaking", "owl hooting", "applause")
"""the stand-in real-sound bank's labels: those the docs' queries name"""


def folder_bank(root: Path) -> Path:
    """A Scaper-layout bank of :data:`LABELS`, one 1.5 s recording each (a tone and noise)."""
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(0)
    for i, label in enumerate(LABELS):
        folder = root / label.replace(" ", "_")
        folder.mkdir(parents=True)
        t = np.arange(int(1.5 * 16_000)) / 16_000
        wave = 0.3 * np.sin(2 * np.pi * (220 + 90 * i) * t) + 0.05 * rng.standard_normal(t.size)
        sf.write(folder / "a.wav", wave.astype(np.float32), 16_000)
    return root


def shim(path: Path, command: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    path.chmod(0o755)


def readers_files(root: Path) -> None:
    """What the docs name as the reader's own, for the benchmark ``DIR``: a recording, vectors
    and ids, and a TREC and a JSON run over every clip."""
    import json

    import numpy as np

    from reasonaudio.fileio import read_jsonl

    clips = [r["_id"] for r in read_jsonl(root / "DIR" / "corpus.jsonl")]
    queries = [r["_id"] for r in read_jsonl(root / "DIR" / "queries.jsonl")]
    rng = np.random.default_rng(0)
    np.save(root / "clips.npy", rng.standard_normal((len(clips), 16)).astype(np.float32))
    np.save(root / "queries.npy", rng.standard_normal((len(queries), 16)).astype(np.float32))
    (root / "clip_ids.txt").write_text("\n".join(clips) + "\n")
    (root / "query_ids.txt").write_text("\n".join(queries) + "\n")
    scores = {q: dict(zip(clips, rng.random(len(clips)).round(6).tolist())) for q in queries}
    (root / "runs").mkdir()
    (root / "runs" / "other.json").write_text(json.dumps(scores))
    (root / "runs" / "mymodel.trec").write_text("".join(
        f"{q} Q0 {c} {rank} {s} mymodel\n" for q, row in scores.items()
        for rank, (c, s) in enumerate(sorted(row.items(), key=lambda kv: -kv[1]), 1)))
    shutil.copy(root / "home/.cache/reasonaudio/atoms/packages/dog_barking/a.wav", root / "bark.wav")


@dataclass
class Ran:
    returncode: int
    output: str
    seconds: float


@dataclass
class Checkouts:
    """The template checkout, and one copy of it per page, where that page's blocks ran."""

    template: Path
    env: dict[str, str]
    copies: dict[str, Path] = field(default_factory=dict)
    ran: dict[str, Ran] = field(default_factory=dict)

    def env_for(self, folder: Path) -> dict[str, str]:
        return {**self.env, "HOME": str(folder / "home"), "PATH": f"{folder / '.venv/bin'}:/usr/bin:/bin"}

    def bash(self, text: str, folder: Path, timeout: float = 900) -> Ran:
        t0 = time.perf_counter()
        r = subprocess.run(["bash", "-c", text], cwd=folder, env=self.env_for(folder), timeout=timeout,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        return Ran(r.returncode, r.stdout, time.perf_counter() - t0)

    def folder(self, page: str) -> Path:
        if page not in self.copies:
            dest = self.template.parent / re.sub(r"\W", "-", page)
            subprocess.run(["cp", "-a", str(self.template), str(dest)], check=True)  # keeps the stores' sparse files sparse
            self.copies[page] = dest
        return self.copies[page]

    def run(self, block: Block, blocks: list[Block]) -> Ran:
        """Run ``block`` in its page's copy after the page's earlier blocks (once each); a generated
        block, whose recipe starts from the main job, in a copy of its own."""
        if block.generated:
            before = [block]
        else:
            before = [b for b in blocks if b.page == block.page and not b.generated and b.line <= block.line
                      and runs_now(b)]
        for other in before:
            if other.name not in self.ran:
                where = self.folder(other.name if other.generated else other.page)
                self.ran[other.name] = self.bash(script(other), where)
        return self.ran[block.name]


@contextmanager
def prewarmed(root: Path, env: dict[str, str]) -> Iterator[Path]:
    """A prewarmed `bench` server (prewarmed_bench.py) for the recipes' environment: its socket."""
    sock = root / "bench.sock"
    server = subprocess.Popen([sys.executable, str(PREWARMED), "serve", str(sock)],
                              env={**env, "PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not sock.exists():
            assert server.poll() is None, "the prewarmed bench did not start"
            time.sleep(0.2)
        yield sock
    finally:
        server.kill()
        server.wait()


def make_template(template: Path, sock: Path, env: dict[str, str]) -> Checkouts:
    """The checkout the module's docstring lays out: shims, scripts, the banks, the stand-ins and
    the reader's files."""
    shim(template / ".venv/bin/bench", f"{sys.executable} -S {PREWARMED} {sock}")
    shim(template / ".venv/bin/python", sys.executable)
    (template / "scripts").symlink_to(ROOT / "scripts")
    bank = folder_bank(template / "home/.cache/reasonaudio/atoms/packages")
    shutil.copytree(bank, template / "home/sounds/my-bank")
    made = Checkouts(template, env)
    ran = made.bash(script(Block("STAND_IN", 0, "sh", tuple(STAND_IN.splitlines()), None)), template)
    assert ran.returncode == 0, ran.output
    readers_files(template)
    return made


def recipe_env(root: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE", "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(root / "matplotlib"), "LANG": "C.UTF-8", "HOME": str(root / "home")}


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory) -> Iterator[Checkouts]:
    root = tmp_path_factory.mktemp("recipes")
    env = recipe_env(root)
    with prewarmed(root, env) as sock:
        yield make_template(root / "template", sock, env)


# --- the tests ----------------------------------------------------------------------------------------------

RUN = [b for b in shell_blocks() if any(runnable(p, skips_of(b))[1] is None
                                        for line in logical_lines(b) for p in parts(split_comment(line)[0]))]


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.name)
def test_each_shell_block_runs_as_printed(block, checkouts):
    if not runs_now(block):
        pytest.skip(f"slow ({block.slow}): set REASONAUDIO_SLOW=1")
    ran = checkouts.run(block, RUN)
    assert ran.returncode == 0, f"{block.name} exited {ran.returncode}:\n{ran.output[-4000:]}"
    if block.tag == "console":
        said = " ".join(ran.output.split())
        missing = [line for line in printed_output(block) if line not in said]
        assert not missing, f"{block.name}: printed output the command does not print: {missing}"


def test_every_marker_names_a_known_reason_and_a_command_it_skips():
    bad = []
    for b in shell_blocks():
        for reason, _ in marker_items(b.marker):
            if reason not in REASONS:
                bad.append(f"{b.name}: unknown reason {reason!r}")
        bad += [f"{b.name}: ({f}) selects no command" for f in unused_fragments(b)]
    assert bad == []


def test_every_slow_entry_names_a_block():
    assert set(SLOW) <= {(b.page, first_command(b)) for b in RUN}


def test_a_block_of_commands_is_tagged_as_shell():
    """(A python block is Python, run as such by test_doc_python.py: ``bench = ...`` is code.)"""
    untagged = [b.name for b in all_blocks() if b.tag not in SHELL_TAGS + ("python", "py") and any(
        line.split()[0] in COMMAND_WORDS for line in b.body if line.split())]
    assert untagged == []


OLD_BY_EXAMPLE = """\
bench demo --full && cp -r data/demo-full data/interleaved   # a copy: interleaving changes the manifest
bench interleave --data data/interleaved/bench --share 0.3
R="-r 'oracle' -r 'oracle-perceived' -r 'bag-of-sounds'"
bench eval --data data/interleaved/bench $R               # named, on the copy
"""
"""docs/interleaved.md's recipe as scripts/doc_figures.py once printed it (shortened): quotes
inside a variable stay part of each word, so `bench eval` read the retriever "'oracle'"."""


def test_a_recipe_that_quotes_inside_a_variable_fails(checkouts):
    block = Block("old-interleaved.md", 1, "sh", tuple(OLD_BY_EXAMPLE.splitlines()), "main job (bench demo)")
    ran = checkouts.bash(script(block), checkouts.folder(block.page))
    assert ran.returncode == 2, ran.output
    assert "unknown retriever \"'oracle'\"" in ran.output


def test_markers_apply_to_the_next_fence_or_the_generated_part_holding_it():
    text = ("<!-- not run: server -->\n```sh\nbench serve\n```\n\n"
            "<!-- not run: full size (doc_figures.py) -->\n<!-- figures:x -->\nMeasured on: 1.\n\n"
            "```sh\nbench report\npython scripts/doc_figures.py --check\n```\n<!-- /figures:x -->\n\n"
            "<!-- not run: server -->\n\n```sh\nbench info\n```\n```\nbench parse x\n```\n")
    found = fenced(text, "p.md")
    assert [(b.line, b.tag, b.marker) for b in found] == [
        (2, "sh", "server"), (10, "sh", "full size (doc_figures.py)"), (18, "sh", None), (21, "", None)]
    assert marker_items("server (bench serve); model hub") == [("server", "bench serve"), ("model hub", None)]
    assert unused_fragments(Block("p.md", 1, "sh", ("bench info",), "server (bench serve)")) == ["bench serve"]


def test_a_marker_skips_its_commands_and_the_test_sizes_and_options_the_rest():
    block = Block("p.md", 1, "sh", ("bench demo --full && cp -r data/demo-full data/x   # a copy",
                                    "bench build --atoms fetched:packages --clips 6000 --out TRAIN \\",
                                    "    --seed 3",
                                    "bench report --data DATA [--out plots/] [--retriever NAME ...] [--projection pca|tsne]"),
                  "main job (bench demo)")
    lines = [line for line in script(block).splitlines() if not line.startswith(("echo", "rc=", "set"))]
    assert lines == [": 'not run: main job' && cp -r data/demo-full data/x",
                     f"bench build --atoms fetched:packages --clips {CLIPS} --out TRAIN --seed 3 --queries {QUERIES}",
                     "bench report --data DATA --out plots/ --retriever NAME --projection pca"]
    generated = Block("p.md", 1, "sh", ("bench report --data data/demo-full/bench",
                                        "python scripts/doc_figures.py --demo data/demo-full --check"), None, True)
    assert script(generated).splitlines()[5] == ": 'not run: full size'"


@pytest.mark.parametrize("body", [("false && true", "true"), ("for x in 1; do", "  false", "done", "true"),
                                  ("cp no-such-file here",)])
def test_a_command_that_fails_fails_its_block(body, tmp_path):
    r = subprocess.run(["bash", "-c", script(Block("p.md", 1, "sh", body, None))], cwd=tmp_path,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode != 0 and "exit " in r.stdout
