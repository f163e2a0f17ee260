"""Any text gives valid logic over the vocabulary or a one-line QueryParseError, never a crash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.constraints.canonical import check_consistent
from reasonaudio.constraints.lexicon import PHRASES, WORDS
from reasonaudio.constraints.logic import from_json, labels, to_json
from reasonaudio.constraints.parser import parse
from reasonaudio.errors import QueryParseError

V = ["dog barking", "dog growling", "rain", "thunder", "siren", "church bell", "bell", "low hum"]
PIECES = (V + ["dogs barking", "barking dog", "sirens", "5", "10", "2.5", "ten", "twenty five",
               "seconds", "s", "a", "the", "sound", "cat", "loud", "half a minute", "each"]
          + sorted(WORDS) + [" ".join(p) for p in PHRASES])


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=0, max_size=12))
def test_word_salad_never_crashes(words) -> None:
    text = " ".join(words)
    try:
        logic = parse(text, V)
    except QueryParseError as exc:
        assert "\n" not in str(exc)
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
