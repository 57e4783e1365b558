"""The scoreboard on a table TV fits 1280 x 800 with 3 to 6 players in every
game at every moment (issue 33, item 3): Chope!'s race, verdict (every other
player slamming: the whole photo finish) and a question to the host,
Chomp!'s countdown and verdict, Hawker Wars' Food Poisoning with everyone
holding on, Chopote and Tropichaos mid-game, and the end of every game
(tests/kit/screens.py sets each up on a real table). The page's height is
measured for each and must be at most 800 (figure ``tv_overflow_px``: the
most any went over, 0; ``python -m bench screens``); in English for every
player count, in French (longer words) for each game's most players.

Screenshots (artifacts/screenshots/, not committed):
tv-<game>-<players>-<moment>.png, and the French ones in fr/; among them
the TV at 6 players mid-race, tv-chope-6-race.png and fr/tv-chope-6-race.png.
"""

from __future__ import annotations

import pytest

from tests.kit.browser import BROWSER
from tests.kit.screens import PLAYERS, SET_UP, tv_screens

pytestmark = BROWSER


@pytest.mark.parametrize("game", sorted(SET_UP))
def test_the_tv_fits_every_moment_with_3_to_6_players(browser, tmp_path, game):
    """Every (players, moment, language) of ``game`` whose page is taller
    than 800 or wider than 1280: English for every player count, French too
    for the most players (each moment set up once for both)."""
    counts = PLAYERS[game]
    plan = {game: {n: ("en", "fr") if n == counts[-1] else ("en",) for n in counts}}
    found = [f"{game} {n} players {moment} ({lang}): {got}"
             for _, n, moment, lang, got in tv_screens(browser, tmp_path, plan, shots=True)
             if got["height"] > 800 or got["width"] > 1280]
    assert found == []
