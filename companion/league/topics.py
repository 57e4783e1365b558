"""The league's wire: broker URLs, credentials, topic names and messages.

One topic tree per table, under a prefix (default ``tabletop``)::

    tabletop/<table>/event          every logged event, QoS 1, keyed (table, id)
    tabletop/<table>/state          the table now: retained, QoS 1
    tabletop/<table>/game/<game>    a game's result (or "playing again"): retained, QoS 1
    tabletop/<table>/status         "online" / "offline" (the broker's will): retained
    tabletop/_league/<table>/pairing  a convention round's seating: retained, the league's

A table's broker user is its table id and the ACL lets it write only under
``tabletop/<its id>/``; the league reads ``tabletop/#`` and never writes.
The league takes the table id from the *topic*, never from the payload, so
a table cannot speak for another one even if its payload says so.

Every payload is compact JSON with a ``"v"`` (wire version) key. Nothing
here touches a socket: these are values and pure functions.
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

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


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

    def table_tree(self, table: str) -> str:
        """What a table may write (its ACL line)."""
        return f"{self.prefix}/{table}/#"

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
        if len(parts) == 3 and kind in ("event", "state", "status"):
            return table, kind, None
        if len(parts) == 4 and kind == "game" and parts[3].isdigit() and len(parts[3]) < 19:
            return table, kind, int(parts[3])
        return None


def dumps(payload: dict) -> bytes:
    """A payload on the wire: compact JSON with the wire version."""
    return json.dumps({"v": WIRE, **payload}, separators=(",", ":"),
                      allow_nan=False).encode()


def loads(data: bytes) -> dict:
    """A payload from the wire; LeagueError if it is not a JSON object of our version."""
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise LeagueError(f"not JSON ({exc.__class__.__name__})") from None
    if not isinstance(obj, dict) or obj.get("v") != WIRE:
        raise LeagueError(f"not a league message of wire version {WIRE}")
    return obj


__all__ = ["BrokerURL", "Credentials", "DEFAULT_PREFIX", "LeagueError", "Topics", "WIRE",
           "check_table_id", "check_prefix", "dumps", "loads"]
