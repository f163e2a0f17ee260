"""`bench serve` over HTTP: every page, byte ranges, 404s for ids that name nothing, path
traversal, escaping of hostile text, and nothing written (in-process client, plus one real
process for the command line)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="bench serve needs the serve extra (starlette, uvicorn)")

from starlette.testclient import TestClient  # noqa: E402

from explorer_support import CAPTION_MODEL, EXTRA_NAME, build_explorer_bench  # noqa: E402
from reasonaudio.bench.metrics import first_rank  # noqa: E402
from reasonaudio.bench.results import fingerprint, run_path  # noqa: E402
from reasonaudio.bench.runs import read_trec  # noqa: E402
from reasonaudio.dataset.benchmark import load_benchmark  # noqa: E402
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
             "/compare?a=bag-of-sounds&b=oracle&task=order&metric=ndcg@10", "/search",
             f"/search?q={q.id}&retriever=oracle", "/plot/metrics_by_task.png", "/static/explorer.js"]
    for page in pages:
        r = client.get(page)
        assert r.status_code == 200, (page, r.text[:300])
        assert "Traceback" not in r.text


def test_overview_lists_every_saved_result_and_its_formulation(client):
    html = client.get("/").text
    for name in ("oracle", "bag-of-sounds", "random", EXTRA_NAME):
        assert f"<td>{name}</td>" in html
    assert "<th data-sort=\"text\">formulation</th>" in html and "<td>paraphrase</td>" in html
    assert "/compare?a=oracle&amp;b=random&amp;task=order" in html
    assert '<img src="/plot/metrics_by_task.png"' in html


def test_query_page_shows_the_pair_and_ranks_from_the_saved_runs(client, bench, bench_dir):
    run = read_trec(run_path(bench, "bag-of-sounds"))
    for q in bench.queries[:5]:
        choice = next(c for c in bench.choices if c.query_id == q.id)
        html = client.get(f"/query/{q.id}").text
        assert f'data-src="/audio/{choice.positive}.wav"' in html and f'data-src="/audio/{choice.negative}.wav"' in html
        assert html.count('<svg class="timeline"') >= 2
        pos = first_rank(run.ranking(q.id), {choice.positive})
        neg = first_rank(run.ranking(q.id), {choice.negative})
        row = html.split("<td class=\"id\"><a href=\"#top-2\">bag-of-sounds</a>", 1)[1].split("</tr>", 1)[0]
        cells = [c.split("</td>")[0].rsplit(">", 1)[1] for c in row.split("<td data-value=")[1:4]]
        shown = [str(int(x)) if x != float("inf") else "-" for x in
                 (first_rank(run.ranking(q.id), bench.qrels[q.id]), pos, neg)]
        assert cells == shown
        assert "hits sortable" in html  # every retriever's top 10 with its checks


def test_clip_page_has_audio_timelines_and_captions(client, bench):
    clip = bench.clips[3]
    html = client.get(f"/clip/{clip.id}").text
    assert f'src="/audio/{clip.id}.wav"' in html
    assert html.count('<svg class="timeline"') == 2  # true and detected
    assert "detected:yamnet" in html and f"({CAPTION_MODEL})" in html
    assert "confidence 0.80" in html
    assert 'class="event other"' not in html  # no query: every event drawn alike


def test_clip_page_seen_from_a_query(client, bench):
    from reasonaudio.constraints.logic import labels

    q = next(q for q in bench.queries if q.task == "negation")
    choice = next(c for c in bench.choices if c.query_id == q.id)
    html = client.get(f"/clip/{choice.negative}", params={"q": q.id}).text
    assert f'href="/query/{q.id}"' in html and "(its hard negative)" in html and "not relevant" in html
    assert html.count('<span class="no">✗</span>') == 1  # a hard negative breaks one constraint
    clip = bench.clip_by_id[choice.negative]
    if set(clip.labels) - set(labels(q.logic)):
        assert 'class="event other"' in html
    assert client.get(f"/clip/{choice.negative}", params={"q": "q-nope"}).status_code == 404
    assert f'href="/clip/{choice.positive}?q={q.id}"' in client.get(f"/query/{q.id}").text


def test_audio_is_the_rendered_clip_with_byte_ranges(client, bench, tmp_path):
    from reasonaudio.ingest.render import render_clip_to_file

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
    "/compare?a=oracle&b=random&metric=nope", "/failures", "/no/such/page",
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
    app = build_app(edited)
    with TestClient(app, raise_server_exceptions=False) as c:
        for page in ("/", f"/query/{first['_id']}", f"/failures?retriever=random&task={first['task']}",
                     "/compare?a=oracle&b=random"):
            html = c.get(page).text
            assert "<script>alert" not in html and "<img src=x" not in html, page
            assert "&lt;script&gt;" in html, page
        assert "paraphrase" in c.get(f"/query/{first['_id']}").text
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
                 f"/audio/{bench.clips[5].id}.wav", f"/search?q={bench.queries[2].id}&retriever=oracle"):
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
    from reasonaudio.ingest.build import BuildParams, build_benchmark

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
