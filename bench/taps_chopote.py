"""Chopote taps: ``TURNS`` turns of three players (a turn: a roll and the
move, or the pass, that follows it; the opening rolls for who starts are
counted as taps too). The table rolls the real die (a seeded generator
here) and the host taps the face on the console; a move is one tap on its
button when the player has a choice (a bottle picked at random). Players tap
nothing in Chopote (the scoreboard is read only)."""

from __future__ import annotations

import random
import time

from bench.tapkit import DEADLINE_S, Host, event_json, host_page

GAME = "chopote"
PLAYERS = ["Ana", "Bo", "Cy"]
TABLE = {"players": PLAYERS, "demo": True, "demo_game": GAME}
TURNS = 20
SEED = 23


def step(host: Host, rng: random.Random) -> None:
    """One thing the host logs: the die's face, or the move picked."""
    hs = host.settle()
    legal = hs.get("legal_events") or []
    rolls = [e for e in legal if e["type"] == "roll"]
    if rolls:
        ev, kind = rng.choice(rolls), "roll"
    else:
        ev, kind = rng.choice([e for e in legal if e["type"] in ("move", "pass")]), "move"
    before = hs["version"]
    host.tap(f"#legal button.event[data-event='{event_json(ev)}']", kind)
    deadline = time.monotonic() + DEADLINE_S
    while host.table.session.host_snapshot()["version"] == before and time.monotonic() < deadline:
        time.sleep(0.02)


def play(browser, table) -> dict:
    ctx, page = host_page(browser, table)
    page.wait_for_selector("#legal button.event")
    host = Host(page, table)
    rng = random.Random(SEED)
    while table.session.state["turns"] < TURNS and not table.session.snapshot().get("finished"):
        step(host, rng)
    host.settle()
    turns = table.session.state["turns"]
    ctx.close()
    return {"turns": turns, "host_taps": host.taps, "player_taps": 0, "scrolls": host.scrolls,
            "kinds": host.kinds, "unit": "taps/turn"}
