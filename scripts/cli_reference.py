"""Write docs/cli.md, the command-line reference, from the typer app (reasonaudio/cli.py).

    python scripts/cli_reference.py            # rewrite docs/cli.md
    python scripts/cli_reference.py --check    # rewrite nothing; exit 1 when the page differs

Every command of `bench` (groups walked in name order), its help text, and every argument and
option with its type, default and help, read from click's parameter objects (never from the
rendered `--help`, whose layout follows the terminal's width), so the page is the same on every
machine. Hidden commands and options are left out, as `--help` leaves them out.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGE = ROOT / "docs" / "cli.md"

INTRO = """# Command-line reference

Every `bench` command with its arguments and options, written from the typer app in
`reasonaudio/commands/` by `python scripts/cli_reference.py` (the test suite runs its `--check`, so the
page cannot drift; edit the help texts there). Errors a user can cause end in one `error:` line
and exit code 2.
"""


def commands(group: Any, path: tuple[str, ...] = ("bench",)) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, command) for every visible command under ``group``, groups before their commands,
    names in alphabetical order."""
    subs = getattr(group, "commands", None)
    yield path, group
    for name in sorted(subs or {}):
        cmd = subs[name]
        if not getattr(cmd, "hidden", False):
            yield from commands(cmd, (*path, name))


def cell(text: Any) -> str:
    """One markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def type_of(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    label = param.display_type(ctx).strip("<>")
    from reasonaudio.commands.app import Number

    rule = getattr(param.callback, "__wrapped__", None)  # typer keeps the callback it wraps
    if isinstance(rule, Number):  # the rule every numeric option is read by
        label = f"{label} {rule}".strip()
    elif label.endswith(" range"):
        low, high = param.min, param.max
        bounds = [f">= {low:g}" if low is not None else "", f"<= {high:g}" if high is not None else ""]
        label = f"{label[:-len(' range')]} {' '.join(b for b in bounds if b)}".strip()
    repeat = getattr(param, "multiple", False) and not label.startswith("list[")
    return label + (" (repeat)" if repeat else "")


def default_of(param: Any) -> str:
    if param.required:
        return "required"
    value = param.default
    if callable(value) or value is None or value == () or value == []:
        return "-"
    if getattr(param, "is_flag", False) and param.secondary_opts:
        return f"`{param.opts[0] if value else param.secondary_opts[0]}`"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"`{value}`"


def names_of(param: Any) -> str:
    if param.param_type_name == "argument":
        return f"`{param.name.upper()}` (argument)"
    names = [*param.opts, *param.secondary_opts]
    return ", ".join(f"`{n}`" for n in names)


def help_of(param: Any) -> str:
    text = getattr(param, "help", None) or ""
    if getattr(param, "envvar", None):
        envvars = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar)
        text += f" Environment: {', '.join(f'`{e}`' for e in envvars)}."
    return cell(text.strip())


def usage(path: tuple[str, ...], cmd: Any) -> str:
    pieces = [" ".join(path), "[OPTIONS]"]
    for param in cmd.params:
        if param.param_type_name == "argument" and not getattr(param, "hidden", False):
            pieces.append(param.name.upper() if param.required else f"[{param.name.upper()}]")
    return " ".join(pieces)


SHARED_AT_LEAST = 2
"""An option spelled, typed, defaulted and explained alike in this many commands is described
once, under "Options shared by several commands", and each command links to it."""


def row(param: Any, ctx: Any) -> tuple[str, str, str, str]:
    return names_of(param), cell(type_of(param, ctx)), default_of(param), help_of(param)


def table(rows: list[tuple[str, str, str, str]]) -> list[str]:
    return (["| argument / option | type | default | meaning |", "|---|---|---|---|"]
            + [f"| {' | '.join(r)} |" for r in rows] + [""])


def shared_rows(root: Any, ctx_class: Any) -> list[tuple[str, str, str, str]]:
    """The optional options at least :data:`SHARED_AT_LEAST` commands share, in first-seen order
    (a required option stays in its command's own table)."""
    seen: dict[tuple[str, str, str, str], int] = {}
    for path, cmd in commands(root):
        if getattr(cmd, "commands", None):
            continue
        ctx = ctx_class(cmd, info_name=path[-1])
        for p in cmd.params:
            if p.param_type_name == "option" and not p.required and not getattr(p, "hidden", False):
                key = row(p, ctx)
                seen[key] = seen.get(key, 0) + 1
    return [key for key, n in seen.items() if n >= SHARED_AT_LEAST]


def section(path: tuple[str, ...], cmd: Any, ctx_class: Any,
            shared: list[tuple[str, str, str, str]]) -> list[str]:
    depth = min(len(path) + 1, 4)
    lines = [f"{'#' * depth} `{' '.join(path)}`", ""]
    if cmd.help:
        lines += [inspect.cleandoc(cmd.help), ""]
    subs = getattr(cmd, "commands", None)
    if subs:  # a group: its commands follow below, each with its own help
        names = [n for n in sorted(subs) if not getattr(subs[n], "hidden", False)]
        return lines + ["Commands: " + ", ".join(f"[`{n}`](#{anchor((*path, n))})" for n in names) + ".", ""]
    lines += [f"`{usage(path, cmd)}`", ""]
    ctx = ctx_class(cmd, info_name=path[-1])
    rows = [row(p, ctx) for p in cmd.params if not getattr(p, "hidden", False)]
    own = [r for r in rows if r not in shared]
    if own:
        lines += table(own)
    common = [r[0].split(",")[0] for r in rows if r in shared]
    if common:
        lines += [f"Also: {', '.join(common)} ([shared options](#{SHARED_ANCHOR})).", ""]
    return lines


SHARED_TITLE = "Options shared by several commands"
SHARED_ANCHOR = "options-shared-by-several-commands"


def anchor(path: tuple[str, ...]) -> str:
    """GitHub's anchor of a heading `` `bench a b` ``."""
    return "-".join(path)


def render() -> str:
    from typer._click.core import Context
    from typer.main import get_command

    from reasonaudio.cli import app

    root = get_command(app)
    shared = shared_rows(root, Context)
    out = [INTRO]
    for path, cmd in commands(root):
        out += section(path, cmd, Context, shared)
    out += [f"## {SHARED_TITLE}", "", f"Options that {SHARED_AT_LEAST} or more commands take with the "
            "same meaning and default:", ""] + table(shared)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 when docs/cli.md differs")
    args = ap.parse_args(argv)
    text = render()
    current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else None
    if current == text:
        return 0
    if args.check:
        print(f"{PAGE.relative_to(ROOT)}: differs from the typer app (run python scripts/cli_reference.py)")
        return 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"{PAGE.relative_to(ROOT)}: rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
