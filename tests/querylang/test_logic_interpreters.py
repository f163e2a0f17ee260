"""Every logic node type is handled by every interpreter, and the readings agree on each.

The node types come from ONE registry, ``logic.NODE_TYPES``; the interpreters are found by
reading the package's source for ``Interpreter(...)``, so a node added later without a handler
in some interpreter, or a new interpreter that misses a node, fails here. Samples of each node
type are made from its dataclass fields, so a new node needs no change to this file.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import io
import json
import random
import typing
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from store_helpers import random_clip

import reasonaudio
from reasonaudio import logic
from reasonaudio.logic import (NODE_TYPES, OPS, And, Has, Interpreter, Leaf, Node, Not,
                                           Or, describe, from_json, labels, to_json)

pytestmark = pytest.mark.fast

PACKAGE = Path(reasonaudio.__file__).parent
LABELS = ("dog barking", "siren", "rain")
KNOWN = {"reasonaudio.querylang.semantics", "reasonaudio.querylang.judge",
         "reasonaudio.store.formula", "reasonaudio.store.filters", "reasonaudio.generator.writer",
         "reasonaudio.querylang.canonical", "reasonaudio.querylang.resolve",
         "reasonaudio.views.parse", "reasonaudio.querylang.ablation"}


def _makes_interpreter(tree: ast.AST) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name == "Interpreter":
                return True
    return False


def interpreter_modules() -> list[str]:
    """Every module of the package (logic.py aside) that makes an Interpreter."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "logic.py" and path.parent.name == "querylang":
            continue
        text = path.read_text(encoding="utf-8")
        # a call named Interpreter holds the word: only those files are parsed (seconds of
        # collection on every worker otherwise)
        if "Interpreter" in text and _makes_interpreter(ast.parse(text)):
            rel = path.relative_to(PACKAGE.parent).with_suffix("")
            out.append(".".join(rel.parts))
    return out


MODULES = interpreter_modules()
INTERPRETERS = [(m, v) for m in MODULES for v in vars(importlib.import_module(m)).values()
                if isinstance(v, Interpreter)]


def test_the_interpreter_search_finds_the_known_readings():
    assert KNOWN <= set(MODULES), sorted(KNOWN - set(MODULES))
    without = [m for m in MODULES if not any(mod == m for mod, _ in INTERPRETERS)]
    assert not without, f"{without}: make interpreters at module level so they can be checked"


@pytest.mark.parametrize("module,interp", INTERPRETERS, ids=[i.name for _, i in INTERPRETERS])
def test_every_interpreter_handles_every_node_type(module, interp):
    missing = [t.__name__ for t in interp.missing()]
    assert not missing, f"{module}: {interp.name} has no handler for {', '.join(missing)}"


def test_node_registry_is_every_node_class():
    def concrete(cls: type) -> set[type]:
        out = set()
        for sub in cls.__subclasses__():
            out |= concrete(sub) | ({sub} if "op" in vars(sub) else set())  # not Leaf, _Pair
        return out

    assert concrete(Node) == set(NODE_TYPES)
    assert OPS == tuple(t.op for t in NODE_TYPES)
    assert len(set(OPS)) == len(OPS)
    with pytest.raises(TypeError, match="declare node classes in logic.py"):
        @dataclasses.dataclass(frozen=True)
        class Late(Leaf, op="late"):  # noqa: F841
            label: str


def test_interpreter_names_what_it_cannot_read():
    probe = Interpreter("probe")
    for t in NODE_TYPES:
        if t is not Or:
            probe.register(t)(lambda node: type(node).__name__)
    assert probe.missing() == (Or,)
    assert probe(Has("rain")) == "Has"
    with pytest.raises(TypeError, match="probe: no handler for Or"):
        probe(Or((Has("rain"),)))
    with pytest.raises(TypeError, match="probe: not a logic node: 'rain'"):
        probe("rain")
    with pytest.raises(TypeError, match="Has has two handlers"):
        probe.register(Has)(lambda node: None)
    with pytest.raises(TypeError, match="not a logic node type"):
        probe.register(str)(lambda node: None)  # type: ignore[arg-type]


# --- samples of every node type, from its fields --------------------------------------------

def sample(cls: type[Node], labels_: tuple[str, ...] = LABELS) -> Node:
    """An instance of ``cls`` with sounds from ``labels_``, numbers 2 and sub-nodes over them."""
    hints = typing.get_type_hints(cls, vars(logic))
    sounds = iter(labels_)
    values: list[typing.Any] = []
    for f in dataclasses.fields(cls):
        t = hints[f.name]
        if t is str:
            values.append(next(sounds))
        elif t in (float, int):
            values.append(t(2))
        elif t is Node:
            values.append(Has(labels_[-1]))
        elif t == tuple[Node, ...]:
            values.append((Has(labels_[0]), Not(Has(labels_[1]))))
        else:
            raise AssertionError(f"no sample value for {cls.__name__}.{f.name} ({t}): extend "
                                 "sample() in this test")
    return cls(*values)


SAMPLES = [sample(t) for t in NODE_TYPES]
TREES = SAMPLES + [Not(s) for s in SAMPLES] + [And((s, Has(LABELS[2]))) for s in SAMPLES] \
    + [Or((s, Not(sample(t, LABELS[::-1])))) for s, t in zip(SAMPLES, NODE_TYPES)]
IDS = [describe(t) for t in TREES]


def corpus() -> list:
    rng = random.Random(20)
    return [random_clip(rng, i, list(LABELS)) for i in range(80)]


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_json_and_description_round_trip(tree):
    obj = to_json(tree)
    assert from_json(json.loads(json.dumps(obj))) == tree
    assert obj["op"] == tree.op
    text = describe(tree)
    assert all(label in text for label in labels(tree))


def test_exact_judge_and_filter_agree_on_every_node_type(tmp_path):
    from reasonaudio.querylang.judge import ClipIndex
    from reasonaudio.querylang.semantics import evaluate
    from reasonaudio.store.base import CollectionMeta, PointIn
    from reasonaudio.store.edge import EdgeStore
    from reasonaudio.store.filters import to_filter
    from reasonaudio.store.payload import clip_payload

    clips = corpus()
    judge = ClipIndex(clips)
    store = EdgeStore(tmp_path / "edge")
    try:
        name = "reasonaudio-interpreters"
        store.create(name, CollectionMeta(model="none", revision="t", dimension=1,
                                          distance="dot", pooling="none"), index_labels=LABELS)
        store.upsert(name, [PointIn(c.id, (1.0,), clip_payload(c)) for c in clips])
        decided = 0
        for tree in TREES:
            exact = [c.id for c in clips if evaluate(tree, c.events)]
            assert judge.ids(judge.relevant(tree)) == exact, describe(tree)
            assert store.matching_ids(name, to_filter(tree)) == sorted(exact), describe(tree)
            decided += 0 < len(exact) < len(clips)
    finally:
        store.close()
    assert decided > len(TREES) // 2  # the corpus tells most trees' truth apart


def test_soft_score_reads_every_node_type():
    from reasonaudio.querylang.semantics import to_ms
    from reasonaudio.detect.soft import SoftIndex

    clips = corpus()
    n = len(clips)
    p = {lab: np.zeros(n) for lab in LABELS}
    on = {lab: np.zeros(n) for lab in LABELS}
    off = {lab: np.zeros(n) for lab in LABELS}
    for i, c in enumerate(clips):
        for e in c.events:
            p[e.label][i], on[e.label][i], off[e.label][i] = 1.0, to_ms(e.onset), to_ms(e.offset)
    index = SoftIndex([c.id for c in clips], p, on, off)
    for tree in TREES:
        s = index.score(tree)
        assert s.shape == (n,) and np.all(np.isfinite(s)), describe(tree)
        assert np.all((s >= 0) & (s <= 1)), describe(tree)


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_canonical_resolve_writer_and_view_read_every_node_type(tree):
    from reasonaudio.querylang.canonical import canonical, check_consistent, same_logic
    from reasonaudio.querylang.resolve import expand_families
    from reasonaudio.generator.writer import logic_to_text
    from reasonaudio.errors import QueryParseError
    from reasonaudio.views.parse import logic_tree

    c = canonical(tree)
    assert canonical(c) == c and same_logic(tree, c)
    try:
        check_consistent(tree)
    except QueryParseError:
        pass
    # a family of one label is that label; a family of two replaces it everywhere
    assert same_logic(expand_families(tree, {lab: (lab,) for lab in LABELS}), tree)
    wide = expand_families(tree, {"rain": ("rain", "drizzle")})
    assert ("drizzle" in labels(wide)) == ("rain" in labels(tree))
    try:
        text = logic_to_text(tree)
        assert isinstance(text, str) and text
    except ValueError as exc:
        assert "the query language has no sentence for it" in str(exc)
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(logic_tree(tree))
    assert all(label in out.getvalue() for label in labels(tree))


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_the_writers_text_reads_back_to_the_same_logic(tree):
    """The writer's promise: whatever it writes, the parser reads back exactly (e.g. a negated
    duration is written "no x lasting N", since "no x for N" is refused as ambiguous)."""
    from reasonaudio.querylang.canonical import check_consistent, same_logic
    from reasonaudio.querylang.parser import parse
    from reasonaudio.generator.writer import logic_to_text
    from reasonaudio.errors import QueryParseError

    try:
        text = logic_to_text(tree)
        check_consistent(tree)
    except (ValueError, QueryParseError):
        return  # no sentence for it, or a contradiction the parser refuses by design
    assert same_logic(parse(text, LABELS), tree), text


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_every_ablation_removes_its_family_from_every_node_type(tree):
    """``querylang.ablation.without``: no node of the family is left, the rest round-trips,
    a tree without the family is returned as it is, and where the family is only asserted
    (not under a ``not``) the ablated logic admits every clip the original does."""
    from reasonaudio.querylang.ablation import ABLATIONS, without
    from reasonaudio.logic import walk
    from reasonaudio.querylang.semantics import evaluate

    clips = corpus()
    for a in ABLATIONS:
        out = without(tree, a.family)
        if not any(isinstance(n, a.node) for n in walk(tree)):
            assert out is tree, (a.family, describe(tree))
            continue
        if out is None:
            continue
        assert not any(isinstance(n, a.node) for n in walk(out)), (a.family, describe(out))
        assert from_json(json.loads(json.dumps(to_json(out)))) == out
        under_not = any(isinstance(n, Not) and any(isinstance(m, a.node) for m in walk(n.arg))
                        for n in walk(tree))
        if not under_not:
            assert all(evaluate(out, c.events) for c in clips if evaluate(tree, c.events))
