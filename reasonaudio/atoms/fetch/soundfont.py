"""Sampled-instrument atoms: a FluidR3_GM program played by fluidsynth from a tiny MIDI phrase.

FluidR3_GM (Debian ``fluid-soundfont-gm``, MIT) is a sampled soundfont: a render is a recording of
real instrument samples. Each atom plays a fixed phrase (an arpeggio and a held chord, shifted by
``transpose`` semitones so bass instruments sit in their range) or, for percussion, one General
MIDI drum note four times on channel 10. The command follows the research note:
``fluidsynth -ni -q -g 0.8 -r 44100 -F out.wav FluidR3_GM.sf2 in.mid`` (argument list, no shell).

A render's bytes depend on the fluidsynth version; the soundfont's own sha256 is the hard pin,
the render's sha256 is compared and a difference is reported, not fatal.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.process import Runner, last_line, run
from reasonaudio.atoms.fetch.recipes import Render

PHRASE_VERSION = "phrase-v1"
TICKS = 480                     # per quarter note; 120 bpm -> 0.5 s per quarter
RENDER_RATE = 44_100
GAIN = 0.8
_ARPEGGIO = (0, 4, 7, 12)       # C E G C', a quarter note each
_CHORD = (0, 4, 7)              # then C E G together for two beats
_BASE_NOTE = 60                 # middle C
_DRUM_HITS = 4
FLUIDSYNTH_HINT = ("fluidsynth not found: the soundfont-rendered instrument atoms are skipped; "
                   "install it (Debian: `apt-get install fluidsynth`) and fetch again")


def fluidsynth_problem() -> str | None:
    return FLUIDSYNTH_HINT if shutil.which("fluidsynth") is None else None


def fluidsynth_version() -> str | None:
    """``fluidsynth --version``'s first line (a render's bytes depend on it), None without it."""
    exe = shutil.which("fluidsynth")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def _vlq(n: int) -> bytes:
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def phrase_midi(render: Render) -> bytes:
    """A format-0 MIDI file playing the fixed phrase for ``render`` (deterministic bytes)."""
    events: list[tuple[int, bytes]] = [(0, b"\xff\x51\x03" + (500_000).to_bytes(3, "big"))]
    if render.drum_note is not None:
        ch = 9
        events.append((0, bytes([0xC0 | ch, render.program & 0x7F])))
        for i in range(_DRUM_HITS):
            t = i * TICKS
            events += [(t, bytes([0x90 | ch, render.drum_note, 100])),
                       (t + TICKS // 2, bytes([0x80 | ch, render.drum_note, 0]))]
        end = _DRUM_HITS * TICKS + TICKS
    else:
        ch = 0
        if render.bank < 128:
            events += [(0, bytes([0xB0 | ch, 0, render.bank & 0x7F])),
                       (0, bytes([0xB0 | ch, 32, 0]))]
        events.append((0, bytes([0xC0 | ch, render.program & 0x7F])))
        base = _BASE_NOTE + render.transpose
        for i, step in enumerate(_ARPEGGIO):
            note = max(0, min(127, base + step))
            t = i * TICKS
            events += [(t, bytes([0x90 | ch, note, 96])), (t + TICKS - 24, bytes([0x80 | ch, note, 0]))]
        t0 = len(_ARPEGGIO) * TICKS
        for step in _CHORD:
            note = max(0, min(127, base + step))
            events += [(t0, bytes([0x90 | ch, note, 90])), (t0 + 2 * TICKS, bytes([0x80 | ch, note, 0]))]
        end = t0 + 2 * TICKS + 2 * TICKS   # two beats of release tail
    events.append((end, b"\xff\x2f\x00"))
    track = bytearray()
    last = 0
    for t, msg in sorted(events, key=_event_order):
        track += _vlq(t - last) + msg
        last = t
    header = b"MThd" + struct.pack(">IHHH", 6, 0, 1, TICKS)
    return header + b"MTrk" + struct.pack(">I", len(track)) + bytes(track)


def _event_order(ev: tuple[int, bytes]) -> tuple[int, int]:
    """By tick; at one tick: set-up messages, note-offs, note-ons, end of track."""
    t, msg = ev
    if msg[:2] == b"\xff\x2f":
        return (t, 3)
    status = msg[0] & 0xF0
    return (t, 1 if status == 0x80 else 2 if status == 0x90 else 0)



def render_wav(sf2: Path, render: Render, runner: Runner = run) -> bytes:
    """fluidsynth's WAV bytes for ``render`` played from ``sf2``."""
    with tempfile.TemporaryDirectory(prefix="reasonaudio-render-") as tmp:
        work = Path(tmp)
        (work / "in.mid").write_bytes(phrase_midi(render))
        res = runner(["fluidsynth", "-ni", "-q", "-g", str(GAIN), "-r", str(RENDER_RATE),
                      "-F", str(work / "out.wav"), str(sf2), str(work / "in.mid")], work)
        out = work / "out.wav"
        if res.returncode != 0 or not out.is_file() or out.stat().st_size <= 44:
            why = last_line(res.stderr) or last_line(res.stdout) or "no output file"
            raise FetchError(f"{sf2}: fluidsynth render of bank {render.bank} program "
                             f"{render.program} failed ({why})")
        return out.read_bytes()
