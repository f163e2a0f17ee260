"""The ways a retriever reads a sound given by example: one :class:`Reading` per way, in
:data:`READINGS`.

A query like ``"<audio:ex-0042>, then a dog barking"`` reaches a retriever as text; what it makes
of the placeholder is its :class:`Reading`, which the retriever's own record names
(``RetrieverSpec.examples`` in ``retrievers/registry.py``; a family whose members differ names it
by the member: ``example_reading`` in ``retrievers/two_stage.py`` and ``retrievers/vector.py``):

- ``true-label`` (``oracle``, ``bag-of-sounds``): the parser is given the example's true label
  (``ResolveOptions.examples``): the oracle's ceiling, 1.000 on a build's interleaved queries;
- ``tagger-label`` (``oracle-perceived``, ``detected:``, ``soft:``): the parser is given the
  perception tagger's label for the example audio (:mod:`reasonaudio.detect.perceive_examples`),
  so ``oracle-perceived`` is perfect logic over perceived examples; an example the tagger hears
  nothing in is refused (the query scores 0);
- ``detector-label`` (``detected:yamnet-trained``, ``soft:yamnet-trained``): the same, with the
  label the retriever's own trained detector hears best (the model its collection records), so
  clips and examples are heard by one detector;
- ``as-written`` (``random``): the text as it is (the seed follows the text);
- ``oracle-caption`` (``two-stage:oracle-caption+…``, BM25 too): the placeholder becomes the
  example's ground-truth caption (its true label, as the captioner writes labels);
- ``tagger-caption`` (``two-stage:yamnet-caption+…``): the placeholder becomes the
  ``yamnet-caption`` reading of the example (what the tagger hears, without durations);
- ``model-caption`` (``two-stage:MODEL+…`` whose captioner is an audio-language model,
  ``model_captioners()``): the placeholder becomes the caption that captioner writes for the
  example audio at its rate, the captioner loaded as the collection's clips were captioned
  (``--captioner-path``, ``--device``, ``--dtype``; its identity must equal the recorded one),
  its generated rows cached by audio hash in the clips' own caption cache;
- ``interleaved`` (vector retrievers whose embedder declares ``interleaved_input``: the
  Qwen2.5-Omni embedders): the query is ONE input, the text around each placeholder and each
  example's audio in their order (``embed_interleaved``), pooled as the model pools;
- ``audio+text`` (every other vector retriever whose model has an audio tower: the CLAP family,
  MTEB audio-text models, ``trained:``, the tiny test models): the query vector is
  ``normalise(t + a_1 + … + a_k)``, ``t`` the unit text vector of the text with each
  placeholder written as :data:`AUDIO_WORDS`, ``a_i`` the unit audio vector of example ``i``
  (the documented baseline composition, the sum of normalised embeddings).

- ``variant-vectors`` (``vectors:NAME``): the variant's own precomputed query vector, stored
  under ``QID@interleaved`` (``bench ingest --query-ids`` may list them); none: refused.

- ``per-part`` (``hybrid:``, ``rrf:``, ``dbsf:``): each part reads the example by its own
  reading (the vector part as that model reads it, the soft part by the tagger's label), and the
  combiner builds its one Qdrant query from the parts' readings of the text
  (``CombinedRetriever.part_text``).

Any other retriever (BM25 over an audio-language captioner's captions) has no reading: asking
it an interleaved query is refused in one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from reasonaudio.ingest.embedding_cache import EmbeddingCache, audio_hash
from reasonaudio.ingest.pipelines import caption_rows_cache_spec
from reasonaudio.ingest.vector_files import FAMILY, query_collection
from reasonaudio.models.captioners import get_captioner
from reasonaudio.models.registry import dtype_for
from reasonaudio.models.windowing import with_chunking
from reasonaudio.models.yamnet import resample
from reasonaudio.querylang.examples import (PLACEHOLDER_RE, ExampleLabel, check_name, has_placeholder,
                                              names_in, substitute)
from reasonaudio.querylang.resolve import ResolveOptions
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.interleaved import (
    example_path, examples as build_examples, has_interleaved, variant_id)
from reasonaudio.errors import DataError, ModelError, QueryParseError, ReasonAudioError
from reasonaudio.models.names import ORACLE_PERCEIVED
from reasonaudio.retrievers.base import Hit, Retriever
from reasonaudio.retrievers.registry import UnknownRetriever, spec_for
from reasonaudio.retrievers.example_hearing import REFUSED, heard_label
from reasonaudio.retrievers.combined import CombinedRetriever
from reasonaudio.retrievers.two_stage import TwoStageRetriever, captioner_of
from reasonaudio.retrievers.vector import VectorRetriever
from reasonaudio.store.collections import fetch_vectors

if TYPE_CHECKING:
    from reasonaudio.detect.perceive_examples import DetectorPerceiver, ExamplePerceiver, Heard
    from reasonaudio.models.captioners import Captioner

PERCEIVED_READINGS = ("tagger-label", "detector-label")
"""the readings whose labels a perceiver chose (recorded as ``heard`` in ``describe``)"""
AUDIO_WORDS = "this sound"
"""what an audio+text reader's text tower reads in a placeholder's place"""


@dataclass(frozen=True)
class GivenExample:
    name: str
    path: Path
    label: str | None = None
    """the true label (a build's examples); None for a user's own recording"""
    same_recording: bool = False


class ExampleSet:
    """The examples a run may meet, by name: audio read once, the tagger's hearing cached."""

    def __init__(self, bench: BenchmarkView, given: Mapping[str, GivenExample],
                 perceiver: ExamplePerceiver | None = None) -> None:
        self.bench = bench
        self.given = dict(given)
        self._perceiver = perceiver
        self._audio: dict[str, tuple[np.ndarray, int]] = {}
        self._heard: dict[str, Heard] = {}
        self._detectors: dict[str, DetectorPerceiver] = {}
        self._detected: dict[tuple[str, str], Heard] = {}
        self.notes: list[str] = []

    @classmethod
    def of_build(cls, bench: BenchmarkView, perceiver: ExamplePerceiver | None = None) -> "ExampleSet":
        """A build's examples (``examples.jsonl``), each file checked against its sha256."""
        return cls(bench, {e.example_id: GivenExample(e.example_id, example_path(bench.files, e), e.label,
                                                      e.same_recording)
                           for e in build_examples(bench.files).values()}, perceiver)

    @classmethod
    def of_pairs(cls, bench: BenchmarkView, pairs: Sequence[str],
                 perceiver: ExamplePerceiver | None = None) -> "ExampleSet":
        """``--example NAME=PATH`` items: a user's recordings (no true label)."""
        given: dict[str, GivenExample] = {}
        for item in pairs:
            name, sep, path = item.partition("=")
            if not sep or not path:
                raise DataError(f"--example {item!r:.80}: expected NAME=PATH")
            try:
                check_name(name, "--example")
            except QueryParseError as exc:
                raise DataError(str(exc)) from None
            if name in given:
                raise DataError(f"--example {name}: given twice")
            given[name] = GivenExample(name, Path(path))
        out = cls(bench, given, perceiver)
        for name in given:  # hostile files refused before any model loads
            out.audio(name)
        return out

    @classmethod
    def for_search(cls, bench: BenchmarkView, text: str, pairs: Sequence[str]) -> "ExampleSet":
        """``bench search``: the user's ``--example`` recordings, and the build's own examples
        (``ex-NNNN``) when the benchmark has them; every placeholder of ``text`` must name one."""
        own = cls.of_build(bench).given if has_interleaved(bench.files) else {}
        users = cls.of_pairs(bench, pairs)
        clash = sorted(set(own) & set(users.given))
        if clash:
            raise DataError(f"--example {clash[0]}: the benchmark has an example of that name; "
                            "call yours something else")
        out = cls(bench, {**own, **users.given})
        out._audio.update(users._audio)
        out.notes.extend(users.notes)
        try:
            wanted = names_in(text)
        except QueryParseError as exc:
            raise DataError(str(exc)) from None
        for name in wanted:
            if name not in out.given:
                raise DataError(f"<audio:{name}> in the query: no example of that name; pass "
                                f"--example {name}=PATH")
        unused = sorted(set(users.given) - set(wanted))
        if unused:
            raise DataError(f"--example {unused[0]}: the query has no <audio:{unused[0]}>")
        return out

    def audio(self, name: str) -> tuple[np.ndarray, int]:
        from reasonaudio.generator.interleave import read_example_audio

        if name not in self._audio:
            ex = self.given[name]
            wave, sr, notes = read_example_audio(ex.path, f"--example {name}=" if ex.label is None
                                                 else f"example {name}: ")
            clip_sr = self.bench.clips[0].sample_rate if self.bench.clips else sr
            if sr != clip_sr:
                notes.append(f"example {name}: {sr} Hz, resampled by each model as the clips' "
                             f"{clip_sr} Hz are")
            self.notes.extend(notes)
            self._audio[name] = (wave, sr)
        return self._audio[name]

    def label(self, name: str) -> str:
        ex = self._known(name)
        if ex.label is None:
            raise QueryParseError(f"<audio:{name}>: a recording of your own has no true label; "
                                  f"ask {ORACLE_PERCEIVED} (the tagger's label) instead")
        return ex.label

    def _known(self, name: str) -> GivenExample:
        ex = self.given.get(name)
        if ex is None:
            raise QueryParseError(f"<audio:{name}>: no example of that name (given: "
                                  f"{', '.join(sorted(self.given)[:5]) or 'none'}); "
                                  f"pass --example {name}=PATH")
        return ex

    @property
    def perceiver(self) -> ExamplePerceiver:
        if self._perceiver is None:
            from reasonaudio.detect.perceive_examples import ExamplePerceiver
            from reasonaudio.atoms.registry import open_bank

            spec = (self.bench.manifest.get("parameters") or {}).get("atoms")
            if not spec:
                raise DataError(f"{self.bench.root}/manifest.json: parameters.atoms does not name "
                                "the atom bank the tagger's label map is made for")
            self._perceiver = ExamplePerceiver(open_bank(str(spec)), self.bench.labels)
        return self._perceiver

    def heard(self, name: str) -> Heard:
        self._known(name)
        if name not in self._heard:
            self._heard[name] = self.perceiver.hear(*self.audio(name))
        return self._heard[name]

    def true_labels(self) -> dict[str, ExampleLabel]:
        """The true label of each build example; a user's recording has none, so its only
        reading is the tagger's (``how`` says ``tagger``; silence or a tie is a refusal)."""
        return {n: (ExampleLabel(e.label, "true") if e.label is not None
                    else heard_label(self.heard(n))) for n, e in self.given.items()}

    def perceived_labels(self) -> dict[str, ExampleLabel]:
        """The tagger's label of every example (silence or a tie is a refusal)."""
        return {name: heard_label(self.heard(name)) for name in self.given}

    def detector_heard(self) -> dict[str, Heard]:
        """example -> what a trained detector heard in it, for the examples one has read."""
        return {name: heard for (_, name), heard in self._detected.items()}

    def detector(self, record: Mapping[str, Any]) -> DetectorPerceiver:
        """The trained detector a detected collection records (its label map's ``model`` and
        ``weights_sha256``), loaded once; refused in one line when the model is gone or its
        weights are not the recorded ones."""
        from reasonaudio.detect.perceive_examples import DetectorPerceiver
        from reasonaudio.detect.trained import trained_map

        path, sha = str(record.get("model") or ""), str(record.get("weights_sha256") or "")
        if not path or not sha:
            raise DataError("the detected collection records no trained model (label_map.model and "
                            "weights_sha256); rerun `bench detect --mode trained --model-path DIR`")
        if sha not in self._detectors:
            tmap = trained_map(path, self.bench.labels)
            if tmap.detector.weights_sha256 != sha:
                raise DataError(f"the trained detector at {path}: its weights (sha256 "
                                f"{tmap.detector.weights_sha256[:12]}) are not the ones the detected "
                                f"collection was made with ({sha[:12]}); rerun `bench detect "
                                "--mode trained` with this model")
            self._detectors[sha] = DetectorPerceiver(tmap)
        return self._detectors[sha]

    def detector_labels(self, record: Mapping[str, Any]) -> dict[str, ExampleLabel]:
        """The label the trained detector ``record`` names hears best in every example (nothing
        heard or a tie is a refusal)."""
        perceiver = self.detector(record)
        key = perceiver.map.detector.weights_sha256
        for name in self.given:
            if (key, name) not in self._detected:
                self._detected[key, name] = perceiver.hear(*self.audio(name))
        return {name: heard_label(self._detected[key, name]) for name in self.given}


class ExampleReader(Retriever):
    """A retriever asked interleaved queries through one :class:`Reading`: texts with a
    placeholder are rewritten (``rewrite``) before the inner retriever sees them; the rest pass
    as they are. Everything else is the inner retriever's."""

    def __init__(self, inner: Retriever, reading: "Reading",
                 rewrite: Callable[[str], str] | None = None) -> None:
        self.inner = inner
        self.reading = reading
        self.name = inner.name
        self._rewrite = rewrite
        self.labels: dict[str, str] | None = None
        """example -> the label its parser was given (label readings; recorded in describe)"""

    def text(self, text: str) -> str:
        if self._rewrite is None or not has_placeholder(text):
            return text
        return self._rewrite(text)

    def _texts(self, texts: Sequence[str]) -> list[str | QueryParseError]:
        out: list[str | QueryParseError] = []
        for t in texts:
            try:
                out.append(self.text(t))
            except QueryParseError as exc:
                out.append(exc)
        return out

    def prepare(self, texts: Sequence[str]) -> None:
        self.inner.prepare([t for t in self._texts(texts) if isinstance(t, str)])

    def reuse_parse(self, text: str, logic: Any, resolve: ResolveOptions | None) -> None:
        self.inner.reuse_parse(text, logic, resolve)  # kept only where read alike (same resolve)

    def search(self, text: str, k: int) -> list[Hit]:
        return self.inner.search(self.text(text), k)

    def search_batch(self, texts: Sequence[str], k: int) -> list[list[Hit] | Exception]:
        read = self._texts(texts)
        ok = [t for t in read if isinstance(t, str)]
        answers = iter(self.inner.search_batch(ok, k) if ok else [])
        return [t if isinstance(t, QueryParseError) else next(answers) for t in read]

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        return self.inner.score(self.text(text), clip_ids)

    def describe(self) -> dict[str, Any]:
        out = {**self.inner.describe(), "examples": self.reading.name}
        if self.labels is not None and self.reading.name in PERCEIVED_READINGS:
            out["heard"] = self.labels
        return out

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        return self.inner.captions(clip_ids)

    def close(self) -> None:
        self.inner.close()


class AudioTextReader(ExampleReader):
    """``audio+text``: the query vector of an interleaved text is the normalised sum of the unit
    text vector and each example's unit audio vector, put where the vector retriever looks first."""

    def __init__(self, inner: VectorRetriever, reading: "Reading", examples: ExampleSet) -> None:
        super().__init__(inner, reading)
        self.examples = examples

    def vector(self, text: str) -> np.ndarray:
        inner: VectorRetriever = self.inner  # type: ignore[assignment]
        names: list[str] = []

        def word(name: str) -> str:
            self.examples._known(name)
            names.append(name)
            return AUDIO_WORDS

        words = substitute(text, word)
        emb = inner.embedder
        total = np.asarray(emb.embed_queries([words])[0], dtype=np.float64)
        total /= max(float(np.linalg.norm(total)), 1e-12)
        for name in names:
            wave, sr = self.examples.audio(name)
            rate = int(getattr(emb, "sample_rate", None) or sr)
            vec = np.asarray(emb.embed_audio([resample(wave, sr, rate)])[0], dtype=np.float64)
            total += vec / max(float(np.linalg.norm(vec)), 1e-12)
        return (total / max(float(np.linalg.norm(total)), 1e-12)).astype(np.float32)

    def prepare(self, texts: Sequence[str]) -> None:
        inner: VectorRetriever = self.inner  # type: ignore[assignment]
        plain = [t for t in texts if not has_placeholder(t)]
        inner.prepare(plain)
        for t in texts:
            if has_placeholder(t) and t not in inner._prepared:
                try:
                    inner._prepared[t] = self.vector(t)
                except QueryParseError:
                    pass  # refused again, in its place, when the query is asked

    def text(self, text: str) -> str:
        inner: VectorRetriever = self.inner  # type: ignore[assignment]
        if has_placeholder(text) and text not in inner._prepared:
            inner._prepared[text] = self.vector(text)
        return text


class InterleavedReader(AudioTextReader):
    """``interleaved``: an embedder that declares ``interleaved_input`` (the omni embedders)
    embeds the query as ONE input, the text around each placeholder and each example's audio
    (at the model's rate) in their order (``embed_interleaved``)."""

    def parts(self, text: str) -> list[str | np.ndarray]:
        names_in(text)  # every name checked before any audio is read
        rate = int(self.inner.embedder.sample_rate)  # type: ignore[attr-defined]
        out: list[str | np.ndarray] = []
        for i, piece in enumerate(PLACEHOLDER_RE.split(text)):
            if i % 2 == 0:
                if piece:
                    out.append(piece)
                continue
            self.examples._known(piece)
            wave, sr = self.examples.audio(piece)
            out.append(resample(wave, sr, rate))
        return out

    def vector(self, text: str) -> np.ndarray:
        return self._vectors([self.parts(text)])[0]

    def _vectors(self, queries: Sequence[list[str | np.ndarray]]) -> np.ndarray:
        emb = self.inner.embedder  # type: ignore[attr-defined]
        return np.asarray(emb.embed_interleaved(queries), dtype=np.float32)

    def prepare(self, texts: Sequence[str]) -> None:
        inner: VectorRetriever = self.inner  # type: ignore[assignment]
        inner.prepare([t for t in texts if not has_placeholder(t)])
        todo: dict[str, list[str | np.ndarray]] = {}
        for t in dict.fromkeys(t for t in texts if has_placeholder(t) and t not in inner._prepared):
            try:
                todo[t] = self.parts(t)
            except QueryParseError:
                pass  # refused again, in its place, when the query is asked
        if todo:  # one call: full model batches
            inner._prepared.update(zip(todo, self._vectors(list(todo.values()))))


class ModelCaptionReader(ExampleReader):
    """``model-caption``: a two-stage retriever whose captioner is an audio-language model reads
    the placeholder as the caption that captioner writes for the example's audio, resampled to
    its rate. The captioner is loaded as the collection's clips were captioned (its identity,
    recorded with the collection, must match: weights, prompt, decoding, windows, dtype); its
    generated rows are cached by audio hash in the clips' own caption cache."""

    def __init__(self, inner: TwoStageRetriever, reading: "Reading", examples: ExampleSet) -> None:
        super().__init__(inner, reading, lambda t: substitute(t, self.caption))
        self.examples = examples
        self.captioner = load_captioner_of(inner)

        self.cache = EmbeddingCache(*caption_rows_cache_spec(self.captioner))
        self.example_captions: dict[str, str] = {}

    def caption(self, name: str) -> str:
        self.examples._known(name)
        self._caption_all([name])
        return self.example_captions[name]

    def _caption_all(self, names: Sequence[str]) -> None:
        model = self.captioner.audio_model
        todo: dict[str, tuple[np.ndarray, str]] = {}
        for name in dict.fromkeys(names):
            if name in self.example_captions:
                continue
            wave, sr = self.examples.audio(name)
            wave = resample(wave, sr, int(model.sample_rate))
            digest = audio_hash(wave)
            rows = self.cache.get(digest)
            if rows is None:
                todo[name] = (wave, digest)
            else:
                self.example_captions[name] = self.captioner.caption_from_rows(rows)
        if not todo:
            return
        got = model.unit_rows([model.audio_units(w) for w, _ in todo.values()])
        for (name, (_, digest)), rows in zip(todo.items(), got):
            self.cache.put(digest, rows)
            self.example_captions[name] = self.captioner.caption_from_rows(rows)
        self.cache.commit()

    def prepare(self, texts: Sequence[str]) -> None:
        names: list[str] = []
        for t in texts:
            try:
                names += [n for n in names_in(t) if n in self.examples.given]
            except QueryParseError:
                pass  # refused again, in its place, when the query is asked
        self._caption_all(names)  # every example of the run in full model batches
        super().prepare(texts)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "example_captions": dict(sorted(self.example_captions.items()))}

    def close(self) -> None:
        self.cache.close()
        self.captioner = None  # type: ignore[assignment]
        super().close()


def load_captioner_of(r: TwoStageRetriever) -> Captioner:
    """The audio-language captioner that captioned ``r``'s collection, loaded with ``r``'s
    options (``--captioner-path``, ``--device``, ``--dtype``, as the ingest took them) and the
    collection's chunking; refused in one line when its identity is not the recorded one."""
    name = captioner_of(r.name) or ""
    stored = ((r.meta.extra or {}).get("identity") or {}).get("captioner") or {}
    if not stored.get("model"):
        raise ModelError(f"{r.name}: collection {r.collection!r} records no captioner identity; "
                         f"rerun `bench ingest --model {r.name} --force`")
    opts = r.options
    captioner = get_captioner(name, model_path=opts.captioner_path, device=opts.device,
                              dtype=dtype_for(name, opts.dtype))
    windows = (stored["model"].get("policy") or {}).get("windows") or {}
    with_chunking(captioner.model, str(windows.get("chunking", "fixed")), name)
    have = captioner.identity()
    if have != stored:
        want, got = stored["model"], have["model"]
        if want.get("revision") != got.get("revision"):
            why = (f"weights {want.get('revision')}, the loaded ones are {got.get('revision')}; pass "
                   "those weights with --captioner-path")
        elif want.get("dtype") != got.get("dtype"):
            why = f"in {want.get('dtype')}, the loaded one runs in {got.get('dtype')}; pass --dtype {want.get('dtype')}"
        else:
            keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k)) or ["captioner"]
            why = f"other settings ({keys[0]} differs); rerun `bench ingest --model {r.name} --force`"
        raise ModelError(f"{r.name}: collection {r.collection!r} was captioned by {name} {why}, "
                         "to caption a sound given by example the same way")
    return captioner


class PartsReader(ExampleReader):
    """``per-part``: a hybrid or fusion retriever whose parts each read the examples by their
    own :class:`Reading`; the combiner asks each part's reading of the text for that part's
    prefetch (or the soft formula's logic), so a search stays one Qdrant query."""

    def __init__(self, inner: CombinedRetriever, reading: "Reading",
                 parts: Sequence[ExampleReader]) -> None:
        super().__init__(inner, reading)
        self.parts = list(parts)
        for part in self.parts:
            inner.part_text[part.name] = part.text
        heard = [p.labels for p in self.parts if p.labels is not None
                 and p.reading.name in PERCEIVED_READINGS]
        self.labels = heard[0] if heard else None

    def prepare(self, texts: Sequence[str]) -> None:
        for part in self.parts:
            part.prepare(texts)

    def describe(self) -> dict[str, Any]:
        out = {**self.inner.describe(), "examples": f"{self.reading.name} ("
               + " + ".join(p.reading.name for p in self.parts) + ")",
               "part_readings": {p.name: p.reading.name for p in self.parts}}
        if self.labels is not None:
            out["heard"] = self.labels
        return out


def _per_part(r: Retriever, ex: ExampleSet) -> Retriever:
    combined: CombinedRetriever = r  # type: ignore[assignment]
    parts = [with_examples(p, ex) for p in combined.parts]
    return PartsReader(combined, reading_named(r), parts)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Reading:
    """One way of reading an example; which retrievers read it so, their records say."""

    name: str
    help: str
    read: Callable[[Retriever, ExampleSet], Retriever]


def _given_labels(labels: Callable[[Retriever, ExampleSet], Mapping[str, ExampleLabel]]
                  ) -> Callable[[Retriever, ExampleSet], Retriever]:
    def read(r: Retriever, ex: ExampleSet) -> Retriever:
        given = labels(r, ex)
        r.resolve = replace(r.resolve or ResolveOptions(), examples=given)  # type: ignore[attr-defined]
        r._parsed.clear()  # type: ignore[attr-defined]
        reader = ExampleReader(r, reading_named(r))
        reader.labels = {n: REFUSED if lab.refusal else lab.label
                         for n, lab in sorted(given.items())}
        return reader

    return read


def _caption(which: Callable[[ExampleSet, str], str]) -> Callable[[Retriever, ExampleSet], Retriever]:
    def read(r: Retriever, ex: ExampleSet) -> Retriever:
        return ExampleReader(r, reading_named(r), lambda t: substitute(t, lambda n: which(ex, n)))

    return read


def _variant_vectors(r: Retriever, ex: ExampleSet) -> Retriever:
    """``vectors:NAME``: an interleaved text is asked by its variant's own stored query vector
    (``QID@interleaved`` in ``--query-ids``); a variant without one is refused."""
    inner: Any = r
    by_text = {q.text: q.id for q in ex.bench.queries if has_placeholder(q.text)}
    keys = [variant_id(qid) for qid in by_text.values()]
    found = fetch_vectors(inner.store, query_collection(inner.name[len(FAMILY):]), keys) if keys else {}
    inner.embedder.vectors.update(found)

    def key(text: str) -> str:
        qid = by_text.get(text)
        if qid is None or variant_id(qid) not in found:
            raise QueryParseError(f"{inner.name} has no query vector for this interleaved text "
                                  f"(give one as {variant_id(qid or 'QID')} in --query-ids)")
        return variant_id(qid)

    return ExampleReader(r, reading_named(r), key)


def _detector_record(r: Retriever) -> Mapping[str, Any]:
    """The trained detector's record of a ``detected:``/``soft:`` retriever's collection."""
    meta = getattr(r, "meta", None)
    return ((getattr(meta, "extra", None) or {}).get("label_map") or {}) if meta is not None else {}


def _tagger_caption(ex: ExampleSet, name: str) -> str:
    """What the captioner writes for the example: ``silence`` when it hears nothing, as it
    writes for such a clip."""
    return ex.heard(name).caption


READINGS: tuple[Reading, ...] = (
    Reading("as-written", "the text as it is (chance level; the seed follows the text)",
            lambda r, ex: ExampleReader(r, reading_named(r))),
    Reading("tagger-label", "the parser gets the tagger's label for the example",
            _given_labels(lambda r, ex: ex.perceived_labels())),
    Reading("detector-label", "the parser gets the label the retriever's own trained detector "
            "hears best in the example (the model its collection records)",
            _given_labels(lambda r, ex: ex.detector_labels(_detector_record(r)))),
    Reading("true-label", "the parser gets the example's true label (the ceiling)",
            _given_labels(lambda r, ex: ex.true_labels())),
    Reading("oracle-caption", "the placeholder becomes the example's ground-truth caption",
            _caption(lambda ex, n: ex.label(n))),
    Reading("tagger-caption", "the placeholder becomes the yamnet-caption of the example",
            _caption(_tagger_caption)),
    Reading("model-caption", "the placeholder becomes the caption the two-stage retriever's own "
            "audio-language captioner writes for the example (cached by audio hash)",
            lambda r, ex: ModelCaptionReader(r, reading_named(r), ex)),  # type: ignore[arg-type]
    Reading("variant-vectors", "the interleaved variant's own precomputed query vector (QID@interleaved)",
            _variant_vectors),
    Reading("interleaved", "one input: the text around each placeholder and each example's audio, "
            "in order (embedders that declare interleaved_input: the omni embedders)",
            lambda r, ex: InterleavedReader(r, reading_named(r), ex)),  # type: ignore[arg-type]
    Reading("audio+text", "normalise(unit text vector + unit audio vector of each example)",
            lambda r, ex: AudioTextReader(r, reading_named(r), ex)),  # type: ignore[arg-type]
    Reading("per-part", "each part of a hybrid or fusion retriever reads the example its own way",
            _per_part),
)
BY_NAME = {r.name: r for r in READINGS}


def reading_for(name: str, retriever: Retriever) -> Reading:
    """The reading retriever ``name``'s record names (``RetrieverSpec.examples``), for the
    retriever as built; a ReasonAudioError naming it when it has none."""
    try:
        way = spec_for(name).examples
    except UnknownRetriever:
        way = None
    if callable(way):
        way = way(name, retriever)
    if way is None:
        raise ReasonAudioError(f"{name}: no way to read a sound given by example yet (readings: "
                               f"{', '.join(r.name for r in READINGS)}; docs/interleaved.md)")
    return BY_NAME[way]


def reading_named(r: Retriever) -> Reading:
    return reading_for(r.name, r)


def with_examples(retriever: Retriever, examples: ExampleSet) -> Retriever:
    """``retriever`` reading placeholders by its :class:`Reading` (ReasonAudioError if none)."""
    return reading_for(retriever.name, retriever).read(retriever, examples)
