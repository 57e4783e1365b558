"""Where each player turns her cards: one spot a seat, for the games where
everyone turns a card at once (Chomp!: "all players turning over their top
card at the same time").

The host teaches a seat as she teaches a face: a card laid on the player's
spot and the player's name tapped (:func:`teach_seat`); the card's centre and
length are kept in ``<folder>/seats.json`` beside the table's faces, by the
player's name. :class:`SeatSpotter` splits the frame into the seats' spots
(each point belongs to the nearest seat's centre, out to :data:`REACH` card
lengths from it) and runs one :class:`~companion.camera.flips.Spotter` a spot
on the spot's own crop of the frame: a card that comes to rest on a spot is
that player's, and cards turned at the same moment are each found on their
own spot. What changes outside every spot (a hand reaching for the centre,
the piles) is no card.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from .faces import TeachError
from .flips import Settled, Spotter
from .recognise import ASPECT, SCALE, Params, find_card

#: a spot reaches this many card lengths from its seat's centre (a card laid
#: half a card off the spot taught is still whole inside it)
REACH = 1.25
FILE = "seats.json"
#: a card laid on a seat's spot is found in the whole frame down to this
#: share of it (a camera over the whole middle of a table: about 50 x 70
#: pixels at 1280 x 720); each spot's own crop then holds it at ~10 %
TEACH = Params(min_area=0.004)


@dataclass(frozen=True)
class Seat:
    """A player's spot: the taught card's centre and its long side (frame pixels)."""

    x: float
    y: float
    length: float

    @classmethod
    def of(cls, quad) -> Seat:
        q = np.asarray(quad, np.float64).reshape(4, 2)
        sides = [float(np.linalg.norm(q[i] - q[(i + 1) % 4])) for i in range(4)]
        cx, cy = q.mean(axis=0)
        return cls(round(float(cx), 1), round(float(cy), 1), round(max(sides), 1))

    def to_json(self) -> dict:
        return {"x": self.x, "y": self.y, "length": self.length}


def seats(folder) -> dict[str, Seat]:
    """The seats taught at this table (``{player: Seat}``; none: {}). A
    damaged file is no seats (the host teaches them again), never an error."""
    path = Path(folder) / FILE
    try:
        raw = json.loads(path.read_text())
        return {str(p): Seat(float(v["x"]), float(v["y"]), float(v["length"]))
                for p, v in raw.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def teach_seat(folder, player: str, image) -> Seat:
    """Keep the card lying in ``image`` as ``player``'s spot (TeachError: no
    card found, or no player named); teaching a seat again moves it."""
    if not isinstance(player, str) or not player.strip():
        raise TeachError("name the player whose spot this is")
    quad = find_card(image, TEACH)
    if quad is None:
        raise TeachError("no card found: lay one card flat on the player's spot")
    seat = Seat.of(quad)
    known = seats(folder)
    known[player] = seat
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (FILE + ".tmp")
    tmp.write_text(json.dumps({p: s.to_json() for p, s in known.items()}, indent=1))
    tmp.replace(folder / FILE)
    return seat


@dataclass
class _Spot:
    box: tuple[int, int, int, int]      # x0, y0, x1, y1 of its crop (frame pixels)
    spotter: Spotter


class SeatSpotter:
    """Frames in, each seat's settled cards out (``Settled.seat``: whose),
    one :class:`Spotter` a seat on its spot (see the module docstring);
    ``options`` go to every Spotter."""

    def __init__(self, seated: dict[str, Seat], sure=None, **options):
        if not seated:
            raise ValueError("no seats taught")
        self.seats = dict(seated)
        self.sure = sure                    # ``sure(face, seat) -> bool`` (Spotter's ``sure``)
        self.options = options
        self._spots: dict[str, _Spot] | None = None
        self._shape = None

    def _layout(self, shape) -> dict[str, _Spot]:
        h, w = shape[:2]
        out = {}
        for name, seat in self.seats.items():
            r = REACH * seat.length
            x0, y0 = max(0, math.floor(seat.x - r)), max(0, math.floor(seat.y - r))
            x1, y1 = min(w, math.ceil(seat.x + r)), min(h, math.ceil(seat.y + r))
            if x1 - x0 < 8 or y1 - y0 < 8:
                continue                    # a seat taught outside this camera's frame
            small = cv2.resize(np.zeros((y1 - y0, x1 - x0), np.uint8), None, fx=SCALE,
                               fy=SCALE, interpolation=cv2.INTER_AREA)
            ys, xs = np.mgrid[0:small.shape[0], 0:small.shape[1]]
            px, py = x0 + (xs + 0.5) / SCALE, y0 + (ys + 0.5) / SCALE
            mine = np.hypot(px - seat.x, py - seat.y)
            inside = mine <= r
            for other, o in self.seats.items():
                if other != name:
                    inside &= mine <= np.hypot(px - o.x, py - o.y)
            region = inside.astype(np.uint8) * 255
            area = seat.length ** 2 / ASPECT      # the taught card's, as a card's size
            sure = None if self.sure is None else functools.partial(self.sure, seat=name)
            out[name] = _Spot((x0, y0, x1, y1), Spotter(region=region, card_area=area,
                                                        sure=sure, **self.options))
        return out

    def feed(self, t_ns: int, image) -> list[Settled]:
        """The cards that settled with this frame, each with its seat."""
        if self._spots is None or self._shape != image.shape:
            self._spots, self._shape = self._layout(image.shape), image.shape
        out = []
        for name, spot in self._spots.items():
            x0, y0, x1, y1 = spot.box
            s = spot.spotter.feed(t_ns, np.ascontiguousarray(image[y0:y1, x0:x1]))
            if s is not None:
                out.append(replace(s, quad=s.quad + np.array([x0, y0], np.float32), seat=name))
        return out


__all__ = ["REACH", "Seat", "SeatSpotter", "seats", "teach_seat"]
