"""Retrievers: oracle payload filter, baselines, per-model vector search, two-stage pipelines."""
