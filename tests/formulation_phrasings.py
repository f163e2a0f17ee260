"""Free phrasings of the generator's shapes in the five user-intent forms, written apart from the
templates (no template or training paraphrase is among them), for the parser's acceptance test:
over the real-sound bank's labels they must be read right nearly always and never read wrong."""

from __future__ import annotations

WRAPPERS = (
    "{q}", "{q}?", "could you find {q}?", "please show me {q}", "I'm looking for {q}",
    "can you search for {q}, please?", "give me recordings of {q}", "I want audio of {q}",
    "list all clips where {q}", "are there any sounds of {q}?", "find me something with {q}",
    "which tracks have {q}?", "kindly retrieve clips of {q}", "hey, show me {q}, thanks",
    "return every recording with {q}", "looking for {q}", "help me find {q}",
)
"""How a request wraps a query; ``{q}`` is one of :data:`BODIES`."""

BODIES: dict[str, tuple[str, ...]] = {
    "negation": ("{A} and {B} but not {C}", "{A} plus {B} with no {C}", "{A}, {B}, not {C}",
                 "{A} & {B} minus {C}", "{A} along with {B} and no {C} at all",
                 "{A} and {B}; {C} is not present", "{A}, {B}, -{C}", "{A} AND {B} NOT {C}"),
    "order": ("{A} and then {B}", "{A}, after that {B}", "{B} following {A}",
              "{A} prior to {B}", "{A}, later {B}", "{A} -> {B}", "{B} preceded by {A}"),
    "overlap": ("{A} alongside {B}", "{A} and {B} at the same time", "{A} overlapping {B}",
                "{A} + {B} together", "{A} concurrently with {B}", "{A} while {B} plays"),
    "duration": ("{A} for about {N} seconds", "{N} seconds of {A}", "{A} lasting {N} s",
                 "{A} {N}s", "{A} going for around {N} seconds", "{A} ({N} seconds)"),
    "m1": ("{A} for {N} seconds and then {B}", "{A} lasting {N} s, after that {B}",
           "{A} {N}s -> {B}"),
    "m2": ("{A} and then {B}, but not {C}", "{A} -> {B}, -{C}", "{A} prior to {B}, no {C}"),
    "m3": ("{A} lasting {N} s at the same time as {B}", "{A} {N}s + {B} together"),
    "m4": ("{A}, after that {B} and {C} at the same time", "{A} -> {B} + {C} together"),
    "m5": ("{A} for {N} seconds, and then {B}, and then {C} and {D} at the same time",
           "{A} {N}s -> {B} -> {C} + {D} together"),
}
"""Query bodies per shape (``{A}`` .. ``{D}`` labels, ``{N}`` seconds)."""


def real_labels() -> list[str]:
    """The real-sound bank's 201 class labels (from the recipes that fetch it)."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "reasonaudio" / "data" / "atom_recipes.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return sorted({r["label"] for r in rows if r.get("record") == "atom"})


def draw(rng, vocab):
    """One free phrasing over ``vocab``: ``(text, the logic it means)``."""
    from reasonaudio.generator.templates import format_slots
    from reasonaudio.tasks.registry import shape

    name = rng.choice(sorted(BODIES))
    s = shape(name)
    slots = dict(zip(s.labels, rng.sample(vocab, len(s.labels))))
    if s.numbers:
        slots["N"] = float(rng.choice([1, 2, 5, 10, 15, 20]))
    text = rng.choice(WRAPPERS).format(q=rng.choice(BODIES[name]).format(**format_slots(slots)))
    return text, s.logic(slots)


def tally(rng, vocab, draws: int):
    """``(right, refused, wrong)`` over ``draws`` free phrasings; ``wrong`` lists (text, logic read)."""
    from reasonaudio.querylang.canonical import same_logic
    from reasonaudio.querylang.parser import parse
    from reasonaudio.errors import QueryParseError

    right = refused = 0
    wrong = []
    for _ in range(draws):
        text, logic = draw(rng, vocab)
        try:
            got = parse(text, vocab)
        except QueryParseError:
            refused += 1
            continue
        if same_logic(got, logic):
            right += 1
        else:
            wrong.append((text, got))
    return right, refused, wrong
