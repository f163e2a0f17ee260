"""Experiments: orchestrators that run builds, detectors, tuning, training and sweeps and hand their numbers to :mod:`reasonaudio.evaluation`."""
