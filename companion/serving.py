"""Serving a WSGI app on waitress until told to stop: the table and the league alike.

The table (:class:`companion.app.TableServer`) and the league screen
(:class:`companion.league.app.LeagueServer`) each build their own services,
then serve them the same way: one waitress server on its own socket map,
run in this thread (``companion serve``) or a background one (tests), stopped
from any thread, and run from a terminal until SIGINT or SIGTERM.
:class:`Served` is that shared part; :func:`serve_until_signalled` is the
command-line loop around it.

Stopping goes through waitress's public trigger, in this order (see
:meth:`Served.stop`): the live pages are ended (:meth:`Served._end_streams`,
else a worker thread would sit in a stream until its heartbeat); the
listener is closed; the requests still running finish; then every
connection is closed and the trigger taken out of the map, so
``server.run()`` returns. The trigger itself is closed only after the worker
threads are shut down: a worker ends each request by pulling the trigger,
and a pull on a closed trigger is the "Bad file descriptor" traceback a
stop with pages open used to print (or, worse, a write to whatever file
took the descriptor's number).
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Callable

from waitress import wasyncore
from waitress.channel import HTTPChannel


class Served:
    """A waitress server (``self.server``, made by the subclass with
    ``map=self._socket_map``) run, stopped and released in one way.

    A subclass calls :meth:`_init_serving` in ``__init__`` and may override
    the hooks: :meth:`_run_starts` / :meth:`_run_ends` (around serving: the
    table's buzzer pipeline), :meth:`_end_streams` (on stop: close the live
    streams), and :meth:`_close_dispatchers` (on stop, in the serving thread,
    once the running requests have finished)."""

    #: the background thread's name (:meth:`start`)
    thread_name = "waitress"
    #: on stop, how long the requests still running may take to finish
    drain_s = 3.0

    host: str
    port: int

    def _init_serving(self) -> None:
        self.server = None
        self._socket_map: dict = {}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- hooks ---------------------------------------------------------------
    def _run_starts(self) -> None:
        """Just before serving (in the serving thread)."""

    def _run_ends(self) -> None:
        """Serving ended, before waitress's workers are shut down."""

    def _end_streams(self) -> None:
        """On stop, before the connections close: end every live stream."""

    # -- running -------------------------------------------------------------
    def run(self) -> None:
        """Serve until :meth:`stop`."""
        self._run_starts()
        try:
            if not self._stopping.is_set():
                self.server.run()       # returns once every dispatcher of the map is closed
        finally:
            self._run_ends()
            self.server.task_dispatcher.shutdown(timeout=3)
            self._close_trigger()

    def start(self):
        """Serve in a background thread (tests); returns once listening."""
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask :meth:`run` to return; safe from any thread (not from a signal
        handler: :func:`serve_until_signalled`'s handler calls it from a new
        thread). Ends the live streams, stops accepting, lets the running
        requests finish (at most :attr:`drain_s`), then closes the
        connections."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._end_streams()
        server = self.server
        if server is None:
            return
        if not self._pull(self._close_listeners):
            return
        self._wait_until_idle(server.task_dispatcher, self.drain_s)
        self._pull(self._close_dispatchers)

    def _pull(self, thunk: Callable[[], None]) -> bool:
        """Run ``thunk`` in the serving thread; False if the trigger is closed."""
        try:
            self.server.trigger.pull_trigger(thunk)
        except (OSError, AttributeError):       # closed, or the server already released
            return False
        return True

    @staticmethod
    def _wait_until_idle(dispatcher, timeout_s: float) -> None:
        """Wait until no worker thread runs a request and none is queued."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with dispatcher.lock:
                if dispatcher.active_count <= 0 and not dispatcher.queue:
                    return
            time.sleep(0.01)

    def _close_listeners(self) -> None:
        """Close the listening sockets: no new connections (serving thread)."""
        trigger = getattr(self.server, "trigger", None)
        for dispatcher in list(self._socket_map.values()):
            if dispatcher is not trigger and not isinstance(dispatcher, HTTPChannel):
                self._close_listener(dispatcher)

    @staticmethod
    def _close_listener(listener) -> None:
        """Close a listening socket but not the trigger (waitress's own
        ``close`` of its server closes the trigger with it)."""
        try:
            if isinstance(listener, wasyncore.dispatcher):
                wasyncore.dispatcher.close(listener)
            else:
                listener.close()
        except OSError:
            pass

    def _close_dispatchers(self) -> None:
        """Close the listener and every connection, and take the trigger out
        of the map without closing it (run in the serving thread, or when
        nothing serves): ``server.run()`` returns when its map is empty, and
        :meth:`run` closes the trigger once the workers are gone."""
        trigger = getattr(self.server, "trigger", None)
        for dispatcher in list(self._socket_map.values()):
            if dispatcher is trigger:
                continue
            if not isinstance(dispatcher, HTTPChannel):
                self._close_listener(dispatcher)
                continue
            try:
                dispatcher.handle_close()        # also wakes a worker waiting to write
            except OSError:
                pass
        self._socket_map.clear()

    def _close_trigger(self) -> None:
        """Close the trigger once no worker thread is left to pull it (one
        still stuck in a request keeps it open: a pull must never hit a
        closed, perhaps reused, descriptor)."""
        server = self.server
        if server is not None and not server.task_dispatcher.threads:
            server.trigger.close()

    def _release_server(self) -> None:
        """Stop, wait for the serving thread, and release a socket that was
        opened but never served. The caller then closes its own services."""
        self.stop()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self.server is not None and self._socket_map:   # opened but never run
            self._close_dispatchers()
            self.server.task_dispatcher.shutdown(timeout=1)
            self._close_trigger()

    @property
    def url(self) -> str:
        """The address this machine reaches the server at."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"http://{host}:{self.port}"


def serve_until_signalled(served, prog: str, host: str, port: int,
                          errors: tuple[type[BaseException], ...],
                          print_fn: Callable[[str], None], banner: Callable[[], str]) -> int:
    """Open ``served``, print its ``banner()``, serve until SIGINT/SIGTERM,
    then close it. 0 on a clean stop; 2 if it cannot start: the port cannot
    be bound, or :meth:`open` raised one of ``errors`` (said on one line
    after ``prog``, e.g. ``companion serve: ...``)."""
    try:
        served.open()
    except OSError as exc:
        print_fn(f"{prog}: cannot listen on {host}:{port}: {exc.strerror or exc}")
        served.close()
        return 2
    except errors as exc:
        print_fn(f"{prog}: {exc}")
        served.close()
        return 2
    print_fn(banner())

    def on_signal(signum, frame):
        # the handler runs on the serving (main) thread, perhaps inside
        # waitress's trigger lock: stop from another thread
        threading.Thread(target=served.stop, name=f"{served.thread_name}-stop",
                         daemon=True).start()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        served.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        served.close()
    print_fn(f"{prog}: stopped.")
    return 0


__all__ = ["Served", "serve_until_signalled"]
