"""Every int and float option of every command is read by one rule (``commands/app.py``'s
:class:`Number`, its ``callback=``): finite and in range, checked as the option is read. The
app is walked, so an option added without a rule fails here; then each is given -1, inf, nan
(and a value past its upper bound) on the command line: one line naming the option, exit 2."""

from __future__ import annotations

import math
from typing import Any, Iterator, get_args

import pytest
import typer
from typer.main import get_command

from hostile import bench, one_line_error
from reasonaudio.cli import app
from reasonaudio.commands.app import Number

pytestmark = pytest.mark.fast


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subs = getattr(group, "commands", None)
    if not subs:
        yield path, group
    for name, cmd in sorted((subs or {}).items()):
        yield from _commands(cmd, (*path, name))


def _numeric(param: Any) -> bool:
    annotation = param.type_descriptor.annotation
    kinds = {annotation, *get_args(annotation)}
    return bool(kinds & {int, float}) and not getattr(param, "is_flag", False)


def numeric_params() -> list[tuple[tuple[str, ...], Any]]:
    return [(path, p) for path, cmd in _commands(get_command(app)) for p in cmd.params if _numeric(p)]


def _rule(param: Any) -> Number | None:
    rule = getattr(param.callback, "__wrapped__", None)  # typer wraps the callback it was given
    return rule if isinstance(rule, Number) else None


def _name(param: Any) -> str:
    return max(param.opts, key=len) if param.param_type_name == "option" else param.name.upper()


CASES = numeric_params()
IDS = [f"{' '.join(path)} {_name(p)}" for path, p in CASES]


def test_the_walk_sees_every_numeric_option():
    """The walk reads the real app (option groups expanded): the options the bugs were found on
    are among them."""
    seen = set(IDS)
    for case in ("build --seed", "sweep perception --seed", "train-detector --lr", "search -k",
                 "ingest --workers", "eval --batch-size", "interleave --share"):
        assert case in seen, case
    assert len(CASES) >= 45, len(CASES)


@pytest.mark.parametrize("path,param", CASES, ids=IDS)
def test_every_numeric_option_has_the_rule(path, param):
    rule = _rule(param)
    assert rule is not None, f"bench {' '.join(path)} {_name(param)}: no Number rule (callback=)"
    assert param.min is None and param.max is None, "typer's own bounds: a second rule, other words"
    if not param.required and param.default is not None:
        assert rule.admits(param.default), f"the default {param.default} breaks its own rule {rule}"


@pytest.mark.parametrize("path,param", CASES, ids=IDS)
def test_out_of_range_numbers_are_one_line(path, param):
    rule = _rule(param)
    assert rule is not None
    name = _name(param)
    values = ["-1", "inf", "nan", "-inf"]
    if rule.high is not None:
        values.append(str(int(rule.high) + 1))
    for value in values:
        line = one_line_error(bench(*path, name, value), f"'{name}'")
        if value == "-1" or value == values[-1] != "-inf":
            assert "must be" in line, line


def test_the_rule_reads_bounds_and_finiteness():
    share = Number(0, 1, open_low=True)
    assert str(share) == "in (0, 1]" and share.admits(1.0) and not share.admits(0.0)
    assert str(Number(0, 0.5, open_high=True)) == "in [0, 0.5)" and str(Number(1)) == ">= 1"
    for bad in (math.inf, -math.inf, math.nan):
        assert not Number().admits(bad) and not Number(0).admits(bad)
    with pytest.raises(typer.BadParameter, match=r"must be a finite number > 0, got inf"):
        Number(0, open_low=True)(math.inf)
    assert Number(1)(None) is None  # an optional option left out


def test_a_negative_seed_is_refused_before_anything_is_written(tmp_path):
    """`bench build --seed -1` built a benchmark whose random retriever then died in a
    traceback; `train-detector --lr inf` trained to NaN: both refused as the option is read."""
    one_line_error(bench("build", "--out", tmp_path / "b", "--clips", "20", "--queries", "5",
                         "--seed", "-1"), "'--seed'", "in [0, 4294967295]", "got -1")
    assert not (tmp_path / "b").exists()
    one_line_error(bench("train-detector", "--data", tmp_path / "none", "--out", tmp_path / "m",
                         "--lr", "inf"), "'--lr'", "finite number > 0")
    assert not (tmp_path / "m").exists()
