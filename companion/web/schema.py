"""Strict checks on what a phone may send, before anything is logged.

Two layers, both answering 400 with the reason:

* :func:`check_body` (every JSON body, every route: :func:`check_request`): nesting at most
  :data:`MAX_BODY_DEPTH` deep, measured without recursion, so a body nested
  976 deep is a 400 and never a RecursionError in the store or the live
  updates' encoder.
* :func:`check_event` (an event the host logs: the route declares
  :func:`host_event` as its body check, :mod:`companion.web.policy`): its keys must
  be keys the game itself uses for that type of event, read from the game
  and nothing else: its :meth:`~companion.games.Game.decisions`, chance
  outcomes, race outcomes, the events the console offers
  (:meth:`~companion.games.Game.host_events`) and every player's private events now, plus a
  race verdict's keys and the log's own ``undo``/``redo`` (``{"type"}``
  only). So a new game needs no code here. Its size is bounded too
  (:data:`MAX_EVENT_BYTES`, :data:`MAX_STRING`, :data:`MAX_ITEMS`,
  :data:`MAX_EVENT_DEPTH`). A type the game does not offer now gets only
  the bounds: the tracker itself then refuses or accepts it, with its rule.
  A player's own page gets the bounds; the session then takes only an
  event equal to one of that player's private events.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterable

from .api import BadRequest

log = logging.getLogger(__name__)

#: Deepest nesting of any request body (objects and lists).
MAX_BODY_DEPTH = 32
#: Deepest nesting of one event (``{"type": ..., "tied": [...]}`` is 2).
MAX_EVENT_DEPTH = 6
#: Largest event, as compact JSON.
MAX_EVENT_BYTES = 8 * 1024
#: Longest string anywhere in an event (names are at most 40).
MAX_STRING = 200
#: Most entries in one list or object of an event.
MAX_ITEMS = 64

#: The log's own events: nothing but the type.
LOG_EVENTS = {"undo": frozenset({"type"}), "redo": frozenset({"type"})}
#: What a race verdict may carry (``Game.race_outcomes``, ``check_verdict``).
VERDICT_KEYS = frozenset({"type", "reason", "winner", "loser", "tied", "false_starts",
                          "ineligible"})


def depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests (a scalar is 0, ``[]`` is 1), counted
    without recursion; stops counting at ``limit + 1``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            items = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        if d > deepest:
            deepest = d
            if deepest > limit:
                return deepest
        stack.extend((x, d + 1) for x in items)
    return deepest


def check_body(data: Any) -> None:
    """BadRequest if a request body nests deeper than :data:`MAX_BODY_DEPTH`."""
    if depth(data, MAX_BODY_DEPTH) > MAX_BODY_DEPTH:
        raise BadRequest(f"the request body is nested more than {MAX_BODY_DEPTH} deep",
                         rule="format")


def _walk_bounds(event: dict) -> None:
    if depth(event, MAX_EVENT_DEPTH) > MAX_EVENT_DEPTH:
        raise BadRequest(f"the event is nested more than {MAX_EVENT_DEPTH} deep", "event",
                         "format")
    stack = [event]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if len(v) > MAX_STRING:
                raise BadRequest(f"a text in the event is longer than {MAX_STRING} characters",
                                 "event", "format")
        elif isinstance(v, dict):
            if len(v) > MAX_ITEMS:
                raise BadRequest(f"an object in the event has more than {MAX_ITEMS} keys",
                                 "event", "format")
            for k, x in v.items():
                if len(k) > MAX_STRING:
                    raise BadRequest(f"a key in the event is longer than {MAX_STRING} "
                                     f"characters", "event", "format")
                stack.append(x)
        elif isinstance(v, list):
            if len(v) > MAX_ITEMS:
                raise BadRequest(f"a list in the event has more than {MAX_ITEMS} entries",
                                 "event", "format")
            stack.extend(v)
        elif isinstance(v, float) and v != v:
            raise BadRequest("the event holds NaN", "event", "format")
    size = len(json.dumps(event, separators=(",", ":")))
    if size > MAX_EVENT_BYTES:
        raise BadRequest(f"the event is {size} bytes; at most {MAX_EVENT_BYTES}", "event",
                         "format")


def _safe(fn, *args) -> list:
    """A tracker's list of events; a tracker bug gives none (logged)."""
    try:
        out = fn(*args)
    except Exception:  # noqa: BLE001 - a tracker bug must not break the check
        log.exception("%s failed while checking an event", getattr(fn, "__name__", fn))
        return []
    return list(out or [])


def allowed_keys(game, state, players: Iterable[str] = (), private_for: str | None = None
                 ) -> dict[str, frozenset]:
    """Per event type, the keys ``game`` itself uses for it now: from its
    decisions, chance outcomes, race outcomes, console events and private events (of
    ``private_for`` only, or of every player), plus the verdict keys for
    ``race`` and the log's ``undo``/``redo``."""
    keys: dict[str, set] = {}
    events: list = []
    if private_for is None:
        events += _safe(game.decisions, state)
        events += [e for e, _ in _safe(game.chance_outcomes, state)]
        events += _safe(game.race_outcomes, state)
        events += _safe(game.host_events, state)     # the console's own (a cardless draw)
        for p in players:
            events += _safe(game.private_events, state, p)
    else:
        events += _safe(game.private_events, state, private_for)
    for e in events:
        if isinstance(e, dict) and isinstance(e.get("type"), str):
            keys.setdefault(e["type"], set()).update(k for k in e if isinstance(k, str))
    if private_for is None:
        keys.setdefault("race", set()).update(VERDICT_KEYS)
        for kind, ks in LOG_EVENTS.items():
            keys[kind] = set(ks)
    return {k: frozenset(v) for k, v in keys.items()}


def check_event(game, state, event: Any, players: Iterable[str] = (),
                private_for: str | None = None) -> dict:
    """``event`` if it has the shape ``game`` uses for its type (see the
    module's doc), else :class:`~companion.web.api.BadRequest` (400) naming
    the first unknown key or the bound it broke. Reads the game, never
    changes it; the tracker still decides whether the event is legal now."""
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise BadRequest("'event' must be an object with a 'type'", "event")
    _walk_bounds(event)
    kind = event["type"]
    if game is None:
        return event
    keys = allowed_keys(game, state, players, private_for)
    allowed = keys.get(kind)
    if allowed is None:
        return event          # not offered now: the tracker's rules answer
    unknown = sorted(k for k in event if k not in allowed)
    if unknown:
        shown = ", ".join(repr(k) for k in unknown[:5])
        raise BadRequest(f"a {kind!r} event has no {shown} "
                         f"({'key' if len(unknown) == 1 else 'keys'} it may carry: "
                         f"{', '.join(sorted(allowed))}); nothing was logged", "event", "format")
    return event


def check_request(content=None):
    """The body check a route's policy runs (:mod:`companion.web.policy`):
    :func:`check_body` on every JSON body, then ``content`` (the route's
    declared check, :func:`host_event` or :func:`private_event`) on a JSON
    object, so a bad one is refused before the view (and the log) sees it."""
    from flask import request

    if request.method in ("GET", "HEAD", "OPTIONS") or not request.is_json:
        return None
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        raise BadRequest("the request body is nested too deeply", rule="format") from None
    if data is None:
        return None
    check_body(data)
    if content is not None and isinstance(data, dict):
        content(data)
    return None


def host_event(data: dict) -> None:
    """The host's event (``{"event": ...}``): :func:`check_event` against the
    running game, so an event with keys the game never uses is a 400."""
    from flask import current_app

    session = current_app.extensions["companion"].session
    game = getattr(session, "game", None)
    state = getattr(session, "state", None) if game is not None else None
    names = list(getattr(session, "names", []) or []) if game is not None else []
    check_event(game, state, data.get("event"), names)


def reorder(data: dict) -> None:
    """The host's answer to the offered swap: ``{"events": [id, id],
    "accept": bool, "expected_version": n}`` and nothing else (400 naming
    the key otherwise)."""
    unknown = sorted(k for k in data if k not in ("events", "accept", "expected_version"))
    if unknown:
        raise BadRequest(f"a swap's answer has no {unknown[0]!r} (it carries events, accept "
                         f"and expected_version)", unknown[0], "format")
    events = data.get("events")
    if not isinstance(events, list) or len(events) != 2 or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in events):
        raise BadRequest("'events' must be the offer's two event ids", "events", "format")
    if not isinstance(data.get("accept", True), bool):
        raise BadRequest("'accept' must be true or false", "accept", "format")


def private_event(data: dict) -> None:
    """A player's own event: the bounds only (the session then takes only an
    event equal to one of that player's private events, exactly)."""
    event = data.get("event")
    if isinstance(event, dict):
        _walk_bounds(event)


__all__ = ["check_body", "check_event", "check_request", "host_event", "private_event", "reorder",
           "allowed_keys", "depth",
           "MAX_BODY_DEPTH", "MAX_EVENT_DEPTH", "MAX_EVENT_BYTES", "MAX_STRING", "MAX_ITEMS"]
