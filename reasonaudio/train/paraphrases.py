"""Training-only paraphrases, for ``--hold-out-templates``.

With the flag on, training captions are rendered only with these wordings, never with the
benchmark's templates (:mod:`reasonaudio.generator.templates`), so every benchmark query is a
paraphrase the model has not seen: what it scores then measures whether it learned the
constraint, not the sentence. The wordings live in each task record
(:attr:`reasonaudio.tasks.base.Shape.paraphrases`); same placeholders as the benchmark's
templates. A test checks that none of these equals a benchmark template.
"""

from __future__ import annotations

from reasonaudio.tasks.registry import SHAPE_PARAPHRASES

PARAPHRASES = SHAPE_PARAPHRASES
"""shape -> the training-only templates (ids ``train-<shape>-<n>``), read from the registry."""
