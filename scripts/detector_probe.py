"""Where a trained detector loses what it hears: its tracks probed on builds, no calibration.

    python scripts/detector_probe.py --model MODEL_DIR [--model ...] --data BUILD [--data ...]

For each model and build (inputs from the caches ``bench detect`` and ``bench train-detector``
fill): the clip-level tagging average precision (a label's score is its track's peak in the
clip; micro over clip x label, and macro over the labels present), the frame F1 at 0.5, and the
share of true events whose track peaks above 0.5 inside the event, apart for events heard alone,
the louder of overlapping events and the quieter (lower gain) of them: a loss that is the same
for all three is perception of the recordings, one that falls on the quieter is masking. The
torch network is run in float32 (a probe, not the exact detector). ``--zero-shot`` also scores
the tagger alone on the model's prior classes (models trained with ``--prior-top-k``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def average_precision(truth: np.ndarray, score: np.ndarray) -> float:
    order = np.argsort(-score, kind="stable")
    hits = truth[order]
    tp = np.cumsum(hits)
    return float((tp / np.arange(1, len(hits) + 1))[hits > 0].sum() / max(1, hits.sum()))


def tagging_ap(truth: np.ndarray, score: np.ndarray) -> tuple[float, float]:
    keep = truth.sum(axis=0) > 0
    micro = average_precision(truth[:, keep].ravel(), score[:, keep].ravel())
    macro = float(np.mean([average_precision(truth[:, j], score[:, j]) for j in np.where(keep)[0]]))
    return micro, macro


def event_kind(event, events) -> str:
    others = [o for o in events if o is not event and o.label != event.label
              and o.onset < event.offset and event.onset < o.offset]
    if not others:
        return "alone"
    return "quieter" if all(event.gain_db < o.gain_db for o in others) else "louder"


def probe(model_dir: Path, samples, zero_shot: bool) -> str:
    import torch
    from safetensors.torch import load_file

    from reasonaudio.detect.detector_features import HOP_MS
    from reasonaudio.detect.detector_model import torch_module, yamnet_logits
    from reasonaudio.detect.trained import load_detector
    from reasonaudio.train.detector import batch_tensors, frame_f1

    cfg = load_detector(model_dir).config
    model = torch_module(cfg)
    model.load_state_dict(load_file(str(model_dir / "model.safetensors")))
    model.eval()
    index = {lab: j for j, lab in enumerate(cfg.labels)}
    truth, score, prior = [], [], []
    peaks: dict[str, list[float]] = {"alone": [], "louder": [], "quieter": []}
    with torch.no_grad():
        for k in range(0, len(samples), 16):
            part = samples[k:k + 16]
            probs = torch.sigmoid(model(*batch_tensors(part, cfg, index)[:5])).numpy()
            for i, s in enumerate(part):
                p = probs[i, :len(s.inputs.mel)]
                events = [e for e in s.clip.events if e.label in index]
                row = np.zeros(len(index))
                for e in events:
                    row[index[e.label]] = 1
                    f0 = round(e.onset * 1000) // HOP_MS
                    f1 = max(f0 + 1, round(e.offset * 1000) // HOP_MS)
                    peaks[event_kind(e, events)].append(float(p[f0:f1, index[e.label]].max()))
                truth.append(row)
                score.append(p.max(axis=0))
                if zero_shot and cfg.prior_classes:
                    logits = yamnet_logits(s.inputs.rows, cfg)
                    prior.append([logits[:, list(c)].max() for c in cfg.prior_classes])
    micro, macro = tagging_ap(np.array(truth), np.array(score))
    line = (f"tagging AP micro {micro:.3f} macro {macro:.3f}, frame F1 "
            f"{frame_f1(model, samples, cfg, index, 16):.3f}; events peaking above 0.5: "
            + ", ".join(f"{k} {np.mean(np.array(v) > 0.5):.3f} (n {len(v)})" for k, v in peaks.items() if v))
    if prior:
        zm, zM = tagging_ap(np.array(truth), np.array(prior))
        line += f"; the tagger alone on the prior classes: tagging AP micro {zm:.3f} macro {zM:.3f}"
    return line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, action="append", required=True)
    ap.add_argument("--data", type=Path, action="append", required=True)
    ap.add_argument("--zero-shot", action="store_true")
    args = ap.parse_args(argv)
    from reasonaudio.errors import DataError, ModelError
    from reasonaudio.progress import SILENT
    from reasonaudio.train.detector import load_builds, read_samples

    try:
        data = {d: read_samples(load_builds([d]), SILENT) for d in args.data}
        for m in args.model:
            for d, samples in data.items():
                print(f"{m.name} on {d.name}: {probe(m, samples, args.zero_shot)}", flush=True)
    except (DataError, ModelError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
