"""Atom banks: the interface, its kinds (synthetic, folder, FSD50K), checks and the real-sound fetch."""
