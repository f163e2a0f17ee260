"""User-intent formulations (issue 21): written by every build, read back by the parser, scored."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from reasonaudio.evaluation.results import result_path
from reasonaudio.cli import app
from reasonaudio.querylang.canonical import same_logic
from reasonaudio.generator.formulations import FORMULATIONS, formulate
from reasonaudio.logic import And, Before, Has, Lasts, Not, Overlap, from_json
from reasonaudio.querylang.parser import parse
from reasonaudio.generator.templates import format_slots
from reasonaudio.generator.writer import logic_to_text
from reasonaudio.dataset.benchmark import FORMULATIONS as FORMULATIONS_FILE
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import DataError, QueryParseError
from reasonaudio.atoms.registry import open_bank
from reasonaudio.generator.build import BuildParams, add_formulations, build_benchmark, compose_benchmark
from reasonaudio.tasks.registry import shape, shapes
from reasonaudio.train.data import check_hold_out_formulations, template_pool

from formulation_phrasings import real_labels, tally
from test_parser_fuzz import read_or_refuse

# --- the templates ---------------------------------------------------------------------------

def test_every_shape_has_every_formulation_and_exclusion_only_with_a_negation() -> None:
    for s in shapes():
        negated = "not" in s.summary
        for name in FORMULATIONS[1:]:
            has = bool(s.formulations.get(name))
            assert has == (negated if name == "exclusion" else True), (s.name, name)
        # paraphrases: not a caption template, not a training paraphrase
        assert not set(s.formulations["paraphrase"]) & (set(s.texts) | set(s.paraphrases))


def test_formulations_come_from_their_own_stream_and_the_caption_is_the_query() -> None:
    result = compose_benchmark(BuildParams(n_clips=120, n_queries=40, seed=5), open_bank("synthetic"))
    rows = formulate(result.queries, 5)
    assert rows == formulate(result.queries, 5)
    assert rows != formulate(result.queries, 6)
    captions = [r for r in rows if r["formulation"] == "caption"]
    assert [(r["query_id"], r["text"]) for r in captions] == \
        [(q["_id"], q["text"]) for q in result.queries]
    # the build's own stream is not touched: composing again gives the same queries
    again = compose_benchmark(BuildParams(n_clips=120, n_queries=40, seed=5), open_bank("synthetic"))
    assert again.queries == result.queries


@pytest.fixture(scope="module")
def thousand() -> tuple[list[dict], list[str]]:
    """A 1,000-query build (synthetic bank): its queries and vocabulary."""
    bank = open_bank("synthetic")
    result = compose_benchmark(BuildParams(n_clips=3000, n_queries=1000, seed=3), bank)
    return result.queries, sorted(bank.labels)


def test_the_parser_reads_every_formulation_of_a_thousand_queries_back(thousand) -> None:
    queries, vocab = thousand
    logic = {q["_id"]: from_json(q["logic"]) for q in queries}
    rows = formulate(queries, 3)
    assert {r["formulation"] for r in rows} == set(FORMULATIONS)
    wrong = []
    for r in rows:
        try:
            ok = same_logic(parse(r["text"], vocab), logic[r["query_id"]])
        except QueryParseError as exc:
            ok = False
            r = {**r, "error": str(exc)}
        if not ok:
            wrong.append(r)
    assert wrong == []


def test_every_template_reads_back_over_the_real_sound_labels() -> None:
    vocab = real_labels()
    rng = random.Random(0)
    for s in shapes():
        for name, texts in s.formulations.items():
            for text in texts:
                for _ in range(30):
                    slots = dict(zip(s.labels, rng.sample(vocab, len(s.labels))))
                    if s.numbers:
                        slots["N"] = rng.choice([1.0, 2.0, 5.0, 10.0, 15.0, 20.0])
                    query = text.format(**format_slots(slots))
                    assert same_logic(parse(query, vocab), s.logic(slots)), query


# --- free phrasings and the keyword syntax -----------------------------------------------------

def test_free_phrasings_are_read_right_almost_always_and_never_wrong() -> None:
    vocab = real_labels()
    rng = random.Random(7)
    right, refused, wrong = tally(rng, vocab, 1500)
    assert wrong == []
    assert right / (right + refused) >= 0.95


V = ["dog barking", "siren", "rain", "thunder", "ocean waves", "seagulls crying", "cat meowing",
     "church bell", "clock ticking", "owl hooting"]


@pytest.mark.parametrize("text, logic", [
    ("dog, siren, -rain", And((Has("dog barking"), Has("siren"), Not(Has("rain"))))),
    ("dog barking, siren, NOT rain", And((Has("dog barking"), Has("siren"), Not(Has("rain"))))),
    ("cat meowing -dog barking", And((Has("cat meowing"), Not(Has("dog barking"))))),
    ('"ocean waves" -"seagulls crying"', And((Has("ocean waves"), Not(Has("seagulls crying"))))),
    ("siren -> dog barking", Before("siren", "dog barking")),
    ("siren \u2192 rain", Before("siren", "rain")),
    ("siren + rain together", Overlap("siren", "rain")),
    ("rain 10s", Lasts("rain", 10.0)),
    ("rain 10s -> thunder", And((Lasts("rain", 10.0), Before("rain", "thunder")))),
    ("which clips have a siren and rain but no thunder?",
     And((Has("siren"), Has("rain"), Not(Has("thunder"))))),
    ("find me clips where a siren is followed by rain", Before("siren", "rain")),
    ("search for an owl hooting, then a dog barking", Before("owl hooting", "dog barking")),
    ("list every clip where a clock ticks for 20 seconds", Lasts("clock ticking", 20.0)),
    ("could you please find rain while a siren wails, thanks?", Overlap("rain", "siren")),
    ("looking for 10 seconds of rain", Lasts("rain", 10.0)),
])
def test_keywords_and_wrappers(text, logic) -> None:
    assert same_logic(parse(text, V), logic)


@pytest.mark.parametrize("text", [
    "siren ->", "-> siren", "rain please thunder", "siren every 5 seconds", "siren - > rain",
])
def test_what_cannot_be_read_is_refused_in_one_line(text) -> None:
    with pytest.raises(QueryParseError) as exc:
        parse(text, V)
    assert "\n" not in str(exc.value)


KEYWORD_PIECES = V + ["-rain", "-siren", '-"ocean waves"', "NOT", "AND", "OR", ",", "->", "+",
                      "together", "10s", "5 s", '"church bell"', "then", "no"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(KEYWORD_PIECES), min_size=1, max_size=9))
def test_fuzz_keyword_strings_read_back_the_same(words) -> None:
    logic = read_or_refuse(words, V)
    if logic is None:
        return
    written = logic_to_text(logic)
    assert same_logic(parse(written, V), logic), (words, written)


# --- the build, the manifest, eval --------------------------------------------------------------

runner = CliRunner()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("forms") / "bench"
    build_benchmark(out, BuildParams(n_clips=120, n_queries=30, seed=2))
    return out


def test_the_build_lists_the_file_with_its_hash_and_an_edit_is_caught(tiny, tmp_path) -> None:
    manifest = json.loads((tiny / "manifest.json").read_text())
    assert FORMULATIONS_FILE in manifest["files"]
    assert manifest["formulations"]["stream"] == "reasonaudio-formulations-2"
    bench = load_benchmark(tiny)
    assert set(bench.formulations) == set(FORMULATIONS)
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(tiny, copy)
    path = copy / FORMULATIONS_FILE
    path.write_text(path.read_text().replace("which", "whch", 1))
    with pytest.raises(DataError, match="formulations.jsonl"):
        load_benchmark(copy)


def test_formulate_adds_to_an_older_build_the_rows_a_build_writes(tiny, tmp_path) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(tiny, old)
    (old / FORMULATIONS_FILE).unlink()
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["files"][FORMULATIONS_FILE]
    del manifest["formulations"]
    (old / "manifest.json").write_text(json.dumps(manifest, indent=1))
    with pytest.raises(DataError, match="bench formulate"):
        _ = load_benchmark(old).with_view("question")
    add_formulations(old)
    assert (old / FORMULATIONS_FILE).read_bytes() == (tiny / FORMULATIONS_FILE).read_bytes()
    assert (old / "manifest.json").read_bytes() == (tiny / "manifest.json").read_bytes()


def test_eval_every_formulation_oracle_is_exact_and_results_carry_it(tiny, tmp_path) -> None:
    import shutil

    data = tmp_path / "b"
    shutil.copytree(tiny, data)
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "oracle", "-r", "random",
                              "--formulation", "all", "--json", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    for form in FORMULATIONS:
        key = "oracle" if form == "caption" else f"oracle@{form}"
        assert doc["runs"][key]["formulation"] == form
        assert doc["runs"][key]["overall"]["acc@1"] == 1.0
        assert doc["runs"][key]["failures"] == {}
    assert "consistency@1 oracle: 1.000" in res.output
    saved = json.loads(result_path(load_benchmark(data), "oracle@keywords").read_text())
    assert saved["formulation"] == "keywords"
    report = runner.invoke(app, ["report", "--data", str(data)])
    assert report.exit_code == 0, report.output
    assert "Robustness to the way of asking" in report.output
    assert (data / "results" / "plots" / "robustness.png").is_file()
    cmp = runner.invoke(app, ["compare", "oracle", "random", "--data", str(data),
                              "--formulation", "question"])
    assert cmp.exit_code == 0, cmp.output


def test_an_unknown_formulation_is_one_line_exit_2(tiny) -> None:
    res = runner.invoke(app, ["eval", "--data", str(tiny), "-r", "oracle", "--formulation", "poem"])
    assert res.exit_code == 2
    assert "unknown formulation 'poem'" in res.output and "Traceback" not in res.output


def test_training_holds_formulations_out() -> None:
    pool = {t.id for t in template_pool("negation", False, ("keywords", "paraphrase"))}
    assert any(i.startswith("negation-question-") for i in pool)
    assert not any("-keywords-" in i or "-paraphrase-" in i for i in pool)
    assert {t.id for t in template_pool("negation", False)} == {t.id for t in shape("negation").templates}
    with pytest.raises(DataError, match="caption cannot be held out"):
        check_hold_out_formulations(["caption"])
    with pytest.raises(DataError, match="unknown formulation"):
        check_hold_out_formulations(["poem"])


def test_mteb_sources_ask_each_formulation_as_a_subset(tiny) -> None:
    from reasonaudio.evaluation.mteb_tasks import InFormulation, formulation_subsets, open_source

    subsets = formulation_subsets()
    assert list(subsets) == ["default", *FORMULATIONS[1:]]
    source = open_source(tiny)
    bench = load_benchmark(tiny)
    for subset, select in subsets.items():
        assert isinstance(select, InFormulation)
        rows = source.asked(select.name)
        assert {q.id: q.text for q in rows} == bench.formulations[select.name], subset


# --- the opt-in Count task ---------------------------------------------------------------------

def test_count_shapes_have_formulations_that_read_back_with_wrappers_and_marks() -> None:
    from reasonaudio.logic import Count
    from reasonaudio.tasks.registry import shapes_of
    vocab = real_labels()
    rng = random.Random(1)
    counted = shapes_of("count")
    assert {s.name for s in counted} == {"count", "count-then"}
    for s in counted:
        assert not s.formulations.get("exclusion")
        for name in FORMULATIONS[1:-1]:
            assert s.formulations.get(name), (s.name, name)
        assert not set(s.formulations["paraphrase"]) & (set(s.texts) | set(s.paraphrases))
        for texts in s.formulations.values():
            for text in texts:
                for _ in range(20):
                    slots = dict(zip(s.labels, rng.sample(vocab, len(s.labels))))
                    slots["K"] = rng.choice([2, 3, 4, 5])
                    query = text.format(**format_slots(slots))
                    assert same_logic(parse(query, vocab), s.logic(slots)), query
    labels = ["door knock", "siren", "rain"]
    then = And((Count("door knock", 2), Before("door knock", "siren")))
    for text, want in [("knocking twice, then a siren", then),
                       ("could you please find knocking twice, then a siren, thanks?", then),
                       ("door knock 2 times -> siren", then),
                       ("door knock twice + rain", And((Count("door knock", 2), Has("rain")))),
                       ("exactly two door knocks", Count("door knock", 2)),
                       ("show me exactly two door knocks please", Count("door knock", 2)),
                       ("exactly two door knocks, -rain", And((Count("door knock", 2),
                                                                Not(Has("rain")))))]:
        assert same_logic(parse(text, labels), want), text


# --- scoring per formulation: multiple choice, held-out marks, the training recipe ------------

def test_robustness_scores_multiple_choice_and_marks_held_out_formulations(tiny, tmp_path) -> None:
    import shutil

    from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
    from reasonaudio.evaluation.robustness import robustness
    from reasonaudio.views.robustness import robustness_markdown

    data = tmp_path / "b"
    shutil.copytree(tiny, data)
    bench = load_benchmark(data)
    done = {}
    for form in FORMULATIONS:
        done.update(evaluate_retrievers(bench.with_view(form), ["oracle", "random"],
                                        EvalContext()).runs)
    rob = robustness(bench, ["oracle", "random"], ("acc@1", "ndcg@10", "mc_acc"))
    assert rob.metrics == ("acc@1", "ndcg@10", "mc_acc") and [r.name for r in rob.rows] == ["oracle", "random"]
    for row in rob.rows:
        assert [c.formulation for c in row.cells] == list(FORMULATIONS)
        for c in row.cells:
            key = row.name if c.formulation == "caption" else f"{row.name}@{c.formulation}"
            mc = [v["mc_acc"] for v in done[key].per_query.values() if "mc_acc" in v]
            assert c.values["mc_acc"] == pytest.approx(sum(mc) / len(mc))  # choice queries only
    oracle = rob.rows[0]
    assert all(c.values == {"acc@1": 1.0, "ndcg@10": 1.0, "mc_acc": 1.0} for c in oracle.cells)
    import io

    from rich.console import Console

    from reasonaudio.views.robustness import print_robustness

    out = io.StringIO()
    print_robustness(Console(file=out, width=80), rob, ("keywords",))  # three metrics: two tables
    assert "…" not in out.getvalue() and "keywords (held out)" in out.getvalue()
    lines = robustness_markdown(rob, ("keywords", "paraphrase"))
    marked = [line for line in lines if "(held out)" in line]
    assert len(marked) == 4 and all("| keywords (held out) |" in m or "| paraphrase (held out) |" in m
                                    for m in marked)
    assert "| `oracle` | caption | 30 | 1.000 |  | 1.000 |  | 1.000 |  |" in lines
    assert lines[-1].startswith("consistency@1") and "`oracle` 1.000 (30 of 30)" in lines[-1]


def test_a_recipe_holding_formulations_out_reads_back_from_its_card() -> None:
    """The model card stores the recipe as JSON; a rerun reuses the model only when the recipe
    it would train equals the card's (a tuple never equals the list JSON reads back)."""
    from reasonaudio.train.data import DataOptions

    recipe = DataOptions(hold_out_formulations=("keywords", "paraphrase")).to_json()
    assert json.loads(json.dumps(recipe)) == recipe
    assert DataOptions().to_json()["hold_out_formulations"] is None
