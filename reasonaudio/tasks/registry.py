"""The registry of task shapes: the one place that lists them.

``TASKS`` (the data model's task names), the planter, the template table, the parser's template
words and the training data all read these records. Order matters and is part of every build's
random stream: tasks share out a build's queries in this order, and a mix query draws its shape
with ``rng.choice`` over the mix shapes in this order.

Opt-in tasks (:data:`OPT_IN`: Count) are in a build only when asked for (``bench build
--tasks``). They are found by name and by logic (:func:`shape`, :func:`shapes_of`,
:func:`recognise`, the views' ``[name]``), but :func:`shapes`, ``TASKS`` and the views'
iteration list the default build's tasks, so everything that enumerates tasks for a default
build reads what it always did; :func:`all_shapes` and ``ALL_TASKS`` list everything.

:func:`register` adds a shape to an existing task at run time (tests use
:func:`registered`); a new task is a new module listed in :data:`BUILT_IN`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Callable, Iterator, TypeVar

from reasonaudio.logic import Node, describe
from reasonaudio.registries import LiveNames, registered_for
from reasonaudio.tasks.base import Shape, Slots, Template
from reasonaudio.tasks.count import SHAPES as COUNT
from reasonaudio.tasks.duration import DURATION
from reasonaudio.tasks.mix import SHAPES as MIX
from reasonaudio.tasks.negation import NEGATION
from reasonaudio.tasks.order import ORDER
from reasonaudio.tasks.overlap import OVERLAP

BUILT_IN: tuple[Shape, ...] = (NEGATION, ORDER, OVERLAP, DURATION, *MIX)
"""The shapes of a default build."""
OPT_IN: tuple[Shape, ...] = COUNT
"""The shapes of the tasks a build holds only when asked for (``bench build --tasks``): they
need clips a default build never has (a sound occurring more than once)."""

TASKS: tuple[str, ...] = tuple(dict.fromkeys(s.task for s in BUILT_IN))
"""The tasks of a default build, in the order builds share out queries."""
OPT_IN_TASKS: tuple[str, ...] = tuple(dict.fromkeys(s.task for s in OPT_IN))
ALL_TASKS: tuple[str, ...] = TASKS + OPT_IN_TASKS
"""Every task name, in the order builds share out queries (a query's ``task`` is one of them)."""


def select_tasks(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """The tasks a build asks for, in registry order: ``None`` -> :data:`TASKS`; ``"all"`` ->
    :data:`ALL_TASKS`; else task names (a comma-separated string or a sequence).
    ValueError names an unknown or repeated task, or an empty list."""
    if spec is None:
        return TASKS
    names = [t.strip() for t in spec.split(",")] if isinstance(spec, str) else list(spec)
    if names == ["all"]:
        return ALL_TASKS
    unknown = [t for t in names if t not in ALL_TASKS]
    if unknown or not names:
        raise ValueError(f"unknown task {(unknown or [''])[0]!r}; expected 'all' or a comma-"
                         f"separated list of {', '.join(ALL_TASKS)}")
    repeated = sorted({t for t in names if names.count(t) > 1})
    if repeated:
        raise ValueError(f"task {repeated[0]!r} is listed twice")
    return tuple(t for t in ALL_TASKS if t in names)


def tasks_present(tasks: Sequence[str]) -> tuple[str, ...]:
    """:data:`TASKS`, then the opt-in tasks among ``tasks`` (e.g. a build's query tasks): the
    task list a reader of that build groups by."""
    return TASKS + tuple(t for t in ALL_TASKS if t not in TASKS and t in set(tasks))

_SHAPES: list[Shape] = list(BUILT_IN)


def shapes() -> tuple[Shape, ...]:
    """Every registered shape of the default build's tasks, task by task."""
    return tuple(_SHAPES)


def all_shapes() -> tuple[Shape, ...]:
    """Every registered shape, the opt-in tasks' last."""
    return tuple(_SHAPES) + OPT_IN


def shapes_of(task: str) -> tuple[Shape, ...]:
    """The shapes of ``task`` (ValueError for an unknown task)."""
    if task not in ALL_TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(ALL_TASKS)}")
    return tuple(s for s in all_shapes() if s.task == task)


def shape(name: str) -> Shape:
    """The shape named ``name`` (ValueError for an unknown one)."""
    for s in all_shapes():
        if s.name == name:
            return s
    raise ValueError(f"unknown shape {name!r}; expected one of "
                     f"{', '.join(s.name for s in all_shapes())}")


def recognise(logic: Node) -> tuple[Shape, Slots]:
    """The shape ``logic`` is an instance of and its slots; ValueError for any other logic."""
    for s in all_shapes():
        slots = s.match(logic)
        if slots is not None:
            return s, slots
    raise ValueError(f"logic {describe(logic)} is not one of the generator's query shapes")


def register(new: Shape) -> None:
    """Add a shape to an existing task (after that task's shapes)."""
    if new.task not in TASKS:
        raise ValueError(f"shape {new.name!r}: unknown task {new.task!r}; a new task is a module "
                         f"listed in reasonaudio.tasks.registry.BUILT_IN")
    if any(s.name == new.name for s in all_shapes()):
        raise ValueError(f"shape {new.name!r} is already registered")
    texts = {t.id for s in all_shapes() for t in s.templates}
    if texts & {t.id for t in new.templates}:
        raise ValueError(f"shape {new.name!r}: template ids clash with a registered shape")
    last = max(i for i, s in enumerate(_SHAPES) if s.task == new.task)
    _SHAPES.insert(last + 1, new)


def unregister(name: str) -> None:
    """Remove a shape added by :func:`register` (the built-in ones stay)."""
    if any(s.name == name for s in BUILT_IN + OPT_IN):
        raise ValueError(f"shape {name!r} is built in")
    _SHAPES[:] = [s for s in _SHAPES if s.name != name]


def registered(*extra: Shape) -> AbstractContextManager[None]:
    """Shapes registered for the duration of a ``with`` block."""
    return registered_for(register, unregister, extra)


# --- live read-only views for the modules that index by name ----------------------------------

V = TypeVar("V")


class _TaskView(Mapping[str, V]):
    """task -> ``of(shapes of the task)``, read from the registry on every access; iteration
    lists the default build's tasks, an opt-in task is there by name."""

    def __init__(self, of: Callable[[tuple[Shape, ...]], V]) -> None:
        self._of = of

    def __getitem__(self, task: str) -> V:
        if task not in ALL_TASKS:
            raise KeyError(task)
        return self._of(shapes_of(task))

    def __contains__(self, task: object) -> bool:
        return task in ALL_TASKS

    def __iter__(self) -> Iterator[str]:
        return iter(TASKS)

    def __len__(self) -> int:
        return len(TASKS)

    def __repr__(self) -> str:
        return repr(dict(self))


class _ShapeView(Mapping[str, V]):
    """shape -> ``of(shape)``, read from the registry on every access; iteration lists the
    default build's shapes, an opt-in task's shape is there by name."""

    def __init__(self, of: Callable[[Shape], V]) -> None:
        self._of = of

    def __getitem__(self, name: str) -> V:
        try:
            return self._of(shape(name))
        except ValueError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter([s.name for s in _SHAPES])

    def __len__(self) -> int:
        return len(_SHAPES)

    def __repr__(self) -> str:
        return repr(dict(self))


TASK_SHAPES: Mapping[str, tuple[str, ...]] = _TaskView(lambda ss: tuple(s.name for s in ss))
"""task -> its shape names."""
TASK_TEMPLATES: Mapping[str, list[Template]] = _TaskView(
    lambda ss: [t for s in ss for t in s.templates])
"""task -> its templates (for ``mix``, the templates of all its shapes)."""
SHAPE_TEMPLATES: Mapping[str, list[Template]] = _ShapeView(lambda s: list(s.templates))
"""shape -> its query templates."""
SHAPE_PARAPHRASES: Mapping[str, list[Template]] = _ShapeView(lambda s: list(s.training_templates))
"""shape -> its training-only templates (ids ``train-<shape>-<n>``)."""
SHAPE_NAMES: Sequence[str] = LiveNames(lambda: (s.name for s in _SHAPES))
"""every shape name."""
