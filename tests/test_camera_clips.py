"""Clips the host keeps (companion/camera/clips.py, docs/camera.md "Clips
the host keeps"): the last seconds held in memory only, written as a clip
in the clip format when the host asks (and played back through the clip
source), listed, looked at frame by frame and deleted on the console; bad
ids and a player's phone refused."""

from __future__ import annotations

import pytest

cv2 = pytest.importorskip("cv2")

from companion.camera.base import Frame  # noqa: E402
from companion.camera.clip import ClipSource  # noqa: E402
from companion.camera.clips import (ClipError, FrameRing, clip_path, delete, frame_of,  # noqa: E402
                                    keep, kept)
from companion.camera.desk import CameraDesk  # noqa: E402
from tests.kit.camerakit import HeldCamera  # noqa: E402
from tests.kit.cardscenes import felt  # noqa: E402
from tests.kit.web import PIN, HostClient  # noqa: E402

MS = 1_000_000
S = 1_000 * MS


def test_the_ring_holds_only_the_last_seconds_in_memory():
    ring = FrameRing(seconds=1)
    image = felt(1)
    for i in range(60):                                  # 2 s at 30 frames a second
        ring.put(i * S // 30, image)
    frames = ring.frames()
    assert frames[-1][0] == 59 * S // 30
    assert frames[0][0] >= frames[-1][0] - S and 29 <= len(frames) <= 31
    assert abs(ring.span_s() - 1.0) < 0.05
    assert all(jpeg[:2] == b"\xff\xd8" for _, jpeg in frames)     # JPEG, not raw pixels


def test_a_kept_clip_is_the_clip_format_and_plays_back(tmp_path):
    ring = FrameRing()
    for i in range(10):
        ring.put(1_000 * S + i * 33 * MS, felt(i))
    about = {"game_id": 3, "line": "Chope! Bo chopes it", "kept_at": "2026-12-06 12:00:00"}
    clip = keep(tmp_path, ring.frames(), about, "20261206-120000")
    assert clip["id"] == "20261206-120000-1" and clip["frames"] == 10
    assert clip["seconds"] == 0.3 and clip["line"] == "Chope! Bo chopes it"
    again = keep(tmp_path, ring.frames(), about, "20261206-120000")
    assert again["id"] == "20261206-120000-2"                     # never over another
    played = list(ClipSource(clip_path(tmp_path, clip["id"]), start_ns=0).frames())
    assert [f.t_ns for f in played] == [i * 33 * MS for i in range(10)]
    assert played[0].image.shape == felt(0).shape
    assert [c["id"] for c in kept(tmp_path)] == [again["id"], clip["id"]]
    assert kept(tmp_path, game_id=4) == []
    assert frame_of(tmp_path, clip["id"], 1)[:2] == b"\xff\xd8"
    delete(tmp_path, clip["id"])
    assert [c["id"] for c in kept(tmp_path)] == [again["id"]]
    with pytest.raises(ClipError, match="nothing|no picture"):
        keep(tmp_path, [], about, "20261206-120001")


@pytest.mark.parametrize("bad", ["../faces", "20261206-120000-1/../..", "", "x" * 20, None])
def test_a_clip_id_that_is_not_one_is_refused(tmp_path, bad):
    with pytest.raises(ClipError):
        clip_path(tmp_path, bad)


def test_the_console_keeps_looks_at_and_deletes_a_clip(session, tmp_path):
    from companion.web import create_app

    session.new_game("chope", [{"name": p, "buzzer": None} for p in ("ana", "bo")])
    held = HeldCamera()
    cam = CameraDesk(session, held, tmp_path / "faces", clips=tmp_path / "clips")
    app = create_app({"PIN": PIN, "TESTING": True}, session=session, camera=cam)
    try:
        host = HostClient(app.test_client())
        r = host.post("/api/host/camera/keep", {})
        assert r.status_code == 409 and "no picture" in r.get_json()["error"]
        for i in range(12):
            cam.frame(Frame(5 * S + i * 50 * MS, felt(i % 3)))
        status = host.get("/api/host/camera").get_json()
        assert status["held_s"] == 0.6 and status["clips"] == []
        r = host.post("/api/host/camera/keep", {})
        assert r.status_code == 200, r.get_json()
        clip = r.get_json()["clip"]
        assert clip["frames"] == 12 and r.get_json()["camera"]["clips"][0]["id"] == clip["id"]
        got = host.get(f"/api/host/camera/clips/{clip['id']}").get_json()
        assert got["times_ms"] == [i * 50.0 for i in range(12)]
        r = host.get(f"/api/host/camera/clips/{clip['id']}/12.jpg")
        assert r.status_code == 200 and r.mimetype == "image/jpeg"
        assert host.get(f"/api/host/camera/clips/{clip['id']}/13.jpg").status_code == 404
        assert host.get("/api/host/camera/clips/nope").status_code == 404
        phone = app.test_client()                       # a player's phone: no clip for it
        assert phone.get(f"/api/host/camera/clips/{clip['id']}/1.jpg").status_code == 401
        for bad in ({}, {"id": 7}, {"id": "x" * 41}):
            r = host.post("/api/host/camera/clips/delete", bad)
            assert r.status_code == 400 and r.get_json()["field"] == "id"
        assert host.post("/api/host/camera/clips/delete", {"id": "../faces"}).status_code == 404
        r = host.post("/api/host/camera/clips/delete", {"id": clip["id"]})
        assert r.status_code == 200 and r.get_json()["camera"]["clips"] == []
        assert not any((tmp_path / "clips").iterdir())
    finally:
        app.extensions["companion"].close()
