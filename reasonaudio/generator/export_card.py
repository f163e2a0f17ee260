"""The dataset card (README.md) of a Hugging Face export: configs, columns, provenance, licences.

The YAML header declares one config per table (split ``test``) so ``load_dataset(PATH, CONFIG)``
finds the files; the body says how the benchmark was made (the manifest: seed, parameters,
render settings, atom bank, versions, counts, sha256 of every file) and lists every atom with
its source and licence, since the clips are mixes of those recordings and inherit their terms.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from reasonaudio.dataset.view import BenchmarkView

CONFIGS = (("corpus", "corpus"), ("queries", "queries"), ("default", "qrels"),
           ("choices", "choices"), ("hard_negatives", "hard_negatives"), ("atoms", "atoms"))
"""(config name, folder): qrels are the ``default`` config, as in MTEB's retrieval datasets"""
FORMULATIONS_CONFIG = ("formulations", "formulations")
"""the extra config of a benchmark built with formulations (``formulations.jsonl``)"""


def configs(record: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The configs an export holds: :data:`CONFIGS`, plus formulations when it has them."""
    return CONFIGS + ((FORMULATIONS_CONFIG,) if "formulations" in record["counts"] else ())


def _q(text: object) -> str:
    """A YAML scalar: JSON strings are valid YAML double-quoted scalars."""
    return json.dumps(str(text), ensure_ascii=False)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _header(bench: BenchmarkView, record: dict[str, Any]) -> list[str]:
    counts = record["counts"]
    title = f"ReasonAudio benchmark (seed {bench.seed}, {counts['clips']} clips, {counts['queries']} queries)"
    lines = ["---",
             f"pretty_name: {_q(title)}",
             "license: other",
             f"license_name: {_q('mixed: see the atom licences below')}",
             "tags:", "- audio", "- retrieval", "- text-to-audio-retrieval", "- reasoning", "- mteb",
             "configs:"]
    for config, folder in configs(record):
        pattern = f"{folder}/test*.parquet"
        lines += [f"- config_name: {config}", "  data_files:", "  - split: test",
                  f"    path: {_q(pattern)}"]
    lines.append("---")
    return lines


def _loading(record: dict[str, Any]) -> list[str]:
    audio = record["options"]["audio"]
    rate = record["options"]["sample_rate"]
    codec = str(record["options"]["audio_format"]).upper()
    at = f"{rate} Hz" if rate else "each clip at its own rate"
    audio_note = {
        "embed": (f"`corpus` holds the rendered audio in an `Audio` column ({codec}, 16-bit, "
                  f"{at}). Decoding it needs "
                  "`datasets`' audio extra (torchcodec); without it, "
                  "`ds.cast_column(\"audio\", Audio(decode=False))` gives the encoded bytes, which "
                  "`soundfile.read(io.BytesIO(b))` decodes."),
        "files": ("`corpus.audio_path` is the clip's audio file relative to this folder "
                  "(`audio/<clip>.<fmt>`)."),
        "none": ("No audio: render a clip with `bench render CLIP --data DIR -o clip.wav` from the "
                 "original benchmark and atom bank."),
    }[audio]
    return ["## Loading", "",
            "```python", "from datasets import load_dataset", "",
            'corpus = load_dataset("PATH", "corpus", split="test")       # clips',
            'queries = load_dataset("PATH", "queries", split="test")     # queries, logic as JSON',
            'qrels = load_dataset("PATH", split="test")                  # config "default": query-id, corpus-id, score',
            'pairs = load_dataset("PATH", "choices", split="test")       # planted positive / hard negative',
            "```", "",
            audio_note, "",
            "As an MTEB-style retrieval task: `corpus` (`_id` + audio), `queries` (`_id`, `text`) and "
            "the `default` qrels (`query-id`, `corpus-id`, `score`) are the three parts MTEB's "
            "retrieval loaders read; rank every corpus clip for every query and score with nDCG@10 "
            "and the rest. `choices` and `hard_negatives` add this benchmark's reasoning checks "
            "(multiple choice, HNSR@10, TFR@10).", ""]


def _tables(record: dict[str, Any]) -> list[str]:
    counts = record["counts"]
    rows = [("corpus", "corpus/", counts["clips"],
             "`_id`, " + {"embed": "`audio`, ", "files": "`audio_path`, ", "none": ""}[record["options"]["audio"]]
             + "`duration` (s), `sample_rate`, `mode` (sequential | overlap), `labels`, "
               "`events` (label, onset, offset, atom_id, gain_db)"),
            ("queries", "queries/", counts["queries"],
             "`_id`, `text`, `task` (negation | order | overlap | duration | mix), `logic` (JSON), "
             "`extra` (JSON: template, shape)"),
            ("default", "qrels/", counts["qrels"], "`query-id`, `corpus-id`, `score` (1 = relevant)"),
            ("choices", "choices/", counts["choices"],
             "`query-id`, `positive`, `negative`: the planted minimal pair of each query"),
            ("hard_negatives", "hard_negatives/", counts["hard_negatives"],
             "`query-id`, `corpus-id`: clips with every sound the query mentions that are not relevant"),
            ("atoms", "atoms/", counts["atoms"],
             "`atom_id`, `label`, `path`, `sample_rate`, `duration`, `source`, `license`")]
    if "formulations" in counts:
        rows.append(("formulations", "formulations/", counts["formulations"],
                     "`query-id`, `formulation` (caption | question | command | keywords | "
                     "paraphrase | exclusion), `text`, `template`: every query in each way of asking"))
    out = ["## Configs (split `test`)", "", "| config | folder | rows | columns |", "|---|---|---:|---|"]
    out += [f"| `{c}` | `{f}` | {n:,} | {cols} |" for c, f, n, cols in rows]
    return out + [""]


def _provenance(bench: BenchmarkView, record: dict[str, Any]) -> list[str]:
    manifest = {k: v for k, v in bench.manifest.items() if k != "files"}
    files = bench.manifest.get("files") or {}
    out = ["## Provenance", "",
           "Built by the ReasonAudio testbed (`bench build`); relevance is decided by a deterministic "
           "program over each clip's events, so the qrels are exact. The benchmark's `manifest.json` "
           f"(sha256 `{record['benchmark']['manifest_sha256']}`), without its file list:", "",
           "```json", json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True), "```", "",
           "Benchmark files:", ""]
    out += [f"- `{name}`: sha256 `{(info or {}).get('sha256', '?')}`" for name, info in sorted(files.items())]
    adjustments = record.get("render_adjustments") or {}
    if adjustments:
        out += ["", "Automatic adjustments while rendering this export's audio: "
                + "; ".join(f"{k}: {n}" for k, n in adjustments.items()) + "."]
    out += ["", "This export: options "
            f"`{json.dumps(record['options'], sort_keys=True)}`; every file's sha256 is in "
            "`reasonaudio-export.json`.", ""]
    return out


def _licences(bench: BenchmarkView) -> list[str]:
    atoms = bench.atoms
    by_licence = Counter(a.license for a in atoms)
    out = ["## Licences", "",
           "Every clip mixes the atoms its `events` name (`atom_id`); each atom keeps its own licence "
           "and source. Summary:", "", "| licence | atoms |", "|---|---:|"]
    out += [f"| {_cell(lic)} | {n} |" for lic, n in sorted(by_licence.items())]
    out += ["", "Every atom:", "", "| atom_id | label | licence | source |", "|---|---|---|---|"]
    out += [f"| `{_cell(a.atom_id)}` | {_cell(a.label)} | {_cell(a.license)} | {_cell(a.source)} |"
            for a in sorted(atoms, key=lambda a: a.atom_id)]
    return out + [""]


def dataset_card(bench: BenchmarkView, record: dict[str, Any]) -> str:
    counts = record["counts"]
    intro = [f"# ReasonAudio benchmark: {counts['clips']:,} clips, {counts['queries']:,} queries "
             f"(seed {bench.seed})", "",
             "Reasoning-intensive text-to-audio retrieval: composite clips built from atomic sounds, "
             "queries over negation, order, overlap, duration and their mix, with a planted hard "
             "negative for every query.", ""]
    lines = _header(bench, record) + [""] + intro + _loading(record) + _tables(record) \
        + _provenance(bench, record) + _licences(bench)
    return "\n".join(lines)
