"""Fixtures of the browser tests: one live server and one headless Chromium for the whole session.

Every test ends by reading the browser's network log (CDP Network events through goog:loggingPrefs) and
failing on any request to a host other than the service, and on any script error in the console."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.conftest import free_port

from .harness import ARTIFACTS, browser_missing, start_browser, start_server

DESKTOP = (1280, 900)
PHONE = (360, 780)


@pytest.fixture(scope="session")
def live():
    server, stop = start_server(free_port())
    yield server
    stop()


@pytest.fixture(scope="session")
def browser():
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    driver, stop = start_browser(*DESKTOP)
    ARTIFACTS.mkdir(exist_ok=True)
    yield driver
    stop()


def requested_urls(driver) -> list[str]:
    """Every URL the browser asked for since the log was last read (drains the log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


# Schemes that never leave the machine: inline data and the browser's own resources (Chromium's internal pages load
# chrome:// resources in the same log, e.g. when it opens a web-store tile on its own; not requests of the page)
LOCAL_SCHEMES = ("data", "blob", "about", "chrome", "chrome-extension", "chrome-untrusted", "devtools")


def foreign_requests(urls: list[str], base: str) -> list[str]:
    """The network requests to another origin than the page's (any http, https, ws... host but its own)."""
    origin = urlsplit(base)
    return [
        u
        for u in urls
        if urlsplit(u).scheme not in LOCAL_SCHEMES
        and (urlsplit(u).scheme, urlsplit(u).netloc) != (origin.scheme, origin.netloc)
    ]


def script_errors(driver) -> list[str]:
    """Console errors other than the failed responses the page expects (e.g. a 404 probe, a 422)."""
    return [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE" and "Failed to load resource" not in e["message"]
    ]


class Page:
    """The page in the session's browser, with the waits the tests need."""

    def __init__(self, driver, live):
        self.driver = driver
        self.live = live
        self.requests: list[str] = []

    def open(self, query: str = "", size: tuple[int, int] = DESKTOP) -> Page:
        self.driver.set_window_size(*size)
        self.driver.get("about:blank")  # a URL differing only by its #fragment would not reload the page
        self.driver.get(f"{self.live.url}/{query}")
        self.wait(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
        return self

    def wait(self, condition, timeout: float = 15):
        from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        ignored = (NoSuchElementException, StaleElementReferenceException)  # the page re-renders results
        return WebDriverWait(self.driver, timeout, poll_frequency=0.05, ignored_exceptions=ignored).until(
            condition
        )

    def css(self, selector: str):
        return self.driver.find_element("css selector", selector)

    def all(self, selector: str):
        return self.driver.find_elements("css selector", selector)

    def visible(self, selector: str, timeout: float = 15):
        return self.wait(lambda d: next((e for e in self.all(selector) if e.is_displayed()), False), timeout)

    def tab(self, view: str) -> None:
        self.css(f'[role="tab"][data-view="{view}"]').click()
        self.wait(lambda d: self.css(f"#view-{view}").is_displayed())

    def type(self, selector: str, text: str) -> None:
        field = self.css(selector)
        field.clear()
        field.send_keys(text)

    def select(self, selector: str, value: str) -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.css(selector)).select_by_value(value)

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def use_key(self, secret: str) -> None:
        self.tab("scenarios")
        self.type("#api-key", secret)
        self.css("#key-form button[type=submit]").click()
        self.wait(lambda d: "…" in self.css("#key-state").text)

    def toast(self, contains: str) -> str:
        return self.wait(lambda d: contains in self.css("#toast").text and self.css("#toast").text)

    def screenshot(self, name: str) -> None:
        """The whole page (beyond the viewport) as tests/web/artifacts/<name>.png."""
        time.sleep(0.05)
        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        width = self.js("return window.innerWidth")  # the capture lays the page out without a scrollbar
        clip = {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
        )
        (ARTIFACTS / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))


@pytest.fixture
def page(browser, live) -> Iterator[Page]:
    requested_urls(browser)  # start each test with an empty network log
    browser.get_log("browser")
    current = Page(browser, live)
    yield current
    urls = requested_urls(browser)
    errors = script_errors(browser)
    browser.execute_script("try { sessionStorage.clear() } catch (e) {}")
    assert not foreign_requests(urls, live.url), (
        f"requests to other hosts: {foreign_requests(urls, live.url)}"
    )
    assert not errors, f"script errors: {errors}"
