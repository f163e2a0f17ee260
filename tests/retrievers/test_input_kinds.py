"""Honest rungs: every retriever record says what it reads, and the spectrum carries it."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import evalkit
import pytest
from rich.console import Console

from reasonaudio.evaluation.report import spectrum
from reasonaudio.evaluation.results import Results
from reasonaudio.retrievers.registry import (HEARD, INPUT_KINDS, LEARNED, NOTHING, TRUTH, BUILT_IN,
                                             input_kind)

HYBRID_TRUE = "hybrid:two-stage:oracle-caption+minilm,soft:yamnet"


def test_every_record_says_what_it_reads():
    for spec in BUILT_IN:
        name = spec.example if spec.family else spec.name
        assert input_kind(name) in INPUT_KINDS, name


@pytest.mark.parametrize("name,kind", [
    ("oracle", TRUTH), ("bag-of-sounds", TRUTH), ("oracle-without:order", TRUTH),
    ("two-stage:oracle-caption+minilm", TRUTH), ("two-stage:oracle-caption+bm25", TRUTH),
    (HYBRID_TRUE, TRUTH), ("dbsf:two-stage:oracle-caption+minilm,two-stage:oracle-caption+bm25", TRUTH),
    ("detected:yamnet", HEARD), ("soft:yamnet", HEARD), ("two-stage:yamnet-caption+minilm", HEARD),
    ("hybrid:two-stage:yamnet-caption+minilm,soft:yamnet", HEARD),
    ("clap", LEARNED), ("trained:x", LEARNED), ("random", NOTHING)])
def test_input_kinds(name, kind):
    assert input_kind(name) == kind


def test_the_spectrum_carries_each_rungs_input_and_p_against_bag_of_sounds(tmp_path):
    _, res = evalkit.evaluated_fakes(tmp_path / "bench")
    oracle, const, emb = res.runs.values()
    runs = {n: replace(r, name=n, retriever=n) for n, r in (
        ("clap", emb), ("bag-of-sounds", const), ("detected:yamnet", oracle), (HYBRID_TRUE, const))}
    s = spectrum(Results(res.data, res.versions, runs))
    doc = json.loads(json.dumps(s.to_json()))
    assert doc["control"] == "bag-of-sounds" and doc["control_input"] == TRUTH
    assert doc["best_learned"] == "clap" and doc["best_learned_input"] == LEARNED
    rows = {r["name"]: r for r in doc["rows"]}
    assert rows[HYBRID_TRUE]["input"] == TRUTH and rows["detected:yamnet"]["input"] == HEARD
    for row in rows.values():
        p = row["vs_bag_of_sounds"]["groups"]["overall"]["acc@1"]
        assert 0 < p["p"] <= 1 and p["p_holm"] == p["p"]
    from reasonaudio.views.results import print_spectrum

    out = io.StringIO()
    print_spectrum(Console(file=out, width=160, color_system=None), s)
    text = out.getvalue()
    assert "p bag" in text and "heard" in text and "truth" in text and "Holm" in text
