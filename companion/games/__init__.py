"""Game trackers, one module per game, and the registry that names them.

>>> from companion.games import get_game
>>> get_game("chope").title
'Chope!'
"""

from __future__ import annotations

import importlib

from .base import Game, RaceRequest, RulesError, check_verdict, rank_by

# name -> (module, class). Modules are imported on first use so a broken or
# half-built tracker never stops the others from loading.
_REGISTRY = {
    "chope": ("companion.games.chope", "Chope"),
    "chomp": ("companion.games.chomp", "Chomp"),
}

_cache: dict[str, Game] = {}


def game_names() -> list[str]:
    return list(_REGISTRY)


def available_games() -> dict[str, Game]:
    """Every tracker that imports, by name."""
    out = {}
    for name in _REGISTRY:
        try:
            out[name] = get_game(name)
        except ImportError:
            continue
    return out


def get_game(name: str) -> Game:
    """The tracker called ``name``; KeyError names the known games."""
    if name not in _REGISTRY:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(_REGISTRY)}")
    if name not in _cache:
        module, cls = _REGISTRY[name]
        _cache[name] = getattr(importlib.import_module(module), cls)()
    return _cache[name]


__all__ = ["Game", "RaceRequest", "RulesError", "check_verdict", "rank_by", "get_game", "game_names",
           "available_games"]
