"""Planting interleaved queries (issue 28): a share of the queries with one sound given by example.

``bench build --interleaved SHARE`` and ``bench interleave --data DIR --share SHARE`` write
``interleaved.jsonl``, ``examples.jsonl`` and ``examples/ex-NNNN.wav``
(:mod:`reasonaudio.dataset.interleaved` describes the files). Draws come from their own stream,
``reasonaudio-interleaved-<seed>``, so ``queries.jsonl``, qrels, choices and formulations do not
move, and a build without the flag is byte-identical to one made before interleaved queries.

For each task in turn, ``round(SHARE x queries of the task)`` queries are drawn (``rng.sample``
over the task's queries in file order); for each, one of the labels its text names is drawn
(``rng.choice``, labels in text order) and every mention of it becomes ``<audio:ex-NNNN>``. The
variant is kept only if the parser, given the true label for the placeholder, reads exactly the
query's logic (so the oracle with true labels is the ceiling, 1.000); otherwise the next label is
tried, and a query none of whose labels passes is left named (counted as ``skipped``).

The example's recording: another atom of the label than the one the query's planted positive
clip uses (``rng.choice`` among them) where the bank has one, cut from its start; else the same
atom, cut from its middle (``same_recording: true``: an easier, optimistic case). It is rendered
like an event of a clip (:class:`~reasonaudio.render.clips.Renderer`: resampled to the clips'
rate, loudness-normalised to the build's reference, looped if shorter, the build's fades) and lasts
:data:`EXAMPLE_SECONDS` or the recording, whichever is shorter (at least
:data:`MIN_EXAMPLE_SECONDS`, looped).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import soundfile as sf

from reasonaudio.querylang.canonical import same_logic
from reasonaudio.querylang.examples import ExampleLabel, placeholder, resolve_placeholders
from reasonaudio.logic import Node, from_json
from reasonaudio.querylang.parser import parse, parse_detailed
from reasonaudio.dataset.benchmark import EXAMPLES_DIR, EXAMPLES_FILE, INTERLEAVED_FILE, write_manifest
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.interleaved import MAX_EXAMPLE_SECONDS, Example, InterleavedRow
from reasonaudio.errors import DataError, QueryParseError
from reasonaudio.fileio import sha256_file, write_jsonl
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.render.clips import Renderer, RenderParams, write_audio
from reasonaudio.store.lock import writes_benchmark
from reasonaudio import seeds
from reasonaudio.seeds import named_random

EXAMPLE_SECONDS = 4.0
MIN_EXAMPLE_SECONDS = 1.0


def stream_name(seed: int) -> str:
    """The string that seeds the interleaved queries' own random stream."""
    return seeds.stream_name("interleaved", seed)


def check_share(share: float) -> float:
    if not (0.0 < share <= 1.0):
        raise DataError(f"--interleaved / --share must be in (0, 1], got {share}")
    return float(share)


def _mentions(text: str, labels: Sequence[str]) -> list[tuple[str, int, int]]:
    """(label, start, end) of every sound phrase of ``text`` read as one label, in text order."""
    found = parse_detailed(text, labels)
    return [(r.labels[0], r.start, r.end) for r in sorted(found.resolutions, key=lambda r: r.start)
            if len(r.labels) == 1]


def _by_example(text: str, logic: Node, labels: Sequence[str], label: str, name: str) -> str | None:
    """``text`` with every mention of ``label`` as ``<audio:name>``, or None when the parser,
    given the true label for it, would not read ``logic`` exactly."""
    spans = [(a, b) for lab, a, b in _mentions(text, labels) if lab == label]
    if not spans:
        return None
    out = text
    for a, b in reversed(spans):
        out = out[:a] + placeholder(name) + out[b:]
    try:
        back, _ = resolve_placeholders(out, {name: ExampleLabel(label, "true")})
        ok = same_logic(parse(back, labels), logic)
    except QueryParseError:
        return None
    return out if ok else None


def plan(queries: Sequence[Mapping[str, Any]], choices: Mapping[str, str], clips: Mapping[str, Clip],
         bank: AtomBank, share: float, seed: int) -> tuple[list[InterleavedRow], list[dict[str, Any]], int]:
    """The variants, the examples to render (rows without sha256/path yet) and the skipped count.

    ``choices``: query id -> its planted positive clip id."""
    check_share(share)
    rng = named_random("interleaved", seed)
    labels = bank.labels
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for q in queries:
        by_task.setdefault(str(q["task"]), []).append(q)
    chosen: list[Mapping[str, Any]] = []
    for task, qs in by_task.items():
        n = round(share * len(qs))
        picked = sorted(rng.sample(range(len(qs)), n))
        chosen.extend(qs[i] for i in picked)
    order = {str(q["_id"]): i for i, q in enumerate(queries)}
    chosen.sort(key=lambda q: order[str(q["_id"])])
    rows: list[InterleavedRow] = []
    todo: list[dict[str, Any]] = []
    skipped = 0
    for q in chosen:
        qid, text = str(q["_id"]), str(q["text"])
        logic = from_json(q["logic"]) if isinstance(q["logic"], dict) else q["logic"]
        named = list(dict.fromkeys(lab for lab, _, _ in _mentions(text, labels)))
        name = f"ex-{len(todo):04d}"
        candidates = list(named)
        made = None
        while candidates and made is None:
            label = candidates.pop(rng.randrange(len(candidates)))
            text_ex = _by_example(text, logic, labels, label, name)
            if text_ex is not None:
                made = (label, text_ex)
        if made is None:
            skipped += 1
            continue
        label, text_ex = made
        positive = clips.get(choices.get(qid, ""))
        used = positive.event(label).atom_id if positive is not None and positive.event(label) else None
        others = [a.atom_id for a in bank.by_label[label] if a.atom_id != used]
        if others:
            atom_id, same, offset = rng.choice(others), False, 0.0
        else:
            atom = bank.by_label[label][0]
            atom_id, same, offset = atom.atom_id, True, round(bank.by_id[atom.atom_id].duration / 2, 3)
        rows.append(InterleavedRow(qid, text_ex, (label,), (name,)))
        todo.append({"example_id": name, "label": label, "atom_id": atom_id, "offset": offset,
                     "same_recording": same})
    return rows, todo, skipped


def render_example(renderer: Renderer, atom_id: str, offset: float, sr: int) -> np.ndarray:
    """The excerpt of ``atom_id`` from ``offset`` seconds (wrapping round), levelled like an atom."""
    atom = renderer.prepared(atom_id, sr)
    start = min(int(round(offset * sr)), max(len(atom) - 1, 0))
    rolled = np.concatenate([atom[start:], atom[:start]])
    seconds = min(EXAMPLE_SECONDS, max(len(atom) / sr, MIN_EXAMPLE_SECONDS))
    return renderer.excerpt(rolled, int(round(seconds * sr)), sr).astype(np.float32)


def write_interleaved(root: Path, queries: Sequence[Mapping[str, Any]], choices: Mapping[str, str],
                      clips: Sequence[Clip], bank: AtomBank, share: float, seed: int,
                      render: RenderParams) -> dict[str, Any]:
    """Write the three parts into ``root`` (a build's folder); returns the manifest record."""
    rows, todo, skipped = plan(queries, choices, {c.id: c for c in clips}, bank, share, seed)
    sr = clips[0].sample_rate if clips else 48_000
    renderer = Renderer(bank, render)
    (root / EXAMPLES_DIR).mkdir(exist_ok=True)
    examples: list[Example] = []
    for item in todo:
        rel = f"{EXAMPLES_DIR}/{item['example_id']}.wav"
        audio = render_example(renderer, item["atom_id"], item["offset"], sr)
        write_audio(root / rel, audio, sr)
        examples.append(Example(**item, path=rel, sample_rate=sr,
                                duration=round(len(audio) / sr, 6), sha256=sha256_file(root / rel)))
    write_jsonl(root / EXAMPLES_FILE, (e.to_json() for e in examples))
    write_jsonl(root / INTERLEAVED_FILE, (r.to_json() for r in rows))
    by_task: dict[str, int] = {}
    task_of = {str(q["_id"]): str(q["task"]) for q in queries}
    for r in rows:
        by_task[task_of[r.query_id]] = by_task.get(task_of[r.query_id], 0) + 1
    return {"stream": stream_name(seed), "share": share, "queries": len(rows),
            "queries_by_task": by_task, "skipped": skipped,
            "same_recording": sum(e.same_recording for e in examples),
            "example_seconds": EXAMPLE_SECONDS}


@writes_benchmark
def add_interleaved(root: Path | str, share: float, overwrite: bool = False) -> dict[str, Any]:
    """Add interleaved queries to an existing build (the files ``bench build --interleaved``
    writes: they depend on the queries, choices, clips, bank and seed only); the manifest is
    rewritten last. Refuses a build that has them unless ``overwrite``."""
    from reasonaudio.atoms.registry import open_bank

    check_share(share)
    bench = load_benchmark(root)
    if "interleaved" in bench.manifest and not overwrite:
        raise DataError(f"{bench.root}: already has interleaved queries (share "
                        f"{bench.manifest['interleaved'].get('share')}); pass --force to replace them")
    spec = (bench.manifest.get("parameters") or {}).get("atoms")
    if not spec:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank")
    bank = open_bank(str(spec))
    for name in (INTERLEAVED_FILE, EXAMPLES_FILE):
        (bench.root / name).unlink(missing_ok=True)
    shutil.rmtree(bench.root / EXAMPLES_DIR, ignore_errors=True)
    record = write_interleaved(bench.root, [q.to_json() for q in bench.queries],
                               {c.query_id: c.positive for c in bench.choices}, bench.clips, bank,
                               share, bench.seed, RenderParams.from_json(bench.manifest.get("render")))
    kept = {k: v for k, v in bench.manifest.items()
            if k not in ("format", "format_version", "files", "interleaved")}
    return write_manifest(bench.root, {**kept, "interleaved": record})


SILENT_DBFS = -60
"""An example whose mono peak stays below this level is silence to the tagger (a -80 dBFS
tone, anti-phase stereo averaged to mono): refused, never read as the first label of a tie."""
SILENT_PEAK = 10 ** (SILENT_DBFS / 20)


def read_example_audio(path: Path | str, where: str = "--example ") -> tuple[np.ndarray, int, list[str]]:
    """A user's (or a build's) example recording as mono float32 at its own rate, and notes.

    Refused in one line (DataError naming the file): not a file, empty, not audio soundfile
    reads, no samples, longer than :data:`~reasonaudio.dataset.interleaved.MAX_EXAMPLE_SECONDS`,
    silent. Another sample rate than the clips' is accepted: every model resamples its input to
    its own rate, as it does for clips; the note says so. Several channels are averaged (noted);
    silent is a mono peak below :data:`SILENT_DBFS`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{where}{path}: no such file")
    if path.stat().st_size == 0:
        raise DataError(f"{where}{path}: the file is empty")
    try:
        info = sf.info(str(path))
    except Exception:  # noqa: BLE001 - soundfile raises several types for a non-audio file
        raise DataError(f"{where}{path}: not an audio file soundfile can read (WAV, FLAC, OGG)") from None
    if info.frames <= 0 or info.samplerate <= 0:
        raise DataError(f"{where}{path}: no audio samples in the file")
    seconds = info.frames / info.samplerate
    if seconds > MAX_EXAMPLE_SECONDS:
        raise DataError(f"{where}{path}: {seconds:,.0f} s long; an example may last at most "
                        f"{MAX_EXAMPLE_SECONDS:,.0f} s (cut the part with the sound)")
    try:
        x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception:  # noqa: BLE001
        raise DataError(f"{where}{path}: the audio data cannot be decoded") from None
    notes = []
    if x.shape[1] > 1:
        notes.append(f"{path.name}: {x.shape[1]} channels averaged to mono")
    wave = x.mean(axis=1).astype(np.float32)
    if not np.all(np.isfinite(wave)):
        raise DataError(f"{where}{path}: the recording has samples that are not finite")
    peak = float(np.max(np.abs(wave)))
    if peak < SILENT_PEAK:
        level = f"{20 * np.log10(peak):.0f} dBFS" if peak > 0 else "digital silence"
        mono = " once its channels are averaged" if x.shape[1] > 1 else ""
        raise DataError(f"{where}{path}: the recording is silent{mono} (peak {level}; an "
                        f"example must reach {SILENT_DBFS} dBFS)")
    return wave, int(sr), notes
