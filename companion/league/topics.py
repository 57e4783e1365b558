"""The league's wire: broker URLs, credentials, topic names and messages.

One topic tree per table, under a prefix (default ``tabletop``)::

    tabletop/<table>/event          every logged event, QoS 1, keyed (table, id)
    tabletop/<table>/state          the table now: retained, QoS 1
    tabletop/<table>/game/<game>    a game's result (or "playing again"): retained, QoS 1
    tabletop/<table>/status         "online" / "offline" (the broker's will): retained
    tabletop/<table>/mark           the league's delivery mark for the table: retained,
                                    written only by the league, read only by that table
    tabletop/_league/<table>/pairing  a convention round's seating: retained, the league's

A table's broker user is its table id and the ACL lets it write only its
own ``event``, ``state``, ``status`` and ``game/+`` topics and read only its
own ``mark`` and ``pairing``; the league reads ``tabletop/#`` and writes
only ``mark``s and ``pairing``s.
The league takes the table id from the *topic*, never from the payload, so
a table cannot speak for another one even if its payload says so.

Every payload is compact JSON with a ``"v"`` (wire version) key, at most
:data:`MAX_MESSAGE_BYTES` long. :func:`check_event`, :func:`check_state`,
:func:`check_result` and :func:`check_mark` check every field of what
arrives (types, sizes, ranges) and raise :class:`LeagueError` naming the
first bad one: the league trusts nothing a table sends. Nothing here
touches a socket: these are values and pure functions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

#: Wire version of every payload.
WIRE = 1
DEFAULT_PREFIX = "tabletop"
DEFAULT_PORT = 1883
DEFAULT_TLS_PORT = 8883

#: The largest message either end accepts (the broker's ``message_size_limit``
#: is the same): a table's event, state or result is a few KiB at most.
MAX_MESSAGE_BYTES = 256 * 1024
#: A ``sent_ns`` further ahead of the league's clock than this is refused.
MAX_AHEAD_NS = 24 * 3600 * 10**9
#: Whole numbers on the wire (ids, counts, wall-clock ns) stay below 2**63.
MAX_INT = 2**63 - 1

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_STORE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
#: the store a league's mark names for a table it holds no event of (it
#: heard only its state, status or result: it started after the table's
#: events went out): no table's store has this id (theirs are 32 hex
#: digits), so the table's publisher reads it as "another store" and sends
#: every event it published since it joined again
NO_STORE = "none-held"


class LeagueError(ValueError):
    """A bad league setting (URL, table id, credentials file, message)."""


def check_table_id(table_id) -> str:
    """``table_id`` if it can be a broker user and a topic level: 1 to 32
    letters, digits, ``-`` or ``_`` (no ``/``, ``+``, ``#``: MQTT's
    separators and wildcards), starting with a letter or digit."""
    if not isinstance(table_id, str) or not _ID.match(table_id):
        raise LeagueError(f"table id {table_id!r} must be 1 to 32 letters, digits, '-' or '_' "
                          f"(no '/', '+', '#' or spaces), starting with a letter or digit")
    return table_id


def check_prefix(prefix) -> str:
    if not isinstance(prefix, str) or not _ID.match(prefix):
        raise LeagueError(f"topic prefix {prefix!r} must be one word of letters, digits, "
                          f"'-' or '_'")
    return prefix


@dataclass(frozen=True)
class BrokerURL:
    """``mqtt://host:port`` (or ``mqtts://`` for TLS) split into its parts.

    >>> BrokerURL.parse("mqtt://127.0.0.1:1884")
    BrokerURL(host='127.0.0.1', port=1884, tls=False)
    >>> BrokerURL.parse("mqtt://league.local").port
    1883
    """

    host: str
    port: int
    tls: bool = False

    @classmethod
    def parse(cls, url: str) -> "BrokerURL":
        if not isinstance(url, str) or "://" not in url:
            raise LeagueError(f"broker URL {url!r} must look like mqtt://host:port")
        parts = urlsplit(url)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise LeagueError(f"broker URL {url!r}: the scheme must be mqtt:// or mqtts://")
        if parts.username or parts.password:
            raise LeagueError(f"broker URL {url!r}: give credentials with --league-user and "
                              f"--league-password-file, not in the URL (it is printed and logged)")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise LeagueError(f"broker URL {url!r}: only mqtt://host:port, no path")
        try:
            port = parts.port
        except ValueError:
            raise LeagueError(f"broker URL {url!r}: the port must be a number 1-65535") from None
        if not parts.hostname:
            raise LeagueError(f"broker URL {url!r} names no host")
        tls = parts.scheme == "mqtts"
        return cls(parts.hostname, port or (DEFAULT_TLS_PORT if tls else DEFAULT_PORT), tls)

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


@dataclass(frozen=True)
class Credentials:
    """A broker user name and password (the password never appears in a repr)."""

    username: str
    password: str

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, password=***)"

    @classmethod
    def from_file(cls, username: str, path) -> "Credentials":
        """The password is the first line of ``path`` (as ``config`` writes it)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise LeagueError(f"cannot read the password file {path}: "
                              f"{exc.strerror or exc}") from None
        password = text.splitlines()[0].strip() if text.strip() else ""
        if not password:
            raise LeagueError(f"the password file {path} is empty")
        return cls(username, password)


class Topics:
    """The topic names of one prefix.

    >>> t = Topics()
    >>> t.event("t1"), t.game("t1", 7)
    ('tabletop/t1/event', 'tabletop/t1/game/7')
    >>> t.parse("tabletop/t1/game/7")
    ('t1', 'game', 7)
    """

    def __init__(self, prefix: str = DEFAULT_PREFIX):
        self.prefix = check_prefix(prefix)

    def event(self, table: str) -> str:
        return f"{self.prefix}/{table}/event"

    def state(self, table: str) -> str:
        return f"{self.prefix}/{table}/state"

    def status(self, table: str) -> str:
        return f"{self.prefix}/{table}/status"

    def game(self, table: str, game_id: int) -> str:
        return f"{self.prefix}/{table}/game/{int(game_id)}"

    def mark(self, table: str) -> str:
        return f"{self.prefix}/{table}/mark"

    def table_tree(self, table: str) -> str:
        """Everything under one table."""
        return f"{self.prefix}/{table}/#"

    def table_writes(self, table: str) -> list[str]:
        """What a table may write (its ACL lines): everything but its mark."""
        return [self.event(table), self.state(table), self.status(table),
                f"{self.prefix}/{table}/game/+"]

    @property
    def marks(self) -> str:
        """What the league writes."""
        return f"{self.prefix}/+/mark"

    # -- from the league to one table (convention rounds, docs/league.md) ----
    #: No table id can be this level (an id starts with a letter or digit), so
    #: no table's own tree holds it: the league writes here, each table reads
    #: only its own.
    LEAGUE_LEVEL = "_league"

    def pairing(self, table: str) -> str:
        """A table's seating for the current round (retained, QoS 1)."""
        return f"{self.prefix}/{self.LEAGUE_LEVEL}/{table}/pairing"

    def from_league(self, topic: str) -> bool:
        """True for a topic the league itself writes (not a table's)."""
        return topic.startswith(f"{self.prefix}/{self.LEAGUE_LEVEL}/")

    @property
    def everything(self) -> str:
        """What the league reads."""
        return f"{self.prefix}/#"

    def parse(self, topic: str) -> tuple[str, str, int | None] | None:
        """``(table, kind, game_id)`` of a league topic, None if it is not one."""
        parts = topic.split("/")
        if len(parts) < 3 or parts[0] != self.prefix or not _ID.match(parts[1]):
            return None
        table, kind = parts[1], parts[2]
        if len(parts) == 3 and kind in ("event", "state", "status", "mark"):
            return table, kind, None
        if len(parts) == 4 and kind == "game" and parts[3].isdigit() and len(parts[3]) < 19:
            return table, kind, int(parts[3])
        return None


def dumps(payload: dict) -> bytes:
    """A payload on the wire: compact JSON with the wire version."""
    return json.dumps({"v": WIRE, **payload}, separators=(",", ":"),
                      allow_nan=False).encode()


def loads(data: bytes) -> dict:
    """A payload from the wire; LeagueError if it is not a JSON object of our
    version or longer than :data:`MAX_MESSAGE_BYTES`."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise LeagueError(f"{len(data)} bytes, over the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise LeagueError(f"not JSON ({exc.__class__.__name__})") from None
    if not isinstance(obj, dict) or obj.get("v") != WIRE:
        raise LeagueError(f"not a league message of wire version {WIRE}")
    return obj


# -- checking what arrives ------------------------------------------------------
def _int(msg: dict, key: str, low: int = 0, high: int = MAX_INT, optional: bool = False):
    value = msg.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LeagueError(f"{key} must be a whole number from {low} to {high}")
    return value


def _str(msg: dict, key: str, most: int, optional: bool = False):
    value = msg.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > most:
        raise LeagueError(f"{key} must be text of at most {most} characters")
    return value


def _names(value, key: str) -> list[str]:
    if not isinstance(value, list) or len(value) > 16 or not all(
            isinstance(p, str) and 0 < len(p) <= 64 for p in value):
        raise LeagueError(f"{key} must be a list of at most 16 names")
    return value


def _sent(msg: dict, now: int) -> int:
    return _int(msg, "sent_ns", 0, min(MAX_INT, now + MAX_AHEAD_NS))


def check_store_id(value) -> str:
    if not isinstance(value, str) or not _STORE.match(value):
        raise LeagueError("store must be the table store's id (8 to 64 letters, digits, - or _)")
    return value


def check_event(msg: dict, now: int) -> dict:
    """An event message's fields, checked (LeagueError names the first bad one)."""
    check_store_id(msg.get("store"))
    eid = _int(msg, "id", 1)
    _int(msg, "prev", 0, eid - 1)
    _int(msg, "since", 0, msg["prev"])
    _int(msg, "seq", 1, eid)
    _int(msg, "game_id", 1)
    _str(msg, "game", 32)
    _str(msg, "title", 80, optional=True)
    _names(msg.get("players"), "players")
    _str(msg, "type", 32, optional=True)
    _str(msg, "line", 500, optional=True)
    if not isinstance(msg.get("event"), dict):
        raise LeagueError("event must be a JSON object")
    _int(msg, "logged_ns", optional=True)
    _sent(msg, now)
    return msg


def check_ranking(value) -> list[list[str]]:
    if not isinstance(value, list) or not all(isinstance(g, list) for g in value):
        raise LeagueError("ranking must be a list of lists of names")
    _names([p for g in value for p in g], "ranking")
    return value


def check_scores(value) -> dict:
    if not isinstance(value, dict) or len(value) > 16 or not all(
            isinstance(k, str) and len(k) <= 64 and not isinstance(v, bool)
            and isinstance(v, (int, float)) and abs(v) < 2**53 for k, v in value.items()):
        raise LeagueError("scores must map at most 16 names to numbers")
    return value


def check_state(msg: dict, now: int) -> dict:
    """A table state message, checked: what the league page reads of it."""
    _sent(msg, now)
    for key in ("game", "title", "current_player", "score_unit"):
        _str(msg, key, 80, optional=True)
    _int(msg, "game_id", optional=True)
    _int(msg, "version", optional=True)
    players = msg.get("players") or []
    if not isinstance(players, list) or len(players) > 16 or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) and len(p["name"]) <= 64
            and (p.get("colour") is None or isinstance(p.get("colour"), str)
                 and len(p["colour"]) <= 32) for p in players):
        raise LeagueError("players must be a list of at most 16 {name, colour}")
    if msg.get("scores") is not None:
        check_scores(msg["scores"])
    if msg.get("ranking") is not None:
        check_ranking(msg["ranking"])
    _str(msg, "last_event", 500, optional=True)
    if msg.get("race") is not None and not isinstance(msg["race"], dict):
        raise LeagueError("race must be a JSON object")
    return msg


def check_result(msg: dict, now: int) -> dict:
    """A game result message (finished or "playing again"), checked."""
    check_store_id(msg.get("store"))
    _sent(msg, now)
    _str(msg, "game", 32)
    _str(msg, "title", 80, optional=True)
    _int(msg, "version", 1)
    if not isinstance(msg.get("finished"), bool):
        raise LeagueError("finished must be true or false")
    players = msg.get("players")
    if not isinstance(players, list) or len(players) > 16:
        raise LeagueError("players must be a list of at most 16")
    _names([p.get("name") if isinstance(p, dict) else p for p in players], "players")
    _int(msg, "created_ns", optional=True)
    if msg["finished"]:
        _int(msg, "events", 1)
        _int(msg, "finished_ns", optional=True)
        summary = msg.get("summary")
        if not isinstance(summary, dict):
            raise LeagueError("a finished game's result needs its summary")
        check_ranking(summary.get("ranking"))
        check_scores(summary.get("scores"))
        if not isinstance(msg.get("options", {}), dict):
            raise LeagueError("options must be a JSON object")
        if not isinstance(msg.get("hidden", False), bool):
            raise LeagueError("hidden must be true or false")
    return msg


def check_mark(msg: dict) -> dict:
    """The league's mark for a table (read by the table's publisher)."""
    check_store_id(msg.get("store"))
    _int(msg, "since")
    _int(msg, "upto", msg["since"])
    _int(msg, "next", msg["upto"] + 1, optional=True)
    _int(msg, "heard_ns", optional=True)
    results = msg.get("results", {})
    if not isinstance(results, dict) or not all(
            k.isdigit() and isinstance(v, int) and not isinstance(v, bool)
            for k, v in results.items()):
        raise LeagueError("results must map game ids to versions")
    return msg


__all__ = ["BrokerURL", "Credentials", "DEFAULT_PREFIX", "LeagueError", "MAX_AHEAD_NS",
           "MAX_MESSAGE_BYTES", "NO_STORE", "Topics", "WIRE", "check_event", "check_mark",
           "check_prefix", "check_ranking", "check_result", "check_scores", "check_state",
           "check_store_id", "check_table_id", "dumps", "loads"]
