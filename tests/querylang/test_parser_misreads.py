"""Silent misreads of issue 27 (item 2): each wording is read right or refused with one line.

Every case here was read as something else before: a family that reached only some of its
labels, a time position read as a duration, "just A" read as has(A), a duration written before
a sound that silently stopped at that sound, a comma that changed how far an order word
reaches, an excluded sound with an ambiguous duration, `-A`/`!A` dropped, and "10,000" read
as "000"."""

from __future__ import annotations

import pytest
from test_parser_paper_templates import BANKS  # the synthetic and the real-sound labels

from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, labels
from reasonaudio.querylang.parser import parse, parse_detailed, same_logic
from reasonaudio.querylang.families import verb_use
from reasonaudio.querylang.resolve import families
from reasonaudio.querylang.vocabulary import stem, tokenize
from reasonaudio.errors import QueryParseError

pytestmark = pytest.mark.fast

V = ["dog barking", "dog growling", "car horn", "car engine", "rain", "thunder", "siren",
     "church bell", "bell"]


def refused(text: str, needle: str, vocab=V) -> str:
    with pytest.raises(QueryParseError) as exc:
        parse(text, vocab)
    msg = str(exc.value)
    assert "\n" not in msg and needle in msg, msg
    return msg


# --- families: every label a word names, by one stemming rule ---------------------------------

def _with_stem(vocab: list[str], s: str) -> set[str]:
    return {lab for lab in vocab if any(stem(t.text) == s for t in tokenize(lab))}


@pytest.mark.parametrize("word", ["beeping", "beeps", "beep"])
def test_no_beeping_excludes_every_beep_label(word) -> None:
    """The synthetic bank has twelve '* beeps' and eight '* beeping' labels: all twenty go."""
    syn = BANKS["synthetic"]
    want = _with_stem(syn, "beep")
    assert len(want) == 20
    logic = parse(f"no {word}", syn)
    assert isinstance(logic, Not) and isinstance(logic.arg, Or)
    assert set(labels(logic)) == want


@pytest.mark.parametrize("bank", sorted(BANKS))
def test_a_family_is_every_label_with_its_stem(bank) -> None:
    """Every word of every label that reads as a family reaches every label with a word of
    its stem (the family may hold more: kinds, "bird" -> songbirds), except a label where the
    word only sits in a compound it does not name (data/sound_families.json: sea lion)."""
    vocab = BANKS[bank]
    words = sorted({t.text for lab in vocab for t in tokenize(lab) if t.kind == "word"})
    checked = 0
    for w in words:
        try:
            r = parse_detailed(f"no {w}", vocab)
        except QueryParseError:
            continue
        if r.resolutions[0].kind != "family":
            continue
        checked += 1
        fams = families(tuple(vocab))
        want = {lab for lab in _with_stem(vocab, stem(w))
                if fams.names(stem(w), lab, as_verb=verb_use(w))}
        assert want <= set(r.resolutions[0].labels), w
    assert checked >= 20


# --- time positions and gaps are not durations -------------------------------------------------

TIME_POSITIONS = [
    "rain at 5 seconds", "rain, then 5 seconds later thunder", "thunder 5 seconds after rain",
    "rain 5 seconds before thunder",
    # held-out phrasings of the same kinds
    "at 5 seconds, rain", "rain at about 10 s", "thunder comes 5 seconds after rain",
    "rain and, 5 seconds later, thunder", "rain, then thunder 5 seconds later",
    "after 5 seconds, thunder", "thunder after 5 seconds of rain", "rain for the first 5 seconds",
    "rain for the last 5 seconds", "rain 5 seconds in", "rain, then two seconds later thunder",
    "thunder from 3 seconds", "rain until 5 seconds", "thunder by 5 seconds",
]


@pytest.mark.parametrize("text", TIME_POSITIONS)
def test_time_positions_are_refused(text) -> None:
    refused(text, "time position")


@pytest.mark.parametrize("text,want", [
    ("rain for 5 seconds before thunder", And((Lasts("rain", 5), Before("rain", "thunder")))),
    ("thunder lasting 5 seconds after rain", And((Lasts("thunder", 5), Before("rain", "thunder")))),
    ("rain 10 seconds long, then thunder", And((Lasts("rain", 10), Before("rain", "thunder")))),
    ("rain, then 5 seconds of thunder", And((Lasts("thunder", 5), Before("rain", "thunder")))),
])
def test_durations_next_to_order_words_still_read(text, want) -> None:
    assert same_logic(parse(text, V), want)


# --- "only" and "just" alike ------------------------------------------------------------------

@pytest.mark.parametrize("text", ["just rain", "only rain", "rain and just thunder",
                                  "solely rain", "rain alone", "nothing but rain",
                                  "exclusively thunder", "rain and no other sounds"])
def test_only_and_just_are_refused_alike(text) -> None:
    refused(text, "(no other sounds) cannot be expressed")


# --- a duration before a sound reaches the next sound no more silently than one after it ------

@pytest.mark.parametrize("text", ["5 seconds of rain and thunder", "a 5-second rain and thunder",
                                  "10 seconds of rain, thunder and siren",
                                  "5 seconds of rain while thunder", "rain and thunder for 5 seconds",
                                  "rain, then 5 seconds of thunder and siren"])
def test_a_duration_over_two_sounds_is_ambiguous(text) -> None:
    refused(text, "ambiguous")


@pytest.mark.parametrize("text,want", [
    ("5 seconds each of rain and thunder", And((Lasts("rain", 5), Lasts("thunder", 5)))),
    ("rain and thunder for 5 seconds each", And((Lasts("rain", 5), Lasts("thunder", 5)))),
    ("5 seconds of rain and 2 seconds of thunder", And((Lasts("rain", 5), Lasts("thunder", 2)))),
    ("5 seconds of rain and thunder for 2 seconds", And((Lasts("rain", 5), Lasts("thunder", 2)))),
    ("5 seconds of rain, then thunder", And((Lasts("rain", 5), Before("rain", "thunder")))),
    ("rain and 5 seconds of thunder", And((Has("rain"), Lasts("thunder", 5)))),
])
def test_durations_with_one_owner_still_read(text, want) -> None:
    assert same_logic(parse(text, V), want)


# --- a comma before 'and' does not decide how far an order word reaches -----------------------

@pytest.mark.parametrize("text", ["rain, and thunder after siren", "rain and thunder after siren",
                                  "rain, and thunder then siren", "rain, thunder then siren",
                                  "rain, and thunder before siren"])
def test_order_scope_without_a_comma_before_the_order_word_is_ambiguous(text) -> None:
    refused(text, "ambiguous")


@pytest.mark.parametrize("text,want", [
    ("rain and thunder, after siren", And((Before("siren", "rain"), Before("siren", "thunder")))),
    ("rain. thunder after siren", And((Has("rain"), Before("siren", "thunder")))),
])
def test_order_scope_with_a_comma_before_the_order_word_reads(text, want) -> None:
    assert same_logic(parse(text, V), want)


# --- an excluded sound with a duration ----------------------------------------------------------

@pytest.mark.parametrize("text", ["no rain for 5 seconds", "thunder without rain for 5 seconds",
                                  "no 5 seconds of rain", "thunder but no rain (5 s)",
                                  "thunder, excluding siren for ten seconds"])
def test_excluded_sound_with_a_duration_is_ambiguous(text) -> None:
    msg = refused(text, "ambiguous")
    assert "lasting" in msg


@pytest.mark.parametrize("text", ["no rain lasting 5 seconds", "no rain that lasts 5 seconds",
                                  "no rain 5 seconds long"])
def test_excluding_a_length_reads(text) -> None:
    assert parse(text, V) == Not(Lasts("rain", 5))


# --- keyword exclusion marks --------------------------------------------------------------------

@pytest.mark.parametrize("text,want", [
    ("dog barking, siren, -rain", And((Has("dog barking"), Has("siren"), Not(Has("rain"))))),
    ("rain !thunder", And((Has("rain"), Not(Has("thunder"))))),
    ("rain NOT thunder", And((Has("rain"), Not(Has("thunder"))))),
    ("+rain -thunder -siren", And((Has("rain"), Not(Has("thunder")), Not(Has("siren"))))),
    ("-rain", Not(Has("rain"))),
])
def test_exclusion_marks_exclude(text, want) -> None:
    assert same_logic(parse(text, V), want)


def test_hyphens_inside_words_are_not_exclusions() -> None:
    assert parse("rain for twenty-five seconds", V) == Lasts("rain", 25)
    assert parse("a 10-second rain", V) == Lasts("rain", 10)
    assert same_logic(parse("rain - thunder", ["rain", "thunder", "rain thunder"]),
                      Has("rain thunder"))


# --- thousands separators -----------------------------------------------------------------------

@pytest.mark.parametrize("text,seconds", [("rain for 10,000 seconds", 10000),
                                          ("rain for 2,500 ms", 2.5),
                                          ("rain for 1,000.5 seconds", 1000.5)])
def test_thousands_separators_read_as_one_number(text, seconds) -> None:
    assert parse(text, V) == Lasts("rain", seconds)


@pytest.mark.parametrize("text", ["rain for 1,5 seconds", "rain for 1,0000 seconds"])
def test_a_comma_that_is_not_a_thousands_separator_is_not_read_as_one(text) -> None:
    with pytest.raises(QueryParseError):
        parse(text, V)
