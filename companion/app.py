"""Application assembly: the one place the whole table is built.

``companion serve`` is a :class:`TableServer`: it builds, in order,

1. the store (:class:`~companion.record.store.Store`, the durable SQLite log);
2. the :class:`~companion.table.session.TableSession` on it (resuming the last game);
3. the buzzer source, chosen in one place
   (:func:`~companion.buzzers.base.open_source`: ``--source``, else
   ``COMPANION_SOURCE``, else auto-detection);
4. the buzzer box's lights and cue (:class:`~companion.buzzers.feedback.Feedback`);
5. the :class:`~companion.buzzers.pipeline.Pipeline` from the source to the
   session, with the box attached (the table's clock thread);
6. the camera over the reveal spot, when one is asked for
   (:func:`~companion.camera.desk.open_desk`: ``--camera``, else
   ``COMPANION_CAMERA``, else none), logging cards through the session's
   one way in, started with the pipeline;
7. the web app (:func:`companion.web.create_app`, which only *receives* the
   session, the pipeline, the buzzer ids and the camera) on waitress, a production WSGI
   server with one worker thread per open live page, so ``threads`` must
   exceed the phones at the table: 64 covers about 50 phones and the host.

Before the store: one server per store (a lock file next to it, naming the
process that holds it), files made private (mode 0600: the log holds secret
Favourites) and a store it cannot write refused with the reason
(:mod:`companion.record.storefiles`). The web app runs behind
:class:`~companion.web.limits.Gate` (per-address caps on
connections and requests in flight, slow requests cut off, capacity kept
for the Pi and the host).

Everything is closed together, in reverse order. waitress is driven through
its public API only: :func:`waitress.create_server` with a socket map this
module owns, ``server.run()`` in the serving thread, and a stop that closes
every dispatcher of that map from the serving thread itself (a thunk on the
server's trigger), after which ``run()`` returns.

Serving blocks until Ctrl-C or SIGTERM:

>>> rc = serve(port=8080)        # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
from pathlib import Path
from typing import Callable

from .record.store import StoreError
from .record.storefiles import StoreLock, check_writable, private_files
from .serving import Served, serve_until_signalled
from .tableconfig import DEMO_PLAYERS, TableConfig

log = logging.getLogger(__name__)

#: With HTTPS: how often the machine's names are checked (a new DHCP lease
#: gets a new server certificate and new join URLs).
CERT_CHECK_S = 60.0
#: Most buzzers a pin map has slots for.
MAX_BUZZERS = 6
#: Environment variables for the PIN (a file is better on a shared machine:
#: ``--pin`` shows in ``ps``, and so does the environment to the same user).
ENV_PIN, ENV_PIN_FILE = "COMPANION_PIN", "COMPANION_PIN_FILE"


def resolve_pin(pin: str | None = None, pin_file=None, allow_short: bool = False,
                environ=None) -> str | None:
    """The host PIN: ``pin`` (``--pin``, visible in ``ps``), else the first
    line of ``pin_file`` (``--pin-file``), else ``$COMPANION_PIN``, else the
    file named by ``$COMPANION_PIN_FILE``; None: a random one is made.
    ValueError (the message says why) for a missing file or a PIN shorter
    than 6 unless ``allow_short``."""
    from .web.auth import check_pin_policy

    env = os.environ if environ is None else environ
    source = "--pin"
    if pin is None and pin_file is None:
        if env.get(ENV_PIN):
            pin, source = env[ENV_PIN], ENV_PIN
        elif env.get(ENV_PIN_FILE):
            pin_file, source = env[ENV_PIN_FILE], ENV_PIN_FILE
    if pin is None and pin_file is not None:
        source = source if source == ENV_PIN_FILE else "--pin-file"
        try:
            with open(pin_file, encoding="utf-8") as fh:
                pin = fh.readline().strip()
        except OSError as exc:
            raise ValueError(f"{source} {pin_file}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ValueError(f"{source} {pin_file}: not a text file") from None
    if pin is None:
        return None
    try:
        return check_pin_policy(str(pin), allow_short)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None


class TableServer(Served):
    """Everything ``companion serve`` runs, opened and closed together: the
    table's server, as :class:`~companion.league.app.LeagueServer` is the
    league screen's (a Table is a Chope! card).

    :meth:`open` builds and binds (port 0 picks a free port); :meth:`run`
    serves until :meth:`stop` (from a signal handler or another thread);
    :meth:`start` runs it in a background thread instead (tests);
    :meth:`close` releases everything.

    ``table``: its :class:`~companion.tableconfig.TableConfig` (what
    ``companion serve`` was given); keywords named like its fields override
    it (``TableServer(port=0, source="mock")``). ``config``: extra configuration
    of the web app; ``limits``: :class:`~companion.web.limits.Limits`;
    ``announce`` shows a line on the Pi's own terminal (a replaced PIN).
    """

    def __init__(self, table: TableConfig | None = None, *, config: dict | None = None,
                 limits=None, announce: Callable[[str], None] | None = None, **fields):
        self.table = dataclasses.replace(table or TableConfig(), **fields)
        t = self.table
        self.host, self.port = t.host, t.port
        self.league_options, self.league = t.league, None
        self.seat = None                # the table's convention pairing (league.tableseat)
        self.pin_file, self.allow_short_pin = t.pin_file, t.short_pin
        self.limits = limits
        self.announce = announce
        self.gate = None
        self.lock: StoreLock | None = None
        #: why the last game could not be resumed (the table then starts with none)
        self.resume_error: str | None = None
        self.db_path, self.pin = t.db_path, t.pin
        self.players = list(t.players or DEMO_PLAYERS)[:MAX_BUZZERS]
        self.source_kind, self.demo, self.pinmap = t.source, t.demo, t.pinmap
        self.source_options = dict(t.source_options or {})
        self.threads = t.threads
        self.config = dict(config or {})
        self.demo_game = t.demo_game
        self.session_settings = t.settings
        self.store = self.session = self.source = self.feedback = None
        self.pipeline = self.app = self.services = None
        self.camera_spec, self.camera = t.camera, None
        self.urls: list[str] = []
        #: with HTTPS: the plain-HTTP URLs (a new phone trusts the table at /ca there)
        self.plain_urls: list[str] = []
        self.secure_urls: list[str] = []
        self.https, self.https_port = t.https, t.https_port
        self.keeper = None                # the server certificate (companion.tlsserve)
        self.notes: list[str] = []
        self._init_serving()

    # -- building -------------------------------------------------------------

    def open(self) -> "TableServer":
        """Build the table and bind the port (nothing runs yet)."""
        from .buzzers.pipeline import Pipeline
        from .table.session import ResumeError, TableSession
        from .web import create_app
        from .web.limits import Gate, Limits

        self.pin = resolve_pin(self.pin, self.pin_file, self.allow_short_pin)
        self._open_store()
        if self.https:
            self._open_tls()
        self.session = TableSession(self.store, settings=self.session_settings)
        # a league's or convention's games are ranked across tables: no head starts
        self.session.handicaps_allowed = not self.league_options
        try:
            self.session.resume()
        except ResumeError as exc:
            self._not_resumed(str(exc))
        except ValueError as exc:        # an event body that is not JSON
            self._not_resumed(self._damaged_event(exc))
        self._open_source()
        buzzers = list(self.source.buzzers)
        if (self.demo and self.session.game is None and self.demo_game
                and self.resume_error is None):
            self.session.new_game(self.demo_game, [
                {"name": n, "buzzer": n if n in buzzers else None} for n in self.players])
        self._open_feedback()
        if self.league_options:
            from .league.publisher import publisher_from_options
            self.league = publisher_from_options(self.session, self.store, **self.league_options)
            self.league.start()
        self.pipeline = Pipeline(self.source, self.session, feedback=self.feedback,
                                 name="companion-pipeline")
        config = {"PIN": self.pin, "DEMO": bool(self.demo), "PLAYERS": self.players,
                  "SSE_MAX_CLIENTS": max(1, self.threads - 8)}
        if self.announce is not None:
            config["ANNOUNCE"] = self.announce
        if self.keeper is not None:
            config["TABLE_CA"] = self.keeper.ca.pem()
        config.update(self.config)
        self._open_camera()
        self.app = create_app(config, session=self.session, pipeline=self.pipeline,
                              buzzers=buzzers, camera=self.camera)
        self.services = self.app.extensions["companion"]
        self.pin = self.services.pin
        if self.league is not None:       # a convention's pairing, shown on the table's pages
            from .league.tableseat import TableSeat
            self.seat = TableSeat(self.session, self.league, self.services.broker.set_notice)
            self.seat.start()
        self.gate = Gate(self.limits or Limits())
        self._bind()
        return self

    def _open_store(self) -> None:
        """The lock, private files, the store, and a write it must be able to make."""
        from .record.paths import default_db_path
        from .record.store import Store

        path = self.db_path
        if path is None:
            path = default_db_path()
        if str(path) != ":memory:":
            path = Path(path)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of {path}: "
                                 f"{exc.strerror or exc}") from None
            self.lock = StoreLock(path).acquire()
            private_files(path)
        self.store = Store(path)
        check_writable(self.store)
        if not self.store.memory:
            private_files(self.store.path)

    def _open_tls(self) -> None:
        """The table's CA beside the store and a server certificate for this
        machine's names (made or renewed: :mod:`companion.tablecert`)."""
        from .tablecert import machine_names, tls_dir_for, TableCA
        from .tlsserve import CertKeeper
        from .web.join import lan_ip

        if self.store.memory:
            raise ValueError("--https keeps the table's certificate authority beside the "
                             "store: give a store file (--db)")
        ca = TableCA.at(tls_dir_for(self.store.path))
        self.keeper = CertKeeper(ca, lambda: machine_names(self.host, lan_ip()))

    def _not_resumed(self, why: str) -> None:
        """The last game cannot be replayed: the table starts with no game and
        the store stays exactly as it is (no demo game is made over it)."""
        gid = self.store.current_game()
        self.resume_error = why
        self.notes.append(
            f"the last game was not resumed: {why}. The store was left as it is. To carry "
            f"on: start a new game from the host console (game {gid} stays in the store, "
            f"untouched), or run the companion version that logged it; keep a copy of "
            f"{self.store.path} (with its -wal file) for recovery")

    def _damaged_event(self, exc: Exception) -> str:
        """Which event of the current game cannot be read, for a person."""
        gid = self.store.current_game()
        try:
            info = self.store.game_info(gid)
            rows = self.store.conn.execute(
                "SELECT id, body FROM events WHERE game_id = ? ORDER BY id", (gid,)).fetchall()
        except (StoreError, sqlite3.Error, ValueError):
            return f"game {gid} cannot be read ({exc})"
        import json

        for eid, body in rows:
            try:
                json.loads(body)
            except ValueError as err:
                return (f"game {gid} ({info['game']}) cannot be replayed: event {eid} is "
                        f"damaged (its body is not JSON: {err})")
        return f"game {gid} ({info['game']}) cannot be read ({exc})"

    def _open_source(self) -> None:
        from .buzzers.base import NoSource, choose_source, open_source

        kind = choose_source(self.source_kind)
        try:
            self.source = open_source(kind, self.players, self.pinmap, **self.source_options)
        except Exception as exc:
            if kind != "mock":          # real buzzers asked for and not there: say so
                raise
            # pretend buzzers that cannot open (a bad pin map): the phones'
            # virtual buzzers still make a table
            self.notes.append(f"mock buzzers unavailable ({exc}); virtual buzzers only")
            self.source = NoSource()
        self.source_kind = self.source.name
        if self.demo is None:
            self.demo = self.source_kind == "mock"

    def _open_camera(self) -> None:
        """The camera ``--camera`` names (none: none); CameraError (a
        ValueError) or CameraUnavailable (a RuntimeError) say what is wrong,
        and ``companion serve`` stops with that line."""
        from .camera.desk import open_desk

        store_path = None if self.store.memory else self.store.path
        self.camera = open_desk(self.session, self.camera_spec, store_path)

    def _open_feedback(self) -> None:
        """The buzzer LEDs and the cue, on the same pins' factory as the buttons."""
        factory = getattr(self.source, "pin_factory", None)
        if factory is None:
            return
        from .buzzers.feedback import Feedback

        try:
            self.feedback = Feedback.from_pinmap(list(self.source.buzzers), self.source.pinmap,
                                                 pin_factory=factory, clock=self.session.clock)
        except Exception as exc:  # a bad LED line must not stop the table
            self.notes.append(f"buzzer LEDs and cue unavailable ({exc})")

    def _bind(self) -> None:
        import waitress
        from waitress.server import BaseWSGIServer

        app = self.gate.wrap(self.app)
        options = dict(threads=self.threads, channel_request_lookahead=1,
                       asyncore_use_poll=True, ident="tabletop-companion",
                       clear_untrusted_proxy_headers=True,
                       **self.gate.limits.waitress_options(self.threads))
        self.server = waitress.create_server(app, map=self._socket_map, host=self.host,
                                             port=self.port, **options)
        for listener in list(self._socket_map.values()):   # every listening socket
            if isinstance(listener, BaseWSGIServer):
                self.gate.install(listener)
        self.port = int(self.server.effective_port)
        if self.keeper is not None:
            from .tlsserve import add_https_listener

            listener = add_https_listener(self.server, self._socket_map, app, self.gate,
                                          self.keeper, self.host, self.https_port, **options)
            self.https_port = int(listener.effective_port)
            self.keeper.watch(CERT_CHECK_S, then=self._set_urls)
        self._set_urls()

    def _set_urls(self) -> None:
        """The join URLs (plain HTTP), shown and put in the QR code, and the
        https ones a phone that trusts the table goes on to."""
        from .web.join import join_urls

        self.plain_urls = join_urls(self.host, self.port)
        self.secure_urls = ([] if self.keeper is None
                            else join_urls(self.host, self.https_port, "https"))
        # every phone joins on plain HTTP (a phone that does not trust the
        # table yet would meet a certificate warning); one that trusts it
        # goes on to https by itself (static/js/secure.js)
        self.urls = list(self.plain_urls)
        self.services.join_urls = list(self.urls)
        self.services.plain_urls = list(self.plain_urls)
        self.services.secure_urls = list(self.secure_urls)

    @property
    def https_url(self) -> str | None:
        """The address this machine reaches the HTTPS listener at (None: off)."""
        if self.keeper is None:
            return None
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"https://{host}:{self.https_port}"

    # -- running: run, start, stop and url are companion.serving.Served's ------

    thread_name = "companion-web"

    def _run_starts(self) -> None:
        self.pipeline.start()
        if self.camera is not None:
            self.camera.start()

    def _run_ends(self) -> None:
        if self.camera is not None:
            self.camera.source.stop()
        self.pipeline.stop()

    def _end_streams(self) -> None:
        if self.services is not None:
            self.services.broker.close()          # ends every live stream first

    def close(self) -> None:
        """Stop (if running) and release the server, buzzers and store."""
        self._release_server()
        self.server = None
        if self.keeper is not None:
            self.keeper.close()
        if self.pipeline is not None:
            self.pipeline.close()               # closes the feedback with it
            self.pipeline = None
        elif self.feedback is not None:
            self.feedback.close()
        self.feedback = None
        if self.camera is not None:
            self.camera.close()
            self.camera = None
        if self.source is not None:
            self.source.close()
            self.source = None
        if self.seat is not None:
            self.seat.close()
            self.seat = None
        if self.services is not None:
            self.services.close()
        if self.league is not None:
            self.league.close()
            self.league = None
        if self.store is not None:
            self.store.close()
            self.store = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    # -- start-up text ---------------------------------------------------------

    def banner(self) -> str:
        from .web.join import qr_text

        lines = ["Tabletop Companion is serving the table.", ""]
        lines.append("Phones on the same Wi-Fi open:")
        lines += [f"    {u}" for u in self.urls]
        lines.append("")
        lines.append(qr_text(self.urls[0]).rstrip("\n"))
        lines.append("")
        lines.append(f"Host console: {self.urls[0]}host    PIN: {self.pin}")
        if self.keeper is not None:
            from .tablecert import fingerprint

            lines.append(f"HTTPS: {self.secure_urls[0]} (a phone goes on to it by itself once "
                         f"it trusts the table at {self.plain_urls[0]}ca: the table's CA, "
                         f"SHA-256 {fingerprint(self.keeper.ca.cert)})")
        src = {"gpio": "GPIO buzzers", "mock": "mock buzzers (no Pi)",
               "none": "no hardware buzzers"}.get(self.source_kind, f"{self.source_kind} buzzers")
        status = self.source.status() if self.source is not None else None
        if status is not None and status.detail and self.source_kind not in ("mock", "none"):
            src += f" ({status.detail})"
        players = self.session.names if self.session.game is not None else self.players
        lines.append(f"Buzzers: {src}; players {', '.join(players)}")
        if self.camera is not None:
            lines.append(f"Camera: {self.camera.source.name} (the console's Camera panel: "
                         f"{len(self.camera.watcher.taught)} faces taught)")
        if self.demo:
            lines.append("Demo mode: virtual buzzers on the scoreboard (millisecond accuracy).")
        if self.session.game is not None:
            lines.append(f"Game: {self.session.game.title} (game {self.session.game_id})")
        lines.append(f"Store: {self.store.path}")
        if self.league is not None:
            lines.append(f"League: table {self.league.table_id} -> {self.league.broker}")
        lines += [f"Note: {n}" for n in self.notes]
        lines.append("Ctrl-C stops.")
        return "\n".join(lines)


def serve(table: TableConfig | None = None, *, print_fn: Callable[[str], None] = print,
          config: dict | None = None, **fields) -> int:
    """Run the table until SIGINT/SIGTERM; 0 on a clean stop, 2 if it
    cannot start (port in use, no such buzzers, unusable store, a store
    another companion serves, a PIN under 6 characters without
    ``short_pin``).

    ``table``: the :class:`~companion.tableconfig.TableConfig` (keywords
    named like its fields override it); ``pin`` None: ``pin_file``,
    ``COMPANION_PIN``, ``COMPANION_PIN_FILE`` or a random one (printed).
    Files it creates are private to the user (umask 077)."""
    old_umask = os.umask(0o077)
    try:
        t = TableServer(table, config=config, announce=print_fn, **fields)
        return serve_until_signalled(t, "companion serve", t.host, t.port,
                                     (StoreError, ValueError, ImportError, RuntimeError),
                                     print_fn, t.banner)
    finally:
        os.umask(old_umask)


__all__ = ["TableServer", "TableConfig", "serve", "resolve_pin"]
