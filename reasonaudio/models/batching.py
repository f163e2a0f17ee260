"""Fixed-shape batching: every model call sees exactly ``size`` units of one shape.

Why: a CPU forward pass gives bit-identical rows for a fixed input shape whatever the other rows
hold, but a different batch size (or padding length) changes the kernels and the last bits. An
ingest that resumes after ``kill -9`` batches different clips together than an uninterrupted
run; feeding the model fixed-shape batches (the last one padded) makes every clip's vector
independent of its neighbours, so resumed and uninterrupted runs store identical vectors.

Items (clips, captions) are split into units (windows, patches, texts); units are grouped by a
shape key (texts by padded length), run in full batches, and an item is done when all its units
are. Results come back in the order items finish, with the item's key.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator, Sequence

import numpy as np


class FixedBatcher:
    def __init__(self, run: Callable[[list[Any]], np.ndarray], size: int,
                 pad: Callable[[Hashable], Any], shape_key: Callable[[Any], Hashable] = lambda u: None) -> None:
        if size < 1:
            raise ValueError(f"batch size must be >= 1, got {size}")
        self._run, self.size, self._pad, self._shape_key = run, size, pad, shape_key
        self._queues: dict[Hashable, list[tuple[int, int, Any]]] = {}
        self._items: OrderedDict[int, tuple[Any, list[np.ndarray | None]]] = OrderedDict()
        self._next = 0
        self.calls = 0
        self.padded_units = 0

    def add(self, key: Hashable, units: Sequence[Any]) -> list[tuple[Hashable, np.ndarray]]:
        """Queue one item's units; returns the items that became complete."""
        if not units:
            raise ValueError(f"item {key!r} has no units")
        slot = self._next
        self._next += 1
        self._items[slot] = (key, [None] * len(units))
        done: list[tuple[Any, np.ndarray]] = []
        for i, unit in enumerate(units):
            group = self._shape_key(unit)
            queue = self._queues.setdefault(group, [])
            queue.append((slot, i, unit))
            if len(queue) >= self.size:
                self._queues[group] = []
                done += self._execute(group, queue)
        return done

    def flush(self) -> list[tuple[Any, np.ndarray]]:
        """Run every partial batch (padded to full size); returns the rest of the items."""
        done: list[tuple[Any, np.ndarray]] = []
        for group in list(self._queues):
            queue = self._queues.pop(group)
            if queue:
                done += self._execute(group, queue)
        if self._items:  # pragma: no cover - every queued unit ran above
            raise RuntimeError(f"{len(self._items)} items left incomplete after flush")
        return done

    def _execute(self, group: Hashable, queue: list[tuple[int, int, Any]]) -> list[tuple[Any, np.ndarray]]:
        units = [u for _, _, u in queue]
        missing = self.size - len(units)
        if missing > 0:
            units += [self._pad(group)] * missing
            self.padded_units += missing
        rows = np.asarray(self._run(units))
        self.calls += 1
        if len(rows) != self.size:
            raise RuntimeError(f"model returned {len(rows)} rows for a batch of {self.size}")
        touched = []
        for (slot, i, _), row in zip(queue, rows):
            self._items[slot][1][i] = row
            touched.append(slot)
        done = []
        for slot in sorted(set(touched)):
            key, parts = self._items[slot]
            if all(p is not None for p in parts):
                del self._items[slot]
                done.append((key, np.stack(parts)))  # type: ignore[arg-type]
        return done


def run_all(run: Callable[[list[Any]], np.ndarray], size: int, pad: Callable[[Hashable], Any],
            unit_lists: Sequence[Sequence[Any]], shape_key: Callable[[Any], Hashable] = lambda u: None
            ) -> list[np.ndarray]:
    """Rows per item, in item order, through fixed-shape batches."""
    batcher = FixedBatcher(run, size, pad, shape_key)
    out: dict[int, np.ndarray] = {}
    for i, units in enumerate(unit_lists):
        out.update(batcher.add(i, units))
    out.update(batcher.flush())
    return [out[i] for i in range(len(unit_lists))]


def iter_done(batcher: FixedBatcher, items: Iterator[tuple[Any, Sequence[Any]]]) -> Iterator[tuple[Any, np.ndarray]]:
    """Stream (key, rows) as items complete, flushing at the end."""
    for key, units in items:
        yield from batcher.add(key, units)
    yield from batcher.flush()
