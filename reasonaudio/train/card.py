"""The model directory: ``config.json`` + ``model.safetensors`` + ``card.json`` / ``README.md``
(the model card) + ``loss_curve.png``.

``config.json`` holds everything needed to rebuild the network and its inputs (architecture,
YAMNet revision and dequantisation constants, MiniLM revision and token settings);
``model.safetensors`` the weights (deterministic bytes: same seed, same file). The card records
where the weights came from: the training build's path and manifest sha256, seed, the whole
recipe, validation figures per epoch, held-out labels and templates, timings and versions.
Written atomically: an interrupted save leaves nothing that looks like a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonaudio.dataset.view import BenchmarkView
import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.extras import require
from reasonaudio.fileio import atomic_dir, read_json, sha256_file, write_json
from reasonaudio.output_dirs import ENCODER_OUTPUT
from reasonaudio.models import yamnet
from reasonaudio.models.base import loading_weights
from reasonaudio.provenance import float_kernels, float_kernels_text, versions
from reasonaudio.train.data import TrainingData
from reasonaudio.train.features import MAX_FRAMES, MAX_TOKENS, TokenSpec
from reasonaudio.train.model import DualEncoder, ModelConfig

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
CARD = ENCODER_OUTPUT.marker
README = "README.md"
CURVE = "loss_curve.png"
FORMAT = ENCODER_OUTPUT.format
FORMAT_VERSION = 1
MODEL_OUTPUT = ENCODER_OUTPUT


def save_model_dir(out: Path, model: DualEncoder, options: Any, bench: BenchmarkView, data: TrainingData, result: Any,
                   feats: Any, overwrite: bool = False, condition: dict[str, Any] | None = None) -> None:
    """``condition``: the acoustic condition the training audio was heard under (None: clean,
    and nothing is added, so a clean model's files are as before)."""
    from safetensors.torch import save

    config = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "model": model.cfg.to_json(),
        "audio_features": {"model": "yamnet", "revision": yamnet.REVISION,
                           "input": "per-frame AudioSet logits (dequantised uint8 outputs)",
                           "scale": feats.scale, "zero_point": feats.zero_point,
                           "hop_seconds": yamnet.HOP_SECONDS, "max_frames": MAX_FRAMES},
        "text_features": {"model": "minilm", "output": "token_embeddings",
                          "dtype": TokenSpec().dtype, "bucket": TokenSpec().bucket,
                          "max_tokens": MAX_TOKENS},
    }
    if condition is not None:
        config["training_condition"] = condition
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    with atomic_dir(out, MODEL_OUTPUT, overwrite, [bench.root]) as tmp:
        write_json(tmp / CONFIG, config)
        # serialised here and written by Python (the same bytes save_file writes), so a full disk
        # is an OSError that atomic_dir turns into one line, not a SafetensorError
        (tmp / WEIGHTS).write_bytes(save(state, metadata={"format": FORMAT}))
        digest = sha256_file(tmp / WEIGHTS)
        result.weights_sha256 = digest
        card = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "weights_sha256": digest,
            "training_build": {"path": str(Path(bench.root).resolve()),
                               "manifest_sha256": sha256_file(Path(bench.root) / "manifest.json"),
                               "seed": bench.seed,
                               "counts": bench.manifest.get("counts", {}),
                               "bank": bench.manifest.get("bank", {})},
            "seed": options.seed,
            "recipe": options.to_json(),
            "architecture": model.cfg.to_json(),
            "data": {**result.data_stats, "held_out_labels": list(data.held_out_labels),
                     "templates": data.template_set},
            "perception": result.perception,
            "validation": result.history,
            "best_epoch": result.best_epoch,
            "epochs_run": result.epochs_run,
            "steps": result.steps,
            "timings_s": {k: round(v, 1) for k, v in result.timings.items()},
            "threads": options.threads,
            "float_kernels": float_kernels(),
            "versions": versions(),
        }
        if condition is not None:
            card["training_build"]["condition"] = condition
        result.card = card
        write_json(tmp / CARD, card)
        (tmp / README).write_text(model_card_text(card), encoding="utf-8")
        plot_curve(tmp / CURVE, result)


def perception_text(card: dict[str, Any]) -> str:
    """The card's perception stage in words (the model card and the train summary say it alike)."""
    perc = card.get("perception", {})
    if not perc.get("epochs"):
        return "off"
    return (f"{perc['epochs']} epochs over {perc.get('frames', 0):,} frames, validation frame F1 "
            f"{perc.get('val_frame_f1', 0):.3f}")


def event_figures_text(card: dict[str, Any]) -> str:
    arch = card.get("architecture", {})
    return f"{arch.get('n_sounds')} sounds" if arch.get("event_slots") else "off"


def model_card_text(card: dict[str, Any]) -> str:
    recipe = card["recipe"]
    best = next((r for r in card["validation"] if r["epoch"] == card["best_epoch"]), {})
    lines = [
        "# Trained dual encoder (reasonaudio `bench train`)", "",
        f"- weights sha256: `{card['weights_sha256']}`",
        f"- training build: seed {card['training_build']['seed']}, manifest sha256 "
        f"`{card['training_build']['manifest_sha256']}`, "
        f"{card['training_build']['counts'].get('clips', '?')} clips"
        + (f", heard under condition `{card['training_build']['condition']['condition']['name']}`"
           if card["training_build"].get("condition") else ""),
        f"- seed {card['seed']}, {card['threads']} CPU threads, device {recipe['device']}",
        f"- {float_kernels_text(card)}",
        f"- hard negatives: {'yes' if recipe['hard_negatives'] else 'no'} "
        f"(weight {recipe['hard_weight']})",
        f"- templates: {card['data']['templates']}; held-out labels: "
        f"{', '.join(card['data']['held_out_labels']) or 'none'}",
        f"- examples: {card['data']['examples']}",
        f"- perception stage: {perception_text(card)}",
        f"- presence loss weight: {recipe.get('presence_weight', 0)}",
        f"- event figures (peak, together, centre, extent per sound): {event_figures_text(card)}",
        f"- epochs run {card['epochs_run']}, best epoch {card['best_epoch']}, steps {card['steps']}",
        "- validation at the best epoch: " + ", ".join(
            f"{k[4:]} {v:.3f}" for k, v in best.items() if k.startswith("val_")),
        f"- timings (s): {card['timings_s']}", "",
        "| epoch | train loss | train acc | val acc@1 | val mc clip | val mc text |",
        "|---|---|---|---|---|---|",
    ]
    for r in card["validation"]:
        lines.append(f"| {r['epoch']} | {r['train_loss']:.4f} | {r['train_acc']:.3f} | "
                     f"{r['val_acc@1']:.3f} | {r['val_mc_clip']:.3f} | {r['val_mc_text']:.3f} |")
    lines += ["", "Load with `bench ingest --model trained --model-path THIS_DIR`; search with "
              "`--retriever trained --model-path THIS_DIR`.", ""]
    return "\n".join(lines)


def plot_curve(path: Path, result: Any) -> None:
    matplotlib = require("matplotlib", "the training curve's PNG")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    losses = np.asarray(result.step_losses, dtype=float)
    if len(losses):
        ax1.plot(np.arange(1, len(losses) + 1), losses, lw=0.6, alpha=0.5, label="step")
        w = max(1, len(losses) // 30)
        smooth = np.convolve(losses, np.ones(w) / w, mode="valid")
        ax1.plot(np.arange(w, len(losses) + 1), smooth, lw=1.5, label=f"mean of {w}")
    ax1.set_xlabel("step")
    ax1.set_ylabel("training loss")
    ax1.legend()
    epochs = [r["epoch"] for r in result.history]
    for key in ("val_acc@1", "val_mc_clip", "val_mc_text"):
        ax2.plot(epochs, [r[key] for r in result.history], marker="o", label=key[4:])
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("validation")
    ax2.set_ylim(0, 1)
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def load_model_dir(path: Path | str, device: str = "cpu") -> tuple[Any, dict[str, Any], str]:
    """(DualEncoder in eval mode, config, weights sha256) from a model directory."""
    from safetensors.torch import load_file

    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ModelError(f"model 'trained': --model-path {folder} is not a folder "
                         "(make one with `bench train --out DIR`)")
    for name in (CONFIG, WEIGHTS):
        if not (folder / name).is_file():
            raise ModelError(f"model 'trained': {folder / name} not found; not a `bench train` "
                             "model directory")
    config = read_json(folder / CONFIG)
    if config.get("format") != FORMAT:
        raise ModelError(f"{folder / CONFIG}: field 'format' must be {FORMAT!r}, "
                         f"got {config.get('format')!r}")
    model = DualEncoder(ModelConfig.from_json(config.get("model", {})))
    with loading_weights(f"{folder / WEIGHTS}: cannot load weights"):
        state = load_file(str(folder / WEIGHTS))
        model.load_state_dict(state)
    model.eval()
    return model.to(device), config, sha256_file(folder / WEIGHTS)
