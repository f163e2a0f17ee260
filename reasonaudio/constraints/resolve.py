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
from functools import lru_cache
from itertools import product
from typing import Any, Callable, Optional, Sequence

from reasonaudio.constraints.family_table import family_table
from reasonaudio.logic import And, Before, Count, Has, Interpreter, Lasts, Node, Not, Or, Overlap
from reasonaudio.constraints.vocabulary import stem, tokenize
from reasonaudio.errors import QueryParseError

SemanticMatcher = Callable[[str, Sequence[str]], list[tuple[str, float]]]
"""(phrase, labels) -> [(label, similarity)], best first; built in the models layer."""

SEMANTIC_THRESHOLD = 0.78
"""Cosine similarity a semantic match must reach (calibrated, docs/query-language.md)."""
SEMANTIC_MARGIN = 0.04
"""How far the best label must lead the runner-up (calibrated with the threshold)."""

FAMILY_PREFIX = "\x00family:"
"""Marks a family placeholder label inside the parser; expanded to ``or`` before returning."""

_SOUND_VERBS = """
wail wails wailing blare blares blaring howl howls howling bark barks barking woof yap yelp
growl growls growling roar roars roaring rumble rumbles rumbling boom booms booming crash crashes
crashing crack cracks cracking crackle crackles crackling clap claps clapping patter patters
pattering pour pours pouring fall falls falling drip drips dripping drizzle drizzling chirp
chirps chirping tweet tweets tweeting sing sings singing warble warbles warbling ring rings
ringing toll tolls tolling chime chimes chiming peal peals pealing ding dings dinging buzz buzzes
buzzing hum hums humming drone drones droning whir whirs whirring whirr beep beeps beeping honk
honks honking hoot hoots hooting toot toots tooting whistle whistles whistling blow blows blowing
gust gusts gusting rustle rustles rustling splash splashes splashing gurgle gurgles gurgling
bubble bubbles bubbling flow flows flowing trickle trickles trickling purr purrs purring meow
meows meowing moo moos mooing bleat bleats bleating neigh neighs neighing quack quacks quacking
cluck clucks clucking caw caws cawing croak croaks croaking hiss hisses hissing squeak squeaks
squeaking squeal squeals squealing screech screeches screeching shriek shrieks shrieking scream
screams screaming cry cries crying laugh laughs laughing cough coughs coughing sneeze sneezes
sneezing snore snores snoring clatter clatters clattering clang clangs clanging clank clanks
clink clinks clinking jingle jingles jingling knock knocks knocking tap taps tapping bang bangs
banging thud thuds thump thumps thumping slam slams slamming creak creaks creaking tick ticks
ticking tock click clicks clicking snap snaps snapping pop pops popping rattle rattles rattling
strum strums strumming explode explodes exploding hit hits roll rolls rolling beat beats beating
""".split()
SOUND_VERB_STEMS = frozenset(stem(w) for w in _SOUND_VERBS)
"""Stems of verbs that say how a sound sounds; they may follow (or precede) a label that has
no verb of its own ("a siren wails", "rumbling thunder")."""

_SOUND_OF = {
    "siren": "wail blare howl sound scream", "thunder": "rumble roll crash boom clap crack",
    "rain": "fall pour patter drizzle drip", "bell": "ring toll chime peal ding",
    "wind": "blow howl gust whistle whoosh", "water": "flow run drip splash trickle gurgle",
    "fire": "crackle roar burn", "clock": "tick tock chime", "engine": "roar rev hum run idle",
    "horn": "honk blare toot sound", "door": "creak slam knock bang", "telephone": "ring",
    "phone": "ring", "alarm": "ring beep sound", "whistle": "blow shrill", "drum": "beat roll",
    "baby": "cry wail", "cat": "meow purr", "cow": "moo", "sheep": "bleat", "goat": "bleat",
    "horse": "neigh whinny", "duck": "quack", "owl": "hoot", "wolf": "howl", "lion": "roar",
    "bee": "buzz hum", "helicopter": "whir hover", "train": "rumble whistle", "guitar": "strum",
    "applause": "erupt", "explosion": "boom", "heartbeat": "thump beat pound",
    "typewriter": "clack click", "chainsaw": "buzz whine", "jackhammer": "pound rattle",
    "gong": "ring", "cymbal": "crash ring", "frog": "croak", "crow": "caw", "rooster": "crow",
    "turkey": "gobble", "donkey": "bray", "pig": "oink grunt", "snake": "hiss",
    "ocean": "crash roar", "wave": "crash break", "river": "flow run",
    "glass": "shatter smash", "zipper": "zip", "chime": "ring tinkle jingle",
}
SOUND_OF: dict[str, frozenset[str]] = {
    k: frozenset(stem(v) for v in vs.split()) for k, vs in _SOUND_OF.items()}
"""Head noun -> stems of the verbs that say that sound ("a siren wails", "rain falls"): a
verb-form reading only joins a verb to a label whose sound it is (not "thunder falling")."""

NOUN_FORMS = {"rainfall": "rain", "raindrop": "rain", "raindrops": "rain",
              "thunderclap": "thunder", "thunderclaps": "thunder", "birdsong": "bird",
              "birdsongs": "bird", "applauding": "applause", "applaud": "applause",
              "applauds": "applause", "explode": "explosion", "explodes": "explosion",
              "exploding": "explosion"}
"""A word that names a label's sound in another form; read as that word, then resolved."""

_HEAD_STOP = frozenset("on of by with in off away from into to at".split())


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
    """``<audio:NAME>`` placeholders: NAME -> its ``constraints.examples.ExampleLabel`` (None:
    a placeholder is refused)"""


STRICT = ResolveOptions(strict=True)


def _raw_words(label: str) -> list[str]:
    return [t.text for t in tokenize(label) if t.kind == "word"]


def head_noun(label: str) -> Optional[str]:
    """The stem of a label's head noun: words before a preposition, minus trailing verbs
    ("church bell tolling" -> bell, "dog barking" -> dog, "acoustic piano" -> piano)."""
    words = _raw_words(label)
    for k, w in enumerate(words):
        if k and w in _HEAD_STOP:
            words = words[:k]
            break
    while words and words[-1].endswith("ing"):
        words = words[:-1]
    while len(words) > 1 and stem(words[-1]) in SOUND_VERB_STEMS:
        words = words[:-1]
    return stem(words[-1]) if words else None


def head_nouns(label: str) -> set[str]:
    """:func:`head_noun`, plus the last word when it is a sound word that is also a noun
    ("desk bell ding" -> bell, ding; "tiny chime" -> chime; "car crash" -> car, crash)."""
    out = {head_noun(label)} - {None}
    words = [w for w in _raw_words(label) if not w.endswith("ing")]
    if words and words[-1] not in _HEAD_STOP:
        cut = _raw_words(label)
        for k, w in enumerate(cut):
            if k and w in _HEAD_STOP:
                cut = cut[:k]
                break
        tail = [w for w in cut if not w.endswith("ing")]
        if tail:
            out.add(stem(tail[-1]))
    return out  # type: ignore[return-value]


def has_verb(label: str) -> bool:
    """Whether a label already says how its sound sounds (an -ing word or a sound verb)."""
    words = _raw_words(label)
    return any(w.endswith("ing") or (k and stem(w) in SOUND_VERB_STEMS) for k, w in enumerate(words))


def verb_of(label: str, words: Sequence[str]) -> bool:
    """Whether ``words`` are verbs of the label's sound ("wails" for siren), for a label that
    has no verb of its own."""
    verbs = frozenset().union(*(SOUND_OF.get(h, frozenset()) for h in head_nouns(label)))
    return bool(words) and not has_verb(label) and all(stem(w) in verbs for w in words)


class Families:
    """Head noun stem -> the labels it names, for one vocabulary, with the family table
    (:mod:`.family_table`): kinds, aliases and compounds."""

    def __init__(self, labels: Sequence[str]) -> None:
        table = family_table()
        self.labels = tuple(labels)
        self.heads: dict[str, list[str]] = {}
        self.stems = {label: {stem(w) for w in _raw_words(label)} for label in self.labels}
        self.blocked: dict[str, set[str]] = {}
        """label -> stems that occur in it only inside a compound they do not name"""
        for label in self.labels:
            words = [stem(w) for w in _raw_words(label)]
            pairs = [(a, b) for a, b in zip(words, words[1:]) if (a, b) in table.compounds]
            blocked = {table.compounds[p] for p in pairs}
            blocked = {w for w in blocked if words.count(w) == 1}
            self.blocked[label] = blocked
            for h in sorted(head_nouns(label) - blocked) + [f"{a} {b}" for a, b in pairs]:
                self.heads.setdefault(h, []).append(label)
        self.all_stems = frozenset(x for st in self.stems.values() for x in st)
        self.verb_stems = frozenset(stem(w) for label in self.labels
                                    for k, w in enumerate(_raw_words(label))
                                    if k and (w.endswith("ing") or stem(w) in SOUND_VERB_STEMS))
        self.table = table

    def is_verb(self, word_stem: str) -> bool:
        """Whether a word names labels only as their verb ("barking"), heading none."""
        return word_stem in self.verb_stems and word_stem not in self.heads

    def names(self, word_stem: str, label: str) -> bool:
        """Whether a word of this stem is a word of the label that may name it."""
        return word_stem in self.stems[label] and word_stem not in self.blocked[label]

    def family(self, word_stem: str) -> list[str]:
        """Labels a word (or a two-word compound, stems joined by a space) names: those whose
        head noun it is, those of the kind it names, those of the head noun it is an alias of;
        when it names some label, every label with a word of that stem belongs too (one
        stemming rule: beep, beeps, beeping; "a car" includes car horn), except where the word
        only sits inside a compound it does not name (sea lion, wind chimes). A verb of some
        label's sound ("barking") names every label with that verb. A word that is only the
        tail of a label's word ("phone" in saxophone) names nothing."""
        t = self.table
        word_stem = t.aliases.get(word_stem, word_stem)
        out = list(self.heads.get(word_stem, []))
        for member in t.kinds.get(word_stem, ()):
            out += self.heads.get(t.aliases.get(member, member), [])
        if out or word_stem in self.verb_stems:
            out += [lab for lab in self.labels if self.names(word_stem, lab)]
        return sorted(dict.fromkeys(out))


@lru_cache(maxsize=16)
def families(labels: tuple[str, ...]) -> Families:
    return Families(labels)


def resolve_words(words: Sequence[str], fams: Families) -> Optional[tuple[list[str], str, str]]:
    """Unknown words (as typed, case-folded) -> (labels, kind, detail) by noun form or family;
    None when neither reads them. Every word must be used: the head names the family and each
    other word must occur in the chosen labels ("sirens wailing" keeps the wailing sirens)."""
    forms = [NOUN_FORMS.get(w, w) for w in words]
    kind = "verb-form" if forms != list(words) else "family"
    stems = [stem(w) for w in forms]
    spans = [(k - 1, k + 1) for k in range(len(stems) - 1, 0, -1)]   # compounds first
    spans += [(k, k + 1) for k in range(len(stems) - 1, -1, -1)]
    for lo, hi in spans:
        head = " ".join(stems[lo:hi])
        cands = fams.family(head)
        if not cands:
            continue
        others = stems[:lo] + stems[hi:]
        verbs = SOUND_OF.get(stems[hi - 1], frozenset())
        for o in others:
            # "a bell rings": a verb of the head's sound also fits labels without a verb
            cands = [c for c in cands if fams.names(o, c) or (o in verbs and not has_verb(c))]
        if not cands:
            continue
        written = " ".join(forms[lo:hi])
        if kind == "family":
            detail = f"head noun {written!r}"
        else:
            detail = f"{' '.join(words)!r} is a form of {written!r}"
        return cands, kind, detail
    # "a car honks": the label's other words, plus a verb of its head's sound ("car horn")
    want = set(stems)
    hits = []
    for label in fams.labels:
        head = head_noun(label)
        verbs = SOUND_OF.get(head or "", frozenset())
        rest = fams.stems[label] - {head}
        if head and not has_verb(label) and rest and rest <= want and want - rest \
                and want - rest <= verbs:
            hits.append(label)
    if len(hits) == 1:
        return hits, "verb-form", f"{' '.join(words)!r}: how {hits[0]!r} sounds"
    return None


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
        s = stem(NOUN_FORMS.get(t.text, t.text))
        if (s in fams.all_stems and not fams.names(s, label)) or _inside_a_word(s, label):
            missing.append(t.text)
    return missing


def _inside_a_word(word_stem: str, label: str) -> bool:
    """Whether a word is only part of a word of the label ("phone" in saxophone, "board" in
    keyboard): such a word never names the label."""
    words = _raw_words(label)
    return len(word_stem) >= 3 and all(stem(w) != word_stem for w in words) \
        and any(word_stem in w for w in words)


def semantic_pick(phrase: str, labels: Sequence[str], options: ResolveOptions,
                  fams: Optional[Families] = None
                  ) -> tuple[Optional[tuple[str, float, str]], list[tuple[str, float]], str]:
    """The matcher's best label if it clears the threshold, the margin and the word guard,
    the top candidates (for the error when it does not) and why it did not."""
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
