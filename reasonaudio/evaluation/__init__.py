"""Evaluation: metrics, runs, results, significance, comparisons, reports and plots."""
