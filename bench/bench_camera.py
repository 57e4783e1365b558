"""The camera over the reveal spot (docs/camera.md), on the synthetic set
(tests/kit/cardscenes.py: drawn faces with pairs that share their art; clips
with a pile, perspective, light drift and flicker, a colour cast, glare,
motion blur, hands carrying cards in and passing over them, fingertips left
on a card, sleeves), REVEALS reveals per game (Chope!, Chomp!, Hawker
Wars), each clip an MJPG video played through the clip source:

* ``cam_<game>_auto_pct``: the reveals logged with no tap (found, and the
  likeliest of the faces the tracker allows has a share at the watcher's
  threshold or above); ``cam_<game>_wrong_auto_logs``: those logged as
  the wrong face; ``cam_<game>_top1_pct``: the found cards whose likeliest
  face is right; ``cam_<game>_detected_pct`` / ``_false`` against the
  rendered truth; ``cam_<game>_flip_error_ms_p95``: |seen - the first frame
  in place|;
* the same per hard case (``cam_case_<case>_auto_pct`` ...), over all games;
* ``cam_log_ms_p95``: from the frame where the card lies in place to its
  log, played at 30 frames a second on one core here, the newest frame
  looked at first (companion/camera/newest.py): the frames the spotter
  waits for, the frame in hand when the one that made it sure came (at
  most one: the others are skipped), and the recognition; ``cam_fps``: frames a second the spotter processes here;
* ``race_pace_wrong_pct_cam`` / ``race_pace_flagged_pct_cam`` at a flip
  every 1.5 s (tests/kit/pacesim.py with the camera logging every card at
  its flip + up to a frame, 140-220 ms later)."""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from pathlib import Path

import cv2

from companion.camera.clip import ClipSource
from companion.camera.flips import Spotter
from companion.camera.recognise import Look, find_card, rank, straighten
from companion.camera.watcher import THRESHOLD
from tests.kit.cardscenes import (CASES, FRAME_NS, SHARED, deals, draw_faces, game_deck,
                                  photo_of, render_reveals)
from tests.kit.pacesim import Pace, simulate

GAMES = ("chope", "chomp", "hawker")
REVEALS = 300


def taught_faces(faces) -> dict:
    """Each face taught from a photo of it held under the camera."""
    out = {}
    for name, face in faces.items():
        photo = photo_of(face)
        out[name] = Look.of(straighten(photo, find_card(photo)))
    return out


def _p95(values) -> float:
    v = sorted(values)
    return v[int(0.95 * (len(v) - 1))] if v else -1.0


class Tally:
    """Outcomes of reveals: counts and their per-reveal figures."""

    def __init__(self):
        self.n = self.found = self.auto = self.wrong = self.right = 0
        self.false = 0
        self.errors: list[int] = []
        self.lags: list[int] = []

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
    spot, got = Spotter(), []
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
            ranked = rank(s.face, taught, allowed[k])
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
    for r in clip.reveals:
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


def trial(game: str, reveals: int = REVEALS, seed: int = 0, cases: dict | None = None,
          service: list | None = None) -> Tally:
    """``reveals`` rendered reveals of ``game`` played and scored."""
    cv2.setNumThreads(1)
    faces = draw_faces(list(game_deck(game)), seed=GAMES.index(game), shared=SHARED[game])
    taught = taught_faces(faces)
    tally = Tally()
    cases = cases if cases is not None else defaultdict(Tally)
    service = service if service is not None else []
    with tempfile.TemporaryDirectory() as tmp:
        for n, deal in enumerate(deals(game, reveals, seed=seed)):
            clip = render_reveals([c for c, _ in deal], faces,
                                  seed=1000 * seed + 100 * GAMES.index(game) + n)
            play(clip, Path(tmp) / f"clip{n}.avi", taught, [a for _, a in deal], tally,
                 cases, service)
    return tally


def run():
    cases, service, lags = defaultdict(Tally), [], []
    for game in GAMES:
        tally = trial(game, cases=cases, service=service)
        yield from tally.rows(f"cam_{game}")
        yield f"cam_{game}_flips_false", tally.false, "cards"
        yield f"cam_{game}_flip_error_ms_p95", _p95(tally.errors) / 1e6, "ms"
        lags += tally.lags
    for case in CASES + ("clean",):
        yield from cases[case].rows(f"cam_case_{case.replace(' ', '_')}")
    yield "cam_log_ms_p95", _p95(lags) / 1e6, "ms (30 fps, one core here)"
    yield "cam_frame_ms_p95", _p95(service) / 1e6, "ms"
    yield "cam_fps", 1e9 * len(service) / max(sum(service), 1), "frames/s (one core here)"
    tally = simulate(2_000, 1_500, seed=1_500, pace=Pace(pace_ms=1_500, camera=True))
    yield "race_pace_wrong_pct_cam", tally.pct(tally.wrong), "% at 1.5 s"
    yield "race_pace_flagged_pct_cam", tally.pct(tally.flagged), "% at 1.5 s"
