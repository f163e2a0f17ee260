"""A headless Chromium for looking at the explorer as a user does (its browser tests, the README's
screenshot): Debian's ``chromium`` driven by Selenium through Debian's ``chromedriver``.

Selenium is given both paths, so it never looks for or downloads a browser or a driver of its
own. :func:`find_chromium` says why none can be had, in one line, instead of failing later.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

BROWSERS = ("chromium", "chromium-browser")
DRIVERS = ("chromedriver",)
SYSTEM_BIN = Path("/usr/bin")


def _which(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name) or (str(SYSTEM_BIN / name) if (SYSTEM_BIN / name).is_file() else None)
        if found:
            return found
    return None


def find_chromium() -> tuple[str, str] | str:
    """(browser, driver) paths, or the reason there are none."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (bash scripts/install.sh test installs it)"
    browser, driver = _which(BROWSERS), _which(DRIVERS)
    if browser is None or driver is None:
        return ("Debian's chromium and chromium-driver are not installed "
                "(bash scripts/install.sh test installs them as root where apt-get exists)")
    return browser, driver


def headless_chromium(browser: str, driver: str, width: int = 1400, height: int = 1000,
                      timeout: float = 120.0) -> WebDriver:
    """A Selenium Chrome driver over ``browser`` that records the console (``get_log("browser")``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--autoplay-policy=no-user-gesture-required",
                "--mute-audio", "--no-first-run", "--disable-extensions", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    d.set_page_load_timeout(timeout)
    d.set_script_timeout(timeout)
    return d
