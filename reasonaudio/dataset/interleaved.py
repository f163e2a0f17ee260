"""A build's interleaved queries (issue 28): the files and their records.

``bench build --interleaved SHARE`` (or ``bench interleave`` on an existing build) writes, beside
``queries.jsonl`` and untouched by it:

- ``interleaved.jsonl``: one row per interleaved variant of a query: ``query_id``, ``text`` (the
  query's text with one sound replaced by ``<audio:ex-NNNN>``), ``slots`` (the labels given by
  example, in text order), ``examples`` (their example ids, the same order);
- ``examples.jsonl``: one row per example: ``example_id``, ``label`` (the true label, for the
  judge and the oracle's ceiling), ``atom_id`` (the recording it was cut from), ``offset``
  (seconds into that recording where the excerpt starts), ``same_recording`` (True when the bank
  has no other recording of the label, so the excerpt comes from the recording the clips use:
  an easier, optimistic case), ``path`` (``examples/ex-NNNN.wav``), ``sample_rate``,
  ``duration``, ``sha256``;
- ``examples/ex-NNNN.wav``: the example, rendered like an atom.

All three are in the manifest's ``files`` with their sha256 (the wav files each by path). The
interleaved variant keeps the query's id, task, logic, qrels and choices: only the way one sound
is given changes, so named and by-example scores pair query by query. The view that asks them
is ``BenchmarkView.with_view(INTERLEAVED)`` (:mod:`reasonaudio.dataset.view`); the functions here
read the files, the same in every view.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from reasonaudio.dataset.benchmark import (EXAMPLES_DIR, EXAMPLES_FILE, INTERLEAVED_FILE,
                                           MANIFEST, BenchmarkFiles)
from reasonaudio.errors import DataError
from reasonaudio.fileio import read_jsonl, sha256_file

INTERLEAVED = "interleaved"
"""the variant's name: results of it are ``NAME@interleaved`` (the formulations' ``@`` grammar)"""
MAX_EXAMPLE_SECONDS = 600.0
"""the longest example anyone may give (``bench search --example``): longer is refused"""


@dataclass(frozen=True)
class Example:
    example_id: str
    label: str
    atom_id: str
    offset: float
    same_recording: bool
    path: str
    sample_rate: int
    duration: float
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: Any, where: str) -> "Example":
        try:
            ex = cls(str(obj["example_id"]), str(obj["label"]), str(obj["atom_id"]),
                     float(obj["offset"]), bool(obj["same_recording"]), str(obj["path"]),
                     int(obj["sample_rate"]), float(obj["duration"]), str(obj["sha256"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where}: example record missing or malformed field {exc}") from None
        if Path(ex.path).is_absolute() or ".." in Path(ex.path).parts \
                or Path(ex.path).parts[:1] != (EXAMPLES_DIR,):
            raise DataError(f"{where}: field 'path' must lie under {EXAMPLES_DIR}/ of the "
                            f"benchmark, got {ex.path!r:.80}")
        return ex


@dataclass(frozen=True)
class InterleavedRow:
    query_id: str
    text: str
    slots: tuple[str, ...]
    examples: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "text": self.text, "slots": list(self.slots),
                "examples": list(self.examples)}


def has_interleaved(files: BenchmarkFiles) -> bool:
    return INTERLEAVED_FILE in files.manifest["files"]


def _listed(files: BenchmarkFiles, name: str) -> Path:
    path = files.root / name
    if name not in files.manifest["files"]:
        raise DataError(f"{path}: this benchmark has no interleaved queries in its {MANIFEST} "
                        "(add them with `bench interleave --data DIR --share 0.3`)")
    if not path.is_file():
        raise DataError(f"{path}: file missing (the manifest lists it)")
    return path


def examples(files: BenchmarkFiles) -> dict[str, Example]:
    """example id -> record (``examples.jsonl``); each wav is checked against its sha256 the
    first time it is read (:func:`example_path`)."""
    def make() -> dict[str, Example]:
        path = _listed(files, EXAMPLES_FILE)
        out: dict[str, Example] = {}
        for i, o in enumerate(read_jsonl(path)):
            ex = Example.from_json(o, f"{path}:{i + 1}")
            if ex.example_id in out:
                raise DataError(f"{path}:{i + 1}: duplicate example id {ex.example_id!r}")
            out[ex.example_id] = ex
        return out

    return files.derived("interleaved:examples", make)


def example_path(files: BenchmarkFiles, ex: Example) -> Path:
    """The example's audio file inside the benchmark, checked against its sha256 (unless the
    benchmark was loaded with ``verify=False``)."""
    path = files.root / ex.path
    if not path.resolve().is_relative_to(files.root.resolve()):
        raise DataError(f"{path}: the example's file lies outside the benchmark (a link out of "
                        f"{EXAMPLES_DIR}/); refused")
    if not path.is_file():
        raise DataError(f"{path}: example audio missing ({EXAMPLES_FILE} lists it)")
    if files.verified and files.derived(f"interleaved:sha:{ex.example_id}",
                                        lambda: sha256_file(path)) != ex.sha256:
        raise DataError(f"{path}: sha256 differs from {EXAMPLES_FILE}; the file was changed "
                        "after the build (pass --no-verify to load it anyway)")
    return path


def interleaved_rows(files: BenchmarkFiles) -> dict[str, InterleavedRow]:
    """query id -> its interleaved variant (``interleaved.jsonl``), checked against the queries
    and the examples."""
    def make() -> dict[str, InterleavedRow]:
        path = _listed(files, INTERLEAVED_FILE)
        known = examples(files)
        out: dict[str, InterleavedRow] = {}
        for i, o in enumerate(read_jsonl(path)):
            where = f"{path}:{i + 1}"
            try:
                row = InterleavedRow(str(o["query_id"]), str(o["text"]),
                                     tuple(str(s) for s in o["slots"]),
                                     tuple(str(e) for e in o["examples"]))
            except (KeyError, TypeError) as exc:
                raise DataError(f"{where}: needs fields query_id, text, slots, examples ({exc})") from None
            if row.query_id not in files.query_by_id:
                raise DataError(f"{where}: unknown query id {row.query_id!r}")
            if len(row.slots) != len(row.examples) or not row.examples:
                raise DataError(f"{where}: slots and examples must be as many, and at least one")
            for ex_id, label in zip(row.examples, row.slots):
                if ex_id not in known:
                    raise DataError(f"{where}: unknown example id {ex_id!r} (not in {EXAMPLES_FILE})")
                if known[ex_id].label != label:
                    raise DataError(f"{where}: example {ex_id} is {known[ex_id].label!r}, "
                                    f"the slot says {label!r}")
            out[row.query_id] = row
        return out

    return files.derived("interleaved:rows", make)


def variant_id(query_id: str) -> str:
    """The key a query's interleaved variant has where a key must differ from the named query's
    (precomputed query vectors: ``bench ingest --query-ids`` may list ``q-0042@interleaved``)."""
    return f"{query_id}@{INTERLEAVED}"


def variant_ids(files: BenchmarkFiles) -> list[str]:
    """Every interleaved variant's key, in query order (none for a build without them)."""
    return list(variant_texts(files))


def variant_texts(files: BenchmarkFiles) -> dict[str, str]:
    """Variant key -> its interleaved text, in query order (empty for a build without them)."""
    if not has_interleaved(files):
        return {}
    rows = interleaved_rows(files)
    return {variant_id(q.id): rows[q.id].text for q in files.queries if q.id in rows}
