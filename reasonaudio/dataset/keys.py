"""What one result answers, as a typed key: ``ResultKey(name, condition, view)``.

A result is identified by three fields, never by a name grammar: the retriever's (or run file's)
``name``, the acoustic ``condition`` its audio was rendered under (``clean``, ``snr5``, ``long``),
and the ``view``, the texts of the queries it answered (a formulation such as ``caption`` or
``question``, or ``interleaved``). Every command that evaluates, compares or reports addresses
results by key. The three are the fields of a :class:`~reasonaudio.dataset.view.BenchmarkView`,
whose ``key(name)`` is the key of ``name``'s result on it.

Two strings are derived from a key, for files and for people, and nothing reads either back:

- :attr:`ResultKey.stored_name`: the name the results layout stores a result under (its file stem
  and its TREC run tag): ``NAME`` for the caption view, ``NAME@VIEW`` otherwise; the condition is
  the folder (``results/conditions/NAME/``). Files written before keys keep their names.
- :meth:`ResultKey.label`: how tables show it, ``oracle``, ``oracle @ snr5``,
  ``oracle · question``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reasonaudio.dataset.conditions import CLEAN
from reasonaudio.errors import DataError
from reasonaudio.tasks.base import CAPTION

VIEW_TAG = "@"
"""joins name and view in :attr:`ResultKey.stored_name` (written, never parsed)"""


@dataclass(frozen=True, order=True)
class ResultKey:
    """One result's address: retriever ``name`` x ``condition`` x ``view``."""

    name: str
    condition: str = CLEAN
    view: str = CAPTION

    def __post_init__(self) -> None:
        for field_name in ("name", "condition", "view"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value:
                raise DataError(f"result key: {field_name} must be a non-empty string, got {value!r}")

    @property
    def stored_name(self) -> str:
        """The file stem and run tag of the results layout (see the module docstring)."""
        return self.name if self.view == CAPTION else f"{self.name}{VIEW_TAG}{self.view}"

    def label(self) -> str:
        """``NAME``, ``NAME @ CONDITION``, ``NAME · VIEW`` or both: for tables, never parsed."""
        out = self.name
        if self.condition != CLEAN:
            out += f" @ {self.condition}"
        if self.view != CAPTION:
            out += f" · {self.view}"
        return out

    def with_(self, **changes: str) -> "ResultKey":
        return replace(self, **changes)

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "condition": self.condition, "view": self.view}

    @classmethod
    def from_json(cls, obj: object, where: str = "result key") -> "ResultKey":
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            raise DataError(f"{where}: expected {{name, condition, view}}")
        return cls(obj["name"], str(obj.get("condition", CLEAN)), str(obj.get("view", CAPTION)))


def legacy_key(stored: str, view: str, condition: str, where: str) -> ResultKey:
    """The key of a results file written before keys (no ``retriever`` field): its stored name is
    ``NAME`` or ``NAME@VIEW`` for the view the file records, so the name is what precedes that
    exact suffix. A file whose stored name does not end so is refused (never guessed)."""
    if view == CAPTION:
        return ResultKey(stored, condition, view)
    suffix = f"{VIEW_TAG}{view}"
    if not stored.endswith(suffix) or len(stored) == len(suffix):
        raise DataError(f"{where}: results file of view {view!r} named {stored!r}; evaluate it "
                        "again with this version (bench eval) to rewrite it")
    return ResultKey(stored[: -len(suffix)], condition, view)
