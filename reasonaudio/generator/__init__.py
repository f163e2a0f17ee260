"""The benchmark generator: compose clips, plant queries, build, interleave, export."""
