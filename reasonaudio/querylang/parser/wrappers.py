"""Stage 0, wrappers: the everyday words around a query that ask for it but are not part of it.

"Could you please list every clip where ...", "find me recordings of ...", "... , thanks?": the
words that make a question, a command or a polite request. They are dropped only where they
cannot be anything else: before the first sound (and only while every word up to them is a
wrapper or a filler word of the lexicon, so "for 5 seconds of rain" keeps its duration) or after
the last one (with only wrappers, fillers and stops around them). A word that is part of a label
is never a wrapper: labels are matched first. Anywhere else a wrapper word is read as usual (an
unknown sound, with the nearest labels), never skipped.
"""

from __future__ import annotations

from reasonaudio.querylang.lexicon import COMMA, FILLER, STOP, WORDS
from reasonaudio.querylang.vocabulary import LabelMatch, Token

WRAPPER_WORDS: frozenset[str] = frozenset(
    "search searching look looking hunt hunting ask asking please pls plz kindly could you your list every all retrieve return fetch locate need "
    "like wanted searching finding showing listing help tell what which ones those these files "
    "file tracks samples sample snippets excerpts examples results thanks thank hey hi ok okay "
    "now".split())
"""Words a request wraps a query in; the lexicon's fillers ("find", "show", "me", "clips",
"where", "there", "is") are read as fillers anywhere already."""
_AROUND = frozenset({FILLER, STOP, COMMA})
SEARCH_VERBS = frozenset({"search", "searching", "look", "looking", "hunt", "hunting", "ask",
                          "asking"})
"""The verbs whose "for" is a wrapper ("search for an owl"), not a duration cue, when no number
follows it."""


def _skippable(tok: Token) -> bool:
    return tok.text in WRAPPER_WORDS or WORDS.get(tok.text) in _AROUND


def _search_for(tokens: list[Token], i: int) -> bool:
    """Whether ``tokens[i]`` is the "for" of "search for" / "looking for" before a sound."""
    return (tokens[i].text == "for" and i > 0 and tokens[i - 1].text in SEARCH_VERBS
            and i + 1 < len(tokens) and tokens[i + 1].kind != "num")


def drop_wrappers(tokens: list[Token], matches: list[LabelMatch]) -> list[Token]:
    """``tokens`` without the wrapper words before the first sound and after the last."""
    if not matches:
        return tokens
    first, last = matches[0].first, matches[-1].last
    head = 0
    drop = set()
    while head < first and (_skippable(tokens[head]) or _search_for(tokens, head)):
        if _search_for(tokens, head):
            drop.add(head)
        head += 1
    tail = len(tokens)
    while tail > last and _skippable(tokens[tail - 1]):
        tail -= 1
    keep = [t for i, t in enumerate(tokens)
            if i not in drop and not ((i < head or i >= tail) and t.text in WRAPPER_WORDS)]
    return keep if len(keep) != len(tokens) else tokens
