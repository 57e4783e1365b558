"""Taps per turn (issue 23): how many screen taps a game costs its host and
its players, counted by playing it on phones at 390 x 844 in Debian's
chromium (Playwright), as a host and players would.

Each game's player is its own file, ``bench/taps_<game>.py``, with

* ``GAME``: the game's kind (``"chope"``),
* ``TABLE``: keywords for :class:`companion.app.TableServer` (players, demo game),
* ``play(browser, table) -> dict``: plays ``turns`` turns and returns
  ``{"turns", "host_taps", "player_taps", "scrolls", "kinds", "unit"}``
  (optionally ``"player_actions"``: the player figure is then per action a
  player logged, in ``"player_unit"``; ``"figures"``: more ``(name, value,
  unit)`` of its own, as ``bench/taps_chope_cam.py``'s camera counts); a
  player may define ``missing() -> str | None``: why it cannot run here.

``run()`` plays every such file and returns ``[(name, value, unit), ...]``:
``host_taps_per_turn_<game>``, ``player_taps_per_turn_<game>`` and
``host_scrolls_per_turn_<game>`` (the host's taps whose button was off the
screen when the tap was due). Goals (issue 23): Chope! <= 1.2 host taps a
card; Chomp! <= 4 a round; Hawker Wars <= 3 host taps a turn and <= 4
player taps an action; Tropichaos and Chopote <= 2.

The table is the real one (``companion.app.TableServer``: waitress, mock buzzers)
on 127.0.0.1 in this process. Without chromium at ``$COMPANION_CHROMIUM``
(default ``/usr/bin/chromium``) or without Playwright it prints why on
stderr and returns no figures. Run it alone with ``python -m bench taps``,
one game with ``python -m bench.bench_taps chomp``.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path

from bench.tapkit import CHROMIUM, CHROMIUM_ARGS, PIN, missing

#: every bench/taps_<game>.py (a new game's taps player is one file)
GAMES = sorted(p.stem[len("taps_"):] for p in Path(__file__).parent.glob("taps_*.py"))


def play_one(browser, game: str) -> dict:
    from companion.app import TableServer

    mod = importlib.import_module(f"bench.taps_{game}")
    with tempfile.TemporaryDirectory() as tmp:
        # a game with players' pages open may ask for more threads (one live stream each)
        table = TableServer(host="127.0.0.1", port=0, db_path=os.path.join(tmp, "taps.db"), pin=PIN,
                      source="mock", **{"threads": 8, **mod.TABLE})
        table.open()
        table.start()
        try:
            return mod.play(browser, table)
        finally:
            table.close()


def figures(game: str, got: dict) -> list[tuple[str, float, str]]:
    n = max(got["turns"], 1)
    unit = got.get("unit", "taps/turn")
    print(f"# bench_taps {game}: {got['turns']} turns, {got['host_taps']} host taps "
          f"({got['scrolls']} off screen), {got['player_taps']} player taps; "
          f"by kind {got['kinds']}", file=sys.stderr)
    # a game may count its players' taps per action they log (``player_actions``)
    per = max(got.get("player_actions") or n, 1)
    return [(f"host_taps_per_turn_{game}", got["host_taps"] / n, unit),
            (f"player_taps_per_turn_{game}", got["player_taps"] / per,
             got.get("player_unit", unit)),
            (f"host_scrolls_per_turn_{game}", got["scrolls"] / n, unit.replace("taps", "scrolls")),
            *got.get("figures", [])]


def run(games: list[str] | None = None) -> list[tuple[str, float, str]]:
    why = missing()
    if why:
        print(f"# bench_taps skipped: {why}", file=sys.stderr)
        return []
    from playwright.sync_api import sync_playwright

    out: list[tuple[str, float, str]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for game in games or GAMES:
                why = getattr(importlib.import_module(f"bench.taps_{game}"), "missing", None)
                if why is not None and why():     # a player that needs more (OpenCV)
                    print(f"# bench_taps {game} skipped: {why()}", file=sys.stderr)
                    continue
                out += figures(game, play_one(browser, game))
        finally:
            browser.close()
    return out


if __name__ == "__main__":
    for name, value, unit in run(sys.argv[1:] or None):
        print(f"{name} {value:.6g} {unit}")
