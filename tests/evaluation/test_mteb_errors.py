"""The MTEB bridges refuse what they cannot do in one line, and mteb is imported only when used."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.errors import DataError, ModelError

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _one_line_error(res, *words: str) -> None:
    assert res.exit_code == 2, res.output
    text = res.output.strip()
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    for w in words:
        assert w in text, text


def test_importing_the_cli_and_registries_does_not_import_mteb():
    code = ("import sys; import reasonaudio.cli, reasonaudio.retrievers.registry, "
            "reasonaudio.models.registry, reasonaudio.evaluation.run_files, reasonaudio.evaluation.external; "
            "print(sorted(m for m in ('mteb', 'datasets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
                                          "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_retriever_listing_names_the_family():
    from reasonaudio.retrievers.registry import retriever_names, spec_for

    assert "mteb:laion/clap-htsat-unfused" in retriever_names()
    assert spec_for("mteb:laion/clap-htsat-fused").name == "mteb:"


def test_constants_agree():
    from reasonaudio.evaluation import mteb_results
    from reasonaudio.models import mteb_models

    assert (mteb_results.PREFIX, mteb_results.SPLIT, mteb_results.SUBSET) == (
        mteb_models.PREFIX, mteb_models.SPLIT, mteb_models.SUBSET)
    assert mteb_results.PREDICTIONS == f"{mteb_models.OVERALL_TASK}_predictions.json"


def test_licences():
    from reasonaudio.models.mteb_models import mteb_licence

    assert mteb_licence(["CC0-1.0"]) == "cc0-1.0"
    assert mteb_licence(["CC0-1.0", "MIT"]) == "multiple"
    assert mteb_licence(["procedural (no recording)"]) == "not specified"
    assert mteb_licence([]) == "not specified"


needs_mteb = pytest.mark.skipif(importlib.util.find_spec("mteb") is None, reason="mteb not installed")


@needs_mteb
@pytest.mark.parametrize("name, words", [
    ("mteb:nobody/no-such-model", ["MTEB knows no model", "nobody/no-such-model"]),
    ("mteb:sentence-transformers/all-MiniLM-L6-v2", ["handles text", "needs both audio and text"]),
    ("mteb:", ["name an MTEB model"]),
])
def test_bad_mteb_names_at_ingest(tiny_bench_dir, tmp_path, name, words):
    from model_fixtures import copy_bench

    data = copy_bench(tiny_bench_dir, tmp_path / "bench")
    _one_line_error(runner.invoke(app, ["ingest", "--data", str(data), "--model", name]), *words)


@needs_mteb
def test_bad_mteb_name_at_eval(tiny_bench_dir, tmp_path):
    from model_fixtures import copy_bench

    data = copy_bench(tiny_bench_dir, tmp_path / "bench")
    res = runner.invoke(app, ["eval", "--data", str(data),
                              "-r", "mteb:sentence-transformers/all-MiniLM-L6-v2"])
    _one_line_error(res, "handles text")


@needs_mteb
def test_a_dot_product_model_is_refused():
    from mteb.models import ModelMeta

    from reasonaudio.models.mteb_models import model_meta, register, registry

    meta = ModelMeta(loader=None, name="reasonaudio-test/dot-audio", revision="r1", release_date=None,
                     languages=None, n_parameters=None, memory_usage_mb=None, max_tokens=None,
                     embed_dim=8, license=None, open_weights=True, public_training_code=None,
                     public_training_data=None, framework=["PyTorch"], similarity_fn_name="dot",
                     use_instructions=False, training_datasets=None, modalities=["audio", "text"])
    register(meta, replace=True)
    try:
        with pytest.raises(ModelError, match="scores by dot"):
            model_meta("mteb:reasonaudio-test/dot-audio")
    finally:
        registry().pop(meta.name, None)


@needs_mteb
def test_model_path_does_not_apply():
    from reasonaudio.models.registry import load_model

    with pytest.raises(ModelError, match="--model-path does not apply"):
        load_model("mteb:laion/clap-htsat-unfused", model_path="/nowhere")


@needs_mteb
def test_an_unloadable_mteb_model_is_one_line(tiny_bench_dir):
    """Offline, MTEB's own CLAP loader cannot fetch its weights (or misses its extra): one line."""
    from reasonaudio.models.registry import load_model

    with pytest.raises(ModelError, match="MTEB cannot load 'laion/clap-htsat-unfused' here"):
        load_model("mteb:laion/clap-htsat-unfused")


@needs_mteb
def test_sources_refused(tmp_path):
    from reasonaudio.evaluation.mteb_tasks import mteb_tasks

    with pytest.raises(DataError, match="neither a benchmark directory"):
        mteb_tasks(tmp_path)
    (tmp_path / "reasonaudio-export.json").write_text(json.dumps(
        {"benchmark": {"manifest_sha256": "0" * 64, "seed": 0}, "options": {"audio": "none"}}))
    with pytest.raises(DataError, match="--audio none"):
        mteb_tasks(tmp_path)


@needs_mteb
def test_unknown_task_refused(tiny_bench_dir):
    from reasonaudio.evaluation.mteb_tasks import mteb_tasks

    with pytest.raises(DataError, match="unknown task 'sarcasm'"):
        mteb_tasks(tiny_bench_dir, tasks=["sarcasm"])


def test_predictions_with_two_subsets_refused(tiny_bench_dir, tmp_path):
    from reasonaudio.dataset.view import load_benchmark

    bench = load_benchmark(tiny_bench_dir)
    q, c = bench.queries[0].id, bench.clips[0].id
    pred = tmp_path / "X_predictions.json"
    pred.write_text(json.dumps({"mteb_model_meta": {"model_name": "m", "revision": "r"},
                                "a": {"test": {q: {c: 1.0}}}, "b": {"test": {q: {c: 1.0}}}}))
    res = runner.invoke(app, ["eval", "--data", str(tiny_bench_dir), "--run", f"x={pred}"])
    _one_line_error(res, "one subset/split expected", "a/test, b/test")


def test_without_mteb_installed_one_line(tiny_bench_dir, tmp_path, monkeypatch):
    """Where mteb is missing, every bridge says how to install it (before evaluating anything)."""
    import importlib.util as iu

    from model_fixtures import copy_bench

    from reasonaudio.models import mteb_models

    data = copy_bench(tiny_bench_dir, tmp_path / "bench")

    real = iu.find_spec
    monkeypatch.setattr(mteb_models.importlib.util, "find_spec",
                        lambda name, *a: None if name == "mteb" else real(name, *a))
    with pytest.raises(ModelError, match=r"reasonaudio\[mteb\]"):
        mteb_models.model_meta("mteb:laion/clap-htsat-unfused")
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "random",
                              "--mteb-results", str(tmp_path / "out")])
    _one_line_error(res, "pip install 'reasonaudio[mteb]'")
    assert not (tmp_path / "out").exists() and not (data / "results").exists()
