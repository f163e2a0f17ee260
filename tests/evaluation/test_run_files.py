"""`bench eval --run NAME=PATH`: run files made elsewhere score exactly like built-in runs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.view import load_benchmark

runner = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """A small benchmark with the built-in runs of random (no ties) and oracle (all ties) at full
    depth, written by `bench eval --trec`, and their saved figures."""
    from reasonaudio.generator.build import BuildParams, build_benchmark

    root = tmp_path_factory.mktemp("byo-runs")
    data = root / "bench"
    build_benchmark(data, BuildParams(atoms="synthetic", seed=3, n_clips=80, n_queries=20))
    runs = root / "runs"
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "random", "-r", "oracle",
                              "-k", "80", "--trec", str(runs), "--json", str(root / "builtin.json")])
    assert res.exit_code == 0, res.output
    figures = json.loads((root / "builtin.json").read_text())["runs"]
    return {"data": data, "runs": runs, "figures": figures, "root": root}


def _copy(built: dict, tmp_path: Path) -> Path:
    """A private copy of the benchmark so saved results of one test never meet another's."""
    dst = tmp_path / "bench"
    shutil.copytree(built["data"], dst, ignore=shutil.ignore_patterns("results", "qdrant"))
    return dst


def _eval_runs(data: Path, out: Path, *runs: str, k: int = 80) -> tuple[dict, str]:
    args = ["eval", "--data", str(data), "-k", str(k), "--json", str(out)]
    for r in runs:
        args += ["--run", r]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())["runs"], res.output


def _same(a: dict, b: dict) -> None:
    for key in ("overall", "per_task", "per_query"):
        assert a[key] == b[key], key


def test_builtin_runs_score_back_identically(built, tmp_path):
    data = _copy(built, tmp_path)
    got, out = _eval_runs(data, tmp_path / "ext.json", f"rnd={built['runs'] / 'random.trec'}",
                          f"orc={built['runs'] / 'oracle.trec'}")
    _same(got["rnd"], built["figures"]["random"])
    _same(got["orc"], built["figures"]["oracle"])  # oracle ties: the tie rule is the testbed's
    assert got["rnd"]["describe"]["kind"] == "external run"
    assert got["rnd"]["describe"]["tie_rule"] == "score descending, then clip id ascending"
    # saved like any retriever: compare and report find them without recomputation
    res = runner.invoke(app, ["compare", "orc", "rnd", "--data", str(data)])
    assert res.exit_code == 0, res.output
    assert "no saved results" not in res.output
    res = runner.invoke(app, ["report", "--data", str(data), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 0, res.output
    assert "orc" in res.output and "rnd" in res.output


def _ranx_lines(run: dict[str, dict[str, float]], name: str) -> str:
    """Exactly what ranx 0.3's ``Run.save(path, kind="trec")`` writes: per query, clips by score
    descending, ``f"{q_id} Q0 {doc_id} {rank+1} {score} {self.name}"``, the name verbatim."""
    lines = []
    for qid, per in run.items():
        ordered = sorted(per.items(), key=lambda kv: -kv[1])
        lines += [f"{qid} Q0 {cid} {r + 1} {score} {name}" for r, (cid, score) in enumerate(ordered)]
    return "\n".join(lines) + "\n"


def _scores_of(trec: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in trec.read_text().splitlines():
        q, _, c, _, s, _ = line.split()
        out.setdefault(q, {})[c] = float(s)
    return out


def test_third_party_trec_writer_reads_the_same(built, tmp_path):
    data = _copy(built, tmp_path)
    scores = _scores_of(built["runs"] / "random.trec")
    (tmp_path / "ranx-format.trec").write_text(_ranx_lines(scores, "my model"))  # a spaced tag
    got, _ = _eval_runs(data, tmp_path / "a.json", f"hand={tmp_path / 'ranx-format.trec'}")
    _same(got["hand"], built["figures"]["random"])


def test_ranx_run_save_reads_the_same(built, tmp_path):
    ranx = pytest.importorskip("ranx")
    data = _copy(built, tmp_path)
    run = ranx.Run(_scores_of(built["runs"] / "random.trec"), name="ranx-run")
    run.save(str(tmp_path / "ranx.trec"), kind="trec")
    got, _ = _eval_runs(data, tmp_path / "a.json", f"viaranx={tmp_path / 'ranx.trec'}")
    _same(got["viaranx"], built["figures"]["random"])


def test_json_run_reads_the_same(built, tmp_path):
    data = _copy(built, tmp_path)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_scores_of(built["runs"] / "random.trec")))
    got, _ = _eval_runs(data, tmp_path / "a.json", f"js={path}")
    _same(got["js"], built["figures"]["random"])


def test_ties_follow_the_testbed_rule_not_the_rank_column(built, tmp_path):
    data = _copy(built, tmp_path)
    bench = load_benchmark(data)
    q = bench.queries[0]
    rel = sorted(bench.qrels[q.id])[0]
    others = [c.id for c in bench.clips if c.id != rel][:3]
    tied = sorted(others + [rel])
    # every clip tied; the file ranks them in reverse id order (trec_eval's own tie order)
    lines = [f"{q.id} Q0 {cid} {r} 0.5 t" for r, cid in enumerate(reversed(tied), 1)]
    (tmp_path / "tied.trec").write_text("\n".join(lines) + "\n")
    got, out = _eval_runs(data, tmp_path / "a.json", f"tied={tmp_path / 'tied.trec'}")
    saved = (data / "results" / "runs" / "tied.trec").read_text().splitlines()
    assert [line.split()[2] for line in saved] == tied
    want_rr = 1.0 / (tied.index(rel) + 1)
    assert math.isclose(got["tied"]["per_query"][q.id]["mrr"], want_rr)
    assert "tied scores" in out and "clip id ascending" in out


def test_missing_queries_warn_once_and_score_zero(built, tmp_path):
    data = _copy(built, tmp_path)
    bench = load_benchmark(data)
    keep = bench.queries[0].id
    lines = [line for line in (built["runs"] / "oracle.trec").read_text().splitlines()
             if line.split()[0] == keep]
    (tmp_path / "one.trec").write_text("\n".join(lines) + "\n")
    got, out = _eval_runs(data, tmp_path / "a.json", f"one={tmp_path / 'one.trec'}")
    assert out.count("not in the run file") == 1
    per = got["one"]["per_query"]
    assert per[keep]["acc@1"] == 1.0
    others = [q.id for q in bench.queries if q.id != keep]
    assert all(per[q]["acc@1"] == 0 and per[q]["ndcg@10"] == 0 and per[q]["mc_acc"] == 0.5
               for q in others)
    assert set(got["one"]["failures"]) == set(others)


def test_mc_from_run_scores_absent_clip_is_minus_inf(built, tmp_path):
    data = _copy(built, tmp_path)
    bench = load_benchmark(data)
    ch = bench.choices[0]
    (tmp_path / "pos.trec").write_text(f"{ch.query_id} Q0 {ch.positive} 1 -5.0 t\n")
    (tmp_path / "neg.trec").write_text(f"{ch.query_id} Q0 {ch.negative} 1 -5.0 t\n")
    got, _ = _eval_runs(data, tmp_path / "a.json", f"pos={tmp_path / 'pos.trec'}",
                        f"neg={tmp_path / 'neg.trec'}")
    assert got["pos"]["per_query"][ch.query_id]["mc_acc"] == 1.0
    assert got["neg"]["per_query"][ch.query_id]["mc_acc"] == 0.0


@pytest.mark.parametrize("content, message", [
    ("", "0 rows"),
    ("q-9999 Q0 clip-00000 1 1.0 t\n", "unknown query id"),
    ("{q} Q0 clip-99999 1 1.0 t\n", "unknown clip id"),
    ("{q} Q0 clip-00000 1 1.0 t\n{q} Q0 clip-00000 2 0.5 t\n", "twice"),
    ("{q} Q0 clip-00000 1 nan t\n", "NaN"),
    ("{q} Q0 clip-00000 1.0\n", "expected 6 fields"),
    ("{q} Q0 clip-00000 0.7 1 t\n", "rank must be an integer"),
    ('{{"{q}": {{"clip-00000": 1.0, "clip-00000": 2.0}}}}', "twice"),
    ('{{"{q}": {{"clip-00000": "high"}}}}', "must be a number"),
    ('{{"q-9999": {{"clip-00000": 1.0}}}}', "unknown query id"),
])
def test_bad_runs_one_line_exit_2_nothing_saved(built, tmp_path, content, message):
    data = _copy(built, tmp_path)
    qid = load_benchmark(data).queries[0].id
    path = tmp_path / "bad.run"
    path.write_text(content.format(q=qid))
    res = runner.invoke(app, ["eval", "--data", str(data), "--run", f"good={built['runs'] / 'random.trec'}",
                              "--run", f"bad={path}"])
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
    assert not (data / "results").exists()  # the good file was not saved either


def test_run_names_must_be_new(built, tmp_path):
    data = _copy(built, tmp_path)
    trec = built["runs"] / "random.trec"
    for args in (["--run", f"oracle={trec}"], ["--run", f"x={trec}", "--run", f"x={trec}"],
                 ["--run", f"vectors:foo={trec}"], ["--run", "justaname"], []):
        res = runner.invoke(app, ["eval", "--data", str(data), *args])
        assert res.exit_code == 2, (args, res.output)
        assert len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["oracle@question", "random@interleaved", "mine@question",
                                  "oracle @ snr5"])
def test_a_run_never_takes_a_builtin_key_or_another_views_name(built, tmp_path, name):
    """A run's name never holds the view tag '@': under the caption view, `oracle@question` would
    be saved under the very name the oracle's question-view result is (and `mine@question` under
    the run mine's). Refused in one line, the saved results untouched."""
    data = _copy(built, tmp_path)
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "oracle", "--formulation", "question"])
    assert res.exit_code == 0, res.output
    before = {p.name: p.read_bytes() for p in sorted((data / "results").rglob("*")) if p.is_file()}
    res = runner.invoke(app, ["eval", "--data", str(data), "--run", f"{name}={built['runs'] / 'random.trec'}"])
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and "'@'" in res.output
    after = {p.name: p.read_bytes() for p in sorted((data / "results").rglob("*")) if p.is_file()}
    assert after == before
