"""What every registry of named records shares (task shapes, condition kinds, formulations): a
live, read-only view of its names, and registration for the duration of a ``with`` block (a test
registers a record of its own and takes it out again)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence


class LiveNames(Sequence[str]):
    """The names ``names()`` gives, read on every access (so a record registered later is in it);
    equal to a tuple of the same names."""

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:
        self._names = names

    def __getitem__(self, i):  # type: ignore[override]
        return tuple(self._names())[i]

    def __len__(self) -> int:
        return len(tuple(self._names()))

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, (tuple, LiveNames)) else other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


@contextmanager
def registered_for(register: Callable[[Any], None], unregister: Callable[[str], None],
                   records: Sequence[Any]) -> Iterator[None]:
    """``records`` registered with ``register`` inside the block, each taken out again with
    ``unregister`` (latest first), also when the block raises or a later registration fails."""
    done: list[str] = []
    try:
        for r in records:
            register(r)
            done.append(r.name)
        yield
    finally:
        for name in reversed(done):
            unregister(name)
