"""Take the docs' screenshots of the explorer: a query page, the failures page and the overview.

    .venv/bin/python scripts/explorer_screenshot.py --data data/demo/bench [--query q-0100] \
        [--out docs]

Starts ``bench serve`` on a free loopback port, opens each page in Debian's headless Chromium at
a fixed window width (1000 px), waits for it to be laid out, and writes palette-quantised PNGs,
each cut to a fixed height and kept under 300 KB:

- ``explorer.png``: the query page (the README embeds it): its minimal pair on one time scale
  with the measured facts, the ranks, and the first top-10 tables with what each retriever saw;
- ``explorer-failures.png``: the failures page, every retriever's failures by kind;
- ``explorer-overview.png``: the overview, every figure with its interval, the best marked;
- ``explorer-compare.png``: the query's first two retrievers side by side;
- ``explorer-sound.png``: the query's planted positive: its spectrogram with the true and each
  detector's events on one time axis.

Same benchmark, same pages, same bytes up to the browser's font rendering (no animation, no
clock on the pages; the shared player stays hidden). The server and the browser are always
stopped.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from reasonaudio.explorer.browser import find_chromium, headless_chromium
from reasonaudio.explorer.server import child_server

LIMIT = 300 * 1024
WIDTH = 1000
SHOTS = (("explorer.png", "/query/{query}", 1500), ("explorer-failures.png", "/failures?task=all", 900),
         ("explorer-overview.png", "/", 1100), ("explorer-compare.png", "/compare?q={query}", 900),
         ("explorer-sound.png", "/clip/{positive}?q={query}", 900))
"""(file name, page, height in px) of each screenshot"""


def quantised(png: bytes, height: int) -> bytes:
    """``png`` cut to ``height`` px and palette-quantised until it is under :data:`LIMIT`."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image = image.crop((0, 0, image.width, min(height, image.height)))
    for colours in (128, 64, 32):
        buf = io.BytesIO()
        image.quantize(colors=colours, dither=Image.Dither.NONE).save(buf, format="PNG", optimize=True)
        if buf.tell() <= LIMIT:
            break
    return buf.getvalue()


def shoot(driver: object, url: str, height: int) -> bytes:
    """The page at ``url`` once it is laid out, in a window of :data:`WIDTH` x ``height``."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.set_window_size(WIDTH, height)  # type: ignore[attr-defined]
    driver.get(url)  # type: ignore[attr-defined]
    WebDriverWait(driver, 120).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && document.fonts.status === 'loaded';"))
    title = driver.title  # type: ignore[attr-defined]
    if title.startswith(("Not found", "Server error", "400")):
        sys.exit(f"error: {url}: {title.split(' · ')[0]}")
    return driver.get_screenshot_as_png()  # type: ignore[attr-defined]


def planted_positive(data: Path, qid: str) -> str:
    """The planted positive of query ``qid`` (choices.jsonl), the clip of the sound screenshot."""
    import json

    for line in (data / "choices.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("query_id") == qid:
            return str(row["positive"])
    sys.exit(f"error: {data / 'choices.jsonl'}: no planted pair for query {qid!r}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--query", default="q-0100")
    ap.add_argument("--out", type=Path, default=Path("docs"), help="folder of the PNGs")
    args = ap.parse_args()
    found = find_chromium()
    if isinstance(found, str):
        sys.exit(f"error: {found}")
    if not args.out.is_dir():
        sys.exit(f"error: {args.out}: no such folder")
    shots = {}
    positive = planted_positive(args.data, args.query)
    with child_server(args.data) as url:
        driver = headless_chromium(*found, width=WIDTH, height=1000)
        try:
            for name, page, height in SHOTS:
                shots[name] = quantised(shoot(driver, url + page.format(query=args.query, positive=positive), height), height)
        finally:
            driver.quit()
    for name, data in shots.items():  # written only once every page was taken
        (args.out / name).write_bytes(data)
        print(f"wrote {args.out / name} ({len(data) / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
