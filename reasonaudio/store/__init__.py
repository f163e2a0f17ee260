"""Qdrant access shared by ingest and retrievers (embedded backends and real servers)."""
