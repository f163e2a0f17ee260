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
from typing import Any, Callable, Iterable
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from reasonaudio.evaluation.intervals import WILSON_METRICS, results_document
from reasonaudio.evaluation.metrics import METRICS
from reasonaudio.evaluation.results import run_path
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.errors import ReasonAudioError, error_line, redact
from reasonaudio.explorer.audio_cache import CONTENT_TYPE, AudioCache
from reasonaudio.explorer.catalog import Catalog, NotFound, Timeline, json_text, rank_text, sort_value
from reasonaudio.explorer.colours import colour
from reasonaudio.explorer.query_views import first_relevant_row, pair_views, side_by_side
from reasonaudio.explorer.downloads import (CSV_TYPE, JSON_TYPE, TREC_TYPE, attachment, json_bytes,
                                             table_csv, unreadable_header, with_unreadable)
from reasonaudio.explorer.failure_tables import by_retriever, by_task, meanings
from reasonaudio.explorer.model_loading import FAILED, LOADING, READY, Loading
from reasonaudio.explorer.spectrogram import spectrogram_png
from reasonaudio.explorer.verdicts import verdict
from reasonaudio.explorer.ranges import RangeError, parse_range
from reasonaudio.retrievers.registry import SHORT_KIND

STATIC = Path(__file__).parent / "static"
MAX_K = 100
KEPT_PAGES = 1024
"""rendered pages kept in memory (a query page of the demo is about 100 KB)"""
log = logging.getLogger("reasonaudio.explorer")


def _fmt(value: object) -> str:
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
    return SHORT_KIND.get(kind, kind)


def param(request: Request, name: str, default: str | None = None) -> str:
    """A query parameter (``default`` when absent; without a default, a missing one is a 404)."""
    value = request.query_params.get(name, default)
    if value is None:
        raise NotFound(f"missing parameter {name!r}")
    return value


def environment() -> Environment:
    env = Environment(loader=PackageLoader("reasonaudio.explorer", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["fmt"] = _fmt
    env.filters["rank"] = rank_text
    env.filters["breakable"] = breakable
    env.filters["colour"] = colour
    env.globals.update(inf=math.inf, TASKS=TASKS, METRICS=METRICS, sort_value=sort_value, json_text=json_text,
                       verdict_of=verdict, WILSON_METRICS=WILSON_METRICS, short_kind=short_kind)
    return env


class Site:
    """The explorer's pages over one catalog: each handler a method, the rendered pages kept."""

    def __init__(self, catalog: Catalog, audio: AudioCache | None = None) -> None:
        self.catalog = catalog
        self.env = environment()
        self.audio = audio or AudioCache(catalog.bench, bank_spec=catalog.bank_spec)
        self.title = f"{catalog.bench.root.parent.name}/{catalog.bench.root.name}"
        self.loading = Loading(catalog.prepare)
        self.answered = threading.Event()
        """set once a page has been rendered (the server's background warm-up waits for it)"""
        self.pages: OrderedDict[str, HTMLResponse] = OrderedDict()
        self.pages_lock = threading.Lock()
        self.pictures: OrderedDict[str, bytes] = OrderedDict()
        """spectrogram PNGs by clip id (about 20 KB each)"""
        self.pictures_lock = threading.Lock()

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(request=request, title=self.title, catalog=self.catalog,
                                                      url=request.app.url_path_for, **context)
        self.answered.set()
        return HTMLResponse(html, status_code=status)

    def kept(self, handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        """Render a page once and keep it: everything it shows was loaded when the server started
        (results, runs, the benchmark) or is fixed while it runs (the read-only store)."""
        def answer(request: Request) -> Response:
            key = request.url.path + "?" + server_query(request)
            with self.pages_lock:
                hit = self.pages.get(key)
                if hit is not None:
                    self.pages.move_to_end(key)
                    return hit
            response = handler(request)
            if response.status_code == 200:
                with self.pages_lock:
                    self.pages[key] = response
                    while len(self.pages) > KEPT_PAGES:
                        self.pages.popitem(last=False)
            return response
        return answer

    def overview(self, request: Request) -> Response:
        task = self.catalog.task(param(request, "task", "all"))  # one task's table: a quick first page
        return self.page(request, "overview.html", task=task, rows=self.catalog.table(task))

    def query(self, request: Request) -> Response:
        q = self.catalog.query(request.path_params["qid"])
        pair = self.catalog.pair(q)
        tops = []
        for row in self.catalog.pair_ranks(q.id):
            hits = self.catalog.top(row["name"], q.id)
            below = first_relevant_row(self.catalog, row["name"], q)
            hits = hits + [below] if below is not None else hits  # the first relevant clip, below the top
            tops.append((row, hits, self.catalog.seen(row["name"], [h.clip_id for h in hits], q.logic)))
        timelines = {h.clip_id: self.catalog.timeline(self.catalog.clip(h.clip_id), q.logic)
                     for _, hits, _ in tops for h in hits if h.clip_id in self.catalog.bench.clip_by_id}
        prev_q, next_q = self.catalog.neighbours(q.id)
        return self.page(request, "query.html", q=q, parts=self.catalog.logic_parts(q.logic), pair=pair,
                         pair_seen=pair_views(self.catalog, q),
                         violation=self.catalog.violation.get(q.id, ""), tops=tops, timelines=timelines,
                         pair_span=one_scale([s["clip"].duration for s in pair], ()),
                         span=one_scale((), timelines.values()),
                         n_relevant=len(self.catalog.bench.qrels.get(q.id, ())), prev_q=prev_q, next_q=next_q)

    def clip_page(self, request: Request) -> Response:
        clip = self.catalog.clip(request.path_params["cid"])
        qid = request.query_params.get("q")
        q = self.catalog.query(qid) if qid is not None else None  # ?q=QID: that query's sounds and checks
        logic = q.logic if q is not None else None
        queries = [(self.catalog.query(p), role) for p, role in self.catalog.planted_in.get(clip.id, [])]
        marks = self.catalog.ranked([_Hit(clip.id)], logic, q.id)[0] if q is not None else None
        cat = self.catalog
        truth, detected = cat.timeline(clip, logic), cat.detected(clip, logic)
        return self.page(request, "clip.html", clip=clip, q=q, marks=marks, parts=cat.logic_parts(logic),
                         true_timeline=truth, detected=detected, lanes=[("truth", truth), *detected],
                         captions=cat.captions(clip), planted=queries, store_note=cat.store_note())

    def failures(self, request: Request) -> Response:
        task = self.catalog.task(param(request, "task", "all"))
        meaning = dict(meanings())
        kind = request.query_params.get("kind")
        if kind is not None and kind not in meaning:
            raise NotFound(f"no failure kind {kind!r} (kinds: {', '.join(meaning)})")
        bd = self.catalog.breakdown()
        if "retriever" not in request.query_params:  # every retriever, by kind
            kinds, rows = by_retriever(bd, task)
            return self.page(request, "breakdown.html", task=task, kinds=kinds, rows=rows, meaning=meaning,
                             meanings=meanings())
        name = self.catalog.retriever(param(request, "retriever"))
        rows = self.catalog.failures(name, task, kind)
        rows.sort(key=lambda f: (-sort_value(f.first_relevant, self.catalog.depth(name)), f.qid))
        kinds, per_task = by_task(bd, name)
        return self.page(request, "failures.html", name=name, task=task, kind=kind, rows=rows, kinds=kinds,
                         by_task=per_task, meaning=meaning, depth=self.catalog.depth(name),
                         has_run=self.catalog.run(name) is not None, run_note=self.catalog.run_note(name))

    def compare(self, request: Request) -> Response:
        names = self.catalog.names
        if len(names) < 2:
            return self.page(request, "compare.html", a=None, b=None, task="all", metric="acc@1", names=names)
        a = self.catalog.retriever(param(request, "a", names[0]))
        b = self.catalog.retriever(param(request, "b", next(n for n in names if n != a)))
        task = self.catalog.task(param(request, "task", "all"))
        metric = param(request, "metric", "acc@1")
        outcome = param(request, "outcome", "all")
        if outcome not in OUTCOMES:
            raise NotFound(f"no outcome {outcome!r} (outcomes: {', '.join(OUTCOMES)})")
        qid = request.query_params.get("q")
        if qid is not None:  # one query, the two side by side
            q = self.catalog.query(qid)
            return self.page(request, "compare_query.html", a=a, b=b, q=q, view=side_by_side(self.catalog, a, b, q),
                             parts=self.catalog.logic_parts(q.logic), names=names)
        result = self.catalog.compare(a, b, task, metric)
        tests = self.catalog.paired(a, b) if a != b else None
        return self.page(request, "compare.html", a=a, b=b, task=task, metric=metric, result=result,
                         names=names, tests=tests, depth=max(self.catalog.depth(a), self.catalog.depth(b)),
                         outcome=outcome)

    def download_results(self, request: Request) -> Response:
        unreadable = self.catalog.results.unreadable
        return Response(json_bytes(with_unreadable(results_document(self.catalog.results), unreadable)),
                        media_type=JSON_TYPE, headers=self.download_headers("results.json"))

    def download_table(self, request: Request) -> Response:
        task = self.catalog.task(param(request, "task", "all"))
        table = table_csv(self.catalog.table(task), self.catalog.dimensions(), self.catalog.results.unreadable)
        return Response(table, media_type=CSV_TYPE, headers=self.download_headers(f"results-{task}.csv"))

    def download_headers(self, filename: str) -> dict[str, str]:
        """A download's headers: saved as ``filename``, with the count of results files that
        cannot be read (and are in no download) when there are any."""
        return {**attachment(filename), **unreadable_header(self.catalog.results.unreadable)}

    def download_run(self, request: Request) -> Response:
        name = self.catalog.retriever(param(request, "retriever"))
        path = run_path(self.catalog.bench, name)
        if not path.is_file():
            raise NotFound(f"no saved run for retriever {name!r}")
        return FileResponse(path, media_type=TREC_TYPE, headers=attachment(path.name))

    def download_failures(self, request: Request) -> Response:
        doc = with_unreadable(self.catalog.breakdown().to_json(), self.catalog.results.unreadable)
        return Response(json_bytes(doc), media_type=JSON_TYPE, headers=self.download_headers("failures.json"))

    def search(self, request: Request) -> Response:
        names = self.catalog.searchable()
        text = request.query_params.get("q", "")
        retriever = request.query_params.get("retriever") or (names[0] if names else "")
        try:
            k = int(request.query_params.get("k", "10"))
        except ValueError:
            k = 0
        context: dict[str, Any] = {"names": names, "text": text, "retriever": retriever, "k": k,
                                   "result": None, "error": None, "timelines": {}, "span": None,
                                   "loading": None, "loaded_in": None,
                                   "store_note": self.catalog.store_note()}
        status = 200
        if not 1 <= k <= MAX_K:
            context["error"], status, context["k"] = f"k must be a whole number from 1 to {MAX_K}", 400, 10
        elif text.strip() and retriever:  # no retriever named and none in the store: the note says why
            status = self.run_search(context, text, retriever, k)
        return self.page(request, "search.html", status=status, **context)

    def run_search(self, context: dict[str, Any], text: str, retriever: str, k: int) -> int:
        """Fill ``context`` with a search's results, its error, or (a model not loaded yet) the
        loading note; the page's status."""
        if retriever not in self.catalog.searchable():
            self.catalog.prepare(retriever)  # the 404 that names what the store has
        error = self.loading.take_error(retriever)
        if error is not None:
            context["error"] = error
            return 400
        if not self.catalog.instant(retriever):
            if self.loading.start(retriever) or self.loading.state(retriever) == LOADING:
                context["loading"] = retriever
                return 202
        try:
            result = self.catalog.search(text, retriever, k)
        except NotFound:
            raise
        except ReasonAudioError as exc:
            context["error"] = error_line(exc)  # redacted: no key on a page
            return 400
        context["result"] = result
        context["loaded_in"] = self.loading.take_load_time(retriever)
        context["timelines"] = timelines = {
            h.clip_id: self.catalog.timeline(self.catalog.clip(h.clip_id), result["logic"])
            for h in result["hits"] if h.clip_id in self.catalog.bench.clip_by_id}
        context["span"] = one_scale((), timelines.values())
        return 200

    def search_status(self, request: Request) -> Response:
        name = param(request, "retriever")
        if name not in self.catalog.searchable():
            raise NotFound(f"the store has no retriever {name!r}")
        state = self.loading.state(name)
        if self.catalog.prepared(name) and state != FAILED:
            state = READY
        seconds = round(self.loading.elapsed(name), 1)
        return JSONResponse({"retriever": name, "state": state, "seconds": seconds},
                            headers={"Cache-Control": "no-store"})

    def audio_file(self, request: Request) -> Response:
        clip = self.catalog.clip(request.path_params["cid"])
        data = self.audio.wav(clip.id)
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

    def spectrogram(self, request: Request) -> Response:
        clip = self.catalog.clip(request.path_params["cid"])
        with self.pictures_lock:
            data = self.pictures.get(clip.id)
        if data is None:
            data = spectrogram_png(self.audio.wav(clip.id))
            with self.pictures_lock:
                self.pictures[clip.id] = data
                while len(self.pictures) > KEPT_PAGES:
                    self.pictures.popitem(last=False)
        return Response(data, media_type="image/png", headers={"Cache-Control": "max-age=3600"})

    def plot(self, request: Request) -> Response:
        return FileResponse(self.catalog.plot(request.path_params["name"]))

    async def not_found(self, request: Request, exc: Exception) -> Response:
        message = str(exc) if isinstance(exc, NotFound) else "no such page"
        return self.page(request, "error.html", status=404, heading="Not found", message=message)

    async def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return await self.not_found(request, exc)
        return self.page(request, "error.html", status=exc.status_code, heading=str(exc.status_code),
                         message=str(exc.detail))

    async def server_error(self, request: Request, exc: Exception) -> Response:
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        log.error("error answering %s\n%s", redact(request.url.path), redact(trace))  # no key in the log
        return self.page(request, "error.html", status=500, heading="Server error",
                         message="the explorer could not answer this page (see the server's log)")


def create_app(catalog: Catalog, audio: AudioCache | None = None) -> Starlette:
    site = Site(catalog, audio)
    routes = [
        Route("/", site.kept(site.overview), name="overview"),
        Route("/query/{qid}", site.kept(site.query), name="query"),
        Route("/clip/{cid}", site.kept(site.clip_page), name="clip"),
        Route("/audio/{cid}.wav", site.audio_file, name="audio", methods=["GET", "HEAD"]),
        Route("/failures", site.kept(site.failures), name="failures"),
        Route("/compare", site.kept(site.compare), name="compare"),
        Route("/search", site.search, name="search"),
        Route("/search/status", site.search_status, name="search_status"),
        Route("/download/results.json", site.kept(site.download_results), name="download_results"),
        Route("/download/table.csv", site.kept(site.download_table), name="download_table"),
        Route("/download/run", site.download_run, name="download_run"),
        Route("/download/failures.json", site.kept(site.download_failures), name="download_failures"),
        Route("/spectrogram/{cid}.png", site.spectrogram, name="spectrogram"),
        Route("/plot/{name}", site.plot, name="plot"),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = {NotFound: site.not_found, HTTPException: site.http_error, Exception: site.server_error}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.catalog = catalog
    app.state.answered = site.answered
    app.state.audio = site.audio
    app.state.loading = site.loading
    return app


OUTCOMES = ("all", "a", "b")
"""the compare page's outcome filter: every query the two disagree on, those A wins, those B wins"""


def server_query(request: Request) -> str:
    """The query string without the parameters the page's script keeps its table state in
    (``TABLE.sort``, ``TABLE.q``, ...: a dot in the name); the server renders the same page."""
    return urlencode([(k, v) for k, v in request.query_params.multi_items() if "." not in k])


def one_scale(durations: Iterable[float], timelines: Iterable[Timeline]) -> float:
    """Seconds a timeline's full width stands for: the longest of a group's clips (the minimal
    pair; the hits of a page), so the timelines of a group have the same pixels per second."""
    return max([*durations, *(t.duration for t in timelines), 1.0])


class _Hit:
    """A clip with no score (the planted pair's own checks)."""

    def __init__(self, clip_id: str) -> None:
        self.clip_id = clip_id
        self.score = float("nan")
