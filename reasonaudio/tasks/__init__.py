"""Tasks: one typed record per query shape (:class:`~reasonaudio.tasks.base.Shape`).

One module per task (``negation.py``, ``order.py``, ``overlap.py``, ``duration.py``, ``mix.py``
with the shapes m1 .. m5); :mod:`.registry` lists them. Each record's ``summary`` gives its logic.
"""

from reasonaudio.tasks.base import Planted, PlantKit, Shape, Slots, Template
from reasonaudio.tasks.registry import TASKS, recognise, register, registered, shape, shapes, shapes_of

__all__ = ["TASKS", "Planted", "PlantKit", "Shape", "Slots", "Template", "recognise", "register",
           "registered", "shape", "shapes", "shapes_of"]
