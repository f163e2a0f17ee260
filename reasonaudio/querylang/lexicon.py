"""The query language's words: what each connective, filler, unit and number word means.

Kept apart from the parser so the vocabulary of the language can be read (and documented in
docs/query-language.md) in one place. Keys are case-folded query words; phrases are matched
longest first and win over single words.
"""

from __future__ import annotations

from reasonaudio.querylang.semantics import DURATION_TOLERANCE_TEXT

FWD, REV, OVL, NEG, NOR, AND, OR = "fwd", "rev", "ovl", "neg", "nor", "and", "or"
FIRST, EACH, ORDER, STOP, COMMA, DUR = "first", "each", "order", "stop", "comma", "dur"
FILLER, NUM, UNIT, DURCUE, CMP, UNSUPPORTED = "filler", "num", "unit", "durcue", "cmp", "unsupported"
TIMES, CNT = "times", "cnt"
BEGIN, END = "begin", "end"
BOTH, REFUSED = "both", "refused"

PHRASES: dict[tuple[str, ...], str] = {
    ("at", "the", "same", "time", "as"): OVL, ("at", "the", "same", "time"): OVL,
    ("the", "same", "time", "as"): OVL, ("same", "time", "as"): OVL, ("same", "time"): OVL,
    ("at", "once"): OVL, ("in", "parallel"): OVL,
    # the paper's negation template reads "A together with B" as both present; "together" on its
    # own ("A and B together") and "together with B at once" are overlap
    ("together", "with"): AND, ("at", "all"): FILLER,
    ("starts", "with"): FIRST, ("start", "with"): FIRST, ("starting", "with"): FIRST,
    ("begins", "with"): FIRST, ("begin", "with"): FIRST, ("beginning", "with"): FIRST,
    ("opens", "with"): FIRST, ("opening", "with"): FIRST,
    ("transitions", "to"): FWD, ("transitions", "into"): FWD, ("transition", "to"): FWD,
    ("transition", "into"): FWD, ("transitioning", "to"): FWD, ("transitioning", "into"): FWD,
    ("changes", "to"): FWD, ("changes", "into"): FWD, ("changing", "to"): FWD,
    ("turns", "into"): FWD, ("turning", "into"): FWD, ("gives", "way", "to"): FWD,
    ("giving", "way", "to"): FWD, ("moves", "on", "to"): FWD, ("leads", "to"): FWD,
    ("leading", "to"): FWD, ("leads", "into"): FWD, ("ends", "with"): FWD,
    ("ending", "with"): FWD, ("at", "the", "beginning"): BEGIN, ("at", "the", "start"): BEGIN,
    ("in", "the", "beginning"): BEGIN, ("at", "first"): BEGIN, ("at", "the", "end"): END,
    ("in", "the", "end"): END,
    ("in", "the", "background"): FILLER, ("in", "the", "foreground"): FILLER,
    ("as", "well", "as"): AND, ("along", "with"): AND,
    ("followed", "by"): FWD, ("preceded", "by"): REV, ("and", "then"): FWD,
    ("in", "any", "order"): FILLER, ("in", "either", "order"): FILLER,
    ("in", "no", "particular", "order"): FILLER, ("next", "to"): REFUSED,
    ("prior", "to"): FWD, ("earlier", "than"): FWD, ("later", "than"): REV, ("at", "last"): FWD,
    ("in", "that", "order"): ORDER, ("in", "this", "order"): ORDER, ("in", "order"): ORDER,
    ("one", "after", "the", "other"): ORDER, ("one", "after", "another"): ORDER,
    ("in", "sequence"): ORDER, ("in", "sequential", "order"): ORDER,
    ("free", "of"): NEG, ("but", "not"): NEG, ("but", "no"): NEG, ("and", "not"): NEG,
    ("and", "no"): NEG,
    ("more", "than"): CMP, ("less", "than"): CMP, ("fewer", "than"): CMP, ("at", "least"): CMP,
    ("at", "most"): CMP, ("longer", "than"): CMP, ("shorter", "than"): CMP, ("up", "to"): CMP,
    ("no", "more", "than"): CMP, ("no", "less", "than"): CMP, ("no", "longer", "than"): CMP,
}

ORDER_WORDS: dict[tuple[str, ...], str] = {
    ("before",): FWD, ("prior", "to"): FWD, ("earlier", "than"): FWD, ("preceding",): FWD,
    ("until",): FWD, ("till",): FWD,
    ("after",): REV, ("following",): REV, ("later", "than"): REV,
}
"""Order prepositions: "A before B" is A first (fwd), "A after B" is B first (rev)."""
BACK_REFERENCES = ("that", "this", "it", "which", "them", "these", "those", "then")
"""Words that point back at the sound (or group of sounds) named before them."""
DETERMINERS = frozenset({"that", "this", "these", "those"})
"""Of those, the ones that may also pick out the sound right after them ("after that dog")."""
BACK_REFERENCE_PHRASES: dict[tuple[str, ...], str] = {
    prep + (ref,): REV if kind == FWD else FWD
    for prep, kind in ORDER_WORDS.items() for ref in BACK_REFERENCES
    if ref != "then" or prep in (("before",), ("until",), ("till",), ("prior", "to"))}
"""An order preposition whose object points back ("A, and before that B") orders the sound
after it against the sound before: the direction of "A before B" reversed ("A, before that B" =
B, then A; "A, after that B" = A, then B)."""
PHRASES.update(BACK_REFERENCE_PHRASES)
BACK_REFERENCE_WORDS = frozenset({"earlier", "previously", "beforehand"})
"""Order adverbs that point back: "A, and earlier B" = B, then A."""
PHRASE_MAX = max(len(p) for p in PHRASES)

WORDS: dict[str, str] = {}
for _kind, _words in {
    FWD: "then before next later afterwards afterward subsequently finally eventually lastly "
         "precedes precede preceding until till thereafter followed",
    REV: "after follows follow following earlier previously beforehand",
    OVL: "while whilst during overlapping overlaps overlap overlapped simultaneously simultaneous "
         "concurrently concurrent together amid amidst meanwhile alongside as",
    NEG: "no not without excluding exclude excludes excluded except never none neither lacking "
         "lacks lack minus",
    NOR: "nor",
    AND: "and with plus but",
    OR: "or",
    FIRST: "first firstly initially",
    EACH: "each",
    BOTH: "both",
    TIMES: "times twice thrice",
    UNIT: "second seconds sec secs s minute minutes min mins ms millisecond milliseconds",
    DURCUE: "for lasting lasts last lasted long",
    CMP: "than more less least most longer shorter under between within exceeding",
    FILLER: "a an the some any sound sounds noise noises audio clip clips recording recordings "
            "track of is are was were be been being can could will would should may might must "
            "do does did has have having had contains contain containing contained includes "
            "include including included featuring features feature there it its this that which "
            "who whose where in on at to by from heard hear hears hearing audible sounding "
            "occurs occur occurring occurred happens happen happening happened plays play playing "
            "played present clearly also too either continuously continuous constantly "
            "steadily uninterrupted nonstop approximately around about roughly nearly "
            "almost approx exactly circa duration goes going keeps keep continues continue continuing comes "
            "come coming appears appear appearing me find show search looking look want i we "
            "give get query something background foreground event events anywhere whatsoever "
            "somewhere",
}.items():
    for _w in _words.split():
        WORDS[_w] = _kind
for _p in ",([)]":
    WORDS[_p] = COMMA
for _p in ".;:!?":
    WORDS[_p] = STOP
WORDS.update({"&": AND, "+": AND, "/": OR, "~": FILLER, "->": FWD})

_ONLY = ("'{w}' (no other sounds) cannot be expressed: it would exclude every other label; "
         "name the sounds to exclude with 'no', or drop '{w}'")
UNSUPPORTED_WORDS: dict[str, str] = {
    **{w: _ONLY.format(w=w) for w in ("only", "just", "solely", "exclusively", "purely",
                                        "alone", "nothing", "other")},
    "again": "'again' is not read; ask for repetitions with a count: 'A twice', 'A 3 times', "
             "'exactly 3 A'",
    "repeatedly": "'repeatedly' is not read; ask for repetitions with a count: 'A twice', "
                  "'A 3 times', 'exactly 3 A'",
    "when": "'when' is not read; use 'while' for overlap or 'then'/'after' for order",
    "whenever": "'whenever' is not read; use 'while' for overlap",
    "if": "conditions ('if') cannot be expressed; use and/or/no",
    "starts": "event starts and ends cannot be asked for separately; 'A before B' means A ends "
              "before B starts",
    "start": "event starts and ends cannot be asked for separately; 'A before B' means A ends "
             "before B starts",
    "begins": "event starts and ends cannot be asked for separately; 'A before B' means A ends "
              "before B starts",
    "ends": "event starts and ends cannot be asked for separately; 'A before B' means A ends "
            "before B starts",
    "louder": "loudness cannot be asked for", "quieter": "loudness cannot be asked for",
    "softer": "loudness cannot be asked for",
}

REFUSED_PHRASES: dict[tuple[str, ...], str] = {
    ("next", "to"): "'next to' is not read; write 'while' for sounds at the same time or 'then' "
                    "for order",
}
"""Phrases (kind REFUSED in :data:`PHRASES`) refused with a message, never read as their words."""

MODIFIERS = frozenset("""
loud loudly soft softly quiet quietly faint faintly noisy silent muffled muted distant far
faraway nearby near close fast quick quickly slow slowly rapid rapidly speedy brisk big small
large huge tiny little giant enormous massive old new young ancient modern vintage heavy heavily
light lightly gentle gently hard harsh sharp strong weak intense mild violent sudden suddenly
abrupt high low deep shrill pure busy dense sparse steady clear crisp dull bright warm angry
angrily happy happily sad sadly excited calm frantic nervous playful very really extremely
slightly somewhat quite rather pretty fairly
""".split())
"""Words that say how a sound is (loudness, speed, size, age, manner) and the words that grade
them: the logic has no word for them, so one that is not a word of a label is refused wherever it
stands, never dropped or absorbed into a nearest label ("soft piano", "a car passing quickly")."""
HEDGES = frozenset({"approximately", "around", "about", "roughly", "nearly", "almost",
                    "approx", "exactly", "circa"})
"""Fillers that qualify a number ("about 5 seconds", "exactly 3 door knocks"); anywhere else
("almost no dog") they would change the meaning unread, so they are refused."""
CONTINUITY = frozenset({"continuously", "continuous", "constantly", "steadily", "uninterrupted",
                        "nonstop"})
"""Fillers that go with a duration ("continuously for 10 seconds"); without one ("siren
continuously") the logic cannot say it, so they are refused."""

COUNT_WORDS = {"twice": 2, "thrice": 3}
"""Counts said in one word ("A twice"); any other count is a number and "times" ("A 3 times",
"A three times") or a number right before the sound ("exactly 3 A", "two door knocks")."""
LASTING_WORDS = frozenset({"lasting", "lasts", "last", "lasted"})
LEFT_DUR_WORDS = LASTING_WORDS | {"for"}
POSITION_BEFORE = frozenset({"at", "in", "from", "since", "by", "past", "after", "before",
                             "until", "till"})
"""Words right before a number that make it a point in time ("at 5 seconds", "after 5 s")."""
POSITION_AFTER = frozenset({"later", "after", "before", "afterwards", "afterward", "thereafter",
                            "prior", "in"})
"""Words right after "N seconds" (with no "for"/"lasting"/"long") that make it a gap ("B 5
seconds after A", "A, then 5 seconds later B", "5 seconds in")."""
TIME_POSITION_MSG = ("a time position or gap ('at 5 seconds', '5 seconds later', 'B 5 seconds "
                     "after A', 'the first 5 seconds') cannot be asked for: the logic has order "
                     "('A, then B') and length ('A for 5 seconds') only")
PREFIX_SEQ_WORDS = frozenset({"after", "before", "following"})
UNIT_SECONDS = {"second": 1.0, "seconds": 1.0, "sec": 1.0, "secs": 1.0, "s": 1.0,
                "minute": 60.0, "minutes": 60.0, "min": 60.0, "mins": 60.0,
                "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001}
ONES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
DUR_CMP_MSG = ("only 'about N seconds' durations can be asked for (the judge allows "
               + DURATION_TOLERANCE_TEXT + " either side); bounds such as {w!r} cannot be expressed")
