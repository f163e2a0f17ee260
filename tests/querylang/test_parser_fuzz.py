"""Any text gives valid logic over the vocabulary or a one-line QueryParseError, never a crash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from reasonaudio.querylang.canonical import check_consistent
from reasonaudio.querylang.lexicon import PHRASES, WORDS
from reasonaudio.logic import from_json, labels, to_json
from reasonaudio.querylang.parser import parse
from reasonaudio.errors import QueryParseError

pytestmark = pytest.mark.fast

V = ["dog barking", "dog growling", "rain", "thunder", "siren", "church bell", "bell", "low hum"]
PIECES = (V + ["dogs barking", "barking dog", "sirens", "5", "10", "2.5", "ten", "twenty five",
               "seconds", "s", "a", "the", "sound", "cat", "loud", "half a minute", "each"]
          + sorted(WORDS) + [" ".join(p) for p in PHRASES])


def read_or_refuse(words: list[str], vocabulary: list[str]):
    """The logic of the words joined by spaces, or None when the parser refuses them (in one line)."""
    try:
        return parse(" ".join(words), vocabulary)
    except QueryParseError as exc:
        assert "\n" not in str(exc)
        return None


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=0, max_size=12))
def test_word_salad_never_crashes(words) -> None:
    logic = read_or_refuse(words, V)
    if logic is None:
        return
    assert from_json(to_json(logic)) == logic
    assert set(labels(logic)) <= set(V)
    check_consistent(logic)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_unicode_never_crashes(text) -> None:
    try:
        parse(text, V)
    except QueryParseError:
        pass


# --- properties of the rules behind issue 27's silent misreads ----------------------------------

from reasonaudio.logic import And, Has, Not  # noqa: E402
from reasonaudio.querylang.parser import same_logic  # noqa: E402

KEYWORDS = ["rain", "thunder", "siren", "church bell", "car horn", "dog barking"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(KEYWORDS), min_size=1, max_size=6, unique=True),
       st.integers(min_value=0, max_value=6), st.sampled_from(["-", "!", "NOT "]),
       st.sampled_from([", ", " , ", ",  "]))
def test_keyword_exclusion_marks_always_exclude(words, n_pos, mark, sep) -> None:
    """"a, b, -c, !d": the marked sounds are excluded, never dropped or required."""
    pos, neg = words[:n_pos], words[n_pos:]
    text = sep.join(pos + [mark + w for w in neg])
    want = [Has(w) for w in pos] + [Not(Has(w)) for w in neg]
    assert same_logic(parse(text, KEYWORDS), want[0] if len(want) == 1 else And(tuple(want)))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["rain", "thunder"]), st.sampled_from(["5", "2.5", "ten", "twenty-five"]),
       st.sampled_from(["seconds", "s", "sec", "minutes"]),
       st.sampled_from(["at {n}", "at about {n}", "after {n}", "before {n}", "until {n}",
                        "from {n}", "by {n}", "{n} later", "{n} after", "{n} before", "{n} in",
                        "the first {n}", "the last {n}", "{n} later,"]),
       st.booleans())
def test_a_time_position_is_never_a_duration(sound, number, unit, shape, first) -> None:
    """A number that says when or how far apart is refused wherever it stands."""
    when = shape.format(n=f"{number} {unit}")
    other = "siren"
    text = f"{when} {sound}, then {other}" if first else f"{sound}, then {when} {other}"
    try:
        logic = parse(text, V)
    except QueryParseError as exc:
        assert "time position" in str(exc), str(exc)
        return
    raise AssertionError(f"{text!r} read as {logic!r}")
