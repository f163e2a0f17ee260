"""Sounds given by example inside a query (issue 28): the one placeholder rule, ``<audio:NAME>``.

An interleaved query names some of its sounds by a recording instead of words:
``"<audio:ex-0042>, then a dog barking, but no siren"``. ``NAME`` is lower-case letters, digits
and hyphens (:data:`NAME_RE`), at most :data:`NAME_MAX` characters; a build's examples are
``ex-NNNN`` (``examples.jsonl``), a user's are named on the command line
(``bench search --example NAME=PATH``).

The parser reads a placeholder as a sound slot whose label comes from a resolver
(:class:`ExampleLabel`, given in ``ResolveOptions.examples``): the example's true label (the
oracle's ceiling), the tagger's label for the example audio (``oracle-perceived``), or none, and
then the query is refused. The placeholder stands exactly where the label's words stood in the
named query, so the label is put in its place and every other word is read as before: the logic
around an example is as exact as around a name. Text readers that are not the parser
(captions, embedders) read a placeholder through :func:`substitute` with their own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

from reasonaudio.errors import QueryParseError

NAME_MAX = 40
NAME_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")
"""an example's name: lower-case letters, digits and inner hyphens"""
PLACEHOLDER_RE = re.compile(r"<audio:([^<>\s]*)>")
"""a placeholder as written; its name is then checked against :data:`NAME_RE`"""


def placeholder(name: str) -> str:
    """The text of the placeholder for example ``name``."""
    return f"<audio:{check_name(name)}>"


def check_name(name: str, where: str = "example name") -> str:
    """``name`` if it is a valid example name; QueryParseError naming it otherwise."""
    if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
        raise QueryParseError(f"{where} {name!r:.60} is not a valid example name: lower-case "
                              f"letters, digits and inner hyphens, at most {NAME_MAX} characters "
                              "(e.g. ex-0042, my-dog)")
    return name


def names_in(text: str) -> list[str]:
    """The example names the placeholders of ``text`` give, in text order (checked)."""
    return [check_name(m.group(1), f"<audio:{m.group(1)}>:") for m in PLACEHOLDER_RE.finditer(text)]


def has_placeholder(text: str) -> bool:
    return PLACEHOLDER_RE.search(text) is not None


@dataclass(frozen=True)
class ExampleLabel:
    """What a resolver says an example is: a bank label, how (``true`` | ``tagger``), the
    tagger's score where it listened, and a line for display."""

    label: str
    how: str
    score: float | None = None

    def note(self, name: str) -> str:
        score = "" if self.score is None else f" {self.score:.2f}"
        return f"'<audio:{name}>' -> {self.label} (example, {self.how}{score})"


def substitute(text: str, replace: Callable[[str], str]) -> str:
    """``text`` with every placeholder replaced by ``replace(name)`` (which may raise
    QueryParseError for an example it cannot read)."""
    names_in(text)  # every name checked before any is replaced
    return PLACEHOLDER_RE.sub(lambda m: replace(m.group(1)), text)


def resolve_placeholders(text: str, examples: Mapping[str, ExampleLabel] | None
                         ) -> tuple[str, list[str]]:
    """The parser's reading: ``text`` with each placeholder replaced by its example's label,
    and one note per placeholder. A placeholder without a label is refused in one line."""
    if not has_placeholder(text):
        return text, []
    notes: list[str] = []

    def label(name: str) -> str:
        found = (examples or {}).get(name)
        if found is None:
            given = ", ".join(sorted(examples)[:5]) if examples else "none"
            raise QueryParseError(f"<audio:{name}>: no label for this example (examples given: "
                                  f"{given}); give the recording with --example {name}=PATH")
        notes.append(found.note(name))
        return found.label

    return substitute(text, label), notes
