"""Take the README's screenshot of the explorer: a query page of a benchmark (the demo's).

    .venv/bin/python scripts/explorer_screenshot.py --data data/demo/bench [--query q-0100] \
        [--out docs/explorer.png]

Starts ``bench serve`` on a free loopback port, opens the query page in Debian's headless
Chromium, waits for both players of the minimal pair to know their duration, and writes a PNG
(palette-quantised, kept under 300 KB). The server and the browser are always stopped.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from reasonaudio.explorer.browser import find_chromium, headless_chromium
from reasonaudio.explorer.server import child_server

LIMIT = 300 * 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--query", default="q-0100")
    ap.add_argument("--out", type=Path, default=Path("docs/explorer.png"))
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1500)
    args = ap.parse_args()
    found = find_chromium()
    if isinstance(found, str):
        sys.exit(f"error: {found}")
    from PIL import Image
    from selenium.webdriver.support.ui import WebDriverWait

    with child_server(args.data) as url:
        driver = headless_chromium(*found, width=args.width, height=args.height)
        try:
            driver.get(f"{url}/query/{args.query}")
            WebDriverWait(driver, 120).until(lambda d: d.execute_script(
                "const a = Array.from(document.querySelectorAll('audio'));"
                "return a.length > 0 && a.every(x => x.readyState >= 1);"))
            png = driver.get_screenshot_as_png()
        finally:
            driver.quit()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    for colours in (128, 64, 32):
        buf = io.BytesIO()
        image.quantize(colors=colours).save(buf, format="PNG", optimize=True)
        if buf.tell() <= LIMIT:
            break
    args.out.write_bytes(buf.getvalue())
    print(f"wrote {args.out} ({image.width}x{image.height}, {buf.tell() / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
