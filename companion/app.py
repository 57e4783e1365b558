"""Application assembly: the one place the whole table is built.

``companion serve`` is a :class:`Table`: it builds, in order,

1. the store (:class:`~companion.store.Store`, the durable SQLite log);
2. the :class:`~companion.session.TableSession` on it (resuming the last game);
3. the buzzer source, chosen in one place
   (:func:`~companion.buzzers.base.open_source`: ``--source``, else
   ``COMPANION_SOURCE``, else auto-detection);
4. the buzzer box's lights and cue (:class:`~companion.buzzers.feedback.Feedback`);
5. the :class:`~companion.buzzers.pipeline.Pipeline` from the source to the
   session, with the box attached (the table's clock thread);
6. the web app (:func:`companion.web.create_app`, which only *receives* the
   session, the pipeline and the buzzer ids) on waitress, a production WSGI
   server with one worker thread per open live page, so ``threads`` must
   exceed the phones at the table: 64 covers about 50 phones and the host.

Everything is closed together, in reverse order. waitress is driven through
its public API only: :func:`waitress.create_server` with a socket map this
module owns, ``server.run()`` in the serving thread, and a stop that closes
every dispatcher of that map from the serving thread itself (a thunk on the
server's trigger), after which ``run()`` returns.

Serving blocks until Ctrl-C or SIGTERM:

>>> rc = serve(port=8080)        # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Callable

log = logging.getLogger(__name__)

#: Player names (and mock buzzer ids) when none are given.
DEMO_PLAYERS = ["Ana", "Bo", "Cy", "Dee"]
#: The game a demo table starts with when the store has none running.
DEMO_GAME = "chope"
#: Most buzzers a pin map has slots for.
MAX_BUZZERS = 6


class Table:
    """Everything ``companion serve`` runs, opened and closed together.

    :meth:`open` builds and binds (port 0 picks a free port); :meth:`run`
    serves until :meth:`stop` (from a signal handler or another thread);
    :meth:`start` runs it in a background thread instead (tests);
    :meth:`close` releases everything.

    ``source``: a registered source name, or None / ``"auto"`` (see
    :func:`~companion.buzzers.base.choose_source`); ``source_options`` go to
    its constructor (``port`` for a Pico...). ``demo`` None: on with mock
    buzzers. ``session_settings``: the table's race settings.
    """

    def __init__(self, host: str = "0.0.0.0", port: int = 8080, db_path=None,
                 pin: str | None = None, players: list[str] | None = None,
                 source: str | None = None, demo: bool | None = True, pinmap=None,
                 threads: int = 64, config: dict | None = None, demo_game: str | None = DEMO_GAME,
                 session_settings: dict | None = None, source_options: dict | None = None):
        self.host, self.port = host, port
        self.db_path, self.pin = db_path, pin
        self.players = list(players or DEMO_PLAYERS)[:MAX_BUZZERS]
        self.source_kind, self.demo, self.pinmap = source, demo, pinmap
        self.source_options = dict(source_options or {})
        self.threads = threads
        self.config = dict(config or {})
        self.demo_game = demo_game
        self.session_settings = session_settings
        self.store = self.session = self.source = self.feedback = None
        self.pipeline = self.app = self.services = self.server = None
        self.urls: list[str] = []
        self.notes: list[str] = []
        self._socket_map: dict = {}
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- building -------------------------------------------------------------

    def open(self) -> "Table":
        """Build the table and bind the port (nothing runs yet)."""
        from .buzzers.pipeline import Pipeline
        from .session import ResumeError, TableSession
        from .store import Store
        from .web import create_app

        self.store = Store(self.db_path)
        self.session = TableSession(self.store, settings=self.session_settings)
        try:
            self.session.resume()
        except ResumeError as exc:
            self.notes.append(f"could not resume the last game ({exc}); start a new one")
        self._open_source()
        buzzers = list(self.source.buzzers)
        if self.demo and self.session.game is None and self.demo_game:
            self.session.new_game(self.demo_game, [
                {"name": n, "buzzer": n if n in buzzers else None} for n in self.players])
        self._open_feedback()
        self.pipeline = Pipeline(self.source, self.session, feedback=self.feedback,
                                 name="companion-pipeline")
        config = {"PIN": self.pin, "DEMO": bool(self.demo), "PLAYERS": self.players,
                  "SSE_MAX_CLIENTS": max(1, self.threads - 8)}
        config.update(self.config)
        self.app = create_app(config, session=self.session, pipeline=self.pipeline,
                              buzzers=buzzers)
        self.services = self.app.extensions["companion"]
        self.pin = self.services.pin
        self._bind()
        return self

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

        from .web.join import join_urls

        self.server = waitress.create_server(
            self.app, map=self._socket_map, host=self.host, port=self.port,
            threads=self.threads, connection_limit=max(100, self.threads * 4),
            channel_request_lookahead=1, asyncore_use_poll=True, ident="tabletop-companion",
            clear_untrusted_proxy_headers=True)
        self.port = int(self.server.effective_port)
        self.urls = join_urls(self.host, self.port)
        self.services.join_urls = list(self.urls)

    # -- running --------------------------------------------------------------

    def run(self) -> None:
        """Serve until :meth:`stop`."""
        self.pipeline.start()
        try:
            if not self._stopping.is_set():
                self.server.run()       # returns once every dispatcher of the map is closed
        finally:
            self.pipeline.stop()
            self.server.task_dispatcher.shutdown(timeout=3)

    def start(self) -> "Table":
        """Serve in a background thread (tests); returns once listening."""
        self._thread = threading.Thread(target=self.run, name="companion-web", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask :meth:`run` to return; safe from any thread (not from a signal
        handler: :func:`serve`'s handler calls it from a new thread)."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self.services is not None:
            self.services.broker.close()          # ends every live stream first
        server = self.server
        if server is not None:
            try:
                server.trigger.pull_trigger(self._close_dispatchers)
            except OSError:                      # already closed
                pass

    def _close_dispatchers(self) -> None:
        """Close the listener, the trigger and every connection (run in the
        serving thread, or when nothing serves): ``server.run()`` returns
        when its map is empty."""
        for dispatcher in list(self._socket_map.values()):
            try:
                dispatcher.close()
            except OSError:
                pass
        self._socket_map.clear()

    def close(self) -> None:
        """Stop (if running) and release the server, buzzers and store."""
        self.stop()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self.server is not None:
            if self._socket_map:                # opened but never run: release the socket
                self._close_dispatchers()
                self.server.task_dispatcher.shutdown(timeout=1)
            self.server = None
        if self.pipeline is not None:
            self.pipeline.close()               # closes the feedback with it
            self.pipeline = None
        elif self.feedback is not None:
            self.feedback.close()
        self.feedback = None
        if self.source is not None:
            self.source.close()
            self.source = None
        if self.services is not None:
            self.services.close()
        if self.store is not None:
            self.store.close()
            self.store = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"http://{host}:{self.port}"

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
        src = {"gpio": "GPIO buzzers", "mock": "mock buzzers (no Pi)",
               "none": "no hardware buzzers"}.get(self.source_kind, f"{self.source_kind} buzzers")
        status = self.source.status() if self.source is not None else None
        if status is not None and status.detail and self.source_kind not in ("mock", "none"):
            src += f" ({status.detail})"
        lines.append(f"Buzzers: {src}; players {', '.join(self.players)}")
        if self.demo:
            lines.append("Demo mode: virtual buzzers on the scoreboard (millisecond accuracy).")
        if self.session.game is not None:
            lines.append(f"Game: {self.session.game.title} (game {self.session.game_id})")
        lines.append(f"Store: {self.store.path}")
        lines += [f"Note: {n}" for n in self.notes]
        lines.append("Ctrl-C stops.")
        return "\n".join(lines)


def serve(host: str = "0.0.0.0", port: int = 8080, db_path=None, pin: str | None = None,
          players: list[str] | None = None, source: str | None = None, demo: bool | None = True,
          pinmap=None, threads: int = 64, print_fn: Callable[[str], None] = print,
          config: dict | None = None, settings: dict | None = None,
          source_options: dict | None = None) -> int:
    """Run the table until SIGINT/SIGTERM; 0 on a clean stop, 2 if it
    cannot start (port in use, no such buzzers, unusable store).

    ``source``: a registered source name or None/``auto``; ``demo`` None:
    on with mock buzzers. ``pin`` None: ``COMPANION_PIN`` or a random one
    (printed). ``settings``: the table session's race settings (tie window,
    lockout, debounce...; :data:`companion.session.DEFAULT_SETTINGS`)."""
    from .store import StoreError

    table = Table(host, port, db_path, pin, players, source, demo, pinmap, threads, config,
                  session_settings=settings, source_options=source_options)
    try:
        table.open()
    except OSError as exc:
        print_fn(f"companion serve: cannot listen on {host}:{port}: {exc.strerror or exc}")
        table.close()
        return 2
    except (StoreError, ValueError, ImportError, RuntimeError) as exc:
        print_fn(f"companion serve: {exc}")
        table.close()
        return 2
    print_fn(table.banner())

    def on_signal(signum, frame):
        # the handler runs on the serving (main) thread, perhaps inside
        # waitress's trigger lock: stop from another thread
        threading.Thread(target=table.stop, name="companion-stop", daemon=True).start()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        table.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        table.close()
    print_fn("companion serve: stopped.")
    return 0


def main(argv=None) -> int:
    """``python -m companion.web.server``: serve without the CLI."""
    from .buzzers.base import source_names

    p = argparse.ArgumentParser(prog="python -m companion.web.server",
                                description="Serve the table (same as `companion serve`).")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--db", default=None)
    p.add_argument("--pin", default=None)
    p.add_argument("--players", default=None, help="comma-separated")
    p.add_argument("--source", default=None, metavar="NAME",
                   help=f"buzzer source: {', '.join(['auto', *source_names()])} "
                        f"(default: COMPANION_SOURCE, else auto)")
    p.add_argument("--demo", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--pinmap", default=None)
    p.add_argument("--threads", type=int, default=64)
    args = p.parse_args(argv)
    players = [s.strip() for s in args.players.split(",") if s.strip()] if args.players else None

    def out(text: str) -> None:
        print(text, flush=True)

    return serve(args.host, args.port, args.db, args.pin, players, args.source, args.demo,
                 args.pinmap, args.threads, print_fn=out)


__all__ = ["Table", "serve", "main", "DEMO_PLAYERS", "DEMO_GAME"]
