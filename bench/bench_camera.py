"""The camera over the reveal spot (docs/camera.md), on the synthetic set
(tests/kit/cardscenes.py: drawn faces with pairs that share their art; clips
with a pile, perspective, light drift and flicker, a colour cast, glare,
motion blur, hands carrying cards in and passing over them, fingertips left
on a card, sleeves), REVEALS reveals per game (Chope!, Chomp!, Hawker
Wars), each clip an MJPG video played through the clip source. Chope! and
Hawker Wars turn their cards onto one reveal spot (a clip of reveals, one
spotter). Chomp! is played as it is played, in seated rounds (every player
turns her card at once onto her own spot; 3-5 players, 5 rounds a clip;
the cards taken off the table after some rounds): the seats are taught from
a frame with a card on each spot (companion.camera.seats), the clip played
through one SeatSpotter, each card ranked among the faces left in its
seat's pile and scored against the truth of the same seat (a card found on
a spot it does not lie on, or matched to no card turned on its spot, is a
false flip; one logged with no tap on the wrong seat is a wrong log too);
``cam_chomp_seat_wrong``: the cards given to a seat they do not lie on.

* ``cam_<game>_auto_pct``: the reveals logged with no tap (found, and the
  likeliest of the faces the tracker allows has a share at the watcher's
  threshold or above); ``cam_<game>_wrong_auto_logs``: those logged as
  the wrong face; ``cam_<game>_top1_pct``: the found cards whose likeliest
  face is right; ``cam_<game>_detected_pct`` / ``_false`` against the
  rendered truth; ``cam_<game>_flip_error_ms_p95``: |seen - the first frame
  in place|;
* the same per hard case (``cam_case_<case>_auto_pct`` ...), over all games;
* ``cam_log_ms_p95``: from the frame where the card lies still (in place,
  the flipper's fingertips off it: a card still held is not yet turned) to
  its log, played at 30 frames a second on one core here, the newest frame
  looked at first (companion/camera/newest.py): the frames the spotter
  waits for, the frame in hand when the one that made it sure came (at
  most one: the others are skipped), and the recognition;
  ``cam_log_ms_p95_from_landing``: the same from its first frame in place
  (fingertips on it or not: its flip time); ``cam_fps``: frames a second
  the spotter processes here;
* ``race_pace_wrong_pct_cam`` / ``race_pace_flagged_pct_cam`` at a flip
  every 1.5 s (tests/kit/pacesim.py with the camera logging every card at
  its flip + up to a frame, 140-220 ms later)."""

from __future__ import annotations

import math
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import cv2

from companion.camera.clip import ClipSource
from companion.camera.flips import Spotter
from companion.camera.recognise import Look, find_card, rank, straighten
from companion.camera.seats import Seat, SeatSpotter
from companion.camera.watcher import THRESHOLD
from tests.kit.cardscenes import (CASES, FRAME_NS, SHARED, deals, deals_seated, draw_faces,
                                  game_deck, photo_of, render_reveals, render_rounds,
                                  seat_spots, teach_frames)
from tests.kit.pacesim import Pace, simulate

GAMES = ("chope", "chomp", "hawker")
#: the games where everyone turns a card at once, each onto her own spot
SEATED = ("chomp",)
REVEALS = 300


def taught_faces(faces) -> dict:
    """Each face taught from a photo of it held under the camera."""
    out = {}
    for name, face in faces.items():
        photo = photo_of(face)
        out[name] = Look.of(straighten(photo, find_card(photo)))
    return out


def taught_seats(frames: dict) -> dict:
    """Each seat taught as the host teaches it: Seat.of the card found in
    a frame with one card lying on the player's spot (a frame with none
    found: that seat is not taught, and its cards go unseen)."""
    quads = {player: find_card(img) for player, img in frames.items()}
    return {player: Seat.of(q) for player, q in quads.items() if q is not None}


def _p95(values) -> float:
    v = sorted(values)
    return v[int(0.95 * (len(v) - 1))] if v else -1.0


class Tally:
    """Outcomes of reveals: counts and their per-reveal figures."""

    def __init__(self):
        self.n = self.found = self.auto = self.wrong = self.right = 0
        self.false = self.seat_wrong = 0
        self.errors: list[int] = []
        self.lags: list[int] = []           # from the card's first frame in place
        self.still_lags: list[int] = []     # from its first frame lying still (let go)

    def rows(self, prefix: str):
        yield f"{prefix}_reveals", self.n, "rendered"
        yield f"{prefix}_detected_pct", 100 * self.found / max(self.n, 1), "%"
        yield f"{prefix}_top1_pct", 100 * self.right / max(self.found, 1), "% of detected"
        yield f"{prefix}_auto_pct", 100 * self.auto / max(self.n, 1), "% of reveals"
        yield f"{prefix}_wrong_auto_logs", self.wrong, "cards"


def play(clip, path: Path, taught: dict, allowed: list, tally: Tally, cases: dict,
         service: list) -> None:
    """Play one clip through the clip source and the spotter; score each
    card against the truth (into ``tally`` and ``cases``); the time each
    frame took (ns) into ``service``."""
    got, sure = [], {}                          # sure: id(face) -> (allowed, ranked)

    def is_sure(face) -> bool:                  # as the watcher's: the next card's faces
        can = allowed[min(len(got), len(allowed) - 1)]
        sure[id(face)] = (can, rank(face, taught, can))
        return sure[id(face)][1][0][1] >= THRESHOLD

    spot = Spotter(sure=is_sure)
    clock = 0                                   # when the one core is free (ns)
    took = 0
    for i, frame in enumerate(ClipSource(clip.save_video(path), fps=30, start_ns=0).frames()):
        busy = min(max(0, clock - i * FRAME_NS), took)     # newest first: at most the one in hand
        t0 = time.perf_counter_ns()
        s = spot.feed(frame.t_ns, frame.image)
        ranked = None
        if s is not None:
            truth = min(clip.reveals, key=lambda r: abs(r.t_ns - s.t_ns))
            k = clip.reveals.index(truth)
            can, ranked = sure.get(id(s.face), (None, None))
            if can != allowed[k]:               # not ranked yet among these faces
                ranked = rank(s.face, taught, allowed[k])
            sure.clear()
        took = time.perf_counter_ns() - t0
        service.append(took)
        clock = max(clock, i * FRAME_NS) + took
        if s is not None:
            got.append((s, ranked, s.seen_ns - truth.t_ns + busy + took))
    _score(clip, got, tally, cases)


def _score(clip, got, tally: Tally, cases: dict) -> None:
    truth = list(clip.reveals)
    seen = {}
    for s, ranked, lag in got:
        near = min(truth, key=lambda r: abs(r.t_ns - s.t_ns), default=None)
        if near is None or abs(near.t_ns - s.t_ns) > 10 * FRAME_NS:
            tally.false += 1
            continue
        truth.remove(near)
        seen[id(near)] = (s, ranked, lag)
    _count(clip.reveals, seen, tally, cases)


def play_seated(clip, path: Path, taught: dict, seated: dict, spots: dict, allowed: list,
                tally: Tally, cases: dict, service: list) -> None:
    """Play one seated clip through the clip source and a SeatSpotter of
    the ``seated`` seats taught; rank each card among the faces its seat's
    player may turn (``allowed[k]``: clip.reveals[k]'s, the nearest in time
    on that seat) and score it (:func:`_score_seated`; ``spots``: where the
    seats really are); the time each frame took (ns) into ``service``."""
    spot, got = SeatSpotter(seated), []
    mine = defaultdict(list)                    # each seat's reveals (their index)
    for k, r in enumerate(clip.reveals):
        mine[r.seat].append(k)
    clock = 0                                   # when the one core is free (ns)
    took = 0
    for i, frame in enumerate(ClipSource(clip.save_video(path), fps=30, start_ns=0).frames()):
        busy = min(max(0, clock - i * FRAME_NS), took)     # newest first: at most the one in hand
        t0 = time.perf_counter_ns()
        ranked = []
        for s in spot.feed(frame.t_ns, frame.image):
            k = min(mine[s.seat], key=lambda k: abs(clip.reveals[k].t_ns - s.t_ns))
            ranked.append((s, rank(s.face, taught, allowed[k])))
        took = time.perf_counter_ns() - t0
        service.append(took)
        clock = max(clock, i * FRAME_NS) + took
        got += [(s, r, s.seen_ns + busy + took) for s, r in ranked]
    _score_seated(clip, got, spots, tally, cases)


def _score_seated(clip, got, spots: dict, tally: Tally, cases: dict) -> None:
    """Each card found (``(settled, ranked, logged at)``) against the cards
    turned on the spot it lies on (the nearest spot to its centre): the
    nearest in time, within 10 frames, not yet matched."""
    truth = list(clip.reveals)
    seen = {}
    for s, ranked, logged in got:
        centre = s.quad.reshape(-1, 2).mean(axis=0)
        lies = min(spots, key=lambda p: math.dist(spots[p], centre))
        if s.seat != lies:
            tally.seat_wrong += 1
            tally.wrong += bool(ranked) and ranked[0][1] >= THRESHOLD
        near = min((r for r in truth if r.seat == lies), key=lambda r: abs(r.t_ns - s.t_ns),
                   default=None)
        if s.seat != lies or near is None or abs(near.t_ns - s.t_ns) > 10 * FRAME_NS:
            tally.false += 1
            continue
        truth.remove(near)
        seen[id(near)] = (s, ranked, logged - near.t_ns)
    _count(clip.reveals, seen, tally, cases)


def _count(reveals, seen: dict, tally: Tally, cases: dict) -> None:
    """Each reveal's outcome (``seen``: the card found for it, by id, with
    its ranking and lag) into ``tally`` and its cases' tallies."""
    for r in reveals:
        for t in [tally] + [cases[c] for c in r.cases] + ([cases["clean"]] if not r.cases else []):
            t.n += 1
            if id(r) not in seen:
                continue
            s, ranked, lag = seen[id(r)]
            t.found += 1
            t.errors.append(abs(s.t_ns - r.t_ns))
            t.right += bool(ranked) and ranked[0][0] == r.card
            if ranked and ranked[0][1] >= THRESHOLD:
                t.auto += 1
                t.wrong += ranked[0][0] != r.card
                t.lags.append(lag)
                t.still_lags.append(lag - (r.still_ns - r.t_ns))


def trial(game: str, reveals: int = REVEALS, seed: int = 0, cases: dict | None = None,
          service: list | None = None) -> Tally:
    """``reveals`` rendered reveals of ``game`` played and scored (a seated
    game: a few more, its last round whole)."""
    cv2.setNumThreads(1)
    faces = draw_faces(list(game_deck(game)), seed=GAMES.index(game), shared=SHARED[game])
    taught = taught_faces(faces)
    tally = Tally()
    cases = cases if cases is not None else defaultdict(Tally)
    service = service if service is not None else []
    with tempfile.TemporaryDirectory() as tmp:
        if game in SEATED:
            for n, rounds in enumerate(deals_seated(game, reveals, seed=seed)):
                spots = seat_spots(len(rounds[0]))
                clip_seed = 1000 * seed + 100 * GAMES.index(game) + n
                clip = render_rounds([{p: c for p, (c, _) in r.items()} for r in rounds], faces,
                                     spots, seed=clip_seed)
                seated = taught_seats(teach_frames(spots, faces[rounds[0]["ana"][0]],
                                                   seed=clip_seed))
                play_seated(clip, Path(tmp) / f"clip{n}.avi", taught, seated, spots,
                            [a for r in rounds for _, a in r.values()], tally, cases, service)
            return tally
        for n, deal in enumerate(deals(game, reveals, seed=seed)):
            clip = render_reveals([c for c, _ in deal], faces,
                                  seed=1000 * seed + 100 * GAMES.index(game) + n)
            play(clip, Path(tmp) / f"clip{n}.avi", taught, [a for _, a in deal], tally,
                 cases, service)
    return tally


def run():
    cases, service, lags, still = defaultdict(Tally), [], [], []
    for game in GAMES:
        tally = trial(game, cases=cases, service=service)
        yield from tally.rows(f"cam_{game}")
        yield f"cam_{game}_flips_false", tally.false, "cards"
        if game in SEATED:
            yield f"cam_{game}_seat_wrong", tally.seat_wrong, "cards"
        yield f"cam_{game}_flip_error_ms_p95", _p95(tally.errors) / 1e6, "ms"
        lags += tally.lags
        still += tally.still_lags
    for case in CASES + ("clean",):
        yield from cases[case].rows(f"cam_case_{case.replace(' ', '_')}")
    yield "cam_log_ms_p95", _p95(still) / 1e6, "ms from lying still (30 fps, one core here)"
    yield "cam_log_ms_p95_from_landing", _p95(lags) / 1e6, "ms from its first frame in place"
    yield "cam_frame_ms_p95", _p95(service) / 1e6, "ms"
    yield "cam_fps", 1e9 * len(service) / max(sum(service), 1), "frames/s (one core here)"
    tally = simulate(2_000, 1_500, seed=1_500, pace=Pace(pace_ms=1_500, camera=True))
    yield "race_pace_wrong_pct_cam", tally.pct(tally.wrong), "% at 1.5 s"
    yield "race_pace_flagged_pct_cam", tally.pct(tally.flagged), "% at 1.5 s"
