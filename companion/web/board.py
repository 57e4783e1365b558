"""The scoreboard every phone opens: ``/``, its live stream ``/events``, the
public state ``/api/state``, the games described as data ``/api/games``, and,
in demo mode only, the on-screen virtual buzzers ``/api/press``; with HTTPS
on the LAN, the page that tells a phone how to trust the table (``/ca``)
and the table CA's certificate (``/ca.crt``)."""

from __future__ import annotations

import hashlib
import ssl
from typing import Callable, Iterator

from flask import Blueprint, Response, abort, jsonify, render_template, request

from . import auth
from .api import BadRequest, game_info, games_info, now_ns, page_game, services, virtual_press
from .policy import PRESS_MAX_BYTES, PUBLIC, allow

bp = Blueprint("board", __name__)


@bp.get("/")
@allow(PUBLIC)
def index():
    svc = services()
    snap = svc.session.snapshot()
    return render_template("board/index.html", s=snap, demo=svc.demo,
                           join_url=svc.join_urls[0], heartbeat_s=svc.broker.heartbeat_s,
                           game=page_game(snap))


@bp.get("/join")
@allow(PUBLIC)
def join():
    """A big QR code, so one phone can invite the next."""
    from .join import qr_svg

    from markupsafe import Markup

    svc = services()
    return render_template("board/join.html", urls=svc.join_urls, trust_url=svc.trust_url,
                           qr=Markup(qr_svg(svc.join_urls[0], scale=8)))


def _table_ca():
    """The table CA's certificate (with HTTPS on the LAN); 404 without."""
    svc = services()
    if not svc.ca_pem:
        abort(404)
    return svc


@bp.get("/ca")
@allow(PUBLIC)
def trust():
    """How a phone trusts the table's CA once (per OS), and its fingerprint:
    served on plain HTTP too, where a new phone starts (docs/web.md)."""
    svc = _table_ca()
    der = ssl.PEM_cert_to_DER_cert(svc.ca_pem.decode("ascii"))
    digest = hashlib.sha256(der).hexdigest().upper()
    return render_template("board/trust.html", https_url=(svc.secure_urls or svc.join_urls)[0],
                           plain_url=(svc.plain_urls or svc.join_urls)[0],
                           fingerprint=":".join(digest[i:i + 2] for i in range(0, 64, 2)))


@bp.get("/ca.crt")
@allow(PUBLIC)
def ca_certificate():
    """The table CA's certificate (public; DER, as phones install it). Its
    key never leaves the table."""
    svc = _table_ca()
    der = ssl.PEM_cert_to_DER_cert(svc.ca_pem.decode("ascii"))
    resp = Response(der, mimetype="application/x-x509-ca-cert")
    resp.headers["Content-Disposition"] = 'attachment; filename="tabletop-table-ca.crt"'
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/api/state")
@allow(PUBLIC)
def state():
    snap = dict(services().session.snapshot())
    snap["now_ns"] = now_ns()
    return snap


@bp.get("/api/games")
@allow(PUBLIC)
def games():
    """Every game the table knows, described as data (``Game.info()``: title,
    player counts, score unit, settings, race reasons with their wording)
    plus ``script``, the URL of its panel script or null."""
    return jsonify(games_info())


@bp.get("/api/games/<name>")
@allow(PUBLIC)
def game(name: str):
    """One game's description (404 names the known games)."""
    return game_info(name)


class _Stream:
    """A WSGI body that unregisters its client even if it is closed before
    the first byte (a generator that never started runs no ``finally``)."""

    def __init__(self, broker, client, gen):
        self.broker, self.client, self.gen = broker, client, gen

    def __iter__(self):
        return self.gen

    def close(self):
        self.gen.close()
        self.broker.disconnect(self.client)


def _last_id() -> int | None:
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_id") or ""
    raw = raw.strip()
    return int(raw) if raw.isdigit() and len(raw) < 19 else None


def live_stream(wrap: Callable[[Iterator[bytes]], Iterator[bytes]] | None = None,
                cache_control: str = "no-cache, no-transform"):
    """The live stream's response (text/event-stream) for this request: a
    snapshot or the replay since ``Last-Event-ID`` (or ``?last_id=``), then
    updates and heartbeats; 503 when too many pages are open. ``wrap``
    turns the stream's bytes into what is sent (a player's page adds its
    private events: :mod:`companion.web.player`), so every live page gets
    the same replay, caps and clean-up."""
    broker = services().broker
    client = broker.connect(auth.client_key())
    if client is None:
        resp = jsonify(error="too many live pages open; retrying shortly", rule="capacity")
        resp.headers["Retry-After"] = "5"
        return resp, 503
    gen = broker.stream(client, _last_id(),
                        disconnected=request.environ.get("waitress.client_disconnected"))
    if wrap is not None:
        gen = wrap(gen)
    resp = Response(_Stream(broker, client, gen), mimetype="text/event-stream")
    resp.headers["Cache-Control"] = cache_control
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


@bp.get("/events")
@allow(PUBLIC)
def events():
    """The live stream (text/event-stream): a snapshot or the replay since
    ``Last-Event-ID`` (or ``?last_id=``), then updates and heartbeats."""
    return live_stream()


@bp.post("/api/press")
@allow(PUBLIC, limit="press_limiter", max_bytes=PRESS_MAX_BYTES)
def press():
    """Demo mode only: a virtual buzzer on the scoreboard (millisecond
    accuracy: the press is stamped when the server receives it)."""
    if not services().demo:
        raise BadRequest("virtual buzzers are on only in demo mode", rule="demo", status=404)
    return virtual_press("board")
