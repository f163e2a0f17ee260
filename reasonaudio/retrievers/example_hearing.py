"""A perceiver's hearing of an example as a label the parser can read, or a refusal.

:mod:`reasonaudio.detect.perceive_examples` says which bank label the tagger (or a trained
detector) hears best in an example and the runners-up. That label names the example only when it
stands alone: nothing heard (no label's track rises above the perceiver's floor) and a tie
between the top labels (it cannot tell which sound it is: what a near-silent recording gives the
tagger, every label at one small score, or labels sharing one AudioSet class) are refusals, so
the query holding the example is refused instead of searching for the first label of a tie. The
label keeps the perceiver's score for display (``resolved`` in ``--json``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonaudio.querylang.examples import ExampleLabel

if TYPE_CHECKING:
    from reasonaudio.detect.perceive_examples import Heard

REFUSED = "(refused)"
"""what a perceiving reader records as an example's label (``describe.heard``) when it refused it"""
TIE = 1e-4
"""Top scores closer than this are a tie (the perceiver rounds scores to 4 decimals)."""


def heard_label(heard: Heard) -> ExampleLabel:
    """The example's label from a perceiver's ``Heard``, or an ``ExampleLabel`` with a refusal."""
    who = heard.who
    if heard.label is None:
        return ExampleLabel("", who, 0.0, refusal=f"the {who} hears no sound of the bank in "
                                                  "this recording")
    tied = [lab for lab, score in heard.top if abs(float(score) - float(heard.score)) <= TIE]
    if len(tied) > 1:
        return ExampleLabel(heard.label, who, heard.score, refusal=(
            f"the {who} hears {len(tied)} labels equally ({', '.join(repr(x) for x in tied)}, "
            f"score {heard.score:.4f}), so it cannot tell which sound this recording is"))
    return ExampleLabel(heard.label, who, heard.score)
