"""The benchmark generator: compose clips, plant queries and write their text (templates,
formulations, logic as a sentence), build, interleave, export."""
