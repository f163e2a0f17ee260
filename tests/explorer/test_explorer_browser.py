"""`bench serve` in a real browser: Debian's headless Chromium driven by Selenium through
Debian's chromedriver (never a downloaded browser).

Every page type loads without console errors, an audio element reaches a playable state with
the clip's duration and seeks (byte ranges), a search returns hits, sorting works (by mouse and
by keyboard); a two-stage hit row shows its caption and a detected one its detected events; a
row's play button plays that clip in the page's one player; the failure breakdown counts what the
saved per-query values count; free-text oracle hits read as meeting the query; the first search
with a model shows its loading state, then the hits; at 800 px no table is wider than the window
outside its own scroll box. A screenshot of each page is kept under
``$REASONAUDIO_ARTIFACTS/explorer`` (or the test's temporary folder). Waits are on conditions
with generous timeouts (two busy cores), never fixed sleeps.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="bench serve needs starlette and uvicorn (core dependencies)")

from explorer_support import DETECTED_NAME, TWO_STAGE_NAME, build_explorer_bench  # noqa: E402
from reasonaudio.dataset.view import load_benchmark  # noqa: E402
from reasonaudio.explorer.browser import find_chromium, headless_chromium  # noqa: E402
from reasonaudio.explorer.server import child_server  # noqa: E402

WAIT = 120  # seconds; a condition usually holds in well under one


def _browser_or_skip() -> tuple[str, str]:
    found = find_chromium()
    if isinstance(found, str):
        pytest.skip(f"browser tests need a browser: {found}")
    return found


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    root = os.environ.get("REASONAUDIO_ARTIFACTS")
    folder = Path(root) / "explorer" if root else tmp_path_factory.mktemp("explorer-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    browser, driver_path = _browser_or_skip()
    root = build_explorer_bench(tmp_path_factory.mktemp("explorer-browser") / "bench")
    with child_server(root) as url:
        yield url, load_benchmark(root), browser, driver_path


@pytest.fixture(scope="module")
def driver(site):
    _, _, browser, driver_path = site
    d = headless_chromium(browser, driver_path, timeout=WAIT)
    try:
        yield d
    finally:
        d.quit()


def _wait(driver, condition, message: str):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.2).until(condition, message)


def _load(driver, url: str) -> None:
    driver.get(url)
    _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", f"{url} never loaded")


def _console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def test_every_page_type_loads_without_console_errors(site, driver, artifacts):
    url, bench, _, _ = site
    q = bench.queries[0]
    choice = next(c for c in bench.choices if c.query_id == q.id)
    pages = {
        "overview": "/", "query": f"/query/{q.id}", "clip": f"/clip/{choice.positive}",
        "failures": "/failures?retriever=random&task=all", "compare": "/compare?a=oracle&b=random&task=all",
        "search": f"/search?q={q.id}&retriever=oracle", "not-found": "/clip/no-such-clip",
    }
    driver.get_log("browser")  # start clean
    for name, path in pages.items():
        _load(driver, url + path)
        assert driver.find_element("css selector", "nav").is_displayed()
        driver.save_screenshot(str(artifacts / f"{name}.png"))
        errors = _console_errors(driver)
        if name == "not-found":  # the 404 page itself is the one expected error
            assert all("404" in e for e in errors), errors
        else:
            assert errors == [], (name, errors)
    assert len(list(artifacts.glob("*.png"))) >= len(pages)


def test_audio_becomes_playable_with_the_clip_duration_and_seeks(site, driver):
    url, bench, _, _ = site
    clip = max(bench.clips, key=lambda c: c.duration)
    _load(driver, f"{url}/clip/{clip.id}")
    driver.execute_script("const a = document.getElementById('audio-clip'); a.preload = 'auto'; a.load();")
    _wait(driver, lambda d: d.execute_script("return document.getElementById('audio-clip').readyState") >= 3,
          "the audio element never reached HAVE_FUTURE_DATA")
    duration = driver.execute_script("return document.getElementById('audio-clip').duration")
    assert duration == pytest.approx(clip.duration, abs=0.01)
    target = round(clip.duration * 0.75, 2)
    driver.execute_script(
        "const a = document.getElementById('audio-clip'); window.__seeked = false;"
        "a.addEventListener('seeked', () => { window.__seeked = true; }, {once: true});"
        f"a.currentTime = {target};")
    _wait(driver, lambda d: d.execute_script("return window.__seeked"), "the audio element never seeked")
    assert driver.execute_script("return document.getElementById('audio-clip').currentTime") == \
        pytest.approx(target, abs=0.05)
    error = driver.execute_script("const e = document.getElementById('audio-clip').error; return e && e.code")
    assert error is None
    assert _console_errors(driver) == []


def test_search_box_returns_hits(site, driver):
    url, bench, _, _ = site
    q = bench.queries[3]
    _load(driver, f"{url}/search")
    box = driver.find_element("css selector", "#search-form input[name=q]")
    box.clear()
    box.send_keys(q.text)
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("css selector", "#search-form select[name=retriever]")).select_by_value("oracle")
    driver.find_element("css selector", "#search-form button[type=submit]").click()
    _wait(driver, lambda d: d.find_elements("css selector", "table.hits tbody tr"), "no hits appeared")
    rows = driver.find_elements("css selector", "table.hits tbody tr")
    assert len(rows) == min(10, len(bench.qrels[q.id]))
    assert all(r.find_elements("css selector", "td.yes") for r in rows)  # the oracle's hits satisfy every check
    assert _console_errors(driver) == []


def test_sorting_a_table_by_a_column(site, driver):
    url, _, _, _ = site
    _load(driver, f"{url}/failures?retriever=random&task=all")
    header = driver.find_element("xpath", "//table[@id='failures']/thead//th[text()='positive']")
    column = 1 + [th.text for th in driver.find_elements("css selector", "#failures thead th")].index("positive")

    def values():
        return [float(td.get_attribute("data-value")) for td in
                driver.find_elements("css selector", f"#failures tbody tr td:nth-child({column})")]

    assert len(values()) >= 3
    header.click()
    _wait(driver, lambda d: "desc" in header.get_attribute("class"), "no sort order shown")
    assert values() == sorted(values(), reverse=True)
    header.click()
    _wait(driver, lambda d: "asc" in header.get_attribute("class"), "no sort order shown")
    assert values() == sorted(values())
    assert values() != sorted(values(), reverse=True)  # the random retriever's ranks differ


CSS = "css selector"


def _text(element) -> str:
    return " ".join((element.get_attribute("textContent") or "").split())


def test_a_two_stage_hit_row_shows_its_caption(site, driver):
    from reasonaudio.models.captioners import oracle_caption

    url, bench, _, _ = site
    q = bench.queries[1]
    _load(driver, f"{url}/query/{q.id}")
    rows = driver.find_elements(CSS, f'table.hits[data-retriever="{TWO_STAGE_NAME}"] tbody tr')
    assert len(rows) == 10
    for row in rows:
        caption = row.find_element(CSS, "div.seen.caption q.caption")
        assert caption.is_displayed()
        assert _text(caption) == oracle_caption(bench.clip_by_id[row.get_attribute("data-clip")])
        assert f"caption ({TWO_STAGE_NAME})" in _text(row.find_element(CSS, "div.seen.caption"))


def test_a_detected_hit_row_shows_detected_events(site, driver):
    url, bench, _, _ = site
    q = bench.queries[2]
    _load(driver, f"{url}/query/{q.id}")
    from reasonaudio.evaluation.results import run_path
    from reasonaudio.evaluation.runs import read_trec

    rows = driver.find_elements(CSS, f'table.hits[data-retriever="{DETECTED_NAME}"] tbody tr')
    ranked = read_trec(run_path(bench, DETECTED_NAME)).ranking(q.id)[:10]
    assert [r.get_attribute("data-clip") for r in rows] == ranked
    assert rows
    for row in rows:
        clip = bench.clip_by_id[row.get_attribute("data-clip")]
        view = row.find_element(CSS, "div.seen.events")
        assert view.is_displayed() and f"detected by {DETECTED_NAME}" in _text(view)
        events = view.find_elements(CSS, "svg.timeline rect.event")
        assert len(events) == len(clip.events) - 1  # the fixture's detector misses the last event
        assert [_text(t) for t in view.find_elements(CSS, "svg.timeline text.conf")] == ["0.80"] * len(events)
        truth = row.find_elements(CSS, "td.events > svg.timeline rect.event")
        assert len(truth) == len(clip.events)  # the truth beside what was detected


def _player_state(driver) -> dict:
    return driver.execute_script(
        "const a = document.getElementById('player');"
        "return {clip: a.getAttribute('data-clip'), src: a.currentSrc, ready: a.readyState,"
        " time: a.currentTime, paused: a.paused, error: a.error && a.error.code,"
        " players: document.querySelectorAll('audio').length};")


def test_a_play_button_in_a_hit_row_plays_that_clip(site, driver):
    url, bench, _, _ = site
    q = bench.queries[3]
    _load(driver, f"{url}/query/{q.id}")
    row = driver.find_elements(CSS, 'table.hits[data-retriever="random"] tbody tr')[4]
    clip_id = row.get_attribute("data-clip")
    button = row.find_element(CSS, "button.play")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
    button.click()
    _wait(driver, lambda d: _player_state(d)["clip"] == clip_id, "the player never took the clip")
    _wait(driver, lambda d: _player_state(d)["ready"] >= 2 and _player_state(d)["time"] > 0,
          "the clip never started playing")
    first = _player_state(driver)
    assert first["src"].endswith(f"/audio/{clip_id}.wav") and first["players"] == 1  # one shared player
    _wait(driver, lambda d: _player_state(d)["time"] > first["time"], "playback never advanced")
    assert "playing" in button.get_attribute("class") and _player_state(driver)["error"] is None
    driver.execute_script("document.getElementById('player').pause();")
    assert _console_errors(driver) == []


def test_the_failure_breakdown_counts_what_the_saved_values_count(site, driver):
    from reasonaudio.evaluation.results import load_results

    url, bench, _, _ = site
    saved = load_results(bench).runs
    for task in ("all", "negation", "mix"):
        _load(driver, f"{url}/failures?task={task}")
        rows = driver.find_elements(CSS, "#breakdown tbody tr")
        assert [r.get_attribute("data-retriever") for r in rows] == list(saved)
        for row in rows:
            result = saved[row.get_attribute("data-retriever")]
            qids = [q for q, t in result.task_of.items() if task == "all" or t == task]
            wrong = sum(1 for q in qids if result.per_query[q].get("acc@1", 0.0) < 1.0)
            failed = int(row.find_element(CSS, "td.failed").text)
            kinds = [int(td.text) for td in row.find_elements(CSS, "td[data-kind]")]
            assert failed == wrong and sum(kinds) == wrong, (task, row.get_attribute("data-retriever"))


def test_free_text_oracle_hits_read_as_meeting_the_query(site, driver):
    url, bench, _, _ = site
    q = next(q for q in bench.queries if q.task == "negation")
    _load(driver, f"{url}/search")
    box = driver.find_element(CSS, "#search-form input[name=q]")
    box.clear()
    box.send_keys(q.text)
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(CSS, "#search-form select[name=retriever]")).select_by_value("oracle")
    driver.find_element(CSS, "#search-form button[type=submit]").click()
    _wait(driver, lambda d: d.find_elements(CSS, "table.hits tbody tr"), "no hits appeared")
    verdicts = [td.text for td in driver.find_elements(CSS, "table.hits tbody td.verdict")]
    assert verdicts and set(verdicts) == {"meets the query"}
    headers = [th.text for th in driver.find_elements(CSS, "table.hits thead th")]
    assert "relevant" not in headers and "verdict" in headers  # never a false "relevant: no"


def test_the_first_model_search_shows_loading_then_its_hits(site, driver):
    url, bench, _, _ = site
    from urllib.parse import quote

    _load(driver, f"{url}/search?q={quote(bench.queries[5].text)}&retriever={quote(TWO_STAGE_NAME)}")
    _wait(driver, lambda d: d.find_elements(CSS, "#loaded-note"), "the page never came back with the hits")
    assert "loaded in" in driver.find_element(CSS, "#loaded-note").text  # it went through the loading note
    assert len(driver.find_elements(CSS, "table.hits tbody tr")) == 10
    assert _console_errors(driver) == []


def test_keys_sort_headers_turn_queries_and_play(site, driver):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    url, bench, _, _ = site
    _load(driver, f"{url}/failures?retriever=random&task=all")
    header = driver.find_element("xpath", "//table[@id='failures']/thead//th[text()='first relevant']")
    assert header.get_attribute("tabindex") == "0"
    driver.execute_script("arguments[0].focus();", header)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    _wait(driver, lambda d: header.get_attribute("aria-sort") == "descending", "Enter did not sort")
    q0, q1 = bench.queries[0].id, bench.queries[1].id
    _load(driver, f"{url}/query/{q0}")
    ActionChains(driver).send_keys("n").perform()
    _wait(driver, lambda d: d.current_url.endswith(f"/query/{q1}"), "n did not open the next query")
    _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", "no page")
    ActionChains(driver).send_keys(Keys.SPACE).perform()
    _wait(driver, lambda d: _player_state(d)["clip"] and not _player_state(d)["paused"], "space did not play")
    ActionChains(driver).send_keys(Keys.SPACE).perform()
    _wait(driver, lambda d: _player_state(d)["paused"], "space did not pause")
    ActionChains(driver).send_keys("p").perform()
    _wait(driver, lambda d: d.current_url.endswith(f"/query/{q0}"), "p did not open the previous query")


WIDE_TABLES = """
const w = window.innerWidth, bad = [];
for (const t of document.querySelectorAll('table')) {
  const width = t.getBoundingClientRect().width;
  if (width <= w) continue;
  let box = t.parentElement, held = false;
  for (; box && box !== document.body; box = box.parentElement) {
    const x = getComputedStyle(box).overflowX;
    if ((x === 'auto' || x === 'scroll') && box.getBoundingClientRect().width <= w) { held = true; break; }
  }
  if (!held) bad.push((t.id || t.className) + ': ' + Math.round(width) + ' px');
}
return {inner: w, page: document.documentElement.scrollWidth, bad: bad,
        wide: Array.from(document.querySelectorAll('table')).some(t => t.getBoundingClientRect().width > w)};
"""


def test_at_800_px_no_table_is_wider_than_the_window_outside_its_scroll_box(site, driver, artifacts):
    url, bench, _, _ = site
    q = bench.queries[0]
    pages = {"overview": "/", "query": f"/query/{q.id}", "breakdown": "/failures?task=all",
             "failures": "/failures?retriever=random&task=all", "compare": "/compare?a=oracle&b=random",
             "search": f"/search?q={q.id}&retriever=oracle", "clip": f"/clip/{bench.clips[0].id}"}
    size = driver.get_window_size()
    try:
        driver.set_window_size(800, 1000)
        wide = False
        for name, path in pages.items():
            _load(driver, url + path)
            found = driver.execute_script(WIDE_TABLES)
            assert found["inner"] <= 800 and found["bad"] == [], (name, found)
            assert found["page"] <= found["inner"], (name, found)  # the page itself never scrolls sideways
            wide = wide or found["wide"]
            driver.save_screenshot(str(artifacts / f"narrow-{name}.png"))
        assert wide  # some table does need its box at this width (the check is not vacuous)
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_two_retrievers_side_by_side_on_one_query(site, driver):
    url, bench, _, _ = site
    from reasonaudio.evaluation.metrics import first_rank
    from reasonaudio.evaluation.results import run_path
    from reasonaudio.evaluation.runs import read_trec

    q = bench.queries[4]
    _load(driver, f"{url}/query/{q.id}")
    from selenium.webdriver.support.ui import Select

    form = driver.find_element(CSS, "#compare-query-form")
    Select(form.find_element(CSS, "select[name=a]")).select_by_value("bag-of-sounds")
    Select(form.find_element(CSS, "select[name=b]")).select_by_value("random")
    form.find_element(CSS, "button[type=submit]").click()
    _wait(driver, lambda d: len(d.find_elements(CSS, "section.compare-side")) == 2, "no side-by-side view")
    sides = driver.find_elements(CSS, "section.compare-side")
    assert [s.get_attribute("data-retriever") for s in sides] == ["bag-of-sounds", "random"]
    tops = {n: read_trec(run_path(bench, n)).ranking(q.id) for n in ("bag-of-sounds", "random")}
    for side in sides:
        name = side.get_attribute("data-retriever")
        rows = side.find_elements(CSS, "table.side-hits tbody tr")
        assert [r.get_attribute("data-clip") for r in rows][:10] == tops[name][:10]
        first = first_rank(tops[name], bench.qrels[q.id])
        assert _text(side.find_element(CSS, ".first-relevant")) == ("-" if first == float("inf") else str(int(first)))
    shared = set(tops["bag-of-sounds"][:10]) & set(tops["random"][:10])
    assert f"{len(shared)} of the top 10" in _text(driver.find_element(CSS, "#agreement"))
    assert len(driver.find_elements(CSS, "section.compare-side tr.shared")) == 2 * len(shared)
    _load(driver, f"{url}/compare?a=oracle&b=random&task=all&outcome=b")  # the disagreements, filtered
    assert driver.find_elements(CSS, "#losses") and not driver.find_elements(CSS, "#wins")
    assert _console_errors(driver) == []


def test_the_clip_page_shows_the_sound_with_aligned_events_and_a_moving_playhead(site, driver):
    url, bench, _, _ = site
    clip = max(bench.clips, key=lambda c: c.duration)
    _load(driver, f"{url}/clip/{clip.id}?q={bench.queries[0].id}")
    figure = driver.find_element(CSS, "svg.sound")
    _wait(driver, lambda d: d.execute_script(
        "const i = new Image(); i.src = arguments[0].querySelector('image').href.baseVal;"
        "return i.decode().then(() => i.naturalWidth > 0);", figure), "the spectrogram never loaded")
    lanes = {g.get_attribute("data-lane"): g for g in figure.find_elements(CSS, "g.lane")}
    assert list(lanes) == ["truth", DETECTED_NAME]
    scale = float(figure.get_attribute("data-px-per-s"))
    x0 = float(figure.get_attribute("data-x0"))
    truth = lanes["truth"].find_elements(CSS, "rect.event")
    assert len(truth) == len(clip.events)
    for rect, event in zip(truth, sorted(clip.events, key=lambda e: (e.onset, e.label))):
        assert float(rect.get_attribute("x")) == pytest.approx(x0 + event.onset * scale, abs=0.01)
    heard = lanes[DETECTED_NAME].find_elements(CSS, "rect.event")
    assert len(heard) == len(clip.events) - 1  # the fixture's detector misses the last event, a little late
    image = figure.find_element(CSS, "image")
    assert float(image.get_attribute("x")) == x0
    assert float(image.get_attribute("width")) == pytest.approx(clip.duration * scale, abs=0.01)

    def playhead() -> float:
        return float(figure.find_element(CSS, "line.playhead").get_attribute("x1"))

    assert playhead() == pytest.approx(x0)
    driver.execute_script("document.getElementById('audio-clip').play();")
    _wait(driver, lambda d: playhead() > x0 + 1, "the playhead never moved")
    moved = playhead()
    _wait(driver, lambda d: playhead() > moved + 1, "the playhead stopped during playback")
    time_now = driver.execute_script("return document.getElementById('audio-clip').currentTime")
    assert abs(playhead() - (x0 + time_now * scale)) < scale * 0.5  # it is where the audio is
    driver.execute_script("document.getElementById('audio-clip').pause();")
    assert _console_errors(driver) == []


def test_filter_sort_and_a_permalink_that_restores_them(site, driver):
    url, bench, _, _ = site
    _load(driver, f"{url}/failures?retriever=random&task=all")
    rows = lambda: [r for r in driver.find_elements(CSS, "#failures tbody tr") if r.is_displayed()]  # noqa: E731
    total = len(rows())
    tools = driver.find_element(CSS, '.table-tools[data-for="failures"]')
    from selenium.webdriver.support.ui import Select

    kinds = Select(tools.find_element(CSS, "select[name=kind]"))
    kind = kinds.options[1].get_attribute("value")
    kinds.select_by_value(kind)
    _wait(driver, lambda d: len(rows()) < total or all(_text(r.find_elements(CSS, "td")[2]) == kind for r in rows()),
          "the kind filter did nothing")
    assert rows() and all(_text(r.find_elements(CSS, "td")[2]) == kind for r in rows())
    header = driver.find_element("xpath", "//table[@id='failures']/thead//th[text()='first relevant']")
    header.click()
    _wait(driver, lambda d: "desc" in header.get_attribute("class"), "no sort")
    word = _text(rows()[0].find_elements(CSS, "td")[-1]).split()[0]
    box = tools.find_element(CSS, "input[type=search]")
    box.send_keys(word)
    _wait(driver, lambda d: all(word.lower() in _text(r).lower() for r in rows()), "the search did nothing")
    shown = [r.get_attribute("textContent") for r in rows()]
    link = driver.current_url
    assert "failures.kind=" in link and "failures.sort=first-relevant" in link and "failures.q=" in link
    _load(driver, "about:blank")
    _load(driver, link)  # the permalink: the same rows, in the same order, the same controls
    assert [r.get_attribute("textContent") for r in rows()] == shown
    tools = driver.find_element(CSS, '.table-tools[data-for="failures"]')
    assert tools.find_element(CSS, "input[type=search]").get_attribute("value") == word
    assert Select(tools.find_element(CSS, "select[name=kind]")).first_selected_option.get_attribute("value") == kind
    assert "desc" in driver.find_element("xpath", "//table[@id='failures']/thead//th[text()='first relevant']") \
        .get_attribute("class")
    assert _console_errors(driver) == []


def test_a_retriever_has_one_colour_on_every_page(site, driver):
    url, bench, _, _ = site
    q = bench.queries[0]
    pages = ["/", f"/query/{q.id}", "/failures", f"/failures?retriever={DETECTED_NAME}",
             f"/compare?a={DETECTED_NAME}&b=oracle", f"/compare?a=oracle&b={DETECTED_NAME}&q={q.id}"]
    seen: dict[str, set[str]] = {}
    for page in pages:
        _load(driver, url + page)
        for swatch in driver.find_elements(CSS, ".swatch[data-retriever]"):
            colour = driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor", swatch)
            seen.setdefault(swatch.get_attribute("data-retriever"), set()).add(colour)
    assert len(seen[DETECTED_NAME]) == 1 and len(seen["oracle"]) == 1
    assert all(len(colours) == 1 for colours in seen.values()), seen
    assert len({next(iter(c)) for c in seen.values()}) == len(seen)  # and the retrievers' differ


def test_at_800_px_the_verdict_columns_are_in_the_window(site, driver):
    url, bench, _, _ = site
    q = bench.queries[1]
    size = driver.get_window_size()
    try:
        driver.set_window_size(800, 1000)
        _load(driver, f"{url}/query/{q.id}")
        found = driver.execute_script("""
            const w = document.documentElement.clientWidth, out = [];
            for (const t of document.querySelectorAll('table.hits')) {
              for (const th of t.querySelectorAll('thead th.verdict')) {
                const r = th.getBoundingClientRect();
                out.push({right: r.right, left: r.left, width: w});
              }
              const cell = t.querySelector('tbody td.verdict');
              if (cell) { const r = cell.getBoundingClientRect(); out.push({right: r.right, left: r.left, width: w}); }
            }
            return out;""")
        assert found and all(0 <= f["left"] and f["right"] <= f["width"] for f in found), found
        _load(driver, f"{url}/failures?retriever=random&task=all")
        kind = driver.find_element("xpath", "//table[@id='failures']/thead//th[text()='kind']")
        assert kind.rect["x"] + kind.rect["width"] <= driver.execute_script("return document.documentElement.clientWidth")
    finally:
        driver.set_window_size(size["width"], size["height"])
