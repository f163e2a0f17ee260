"""Metrics, evaluation runs, comparisons, reports and plots."""
