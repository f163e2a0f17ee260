"""Hostile strings through the real CLI (issue 14: the parser's fuzz acceptance, and item 7).

`bench parse` and `bench search` (oracle, on a small fake build) are driven through typer's
CliRunner with generated hostile text: rich markup, control characters, huge and signed
numbers, deep negation, mixed scripts, 10,000-character input. Every run must end with exit 0
or 2 and no traceback (a rejected query: exactly one line on stderr). Every accepted string's
logic, written back as text (generator.writer) and parsed again, must give the same logic.

The vocabulary's head nouns are all different, so a family reading has one label and every
accepted logic can be written back as a sentence. The semantic fallback is the real one
(MiniLM, loaded once for the module).
"""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.logic import from_json
from reasonaudio.querylang.parser import same_logic
from reasonaudio.generator.writer import logic_to_text

from store_helpers import write_fake_benchmark

pytestmark = pytest.mark.fast

V = ["dog barking", "siren", "rain", "thunder", "church bell", "glass breaking", "car horn",
     "low hum"]

MARKUP = ["[/]", "[red]", "[/red]", "[bold]rain[/bold]", "[link=http://x]", "[/", "\\[/]"]
CONTROL = ["\x00", "\x07", "\x1b[31m", "\r", "\t", "\x7f", "\u200b", "\u202e", "\x0c", "\udc80"]
NUMBERS = ["1e309", "9" * 400, "-5", "0", "1e-9", "99999999999999999999", "\u22125", "2.5e1",
           "NaN", "inf", "0x10", "1,000", "٣", "５"]
SCRIPTS = ["r\u0430in", "дождь", "雨", "🐕", "ra\u0301in", "ｒａｉｎ", "Regen", "σειρήνα", "مطر"]
WORDS = ["and", "then", "while", "no", "not", "but", "or", "for", "seconds", "s", "after",
         "before", "without", "neither", "nor", "each", ",", ".", "(", ")", "at the same time",
         "a", "the", "sound", "first", "finally", "only", "at all", "together", "starts with",
         "transitions to", "at the beginning", "at the end", "about", "ten", "twenty five"]
LABELS = V + ["dogs barking", "a dog barks", "sirens wailing", "rainfall", "thunder rumbling",
              "puppy barking", "dog", "bells", "horn"]
ALL = MARKUP + CONTROL + NUMBERS + SCRIPTS + WORDS + LABELS


def hostile(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.08:
        return ("not " * rng.randint(2, 200)) + rng.choice(V)
    if kind < 0.12:
        return "(" * rng.randint(1, 300) + rng.choice(V) + ")" * rng.randint(0, 300)
    if kind < 0.16:
        return (rng.choice(V) + " and ") * 1111          # about 10,000 characters
    if kind < 0.18:
        return "".join(rng.choice("abcdefghij ") for _ in range(10_000))
    pieces = [rng.choice(ALL if rng.random() < 0.5 else LABELS + WORDS)
              for _ in range(rng.randint(1, 12))]
    glue = rng.choice([" ", " ", "", ", "])
    return glue.join(pieces)


def cases(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["", " ", "rain for -5 seconds", "not not rain", "rain for 1e309 seconds",
             "dog \U0001F415 barking", "rain\udcff", "rain \x00 thunder"]
    return fixed + [hostile(rng) for _ in range(n)]


PARSE_CASES = [t for t in cases(160, 0) if "[/" not in t]
MARKUP_CASES = [t for t in cases(160, 0) if "[/" in t] + [f"rain and {m} thunder" for m in MARKUP]


@pytest.fixture(scope="module")
def labels_file(tmp_path_factory):
    f = tmp_path_factory.mktemp("hostile") / "labels.txt"
    f.write_text("\n".join(V) + "\n", encoding="utf-8")
    return f


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def check_ended_cleanly(r, text: str) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), (text, r.exception)
    assert r.exit_code in (0, 2), (text, r.exit_code, r.output)
    assert "Traceback" not in r.output, (text, r.output)
    if r.exit_code == 2:
        assert len(r.stderr.strip().splitlines()) == 1, (text, r.stderr)


def test_parse_hostile_text_ends_cleanly_and_reads_back(labels_file) -> None:
    accepted = 0
    for text in PARSE_CASES:
        r = run("parse", text, "--labels", labels_file, "--json")
        check_ended_cleanly(r, text)
        if r.exit_code != 0:
            continue
        accepted += 1
        logic = from_json(json.loads(r.stdout)["logic"])
        again_text = logic_to_text(logic)
        again = run("parse", again_text, "--labels", labels_file, "--json", "--strict")
        assert again.exit_code == 0, (text, again_text, again.output)
        assert same_logic(from_json(json.loads(again.stdout)["logic"]), logic), (text, again_text)
    assert 10 <= accepted < len(PARSE_CASES)   # the generator reaches both outcomes


@pytest.mark.parametrize("text", MARKUP_CASES, ids=range(len(MARKUP_CASES)))
def test_parse_markup_text_ends_cleanly(labels_file, text) -> None:
    r = run("parse", text, "--labels", labels_file, "--json")
    check_ended_cleanly(r, text)


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return write_fake_benchmark(tmp_path_factory.mktemp("hostilesearch") / "b", n_clips=60,
                                n_queries=5, seed=3, vocab=V)


def test_search_hostile_text_ends_cleanly(fake) -> None:
    for text in cases(30, 1):
        r = run("search", text, "--data", fake, "-r", "oracle", "-k", "3", "--json")
        check_ended_cleanly(r, text)
        if r.exit_code == 0:
            out = json.loads(r.stdout)
            assert set(out) == {"logic", "hits", "resolved"}


@pytest.mark.parametrize("text,needle", [
    ("rain for -5 seconds", "positive"),
    ("not not rain", "double negation"),
    ("no no rain", "double negation"),
    ("dog \U0001F415 barking", "U+1F415"),
    ("rain\udcff", "undecodable byte 0xff"),
    ("rain for 1e309 seconds", "finite"),
    ("rain \x07 thunder", "U+0007"),
])
def test_silent_misreadings_are_errors(labels_file, text, needle) -> None:
    """Issue 14 item 7: each of these used to parse to logic that was not the text's meaning."""
    r = run("parse", text, "--labels", labels_file, "--json")
    assert r.exit_code == 2 and needle in r.stderr, r.output
