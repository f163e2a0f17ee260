"""The docs' comparative sentences, written from `bench replicate --json` (never typed by hand).

    python scripts/claims_page.py --replicate data/replicate.json [--check]

Every block of claims in README.md and docs/*.md sits between

    <!-- claims:NAME -->
    ...
    <!-- /claims:NAME -->

and is rewritten here: one sentence per record of the claims registry
(``reasonaudio/experiments/claims.py``) whose ``doc`` is that page (``NAME`` is the page's stem;
README's is ``README``; ``all``: every claim), saying on how many of the run's seeds the claim holds ("on only k of
K" where fewer than all), with its mean effect; a claim whose retrievers the run did not evaluate
says so. ``--check`` rewrites nothing and exits 1 when a block differs from what the JSON gives.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reasonaudio.experiments.claims import CLAIMS, METRIC_LABELS, Claim  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ALL = "all"
"""the block name that holds every claim of the registry"""
BLOCK = re.compile(r"(<!-- claims:(?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- /claims:(?P=name) -->)", re.S)


def holds_phrase(holds: int, seeds: int) -> str:
    """``holds on all 3 seeds`` / ``holds on only 2 of 3 seeds`` / ``holds on none of the 3 seeds``."""
    if holds == seeds:
        return f"holds on all {seeds} seeds"
    if holds == 0:
        return f"holds on none of the {seeds} seeds"
    return f"holds on only {holds} of {seeds} seeds"


def sentences(claims: list[Claim], rows: dict[str, dict[str, Any]]) -> list[str]:
    """The measured claims, one line per pair, metric and seed count: on how many seeds they
    hold ("only k of K" where fewer than all), each task with its mean effect."""
    lines: dict[tuple[str, str, str, str, str], list[str]] = {}
    for c in claims:
        row = rows[c.key]
        effect = "" if row["mean_effect"] is None else f" {row['mean_effect']:+.3f}"
        lines.setdefault((c.a, c.direction, c.b, c.metric, holds_phrase(row["holds"], row["seeds"])),
                         []).append(f"{c.task}{effect}")
    return [f"- `{a}` {d} `{b}` ({METRIC_LABELS[m]}): {phrase}: {', '.join(tasks)}."
            for (a, d, b, m, phrase), tasks in lines.items()]


def not_run(claims: list[Claim], evaluated: list[str]) -> list[str]:
    """One line for the claims the run could not test: how many, and the retrievers it lacked."""
    if not claims:
        return []
    lacked = sorted({n for c in claims for n in (c.a, c.b) if n not in evaluated})
    return [f"- not in this run: {len(claims)} claims on {', '.join(f'`{n}`' for n in lacked)}."]


def command_of(doc: dict[str, Any]) -> str:
    """The `bench replicate` command that printed ``doc``."""
    args = ["bench", "replicate", "--data-seeds", ",".join(str(s["build"]) for s in doc["seeds"]),
            "--clips", str(doc["size"]["clips"]), "--queries", str(doc["size"]["queries"])]
    if doc["reference"]["seed"]:
        args += ["--reference-seed", str(doc["reference"]["seed"])]
    if doc["atoms"] != "auto":
        args += ["--atoms", doc["atoms"]]
    for name in doc["retrievers"]:
        args += ["-r", name]
    if doc.get("detector_model"):
        args += ["--detector-model", doc["detector_model"]]
    return shlex.join(args + ["--json", "replicate.json"])


def block(doc: dict[str, Any], page: str) -> str:
    rows = {r["key"]: r for r in doc["claims"]}
    mine = [c for c in CLAIMS if page == ALL or Path(c.doc).stem == page]
    if not mine:
        raise SystemExit(f"error: no claim of the registry is on the page {page!r}")
    lines = [f"`{command_of(doc)}`:", ""]
    lines += sentences([c for c in mine if c.key in rows], rows)
    lines += not_run([c for c in mine if c.key not in rows], doc["retrievers"])
    return "\n".join(lines) + "\n"


def rewrite(text: str, doc: dict[str, Any]) -> str:
    return BLOCK.sub(lambda m: m.group(1) + block(doc, m.group("name")) + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    from reasonaudio.errors import DataError
    from reasonaudio.experiments.replicate import FORMAT
    from reasonaudio.fileio import read_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicate", type=Path, required=True, help="`bench replicate --json` output")
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on a difference")
    args = ap.parse_args(argv)
    try:
        doc = read_json(args.replicate)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        print(f"error: {args.replicate}: not a `bench replicate --json` document ({FORMAT})", file=sys.stderr)
        return 2
    changed = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        new = rewrite(text, doc)
        if new != text:
            changed.append(page)
            if not args.check:
                page.write_text(new, encoding="utf-8")
    verb = "differ from the replication" if args.check else "rewritten"
    for page in changed:
        print(f"{page.relative_to(ROOT)}: {verb}")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
