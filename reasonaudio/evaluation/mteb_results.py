"""Results that meet MTEB's: ``bench eval`` results as MTEB result files, MTEB's rankings as runs.

Writing (``write_mteb_results``): each evaluated retriever becomes one MTEB model folder in
MTEB's result-cache layout, ``OUT/results/<model name, / as __>/<revision>/<Task>.json``, one
file per ReasonAudio MTEB task (:mod:`reasonaudio.evaluation.mteb_tasks`), written by MTEB's own
``TaskResult`` (so ``mteb.ResultCache(OUT)`` and MTEB's tooling read them), with the benchmark's
manifest sha256 as the dataset revision. Scores carry MTEB's names where the definition is the
same (docs/evaluation.md):

- ``ndcg_at_10`` (main score) and ``recall_at_10``: the same definitions (binary gains,
  ``1 / log2(rank + 1)``, IDCG over ``min(|R|, 10)``; ``|R ∩ top 10| / |R|``);
- ``precision_at_1`` and ``hit_rate_at_1``: our Acc@1 (the top clip is relevant);
- ``mrr_at_<depth>``: our MRR, the first relevant clip within the evaluated depth.

This testbed's own measures keep their own names: ``hnsr_at_10``, ``tfr_at_10``,
``mc_accuracy``. The model name is the MTEB name for ``mteb:`` retrievers, the model's hub id for
other model retrievers and ``reasonaudio/<retriever>`` otherwise; the revision is the model's
(``no_revision_available`` when there is none, as MTEB writes it).

Reading (``prediction_rows``): MTEB saves a retrieval task's rankings, with ``prediction_folder``,
as ``<Task>_predictions.json`` = ``{"mteb_model_meta": {...}, SUBSET: {SPLIT: {qid: {doc:
score}}}}``; ``bench eval --run NAME=FILE`` reads that shape as a run (see
:mod:`reasonaudio.evaluation.run_files`). Reading needs no ``mteb`` install; writing does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.errors import DataError
from reasonaudio.evaluation.mteb_tasks import task_class, task_name
from reasonaudio.evaluation.results import fingerprint
from reasonaudio.models.mteb_models import import_mteb

if TYPE_CHECKING:
    from reasonaudio.evaluation.results import Results, RetrieverResult
    from reasonaudio.dataset.view import BenchmarkView

# the same strings as reasonaudio.models.mteb_models (not imported here: reading a run file must
# stay light); tests/evaluation/test_mteb_errors.py checks they agree
PREFIX, SPLIT, SUBSET = "mteb:", "test", "default"
PREDICTIONS = "ReasonAudioT2ARetrieval_predictions.json"
"""what MTEB saves in its ``prediction_folder`` for the overall task (every query): ``bench eval
--run NAME=FOLDER`` reads it"""

META_KEY = "mteb_model_meta"
NO_REVISION = "no_revision_available"
OWN_NAMES = {"hnsr@10": "hnsr_at_10", "tfr@10": "tfr_at_10", "mc_acc": "mc_accuracy"}
SHARED = "ndcg@10 = ndcg_at_10, recall@10 = recall_at_10, acc@1 = precision_at_1 = hit_rate_at_1"


def is_mteb_predictions(obj: object) -> bool:
    return isinstance(obj, dict) and META_KEY in obj


def prediction_rows(obj: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(query id -> {clip id: score}, the file's ``mteb_model_meta``) of an MTEB predictions file.

    One subset and split are read: ``default``/``test`` when present, else the only one; a file
    with several (a task with more subsets) is refused, naming them."""
    meta = obj.get(META_KEY)
    pairs = [(subset, split) for subset, splits in obj.items() if subset != META_KEY
             and isinstance(splits, dict) for split in splits]
    if (SUBSET, SPLIT) in pairs:
        chosen = (SUBSET, SPLIT)
    elif len(pairs) == 1:
        chosen = pairs[0]
    else:
        found = ", ".join(f"{a}/{b}" for a, b in pairs) or "none"
        raise DataError(f"{path}: an MTEB predictions file with one subset/split expected, found {found}")
    rows = obj[chosen[0]][chosen[1]]
    if not isinstance(rows, dict):
        raise DataError(f"{path}: {chosen[0]}/{chosen[1]} must map query ids to {{clip id: score}}")
    origin = {"mteb_model_meta": meta if isinstance(meta, dict) else {}, "mteb_subset": chosen[0],
              "mteb_split": chosen[1]}
    return rows, origin


def model_identity(result: RetrieverResult) -> tuple[str, str]:
    """(MTEB model name, revision) a retriever's results are filed under."""
    model = (result.describe or {}).get("model") or {}
    if result.name.startswith(PREFIX):
        return result.name[len(PREFIX):], str(model.get("revision") or NO_REVISION)
    if isinstance(model, dict) and model.get("hub_id"):
        return str(model["hub_id"]), str(model.get("revision") or NO_REVISION)
    return f"reasonaudio/{result.name}", NO_REVISION


def mteb_scores(means: dict[str, float], depth: int) -> dict[str, float]:
    """One subset's MTEB score dict from this testbed's means (names: the module docstring)."""
    out = {"ndcg_at_10": means["ndcg@10"], "recall_at_10": means["recall@10"],
           "precision_at_1": means["acc@1"], "hit_rate_at_1": means["acc@1"],
           f"mrr_at_{depth}": means["mrr"]}
    out.update({name: means[m] for m, name in OWN_NAMES.items() if m in means})
    out["main_score"] = out["ndcg_at_10"]
    return {k: float(v) for k, v in out.items()}


def result_dir(out: Path | str, model_name: str, revision: str) -> Path:
    """MTEB's result-cache folder of a model (``/`` -> ``__``, spaces -> ``_``, as MTEB does)."""
    return Path(out) / "results" / model_name.replace("/", "__").replace(" ", "_") / revision


def write_mteb_results(bench: BenchmarkView, results: Results, out: Path | str) -> list[Path]:
    """Every retriever of ``results`` as MTEB result files under ``out`` (returns the files)."""
    import_mteb()
    from mteb.results import TaskResult

    revision = fingerprint(bench)
    written = []
    for result in results.runs.values():
        model_name, model_revision = model_identity(result)
        folder = result_dir(out, model_name, model_revision)
        for task in (None, *TASKS):
            means = result.overall if task is None else result.per_task.get(task)
            if not means:
                continue
            cls = task_class(task, revision)
            scores = {SPLIT: {SUBSET: mteb_scores(means, result.depth)}}
            seconds = float(sum((result.timing or {}).values()))
            tr = TaskResult.from_task_results(cls, scores, evaluation_time=seconds)
            path = folder / f"{task_name(task)}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")  # MTEB's own writer, then one rename
            try:
                tr.to_disk(tmp)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
            written.append(path)
    return written
