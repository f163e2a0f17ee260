"""Showing parsed logic to a person: a rich tree, and which words matched which label.

Used by ``bench parse`` and ``bench search``; the JSON form is :func:`logic.to_json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from rich.console import Console, Group
from rich.text import Text
from rich.tree import Tree

from reasonaudio.constraints.logic import And, Before, Has, Lasts, Node, Not, Or, Overlap
from reasonaudio.constraints.semantics import duration_bounds
from reasonaudio.errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    from reasonaudio.constraints.parser import ParseResult


def _leaf_text(node: Node) -> Text:
    t = Text()
    if isinstance(node, Has):
        t.append("has ", "bold").append(node.label, "cyan")
    elif isinstance(node, Before):
        t.append(node.a, "cyan").append(" before ", "bold").append(node.b, "cyan")
    elif isinstance(node, Overlap):
        t.append(node.a, "cyan").append(" overlaps ", "bold").append(node.b, "cyan")
    elif isinstance(node, Lasts):
        lo, hi = duration_bounds(float(node.seconds))
        t.append(node.label, "cyan").append(" lasts ", "bold").append(f"{node.seconds:g} s")
        t.append(f"  (judge accepts {max(lo, 0):g} to {hi:g} s)", "dim")
    return t


def _add(tree: Tree, node: Node) -> None:
    if isinstance(node, (And, Or)):
        sub = tree.add(Text("all of" if isinstance(node, And) else "any of", "bold magenta"))
        for arg in node.args:
            _add(sub, arg)
    elif isinstance(node, Not):
        if isinstance(node.arg, (Has, Before, Overlap, Lasts)):
            tree.add(Text("not ", "bold red") + _leaf_text(node.arg))
        else:
            _add(tree.add(Text("not", "bold red")), node.arg)
    else:
        tree.add(_leaf_text(node))


def logic_tree(logic: Node, title: str = "logic") -> Tree:
    """A rich tree of ``logic``: and/or as "all of"/"any of", leaves in words."""
    tree = Tree(Text(title, "bold"))
    _add(tree, logic)
    return tree


def parse_view(text: str, result: "ParseResult") -> Group:
    """The query, the label each sound matched, and the logic tree."""
    lines = [Text.assemble(("query  ", "bold"), repr(text))]
    for m in result.matches:
        same = m.text == m.label
        lines.append(Text.assemble(("sound  ", "bold"), (m.text, "yellow"),
                                   ("" if same else "  ->  "), ("" if same else m.label, "cyan")))
    return Group(*lines, logic_tree(result.logic))


def print_parse(console: Console, text: str, result: "ParseResult") -> None:
    console.print(parse_view(text, result))


def read_labels_file(path: Path) -> list[str]:
    """Labels for ``bench parse --labels``: one per line; blank lines and ``#`` comments skipped."""
    if not Path(path).is_file():
        raise DataError(f"{path}: labels file not found")
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise DataError(f"{path}: labels file is not UTF-8 text") from None
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
    from reasonaudio.ingest.benchmark import load_benchmark

    found = list(load_benchmark(data, verify=verify).labels)
    if not found:
        raise DataError(f"{data}: atoms.jsonl lists no labels")
    return found
