"""Helpers the JSON endpoints share: reading a body, calling the session,
turning the rules' errors into JSON with the rule's message."""

from __future__ import annotations

import re
import time

from flask import current_app, jsonify, request

from ..games.base import RulesError


class BadRequest(ValueError):
    """A request body the API cannot use (400)."""


def services():
    return current_app.extensions["companion"]


def body() -> dict:
    """The JSON object of the request; BadRequest if it is not one."""
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        raise BadRequest("the request body is nested too deeply") from None
    if data is None and not request.get_data():
        return {}
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def now_ns() -> int:
    clock = getattr(services().session, "clock", None) or time.monotonic_ns
    return clock()


def optional_int(data: dict, key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{key!r} must be an integer")
    return value


def error(message: str, status: int, rule: str | None = None):
    return jsonify(error=message, rule=rule), status


def call(fn, *args, **kwargs):
    """Run a session call; map its errors to JSON responses.

    RulesError -> 400 with the rule's message; StaleVersion -> 409 (someone
    else logged first: reload); an unknown game -> 404; other bad input -> 400.
    Returns ``(result, None)`` or ``(None, response)``."""
    try:
        from ..store import StaleVersion
    except ImportError:       # the store is not there yet: no such error
        StaleVersion = ()     # noqa: N806
    try:
        return fn(*args, **kwargs), None
    except RulesError as exc:
        return None, error(str(exc), 400, exc.rule)
    except StaleVersion as exc:
        return None, error(f"the game moved on: {exc}; reload and try again", 409, "version")
    except BadRequest as exc:
        return None, error(str(exc), 400)
    except LookupError as exc:     # UnknownGame and the like
        if not isinstance(exc, KeyError):
            return None, error(str(exc), 404)
        return None, error(str(exc.args[0] if exc.args else exc), 400)
    except (ValueError, TypeError) as exc:
        return None, error(str(exc), 400)


_COLOUR = re.compile(r"^(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[a-zA-Z]{3,20})$")


def check_players(players) -> list[dict]:
    """The ``players`` of a new game: names, colours (``#rrggbb`` or a colour
    word, nothing a stylesheet could be tricked with), buzzers."""
    if not isinstance(players, list) or not players:
        raise BadRequest("'players' must be a non-empty list")
    out = []
    for i, p in enumerate(players):
        if isinstance(p, str):
            p = {"name": p}
        if not isinstance(p, dict):
            raise BadRequest(f"player {i + 1} must be an object with a 'name'")
        name = p.get("name")
        if not isinstance(name, str) or not name.strip():
            raise BadRequest(f"player {i + 1} needs a name")
        if len(name) > 40:
            raise BadRequest(f"player {i + 1}'s name is longer than 40 characters")
        colour = p.get("colour") or None
        if colour is not None and (not isinstance(colour, str) or not _COLOUR.match(colour)):
            raise BadRequest(f"{name}'s colour must be #rrggbb or a colour word")
        buzzer = p.get("buzzer") or None
        if buzzer is not None and not isinstance(buzzer, str):
            raise BadRequest(f"{name}'s buzzer must be a name or null")
        out.append({"name": name.strip(), "colour": colour, "buzzer": buzzer})
    return out


def virtual_press():
    """A virtual buzzer from a page: ``{"player": name, "pressed": bool}``,
    stamped when the server receives it (millisecond accuracy)."""
    try:
        data = body()
    except BadRequest as exc:
        return error(str(exc), 400)
    player, pressed = data.get("player"), data.get("pressed", True)
    if not isinstance(player, str) or not isinstance(pressed, bool):
        return error("send {\"player\": name, \"pressed\": true|false}", 400)
    _, err = call(services().session.virtual_press, player, pressed)
    if err:
        return err
    return {"ok": True, "player": player, "pressed": pressed, "accuracy": "ms"}
