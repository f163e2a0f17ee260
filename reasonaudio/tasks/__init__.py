"""Tasks: one typed record per query shape (:class:`~reasonaudio.tasks.base.Shape`).

One module per task (``negation.py``, ``order.py``, ``overlap.py``, ``duration.py``, ``mix.py``
with the shapes m1 .. m5; ``count.py``, opt-in, with count and count-then); :mod:`.registry`
lists them. Each record's ``summary`` gives its logic.
"""

from reasonaudio.tasks.base import Planted, PlantKit, Shape, Slots, Template
from reasonaudio.tasks.registry import (ALL_TASKS, TASKS, recognise, register, registered,
                                       select_tasks, shape, shapes, shapes_of)

__all__ = ["ALL_TASKS", "TASKS", "select_tasks", "Planted", "PlantKit", "Shape", "Slots", "Template", "recognise", "register",
           "registered", "shape", "shapes", "shapes_of"]
