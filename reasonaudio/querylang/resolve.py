"""Sound-name resolution: a phrase that is not a label, read as the label(s) a person means.

Order (docs/query-language.md, "Resolution"): exact label, stemmed label (both in
:mod:`vocabulary`), then here: a verb or noun form of a label's sound ("a siren wails",
"thunder rumbling", "rainfall"); a head noun naming a *family* of labels ("a piano" -> or over
acoustic piano and electric piano); then a semantic nearest label from an injected matcher
(MiniLM in the models layer), accepted only above a calibrated similarity and a margin over
the runner-up. Every resolution is returned for display, so no guess is silent; what none of
these reads is an error listing the candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any, Callable, Optional, Sequence

from reasonaudio.querylang.families import (Families, families, fits, head_noun, label_parts,
                                              raw_words, sounds_of, verb_use)
from reasonaudio.querylang.lexicon import MODIFIERS
from reasonaudio.logic import And, Before, Count, Has, Interpreter, Lasts, Node, Not, Or, Overlap
from reasonaudio.querylang.vocabulary import SOUND_WORDS, stem, tokenize
from reasonaudio.errors import QueryParseError

SemanticMatcher = Callable[[str, Sequence[str]], list[tuple[str, float]]]
"""(phrase, labels) -> [(label, similarity)], best first; built in the models layer."""

SEMANTIC_THRESHOLD = 0.78
"""Cosine similarity a semantic match must reach (calibrated, docs/query-language.md)."""
SEMANTIC_MARGIN = 0.04
"""How far the best label must lead the runner-up (calibrated with the threshold)."""

FAMILY_PREFIX = "\x00family:"
"""Marks a family placeholder label inside the parser; expanded to ``or`` before returning."""

__all__ = ["Families", "FAMILY_PREFIX", "Resolution", "ResolveOptions", "STRICT", "families",
           "head_noun", "resolve_words", "semantic_pick", "expand_families", "noun_of",
           "unsaid_words"]


@dataclass(frozen=True)
class Resolution:
    """One phrase of the query and the label(s) it was read as."""
    text: str
    labels: tuple[str, ...]
    kind: str
    """exact | stem | verb-form | family | semantic"""
    score: float
    """1.0 for exact, stem, verb-form and family; the similarity for semantic"""
    start: int
    end: int
    detail: str = ""
    """e.g. "head noun 'piano': any of 2 labels" or "runner-up 'x' 0.41" """

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "labels": list(self.labels), "kind": self.kind,
                "score": round(self.score, 4), "start": self.start, "end": self.end,
                "detail": self.detail}


@dataclass(frozen=True)
class ResolveOptions:
    """How far the parser goes to read a phrase that is not a label."""
    strict: bool = False
    """only exact and stemmed labels (the parser's original behaviour)"""
    semantic: Optional[SemanticMatcher] = None
    threshold: float = SEMANTIC_THRESHOLD
    margin: float = SEMANTIC_MARGIN
    examples: Optional[Any] = field(default=None, compare=False, hash=False)
    """``<audio:NAME>`` placeholders: NAME -> its ``querylang.examples.ExampleLabel`` (None:
    a placeholder is refused)"""


STRICT = ResolveOptions(strict=True)


def resolve_words(words: Sequence[str], fams: Families) -> Optional[tuple[list[str], str, str]]:
    """Unknown words (as typed, case-folded) -> (labels, kind, detail) by form or family; None
    when neither reads them. Every word must be used: the head names the family and each other
    word must be a word of the chosen labels or a verb of their sound (:func:`fits`: "a bell
    ringing" keeps church bell tolling, "a horn honking" drops french horn); a trailing
    "sounds"/"noise" that no label holds says nothing ("bird sounds")."""
    found = _resolve(words, fams)
    if found is None and len(words) > 1 and words[-1] in SOUND_WORDS:
        found = _resolve(words[:-1], fams)
    return found


def _resolve(words: Sequence[str], fams: Families) -> Optional[tuple[list[str], str, str]]:
    forms = [x for w in words for x in fams.form_words(w)]
    kind = "verb-form" if forms != list(words) else "family"
    stems = [stem(w) for w in forms]
    spans = [(k - 1, k + 1) for k in range(len(stems) - 1, 0, -1)]   # compounds first
    spans += [(k, k + 1) for k in range(len(stems) - 1, -1, -1)]
    for lo, hi in spans:
        head = " ".join(stems[lo:hi])
        cands = fams.family(head, hi - lo == 1 and verb_use(forms[lo]))
        for k in [*range(lo), *range(hi, len(stems))]:
            # a word after the head, or an -ing word, may be a verb of its sound ("a bell
            # rings", "a ringing bell"); one before it is a noun ("a crow crowing")
            verb = k >= hi or verb_use(forms[k])
            cands = [c for c in cands if fams.names(stems[k], c, verb_use(forms[k]))
                     or (verb and fits(stems[k], c))]
        if not cands:
            continue
        written = " ".join(forms[lo:hi])
        if kind == "family":
            detail = f"head noun {written!r}"
        else:
            detail = f"{' '.join(words)!r} is a form of {written!r}"
        return cands, kind, detail
    # "car honking" where no label's head is car: a word of the label plus a verb of its sound
    hits = [lab for lab in fams.labels
            if all(fams.names(o, lab) or fits(o, lab) for o in stems)
            and any(fams.names(o, lab, False) for o in stems)
            and any(fits(o, lab) and not fams.names(o, lab) for o in stems)]
    if hits:
        return hits, "verb-form", f"{' '.join(words)!r}: how {_quote(hits)} sound(s)"
    return None


def noun_of(words: Sequence[str], fams: Families) -> Optional[tuple[int, list[str]]]:
    """The first word written as a noun that names labels as their thing (a head noun, a kind
    or an alias of one: "piano", "someone"), and those labels; None when no word does."""
    for k, w in enumerate(words):
        s = stem(fams.form_words(w)[0])
        s = fams.table.aliases.get(s, s)
        if not verb_use(w) and (s in fams.heads or s in fams.table.kinds):
            labs = fams.family(s)
            if labs:
                return k, labs
    return None


def unsaid_words(words: Sequence[str], fams: Families) -> list[str]:
    """Words no rule can carry into the logic: a modifier (:data:`MODIFIERS`, an -ly adverb)
    anywhere, or any word before a noun that names labels ("soft piano", "an old car"), that is
    neither a word of a label nor of the family table. Such a word is refused, never dropped
    and never handed to the semantic matcher, which would absorb it."""
    bad = [w for w in words if modifier(w) and not fams.known(w)]
    found = noun_of(words, fams)
    if found is not None:
        bad += [w for w in words[:found[0]] if not fams.known(w) and w not in bad]
    return bad


def modifier(word: str) -> bool:
    """A word that says how a sound is (loud, fast, old, quickly): :data:`MODIFIERS` or an -ly
    adverb."""
    return word in MODIFIERS or (len(word) > 4 and word.endswith("ly"))


def noun_guard(words: Sequence[str], label: str, fams: Families) -> str:
    """Why a semantic pick may not stand for a phrase that writes a noun naming labels ("" when
    it may): the pick must be of that noun's family ("someone whistling" is no referee
    whistle), and every other word a word of the pick, a verb of its sound, or a verb after the
    noun standing for the pick's own verb that the family table does not call another sound
    ("glass shattering" -> glass breaking; "a dog howling" is not dog barking) and that no
    other label of the family says as well ("human speech" is not man speaking alone)."""
    found = noun_of(words, fams)
    if found is None:
        return ""
    k, labs = found
    if label not in labs:
        return f"{words[k]!r} names {_quote(labs)}, not {label!r}"
    own = label_parts(label).verbs
    for i, w in enumerate(words):
        s = stem(w)
        if i == k or fams.names(s, label) or fits(s, label):
            continue
        groups = sounds_of(label)
        other_sound = any(s in g for g in groups) and any(own & g.verbs for g in groups)
        if i < k or modifier(w) or not own or other_sound:
            return f"{w!r} is not said by {label!r}"
        alike = [lab for lab in labs if label_parts(lab).verbs & own]
        if len(alike) > 1:   # "human speech": man speaking or woman speaking, not one of them
            return f"{w!r} fits {_quote(alike)} alike"
    return ""


def _quote(labels: Sequence[str], n: int = 4) -> str:
    shown = ", ".join(repr(x) for x in labels[:n])
    return shown + (f" and {len(labels) - n} more" if len(labels) > n else "")


def word_guard(phrase: str, label: str, fams: Families) -> list[str]:
    """Words of the phrase that name part of *some* label but not of ``label`` (or only sit in
    a compound of it that they do not name, or are only part of one of its words): "dog growls"
    must not become dog barking (growl is bear growling's word), nor "car honking" goose
    honking, nor "a lion" sea lion barking, nor "board" keyboard typing. A semantic pick that
    leaves such a word unexplained is refused."""
    missing = []
    for t in tokenize(phrase):
        if t.kind != "word":
            continue
        for w in fams.form_words(t.text):
            s = stem(w)
            if (s in fams.all_stems and not fams.names(s, label)) or _inside_a_word(s, label):
                missing.append(t.text)
                break
    return missing


def _inside_a_word(word_stem: str, label: str) -> bool:
    """Whether a word is only part of a word of the label ("phone" in saxophone, "board" in
    keyboard): such a word never names the label."""
    words = raw_words(label)
    return len(word_stem) >= 3 and all(stem(w) != word_stem for w in words) \
        and any(word_stem in w for w in words)


def semantic_pick(phrase: str, labels: Sequence[str], options: ResolveOptions,
                  fams: Optional[Families] = None, glued: Sequence[str] = ()
                  ) -> tuple[Optional[tuple[str, float, str]], list[tuple[str, float]], str]:
    """The matcher's best label if it clears the threshold, the margin and the word and noun
    guards, the top candidates (for the error when it does not) and why it did not. A pick
    that is a label ``glued`` to the words is returned for the caller to refuse, naming them."""
    if options.semantic is None:
        return None, [], ""
    scored = list(options.semantic(phrase, labels))[:5]
    if not scored:
        return None, [], ""
    best, score = scored[0]
    second = scored[1][1] if len(scored) > 1 else -1.0
    fams = fams if fams is not None else families(tuple(labels))
    missing = word_guard(phrase, best, fams)
    if missing:
        return None, scored, (f"{' '.join(missing)!r} names part of another label, not of "
                              f"{best!r}")
    unsaid = "" if best in glued else noun_guard(
        [t.text for t in tokenize(phrase) if t.kind == "word"], best, fams)
    if unsaid:
        return None, scored, unsaid
    if score >= options.threshold and score - second >= options.margin:
        runner = f"runner-up {scored[1][0]!r} {second:.2f}" if len(scored) > 1 else ""
        return (best, score, runner), scored, ""
    return None, scored, (f"a match needs similarity >= {options.threshold:.2f} and a lead of "
                          f"{options.margin:.2f} over the next")


def candidates_text(scored: list[tuple[str, float]], why: str) -> str:
    shown = ", ".join(f"{lab!r} {s:.2f}" for lab, s in scored[:3])
    return f"semantic candidates {shown} ({why})"


FamilyLabels = dict[str, tuple[str, ...]]
"""family placeholder label -> the labels it stands for"""

EXPAND = Interpreter("family expansion (resolve.expand_families)")
"""node, families -> the node with family placeholders replaced; one handler per node type."""


def expand_families(node: Node, fams: FamilyLabels) -> Node:
    """Replace family placeholders by ``or`` over their labels: has(piano) -> any of
    has(acoustic piano), has(electric piano); before(piano, violin) -> any of the befores.
    A pair that would relate a label to itself is left out (no sound comes before or overlaps
    itself: occurrences of one label are 0.5 s apart)."""
    return EXPAND(node, fams) if fams else node


def _alts(label: str, fams: FamilyLabels) -> tuple[str, ...]:
    return fams.get(label, (label,))


def _any_of(nodes: list[Node]) -> Node:
    nodes = list(dict.fromkeys(nodes))
    if not nodes:
        raise QueryParseError("contradictory query: a family of sounds would have to come "
                              "before or overlap itself")
    return nodes[0] if len(nodes) == 1 else Or(tuple(nodes))


@EXPAND.register(Has)
def _has(node: Has, fams: FamilyLabels) -> Node:
    return _any_of([Has(x) for x in _alts(node.label, fams)])


@EXPAND.register(Lasts)
def _lasts(node: Lasts, fams: FamilyLabels) -> Node:
    return _any_of([Lasts(x, node.seconds) for x in _alts(node.label, fams)])


@EXPAND.register(Count)
def _count(node: Count, fams: FamilyLabels) -> Node:
    return _any_of([Count(x, node.n) for x in _alts(node.label, fams)])


@EXPAND.register(Before, Overlap)
def _pair(node: Before | Overlap, fams: FamilyLabels) -> Node:
    return _any_of([type(node)(a, b) for a, b in product(_alts(node.a, fams), _alts(node.b, fams))
                    if a != b])


@EXPAND.register(Not)
def _not(node: Not, fams: FamilyLabels) -> Node:
    return Not(EXPAND(node.arg, fams))


@EXPAND.register(And, Or)
def _and_or(node: And | Or, fams: FamilyLabels) -> Node:
    return type(node)(tuple(EXPAND(a, fams) for a in node.args))
