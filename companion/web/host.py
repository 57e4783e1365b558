"""The host console: ``/host`` (PIN login) and the JSON endpoints under
``/api/host/`` for everything the console does. Every endpoint that changes
state needs the login and the session's CSRF token; an illegal event gets a
4xx with the rule's message and leaves the game as it was."""

from __future__ import annotations

import logging
import re
from collections import deque

from flask import (Blueprint, Response, jsonify, redirect, render_template, request, session,
                   url_for)
from flask_babel import gettext as _
from markupsafe import Markup

from ..pico import certificate
from . import auth, schema
from .api import (BadRequest, UnknownGame, body, check_players, game_info, games_info, need_game,
                  now_ns, optional_int, page_game, services, virtual_press)
from .join import qr_svg
from .policy import HOST, PRESS_MAX_BYTES, PUBLIC, allow

bp = Blueprint("host", __name__)
log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------
# pages


@bp.get("/host")
@allow(PUBLIC, reserve=True)
def console():
    svc = services()
    if not auth.is_host():
        return render_template("host/login.html", error=None)
    snap = svc.session.snapshot()
    return render_template("host/console.html", s=snap, demo=svc.demo,
                           urls=svc.join_urls, qr=Markup(qr_svg(svc.join_urls[0])),
                           trust_url=svc.trust_url,
                           players=default_players(), buzzers=svc.buzzers,
                           heartbeat_s=svc.broker.heartbeat_s,
                           game=page_game(snap), cert=certificate.load(),
                           seasons=svc.session.store.seasons(), camera=svc.camera is not None)


def default_players() -> list[str]:
    """Names to prefill the new-game form with: configured, else the current game's."""
    from flask import current_app

    configured = current_app.config.get("PLAYERS")
    if configured:
        return list(configured)
    snap = services().session.snapshot()
    return [p["name"] for p in snap.get("players") or []] or ["Ana", "Bo", "Cy", "Dee"]


@bp.post("/host/login")
@allow(PUBLIC, reserve=True)
def login_form():
    ok, wait = auth.login(request.form.get("pin"))
    if ok:
        return redirect(url_for("host.console"))
    if wait:
        msg = _("Too many wrong PINs: wait %(s)d s.", s=int(wait) + 1)
        resp = Response(render_template("host/login.html", error=msg), status=429)
        resp.headers["Retry-After"] = str(int(wait) + 1)
        return resp
    return render_template("host/login.html", error=_("Wrong PIN.")), 401


@bp.post("/host/logout")
@allow(PUBLIC)
def logout_form():
    auth.logout()
    session.clear()
    return redirect(url_for("host.console"))


# ---------------------------------------------------------------------------
# JSON: session and login


@bp.get("/api/csrf")
@allow(PUBLIC, reserve=True)
def csrf():
    """The CSRF token of this browser's session (and the cookie that holds it)."""
    return {"csrf": auth.csrf_token(), "host": auth.is_host()}


@bp.post("/api/host/login")
@allow(PUBLIC, reserve=True)
def login_json():
    ok, wait = auth.login(body().get("pin"))
    if ok:
        return {"ok": True, "csrf": auth.csrf_token()}
    if wait:
        resp = jsonify(error=f"too many wrong PINs: wait {int(wait) + 1} s", rule="rate-limit")
        resp.headers["Retry-After"] = str(int(wait) + 1)
        return resp, 429
    return jsonify(error="wrong PIN", rule="login"), 401


@bp.post("/api/host/logout")
@allow(PUBLIC)
def logout_json():
    auth.logout()
    session.clear()
    return {"ok": True}


# ---------------------------------------------------------------------------
# JSON: the game


def _host_state():
    """The session's host snapshot, plus a human label for each legal event
    (the tracker's own words) and the server's clock."""
    session = services().session
    snap = dict(session.host_snapshot())
    game = session.game
    labels = []
    for ev in snap.get("legal_events") or []:
        try:
            labels.append(game.describe(ev))
        except Exception:   # a tracker's describe must not break the console
            labels.append(ev.get("type", "?"))
    snap["legal_labels"] = labels
    snap["now_ns"] = now_ns()
    snap["draw"] = None if game is None else game.roll_offer(session.state)
    marked = _drawn(session.game_id)
    for row in snap.get("log") or []:
        if row.get("id") in marked and not row.get("drawn_by"):
            row["line"] = f"{row['line']} · drawn by the companion"
            row["drawn_by"] = "companion"
    return snap


@bp.get("/api/host/state")
@allow(HOST)
def host_state():
    return _host_state()


@bp.get("/api/host/certificate")
@allow(HOST)
def fairness_certificate():
    """The Pico box's last fairness certificate, with its date (null: none
    kept yet; ``python -m hardware.selftest --real --fairness`` makes one)."""
    return {"certificate": certificate.load()}


@bp.get("/api/host/games")
@allow(HOST)
def games():
    """The games this companion knows, by name: their description
    (:func:`~companion.web.api.game_info`) and default ``options``."""
    from ..games import get_game

    return {info["name"]: dict(info, options=get_game(info["name"]).default_options())
            for info in games_info()}


def _setup_field(message: str, info: dict) -> str | None:
    """Where a refusal of ``Game.setup`` points in the new-game form: the
    option it names (``option 'x'``, or a setting's name in the message),
    the players' colours, the players; None: the form as a whole."""
    m = re.search(r"option '(\w+)'", message)
    if m:
        return f"options.{m.group(1)}"
    if "unknown option" in message:
        return "options"
    for s in info.get("settings") or []:
        if re.search(rf"\b{re.escape(s['name'])}\b", message):
            if s["name"] == "colours" and info.get("colours_option"):
                return "players.colour"
            return f"options.{s['name']}"
    if re.search(r"colour", message, re.I):
        return "players.colour"
    if re.search(r"player|same name", message, re.I):
        return "players"
    return None


@bp.post("/api/host/new-game")
@allow(HOST)
def new_game():
    """``{"game", "players": [{"name", "colour", "buzzer"}], "options"}``.
    The game's own :meth:`~companion.games.Game.setup` checks the options
    (one place); a refusal names the form ``field`` it is about."""
    from ..games import RulesError

    data = body()
    game = data.get("game")
    if not isinstance(game, str):
        raise BadRequest("'game' must be a game name", "game")
    info = game_info_for_body(game)
    players = check_players(data.get("players"))
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise BadRequest("'options' must be an object", "options")
    if info["colours_option"] and "colours" not in options:
        chosen = {p["name"]: p["colour"] for p in players if p["colour"]}
        if chosen:
            options = dict(options, colours=chosen)
    try:
        game_id = services().session.new_game(game, players, options)
    except RulesError as exc:
        exc.field = _setup_field(str(exc), info)
        raise
    return {"ok": True, "game_id": game_id, "state": _host_state()}


def game_info_for_body(name: str) -> dict:
    """:func:`game_info` for a name sent in a body: unknown is a 400."""
    try:
        return game_info(name)
    except UnknownGame as exc:
        exc.status = 400
        raise


@bp.post("/api/host/event")
@allow(HOST, body=schema.host_event)
def log_event():
    """Log one event the host saw: ``{"event": {...}, "expected_version": n}``."""
    data = body()
    event = data.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise BadRequest("'event' must be an object with a 'type'", "event")
    expected = optional_int(data, "expected_version")
    need_game()
    update = services().session.log(event, expected_version=expected)
    return {"ok": True, "update": update, "state": _host_state()}


# ---------------------------------------------------------------------------
# "Roll for us": the companion draws a chance outcome for a table that lost
# its die (the game's roll_offer / roll_for_us: its rules stay pure, the draw
# is outside apply), and the outcome is logged like any roll the host saw.

#: Draws remembered per game to mark their log lines (in memory only).
DRAWS_KEPT = 500


def _drawn(game_id) -> set:
    """The event ids the companion drew in game ``game_id`` (this server's
    run only: the log holds the roll itself, like any other)."""
    from flask import current_app

    draws = current_app.extensions.setdefault("companion_draws", {})
    return set(draws.get(game_id) or ())


def _mark_drawn(game_id, event_id) -> None:
    from flask import current_app

    draws = current_app.extensions.setdefault("companion_draws", {})
    draws.setdefault(game_id, deque(maxlen=DRAWS_KEPT)).append(event_id)


@bp.post("/api/host/draw")
@allow(HOST)
def draw():
    """"Roll for us": ``{"expected_version": n}``. The companion draws one
    of the chance outcomes the game offers now (see :meth:`Game.roll_offer`) by
    its probability, with the system's random source, and logs it as the
    host would have logged the real roll: the same event, the same log. The
    answer adds ``drawn`` (the event), ``p`` and ``drawn_by``; the console's
    log line says "drawn by the companion". 409 when the next step is not
    something the companion can draw (a decision, a card, a race) or the
    table moved on."""
    from ..record.store import StaleVersion

    expected = optional_int(body(), "expected_version")
    need_game()
    session = services().session
    version = session.version          # read before the state: a later event makes the log refuse
    if expected is not None and expected != version:
        raise StaleVersion(f"the table changed since this console loaded it (it saw version "
                           f"{expected}, the table is at {version}); nothing was drawn: "
                           f"refresh and try again", expected, version)
    game = session.game
    chosen = game.roll_for_us(session.state)
    if chosen is None:
        raise BadRequest("the companion draws only a die-like roll (a number, one of at most "
                         f"{game.max_roll_outcomes}) when the table's next step is that roll "
                         "and nothing else; log what happened instead", rule="draw", status=409)
    update = session.log(dict(chosen["event"]), expected_version=version)
    _mark_drawn(session.game_id, update.get("id"))
    log.info("game %s: the companion drew %s (p=%s) for the table, event %s",
             session.game_id, chosen["event"], chosen["p"], update.get("id"))
    return {"ok": True, "drawn": chosen["event"], "p": chosen["p"], "drawn_by": "companion",
            "update": update, "state": _host_state()}


def _undo_redo(which: str):
    expected = optional_int(body(), "expected_version")
    need_game()
    update = getattr(services().session, which)(expected_version=expected)
    return {"ok": True, "update": update, "state": _host_state()}


@bp.post("/api/host/undo")
@allow(HOST)
def undo():
    return _undo_redo("undo")


@bp.post("/api/host/redo")
@allow(HOST)
def redo():
    return _undo_redo("redo")


@bp.post("/api/host/race")
@allow(HOST)
def start_race():
    """Start the announced race the game asks for: ``{"countdown_ms": 3000}``."""
    countdown = optional_int(body(), "countdown_ms")
    if countdown is not None and not 0 <= countdown <= 30_000:
        raise BadRequest("'countdown_ms' must be between 0 and 30000", "countdown_ms")
    race = services().session.start_race(countdown)
    return {"ok": True, "race": race, "state": _host_state()}


@bp.post("/api/host/race/cancel")
@allow(HOST)
def cancel_race():
    """Stop the live race without logging it (re-run it or log it by hand)."""
    services().session.cancel_race()
    return {"ok": True, "state": _host_state()}


@bp.post("/api/host/race/confirm")
@allow(HOST)
def confirm_race():
    """The host's tap on a doubtful claim: ``{"accept": true}`` lets it
    decide the card, with ``"t_ns"`` (optional, one of the race's
    ``choices``) the press the card's race starts at; ``false`` makes its
    presses strays and races the card again from the tap."""
    data = body()
    accept = data.get("accept")
    if not isinstance(accept, bool):
        raise BadRequest("'accept' must be true or false", "accept")
    t_ns = optional_int(data, "t_ns")
    if t_ns is not None and not accept:
        raise BadRequest("'t_ns' chooses a press to accept: not with 'accept': false", "t_ns")
    need_game()
    race = services().session.confirm_race(accept, t_ns)
    return {"ok": True, "race": race, "state": _host_state()}


@bp.post("/api/host/race/use")
@allow(HOST)
def use_presses():
    """The host's tap on a stray press: ``{"t_ns": n}``; the card waiting for
    an unannounced race takes the presses from that one on."""
    t_ns = optional_int(body(), "t_ns")
    if t_ns is None:
        raise BadRequest("'t_ns' must be the stray press's time", "t_ns")
    need_game()
    race = services().session.use_presses(t_ns)
    return {"ok": True, "race": race, "state": _host_state()}


@bp.post("/api/host/reorder")
@allow(HOST, body=schema.reorder)
def reorder():
    """The host's one tap on the swap the console offers (the state's
    ``reorder``: two cards logged the other way round than they were
    turned): ``{"events": [id, id], "accept": true, "expected_version": n}``
    with the offer's ``events``; ``accept: false`` keeps the log as it is.
    409 when the table moved on (stale); 400 (rule ``reorder``) when the
    offer is gone."""
    data = body()
    expected = optional_int(data, "expected_version")
    need_game()
    out = services().session.reorder(list(data["events"]), data.get("accept", True),
                                      expected_version=expected)
    return {"ok": True, "reorder": out, "state": _host_state()}


@bp.post("/api/host/rematch")
@allow(HOST)
def rematch():
    """A new game of the same game, same players, same options."""
    need_game()
    game_id = services().session.rematch()
    return {"ok": True, "game_id": game_id, "state": _host_state()}


@bp.post("/api/host/press")
@allow(HOST, max_bytes=PRESS_MAX_BYTES)
def host_press():
    """A virtual buzzer pressed from the console (any mode; millisecond accuracy)."""
    return virtual_press("host")


@bp.get("/api/host/join")
@allow(HOST)
def join():
    svc = services()
    return {"urls": svc.join_urls, "qr_svg": qr_svg(svc.join_urls[0])}


@bp.get("/api/host/stats")
@allow(HOST)
def stats():
    return services().session.stats()


@bp.get("/api/host/export/<int:game_id>")
@allow(HOST)
def export_game(game_id: int):
    text = services().session.export_game(game_id)
    return Response(text, mimetype="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="game-{game_id}.jsonl"'})


@bp.get("/api/host/export.csv")
@allow(HOST)
def export_csv():
    return Response(services().session.export_csv(), mimetype="text/csv", headers={
        "Content-Disposition": 'attachment; filename="games.csv"'})


@bp.post("/api/host/import")
@allow(HOST)
def import_game():
    text = request.get_data(as_text=True)
    if not text.strip():
        raise BadRequest("send a game file (JSON lines) as the body")
    return {"ok": True, "game_id": services().session.import_game(text)}


# ---------------------------------------------------------------------------
# seasons: named spans of nights (the statistics pages read one at a time)


@bp.post("/api/host/seasons")
@allow(HOST)
def add_season():
    """``{"name", "start": "YYYY-MM-DD", "end": "YYYY-MM-DD" or null}``: a
    new season (400 naming the field for a bad one or a name taken)."""
    from ..record.ratings import SeasonError, check_season
    from ..record.store import SeasonNameTaken

    data = body()
    try:
        name, start, end = check_season(data.get("name"), data.get("start"), data.get("end"))
        season = services().session.store.add_season(name, start, end)
    except SeasonError as exc:
        raise BadRequest(str(exc), exc.field) from None
    except SeasonNameTaken as exc:
        raise BadRequest(str(exc), "name") from None
    return {"ok": True, "season": season, "seasons": services().session.store.seasons()}


@bp.post("/api/host/seasons/delete")
@allow(HOST)
def remove_season():
    """``{"id": n}``: forget a season (its games and ratings stay); 404 if
    there is none."""
    season_id = optional_int(body(), "id")
    if season_id is None:
        raise BadRequest("'id' must be a season's id", "id")
    if not services().session.store.remove_season(season_id):
        raise BadRequest(f"no season {season_id}", "season", status=404)
    return {"ok": True, "seasons": services().session.store.seasons()}
