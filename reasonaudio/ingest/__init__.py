"""Model ingest: clips -> vectors -> one Qdrant collection per model (cache, pipelines, run, Ray)."""
