"""The console's Camera panel: ``/api/host/camera...``, the logged-in host's only.

The camera beside the table (:class:`~companion.camera.desk.CameraDesk`,
``companion serve --camera``) is the host's: its preview is served to the
logged-in host alone (a player's phone gets 401, like every host route),
made in memory from the newest frame and never stored; teaching, the
questions' taps and the Undo of a card it logged are the host's changes
(the CSRF token, like every one). With no camera the status says
``{"on": false}`` and the rest answer 404 (docs/web.md, "The Camera panel").
"""

from __future__ import annotations

from flask import Blueprint, Response

from ..camera.desk import CameraBusy, ClipError, TeachError
from .api import BadRequest, body, need_game, optional_int, services
from .policy import HOST, allow

bp = Blueprint("camera", __name__)

#: the largest body a camera tap sends (``{"id", "card"}``)
TAP_MAX_BYTES = 1024


def _camera():
    cam = services().camera
    if cam is None:
        raise BadRequest("no camera at this table: start it with companion serve --camera",
                         rule="camera", status=404)
    return cam


def _card(data: dict, key: str = "card", none_ok: bool = False) -> str | None:
    value = data.get(key)
    if value is None and none_ok:
        return None
    if not isinstance(value, str) or not value or len(value) > 80:
        raise BadRequest(f"{key!r} must be a card's name", key)
    return value


def _status() -> dict:
    cam = services().camera
    return {"on": False} if cam is None else cam.status()


@bp.get("/api/host/camera")
@allow(HOST)
def status():
    """The camera's state: its source, frames per second, the game's faces
    (taught or not), the open questions and the cards it logged."""
    return _status()


@bp.get("/api/host/camera/preview.jpg")
@allow(HOST)
def preview():
    """The newest frame, small, with the outline found (never stored)."""
    jpeg = _camera().preview_jpeg()
    if jpeg is None:
        raise BadRequest("the camera has sent no picture yet", rule="camera", status=503)
    return Response(jpeg, mimetype="image/jpeg",
                    headers={"Cache-Control": "no-store, private", "Pragma": "no-cache"})


@bp.post("/api/host/camera/teaching")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def teaching():
    """``{"on": true}``: the host is teaching (the camera logs nothing); false: done."""
    on = body().get("on")
    if not isinstance(on, bool):
        raise BadRequest("'on' must be true or false", "on")
    _camera().teaching(on)
    return {"ok": True, "camera": _status()}


@bp.post("/api/host/camera/teach")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def teach():
    """``{"card": name}``: the card under the camera now is that face."""
    cam = _camera()
    card = _card(body())
    need_game()
    return _taught(lambda: cam.teach(card), "card")


def _taught(teach, field: str) -> dict:
    """``teach()`` done: the camera's state; its refusals said naming ``field``."""
    try:
        teach()
    except TeachError as exc:
        raise BadRequest(str(exc), field, rule="camera") from None
    except CameraBusy as exc:
        raise BadRequest(str(exc), rule="camera", status=409) from None
    return {"ok": True, "camera": _status()}


@bp.post("/api/host/camera/seat")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def seat():
    """``{"player": name}``: the card lying on the table now marks that
    player's spot (a game where everyone turns a card at once)."""
    cam = _camera()
    player = body().get("player")
    if not isinstance(player, str) or not player or len(player) > 80:
        raise BadRequest("'player' must be a player's name", "player")
    need_game()
    return _taught(lambda: cam.teach_seat(player), "player")


@bp.post("/api/host/camera/answer")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def answer():
    """``{"id": n, "card": name}``: the question's face the host tapped,
    logged at the flip the camera saw; ``"card": null``: none of these."""
    cam = _camera()
    data = body()
    qid = optional_int(data, "id")
    if qid is None:
        raise BadRequest("'id' must be a question's id", "id")
    card = _card(data, none_ok=True)
    need_game()
    try:
        update = cam.answer(qid, card)
    except KeyError:
        raise BadRequest(f"no camera question {qid}: it was answered or the game moved on",
                         "id", rule="camera", status=404) from None
    return {"ok": True, "update": update, "camera": _status()}


@bp.post("/api/host/camera/undo")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def undo():
    """``{"id": n}``: undo a card the camera logged, while it is the last event."""
    cam = _camera()
    lid = optional_int(body(), "id")
    if lid is None:
        raise BadRequest("'id' must be a camera log's id", "id")
    need_game()
    try:
        update = cam.undo(lid)
    except KeyError:
        raise BadRequest(f"no camera log {lid}", "id", rule="camera", status=404) from None
    except CameraBusy as exc:
        raise BadRequest(str(exc), rule="camera", status=409) from None
    return {"ok": True, "update": update, "camera": _status()}


@bp.post("/api/host/camera/keep")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def keep_clip():
    """Keep the last seconds the camera saw as a clip (a disputed race)."""
    cam = _camera()
    try:
        clip = cam.keep_clip()
    except ClipError as exc:
        raise BadRequest(str(exc), rule="camera", status=409) from None
    except OSError as exc:
        raise BadRequest(f"could not write the clip: {exc}", rule="camera", status=500) from None
    return {"ok": True, "clip": clip, "camera": _status()}


def _clip_call(call):
    try:
        return call()
    except ClipError as exc:
        raise BadRequest(str(exc), "id", rule="camera", status=404) from None


@bp.get("/api/host/camera/clips/<clip_id>")
@allow(HOST)
def clip(clip_id: str):
    """A kept clip: its summary and each frame's time (ms from its first)."""
    cam = _camera()
    return _clip_call(lambda: cam.clip(clip_id))


@bp.get("/api/host/camera/clips/<clip_id>/<int:n>.jpg")
@allow(HOST)
def clip_frame(clip_id: str, n: int):
    """The ``n``th frame (from 1) of a kept clip."""
    cam = _camera()
    jpeg = _clip_call(lambda: cam.clip_frame(clip_id, n))
    return Response(jpeg, mimetype="image/jpeg",
                    headers={"Cache-Control": "private, max-age=3600"})


@bp.post("/api/host/camera/clips/delete")
@allow(HOST, max_bytes=TAP_MAX_BYTES)
def delete_clip():
    """``{"id": clip}``: delete a kept clip, every frame of it."""
    cam = _camera()
    clip_id = body().get("id")
    if not isinstance(clip_id, str) or not clip_id or len(clip_id) > 40:
        raise BadRequest("'id' must be a kept clip's id", "id")
    _clip_call(lambda: cam.delete_clip(clip_id))
    return {"ok": True, "camera": _status()}


__all__ = ["bp"]
