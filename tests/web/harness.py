"""A real server on a fresh, migrated and seeded SQLite database, and a headless Debian Chromium to drive it.

Used by tests/web/conftest.py; also runnable by hand (`python -m tests.web.harness`) to serve the page on a
throw-away database."""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from scalecost import create_app
from scalecost.store import keys, migrate
from scalecost.store.seeding import seed_catalog
from werkzeug.serving import make_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
# The network here is closed: Chromium's background services (updates, sync, safe browsing) stay off.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
)


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"chromium is not installed ({CHROMIUM}): apt-get install chromium chromium-driver"
    if not Path(CHROMEDRIVER).exists():
        return f"chromedriver is not installed ({CHROMEDRIVER}): apt-get install chromium-driver"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


@dataclass
class LiveServer:
    url: str
    app: object
    directory: str

    def key(self, name: str, role: str) -> str:
        with self.app.extensions["scalecost.db"].transaction() as session:
            _key, secret = keys.create(session, name, role, actor="test")
        return secret


def start_server(port: int) -> tuple[LiveServer, callable]:
    directory = tempfile.mkdtemp(prefix="scalecost-web-")
    url = f"sqlite:///{directory}/web.db"
    migrate.upgrade(url)
    app = create_app(
        {"DATABASE_URL": url, "TESTING": True, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"}
    )
    with app.extensions["scalecost.db"].transaction() as session:
        seed_catalog(session)
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="scalecost-web", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        thread.join(5)
        app.extensions["scalecost.db"].dispose()
        shutil.rmtree(directory, ignore_errors=True)

    return LiveServer(f"http://127.0.0.1:{port}", app, directory), stop


def start_browser(width: int = 1280, height: int = 900):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="scalecost-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument("--lang=en-US")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)

    def stop() -> None:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)

    return driver, stop


if __name__ == "__main__":  # serve the page on a throw-away database: python -m tests.web.harness
    from tests.conftest import free_port

    live, stop = start_server(free_port())
    print(f"{live.url}/  admin key: {live.key('web-admin', 'admin')}")
    try:
        threading.Event().wait()
    finally:
        stop()
