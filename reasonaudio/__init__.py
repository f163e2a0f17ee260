"""ReasonAudio testbed: reasoning-intensive text-to-audio retrieval over Qdrant."""

import os as _os

# numpy's OpenBLAS worker threads spin-wait between calls and starve the model's own threads
# (torch, onnxruntime) on small machines: YAMNet ingest ran at 0.80 of its bare forward rate with
# them and at 0.94-1.00 without (benchmarks/ingest_overhead.py --model yamnet). Takes effect when
# reasonaudio is imported before numpy (always so for the `bench` command); an explicit setting wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
