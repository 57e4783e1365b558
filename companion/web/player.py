"""Private player pages: each player's own page behind a secret link.

A player's hidden information (a Hawker Wars hand, a Chope! My Favourite
card, a Tropichaos chip stand) is shown on that player's phone only, at
``/p/<secret>``, and the player logs their own private events there (the
cards they drew) through :meth:`TableSession.log_private`. No PIN: the secret
in the link is the credential, shown to the host (a link and a QR code per
player, ``/api/host/player-links``) and revocable there.

The secret, its digest and the check that a link opens a page now are
:mod:`companion.web.links`; every ``/p/`` and ``/api/p/`` route declares
``who=PLAYER`` (:mod:`companion.web.policy`), so the link is checked before
the view runs and the view reads its player from ``g.player``.

Whose link works when: a link belongs to a player *at a seating* (the set
of names at the table). It opens that player's page in the running game
while the running game seats exactly those names: a new game with the same
players keeps everyone's links; a game with anyone else makes every old
link answer 404 (the host shows new ones). Reissuing revokes the player's
old link; revoking leaves them without one until the host reissues.

A link reads only its player's ``private_snapshot`` plus the public state,
and writes only that player's ``private_events`` (and, in demo mode, their
own virtual buzzer). A wrong, revoked or stale link gets 404 and nothing
else. Routes (docs/web.md, "Private player pages")::

    GET  /p/<secret>                 the page
    GET  /api/p/<secret>/state       {"player", "private", "state", "demo", "now_ns"}
    GET  /api/p/<secret>/events      SSE: the public stream plus "private" events
    POST /api/p/<secret>/event       {"event", "expected_version"} -> log_private
    POST /api/p/<secret>/press       {"pressed": bool}, demo mode only
    GET  /api/host/player-links      host: each player's link, QR code, state
    POST /api/host/player-links      host: make the links players do not have yet
    POST /api/host/player-links/reissue   host: {"player"}: a new link, the old one revoked
    POST /api/host/player-links/revoke    host: {"player"}: no link until reissued
"""

from __future__ import annotations

import hmac
import secrets

from flask import Blueprint, g, jsonify, render_template, request

from . import schema
from .api import BadRequest, body, now_ns, optional_int, page_game, press_virtual, services
from .board import live_stream
from .join import qr_uri
from .links import NO_LINK, NoLink, check_link, digest_of, link_key, seated, secret_for
from .policy import HOST, PLAYER, PRESS_MAX_BYTES, allow
from .sse import frame

bp = Blueprint("player", __name__)

def _player(secret: str) -> str:
    """The player whose link opened this request (the route policy checked
    it: ``who=PLAYER``, :mod:`companion.web.policy`)."""
    player = g.get("player")
    if player is None:
        raise NoLink()
    return player


@bp.errorhandler(NoLink)
def no_link(exc: NoLink):
    """A link that opens nothing: the page says so; the API answers JSON."""
    if request.endpoint == "player.page":
        return render_template("player/gone.html", message=NO_LINK), 404
    return jsonify(error=str(exc), rule=exc.rule), exc.status


# ---------------------------------------------------------------------------
# what the page gets


def _readable(value, names: dict) -> str:
    """Card ids (or a count per id) in the game's own names."""
    def one(x):
        entry = names.get(x) if isinstance(x, str) else None
        if isinstance(entry, dict) and entry.get("name"):
            return str(entry["name"])
        return str(x).replace("-", " ").replace("_", " ").capitalize()
    if isinstance(value, list):
        return ", ".join(one(x) for x in value) or "nothing"
    if isinstance(value, dict):
        return ", ".join(f"{n} {one(k)}" if n != 1 else one(k) for k, n in value.items())
    return one(value)


def event_label(game, event: dict, names: dict) -> dict:
    """A button's words for one of the player's own events: ``text`` (what
    only this player knows, in the game's names: "Egg, Chili"; or the
    tracker's line when nothing in it is secret) and ``detail`` (the
    tracker's line, as the table will read it)."""
    try:
        line = game.describe(event)
    except Exception:   # a tracker's wording must not break the page
        line = str(event.get("type"))
    try:
        public = game.public_event(event) or {}
    except Exception:
        public = {}
    hidden = [v for k, v in event.items() if k != "type" and public.get(k) != v]
    if not hidden:
        return {"text": line, "detail": None}
    return {"text": "; ".join(_readable(v, names) for v in hidden), "detail": line}


def private_state(session, player: str, public: dict | None = None) -> dict:
    """The player's private snapshot (``player``, ``view``, ``events``,
    ``version``) plus ``labels``, one per event."""
    snap = dict(session.private_snapshot(player))
    public = public if public is not None else session.snapshot()
    names = ((public.get("view") or {}).get("cards") or {}) if isinstance(public, dict) else {}
    snap["labels"] = [event_label(session.game, e, names) for e in snap.get("events") or []]
    return snap


def _page_state(player: str) -> dict:
    svc = services()
    public = dict(svc.session.snapshot())
    public["now_ns"] = now_ns()
    return {"player": player, "private": private_state(svc.session, player, public),
            "state": public, "demo": svc.demo, "now_ns": public["now_ns"]}


@bp.after_request
def no_store(resp):
    """Private answers are never cached (nor is the page, whose URL is a secret)."""
    if request.path.startswith(("/p/", "/api/p/", "/api/host/player-links")):
        resp.headers["Cache-Control"] = "no-store"
    return resp


# ---------------------------------------------------------------------------
# the player's side


@bp.get("/p/<secret>")
@allow(PLAYER)
def page(secret: str):
    svc = services()
    player = _player(secret)
    st = _page_state(player)
    return render_template("player/page.html", s=st["state"], initial=st, demo=svc.demo,
                           api=f"/api/p/{secret}", heartbeat_s=svc.broker.heartbeat_s,
                           game=page_game(st["state"]), player=player)


@bp.get("/api/p/<secret>/state")
@allow(PLAYER)
def state(secret: str):
    return _page_state(_player(secret))


@bp.post("/api/p/<secret>/event")
@allow(PLAYER, body=schema.private_event)
def log_event(secret: str):
    """Log one of the player's own events: ``{"event", "expected_version"}``.
    The tracker's refusal (or an event that is not one of theirs) is a 400
    naming the rule; nothing is logged."""
    player = _player(secret)
    data = body()
    event = data.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise BadRequest("'event' must be an object with a 'type'", "event")
    expected = optional_int(data, "expected_version")
    session = services().session
    update = session.log_private(player, event, expected_version=expected)
    data = update.get("data") or {}
    return dict(_page_state(player), ok=True, event=data.get("event"), line=data.get("line"))


@bp.post("/api/p/<secret>/press")
@allow(PLAYER, limit="press_limiter", max_bytes=PRESS_MAX_BYTES)
def press(secret: str):
    """The player's own virtual buzzer (demo mode only): ``{"pressed": true,
    "seq": n}`` on touch-down, ``false`` on release; stamped on arrival (ms
    accuracy); ``seq`` puts overtaken requests back in order."""
    player = _player(secret)
    if not services().demo:
        raise BadRequest("virtual buzzers are on only in demo mode", rule="demo", status=404)
    pressed = body().get("pressed", True)
    if not isinstance(pressed, bool):
        raise BadRequest("send {\"pressed\": true|false}", "pressed")
    press_virtual(player, pressed, optional_int(body(), "seq"), "own")
    return {"ok": True, "player": player, "pressed": pressed, "accuracy": "ms"}


def _private_stream(svc, key: bytes, secret: str, player: str, inner):
    """The public stream's bytes, each log update (and the first message)
    followed by a ``private`` event with this player's snapshot when it
    changed. The link is checked again before every message: once it is
    revoked, or the table seats other players, a ``gone`` event ends it."""
    last = None
    first = True
    try:
        for chunk in inner:
            if check_link(svc, key, secret) is None:
                yield frame("gone", {"type": "gone", "error": NO_LINK})
                return
            if first or b"event: state\n" in chunk or b"event: snapshot\n" in chunk:
                first = False
                try:
                    data = private_state(svc.session, player)
                except Exception:   # no game, or the player left: say nothing private
                    data = None
                enc = frame("private", {"type": "private", "data": data,
                                        "version": getattr(svc.session, "version", None)})
                if enc != last:     # one write: the table's news and the player's own
                    last = enc
                    chunk += enc
            yield chunk
    finally:
        inner.close()


@bp.get("/api/p/<secret>/events")
@allow(PLAYER)
def events(secret: str):
    """The page's live stream: the scoreboard's (same wire format, same
    replay from ``Last-Event-ID``, same caps) plus ``event: private``
    messages carrying this player's private snapshot, and ``event: gone``
    if the link stops working. Never stored by a cache (``no-store``)."""
    player = _player(secret)
    svc = services()
    key = link_key()
    return live_stream(lambda inner: _private_stream(svc, key, secret, player, inner),
                       cache_control="no-cache, no-store, no-transform")


# ---------------------------------------------------------------------------
# the host's side: links, QR codes, revoke and reissue


def _issue(svc, key: bytes, player: str) -> dict:
    names = seated(svc.session) or []
    nonce = secrets.token_urlsafe(32)
    secret = secret_for(key, nonce)
    return svc.store.add_player_link(svc.session.game_id, player, names, nonce,
                                     digest_of(secret))


def _links(svc, key: bytes) -> dict:
    session = svc.session
    names = seated(session)
    if names is None:
        return {"players": [], "hidden_information": False, "game_id": None}
    rows = svc.store.player_links(names)
    base = svc.join_urls[0].rstrip("/")
    out = []
    for name in names:
        row = rows.get(name)
        item = {"player": name, "url": None, "qr": None, "revoked": False,
                "created": None, "state": "none"}
        if row is not None:
            item["created"] = row["created"]
            secret = secret_for(key, row["nonce"])
            if row["revoked"]:
                item.update(revoked=True, state="revoked")
            elif not hmac.compare_digest(digest_of(secret), row["digest"]):
                item["state"] = "stale"     # made under another server key: reissue
            else:
                url = f"{base}/p/{secret}"
                item.update(url=url, qr=qr_uri(url), state="valid")
        out.append(item)
    game = session.game
    return {"players": out, "game_id": session.game_id,
            "hidden_information": bool(getattr(game, "hidden_information", False))}


def _host_player(svc) -> str:
    player = body().get("player")
    names = seated(svc.session)
    if names is None:
        raise BadRequest("no game is running: start a new game first", rule="setup", status=409)
    if not isinstance(player, str) or player not in names:
        raise BadRequest(f"no player called {player!r} in this game", "player")
    return player


@bp.get("/api/host/player-links")
@allow(HOST)
def host_links():
    """Each seated player's link (URL and QR code), or why they have none."""
    svc = services()
    return _links(svc, link_key())


@bp.post("/api/host/player-links")
@allow(HOST)
def host_make_links():
    """Make a link for every seated player who never had one at this seating
    (a revoked link stays revoked until reissued)."""
    svc = services()
    names = seated(svc.session)
    if names is None:
        raise BadRequest("no game is running: start a new game first", rule="setup", status=409)
    rows = svc.store.player_links(names)
    key = link_key()
    for name in names:
        row = rows.get(name)
        if row is None or (not row["revoked"] and not hmac.compare_digest(
                digest_of(secret_for(key, row["nonce"])), row["digest"])):
            _issue(svc, key, name)
    svc.broker.wake_all()       # a stale link's open pages end now
    return _links(svc, key)


@bp.post("/api/host/player-links/reissue")
@allow(HOST)
def host_reissue():
    """A new link for ``{"player"}``; their old one stops working at once."""
    svc = services()
    player = _host_player(svc)
    _issue(svc, link_key(), player)
    svc.broker.wake_all()       # the old link's open pages end now
    return _links(svc, link_key())


@bp.post("/api/host/player-links/revoke")
@allow(HOST)
def host_revoke():
    """``{"player"}`` has no link until the host reissues one."""
    svc = services()
    player = _host_player(svc)
    svc.store.revoke_player_links(seated(svc.session), player)
    svc.broker.wake_all()       # its open pages end now, not at the next heartbeat
    return _links(svc, link_key())


__all__ = ["bp", "check_link", "digest_of", "event_label", "private_state", "secret_for"]
