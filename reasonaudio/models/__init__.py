"""Model registry shared by ingest and retrievers."""
