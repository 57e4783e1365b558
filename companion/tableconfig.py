"""What a table is started with: one :class:`TableConfig`, one set of options.

``companion serve`` reads its options with :func:`add_arguments` and
:meth:`TableConfig.from_args`; :class:`companion.app.TableServer` and
:func:`companion.app.serve` take the same :class:`TableConfig` (or its
fields as keywords). An option is added here once, so the command line and
the application cannot drift apart. The race settings ``--set`` changes are
the table's own (:mod:`companion.table.settings`): this module only parses
them.

>>> parser = add_arguments(argparse.ArgumentParser(prog="companion serve"))
>>> TableConfig.from_args(parser.parse_args(["--port", "0", "--set", "lockout_ms=300"]))
... # doctest: +ELLIPSIS
TableConfig(host='0.0.0.0', port=0, ..., settings={'lockout_ms': 300}, ...)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from .table.settings import DEFAULT_SETTINGS

#: Player names (and mock buzzer ids) when none are given.
DEMO_PLAYERS = ["Ana", "Bo", "Cy", "Dee"]
#: The game a demo table starts with when the store has none running.
DEMO_GAME = "chope"


@dataclass
class TableConfig:
    """The table's options (``companion serve --help`` says each).

    ``source``: a registered source name, or None / ``"auto"`` (see
    :func:`~companion.buzzers.base.choose_source`); ``source_options`` go to
    its constructor (``port`` for a Pico...). ``demo`` None: on with mock
    buzzers. ``pin`` / ``pin_file`` (else ``COMPANION_PIN`` /
    ``COMPANION_PIN_FILE``, else random): :func:`companion.app.resolve_pin`;
    ``short_pin`` accepts a PIN under 6 characters. ``settings``: the table
    session's race settings (:data:`DEFAULT_SETTINGS`).
    ``league``: the league publisher's options (``url``, ``table_id``,
    ``user``, ``password_file``, ``ca_file``), None: not in a league.
    ``camera``: the camera over the reveal spot (``picamera``, ``webcam[:N]``,
    a clip's path, ``auto``, ``none``; None: ``COMPANION_CAMERA``, else none:
    :func:`companion.camera.base.parse_camera`)."""

    host: str = "0.0.0.0"
    port: int = 8080
    db_path: Any = None
    pin: str | None = None
    pin_file: Any = None
    short_pin: bool = False
    players: list[str] | None = None
    source: str | None = None
    source_options: dict = field(default_factory=dict)
    demo: bool | None = None
    pinmap: Any = None
    threads: int = 64
    settings: dict | None = None
    league: dict | None = None
    demo_game: str | None = DEMO_GAME
    camera: str | None = None
    #: HTTPS on the LAN too (the table's own CA; docs/web.md "HTTPS on the LAN"),
    #: on ``https_port`` (0: a free one); plain HTTP stays on ``port``
    https: bool = False
    https_port: int = 8443

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "TableConfig":
        """The config of parsed ``companion serve`` options (:func:`add_arguments`);
        ValueError names a bad ``--set``."""
        league = None
        if args.league:
            league = {"url": args.league, "table_id": args.table_id,
                      "user": args.league_user, "password_file": args.league_password_file,
                      "ca_file": args.league_ca_file}
        return cls(host=args.host, port=args.port, db_path=args.db, pin=args.pin,
                   pin_file=args.pin_file, short_pin=args.short_pin,
                   players=split_names(args.players), source=args.source, demo=args.demo,
                   pinmap=args.pinmap, threads=args.threads,
                   settings=parse_settings(args.set), league=league,
                   camera=getattr(args, "camera", None),
                   https=args.https, https_port=args.https_port)


def split_names(text: str | None) -> list[str] | None:
    """``"Ana, Bo,"`` as ``["Ana", "Bo"]``; None for none given."""
    if not text:
        return None
    return [p.strip() for p in text.split(",") if p.strip()] or None


def parse_settings(pairs: list[str]) -> dict:
    """``["tie_window_us=500", "lockout_ms=none"]`` as the session's settings;
    ValueError names an unknown setting or a bad value."""

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in DEFAULT_SETTINGS:
            raise ValueError(f"--set {pair!r}: expected NAME=VALUE with NAME one of "
                             f"{', '.join(DEFAULT_SETTINGS)}")
        value = value.strip().lower()
        if value in ("none", "off", ""):
            out[key] = None
        elif value in ("true", "yes", "on", "false", "no"):
            out[key] = value in ("true", "yes", "on")
        else:
            try:
                out[key] = int(value)
            except ValueError:
                raise ValueError(f"--set {pair!r}: {key} takes a whole number") from None
    return out


def source_help() -> str:
    from .buzzers.base import ENV_VAR, source_names

    return (f"buzzer source: {', '.join(['auto', *source_names()])} (default: {ENV_VAR}, "
            f"else auto: the first of pico, gpio, mock found here)")


def add_arguments(s: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``companion serve`` (read back by :meth:`TableConfig.from_args`)."""
    s.add_argument("--host", default="0.0.0.0")
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--db", help="SQLite file (default: the user's data directory)")
    s.add_argument("--pin", help="host console PIN, at least 6 characters (shows in `ps`: on a "
                                 "shared machine use --pin-file or COMPANION_PIN; default: "
                                 "COMPANION_PIN, COMPANION_PIN_FILE or a random one, printed)")
    s.add_argument("--pin-file", metavar="FILE",
                   help="read the host PIN from the first line of FILE (keep it mode 0600)")
    s.add_argument("--short-pin", action="store_true",
                   help="accept a PIN shorter than 6 characters (a guest can guess a 4-digit "
                        "PIN in hours)")
    s.add_argument("--players", help="buzzer players for the demo, comma-separated")
    s.add_argument("--source", default=None, metavar="NAME", help=source_help())
    s.add_argument("--demo", action=argparse.BooleanOptionalAction, default=None,
                   help="on-screen virtual buzzers (default: on with mock buzzers)")
    s.add_argument("--pinmap", help="pin map TOML (default: hardware/pinmap.toml)")
    s.add_argument("--threads", type=int, default=64)
    s.add_argument("--https", action="store_true",
                   help="also serve HTTPS on the LAN, with the table's own certificate "
                        "authority (kept beside the store; phones trust it once at "
                        "http://<table>/ca): Wake Lock and the camera on phones. Plain HTTP "
                        "stays on --port (docs/web.md)")
    s.add_argument("--https-port", type=int, default=8443, metavar="PORT",
                   help="the HTTPS port with --https (default 8443)")
    s.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a race setting, e.g. tie_window_us=500, lockout_ms=300, "
                        "debounce_ms=20, hold_ms=30, stuck_ms=10000, countdown_ms=3000 "
                        "(docs/rules-notes.md)")
    s.add_argument("--camera", metavar="SPEC", default=None,
                   help="the camera over the reveal spot: picamera, webcam, webcam:N "
                        "(/dev/videoN), a recorded clip (a video file or a folder of frames "
                        "with times.csv), auto or none (default: COMPANION_CAMERA, else "
                        "none; docs/camera.md)")
    s.add_argument("--league", metavar="URL", default=None,
                   help="publish this table to a league broker, mqtt://host:port (off by "
                        "default; docs/league.md)")
    s.add_argument("--table-id", default=None, help="this table's id in the league")
    s.add_argument("--league-user", default=None, help="broker user (default: the table id)")
    s.add_argument("--league-password-file", default=None, metavar="FILE",
                   help="file whose first line is this table's broker password")
    s.add_argument("--league-ca-file", default=None, metavar="FILE",
                   help="the CA certificate an mqtts:// broker's certificate is checked "
                        "against (default: the system's CAs)")
    return s


__all__ = ["TableConfig", "add_arguments", "parse_settings", "split_names",
           "source_help", "DEMO_GAME", "DEMO_PLAYERS"]
