"""Rich printing of library results (library code never prints)."""
