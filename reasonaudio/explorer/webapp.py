"""The explorer's web application (Starlette, Jinja templates, a little plain JavaScript).

Read-only and closed: every id in a URL is looked up in the benchmark (clips, queries, saved
retrievers, tasks, plots) before anything is read, so no URL reaches a path of its choosing;
templates escape every value (autoescape); an unknown id is a 404 page and an unexpected error a
plain 500 page, never a traceback.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from reasonaudio.bench.intervals import WILSON_METRICS
from reasonaudio.bench.metrics import METRICS
from reasonaudio.bench.results import run_path
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.errors import ReasonAudioError, error_line, redact
from reasonaudio.explorer.audio_cache import CONTENT_TYPE, AudioCache
from reasonaudio.explorer.catalog import Catalog, NotFound, json_text, rank_text, sort_value
from reasonaudio.explorer.downloads import (CSV_TYPE, JSON_TYPE, TREC_TYPE, attachment, json_bytes,
                                             results_document, table_csv)
from reasonaudio.explorer.failure_tables import by_retriever, by_task, meanings
from reasonaudio.explorer.model_loading import FAILED, LOADING, READY, Loading
from reasonaudio.explorer.verdicts import verdict
from reasonaudio.explorer.ranges import RangeError, parse_range

STATIC = Path(__file__).parent / "static"
MAX_K = 100
KEPT_PAGES = 1024
"""rendered pages kept in memory (a query page of the demo is about 100 KB)"""
log = logging.getLogger("reasonaudio.explorer")


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def breakable(name: str) -> Markup:
    """A retriever's name, escaped, that may wrap after ``:``, ``+`` and ``,`` (a combination's
    long name in a narrow column), never inside a word."""
    parts = re.split(r"(?<=[:+,])", name)
    return Markup("<wbr>").join(Markup('<span class="seg">{}</span>').format(p) for p in parts if p)


def short_kind(kind: str) -> str:
    """What a retriever reads, in one word (``retrievers/registry.SHORT_KIND``)."""
    from reasonaudio.retrievers.registry import SHORT_KIND

    return SHORT_KIND.get(kind, kind)


def environment() -> Environment:
    env = Environment(loader=PackageLoader("reasonaudio.explorer", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["fmt"] = _fmt
    env.filters["rank"] = rank_text
    env.filters["breakable"] = breakable
    env.globals.update(TASKS=TASKS, METRICS=METRICS, sort_value=sort_value, json_text=json_text,
                       verdict_of=verdict, WILSON_METRICS=WILSON_METRICS, short_kind=short_kind)
    return env


def create_app(catalog: Catalog, audio: AudioCache | None = None) -> Starlette:
    env = environment()
    audio = audio or AudioCache(catalog.bench, bank_spec=catalog.bank_spec)
    title = f"{catalog.bench.root.parent.name}/{catalog.bench.root.name}"
    loading = Loading(catalog.prepare)
    answered = threading.Event()
    """set once a page has been rendered (the server's background warm-up waits for it)"""

    def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(template).render(request=request, title=title, catalog=catalog,
                                                 url=request.app.url_path_for, **context)
        answered.set()
        return HTMLResponse(html, status_code=status)

    def param(request: Request, name: str, default: str | None = None) -> str:
        value = request.query_params.get(name, default)
        if value is None:
            raise NotFound(f"missing parameter {name!r}")
        return value

    pages: OrderedDict[str, HTMLResponse] = OrderedDict()
    pages_lock = threading.Lock()

    def kept(handler: Any) -> Any:
        """Render a page once and keep it: everything it shows was loaded when the server started
        (results, runs, the benchmark) or is fixed while it runs (the read-only store)."""
        def answer(request: Request) -> Response:
            key = request.url.path + "?" + request.url.query
            with pages_lock:
                hit = pages.get(key)
                if hit is not None:
                    pages.move_to_end(key)
                    return hit
            response = handler(request)
            if response.status_code == 200:
                with pages_lock:
                    pages[key] = response
                    while len(pages) > KEPT_PAGES:
                        pages.popitem(last=False)
            return response
        return answer

    def overview(request: Request) -> Response:
        task = catalog.task(param(request, "task", "all"))  # one task's table at a time: a quick first page
        return page(request, "overview.html", task=task, rows=catalog.table(task))

    def query(request: Request) -> Response:
        q = catalog.query(request.path_params["qid"])
        pair = catalog.pair(q)
        tops = []
        for row in catalog.pair_ranks(q.id):
            hits = catalog.top(row["name"], q.id)
            tops.append((row, hits, catalog.seen(row["name"], [h.clip_id for h in hits], q.logic)))
        timelines = {h.clip_id: catalog.timeline(catalog.clip(h.clip_id), q.logic)
                     for _, hits, _ in tops for h in hits if h.clip_id in catalog.bench.clip_by_id}
        prev_q, next_q = catalog.neighbours(q.id)
        return page(request, "query.html", q=q, parts=catalog.logic_parts(q.logic), pair=pair,
                    violation=catalog.violation.get(q.id, ""), tops=tops, timelines=timelines,
                    pair_span=one_scale([s["clip"].duration for s in pair], ()),
                    span=one_scale((), timelines.values()),
                    n_relevant=len(catalog.bench.qrels.get(q.id, ())), prev_q=prev_q, next_q=next_q)

    def clip_page(request: Request) -> Response:
        clip = catalog.clip(request.path_params["cid"])
        qid = request.query_params.get("q")
        q = catalog.query(qid) if qid is not None else None  # ?q=QID: that query's sounds and checks
        logic = q.logic if q is not None else None
        queries = [(catalog.query(p), role) for p, role in catalog.planted_in.get(clip.id, [])]
        marks = catalog.ranked([_Hit(clip.id)], logic, q.id)[0] if q is not None else None
        return page(request, "clip.html", clip=clip, q=q, marks=marks, parts=catalog.logic_parts(logic),
                    true_timeline=catalog.timeline(clip, logic), detected=catalog.detected(clip, logic),
                    captions=catalog.captions(clip), planted=queries, store_note=catalog.store_note())

    def failures(request: Request) -> Response:
        task = catalog.task(param(request, "task", "all"))
        meaning = dict(meanings())
        kind = request.query_params.get("kind")
        if kind is not None and kind not in meaning:
            raise NotFound(f"no failure kind {kind!r} (kinds: {', '.join(meaning)})")
        bd = catalog.breakdown()
        if "retriever" not in request.query_params:  # every retriever, by kind
            kinds, rows = by_retriever(bd, task)
            return page(request, "breakdown.html", task=task, kinds=kinds, rows=rows, meaning=meaning,
                        meanings=meanings())
        name = catalog.retriever(param(request, "retriever"))
        rows = catalog.failures(name, task, kind)
        rows.sort(key=lambda f: (-sort_value(f.first_relevant, catalog.depth(name)), f.qid))
        kinds, per_task = by_task(bd, name)
        return page(request, "failures.html", name=name, task=task, kind=kind, rows=rows, kinds=kinds,
                    by_task=per_task, meaning=meaning, depth=catalog.depth(name),
                    has_run=catalog.run(name) is not None)

    def compare(request: Request) -> Response:
        names = catalog.names
        if len(names) < 2:
            return page(request, "compare.html", a=None, b=None, task="all", metric="acc@1", names=names)
        a = catalog.retriever(param(request, "a", names[0]))
        b = catalog.retriever(param(request, "b", next(n for n in names if n != a)))
        task = catalog.task(param(request, "task", "all"))
        metric = param(request, "metric", "acc@1")
        result = catalog.compare(a, b, task, metric)
        return page(request, "compare.html", a=a, b=b, task=task, metric=metric, result=result, names=names,
                    tests=catalog.paired(a, b) if a != b else None, depth=max(catalog.depth(a), catalog.depth(b)))

    def download_results(request: Request) -> Response:
        return Response(json_bytes(results_document(catalog.results)), media_type=JSON_TYPE,
                        headers=attachment("results.json"))

    def download_table(request: Request) -> Response:
        task = catalog.task(param(request, "task", "all"))
        return Response(table_csv(catalog.table(task), catalog.dimensions()), media_type=CSV_TYPE,
                        headers=attachment(f"results-{task}.csv"))

    def download_run(request: Request) -> Response:
        name = catalog.retriever(param(request, "retriever"))
        path = run_path(catalog.bench, name)
        if not path.is_file():
            raise NotFound(f"no saved run for retriever {name!r}")
        return FileResponse(path, media_type=TREC_TYPE, headers=attachment(path.name))

    def download_failures(request: Request) -> Response:
        return Response(json_bytes(catalog.breakdown().to_json()), media_type=JSON_TYPE,
                        headers=attachment("failures.json"))

    def search(request: Request) -> Response:
        names = catalog.searchable()
        text = request.query_params.get("q", "")
        retriever = request.query_params.get("retriever") or (names[0] if names else "")
        try:
            k = int(request.query_params.get("k", "10"))
        except ValueError:
            k = 0
        context: dict[str, Any] = {"names": names, "text": text, "retriever": retriever, "k": k,
                                   "result": None, "error": None, "timelines": {}, "span": None,
                                   "loading": None, "loaded_in": None,
                                   "store_note": catalog.store_note()}
        status = 200
        if not 1 <= k <= MAX_K:
            context["error"], status, context["k"] = f"k must be a whole number from 1 to {MAX_K}", 400, 10
        elif text.strip() and retriever:  # no retriever named and none in the store: the note says why
            status = run_search(context, text, retriever, k)
        return page(request, "search.html", status=status, **context)

    def run_search(context: dict[str, Any], text: str, retriever: str, k: int) -> int:
        """Fill ``context`` with a search's results, its error, or (a model not loaded yet) the
        loading note; the page's status."""
        if retriever not in catalog.searchable():
            catalog.prepare(retriever)  # the 404 that names what the store has
        error = loading.take_error(retriever)
        if error is not None:
            context["error"] = error
            return 400
        if not catalog.instant(retriever):
            if loading.start(retriever) or loading.state(retriever) == LOADING:
                context["loading"] = retriever
                return 202
        try:
            result = catalog.search(text, retriever, k)
        except NotFound:
            raise
        except ReasonAudioError as exc:
            context["error"] = error_line(exc)  # redacted: no key on a page
            return 400
        context["result"] = result
        context["loaded_in"] = loading.take_load_time(retriever)
        context["timelines"] = timelines = {
            h.clip_id: catalog.timeline(catalog.clip(h.clip_id), result["logic"])
            for h in result["hits"] if h.clip_id in catalog.bench.clip_by_id}
        context["span"] = one_scale((), timelines.values())
        return 200

    def search_status(request: Request) -> Response:
        name = param(request, "retriever")
        if name not in catalog.searchable():
            raise NotFound(f"the store has no retriever {name!r}")
        state = READY if catalog.prepared(name) and loading.state(name) != FAILED else loading.state(name)
        return JSONResponse({"retriever": name, "state": state, "seconds": round(loading.elapsed(name), 1)},
                            headers={"Cache-Control": "no-store"})

    def audio_file(request: Request) -> Response:
        clip = catalog.clip(request.path_params["cid"])
        data = audio.wav(clip.id)
        headers = {"Accept-Ranges": "bytes", "Cache-Control": "no-cache"}
        header = request.headers.get("range")
        if header is None:
            return Response(data, media_type=CONTENT_TYPE, headers=headers)
        try:
            r = parse_range(header, len(data))
        except RangeError as exc:
            extra = {"Content-Range": f"bytes */{len(data)}"} if exc.status == 416 else {}
            return Response(exc.reason + "\n", status_code=exc.status, media_type="text/plain",
                            headers={**headers, **extra})
        body = data[r.start:r.end + 1]
        return Response(body, status_code=206, media_type=CONTENT_TYPE,
                        headers={**headers, "Content-Range": r.content_range(len(data))})

    def plot(request: Request) -> Response:
        return FileResponse(catalog.plot(request.path_params["name"]))

    async def not_found(request: Request, exc: Exception) -> Response:
        message = str(exc) if isinstance(exc, NotFound) else "no such page"
        return page(request, "error.html", status=404, heading="Not found", message=message)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return await not_found(request, exc)
        return page(request, "error.html", status=exc.status_code, heading=str(exc.status_code),
                    message=str(exc.detail))

    async def server_error(request: Request, exc: Exception) -> Response:
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        log.error("error answering %s\n%s", redact(request.url.path), redact(trace))  # no key in the log
        return page(request, "error.html", status=500, heading="Server error",
                    message="the explorer could not answer this page (see the server's log)")

    routes = [
        Route("/", kept(overview), name="overview"),
        Route("/query/{qid}", kept(query), name="query"),
        Route("/clip/{cid}", kept(clip_page), name="clip"),
        Route("/audio/{cid}.wav", audio_file, name="audio", methods=["GET", "HEAD"]),
        Route("/failures", kept(failures), name="failures"),
        Route("/compare", kept(compare), name="compare"),
        Route("/search", search, name="search"),
        Route("/search/status", search_status, name="search_status"),
        Route("/download/results.json", kept(download_results), name="download_results"),
        Route("/download/table.csv", kept(download_table), name="download_table"),
        Route("/download/run", download_run, name="download_run"),
        Route("/download/failures.json", kept(download_failures), name="download_failures"),
        Route("/plot/{name}", plot, name="plot"),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={NotFound: not_found, HTTPException: http_error,
                                                       Exception: server_error})
    app.state.catalog = catalog
    app.state.answered = answered
    app.state.audio = audio
    app.state.loading = loading
    return app


def one_scale(durations: Any, timelines: Any) -> float:
    """Seconds a timeline's full width stands for: the longest of a group's clips (the minimal
    pair; the hits of a page), so the timelines of a group have the same pixels per second."""
    return max([*durations, *(t.duration for t in timelines), 1.0])


class _Hit:
    """A clip with no score (the planted pair's own checks)."""

    def __init__(self, clip_id: str) -> None:
        self.clip_id = clip_id
        self.score = float("nan")
