"""Random legal play to the end, checking invariants (OpenSpiel's random_sim_test).

The machinery every registered game goes through (tests/test_conformance.py,
the one random-play loop of the suite): a game's own test module lends it
its house rules and a direct rulebook scoring, written from the rulebook and
not from the tracker (``conformance_options`` and ``conformance_check``).

A step of random play is what a real table could do next:

* a race is pending: one of the game's own :meth:`Game.race_outcomes`
  (winners, ties, nobody, false starts, presses by players out of the race);
* else a chance node (:meth:`Game.chance_outcomes`: a card drawn, a die
  rolled), sampled exactly by its probabilities, or a decision
  (:meth:`Game.decisions`) chosen uniformly; when both are possible (flip or
  stop), each half of the time.

At every step: the tracker's :meth:`Game.check_invariants`, and the chance
node's probabilities are exact Fractions above 0 that sum to exactly 1. Every
``undo_every`` steps also: no chance outcome listed twice, the event played is
among :meth:`Game.legal_events`, applying it left the state it was given
unchanged (a private copy, :meth:`Game.copy_state`), and undo then the same
event is the identity on the full host view.
"""

from __future__ import annotations

import copy
import json
import math
import random
from fractions import Fraction

from companion.games import Game, get_game
from companion.record.gamefile import Replay, header, replay_lines

#: No game may take more logged events than this to end in random play.
MAX_EVENTS = 5000


def check_chance_node(outcomes, distinct: bool = True) -> None:
    """A chance node's outcomes: exact probabilities > 0 that sum to 1, and
    (``distinct``) no event listed twice."""
    assert all(isinstance(p, Fraction) for _, p in outcomes), outcomes[:3]
    assert all(p > 0 for _, p in outcomes), [e for e, p in outcomes if p <= 0]
    scale = math.lcm(*(p.denominator for _, p in outcomes))
    total = sum(p.numerator * (scale // p.denominator) for _, p in outcomes)
    assert total == scale, f"chance probabilities sum to {Fraction(total, scale)}, not 1"
    if distinct:
        keys = [json.dumps(e, sort_keys=True) for e, _ in outcomes]
        assert len(set(keys)) == len(keys), "a chance outcome is listed twice"


def sample(outcomes, rng: random.Random) -> dict:
    """One outcome drawn exactly by its Fraction probability."""
    scale = math.lcm(*(p.denominator for _, p in outcomes))
    r = rng.randrange(scale)
    for event, p in outcomes:
        r -= p.numerator * (scale // p.denominator)
        if r < 0:
            return event
    raise AssertionError("probabilities do not sum to 1")


def random_event(game: Game, state, rng: random.Random, thorough: bool = True) -> dict:
    """What the table might log next (see the module docstring); every chance
    node is checked (``thorough``: also that no outcome is listed twice)."""
    if game.race_request(state) is not None:
        outcomes = game.race_outcomes(state)
        assert outcomes, "a race is pending but it has no outcome"
        return rng.choice(outcomes)
    decisions = game.decisions(state)
    chance = game.chance_outcomes(state)
    if chance:
        check_chance_node(chance, distinct=thorough)
    assert decisions or chance, f"nothing can happen in an unfinished game: " \
                                f"{game.host_view(state)}"
    if chance and (not decisions or rng.random() < 0.5):
        return sample(chance, rng)
    return rng.choice(decisions)


def play_random(game_name: str, players: list[str], options: dict, rng: random.Random,
                max_events: int = MAX_EVENTS, undo_every: int = 0) -> Replay:
    """One random game to the end through the log (:class:`Replay`), checking
    every step (see the module docstring); returns the replay."""
    rep = Replay.start(game_name, players, options)
    game = rep.game
    game.check_invariants(rep.state)
    for step in range(max_events):
        if game.finished(rep.state):
            assert game.legal_events(rep.state) == []
            return rep
        thorough = bool(undo_every) and step % undo_every == 0
        event = random_event(game, rep.state, rng, thorough)
        if thorough:
            assert event in game.legal_events(rep.state), event
        before = rep.state
        kept = copy.deepcopy(before) if thorough else None
        rep.apply(event)
        game.check_invariants(rep.state)
        if thorough:
            assert before == kept, "apply changed the state it was given"
            after = rep.state
            rep.apply({"type": "undo"})
            assert rep.state is before
            rep.apply(event)
            assert game.host_view(rep.state) == game.host_view(after)
    raise AssertionError(f"{game_name}: game not finished after {max_events} events")


def game_file(rep: Replay) -> list[str]:
    lines = [json.dumps(header(rep.game.name, rep.players, rep.options))]
    lines += [json.dumps(e) for e in rep.events]
    return lines


def check_replay(rep: Replay) -> None:
    """Replaying the game file reproduces the live game: the full host view,
    the public view, every player's private view, scores and ranking."""
    game = rep.game
    again = replay_lines(game_file(rep))
    assert game.host_view(again.state) == game.host_view(rep.state)
    assert game.public_view(again.state) == game.public_view(rep.state)
    for p in rep.players:
        assert game.private_view(again.state, p) == game.private_view(rep.state, p)
    assert game.scores(again.state) == game.scores(rep.state)
    assert game.ranking(again.state) == game.ranking(rep.state)
    assert game.finished(again.state) == game.finished(rep.state)


def random_settings(game: Game, rng: random.Random, players: list[str]) -> dict:
    """Options drawn from the game's declared settings: any bool, any
    choice, any whole number in range, any player; component data as given."""
    opts = {}
    for s in game.settings:
        if s.kind == "bool":
            opts[s.name] = rng.random() < 0.5
        elif s.kind == "choice":
            opts[s.name] = rng.choice(s.choices)
        elif s.kind == "int" and s.minimum is not None and s.maximum is not None:
            opts[s.name] = rng.randint(s.minimum, s.maximum)
        elif s.kind == "player":
            opts[s.name] = rng.choice(players + ([None] if s.default is None else []))
    return opts


#: random games of each kind played by default (``--random-games N`` sets it;
#: ``python3 tasks.py test --long`` plays :data:`LONG_GAMES`)
QUICK_GAMES = 10
LONG_GAMES = 300


def conformance(game_name: str, n: int, seed: int = 1, options_for=None,
                check_game=None, undo_every: int = 3) -> dict:
    """Play ``n`` random games of ``game_name`` with random player counts and
    random declared settings (or ``options_for(rng, players)``); every step
    checked, every game replayed and given to ``check_game(rep)`` (a game's
    own rulebook). Game ``i`` is played from seed ``seed + i`` alone, so a
    failure names the one seed that replays it. Returns figures: games,
    events, longest game."""
    game = get_game(game_name)
    events = longest = 0
    for i in range(n):
        game_seed = seed + i
        rng = random.Random(game_seed)
        try:
            players = [f"p{j}" for j in range(rng.randint(game.min_players,
                                                          game.max_players))]
            options = (options_for or (lambda r, ps: random_settings(game, r, ps)))(rng, players)
            rep = play_random(game_name, players, options, rng, undo_every=undo_every)
            assert game.finished(rep.state)
            check_replay(rep)
            json.dumps(game.host_view(rep.state))
            if check_game is not None:
                check_game(rep)
        except Exception as exc:
            raise AssertionError(
                f"{game_name}: random game {i + 1} of {n} failed, seed {game_seed}; play it "
                f"alone with: python3 tasks.py test tests/test_conformance.py -k {game_name} "
                f"--random-seed {game_seed} --random-games 1\n{type(exc).__name__}: {exc}"
            ) from exc
        events += len(rep.events)
        longest = max(longest, len(rep.events))
    return {"games": n, "events": events, "longest": longest}


def random_play_of(config) -> tuple[int, int]:
    """(games, seed) of random play, from --random-games (or --long) and --random-seed."""
    games = config.getoption("random_games")
    if games is None:
        games = LONG_GAMES if config.getoption("long") else QUICK_GAMES
    return games, config.getoption("random_seed")
