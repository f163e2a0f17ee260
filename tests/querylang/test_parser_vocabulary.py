"""Label matching: tokenizer, stemmer, longest match, reversed -ing forms, nearest labels."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.querylang.vocabulary import Vocabulary, label_words, stem, tokenize, vocabulary

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("a,b", [
    ("barking", "barks"), ("dogs", "dog"), ("whistles", "whistling"), ("whistle", "whistling"),
    ("humming", "hums"), ("buzzing", "buzzes"), ("flies", "flying"), ("rising", "rises"),
    ("dripping", "drips"), ("bells", "bell"), ("churches", "church"), ("running", "runs"),
    ("crackling", "crackle"), ("tones", "tone"),
])
def test_stem_meets_in_the_middle(a, b) -> None:
    assert stem(a) == stem(b)


@pytest.mark.parametrize("word", ["glass", "bus", "ring", "sing", "is", "hiss"])
def test_stem_leaves_short_and_ss_words(word) -> None:
    assert stem(word) in (word, word.rstrip("s")) and len(stem(word)) >= 2


def test_tokenize_expands_contractions_and_keeps_offsets() -> None:
    toks = tokenize("Dog's bark, doesn't stop; 10s")
    assert [t.text for t in toks] == ["dog", "bark", ",", "does", "not", "stop", ";", "10", "s"]
    assert toks[0].start == 0 and toks[-2].kind == "num"


def test_find_prefers_longest_label_and_reports_text() -> None:
    v = Vocabulary(["bell", "church bell", "rain"])
    found = v.find(tokenize("Church Bells then rain sound"))
    assert [(m.label, m.text) for m in found] == [("church bell", "church bells"),
                                                    ("rain", "rain sound")]


def test_reversed_ing_label() -> None:
    v = Vocabulary(["dog barking", "car horn"])
    assert [m.label for m in v.find(tokenize("a barking dog"))] == ["dog barking"]
    assert v.find(tokenize("horn car")) == []  # only participle labels are reversed


def test_nearest_prefers_shared_words() -> None:
    v = Vocabulary(["dog barking", "dog growling", "rain", "thunder"])
    assert v.nearest("dog howling")[:2] == ["dog growling", "dog barking"] or \
        set(v.nearest("dog howling")[:2]) == {"dog growling", "dog barking"}
    assert v.nearest("zzzzqqq") == []


def _nearest_by_full_ratio(v: Vocabulary, phrase: str, n: int = 3) -> list[str]:
    """``Vocabulary.nearest`` as written before its length bound: every ratio computed."""
    import difflib

    want, p = set(label_words(phrase)), phrase.casefold()
    scored = sorted(((len(want & v._stems[lab]), difflib.SequenceMatcher(None, p, lab).ratio(), lab)
                     for lab in v.labels), key=lambda s: (-s[0], -s[1], s[2]))
    return [lab for shared, ratio, lab in scored[:n] if shared or ratio >= 0.4]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdeghiklnorstw ", min_size=1, max_size=120))
def test_nearest_skips_only_ratios_that_cannot_count(phrase) -> None:
    """The length bound that spares a long phrase the quadratic spelling match gives the answer
    every ratio computed would give (differential)."""
    v = vocabulary(("dog barking", "dog growling", "rain", "thunder", "church bell", "siren", "car horn",
                    "glass breaking", "wind"))
    assert v.nearest(phrase) == _nearest_by_full_ratio(v, phrase)


def test_nearest_runs_no_spelling_match_for_a_very_long_phrase(monkeypatch) -> None:
    """A pasted 100,000-character word gets its "no nearest label" without the quadratic
    spelling match per label (seconds a label): no label can reach the cutoff at that length."""
    import difflib

    calls = []
    full = difflib.SequenceMatcher.find_longest_match
    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match",
                        lambda self, *a, **k: calls.append(1) or full(self, *a, **k))
    v = Vocabulary(["dog barking", "rain"])
    assert v.nearest("q" * 100_000) == [] and calls == []
    assert v.nearest("rian")[0] == "rain" and calls  # a short phrase is still matched by spelling


def test_vocabulary_is_cached() -> None:
    assert vocabulary(("rain", "thunder")) is vocabulary(("rain", "thunder"))


def test_synthetic_labels_are_all_distinct_after_stemming() -> None:
    """No two labels of the default bank collapse to one form (that would be an ambiguity)."""
    from reasonaudio.atoms.synthetic import RECIPES

    labels = [r.label for r in RECIPES]
    forms = [label_words(x) for x in labels]
    assert len(set(forms)) == len(forms)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["dog barking", "rain", "low hum", "church bell", "bell",
                                 "fast click train"]), min_size=1, max_size=5, unique=True))
def test_every_label_finds_itself_in_any_case(labels) -> None:
    v = Vocabulary(labels)
    for label in labels:
        for form in (label, label.upper(), label.title(), label + " sound"):
            found = v.find(tokenize(form))
            assert [m.label for m in found] == [label]


def test_labels_with_punctuation_and_auxiliaries() -> None:
    v = Vocabulary(["rock & roll", "fill (with liquid)", "hi-hat", "dog barking"])
    assert [m.label for m in v.find(tokenize("Rock & Roll, fill (with liquid), hi hat"))] == \
        ["rock & roll", "fill (with liquid)", "hi-hat"]
    assert [m.label for m in v.find(tokenize("fill with liquid"))] == ["fill (with liquid)"]
    assert [m.label for m in v.find(tokenize("the dog is barking"))] == ["dog barking"]
