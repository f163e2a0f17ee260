"""`bench`: the command line. Thin: parse flags, call library functions, print with rich.

The commands live in ``reasonaudio/commands/``, one module per group; importing them registers
them on the one application (``commands/app.py``). Errors a user can cause
(:class:`ReasonAudioError`) end as one line on stderr and exit code 2; anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations

import os
import sys

# isort: off  (the order the groups are imported is the order `bench --help` lists them)
from reasonaudio.commands import builds, atoms, models, querying, evaluation, perception, training  # noqa: F401
# isort: on
from reasonaudio.commands.app import PIPE_COLUMNS, app
from reasonaudio.commands.training import train_cmd

__all__ = ["app", "main", "train_cmd"]


def main() -> None:  # console-script entry point
    if not sys.stdout.isatty():
        os.environ.setdefault("COLUMNS", PIPE_COLUMNS)  # rich reads it at render time
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
