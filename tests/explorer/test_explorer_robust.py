"""`bench serve` never answers 500 for what a benchmark directory can hold: a saved run that is
corrupt, empty, or of a retriever no registry knows; a store a second explorer holds open; a
ranking with no evidence (a detected retriever that heard nothing). Each case affects only the
views that need it, and the page says which file and why (in-process client; a real second
process for the shared store)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="bench serve needs starlette and uvicorn (core dependencies)")

from starlette.testclient import TestClient  # noqa: E402

from explorer_support import DETECTED_NAME, build_explorer_bench, table_rows  # noqa: E402
from reasonaudio.dataset.view import load_benchmark  # noqa: E402
from reasonaudio.evaluation.results import load_result, run_path  # noqa: E402
from reasonaudio.evaluation.runs import Hit, read_trec, write_trec  # noqa: E402
from reasonaudio.explorer.server import build_app, child_server  # noqa: E402
from reasonaudio.store.formula import ORDER_WEIGHT, clip_orders  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return build_explorer_bench(tmp_path_factory.mktemp("explorer-robust") / "bench")


def _copy(built: Path, dest: Path) -> Path:
    """The benchmark's files copied, its store linked (read-only here: the pages never write)."""
    shutil.copytree(built, dest, ignore=shutil.ignore_patterns("qdrant"))
    os.symlink(built / "qdrant", dest / "qdrant")
    return dest


def _pages(bench) -> list[str]:
    q, clip = bench.queries[0], bench.choices[0].positive
    return ["/", f"/query/{q.id}", f"/clip/{clip}", f"/clip/{clip}?q={q.id}", "/failures", "/failures?task=mix",
            "/failures?retriever=random&task=all", "/compare", "/compare?a=random&b=oracle&task=all",
            f"/compare?a=random&b=oracle&q={q.id}", "/download/results.json", "/download/failures.json",
            "/download/table.csv", "/download/run?retriever=random", "/search", f"/spectrogram/{clip}.png"]


def _answers(root: Path) -> dict[str, tuple[int, str]]:
    bench = load_benchmark(root)
    app = build_app(bench)
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            return {p: (r.status_code, r.text if "text/html" in r.headers.get("content-type", "") else "")
                    for p in _pages(bench) for r in [client.get(p)]}
    finally:
        app.state.catalog.close()


def _break_run(root: Path, how: str) -> Path:
    bench = load_benchmark(root)
    path = run_path(bench, "random")
    if how == "corrupt":
        path.write_bytes(b"q-0000 Q0 clip-00001 one 0.5 random\n\xff\xfe not a run\n")
    elif how == "empty":
        path.write_bytes(b"")
    else:  # a run (and result) of a retriever the registry does not know
        result = json.loads((root / "results" / "random.json").read_text(encoding="utf-8"))
        result.update(name="detected:no-such-tagger", retriever="detected:no-such-tagger")
        result.setdefault("describe", {})["retriever"] = "detected:no-such-tagger"
        (root / "results" / "detected_no-such-tagger.json").write_text(json.dumps(result), encoding="utf-8")
        orphan = root / "results" / "runs" / "nobody-knows.trec"
        shutil.copyfile(path, orphan)
        return orphan
    return path


@pytest.mark.parametrize("how", ["corrupt", "empty", "unknown"])
def test_a_bad_run_file_never_makes_a_500(built, tmp_path, how):
    root = _copy(built, tmp_path / "bench")
    path = _break_run(root, how)
    answers = _answers(root)
    bad = {p: s for p, (s, _) in answers.items() if s >= 500 or s not in (200, 206) and not 400 <= s < 500}
    assert bad == {}, bad
    assert all(s == 200 for s, _ in answers.values()), {p: s for p, (s, _) in answers.items() if s != 200}
    rel = str(path.relative_to(root))
    query_page = next(text for p, (_, text) in answers.items() if p.startswith("/query/"))
    failures_page = answers["/failures?retriever=random&task=all"][1]
    if how == "corrupt":  # the pages that read the run name the file and the reason
        for page in (query_page, failures_page):
            assert f"{rel} cannot be read: not valid UTF-8" in page
    elif how == "empty":
        assert f"{rel} holds no ranking (the file is empty)" in query_page
        assert f"{rel} holds no ranking" in failures_page
    else:
        assert "detected:no-such-tagger" in answers["/"][1]  # listed with its figures, like any result
    assert "Traceback" not in "".join(text for _, text in answers.values())


def test_a_second_explorer_on_the_same_store_reads_a_copy(built, tmp_path):
    root = _copy(built, tmp_path / "bench")
    os.unlink(root / "qdrant")
    shutil.copytree(built / "qdrant", root / "qdrant", copy_function=_sparse_copy)  # its own store
    bench = load_benchmark(root)
    q = bench.queries[2]
    clip = read_trec(run_path(bench, DETECTED_NAME)).ranking(q.id)[0]
    with child_server(root) as url:
        import urllib.request

        first = {}
        for path in (f"/query/{q.id}", f"/clip/{clip}?q={q.id}"):  # the first one holds every shard
            with urllib.request.urlopen(url + path, timeout=120) as r:
                assert r.status == 200
                first[path] = r.read().decode("utf-8")
        app = build_app(bench)
        try:
            with TestClient(app, raise_server_exceptions=False) as client:
                answers = {p: client.get(p) for p in _pages(bench) + [f"/query/{q.id}", f"/clip/{clip}?q={q.id}"]}
                assert {p: r.status_code for p, r in answers.items() if r.status_code != 200} == {}
                page = answers[f"/clip/{clip}?q={q.id}"].text
                assert "another process holds this store open" in page and "a copy of its files" in page
                assert f'<h3 class="detected" data-retriever="{DETECTED_NAME}">' in page  # read from the copy
                query_page = answers[f"/query/{q.id}"].text
                seen = first[f"/query/{q.id}"].count('<div class="seen events">')
                assert query_page.count('<div class="seen events">') == seen >= 7  # what the first one shows
                search = client.get("/search", params={"q": q.id, "retriever": "oracle"})
                assert search.status_code == 200 and "table class=\"hits" in search.text
                copy = app.state.catalog.access._copy.folder
                assert copy.is_dir()
        finally:
            app.state.catalog.close()
        assert not copy.exists()  # the copy goes with the explorer


def _sparse_copy(src: str, dst: str) -> str:
    from reasonaudio.explorer.store_copy import sparse_copy_file

    sparse_copy_file(Path(src), Path(dst))
    return dst


def test_a_sparse_copy_keeps_bytes_and_holes(tmp_path):
    from reasonaudio.explorer.store_copy import sparse_copy_file

    src = tmp_path / "holes.dat"
    with open(src, "wb") as fh:
        fh.write(b"head")
        fh.seek(8 << 20)
        fh.write(b"middle")
        fh.truncate(16 << 20)
    dst = tmp_path / "copy.dat"
    sparse_copy_file(src, dst)
    assert dst.read_bytes() == src.read_bytes()
    assert dst.stat().st_blocks * 512 < 2 << 20  # the holes stay holes


def _no_evidence_run(root: Path) -> tuple[str, str]:
    """Rewrite one failed query of the detected result as a build that heard nothing writes it:
    every clip in clip-id order with only the clip-order term as its score (clip-00000 first)."""
    bench = load_benchmark(root)
    result = load_result(bench, DETECTED_NAME)
    first = sorted(bench.clip_by_id)[0]
    qid = next(q.id for q in bench.queries if result.per_query[q.id].get("acc@1", 0.0) < 1.0
               and first not in bench.qrels.get(q.id, set()))
    run = read_trec(run_path(bench, DETECTED_NAME), tag=DETECTED_NAME)
    orders = clip_orders(list(bench.clip_by_id))
    run.hits[qid] = [Hit(cid, ORDER_WEIGHT * orders[cid]) for cid in sorted(bench.clip_by_id)[:result.depth]]
    write_trec(run_path(bench, DETECTED_NAME), run)
    return qid, first


def test_a_retriever_that_heard_nothing_is_shown_as_no_evidence(built, tmp_path):
    root = _copy(built, tmp_path / "bench")
    qid, first = _no_evidence_run(root)
    app = build_app(load_benchmark(root))
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            page = client.get(f"/query/{qid}").text
            note = page.split(f'<p class="note no-evidence" data-retriever="{DETECTED_NAME}">', 1)[1].split("</p>")[0]
            assert "found nothing for this query in any clip" in note and '"no evidence"' in note
            top = page.split(f'<table class="hits sortable" data-retriever="{DETECTED_NAME}">', 1)[1].split("</table>")[0]
            assert top.count('no-evidence" data-clip=') >= 10 and "no evidence: placed by clip id" in top
            rows = table_rows(client.get("/failures", params={"retriever": DETECTED_NAME, "task": "all"}).text,
                              "failures")
            row = next(r for r in rows if r[0][1] == qid)
            assert row[2][1] == "no evidence" and row[3][1] == "none: no evidence"
            breakdown = client.get("/download/failures.json").json()
            record = next(r for r in breakdown["records"] if r["retriever"] == DETECTED_NAME and r["qid"] == qid)
            assert record["kind"] == "no evidence" and record["top_clip"] is None
            assert not any(r["top_clip"] == first and r["kind"] == "no evidence" for r in breakdown["records"])
            counts = table_rows(client.get("/failures", params={"task": "all"}).text, "breakdown")
            detected = next(r for r in counts if r[0][1] == DETECTED_NAME)
            assert any(a.get("data-kind") == "no evidence" and t.startswith("1") for a, t in detected)
    finally:
        app.state.catalog.close()
