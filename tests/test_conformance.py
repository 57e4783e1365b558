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

This is the suite's one random-play loop: a game's own test module
(``tests/test_<game>.py``) may lend it ``conformance_options(rng, players)``
(house rules and component data drawn its own way) and
``conformance_check(rep)`` (its final scores from the rulebook). A new game
gets all of this by being registered.
"""

from __future__ import annotations

import importlib

import pytest

from companion.games import available_games
from conformance import MAX_EVENTS, conformance

GAMES = sorted(available_games())


def rulebook_hooks(game_name: str) -> tuple:
    """The game's own module's ``conformance_options`` and ``conformance_check``
    (None where it has none)."""
    try:
        module = importlib.import_module(f"test_{game_name}")
    except ModuleNotFoundError:
        return None, None
    return (getattr(module, "conformance_options", None),
            getattr(module, "conformance_check", None))


@pytest.mark.parametrize("game_name", GAMES)
def test_random_play_conforms(game_name, random_play):
    games, seed = random_play
    options_for, check_game = rulebook_hooks(game_name)
    figures = conformance(game_name, games, seed=seed, options_for=options_for,
                          check_game=check_game)
    assert figures["games"] == games and figures["longest"] < MAX_EVENTS
