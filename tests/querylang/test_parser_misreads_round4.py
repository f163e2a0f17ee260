"""Silent misreads of issue 56: each wording is read right or refused with one line naming the word.

Every pattern here was read as something else before: a back-reference ordered the wrong way
("A, and before that B"), a gender-neutral speaker narrowed to the male label, a shared verb that
did not reach the noun before it ("a man and a woman speaking"), a verb on a family that dropped
members with verbs of their own (church bell tolling is a bell ringing) or reached things it does
not describe (a French horn does not honk), modifiers absorbed by a nearest label ("soft
piano"), a contradiction through a family ("a horse but no horses"), and word stems crossing
labels ("no crows" is not rooster crowing; birdsong is not duck quacking)."""

from __future__ import annotations

import pytest
from test_parser_misreads_round3 import refused as refused_in
from test_parser_paper_templates import BANKS  # the synthetic and the real-sound labels

from reasonaudio.querylang.canonical import check_consistent
from reasonaudio.querylang.parser import ResolveOptions, parse, parse_detailed, same_logic
from reasonaudio.errors import QueryParseError
from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, labels

pytestmark = pytest.mark.fast

REAL, SYN = BANKS["real-sound"], BANKS["synthetic"]
V = ["dog barking", "rain", "thunder", "siren"]


def refused(text: str, needle: str, vocab=REAL, options=None) -> str:
    """One line naming ``needle`` (outside the quoted query), over the real-sound labels."""
    return refused_in(text, needle, vocab, options)


def any_of(*names: str):
    return Or(tuple(Has(x) for x in names)) if len(names) > 1 else Has(names[0])


def absorbing(phrase, labels_):
    """A matcher that finds a label sharing a word with the phrase and ignores the rest (the
    way an embedding model reads "soft piano" as acoustic piano)."""
    words = set(phrase.split())
    hits = [lab for lab in labels_ if words & set(lab.split())]
    return [(lab, 0.95 - 0.2 * k) for k, lab in enumerate(hits)] + \
        [(lab, 0.1) for lab in labels_ if lab not in hits]


ABSORB = ResolveOptions(semantic=absorbing, threshold=0.5, margin=0.1)


# --- 1. back-references ------------------------------------------------------------------------

BACKWARD = [
    "siren, and before that a dog barking", "siren, and prior to that a dog barking",
    "siren, and before it a dog barking", "siren. Before this, a dog barking",
    "a siren; before that, dogs barking", "siren, before that a dog barking",
    "siren, and earlier a dog barking", "Siren. Earlier, a dog barking",
    "siren, and previously a dog barking", "siren; beforehand, a dog barking",
    "siren, and earlier than that a dog barking", "siren, preceding that a dog barking",
    "siren, and before then a dog barking", "the siren, and before which a dog barks",
    "siren before that, a dog barking"]
FORWARD = [
    "siren, and after that a dog barking", "siren, after it a dog barking",
    "siren. After this, a dog barking", "siren, following that a dog barking",
    "siren, following which a dog barking", "siren, and later a dog barking",
    "siren, and later than that a dog barking", "siren and after that dog barking",
    "siren, and following it a dog barking"]


@pytest.mark.parametrize("text,want", [(t, Before("dog barking", "siren")) for t in BACKWARD]
                         + [(t, Before("siren", "dog barking")) for t in FORWARD])
def test_a_reference_back_orders_against_the_sound_it_points_at(text, want) -> None:
    """"before that" puts the later-named sound first; "after that" keeps the order."""
    assert parse(text, V) == want, text


@pytest.mark.parametrize("text,want", [
    ("church bell tolling, and before that a dog barking",
     Before("dog barking", "church bell tolling")),
    ("a cat meowing. Before that, rain", Before("rain", "cat meowing")),
    ("thunder, and earlier a man speaking", Before("man speaking", "thunder")),
])
def test_back_references_over_the_real_labels(text, want) -> None:
    assert parse(text, REAL) == want, text


def test_back_references_over_the_synthetic_labels() -> None:
    assert parse("large gong, and before that high beeping", SYN) == \
        Before("high beeping", "large gong")
    assert parse("large gong, and after that high beeping", SYN) == \
        Before("large gong", "high beeping")


@pytest.mark.parametrize("text,want", [
    # a group before the reference: every sound of it
    ("rain and thunder, and before that a siren",
     And((Before("siren", "rain"), Before("siren", "thunder")))),
    # continuing a chain in its own direction: the reference is the chain's end
    ("rain, then thunder, and after that a siren",
     And((Before("rain", "thunder"), Before("thunder", "siren")))),
    ("rain after thunder, and before that a siren",
     And((Before("thunder", "rain"), Before("siren", "thunder")))),
    # "that" right before a sound, glued to the sound before it, picks that sound out
    ("rain after that dog barking", Before("dog barking", "rain")),
    ("rain before that dog barking", Before("rain", "dog barking")),
])
def test_what_a_reference_points_at(text, want) -> None:
    assert same_logic(parse(text, V), want), (text, parse(text, V))


@pytest.mark.parametrize("text,needle", [
    ("before that, a dog barking", "points back"),
    ("Earlier, a siren", "points back"),
    ("rain, then thunder, and before that a siren", "ambiguous"),
    ("rain, then thunder, before which a siren", "ambiguous"),
    ("rain after thunder, then a siren", "ambiguous"),
    ("rain after thunder, and later a siren", "ambiguous"),
    ("rain after thunder, and after that a siren", "ambiguous"),
    ("rain but no siren, and before that thunder", "excluded"),
])
def test_a_reference_with_nothing_or_two_things_to_point_at_is_refused(text, needle) -> None:
    refused(text, needle, V)


# --- 2. gender-neutral speakers ----------------------------------------------------------------

SPEAKING = any_of("man speaking", "woman speaking")


@pytest.mark.parametrize("text", [
    "someone speaking", "somebody speaking", "a person speaking", "people speaking",
    "persons speaking", "a human speaking", "humans speaking", "a speaker", "speakers",
    "someone talking", "anyone speaking", "Someone is speaking", "people are talking",
])
def test_a_neutral_speaker_is_every_speaker_label(text) -> None:
    assert same_logic(parse(text, REAL), SPEAKING), (text, parse(text, REAL))


@pytest.mark.parametrize("text,want", [
    ("a person laughing", Has("man laughing")),   # hyena laughing is no person
    ("people laughing", Has("man laughing")),
    ("someone coughing", Has("coughing")),
    ("a person screaming", Has("screaming")),
    ("no one speaking", Not(SPEAKING)),
    ("nobody speaking", Not(SPEAKING)),
    ("rain but nobody speaking", And((Has("rain"), Not(SPEAKING)))),
    ("someone speaking, then a dog barking",
     Or((Before("man speaking", "dog barking"), Before("woman speaking", "dog barking")))),
])
def test_neutral_speakers_over_the_real_labels(text, want) -> None:
    assert same_logic(parse(text, REAL), want), (text, parse(text, REAL))


def test_a_neutral_speaker_takes_every_matching_speaker_label() -> None:
    vocab = ["man speaking", "woman speaking", "child speaking", "man laughing", "girl laughing",
             "dog barking"]
    assert same_logic(parse("someone speaking", vocab),
                      any_of("man speaking", "woman speaking", "child speaking"))
    assert same_logic(parse("a person laughing", vocab), any_of("man laughing", "girl laughing"))
    assert same_logic(parse("a kid speaking", vocab), Has("child speaking"))
    assert same_logic(parse("a man, a woman and a child speaking", vocab),
                      And((Has("man speaking"), Has("woman speaking"), Has("child speaking"))))


@pytest.mark.parametrize("text", ["someone speaking", "a person laughing", "nobody speaking"])
def test_a_neutral_speaker_with_no_speaker_label_is_refused(text) -> None:
    refused(text, "unknown sound", SYN)


@pytest.mark.parametrize("text", ["someone whistling", "a person singing"])
def test_a_neutral_speaker_never_becomes_another_thing_by_meaning(text) -> None:
    """No person label whistles or sings: refused even when a matcher likes a label."""
    def near(phrase, labels_):
        return [("referee whistle", 0.95), ("solo singing", 0.2)]
    refused(text, "unknown sound", REAL, ResolveOptions(semantic=near, threshold=0.5, margin=0.1))


@pytest.mark.parametrize("text", ["human speech", "a human voice", "someone's voice"])
def test_a_neutral_speaker_is_never_narrowed_to_one_speaker_by_meaning(text) -> None:
    """A matcher that prefers the male label is refused: the woman speaks as well."""
    def male(phrase, labels_):
        return [("man speaking", 0.95), ("woman speaking", 0.5)]
    refused(text, "alike", REAL, ResolveOptions(semantic=male, threshold=0.5, margin=0.1))


# --- 3. a verb after a list is said of every noun in it ----------------------------------------

@pytest.mark.parametrize("text,want", [
    ("a man and a woman speaking", And((Has("man speaking"), Has("woman speaking")))),
    ("a woman and a man speaking", And((Has("man speaking"), Has("woman speaking")))),
    ("men and women speaking", And((Has("man speaking"), Has("woman speaking")))),
    ("a man or a woman speaking", any_of("man speaking", "woman speaking")),
    ("neither a man nor a woman speaking",
     And((Not(Has("man speaking")), Not(Has("woman speaking"))))),
    ("no man or woman speaking", And((Not(Has("man speaking")), Not(Has("woman speaking"))))),
    ("a man and a woman are speaking", And((Has("man speaking"), Has("woman speaking")))),
    ("a man as well as a woman speaking", And((Has("man speaking"), Has("woman speaking")))),
    ("someone and a man speaking", And((SPEAKING, Has("man speaking")))),
    # a noun that does not make the sound keeps its family: bells do not bark
    ("a man and a dog barking",
     And((any_of("man laughing", "man speaking"), Has("dog barking")))),
    ("a cat and a dog barking", And((Has("cat meowing"), Has("dog barking")))),
    ("a goose and a duck quacking", And((Has("goose honking"), Has("duck quacking")))),
    ("a piano and a dog barking",
     And((any_of("acoustic piano", "electric piano"), Has("dog barking")))),
    ("a tree and a dog barking", And((Has("tree falling"), Has("dog barking")))),
    ("a rooster and songbirds chirping", And((Has("rooster crowing"),
                                              Has("songbirds chirping")))),
    # no list: the verb stays with its own sound
    ("a man, then a woman speaking",
     Or((Before("man laughing", "woman speaking"), Before("man speaking", "woman speaking")))),
    ("rain and a dog barking", And((Has("rain"), Has("dog barking")))),
])
def test_a_shared_verb_over_the_real_labels(text, want) -> None:
    assert same_logic(parse(text, REAL), want), (text, parse(text, REAL))


def test_a_shared_verb_reaches_the_label_that_has_it() -> None:
    vocab = ["dog barking", "dog howling", "wolf howling", "rain"]
    assert same_logic(parse("a dog and a wolf howling", vocab),
                      And((Has("dog howling"), Has("wolf howling"))))
    assert same_logic(parse("dogs and a wolf howling, then rain", vocab),
                      And((Before("dog howling", "rain"), Before("wolf howling", "rain"))))


@pytest.mark.parametrize("text,noun", [("a dog and a wolf howling", "dog"),
                                       ("dogs and a wolf are howling", "dog"),
                                       ("a dog or a wolf howling", "dog"),
                                       ("a dog and a wolf howl", "dog"),
                                       ("a baby and a man laughing", "baby"),
                                       ("a lion and a bear growling", "lion")])
def test_a_shared_verb_with_no_label_for_it_is_refused(text, noun) -> None:
    refused(text, f"no label is '{noun}")


# --- 4. a verb on a family keeps members whose own verb says the same sound ---------------------

BELLS = {"church bell tolling", "cowbell", "desk bell ding", "jingle bells",
         "railroad crossing bell", "tubular bells"}


@pytest.mark.parametrize("text", ["a bell ringing", "bells ringing", "a ringing bell",
                                  "a bell rings", "bells ring", "the bells are ringing"])
def test_a_bell_ringing_is_every_bell(text) -> None:
    assert set(labels(parse(text, REAL))) == BELLS, text


@pytest.mark.parametrize("text,want", [("a bell tolling", "church bell tolling"),
                                       ("a tolling bell", "church bell tolling"),
                                       ("bells tolling", "church bell tolling"),
                                       ("a bell dinging", "desk bell ding")])
def test_a_narrower_verb_names_only_the_bell_that_says_it(text, want) -> None:
    """ringing says every bell's sound; tolling is one way of ringing, not a cowbell's."""
    assert parse(text, REAL) == Has(want), text


@pytest.mark.parametrize("text", ["no bells ringing", "no bell ringing", "without bells ringing"])
def test_no_bells_ringing_excludes_every_bell(text) -> None:
    got = parse(text, REAL)
    assert isinstance(got, Not) and set(labels(got)) == BELLS, text


@pytest.mark.parametrize("text", ["a horn honking", "horns honking", "a honking horn",
                                  "a horn honks"])
def test_a_honking_horn_is_no_french_horn(text) -> None:
    assert set(labels(parse(text, REAL))) == {"car horn", "ship horn"}, text


@pytest.mark.parametrize("text,want", [
    ("a church bell ringing", Has("church bell tolling")),
    ("a clock chiming", Has("clock tower chiming")),
    ("water flowing", Has("tap water running")),
    ("a car honking", Has("car horn")),
    ("a bird singing", Has("songbirds chirping")),
    ("a horse galloping", Has("horse hooves galloping")),
    ("rain is falling", Has("rain")), ("a siren is wailing", Has("siren")),
    ("no horns honking", Not(any_of("car horn", "ship horn"))),
    ("a phone ringing", Has("telephone ringing")),   # a busy signal does not ring
    ("a clock ringing", Has("alarm clock ringing")),
])
def test_verbs_on_families_over_the_real_labels(text, want) -> None:
    assert same_logic(parse(text, REAL), want), (text, parse(text, REAL))


def test_verbs_on_families_over_the_synthetic_labels() -> None:
    assert set(labels(parse("a bell ringing", SYN))) == {
        "tiny bell strike", "small bell strike", "large bell strike", "huge bell strike"}
    assert parse("a small bell", SYN) == Has("small bell strike")
    for text in ("a siren wailing", "a wailing siren", "sirens wailing"):
        assert set(labels(parse(text, SYN))) == {"pure wailing siren", "harsh wailing siren"}
    assert set(labels(parse("a yelping siren", SYN))) == {"pure yelping siren",
                                                          "harsh yelping siren"}
    assert len(labels(parse("no sirens", SYN))) == 8


@pytest.mark.parametrize("text", ["a dog howling", "a crow crowing", "a horn tolling",
                                  "a bell honking", "dogs growling"])
def test_a_verb_of_another_sound_is_refused(text) -> None:
    refused(text, "unknown sound")


# --- 5. modifiers the logic cannot say -----------------------------------------------------------

@pytest.mark.parametrize("text,word", [
    ("soft piano", "soft"), ("a soft piano", "soft"), ("an old car passing", "old"),
    ("a car passing quickly", "quickly"), ("a car quickly passing", "quickly"),
    ("a big dog", "big"), ("a dog barking loudly", "loudly"), ("loudly, a dog barking", "loudly"),
    ("a loud dog barking", "loud"), ("a fast motorcycle passing", "fast"),
    ("a motorcycle passing fast", "fast"), ("heavy rain", "heavy"), ("distant thunder", "distant"),
    ("thunder far away", "far"), ("a very loud siren", "very"), ("a tiny bell", "tiny"),
    ("an angry man speaking", "angry"), ("someone speaking softly", "softly"),
    ("a small dog and rain", "small"), ("rain, then a slow train", "slow"),
    ("a red car", "red"),
])
@pytest.mark.parametrize("opts", [None, ABSORB], ids=["plain", "absorbing-semantic"])
def test_a_modifier_no_label_says_is_refused_naming_it(text, word, opts) -> None:
    refused(text, word, REAL, opts)


@pytest.mark.parametrize("text,word", [("loud puppy barking", "loud"),
                                       ("a puppy barking quietly", "quietly")])
def test_a_modifier_is_refused_beside_a_paraphrase_too(text, word) -> None:
    def near(phrase, labels_):
        return [("dog barking", 0.95), ("rain", 0.1)]
    refused(text, word, REAL, ResolveOptions(semantic=near, threshold=0.5, margin=0.1))


def test_a_modifier_that_is_part_of_a_label_narrows_to_it() -> None:
    """...once: said twice, the second is not read ("a fast fast clicking")."""
    assert parse("a tiny bell", SYN) == Has("tiny bell strike")
    refused("a fast fast clicking", "fast", SYN)
    refused("a tiny tiny chime", "tiny", SYN)
    assert parse("a slow drip", SYN) == Has("slow dripping")
    assert same_logic(parse("an electric guitar then a piano", REAL),
                      Or((Before("electric guitar", "acoustic piano"),
                          Before("electric guitar", "electric piano"))))


def test_the_refusal_of_a_modifier_does_not_suggest_order_or_duration() -> None:
    def near(phrase, labels_):
        return [("motorcycle passing", 0.95), ("rain", 0.1)]
    msg = refused("a fast motorcycle passing", "fast", REAL,
                  ResolveOptions(semantic=near, threshold=0.5, margin=0.1))
    assert "duration" not in msg and "drop 'fast'" in msg
    assert "duration" in refused("a brief siren", "brief", REAL,
                                 ResolveOptions(semantic=lambda p, ls: [("siren", 0.95)],
                                                threshold=0.5, margin=0.1))


# --- 6. a contradiction through a family ---------------------------------------------------------

@pytest.mark.parametrize("text", [
    "a horse but no horses", "horses, but no horse", "a horse but not a horse",
    "a dog barking but no dogs", "an owl and no birds", "a crow but no birds",
    "a bird but no birds", "a piano, but no pianos", "a piano then a violin but no pianos",
    "a horse for 5 seconds but no horses", "no horses, but a horse neighing",
    "a horse, but no horse neighing and no horse galloping", "a bell ringing but no bells",
    "someone speaking but no men and no women",
])
def test_a_contradiction_through_a_family_is_refused(text) -> None:
    refused(text, "contradictory")


@pytest.mark.parametrize("text", ["a bird but no owls", "a horse but no horse neighing",
                                  "a piano but no electric piano", "someone speaking but no men"])
def test_a_family_that_keeps_a_member_is_no_contradiction(text) -> None:
    parse(text, REAL)


@pytest.mark.parametrize("logic", [
    And((Or((Has("a"), Has("b"))), Not(Or((Has("a"), Has("b")))))),
    And((Has("a"), Not(Or((Has("a"), Has("b")))))),
    And((Or((Has("a"), Has("b"))), Not(Has("a")), Not(Has("b")))),
    And((Or((Lasts("a", 5), Lasts("b", 5))), Not(Or((Has("a"), Has("b")))))),
    And((Or((Before("a", "c"), Before("b", "c"))), Not(Has("c")))),
])
def test_the_consistency_check_sees_families(logic) -> None:
    with pytest.raises(QueryParseError, match="contradictory"):
        check_consistent(logic)


def test_the_consistency_check_keeps_a_family_with_a_member_left() -> None:
    check_consistent(And((Or((Has("a"), Has("b"))), Not(Has("a")))))
    check_consistent(And((Or((Has("a"), Not(Has("b")))), Not(Has("a")))))


# --- 7. word stems do not cross labels -------------------------------------------------------------

@pytest.mark.parametrize("text,want", [
    ("no crows", Not(Has("crow cawing"))), ("a crow", Has("crow cawing")),
    ("crows", Has("crow cawing")), ("no crow", Not(Has("crow cawing"))),
    ("no crowing", Not(Has("rooster crowing"))), ("a rooster", Has("rooster crowing")),
    ("birdsong", Has("songbirds chirping")), ("no birdsong", Not(Has("songbirds chirping"))),
    ("birdsongs then rain", Before("songbirds chirping", "rain")),
    ("a trumpet", Has("trumpet")), ("no trumpeting", Not(Has("elephant trumpeting"))),
    ("no chatter", Not(any_of("crowd chatter", "monkeys chattering"))),
    ("no sawing", Not(any_of("circular saw", "hand saw sawing"))),
    ("crow sounds", Has("crow cawing")), ("no trumpets", Not(Has("trumpet"))),
])
def test_a_word_names_a_label_as_the_thing_or_as_its_sound_not_across(text, want) -> None:
    assert same_logic(parse(text, REAL), want), (text, parse(text, REAL))


@pytest.mark.parametrize("text,bad", [("no crows", "rooster crowing"),
                                      ("birdsong", "duck quacking"),
                                      ("birdsong", "crow cawing"),
                                      ("no crowing", "crow cawing"),
                                      ("trumpets", "elephant trumpeting"),
                                      ("no trumpeting", "trumpet"),
                                      ("no bird sounds", "crickets chirping")])
def test_a_shared_stem_does_not_reach_an_unrelated_label(text, bad) -> None:
    assert bad not in labels(parse(text, REAL))


def test_a_sound_word_still_names_its_noun_and_its_verb() -> None:
    """beep, beeps, beeping: a noun that is the sound itself names both."""
    got = set(labels(parse("no beeps", SYN)))
    assert {"high beeping", "low double beeps"} <= got


# --- error messages that say which word and what to do ------------------------------------------

@pytest.mark.parametrize("text,needle", [
    ("after rain thunder", "'after rain, thunder'"),
    ("before rain thunder, then siren", "'before rain, thunder'"),
    ("rain rain", "the gap between"),
])
def test_messages_point_at_the_fix(text, needle) -> None:
    msg = refused(text, needle, V)
    assert "''" not in msg


def test_resolution_shows_the_shared_verb() -> None:
    r = parse_detailed("a man and a woman speaking", REAL)
    assert [(x.text, x.labels) for x in r.resolutions] == [("man", ("man speaking",)),
                                                           ("woman speaking", ("woman speaking",))]
    assert "'speaking'" in r.resolutions[0].detail


@pytest.mark.parametrize("text", ["two people speaking", "people speaking twice", "pianos twice",
                                  "three bells ringing"])
def test_a_count_of_a_family_is_refused(text) -> None:
    """"two people speaking" may be one man and one woman: no count of one label says it."""
    refused(text, "cannot count")


def test_first_with_a_sound_put_before_it_is_refused() -> None:
    refused("first a siren, and before that a dog barking", "puts 'siren' first", V)
    assert parse("first a siren, and after that a dog barking", V) == Before("siren",
                                                                            "dog barking")
