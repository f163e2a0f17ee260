"""A sentence-transformers folder loads once per process while it stays among the last few asked
for (``text_embedders.loaded_folder``): every retriever and formulation of an evaluation asks for
its text embedder again, and loading MiniLM is a quarter of a second each time."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from reasonaudio.models import text_embedders


def test_a_folder_asked_for_again_is_not_loaded_again_and_old_ones_are_let_go(monkeypatch):
    monkeypatch.setattr(text_embedders, "_LOADED", type(text_embedders._LOADED)())
    loads: list[str] = []

    def loader(name):
        return lambda: (loads.append(name), object())[1]

    a = text_embedders.loaded_folder(("a",), loader("a"))
    assert text_embedders.loaded_folder(("a",), loader("a")) is a and loads == ["a"]
    b = text_embedders.loaded_folder(("b",), loader("b"))
    assert text_embedders.loaded_folder(("a",), loader("a")) is a  # a, then b, then a: both kept
    text_embedders.loaded_folder(("c",), loader("c"))  # past LOADED_KEPT: b is the oldest, let go
    assert len(text_embedders._LOADED) == text_embedders.LOADED_KEPT
    assert text_embedders.loaded_folder(("b",), loader("b")) is not b
    assert loads == ["a", "b", "c", "b"]


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="no MiniLM here")
def test_two_loads_of_minilm_share_the_modules_and_embed_the_same():
    from reasonaudio.models.registry import load_model

    first, second, smaller = load_model("minilm"), load_model("minilm"), load_model("minilm", batch_size=4)
    assert first.model is second.model is smaller.model and smaller.unit_batch == 4
    texts = ["a dog barks", "a siren wails then a dog barks twice"]
    assert np.array_equal(first.embed_text(texts), second.embed_text(texts))
