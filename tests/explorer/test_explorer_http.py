"""`bench serve` over HTTP: every page, byte ranges, 404s for ids that name nothing, path
traversal, escaping of hostile text, and nothing written (in-process client, plus one real
process for the command line)."""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="bench serve needs starlette and uvicorn (core dependencies)")

from starlette.testclient import TestClient  # noqa: E402

from explorer_support import (CAPTION_MODEL, DETECTED_NAME, EXTRA_NAME, TWO_STAGE_NAME,  # noqa: E402
                              build_explorer_bench, table_rows)
from reasonaudio.evaluation.metrics import first_rank  # noqa: E402
from reasonaudio.evaluation.results import fingerprint, run_path  # noqa: E402
from reasonaudio.evaluation.runs import read_trec  # noqa: E402
from reasonaudio.dataset.view import load_benchmark  # noqa: E402
from reasonaudio.explorer.ranges import RangeError, parse_range  # noqa: E402
from reasonaudio.explorer.server import build_app, child_server, is_loopback  # noqa: E402

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> Path:
    return build_explorer_bench(tmp_path_factory.mktemp("explorer") / "bench")


@pytest.fixture(scope="module")
def client(bench_dir):
    app = build_app(load_benchmark(bench_dir))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
    app.state.catalog.close()


@pytest.fixture(scope="module")
def bench(bench_dir):
    return load_benchmark(bench_dir)


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "qdrant" not in p.parts}


def test_every_page_type_answers(client, bench):
    q = bench.queries[0]
    choice = next(c for c in bench.choices if c.query_id == q.id)
    pages = ["/", f"/query/{q.id}", f"/clip/{choice.positive}", "/failures?retriever=oracle&task=all",
             f"/failures?retriever=random&task={q.task}", "/compare?a=oracle&b=random&task=all",
             "/compare?a=bag-of-sounds&b=oracle&task=order&metric=ndcg@10", "/search", "/compare",
             "/?task=mix",
             "/failures", "/failures?task=mix", "/failures?retriever=random&task=all&kind=other",
             f"/search?q={q.id}&retriever=oracle", "/plot/metrics_by_task.png", "/static/explorer.js"]
    for page in pages:
        r = client.get(page)
        assert r.status_code == 200, (page, r.text[:300])
        assert "Traceback" not in r.text


def test_overview_lists_every_saved_result_and_its_formulation(client):
    html = client.get("/").text
    names = [row[0][1] for row in table_rows(html, "results")]
    for name in ("oracle", "bag-of-sounds", "random", EXTRA_NAME, TWO_STAGE_NAME, DETECTED_NAME):
        assert name in names
        assert f'<option value="{name}"' in html  # the compare form's two selects
    assert ('<span class="seg">two-stage:</span><wbr><span class="seg">oracle-caption+</span><wbr>'
            '<span class="seg">bm25</span>') in html  # a long name wraps after : and + only
    assert "<th data-sort=\"text\">formulation</th>" in html and "<td>paraphrase</td>" in html
    assert html.count('<form action="/compare"') == 1 and ">vs " not in html  # no link per pair
    assert '<img src="/plot/metrics_by_task.png"' in html
    for link in ("/download/results.json", "/download/table.csv?task=order", "/download/failures.json",
                 "/download/run?retriever=two-stage%3Aoracle-caption%2Bbm25"):
        assert f'href="{link}"' in html


def test_overview_gives_every_figure_an_interval_and_marks_the_best(client, bench):
    from reasonaudio.evaluation.intervals import metric_interval
    from reasonaudio.evaluation.metrics import METRICS, OVERALL
    from reasonaudio.evaluation.results import load_results

    results = load_results(bench).runs
    html = client.get("/", params={"task": "order"}).text
    assert '<b aria-current="page">order</b>' in html  # the task switcher
    rows = table_rows(html, "results")
    assert [r[0][1] for r in rows] == list(results)
    for name, row in zip(results, rows):
        cells = [c for c in row if "data-value" in c[0]][:len(METRICS)]
        for m, (attrs, text) in zip(METRICS, cells):
            value = results[name].per_task["order"][m]
            lo, hi = metric_interval(results[name], "order", m)
            assert text.startswith(f"{value:.3f}") and f"[{lo:.3f}, {hi:.3f}]" in text, (name, m, text)
            best = max(r.per_task["order"][m] for r in results.values())
            assert ("best" in attrs.get("class", "").split()) == (value == best), (name, m)
    assert metric_interval(results["oracle"], OVERALL, "acc@1")[0] < 1.0  # Wilson: never [1, 1]


def test_best_marks_ties_and_gaps():
    from reasonaudio.explorer.catalog import best_marks

    assert best_marks([[0.5, None], [0.5, 0.1], [0.2, float("nan")]]) == \
        [[True, False], [True, True], [False, False]]
    assert best_marks([]) == []


def test_query_page_shows_the_pair_and_ranks_from_the_saved_runs(client, bench, bench_dir):
    from reasonaudio.evaluation.failures import breakdown

    failure_records = breakdown(bench).of("bag-of-sounds")
    run = read_trec(run_path(bench, "bag-of-sounds"))
    for q in bench.queries[:5]:
        choice = next(c for c in bench.choices if c.query_id == q.id)
        html = client.get(f"/query/{q.id}").text
        for cid in (choice.positive, choice.negative):
            assert f'data-src="/audio/{cid}.wav"' in html
        assert html.count('<svg class="timeline"') >= 2
        pos = first_rank(run.ranking(q.id), {choice.positive})
        neg = first_rank(run.ranking(q.id), {choice.negative})
        link = '<a href="#top-2"><span class="seg">bag-of-sounds</span></a>'
        row = html.split(link, 1)[1].split("</tr>", 1)[0]
        cells = [c.split("</td>")[0].rsplit(">", 1)[1] for c in row.split("<td data-value=")[1:4]]
        kind = next((r.kind for r in failure_records if r.qid == q.id), "")
        assert f'<td class="kind">' in row and (kind in row if kind else "&amp;kind=" not in row)
        shown = [str(int(x)) if x != float("inf") else "-" for x in
                 (first_rank(run.ranking(q.id), bench.qrels[q.id]), pos, neg)]
        assert cells == shown
        assert "hits sortable" in html  # every retriever's top 10 with its checks


def _top_section(html: str, name: str) -> str:
    """The top-10 section of retriever ``name`` on a query page."""
    part = html.split(f'<table class="hits sortable" data-retriever="{name}">', 1)[1]
    return part.split("</table>", 1)[0]


def test_query_page_rows_show_what_each_retriever_saw(client, bench):
    from markupsafe import escape

    from reasonaudio.models.captioners import oracle_caption

    q = next(q for q in bench.queries if q.task == "negation")
    html = client.get(f"/query/{q.id}").text
    two_stage = _top_section(html, TWO_STAGE_NAME)
    top = read_trec(run_path(bench, TWO_STAGE_NAME)).ranking(q.id)[:10]
    assert two_stage.count('<div class="seen caption">') == len(top) == 10
    for cid in top:  # the caption its collection holds (oracle-caption: the true caption)
        assert f'<q class="caption">{escape(oracle_caption(bench.clip_by_id[cid]))}</q>' in two_stage
    detected = _top_section(html, DETECTED_NAME)
    assert detected.count('<div class="seen events">') == 10 and "caption" not in detected
    assert "detected by detected:yamnet" in detected and ">0.80</text>" in detected  # confidences
    first = read_trec(run_path(bench, DETECTED_NAME)).ranking(q.id)[0]
    row = detected.split(f'<tr class="', 1)[1].split("</tr>", 1)[0]
    seen_svg = row.split('<div class="seen events">', 1)[1]
    assert seen_svg.count('class="event ') == len(bench.clip_by_id[first].events) - 1  # the fixture drops one
    oracle = _top_section(html, "oracle")
    assert '<div class="seen' not in oracle  # the oracle reads the truth: no view of its own


def test_hit_rows_carry_the_verdict_and_outline_the_breaking_events(client, bench):
    from reasonaudio.logic import conjuncts, labels
    from reasonaudio.explorer.verdicts import checks, verdict

    for q in [q for q in bench.queries if q.task in ("negation", "order")][:4]:
        html = client.get(f"/query/{q.id}").text
        rows = table_rows("<table>" + _top_section(html, "bag-of-sounds") + "</table>")
        for cid, row in zip(read_trec(run_path(bench, "bag-of-sounds")).ranking(q.id)[:10], rows):
            marks = checks(q.logic, bench.clip_by_id[cid].events)
            cells = {a.get("class", ""): t for a, t in row}
            assert any(k.startswith("verdict") and t == verdict(marks) for k, t in cells.items()), (cid, row)
        choice = next(c for c in bench.choices if c.query_id == q.id)
        negative = bench.clip_by_id[choice.negative]
        marks = checks(q.logic, negative.events)
        bad = [i for i, ok in enumerate(marks) if not ok]
        assert len(bad) == 1  # a hard negative breaks one constraint
        side = html.split('<div class="side hard-negative"', 1)[1].split("</svg>", 1)[0]
        outlined = {e.label for e in negative.events if e.label in labels(conjuncts(q.logic)[bad[0]])}
        assert side.count('class="event mentioned breaks"') == len(outlined) >= 1
        assert f"breaks C{bad[0] + 1}" in side


def test_the_pair_shares_one_time_scale_and_prints_its_measurements(client, bench):
    import re

    for q in bench.queries[:6]:
        choice = next(c for c in bench.choices if c.query_id == q.id)
        html = client.get(f"/query/{q.id}").text
        pair = html.split('<div class="pair">', 1)[1].split("<h2>", 1)[0]
        scales = re.findall(r'data-px-per-s="([0-9.]+)"', pair)
        assert len(scales) == 2 and scales[0] == scales[1]
        longest = max(bench.clip_by_id[c].duration for c in (choice.positive, choice.negative))
        assert float(scales[0]) == pytest.approx((600 - 170 - 34) / longest, abs=1e-3)
        below = html.split('<h2>ranks under each retriever</h2>', 1)[1]
        hits = re.findall(r'data-px-per-s="([0-9.]+)"', below)
        assert len(set(hits)) == 1  # every hit's timeline on one scale too
        for cid in (choice.positive, choice.negative):
            clip = bench.clip_by_id[cid]
            assert f"<p class=\"meta\">{clip.duration:.2f} s" in pair
            facts = pair.split(f'data-clip="{cid}"', 1)[1].split("</table>", 1)[0]
            for e in clip.events:
                if e.label in q.text or f"<th scope=\"row\">{e.label}</th>" in facts:
                    assert f"({e.offset - e.onset:.2f} s)" in facts


def test_free_text_search_marks_hits_by_the_parsed_logic(client, bench):
    for q in bench.queries[:5]:
        html = client.get("/search", params={"q": q.text, "retriever": "oracle"}).text
        assert ">relevant</th>" not in html  # free text: no qrels, so no "relevant: no"
        verdicts = [t for row in table_rows(html.split('id="hits-heading"', 1)[1]) for a, t in row
                    if a.get("class", "").startswith("verdict")]
        assert verdicts and all(v == "meets the query" for v in verdicts), (q.text, verdicts)
    random_html = client.get("/search", params={"q": bench.queries[0].text, "retriever": "random"}).text
    rows = table_rows(random_html.split('id="hits-heading"', 1)[1])
    for row in rows:
        marks = [t for a, t in row if t in ("✓", "✗")]
        verdict = next(t for a, t in row if a.get("class", "").startswith("verdict"))
        broken = [f"C{i}" for i, m in enumerate(marks, 1) if m == "✗"]
        assert verdict == ("meets the query" if not broken else "breaks " + ", ".join(broken))
    with_id = client.get("/search", params={"q": bench.queries[0].id, "retriever": "oracle"}).text
    assert ">relevant</th>" in with_id  # a query id: its qrels, and the verdict beside them


def test_failure_breakdown_counts_equal_the_saved_values(client, bench):
    from reasonaudio.evaluation.failures import KIND_NAMES
    from reasonaudio.evaluation.results import load_results

    results = load_results(bench).runs
    for task in ("all", "negation", "order", "duration"):
        html = client.get("/failures", params={"task": task}).text
        heads = [h.split(">", 1)[1] for h in html.split('<table class="breakdown sortable"', 1)[1]
                 .split("</thead>", 1)[0].split("</th>")[:-1]]
        kinds = [h for h in heads if h in KIND_NAMES]
        assert kinds == [k for k in KIND_NAMES if k in kinds]  # the library's priority order
        rows = table_rows(html, "breakdown")
        assert [r[0][1] for r in rows] == list(results)
        for name, row in zip(results, rows):
            qids = [q for q, t in results[name].task_of.items() if task == "all" or t == task]
            wrong = sum(1 for q in qids if results[name].per_query[q].get("acc@1", 0.0) < 1.0)
            queries, failed, *counts = [int(t) for _, t in row[1:]]
            assert (queries, failed) == (len(qids), wrong), (task, name)
            assert sum(counts) == failed
    bd_rows = table_rows(client.get("/failures", params={"task": "all"}).text, "breakdown")
    bag = next(r for r in bd_rows if r[0][1] == "bag-of-sounds")
    for attrs, text in bag[3:]:
        listed = client.get("/failures", params={"retriever": "bag-of-sounds", "task": "all",
                                                 "kind": attrs["data-kind"]}).text
        rows = table_rows(listed, "failures")
        assert len(rows) == int(text) and all(r[2][1] == attrs["data-kind"] for r in rows)


def test_failures_of_one_retriever_name_what_ranked_first(client, bench):
    from reasonaudio.evaluation.failures import breakdown

    records = {r.qid: r for r in breakdown(bench).of("bag-of-sounds")}
    rows = table_rows(client.get("/failures", params={"retriever": "bag-of-sounds", "task": "all"}).text,
                      "failures")
    assert len(rows) == len(records)
    for row in rows:
        rec = records[row[0][1]]
        assert row[2][1] == rec.kind and row[3][1] == (rec.top_clip or "-")  # the verdict columns first
        assert row[4][1] == "; ".join(f"C{b.index} {b.node}" for b in rec.broken)


def test_compare_runs_the_paired_test_of_bench_compare(client, bench):
    from reasonaudio.evaluation.compare import compare
    from reasonaudio.evaluation.results import load_results

    runs = load_results(bench).runs
    tests = compare(runs["bag-of-sounds"], runs[TWO_STAGE_NAME])
    html = client.get("/compare", params={"a": "bag-of-sounds", "b": TWO_STAGE_NAME, "task": "order"}).text
    rows = table_rows(html, "paired")
    assert [r[0][1] for r in rows] == list(tests.groups)
    for row in rows:
        group = row[0][1]
        assert int(row[1][1]) == tests.tests[(group, "acc@1")].n
        for i, m in enumerate(tests.metrics):
            p = row[2 + 4 * i + 3][1]
            assert p.split()[0] == f"{tests.p_holm[(group, m)]:.4f}"
            assert p.endswith("*") == tests.significant(group, m)
    assert '<b aria-current="page">order</b>' in html  # the task switcher
    for side in ("a", "b"):
        assert f'<select name="{side}"' in html
    assert client.get("/compare").status_code == 200  # the first two retrievers
    same = client.get("/compare", params={"a": "oracle", "b": "oracle"})
    assert same.status_code == 200 and "nothing to test" in same.text


def test_downloads_are_the_saved_files_and_tables(client, bench, bench_dir, tmp_path):
    import csv
    import io

    from reasonaudio.evaluation.failures import breakdown
    from reasonaudio.evaluation.metrics import METRICS
    from reasonaudio.evaluation.report import write_results_json
    from reasonaudio.evaluation.results import load_results

    r = client.get("/download/results.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.headers["content-disposition"] == 'attachment; filename="results.json"'
    write_results_json(tmp_path / "eval.json", load_results(bench))  # what bench eval --json writes
    assert r.json() == json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    run = client.get("/download/run", params={"retriever": TWO_STAGE_NAME})
    assert run.status_code == 200 and run.content == run_path(bench, TWO_STAGE_NAME).read_bytes()
    saved_run = run_path(bench, TWO_STAGE_NAME).name
    assert run.headers["content-disposition"] == f'attachment; filename="{saved_run}"'
    table = client.get("/download/table.csv", params={"task": "mix"})
    assert table.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(table.text)))
    saved = load_results(bench).runs
    assert [row["retriever"] for row in rows] == list(saved)
    for row in rows:
        for m in METRICS:
            assert float(row[m]) == pytest.approx(saved[row["retriever"]].per_task["mix"][m], abs=1e-6)
            assert float(row[f"{m}_low"]) <= float(row[m]) + 1e-9 <= float(row[f"{m}_high"]) + 2e-9
    assert client.get("/download/failures.json").json() == json.loads(json.dumps(breakdown(bench).to_json()))


def test_downloads_name_a_results_file_they_cannot_read(bench_dir, tmp_path):
    """A saved results file that cannot be read is in no download, and each says so: listed
    under "unreadable" in the JSON documents, in a row of its own in the CSV tables, counted in
    a header; the overview says so beside the links. The readable results are as they were."""
    import csv
    import io

    from reasonaudio.evaluation.results import load_results
    from reasonaudio.explorer.downloads import UNREADABLE, UNREADABLE_HEADER, UNREADABLE_ROW

    copy = tmp_path / "cut"
    shutil.copytree(bench_dir, copy, ignore=shutil.ignore_patterns("qdrant"))
    (copy / "results" / "random.json").write_text('{"name": "random", "per_qu', encoding="utf-8")
    app = build_app(load_benchmark(copy))
    try:
        with TestClient(app) as c:
            answers = {u: c.get(u) for u in ("/download/results.json", "/download/failures.json",
                                              "/download/table.csv?task=mix", "/")}
    finally:
        app.state.catalog.close()
    for url in ("/download/results.json", "/download/failures.json"):
        doc = answers[url].json()
        assert len(doc[UNREADABLE]) == 1 and "random.json" in doc[UNREADABLE][0], url
        assert "invalid JSON" in doc[UNREADABLE][0] and answers[url].headers[UNREADABLE_HEADER] == "1"
    assert "random" not in answers["/download/results.json"].json()["runs"]
    rows = list(csv.DictReader(io.StringIO(answers["/download/table.csv?task=mix"].text)))
    saved = [n for n in load_results(load_benchmark(bench_dir)).runs if n != "random"]
    assert [r["retriever"] for r in rows[:-1]] == saved
    last = rows[-1]["retriever"]
    assert last.startswith(UNREADABLE_ROW) and "random.json" in last and rows[-1]["acc@1"] == ""
    assert answers["/download/table.csv?task=mix"].headers[UNREADABLE_HEADER] == "1"
    page = answers["/"].text
    assert "None of them holds the 1 saved results file that cannot be read" in page


def test_downloads_without_an_unreadable_file_carry_no_note(client):
    from reasonaudio.explorer.downloads import UNREADABLE, UNREADABLE_HEADER

    for url in ("/download/results.json", "/download/failures.json", "/download/table.csv"):
        r = client.get(url)
        assert r.status_code == 200 and UNREADABLE_HEADER not in r.headers, url
    assert UNREADABLE not in client.get("/download/results.json").json()
    assert "cannot be read" not in client.get("/").text


def test_the_first_model_search_shows_a_loading_state(client, bench):
    import time

    params = {"q": bench.queries[4].text, "retriever": TWO_STAGE_NAME}
    first = client.get("/search", params=params)
    assert first.status_code == 202 and "loading model two-stage:oracle-caption+bm25" in first.text
    status_url = f'/search/status?retriever={quote(TWO_STAGE_NAME)}'
    assert f'data-status="{status_url}"' in first.text.replace("%3A", "%3A")
    deadline = time.monotonic() + 120
    status = {"retriever": TWO_STAGE_NAME}
    while (state := client.get("/search/status", params=status).json()["state"]) == "loading":
        assert time.monotonic() < deadline, "the model never finished loading"
        time.sleep(0.05)
    assert state == "ready"
    done = client.get("/search", params=params)
    assert done.status_code == 200 and 'id="loaded-note"' in done.text and 'class="play"' in done.text
    again = client.get("/search", params=params)
    assert again.status_code == 200 and 'id="loaded-note"' not in again.text  # said once
    failed = client.get("/search", params={"q": "x", "retriever": DETECTED_NAME})
    assert failed.status_code == 202  # the fixture's detected collection cannot be searched ...
    deadline = time.monotonic() + 120
    while client.get("/search/status", params={"retriever": DETECTED_NAME}).json()["state"] == "loading":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    told = client.get("/search", params={"q": "x", "retriever": DETECTED_NAME})
    assert told.status_code == 400 and "bench detect" in told.text  # ... which the page says, once


def test_clip_page_has_audio_timelines_and_captions(client, bench):
    clip = bench.clips[3]
    html = client.get(f"/clip/{clip.id}").text
    assert f'src="/audio/{clip.id}.wav"' in html
    assert html.count('<svg class="timeline"') == 2  # true and detected
    assert "detected:yamnet" in html and f"({CAPTION_MODEL})" in html
    assert "confidence 0.80" in html
    assert 'class="event other"' not in html  # no query: every event drawn alike


def test_clip_page_seen_from_a_query(client, bench):
    from reasonaudio.logic import labels

    q = next(q for q in bench.queries if q.task == "negation")
    choice = next(c for c in bench.choices if c.query_id == q.id)
    html = client.get(f"/clip/{choice.negative}", params={"q": q.id}).text
    assert f'href="/query/{q.id}"' in html and "(its hard negative)" in html and "not relevant" in html
    legend = html.split("<h2>the sound</h2>", 1)[0]
    assert legend.count('<span class="no">✗</span>') == 1  # a hard negative breaks one constraint
    clip = bench.clip_by_id[choice.negative]
    if set(clip.labels) - set(labels(q.logic)):
        assert 'class="event other"' in html
    assert client.get(f"/clip/{choice.negative}", params={"q": "q-nope"}).status_code == 404
    assert f'href="/clip/{choice.positive}?q={q.id}"' in client.get(f"/query/{q.id}").text


def test_audio_is_the_rendered_clip_with_byte_ranges(client, bench, tmp_path):
    from reasonaudio.render.clips import render_clip_to_file

    clip = bench.clips[0]
    render_clip_to_file(bench, clip.id, tmp_path / "x.wav")
    want = (tmp_path / "x.wav").read_bytes()
    full = client.get(f"/audio/{clip.id}.wav")
    assert full.status_code == 200 and full.headers["content-type"] == "audio/wav"
    assert full.headers["accept-ranges"] == "bytes" and full.content == want
    n = len(want)
    for header, start, end in (("bytes=0-99", 0, 99), ("bytes=100-", 100, n - 1),
                               ("bytes=-50", n - 50, n - 1), (f"bytes=10-{n + 500}", 10, n - 1)):
        r = client.get(f"/audio/{clip.id}.wav", headers={"Range": header})
        assert r.status_code == 206, header
        assert r.headers["content-range"] == f"bytes {start}-{end}/{n}"
        assert r.content == want[start:end + 1]
    head = client.head(f"/audio/{clip.id}.wav")
    assert head.status_code == 200 and int(head.headers["content-length"]) == n


@pytest.mark.parametrize("header,status", [
    ("bytes=abc", 400), ("bytes=5-2", 400), ("items=0-1", 400), ("bytes=-", 400), ("bytes 0-1", 400),
    ("bytes=0-1,4-5", 416), ("bytes=99999999-", 416), ("bytes=-0", 416), ("bytes=1-2-3", 400),
    ("bytes=--1", 400), ("bytes=0x10-", 400), ("bytes=" + "9" * 40 + "-", 400),
])
def test_malformed_and_unsatisfiable_ranges_are_refused(client, bench, header, status):
    r = client.get(f"/audio/{bench.clips[0].id}.wav", headers={"Range": header})
    assert r.status_code == status, header
    assert not r.headers["content-type"].startswith("audio/")
    if status == 416:
        assert r.headers["content-range"].startswith("bytes */")


def test_parse_range_reads_exactly():
    assert (parse_range("bytes=0-0", 10).start, parse_range("bytes=0-0", 10).end) == (0, 0)
    assert parse_range("bytes=-20", 10).start == 0
    with pytest.raises(RangeError):
        parse_range("bytes=10-", 10)


@pytest.mark.parametrize("path", [
    "/clip/nope", "/query/q-9999", "/audio/clip-99999.wav", "/failures?retriever=nope&task=all",
    "/failures?retriever=oracle&task=nope", "/compare?a=oracle&b=nope", "/plot/nope.png",
    "/compare?a=oracle&b=random&metric=nope", "/failures?kind=nope", "/failures?retriever=oracle&kind=x",
    "/download/run?retriever=nope", "/download/run", "/download/table.csv?task=nope", "/?task=nope",
    "/search/status?retriever=nope", "/search/status", "/no/such/page",
    "/clip/..%2Fmanifest.json", "/clip/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/plot/..%2Fmanifest.json",
    "/plot/..%2F..%2Fmanifest.json", "/static/../catalog.py", "/static/%2e%2e/catalog.py",
    "/static/..%2F..%2Fcli.py", "/audio/..%2Fcorpus.wav", "/audio/..%2F..%2Fmanifest.json.wav",
    "/search?q=dog&retriever=..%2F..%2Fetc",
])
def test_ids_that_name_nothing_are_404_pages(client, path):
    r = client.get(path)
    assert r.status_code == 404, path
    assert "Not found" in r.text and "Traceback" not in r.text
    assert '"format_version"' not in r.text and "import " not in r.text


def test_hostile_text_is_escaped_everywhere(client, tmp_path, bench_dir):
    r = client.get("/query/" + HOSTILE)
    assert r.status_code == 404 and "<script>alert" not in r.text and "<img src=x" not in r.text
    for path in ("/query/", "/clip/", "/audio/"):
        r = client.get(path + "<img src=x onerror=alert(1)>" + (".wav" if path == "/audio/" else ""))
        assert r.status_code == 404 and "<img src=x" not in r.text
        assert "&lt;img src=x onerror=alert(1)&gt;" in r.text
    r = client.get("/search", params={"q": HOSTILE, "retriever": "random"})
    assert r.status_code == 200 and "<script>alert" not in r.text and "<img src=x" not in r.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in r.text
    r = client.get("/search", params={"q": HOSTILE, "retriever": "oracle"})
    assert r.status_code == 400 and "<script>alert" not in r.text

    # a benchmark whose own texts are hostile (edited on purpose, loaded unverified)
    copy = tmp_path / "hostile"
    shutil.copytree(bench_dir, copy, ignore=shutil.ignore_patterns("qdrant"))
    lines = (copy / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["text"] = HOSTILE
    first["formulations"] = {"paraphrase": HOSTILE}
    lines[0] = json.dumps(first)
    (copy / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    edited = load_benchmark(copy, verify=False)
    for path in (copy / "results").glob("*.json"):  # the saved results, as if evaluated on the edit
        obj = json.loads(path.read_text(encoding="utf-8"))
        obj["fingerprint"] = fingerprint(edited)
        path.write_text(json.dumps(obj), encoding="utf-8")
    from reasonaudio.evaluation.results import load_result, save_result

    base = load_result(edited, "random")  # a saved result whose name is hostile too
    save_result(edited, replace(base, name=HOSTILE))
    shutil.copyfile(run_path(edited, "random"), run_path(edited, HOSTILE))
    app = build_app(edited)
    with TestClient(app, raise_server_exceptions=False) as c:
        for page in ("/", f"/query/{first['_id']}", f"/failures?retriever=random&task={first['task']}",
                     "/compare?a=oracle&b=random", "/failures?task=all",
                     f"/failures?retriever={quote(HOSTILE)}",
                     f"/compare?a={quote(HOSTILE)}&b=random"):
            r = c.get(page)
            assert r.status_code == 200, page
            assert "<script>alert" not in r.text and "<img src=x" not in r.text, page
            assert "&lt;script&gt;" in r.text, page
        assert "paraphrase" in c.get(f"/query/{first['_id']}").text
        run = c.get("/download/run", params={"retriever": HOSTILE})
        assert run.status_code == 200 and "<" not in run.headers["content-disposition"]  # a file-safe slug
        assert HOSTILE in c.get("/download/table.csv").text.replace('""', '"')  # CSV, not HTML: as it is
    app.state.catalog.close()


def test_search_runs_a_retriever_of_the_store_with_checks(client, bench):
    q = bench.queries[1]
    html = client.get("/search", params={"q": q.text, "retriever": "oracle", "k": "5"}).text
    assert "table class=\"hits sortable\"" in html and "C1</th>" in html
    assert html.count('<td class="yes">') >= 1
    names = client.get("/search").text
    for name in ("oracle", "bag-of-sounds", "random", "detected:yamnet", CAPTION_MODEL):
        assert f'<option value="{name}"' in names
    assert client.get("/search", params={"q": "dog", "k": "0"}).status_code == 400
    assert client.get("/search", params={"q": "dog", "k": "ten"}).status_code == 400


def test_nothing_is_written(bench_dir, client, bench):
    before = _tree_digest(bench_dir)
    for page in ("/", f"/query/{bench.queries[2].id}", f"/clip/{bench.clips[5].id}",
                 f"/audio/{bench.clips[5].id}.wav", f"/search?q={bench.queries[2].id}&retriever=oracle",
                 "/failures", "/failures?retriever=random&task=order", "/compare?a=oracle&b=random",
                 "/download/results.json", "/download/table.csv", "/download/failures.json",
                 "/download/run?retriever=oracle", "/search/status?retriever=oracle"):
        assert client.get(page).status_code == 200
    assert _tree_digest(bench_dir) == before


def test_loopback_hosts():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("example.org")


def test_the_command_serves_and_refuses_bad_input(bench_dir, tmp_path):
    import urllib.request

    with child_server(bench_dir) as url:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/") as r:
            assert r.status == 200 and b"ReasonAudio explorer" in r.read()
        port = url.rsplit(":", 1)[1]
        taken = subprocess.run([sys.executable, "-m", "reasonaudio.cli", "serve", "--data", str(bench_dir),
                                "--port", port], capture_output=True, text=True, timeout=120)
        assert taken.returncode == 2 and taken.stderr.count("\n") == 1
        assert f"cannot listen on 127.0.0.1:{port}" in taken.stderr
    missing = subprocess.run([sys.executable, "-m", "reasonaudio.cli", "serve", "--data", str(tmp_path / "none")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_a_benchmark_without_results_or_store_is_shown_and_left_alone(tmp_path):
    from reasonaudio.generator.build import BuildParams, build_benchmark

    root = tmp_path / "bare"
    build_benchmark(root, BuildParams(atoms="synthetic", seed=0, n_clips=24, n_queries=10))
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    bench = load_benchmark(root)
    app = build_app(bench)
    with TestClient(app, raise_server_exceptions=False) as c:
        assert "No saved results" in c.get("/").text
        q = bench.queries[0]
        assert c.get(f"/query/{q.id}").status_code == 200
        clip_page = c.get(f"/clip/{bench.clips[0].id}").text
        assert "no detected collection" in clip_page and "bench ingest" in clip_page
        assert "the store has no collection to search" in c.get("/search", params={"q": "x"}).text
        assert c.get("/failures", params={"retriever": "oracle"}).status_code == 404
    app.state.catalog.close()
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # no store folder made


def test_another_host_only_with_a_warning(bench_dir, monkeypatch):
    import socket

    from typer.testing import CliRunner

    import reasonaudio.explorer.server as server
    from reasonaudio.cli import app

    served = []
    monkeypatch.setattr(server, "listen", lambda host, port: server.Listening(socket.socket(), f"http://{host}:{port}/"))
    monkeypatch.setattr(server, "run", lambda app_, listening: (served.append(listening.url), listening.sock.close()))
    out = CliRunner().invoke(app, ["serve", "--data", str(bench_dir), "--host", "192.0.2.7", "--port", "9"])
    assert out.exit_code == 0 and served == ["http://192.0.2.7:9/"]
    assert "warning: listening on 192.0.2.7, not loopback" in out.output
    out = CliRunner().invoke(app, ["serve", "--data", str(bench_dir)])
    assert out.exit_code == 0 and served[-1] == "http://127.0.0.1:8765/" and "warning" not in out.output


def test_without_a_browser_the_reason_is_one_line(monkeypatch, tmp_path):
    import reasonaudio.explorer.browser as browser

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(browser, "SYSTEM_BIN", tmp_path)
    reason = browser.find_chromium()
    assert isinstance(reason, str) and "\n" not in reason
    assert "chromium" in reason and "scripts/install.sh test" in reason
