"""The comparative claims the docs make, one record each: ``A`` against ``B`` on a task and metric.

``bench replicate`` (:mod:`reasonaudio.experiments.replicate`) tests each claim whose two
retrievers it evaluated on every seed's build, and ``scripts/claims_page.py`` writes the docs'
sentences from what it measured (a block between ``<!-- claims:NAME -->`` markers), so a claim
that holds on fewer seeds than were run says so. A claim *holds on a seed* when the difference
``A - B`` of the metric's means on that task has the claimed sign and its Holm-corrected p
(:func:`reasonaudio.evaluation.compare.compare`: per metric over the tasks; overall on its own)
is below :data:`reasonaudio.evaluation.significance.ALPHA`.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonaudio.errors import DataError

ABOVE, BELOW = "above", "below"
DIRECTIONS = (ABOVE, BELOW)
CLAIM_METRICS = ("acc@1", "mc_acc")
"""the metrics a claim is made on: Acc@1 and multiple choice"""
METRIC_LABELS = {"acc@1": "Acc@1", "mc_acc": "MC"}


@dataclass(frozen=True)
class Claim:
    """``A`` scores above (or below) ``B`` on ``task`` (a task, or ``overall``) by ``metric``."""

    a: str
    b: str
    task: str
    metric: str
    direction: str
    doc: str
    """the page whose reading rests on it (its block of sentences is there)"""

    @property
    def key(self) -> str:
        """``A - B on TASK (METRIC)``: how tables and the JSON name the claim."""
        return f"{self.a} - {self.b} on {self.task} ({self.metric})"

    def to_json(self) -> dict[str, str]:
        return {"a": self.a, "b": self.b, "task": self.task, "metric": self.metric,
                "direction": self.direction, "doc": self.doc}


_TASKS = ("negation", "order", "overlap", "duration", "mix")
_TRAINED, _BAG, _MINILM = "detected:yamnet-trained", "bag-of-sounds", "two-stage:oracle-caption+minilm"

CLAIMS: tuple[Claim, ...] = (
    *(Claim("oracle", _BAG, t, "acc@1", ABOVE, "docs/evaluation.md") for t in (*_TASKS, "overall")),
    Claim(_MINILM, _BAG, "overall", "mc_acc", ABOVE, "docs/evaluation.md"),
    Claim("detected:yamnet", _MINILM, "negation", "acc@1", ABOVE, "docs/detection.md"),
    Claim("detected:yamnet", _MINILM, "duration", "acc@1", ABOVE, "docs/detection.md"),
    Claim("detected:yamnet", _MINILM, "overlap", "acc@1", BELOW, "docs/detection.md"),
    Claim("detected:yamnet", _MINILM, "overall", "mc_acc", ABOVE, "docs/detection.md"),
    *(Claim(_TRAINED, base, t, "acc@1", ABOVE, "docs/trained-detector.md")
      for base in (_BAG, _MINILM) for t in (*_TASKS, "overall")),
)
"""Every comparative claim of the docs, in the order their sentences are written."""


def claims_for(retrievers: tuple[str, ...] | list[str], claims: tuple[Claim, ...] = CLAIMS) -> list[Claim]:
    """The claims both of whose retrievers are among ``retrievers``."""
    have = set(retrievers)
    return [c for c in claims if c.a in have and c.b in have]


def check_claims(claims: tuple[Claim, ...] = CLAIMS) -> None:
    """Each record names a known direction and metric and two different retrievers, once."""
    seen: set[str] = set()
    for c in claims:
        if c.direction not in DIRECTIONS or c.metric not in CLAIM_METRICS or c.a == c.b:
            raise DataError(f"claim {c.key!r}: direction must be one of {', '.join(DIRECTIONS)}, "
                            f"metric one of {', '.join(CLAIM_METRICS)}, and A other than B")
        if c.key in seen:
            raise DataError(f"claim {c.key!r}: listed twice")
        seen.add(c.key)
