"""The tagger's hearing of an example as a label the parser can read, or a refusal.

:mod:`reasonaudio.detect.perceive_examples` says which bank label the tagger hears best in an
example and the runners-up. That label names the example only when it stands alone: nothing
heard (no label's track rises above zero) and a tie between the top labels (the tagger cannot
tell which sound it is: what a near-silent recording gives, every label at one small score)
are refusals, so the query holding the example is refused instead of searching for the first
label of a tie. The label keeps the tagger's score for display (``resolved`` in ``--json``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonaudio.querylang.examples import ExampleLabel

if TYPE_CHECKING:
    from reasonaudio.detect.perceive_examples import Heard

TAGGER = "tagger"
"""``ExampleLabel.how`` for a label the tagger chose"""
TIE = 1e-4
"""Top scores closer than this are a tie (the perceiver rounds scores to 4 decimals)."""


def heard_label(heard: Heard) -> ExampleLabel:
    """The example's label from the tagger's ``Heard``, or an ``ExampleLabel`` with a refusal."""
    if heard.label is None:
        return ExampleLabel("", TAGGER, 0.0, refusal="the tagger hears no sound of the bank in "
                                                     "this recording")
    tied = [lab for lab, score in heard.top if abs(float(score) - float(heard.score)) <= TIE]
    if len(tied) > 1:
        return ExampleLabel(heard.label, TAGGER, heard.score, refusal=(
            f"the tagger hears {len(tied)} labels equally ({', '.join(repr(x) for x in tied)}, "
            f"score {heard.score:.4f}), so it cannot tell which sound this recording is"))
    return ExampleLabel(heard.label, TAGGER, heard.score)
