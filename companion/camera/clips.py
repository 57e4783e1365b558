"""Clips the host keeps: the last seconds the camera saw, kept only when asked.

No frame is stored unless the host asks (a disputed race: "who slapped
first?", "was that card already lying?"). Meanwhile :class:`FrameRing` holds
the last :data:`RING_S` seconds in memory, each frame as a JPEG (a 480 x 360
frame is ~30 KB, so eight seconds at 30 frames a second are ~7 MB; a
1280 x 720 webcam's ~12 MB at every second frame), and forgets them as they
age. :func:`keep` writes them as a clip in the clip format
(:mod:`companion.camera.clip`: JPEG frames and ``times.csv``, so a kept clip
plays through ``--camera`` against a game like any recorded one) with
``about.json`` (the game, when, the last race's line), in the table's own
``clips/<table>/`` beside its store (:func:`clips_folder`). A kept clip can
be looked at frame by frame on the host's console, and deleted there.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections import deque
from pathlib import Path

import cv2

from .clip import read_times, write_times

#: the seconds of frames held in memory
RING_S = 8
#: the JPEG quality frames are held at
QUALITY = 80
#: frames wider than this are held at every ``2``nd frame (a webcam's 720p)
WIDE = 800
NS = 1_000_000_000
_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9]+$")


class ClipError(ValueError):
    """No such clip, or nothing to keep."""


def clips_folder(store_path, table: str = "default") -> Path:
    """Where a table's kept clips are: ``clips/<table>/`` beside its store."""
    return Path(store_path).resolve().parent / "clips" / table


class FrameRing:
    """The last ``seconds`` of frames, as JPEG bytes with their times (any
    thread puts; a lock keeps the ring whole)."""

    def __init__(self, seconds: float = RING_S, quality: int = QUALITY):
        self.span_ns = int(seconds * NS)
        self.quality = quality
        self._frames: deque[tuple[int, bytes]] = deque()
        self._lock = threading.Lock()
        self._n = 0

    def put(self, t_ns: int, image) -> None:
        self._n += 1
        if image.shape[1] > WIDE and self._n % 2:
            return
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            return
        with self._lock:
            self._frames.append((t_ns, buf.tobytes()))
            while self._frames and self._frames[0][0] < t_ns - self.span_ns:
                self._frames.popleft()

    def frames(self) -> list[tuple[int, bytes]]:
        with self._lock:
            return list(self._frames)

    def span_s(self) -> float:
        """The seconds held now (from the oldest frame to the newest)."""
        with self._lock:
            if not self._frames:
                return 0.0
            return (self._frames[-1][0] - self._frames[0][0]) / NS


def keep(folder: Path, frames: list[tuple[int, bytes]], about: dict, stamp: str) -> dict:
    """Write ``frames`` as a clip ``<folder>/<stamp>-<n>/`` (the clip format
    and ``about.json``); its summary (:func:`summary`). ClipError: no frames."""
    if not frames:
        raise ClipError("the camera has kept no picture yet")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    n = 1
    while (folder / f"{stamp}-{n}").exists():
        n += 1
    tmp = folder / f".{stamp}-{n}.tmp"
    tmp.mkdir()
    rows = []
    for i, (t_ns, jpeg) in enumerate(frames):
        name = f"{i + 1:05d}.jpg"
        (tmp / name).write_bytes(jpeg)
        rows.append((name, t_ns))
    write_times(tmp, rows)
    about = {**about, "frames": len(frames), "from_ns": frames[0][0], "to_ns": frames[-1][0]}
    (tmp / "about.json").write_text(json.dumps(about, indent=1), encoding="utf-8")
    path = folder / f"{stamp}-{n}"
    tmp.rename(path)                    # whole or not at all
    return summary(path)


def summary(path: Path) -> dict:
    """A kept clip as the console lists it: its id, frames, length and what
    it was kept for."""
    try:
        about = json.loads((path / "about.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        about = {}
    span = (about.get("to_ns", 0) - about.get("from_ns", 0)) / NS
    return {"id": path.name, "frames": about.get("frames", 0), "seconds": round(span, 1),
            "game_id": about.get("game_id"), "line": about.get("line"),
            "kept_at": about.get("kept_at")}


def kept(folder: Path, game_id: int | None = None) -> list[dict]:
    """The clips kept in ``folder`` (of one game when ``game_id``), newest first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    out = [summary(p) for p in sorted(folder.iterdir(), reverse=True)
           if p.is_dir() and _ID.match(p.name)]
    return [c for c in out if game_id is None or c["game_id"] == game_id]


def clip_path(folder: Path, clip_id: str) -> Path:
    """The folder of a kept clip (ClipError: no such clip)."""
    if not isinstance(clip_id, str) or not _ID.match(clip_id):
        raise ClipError(f"no clip {clip_id!r}")
    path = Path(folder) / clip_id
    if not path.is_dir():
        raise ClipError(f"no clip {clip_id!r}: it was deleted")
    return path


def times_ms(folder: Path, clip_id: str) -> list[float]:
    """Each frame's time of a kept clip, in ms from its first frame."""
    rows = read_times(clip_path(folder, clip_id))
    return [round((t - rows[0][1]) / 1e6, 1) for _, t in rows] if rows else []


def frame_of(folder: Path, clip_id: str, n: int) -> bytes:
    """The ``n``th frame (from 1) of a kept clip, JPEG bytes (ClipError: none)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 99_999:
        raise ClipError(f"no frame {n!r}")
    path = clip_path(folder, clip_id) / f"{n:05d}.jpg"
    try:
        return path.read_bytes()
    except OSError:
        raise ClipError(f"clip {clip_id} has no frame {n}") from None


def delete(folder: Path, clip_id: str) -> None:
    """Delete a kept clip, every frame of it (ClipError: no such clip)."""
    shutil.rmtree(clip_path(folder, clip_id))


__all__ = ["ClipError", "FrameRing", "RING_S", "clip_path", "clips_folder", "delete", "frame_of",
           "keep", "kept", "summary", "times_ms"]
