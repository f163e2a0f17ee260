"""Query logic: AST, semantics, vectorised judge, text parser and Qdrant filter translation."""
