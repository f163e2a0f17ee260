"""Reading run files produced elsewhere (TREC or JSON) against one benchmark, strictly.

A researcher's own model answers the benchmark's queries in their environment and hands us a
run file; this module turns it into a :class:`~reasonaudio.evaluation.runs.Run` that
:func:`reasonaudio.evaluation.evaluate.evaluate_run` scores like any built-in retriever's run.

Formats (chosen by content: a file whose first non-blank character is ``{`` is JSON):

- TREC: ``qid Q0 docid rank score tag`` per line, whitespace separated. As in ``trec_eval``
  the rank column is read (it must be an integer) but ignored: each query's clips are ranked by
  score. A tag holding spaces (ranx writes its run name verbatim) is kept whole.
- JSON: ``{"query id": {"clip id": score, ...}, ...}`` (ranx's and pytrec_eval's run shape).
- MTEB: the ``<Task>_predictions.json`` that ``mteb.evaluate(..., prediction_folder=...)``
  saves, ``{"mteb_model_meta": ..., SUBSET: {SPLIT: <the JSON shape>}}``, recognised by its
  ``mteb_model_meta`` key (:mod:`reasonaudio.evaluation.mteb_results`); recorded as format ``mteb``.
  A folder holding ``ReasonAudioT2ARetrieval_predictions.json`` (MTEB's ``prediction_folder``)
  stands for that file.

Ranking: score descending, ties broken by clip id **ascending**, the testbed's rule everywhere
(``trec_eval`` breaks ties by doc id descending, so on tied runs its numbers can differ from
ours); how many queries had ties is reported. Scores may be ``inf``/``-inf``; NaN is refused.

Refused with one line naming the file (and line): no rows, an unknown query or clip id, a clip
listed twice for one query, a malformed line. Queries of the benchmark the run does not answer
are allowed: they score 0 (the caller says so once).
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass, field
from pathlib import Path

from reasonaudio.evaluation.mteb_results import PREDICTIONS as MTEB_PREDICTIONS
from reasonaudio.evaluation.mteb_results import is_mteb_predictions, prediction_rows
from reasonaudio.evaluation.runs import Run, parse_score, trec_rows
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import DataError
from reasonaudio.fileio import read_text, sha256_file
from reasonaudio.retrievers.base import rank

TIE_RULE = "score descending, then clip id ascending"
FORMATS = ("trec", "json")


@dataclass
class RunFile:
    """A run file read and checked against a benchmark."""

    path: Path
    format: str
    sha256: str
    run: Run
    """every row of the file, each query ranked by :data:`TIE_RULE`"""
    scores: dict[str, dict[str, float]]
    """query id -> clip id -> score, as in the file (multiple choice reads these)"""
    rows: int
    tied_queries: list[str] = field(default_factory=list)
    """queries whose run holds at least two clips with the same score"""
    missing_queries: list[str] = field(default_factory=list)
    """benchmark queries the file does not answer (they score 0), benchmark order"""
    origin: dict[str, object] = field(default_factory=dict)
    """what an MTEB predictions file says about its model (model name, revision, subset, split)"""

    def describe(self) -> dict[str, object]:
        """What a results file records about where the run came from."""
        return {"kind": "external run", "path": str(self.path), "format": self.format,
                "sha256": self.sha256, "rows": self.rows, "queries": len(self.scores),
                "missing_queries": len(self.missing_queries), "tie_rule": TIE_RULE,
                "tied_queries": len(self.tied_queries), **self.origin}


def sniff_format(path: Path) -> str:
    """``json`` when the first non-blank character (after a BOM) is ``{``, else ``trec``."""
    with open(path, "rb") as fh:
        first = True
        while chunk := fh.read(4096):
            if first and chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[len(codecs.BOM_UTF8):]  # read_text skips it too
            first = False
            stripped = chunk.lstrip()
            if stripped:
                return "json" if stripped[:1] == b"{" else "trec"
    return "trec"


def _read_trec_rows(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in trec_rows(path):
        per = out.setdefault(row.qid, {})
        if row.clip_id in per:
            raise DataError(f"{row.where}: query {row.qid!r} lists clip {row.clip_id!r} twice")
        per[row.clip_id] = row.score
    return out


def _read_json_rows(path: Path, origin: dict[str, object] | None = None) -> dict[str, dict[str, float]]:
    dupes: list[str] = []

    def keep_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
        # json.loads would keep the last of duplicate keys silently: a duplicate row is an error
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen and not dupes:
                dupes.append(key)
            seen.add(key)
        return dict(pairs)

    try:
        obj = json.loads(read_text(path), object_pairs_hook=keep_pairs)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    if dupes:
        raise DataError(f"{path}: key {dupes[0]!r} appears twice in one object (a duplicate row)")
    if not isinstance(obj, dict):
        raise DataError(f"{path}: a JSON run must be an object {{query id: {{clip id: score}}}}")
    if is_mteb_predictions(obj):  # MTEB's <Task>_predictions.json: the rankings one level down
        obj, meta = prediction_rows(obj, path)
        if origin is not None:
            origin.update(meta)
    out: dict[str, dict[str, float]] = {}
    for qid, per in obj.items():
        if not isinstance(per, dict):
            raise DataError(f"{path}: query {qid!r}: expected an object {{clip id: score}}, "
                            f"got {type(per).__name__}")
        row: dict[str, float] = {}
        for cid, score in per.items():
            where = f"{path}: query {qid!r}, clip {cid!r}"
            if isinstance(score, bool) or not isinstance(score, (int, float, str)):
                raise DataError(f"{where}: score must be a number, got {score!r}")
            row[cid] = parse_score(str(score), where)
        out[str(qid)] = row
    return out


def read_run_file(path: Path | str, bench: BenchmarkView, name: str, fmt: str | None = None) -> RunFile:
    """Read ``path`` (TREC or JSON, see the module docstring) and check it against ``bench``."""
    path = Path(path)
    if path.is_dir() and (path / MTEB_PREDICTIONS).is_file():  # an MTEB prediction_folder
        path = path / MTEB_PREDICTIONS
    if not path.is_file():
        raise DataError(f"{path}: run file not found")
    fmt = fmt or sniff_format(path)
    if fmt not in FORMATS:
        raise DataError(f"{path}: unknown run format {fmt!r}; known: {', '.join(FORMATS)}")
    origin: dict[str, object] = {}
    try:
        rows = _read_trec_rows(path) if fmt == "trec" else _read_json_rows(path, origin)
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    n_rows = sum(len(v) for v in rows.values())
    if n_rows == 0:
        raise DataError(f"{path}: the run has 0 rows")
    queries = bench.query_by_id
    unknown_q = sorted(q for q in rows if q not in queries)
    if unknown_q:
        raise DataError(f"{path}: {len(unknown_q)} unknown query id(s), e.g. {unknown_q[0]!r} "
                        f"(this benchmark's ids look like {bench.queries[0].id!r})")
    clips = bench.clip_by_id
    for qid, per in rows.items():
        unknown_c = sorted(c for c in per if c not in clips)
        if unknown_c:
            raise DataError(f"{path}: query {qid!r} names unknown clip id {unknown_c[0]!r}"
                            + (f" and {len(unknown_c) - 1} more" if len(unknown_c) > 1 else ""))
    run = Run(name)
    tied: list[str] = []
    for q in bench.queries:  # benchmark order, so the run is the same whatever the file order
        per = rows.get(q.id)
        if per is None:
            continue
        run.hits[q.id] = rank(per)
        if len(set(per.values())) != len(per):
            tied.append(q.id)
    missing = [q.id for q in bench.queries if q.id not in rows]
    return RunFile(path=path, format="mteb" if origin else fmt, sha256=sha256_file(path), run=run,
                   scores=rows, rows=n_rows, tied_queries=tied, missing_queries=missing,
                   origin=origin)


def parse_run_spec(spec: str) -> tuple[str, Path]:
    """CLI ``--run NAME=PATH`` as (name, path)."""
    name, sep, path = spec.partition("=")
    name = name.strip()
    if not sep or not name or not path:
        raise DataError(f"--run {spec!r}: expected NAME=PATH, e.g. --run mymodel=runs/mymodel.trec")
    return name, Path(path)
