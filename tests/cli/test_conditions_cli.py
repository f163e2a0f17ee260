"""Conditions end to end: `bench build --conditions` leaves every benchmark file as it was,
records the conditions and the bed check; the oracle scores 1.000 under every condition; the
tagger check refuses a bed that holds a label's sound; bad condition names exit 2 in one line."""

from __future__ import annotations

import json

import pytest
import soundfile as sf
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.benchmark import BENCHMARK_FILES
from reasonaudio.atoms.registry import open_bank
from reasonaudio.atoms.beds import checked_beds, open_beds

@pytest.fixture(scope="module")
def builds(tonal_bank, tmp_path_factory):
    out = tmp_path_factory.mktemp("builds")
    runner = CliRunner()
    common = ["build", "--atoms", str(tonal_bank), "--clips", "60", "--queries", "10"]
    plain = runner.invoke(app, common + ["--out", str(out / "plain")])
    assert plain.exit_code == 0, plain.output
    cond = runner.invoke(app, common + ["--out", str(out / "cond"), "--conditions",
                                        "clean,snr20,snr5,snr0,long"])
    assert cond.exit_code == 0, cond.output
    return out / "plain", out / "cond"


def test_conditions_leave_queries_qrels_and_choices_identical(builds):
    plain, cond = builds
    for name in BENCHMARK_FILES:
        assert (plain / name).read_bytes() == (cond / name).read_bytes(), name
    a = json.loads((plain / "manifest.json").read_text())
    b = json.loads((cond / "manifest.json").read_text())
    assert "conditions" not in a and "conditions" not in a["parameters"]
    assert [r["name"] for r in b["conditions"]["records"]] == ["clean", "snr20", "snr5", "snr0", "long"]
    check = b["conditions"]["beds"]["generated"]
    assert check["accepted"] and all(v["ok"] == (not v["heard"]) for v in check["verdicts"])
    assert set(check["accepted"]) == {v["bed_id"] for v in check["verdicts"] if v["ok"]}
    assert {k: v for k, v in b.items() if k not in ("conditions", "parameters", "files")} == \
        {k: v for k, v in a.items() if k not in ("conditions", "parameters", "files")}


def test_oracle_scores_one_under_every_condition(builds, tmp_path):
    _, cond = builds
    runner = CliRunner()
    r = runner.invoke(app, ["ingest", "--data", str(cond), "--model", "none"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["eval", "--data", str(cond), "-r", "oracle", "--condition", "all",
                            "--json", str(tmp_path / "scores.json")])
    assert r.exit_code == 0, r.output
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["conditions"] == ["clean", "snr20", "snr5", "snr0", "long"]
    for c in scores["conditions"]:
        assert scores["values"]["oracle"][c]["acc@1"] == 1.0
    assert (cond / "results" / "oracle.json").is_file()
    assert (cond / "results" / "conditions" / "snr5" / "oracle.json").is_file()
    r = runner.invoke(app, ["compare", "oracle", "oracle", "--condition-b", "snr0", "--data", str(cond)])
    assert r.exit_code == 0 and "oracle @ snr0" in r.output, r.output
    r = runner.invoke(app, ["compare", "oracle@clean", "oracle@snr0", "--data", str(cond)])
    assert r.exit_code == 2 and "--condition-a" in r.output and "Traceback" not in r.output, r.output


def test_renders_follow_the_condition(builds, tmp_path):
    _, cond = builds
    runner = CliRunner()
    lengths = {}
    for name in ("clean", "snr0", "long"):
        out = tmp_path / f"{name}.wav"
        r = runner.invoke(app, ["render", "clip-00001", "--data", str(cond), "-o", str(out),
                                "--condition", name])
        assert r.exit_code == 0, r.output
        lengths[name] = sf.info(str(out)).duration
    assert lengths["clean"] == lengths["snr0"] and 60 <= lengths["long"] <= 300
    assert (tmp_path / "clean.wav").read_bytes() != (tmp_path / "snr0.wav").read_bytes()


@pytest.mark.parametrize("args, needle", [
    (["render", "clip-00001", "-o", "x.wav", "--condition", "snr05"], "leading zeros"),
    (["render", "clip-00001", "-o", "x.wav", "--condition", "noisy"], "unknown condition"),
    (["ingest", "--model", "none", "--condition", "snr5"], "only a model ingest renders audio"),
    (["ingest", "--model", "two-stage:oracle-caption+minilm", "--chunking", "silence"],
     "cuts no windows"),
])
def test_bad_condition_input_is_one_line_and_exit_2(builds, args, needle, tmp_path):
    _, cond = builds
    args = [str(tmp_path / a) if a == "x.wav" else a for a in args]
    r = CliRunner().invoke(app, args + ["--data", str(cond)])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_build_refuses_conditions_without_an_admissible_bed(tmp_path):
    """The synthetic bank has steady white, pink and brown noise classes: the check refuses every
    generated bed, and the build says so instead of laying a label's sound under the clips."""
    r = CliRunner().invoke(app, ["build", "--out", str(tmp_path / "b"), "--clips", "40",
                                 "--queries", "10", "--conditions", "clean,snr5"])
    assert r.exit_code == 2 and "holds a sound of this bank" in r.output, r.output
    assert not (tmp_path / "b").exists()


def test_the_tagger_check_refuses_a_bed_holding_a_labels_sound(tonal_bank, tmp_path):
    """A bed folder with one of the bank's own recordings (of a label the bank check confirms:
    the tagger hears it) and white noise: that bed is heard as the label and refused, the noise
    accepted. (Which label it is heard as is the tagger's reading at the loudness reference.)"""
    from reasonaudio.atoms.tagger_check import run_tagger_check

    bank = open_bank(str(tonal_bank))
    confirmed = run_tagger_check(bank, str(tonal_bank), root=tonal_bank).confirmed
    assert confirmed, "the tagger confirms none of the tonal labels"
    siren = confirmed[0].label
    folder = tmp_path / "beds"
    folder.mkdir()
    x, sr = bank.load(bank.by_label[siren][0].atom_id)
    sf.write(str(folder / "siren.wav"), list(x) * 4, sr, subtype="PCM_16")
    white, wsr = open_beds().load("white-noise")
    sf.write(str(folder / "white.wav"), white[: 10 * wsr], wsr, subtype="PCM_16")
    (folder / "beds.jsonl").write_text(
        json.dumps({"bed_id": "street", "path": "siren.wav", "source": "test", "license": "CC0-1.0"})
        + "\n" + json.dumps({"bed_id": "hiss", "path": "white.wav", "source": "test",
                             "license": "CC0-1.0"}) + "\n")
    check = checked_beds(open_beds(f"folder:{folder}"), bank, tonal_bank, tmp_path / "cache")
    verdicts = {v.bed_id: v for v in check.verdicts}
    assert not verdicts["street"].ok and verdicts["street"].heard
    assert verdicts["hiss"].ok and check.accepted == ("hiss",)
    # a bed folder row without its licence is refused by name
    (folder / "beds.jsonl").write_text(json.dumps({"bed_id": "x", "path": "white.wav",
                                                   "source": "test"}) + "\n")
    from reasonaudio.errors import DataError

    with pytest.raises(DataError, match="license"):
        open_beds(f"folder:{folder}")
