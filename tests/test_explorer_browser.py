"""`bench serve` in a real browser: Debian's headless Chromium driven by Selenium through
Debian's chromedriver (never a downloaded browser).

Every page type loads without console errors, an audio element reaches a playable state with
the clip's duration and seeks (byte ranges), a search returns hits, sorting works. A screenshot of
each page is kept under ``$REASONAUDIO_ARTIFACTS/explorer`` (or the test's temporary folder).
Waits are on conditions with generous timeouts (two busy cores), never fixed sleeps.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="bench serve needs the serve extra (starlette, uvicorn)")

from explorer_support import build_explorer_bench  # noqa: E402
from reasonaudio.dataset.benchmark import load_benchmark  # noqa: E402
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
