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
    """What a resolver says an example is: a bank label, how (``true`` | ``tagger`` |
    ``detector``), the perceiver's score where it listened, and a line for display; or, with
    ``refusal``, why the example names no label (silence, a tie between labels): a query holding
    it is refused."""

    label: str
    how: str
    score: float | None = None
    refusal: str = ""

    def note(self, name: str) -> str:
        score = "" if self.score is None else f" {self.score:.2f}"
        return f"'<audio:{name}>' -> {self.label} (example, {self.how}{score})"


def substitute(text: str, replace: Callable[[str], str]) -> str:
    """``text`` with every placeholder replaced by ``replace(name)`` (which may raise
    QueryParseError for an example it cannot read)."""
    names_in(text)  # every name checked before any is replaced
    return PLACEHOLDER_RE.sub(lambda m: replace(m.group(1)), text)


@dataclass(frozen=True)
class Slot:
    """One placeholder: where its label stands in the read text and where it was written."""
    name: str
    label: ExampleLabel
    start: int
    end: int
    """the label's characters in :attr:`Substitution.text`"""
    written_start: int
    written_end: int
    """the placeholder's characters in :attr:`Substitution.original`"""


@dataclass(frozen=True)
class Substitution:
    """The user's text, the text the parser reads (each placeholder replaced by its label,
    spaced from the words around it) and the slots between them."""
    original: str
    text: str
    slots: tuple[Slot, ...] = ()

    @property
    def notes(self) -> list[str]:
        return [s.label.note(s.name) for s in self.slots]

    def position(self, i: int) -> int:
        """A character position of :attr:`text` in :attr:`original` (a label's characters map
        to its placeholder's ends)."""
        shift = 0
        for s in self.slots:
            if i < s.start:
                break
            if i <= s.end:
                return s.written_start if i < s.end else s.written_end
            shift = s.written_end - s.end
        return i + shift

    def slot_at(self, start: int, end: int) -> Slot | None:
        """The slot whose label is exactly ``text[start:end]``."""
        return next((s for s in self.slots if (s.start, s.end) == (start, end)), None)

    def restore(self, message: str) -> str:
        """An error message about :attr:`text`, quoting :attr:`original` instead."""
        return message.replace(repr(self.text), repr(self.original)) if self.slots else message


def substitution(text: str, examples: Mapping[str, ExampleLabel] | None) -> Substitution:
    """The parser's reading of ``text``: each placeholder replaced by its example's label.
    A placeholder without a label, an example refused by its resolver (silence, a tie), and two
    examples read as one label (the query could not tell them apart) are refused in one line,
    quoting the user's text."""
    if not has_placeholder(text):
        return Substitution(text, text)
    names_in(text)
    out, slots, last = [], [], 0
    length = 0
    for m in PLACEHOLDER_RE.finditer(text):
        name = m.group(1)
        found = _label_of(name, examples)
        before = text[last:m.start()]
        pad_l = " " if before[-1:].isalnum() or (not before and out and out[-1][-1:].isalnum()) \
            else ""
        pad_r = " " if text[m.end():m.end() + 1].isalnum() else ""
        out.append(before + pad_l)
        length += len(before) + len(pad_l)
        slots.append(Slot(name, found, length, length + len(found.label), m.start(), m.end()))
        out.append(found.label + pad_r)
        length += len(found.label) + len(pad_r)
        last = m.end()
    out.append(text[last:])
    _refuse_one_label_twice(slots)
    return Substitution(text, "".join(out), tuple(slots))


def _label_of(name: str, examples: Mapping[str, ExampleLabel] | None) -> ExampleLabel:
    found = (examples or {}).get(name)
    if found is None:
        given = ", ".join(sorted(examples)[:5]) if examples else "none"
        raise QueryParseError(f"<audio:{name}>: no label for this example (examples given: "
                              f"{given}); give the recording with --example {name}=PATH")
    if found.refusal:
        raise QueryParseError(f"<audio:{name}>: {found.refusal}")
    return found


def _refuse_one_label_twice(slots: list[Slot]) -> None:
    by_label: dict[str, Slot] = {}
    for s in slots:
        other = by_label.setdefault(s.label.label, s)
        if other.name != s.name:
            raise QueryParseError(
                f"<audio:{other.name}> and <audio:{s.name}> are both read as "
                f"{s.label.label!r} ({other.label.how}, {s.label.how}): the query could not tell "
                "them apart; give examples of different sounds, or name one in words")


def resolve_placeholders(text: str, examples: Mapping[str, ExampleLabel] | None
                         ) -> tuple[str, list[str]]:
    """``text`` with each placeholder replaced by its example's label, and one note per
    placeholder (:func:`substitution`)."""
    sub = substitution(text, examples)
    return sub.text, sub.notes
