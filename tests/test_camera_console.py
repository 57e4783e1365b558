"""The console's Camera panel over Flask's test client (companion/web/camera.py,
companion/camera/desk.py) and ``companion serve --camera`` (docs/camera.md):
who may see the preview, teaching by a tap, a question's tap, the Undo of a
card the camera logged, and the bad requests."""

from __future__ import annotations

import random

import pytest

cv2 = pytest.importorskip("cv2")

from companion.camera import CameraError, parse_camera  # noqa: E402
from companion.camera.base import Frame  # noqa: E402
from companion.camera.clip import ClipSource  # noqa: E402
from companion.camera.desk import CameraDesk  # noqa: E402
from companion.camera.flips import Settled  # noqa: E402
from companion.camera.recognise import find_card, straighten  # noqa: E402
from companion.cli import main  # noqa: E402
from tests.kit.cardscenes import draw_faces, felt, photo_of, render_reveals  # noqa: E402
from tests.kit.web import HostClient, make_app  # noqa: E402

MS = 1_000_000
CARDS = ["table:red", "table:orange", "mynah", "food:laksa", "food:otah"]
PLAYERS = [{"name": n, "buzzer": None} for n in ("ana", "bo", "cy")]


@pytest.fixture(scope="module")
def faces():
    return draw_faces(CARDS, shared=[("table:red", "table:orange")])


@pytest.fixture(scope="module")
def clip_folder(tmp_path_factory, faces):
    """The Mynah's clip, rendered and saved once: every test only reads it."""
    return render_reveals(["mynah"], faces, seed=1).save(tmp_path_factory.mktemp("clip"))


@pytest.fixture
def cam(session, tmp_path, clip_folder):
    session.new_game("chope", PLAYERS)
    return CameraDesk(session, ClipSource(clip_folder, start_ns=0), tmp_path / "faces")


@pytest.fixture
def camapp(session, cam):
    from companion.web import create_app
    from tests.kit.web import PIN

    app = create_app({"PIN": PIN, "TESTING": True}, session=session, camera=cam)
    yield app
    app.extensions["companion"].close()


@pytest.fixture
def camhost(camapp):
    return HostClient(camapp.test_client())


def _hold(cam, face, t_ns=0):
    """The host holds ``face`` under the camera: the newest frame."""
    cam.frame(Frame(t_ns, photo_of(face, random.Random(t_ns))))


def test_the_camera_spec_names_a_camera_or_a_clip_and_says_what_is_wrong(tmp_path,
                                                                         clip_folder,
                                                                         monkeypatch):
    monkeypatch.delenv("COMPANION_CAMERA", raising=False)
    assert parse_camera(None) is None and parse_camera("none") is None
    assert parse_camera("picamera") == ("picamera", {})
    assert parse_camera("webcam") == ("webcam", {})
    assert parse_camera("webcam:2") == ("webcam", {"device": 2})
    assert parse_camera(str(clip_folder)) == ("clip", {"path": str(clip_folder),
                                                       "realtime": True})
    with pytest.raises(CameraError, match="no clip at"):
        parse_camera(str(tmp_path / "missing.avi"))
    with pytest.raises(CameraError, match="unknown camera 'potato'"):
        parse_camera("potato")
    monkeypatch.setenv("COMPANION_CAMERA", str(clip_folder))
    assert parse_camera(None)[0] == "clip"


def test_serve_with_a_missing_clip_stops_with_one_clear_line(tmp_path, capsys):
    import io

    out, err = io.StringIO(), io.StringIO()
    rc = main(["serve", "--port", "0", "--db", str(tmp_path / "t.db"), "--pin", "246810",
               "--source", "mock", "--camera", str(tmp_path / "nothing.avi")],
              stdout=out, stderr=err)
    printed = capsys.readouterr().out + out.getvalue() + err.getvalue()
    assert rc == 2
    assert "no clip at" in printed and "nothing.avi" in printed


def test_a_table_server_runs_the_camera_named_and_the_console_sees_it(tmp_path, clip_folder):
    from companion.app import TableServer

    t = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "live.db"),
                    pin="246810", source="mock", demo=True, threads=8,
                    camera=str(clip_folder))
    try:
        t.open()
        assert t.camera is not None and t.camera.source.name == "clip"
        assert t.camera.folder == tmp_path / "faces" / "default"
        assert "Camera: clip" in t.banner()
        t.start()
        from tests.kit.helpers import wait_for

        assert wait_for(lambda: t.camera.frames > 10)
    finally:
        t.close()


def test_only_the_logged_in_host_sees_the_camera(camapp, camhost, cam, faces):
    _hold(cam, faces["mynah"])
    phone = camapp.test_client()
    for url in ("/api/host/camera", "/api/host/camera/preview.jpg"):
        r = phone.get(url)
        assert r.status_code == 401 and r.json["rule"] == "login"
    csrf = phone.get("/api/csrf").json["csrf"]
    r = phone.post("/api/host/camera/teach", json={"card": "mynah"},
                   headers={"X-CSRF-Token": csrf})
    assert r.status_code == 401
    r = phone.post("/api/host/camera/teach", json={"card": "mynah"})
    assert r.status_code == 403 and r.json["rule"] == "csrf"
    r = camhost.client.post("/api/host/camera/teach", json={"card": "mynah"})
    assert r.status_code == 403              # the host too sends the token
    r = camhost.get("/api/host/camera/preview.jpg")
    assert r.status_code == 200 and r.mimetype == "image/jpeg"
    assert r.headers["Cache-Control"].startswith("no-store")
    img = cv2.imdecode(__import__("numpy").frombuffer(r.data, "uint8"), cv2.IMREAD_COLOR)
    assert img.shape[1] == 320
    # the outline found is drawn on it: the preview's yellow line
    yellow = (img[:, :, 2] > 200) & (img[:, :, 1] > 180) & (img[:, :, 0] < 90)
    assert yellow.sum() > 200


def test_no_frame_yet_and_no_camera_are_said_plainly(session, camhost):
    r = camhost.get("/api/host/camera/preview.jpg")
    assert r.status_code == 503 and "no picture yet" in r.json["error"]
    r = camhost.post("/api/host/camera/teach", {"card": "mynah"})
    assert r.status_code == 409 and "no picture yet" in r.json["error"]
    bare = HostClient(make_app(session).test_client())
    assert bare.get("/api/host/camera").json == {"on": False}
    r = bare.post("/api/host/camera/teach", {"card": "mynah"})
    assert r.status_code == 404 and r.json["rule"] == "camera"


@pytest.mark.parametrize("url, body, field", [
    ("/api/host/camera/teach", {}, "card"),
    ("/api/host/camera/teach", {"card": 3}, "card"),
    ("/api/host/camera/teach", {"card": "x" * 200}, "card"),
    ("/api/host/camera/teaching", {"on": "yes"}, "on"),
    ("/api/host/camera/answer", {"card": "mynah"}, "id"),
    ("/api/host/camera/answer", {"id": "1", "card": "mynah"}, "id"),
    ("/api/host/camera/answer", {"id": 1, "card": ["mynah"]}, "card"),
    ("/api/host/camera/undo", {"id": True}, "id"),
])
def test_malformed_camera_requests_are_400_naming_the_field(camhost, url, body, field):
    r = camhost.post(url, body)
    assert r.status_code == 400, r.json
    assert r.json["field"] == field


def test_a_body_that_is_not_an_object_or_too_big_is_refused(camhost):
    r = camhost.client.post("/api/host/camera/teach", data="[1]", content_type="application/json",
                            headers=camhost.headers())
    assert r.status_code == 400
    r = camhost.post("/api/host/camera/teach", {"card": "mynah", "pad": "x" * 2000})
    assert r.status_code == 413


def test_the_host_teaches_a_face_by_a_tap_and_can_teach_it_again(camhost, cam, faces, tmp_path):
    listed = camhost.get("/api/host/camera").json["faces"]
    chope = {f["card"]: f for f in listed}
    assert len(chope) == 19                          # Chope!'s faces, each once
    assert chope["table:red"]["name"] == "Red Table" and not chope["table:red"]["taught"]
    r = camhost.post("/api/host/camera/teach", {"card": "no-such-card"})
    assert r.status_code == 400 and "not one of this game's cards" in r.json["error"]
    cam.frame(Frame(1, felt(3)))                     # nothing under the camera
    r = camhost.post("/api/host/camera/teach", {"card": "mynah"})
    assert r.status_code == 400 and "no card found" in r.json["error"]
    _hold(cam, faces["mynah"], 2)
    r = camhost.post("/api/host/camera/teach", {"card": "mynah"})
    assert r.status_code == 200, r.json
    got = {f["card"]: f["taught"] for f in r.json["camera"]["faces"]}
    assert got["mynah"] and not got["food:laksa"]
    assert r.json["camera"]["teaching"]              # the camera logs nothing meanwhile
    first = (tmp_path / "faces" / "mynah.png").read_bytes()
    _hold(cam, faces["food:laksa"], 3)               # the wrong card held: teach it again
    assert camhost.post("/api/host/camera/teach", {"card": "mynah"}).status_code == 200
    assert (tmp_path / "faces" / "mynah.png").read_bytes() != first
    r = camhost.post("/api/host/camera/teaching", {"on": False})
    assert not r.json["camera"]["teaching"]


def _settle(cam, face, t_ns):
    photo = photo_of(face)
    quad = find_card(photo)
    cam.watcher.settled(Settled(t_ns, t_ns, quad, straighten(photo, quad)))


def _teach_all(cam, faces):
    for i, (name, face) in enumerate(faces.items()):
        _hold(cam, face, 10 + i)
        cam.teach(name)
    cam.teaching(False)


def test_a_doubtful_card_is_asked_and_one_tap_logs_it_at_its_flip(camhost, cam, session,
                                                                  faces):
    _teach_all(cam, faces)
    cam.watcher.threshold = 1.01                     # nothing is sure enough: ask
    flip = session.clock() - 200 * MS
    _settle(cam, faces["table:orange"], flip)
    q = camhost.get("/api/host/camera").json["questions"][0]
    assert 2 <= len(q["choices"]) <= 3 and q["choices"][0]["card"] == "table:orange"
    r = camhost.post("/api/host/camera/answer", {"id": q["id"] + 99, "card": "table:orange"})
    assert r.status_code == 404
    r = camhost.post("/api/host/camera/answer", {"id": q["id"], "card": "table:orange"})
    assert r.status_code == 200, r.json
    assert session.gamelog.events[-1] == {"type": "flip", "card": "table:orange"}
    assert session.desk.race is not None and session.desk.race.logged_ns == flip
    cam_state = r.json["camera"]
    assert cam_state["questions"] == []
    assert cam_state["logs"][0]["card"] == "table:orange" and not cam_state["logs"][0]["auto"]


def test_none_of_these_logs_nothing(camhost, cam, session, faces):
    _teach_all(cam, faces)
    cam.watcher.threshold = 1.01
    _settle(cam, faces["food:laksa"], session.clock())
    before = session.version
    q = camhost.get("/api/host/camera").json["questions"][0]
    r = camhost.post("/api/host/camera/answer", {"id": q["id"], "card": None})
    assert r.status_code == 200 and r.json["camera"]["questions"] == []
    assert session.version == before


def test_an_answer_the_tracker_refuses_is_a_400_and_the_question_stays(camhost, cam, session,
                                                                       faces):
    _teach_all(cam, faces)
    cam.watcher.threshold = 1.01
    _settle(cam, faces["food:laksa"], session.clock())
    q = camhost.get("/api/host/camera").json["questions"][0]
    r = camhost.post("/api/host/camera/answer", {"id": q["id"], "card": "food:unicorn"})
    assert r.status_code == 400
    assert [x["id"] for x in camhost.get("/api/host/camera").json["questions"]] == [q["id"]]


def test_a_card_the_camera_logged_can_be_undone_while_it_is_the_last(camhost, cam, session,
                                                                     faces):
    _teach_all(cam, faces)
    _settle(cam, faces["food:laksa"], session.clock())
    logs = camhost.get("/api/host/camera").json["logs"]
    assert logs[0]["card"] == "food:laksa" and logs[0]["auto"] and logs[0]["undoable"]
    assert session.snapshot()["view"]["face_up"] == ["food:laksa"]
    r = camhost.post("/api/host/camera/undo", {"id": logs[0]["id"]})
    assert r.status_code == 200, r.json
    assert session.snapshot()["view"]["face_up"] == []
    assert r.json["camera"]["logs"][0]["undone"] and not r.json["camera"]["logs"][0]["undoable"]
    assert camhost.post("/api/host/camera/undo", {"id": logs[0]["id"]}).status_code == 409
    _settle(cam, faces["food:otah"], session.clock())
    otah = camhost.get("/api/host/camera").json["logs"][0]
    session.log({"type": "stop"})                    # the host logged something since
    r = camhost.post("/api/host/camera/undo", {"id": otah["id"]})
    assert r.status_code == 409 and "no longer the last" in r.json["error"]
    assert camhost.post("/api/host/camera/undo", {"id": 999}).status_code == 404


def test_while_the_host_teaches_a_card_held_up_is_never_logged(cam, session, faces):
    _teach_all(cam, faces)
    cam.teaching(True)
    before = session.version
    clip = render_reveals(["food:laksa"], faces, seed=4)
    for img, t in zip(clip.frames, clip.times):
        cam.frame(Frame(session.clock() + t, img))
    assert session.version == before and cam.watcher.logged == []
    cam.teaching(False)
    for img, t in zip(clip.frames, clip.times):
        cam.frame(Frame(session.clock() + t, img))
    assert [c for _, c, _ in cam.watcher.logged] == ["food:laksa"]
