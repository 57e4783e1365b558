"""One conformance test for every registered game (OpenSpiel's random_sim_test).

Each game in :func:`companion.games.available_games` is played at random to
the end, ``--random-games`` times (10 by default, 300 under ``python3
tasks.py test --long``): chance sampled from the game's own chance outcomes
by their exact probabilities, decisions chosen uniformly, races settled by
the game's own race outcomes (false starts and presses by players out of the
race included), house rules drawn from its declared settings. At every step
the tracker's invariants hold, each chance node's probabilities sum to
exactly 1, and undo then the same event is the identity on the full host
view; every game ends within :data:`conformance.MAX_EVENTS` events; and
replaying the log gives the live state (host view, public view, private
views, scores, ranking). A failure names the seed that replays its game.

This is the suite's one random-play loop: a game's rulebook in the kit
(:data:`tests.kit.rulebooks.HOOKS`) may lend it ``options(rng, players)``
(house rules and component data drawn its own way) and ``check(rep)`` (its
final scores from the rulebook). A new game gets all of this by being
registered.
"""

from __future__ import annotations

import pytest

from companion.games import available_games
from tests.kit.conformance import MAX_EVENTS, conformance
from tests.kit.rulebooks import HOOKS

GAMES = sorted(available_games())


@pytest.mark.parametrize("game_name", GAMES)
def test_random_play_conforms(game_name, random_play):
    games, seed = random_play
    options_for, check_game = HOOKS.get(game_name, (None, None))
    figures = conformance(game_name, games, seed=seed, options_for=options_for,
                          check_game=check_game)
    assert figures["games"] == games and figures["longest"] < MAX_EVENTS
