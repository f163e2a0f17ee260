"""Every word carries into the logic or is named in the refusal (issue 45, item 2).

Connectives, markers and modifiers are put in every position of otherwise-valid queries. A
result that reads the same logic as the query without the word has dropped it, unless the word
restates what the query says already: a repeat of its neighbour ("then then"), a relation word
of a kind the query has ("rain while thunder overlapping"), "first" in an ordered query, "both"
before "A and B", a hedge before a number ("about 5 seconds": durations are approximate), a
continuity word in a query with a duration. A refusal of a modifier names it (outside the quote
of the query). The parse runs without a semantic matcher and with a greedy one that reads any
phrase around a label as that label (the worst case of the CLI's MiniLM)."""

from __future__ import annotations

import pytest

from reasonaudio.querylang.lexicon import CONTINUITY, FIRST, HEDGES, PHRASES, WORDS
from reasonaudio.querylang.parser import ResolveOptions, parse, same_logic
from reasonaudio.errors import QueryParseError

pytestmark = pytest.mark.fast

V = ["dog barking", "rain", "thunder", "siren", "church bell"]

BASES = ["rain then thunder", "rain while thunder", "rain and thunder", "rain but no siren",
         "rain for 5 seconds", "thunder after rain", "rain, thunder and siren",
         "dog barking before siren"]

WORDS_TRIED = ["before", "after", "while", "during", "or", "no", "not", "without", "first",
               "finally", "both", "either", "each", "twice", "almost", "nearly", "exactly",
               "about", "continuously", "throughout", "halfway", "brief", "early", "final",
               "repeated", "another", "mainly", "apart", "entirely", "next to", "together",
               "only", "again", "second", "overlapping", "lengthy", "mostly", "starts with"]


def greedy(phrase, labels):
    """Reads any phrase that contains a label as that label (score 0.95)."""
    inside = [lab for lab in labels if lab in phrase]
    return [(lab, 0.95 if lab in inside else 0.1) for lab in inside + [x for x in labels
                                                                       if x not in inside]]


OPTIONS = {"plain": None, "greedy-semantic": ResolveOptions(semantic=greedy, threshold=0.5,
                                                            margin=0.1)}


MODIFIERS = ["almost", "nearly", "exactly", "about", "continuously", "throughout", "halfway",
             "brief", "early", "final", "repeated", "another", "mainly", "apart", "entirely",
             "only", "again", "lengthy", "mostly", "each", "either"]
"""Words whose refusal must name them."""


def _kind(word: str) -> str:
    return WORDS.get(word) or PHRASES.get(tuple(word.split())) or ""


def _restates(base: str, text: str, word: str) -> bool:
    """Whether ``word`` in ``text`` only says again what ``base`` says (see the docstring)."""
    kinds = {_kind(w.strip(",")) for w in base.split()}
    after = text.split(word, 1)[1].split()
    return (_kind(word) in kinds - {""}
            or (_kind(word) == FIRST and kinds & {"fwd", "rev"})
            or (word == "both" and len(after) > 1 and after[1] == "and")
            or (word == "each" and text.split(word, 1)[0].endswith("seconds "))
            or (word in HEDGES and after[:1] and after[0][0].isdigit())
            or (word in CONTINUITY and any(w[0].isdigit() for w in base.split())))


def _insertions(base: str):
    words = base.split()
    for k in range(len(words) + 1):
        for w in WORDS_TRIED:
            near = {x.strip(",").lower() for x in words[max(0, k - 1):k + 1]}
            if w in near or any(WORDS.get(w) is not None and WORDS.get(w) == WORDS.get(x)
                                for x in near):
                continue   # a repeat of its neighbour ("then then")
            yield " ".join(words[:k] + [w] + words[k:]), w


@pytest.mark.parametrize("opts", sorted(OPTIONS))
@pytest.mark.parametrize("base", BASES)
def test_an_inserted_word_is_read_or_named(base, opts) -> None:
    options = OPTIONS[opts]
    want = parse(base, V, options)
    dropped = []
    for text, word in _insertions(base):
        try:
            got = parse(text, V, options)
        except QueryParseError as exc:
            msg = str(exc).replace(repr(text), "")
            if word in MODIFIERS and word not in msg:
                dropped.append(f"{text!r}: refused without naming {word!r}: {exc}")
            continue
        if same_logic(got, want) and not _restates(base, text, word):
            dropped.append(f"{text!r}: read as the query without {word!r}")
    assert not dropped, "\n".join(dropped[:20]) + f"\n({len(dropped)} in all)"
