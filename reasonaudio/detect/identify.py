"""Naming one unheard recording: how well each way of hearing names the label of every
test-part recording of a split bank, played alone (issue 52).

Every query over the unseen split needs its labels heard in recordings no training build
played; this measures that step without mixing, logic or retrieval. For each test-part atom of
``split:test:SPEC`` (``atoms/split.py``), each :data:`IDENTIFIERS` record scores every label of
the test part and the atom counts as:

- **top-1** / **top-5**: the chance that the atom's label is among the best 1 / 5 when labels
  with equal scores are ordered at random (``g`` labels above it and ``t`` others level with it:
  ``clip((k - g) / (t + 1), 0, 1)``), so a score that ties many labels earns no credit for
  naming one of them;
- **named**: its label alone scores highest (what a by-example query accepts; a tie is refused);
- **refused**: the identifier hears nothing (its floor; such an atom counts 0 in every column).

Each atom's pick (:class:`Pick`) is kept too: the label each identifier heard (the highest score,
ties ordered by name, and how many labels tie), which says which labels pass for which.

Rows are split by the atom's kind: *other recordings* (a label's recording the train part does
not hold) and *unheard excerpts* (the second half of a train-part recording), reported apart.
The other recordings are also split by how many recordings of their label the train part holds
(:class:`TrainingRow`): what a second training recording of a label buys its naming.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.registry import open_bank
from reasonaudio.atoms.split import PREFIX, SplitBank, atom_kind, kinds
from reasonaudio.errors import DataError
from reasonaudio.models import yamnet
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.provenance import versions

FORMAT = "reasonaudio-identify/1"
KINDS = ("recording", "excerpt")
TOP = (1, 5)


@dataclass(frozen=True)
class Identifier:
    """One way of naming a recording's label (a row of the table)."""

    name: str
    title: str
    learns_from: str
    """what it knows about the labels (what its figure assumes)"""
    needs_model: bool = False


IDENTIFIERS: tuple[Identifier, ...] = (
    Identifier("tagger", "YAMNet and the zero-shot label map (the by-example perceiver)",
               "the label names only (each label's AudioSet classes by text)"),
    Identifier("nearest:yamnet-logits", "nearest label mean, YAMNet's 521 logits",
               "one mean per label over its train-part recordings (frames averaged)"),
    Identifier("nearest:yamnet-embedding", "nearest label mean, YAMNet's 1,024-d pooled layer",
               "one mean per label over its train-part recordings (frames averaged)"),
    Identifier("detector", "a `bench train-detector` model (the by-example perceiver)",
               "the clips of its training builds", needs_model=True),
)
BY_NAME = {i.name: i for i in IDENTIFIERS}


@dataclass(frozen=True)
class Row:
    identifier: str
    kind: str
    atoms: int
    top1: float
    top5: float
    named: float
    refused: float


@dataclass(frozen=True)
class TrainingRow:
    """One identifier on the other recordings whose label has ``train_recordings`` recordings in
    the train part (the same columns as :class:`Row`)."""

    identifier: str
    train_recordings: int
    labels: int
    atoms: int
    top1: float
    top5: float
    named: float
    refused: float


@dataclass(frozen=True)
class Pick:
    """What one identifier heard in one test atom: None when it heard nothing."""

    label: str | None
    tied: int = 0
    """other labels with the same highest score"""


@dataclass(frozen=True)
class AtomPicks:
    atom_id: str
    label: str
    kind: str
    picks: dict[str, Pick]


@dataclass(frozen=True)
class IdentifyResult:
    spec: str
    labels: int
    atoms: dict[str, int]
    rows: tuple[Row, ...]
    detector: dict[str, Any] | None = None
    parent: dict[str, Any] = field(default_factory=dict)
    per_atom: tuple[AtomPicks, ...] = ()
    by_training: tuple[TrainingRow, ...] = ()
    """the other recordings' rows by their label's recordings in the train part"""

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "spec": self.spec, "labels": self.labels, "atoms": self.atoms,
                "parent": self.parent, "detector": self.detector,
                "identifiers": {i.name: {"title": i.title, "learns_from": i.learns_from}
                                for i in IDENTIFIERS if any(r.identifier == i.name for r in self.rows)},
                "rows": [asdict(r) for r in self.rows],
                "by_training": [asdict(r) for r in self.by_training],
                "per_atom": [{"atom": a.atom_id, "label": a.label, "kind": a.kind,
                              "heard": {n: asdict(p) for n, p in a.picks.items()}} for a in self.per_atom],
                "versions": versions()}


def pick(scores: np.ndarray, labels: Sequence[str], heard: bool) -> Pick:
    """The highest-scoring label (ties ordered by name) and how many others share its score."""
    if not heard:
        return Pick(None)
    top = scores.max()
    level = [lab for lab, x in zip(labels, scores) if x == top]
    return Pick(min(level), len(level) - 1)


def tie_split_top(scores: np.ndarray, truth: int, k: int) -> float:
    """The chance that label ``truth`` is among the best ``k`` of ``scores`` with equal scores
    ordered at random."""
    above = int((scores > scores[truth]).sum())
    level = int((scores == scores[truth]).sum()) - 1
    return float(min(1.0, max(0.0, (k - above) / (level + 1))))


def played(atom_id: str, heard: frozenset[str] | set[str]) -> bool:
    """Whether training clips that used the atoms ``heard`` played ``atom_id``'s audio: the atom
    itself, or the whole recording an excerpt (``#head`` / ``#tail``) was cut from."""
    return atom_id in heard or (atom_kind(atom_id) == "excerpt" and atom_id.rsplit("#", 1)[0] in heard)


def _parts(spec: str) -> tuple[str, SplitBank, SplitBank]:
    inner = spec.strip()
    if inner.startswith(PREFIX):
        inner = inner[len(PREFIX):].partition(":")[2]
    train, test = open_bank(f"{PREFIX}train:{inner}"), open_bank(f"{PREFIX}test:{inner}")
    assert isinstance(train, SplitBank) and isinstance(test, SplitBank)
    return inner, train, test


@dataclass
class _Heard:
    """Per atom of a bank: the tagger's rows and pooled-layer values, its input patches."""

    rows: dict[str, np.ndarray] = field(default_factory=dict)
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)
    waves: dict[str, tuple[np.ndarray, int]] = field(default_factory=dict)


def _hear(bank: AtomBank, tagger: yamnet.YamnetTagger, hooks: Hooks, label: str,
          keep_waves: bool) -> _Heard:
    out = _Heard()
    for i, atom in enumerate(bank.atoms):
        wave, sr = bank.load(atom.atom_id)
        codes = tagger.input_codes(yamnet.resample(wave, int(sr)))
        out.rows[atom.atom_id], out.embeddings[atom.atom_id] = tagger.patch_codes_and_embeddings(codes)
        if keep_waves:
            out.waves[atom.atom_id] = (wave, int(sr))
        hooks.progress(label, i + 1, len(bank.atoms))
    return out


def _cosines(means: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Cosine of ``x`` with every row of ``means``, both centred on the rows' mean (sums in
    numpy's own fixed order, no BLAS)."""
    centre = means.mean(axis=0)
    m, v = means - centre, x - centre
    norms = np.sqrt((m * m).sum(axis=1)) * np.sqrt((v * v).sum())
    return (m * v).sum(axis=1) / np.maximum(norms, 1e-12)


def _nearest(train: AtomBank, feats: dict[str, np.ndarray],
             labels: Sequence[str]) -> Callable[[np.ndarray], np.ndarray]:
    means = np.zeros((len(labels), feats[train.atoms[0].atom_id].shape[1]))
    index = {lab: j for j, lab in enumerate(labels)}
    counts = np.zeros(len(labels))
    for atom in train.atoms:
        j = index.get(atom.label)
        if j is not None:
            means[j] += feats[atom.atom_id].astype(np.float64).mean(axis=0)
            counts[j] += 1
    missing = [lab for lab, n in zip(labels, counts) if n == 0]
    if missing:
        raise DataError(f"{train.spec}: no recording of {len(missing)} test label(s): {missing[:3]}")
    means /= counts[:, None]
    return lambda f: _cosines(means, f.astype(np.float64).mean(axis=0))


def identify(spec: str, *, model_path: Path | str | None = None, hooks: Hooks = SILENT) -> IdentifyResult:
    """The table of the module docstring for the split of bank ``spec`` (``fetched:packages-second``,
    a folder, or ``split:PART:SPEC``); the ``detector`` row when ``model_path`` is given."""
    from reasonaudio.detect.clip_frames import load_tagger
    from reasonaudio.detect.perceive_examples import DetectorPerceiver, ExamplePerceiver
    from reasonaudio.detect.trained import trained_map

    inner, train, test = _parts(spec)
    labels = test.labels
    dmap = trained_map(model_path, labels) if model_path is not None else None  # its errors first
    frame_tagger = load_tagger()
    tagger = frame_tagger.tagger
    heard_test = _hear(test, tagger, hooks, "hearing the test part", keep_waves=True)
    heard_train = _hear(train, tagger, hooks, "hearing the train part", keep_waves=False)

    def logit(rows: np.ndarray) -> np.ndarray:  # the tagger's dequantised logits
        return tagger.output_scale * (rows.astype(np.float64) - tagger.output_zero)

    perceiver = ExamplePerceiver(test, labels, frame_tagger)
    scorers: dict[str, Callable[[str], tuple[np.ndarray, bool]]] = {}

    def by_tagger(aid: str) -> tuple[np.ndarray, bool]:
        peaks = perceiver.label_map.tracks(tagger.decode(heard_test.rows[aid])).max(axis=0)
        return peaks, bool(peaks.max() > 0)

    near_logits = _nearest(train, {a: logit(r) for a, r in heard_train.rows.items()}, labels)
    near_embed = _nearest(train, heard_train.embeddings, labels)
    scorers["tagger"] = by_tagger
    scorers["nearest:yamnet-logits"] = lambda aid: (near_logits(logit(heard_test.rows[aid])), True)
    scorers["nearest:yamnet-embedding"] = lambda aid: (near_embed(heard_test.embeddings[aid]), True)
    detector_info = None
    if dmap is not None:
        from reasonaudio.detect.perceive_examples import DETECTOR_HEARS

        det = DetectorPerceiver(dmap, frame_tagger)
        heard = sum(played(a.atom_id, dmap.detector.atoms) for a in test.atoms)
        detector_info = {"weights_sha256": dmap.detector.weights_sha256[:16], "model_path": str(model_path),
                         "training_seeds": [b.seed for b in dmap.detector.builds],
                         "heard_test_atoms": heard, "floor": DETECTOR_HEARS}

        def by_detector(aid: str) -> tuple[np.ndarray, bool]:
            peaks = dmap.tracks(det.inputs(*heard_test.waves[aid])).max(axis=0)
            return peaks, bool(peaks.max() > DETECTOR_HEARS)

        scorers["detector"] = by_detector

    kind_of = kinds(test)
    trained_on = {lab: len(train.by_label.get(lab, ())) for lab in labels}
    rows: list[Row] = []
    by_training: list[TrainingRow] = []
    picks: dict[str, dict[str, Pick]] = {a.atom_id: {} for a in test.atoms}
    for ident in IDENTIFIERS:
        if ident.name in scorers:
            got, by_count = _score(ident.name, scorers[ident.name], test, kind_of, labels, picks,
                                   trained_on, hooks)
            rows += [Row(ident.name, kind, len(got[kind]), *_means(got[kind])) for kind in KINDS if got[kind]]
            by_training += [TrainingRow(ident.name, count, len({lab for lab, _ in items}), len(items),
                                        *_means([c for _, c in items]))
                            for count, items in sorted(by_count.items())]
    counts = {k: sum(v == k for v in kind_of.values()) for k in KINDS}
    parent = train.parent
    fingerprint = getattr(parent, "fingerprint", None)
    return IdentifyResult(f"{PREFIX}test:{inner}", len(labels), counts, tuple(rows), detector_info,
                          {"spec": inner, "labels": len(parent.labels), "atoms": len(parent.atoms),
                           "fingerprint": fingerprint()[:12] if callable(fingerprint) else None},
                          tuple(AtomPicks(a.atom_id, a.label, kind_of[a.atom_id], picks[a.atom_id])
                                for a in test.atoms), tuple(by_training))


Cells = tuple[float, float, float, float]
"""one atom's top-1, top-5, named and refused"""


def _score(name: str, scorer: Callable[[str], tuple[np.ndarray, bool]], test: AtomBank,
           kind_of: dict[str, str], labels: Sequence[str], picks: dict[str, dict[str, Pick]],
           trained_on: dict[str, int], hooks: Hooks
           ) -> tuple[dict[str, list[Cells]], dict[int, list[tuple[str, Cells]]]]:
    """One identifier over the test atoms: their cells by kind, and the other recordings' cells
    (with their labels) by their label's recordings in the train part; each atom's pick goes
    into ``picks``; ``kind_of``: each test atom's kind."""
    index = {lab: j for j, lab in enumerate(labels)}
    got: dict[str, list[Cells]] = {k: [] for k in KINDS}
    by_count: dict[int, list[tuple[str, Cells]]] = {}
    for i, atom in enumerate(test.atoms):
        scores, heard_any = scorer(atom.atom_id)
        j = index[atom.label]
        picks[atom.atom_id][name] = pick(scores, labels, heard_any)
        cells: Cells = (0.0, 0.0, 0.0, 1.0)
        if heard_any:
            named = float(int((scores >= scores[j]).sum()) == 1)
            cells = (tie_split_top(scores, j, 1), tie_split_top(scores, j, 5), named, 0.0)
        got[kind_of[atom.atom_id]].append(cells)
        if kind_of[atom.atom_id] == "recording":
            by_count.setdefault(trained_on[atom.label], []).append((atom.label, cells))
        hooks.progress(name, i + 1, len(test.atoms))
    return got, by_count


def _means(cells: Sequence[Cells]) -> tuple[float, ...]:
    return tuple(round(float(x), 4) for x in np.array(cells).mean(axis=0))


def training_table(rows: Sequence[Mapping[str, Any]]
                   ) -> tuple[list[tuple[int, int]], list[tuple[str, list[Mapping[str, Any] | None]]]]:
    """The ``by_training`` rows (as ``to_json`` writes them) as a table: the columns, (training
    recordings, labels) in ascending order, and per identifier in first-seen order its row in
    each column (None where it has none). What ``bench atoms identify`` and the docs print."""
    columns = sorted({(r["train_recordings"], r["labels"]) for r in rows})
    table = []
    for name in dict.fromkeys(r["identifier"] for r in rows):
        mine = {r["train_recordings"]: r for r in rows if r["identifier"] == name}
        table.append((name, [mine.get(count) for count, _ in columns]))
    return columns, table
