"""The game file: one whole game as JSON lines, replayable.

Format ``tabletop-companion-game``, version 1 (documented in docs/game-file.md):

* line 1, the header::

    {"format": "tabletop-companion-game", "version": 1, "game": "chope",
     "players": ["ana", "bo", "cy"], "options": {...}}

* every further line is one event as the host logged it: a game event
  (``{"type": "flip", "card": "laksa"}``), a race with its edges and verdict
  (``{"type": "race", ...}``), a player's choice, or one of the log's own
  events ``{"type": "undo"}`` and ``{"type": "redo"}`` (undo drops the last
  effective event; redo puts back the last one undone; any other event clears
  the redo stack). Blank lines and lines starting with ``#`` are skipped.

The state is what replaying the events gives; nothing else is stored.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ..games import RulesError
from .eventlog import Replay

FORMAT = "tabletop-companion-game"
VERSION = 1


class GameFileError(ValueError):
    """A game file that cannot be replayed; names the line and the problem."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def loads(text: str):
    """``json.loads`` whose every failure is a ValueError saying "not JSON":
    a syntax error, but also nesting too deep for the parser (RecursionError)
    and integers past Python's digit limit."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError("not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None


def header(game: str, players: list[str], options: dict | None = None) -> dict:
    return {"format": FORMAT, "version": VERSION, "game": game, "players": list(players),
            "options": dict(options or {})}


def parse_header(obj: Any) -> tuple[str, list[str], dict]:
    if not isinstance(obj, dict):
        raise ValueError("the header must be a JSON object")
    if obj.get("format") != FORMAT:
        raise ValueError(f"not a game file: 'format' must be {FORMAT!r}")
    if obj.get("version") != VERSION:
        raise ValueError(f"unsupported version {obj.get('version')!r} (this reads {VERSION})")
    game = obj.get("game")
    if not isinstance(game, str):
        raise ValueError("'game' must be a game name")
    players = obj.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise ValueError("'players' must be a list of names")
    options = obj.get("options", {})
    if not isinstance(options, dict):
        raise ValueError("'options' must be an object")
    return game, players, options


def replay_lines(lines: Iterable[str]) -> Replay:
    """Replay a game file given as lines; GameFileError names the bad line."""
    rep: Replay | None = None
    for no, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            obj = loads(text)
        except ValueError as exc:
            raise GameFileError(no, str(exc)) from None
        if rep is None:
            try:
                game, players, options = parse_header(obj)
                rep = Replay.start(game, players, options)
            except KeyError as exc:
                raise GameFileError(no, str(exc.args[0] if exc.args else exc)) from None
            except ValueError as exc:
                raise GameFileError(no, str(exc)) from None
            continue
        try:
            rejudge_race(obj)
            rep.apply(obj)
        except RulesError as exc:
            rule = f" [{exc.rule}]" if exc.rule else ""
            raise GameFileError(no, f"illegal event: {exc}{rule}") from None
    if rep is None:
        raise GameFileError(1, "empty file: no header")
    return rep


def rejudge_race(event: Any) -> None:
    """A race event that carries its edges and spec is re-judged (photo
    finish); a verdict that does not match its own edges is refused."""
    if not isinstance(event, dict) or event.get("type") != "race":
        return
    if "edges" not in event or "spec" not in event:
        return
    from ..races.edges import Edge
    from ..races.referee import RaceSpec, judge
    try:
        spec = RaceSpec.from_json(event["spec"])
        edges = [Edge.from_json(e) for e in event["edges"]]
        verdict = judge(spec, edges).to_json()
    except (ValueError, TypeError, KeyError) as exc:
        raise RulesError(f"race record is malformed: {exc}", "race") from None
    for key in ("winner", "loser", "tied"):
        if key in event and event[key] != verdict[key]:
            raise RulesError(f"race {key} {event[key]!r} does not match its edges "
                             f"(re-judged: {verdict[key]!r})", "race")
