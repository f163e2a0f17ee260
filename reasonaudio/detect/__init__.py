"""Perception + the project's logic: YAMNet frame scores -> label tracks -> events -> payload."""
