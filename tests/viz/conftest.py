"""Browser fixtures for the graph-page tests: headless Chromium from the system's packages
(``apt-get install -y chromium chromium-driver``) driven by selenium through the system
chromedriver, named explicitly so that selenium never downloads a driver or a browser.
The shared helpers (``viz_support``) are made importable here."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from viz_support import ARTIFACTS, find_browser  # noqa: E402


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session (1400x900), with the console log kept."""
    found = find_browser()
    if isinstance(found, str):
        pytest.skip(found)
    binary, driver_path = found
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
        "--no-first-run",
        "--disable-extensions",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """``artifacts/viz/`` at the repository root (gitignored): screenshots and pages."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
