"""ReasonAudio testbed: reasoning-intensive text-to-audio retrieval over Qdrant."""

__version__ = "0.1.0"
