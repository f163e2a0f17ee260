"""Shared fixtures. Tests never touch the network."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# before anything imports torch: OpenMP spin-waiting makes torch 20x slower on a busy 2-core box
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# no terminal size from outside: a test that needs a width sets COLUMNS itself. (GNU readline,
# once loaded in pytest's process, exports COLUMNS=80 and LINES=24 to every child it starts, so
# pytest-xdist's workers would begin with them and the CLI's console would keep 80 columns.)
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

import sys
from pathlib import Path

# Bytecode is cached between runs even where PYTHONDONTWRITEBYTECODE is set (as on some CI
# images), but then under .pytest_cache/pycache, not beside the sources: without it every xdist
# worker rewrites the asserts of every test module and every `bench` the tests start compiles the
# package again (about an eighth of the fast tier's CPU time). The workers and those commands
# inherit the setting through the environment.
if sys.dont_write_bytecode:
    _prefix = str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "pycache")
    sys.pycache_prefix = _prefix
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = _prefix

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (CI must not pass or fail by chance);
# REASONAUDIO_FUZZ=1 draws fresh ones, to explore before a change lands.
settings.register_profile("reasonaudio", derandomize=True, database=None)
settings.register_profile("fuzz", derandomize=False)
settings.load_profile("fuzz" if os.environ.get("REASONAUDIO_FUZZ") == "1" else "reasonaudio")


def _cache_cli_commands() -> None:
    """``CliRunner().invoke(app, ...)`` rebuilds the click command tree of every ``bench`` command
    from its typed signature on each call (two thirds of a ``bench parse`` test's time; the
    suite invokes the CLI thousands of times). The tree is a pure function of the registered
    commands, so it is built once per such registry: a test that registers a command of its own
    gets a fresh tree."""
    import weakref

    import typer.testing

    built: "weakref.WeakKeyDictionary[object, tuple[tuple, object]]" = weakref.WeakKeyDictionary()
    real = typer.testing._get_command

    def registry(app) -> tuple:
        return (tuple(id(c) for c in getattr(app, "registered_commands", ())),
                tuple(id(g) for g in getattr(app, "registered_groups", ())))

    def cached(app):
        try:
            key, command = built[app]
        except (KeyError, TypeError):
            key = command = None
        if command is None or key != registry(app):
            command = real(app)
            try:
                built[app] = (registry(app), command)
            except TypeError:
                pass
        return command

    typer.testing._get_command = cached


_cache_cli_commands()

SMALL_BUILD = dict(atoms="synthetic", seed=0, n_clips=300, n_queries=50)


@pytest.fixture(scope="session")
def small_bench_dir(tmp_path_factory) -> Path:
    """A built benchmark (synthetic bank, seed 0, 300 clips, 50 queries). Treat as read-only."""
    from reasonaudio.generator.build import BuildParams, build_benchmark

    out = tmp_path_factory.mktemp("bench") / "small"
    build_benchmark(out, BuildParams(**SMALL_BUILD))
    return out


@pytest.fixture(scope="session")
def default_bench_dir(tmp_path_factory) -> Path:
    """The acceptance build: synthetic bank, seed 0, 10,000 clips, 1,000 queries. Read-only."""
    from reasonaudio.generator.build import BuildParams, build_benchmark

    out = tmp_path_factory.mktemp("bench") / "default"
    build_benchmark(out, BuildParams())
    return out


@pytest.fixture(scope="session")
def tiny_bench_dir(tmp_path_factory) -> Path:
    """A very small build (synthetic bank, seed 0, 24 clips, 10 queries) for tests that run a
    generative or multimodal twin over every clip. Read-only."""
    from reasonaudio.generator.build import BuildParams, build_benchmark

    out = tmp_path_factory.mktemp("bench") / "tiny"
    build_benchmark(out, BuildParams(atoms="synthetic", seed=0, n_clips=24, n_queries=10))
    return out


NOISY_WORDS = ("noise", "whoosh", "flutter", "bubbling", "hiss", "rain", "wind", "crackl", "rustl",
               "static", "drip")
"""synthetic classes a noise bed would sound like (the tagger check would refuse every bed)"""


@pytest.fixture(scope="module")
def tonal_bank(tmp_path_factory) -> Path:
    """A folder bank of 20 synthetic tonal classes (no noise-like label), Scaper layout."""
    import soundfile as sf

    from reasonaudio.atoms.registry import open_bank

    root = tmp_path_factory.mktemp("tonal")
    bank = open_bank("synthetic")
    labels = [lab for lab in bank.labels if not any(w in lab for w in NOISY_WORDS)][:20]
    for lab in labels:
        x, sr = bank.load(bank.by_label[lab][0].atom_id)
        folder = root / lab.replace(" ", "_")
        folder.mkdir()
        sf.write(str(folder / "a.wav"), x, sr, subtype="PCM_16")
    return root


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist"):  # its hook is unknown to pytest without it
        import xdist_schedule

        config.pluginmanager.register(xdist_schedule, "reasonaudio-xdist-schedule")


def pytest_collection_modifyitems(config, items):
    """In a pytest-xdist worker: the order the workers take modules in (xdist_schedule.py)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from xdist_schedule import unit_rank

        items.sort(key=unit_rank)  # stable: each module's tests keep their order


@pytest.fixture
def local_ray(request):
    """The Ray modules' local Ray (``ray_helpers.LOCAL_RAY``): one for the modules that ask for
    it, shut down before the first test of a module that does not (``pytest_runtest_teardown``
    below); the asking module is pickled by value."""
    from ray_helpers import SHARED

    return SHARED.get(request.module)


def _uses_local_ray(item) -> bool:
    """Whether a test of ``item``'s module asks for ``local_ray``."""
    return any("local_ray" in other.fixturenames for other in item.session.items
               if getattr(other, "module", None) is item.module)


def pytest_runtest_teardown(item, nextitem):
    """The shared local Ray ends where its modules end: with the last test before a module that
    does not use it (a module's fixtures end there too), or with the session's last test."""
    import sys

    helpers = sys.modules.get("ray_helpers")
    if helpers is None or helpers.SHARED._started is None:
        return
    if nextitem is None or (nextitem.module is not item.module and not _uses_local_ray(nextitem)):
        helpers.SHARED.stop()


def pytest_sessionfinish(session):
    import sys

    helpers = sys.modules.get("ray_helpers")
    if helpers is not None:
        helpers.SHARED.stop()

