"""Atom sources: banks (synthetic, folder, FSD50K, fetched), their rules and checks, background beds."""
