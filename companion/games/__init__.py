"""Game trackers, one module per game, and the registry that names them.

A new game is one module with a :class:`Game` subclass; it is known to the
table once registered, by name (built-in games are registered lazily by
module path, so a half-built tracker never stops the others from loading)::

    from companion.games import Game, register_game

    class Coin(Game):
        name, title = "coin", "Coin flip"
        ...

    register_game(Coin)

>>> from companion.games import get_game
>>> get_game("chope").title
'Chope!'
"""

from __future__ import annotations

import importlib
import threading

from .base import (Game, RaceReason, RaceRequest, RulesError, Setting, check_verdict,
                   copy_json, rank_by)

# name -> "module:Class" (built-ins, imported on first use) or a Game instance.
_BUILTIN = {
    "chope": "companion.games.chope:Chope",
    "chomp": "companion.games.chomp:Chomp",
    "hawker": "companion.games.hawker:HawkerWars",
    "tropichaos": "companion.games.tropichaos:Tropichaos",
    "chopote": "companion.games.chopote:Chopote",
}
_registry: dict[str, "str | Game"] = dict(_BUILTIN)
_lock = threading.Lock()


def register_game(game: "type[Game] | Game | str", name: str | None = None, *,
                  replace: bool = False) -> str:
    """Make a game known to the table, the API and the page; returns its name.

    ``game`` is a :class:`Game` subclass, an instance, or ``"module:Class"``
    (imported on first use). A name already taken raises ValueError unless
    ``replace``."""
    if isinstance(game, str):
        if name is None:
            raise ValueError("a game given as 'module:Class' needs a name")
        entry: "str | Game" = game
    else:
        inst = game() if isinstance(game, type) else game
        if not isinstance(inst, Game):
            raise TypeError(f"{game!r} is not a Game")
        name = name or inst.name
        entry = inst
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a game's name must be a short identifier, not {name!r}")
    with _lock:
        if name in _registry and not replace:
            raise ValueError(f"a game called {name!r} is already registered")
        _registry[name] = entry
    return name


def unregister_game(name: str) -> None:
    """Forget a game (tests); built-in games come back on :func:`reset_games`."""
    with _lock:
        _registry.pop(name, None)


def reset_games() -> None:
    """Back to the built-in games only."""
    with _lock:
        _registry.clear()
        _registry.update(_BUILTIN)


def game_names() -> list[str]:
    return list(_registry)


def available_games() -> dict[str, Game]:
    """Every tracker that imports, by name."""
    out = {}
    for name in game_names():
        try:
            out[name] = get_game(name)
        except ImportError:
            continue
    return out


def get_game(name: str) -> Game:
    """The tracker called ``name``; KeyError names the known games."""
    with _lock:
        entry = _registry.get(name) if isinstance(name, str) else None
    if entry is None:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(game_names())}")
    if isinstance(entry, str):
        module, _, cls = entry.partition(":")
        inst = getattr(importlib.import_module(module), cls)()
        with _lock:
            if _registry.get(name) == entry:
                _registry[name] = inst
        return inst
    return entry


__all__ = ["Game", "RaceReason", "RaceRequest", "RulesError", "Setting", "check_verdict",
           "copy_json", "rank_by", "get_game", "game_names", "available_games", "register_game",
           "unregister_game", "reset_games"]
