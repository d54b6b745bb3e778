"""The web view's browser tests' harness: the app on its real server, and Debian's headless chromium driven
through its chromedriver (selenium), with a screenshot of each page saved for docs/web.md.

Screenshots go to `$UNO_ARENA_SCREENSHOTS` (default `build/screenshots/`, ignored by git);
`python tests/web/browser.py --copy-to docs/images` copies the latest into the docs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.provision import BROWSER_PACKAGES, missing
from uno_arena.web.app import ServerLimits, WebServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("UNO_ARENA_SCREENSHOTS", ROOT / "build" / "screenshots"))
WIDE = (1280, 900)
NARROW = (400, 900)  # the narrowest layout the pages promise (no horizontal overflow)


@contextlib.contextmanager
def serving(app: Flask, limits: ServerLimits | None = None) -> Iterator[str]:
    """The app on the web view's own server (waitress), on a free port, in a thread; its base URL."""
    server = WebServer(app, "127.0.0.1", 0, limits or ServerLimits())
    thread = threading.Thread(target=server.serve, name="web-view", daemon=True)
    thread.start()
    try:
        yield server.urls[0].rstrip("/")
    finally:
        server.stop()
        thread.join(10)
        assert not thread.is_alive(), "the web view did not stop"


def new_browser(size: tuple[int, int] = WIDE, network_log: bool = False) -> Any:
    """A headless chromium; skips the test when chromium or its driver is not installed. `network_log`:
    keep chromium's performance log (`requests_made` reads every request of it)."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        missing(f"chromium or chromedriver is not installed ({BROWSER_PACKAGES})")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={size[0]},{size[1]}"):  # fmt: skip
        options.add_argument(flag)
    if network_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    # the driver given explicitly: selenium never looks for (or downloads) one
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


@pytest.fixture(scope="session")
def _wide_chromium() -> Iterator[Any]:
    """One wide chromium per test process: starting one costs a second or two, more than most tests."""
    driver = new_browser(WIDE)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def _narrow_chromium() -> Iterator[Any]:
    driver = new_browser(NARROW)
    try:
        yield driver
    finally:
        driver.quit()


def _fresh(driver: Any, size: tuple[int, int]) -> Any:
    """The shared browser as a new one would be: a blank page, no cookies, its size (each test serves
    on a port of its own, so no page's storage is another test's)."""
    driver.get("about:blank")
    driver.delete_all_cookies()
    driver.set_window_size(*size)
    return driver


@pytest.fixture
def browser(_wide_chromium: Any) -> Any:
    """A wide headless chromium (1280 px), blank and sized at the start of the test."""
    return _fresh(_wide_chromium, WIDE)


@pytest.fixture
def narrow_browser(_narrow_chromium: Any) -> Any:
    """A 400 px wide headless chromium, blank and sized at the start of the test."""
    return _fresh(_narrow_chromium, NARROW)


def requests_made(driver: Any) -> list[tuple[str, str, int | None]]:
    """Every request chromium made since the last call, from its performance log (a `network_log`
    browser): (type, URL, status; None if no response came yet), redirects included."""
    made: dict[str, tuple[str, str, int | None]] = {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            redirected = params.get("redirectResponse")
            if redirected is not None:  # the same request id goes on at the new URL
                made[params["requestId"] + redirected["url"]] = (
                    "redirect",
                    redirected["url"],
                    redirected["status"],
                )
            made[params["requestId"]] = (params.get("type", "?"), params["request"]["url"], None)
        elif message["method"] == "Network.responseReceived" and params["requestId"] in made:
            kind, url, _ = made[params["requestId"]]
            made[params["requestId"]] = (kind, url, params["response"]["status"])
    return list(made.values())


def screenshot(driver: Any, name: str) -> Path:
    """Save the page as `NAME.png` in the screenshots folder; its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    assert driver.save_screenshot(str(path)), f"chromium could not save {path}"
    return path


def horizontal_overflow(driver: Any) -> int:
    """How many CSS pixels the page is wider than the window (0: nothing to scroll sideways)."""
    width: int = driver.execute_script(
        "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - document.documentElement.clientWidth;"
    )
    return width


if __name__ == "__main__":  # python tests/web/browser.py --copy-to docs/images
    if sys.argv[1:2] != ["--copy-to"] or len(sys.argv) != 3:
        sys.exit("usage: python tests/web/browser.py --copy-to FOLDER")
    target = Path(sys.argv[2])
    target.mkdir(parents=True, exist_ok=True)
    for png in sorted(SCREENSHOTS.glob("*.png")):
        shutil.copy2(png, target / png.name)
        print(f"{png} -> {target / png.name}")
