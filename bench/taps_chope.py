"""Chope! taps: ``CARDS`` cards flipped (drawn from a seeded shuffle of the
cards still in the deck). A card costs one tap on its button; the rest of the
game is counted too: "Stop and claim" when the flipper stops (a player stops
once the odds the next flip busts, which the console shows, reach
``STOP_ODDS``), a doubtful race's answer, and the card kept after a bust or
lost to the Mynah. Players tap nothing in Chope! (the races are buzzer
presses, which the mock buzzers make here; the scoreboard is read only)."""

from __future__ import annotations

import random
import time

from bench.tapkit import DEADLINE_S, Host, event_json, host_page, press_all

GAME = "chope"
PLAYERS = ["Ana", "Bo", "Cy"]
TABLE = {"players": PLAYERS, "demo": True}
CARDS = 20
STOP_ODDS = 0.3
SEED = 23


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
    host.tap(f"#legal button.event[data-event='{event_json(card)}']", "card")
    deadline = time.monotonic() + DEADLINE_S
    while host.table.session.host_snapshot()["version"] == before and time.monotonic() < deadline:
        time.sleep(0.02)
    req = host.table.session.host_snapshot().get("race_request")
    if req:
        press_all(host.table, req.get("eligible") or PLAYERS, rng)
    return True


def play(browser, table) -> dict:
    ctx, page = host_page(browser, table)
    page.wait_for_selector("#legal button.event")
    host = Host(page, table)
    rng = random.Random(SEED)
    cards = 0
    while cards < CARDS and not table.session.snapshot().get("finished"):
        cards += step(host, rng)
    host.settle()
    ctx.close()
    return {"turns": cards, "host_taps": host.taps, "player_taps": 0, "scrolls": host.scrolls,
            "kinds": host.kinds, "unit": "taps/card"}
