"""A benchmark with saved results and store collections for the explorer's tests."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

EXPLORER_BUILD = dict(atoms="synthetic", seed=0, n_clips=80, n_queries=25)
RETRIEVERS = ("oracle", "bag-of-sounds", "random", "two-stage:oracle-caption+bm25")
TWO_STAGE_NAME = "two-stage:oracle-caption+bm25"
"""a two-stage retriever evaluated for real (BM25 needs no weights): its collection holds captions"""
DETECTED_NAME = "detected:yamnet"
"""a saved result under the detected collection's name (bag-of-sounds' ranking): its hit rows
show the events of the detected collection made below"""
EXTRA_NAME = "random@paraphrase"
"""a saved result that records a formulation, as the formulations work will write them"""
CAPTION_MODEL = "two-stage:oracle-caption+minilm"
TINY_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005fe02fea7d6a5"
    "8a0000000049454e44ae426082")


def build_explorer_bench(root: Path) -> Path:
    """Build, load the payload, evaluate four retrievers, and add what other commands would
    leave: a result with a formulation, a two-stage collection's captions, a detected collection
    with a saved result under its name, and a plot."""
    from typer.testing import CliRunner

    from reasonaudio.evaluation.results import load_result, run_path, save_result
    from reasonaudio.cli import app
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.detect.collection import detected_collection
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.models.captioners import oracle_caption
    from reasonaudio.store.base import STATE_COMPLETE, CollectionMeta, PointIn, collection_name
    from reasonaudio.store.open import open_store
    from reasonaudio.store.payload import clip_payload

    build_benchmark(root, BuildParams(**EXPLORER_BUILD))
    runner = CliRunner()
    for args in (["ingest", "--data", str(root), "--model", "none"],
                 ["eval", "--data", str(root), *[a for r in RETRIEVERS for a in ("-r", r)]]):
        done = runner.invoke(app, args)  # the commands, as a user leaves the directory
        assert done.exit_code == 0, done.output
    bench = load_benchmark(root)
    with open_store(root, write=True) as store:
        clips = bench.clips
        caption_meta = CollectionMeta(model=CAPTION_MODEL, revision="test", dimension=1,
                                      distance="cosine", pooling="test", points=len(clips),
                                      state=STATE_COMPLETE)
        name = collection_name(CAPTION_MODEL)
        store.create(name, caption_meta)
        store.upsert(name, [PointIn(c.id, (1.0,), {**clip_payload(c), "caption": oracle_caption(c)})
                            for c in clips])
        detected = detected_collection("yamnet", "zero-shot")
        store.create(detected, replace(caption_meta, model="detected:yamnet",
                                                extra={"kind": "detected", "mode": "zero-shot"}))
        points = []
        for c in clips:  # "detects" every event but the last, a little late
            events = [replace(e, onset=round(e.onset + 0.1, 3)) for e in c.events[:-1]]
            det = replace(c, events=tuple(e for e in events if e.offset > e.onset))
            points.append(PointIn(c.id, (1.0,), {**clip_payload(det),
                                                 "confidence": {e.label: 0.8 for e in det.events}}))
        store.upsert(detected, points)
    base = load_result(bench, "random")
    assert base is not None
    save_result(bench, replace(base, name=EXTRA_NAME, describe={**base.describe, "formulation": "paraphrase"}))
    shutil.copyfile(run_path(bench, "random"), run_path(bench, EXTRA_NAME))
    bag = load_result(bench, "bag-of-sounds")
    assert bag is not None
    save_result(bench, replace(bag, name=DETECTED_NAME, retriever=DETECTED_NAME,  # its key names it too
                               describe={**bag.describe, "retriever": DETECTED_NAME}))
    shutil.copyfile(run_path(bench, "bag-of-sounds"), run_path(bench, DETECTED_NAME))
    plots = root / "results" / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    (plots / "metrics_by_task.png").write_bytes(TINY_PNG)
    return root


def table_rows(html: str, table_id: str | None = None) -> list[list[tuple[dict[str, str], str]]]:
    """The body rows of the first table in ``html`` (or the one with ``id=table_id``): per cell
    its attributes and its text (tags removed, whitespace collapsed)."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[list[tuple[dict[str, str], str]]] = []
            self.depth = 0  # tables entered; only the first (or wanted) table's rows are read
            self.active = False
            self.done = False
            self.in_body = False
            self.cell: tuple[dict[str, str], list[str]] | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = {k: v or "" for k, v in attrs}
            wanted = table_id is None or a.get("id") == table_id
            if tag == "table" and not self.done and not self.active and wanted:
                self.active = True
            elif self.active and tag == "tbody":
                self.in_body = True
            elif self.active and self.in_body and tag == "tr":
                self.rows.append([])
            elif self.active and self.in_body and tag in ("td", "th"):
                self.cell = (a, [])

        def handle_endtag(self, tag: str) -> None:
            if self.active and tag in ("td", "th") and self.cell is not None:
                self.rows[-1].append((self.cell[0], " ".join("".join(self.cell[1]).split())))
                self.cell = None
            elif self.active and tag == "table":
                self.active, self.done = False, True

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell[1].append(data)

    parser = Rows()
    parser.feed(html)
    return parser.rows
