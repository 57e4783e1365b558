"""What every taps player (``bench/taps_<game>.py``) shares: the phone, the
counted tap, waiting for the console to settle, logging the host in."""

from __future__ import annotations

import json
import os
import time

from tests.kit.browser import CHROMIUM, CHROMIUM_ARGS, PHONE  # noqa: F401 (the players' too)

PIN = "bench-taps-246810"
DEADLINE_S = 20.0


class Host:
    """The host's phone: every tap goes through ``tap`` and is counted."""

    def __init__(self, page, table):
        self.page, self.table = page, table
        self.taps = self.scrolls = 0
        self.kinds: dict[str, int] = {}

    def tap(self, selector: str, kind: str, text: str | None = None) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        loc = self.page.locator(selector, has_text=text) if text else self.page.locator(selector)
        loc = loc.first
        box = loc.bounding_box()
        bar = self.page.locator("#thumb-bar").bounding_box()
        foot = bar["y"] if bar and bar["y"] > 0 else PHONE["viewport"]["height"]
        if box is None or box["y"] < 0 or box["y"] + box["height"] > foot:
            self.scrolls += 1
        self.taps += 1
        loc.click()

    def settle(self) -> dict:
        """Wait until no race runs and the console shows the table's version."""
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            hs = self.table.session.host_snapshot()
            race = hs.get("race") or {}
            if race.get("confirm") or not race or race.get("phase") in ("decided", None):
                shown = self.page.evaluate("() => document.body.dataset.version")
                if shown == str(hs["version"]) and not hs.get("queued"):
                    return hs
            time.sleep(0.05)
        raise TimeoutError("the console did not settle")


def press_all(table, players, rng) -> None:
    """Every one of ``players`` presses their buzzer, in a random order, then
    all let go (a Chope! Table card: the first wins; the Mynah: the last
    loses; a Chomp! race after GO)."""
    for p in rng.sample(list(players), len(players)):
        table.source.press(p)
        time.sleep(0.03)
    time.sleep(0.05)
    for p in players:
        table.source.release(p)


def event_json(event: dict) -> str:
    """The event as the console writes it in a button's data-event."""
    return json.dumps(event, separators=(",", ":"), sort_keys=True)   # as the server sends it


def host_page(browser, table):
    """A phone logged in to the host console; returns (context, page)."""
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(10_000)
    page = ctx.new_page()
    page.goto(table.url + "/host")
    page.fill("#pin", table.pin)
    page.click("button[type=submit]")
    return ctx, page


def missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no Playwright (pip install playwright)"
    return None
