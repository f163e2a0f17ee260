"""Write docs/performance.md from the records the benchmark scripts write.

    python scripts/performance_page.py                 # rewrite the page from benchmarks/results/
    python scripts/performance_page.py --run KEY ...   # rerun those benchmark commands first
    python scripts/performance_page.py --check         # rewrite nothing; exit 1 on any difference

Each script in benchmarks/ writes ``benchmarks/results/<key>.json`` when it runs with the
arguments :data:`record.COMMANDS` gives for that key (``benchmarks/record.py``). The page is one
table, a row per figure: its value, its ratio against the named baseline (or the target), the
target and whether it was met, the machine, the package versions, the date and the command. A
key without a measured record is a "not measured" row (rewriting the page writes a record saying
so). ``--check`` fails when a benchmark script has no key, a key has no record or a record
another command, or the page is not what the records give; it never compares timings.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import record  # noqa: E402  (benchmarks/record.py: the one list of commands)

PAGE = ROOT / "docs" / "performance.md"
HELPERS = {"record"}
"""modules in benchmarks/ that are not benchmark scripts"""

SECTIONS: dict[str, tuple[str, ...]] = {
    "Install, main job and tests": ("install_size", "main_job_time", "main_detector_cost",
                                    "main_job_time-paper", "suite_speed"),
    "Building and rendering": ("build_speed", "verify_speed", "render_speed", "condition_render_speed",
                               "condition_export_memory"),
    "Query language": ("parse_speed", "free_phrasings", "semantic_speed", "semantic_calibration"),
    "Qdrant and evaluation": ("store_speed", "search_speed", "search_speed-real-payload", "eval_speed"),
    "Models and ingest": ("ingest_overhead", "ingest_overhead-yamnet", "model_throughput", "tagger_speed",
                          "ray_ingest", "detect_overhead"),
    "Training and the explorer": ("train_speed", "train_detector_speed", "serve_speed"),
}
"""page section -> record keys, in page order; every key of record.COMMANDS is in one"""

INTRO = """# Performance

Every speed, size and cost figure the other pages refer to, one row per figure, written by
`python scripts/performance_page.py` from the records the scripts in `benchmarks/` write
(`benchmarks/results/<key>.json`); `--check` (run by the test suite) fails when the page is not what
the records give or a benchmark script has no record here. *Ratio* is the value divided by what it
names (a baseline measured in the same run, or the target); *met* says whether the run reached the
target; *run* is the machine and versions (keys into the lists at the end) and the date;
**not measured** rows have no run recorded yet. `python scripts/performance_page.py --run KEY`
reruns the command of a key (the record's file name) and rewrites the page.
"""


def scripts() -> list[str]:
    return sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem not in HELPERS)


def stub(key: str) -> dict[str, Any]:
    script, _ = record.COMMANDS[key]
    return {"format": record.FORMAT, "key": key, "script": script, "command": record.command_of(key),
            "status": "not measured", "figures": []}


def path_of(key: str) -> Path:
    return record.RESULTS / f"{key}.json"


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def load(key: str) -> dict[str, Any] | None:
    path = path_of(key)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def problems() -> list[str]:
    """What --check refuses besides the page itself: scripts without a key, keys without a
    record, records of another command, keys without a section."""
    out = []
    keyed = {script for script, _ in record.COMMANDS.values()}
    out += [f"benchmarks/{s}.py: no command in benchmarks/record.py COMMANDS" for s in scripts() if s not in keyed]
    out += [f"benchmarks/record.py COMMANDS[{k!r}]: no script benchmarks/{s}.py"
            for k, (s, _) in record.COMMANDS.items() if s not in scripts()]
    placed = [k for keys in SECTIONS.values() for k in keys]
    out += [f"{k}: in no section of scripts/performance_page.py" for k in record.COMMANDS if k not in placed]
    out += [f"{k}: in SECTIONS but not a command" for k in placed if k not in record.COMMANDS]
    for key in record.COMMANDS:
        rec = load(key)
        if rec is None:
            out.append(f"{shown(path_of(key))}: missing (run python scripts/performance_page.py)")
        elif rec.get("command") != record.command_of(key) or rec.get("key") != key:
            out.append(f"{shown(path_of(key))}: recorded for {rec.get('command')!r}, "
                       f"not {record.command_of(key)!r}")
        elif rec.get("status") == "measured" and not rec.get("figures"):
            out.append(f"{shown(path_of(key))}: measured, but no figures")
    return out


def number(value: float | None) -> str:
    if value is None:
        return ""
    if value == int(value) and abs(value) < 1e6:
        return f"{int(value):,}"
    a = abs(value)
    if a >= 100:
        return f"{value:,.0f}"
    if a >= 10:
        return f"{value:.1f}"
    if a >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


class Keys:
    """Short keys (M1, V1, ...) for the machines and version sets the records name."""

    def __init__(self, prefix: str, describe: Any) -> None:
        self.prefix, self.describe, self.seen = prefix, describe, {}

    def __call__(self, value: dict[str, Any]) -> str:
        text = self.describe(value)
        if text not in self.seen:
            self.seen[text] = f"{self.prefix}{len(self.seen) + 1}"
        return self.seen[text]

    def legend(self) -> list[str]:
        return [f"- {key}: {text}" for text, key in self.seen.items()]


def machine_text(m: dict[str, Any]) -> str:
    memory = f", {m['memory_gib']:g} GiB memory" if m.get("memory_gib") else ""
    return f"{m.get('cpu', 'unknown CPU')}, {m.get('cores')} cores{memory}"


def versions_text(v: dict[str, Any]) -> str:
    names = [n for n in v if n not in ("lock", "reasonaudio")]
    return ", ".join(f"{n} {v[n]}" for n in names if v[n]) + (f"; lock {v['lock']}" if v.get("lock") else "")


def summary_of(script: str) -> str:
    """The first sentence of a benchmark script's docstring: what it measures."""
    doc = (BENCHMARKS / f"{script}.py").read_text(encoding="utf-8")
    if '"""' not in doc:
        return script
    first = " ".join(doc.split('"""')[1].strip().split("\n\n")[0].split()).replace("``", "`")
    first = first.split(". ")[0].rstrip(".")
    return first.split(": ")[0] if len(first) > 90 else first


def rows_of(key: str, rec: dict[str, Any], machines: Keys, versions: Keys) -> list[str]:
    command = f"`{cell(rec['command'])}`"
    if rec.get("status") != "measured":
        return [f"| {cell(summary_of(rec['script']))} | **not measured** | | | | | {command} |"]
    out = []
    for i, f in enumerate(rec["figures"]):
        first = i == 0
        met = "" if f.get("met") is None else ("yes" if f["met"] else "**no**")
        ratio = "" if f.get("ratio") is None else f"{number(f['ratio'])} x {f.get('baseline') or ''}".strip()
        run = f"{machines(rec['machine'])} {versions(rec['versions'])}, {rec['date']}" if first else ""
        out.append("| " + " | ".join([
            cell(f["name"]), cell(f"{number(f['value'])} {f['unit']}".strip()), cell(ratio),
            cell(f.get("target") or ""), met, run, command if first else ""]) + " |")
    return out


def render(records: dict[str, dict[str, Any]]) -> str:
    machines, versions = Keys("M", machine_text), Keys("V", versions_text)
    out = [INTRO]
    for title, keys in SECTIONS.items():
        out += [f"## {title}", "",
                "| figure | value | ratio | target | met | run | command |",
                "|---|---|---|---|---|---|---|"]
        for key in keys:
            out += rows_of(key, records[key], machines, versions)
        out.append("")
    out += ["## Machines", "", *machines.legend(), "", "## Versions", "", *versions.legend()]
    return "\n".join(out).rstrip("\n") + "\n"


def current_records(write_stubs: bool) -> dict[str, dict[str, Any]]:
    out = {}
    for key in record.COMMANDS:
        rec = load(key)
        if rec is None or rec.get("command") != record.command_of(key):
            rec = stub(key)
            if write_stubs:
                record.RESULTS.mkdir(exist_ok=True)
                path_of(key).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        out[key] = rec
    return out


def run(keys: list[str]) -> int:
    for key in keys:
        if key not in record.COMMANDS:
            print(f"error: --run {key!r}: no such key (keys: {', '.join(record.COMMANDS)})", file=sys.stderr)
            return 2
    for key in keys:
        script, args = record.COMMANDS[key]
        print(f"running {record.command_of(key)}", file=sys.stderr)
        rc = subprocess.run([sys.executable, str(BENCHMARKS / f"{script}.py"), *args], cwd=ROOT).returncode
        if rc != 0:
            print(f"error: {record.command_of(key)} exited with {rc}; its record is unchanged", file=sys.stderr)
            return rc
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", nargs="+", metavar="KEY", default=[], help="rerun these benchmark commands first")
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on a difference")
    args = ap.parse_args(argv)
    if args.check:
        found = problems()
        text = render(current_records(write_stubs=False))
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            found.append(f"{shown(PAGE)}: differs from the records (run python scripts/performance_page.py)")
        for line in found:
            print(line)
        return 1 if found else 0
    if args.run:
        rc = run(args.run)
        if rc:
            return rc
    text = render(current_records(write_stubs=True))
    PAGE.write_text(text, encoding="utf-8")
    print(f"{shown(PAGE)}: rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
