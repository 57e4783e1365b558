"""``companion league``: the league screen.

A small Flask app (the table page's stack: Flask on waitress, no CDN) that
subscribes to every table through the broker and keeps its own SQLite store
of what it received (:class:`~companion.league.store.LeagueStore`):

* :class:`~companion.league.subscriber.LeagueSubscriber` (its own module,
  re-exported here): one MQTT v5 client with a *persistent session*
  (``clean_start=False``, a long session expiry), subscribed to
  ``<prefix>/#`` with QoS 1. The broker queues the tables' events while the
  league is away and hands them over when it is back. Each message is
  written to the store before paho acknowledges it (the acknowledgement goes
  out when the callback returns), so a message the broker considers
  delivered is on the league's disk. The table id is taken from the topic
  (which the broker's ACL ties to the table's user), never from the payload.
* :class:`Hub`: Server-Sent Events to the open league pages: a compact
  notice per stored message (``event``, ``state``, ``result``, ``status``),
  a ``heartbeat`` every 15 s; a page that cannot keep up gets ``resync``.
* :func:`create_app`: the page (``/``), the whole view as JSON
  (``/api/league``), the live stream (``/api/live``) and the exports
  (``/export.csv``, ``/export.json``). Every route is a GET: the league
  page is read-only.
* :class:`LeagueServer` / :func:`serve`: all of it on waitress, closed together.

>>> # python -m companion.league serve --broker mqtt://127.0.0.1:1883 --db league.db \\
>>> #     --user league --password-file broker/secrets/league.password
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from typing import Callable, Iterator

from flask import Flask, Response, jsonify, render_template

from ..serving import Served, serve_until_signalled
from .store import LeagueStore
from .subscriber import SESSION_EXPIRY_S, LeagueSubscriber
from .topics import DEFAULT_PREFIX, BrokerURL, Credentials, LeagueError

log = logging.getLogger(__name__)

class Hub:
    """Fan-out of the league's notices to the open pages (bounded queues)."""

    def __init__(self, queue_size: int = 256, max_clients: int = 100, heartbeat_s: float = 15.0):
        self.queue_size, self.max_clients, self.heartbeat_s = queue_size, max_clients, heartbeat_s
        self._clients: set[queue.Queue] = set()
        self._lock = threading.Lock()
        self._closed = False

    def publish(self, kind: str, data: dict) -> None:
        frame = (f"event: {kind}\ndata: "
                 f"{json.dumps({**data, 'pub_ns': time.monotonic_ns()}, separators=(',', ':'))}"
                 "\n\n").encode()
        with self._lock:
            clients = list(self._clients)
        for q in clients:
            try:
                q.put_nowait(frame)
            except queue.Full:          # too slow: it reloads everything instead
                try:
                    while True:
                        q.get_nowait()
                except queue.Empty:
                    pass
                q.put_nowait(b"event: resync\ndata: {}\n\n")

    def connect(self) -> queue.Queue | None:
        with self._lock:
            if self._closed or len(self._clients) >= self.max_clients:
                return None
            q: queue.Queue = queue.Queue(self.queue_size)
            self._clients.add(q)
            return q

    def stream(self, q: queue.Queue) -> Iterator[bytes]:
        try:
            yield b"retry: 2000\n\nevent: hello\ndata: {}\n\n"
            while True:
                try:
                    item = q.get(timeout=self.heartbeat_s)
                except queue.Empty:
                    yield b"event: heartbeat\ndata: {}\n\n"
                    continue
                if item is None:
                    return
                yield item
        finally:
            with self._lock:
                self._clients.discard(q)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._clients)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            clients = list(self._clients)
        for q in clients:
            try:
                q.put_nowait(None)
            except queue.Full:
                try:
                    q.get_nowait()
                    q.put_nowait(None)
                except (queue.Empty, queue.Full):
                    pass


def create_app(config: dict | None = None, store: LeagueStore | None = None,
               hub: Hub | None = None, subscriber: LeagueSubscriber | None = None) -> Flask:
    """The league page's Flask app (read-only: every route is a GET)."""
    app = Flask(__name__, static_folder="static", template_folder="templates")
    app.config.update({"TITLE": "League", **(config or {})})
    store = store or LeagueStore(app.config.get("DB", ":memory:"))
    hub = hub or Hub()
    app.extensions["league"] = {"store": store, "hub": hub, "subscriber": subscriber}

    @app.after_request
    def headers(resp: Response) -> Response:
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        resp.headers.setdefault("Content-Security-Policy",
                                "default-src 'self'; style-src 'self'; script-src 'self'")
        return resp

    @app.get("/")
    def page():
        return render_template("league/index.html", title=app.config["TITLE"])

    @app.get("/api/league")
    def api_league():
        out = store.league()
        out["broker"] = subscriber.status() if subscriber is not None else None
        return jsonify(out)

    @app.get("/api/live")
    def api_live():
        q = hub.connect()
        if q is None:
            return jsonify({"error": "too many live pages; reload later"}), 503
        return Response(hub.stream(q), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/export.csv")
    def export_csv():
        return Response(store.export_csv(), mimetype="text/csv", headers={
            "Content-Disposition": "attachment; filename=league.csv"})

    @app.get("/export.json")
    def export_json():
        return Response(json.dumps(store.export_json(), indent=1), mimetype="application/json",
                        headers={"Content-Disposition": "attachment; filename=league.json"})

    @app.errorhandler(404)
    @app.errorhandler(405)
    def not_here(exc):
        return jsonify({"error": f"{exc.name}: the league page is read-only"
                        if exc.code == 405 else exc.name}), exc.code

    return app


class LeagueServer(Served):
    """The league: store, subscriber, hub, app on waitress, opened and closed together.

    :meth:`open` binds (port 0: a free one); :meth:`start` serves in a
    background thread; :meth:`run` serves in this one; :meth:`close` stops."""

    def __init__(self, broker: str, db_path, credentials: Credentials | None = None,
                 host: str = "0.0.0.0", port: int = 8090, prefix: str = DEFAULT_PREFIX,
                 name: str = "league", threads: int = 32, title: str = "League",
                 **subscriber_options):
        self.broker, self.db_path, self.credentials = broker, db_path, credentials
        self.subscriber_options = subscriber_options     # ca_file, heartbeat_s, ...
        self.host, self.port, self.prefix, self.name = host, port, prefix, name
        self.threads, self.title = threads, title
        self.store = self.hub = self.subscriber = self.app = None
        self._init_serving()

    def open(self) -> "LeagueServer":
        import waitress

        BrokerURL.parse(self.broker)          # a bad URL fails before anything opens
        self.store = LeagueStore(self.db_path)
        self.hub = Hub()
        self.subscriber = LeagueSubscriber(self.store, self.broker, self.credentials,
                                           prefix=self.prefix, name=self.name,
                                           on_stored=self.hub.publish,
                                           **self.subscriber_options)
        self.app = create_app({"TITLE": self.title}, self.store, self.hub, self.subscriber)
        self.server = waitress.create_server(
            self.app, map=self._socket_map, host=self.host, port=self.port, threads=self.threads,
            ident="tabletop-league", asyncore_use_poll=True, channel_request_lookahead=1)
        self.port = int(self.server.effective_port)
        self.subscriber.start()
        return self

    # -- running: run, start, stop and url are companion.serving.Served's ------

    thread_name = "league-web"

    def _end_streams(self) -> None:
        if self.hub is not None:
            self.hub.close()

    def _close_dispatchers(self) -> None:
        """In the serving thread: let running requests finish (the live
        streams already ended with the hub), then close every connection."""
        if self.server is not None:
            self.server.task_dispatcher.shutdown(cancel_pending=True, timeout=2)
        super()._close_dispatchers()

    def close(self) -> None:
        self._release_server()
        if self.subscriber is not None:
            self.subscriber.close()
        if self.store is not None:
            self.store.close()
            self.store = None


def serve(broker: str, db_path, credentials: Credentials | None = None, host: str = "0.0.0.0",
          port: int = 8090, prefix: str = DEFAULT_PREFIX, name: str = "league",
          print_fn: Callable[[str], None] = print, ca_file=None) -> int:
    """Run the league until SIGINT/SIGTERM; 0 on a clean stop, 2 if it cannot start."""
    server = LeagueServer(broker, db_path, credentials, host, port, prefix, name,
                          ca_file=ca_file)
    return serve_until_signalled(
        server, "companion league", host, port, (LeagueError, ValueError), print_fn,
        lambda: f"League page: {server.url}/  (broker {broker}, store {db_path}); Ctrl-C stops.")


__all__ = ["Hub", "LeagueServer", "LeagueSubscriber", "SESSION_EXPIRY_S", "create_app", "serve"]
