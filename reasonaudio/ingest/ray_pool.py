"""The Ray engine's model actors and the scheduler that feeds them.

One pool of actors is kept per Ray (the one this process started or joined) and reused by every
later job of the same model and layout in the process: a second ingest or frame pass of that
model pays neither actor start-up nor model load (issue 54), whichever benchmark, condition or
caches it names (the caches are a job's, not the model's: an actor reopens its loaded model
over them). A job of another model, or of the same model laid out otherwise, replaces the pool
(its actors are ended first, so the new pool always finds the CPUs and GPUs the old one held). A
pool dies with its Ray: after a shutdown, or on another Ray, a job starts a new one.

A job cuts its clips into blocks (:meth:`RayOptions.blocks_for`); each block is rendered by a
CPU task (when the model hears audio) and handed to the least busy actor, at most
:data:`IN_FLIGHT_PER_ACTOR` blocks queued on an actor at once (its next block renders while it
computes the one before), and the rows come back as the blocks finish, in any order.

An actor killed mid-block is restarted by Ray and the block rerun on it (``max_restarts=-1``,
``max_task_retries=-1``): no clip is lost with it. A block whose actor raises (a user error
while loading the model) fails the job with that error (:func:`reasonaudio.ingest.ray_engine._job_error`).
"""

from __future__ import annotations

import contextlib
from types import ModuleType
from typing import Any, Hashable, Iterator, Sequence

import numpy as np

IN_FLIGHT_PER_ACTOR = 2
"""blocks queued on one actor at once: the one it computes and the next, whose render task runs
meanwhile (one only: the actor would wait for each render; more: a slow actor would hold blocks
a free one could take)"""

_POOL: dict[str, Any] = {}
"""The live pool: ``key`` (Ray node and job, actor class, model arguments, layout) and
``actors`` (handles)."""


def _frozen(value: object) -> Hashable:
    """A hashable, comparable form of a model's arguments (paths and callables by identity)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if callable(value):
        return ("callable", getattr(value, "__module__", ""), getattr(value, "__qualname__", ""), id(value))
    return ("object", type(value).__name__, str(value))


def pool_key(ray: ModuleType, actor: type, model: dict[str, Any], layout: dict[str, Any]) -> tuple:
    """What a pool is reused for: the same Ray (node and job ids: a new local Ray, or a new
    connection to a cluster, has other ones), actor class, model arguments and layout."""
    ctx = ray.get_runtime_context()
    return (ctx.get_node_id(), ctx.get_job_id(), actor.__module__, actor.__qualname__,
            _frozen(model), _frozen(layout))


def actor_pool(ray: ModuleType, actor: type, model: dict[str, Any], *, workers: int, cpus: float,
               gpus: float) -> list[Any]:
    """The pool for ``actor`` over ``model``: the live one when its key matches, else a new one
    of ``workers`` actors (each ``cpus`` CPUs, ``gpus`` GPUs) after the live one is ended."""
    layout = dict(workers=workers, cpus=cpus, gpus=gpus)
    key = pool_key(ray, actor, model, layout)
    if _POOL.get("key") == key:
        return _POOL["actors"]
    drop_pool(ray)
    remote = ray.remote(actor).options(num_cpus=cpus, num_gpus=gpus or None, max_restarts=-1,
                                       max_task_retries=-1, max_concurrency=1)
    actors = [remote.remote(**model) for _ in range(workers)]
    _POOL.update(key=key, actors=actors)
    return actors


def drop_pool(ray: ModuleType | None = None) -> None:
    """End the live pool's actors (``ray``: the running Ray; ``None``: it is already shut down)."""
    actors = _POOL.pop("actors", [])
    _POOL.clear()
    if ray is not None and ray.is_initialized():
        for handle in actors:
            with contextlib.suppress(Exception):
                ray.kill(handle)


def run_blocks(ray: ModuleType, actors: Sequence[Any], job: dict[str, Any], blocks: list[list[str]],
               render: Any | None, render_kwargs: dict[str, Any]) -> Iterator[dict[str, np.ndarray]]:
    """Each block through (``render``, a Ray remote function, when given) the least busy actor's
    ``run(job, batch)``; yields each block's columns as it finishes. Closing the iterator cancels
    the blocks not yet done (an error stops the job: nothing of it outlives the caller)."""
    todo = list(reversed(blocks))
    busy: dict[Any, int] = {}  # object ref -> index of its actor
    load = [0] * len(actors)
    try:
        while todo or busy:
            while todo and min(load) < IN_FLIGHT_PER_ACTOR:
                index = load.index(min(load))
                batch: Any = {"id": np.array(todo.pop(), dtype=object)}
                if render is not None:
                    batch = render.remote(batch, **render_kwargs)
                busy[actors[index].run.remote(job, batch)] = index
                load[index] += 1
            (ready,), _ = ray.wait(list(busy), num_returns=1)
            load[busy.pop(ready)] -= 1
            yield ray.get(ready)
    finally:
        for ref in busy:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
