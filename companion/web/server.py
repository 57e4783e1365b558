"""``companion serve``: the whole table in one process.

One :class:`Table` holds the store, the :class:`~companion.session.TableSession`,
the buzzer source (GPIO on a Pi, gpiozero mock pins elsewhere), a ticker
thread and the web app on waitress (a production WSGI server; one worker
thread per open live page, so ``threads`` must exceed the phones at the
table: 64 covers about 50 phones and the host).

The buzzer source's callback only queues the raw edge (like an interrupt
handler); the ticker thread feeds queued edges to the session
(:meth:`~companion.session.TableSession.feed_edge`) and calls
:meth:`~companion.session.TableSession.tick` every few milliseconds, so
bursts settle, countdowns reach GO and races are decided on time.

>>> rc = serve(port=8080)        # doctest: +SKIP  (blocks until Ctrl-C / SIGTERM)

``python -m companion.web.server --help`` runs it without the CLI.
"""

from __future__ import annotations

import argparse
import logging
import queue
import signal
import sys
import threading
from typing import Callable

from ..buzzers.runner import deadline_loop
from ..referee import earliest
from .join import join_urls, qr_text

log = logging.getLogger(__name__)

#: Player names (and mock buzzer ids) when none are given.
DEMO_PLAYERS = ["Ana", "Bo", "Cy", "Dee"]
#: The game a demo table starts with when the store has none running.
DEMO_GAME = "chope"
TICK_S = 0.005


class Ticker:
    """The thread between the buzzers and the session: feed queued edges,
    tick the session every ``interval_s`` (sooner when an edge arrives)."""

    def __init__(self, session, interval_s: float = TICK_S):
        self.session = session
        self.interval_s = interval_s
        self.edges: queue.SimpleQueue = queue.SimpleQueue()
        self.errors = 0
        self.pollables: list = []       # things with poll() to run every step (LEDs)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def put(self, edge) -> None:
        """The buzzer source's sink (any thread): queue and wake, nothing else."""
        self.edges.put(edge)
        self._wake.set()

    def step(self) -> None:
        while True:
            try:
                edge = self.edges.get_nowait()
            except queue.Empty:
                break
            self.session.feed_edge(edge)
        self.session.tick()
        for p in self.pollables:
            p.poll()

    def next_deadline(self) -> int | None:
        return earliest([self.session.next_deadline(),
                         *(p.next_deadline() for p in self.pollables)])

    def _failed(self, exc: Exception) -> None:
        self.errors += 1
        log.exception("ticker step failed")

    def _run(self) -> None:
        # wake at the next deadline (a verdict, GO, an LED), and at least
        # every interval_s for anything without one
        deadline_loop(self.step, self.next_deadline, self.session.clock, self._wake,
                      self._stop, idle_s=self.interval_s, min_sleep_s=self.interval_s,
                      on_error=self._failed)

    def start(self) -> "Ticker":
        self._thread = threading.Thread(target=self._run, name="companion-ticker", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(2)
            self._thread = None


class BoxFeedback:
    """The buzzer box follows the table: each buzzer's LED shows the verdicts
    of the session's referee (whichever game is running), and the cue counts
    down every announced start so that GO sounds at the race's arm time.

    ``feedback`` drives LEDs keyed by buzzer id; the session's verdicts name
    players, so the map is rebuilt whenever the game (and its referee)
    changes. Runs on the ticker thread and on whichever thread publishes an
    update, so every call into ``feedback`` holds one lock.
    """

    def __init__(self, session, feedback):
        self.session = session
        self.feedback = feedback
        self.leds_by_buzzer = dict(feedback.leds)
        self._lock = threading.Lock()
        self._go: int | None = None
        self._referee = None
        self.sync()
        self._unsubscribe = session.subscribe(self.on_update)

    def sync(self) -> None:
        """Follow the session's current referee (a new game makes a new one)."""
        ref = self.session.referee
        with self._lock:
            if ref is self._referee:
                return
            if self._referee is not None and self._on_referee in self._referee.listeners:
                self._referee.listeners.remove(self._on_referee)
            leds = {}
            for p in self.session.players or []:
                buzzer = p.get("buzzer") or p["name"]
                if buzzer in self.leds_by_buzzer:
                    leds[p["name"]] = self.leds_by_buzzer[buzzer]
            self.feedback.leds = leds
            self._referee = ref
            if ref is not None:
                ref.listeners.append(self._on_referee)

    def _on_referee(self, kind: str, payload) -> None:
        with self._lock:
            self.feedback(kind, payload)

    def on_update(self, update: dict) -> None:
        kind, data = update.get("type"), update.get("data") or {}
        if kind == "state":
            self.sync()
            race = data.get("race")
        elif kind == "race":
            race = data.get("race", data) if isinstance(data, dict) else None
        else:
            return
        if (isinstance(race, dict) and race.get("announced") and race.get("phase") == "countdown"
                and race.get("go_ns") is not None and race["go_ns"] != self._go):
            self._go = race["go_ns"]
            with self._lock:
                self.feedback.countdown(race["go_ns"])

    def poll(self, now_ns: int | None = None) -> None:
        with self._lock:
            self.feedback.poll(self.feedback.clock() if now_ns is None else now_ns)

    def next_deadline(self) -> int | None:
        with self._lock:
            return self.feedback.next_deadline()

    def close(self) -> None:
        self._unsubscribe()
        with self._lock:
            if self._referee is not None and self._on_referee in self._referee.listeners:
                self._referee.listeners.remove(self._on_referee)
            self._referee = None
            self.feedback.close()


class Table:
    """Everything ``companion serve`` runs, opened and closed together.

    ``open()`` builds and binds (port 0 picks a free port); ``run()`` serves
    until :meth:`stop` (from a signal handler or another thread);
    ``start()`` runs it in a background thread instead (tests);
    ``close()`` releases everything.
    """

    def __init__(self, host: str = "0.0.0.0", port: int = 8080, db_path=None,
                 pin: str | None = None, players: list[str] | None = None,
                 source: str = "mock", demo: bool | None = True, pinmap=None,
                 threads: int = 64, config: dict | None = None, demo_game: str | None = DEMO_GAME,
                 session_settings: dict | None = None):
        self.host, self.port = host, port
        self.db_path, self.pin = db_path, pin
        self.players = list(players or DEMO_PLAYERS)[:6]
        self.source_kind, self.demo, self.pinmap = source, demo, pinmap
        self.threads = threads
        self.config = dict(config or {})
        self.demo_game = demo_game
        self.session_settings = session_settings
        self.store = self.session = self.source = self.ticker = self.app = None
        self.box = None
        self.server = None
        self.urls: list[str] = []
        self.notes: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- building ---------------------------------------------------------
    def open(self) -> "Table":
        from ..session import ResumeError, TableSession
        from ..store import Store
        from . import create_app

        self.store = Store(self.db_path)
        self.session = TableSession(self.store, settings=self.session_settings)
        try:
            self.session.resume()
        except ResumeError as exc:
            self.notes.append(f"could not resume the last game ({exc}); start a new one")
        self._open_source()
        if self.demo and self.session.game is None and self.demo_game:
            self.session.new_game(self.demo_game, [
                {"name": n, "buzzer": n if self.source is not None else None}
                for n in self.players])
        self.ticker = Ticker(self.session)
        self._open_feedback()
        config = {
            "SESSION": self.session, "DB_PATH": str(self.store.path), "PIN": self.pin,
            "DEMO": bool(self.demo), "PLAYERS": self.players,
            "BUZZERS": list(self.source.players) if self.source is not None else [],
            "RUNNER": self.ticker,
            "SSE_MAX_CLIENTS": max(1, self.threads - 8),
        }
        config.update(self.config)
        self.app = create_app(config)
        self.services = self.app.extensions["companion"]
        self.pin = self.services.pin
        self._bind()
        return self

    def _open_source(self) -> None:
        from ..buzzers.runner import on_a_pi, open_source

        kind = self.source_kind or "auto"
        if kind == "auto":
            kind = "gpio" if on_a_pi() else "mock"
        self.source_kind = kind
        if self.demo is None:
            self.demo = kind == "mock"
        if kind == "none":
            return
        try:
            self.source = open_source(kind, self.players, self.pinmap)
        except Exception as exc:
            if kind == "gpio":
                raise
            self.notes.append(f"mock buzzers unavailable ({exc}); virtual buzzers only")
            self.source = None

    def _open_feedback(self) -> None:
        """The buzzer LEDs and the cue, on the same pins' factory as the buttons."""
        self.box = None
        factory = getattr(self.source, "pin_factory", None)
        if self.source is None or factory is None:
            return
        from ..buzzers.feedback import Feedback

        try:
            fb = Feedback.from_pinmap(list(self.source.players), self.source.pinmap,
                                      pin_factory=factory)
        except Exception as exc:  # a bad LED line must not stop the table
            self.notes.append(f"buzzer LEDs and cue unavailable ({exc})")
            return
        self.box = BoxFeedback(self.session, fb)
        self.ticker.pollables.append(self.box)

    def _bind(self) -> None:
        import waitress

        self.server = waitress.create_server(
            self.app, host=self.host, port=self.port, threads=self.threads,
            connection_limit=max(100, self.threads * 4), channel_request_lookahead=1,
            asyncore_use_poll=True, ident="tabletop-companion", clear_untrusted_proxy_headers=True)
        self.port = self.server.effective_port
        self.urls = join_urls(self.host, self.port)
        self.services.join_urls = list(self.urls)

    # -- running ----------------------------------------------------------
    def _start_workers(self) -> None:
        self.ticker.start()
        if self.source is not None:
            self.source.start(self.ticker.put)

    def run(self) -> None:
        """Serve until :meth:`stop`."""
        from waitress import wasyncore

        self._start_workers()
        smap = self.server._map
        try:
            while not self._stop.is_set():
                wasyncore.loop(timeout=0.5, map=smap, use_poll=True, count=1)
        finally:
            self._shutdown_server()

    def start(self) -> "Table":
        """Serve in a background thread (tests); returns once listening."""
        self._thread = threading.Thread(target=self.run, name="companion-web", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask :meth:`run` to return (safe from any thread; from a signal
        handler only the flag is set: the loop wakes within half a second)."""
        self._stop.set()
        if threading.current_thread() is not threading.main_thread() and self.server is not None:
            try:
                self.server.pull_trigger()
            except OSError:
                pass

    def _shutdown_server(self) -> None:
        from waitress import wasyncore

        self.app.extensions["companion"].broker.close()   # ends every live stream
        if self.source is not None:
            self.source.stop()
        self.ticker.stop()
        self.server.task_dispatcher.shutdown(timeout=3)
        wasyncore.close_all(self.server._map)
        self.server = None

    def close(self) -> None:
        """Stop (if running) and release the buzzers and the store."""
        self.stop()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self.server is not None:        # opened but never run: release the socket
            from waitress import wasyncore

            self.server.task_dispatcher.shutdown(timeout=1)
            wasyncore.close_all(self.server._map)
            self.server = None
        if self.ticker is not None:
            self.ticker.stop()
        if getattr(self, "box", None) is not None:
            self.box.close()
            self.box = None
        if self.source is not None:
            self.source.close()
            self.source = None
        if self.app is not None:
            self.app.extensions["companion"].broker.close()
        if self.store is not None:
            self.store.close()
            self.store = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"http://{host}:{self.port}"

    # -- start-up text ----------------------------------------------------
    def banner(self) -> str:
        lines = ["Tabletop Companion is serving the table.", ""]
        lines.append("Phones on the same Wi-Fi open:")
        lines += [f"    {u}" for u in self.urls]
        lines.append("")
        lines.append(qr_text(self.urls[0]).rstrip("\n"))
        lines.append("")
        lines.append(f"Host console: {self.urls[0]}host    PIN: {self.pin}")
        src = {"gpio": "GPIO buzzers", "mock": "mock buzzers (no Pi)",
               "none": "no hardware buzzers"}.get(self.source_kind, self.source_kind)
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
          players: list[str] | None = None, source: str = "mock", demo: bool | None = True,
          pinmap=None, threads: int = 64, print_fn: Callable[[str], None] = print,
          config: dict | None = None, settings: dict | None = None) -> int:
    """Run the table until SIGINT/SIGTERM; 0 on a clean stop, 2 if it
    cannot start (port in use, no GPIO, unusable store).

    ``source``: ``gpio``, ``mock`` or ``auto``; ``demo`` None: on with mock
    buzzers. ``pin`` None: ``COMPANION_PIN`` or a random one (printed).
    ``settings``: the table session's race settings (tie window, lockout,
    debounce...; :data:`companion.session.DEFAULT_SETTINGS`)."""
    from ..store import StoreError

    table = Table(host, port, db_path, pin, players, source, demo, pinmap, threads, config,
                  session_settings=settings)
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
        table.stop()

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
    p = argparse.ArgumentParser(prog="python -m companion.web.server",
                                description="Serve the table (same as `companion serve`).")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--db", default=None)
    p.add_argument("--pin", default=None)
    p.add_argument("--players", default=None, help="comma-separated")
    p.add_argument("--source", choices=("auto", "gpio", "mock", "none"), default="auto")
    p.add_argument("--demo", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--pinmap", default=None)
    p.add_argument("--threads", type=int, default=64)
    args = p.parse_args(argv)
    players = [s.strip() for s in args.players.split(",") if s.strip()] if args.players else None

    def out(text: str) -> None:
        print(text, flush=True)

    return serve(args.host, args.port, args.db, args.pin, players, args.source, args.demo,
                 args.pinmap, args.threads, print_fn=out)


if __name__ == "__main__":
    sys.exit(main())
