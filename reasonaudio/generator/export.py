"""Export a benchmark where researchers already evaluate: a Hugging Face ``datasets`` folder.

``bench export --data DIR --to PATH --format hf`` writes (atomically: an interrupted export
leaves nothing that looks complete)::

    PATH/README.md                         dataset card: configs, columns, provenance, every atom's licence
    PATH/corpus/test-0000i-of-0000n.parquet _id, audio | audio_path, duration, sample_rate, mode, labels, events
    PATH/queries/test.parquet               _id, text, task, logic (JSON), extra (JSON)
    PATH/qrels/test.parquet                 query-id, corpus-id, score           (config "default")
    PATH/choices/test.parquet               query-id, positive, negative         (the planted pairs)
    PATH/hard_negatives/test.parquet        query-id, corpus-id                  (the judge's, for HNSR/TFR)
    PATH/atoms/test.parquet                 atom_id, label, path, sample_rate, duration, source, license
    PATH/formulations/test.parquet          query-id, formulation, text, template (when built with them)
    PATH/reasonaudio-export.json            parameters, versions, sha256 of the benchmark and every file

The layout is the BEIR/MTEB retrieval one (``corpus``, ``queries`` and qrels as ``default``,
split ``test``), so ``load_dataset(PATH, "corpus", split="test")`` works, as does
``load_dataset("parquet", data_files=...)``. Audio (``--audio embed``, the default) is rendered by
:mod:`reasonaudio.render.clips` at ``--sample-rate`` (default: each clip's own rate), stored
as 16-bit FLAC (or WAV) bytes in an ``Audio`` column; ``--audio files`` writes
``audio/<clip>.<fmt>`` beside the parquet and puts the relative path in ``audio_path``;
``--audio none`` exports metadata only. Writing parquet needs pyarrow (``pip install
'reasonaudio[hf]'``); the ``datasets`` library itself is not needed to export.

Under an acoustic condition (``--condition``) the audio is rendered under it and the record says
which; under ``long`` each row's ``duration`` and ``events`` are the recording's (the events at
their place in it, :meth:`ConditionRenderer.place`) and a corpus file holds at most
``LONG_CLIPS_PER_SHARD`` recordings.

Deterministic: the same benchmark and options give the same bytes (no timestamps anywhere).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from reasonaudio.querylang.judge import hard_negatives
from reasonaudio.dataset.benchmark import FORMULATIONS, MANIFEST
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_dir, clear_stale_partials, read_jsonl, sha256_file
from reasonaudio.output_dirs import EXPORT_OUTPUT, check_output_dir
from reasonaudio.generator.export_card import CONFIGS, FORMULATIONS_CONFIG, dataset_card
from reasonaudio.render.clips import FORMATS as AUDIO_FILE_FORMATS
from reasonaudio.render.clips import ClipRenderer, bench_renderer, encode_audio, write_audio
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.provenance import versions

if TYPE_CHECKING:
    import pyarrow

FORMATS = ("hf",)
AUDIO_MODES = ("embed", "files", "none")
AUDIO_FORMATS = AUDIO_FILE_FORMATS
SPLIT = "test"
EXPORT_FILE, EXPORT_FORMAT = EXPORT_OUTPUT.marker, EXPORT_OUTPUT.format
CLIPS_PER_SHARD = 250
"""with embedded audio: about 200 MB per corpus file at 48 kHz (the hub's advice is < 500 MB)"""
LONG_CLIPS_PER_SHARD = 4
"""the same under ``long`` (recordings of 60 to 300 s): a corpus file of at most 1,200 s, about
20 MB at 48 kHz, so the rows held before a file is written stay small beside the 300 s render
(docs/conditions.md states the memory bound)"""

@dataclass(frozen=True)
class ExportOptions:
    format: str = "hf"
    audio: str = "embed"
    """embed | files | none"""
    audio_format: str = "flac"
    sample_rate: int | None = None
    """render at this rate; None: each clip's own rate (the benchmark's)"""
    atoms: str | None = None
    """atom bank spec when not the one the manifest names"""
    force: bool = False

    def validate(self) -> None:
        if self.format not in FORMATS:
            raise DataError(f"--format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.audio not in AUDIO_MODES:
            raise DataError(f"--audio must be one of {', '.join(AUDIO_MODES)}, got {self.audio!r}")
        if self.audio_format not in AUDIO_FORMATS:
            raise DataError(f"--audio-format must be one of {', '.join(AUDIO_FORMATS)}, "
                            f"got {self.audio_format!r}")
        if self.sample_rate is not None and not 1000 <= self.sample_rate <= 384_000:
            raise DataError(f"--sample-rate must be between 1000 and 384000 Hz, got {self.sample_rate}")


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    clips: int
    queries: int
    qrels: int
    choices: int
    hard_negatives: int
    atoms: int
    audio: str
    sample_rate: int | None
    audio_seconds: float
    seconds: float
    files: dict[str, str] = field(default_factory=dict)
    """relative path -> sha256"""
    adjustments: dict[str, int] = field(default_factory=dict)
    """the renderer's automatic adjustments (kind -> count), as ``bench ingest`` reports them"""
    formulations: int = 0
    """rows of the formulations table (0: the benchmark has none)"""


def _pyarrow() -> ModuleType:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise DataError("bench export --format hf writes parquet and needs pyarrow: "
                        "pip install 'reasonaudio[hf]'") from None
    return pyarrow


# --- columns: arrow types and the matching `datasets` feature description --------------------

def _value(dtype: str) -> dict[str, Any]:
    return {"dtype": dtype, "_type": "Value"}


def _list(feature: dict[str, Any]) -> dict[str, Any]:
    return {"feature": feature, "_type": "List"}


EVENT_FEATURE = {"label": _value("string"), "onset": _value("float64"), "offset": _value("float64"),
                 "atom_id": _value("string"), "gain_db": _value("float64")}


def corpus_features(audio: str, sample_rate: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"_id": _value("string")}
    if audio == "embed":
        out["audio"] = {"sampling_rate": sample_rate, "_type": "Audio"} if sample_rate else {"_type": "Audio"}
    elif audio == "files":
        out["audio_path"] = _value("string")
    out.update({"duration": _value("float64"), "sample_rate": _value("int32"), "mode": _value("string"),
                "labels": _list(_value("string")), "events": _list(EVENT_FEATURE)})
    return out


QUERY_FEATURES = {"_id": _value("string"), "text": _value("string"), "task": _value("string"),
                  "logic": _value("string"), "extra": _value("string")}
QREL_FEATURES = {"query-id": _value("string"), "corpus-id": _value("string"), "score": _value("int32")}
FORMULATION_FEATURES = {"query-id": _value("string"), "formulation": _value("string"),
                        "text": _value("string"), "template": _value("string")}
CHOICE_FEATURES = {"query-id": _value("string"), "positive": _value("string"), "negative": _value("string")}
HN_FEATURES = {"query-id": _value("string"), "corpus-id": _value("string")}
ATOM_FEATURES = {"atom_id": _value("string"), "label": _value("string"), "path": _value("string"),
                 "sample_rate": _value("int32"), "duration": _value("float64"),
                 "source": _value("string"), "license": _value("string")}


def _arrow_type(pa: ModuleType, feature: dict[str, Any]) -> pyarrow.DataType:
    kind = feature.get("_type")
    if kind == "Value":
        return {"string": pa.string(), "float64": pa.float64(), "int32": pa.int32()}[feature["dtype"]]
    if kind == "List":
        inner = feature["feature"]
        if "_type" in inner:
            return pa.list_(_arrow_type(pa, inner))
        return pa.list_(pa.struct([(k, _arrow_type(pa, v)) for k, v in inner.items()]))
    if kind == "Audio":
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    raise ValueError(f"no arrow type for {feature}")


def _schema(pa: ModuleType, features: dict[str, Any]) -> pyarrow.Schema:
    meta = json.dumps({"info": {"features": features}}, sort_keys=False)
    return pa.schema([(k, _arrow_type(pa, v)) for k, v in features.items()],
                     metadata={"huggingface": meta})


def _write_table(pa: ModuleType, path: Path, rows: list[dict[str, Any]], features: dict[str, Any]) -> None:
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=_schema(pa, features))
    pq.write_table(table, path, compression="snappy")


# --- rows ---------------------------------------------------------------------------------------

def hard_negative_pairs(bench: BenchmarkView) -> list[tuple[str, str]]:
    """(query id, clip id) for the judge's hard negatives minus the qrels (as the evaluation)."""
    hard = hard_negatives(bench)
    return [(q.id, cid) for q in bench.queries for cid in sorted(hard.get(q.id, ()))]


def _query_rows(bench: BenchmarkView) -> list[dict[str, Any]]:
    rows = []
    for q in bench.queries:
        obj = q.to_json()
        extra = {k: v for k, v in obj.items() if k not in ("_id", "text", "task", "logic")}
        rows.append({"_id": q.id, "text": q.text, "task": q.task,
                     "logic": json.dumps(obj["logic"], ensure_ascii=False, separators=(",", ":")),
                     "extra": json.dumps(extra, ensure_ascii=False, sort_keys=True, separators=(",", ":"))})
    return rows


def _shards(n: int, size: int) -> list[tuple[int, int]]:
    bounds = list(range(0, n, size)) or [0]
    return [(lo, min(n, lo + size)) for lo in bounds]


def check_export(bench: BenchmarkView, dest: Path | str, opts: ExportOptions) -> None:
    """Everything that can be refused before rendering starts: options, pyarrow, the folder."""
    opts.validate()
    _pyarrow()
    check_output_dir(dest, EXPORT_OUTPUT, opts.force, [bench.root])
    if opts.audio != "none" and not (opts.atoms or (bench.manifest.get("parameters") or {}).get("atoms")):
        raise DataError(f"{bench.root}/{MANIFEST}: parameters.atoms does not name the atom bank; "
                        "pass --atoms (or --audio none)")


def export_hf(bench: BenchmarkView, dest: Path | str, opts: ExportOptions = ExportOptions(),
              hooks: Hooks = SILENT) -> ExportSummary:
    """Write the Hugging Face folder (see the module docstring); progress as
    ``hooks.progress("export", clips done, clips)``; ``hooks.notify`` hears which work folders of
    killed exports of ``dest`` were removed."""
    check_export(bench, dest, opts)
    clear_stale_partials(Path(dest), "export", hooks.notify)
    pa = _pyarrow()
    t0 = time.perf_counter()
    renderer = bench_renderer(bench, opts.atoms) if opts.audio != "none" else None
    features = corpus_features(opts.audio, opts.sample_rate)
    per_shard = LONG_CLIPS_PER_SHARD if hasattr(renderer, "place") and \
        renderer.condition.record.places_events else CLIPS_PER_SHARD
    shard_size = per_shard if opts.audio == "embed" else max(1, len(bench.clips))
    shards = _shards(len(bench.clips), shard_size)
    dest = Path(dest)
    log = logging.getLogger("reasonaudio.render")
    level = log.level
    log.setLevel(logging.ERROR)  # per-atom adjustments are counted and recorded, not printed
    try:
        summary = _export(bench, dest, opts, pa, renderer, features, shards, hooks, t0)
    finally:
        log.setLevel(level)
    return summary


def _export(bench: BenchmarkView, dest: Path, opts: ExportOptions, pa: ModuleType, renderer: ClipRenderer,
            features: dict[str, Any], shards: list[tuple[int, int]], hooks: Hooks,
            t0: float) -> ExportSummary:
    clips = bench.clips
    queries, qrels, choices, atoms = bench.queries, bench.qrels, bench.choices, bench.atoms
    audio_seconds = 0.0
    files: list[str] = []
    with atomic_dir(dest, EXPORT_OUTPUT, opts.force, [bench.root]) as tmp:
        done = 0
        for i, (lo, hi) in enumerate(shards):
            rows = []
            for clip in clips[lo:hi]:
                rate = opts.sample_rate or clip.sample_rate
                # what the audio holds: under ``long`` the events at their place in the recording
                heard = renderer.place(clip) if hasattr(renderer, "place") else clip
                row: dict[str, Any] = {"_id": clip.id}
                if renderer is not None:
                    wave = renderer.render(replace(clip, sample_rate=rate))
                    audio_seconds += heard.duration
                    name = f"{clip.id}.{opts.audio_format}"
                    if opts.audio == "embed":
                        row["audio"] = {"bytes": encode_audio(wave, rate, opts.audio_format), "path": name}
                    else:

                        rel = f"audio/{name}"
                        (tmp / "audio").mkdir(exist_ok=True)
                        write_audio(tmp / rel, wave, rate)
                        files.append(rel)
                        row["audio_path"] = rel
                row.update({"duration": heard.duration,
                            "sample_rate": rate if renderer is not None else clip.sample_rate,
                            "mode": clip.mode, "labels": list(clip.labels),
                            "events": [e.to_json() for e in heard.events]})
                rows.append(row)
                done += 1
                hooks.progress("export", done, len(clips))
            rel = f"corpus/{SPLIT}-{i:05d}-of-{len(shards):05d}.parquet"
            _write_table(pa, tmp / rel, rows, features)
            files.append(rel)
        hn = hard_negative_pairs(bench)
        tables: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
            ("queries", _query_rows(bench), QUERY_FEATURES),
            ("qrels", [{"query-id": q, "corpus-id": c, "score": 1}
                       for q in sorted(qrels) for c in sorted(qrels[q])], QREL_FEATURES),
            ("choices", [{"query-id": ch.query_id, "positive": ch.positive, "negative": ch.negative}
                         for ch in choices], CHOICE_FEATURES),
            ("hard_negatives", [{"query-id": q, "corpus-id": c} for q, c in hn], HN_FEATURES),
            ("atoms", [a.to_json() for a in atoms], ATOM_FEATURES),
        ]
        formulations = _formulation_rows(bench)
        if formulations is not None:
            tables.append(("formulations", formulations, FORMULATION_FEATURES))
        for folder, rows, feats in tables:
            rel = f"{folder}/{SPLIT}.parquet"
            _write_table(pa, tmp / rel, rows, feats)
            files.append(rel)
        counts = {"clips": len(clips), "queries": len(queries), "qrels": sum(map(len, qrels.values())),
                  "choices": len(choices), "hard_negatives": len(hn), "atoms": len(atoms)}
        if formulations is not None:
            counts["formulations"] = len(formulations)
        record = {"format": EXPORT_FORMAT, "options": {k: v for k, v in asdict(opts).items() if k != "force"},
                  "benchmark": {"manifest_sha256": sha256_file(bench.root / MANIFEST),
                                "seed": bench.seed},
                  "counts": counts, "corpus_shards": len(shards),
                  "render_adjustments": dict(sorted(renderer.adjustments.items())) if renderer else {},
                  "versions": versions() | {"pyarrow": pa.__version__},
                  "files": {rel: sha256_file(tmp / rel) for rel in sorted(files)}}
        condition = getattr(renderer, "condition_identity", None)
        if condition is not None:  # the audio was rendered under a noisy condition: say which
            record["condition"] = condition
        (tmp / "README.md").write_text(dataset_card(bench, record), encoding="utf-8", newline="\n")
        (tmp / EXPORT_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8", newline="\n")
    return ExportSummary(path=dest, audio=opts.audio, sample_rate=opts.sample_rate,
                         audio_seconds=round(audio_seconds, 3), seconds=time.perf_counter() - t0,
                         files=record["files"], adjustments=record["render_adjustments"], **counts)


def _formulation_rows(bench: BenchmarkView) -> list[dict[str, str]] | None:
    """``formulations.jsonl`` as table rows, or None for a benchmark built without it."""
    if not (bench.root / FORMULATIONS).is_file():
        return None
    return [{"query-id": o["query_id"], "formulation": o["formulation"], "text": o["text"],
             "template": str(o.get("template", ""))} for o in read_jsonl(bench.root / FORMULATIONS)]


def config_files(root: Path | str) -> dict[str, list[str]]:
    """Config name -> its parquet files (what ``load_dataset("parquet", data_files=...)`` needs)."""
    root = Path(root)
    out = {}
    extra = (FORMULATIONS_CONFIG,) if (root / FORMULATIONS_CONFIG[1]).is_dir() else ()
    for config, folder in CONFIGS + extra:
        out[config] = sorted(str(p) for p in (root / folder).glob(f"{SPLIT}*.parquet"))
    return out


