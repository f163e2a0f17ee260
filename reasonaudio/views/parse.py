"""Showing parsed logic to a person: a rich tree, and which words matched which label.

Used by ``bench parse`` and ``bench search``; the JSON form is :func:`logic.to_json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from rich.console import Console, Group
from rich.text import Text
from rich.tree import Tree

from reasonaudio.logic import And, Before, Count, Has, Interpreter, Lasts, Leaf, Node, Not, Or, Overlap
from reasonaudio.querylang.parser import ParseResult
from reasonaudio.querylang.semantics import duration_bounds
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import DataError
from reasonaudio.fileio import read_text


Row = tuple[Text, tuple[Node, ...]]

ROW = Interpreter("logic view (views.parse.logic_tree)")
"""node -> its line in the tree and the nodes shown under it; one handler per node type."""


@ROW.register(Has)
def _has(node: Has) -> Row:
    return Text().append("has ", "bold").append(node.label, "cyan"), ()


@ROW.register(Before)
def _before(node: Before) -> Row:
    return Text().append(node.a, "cyan").append(" before ", "bold").append(node.b, "cyan"), ()


@ROW.register(Overlap)
def _overlap(node: Overlap) -> Row:
    return Text().append(node.a, "cyan").append(" overlaps ", "bold").append(node.b, "cyan"), ()


@ROW.register(Lasts)
def _lasts(node: Lasts) -> Row:
    lo, hi = duration_bounds(float(node.seconds))
    t = Text().append(node.label, "cyan").append(" lasts ", "bold").append(f"{node.seconds:g} s")
    t.append(f"  (judge accepts {max(lo, 0):g} to {hi:g} s)", "dim")
    return t, ()


@ROW.register(Count)
def _count(node: Count) -> Row:
    return (Text().append(node.label, "cyan").append(" occurs ", "bold")
            .append(f"exactly {node.n} times").append("  (occurrences at least 0.5 s apart)", "dim"), ())


@ROW.register(Not)
def _not(node: Not) -> Row:
    if isinstance(node.arg, Leaf):  # a negated leaf is one line: "not has siren"
        return Text("not ", "bold red") + ROW(node.arg)[0], ()
    return Text("not", "bold red"), (node.arg,)


@ROW.register(And)
def _and(node: And) -> Row:
    return Text("all of", "bold magenta"), node.args


@ROW.register(Or)
def _or(node: Or) -> Row:
    return Text("any of", "bold magenta"), node.args


def _add(tree: Tree, node: Node) -> None:
    text, under = ROW(node)
    sub = tree.add(text)
    for child in under:
        _add(sub, child)


def logic_tree(logic: Node, title: str = "logic") -> Tree:
    """A rich tree of ``logic``: and/or as "all of"/"any of", leaves in words."""
    tree = Tree(Text(title, "bold"))
    _add(tree, logic)
    return tree


def resolution_lines(result: ParseResult) -> list[Text]:
    """One line per sound phrase: the words, the label(s), and how (kind, score, detail).
    Built from Text pieces, so user text is never read as markup."""
    lines = []
    for r in result.resolutions:
        same = r.kind == "exact" and r.text == r.labels[0]
        line = Text.assemble(("sound  ", "bold"), (r.text, "yellow"))
        if not same:
            line.append("  ->  ").append(" | ".join(r.labels), "cyan")
        how = f"{r.kind} {r.score:.2f}" if r.kind == "semantic" else r.kind
        if len(r.labels) > 1:
            how += f", any of {len(r.labels)} labels (or)"
        if r.detail:
            how += f"; {r.detail}"
        line.append(f"  ({how})", "dim")
        lines.append(line)
    return lines


def parse_view(text: str, result: ParseResult) -> Group:
    """The query, how each sound phrase resolved, and the logic tree."""
    lines = [Text.assemble(("query  ", "bold"), repr(text))]
    lines += resolution_lines(result)
    return Group(*lines, logic_tree(result.logic))


def print_resolutions(console: Console, result: ParseResult) -> None:
    """``bench search``: how each sound phrase resolved (only when one is not an exact label)."""
    if any(r.kind != "exact" for r in result.resolutions):
        console.print(Group(*resolution_lines(result)))


def print_parse(console: Console, text: str, result: ParseResult) -> None:
    console.print(parse_view(text, result))


def read_labels_file(path: Path) -> list[str]:
    """Labels for ``bench parse --labels``: one per line; blank lines and ``#`` comments skipped."""
    if not Path(path).is_file():
        raise DataError(f"{path}: labels file not found")
    lines = read_text(path).splitlines()
    labels = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not labels:
        raise DataError(f"{path}: labels file has no labels (one label per line)")
    return labels


def vocabulary_source(data: Optional[Path], labels: Optional[Path], verify: bool = True) -> list[str]:
    """The labels to parse against: ``--labels FILE`` or the benchmark's ``atoms.jsonl``."""
    if data is not None and labels is not None:
        raise DataError("give either --data DIR or --labels FILE, not both")
    if labels is not None:
        return read_labels_file(labels)
    if data is None:
        raise DataError("give --data DIR (a built benchmark) or --labels FILE (one label per line)")
    found = list(load_benchmark(data, verify=verify).labels)
    if not found:
        raise DataError(f"{data}: atoms.jsonl lists no labels")
    return found
