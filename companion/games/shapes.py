"""Event shapes: what JSON type each key of an event takes, checked before
a game's rules see the event (pure: no Flask, no store).

A game declares its events as data, :attr:`Game.event_shapes
<companion.games.base.Game.event_shapes>`: per event type, per key, one of

* ``"str"``, ``"int"`` (a whole number, not true/false), ``"bool"``;
* ``"[str]"``: a list of strings; ``"{str:int}"``, ``"{str:str}"``: an
  object with such values;
* ``"cards"``: a list of strings or a count per string (``{"egg": 2}``);
* a tuple of allowed values (``("ingredient", "action")``);

with ``"?"`` at the end (or None in the tuple) when null is allowed too.
A key left out of an event is not checked (the rules give it its default);
a key the shape does not declare is the web schema's business
(:func:`companion.web.schema.check_event`), not this one's; a type the game
does not declare is left to the rules.

>>> check_shape({"draw": {"pile": ("ingredient", "action"), "count": "int"}},
...             {"type": "draw", "pile": "ingredient", "count": 4})
{'type': 'draw', 'pile': 'ingredient', 'count': 4}
>>> check_shape({"race": {"tied": "[str]?"}}, {"type": "race", "tied": 0})
Traceback (most recent call last):
...
companion.games.base.RulesError: a 'race' event's 'tied' must be a list of names or null, not 0
"""

from __future__ import annotations

import json
from typing import Any, Callable

#: the words for each kind in a refusal
WORDS = {"str": "a text", "int": "a whole number", "bool": "true or false",
         "[str]": "a list of names", "{str:int}": "an object of whole numbers",
         "{str:str}": "an object of names", "cards": "a list of card ids (or a count per id)",
         "any": "anything"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_cards(v: Any) -> bool:
    return (isinstance(v, list) and all(isinstance(x, str) for x in v)) or (
        isinstance(v, dict) and all(_is_int(n) for n in v.values()))


#: the test of each kind
TESTS: dict[str, Callable[[Any], bool]] = {
    "str": lambda v: isinstance(v, str),
    "int": _is_int,
    "bool": lambda v: isinstance(v, bool),
    "[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "{str:int}": lambda v: isinstance(v, dict) and all(_is_int(n) for n in v.values()),
    "{str:str}": lambda v: isinstance(v, dict) and all(isinstance(n, str) for n in v.values()),
    "cards": _is_cards,
    "any": lambda v: True,
}


def fits(kind: Any, value: Any) -> bool:
    """Whether ``value`` is of ``kind`` (see the module's doc)."""
    if isinstance(kind, tuple):
        return any(value == c and type(value) is type(c) for c in kind)
    if kind.endswith("?"):
        return value is None or fits(kind[:-1], value)
    return TESTS[kind](value)


def words(kind: Any) -> str:
    """``kind`` as the refusal says it."""
    if isinstance(kind, tuple):
        shown = [json.dumps(c) for c in kind]
        return "one of " + ", ".join(shown)
    if kind.endswith("?"):
        return f"{words(kind[:-1])} or null"
    return WORDS[kind]


def check_declared(shapes: dict) -> None:
    """ValueError if ``shapes`` uses a kind this module does not know (a
    game's declaration is checked once, in the tests and at discovery)."""
    for kind_of_event, keys in shapes.items():
        for key, kind in keys.items():
            if isinstance(kind, tuple):
                continue
            if kind.rstrip("?") not in TESTS:
                raise ValueError(f"event {kind_of_event!r}, key {key!r}: unknown kind {kind!r}")


def check_shape(shapes: dict, event: dict) -> dict:
    """``event`` if every key its type declares in ``shapes`` has a value
    of its kind, else :class:`~companion.games.base.RulesError` (rule
    ``format``) naming the first key that does not."""
    from .base import RulesError

    declared = shapes.get(event.get("type")) or {}
    for key, kind in declared.items():
        if key in event and not fits(kind, event[key]):
            shown = json.dumps(event[key])
            if len(shown) > 40:
                shown = shown[:37] + "..."
            raise RulesError(f"a {event['type']!r} event's {key!r} must be {words(kind)}, "
                             f"not {shown}", "format")
    return event


#: A race verdict (``Verdict.to_json`` plus ``reason``), as every game takes it.
RACE = {"reason": "str", "winner": "str?", "loser": "str?", "tied": "[str]?",
        "false_starts": "[str]?", "ineligible": "[str]?"}
