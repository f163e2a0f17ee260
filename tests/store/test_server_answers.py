"""A server that is not Qdrant, or answers errors at length, gives one short redacted line
(issue 14, items 5 and 9). A real HTTP server on localhost stands in for the bad server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from hostile import bench, one_line_error, small_build

pytestmark = pytest.mark.fast

SECRET = "s3cr3t-key-0123456789"


def _serve(status, body_for, content_type: str = "text/html") -> Iterator[str]:
    """A real HTTP server on localhost answering ``body_for(request)`` with ``status`` (a number,
    or a function of the request)."""
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = body_for(self).encode()
            self.send_response(status(self) if callable(status) else status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = _answer

        def log_message(self, *args) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def not_json() -> Iterator[str]:
    yield from _serve(200, lambda h: "hello, I am a web page\n")


@pytest.fixture()
def echoing_404() -> Iterator[str]:
    """An HTML 404 of many lines that echoes the request headers, API key included."""
    page = "<html>\n<head><title>404</title></head>\n<body>\n" + "<p>not here</p>\n" * 12
    yield from _serve(404, lambda h: page + "".join(f"{k}: {v}\n" for k, v in h.headers.items())
                      + "</body></html>\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return small_build(tmp_path_factory.mktemp("server") / "b")


def test_200_non_json_is_one_line(built, not_json):
    r = bench("ingest", "--data", built, "--model", "none", "--qdrant-url", not_json)
    line = one_line_error(r, "not Qdrant's JSON API")
    assert not_json.split("//")[1] in line


def test_error_body_is_one_short_line_without_the_key(built, echoing_404, monkeypatch):
    monkeypatch.setenv("QDRANT_API_KEY", SECRET)
    from reasonaudio.dataset.view import load_benchmark

    label = load_benchmark(built).labels[0]
    r = bench("search", label, "--data", built, "-r", "random", "--qdrant-url", echoing_404)
    line = one_line_error(r, "HTTP 404")
    assert SECRET not in r.output and SECRET not in line
    assert len(line) < 400


def test_redact_removes_header_pairs_and_the_env_key(monkeypatch):
    from reasonaudio.errors import echo, redact

    monkeypatch.setenv("QDRANT_API_KEY", SECRET)
    text = f'api-key: {SECRET}\nx {{"api_key": "other-value"}} Authorization: Bearer abc.def'
    out = redact(text)
    assert SECRET not in out and "other-value" not in out and "abc.def" not in out
    assert "\n" not in echo(text) and len(echo("q" * 100_000)) < 200


@pytest.fixture()
def shouting_qdrant() -> Iterator[str]:
    """Answers the probe like Qdrant, then a 404 that echoes the API key upper-cased."""
    def probe(h) -> bool:
        return h.path.rstrip("/") == "/collections"

    def body(h) -> str:
        if probe(h):
            return json.dumps({"result": {"collections": []}, "status": "ok", "time": 0.0})
        return json.dumps({"status": {"error": f"Not found; your key {h.headers.get('api-key', '').upper()}"},
                           "time": 0.0})
    yield from _serve(lambda h: 200 if probe(h) else 404, body, "application/json")


def test_redaction_ignores_letter_case(monkeypatch):
    """issue 27 item 4: a server may echo the key in another case."""
    from reasonaudio.errors import echo, error_line, redact

    monkeypatch.setenv("QDRANT_API_KEY", SECRET)
    for text in (SECRET.upper(), SECRET.title(), f"server said {SECRET.upper()}!"):
        assert SECRET.upper() not in redact(text).upper(), text
        assert "<redacted>" in error_line(text) and "<redacted>" in echo(text)


def test_key_over_http_warns_in_one_line_and_an_upper_cased_echo_is_redacted(
        built, shouting_qdrant, monkeypatch):
    """issue 27 item 4: qdrant-client's http + key warning is one `warning:` line (no source
    line), and a key echoed upper-cased is redacted."""
    monkeypatch.setenv("QDRANT_API_KEY", SECRET)
    r = bench("search", "q-0000", "--data", built, "-r", "random", "--qdrant-url", shouting_qdrant)
    line = one_line_error(r, "HTTP 404")
    assert SECRET.upper() not in r.output and SECRET not in r.output and "<redacted>" in line
    lines = r.stderr.strip().splitlines()
    warning = [ln for ln in lines if ln.startswith("warning: ")]
    assert len(warning) == 1 and "insecure connection" in warning[0], r.stderr
    assert len(lines) == 2 and ".py:" not in r.stderr and "warnings.warn" not in r.stderr, r.stderr
