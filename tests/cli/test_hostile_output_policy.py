"""Hardening round 3 (issue 45, items 1 and 4-7): every output through one policy, the
benchmark's writer lock, --calibration checked before anything is built, the explorer's Host
check and unreadable results named, bounded Ray, URLs and keys in one redacted line, and the
smaller ones (unrenderable conditions, Range unit case, 127.1, query text starting with '-')."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from hostile import bench, one_line_error, small_build
from test_output_dirs import _make_bank, snapshot

ROOT = Path(__file__).resolve().parents[2]
KEY = "k3yABCDEFGH1234"
"""a 15-character API key (the round's replay used one as long)"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return small_build(tmp_path_factory.mktemp("round3io") / "b", clips=40, queries=10)


def _copy(built: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "b"
    shutil.copytree(built, dst, ignore=shutil.ignore_patterns("results", "qdrant", ".reasonaudio.lock"))
    return dst


def _labels(data: Path) -> list[str]:
    rows = [json.loads(line) for line in (data / "atoms.jsonl").read_text().splitlines() if line]
    return sorted({r["label"] for r in rows})


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- item 1: one output policy -----------------------------------------------------------------

@pytest.mark.parametrize("command, target", [
    (["eval", "-r", "oracle"], "manifest.json"),
    (["eval", "-r", "oracle"], "qrels/test.tsv"),
    (["eval", "-r", "oracle"], "formulations.jsonl"),
    (["eval", "-r", "oracle"], "results/oracle.json"),
    (["compare", "oracle", "random"], "corpus.jsonl"),
    (["detect"], "queries.jsonl"),
])
def test_json_never_writes_over_a_benchmarks_own_files(built, tmp_path, command, target):
    data = _copy(built, tmp_path)
    before = snapshot(data)
    r = bench(*command, "--data", data, "--json", data / target)
    one_line_error(r, target.split("/")[-1], "inside the benchmark")
    assert snapshot(data) == before


def test_a_render_out_into_the_benchmark_is_refused(built, tmp_path):
    data = _copy(built, tmp_path)
    before = snapshot(data)
    one_line_error(bench("render", "clip-00001", "--data", data, "--out", data / "x.wav"),
                   "x.wav", "inside the benchmark")
    assert snapshot(data) == before


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_json_never_replaces_a_device_a_fifo_or_a_folder(built, tmp_path, kind):
    data = _copy(built, tmp_path)
    if kind == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
    elif kind == "device":  # a private copy of /dev/null: a regression replaces only it
        target = tmp_path / "null"
        try:
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("creating a device node needs root")
    else:
        target = tmp_path / "folder"
        target.mkdir()
    r = bench("eval", "-r", "oracle", "--data", data, "--json", target)
    one_line_error(r, str(target), "exists and is")
    assert target.is_fifo() if kind == "fifo" else target.is_char_device() if kind == "device" \
        else target.is_dir()
    assert not (data / "results").exists()  # refused before anything was evaluated


def test_atomic_file_refuses_a_non_regular_target(tmp_path):
    from reasonaudio.errors import DataError
    from reasonaudio.fileio import atomic_file

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="exists and is not a regular file"):
        with atomic_file(fifo) as fh:
            fh.write("x")
    assert fifo.is_fifo() and [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_mteb_results_must_be_a_folder_outside_the_benchmark(built, tmp_path):
    data = _copy(built, tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("x\n")
    one_line_error(bench("eval", "-r", "oracle", "--data", data, "--mteb-results", a_file),
                   "a-file", "not a folder")
    before = snapshot(data)
    one_line_error(bench("eval", "-r", "oracle", "--data", data, "--mteb-results", data),
                   "is the benchmark")
    one_line_error(bench("eval", "-r", "oracle", "--data", data, "--trec", data / "runs"),
                   "inside the benchmark")
    assert snapshot(data) == before


@pytest.mark.parametrize("command", [["atoms", "fetch", "packages", "--max-download-mb", "0.001"],
                                     ["atoms", "fetch", "beds", "--max-download-mb", "0.001"]])
def test_a_fetch_never_writes_into_a_benchmark(built, tmp_path, command):
    data = _copy(built, tmp_path)
    before = snapshot(data)
    one_line_error(bench(*command, "--dest", data), "is the benchmark")
    assert snapshot(data) == before


HOLDER = """
import sys
from reasonaudio.store.lock import writes_benchmark

def hold(root):
    print("held", flush=True)
    sys.stdin.readline()

writes_benchmark(hold)(sys.argv[1])
"""


def test_a_second_writer_of_a_benchmark_is_refused_naming_the_first(built, tmp_path):
    data = _copy(built, tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(data)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline().strip() == "held"  # a handshake, not a wait
        before = snapshot(data)
        one_line_error(bench("interleave", "--data", data, "--share", "0.3"), f"pid {proc.pid}",
                       "in use by")
        one_line_error(bench("eval", "--data", data, "-r", "oracle"), f"pid {proc.pid}")
        one_line_error(bench("formulate", "--data", data), f"pid {proc.pid}")
        assert snapshot(data) == before
    finally:
        proc.communicate("\n", timeout=60)
    r = bench("interleave", "--data", data, "--share", "0.3")
    assert r.exit_code == 0, r.output


def test_tune_refuses_a_calibration_path_that_is_no_benchmark(built, tmp_path):
    data = _copy(built, tmp_path)
    typo = tmp_path / "calibratoin"
    one_line_error(bench("tune", "--data", data, "-r", "hybrid:clap,soft:yamnet",
                         "--calibration", typo), "--calibration", "calibratoin", "not a benchmark")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_tune_refuses_a_calibration_of_another_atom_bank(built, tmp_path):
    from reasonaudio.generator.build import BuildParams, build_benchmark

    data = _copy(built, tmp_path)
    other = tmp_path / "other"
    build_benchmark(other, BuildParams(atoms=str(_make_bank(tmp_path / "bank")), seed=1,
                                       n_clips=40, n_queries=10))
    one_line_error(bench("tune", "--data", data, "-r", "hybrid:clap,soft:yamnet",
                         "--calibration", other), "another atom bank")
    assert not (data / "results").exists()


@pytest.mark.parametrize("name", ["rrf:oracle,random", "rrf:clap,nosuch", "hybrid:minilm,soft:yamnet"])
def test_tune_refuses_names_it_cannot_tune_before_building(built, tmp_path, name):
    data = _copy(built, tmp_path)
    one_line_error(bench("tune", "--data", data, "-r", name))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]  # no b-calibration


# --- item 4: the explorer ----------------------------------------------------------------------

def test_the_explorer_answers_only_its_host_names(built):
    from starlette.testclient import TestClient

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.explorer.server import build_app, guarded, listen

    listening = listen("127.0.0.1", 0)
    listening.sock.close()
    app = build_app(load_benchmark(built))
    try:
        with TestClient(guarded(app, listening.hosts), base_url="http://127.0.0.1:8765",
                        raise_server_exceptions=False) as c:
            assert c.get("/").status_code == 200
            assert c.get("/", headers={"Host": "localhost:8765"}).status_code == 200
            assert c.get("/", headers={"Host": "[::1]:8765"}).status_code == 200
            for host in ("rebind.attacker.example", "rebind.attacker.example:8765", "127.0.0.2"):
                r = c.get("/", headers={"Host": host})
                assert 400 <= r.status_code < 500 and "clips" not in r.text, host
    finally:
        app.state.catalog.close()


def test_the_served_explorer_refuses_a_foreign_host(built):
    import http.client

    from reasonaudio.explorer.server import child_server

    with child_server(built) as url:
        host, port = url.split("//", 1)[1].rsplit(":", 1)
        for header, status in (("evil.example", 400), (f"localhost:{port}", 200)):
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            conn.request("GET", "/", headers={"Host": header})
            assert conn.getresponse().status == status, header
            conn.close()


def test_an_unreadable_results_file_is_named_by_report_and_overview(built, tmp_path):
    from starlette.testclient import TestClient

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.explorer.server import build_app

    data = _copy(built, tmp_path)
    assert bench("eval", "--data", data, "-r", "oracle", "-r", "random").exit_code == 0
    (data / "results" / "random.json").write_text('{"name": "random", "per_qu')
    one_line_error(bench("report", "--data", data, "--out", tmp_path / "report"),
                   "random.json", "cannot be read")
    assert not (tmp_path / "report").exists()
    app = build_app(load_benchmark(data))
    try:
        with TestClient(app) as c:
            page = c.get("/").text
    finally:
        app.state.catalog.close()
    assert "random.json" in page and "cannot be read" in page


# --- item 5: bounded Ray -----------------------------------------------------------------------

def test_more_ray_workers_than_cores_is_one_line(built):
    one_line_error(bench("ingest", "--data", built, "--model", "yamnet", "--engine", "ray",
                         "--workers", "100000"), "--workers 100000", "usable CPU")


def test_an_unreachable_ray_address_is_one_line():
    from reasonaudio.errors import DataError
    from reasonaudio.ingest.ray_engine import check_reachable

    port = _closed_port()
    with pytest.raises(DataError, match=f"--ray-address 127.0.0.1:{port}: cannot reach"):
        check_reachable(f"127.0.0.1:{port}")
    with pytest.raises(DataError, match="cannot reach"):
        check_reachable(f"ray://127.0.0.1:{port}")
    with pytest.raises(DataError, match="expected HOST:PORT"):
        check_reachable("headnode")


def test_ingest_with_an_unreachable_ray_address_is_one_line(built, tmp_path):
    data = _copy(built, tmp_path)
    port = _closed_port()
    one_line_error(bench("ingest", "--data", data, "--model", "yamnet", "--engine", "ray",
                         "--ray-address", f"127.0.0.1:{port}"), "--ray-address", "cannot reach")


# --- item 6: secrets and one-line errors -------------------------------------------------------

def _no_key(text: str) -> None:
    low = text.lower()
    assert not any(KEY[i:i + 8].lower() in low for i in range(len(KEY) - 7)), text


@pytest.mark.parametrize("url, needle", [
    (f"http://user:{KEY}@[::1", "not a URL"),
    (f"http://localhost:99999/?api_key={KEY}", "not a URL"),
    ("grpc://localhost:6334", "scheme 'grpc'"),
    ("file:///tmp/qdrant", "scheme 'file'"),
    ("localhost:6333", "is not served"),
    ("http://:6333", "not of the form"),
])
def test_a_qdrant_url_that_does_not_parse_is_one_line_without_the_key(built, monkeypatch, url, needle):
    monkeypatch.setenv("QDRANT_API_KEY", KEY)
    label = _labels(built)[0]
    r = bench("search", label, "--data", built, "--strict", "--qdrant-url", url)
    one_line_error(r, "--qdrant-url", needle)
    _no_key(r.output)


def test_serve_refuses_a_bad_url_at_start(built):
    """A child process: a server that started anyway would be stopped by the guard's timeout
    (a failure, not a hung suite)."""
    r = subprocess.run([sys.executable, "-m", "reasonaudio.cli", "serve", "--data", str(built),
                        "--port", "0", "--qdrant-url", f"http://u:{KEY}@h:99999"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "QDRANT_API_KEY": KEY})
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "--qdrant-url" in r.stderr, r.stderr
    _no_key(r.stderr)


def test_any_eight_character_run_of_the_key_is_redacted():
    from reasonaudio.errors import error_line, redact

    echoed = f"bad key {KEY[:7]} and {KEY[7:]}; upper {KEY[3:12].upper()}; whole {KEY}"
    shown = redact(echoed, (KEY,))
    _no_key(shown)
    assert KEY[:7] in shown  # 7 characters: below the run redacted
    assert redact(f"http://user:pw@host:1/x {KEY}", (KEY,)) == "http://host:1/x <redacted>"
    assert "pw@" not in error_line("cannot reach http://user:pw@host:6333")


class _EchoingQdrant(BaseHTTPRequestHandler):
    """Answers the collection list; any collection is missing, the error echoing the key in two
    pieces (7 + 8 characters)."""

    def do_GET(self) -> None:  # noqa: N802
        key = self.headers.get("api-key", "")
        if self.path.startswith("/collections/"):
            body, status = {"status": {"error": f"Not found ({key[:7]} / {key[7:]})"}, "time": 0}, 404
        else:
            body, status = {"result": {"collections": []}, "status": "ok", "time": 0}, 200
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


def test_a_key_echoed_in_two_pieces_gives_one_line_and_no_piece_of_the_key(built, monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _EchoingQdrant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("QDRANT_API_KEY", KEY)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = bench("search", _labels(built)[0], "--data", built, "--strict", "--qdrant-url", url)
    finally:
        server.shutdown()
        server.server_close()
    one_line_error(r, "Not found")
    lines = r.stderr.strip().splitlines()  # the library's http + key warning: one line, no source
    assert all(ln.startswith(("warning: ", "error: ")) for ln in lines) and len(lines) <= 2, r.stderr
    assert ".py:" not in r.stderr and "warnings.warn" not in r.stderr, r.stderr
    _no_key(r.output)


# --- item 7: the smaller ones ------------------------------------------------------------------

def test_eval_under_a_condition_the_build_cannot_render_saves_nothing(built, tmp_path):
    """The synthetic bank has noise classes: the tagger check refuses every generated bed, so
    snr5 cannot be rendered for it, and the oracle (which hears nothing) is not scored under it."""
    data = _copy(built, tmp_path)
    runs = tmp_path / "run.json"
    runs.write_text(json.dumps({"q": {"clip-00000": 1.0}}))
    one_line_error(bench("eval", "--data", data, "-r", "oracle", "--condition", "snr5"),
                   "condition snr5", "no bed")
    one_line_error(bench("eval", "--data", data, "--run", f"mine={runs}", "--condition", "snr5"),
                   "condition snr5")
    assert not (data / "results").exists()


def test_the_range_unit_is_case_insensitive():
    from reasonaudio.explorer.ranges import ByteRange, parse_range

    for header in ("BYTES=0-1", "Bytes=0-1", "bYtEs=0-1"):
        assert parse_range(header, 10) == ByteRange(0, 1), header
    assert parse_range("BYTES=-3", 10) == ByteRange(7, 9)


def test_short_loopback_spellings_are_loopback():
    from reasonaudio.explorer.server import host_names, is_loopback

    assert is_loopback("127.1") and is_loopback("127.0.0.1") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1")
    assert {"127.1", "localhost", "127.0.0.1", "[::1]"} <= set(host_names("127.1", "127.0.0.1"))


@pytest.mark.parametrize("command", ["parse", "search"])
def test_a_query_starting_with_the_exclusion_dash_is_the_query(built, command):
    a, b = _labels(built)[:2]
    r = bench(command, f"-{a}, but {b}", "--data", built, "--strict", "--json")
    assert r.exit_code == 0, r.output
    logic = json.loads(r.stdout)["logic"]
    assert "not" in json.dumps(logic) and a in json.dumps(logic)
    r = bench(command, "--data", built, "--strict", "--json", "--", f"-{a}")  # after --, as ever
    assert r.exit_code == 0, r.output
    r = bench(command, b, "--data", built, "--strict", "--bogus")
    one_line_error(r, "No such option: --bogus")
