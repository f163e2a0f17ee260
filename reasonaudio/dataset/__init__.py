"""The data model: clips, atoms, queries, choices and the benchmark directory that holds them."""
