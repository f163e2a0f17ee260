"""Issue 45 item 3: an example the tagger cannot name is refused, an example's label says where
it came from, two examples read alike are refused, and errors quote the user's own text."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from reasonaudio.querylang.examples import ExampleLabel
from reasonaudio.logic import Before
from reasonaudio.querylang.parser import ResolveOptions, parse_detailed, same_logic
from reasonaudio.detect.perceive_examples import Heard
from reasonaudio.errors import DataError, QueryParseError
from reasonaudio.generator.interleave import read_example_audio
from reasonaudio.retrievers.example_hearing import heard_label

LABELS = ["deep pulsing tone", "siren", "rain", "dog barking"]


def tone(seconds: float = 1.0, dbfs: float = -12.0, sr: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (10 ** (dbfs / 20) * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


def opts(**labels: ExampleLabel) -> ResolveOptions:
    return ResolveOptions(examples=labels)


# --- silence and ties are refused -----------------------------------------------------------

def test_a_quiet_tone_is_silence(tmp_path) -> None:
    path = tmp_path / "quiet.wav"
    sf.write(str(path), tone(dbfs=-80), 16000, subtype="FLOAT")
    with pytest.raises(DataError, match=r"silent \(peak -80 dBFS"):
        read_example_audio(path)


def test_anti_phase_stereo_is_silence(tmp_path) -> None:
    """16-bit anti-phase channels do not cancel exactly (-32768 vs 32767): the residue is
    silence all the same."""
    x = np.round(tone(dbfs=0) * 32767).astype(np.int16)
    stereo = np.stack([x, (-x.astype(np.int32) - 1).clip(-32768, 32767).astype(np.int16)], 1)
    path = tmp_path / "anti.wav"
    sf.write(str(path), stereo, 16000, subtype="PCM_16")
    with pytest.raises(DataError, match="silent once its channels are averaged"):
        read_example_audio(path)


def test_a_plain_tone_reads(tmp_path) -> None:
    path = tmp_path / "tone.wav"
    sf.write(str(path), tone(), 16000)
    wave, sr, _ = read_example_audio(path)
    assert sr == 16000 and len(wave) == 16000


def test_a_tie_between_the_top_labels_is_refused() -> None:
    tie = Heard("deep pulsing tone", 0.0123, (("deep pulsing tone", 0.0123), ("rain", 0.0123),
                                              ("siren", 0.0123)), "silence")
    got = heard_label(tie)
    assert got.refusal and "3 labels equally" in got.refusal
    with pytest.raises(QueryParseError, match=r"<audio:ex-1>: the tagger hears 3 labels equally"):
        parse_detailed("<audio:ex-1>, then rain", LABELS, opts(**{"ex-1": got}))
    assert "no sound" in heard_label(Heard(None, 0.0, (), "silence")).refusal
    clear = heard_label(Heard("siren", 0.61, (("siren", 0.61), ("rain", 0.2)), "siren"))
    assert (clear.label, clear.how, clear.score, clear.refusal) == ("siren", "tagger", 0.61, "")


def test_a_trained_detector_refuses_below_its_floor_and_on_a_tie_and_says_so() -> None:
    """peak_label: the label whose track peaks highest; a trained detector (floor 0.5, its
    sigmoid's boundary) refuses an example no track rises above, and two saturated outputs tie."""
    from reasonaudio.detect.perceive_examples import DETECTOR, DETECTOR_HEARS, peak_label

    labels = ["rain", "siren", "dog barking"]
    tracks = np.array([[0.1, 0.7, 0.2], [0.3, 0.9, 0.95]], dtype=np.float32)
    got = peak_label(tracks, labels, DETECTOR_HEARS, who=DETECTOR)
    assert (got.label, got.score, got.top[1]) == ("dog barking", 0.95, ("siren", 0.9))
    assert heard_label(got).how == "detector" and not heard_label(got).refusal
    low = peak_label(tracks * 0.5, labels, DETECTOR_HEARS, who=DETECTOR)
    assert low.label is None and "the detector hears no sound" in heard_label(low).refusal
    tied = peak_label(np.array([[1.0, 0.99999, 0.2]], dtype=np.float32), labels, DETECTOR_HEARS,
                      who=DETECTOR)
    assert "the detector hears 2 labels equally ('rain', 'siren'" in heard_label(tied).refusal
    assert peak_label(tracks, labels, 0.0).who == "tagger"


# --- the resolution says it came from an example ------------------------------------------------

def test_resolved_names_the_example_and_the_taggers_score() -> None:
    text = "rain, then <audio:ex-1>"
    got = parse_detailed(text, LABELS, opts(**{"ex-1": ExampleLabel("siren", "tagger", 0.61)}))
    res = got.to_json()["resolved"]
    ex = next(r for r in res if r["kind"] == "example")
    assert ex["text"] == "<audio:ex-1>" and ex["labels"] == ["siren"] and ex["score"] == 0.61
    assert text[ex["start"]:ex["end"]] == "<audio:ex-1>" and "tagger" in ex["detail"]
    rain = next(r for r in res if r["labels"] == ["rain"])
    assert (rain["kind"], text[rain["start"]:rain["end"]]) == ("exact", "rain")


# --- two examples read as one label -----------------------------------------------------------

def test_two_examples_read_alike_are_refused() -> None:
    same = opts(a=ExampleLabel("siren", "tagger", 0.5), b=ExampleLabel("siren", "tagger", 0.4))
    with pytest.raises(QueryParseError, match=r"<audio:a> and <audio:b> are both read as 'siren'"):
        parse_detailed("<audio:a> and <audio:b>", LABELS, same)
    again = parse_detailed("<audio:a> for 5 seconds, with <audio:a> then rain", LABELS, same)
    assert again.logic is not None   # one example named twice is one sound


# --- errors quote what the user wrote -----------------------------------------------------------

def test_errors_quote_the_users_text_and_placeholders_are_words_apart() -> None:
    o = opts(x=ExampleLabel("deep pulsing tone", "tagger", 0.5))
    assert same_logic(parse_detailed("<audio:x>then rain", LABELS, o).logic,
                      Before("deep pulsing tone", "rain"))
    with pytest.raises(QueryParseError) as exc:
        parse_detailed("<audio:x>then zzyzx", LABELS, o)
    msg = str(exc.value)
    assert "'<audio:x>then zzyzx'" in msg and "tonethen" not in msg, msg
