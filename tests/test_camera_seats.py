"""The camera in a game where everyone turns a card at once (Chomp!): each
player's spot taught from a card laid on it, four cards turned together
found each on its own spot and logged as that player's ``turn`` (the race
counts down from the last, as after the host's taps); what happens with no spot taught, a spot of
someone not playing, a doubtful card, a damaged seats file; the console's
seat route (docs/camera.md, "Seats")."""

from __future__ import annotations

import pytest

cv2 = pytest.importorskip("cv2")

import numpy as np  # noqa: E402

from companion.camera.base import Frame  # noqa: E402
from companion.camera.desk import CameraDesk  # noqa: E402
from companion.camera.faces import TeachError  # noqa: E402
from companion.camera.recognise import find_card  # noqa: E402
from companion.camera.seats import FILE, Seat, SeatSpotter, seats, teach_seat  # noqa: E402
from companion.camera.watcher import CameraWatcher, drawable  # noqa: E402
from companion.record.store import Store  # noqa: E402
from companion.table.session import TableSession  # noqa: E402
from tests.kit.camerakit import HeldCamera, lay_card, looks_of  # noqa: E402
from tests.kit.cardscenes import FRAME_NS, draw_faces, felt  # noqa: E402
from tests.kit.web import HostClient  # noqa: E402

MS = 1_000_000
CREATURES = ["shark", "seal", "big-fish", "little-fish", "shrimp", "plankton", "octopus", "eel"]
PLAYERS = ["ana", "bo", "cy", "di"]
#: each player's spot in a 480 x 360 frame (the camera over the middle of the table)
SPOTS = {"ana": (110, 95), "bo": (370, 95), "cy": (110, 268), "di": (370, 268)}


@pytest.fixture(scope="module")
def faces():
    return draw_faces(CREATURES, seed=1, shared=[("little-fish", "big-fish")])


@pytest.fixture(scope="module")
def looks(faces):
    return looks_of(faces)


def taught_seats(faces) -> dict[str, Seat]:
    """Each spot taught as the host does: one card laid on it, the frame's card."""
    table = felt(3)
    return {p: Seat.of(find_card(lay_card(table, faces["shark"], c))) for p, c in SPOTS.items()}


def round_frames(faces, cards: dict[str, str], table=None, stagger: int = 1):
    """A round: the felt, then each player's card landing ``stagger`` frames
    after the one before (a little off the spot and turned), then still.
    The frames and each card's first frame in place."""
    table = felt(3) if table is None else table
    frames, landed, now = [table] * 8, {}, table
    for k, (p, card) in enumerate(cards.items()):
        cx, cy = SPOTS[p]
        now = lay_card(now, faces[card], (cx + 9 * (k % 2) - 4, cy - 6 + 4 * k), 12 * k - 15)
        landed[p] = len(frames)
        frames += [now] * stagger
    return frames + [now] * 10, landed


def chomp_table(clock):
    s = TableSession(Store(":memory:"), clock=lambda: clock[0])
    s.new_game("chomp", [{"name": p, "buzzer": f"b{i}"} for i, p in enumerate(PLAYERS)])
    return s


def play(watcher, frames, t0: int, clock) -> None:
    for i, image in enumerate(frames):
        clock[0] = t0 + i * FRAME_NS + 40 * MS          # the frame reaches the watcher
        watcher.frame(Frame(t0 + i * FRAME_NS, image))


def test_a_spot_is_taught_from_a_card_laid_on_it_and_kept_by_name(tmp_path, faces):
    image = lay_card(felt(3), faces["seal"], (200, 150), 8)
    seat = teach_seat(tmp_path, "ana", image)
    assert abs(seat.x - 200) < 3 and abs(seat.y - 150) < 3 and 110 < seat.length < 125
    teach_seat(tmp_path, "bo", lay_card(felt(3), faces["seal"], (60, 300)))
    assert set(seats(tmp_path)) == {"ana", "bo"}
    with pytest.raises(TeachError, match="no card found"):
        teach_seat(tmp_path, "cy", felt(3))
    with pytest.raises(TeachError, match="name the player"):
        teach_seat(tmp_path, " ", image)
    (tmp_path / FILE).write_text("{not json")
    assert seats(tmp_path) == {}                 # taught again, never an error


def test_a_spot_is_taught_from_a_camera_over_the_whole_table(tmp_path, faces):
    """A 1920 x 1080 camera over the middle of the table: a card of 84 x 117
    pixels, under half a percent of the picture, is still found to teach
    its spot."""
    image = lay_card(cv2.resize(felt(2), (1920, 1080)), faces["seal"], (1300, 300), 5)
    seat = teach_seat(tmp_path, "ana", image)
    assert abs(seat.x - 1300) < 4 and abs(seat.y - 300) < 4


def test_four_cards_turned_together_are_four_flips_each_on_its_own_spot(faces):
    spotter = SeatSpotter(taught_seats(faces))
    cards = dict(zip(PLAYERS, ["shark", "eel", "little-fish", "big-fish"]))
    frames, landed = round_frames(faces, cards, stagger=0)       # all in one frame
    found = [s for i, f in enumerate(frames) for s in spotter.feed(i * FRAME_NS, f)]
    assert sorted(s.seat for s in found) == sorted(PLAYERS)
    for s in found:
        assert s.t_ns == landed[s.seat] * FRAME_NS
        cx, cy = SPOTS[s.seat]
        assert np.hypot(*(s.quad.mean(axis=0) - (cx, cy))) < 30


def test_the_camera_logs_each_players_card_as_hers_and_the_race_counts_down(faces, looks):
    clock = [50_000 * MS]
    s = chomp_table(clock)
    w = CameraWatcher(s, looks, seats=taught_seats(faces))
    assert set(drawable(s.game, s.state, "bo")) == set(CREATURES)
    cards = dict(zip(PLAYERS, ["plankton", "seal", "shrimp", "seal"]))
    t0 = clock[0]
    frames, landed = round_frames(faces, cards, stagger=2)
    play(w, frames, t0, clock)
    turns = [e for e in s.gamelog.events if e["type"] == "turn"]
    assert {e["player"]: e["card"] for e in turns} == cards
    assert not w.questions
    assert sorted(t for t, _, _ in w.logged) == sorted(t0 + f * FRAME_NS for f in landed.values())
    race = s.desk.race          # Chomp!'s race counts down to its GO from the last card
    assert race is not None and race.request.reason == "chomp"
    assert race.request.eligible == ("bo", "cy", "di")    # who can chomp ana's Plankton


def test_with_no_spot_taught_the_camera_logs_nothing_and_the_console_says_so(tmp_path, faces,
                                                                             looks):
    clock = [50_000 * MS]
    s = chomp_table(clock)
    desk = CameraDesk(s, HeldCamera(), tmp_path)       # the console's view of the seats
    w = desk.watcher
    w.taught = looks
    frames, _ = round_frames(faces, dict(zip(PLAYERS, ["shark"] * 4)))
    play(w, frames, clock[0], clock)
    assert not [e for e in s.gamelog.events if e["type"] == "turn"] and not w.questions
    assert desk.seats() == [{"player": p, "taught": False} for p in PLAYERS]


def test_a_spot_of_someone_not_playing_is_not_looked_at(faces, looks):
    clock = [50_000 * MS]
    s = TableSession(Store(":memory:"), clock=lambda: clock[0])
    s.new_game("chomp", [{"name": p, "buzzer": None} for p in ("ana", "bo", "cy")])
    w = CameraWatcher(s, looks, seats=taught_seats(faces))       # di's spot too
    frames, _ = round_frames(faces, {"ana": "shark", "bo": "seal", "di": "eel"})
    play(w, frames, clock[0], clock)
    turns = {e["player"]: e["card"] for e in s.gamelog.events if e["type"] == "turn"}
    assert turns == {"ana": "shark", "bo": "seal"} and not w.questions


def test_a_doubtful_card_asks_whose_it_is_and_the_tap_logs_her_turn(faces, looks):
    clock = [50_000 * MS]
    s = chomp_table(clock)
    w = CameraWatcher(s, looks, seats=taught_seats(faces), threshold=1.01)   # ask everything
    frames, landed = round_frames(faces, {"cy": "octopus"})
    t0 = clock[0]
    play(w, frames, t0, clock)
    q = w.questions[0]
    assert q.seat == "cy" and q.choices[0][0] == "octopus" and q.to_json()["seat"] == "cy"
    w.answer(q.id, "octopus")
    assert s.gamelog.events[-1] == {"type": "turn", "player": "cy", "card": "octopus"}


def test_the_console_teaches_a_spot_by_a_tap(session, tmp_path, faces):
    from companion.web import create_app
    from tests.kit.web import PIN

    class Held:
        """A camera holding one frame (the card laid on a spot)."""
        name, error, live = "held", None, False

        def start(self, on_frame):
            self.on_frame = on_frame

        def join(self, timeout=None):
            return False

        def close(self):
            pass

    session.new_game("chope", [{"name": p, "buzzer": None} for p in ("ana", "bo")])
    cam = CameraDesk(session, Held(), tmp_path / "faces").start()
    app = create_app({"PIN": PIN, "TESTING": True}, session=session, camera=cam)
    try:
        host = HostClient(app.test_client())
        assert host.get("/api/host/camera").get_json()["seats"] == []       # one pile
        r = host.post("/api/host/camera/seat", {"player": "ana"})
        assert r.status_code == 400 and "not turned by seat" in r.get_json()["error"]
        session.new_game("chomp", [{"name": p, "buzzer": None} for p in ("ana", "bo", "cy")])
        assert [x["taught"] for x in host.get("/api/host/camera").get_json()["seats"]] == [
            False] * 3
        r = host.post("/api/host/camera/seat", {"player": "bo"})
        assert r.status_code == 409                  # no picture yet
        cam.source.on_frame(Frame(1, lay_card(felt(3), faces["shark"], SPOTS["bo"])))
        r = host.post("/api/host/camera/seat", {"player": "bo"})
        assert r.status_code == 200, r.get_json()
        assert [x["taught"] for x in r.get_json()["camera"]["seats"]] == [False, True, False]
        assert set(seats(tmp_path / "faces")) == {"bo"} and cam.is_teaching()
        for bad in ({"player": 7}, {"player": ""}, {}):
            r = host.post("/api/host/camera/seat", bad)
            assert r.status_code == 400 and r.get_json()["field"] == "player"
        r = host.post("/api/host/camera/seat", {"player": "zed"})
        assert r.status_code == 400 and "not a player" in r.get_json()["error"]
    finally:
        app.extensions["companion"].close()
