"""Printing with rich: library results in, terminal output out (library code never prints)."""
