"""A benchmark as every reader takes it: its files, under one condition, in one view.

:class:`BenchmarkView` is a frozen value of three fields, the axes every result is keyed by
(:class:`~reasonaudio.dataset.keys.ResultKey`):

- ``files``: the directory's :class:`~reasonaudio.dataset.benchmark.BenchmarkFiles` (corpus,
  queries, qrels, choices, atoms), the same under every condition and in every view, shared by
  all views of one load;
- ``condition``: the acoustic :class:`~reasonaudio.dataset.conditions.Condition` its audio,
  collections, caches and results follow (``clean`` as loaded);
- ``view``: which texts its queries hold: ``caption`` (the queries as built), another
  formulation (``formulations.jsonl``: only the queries that have it), or ``interleaved``
  (``interleaved.jsonl``: only the queries with an interleaved variant, each asked by that text
  with its ``examples``). Qrels, choices and clips are the files' own in every view.

A view is never changed: :meth:`BenchmarkView.with_condition` and :meth:`BenchmarkView.with_view`
return another, so two views of one load never affect each other. :func:`load_benchmark` gives
the clean, caption view.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from reasonaudio.dataset.atom import Atom
from reasonaudio.dataset.benchmark import FORMULATIONS, BenchmarkFiles, Choice, Query
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.conditions import CLEAN, Condition, condition_for, parse_condition
from reasonaudio.dataset.interleaved import INTERLEAVED, INTERLEAVED_FILE, interleaved_rows
from reasonaudio.dataset.keys import ResultKey
from reasonaudio.errors import DataError
from reasonaudio.tasks.base import CAPTION
from reasonaudio.tasks.formulation_records import is_default

CLEAN_CONDITION = parse_condition(CLEAN)
"""the condition a benchmark is read under as loaded"""


@dataclass(frozen=True)
class BenchmarkView:
    """A benchmark's files under one ``condition``, in one ``view`` (see the module docstring).
    Its queries are checked when it is made: a view that names a formulation the build does not
    have fails there, named."""

    files: BenchmarkFiles
    condition: Condition = field(default=CLEAN_CONDITION)
    view: str = CAPTION

    def __post_init__(self) -> None:
        if not isinstance(self.view, str) or not self.view:
            raise DataError(f"{self.files.root}: view must be a non-empty string, got {self.view!r}")
        if is_default(self.view) and self.view != CAPTION:
            raise DataError(f"{self.files.root}: view {self.view!r} is the queries as built; "
                            f"name it {CAPTION!r}")
        if self.view != CAPTION:
            self.queries  # noqa: B018  (a view the build cannot give fails when it is made)

    # --- the axes ----------------------------------------------------------------------------

    def key(self, name: str) -> ResultKey:
        """The key of ``name``'s result on this view (retriever or run file ``name``)."""
        return ResultKey(name, self.condition.name, self.view)

    def with_condition(self, condition: str | Condition) -> "BenchmarkView":
        """These files in this view under ``condition``: a name (the record the build recorded,
        else the registry's) or a record (another build's, e.g. the evaluated build's for its
        calibration). The files are the same under every condition: only audio, collections,
        caches and results follow it."""
        if isinstance(condition, Condition):
            cond = condition
        elif parse_condition(condition).name == self.condition.name:
            return self  # the record it holds (this build's, or the one it was given)
        else:
            cond = condition_for(self.manifest, condition)
        return self if cond == self.condition else replace(self, condition=cond)

    def with_view(self, view: str) -> "BenchmarkView":
        """These files under this condition in ``view`` (``caption``, a formulation, or
        ``interleaved``); views do not stack: each is made from the files."""
        return self if view == self.view else replace(self, view=view)

    # --- the queries this view asks ----------------------------------------------------------

    @cached_property
    def queries(self) -> list[Query]:
        files = self.files
        if self.view == CAPTION:
            return files.queries
        if self.view == INTERLEAVED:
            rows = interleaved_rows(files)
            if not rows:
                raise DataError(f"{files.root / INTERLEAVED_FILE}: no interleaved queries")
            return [Query(q.id, rows[q.id].text, q.task, q.logic,
                          {**q.extra, "formulation": INTERLEAVED, "examples": list(rows[q.id].examples)})
                    for q in files.queries if q.id in rows]
        texts = files.formulations.get(self.view)
        if not texts:
            raise DataError(f"{files.root / FORMULATIONS}: no queries in formulation {self.view!r}")
        return [Query(q.id, texts[q.id], q.task, q.logic, {**q.extra, "formulation": self.view})
                for q in files.queries if q.id in texts]

    @cached_property
    def query_by_id(self) -> dict[str, Query]:
        return {q.id: q for q in self.queries}

    # --- the files, the same in every view ---------------------------------------------------

    @property
    def root(self) -> Path:
        return self.files.root

    @property
    def manifest(self) -> dict[str, Any]:
        return self.files.manifest

    @property
    def verified(self) -> bool:
        return self.files.verified

    @property
    def seed(self) -> int:
        return self.files.seed

    @property
    def clips(self) -> list[Clip]:
        return self.files.clips

    @property
    def clip_by_id(self) -> dict[str, Clip]:
        return self.files.clip_by_id

    @property
    def qrels(self) -> dict[str, set[str]]:
        return self.files.qrels

    @property
    def choices(self) -> list[Choice]:
        return self.files.choices

    @property
    def atoms(self) -> list[Atom]:
        return self.files.atoms

    @property
    def labels(self) -> tuple[str, ...]:
        return self.files.labels

    @property
    def formulations(self) -> dict[str, dict[str, str]]:
        return self.files.formulations

    def verify(self) -> None:
        """Check every file against the sha256 the manifest recorded."""
        self.files.verify()


def load_benchmark(root: Path | str, verify: bool = True) -> BenchmarkView:
    """The benchmark directory ``root`` as loaded: clean, caption view (see
    :class:`~reasonaudio.dataset.benchmark.BenchmarkFiles` for what loading checks)."""
    return BenchmarkView(BenchmarkFiles(Path(root), verify=verify))
