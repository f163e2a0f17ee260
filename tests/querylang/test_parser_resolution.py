"""Sound-name resolution (issue 10 item 2) and the sentence shapes of item 3.

The semantic step is exercised here with a small deterministic matcher injected through
ResolveOptions (the parser never imports the models layer); test_label_matcher.py checks the
real MiniLM adapter.
"""

from __future__ import annotations

import difflib

import pytest

from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, Overlap
from reasonaudio.querylang.parser import STRICT, ResolveOptions, parse, parse_detailed, same_logic
from reasonaudio.querylang.resolve import head_noun
from reasonaudio.errors import QueryParseError

pytestmark = pytest.mark.fast

REAL = ["dog barking", "siren", "rain", "thunder", "acoustic piano", "electric piano", "violin",
        "songbirds chirping", "crickets chirping", "applause", "crowd cheering", "crowd booing",
        "bass drum", "snare drum", "church bell tolling", "bear growling", "goose honking",
        "car horn", "tap water running", "cat meowing", "wind blowing"]


def spelling(phrase, labels):
    """A stand-in matcher: difflib similarity, best first."""
    scored = [(lab, difflib.SequenceMatcher(None, phrase, lab).ratio()) for lab in labels]
    return sorted(scored, key=lambda x: -x[1])


SEM = ResolveOptions(semantic=spelling, threshold=0.8, margin=0.1)


@pytest.mark.parametrize("text,want,kinds", [
    ("a dog barks and then a siren wails", Before("dog barking", "siren"), ["stem", "verb-form"]),
    ("thunder rumbling", Has("thunder"), ["verb-form"]),
    ("rumbling thunder", Has("thunder"), ["verb-form"]),
    ("rainfall then thunder", Before("rain", "thunder"), ["verb-form", "exact"]),
    ("birds chirping while rain falls", Overlap("songbirds chirping", "rain"),
     ["family", "verb-form"]),
    ("rain and thunder without a dog",
     And((Has("rain"), Has("thunder"), Not(Has("dog barking")))), ["exact", "exact", "family"]),
    ("a piano but not a violin",
     And((Or((Has("acoustic piano"), Has("electric piano"))), Not(Has("violin")))),
     ["family", "exact"]),
    ("a piano then a violin",
     Or((Before("acoustic piano", "violin"), Before("electric piano", "violin"))),
     ["family", "exact"]),
    ("drums for 5 seconds", Or((Lasts("bass drum", 5), Lasts("snare drum", 5))), ["family"]),
    ("no piano", Not(Or((Has("acoustic piano"), Has("electric piano")))), ["family"]),
])
def test_resolution_kinds(text, want, kinds) -> None:
    r = parse_detailed(text, REAL)
    assert same_logic(r.logic, want), (text, r.logic)
    assert [x.kind for x in r.resolutions] == kinds
    assert r.to_json()["resolved"][0]["kind"] == kinds[0]


def test_family_says_so() -> None:
    r = parse_detailed("a piano", REAL)
    (res,) = r.resolutions
    assert res.labels == ("acoustic piano", "electric piano") and "piano" in res.detail


def test_strict_keeps_todays_behaviour() -> None:
    for text in ("a piano", "thunder rumbling", "rainfall", "birds chirping"):
        with pytest.raises(QueryParseError, match="unknown sound"):
            parse(text, REAL, STRICT)
    assert parse("dogs barking then rain", REAL, STRICT) == Before("dog barking", "rain")


def test_verbs_only_join_their_own_sound() -> None:
    """"thunder falling" is not a verb form of thunder; without a semantic matcher it stays
    an unknown sound."""
    with pytest.raises(QueryParseError, match="unknown sound 'falling'"):
        parse("thunder falling", REAL)


def test_family_needs_every_word() -> None:
    """"dog growls": the dog family has no growling label, so no family reading."""
    with pytest.raises(QueryParseError, match="unknown sound 'dog growls'"):
        parse("dog growls", REAL)


def test_semantic_pick_is_shown_with_score() -> None:
    r = parse_detailed("violim then rain", REAL, SEM)
    assert r.logic == Before("violin", "rain")
    res = r.resolutions[0]
    assert res.kind == "semantic" and res.labels == ("violin",) and 0.8 <= res.score <= 1


def test_semantic_below_threshold_or_margin_lists_candidates() -> None:
    with pytest.raises(QueryParseError, match=r"semantic candidates 'crowd cheering' 0\.\d\d"):
        parse("crowd cheerin booing", REAL, SEM)
    strict_sem = ResolveOptions(semantic=spelling, threshold=0.99, margin=0.1)
    with pytest.raises(QueryParseError, match="needs similarity >= 0.99"):
        parse("violim", REAL, strict_sem)


def test_word_guard_refuses_a_pick_that_ignores_a_known_word() -> None:
    """"car honking" must not become goose honking even when the matcher prefers it."""
    def prefers_goose(phrase, labels):
        return [("goose honking", 0.95), ("car horn", 0.5)]
    opts = ResolveOptions(semantic=prefers_goose, threshold=0.5, margin=0.1)
    with pytest.raises(QueryParseError, match="'car' names part of another label"):
        parse("car honking", ["goose honking", "car crash", "rain"], opts)
    assert parse("car honking", REAL, opts) == Has("car horn")   # verb-form comes first


def test_glued_modifier_that_the_pick_drops_is_refused() -> None:
    """"loud siren" -> siren would drop 'loud' (issue 45: every word carries into the logic or
    is named in the refusal): a semantic pick that is the glued label itself is refused."""
    def near(phrase, labels):
        return [("siren", 0.9), ("car horn", 0.5)]
    opts = ResolveOptions(semantic=near, threshold=0.8, margin=0.1)
    with pytest.raises(QueryParseError, match="cannot read 'loud'.*without 'loud'"):
        parse_detailed("loud siren then rain", REAL, opts)


@pytest.mark.parametrize("label,head", [("dog barking", "dog"), ("acoustic piano", "piano"),
                                        ("church bell tolling", "bell"), ("knocking on door", None),
                                        ("car passing by", "car"), ("snare drum", "drum")])
def test_head_noun(label, head) -> None:
    assert head_noun(label) == head


# --- sentence shapes (item 3) ---------------------------------------------------------------

V = ["rain", "thunder", "siren", "dog barking"]


@pytest.mark.parametrize("text,want", [
    ("starts with rain and then thunder", Before("rain", "thunder")),
    ("rain, then thunder, and finally siren",
     And((Before("rain", "thunder"), Before("thunder", "siren")))),
    ("rain at the beginning and thunder at the end", Before("rain", "thunder")),
    ("rain at the beginning, then thunder", Before("rain", "thunder")),
    ("rain but no siren at all", And((Has("rain"), Not(Has("siren"))))),
    ("rain with no siren anywhere", And((Has("rain"), Not(Has("siren"))))),
    ("rain and no siren whatsoever", And((Has("rain"), Not(Has("siren"))))),
    ("rain without any siren", And((Has("rain"), Not(Has("siren"))))),
    ("rain but never siren", And((Has("rain"), Not(Has("siren"))))),
    ("rain for ten seconds", Lasts("rain", 10)),
    ("rain 10s", Lasts("rain", 10)),
    ("rain for about 5 sec", Lasts("rain", 5)),
    ("rain and thunder together", Overlap("rain", "thunder")),
    ("rain together with thunder", And((Has("rain"), Has("thunder")))),
    ("rain together with thunder at once", Overlap("rain", "thunder")),
    ("rain, thunder, and siren", And((Has("rain"), Has("thunder"), Has("siren")))),
    ("Recording that starts with rain sound and then transitions to thunder sound.",
     Before("rain", "thunder")),
    ("rain and thunder, then siren", And((Before("rain", "siren"), Before("thunder", "siren")))),
])
def test_sentence_shapes(text, want) -> None:
    assert same_logic(parse(text, V), want), (text, parse(text, V))


@pytest.mark.parametrize("text,needle", [
    ("rain and thunder then siren", "'rain and thunder, then siren' for both"),
    ("rain while thunder then siren", "or only to 'thunder'"),
    ("rain at the end", "needs an earlier sound"),
    ("only rain", "'only'"),
    ("no rain and thunder", "ambiguous"),
    ("not not rain", "double negation"),
    ("rain for -5 seconds", "positive"),
    ("rain for 1e309 seconds", "finite"),
])
def test_two_readings_or_no_reading_is_an_error(text, needle) -> None:
    with pytest.raises(QueryParseError) as exc:
        parse(text, V)
    assert needle in str(exc.value)


def test_head_noun_with_its_sound_verb() -> None:
    """"a bell rings": the family of 'bell' with a verb of a bell's sound; a label that has a
    verb of its own must say the same sound (the family table: a bell rings, tolls, chimes;
    "church bell tolling" is ringing, "dog barking" is not howling)."""
    r = parse_detailed("a bell rings then rain", ["church bell", "rain"])
    assert r.logic == Before("church bell", "rain") and r.resolutions[0].kind == "family"
    assert parse("a bell rings then rain", ["church bell tolling", "rain"]) == \
        Before("church bell tolling", "rain")
    with pytest.raises(QueryParseError, match="unknown sound 'dog howls'"):
        parse("a dog howls then rain", ["dog barking", "rain"])


@pytest.mark.parametrize("text,labels,want", [
    ("a train", ["steam train whistle", "train wheels rumbling on rails", "rain"],
     ("steam train whistle", "train wheels rumbling on rails")),
    ("a car", ["car horn", "car passing by", "goose honking"], ("car horn", "car passing by")),
    ("a chime", ["tiny chime", "huge chime", "wind chimes", "rain"],
     ("huge chime", "tiny chime", "wind chimes")),
    ("a bell", ["desk bell ding", "cowbell", "church bell tolling"],
     ("church bell tolling", "cowbell", "desk bell ding")),
])
def test_family_members(text, labels, want) -> None:
    """A word that heads some label also takes the labels it modifies ("a car" includes car
    horn); a sound word that is also a noun heads its label ("tiny chime")."""
    (res,) = parse_detailed(text, labels).resolutions
    assert res.kind == "family" and res.labels == want
