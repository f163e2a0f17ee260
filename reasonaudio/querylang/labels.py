"""Which sound labels the query language can read unambiguously: the one rule every bank obeys.

A label may not contain a word the parser acts on (connectives, negation, numbers, units,
duration and comparison cues, refused words: all from :mod:`.lexicon`) nor a word the query
templates write around sound names (the task records' templates, read through
:mod:`reasonaudio.tasks.registry`), and may not be a run of words inside another label. Bank checks, recipe validation and the synthetic bank all call
:func:`label_problems`, so the rule cannot drift from the parser.
"""

from __future__ import annotations

import re
from typing import Sequence

from reasonaudio.querylang import lexicon
from reasonaudio.tasks.registry import all_shapes

_LABEL_RE = re.compile(r"^[a-z]+( [a-z]+)*$")
_WORD_RE = re.compile(r"[a-z]+")


def _acting_words() -> frozenset[str]:
    """Single words the parser gives a meaning to (everything in the lexicon but fillers)."""
    words = {w for w, kind in lexicon.WORDS.items() if kind != lexicon.FILLER}
    words |= set(lexicon.UNSUPPORTED_WORDS) | set(lexicon.ONES) | set(lexicon.TENS)
    words |= set(lexicon.UNIT_SECONDS)
    return frozenset(w for w in words if w.isalpha())


def _template_words() -> frozenset[str]:
    """Words the query templates write around the ``{A}``-style slots, except those that only
    occur inside a lexicon phrase ("followed by": a label may still end in "by")."""
    out: set[str] = set()
    for templates in (s.templates for s in all_shapes()):   # the opt-in tasks' too
        for t in templates:
            words = _WORD_RE.findall(re.sub(r"\{[^}]*\}", " ", t.text.lower()))
            i = 0
            while i < len(words):
                for n in range(min(lexicon.PHRASE_MAX, len(words) - i), 1, -1):
                    if tuple(words[i:i + n]) in lexicon.PHRASES:
                        i += n
                        break
                else:
                    out.add(words[i])
                    i += 1
    return frozenset(out)


UNSAFE_WORDS: frozenset[str] = _acting_words() | _template_words()
"""Words no sound label may contain (derived, never typed by hand)."""


def label_problems(label: str, others: Sequence[str] = ()) -> list[str]:
    """Why ``label`` is unsafe for the query parser (empty when it is fine)."""
    problems = []
    if not _LABEL_RE.match(label):
        problems.append("must be lower-case letters and single spaces")
    bad = sorted(set(label.split()) & UNSAFE_WORDS)
    if bad:
        problems.append(f"contains query words {bad}")
    padded = f" {label} "
    for other in others:
        if other != label and padded in f" {other} ":
            problems.append(f"is a word run inside {other!r}")
    return problems
