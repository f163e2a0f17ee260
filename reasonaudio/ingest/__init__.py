"""Atom banks, clip composer, renderer, query generator, benchmark files and embedding ingest."""
