"""Every plot keeps its legends and titles inside the figure with the longest names the retriever
registry can make and many retrievers, and one report gives each retriever its own colour
(issue 44: plots)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg", force=True)
from matplotlib.figure import Figure  # noqa: E402

from reasonaudio.evaluation import plots  # noqa: E402
from reasonaudio.evaluation.condition_scores import ConditionScores, plot_vs_snr  # noqa: E402
from reasonaudio.evaluation.embeddings import ProjectionQuery  # noqa: E402
from reasonaudio.evaluation.failures import KIND_NAMES, Breakdown, FailureRecord  # noqa: E402
from reasonaudio.evaluation.results import Results, RetrieverResult  # noqa: E402
from reasonaudio.evaluation.robustness import Cell, Robustness, RetrieverRobustness, plot_robustness  # noqa: E402
from reasonaudio.querylang.ablation import ABLATIONS  # noqa: E402
from reasonaudio.models.captioners import captioner_names  # noqa: E402
from reasonaudio.models.names import COMBINERS, two_stage_name  # noqa: E402
from reasonaudio.models.registry import RECORDS  # noqa: E402
from reasonaudio.retrievers.registry import spec_for  # noqa: E402
from reasonaudio.tasks.base import FORMULATIONS  # noqa: E402

TASKS = ("negation", "order", "overlap", "duration", "mix")


def longest_names(n: int = 20) -> list[str]:
    """``n`` valid retriever names, the longest the registry's grammar makes: two-stage pipelines
    of the longest captioners and text models, their hybrids and fusions, ablations, each asked
    in the longest formulation (``NAME@FORMULATION``)."""
    texts = sorted((r.name for r in RECORDS if r.has_text), key=lambda s: (-len(s), s))[:4]
    caps = sorted(captioner_names(), key=lambda s: (-len(s), s))[:3]
    stages = [two_stage_name(c, t) for c in caps for t in texts]
    combined = [f"hybrid:{stages[0]},soft:yamnet-enrolled"]
    combined += [f"{k}:{a},{b}" for k in COMBINERS if k != "hybrid"
                 for a, b in zip(stages, stages[1:])]
    longest_form = max(FORMULATIONS, key=len)
    names = [*combined, *stages, *(a.retriever for a in ABLATIONS)]
    names = sorted(set(names), key=lambda s: (-len(s), s))[:n - 2]
    out = [f"{names[0]}@{longest_form}", f"{names[1]}@{longest_form}", *names]
    for name in out:
        spec_for(name.partition("@")[0])  # every one is a name the registry reads
    return out


NAMES = longest_names()


def _result(name: str, rng: random.Random) -> RetrieverResult:
    per_query = {f"q-{i:04d}": {m: float(rng.random() < 0.5) for m in
                                ("acc@1", "ndcg@10", "recall@10", "mrr", "hnsr@10", "tfr@10", "mc_acc")}
                 for i in range(20)}
    return RetrieverResult(name, per_query, {q: TASKS[i % 5] for i, q in enumerate(per_query)})


@pytest.fixture(scope="module")
def results() -> Results:
    rng = random.Random(44)
    return Results({"n_clips": 100, "n_queries": 20}, {}, {n: _result(n, rng) for n in NAMES})


@pytest.fixture
def drawn(monkeypatch):
    """Every figure saved in the test, laid out, with the extents of its legends and titles, as
    its last save drew it (what the file holds: a save may fit the legend again and redraw)."""
    seen: dict[Figure, dict] = {}
    real = Figure.savefig

    def check(fig, *args, **kwargs):
        fig.canvas.draw()
        legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        titles = [t for t in [fig._suptitle, *(ax.title for ax in fig.axes),
                              *(ax.xaxis.label for ax in fig.axes)] if t is not None and t.get_text()]
        seen[fig] = {"figure": fig.bbox.frozen(),
                         "axes": [ax.get_window_extent().frozen() for ax in fig.axes if ax.axison],
                         "legends": [lg.get_window_extent().frozen() for lg in legends],
                         "titles": [(t.get_text(), t.get_window_extent().frozen()) for t in titles]}
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", check)
    return seen


def _inside(inner, outer, slack: float = 1.0) -> bool:
    return (inner.x0 >= outer.x0 - slack and inner.x1 <= outer.x1 + slack
            and inner.y0 >= outer.y0 - slack and inner.y1 <= outer.y1 + slack)


def _assert_fits(seen: dict[Figure, dict], legends: int = 1) -> None:
    assert seen, "no figure was saved"
    for fig in seen.values():
        assert len(fig["legends"]) >= legends
        for box in fig["legends"]:
            assert _inside(box, fig["figure"]), (box, fig["figure"])
        for box in fig["axes"]:  # laid out, not collapsed by a legend that took the room
            assert box.width > 40 and box.height > 40 and _inside(box, fig["figure"]), box
        for text, box in fig["titles"]:
            assert _inside(box, fig["figure"]), (text, box, fig["figure"])


def test_the_names_are_long_and_many():
    assert len(NAMES) == 20 and len(set(NAMES)) == 20
    assert max(map(len, NAMES)) > 100


def test_metrics_by_task_legend_inside(results, tmp_path, drawn):
    assert plots.plot_metrics_by_task(results, tmp_path) is not None
    _assert_fits(drawn)


def test_projection_legend_and_title_inside(tmp_path, drawn):
    rng = np.random.default_rng(0)
    items = [ProjectionQuery("q-0", TASKS[0], "dog barking, then a siren " * 4, rng.normal(size=8),
                             [f"c{j}" for j in range(6)], ["positive"] * 3 + ["hard_negative"] * 3,
                             rng.normal(size=(6, 8)))]
    assert plots.plot_projection(NAMES[0], items, tmp_path / "one") is not None
    items5 = items + [ProjectionQuery(f"q-{i}", TASKS[i], "rain", rng.normal(size=8), ["a", "b"],
                                      ["positive", "hard_negative"], rng.normal(size=(2, 8)))
                      for i in range(1, 5)]
    assert plots.plot_projection(NAMES[1], items5, tmp_path / "five") is not None
    _assert_fits(drawn)


def test_failures_legend_inside(results, tmp_path, drawn):
    rng = random.Random(1)
    records = tuple(FailureRecord(name, q, t, rng.choice(KIND_NAMES), "clip-0")
                    for name, r in results.runs.items() for q, t in r.task_of.items()
                    if rng.random() < 0.6)
    queries = {name: {t: 4 for t in TASKS} for name in NAMES}
    b = Breakdown(tuple(NAMES), TASKS, records, queries)
    assert len(b.kinds_present()) == len(KIND_NAMES)
    assert plots.plot_failures(b, tmp_path)
    _assert_fits(drawn)


def test_robustness_legend_inside(tmp_path, drawn):
    forms = FORMULATIONS
    rows = [RetrieverRobustness(name, [Cell(f, 20, {"acc@1": 0.5, "ndcg@10": 0.6},
                                            {"acc@1": 0.4, "ndcg@10": 0.5},
                                            {"acc@1": 1.0, "ndcg@10": 1.0}) for f in forms], 0.85, 17, 20)
            for name in NAMES]
    assert plot_robustness(Robustness(rows), tmp_path)
    _assert_fits(drawn)


def test_snr_legend_inside(tmp_path, drawn):
    conds = ["snr0", "snr10", "clean"]
    values = {n: {c: {"acc@1": 0.5, "ndcg@10": 0.5, "mc_acc": 0.5} for c in conds} for n in NAMES}
    perception = {"detected:yamnet-enrolled": {c: {"events_f1": 0.4, "tagging_f1": 0.6} for c in conds}}
    assert plot_vs_snr(ConditionScores(conds, list(NAMES), values, perception), tmp_path)
    _assert_fits(drawn)


def test_training_curve_legends_inside(tmp_path, drawn):
    from reasonaudio.train.card import plot_curve

    history = [{"epoch": e, "val_acc@1": 0.1 * e, "val_mc_clip": 0.5, "val_mc_text": 0.6}
               for e in range(1, 6)]
    plot_curve(tmp_path / "curve.png", SimpleNamespace(step_losses=list(np.linspace(3, 1, 200)),
                                                       history=history))
    _assert_fits(drawn, legends=2)


@pytest.mark.filterwarnings("ignore:constrained_layout not applied")  # the shrunk figure, drawn
def test_a_save_fits_again_a_legend_its_layout_moved_out(tmp_path, drawn):
    """legend_below fits once and leaves the confirmation to the save's own layout: a figure
    changed after it (here shrunk, the legend past its edges) is fitted again before its file is
    written, and the file holds the fitted figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    handles = [ax.plot([0, 1], [i, i])[0] for i in range(len(NAMES))]
    plots.legend_below(fig, handles, NAMES, 4)
    fitted = tuple(fig.get_size_inches())
    fig.set_size_inches(2, 1.5)
    plots._save(fig, tmp_path / "moved.png")
    _assert_fits(drawn)
    assert tuple(fig.get_size_inches()) >= fitted
    plt.close(fig)


def test_one_report_gives_every_retriever_its_own_colour():
    styles = plots.retriever_styles(reversed(NAMES[:15]))
    assert len({s.colour for s in styles.values()}) == 15  # as many colours as the palette has
    assert styles == plots.retriever_styles(NAMES[:15])    # the order given does not matter
    many = plots.retriever_styles([*NAMES, "oracle", "random"])
    assert len({(s.colour, s.hatch, s.linestyle) for s in many.values()}) == len(many)
    assert len({s.colour for s in many.values()}) == len(plots.PALETTE)
    # the pair the hash once gave one colour
    pair = plots.retriever_styles(["random", "two-stage:oracle-caption+minilm"])
    assert pair["random"].colour != pair["two-stage:oracle-caption+minilm"].colour


def test_the_report_passes_one_mapping_to_every_plot(tmp_path, monkeypatch):
    """metrics_by_task and robustness draw one retriever in one colour (write_plots' mapping)."""
    import evalkit

    from reasonaudio.evaluation import report

    bench, res = evalkit.evaluated_fakes(tmp_path / "bench")
    got: dict[str, dict] = {}
    real_bars, real_rob = report.plot_report, report.plot_robustness

    def bars(*args, **kwargs):
        got["bars"] = args[4] if len(args) > 4 else kwargs.get("styles")
        return real_bars(*args, **kwargs)

    def rob(r, out, styles=None):
        got["rob"] = styles
        return real_rob(r, out, styles)

    monkeypatch.setattr(report, "plot_report", bars)
    monkeypatch.setattr(report, "plot_robustness", rob)
    report.run_report(bench, tmp_path / "plots")
    assert got["bars"] == got["rob"] == plots.retriever_styles(res.runs)
