"""Training-only paraphrases, for ``--hold-out-templates``.

With the flag on, training captions are rendered only with these wordings, never with the
benchmark's templates (:mod:`reasonaudio.constraints.templates`), so every benchmark query is a
paraphrase the model has not seen: what it scores then measures whether it learned the
constraint, not the sentence. Same placeholders as the benchmark's templates. A test checks
that none of these equals a benchmark template.
"""

from __future__ import annotations

from reasonaudio.constraints.templates import Template

_TEXTS: dict[str, tuple[str, ...]] = {
    "negation": ("{A} plus {B}, with no sign of {C}",
                 "you hear {A} and {B} but never {C}",
                 "{A} and {B} present, {C} absent"),
    "order": ("{A} and after that {B}",
              "{A} comes before {B}",
              "{A} first, {B} afterwards"),
    "overlap": ("{A} together with {B}",
                "{A} playing over {B}",
                "{A} and {B} sounding at once"),
    "duration": ("{A} going on for {N} {secs}",
                 "roughly {N} {secs} of {A}",
                 "{A} heard for about {Nw} {secs}"),
    "m1": ("{A} going on for {N} {secs}, and after that {B}",
           "roughly {N} {secs} of {A}, then later {B}"),
    "m2": ("{A} and after that {B}, with no sign of {C}",
           "{A} comes before {B}; {C} is absent"),
    "m3": ("{A} going on for {N} {secs} together with {B}",
           "roughly {N} {secs} of {A}, playing over {B}"),
    "m4": ("{A} first, afterwards {B} together with {C}",
           "{A} comes before {B} and {C}, which sound at once"),
    "m5": ("{A} going on for {N} {secs}, after that {B}, then {C} together with {D}",
           "roughly {N} {secs} of {A}, then {B}, then {C} and {D} sounding at once"),
}

PARAPHRASES: dict[str, list[Template]] = {
    shape: [Template(f"train-{shape}-{i}", shape, text) for i, text in enumerate(texts, 1)]
    for shape, texts in _TEXTS.items()
}
"""shape -> the training-only templates (ids ``train-<shape>-<n>``)."""
