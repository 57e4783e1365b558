"""The host console: ``/host`` (PIN login) and the JSON endpoints under
``/api/host/`` for everything the console does. Every endpoint that changes
state needs the login and the session's CSRF token; an illegal event gets a
4xx with the rule's message and leaves the game as it was."""

from __future__ import annotations

from flask import Blueprint, Response, redirect, render_template, request, session, url_for
from markupsafe import Markup

from . import auth
from .api import (BadRequest, body, call, check_players, error, now_ns, optional_int, services,
                  virtual_press)
from .join import qr_svg

bp = Blueprint("host", __name__)


# ---------------------------------------------------------------------------
# pages


@bp.get("/host")
def console():
    svc = services()
    if not auth.is_host():
        return render_template("host/login.html", error=None)
    return render_template("host/console.html", s=svc.session.snapshot(), demo=svc.demo,
                           urls=svc.join_urls, qr=Markup(qr_svg(svc.join_urls[0])),
                           players=default_players(), buzzers=svc.buzzers,
                           heartbeat_s=svc.broker.heartbeat_s)


def default_players() -> list[str]:
    """Names to prefill the new-game form with: configured, else the current game's."""
    from flask import current_app

    configured = current_app.config.get("PLAYERS")
    if configured:
        return list(configured)
    snap = services().session.snapshot()
    return [p["name"] for p in snap.get("players") or []] or ["Ana", "Bo", "Cy", "Dee"]


@bp.post("/host/login")
def login_form():
    ok, wait = auth.login(request.form.get("pin"))
    if ok:
        return redirect(url_for("host.console"))
    if wait:
        msg = f"Too many wrong PINs: wait {int(wait) + 1} s."
        resp = Response(render_template("host/login.html", error=msg), status=429)
        resp.headers["Retry-After"] = str(int(wait) + 1)
        return resp
    return render_template("host/login.html", error="Wrong PIN."), 401


@bp.post("/host/logout")
def logout_form():
    session.clear()
    return redirect(url_for("host.console"))


# ---------------------------------------------------------------------------
# JSON: session and login


@bp.get("/api/csrf")
def csrf():
    """The CSRF token of this browser's session (and the cookie that holds it)."""
    return {"csrf": auth.csrf_token(), "host": auth.is_host()}


@bp.post("/api/host/login")
def login_json():
    try:
        data = body()
    except BadRequest as exc:
        return error(str(exc), 400)
    ok, wait = auth.login(data.get("pin"))
    if ok:
        return {"ok": True, "csrf": auth.csrf_token()}
    if wait:
        resp, status = error(f"too many wrong PINs: wait {int(wait) + 1} s", 429, "rate-limit")
        resp.headers["Retry-After"] = str(int(wait) + 1)
        return resp, status
    return error("wrong PIN", 401, "login")


@bp.post("/api/host/logout")
def logout_json():
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
    return snap


@bp.get("/api/host/state")
@auth.host_required
def host_state():
    return _host_state()


@bp.get("/api/host/games")
@auth.host_required
def games():
    """The games this companion knows, with their player counts and options."""
    from ..games import available_games

    out = {}
    for name, g in available_games().items():
        out[name] = {"title": g.title, "min_players": g.min_players,
                     "max_players": g.max_players, "hides_scores": g.hides_scores,
                     "options": g.default_options()}
    return out


@bp.post("/api/host/new-game")
@auth.host_required
def new_game():
    svc = services()
    try:
        data = body()
        game = data.get("game")
        if not isinstance(game, str):
            raise BadRequest("'game' must be a game name")
        players = check_players(data.get("players"))
        options = data.get("options") or {}
        if not isinstance(options, dict):
            raise BadRequest("'options' must be an object")
    except BadRequest as exc:
        return error(str(exc), 400)
    from ..games import game_names

    if game not in game_names():
        return error(f"unknown game {game!r}; known: {', '.join(game_names())}", 400, "setup")
    game_id, err = call(svc.session.new_game, game, players, options)
    if err:
        return err
    return {"ok": True, "game_id": game_id, "state": _host_state()}


@bp.post("/api/host/event")
@auth.host_required
def log_event():
    """Log one event the host saw: ``{"event": {...}, "expected_version": n}``."""
    svc = services()
    try:
        data = body()
        event = data.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise BadRequest("'event' must be an object with a 'type'")
        expected = optional_int(data, "expected_version")
    except BadRequest as exc:
        return error(str(exc), 400)
    if svc.session.game is None:
        return error("no game is running: start a new game first", 409, "setup")
    update, err = call(svc.session.log, event, expected_version=expected)
    if err:
        return err
    return {"ok": True, "update": update, "state": _host_state()}


def _undo_redo(which: str):
    svc = services()
    try:
        expected = optional_int(body(), "expected_version")
    except BadRequest as exc:
        return error(str(exc), 400)
    if svc.session.game is None:
        return error("no game is running", 409, "setup")
    update, err = call(getattr(svc.session, which), expected_version=expected)
    if err:
        return err
    return {"ok": True, "update": update, "state": _host_state()}


@bp.post("/api/host/undo")
@auth.host_required
def undo():
    return _undo_redo("undo")


@bp.post("/api/host/redo")
@auth.host_required
def redo():
    return _undo_redo("redo")


@bp.post("/api/host/race")
@auth.host_required
def start_race():
    """Start the announced race the game asks for: ``{"countdown_ms": 3000}``."""
    svc = services()
    try:
        countdown = optional_int(body(), "countdown_ms")
        if countdown is not None and not 0 <= countdown <= 30_000:
            raise BadRequest("'countdown_ms' must be between 0 and 30000")
    except BadRequest as exc:
        return error(str(exc), 400)
    race, err = call(svc.session.start_race, countdown)
    if err:
        return err
    return {"ok": True, "race": race, "state": _host_state()}


@bp.post("/api/host/race/cancel")
@auth.host_required
def cancel_race():
    """Stop the live race without logging it (re-run it or log it by hand)."""
    _, err = call(services().session.cancel_race)
    if err:
        return err
    return {"ok": True, "state": _host_state()}


@bp.post("/api/host/press")
@auth.host_required
def host_press():
    """A virtual buzzer pressed from the console (any mode; millisecond accuracy)."""
    return virtual_press()


@bp.get("/api/host/join")
@auth.host_required
def join():
    svc = services()
    return {"urls": svc.join_urls, "qr_svg": qr_svg(svc.join_urls[0])}


@bp.get("/api/host/stats")
@auth.host_required
def stats():
    result, err = call(services().session.stats)
    return err or result


@bp.get("/api/host/export/<int:game_id>")
@auth.host_required
def export_game(game_id: int):
    text, err = call(services().session.export_game, game_id)
    if err:
        return err
    return Response(text, mimetype="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="game-{game_id}.jsonl"'})


@bp.get("/api/host/export.csv")
@auth.host_required
def export_csv():
    text, err = call(services().session.export_csv)
    if err:
        return err
    return Response(text, mimetype="text/csv", headers={
        "Content-Disposition": 'attachment; filename="games.csv"'})


@bp.post("/api/host/import")
@auth.host_required
def import_game():
    text = request.get_data(as_text=True)
    if not text.strip():
        return error("send a game file (JSON lines) as the body", 400)
    game_id, err = call(services().session.import_game, text)
    if err:
        return err
    return {"ok": True, "game_id": game_id}
