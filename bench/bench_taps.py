"""Taps per turn (issue 23): how many screen taps a game costs its host and
its players, counted by playing it on phones at 390 x 844 in Debian's
chromium (Playwright), as a host would.

``run()`` returns ``[(name, value, unit), ...]``:

* ``host_taps_per_turn_chope``: host taps on the console per card logged,
  over ``CARDS`` Chope! cards flipped (the cards drawn from a seeded
  shuffle of the cards still in the deck). A card costs one tap on its
  button; the rest of the game is counted too: "Stop and claim" when the
  flipper stops (a player stops once the odds the next flip busts, which
  the console shows, reach ``STOP_ODDS``), a doubtful race's answer, and the
  card kept after a bust or lost to the Mynah. Goal: at most 1.2.
* ``player_taps_per_turn_chope``: players' taps on their phones per card.
  Chope! gives players nothing to tap (the races are buzzer presses, which
  the mock buzzers make here, and the scoreboard is read only), so 0.
* ``host_scrolls_per_turn_chope``: the host's taps whose button was not on
  the screen when the tap was due (the console scrolled to reach it).

The table is the real one (``companion.app.Table``: waitress, mock buzzers,
a demo Chope! game with players Ana, Bo and Cy) on 127.0.0.1 in this
process. Without chromium at ``$COMPANION_CHROMIUM`` (default
``/usr/bin/chromium``) or without Playwright it prints why on stderr and
returns no figures. Run it alone with ``python -m bench taps``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time

CHROMIUM = os.environ.get("COMPANION_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
         "is_mobile": True, "has_touch": True}
PIN = "bench-taps-246810"
PLAYERS = ["Ana", "Bo", "Cy"]
CARDS = 20
STOP_ODDS = 0.3
SEED = 23
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
    """Every eligible buzzer pressed, in a random order (a Table card: the
    first wins; the Mynah: the last loses)."""
    for p in rng.sample(list(players), len(players)):
        table.source.press(p)
        time.sleep(0.03)
    time.sleep(0.05)
    for p in players:
        table.source.release(p)


def step(host: Host, rng: random.Random) -> bool:
    """One thing the host logs; True when it was a card flipped."""
    hs = host.settle()
    race = hs.get("race") or {}
    if race.get("confirm"):
        host.tap("#race-confirm button.choice.default, #race-accept", "race answer")
        return False
    legal = hs.get("legal_events") or []
    flips = [e for e in legal if e["type"] == "flip"]
    stop = any(e["type"] == "stop" for e in legal)
    odds = ((hs.get("view") or {}).get("bust_odds") or {}).get("probability", 0)
    if stop and odds >= STOP_ODDS:
        host.tap("#side-slot button.event", "stop")
        return False
    if not flips:                       # a choice: the food kept, the card lost
        host.tap("#legal button.event", "choice")
        return False
    card = rng.choice(flips)
    before = hs["version"]
    host.tap(f"#legal button.event[data-event='{_json(card)}']", "card")
    deadline = time.monotonic() + DEADLINE_S
    while host.table.session.host_snapshot()["version"] == before and time.monotonic() < deadline:
        time.sleep(0.02)
    req = host.table.session.host_snapshot().get("race_request")
    if req:
        press_all(host.table, req.get("eligible") or PLAYERS, rng)
    return True


def _json(event: dict) -> str:
    """The event as the console writes it in a button's data-event."""
    return json.dumps(event, separators=(",", ":"), sort_keys=True)   # as the server sends it


def play(browser, table) -> dict:
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(10_000)
    page = ctx.new_page()
    page.goto(table.url + "/host")
    page.fill("#pin", table.pin)
    page.click("button[type=submit]")
    page.wait_for_selector("#legal button.event")
    host = Host(page, table)
    rng = random.Random(SEED)
    cards = 0
    while cards < CARDS and not table.session.snapshot().get("finished"):
        cards += step(host, rng)
    host.settle()
    ctx.close()
    return {"cards": cards, "taps": host.taps, "scrolls": host.scrolls, "kinds": host.kinds}


def missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no Playwright (pip install playwright)"
    return None


def run() -> list[tuple[str, float, str]]:
    why = missing()
    if why:
        print(f"# bench_taps skipped: {why}", file=sys.stderr)
        return []
    from playwright.sync_api import sync_playwright

    from companion.app import Table

    with tempfile.TemporaryDirectory() as tmp:
        table = Table(host="127.0.0.1", port=0, db_path=os.path.join(tmp, "taps.db"), pin=PIN,
                      players=PLAYERS, source="mock", demo=True, threads=8)
        table.open()
        table.start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    got = play(browser, table)
                finally:
                    browser.close()
        finally:
            table.close()
    n = max(got["cards"], 1)
    print(f"# bench_taps: {got['cards']} Chope! cards, {got['taps']} host taps, "
          f"{got['scrolls']} of them off screen; by kind {got['kinds']}", file=sys.stderr)
    return [("host_taps_per_turn_chope", got["taps"] / n, "taps/card"),
            ("player_taps_per_turn_chope", 0.0, "taps/card"),
            ("host_scrolls_per_turn_chope", got["scrolls"] / n, "scrolls/card")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.6g} {unit}")
