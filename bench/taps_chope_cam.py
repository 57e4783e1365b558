"""Chope! taps with the camera (issue 34, ``host_taps_per_card_chope_cam``):
the host's taps per card when a camera over the reveal spot logs the cards.

``CARDS`` cards drawn from a seeded shuffle of the real deck (Chope!'s 92
cards for three players) are rendered into one clip with the kit's default
:class:`~tests.kit.cardscenes.Look` (glare, hands carrying cards in and
passing over them, fingertips left on a card, sleeves, a colour cast, a
tilted camera, the light drifting; two pairs of faces share their art:
``SHARED``), a card every ~2.2-2.8 s (``GAP_S`` from a card lying to the next
one sliding in). The table serves it as ``companion serve --camera <clip>``
does (:func:`companion.camera.desk.open_desk`, the clip played at its own
pace), its faces taught first on the console's Camera panel while each card
is held under a camera (:class:`~tests.kit.camerakit.HeldCamera`): teaching
is a one-time setup, its taps counted apart (``kinds["teach_taps"]``).

The players slam their buzzers on the clip's time (``SLAM_NS`` after a
Table or a Mynah lies: the other players for a Table, everyone for a
Mynah). The host taps only what the table needs, on the phone console:
"Stop and claim" once the bust odds reach ``STOP_ODDS``, a doubtful race's
answer, the card kept after a bust or lost to a Mynah, the camera's
question (the true face when it is offered, else "None of these" and the
card by hand), a card the camera has not logged ``MISS_S`` of clip after
it lay logged by hand with its button (a missed card), and the camera's
Undo for a card it logged as the wrong face or logged again after the
host's hand log. The figure is the host's taps per card (teaching apart).

The clip's card order is fixed: the host's stops change whose turn it is
(the next card is the next player's), never which card comes. Every card
of the clip is one the deck still holds (a shuffle of it), so a card is
refused only while a bust's choice waits for the host's tap: the camera
then counts it refused, and the host logs it by hand once the choice is
made (a missed card, counted so)."""

from __future__ import annotations

import random
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.tapkit import DEADLINE_S, Host, event_json, host_page

GAME = "chope_cam"
PLAYERS = ["Ana", "Bo", "Cy"]
TABLE = {"players": PLAYERS, "demo": True, "demo_game": "chope", "threads": 16}
CARDS = 24
STOP_ODDS = 0.3
SEED = 24
GAP_S = (2.0, 2.5)
MISS_S = 1.2
MS = 1_000_000
S = 1_000 * MS
SLAM_NS = 450 * MS
LEAD_FRAMES = 60
#: the host's taps that are the camera's doing (the rest are the game's: stops, choices, races)
CAMERA_TAPS = ("camera question", "camera none of these", "card by hand", "camera undo")


@dataclass
class Tally:
    """What became of each card of the clip: ``how[i]`` is ``auto``,
    ``asked`` or ``hand`` once it is logged."""

    reveals: list
    first_ns: int
    how: dict = field(default_factory=dict)
    wrong: int = 0
    again: int = 0
    dismissed: set = field(default_factory=set)
    seen_logs: int = 0

    def nearest(self, t_ns: int) -> int:
        """The clip's card whose flip is nearest ``t_ns`` (the table's clock)."""
        return min(range(len(self.reveals)),
                   key=lambda i: abs(self.first_ns + self.reveals[i].t_ns - t_ns))


def missing() -> str | None:
    """Why this player cannot run here (None: it can)."""
    try:
        import cv2  # noqa: F401
    except ImportError:
        return "no OpenCV (pip install opencv-python-headless): the camera needs it"
    return None


def deal(seed: int = SEED) -> list[str]:
    """``CARDS`` cards off the top of the real deck, shuffled."""
    from companion.games import get_game

    deck = get_game("chope").setup(PLAYERS, {})["deck"]
    cards = [c for c, n in sorted(deck.items()) for _ in range(n)]
    random.Random(seed).shuffle(cards)
    return cards[:CARDS]


def render(folder: Path, seed: int = SEED):
    """The faces (two pairs share their art) and the clip, saved as a frame folder."""
    from tests.kit.cardscenes import (
        FRAME_NS,
        SHARED,
        draw_faces,
        game_deck,
        render_reveals,
    )

    faces = draw_faces(list(game_deck("chope")), seed=0, shared=SHARED["chope"])
    rng = random.Random(seed)
    gaps = [round(rng.uniform(*GAP_S) * S) for _ in range(CARDS)]
    clip = render_reveals(deal(seed), faces, seed=seed, gaps_ns=gaps, lead_frames=LEAD_FRAMES)
    clip.save(folder)
    assert clip.times[1] - clip.times[0] == FRAME_NS
    return faces, clip


def teach(browser, table, faces: dict, folder: Path) -> int:
    """The host teaches every face on the console, each card held under the
    camera in turn; the taps it took (opening and closing the list too)."""
    from companion.camera.desk import CameraDesk
    from tests.kit.camerakit import HeldCamera
    from tests.kit.cardscenes import photo_of

    cam = CameraDesk(table.session, HeldCamera(), folder)
    table.services.camera = cam
    cam.start()
    ctx, page = host_page(browser, table)
    try:
        host = Host(page, table)
        page.wait_for_selector("#camera-card:not([hidden]) #cam-teach summary")
        tap(host, "#cam-teach summary", "teach")
        for name in [f["card"] for f in cam.faces()]:
            cam.source.show(photo_of(faces[name]))
            seen = cam.frames
            _until(lambda s=seen: cam.frames >= s + 2, "the held camera's frames")
            tap(host, f"#cam-faces button[data-card='{name}']", "teach")
            page.wait_for_selector(f"#cam-faces button.taught[data-card='{name}']")
        tap(host, "#cam-teach summary", "teach")
        _until(lambda: not cam.is_teaching(), "teaching to end")
        return host.taps
    finally:
        ctx.close()
        cam.close()
        table.services.camera = None


def _until(ok, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not ok():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited too long for {what}")
        time.sleep(0.02)


def slams(table, desk, reveals, stop: threading.Event, rng: random.Random) -> None:
    """The players' buzzers, on the clip's time: ``SLAM_NS`` after a Table
    lies the players other than the flipper slam, after a Mynah everyone,
    in a random order 30 ms apart."""
    for r in reveals:
        if r.card.startswith("food:"):
            continue
        at = desk.first_ns + r.t_ns + SLAM_NS
        while not stop.is_set() and (left := at - time.monotonic_ns()) > 0:
            time.sleep(min(0.01, left / S))
        if stop.is_set():
            return
        state = table.session.state
        flipper = state["players"][state["turn"]]
        who = [p for p in PLAYERS if r.card == "mynah" or p != flipper]
        for p in rng.sample(who, len(who)):
            table.source.press(p)
            time.sleep(0.03)
        time.sleep(0.05)
        for p in who:
            table.source.release(p)


def tap(host: Host, selector: str, kind: str) -> bool:
    """``host.tap`` when the button is (still) there: the camera may log a
    card between the table's snapshot and the tap, and a race then takes
    the buttons away (False: no tap, the next look decides again)."""
    from playwright.sync_api import Error

    try:
        host.page.locator(selector).first.wait_for(state="visible", timeout=3_000)
        host.tap(selector, kind)
    except Error:
        if host.kinds.get(kind):
            host.kinds[kind] -= 1
            host.taps -= 1
        return False
    return True


def tap_on(host: Host, hs: dict, selector: str, kind: str) -> bool:
    """Tap ``selector`` on the console once it shows the table's version
    ``hs`` (see :func:`tap`), then wait until the tap reached the table (its
    version moved on). A host's next look is at the table the tap made: the
    loop once read the table before its tap on a bust's Keep had landed,
    tapped "the first button" again on the console the Keep had redrawn,
    and so logged a card by hand that was never turned (a Red Table, then
    asked about its race with no press)."""
    shown(host, hs)
    if not tap(host, selector, kind):
        return False
    _until(lambda: host.table.session.snapshot()["version"] != hs["version"],
           f"the {kind} tap to reach the table")
    return True


def shown(host: Host, hs: dict) -> None:
    """Wait until the console shows the table's version ``hs``."""
    _until(lambda: host.page.evaluate("() => document.body.dataset.version")
           == str(hs["version"]), "the console to show the table")


def check_logs(host: Host, desk, tally: Tally) -> bool:
    """The camera's new logs, each put against the clip's card at its flip
    time; one logged as the wrong face, or logged again after the host's
    hand log, is undone on the console (True: a tap was made)."""
    logs = sorted(desk.logs, key=lambda x: x.id)
    for x in [x for x in logs if x.id > tally.seen_logs]:
        tally.seen_logs = x.id
        i = tally.nearest(x.t_ns)
        if not x.auto:
            continue                            # the host's answer: counted when tapped
        if i in tally.how or x.card != tally.reveals[i].card:
            if i in tally.how:
                tally.again += 1
            else:
                tally.wrong += 1
            tap(host, f"#cam-logs li[data-log='{x.id}'] button.cam-undo", "camera undo")
            return True
        tally.how[i] = "auto"
    return False


def answer(host: Host, desk, tally: Tally) -> bool:
    """The camera's question, as the console shows it: the true face if it
    is offered, else "None of these" (the card is then logged by hand)."""
    questions = list(desk.watcher.questions)
    if not questions:
        return False
    q = questions[0]
    box = host.page.locator(f"#cam-question[data-q='{q.id}']:not([hidden])")
    box.wait_for()
    i = tally.nearest(q.t_ns)
    truth = tally.reveals[i].card
    if truth in [c for c, _ in q.choices] and i not in tally.how:
        if not tap(host, f"#cam-choices button.choice[data-card='{truth}']", "camera question"):
            return False
        tally.how[i] = "asked"
    else:
        if not tap(host, "#cam-choices button.none", "camera none of these"):
            return False
        tally.dismissed.add(i)
    _until(lambda: q not in desk.watcher.questions, "the question to go")
    return True


def clip_frame(desk) -> float:
    """The newest frame of the clip the camera was given; once the camera
    stopped (its error on the console), the frame the clock is at: the
    host then logs every card by hand as it lies."""
    if desk.source.error is None:
        return desk.frames - 1
    from tests.kit.cardscenes import FRAME_NS

    return (time.monotonic_ns() - desk.first_ns) / FRAME_NS


def missed(host: Host, desk, tally: Tally, hs: dict) -> bool:
    """A card the camera has not logged (nor asked about) ``MISS_S`` of
    clip after it lay, or one the host dismissed: logged by hand."""
    seen = clip_frame(desk)
    asked = {tally.nearest(q.t_ns) for q in list(desk.watcher.questions)}
    from tests.kit.cardscenes import FPS

    for i, r in enumerate(tally.reveals):
        if i in tally.how or i in asked:
            continue
        if i not in tally.dismissed and seen < r.settle_frame + MISS_S * FPS:
            return False                          # the camera may still log it: wait
        flip = {"type": "flip", "card": r.card}
        flips = [e for e in hs.get("legal_events") or [] if e["type"] == "flip"]
        if not flips:
            return False                          # a race or a choice first
        if flip not in flips:                     # none left (a card logged wrong before)
            tally.how[i] = "not legal"
            return False
        if not tap_on(host, hs, f"#legal button.event[data-event='{event_json(flip)}']",
                      "card by hand"):
            return False
        tally.how[i] = "hand"
        return True
    return False


def step(host: Host, desk, tally: Tally) -> bool:
    """One thing the host does, if the table needs it (True: a tap)."""
    hs = host.table.session.host_snapshot()
    race = hs.get("race") or {}
    if race.get("confirm"):
        return tap_on(host, hs, "#race-confirm button.choice.default, #race-accept",
                      "race answer")
    if race and race.get("phase") not in ("decided", None):
        return False                             # a race runs: the buzzers decide it
    legal = hs.get("legal_events") or []
    if any(e["type"] in ("keep", "lose") for e in legal):
        return tap_on(host, hs, "#legal button.event", "choice")
    if check_logs(host, desk, tally) or answer(host, desk, tally):
        return True
    odds = ((hs.get("view") or {}).get("bust_odds") or {}).get("probability", 0)
    if any(e["type"] == "stop" for e in legal) and odds >= STOP_ODDS:
        return tap_on(host, hs, "#side-slot button.event", "stop")
    return missed(host, desk, tally, hs)


def play(browser, table) -> dict:
    from companion.camera.desk import open_desk
    from companion.camera.faces import faces_folder

    with tempfile.TemporaryDirectory() as tmp:
        faces, clip = render(Path(tmp) / "clip")
        teach_taps = teach(browser, table, faces, faces_folder(table.db_path))
        desk = open_desk(table.session, str(Path(tmp) / "clip"), table.db_path)
        table.services.camera = desk
        ctx, page = host_page(browser, table)
        page.wait_for_selector("#legal button.event")
        stop = threading.Event()
        desk.start()
        try:
            _until(lambda: desk.first_ns is not None, "the clip's first frame")
            tally = Tally(clip.reveals, desk.first_ns)
            slammer = threading.Thread(target=slams, name="taps-slams", daemon=True,
                                       args=(table, desk, clip.reveals, stop, random.Random(SEED)))
            slammer.start()
            host = Host(page, table)
            run(host, desk, tally, len(clip.frames))
        finally:
            stop.set()
            desk.close()
            table.services.camera = None
        ctx.close()
    return result(host, desk, tally, teach_taps)


def run(host: Host, desk, tally: Tally, frames: int) -> None:
    """The host's loop until every card of the clip is logged and the table
    needs nothing more (the clip played to its end)."""
    idle_since = None
    while True:
        if step(host, desk, tally):
            idle_since = None
            continue
        done = len(tally.how) == len(tally.reveals) and clip_frame(desk) >= frames - 1
        if done:
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > 1.5:  # nothing more came: the end
                return
        time.sleep(0.03)


def result(host: Host, desk, tally: Tally, teach_taps: int) -> dict:
    how = list(tally.how.values())
    counts = {k: how.count(k) for k in ("auto", "asked", "hand")}
    kinds = dict(host.kinds, teach_taps=teach_taps, camera_auto=counts["auto"],
                 camera_asked=counts["asked"], camera_missed=counts["hand"],
                 camera_wrong=tally.wrong, camera_again=tally.again,
                 camera_refused=desk.watcher.refused, camera_error=desk.source.error)
    n = len(tally.reveals)
    camera = sum(host.kinds.get(k, 0) for k in CAMERA_TAPS)
    extra = [("host_taps_per_card_chope_cam", host.taps / n, "taps/card"),
             ("chope_cam_camera_taps_per_card", camera / n,
              "taps/card: the camera's share (questions, missed cards, undos)"),
             ("chope_cam_auto_cards", counts["auto"], f"of {n} cards logged by the camera alone"),
             ("chope_cam_asked_cards", counts["asked"], f"of {n}: the camera asked (one tap)"),
             ("chope_cam_missed_cards", counts["hand"], f"of {n}: missed, logged by hand"),
             ("chope_cam_teach_taps", teach_taps, "taps, once (teaching the deck)")]
    return {"turns": n, "host_taps": host.taps, "player_taps": 0, "scrolls": host.scrolls,
            "kinds": kinds, "unit": "taps/card", "figures": extra}
