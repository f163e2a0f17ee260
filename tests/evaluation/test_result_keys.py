"""Results are addressed by a typed key (name, condition, view), and no name grammar is parsed.

The key's stored name (``NAME`` / ``NAME@VIEW``) is written for the results layout and run tags
and never read back; results written before keys still load; the evaluation plan checks every
combination of retrievers, run files, conditions and views before any work.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import evalkit
import pytest

import reasonaudio
from reasonaudio.errors import DataError, ReasonAudioError
from reasonaudio.evaluation.external import RunSpec
from reasonaudio.dataset.keys import ResultKey, legacy_key
from reasonaudio.experiments.plan import make_plan
from reasonaudio.evaluation.results import RetrieverResult, load_results, result_path

pytestmark = pytest.mark.fast


def test_a_key_stores_and_labels_without_being_parsed():
    key = ResultKey("two-stage:yamnet-caption+minilm", "snr5", "question")
    assert key.stored_name == "two-stage:yamnet-caption+minilm@question"
    assert key.label() == "two-stage:yamnet-caption+minilm @ snr5 · question"
    assert ResultKey("oracle").stored_name == "oracle" and ResultKey("oracle").label() == "oracle"
    assert ResultKey.from_json(json.loads(json.dumps(key.to_json()))) == key
    with pytest.raises(DataError, match="name"):
        ResultKey("")


def test_results_of_the_old_layout_load_and_a_mismatch_is_refused():
    assert legacy_key("oracle@question", "question", "clean", "f") == ResultKey("oracle", "clean", "question")
    assert legacy_key("oracle", "caption", "snr5", "f") == ResultKey("oracle", "snr5")
    with pytest.raises(DataError, match="evaluate it again"):
        legacy_key("oracle@paraphrase", "question", "clean", "f")


def test_saved_results_carry_their_key_and_old_files_still_load(tmp_path):
    bench, res = evalkit.evaluated_fakes(tmp_path / "bench")
    for r in res.runs.values():
        assert r.key == ResultKey(r.name, "clean", "caption")
    name = next(iter(res.runs))
    path = result_path(bench, name)
    doc = json.loads(path.read_text())
    assert doc["key"] == {"name": name, "condition": "clean", "view": "caption"}
    del doc["key"]  # as written before keys
    path.write_text(json.dumps(doc))
    assert load_results(bench).runs[name].key == ResultKey(name)
    old = RetrieverResult.from_json({**doc, "name": f"{name}@question", "formulation": "question"}, "f")
    assert old.key == ResultKey(name, "clean", "question")


def test_the_plan_checks_every_combination_first(tmp_path):
    bench, _ = evalkit.evaluated_fakes(tmp_path / "bench")
    run = RunSpec("mine", Path("run.trec"), None)
    plan = make_plan(bench, ["oracle"], [run])
    assert plan.keys() == [ResultKey("oracle"), ResultKey("mine")]
    for kwargs, says in [({"runs": [run], "condition": "all"}, "retriever names only"),
                         ({"runs": [run], "formulation": "all"}, "name the one formulation"),
                         ({"interleaved": True, "formulation": "question"}, "drop --formulation"),
                         ({"mteb_results": tmp_path, "formulation": "question"}, "caption queries"),
                         ({"retrievers": ()}, "nothing to evaluate")]:
        args = {"retrievers": ["oracle"], **kwargs}
        with pytest.raises(ReasonAudioError, match=says):
            make_plan(bench, **args)


def _at_parses(tree: ast.AST) -> list[int]:
    """Lines that split a string at ``@`` (partition, rpartition, split, rsplit)."""
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("partition", "rpartition", "split", "rsplit")
            and any(isinstance(a, ast.Constant) and a.value == "@" for a in n.args)]


def test_no_module_parses_an_at_joined_name():
    found = {}
    for path in Path(reasonaudio.__file__).parent.rglob("*.py"):
        lines = _at_parses(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[str(path)] = lines
    assert found == {}
    assert _at_parses(ast.parse('a, _, b = name.partition("@")\nname.split("@")')) == [1, 2]
