"""Chomp! taps: ``ROUNDS`` rounds of three players. Each round the host taps
the card each player turned over (one tap a card, on the console's grid of
creatures: a card the tracker allows, picked at random from a seeded
generator); the race then starts by itself and the players who may chomp
press their buzzers after GO (mock buzzers here: presses, not taps). An Ink
Out needs no tap at all. A doubtful race's answer would be counted too.
Players tap nothing in Chomp! (the scoreboard is read only)."""

from __future__ import annotations

import random
import time

from bench.tapkit import DEADLINE_S, Host, host_page, press_all

GAME = "chomp"
PLAYERS = ["Ana", "Bo", "Cy"]
#: a shorter countdown than the table's 3 s default keeps the bench quick;
#: taps do not depend on it
TABLE = {"players": PLAYERS, "demo": True, "demo_game": GAME,
         "settings": {"countdown_ms": 500}}
ROUNDS = 20
SEED = 23


def wait_go(table) -> dict | None:
    """The race of the round once it is live (GO passed), or None: no race."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        race = table.session.snapshot().get("race") or {}
        if not race or race.get("phase") in ("live", "decided"):
            return race or None
        time.sleep(0.02)
    raise TimeoutError("the race did not start by itself")


def step(host: Host, rng: random.Random) -> None:
    """One thing the host logs: a card turned over, or a race's answer."""
    hs = host.settle()
    race = hs.get("race") or {}
    if race.get("confirm"):
        host.tap("#race-confirm button.choice.default, #race-accept", "race answer")
        return
    before = hs["version"]
    host.page.wait_for_selector("#chomp-cards button.event:not([disabled])")
    buttons = host.page.locator("#chomp-cards button.event:not([disabled])")
    card = rng.choice(buttons.evaluate_all("bs => bs.map(b => b.dataset.event)"))
    host.tap(f"#chomp-cards button.event[data-event='{card}']", "card")
    deadline = time.monotonic() + DEADLINE_S
    while host.table.session.host_snapshot()["version"] == before and time.monotonic() < deadline:
        time.sleep(0.02)
    if host.table.session.host_snapshot().get("race_request"):
        race = wait_go(host.table)
        if race and race.get("phase") == "live":
            eligible = race.get("eligible") or []
            press_all(host.table, eligible or [rng.choice(PLAYERS)], rng)


def play(browser, table) -> dict:
    ctx, page = host_page(browser, table)
    page.wait_for_selector("#chomp-cards button.event")
    host = Host(page, table)
    rng = random.Random(SEED)
    first = table.session.snapshot()["view"]["round"]
    while table.session.snapshot()["view"]["round"] - first < ROUNDS \
            and not table.session.snapshot().get("finished"):
        step(host, rng)
    host.settle()
    rounds = table.session.snapshot()["view"]["round"] - first
    ctx.close()
    return {"turns": rounds, "host_taps": host.taps, "player_taps": 0, "scrolls": host.scrolls,
            "kinds": host.kinds, "unit": "taps/round"}
