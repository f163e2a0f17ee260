"""Runs (query id -> ranked clip ids with scores) and TREC run files.

A TREC run file has one line per retrieved clip: ``qid Q0 docid rank score tag`` (space
separated, rank from 1). We write ranks in the run's order (score descending, then clip id
ascending, the project's tie rule) and read them back ordered by the rank column, so metrics see
exactly the order the retriever produced.

``trec_eval`` (and pytrec_eval, ir-measures) ignore the rank column: they re-sort by score and
break ties by doc id *descending*. So the score column is written strictly decreasing down each
query's list (:func:`trec_scores`), in float32, since trec_eval stores scores as C floats: each
score is written rounded to float32 (about 7 significant digits), and one that is not below the
previous line's (a tie, or two scores equal in float32) as the next float32 below it. Every
reader, float32 or float64, then ranks exactly as we do.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import numpy as np

from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_file, open_text
from reasonaudio.retrievers.base import Hit
from reasonaudio.types import Pathlike

_TOKEN = re.compile(r"^\S+$")


@dataclass
class Run:
    """A retriever's answers: query id -> hits, best first. Queries it did not answer are absent."""

    tag: str
    hits: dict[str, list[Hit]] = field(default_factory=dict)

    def ranking(self, qid: str) -> list[str]:
        return [h.clip_id for h in self.hits.get(qid, ())]

    def __len__(self) -> int:
        return len(self.hits)


def _score_text(score: float) -> str:
    """A float32 score as its shortest decimal that reads back as the same float32 (strtod then
    a cast, as trec_eval does; a float64 reader keeps the order too); inf/-inf/nan as words."""
    if math.isnan(score):
        return "nan"
    if math.isinf(score):
        return "inf" if score > 0 else "-inf"
    return str(np.float32(score))


F32_TINY = float(np.finfo(np.float32).tiny)
"""The smallest normal float32; nudges skip the subnormals below it (some readers flush them)."""


def _f32(x: float) -> float:
    """``x`` rounded to float32 (what trec_eval stores a score as), subnormals flushed to 0."""
    with np.errstate(over="ignore"):
        y = float(np.float32(x))
    return 0.0 if abs(y) < F32_TINY else y


def _below(x: float) -> float:
    """The next normal float32 below ``x`` (possibly -inf)."""
    y = float(np.nextafter(np.float32(x), np.float32(-np.inf)))
    if abs(y) < F32_TINY:  # from 0 (or a normal just above it): skip the subnormals
        y = 0.0 if x > 0 else -F32_TINY
    return y


def trec_scores(scores: Iterable[float]) -> list[float]:
    """The scores to write for one query's hits, in rank order: float32 values (trec_eval keeps
    scores as C floats) that strictly decrease, so a reader that re-sorts by score gets our order.
    A score is its float32 rounding unless that is not below the previous line's (a tie, NaN, or
    two scores equal in float32); then it is the next float32 below. When nothing is left below
    (several hits at -inf) the query is written rank-based: n, n-1, ..., 1.
    """
    given = [float(x) for x in scores]
    out: list[float] = []
    for score in given:
        score = _f32(score) if not math.isnan(score) else math.nan
        if out and not score < out[-1]:  # also catches NaN
            score = _below(out[-1])
            if not score < out[-1]:
                return [float(len(given) - i) for i in range(len(given))]
        elif math.isnan(score):  # a first line NaN: nothing to be below yet
            score = math.inf
        out.append(score)
    return out


def trec_lines(run: Run, qids: Iterable[str] | None = None) -> Iterable[str]:
    """Lines of ``run`` as a TREC run file, queries in ``qids`` order (default: sorted)."""
    tag = run.tag
    if not _TOKEN.match(tag):
        tag = re.sub(r"\s+", "_", tag) or "run"
    for qid in (sorted(run.hits) if qids is None else qids):
        hits = run.hits.get(qid, ())
        scores = trec_scores(h.score for h in hits)
        for r, (hit, score) in enumerate(zip(hits, scores), 1):
            yield f"{qid} Q0 {hit.clip_id} {r} {_score_text(score)} {tag}\n"


def write_trec(path: Pathlike, run: Run, qids: Iterable[str] | None = None) -> Path:
    """Write ``run`` atomically as a TREC run file; returns the path."""
    path = Path(path)
    for qid, hits in run.hits.items():
        for h in hits:
            if not _TOKEN.match(qid) or not _TOKEN.match(h.clip_id):
                raise DataError(f"{path}: ids in a TREC run file cannot contain spaces "
                                f"(query {qid!r}, clip {h.clip_id!r})")
    with atomic_file(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(trec_lines(run, qids))
    return path


class TrecRow(NamedTuple):
    """One checked line of a TREC run file (a tuple: a run holds hundreds of thousands)."""

    path: Path
    lineno: int
    qid: str
    clip_id: str
    rank: int
    score: float
    tag: str

    @property
    def where(self) -> str:
        """``path:line`` for messages"""
        return f"{self.path}:{self.lineno}"


def trec_rows(path: Path) -> Iterator[TrecRow]:
    """The lines of a TREC run file, each checked: ``qid Q0 docid rank score tag`` separated by
    whitespace, an integer rank, a number for the score (``inf``/``-inf`` allowed, NaN refused).
    A tag holding spaces (ranx writes its run name verbatim) is kept whole. Blank lines skip.
    The one line format both readers (:func:`read_trec`, ``evaluation/run_files.py``) use."""
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 6:
                raise DataError(f"{path}:{lineno}: expected 6 fields 'qid Q0 docid rank score tag', "
                                f"got {len(parts)}")
            qid, _q0, cid, rank_s, score_s = parts[:5]
            try:  # the common case; a bad field is read again below to say which
                rnk, score = int(rank_s), float(score_s)
                bad = math.isnan(score)
            except ValueError:
                bad = True
            if bad:
                rnk, score = _rank(rank_s, f"{path}:{lineno}"), parse_score(score_s, f"{path}:{lineno}")
            yield TrecRow(path, lineno, qid, cid, rnk, score, " ".join(parts[5:]))


def _rank(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise DataError(f"{where}: rank must be an integer, got {text!r} "
                        "(columns are 'qid Q0 docid rank score tag')") from None


def parse_score(text: str, where: str) -> float:
    """A run's score: a number (``inf``/``-inf`` allowed), never NaN; one line otherwise."""
    try:
        score = float(text)
    except ValueError:
        raise DataError(f"{where}: score must be a number, got {text!r}") from None
    if math.isnan(score):
        raise DataError(f"{where}: score is NaN")
    return score


def read_trec(path: Pathlike, tag: str | None = None) -> Run:
    """Read a TREC run file written by :func:`write_trec`; each query's hits are ordered by the
    rank column (:func:`trec_rows` checks each line; a clip and a rank appear once per query).
    ``tag`` (default: the file's tag column, which must be the same on every line) names the run.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: run file not found")
    rows: dict[str, list[tuple[int, str, float]]] = {}
    tags: set[str] = set()
    for row in trec_rows(path):
        rows.setdefault(row.qid, []).append((row.rank, row.clip_id, row.score))
        tags.add(row.tag)
    if tag is None:
        if len(tags) > 1:
            raise DataError(f"{path}: more than one run tag ({', '.join(sorted(tags)[:3])}); "
                            "one file holds one run")
        tag = next(iter(tags), path.stem)
    run = Run(tag)
    for qid, items in rows.items():
        items.sort(key=lambda t: t[0])
        ranks = [t[0] for t in items]
        if len(set(ranks)) != len(ranks):
            raise DataError(f"{path}: query {qid!r} has a repeated rank")
        cids = [t[1] for t in items]
        if len(set(cids)) != len(cids):
            raise DataError(f"{path}: query {qid!r} lists a clip twice")
        run.hits[qid] = [Hit(cid, score) for _, cid, score in items]
    return run
