"""`bench train` and `bench train-detector`: models trained on training builds."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from reasonaudio.commands.app import (
    ConditionOpt,
    Count,
    DeviceOpt,
    NonNegative,
    Number,
    Positive,
    Seed,
    Threads,
    app,
    console,
    out_dir,
)
from reasonaudio.output_dirs import DETECTOR_OUTPUT, ENCODER_OUTPUT


@app.command("train")
def train_cmd(
    data: Path = typer.Option(..., "--data", "-d",
                              help="Training build (`bench build` with another seed than the "
                              "benchmark you will evaluate on)."),
    out: Path = typer.Option(..., "--out", "-o", callback=out_dir(ENCODER_OUTPUT),
                             help="Model directory to write (atomically)."),
    hard_negatives: bool = typer.Option(True, "--hard-negatives/--no-hard-negatives",
                                        help="Add the planted hard-negative clips and captions "
                                        "to the contrastive softmax."),
    epochs: int = typer.Option(4, "--epochs", callback=Count,
                               help="Most epochs (early stopping may end sooner)."),
    seed: int = typer.Option(0, "--seed", callback=Seed,
                             help="Seed for data, initialisation, batches, dropout."),
    device: str = DeviceOpt,
    batch_size: int = typer.Option(128, "--batch-size", callback=Number(2), help="Captions per step."),
    hold_out_labels: int = typer.Option(0, "--hold-out-labels", callback=NonNegative,
                                        help="Sounds no training caption mentions (drawn with the seed)."),
    hold_out_templates: bool = typer.Option(False, "--hold-out-templates",
                                            help="Train only on training paraphrases, never on "
                                            "the benchmark's query templates."),
    hold_out_formulations: Optional[str] = typer.Option(
        None, "--hold-out-formulations", help="Also train on the query formulations (question, "
        "command, keywords, paraphrase, exclusion) except these, comma-separated, e.g. "
        "'keywords,paraphrase' (default: caption only)."),
    captions_per_clip: int = typer.Option(6, "--captions-per-clip", callback=NonNegative,
                                          help="Captions drawn from each clip's true events."),
    templates_per_query: int = typer.Option(2, "--templates-per-query", callback=NonNegative,
                                            help="Renderings of each planted query."),
    perception_epochs: int = typer.Option(8, "--perception-epochs", callback=NonNegative,
                                          help="Epochs of the perception stage that first fits "
                                          "the audio side's frame layer as a frame tagger (0: none)."),
    presence_weight: float = typer.Option(0.3, "--presence-weight", callback=NonNegative,
                                          help="Weight of the presence loss (clip vector x each "
                                          "sound's name) beside the caption loss (0: off)."),
    event_slots: bool = typer.Option(True, "--event-slots/--no-event-slots",
                                     help="Add each taught sound's peak, overlap, time centre and "
                                     "extent (from the perception stage's tagger) to the clip vector."),
    threads: int = typer.Option(2, "--threads", callback=Threads,
                                help="CPU threads (fixed: part of what makes reruns bit-identical)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", callback=Count, help="Stop after N steps."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it is an earlier trained "
                               "model or empty (anything else is refused)."),
    condition: str = ConditionOpt,
) -> None:
    """Train a dual encoder on a training build's planted minimal pairs (docs/training.md)."""
    from reasonaudio.extras import require

    require("torch", "bench train")
    from reasonaudio.train.data import DataOptions, check_hold_out_formulations
    from reasonaudio.train.model import ModelConfig
    from reasonaudio.train.perception_stage import PerceptionOptions
    from reasonaudio.train.trainer import TrainOptions, train_model
    from reasonaudio.views.train import print_train_summary, train_progress

    held_forms = None if hold_out_formulations is None else check_hold_out_formulations(
        [n.strip() for n in hold_out_formulations.split(",") if n.strip()])
    options = TrainOptions(data=DataOptions(captions_per_clip=captions_per_clip,
                                            templates_per_query=templates_per_query,
                                            hold_out_labels=hold_out_labels,
                                            hold_out_templates=hold_out_templates,
                                            hold_out_formulations=held_forms, seed=seed),
                           model=ModelConfig(event_slots=event_slots),
                           epochs=epochs, batch_size=batch_size, hard_negatives=hard_negatives,
                           perception=PerceptionOptions(epochs=perception_epochs),
                           presence_weight=presence_weight,
                           seed=seed, threads=threads, device=device, max_steps=max_steps)
    with train_progress(console) as hooks:
        result = train_model(data, out, options, hooks=hooks, overwrite=force, condition=condition)
    print_train_summary(console, result)


@app.command("train-detector")
def train_detector_cmd(
    data: list[Path] = typer.Option(..., "--data", "-d",
                                    help="Training build (repeat for several: --data A --data B); "
                                    "seeds other than the benchmark you will detect on and its "
                                    "calibration build's."),
    out: Path = typer.Option(..., "--out", "-o", callback=out_dir(DETECTOR_OUTPUT),
                             help="Model directory to write (atomically)."),
    seed: int = typer.Option(0, "--seed", callback=Seed, help="Seed for initialisation, batches and the "
                             "validation split."),
    epochs: int = typer.Option(16, "--epochs", callback=Count, help="Passes over the training clips."),
    batch_clips: int = typer.Option(16, "--batch-clips", callback=Count, help="Clips per step."),
    lr: float = typer.Option(3e-3, "--lr", callback=Positive,
                             help="Peak learning rate (AdamW, cosine decay)."),
    hidden: int = typer.Option(128, "--hidden", callback=Count,
                               help="Channels of the temporal convolutions."),
    overlap_weight: float = typer.Option(5.0, "--overlap-weight", callback=Positive,
                                         help="Loss weight of a label's frames where another "
                                         "label is active too (sounds heard under others)."),
    gain_db: float = typer.Option(0.0, "--gain-db", callback=NonNegative, help="Augmentation: "
                                  "a random gain within +-this many dB on each training clip's "
                                  "mel track (0: off)."),
    band_shift: int = typer.Option(0, "--band-shift", callback=NonNegative,
                                   help="Augmentation: shift each training clip's mel bands by up "
                                   "to this many bands either way, a pitch change (0: off)."),
    mel_dropout: float = typer.Option(0.0, "--mel-dropout", callback=Number(0, 1),
                                      help="Augmentation: share of training clips whose mel track "
                                      "is blanked each step (0: off)."),
    yamnet_dropout: float = typer.Option(0.0, "--yamnet-dropout", callback=Number(0, 1, open_high=True),
                                         help="Augmentation: share of YAMNet classes zeroed per "
                                         "training clip and step (0: off)."),
    prior_top_k: int = typer.Option(0, "--prior-top-k", callback=Number(0, 3),
                                    help="Zero-shot prior: add a learned weight times the top YAMNet "
                                    "logit of each label's this many zero-shot AudioSet classes, "
                                    "for recordings never trained on (0: off)."),
    pooled_dim: int = typer.Option(0, "--pooled-dim", callback=NonNegative,
                                   help="Also read YAMNet's 1,024-d pooled layer through a branch "
                                   "this wide, for recordings never trained on (0: off)."),
    val_share: float = typer.Option(0.05, "--val-share", callback=Number(0, 0.5, open_high=True),
                                    help="Share of the clips held out for "
                                    "the validation figures."),
    threads: int = typer.Option(2, "--threads", callback=Threads,
                                help="CPU threads (fixed: part of what makes reruns bit-identical)."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it is an earlier trained "
                               "detector or empty (anything else is refused)."),
) -> None:
    """Train a frame detector on training builds' strong labels (docs/trained-detector.md)."""
    from reasonaudio.extras import require

    require("torch", "bench train-detector")
    from reasonaudio.train.detector import DetectorRecipe, train_detector
    from reasonaudio.views.detector import print_detector_summary
    from reasonaudio.views.progress import progress_hooks

    recipe = DetectorRecipe(epochs=epochs, batch_clips=batch_clips, lr=lr, hidden=hidden,
                            overlap_weight=overlap_weight, val_share=val_share, seed=seed,
                            threads=threads, gain_db=gain_db, band_shift=band_shift,
                            mel_dropout=mel_dropout, yamnet_dropout=yamnet_dropout,
                            prior_top_k=prior_top_k, pooled_dim=pooled_dim)
    with progress_hooks(console, unit="clips") as hooks:
        result = train_detector(data, out, recipe, hooks=hooks, overwrite=force)
    print_detector_summary(console, result)


