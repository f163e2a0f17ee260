"""ReasonAudio testbed: reasoning-intensive text-to-audio retrieval over Qdrant."""

from reasonaudio.runtime import default_blas_threads as _default_blas_threads

_default_blas_threads()  # before anything imports numpy (see reasonaudio.runtime)

__version__ = "0.1.0"
