"""Rich printing for the CLI (library code reports through callbacks and never prints)."""
