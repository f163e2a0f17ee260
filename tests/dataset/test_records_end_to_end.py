"""Conditions and formulations are records (issue 39): a test-only condition kind (``gainNN``: the
clean mix NN dB quieter, no beds) and a test-only formulation (``shout``: the caption in
capitals) are registered from this file alone and run end to end, through the same library and
CLI as the built-in ones: a build records the condition, a clip renders under it, a model ingests
and the oracle and a tiny random-weight CLAP are evaluated under it; a build writes the
formulation's rows and the oracle and bag-of-sounds answer it. Both are unregistered afterwards."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from model_fixtures import stored_vectors, tiny_clap_path
from reasonaudio.cli import app
from reasonaudio.generator.formulations import check_formulation, formulate
from reasonaudio.dataset.condition_kinds import ConditionKind, registered_condition_kinds
from reasonaudio.dataset.conditions import parse_condition
from reasonaudio.errors import DataError
from reasonaudio.tasks.formulation_records import Formulation, registered_formulations

runner = CliRunner()


def _gain_values(m: re.Match[str], where: str) -> dict:
    n = int(m.group(1))
    if m.group(1) != str(n):
        raise DataError(f"{where}: {m.group(0)!r}: write the gain without leading zeros (gain{n})")
    return {"name": f"gain{n}", "params": {"gain_db": float(n)}}


def _gain_mix(r, clip, placed):
    return r.base.events_mix(placed) * 10 ** (-r.condition.param("gain_db") / 20)


GAIN = ConditionKind("gain", r"gain(\d{1,2})", "gainNN (the clean mix NN dB quieter)",
                     parse=_gain_values, params={"gain_db": 0.0}, mix=_gain_mix)
SHOUT = Formulation("shout", derive=str.upper, summary="the caption in capitals")
BUILD = ["--atoms", "synthetic", "--seed", "0", "--clips", "24", "--queries", "10"]


def _cli(*args: str) -> str:
    r = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    return r.output


@pytest.fixture(scope="module")
def records():
    with registered_condition_kinds(GAIN), registered_formulations(SHOUT):
        yield


@pytest.fixture(scope="module")
def built(records, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("records") / "bench"
    _cli("build", "--out", out, *BUILD, "--conditions", "clean,gain6")
    return out


def test_the_records_are_there_only_while_registered():
    with registered_condition_kinds(GAIN), registered_formulations(SHOUT):
        assert parse_condition("gain6").param("gain_db") == 6.0
        with pytest.raises(DataError, match="leading zeros"):
            parse_condition("gain06")
        with pytest.raises(ValueError, match="already registered"):
            with registered_formulations(SHOUT):
                pass
    with pytest.raises(DataError, match="unknown condition 'gain6'; known: clean, snrNN .* and long$"):
        parse_condition("gain6")
    with pytest.raises(ValueError, match="unknown formulation 'shout'"):
        check_formulation("shout")


def test_a_build_records_the_condition_kind(built):
    manifest = json.loads((built / "manifest.json").read_text())
    records = manifest["conditions"]["records"]
    assert [r["name"] for r in records] == ["clean", "gain6"]
    assert records[1]["kind"] == "gain" and records[1]["params"] == {"gain_db": 6.0}
    assert "params" not in records[0] and manifest["conditions"]["beds"] == {}  # no bed check


def test_a_clip_renders_under_the_condition(built, tmp_path):
    for name in ("clean", "gain6"):
        _cli("render", "clip-00003", "--data", built, "-o", tmp_path / f"{name}.wav", "--condition", name)
    clean, sr = sf.read(tmp_path / "clean.wav")
    quiet, sr2 = sf.read(tmp_path / "gain6.wav")
    assert sr == sr2 and len(clean) == len(quiet) and np.abs(clean).max() > 0
    ratio_db = 20 * np.log10(np.sqrt(np.mean(quiet ** 2) / np.mean(clean ** 2)))
    assert abs(ratio_db + 6.0) < 0.05, ratio_db


def test_oracle_and_a_tiny_model_ingest_and_evaluate_under_the_condition(built, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    clap = str(tiny_clap_path())
    _cli("ingest", "--data", built, "--model", "none")
    for cond in ("clean", "gain6"):
        _cli("ingest", "--data", built, "--model", "clap", "--model-path", clap, "--batch-size", "8",
             "--condition", cond)
        _cli("eval", "--data", built, "-r", "oracle", "-r", "clap", "--model-path", clap,
             "--condition", cond)
    saved = built / "results" / "conditions" / "gain6"
    oracle = json.loads((saved / "oracle.json").read_text())
    assert oracle["overall"]["acc@1"] == 1.0
    assert json.loads((saved / "clap.json").read_text())["describe"]["collection"] == "reasonaudio-clap.gain6"
    clean, quiet = (stored_vectors(built, c) for c in ("reasonaudio-clap", "reasonaudio-clap.gain6"))
    assert clean.keys() == quiet.keys() and len(clean) == 24
    assert any(not np.array_equal(clean[c], quiet[c]) for c in clean), "the condition was not heard"


def test_a_build_writes_the_formulation_and_retrievers_answer_it(built, tmp_path):
    rows = [json.loads(line) for line in (built / "formulations.jsonl").read_text().splitlines()]
    caption = {r["query_id"]: r for r in rows if r["formulation"] == "caption"}
    shout = [r for r in rows if r["formulation"] == "shout"]
    assert len(shout) == len(caption) == 10
    assert all(r["text"] == caption[r["query_id"]]["text"].upper() for r in shout)
    assert rows[-1]["formulation"] == "shout"  # written last: the built-in rows keep their bytes
    queries = [json.loads(line) for line in (built / "queries.jsonl").read_text().splitlines()]
    assert [r for r in rows if r["formulation"] != "shout"] == \
        [r for r in formulate(queries, 0) if r["formulation"] != "shout"]
    for form in ("caption", "shout"):
        _cli("eval", "--data", built, "-r", "oracle", "-r", "bag-of-sounds", "--formulation", form,
             "--json", tmp_path / f"{form}.json")
    runs = {f: list(json.loads((tmp_path / f"{f}.json").read_text())["runs"].values())
            for f in ("caption", "shout")}  # oracle, then bag-of-sounds
    assert [r["formulation"] for r in runs["shout"]] == ["shout", "shout"]
    assert runs["shout"][0]["overall"]["acc@1"] == 1.0
    # bag-of-sounds reads the same labels whatever the case
    assert runs["shout"][1]["overall"] == runs["caption"][1]["overall"]
    assert runs["shout"][1]["per_query"] == runs["caption"][1]["per_query"]


def test_a_templated_formulation_is_one_record_plus_its_templates(built):
    """A formulation with its own templates (here for one shape only): rows for that shape's
    queries alone, drawn after the built-in ones, the built-in rows unchanged; training's
    template pool offers its templates unless held out."""
    from reasonaudio.train.data import template_pool

    ask = Formulation("ask", templates={"order": ("is there {A} and afterwards {B}?",)})
    queries = [json.loads(line) for line in (built / "queries.jsonl").read_text().splitlines()]
    before = formulate(queries, 0)
    with registered_formulations(ask):
        rows = formulate(queries, 0)
        pool = [t.id for t in template_pool("order", False, ())]
        held = [t.id for t in template_pool("order", False, ("ask",))]
    added = [r for r in rows if r["formulation"] == "ask"]
    assert [r for r in rows if r["formulation"] != "ask"] == before
    assert {r["query_id"] for r in added} == {q["_id"] for q in queries if q["shape"] == "order"}
    assert all(r["template"] == "order-ask-1" and r["text"].startswith("is there ") for r in added)
    assert "order-ask-1" in pool and "order-ask-1" not in held
