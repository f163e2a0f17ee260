"""Rendering: a clip's events to audio, clean and under an acoustic condition."""
