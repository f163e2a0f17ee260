"""The query language: relation semantics, the vectorised judge, the lexicon and label rules,
sound-name resolution, logic ablations, canonical form, and the parser from query text to logic."""
