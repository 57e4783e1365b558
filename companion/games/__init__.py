"""Game trackers, one module per game, and the registry that finds them.

A new game is one file: a module in this package whose :class:`Game`
subclass has the module's name as its ``name`` (``coin.py`` holds the game
``coin``). Nothing else is edited: the registry scans the package
(:mod:`pkgutil`) for its modules, and reads the ``companion.games`` entry-point
group (:mod:`importlib.metadata`, as gpiozero finds its pin factories) for
games that other distributions install::

    # companion/games/coin.py
    from companion.games import Game

    class Coin(Game):
        name, title = "coin", "Coin flip"
        ...

    # or, in another distribution's pyproject.toml
    [project.entry-points."companion.games"]
    coin = "coin_game:Coin"        # a Game subclass, or a module holding one

Both are found lazily: the names on first use, each module only when its game
is first asked for, so a half-built tracker never stops the others from
loading. A module that fails to import is not a crash: its error is recorded
(:func:`game_errors`, logged once) and asking for it raises
:class:`GameLoadError` naming it. :func:`register_game` adds a game by hand
(tests, a game defined elsewhere).

>>> from companion.games import get_game
>>> get_game("chope").title
'Chope!'
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import threading
from importlib.metadata import entry_points
from types import ModuleType
from typing import Callable

from .base import (Game, RaceReason, RaceRequest, RulesError, Setting, check_verdict,
                   copy_json, rank_by)

log = logging.getLogger(__name__)

#: The entry-point group other distributions declare their games in.
ENTRY_POINT_GROUP = "companion.games"
#: Modules of this package that hold no game.
NOT_GAMES = frozenset({"base", "shapes"})
#: The game listed first (the new-game form's default); the others follow
#: in the order found: this package's modules by name, then entry points.
FIRST_GAME = "chope"


class GameLoadError(KeyError, ImportError):
    """A known game whose module or entry point failed to load; the message
    names it and the error. A KeyError too, so that wherever an unknown game
    is refused (a new game's form), a broken one is refused the same way."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class _Lazy:
    """A game not loaded yet: ``load()`` gives a module, a Game class or an
    instance; ``origin`` says where it comes from (for errors). A ``found``
    game (package or entry point) must carry the name it was found under."""

    __slots__ = ("load", "origin", "module", "found", "error")

    def __init__(self, load: Callable[[], object], origin: str, module: str | None = None,
                 found: bool = True):
        self.load, self.origin, self.module, self.found = load, origin, module, found
        self.error: str | None = None


_registry: dict[str, "_Lazy | Game"] = {}
_discovered = False
_lock = threading.RLock()


def _import(module: str) -> Callable[[], object]:
    return lambda: importlib.import_module(module)


def _by_path(path: str) -> Callable[[], object]:
    module, _, attr = path.partition(":")
    return lambda: getattr(importlib.import_module(module), attr)


def _discover() -> None:
    """Fill the registry from the package's modules and the entry points,
    once (under the lock); a name already taken keeps its game."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name != FIRST_GAME):
        if mod.name.startswith("_") or mod.name in NOT_GAMES or not mod.name.isidentifier():
            continue
        full = f"{__name__}.{mod.name}"
        _registry.setdefault(mod.name, _Lazy(_import(full), full, full))
    try:
        found = list(entry_points(group=ENTRY_POINT_GROUP))
    except Exception as exc:  # noqa: BLE001 - a broken distribution must not stop the table
        log.warning("could not read the %s entry points: %s", ENTRY_POINT_GROUP, exc)
        found = []
    for ep in found:
        origin = f"entry point {ep.name} = {ep.value}"
        if not ep.name.isidentifier():
            _failed(ep.name, _Lazy(ep.load, origin), "a game's name must be an identifier")
        elif ep.name not in _registry:
            _registry[ep.name] = _Lazy(ep.load, origin, ep.module)
        elif not (isinstance(_registry[ep.name], _Lazy) and _registry[ep.name].module == ep.module):
            log.warning("game %r: %s ignored, the name is taken", ep.name, origin)


def _failed(name: str, lazy: _Lazy, why: str) -> None:
    lazy.error = f"game {name!r} could not be loaded ({lazy.origin}): {why}"
    _registry[name] = lazy
    log.warning("%s", lazy.error)


def _game_in(module: ModuleType, name: str) -> type[Game]:
    """The concrete Game subclass called ``name`` that ``module`` defines."""
    found = [c for c in vars(module).values()
             if isinstance(c, type) and issubclass(c, Game) and not inspect.isabstract(c)
             and c.__module__ == module.__name__ and getattr(c, "name", None) == name]
    if len(found) != 1:
        raise LookupError(f"{module.__name__} must define one Game subclass whose name is "
                          f"{name!r} (a game module is named after its game), found "
                          f"{len(found)}")
    return found[0]


def _load(name: str, lazy: _Lazy) -> Game:
    obj = lazy.load()
    if isinstance(obj, ModuleType):
        obj = _game_in(obj, name)
    inst = obj() if isinstance(obj, type) else obj
    if not isinstance(inst, Game):
        raise TypeError(f"{obj!r} is not a Game")
    if lazy.found and inst.name != name:
        raise LookupError(f"its game is called {inst.name!r}: a game is found under its own name")
    return inst


def register_game(game: "type[Game] | Game | str", name: str | None = None, *,
                  replace: bool = False) -> str:
    """Make a game known to the table, the API and the page; returns its name.

    ``game`` is a :class:`Game` subclass, an instance, or ``"module:Class"``
    (imported on first use). A name already taken raises ValueError unless
    ``replace`` (or unless it is the not-yet-loaded module of this very game:
    a game module may still register itself at its foot)."""
    if isinstance(game, str):
        if name is None:
            raise ValueError("a game given as 'module:Class' needs a name")
        entry: "_Lazy | Game" = _Lazy(_by_path(game), game, game.partition(":")[0], found=False)
    else:
        inst = game() if isinstance(game, type) else game
        if not isinstance(inst, Game):
            raise TypeError(f"{game!r} is not a Game")
        name = name or inst.name
        entry = inst
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a game's name must be a short identifier, not {name!r}")
    with _lock:
        _discover()
        old = _registry.get(name)
        own = isinstance(old, _Lazy) and isinstance(entry, Game) and \
            old.module == type(entry).__module__
        if old is not None and not (replace or own):
            raise ValueError(f"a game called {name!r} is already registered")
        _registry[name] = entry
    return name


def unregister_game(name: str) -> None:
    """Forget a game (tests); found games come back on :func:`reset_games`."""
    with _lock:
        _discover()
        _registry.pop(name, None)


def reset_games() -> None:
    """Forget every registered game and its errors; the package and the entry
    points are scanned again on next use."""
    global _discovered
    with _lock:
        _registry.clear()
        _discovered = False


def game_names() -> list[str]:
    """The name of every game found or registered, except those that failed
    to load (see :func:`game_errors`)."""
    with _lock:
        _discover()
        return [n for n, e in _registry.items() if not (isinstance(e, _Lazy) and e.error)]


def game_errors() -> dict[str, str]:
    """The games that failed to load so far, by name: the error, one line."""
    with _lock:
        _discover()
        return {n: e.error for n, e in _registry.items() if isinstance(e, _Lazy) and e.error}


def available_games() -> dict[str, Game]:
    """Every game that loads, by name (loading them all; the others are
    recorded in :func:`game_errors`)."""
    out = {}
    for name in game_names():
        try:
            out[name] = get_game(name)
        except KeyError:
            continue
    return out


def get_game(name: str) -> Game:
    """The tracker called ``name``; KeyError names the known games, and
    :class:`GameLoadError` (a KeyError and an ImportError) one that failed
    to load."""
    with _lock:
        _discover()
        entry = _registry.get(name) if isinstance(name, str) else None
    if entry is None:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(game_names())}")
    if isinstance(entry, Game):
        return entry
    if entry.error is None:
        try:
            inst = _load(name, entry)       # outside the lock: the module may register itself
        except Exception as exc:  # noqa: BLE001 - recorded, never a crash of the table
            with _lock:
                if _registry.get(name) is entry:
                    _failed(name, entry, f"{type(exc).__name__}: {exc}")
                elif isinstance(_registry.get(name), Game):
                    return _registry[name]
            if entry.error is None:
                raise
        else:
            with _lock:
                current = _registry.get(name)
                if current is entry:
                    _registry[name] = inst
                elif isinstance(current, Game):
                    return current
            return inst
    raise GameLoadError(entry.error)


__all__ = ["Game", "RaceReason", "RaceRequest", "RulesError", "Setting", "check_verdict",
           "copy_json", "rank_by", "get_game", "game_names", "game_errors", "available_games",
           "register_game", "unregister_game", "reset_games", "GameLoadError",
           "ENTRY_POINT_GROUP"]
