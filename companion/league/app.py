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
* :class:`~companion.league.hall.Hub`: Server-Sent Events to the open
  league pages (a hall of spectators: :data:`MAX_PAGES`): a compact notice
  per stored message (``event``, ``state``, ``game``, ``status``,
  ``convention``), a ``heartbeat`` every 15 s, written by one thread to
  every page's connection.
* :func:`create_app`: the page (``/``), the whole view as JSON
  (``/api/league``), the live stream (``/api/live``) and the exports
  (``/export.csv``, ``/export.json``). Every route is a GET: the league
  page is read-only.
* :class:`LeagueServer` / :func:`serve`: all of it on waitress behind the
  :class:`~companion.serving.Gate` with the hall's caps (:func:`hall_limits`),
  closed together.

>>> # python -m companion.league serve --broker mqtt://127.0.0.1:1883 --db league.db \\
>>> #     --user league --password-file broker/secrets/league.password
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Callable

from flask import Flask, Response, jsonify, render_template, request
from flask_babel import gettext

from .. import translations
from ..serving import Gate, Limits, Served, serve_until_signalled
from .hall import MAX_BACKLOG, Hub, ViewCache
from .store import LeagueStore
from .subscriber import SESSION_EXPIRY_S, LeagueSubscriber
from .topics import DEFAULT_PREFIX, BrokerURL, Credentials, LeagueError

log = logging.getLogger(__name__)

#: Live league pages held at once (a convention hall's spectators); one
#: more gets 503 and its page retries.
MAX_PAGES = 500
#: Live league pages one address may hold (a phone holds one, a family a
#: few); one more gets 503. The machine's own address is not counted.
PAGES_PER_ADDRESS = 16
#: The stack of each of the league server's worker threads (bytes).
PAGE_THREAD_STACK = 512 * 1024


def hall_limits(max_pages: int = MAX_PAGES) -> Limits:
    """The league screen's caps (docs/league.md, "Limits"): the guests'
    share holds ``max_pages`` spectators' live pages and 100 more
    connections for their fetches; an address may hold
    :data:`PAGES_PER_ADDRESS` live pages and 8 connections (and requests in
    flight) besides; a socket that says nothing is closed after 5 s, a
    request must arrive whole within 5 s (head) and 10 s (body); output a
    page does not take is cut as on the table, past twice the hub's own
    :data:`~companion.league.hall.MAX_BACKLOG` (the hub ends such a page
    first)."""
    return Limits(per_address=PAGES_PER_ADDRESS + 8, guests=max_pages + 100, reserve=32,
                  in_flight_per_address=PAGES_PER_ADDRESS + 8, header_timeout_s=5.0,
                  request_timeout_s=10.0, idle_timeout_s=5.0, cleanup_interval_s=1,
                  outbuf_cap=2 * MAX_BACKLOG)


def create_app(config: dict | None = None, store: LeagueStore | None = None,
               hub: Hub | None = None, subscriber: LeagueSubscriber | None = None,
               convention=None) -> Flask:
    """The league page's Flask app (read-only: every route is a GET);
    ``convention``: the night's :class:`~companion.league.convention.Convention`, if any."""
    app = Flask(__name__, static_folder="static", template_folder="templates")
    app.config.update({"TITLE": "League", **(config or {})})
    store = store or LeagueStore(app.config.get("DB", ":memory:"))
    hub = hub or Hub()
    app.extensions["league"] = {"store": store, "hub": hub, "subscriber": subscriber}
    translations.install(app)          # English and French, as the table's pages

    @app.after_request
    def headers(resp: Response) -> Response:
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        resp.headers.setdefault("Content-Security-Policy",
                                "default-src 'self'; style-src 'self'; script-src 'self'")
        return resp

    @app.get("/")
    def page():
        title = app.config["TITLE"]
        # the default name is a word of the page's language; a league's own name is kept
        return render_template("league/index.html",
                               title=gettext("League") if title == "League" else title,
                               convention=convention is not None)

    _live_routes(app, store, hub, subscriber, convention)

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


def _live_routes(app: Flask, store: LeagueStore, hub: Hub, subscriber, convention) -> None:
    """``/api/league`` (the whole view, made once per change for the whole
    hall, with an ETag) and ``/api/live`` (the notices)."""

    def view() -> bytes:
        out = store.league()
        out["broker"] = subscriber.status() if subscriber is not None else None
        out["convention"] = convention.view() if convention is not None else None
        return app.json.dumps(out).encode()

    cache = ViewCache(view)

    @app.get("/api/league")
    def api_league():
        version, body = cache.get(hub.version)     # once per change, for the whole hall
        tag = f'"{version}"'
        if request.headers.get("If-None-Match") == tag:
            return Response(status=304, headers={"ETag": tag})
        return Response(body, mimetype="application/json", headers={"ETag": tag})

    @app.get("/api/live")
    def api_live():
        page = hub.connect(request.environ)
        if page is None:
            return jsonify({"error": "too many live pages; reload later"}), 503
        return Response(hub.stream(page), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


class LeagueServer(Served):
    """The league: store, subscriber, hub, app on waitress, opened and closed together.

    :meth:`open` binds (port 0: a free one); :meth:`start` serves in a
    background thread; :meth:`run` serves in this one; :meth:`close` stops.
    ``limits``: the gate's :class:`~companion.serving.Limits` (default
    :func:`hall_limits` of ``max_pages``)."""

    def __init__(self, broker: str, db_path, credentials: Credentials | None = None,
                 host: str = "0.0.0.0", port: int = 8090, prefix: str = DEFAULT_PREFIX,
                 name: str = "league", threads: int = 32, title: str = "League",
                 convention=None, max_pages: int = MAX_PAGES, limits: Limits | None = None,
                 **subscriber_options):
        self.broker, self.db_path, self.credentials = broker, db_path, credentials
        self.subscriber_options = subscriber_options     # ca_file, heartbeat_s, ...
        self.max_pages = max_pages
        self.gate = Gate(limits or hall_limits(max_pages))
        self.host, self.port, self.prefix, self.name = host, port, prefix, name
        self.threads, self.title = threads, title
        #: a convention's :class:`~companion.league.convention.Plan` (None: no rounds)
        self.plan = convention
        self.store = self.hub = self.subscriber = self.app = self.convention = None
        self._init_serving()

    def open(self) -> "LeagueServer":
        BrokerURL.parse(self.broker)          # a bad URL fails before anything opens
        self.store = LeagueStore(self.db_path)
        self.hub = Hub(max_clients=self.max_pages, per_address=PAGES_PER_ADDRESS)
        self.subscriber = LeagueSubscriber(self.store, self.broker, self.credentials,
                                           prefix=self.prefix, name=self.name,
                                           on_stored=self._stored,
                                           **self.subscriber_options)
        if self.plan is not None:
            from .convention import Convention
            self.convention = Convention(self.store, self.plan, self.subscriber.topics,
                                         send=self.subscriber.send, notify=self.hub.publish)
            self.convention.open()
        self.app = create_app({"TITLE": self.title}, self.store, self.hub, self.subscriber,
                              self.convention)
        self._bind()
        self.subscriber.start()
        return self

    def _bind(self) -> None:
        """waitress on the port, every connection through the gate."""
        import waitress
        from waitress.server import BaseWSGIServer

        # a worker thread per live page: small stacks (512 KiB, not 8 MiB), so
        # 500 of them fit a 32-bit Pi's address space
        threads = self.threads + self.max_pages   # a live page holds one; the usual ones besides
        old_stack = threading.stack_size(PAGE_THREAD_STACK)
        try:
            self.server = waitress.create_server(
                self.gate.wrap(self.app), map=self._socket_map, host=self.host, port=self.port,
                threads=threads, ident="tabletop-league", asyncore_use_poll=True,
                channel_request_lookahead=1, **self.gate.limits.waitress_options(threads))
        finally:
            threading.stack_size(old_stack)
        for listener in list(self._socket_map.values()):   # every listening socket
            if isinstance(listener, BaseWSGIServer):
                self.gate.install(listener)
        self.port = int(self.server.effective_port)

    def _stored(self, kind: str, data: dict) -> None:
        """A message is in the store: tell the pages, then the convention."""
        self.hub.publish(kind, data)
        if self.convention is not None:
            self.convention.on_stored(kind, data)

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
          print_fn: Callable[[str], None] = print, convention=None, ca_file=None) -> int:
    """Run the league until SIGINT/SIGTERM; 0 on a clean stop, 2 if it cannot
    start. ``convention``: a :class:`~companion.league.convention.Plan` to run rounds."""
    server = LeagueServer(broker, db_path, credentials, host, port, prefix, name,
                          convention=convention, ca_file=ca_file)
    return serve_until_signalled(
        server, "companion league", host, port, (LeagueError, ValueError), print_fn,
        lambda: f"League page: {server.url}/  (broker {broker}, store {db_path}); Ctrl-C stops."
        + _convention_line(server))


def _convention_line(server: LeagueServer) -> str:
    conv = server.convention
    if conv is None:
        return ""
    p = conv.plan
    return (f"\nConvention: {p.title}, round {conv.current.number} of {p.rounds} "
            f"({conv.current.mode}), {len(p.players)} players at {', '.join(p.tables)}, "
            f"seed {p.seed}")


__all__ = ["Hub", "LeagueServer", "LeagueSubscriber", "PAGES_PER_ADDRESS", "SESSION_EXPIRY_S",
           "create_app", "hall_limits", "serve"]
