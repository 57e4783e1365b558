"""One conformance test for every registered game (OpenSpiel's random_sim_test).

Each game in :func:`companion.games.available_games` is played 300 times at
random to the end: chance sampled from the game's own chance outcomes by
their exact probabilities, decisions chosen uniformly, races settled by the
game's own race outcomes (false starts and presses by players out of the race
included), house rules drawn from its declared settings. At every step the
tracker's invariants hold, each chance node's probabilities sum to exactly 1,
and undo then the same event is the identity on the full host view; every
game ends within :data:`conformance.MAX_EVENTS` events; and replaying the log
gives the live state (host view, public view, private views, scores, ranking).
A new game gets all of this by being registered.
"""

from __future__ import annotations

import pytest

from companion.games import available_games
from conformance import MAX_EVENTS, conformance

GAMES = sorted(available_games())


@pytest.mark.slow
@pytest.mark.parametrize("game_name", GAMES)
def test_random_play_conforms(game_name):
    figures = conformance(game_name, 300, seed=8)
    assert figures["games"] == 300 and figures["longest"] < MAX_EVENTS
