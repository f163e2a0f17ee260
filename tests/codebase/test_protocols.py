"""The seams' Protocols describe the classes that implement them: every member a Protocol names is
defined by each implementation (docs/architecture.md, "Typed seams"), so a signature that takes the
Protocol accepts what the package passes there."""

from __future__ import annotations

import pytest

from reasonaudio.detect.base import DetectorProtocol
from reasonaudio.detect.labelmap import LabelMap
from reasonaudio.detect.trained import TrainedMap
from reasonaudio.models.base import Embedder, EmbedderProtocol
from reasonaudio.models.yamnet_embedder import FrameTagger, YamnetEmbedder
from reasonaudio.render.clips import ClipRenderer, ConditionRenderer, Renderer
from reasonaudio.retrievers.base import Retriever, RetrieverProtocol
from reasonaudio.store.base import Store, StoreProtocol
from reasonaudio.store.edge import EdgeStore

pytestmark = pytest.mark.fast


def members(protocol: type) -> set[str]:
    """What ``protocol`` names: its annotated attributes and its methods and properties."""
    own = {n for n in vars(protocol) if not n.startswith("_")}
    return own | set(getattr(protocol, "__annotations__", {}))


CASES = [
    (RetrieverProtocol, Retriever),
    (EmbedderProtocol, Embedder),
    (StoreProtocol, Store),
    (StoreProtocol, EdgeStore),
    (DetectorProtocol, LabelMap),
    (DetectorProtocol, TrainedMap),
    (FrameTagger, YamnetEmbedder),
    (ClipRenderer, ConditionRenderer),
]
"""(Protocol, a class that implements it); an attribute set in ``__init__`` is checked below"""

SET_IN_INIT = {(ClipRenderer, Renderer): {"bank", "params"},
               (FrameTagger, YamnetEmbedder): {"tagger", "revision"},
               (EmbedderProtocol, Embedder): {"dimension"}}
"""members an implementation assigns per instance (declared in its ``__init__``, not its class)"""


@pytest.mark.parametrize(("protocol", "cls"), CASES + [(ClipRenderer, Renderer)],
                         ids=lambda x: x.__name__)
def test_every_member_is_implemented(protocol, cls):
    declared = set(dir(cls)) | set(getattr(cls, "__annotations__", {}))
    for base in cls.__mro__:
        declared |= set(getattr(base, "__annotations__", {}))
    missing = members(protocol) - declared - SET_IN_INIT.get((protocol, cls), set())
    assert missing == set(), f"{cls.__name__} lacks {sorted(missing)} of {protocol.__name__}"


def test_the_check_sees_a_missing_member():
    class Half:
        name = "half"

        def search(self, text, k):
            return []

    assert members(RetrieverProtocol) - set(dir(Half)) >= {"score", "describe", "search_batch"}
