"""The camera at a served table: the source, the watcher and what the host's console needs.

:class:`CameraDesk` is what ``companion serve --camera`` runs beside the
table (docs/camera.md, "The console's Camera panel"):

* the source's thread hands it every frame; it keeps the newest one in
  memory only (for the preview: :meth:`CameraDesk.preview_jpeg`, the
  outline found drawn on it, never written anywhere) and passes the frame
  to the :class:`~companion.camera.watcher.CameraWatcher`, which logs a sure
  card through the session's ``log`` (the table's one way in: the
  pipeline's queue and thread) or asks;
* teaching: the game's card faces (:meth:`CameraDesk.faces`), the newest
  frame saved as a face (:meth:`CameraDesk.teach`, :mod:`companion.camera.faces`,
  the table's own folder); in a game where everyone turns a card at once,
  each player's spot (:meth:`CameraDesk.teach_seat`, :mod:`companion.camera.seats`,
  the same folder); while the host teaches (:meth:`CameraDesk.teaching`)
  the camera logs nothing (the card held up is no flip), and the spot is
  looked at afresh afterwards;
* every card it logged, with an Undo while it is still the last thing
  logged (:meth:`CameraDesk.undo`);
* the last seconds of frames in memory (:class:`~companion.camera.clips.FrameRing`),
  kept as a clip only when the host asks (:meth:`CameraDesk.keep_clip`: a
  disputed race), looked at and deleted on the console.

Nothing here blocks the game: a camera that stops says why in
:meth:`CameraDesk.status`, and the host logs by hand as always.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .clips import (ClipError, FrameRing, clip_path, delete, frame_of, keep, kept, summary,
                    times_ms)
from .faces import TeachError, taught, teach
from .newest import Newest
from .seats import seats, teach_seat
from .watcher import THRESHOLD, CameraWatcher, drawable

log = logging.getLogger(__name__)

MS = 1_000_000
S = 1_000 * MS
#: the preview's width (pixels); its JPEG quality
PREVIEW_W, PREVIEW_QUALITY = 320, 70
#: teaching ends by itself this long after the host's last tap on it
TEACHING_NS = 120 * S
#: automatic logs shown on the console
LOGS_KEPT = 12
#: kept clips listed on the console (newest first)
CLIPS_SHOWN = 6


class CameraBusy(RuntimeError):
    """The request cannot be done now (no frame yet, a later event logged)."""


@dataclass
class CameraLog:
    """A card the camera logged (``auto``) or the host tapped in a question."""

    id: int
    card: str
    t_ns: int
    share: float
    auto: bool
    version: int | None          # the table's version after it (None: queued behind a race)
    lag_ms: float
    seat: str | None = None      # whose spot it lay on (a game turned by seat)
    undone: bool = False

    def to_json(self, version: int | None) -> dict:
        return {"id": self.id, "card": self.card, "t_ns": self.t_ns, "seat": self.seat,
                "share": round(self.share, 3), "auto": self.auto, "lag_ms": round(self.lag_ms),
                "undone": self.undone, "queued": self.version is None,
                "undoable": not self.undone and self.version is not None
                and self.version == version}


class CameraDesk:
    """The camera beside one table (see the module docstring). ``source``: a
    :class:`~companion.camera.base.FrameSource`; ``folder``: the table's
    faces (:func:`~companion.camera.faces.faces_folder`)."""

    def __init__(self, session, source, folder, threshold: float = THRESHOLD,
                 clock=time.monotonic_ns, clips=None):
        self.session, self.source, self.folder = session, source, Path(folder)
        #: where the clips the host keeps go (default: beside the faces folder)
        self.clips = Path(clips) if clips is not None else self.folder.with_name(
            self.folder.name + "-clips")
        self.ring = FrameRing()
        self.clock = clock
        self.watcher = CameraWatcher(session, taught(self.folder), threshold,
                                     on_logged=self._logged, seats=seats(self.folder))
        self.logs: deque[CameraLog] = deque(maxlen=LOGS_KEPT)
        self.frames = 0
        #: the first frame's time (a clip's first frame: its start on the table's clock)
        self.first_ns: int | None = None
        self.started_ns: int | None = None
        self._latest = None
        self._rate: deque[int] = deque(maxlen=31)     # frame arrival times (fps)
        self._teaching_until = 0
        self._ids = 0
        self._lock = threading.Lock()
        self._newest: Newest | None = None     # a live camera's frames, the newest looked at

    # -- running --------------------------------------------------------------

    def start(self) -> CameraDesk:
        self.started_ns = self.clock()
        if getattr(self.source, "live", True):   # never behind the camera
            self._newest = Newest(self._look)
        self.source.start(self.frame)
        return self

    def close(self) -> None:
        self.source.close()
        if self._newest is not None:
            self._newest.close()

    @property
    def skipped(self) -> int:
        """Frames not looked at: a newer one came while the last was looked at."""
        return 0 if self._newest is None else self._newest.skipped

    def frame(self, frame) -> None:
        """One frame from the source (its thread): kept for the preview,
        then looked at unless the host is teaching or nothing is taught."""
        with self._lock:
            self._latest = frame
            if self.first_ns is None:
                self.first_ns = frame.t_ns
            self.frames += 1
            self._rate.append(self.clock())
        self.ring.put(frame.t_ns, frame.image)
        if self._newest is not None:
            self._newest.put(frame)
        else:
            self._look(frame)

    def _look(self, frame) -> None:
        if self.is_teaching() or not self.watcher.taught or self.session.game is None:
            return
        self.watcher.frame(frame)

    def _logged(self, t_ns: int, card: str, share: float, update, auto: bool,
                seat: str | None = None) -> None:
        queued = isinstance(update, dict) and update.get("type") == "queued"
        version = None if queued or not isinstance(update, dict) else update.get("version")
        with self._lock:
            self._ids += 1
            self.logs.append(CameraLog(self._ids, card, t_ns, share, auto, version,
                                       (self.clock() - t_ns) / MS, seat))

    # -- teaching -------------------------------------------------------------

    def is_teaching(self) -> bool:
        return self.clock() < self._teaching_until

    def teaching(self, on: bool) -> None:
        """The host opened (or closed) the teaching list: the camera logs
        nothing meanwhile; afterwards it looks at the spot afresh."""
        with self._lock:
            self._teaching_until = self.clock() + TEACHING_NS if on else 0
        if not on:
            self.watcher.reset()

    def faces(self) -> list[dict]:
        """The game's card faces, each once (a face several cards share is
        one), with its name and whether it is taught here."""
        s = self.session
        if s.game is None:
            return []
        view = (s.snapshot().get("view") or {})
        cards = view.get("cards") if isinstance(view.get("cards"), dict) else {}
        names = {c: (info.get("name") if isinstance(info, dict) else None) or c
                 for c, info in cards.items()}
        for c in drawable(s.game, s.state):
            names.setdefault(c, c)
        known = set(self.watcher.taught)
        return [{"card": c, "name": n, "taught": c in known} for c, n in names.items()]

    def teach(self, face: str) -> None:
        """Save the newest frame's card as ``face`` (TeachError: not one of
        the game's faces, or no card in the frame; CameraBusy: no frame)."""
        if face not in {f["card"] for f in self.faces()}:
            raise TeachError(f"{face!r} is not one of this game's cards")
        teach(self.folder, face, self._held())
        self.watcher.taught = taught(self.folder)

    def _held(self):
        """The newest frame's image, what the host holds under the camera
        now (a teaching tap: the camera logs nothing a while; CameraBusy:
        no frame yet)."""
        with self._lock:
            latest = self._latest
            self._teaching_until = self.clock() + TEACHING_NS
        if latest is None:
            raise CameraBusy("the camera has sent no picture yet")
        return latest.image

    def seats(self) -> list[dict]:
        """In a game where everyone turns a card onto her own spot, each
        player with whether her spot is taught here (else [])."""
        s = self.session
        if s.game is None or s.game.seat_draw is None:
            return []
        known = self.watcher.seats
        return [{"player": p, "taught": p in known} for p in s.names]

    def teach_seat(self, player: str) -> None:
        """The card lying in the newest frame marks ``player``'s spot
        (TeachError: not a player of this game, or no card in the frame;
        CameraBusy: no frame)."""
        if player not in {x["player"] for x in self.seats()}:
            raise TeachError(f"{player!r} is not a player of this game, or its cards "
                             "are not turned by seat")
        teach_seat(self.folder, player, self._held())
        self.watcher.set_seats(seats(self.folder))

    # -- the host's taps --------------------------------------------------------

    def answer(self, question_id: int, card: str | None) -> dict | None:
        """A question's tap: ``card`` logged at the flip seen, or None: none
        of these (nothing logged). KeyError: no such question."""
        if card is None:
            self.watcher.dismiss(question_id)
            return None
        return self.watcher.answer(question_id, card)

    def undo(self, log_id: int) -> dict:
        """Undo a card the camera logged, while it is still the last event
        (KeyError: no such log; CameraBusy: later events were logged)."""
        with self._lock:
            entry = next((x for x in self.logs if x.id == log_id), None)
        if entry is None:
            raise KeyError(f"no camera log {log_id}")
        if entry.undone or entry.version is None or entry.version != self.session.version:
            raise CameraBusy("it is no longer the last thing logged: use Undo under "
                             "'Log what happened'")
        update = self.session.undo(expected_version=entry.version)
        entry.undone = True
        return update

    # -- clips the host keeps ----------------------------------------------------

    def keep_clip(self) -> dict:
        """Keep the frames held now (the last seconds) as a clip, with the
        game and its last race's line (ClipError: no frame held yet)."""
        s = self.session
        line, game_id = None, None
        if s.game is not None:
            game_id = s.game_id
            race = next((e for e in reversed(s.gamelog.events) if e.get("type") == "race"), None)
            line = None if race is None else s.gamelog.line(race)
        about = {"game_id": game_id, "line": line,
                 "kept_at": time.strftime("%Y-%m-%d %H:%M:%S")}
        return keep(self.clips, self.ring.frames(), about, time.strftime("%Y%m%d-%H%M%S"))

    def clip(self, clip_id: str) -> dict:
        """A kept clip's summary and its frames' times (ClipError: none)."""
        times = times_ms(self.clips, clip_id)
        return {**summary(clip_path(self.clips, clip_id)), "times_ms": times}

    def clip_frame(self, clip_id: str, n: int) -> bytes:
        return frame_of(self.clips, clip_id, n)

    def delete_clip(self, clip_id: str) -> None:
        delete(self.clips, clip_id)

    # -- what the console shows ---------------------------------------------------

    def fps(self) -> float:
        with self._lock:
            times = list(self._rate)
        if len(times) < 2 or times[-1] <= times[0]:
            return 0.0
        return (len(times) - 1) * S / (times[-1] - times[0])

    def status(self) -> dict:
        version = self.session.version if self.session.game is not None else None
        with self._lock:
            logs = [x.to_json(version) for x in reversed(self.logs)]
        running = self.started_ns is not None and not self.source.join(0)
        return {"on": True, "source": self.source.name, "error": self.source.error,
                "running": running,
                "frames": self.frames, "skipped": self.skipped, "fps": round(self.fps(), 1),
                "teaching": self.is_teaching(), "threshold": self.watcher.threshold,
                "faces": self.faces(), "seats": self.seats(),
                "held_s": round(self.ring.span_s(), 1),
                "clips": kept(self.clips)[:CLIPS_SHOWN],
                "questions": [q.to_json() for q in list(self.watcher.questions)],
                "logs": logs, "refused": self.watcher.refused}

    def preview_jpeg(self) -> bytes | None:
        """The newest frame, small, with the card's outline found on it, as
        JPEG bytes (None: no frame yet). Made in memory, never stored."""
        import cv2
        import numpy as np

        from .recognise import find_card

        with self._lock:
            latest = self._latest
        if latest is None:
            return None
        image = latest.image
        scale = PREVIEW_W / image.shape[1]
        small = cv2.resize(image, (PREVIEW_W, round(image.shape[0] * scale)),
                           interpolation=cv2.INTER_AREA)
        quad = find_card(small)
        if quad is not None:
            cv2.polylines(small, [np.asarray(quad, dtype=np.int32).reshape(-1, 1, 2)], True,
                          (0, 230, 255), 2, cv2.LINE_AA)
        for seat in self.seats():           # each player's spot taught: a ring and her initial
            spot = self.watcher.seats.get(seat["player"])
            if spot is None:
                continue
            at = (round(spot.x * scale), round(spot.y * scale))
            cv2.circle(small, at, max(6, round(spot.length * scale / 2)), (255, 200, 60), 1,
                       cv2.LINE_AA)
            cv2.putText(small, seat["player"][:1].upper(), (at[0] - 6, at[1] + 6),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 200, 60), 2, cv2.LINE_AA)
        ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, PREVIEW_QUALITY])
        return buf.tobytes() if ok else None


def open_desk(session, spec: str | None, store_path, table: str = "default") -> CameraDesk | None:
    """The camera ``spec`` names (:func:`~companion.camera.base.parse_camera`)
    beside ``session``, its faces kept beside the store (None: no camera).
    CameraError or CameraUnavailable say what is wrong."""
    from .base import open_camera, parse_camera
    from .clips import clips_folder
    from .faces import faces_folder

    chosen = parse_camera(spec)
    if chosen is None:
        return None
    name, options = chosen
    if store_path is None or str(store_path) == ":memory:":    # a table that keeps nothing
        import tempfile
        folder = Path(tempfile.mkdtemp(prefix="companion-faces-"))
        clips = folder.with_name(folder.name + "-clips")
    else:
        folder, clips = faces_folder(store_path, table), clips_folder(store_path, table)
    return CameraDesk(session, open_camera(name, **options), folder, clips=clips)


__all__ = ["CameraBusy", "CameraDesk", "CameraLog", "ClipError", "TeachError", "open_desk"]
