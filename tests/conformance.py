"""Random legal play to the end, checking invariants (OpenSpiel's random_sim_test).

Each game's test module calls :func:`random_games` with its own direct
rulebook scoring function, written from the rulebook and not from the tracker.
"""

from __future__ import annotations

import json
import random

from companion.gamefile import Replay, header, replay_lines


def play_random(game_name: str, players: list[str], options: dict, rng: random.Random,
                max_events: int = 5000, undo_every: int = 0) -> Replay:
    """One random legal game to the end. Every step also checks that the
    state is unchanged by the tracker's own invariant check and, if
    ``undo_every``, that undo followed by the same event is the identity."""
    rep = Replay.start(game_name, players, options)
    game = rep.game
    game.check_invariants(rep.state)
    for step in range(max_events):
        if game.finished(rep.state):
            return rep
        legal = game.legal_events(rep.state)
        assert legal, f"no legal event in an unfinished game: {game.public_view(rep.state)}"
        event = rng.choice(legal)
        before = rep.state
        rep.apply(event)
        game.check_invariants(rep.state)
        if undo_every and step % undo_every == 0:
            after = rep.state
            rep.apply({"type": "undo"})
            assert rep.state is before
            rep.apply(event)
            assert game.public_view(rep.state) == game.public_view(after)
    raise AssertionError(f"{game_name}: game not finished after {max_events} events")


def game_file(rep: Replay) -> list[str]:
    lines = [json.dumps(header(rep.game.name, rep.players, rep.options))]
    lines += [json.dumps(e) for e in rep.events]
    return lines


def random_games(game_name: str, n: int, player_counts, options_for, rulebook_scores,
                 seed: int = 1) -> int:
    """Play ``n`` random games; check replay and scoring; return events played."""
    rng = random.Random(seed)
    total = 0
    for i in range(n):
        count = rng.choice(list(player_counts))
        players = [f"p{j}" for j in range(count)]
        options = options_for(rng, players)
        rep = play_random(game_name, players, options, rng, undo_every=7 if i % 10 == 0 else 0)
        game = rep.game
        assert game.finished(rep.state)
        # replaying the log reproduces the state
        again = replay_lines(game_file(rep))
        assert game.public_view(again.state) == game.public_view(rep.state)
        assert game.scores(again.state) == game.scores(rep.state)
        # the final scores equal a direct computation from the rulebook
        assert game.scores(rep.state) == rulebook_scores(rep, players), (
            game.scores(rep.state), rulebook_scores(rep, players))
        total += len(rep.events)
    return total
