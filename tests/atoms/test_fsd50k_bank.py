"""FSD50K bank on a small generated copy: single-leaf clips, no parent/child classes, licences."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from reasonaudio.errors import DataError
from reasonaudio.atoms.folder import nested_label_pairs
from reasonaudio.atoms.fsd50k import FSD50KBank, fsd50k_label, spdx_license
from reasonaudio.atoms.registry import open_bank

pytestmark = pytest.mark.fast

# label -> (mid, parent label or None)
TREE = {
    "Animal": ("/m/a", None),
    "Domestic_animals_and_pets": ("/m/dom", "Animal"),
    "Dog": ("/m/dog", "Domestic_animals_and_pets"),
    "Bark": ("/m/bark", "Dog"),
    "Growling": ("/m/growl", "Dog"),
    "Cat": ("/m/cat", "Domestic_animals_and_pets"),
    "Meow": ("/m/meow", "Cat"),
    "Vehicle": ("/m/veh", None),
    "Car": ("/m/car", "Vehicle"),
    "Vehicle_horn_and_car_horn_and_honking": ("/m/horn", "Car"),
    "Zipper_(clothing)": ("/m/zip", None),
    "Domestic_sounds_and_home_sounds": ("/m/home", None),
    "Water_tap_and_faucet": ("/m/wtap", "Domestic_sounds_and_home_sounds"),
    "Tap": ("/m/tap", None),
    "Hi-hat": ("/m/hihat", None),
}


def chain(leaf: str) -> list[str]:
    out = [leaf]
    while TREE[out[-1]][1]:
        out.append(TREE[out[-1]][1])
    return out


# (fname, labels, split); single-leaf unless noted
CLIPS = [
    ("101", chain("Bark"), "dev"), ("102", chain("Bark"), "dev"), ("103", chain("Bark"), "eval"),
    ("104", chain("Bark"), "dev"),
    ("201", chain("Growling"), "dev"), ("202", chain("Growling"), "eval"),
    ("301", chain("Meow"), "dev"), ("302", chain("Meow"), "dev"),
    ("303", chain("Cat"), "dev"),                                  # intermediate only: not an atom
    ("401", chain("Vehicle_horn_and_car_horn_and_honking"), "dev"),
    ("402", chain("Vehicle_horn_and_car_horn_and_honking"), "eval"),
    ("403", chain("Car"), "dev"),                                  # intermediate only
    ("501", chain("Zipper_(clothing)"), "dev"), ("502", chain("Zipper_(clothing)"), "dev"),
    ("601", chain("Water_tap_and_faucet"), "dev"), ("602", chain("Water_tap_and_faucet"), "dev"),
    ("701", ["Tap"], "dev"),                                       # 'tap' nests in 'water tap'
    ("801", ["Hi-hat"], "dev"), ("802", ["Hi-hat"], "eval"),
    ("901", chain("Bark") + ["Meow", "Cat"], "dev"),               # two leaves: not an atom
    ("902", chain("Bark") + ["Hi-hat"], "eval"),                   # two leaves: not an atom
    ("903", chain("Growling") + ["Car", "Vehicle"], "dev"),        # leaf plus a foreign node
    ("904", ["Dog", "Domestic_animals_and_pets", "Animal"], "dev"),
    ("950", chain("Meow"), "dev"),                                 # too short (0.2 s)
]


def make_copy(root: Path, ontology: bool = False, metadata: bool = True) -> Path:
    gt = root / "FSD50K.ground_truth"
    gt.mkdir(parents=True)
    (gt / "vocabulary.csv").write_text("".join(f"{i},{lb},{mid}\n" for i, (lb, (mid, _)) in enumerate(TREE.items())))
    for split in ("dev", "eval"):
        header = "fname,labels,mids" + (",split" if split == "dev" else "")
        lines = [header]
        for fname, labels, s in CLIPS:
            if s != split:
                continue
            mids = ",".join(TREE[x][0] for x in labels)
            lines.append(f'{fname},"{",".join(labels)}","{mids}"' + (",train" if split == "dev" else ""))
        (gt / f"{split}.csv").write_text("\n".join(lines) + "\n")
        audio = root / f"FSD50K.{split}_audio"
        audio.mkdir()
        for fname, _, s in CLIPS:
            if s == split:
                seconds = 0.2 if fname == "950" else 0.6 + int(fname) % 7 * 0.1
                t = np.arange(int(seconds * 8000)) / 8000
                sf.write(audio / f"{fname}.wav", 0.2 * np.sin(2 * np.pi * (200 + int(fname)) * t), 8000)
    if metadata:
        meta = root / "FSD50K.metadata"
        meta.mkdir()
        info = {f: {"title": "t", "license": "http://creativecommons.org/licenses/by-nc/3.0/",
                    "uploader": f"user{f}"} for f, _, s in CLIPS if s == "dev"}
        info["101"]["license"] = "http://creativecommons.org/publicdomain/zero/1.0/"
        (meta / "dev_clips_info_FSD50K.json").write_text(json.dumps(info))
    if ontology:
        mids = {lb: mid for lb, (mid, _) in TREE.items()}
        nodes = [{"id": mid, "name": lb.replace("_", " "),
                  "child_ids": [mids[c] for c, (_, p) in TREE.items() if p == lb]} for lb, (mid, _) in TREE.items()]
        (root / "ontology.json").write_text(json.dumps(nodes))
    return root


@pytest.mark.parametrize("ontology", [False, True])
def test_single_leaf_classes(tmp_path, ontology):
    bank = open_bank(f"fsd50k:{make_copy(tmp_path / 'fsd', ontology=ontology)}")
    assert isinstance(bank, FSD50KBank)
    assert bank.labels == ("bark", "growling", "hi hat", "meow", "vehicle horn", "water tap", "zipper")
    assert not nested_label_pairs(bank.labels)
    ids = {a.atom_id for a in bank.atoms}
    assert not ids & {"fsd50k-303", "fsd50k-403", "fsd50k-901", "fsd50k-902", "fsd50k-903",
                      "fsd50k-904", "fsd50k-950", "fsd50k-701"}
    assert [len(bank.by_label[lb]) for lb in bank.labels] == [3, 2, 2, 2, 2, 2, 2]
    d = bank.describe()
    assert d["hierarchy"].startswith("ontology" if ontology else "inferred")
    assert d["splits"] == ["dev", "eval"] and d["n_classes"] == 7


def test_metadata_licences_and_loading(tmp_path):
    bank = FSD50KBank.from_path(make_copy(tmp_path / "fsd"))
    for a in bank.atoms:
        if a.path.startswith("FSD50K.dev_audio/"):
            assert a.license == ("CC0-1.0" if a.atom_id == "fsd50k-101" else "CC-BY-NC-3.0")
    horn = bank.by_label["vehicle horn"]
    dev = next(x for x in horn if x.atom_id == "fsd50k-401")
    assert dev.license == "CC-BY-NC-3.0" and "user401" in dev.source and dev.path == "FSD50K.dev_audio/401.wav"
    assert next(x for x in horn if x.atom_id == "fsd50k-402").license == "unknown"  # no eval metadata
    x, sr = bank.load("fsd50k-401")
    assert sr == 8000 and x.ndim == 1 and len(x) > 0


def test_class_and_file_limits_and_determinism(tmp_path):
    root = make_copy(tmp_path / "fsd")
    bank = open_bank(f"fsd50k:{root}?classes=3&files=1")
    assert len(bank.labels) == 3 and len(bank.atoms) == 3
    assert bank.describe()["spec"].endswith("?classes=3&files=1")
    again = FSD50KBank.from_path(root, n_classes=3, files_per_class=1)
    assert [a.to_json() for a in bank.atoms] == [a.to_json() for a in again.atoms]
    with pytest.raises(DataError, match="classes=N"):
        open_bank(f"fsd50k:{root}?classes=0")
    with pytest.raises(DataError, match="classes=N"):
        open_bank(f"fsd50k:{root}?colour=red")


def test_fewer_leaves_than_asked_is_warned(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="reasonaudio.atoms"):
        bank = FSD50KBank.from_path(make_copy(tmp_path / "fsd"))
    assert len(bank.labels) == 7 and bank.describe()["requested_classes"] == 200
    assert any("fewer than the 200" in m for m in caplog.messages)
    assert any("'tap'" in m for m in caplog.messages)


def test_only_dev_audio_present(tmp_path):
    root = make_copy(tmp_path / "fsd")
    for f in (root / "FSD50K.eval_audio").iterdir():
        f.unlink()
    (root / "FSD50K.eval_audio").rmdir()
    bank = FSD50KBank.from_path(root)
    assert all(a.path.startswith("FSD50K.dev_audio/") for a in bank.atoms)
    assert bank.describe()["splits"] == ["dev"]


def test_bad_copies(tmp_path):
    with pytest.raises(DataError, match="not found"):
        open_bank(f"fsd50k:{tmp_path / 'nothing'}")
    root = make_copy(tmp_path / "fsd")
    (root / "FSD50K.dev_audio" / "102.wav").unlink()
    with pytest.raises(DataError, match=r"102\.wav .*: file not found"):
        FSD50KBank.from_path(root)
    (root / "FSD50K.dev_audio" / "102.wav").write_bytes(b"garbage" * 20)
    with pytest.raises(DataError, match=r"102\.wav .*unreadable or not audio"):
        FSD50KBank.from_path(root)
    (root / "FSD50K.dev_audio" / "102.wav").unlink()
    (root / "FSD50K.ground_truth" / "dev.csv").write_text('fname,labels,mids,split\n101,"Bark,Wolf",x,train\n')
    with pytest.raises(DataError, match=r"dev\.csv:2: label 'Wolf'"):
        FSD50KBank.from_path(root)
    (root / "FSD50K.ground_truth" / "vocabulary.csv").unlink()
    with pytest.raises(DataError, match="vocabulary"):
        FSD50KBank.from_path(root)


def test_label_and_licence_normalisation():
    assert fsd50k_label("Male_speech_and_man_speaking") == "male speech"
    assert fsd50k_label("Accelerating_and_revving_and_vroom") == "accelerating"
    assert fsd50k_label("Cupboard_open_or_close") == "cupboard open"
    assert fsd50k_label("Zipper_(clothing)") == "zipper"
    assert fsd50k_label("Hi-hat") == "hi hat"
    assert fsd50k_label("Fixed-wing_aircraft_and_airplane") == "fixed wing aircraft"
    assert spdx_license("http://creativecommons.org/licenses/by/3.0/") == "CC-BY-3.0"
    assert spdx_license("http://creativecommons.org/licenses/sampling+/1.0/") == "CC-SAMPLING+-1.0"
    assert spdx_license("http://creativecommons.org/publicdomain/zero/1.0/") == "CC0-1.0"
    assert spdx_license("") == "unknown"
