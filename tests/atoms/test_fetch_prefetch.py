"""A fetch asks ``apt-get`` for its Debian archives in two runs of many (the largest first), not one
run per package: each run loads the package lists first, about a second of CPU. Offline, with
fake clients: the batches bring the same archives, so the bank is the same bytes, and a batch
that fails (a pin gone from the archive) leaves each package to download on its own."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_fetch_fixtures import FakeClients, manual_deb, recipe_lines, tone

from reasonaudio.atoms.fetch import download
from reasonaudio.atoms.fetch.fetch import PACKAGE_WORKERS, Fetcher
from reasonaudio.atoms.fetch.recipes import load_recipes

NO_PROBLEMS = {"debian": None, "pypi": None, "npm": None, "fluidsynth": None}
N_PACKAGES = PACKAGE_WORKERS + 2
"""more Debian packages than the first batch holds, so both batches run"""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def no_retry_wait(monkeypatch) -> None:
    monkeypatch.setattr(download, "RETRY_WAIT_S", 0.0)


@pytest.fixture()
def world(tmp_path: Path):
    """Debian packages of different sizes, one sound each, their recipes and fake clients."""
    debs, packages, atoms = {}, [], []
    for i in range(N_PACKAGES):
        name, sound = f"pkg{i}", tone(0.3 + 0.2 * i, freq=300 + 100 * i)
        deb = manual_deb(tmp_path / f"src-{name}.deb", [(f"./usr/share/{name}/s.wav", sound, None)],
                         compression="xz")
        debs[name] = ("1.0-1", deb)
        packages.append({"registry": "debian", "name": name, "version": "1.0-1", "size": deb.stat().st_size,
                         "sha256": sha(deb.read_bytes()), "copyright": None})
        atoms.append({"label": f"sound {'abcdefgh'[i]}", "registry": "debian", "package": name,
                      "path": f"usr/share/{name}/s.wav", "sha256": sha(sound)})
    recipe = tmp_path / "recipes.jsonl"
    recipe.write_text(recipe_lines(packages, atoms))
    return {"tmp": tmp_path, "recipe": recipe, "debs": debs, "packages": packages}


def fetch(world, dest: Path, clients: FakeClients):
    return Fetcher(dest, load_recipes(world["recipe"]), runner=clients, environment=NO_PROBLEMS).run()


def bank_bytes(dest: Path) -> dict[str, bytes]:
    return {str(p.relative_to(dest)): p.read_bytes() for p in sorted(dest.rglob("*.wav"))}


def apt_runs(clients: FakeClients) -> list[list[str]]:
    return [c[3:] for c in clients.calls if c[:2] == ["apt-get", "download"]]


def test_the_archives_come_in_two_batches_largest_first(world) -> None:
    clients = FakeClients(debs=world["debs"])
    summary = fetch(world, world["tmp"] / "bank", clients)
    assert [a.status for a in summary.atoms] == ["ok"] * N_PACKAGES
    by_size = [p["name"] for p in sorted(world["packages"], key=lambda p: -p["size"])]
    specs = [f"{name}=1.0-1" for name in by_size]
    assert apt_runs(clients) == [specs[:PACKAGE_WORKERS], specs[PACKAGE_WORKERS:]]
    assert all(p.fetched for p in summary.packages)
    assert not list((world["tmp"] / "bank" / ".cache" / "debian").glob(".tmp-*"))


def test_a_failed_batch_leaves_each_package_to_download_on_its_own(world) -> None:
    """One package's pinned version is gone: its batch brings nothing, every package of it is
    fetched by its own run (pinned, then current), and the bank is what a fetch without batches
    makes."""
    gone = sorted(world["packages"], key=lambda p: -p["size"])[0]["name"]
    debs = {**world["debs"], gone: ("1.0-2", world["debs"][gone][1])}
    clients = FakeClients(debs=debs)
    summary = fetch(world, world["tmp"] / "bank", clients)
    assert [a.status for a in summary.atoms] == ["ok"] * N_PACKAGES
    runs = apt_runs(clients)  # the singles run beside the second batch: compared as sets
    batches = [r for r in runs if len(r) > 1]
    assert [len(b) for b in batches] == [PACKAGE_WORKERS, N_PACKAGES - PACKAGE_WORKERS]
    singles = {r[0].split("=")[0] for r in runs if len(r) == 1}
    assert singles == {spec.split("=")[0] for spec in batches[0]}  # the failed batch's packages
    reference = FakeClients(debs=debs)
    one_by_one = Fetcher(world["tmp"] / "ref", load_recipes(world["recipe"]), runner=reference,
                         environment=NO_PROBLEMS)
    one_by_one._start_prefetch = lambda jobs: None  # type: ignore[method-assign]
    one_by_one.run()
    assert all(len(r) == 1 for r in apt_runs(reference))
    assert bank_bytes(world["tmp"] / "bank") == bank_bytes(world["tmp"] / "ref")
