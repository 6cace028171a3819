"""Helpers of the graph-page tests: finding the system browser, opening a page and
waiting for it to draw, reading the console, saving screenshots."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "viz"
"""Where screenshots, pages and measurements of the browser tests go (gitignored)."""

_BINARIES = ("chromium", "chromium-browser")
_DRIVERS = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")


def find_browser() -> tuple[str, str] | str:
    """``(chromium, chromedriver)`` paths, or the reason the browser tests must skip."""
    binary = next((p for b in _BINARIES if (p := shutil.which(b))), None)
    driver = next((d for d in _DRIVERS if Path(d).exists()), None) or shutil.which("chromedriver")
    if binary is None or driver is None:
        missing = "chromium" if binary is None else "chromedriver"
        return (
            f"{missing} is not installed: the graph pages are tested in headless Chromium "
            "from Debian's packages (apt-get install -y chromium chromium-driver)"
        )
    return binary, driver


def open_page(driver: Any, path: Path, timeout: float = 120.0) -> float:
    """Load ``path``; wait until the page says it has drawn (or shows an error).
    Returns the seconds from navigation to ready. Clears the console log first."""
    driver.get_log("browser")
    start = time.perf_counter()
    driver.get(path.resolve().as_uri())
    deadline = start + timeout
    while time.perf_counter() < deadline:
        state = driver.execute_script(
            "return document.documentElement.getAttribute('data-ivt-ready') ||"
            " (document.querySelector('.ivt-error') ? 'error' : null)"
        )
        if state == "error":
            raise AssertionError(driver.find_element("css selector", ".ivt-error").text)
        if state:
            return time.perf_counter() - start
        time.sleep(0.02)
    raise AssertionError(f"{path.name} did not finish drawing in {timeout} s")


def console_problems(driver: Any) -> list[str]:
    """Console messages of level SEVERE or WARNING since the last call."""
    return [
        f"{e['level']}: {e['message']}"
        for e in driver.get_log("browser")
        if e["level"] in ("SEVERE", "WARNING")
    ]


def count(driver: Any, selector: str) -> int:
    """How many elements match ``selector``."""
    return int(driver.execute_script(f"return document.querySelectorAll({selector!r}).length"))


def fetched_resources(driver: Any) -> list[str]:
    """URLs the page fetched after the document itself (must be none: pages are offline)."""
    return list(
        driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    )


def record(name: str, **values: Any) -> None:
    """Add measurements to ``artifacts/viz/measurements.json``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "measurements.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = values
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
