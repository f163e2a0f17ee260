"""`bench replicate` (issue 52, item 3): retrievers on K builds of other seeds, the table over seeds
and each docs claim's holds-on-k-of-K, checked against a computation of their own from the saved
per-query results; the claims block written from its JSON; hostile inputs."""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from pathlib import Path

import pytest

from hostile import bench, one_line_error

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (100, 200, 300)
NAMES = ("oracle", "bag-of-sounds", "random")


def _args(out: Path, *extra: str) -> list[str]:
    return ["replicate", "--atoms", "synthetic", "--clips", "60", "--queries", "20",
            "--out", str(out), *extra]


@pytest.fixture(scope="module")
def replicated(tmp_path_factory) -> tuple[Path, dict, str]:
    out = tmp_path_factory.mktemp("rep")
    run = bench(*_args(out / "builds", "--data-seeds", ",".join(map(str, SEEDS)),
                       *(x for n in NAMES for x in ("-r", n)), "--json", str(out / "rep.json")))
    assert run.exit_code == 0, run.output
    return out, json.loads((out / "rep.json").read_text()), run.stdout


def _saved(out: Path, seed: int):
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.evaluation.results import load_results

    return load_results(load_benchmark(out / "builds" / f"seed-{seed}" / "bench"))


def test_table_and_seeds_match_the_saved_per_query_results(replicated):
    out, doc, stdout = replicated
    assert [s["build"] for s in doc["seeds"]] == list(SEEDS)
    assert doc["reference"] == {"seed": 0, "calibration_seeds": [1, 2]}
    assert "Acc@1 over 3 seeds" in stdout and "MC over 3 seeds" in stdout and "holds" in stdout
    for name in NAMES:
        for group in doc["groups"]:
            for metric in ("acc@1", "mc_acc"):
                per_seed = []
                for seed in SEEDS:
                    r = _saved(out, seed).runs[name]
                    qids = [q for q, t in r.task_of.items() if group == "overall" or t == group]
                    vals = [r.per_query[q][metric] for q in qids if metric in r.per_query[q]]
                    per_seed.append(sum(vals) / len(vals))
                cell = doc["table"][name][group][metric]
                assert cell["per_seed"] == pytest.approx(per_seed)
                assert cell["mean"] == pytest.approx(statistics.mean(per_seed))
                half = 4.302652729911275 * statistics.stdev(per_seed) / 3 ** 0.5  # t(0.975, 2)
                lo, hi = cell["interval"]
                assert lo == pytest.approx(max(0.0, statistics.mean(per_seed) - half))
                assert hi == pytest.approx(min(1.0, statistics.mean(per_seed) + half))


def _holm(ps: list[float]) -> list[float]:
    """Holm by its definition: adjusted p_(i) = max over j <= i of min(1, (m - j) p_(j))."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out = [0.0] * len(ps)
    for rank, i in enumerate(order):
        out[i] = max(min(1.0, (len(ps) - j) * ps[order[j]]) for j in range(rank + 1))
    return out


def test_claims_hold_on_k_of_k_as_an_independent_count_says(replicated):
    from reasonaudio.evaluation.significance import paired_randomization_test

    out, doc, _ = replicated
    rows = {r["key"]: r for r in doc["claims"]}
    assert rows and all(r["a"] == "oracle" and r["b"] == "bag-of-sounds" for r in rows.values())
    tasks = [g for g in doc["groups"] if g != "overall"]
    for row in rows.values():
        holds = 0
        for i, seed in enumerate(SEEDS):
            a, b = (_saved(out, seed).runs[n] for n in (row["a"], row["b"]))

            def test(group):
                q = sorted(x for x, t in a.task_of.items() if group == "overall" or t == group)
                return paired_randomization_test([a.per_query[x][row["metric"]] for x in q],
                                                 [b.per_query[x][row["metric"]] for x in q])
            if row["task"] == "overall":
                t, p_holm = test("overall"), test("overall").p_value
            else:
                family = [test(g) for g in tasks]
                t, p_holm = family[tasks.index(row["task"])], _holm([f.p_value for f in family])[tasks.index(row["task"])]
            got = row["per_seed"][i]
            assert got["effect"] == pytest.approx(t.diff) and got["p_holm"] == pytest.approx(p_holm)
            ok = (t.diff > 0 if row["direction"] == "above" else t.diff < 0) and p_holm < 0.05
            assert got["holds"] is ok
            holds += ok
        assert row["holds"] == holds and row["seeds"] == 3
        assert f"{holds} of 3" in _
    assert any(r["holds"] > 0 for r in rows.values())  # the oracle's overall lead, at least


def test_same_seeds_same_json_bytes(replicated, tmp_path):
    out, _, _ = replicated
    again = bench(*_args(out / "builds", "--data-seeds", ",".join(map(str, SEEDS)),
                         *(x for n in NAMES for x in ("-r", n)), "--json", str(tmp_path / "again.json")))
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again.json").read_bytes() == (out / "rep.json").read_bytes()


def _page_script():
    spec = importlib.util.spec_from_file_location("claims_page", ROOT / "scripts" / "claims_page.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["claims_page"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_claims_block_is_written_from_the_json_and_says_only_k_of_k(replicated):
    mod = _page_script()
    _, doc, _ = replicated
    page = "x\n<!-- claims:evaluation -->\nstale\n<!-- /claims:evaluation -->\ny\n"
    new = mod.rewrite(page, doc)
    assert "stale" not in new and mod.rewrite(new, doc) == new
    for row in doc["claims"]:
        phrase = mod.holds_phrase(row["holds"], 3)
        line = next(ln for ln in new.splitlines() if ln.startswith(f"- `{row['a']}` above `{row['b']}`")
                    and f": {phrase}: " in ln)
        assert f"{row['task']} {row['mean_effect']:+.3f}" in line
    assert "not in this run" in new  # the registry's claim on two-stage:oracle-caption+minilm
    assert mod.holds_phrase(2, 3) == "holds on only 2 of 3 seeds"
    assert mod.holds_phrase(3, 3) == "holds on all 3 seeds"
    assert mod.holds_phrase(0, 3) == "holds on none of the 3 seeds"
    assert "--data-seeds 100,200,300" in new and "--atoms synthetic" in new
    assert "--detector-model" not in new  # the command names the model only when one was given
    with_model = {**doc, "detector_model": "data/demo-full/detector/model-k"}
    assert "--detector-model data/demo-full/detector/model-k --json" in mod.command_of(with_model)


def test_the_docs_blocks_name_only_known_pages_and_every_claim_is_well_formed():
    from reasonaudio.experiments.claims import CLAIMS, check_claims

    check_claims(CLAIMS)
    mod = _page_script()
    found = {m.group("name") for doc in mod.DOCS for m in mod.BLOCK.finditer(doc.read_text(encoding="utf-8"))}
    assert found and all(n == mod.ALL or n in {Path(c.doc).stem for c in CLAIMS} for n in found)


def test_seeds_must_be_disjoint_from_each_other_the_reference_and_training():
    from reasonaudio.errors import DataError
    from reasonaudio.experiments.replicate import check_seeds, default_seeds

    check_seeds(0, (100, 200, 300))
    for seeds, training, needle in (((100, 101), (), "seed 101"), ((2, 100), (), "seed 2"),
                                    ((100, 200), (201,), "seed 201"), ((100, 100), (), "seed 100")):
        with pytest.raises(DataError, match=needle):
            check_seeds(0, seeds, training)
    assert default_seeds(0, 3, taken=(201,)) == (100, 300, 400)


@pytest.mark.parametrize("extra, needles", [
    (("-r", "oracel"), ("unknown retriever", "oracel")),
    (("--data-seeds", "100,101"), ("--data-seeds", "seed 101")),
    (("--data-seeds", "100"), ("--data-seeds", "at least 2")),
    (("--replicates", "1"), ("--replicates", "at least 2")),
    (("--data-seeds", "100,x"), ("--data-seeds", "'x'")),
    (("--data-seeds", "100,200", "--replicates", "3"), ("--replicates 3",)),
    (("--data-seeds", "0,200"), ("seed 0",)),
    (("-r", "detected:yamnet-trained"), ("--detector-model",)),
])
def test_bad_input_is_one_line_and_nothing_is_built(tmp_path, extra, needles):
    out = tmp_path / "builds"
    one_line_error(bench(*_args(out, *extra)), *needles)
    assert not out.exists()
