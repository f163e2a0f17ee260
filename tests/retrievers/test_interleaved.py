"""Interleaved queries (issue 28): a sound given by an audio example inside a reasoning query.

A small synthetic build with ``--interleaved 0.5``: the files and their determinism, the
untouched named build, the placeholder rule, the oracle's ceiling with true labels, the
perceived-example oracle's loss against the tagger's error, each retriever's reading, the named vs
by-example table, and hostile examples refused in one line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from hostile import bench, one_line_error
from reasonaudio.evaluation.by_example import by_example, evaluate_interleaved
from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.querylang.examples import ExampleLabel, names_in, placeholder
from reasonaudio.querylang.parser import parse, parse_detailed, same_logic
from reasonaudio.querylang.resolve import ResolveOptions
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.interleaved import INTERLEAVED, Example, example_path, examples, interleaved_rows
from reasonaudio.errors import DataError, QueryParseError
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.generator.interleave import add_interleaved

BUILD = dict(atoms="synthetic", seed=0, n_clips=80, n_queries=20)
SHARE = 0.5
NAMED_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "choices.jsonl", "atoms.jsonl",
               "formulations.jsonl")


def _bytes(root: Path, names) -> dict[str, bytes]:
    return {n: (root / n).read_bytes() for n in names}


def _example_files(root: Path) -> dict[str, bytes]:
    names = ["interleaved.jsonl", "examples.jsonl"] + sorted(
        f"examples/{p.name}" for p in (root / "examples").glob("*.wav"))
    return _bytes(root, names)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(a build with --interleaved 0.5, the same build without it)."""
    root = tmp_path_factory.mktemp("interleaved")
    build_benchmark(root / "with", BuildParams(**BUILD, interleaved=SHARE))
    build_benchmark(root / "plain", BuildParams(**BUILD))
    return root / "with", root / "plain"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    shutil.rmtree(dst / "results", ignore_errors=True)
    return dst


# --- data ------------------------------------------------------------------------------------

def test_named_files_untouched_and_plain_build_has_nothing_new(built):
    """The build's own stream does not move: queries, qrels, choices, formulations byte-equal;
    a build without the flag writes none of the new files and no new manifest field."""
    with_, plain = built
    assert _bytes(with_, NAMED_FILES) == _bytes(plain, NAMED_FILES)
    assert not (plain / "interleaved.jsonl").exists() and not (plain / "examples").exists()
    manifest = json.loads((plain / "manifest.json").read_text())
    assert "interleaved" not in manifest and "interleaved" not in manifest["parameters"]
    assert "interleaved" not in BuildParams().to_json()


def test_files_listed_with_sha256_and_same_as_bench_interleave(built, tmp_path):
    """Every file (each wav by path) is in the manifest; `bench interleave` on the plain build
    writes byte-identical files (one seeded stream, the same inputs)."""
    with_, plain = built
    manifest = json.loads((with_ / "manifest.json").read_text())
    files = _example_files(with_)
    assert set(files) <= set(manifest["files"])
    rec = manifest["interleaved"]
    assert rec["stream"] == "reasonaudio-interleaved-0" and rec["share"] == SHARE
    assert rec["queries"] == sum(rec["queries_by_task"].values()) == len(interleaved_rows(load_benchmark(with_).files))
    later = _copy(plain, tmp_path / "later")
    add_interleaved(later, SHARE)
    assert _example_files(later) == files
    with pytest.raises(DataError, match="already has interleaved"):
        add_interleaved(later, SHARE)


def test_variants_keep_query_and_examples_are_other_recordings(built):
    b = load_benchmark(built[0])
    found = examples(b.files)
    positive = {c.query_id: c.positive for c in b.choices}
    for qid, row in interleaved_rows(b.files).items():
        q = b.query_by_id[qid]
        assert names_in(row.text) == list(row.examples)
        ex = found[row.examples[0]]
        assert ex.label == row.slots[0] and ex.label in q.logic.__repr__()
        back = row.text.replace(placeholder(ex.example_id), ex.label)
        assert same_logic(parse(back, b.labels), q.logic)
        used = b.clip_by_id[positive[qid]].event(ex.label).atom_id
        assert ex.same_recording == (ex.atom_id == used)
        assert ex.same_recording or len([a for a in b.atoms if a.label == ex.label]) > 1
        wave, sr = sf.read(str(example_path(b.files, ex)))
        assert sr == ex.sample_rate and abs(len(wave) / sr - ex.duration) < 1e-6
        assert np.max(np.abs(wave)) > 0


def test_tampered_example_is_refused(built, tmp_path):
    root = _copy(built[0], tmp_path / "tampered")
    wav = sorted((root / "examples").glob("*.wav"))[0]
    data = bytearray(wav.read_bytes())
    data[-1] ^= 1
    wav.write_bytes(bytes(data))
    with pytest.raises(DataError, match=wav.name):
        load_benchmark(root)


def test_example_paths_stay_inside_the_benchmark(built, tmp_path):
    with pytest.raises(DataError, match="must lie under examples/"):
        Example.from_json({"example_id": "ex-0", "label": "x", "atom_id": "a", "offset": 0,
                           "same_recording": False, "path": "../../etc/passwd",
                           "sample_rate": 48000, "duration": 1, "sha256": "0"}, "examples.jsonl:1")
    root = _copy(built[0], tmp_path / "linked")
    outside = tmp_path / "outside.wav"
    sf.write(str(outside), np.zeros(480, dtype=np.float32) + 0.1, 48000)
    b = load_benchmark(root, verify=False)
    ex = next(iter(examples(b.files).values()))
    (root / ex.path).unlink()
    (root / ex.path).symlink_to(outside)
    with pytest.raises(DataError, match="outside the benchmark"):
        example_path(b.files, ex)


# --- the placeholder rule --------------------------------------------------------------------

def test_placeholder_grammar_and_parser():
    labels = ["dog barking", "siren", "rain"]
    assert names_in("<audio:ex-0001> then <audio:my-dog>") == ["ex-0001", "my-dog"]
    for bad in ("<audio:Ex>", "<audio:>", "<audio:a_b>", "<audio:-x>"):
        with pytest.raises(QueryParseError, match="not a valid example name"):
            names_in(bad)
    with pytest.raises(QueryParseError, match="no label for this example"):
        parse("<audio:ex-0001>, then dog barking", labels)
    opts = ResolveOptions(examples={"ex-0001": ExampleLabel("siren", "tagger", 0.61)})
    got = parse_detailed("<audio:ex-0001>, then dog barking, but no rain", labels, opts)
    assert same_logic(got.logic, parse("siren, then dog barking, but no rain", labels))
    assert "'<audio:ex-0001>' -> siren (example, tagger 0.61)" in got.notes


# --- scoring ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def evaluated(built, tmp_path_factory):
    """The interleaved build with oracle, oracle-perceived, bag-of-sounds and random evaluated
    named and by example (the real tagger reads the examples)."""
    root = _copy(built[0], tmp_path_factory.mktemp("eval") / "b")
    b = load_benchmark(root)
    names = ["oracle", "oracle-perceived", "bag-of-sounds", "random"]
    named = evaluate_retrievers(b, names, EvalContext())
    inter = evaluate_interleaved(b, names, EvalContext())
    return b, named, inter


def test_oracle_with_true_labels_is_the_ceiling(evaluated):
    b, named, inter = evaluated
    r = inter.runs["oracle@interleaved"]
    assert r.formulation == "interleaved" and not r.failures
    assert len(r.per_query) == len(interleaved_rows(b.files))
    assert all(v["acc@1"] == 1.0 for v in r.per_query.values())


def heard_as(b, label_of):
    """The build's examples (an ``ExampleSet`` over the interleaved view) with the tagger's
    hearing set by hand: each example heard as ``label_of(example)``; YAMNet never runs."""
    from reasonaudio.detect.perceive_examples import Heard
    from reasonaudio.retrievers.example_readers import ExampleSet

    class Unused:
        def hear(self, wave, sr):
            raise AssertionError("every example's hearing is set by hand")

    found = ExampleSet.of_build(b.with_view(INTERLEAVED), Unused())
    for name, ex in examples(b.files).items():
        lab = label_of(ex)
        found._heard[name] = Heard(lab, 0.5, ((lab, 0.5),), lab)
    return found


def perceived_first_match_misses(b, heard) -> dict[str, bool]:
    """Per interleaved query: whether the perceived logic's first match is not relevant, by the
    judge alone (``semantics.evaluate`` over every clip's events, clips in id order: the oracle's
    ranking), not by Qdrant. The perceived logic is the variant read with the tagger's label for
    each example (``heard``: example -> label, None when it heard nothing); a variant it cannot
    read (nothing heard, or a label that makes the text unreadable) misses too."""
    from reasonaudio.querylang.semantics import evaluate

    clips = sorted(b.clips, key=lambda c: c.id)
    out = {}
    for q in b.with_view(INTERLEAVED).queries:
        given = {n: ExampleLabel(lab, "tagger") for n, lab in heard.items() if lab is not None}
        try:
            logic = parse(q.text, b.labels, ResolveOptions(examples=given))
        except QueryParseError:
            out[q.id] = True
            continue
        first = next((c.id for c in clips if evaluate(logic, c.events)), None)
        out[q.id] = first is None or first not in b.qrels.get(q.id, set())
    return out


def check_perceived_law(b, named, inter, heard) -> dict[str, tuple[float, float]]:
    """The law the perceived-example oracle's loss obeys on every task (docs/interleaved.md):
    loss == share of the task's queries whose perceived logic's first match is not relevant
    (:func:`perceived_first_match_misses`) <= share whose example the tagger mislabels (the
    tagger's error: a correct label gives the named logic, whose first match is relevant).
    Returns task -> (loss, tagger error)."""
    misses = perceived_first_match_misses(b, heard)
    truth = examples(b.files)
    rows = interleaved_rows(b.files)
    misheard = {q: any(heard.get(e) != truth[e].label for e in row.examples) for q, row in rows.items()}
    per_named = named.runs["oracle-perceived"].per_query
    per_inter = inter.runs["oracle-perceived@interleaved"].per_query
    out = {}
    for task in dict.fromkeys(b.query_by_id[q].task for q in rows):
        qids = [q for q in rows if b.query_by_id[q].task == task]
        assert all(per_named[q]["acc@1"] == 1.0 for q in qids)
        got = {q: per_inter.get(q, {"acc@1": 0.0})["acc@1"] for q in qids}
        loss = sum(1.0 - got[q] for q in qids) / len(qids)
        error = sum(misheard[q] for q in qids) / len(qids)
        assert all(got[q] == (0.0 if misses[q] else 1.0) for q in qids), task  # query by query
        assert all(misheard[q] for q in qids if misses[q]), task
        assert loss == pytest.approx(sum(misses[q] for q in qids) / len(qids)), task
        assert loss <= error + 1e-12, task
        out[task] = (loss, error)
    return out


def test_perceived_oracle_loss_obeys_the_first_match_law_per_task(evaluated):
    """With the real tagger: per task, loss == share of queries whose perceived logic's first
    match is not relevant, <= the tagger's error; the table's tagger error is that share."""
    b, named, inter = evaluated
    table = {row.name: row for row in by_example(b).rows}
    perceived = table["oracle-perceived"]
    assert perceived.reading == "tagger-label"
    heard = inter.runs["oracle-perceived@interleaved"].describe["heard"]
    assert set(heard) <= set(examples(b.files))
    law = check_perceived_law(b, named, inter, {n: heard.get(n) for n in examples(b.files)})
    for t in perceived.tasks:
        assert t.named["acc@1"] == 1.0
        if t.task in law:
            loss, error = law[t.task]
            assert t.named["acc@1"] - t.by_example["acc@1"] == pytest.approx(loss)
            assert t.tagger_error == pytest.approx(error)
    assert len(law) == 5
    assert all(t.by_example["acc@1"] == 1.0 for t in table["oracle"].tasks)
    assert all(t.tagger_error is None for t in table["oracle"].tasks)


def test_perceived_oracle_exact_answer_loss_is_the_taggers_error_per_task(evaluated):
    """The acceptance's law, exactly: per task, the share of queries the perceived-example
    oracle no longer answers with exactly the relevant set equals the share whose example the
    tagger mislabels (a misheard example changes the logic, so the set), with the real tagger;
    the true-label oracle answers every query exactly both ways; a ranked retriever has none."""
    b, named, inter = evaluated
    table = {row.name: row for row in by_example(b).rows}
    tasks = [t for t in table["oracle-perceived"].tasks]
    assert {t.task for t in tasks} >= {"negation", "order", "overlap", "duration", "mix", "all"}
    for t in tasks:
        assert t.exact is not None and t.exact[0] == 1.0, t.task
        assert t.exact_loss == pytest.approx(t.tagger_error, abs=1e-12), t.task
    assert any(t.tagger_error > 0 for t in tasks)  # not vacuous: the tagger mishears some
    assert all(t.exact == (1.0, 1.0) for t in table["oracle"].tasks)
    assert all(t.exact is None for t in table["random"].tasks)


def test_a_misheard_excluded_sound_can_leave_the_first_match_relevant(tmp_path):
    """Why the loss is not the tagger's error: a build whose every query is interleaved, a
    tagger wrong on every example. Where the example is the *excluded* sound of a negation,
    the perceived logic ("A but no B'") can still admit the relevant clip first, so that query is
    not lost; the law above holds on every task all the same."""
    from reasonaudio.logic import Not, conjuncts

    build_benchmark(tmp_path / "b", BuildParams(atoms="synthetic", seed=0, n_clips=120, n_queries=40,
                                                interleaved=1.0))
    b = load_benchmark(tmp_path / "b")
    found = heard_as(b, lambda ex: next(x for x in b.labels if x != ex.label))
    heard = {name: found.heard(name).label for name in examples(b.files)}
    runs = tmp_path / "runs"
    named = evaluate_retrievers(b, ["oracle-perceived"], EvalContext(save=False, trec_dir=runs))
    inter = evaluate_interleaved(b, ["oracle-perceived"], EvalContext(save=False, trec_dir=runs),
                                 example_set=found)
    law = check_perceived_law(b, named, inter, heard)
    assert len(law) == 5 and all(error == 1.0 for _, error in law.values())
    rows = interleaved_rows(b.files)
    excluded = [q for q, row in rows.items() if b.query_by_id[q].task == "negation" and any(
        isinstance(c, Not) and row.slots[0] in repr(c) for c in conjuncts(b.query_by_id[q].logic))]
    kept = [q for q in excluded
            if inter.runs["oracle-perceived@interleaved"].per_query[q]["acc@1"] == 1.0]
    assert kept, "no negation with a misheard excluded sound still answered right"
    assert law["negation"][0] < law["negation"][1]
    # ... yet none of them is answered exactly: the exact-answer loss is the error, 1.0 everywhere
    from reasonaudio.evaluation.results import slug
    from reasonaudio.evaluation.runs import read_trec

    named_run = read_trec(runs / f"{slug('oracle-perceived')}.trec").hits
    inter_run = read_trec(runs / f"{slug('oracle-perceived@interleaved')}.trec").hits
    assert all({h.clip_id for h in named_run[q]} == set(b.qrels[q]) for q in rows)
    assert not any({h.clip_id for h in inter_run.get(q, ())} == set(b.qrels[q]) for q in rows)


def test_correctly_heard_examples_score_as_named(evaluated):
    """A perceiver right on every other example: those queries score exactly as named, the
    others are read with the wrong label (so never better than the tagger's error allows)."""
    from reasonaudio.detect.perceive_examples import Heard
    from reasonaudio.retrievers.example_readers import ExampleSet

    b, named, _ = evaluated
    truth = examples(b.files)
    wrong = {ex.example_id: next(lab for lab in b.labels if lab != ex.label) for ex in truth.values()}

    class HalfRight:
        def hear(self, wave, sr):
            raise AssertionError("replaced below")

    found = ExampleSet.of_build(b.with_view(INTERLEAVED), HalfRight())
    for i, name in enumerate(sorted(truth)):
        lab = truth[name].label if i % 2 == 0 else wrong[name]
        found._heard[name] = Heard(lab, 0.5, ((lab, 0.5),), lab)
    got = evaluate_interleaved(b, ["oracle-perceived"], EvalContext(save=False), example_set=found)
    per = got.runs["oracle-perceived@interleaved"].per_query
    base = named.runs["oracle-perceived"].per_query
    rows = interleaved_rows(b.files)
    right = [q for q, row in rows.items() if sorted(truth).index(row.examples[0]) % 2 == 0]
    assert right and len(right) < len(rows)
    for q in right:
        assert per[q] == base[q]
    loss = np.mean([base[q]["acc@1"] - per[q]["acc@1"] for q in rows])
    assert loss <= (len(rows) - len(right)) / len(rows) + 1e-9


def test_report_table_pairs_the_same_queries(evaluated):
    b, named, inter = evaluated
    rows = {r.name: r for r in by_example(b).rows}
    assert set(rows) == {"oracle", "oracle-perceived", "bag-of-sounds", "random"}
    # bag-of-sounds reads the true label: the same logic, so the same scores query by query
    assert all(t.delta("acc@1") == 0.0 for t in rows["bag-of-sounds"].tasks)
    by_task = {t.task: t for t in rows["oracle"].tasks}
    assert by_task["all"].n == len(interleaved_rows(b.files))
    same = sum(e.same_recording for e in examples(b.files).values())
    assert by_task.get("all, same recording", None) is None or by_task["all, same recording"].n == same
    assert sum(by_task[g].n for g in ("all, same recording", "all, other recording")
               if g in by_task) == by_task["all"].n


def test_reading_refused_for_a_retriever_without_one(evaluated):
    from reasonaudio.errors import ReasonAudioError
    from reasonaudio.retrievers.example_readers import reading_for
    from reasonaudio.retrievers.base import Retriever

    class Other(Retriever):
        name = "mine"

        def search(self, text, k):
            return []

    with pytest.raises(ReasonAudioError, match="no way to read a sound given by example"):
        reading_for("mine", Other())


# --- the command line ------------------------------------------------------------------------

def test_eval_interleaved_cli_and_search_example(evaluated, tmp_path):
    b, _, _ = evaluated
    got = bench("eval", "--data", b.root, "--interleaved", "-r", "oracle")
    assert got.exit_code == 0, got.output
    assert "oracle@interleaved" in got.output and "named vs by example" in got.output
    from reasonaudio.evaluation.results import load_result, run_path
    view = b.with_view(INTERLEAVED)
    got = bench("eval", "--data", b.root, "--interleaved", "--run",
                f"mine={run_path(view, 'oracle@interleaved')}")
    assert got.exit_code == 0, got.output
    mine = load_result(view, "mine@interleaved")
    assert mine.formulation == "interleaved" and mine.overall["acc@1"] == 1.0
    ex = next(iter(examples(b.files).values()))
    other = next(lab for lab in b.labels if lab != ex.label)
    got = bench("search", f"<audio:{ex.example_id}> and {other}", "--data", b.root)
    assert got.exit_code == 0, got.output
    assert f"<audio:{ex.example_id}> ->" in got.output and "tagger" in got.output


def _wav(path: Path, seconds: float, sr: int) -> Path:
    t = np.arange(int(seconds * sr)) / sr
    sf.write(str(path), (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), sr)
    return path


def test_hostile_examples_refused_in_one_line(evaluated, tmp_path):
    b, _, _ = evaluated
    label = b.labels[0]
    q = f"<audio:mine> and {label}"
    (tmp_path / "text.wav").write_text("not audio at all")
    (tmp_path / "empty.wav").write_bytes(b"")
    long_wav = _wav(tmp_path / "long.wav", 601, 1000)  # 601 s at 1 kHz: small, and too long
    silent = tmp_path / "silent.wav"
    sf.write(str(silent), np.zeros(48000, dtype=np.float32), 48000)
    one_line_error(bench("search", q, "--data", b.root, "--example", f"mine={tmp_path / 'text.wav'}"),
                   "text.wav", "not an audio file")
    one_line_error(bench("search", q, "--data", b.root, "--example", f"mine={tmp_path / 'empty.wav'}"),
                   "empty.wav", "empty")
    one_line_error(bench("search", q, "--data", b.root, "--example", f"mine={long_wav}"),
                   "long.wav", "at most 600 s")
    one_line_error(bench("search", q, "--data", b.root, "--example", f"mine={silent}"),
                   "silent.wav", "silent")
    one_line_error(bench("search", q, "--data", b.root, "--example", f"mine={tmp_path / 'nope.wav'}"),
                   "nope.wav", "no such file")
    one_line_error(bench("search", q, "--data", b.root, "--example", "Bad=x.wav"),
                   "not a valid example name")
    one_line_error(bench("search", q, "--data", b.root), "<audio:mine>", "--example mine=PATH")
    one_line_error(bench("interleave", "--data", b.root, "--share", "1.5"), "(0, 1]")
    # another sample rate is accepted and said: every model resamples, as for clips
    other = _wav(tmp_path / "other.wav", 2, 22050)
    got = bench("search", q, "--data", b.root, "--example", f"mine={other}")
    assert got.exit_code in (0, 2), got.output
    assert "22050 Hz, resampled" in got.output


def test_explorer_lists_by_example_results_with_their_reading(evaluated):
    from reasonaudio.explorer.catalog import Catalog

    b, _, _ = evaluated
    cat = Catalog(b)
    assert "examples" in cat.dimensions()
    rows = {r["name"]: r for r in cat.table("all")}
    col = cat.dimensions().index("examples")
    assert rows["oracle-perceived@interleaved"]["dims"][col] == "tagger-label"
    assert rows["oracle"]["dims"][col] == ""
    assert rows["oracle@interleaved"]["values"][0] == 1.0


def test_vectors_read_the_variants_own_query_vectors(evaluated, tmp_path):
    """`vectors:NAME`: a variant is asked by its own vector (QID@interleaved in --query-ids);
    given the named query's vector it scores as named, and without one it is refused."""
    from reasonaudio.dataset.interleaved import variant_id

    b, _, _ = evaluated
    rng = np.random.default_rng(0)
    cids = [c.id for c in b.clips]
    np.save(tmp_path / "c.npy", rng.normal(size=(len(cids), 8)).astype(np.float32))
    (tmp_path / "c.txt").write_text("\n".join(cids) + "\n")
    qids = [q.id for q in b.queries]
    qv = rng.normal(size=(len(qids), 8)).astype(np.float32)
    rows = sorted(interleaved_rows(b.files))
    kept = rows[: len(rows) // 2]
    ids = qids + [variant_id(q) for q in kept]
    np.save(tmp_path / "q.npy", np.concatenate([qv, qv[[qids.index(q) for q in kept]]]))
    (tmp_path / "q.txt").write_text("\n".join(ids) + "\n")
    got = bench("ingest", "--data", b.root, "--vectors", tmp_path / "c.npy", "--ids", tmp_path / "c.txt",
                "--name", "il", "--query-vectors", tmp_path / "q.npy", "--query-ids", tmp_path / "q.txt")
    assert got.exit_code == 0, got.output
    named = evaluate_retrievers(b, ["vectors:il"], EvalContext(save=False)).runs["vectors:il"]
    inter = evaluate_interleaved(b, ["vectors:il"], EvalContext(save=False)).runs["vectors:il@interleaved"]
    assert inter.describe["examples"] == "variant-vectors"
    for q in kept:
        assert inter.per_query[q] == named.per_query[q]
    assert set(inter.failures) == set(rows) - set(kept)
