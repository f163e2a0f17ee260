"""docs/benchmark.md phrasings and free text read into the expected logic; bad input fails clearly."""

from __future__ import annotations

import pytest

from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, Overlap
from reasonaudio.querylang.parser import parse, parse_detailed, same_logic
from reasonaudio.errors import QueryParseError, ReasonAudioError

pytestmark = pytest.mark.fast

V = ["dog barking", "dog growling", "car horn", "car engine", "rain", "thunder", "siren",
     "church bell", "bell"]
DOG, SIREN, RAIN, THUNDER, BELL, CHURCH = "dog barking", "siren", "rain", "thunder", "bell", "church bell"


def A(*args):
    return And(tuple(args))


CASES = [
    # docs/benchmark.md and the paper
    ("contains rain and thunder, but does not contain siren", A(Has(RAIN), Has(THUNDER), Not(Has(SIREN)))),
    ("rain happens first, followed by thunder", Before(RAIN, THUNDER)),
    ("thunder occurs after rain", Before(RAIN, THUNDER)),
    ("rain can be heard continuously for 10 seconds", Lasts(RAIN, 10)),
    ("dog barking but no siren", A(Has(DOG), Not(Has(SIREN)))),
    ("rain for 5 seconds, then thunder, and finally siren and bell overlap",
     A(Lasts(RAIN, 5), Before(RAIN, THUNDER), Before(THUNDER, SIREN), Before(THUNDER, BELL),
       Overlap(SIREN, BELL))),
    # negation
    ("rain without thunder", A(Has(RAIN), Not(Has(THUNDER)))),
    ("rain excluding thunder", A(Has(RAIN), Not(Has(THUNDER)))),
    ("rain, not thunder", A(Has(RAIN), Not(Has(THUNDER)))),
    ("rain with no thunder", A(Has(RAIN), Not(Has(THUNDER)))),
    ("rain but not thunder or siren", A(Has(RAIN), Not(Has(THUNDER)), Not(Has(SIREN)))),
    ("rain and thunder without siren or bell", A(Has(RAIN), Has(THUNDER), Not(Has(SIREN)), Not(Has(BELL)))),
    ("no siren", Not(Has(SIREN))),
    ("neither rain nor thunder", A(Not(Has(RAIN)), Not(Has(THUNDER)))),
    ("no rain and no thunder", A(Not(Has(RAIN)), Not(Has(THUNDER)))),
    ("no rain, but thunder", A(Has(THUNDER), Not(Has(RAIN)))),
    ("rain doesn't contain siren", A(Has(RAIN), Not(Has(SIREN)))),
    # order
    ("rain, then thunder", Before(RAIN, THUNDER)),
    ("rain then thunder", Before(RAIN, THUNDER)),
    ("rain followed by thunder", Before(RAIN, THUNDER)),
    ("rain before thunder", Before(RAIN, THUNDER)),
    ("thunder after rain", Before(RAIN, THUNDER)),
    ("first rain, then thunder", Before(RAIN, THUNDER)),
    ("first rain then thunder", Before(RAIN, THUNDER)),
    ("after rain, thunder", Before(RAIN, THUNDER)),
    ("before the siren, a dog barks", Before(DOG, SIREN)),
    ("thunder preceded by rain", Before(RAIN, THUNDER)),
    ("rain precedes thunder", Before(RAIN, THUNDER)),
    ("thunder comes after rain", Before(RAIN, THUNDER)),
    ("Rain. Then thunder.", Before(RAIN, THUNDER)),
    ("rain, and then thunder", Before(RAIN, THUNDER)),
    ("rain, followed by thunder, followed by siren", A(Before(RAIN, THUNDER), Before(THUNDER, SIREN))),
    ("rain, thunder and siren, in that order", A(Before(RAIN, THUNDER), Before(THUNDER, SIREN))),
    ("rain followed by thunder and siren", A(Before(RAIN, THUNDER), Before(RAIN, SIREN))),
    # overlap
    ("rain while thunder", Overlap(RAIN, THUNDER)),
    ("rain and thunder at the same time", Overlap(RAIN, THUNDER)),
    ("rain overlapping with thunder", Overlap(RAIN, THUNDER)),
    ("rain and thunder simultaneously", Overlap(RAIN, THUNDER)),
    ("rain and thunder overlapping", Overlap(RAIN, THUNDER)),
    ("rain overlaps thunder", Overlap(RAIN, THUNDER)),
    ("rain during thunder", Overlap(RAIN, THUNDER)),
    ("a dog barks while it rains", Overlap(DOG, RAIN)),
    ("rain, thunder, and siren at the same time",
     A(Overlap(RAIN, THUNDER), Overlap(RAIN, SIREN), Overlap(THUNDER, SIREN))),
    ("rain and thunder, but not at the same time", A(Has(RAIN), Has(THUNDER), Not(Overlap(RAIN, THUNDER)))),
    # duration
    ("rain for 10 seconds", Lasts(RAIN, 10)),
    ("rain for ten seconds", Lasts(RAIN, 10)),
    ("rain lasts around 5 s", Lasts(RAIN, 5)),
    ("rain lasting about fifteen seconds", Lasts(RAIN, 15)),
    ("rain continuously for twenty seconds", Lasts(RAIN, 20)),
    ("rain (5s)", Lasts(RAIN, 5)),
    ("5 seconds of rain", Lasts(RAIN, 5)),
    ("a 5-second siren", Lasts(SIREN, 5)),
    ("rain for twenty-five seconds", Lasts(RAIN, 25)),
    ("siren for 1 minute", Lasts(SIREN, 60)),
    ("siren for half a minute", Lasts(SIREN, 30)),
    ("rain for 500 ms", Lasts(RAIN, 0.5)),
    ("rain for a second", Lasts(RAIN, 1)),
    ("rain 5 seconds long", Lasts(RAIN, 5)),
    ("rain and thunder for 5 seconds each", A(Lasts(RAIN, 5), Lasts(THUNDER, 5))),
    ("rain for 2 seconds and thunder for 5 seconds", A(Lasts(RAIN, 2), Lasts(THUNDER, 5))),
    # combinations
    ("rain for 5 seconds while thunder, then siren",
     A(Lasts(RAIN, 5), Overlap(RAIN, THUNDER), Before(RAIN, SIREN), Before(THUNDER, SIREN))),
    ("thunder and rain simultaneously, then siren for 5 seconds, without bell",
     A(Overlap(THUNDER, RAIN), Before(THUNDER, SIREN), Before(RAIN, SIREN), Lasts(SIREN, 5),
       Not(Has(BELL)))),
    ("siren and rain overlap, after dog barking",
     A(Before(DOG, SIREN), Before(DOG, RAIN), Overlap(SIREN, RAIN))),
    ("rain and thunder at the same time, with rain lasting 5 seconds",
     A(Overlap(RAIN, THUNDER), Lasts(RAIN, 5))),
    ("rain, then thunder, but no siren", A(Before(RAIN, THUNDER), Not(Has(SIREN)))),
    ("rain not before thunder", A(Has(RAIN), Has(THUNDER), Not(Before(RAIN, THUNDER)))),
    ("rain or thunder", Or((Has(RAIN), Has(THUNDER)))),
    ("rain, thunder and siren", A(Has(RAIN), Has(THUNDER), Has(SIREN))),
    ("rain; thunder", A(Has(RAIN), Has(THUNDER))),
    # label forms
    ("Dogs barking and a car horn sound", A(Has(DOG), Has("car horn"))),
    ("barking dog then siren", Before(DOG, SIREN)),
    ("Dog Barking sound", Has(DOG)),
    ("dog barks", Has(DOG)),
    ("a dog is barking", Has(DOG)),
    ("the sound of sirens", Has(SIREN)),
    ("church bell then bell", Before(CHURCH, BELL)),
    ("church bells ringing", Has(CHURCH)),  # a sound verb after a verb-less label: verb-form
    ("RAIN THEN THUNDER!", Before(RAIN, THUNDER)),
    ("search for rain", Has(RAIN)),
    # a lone verb after "A and" that only A's head does (docs/query-language.md, families)
    ("dog barking and growling", A(Has(DOG), Has("dog growling"))),
]


@pytest.mark.parametrize("text,want", [c for c in CASES if c[1] is not None], ids=lambda x: str(x)[:50])
def test_reads(text, want) -> None:
    got = parse(text, V)
    assert same_logic(got, want), (text, got)


ERRORS = [
    ("", "empty"),
    ("   ", "empty"),
    ("cat meowing then rain", "unknown sound 'cat meowing'"),
    ("loud siren", "unknown sound 'loud'"),
    ("5 then rain", "a number where a sound belongs"),
    ("rain 5", "a number where a sound belongs"),
    ("rain and 7 and thunder", "a number where a sound belongs"),
    ("then while", "no sound of the vocabulary"),
    ("rain then thunder then rain", "contradictory"),
    ("rain before thunder and thunder before rain", "contradictory"),
    ("rain before thunder and thunder before siren and siren before rain", "cycle"),
    ("rain but no rain", "both required and excluded"),
    ("rain while thunder, but no thunder", "both required and excluded"),
    ("rain while thunder, rain before thunder", "cannot overlap"),
    ("rain for 2 seconds and rain for 10 seconds", "cannot last"),
    ("rain then rain", "cannot come before itself"),
    ("no rain and thunder", "ambiguous"),
    ("rain excluding thunder and siren", "ambiguous"),
    ("rain and thunder for 5 seconds", "ambiguous"),
    ("rain and thunder or siren", "ambiguous"),
    ("rain thunder", "no connecting word"),
    ("rain then", "nothing follows 'then'"),
    ("rain and", "needs a sound after it"),
    ("rain for", "needs a number"),
    ("a long siren", "needs a number"),
    ("rain for more than 5 seconds", "only 'about N seconds'"),
    ("rain for over 5 seconds", "only 'about N seconds'"),
    ("rain for 0 seconds", "positive"),
    ("rain for 5 seconds for 10 seconds", "two durations"),
    ("rain while no thunder", "need sounds that occur"),
    ("rain then no thunder", "need sounds that occur"),
    ("rain or thunder then siren", "'or'"),
    ("only rain", "'only'"),
    ("thunder, but first rain", "'first'"),
    ("rain overlapping, then thunder", "needs two sounds"),
]


@pytest.mark.parametrize("text,needle", ERRORS, ids=lambda x: str(x)[:50])
def test_errors_are_one_clear_line(text, needle) -> None:
    """(the default resolution reads these no better than --strict: no family, no semantic)"""
    with pytest.raises(QueryParseError) as exc:
        parse(text, V)
    msg = str(exc.value)
    assert needle in msg, msg
    assert "\n" not in msg
    assert isinstance(exc.value, ReasonAudioError)


def test_unknown_sound_names_nearest_labels() -> None:
    with pytest.raises(QueryParseError, match=r"unknown sound 'dog howling'.*nearest labels: "
                                              r"'dog (barking|growling)'"):
        parse("dog howling then rain", V)


def test_label_sharing_words_is_matched_longest_first() -> None:
    assert parse("church bell", V) == Has(CHURCH)
    assert parse("bell", V) == Has(BELL)
    assert parse("dog growling then dog barking", V) == Before("dog growling", DOG)


def test_ambiguous_overlapping_labels_are_reported() -> None:
    with pytest.raises(QueryParseError, match="ambiguous sounds"):
        parse("car horn blast then rain", ["car horn", "horn blast", "rain"])


def test_labels_with_one_stemmed_form_are_reported() -> None:
    with pytest.raises(QueryParseError, match="matches the labels 'dog bark', 'dog barking'"):
        parse("dog barks", ["dog bark", "dog barking"])
    assert parse("dog barking", ["dog barking", "rain"]) == Has(DOG)


def test_parse_detailed_says_which_words_matched() -> None:
    r = parse_detailed("Dogs barking then sirens", V)
    assert [(m.text, m.label) for m in r.matches] == [("dogs barking", DOG), ("sirens", SIREN)]
    assert r.to_json()["logic"] == {"op": "before", "a": DOG, "b": SIREN}
    assert "'dogs barking' -> dog barking" in r.notes


def test_empty_vocabulary_is_an_error() -> None:
    with pytest.raises(QueryParseError, match="vocabulary is empty"):
        parse("rain", [])


def test_strict_keeps_unknown_verbs_an_error() -> None:
    from reasonaudio.querylang.parser import STRICT

    with pytest.raises(QueryParseError, match="unknown sound 'ringing'"):
        parse("church bells ringing", V, STRICT)
