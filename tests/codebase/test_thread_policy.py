"""The thread policy: models get every core, but a count the user chose is never raised."""

from __future__ import annotations

import pytest

from reasonaudio import runtime

pytestmark = pytest.mark.fast


@pytest.fixture
def fresh_policy(monkeypatch):
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    monkeypatch.setattr(runtime, "_torch_threads_applied", False)
    for name in runtime.TORCH_THREADS_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(runtime, "model_threads", lambda cap=None: 3)
    yield torch
    torch.set_num_threads(before)


def test_first_model_load_uses_every_core(fresh_policy):
    torch = fresh_policy
    torch.set_num_threads(1)
    runtime.set_torch_threads()
    assert torch.get_num_threads() == 3


def test_a_later_choice_is_not_overridden_by_the_next_load(fresh_policy):
    torch = fresh_policy
    runtime.set_torch_threads()
    torch.set_num_threads(1)  # the user runs two jobs side by side
    runtime.set_torch_threads()  # another model loads
    assert torch.get_num_threads() == 1


def test_the_environment_variable_wins(fresh_policy, monkeypatch):
    torch = fresh_policy
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    runtime.set_torch_threads()
    assert torch.get_num_threads() == 1
