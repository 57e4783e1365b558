"""What every browser test shares: Debian's chromium, a phone's screen
(390 x 844), where screenshots go, and small page helpers. The ``browser``
and ``phone`` fixtures are in conftest.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("COMPANION_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
         "is_mobile": True, "has_touch": True}
TIMEOUT_MS = 8_000
#: chromium flags for a machine with no network beyond the package mirrors
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

#: ``pytestmark`` of a module of browser tests
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason=f"no chromium at {CHROMIUM} (the test command installs "
                              "Debian's chromium: apt-get install chromium)"),
]


def shot(page, name: str) -> Path:
    """A full-page screenshot in artifacts/screenshots/ for a person to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def expect_text(page, selector: str, pattern: str):
    from playwright.sync_api import expect

    expect(page.locator(selector)).to_contain_text(re.compile(pattern), timeout=TIMEOUT_MS)
