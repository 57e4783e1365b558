"""A synthetic test set for the camera: card faces and the clips of their reveals.

No card art is shipped: the faces are drawn here (OpenCV drawing, seeded):
a tinted card with a border and shapes of its own (circles, triangles,
stars, bars in its own colours and places) and a printed corner mark
(letters top left, and the same upside down bottom right). Two faces can
share their art and differ only in the corner (:func:`draw_faces`'s
``shared``).

:func:`render_reveals` plays a sequence of cards as a camera over the reveal
spot sees them (30 frames a second, 480 x 360): a felt table with its own
texture; each card slides in from the flipper's side (motion-blurred) and
comes to rest on the pile, offset and turned a little, tilted by the
camera's perspective, with its shadow on the card below; the light drifts
and flickers, the whole clip has a colour cast, a glare spot comes and
goes, a hand (palm and fingers) carries some cards in and passes over
others once they lie still, the flipper's fingertips stay on some cards
for a few frames after they land (partial cover), some clips' cards are in
sleeves (a glossy overhang and a sheen of the lamp across the plastic),
and the frames are JPEG-compressed when written. The truth of each reveal
is the card, the first frame where it lies in place, and the hard cases it
met (:attr:`Reveal.cases`).

:func:`render_rounds` plays a seated game instead (Chomp!: every player
turns her top card at once onto her own spot in front of her): a camera
over the whole table (:data:`SEAT_FRAMES`, the spots round its middle:
:func:`seat_spots`) sees each round's cards slide in together, each from
its player's edge and landing within a few frames of the others, with the
same hard cases, onto her pile of the rounds before, or onto the bare
felt after a player's hand took the cards away; :func:`teach_frames` are
the frames the host teaches the seats from (one card on each spot).

:func:`game_deck` and :func:`deals` give each game's faces (Chope!,
Chomp!, Hawker Wars, each with a pair that shares its art) and the order
they come in, with the cards the tracker would still allow at each reveal;
:func:`deals_seated` the rounds of a seated game, each player's card from
her own pile.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

MS = 1_000_000
S = 1_000 * MS
FPS = 30
FRAME_NS = S // FPS
W, H = 480, 360
#: the card's size in the frame (pixels, upright), a poker card's proportions
CARD_W, CARD_H = 84, 117
#: faces are drawn this size (pixels)
FACE_W, FACE_H = 252, 352

PALETTE = [(40, 40, 200), (30, 140, 240), (30, 200, 230), (60, 170, 60), (200, 120, 30),
           (160, 50, 140), (90, 60, 30), (20, 20, 20), (200, 200, 60), (120, 200, 255)]


def _shape(img, kind: str, centre, size: int, colour, angle: float) -> None:
    cx, cy = centre
    if kind == "circle":
        cv2.circle(img, centre, size, colour, -1, cv2.LINE_AA)
        return
    n = {"triangle": 3, "square": 4, "pentagon": 5, "star": 10}[kind]
    pts = []
    for k in range(n):
        a = angle + 2 * math.pi * k / n
        r = size * (0.45 if kind == "star" and k % 2 else 1.0)
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    cv2.fillPoly(img, [np.array(pts, dtype=np.int32)], colour, cv2.LINE_AA)


def draw_art(seed: int) -> np.ndarray:
    """A face's art (no corner mark): its tint, border and shapes."""
    rng = random.Random(seed)
    tint = tuple(int(200 + rng.random() * 55) for _ in range(3))
    img = np.full((FACE_H, FACE_W, 3), tint, np.uint8)
    border = PALETTE[rng.randrange(len(PALETTE))]
    cv2.rectangle(img, (12, 12), (FACE_W - 13, FACE_H - 13), border, 6)
    for _ in range(rng.randint(3, 6)):
        kind = rng.choice(["circle", "triangle", "square", "pentagon", "star"])
        centre = (rng.randint(55, FACE_W - 55), rng.randint(85, FACE_H - 85))
        _shape(img, kind, centre, rng.randint(22, 48), PALETTE[rng.randrange(len(PALETTE))],
               rng.random() * math.pi)
    if rng.random() < 0.5:
        y = rng.randint(100, FACE_H - 100)
        cv2.rectangle(img, (30, y), (FACE_W - 30, y + 16), PALETTE[rng.randrange(len(PALETTE))],
                      -1)
    return img


def draw_faces(names: list[str], seed: int = 0,
               shared: list[tuple[str, str]] = ()) -> dict[str, np.ndarray]:
    """A face for each of ``names`` (BGR, FACE_W x FACE_H). Each pair in
    ``shared`` has the same art; every face has its own corner mark."""
    art_of = {n: i for i, n in enumerate(names)}
    for a, b in shared:
        art_of[b] = art_of[a]
    faces = {}
    for i, name in enumerate(names):
        img = draw_art(seed * 1000 + art_of[name])
        mark = _mark(i)
        cv2.rectangle(img, (14, 14), (72, 58), (250, 250, 250), -1)
        cv2.putText(img, mark, (18, 50), cv2.FONT_HERSHEY_DUPLEX, 1.2, (20, 20, 20), 2,
                    cv2.LINE_AA)
        corner = img[14:58, 14:72]          # and upside down, bottom right
        img[FACE_H - 58:FACE_H - 14, FACE_W - 72:FACE_W - 14] = cv2.rotate(corner,
                                                                          cv2.ROTATE_180)
        faces[name] = img
    return faces


def _mark(i: int) -> str:
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    return letters[i % len(letters)] + str(i // len(letters) + 2)


def photo_of(face: np.ndarray, rng: random.Random | None = None) -> np.ndarray:
    """The host holding ``face`` under the camera to teach it: a frame with
    the card flat and square in the middle (a little turned), on the felt."""
    rng = rng or random.Random(0)
    table = felt(rng.randrange(1000))
    quad = _pose((W // 2, H // 2), rng.uniform(-4, 4), 0.0)
    out, _ = _paste(table, face, quad)
    return out


def felt(seed: int, size: tuple[int, int] = (W, H)) -> np.ndarray:
    """The table: green felt with a texture of its own (``size``: w, h)."""
    w, h = size
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 9, (h // 4, w // 4)).astype(np.float32)
    noise = cv2.resize(noise, (w, h), interpolation=cv2.INTER_CUBIC)
    base = np.empty((h, w, 3), np.float32)
    base[:] = (45, 95, 40)
    base += noise[:, :, None] + rng.normal(0, 4, (h, w, 1))
    return np.clip(base, 0, 255).astype(np.uint8)


def _pose(centre, angle_deg: float, tilt: float) -> np.ndarray:
    """The card's corners in the frame: upright card of CARD_W x CARD_H at
    ``centre``, turned ``angle_deg``, with a keystone ``tilt`` (the camera
    not quite above the spot: the far side a little narrower)."""
    cx, cy = centre
    hw, hh = CARD_W / 2, CARD_H / 2
    pts = np.array([[-hw * (1 - tilt), -hh], [hw * (1 - tilt), -hh], [hw * (1 + tilt), hh],
                    [-hw * (1 + tilt), hh]], dtype=np.float32)
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=np.float32)
    return pts @ rot.T + np.array([cx, cy], dtype=np.float32)


def _paste(scene: np.ndarray, face: np.ndarray, quad: np.ndarray,
           shadow: bool = True, sleeve: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``face`` warped onto ``scene`` at ``quad`` with its soft shadow; the
    new scene and the card's mask (the scene's size). ``sleeve``: the card
    is in a sleeve, the lamp's sheen across it at this offset (-1..1): a
    glossy rim around the card and a bright band over it."""
    h, w = scene.shape[:2]
    src = np.array([[0, 0], [FACE_W - 1, 0], [FACE_W - 1, FACE_H - 1], [0, FACE_H - 1]],
                   dtype=np.float32)
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    warped = cv2.warpPerspective(face, m, (w, h), flags=cv2.INTER_AREA)
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, quad.astype(np.int32), 255, cv2.LINE_AA)
    outer, c = None, quad.mean(axis=0)
    if sleeve is not None:          # the sleeve: 6 % wider and longer than the card
        outer = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(outer, ((quad - c) * 1.06 + c).astype(np.int32), 255, cv2.LINE_AA)
    # away from the card, its sleeve and its shadow nothing changes: the
    # frame is blended only around them, to the same pixels (most of a
    # clip's rendering time was the rest of the frame)
    box = _around(quad, w, h) or np.s_[0:h, 0:w]
    out = scene.copy()
    out[box] = _blend(scene[box], warped[box], mask[box], shadow,
                      None if sleeve is None else (outer[box], c, sleeve, box))
    return out, mask if outer is None else outer


def _around(quad: np.ndarray, w: int, h: int, margin: int = 16):
    """The part of the frame around ``quad`` that its card, sleeve and
    shadow (3 px down and right, blurred 4 px) touch, with room to spare;
    None when that reaches the frame's edge (the shadow wraps round there)."""
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - margin
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + margin
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        return None
    return np.s_[y0:y1, x0:x1]


def _blend(scene: np.ndarray, warped: np.ndarray, mask: np.ndarray, shadow: bool,
           sleeve: tuple | None) -> np.ndarray:
    """The warped card over ``scene`` where ``mask`` says, its shadow
    first, then its sleeve (``(outline, centre, sheen, where)``: the
    sleeve's mask, the card's centre, the sheen's offset and where this
    part lies in the frame)."""
    out = scene.astype(np.float32)
    if shadow:
        sh = cv2.GaussianBlur(np.roll(mask, (3, 3), axis=(0, 1)), (9, 9), 0) / 255.0
        out *= (1 - 0.55 * sh)[:, :, None]
    a = (mask / 255.0)[:, :, None]
    out = out * (1 - a) + warped.astype(np.float32) * a
    if sleeve is not None:
        out = _sleeve(out, mask, *sleeve)
    return np.clip(out, 0, 255).astype(np.uint8)


def _sleeve(out: np.ndarray, mask: np.ndarray, outer: np.ndarray, c: np.ndarray,
            sheen: float, where: tuple) -> np.ndarray:
    """The sleeve over a pasted card (``outer``: its outline's mask): a
    hazy plastic rim, and a soft band of the lamp's sheen across it
    (``where``: the frame's rows and columns ``out`` shows)."""
    rim = ((outer.astype(np.float32) - mask) / 255.0).clip(0, 1)[:, :, None]
    out = out * (1 - 0.35 * rim) + 200 * 0.35 * rim
    rows, cols = where
    yy, xx = np.mgrid[rows, cols].astype(np.float32)
    band = np.exp(-(((xx - c[0]) + (yy - c[1]) * 0.6 - sheen * 60) / 14.0) ** 2)
    out += (70 * band * (outer / 255.0))[:, :, None]
    return out


def _hand(scene: np.ndarray, x: float, y: float, angle: float, arm: float = 0) -> np.ndarray:
    """A hand (palm and four fingers, skin coloured) with its palm at (x, y),
    the fingers towards ``angle``; ``arm``: its forearm this long behind
    the palm (a player's hand reaching in from her edge of the frame)."""
    over = scene.copy()
    skin = (120, 160, 215)
    a = math.radians(angle)
    ux, uy = math.cos(a), math.sin(a)
    if arm:
        cv2.line(over, (int(x), int(y)), (int(x - ux * arm), int(y - uy * arm)), skin, 62,
                 cv2.LINE_AA)
    cv2.ellipse(over, (int(x), int(y)), (48, 40), angle, 0, 360, skin, -1, cv2.LINE_AA)
    for k in range(4):
        off = (k - 1.5) * 20
        bx, by = x + ux * 30 - uy * off, y + uy * 30 + ux * off
        ex, ey = bx + ux * 62, by + uy * 62
        cv2.line(over, (int(bx), int(by)), (int(ex), int(ey)), skin, 17, cv2.LINE_AA)
    return over


@dataclass
class Reveal:
    """One card of a clip: its name and the truth of its flip."""

    card: str
    settle_frame: int            # the first frame where it lies in place
    t_ns: int                    # ... its time (from the clip's first frame)
    carried: bool = False        # a hand carried it in
    passed: bool = False         # a hand passed over it once it lay still
    cases: tuple = ()            # the hard cases it met (:data:`CASES`)
    seat: str | None = None      # whose spot it was turned onto (:func:`render_rounds`)
    let_go_ns: int | None = None  # the first frame it lies still, no fingertip on it (None: t_ns)

    @property
    def still_ns(self) -> int:
        """When it lies still: in place, the flipper's fingertips off it."""
        return self.t_ns if self.let_go_ns is None else self.let_go_ns


@dataclass
class Clip:
    """The frames (BGR) and their times, and the truth of every reveal."""

    frames: list = field(default_factory=list)
    times: list = field(default_factory=list)
    reveals: list = field(default_factory=list)

    def save(self, folder: Path) -> Path:
        """As a frame folder (companion.camera.clip's format): JPEG frames
        and times.csv."""
        from companion.camera.clip import write_times

        folder.mkdir(parents=True, exist_ok=True)
        rows = []
        for i, (img, t) in enumerate(zip(self.frames, self.times)):
            name = f"{i + 1:05d}.jpg"
            cv2.imwrite(str(folder / name), img, [cv2.IMWRITE_JPEG_QUALITY, 88])
            rows.append((name, t))
        write_times(folder, rows)
        return folder

    def save_video(self, path: Path) -> Path:
        """As an MJPG video at FPS (the frames' size)."""
        h, w = self.frames[0].shape[:2]
        w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (w, h))
        for img in self.frames:
            w.write(img)
        w.release()
        return path


@dataclass
class Look:
    """How hard the clip is (each reveal draws its own from these)."""

    light: float = 0.25          # the light drifts by up to this (a share)
    flicker: float = 0.04        # ... and flickers frame to frame
    cast: float = 0.12           # the clip's colour cast, per channel
    glare_p: float = 0.5         # the clip has a glare spot (the lamp's reflection)
    carry_p: float = 0.4         # a hand carries the card in
    pass_p: float = 0.3          # a hand passes over the card once it lies still
    tilt: float = 0.08           # the camera's keystone, at most
    slide_frames: tuple = (4, 9)
    still_frames: tuple = (18, 40)  # the card lies still this long before the next
    sleeve_p: float = 0.3        # the clip's cards are sleeved
    cover_p: float = 0.2         # the flipper's fingertips stay on the card a while
    cover_frames: tuple = (3, 10)
    unison_frames: int = 8       # a seated round's cards land within this many frames
    sweep_p: float = 0.4         # a seated round's cards are taken off the table after it


#: the hard cases a reveal is tagged with: on a pile (a card below it),
#: fingers (a hand carried it in), hand over (a hand passed over it once
#: still), cover (fingertips on it when it landed), glare (the clip's lamp
#: reflection), sleeve, tilt (keystone over 4 %), cast (a channel over 8 %
#: off), fast (slid in in 5 frames or fewer: the heaviest motion blur),
#: turned (upside down on the pile)
CASES = ("pile", "fingers", "hand over", "cover", "glare", "sleeve", "tilt", "cast", "fast",
         "turned")


def render_reveals(cards: list[str], faces: dict[str, np.ndarray], seed: int = 0,
                   look: Look = Look(), gaps_ns: list[int] | None = None,
                   lead_frames: int = 10) -> Clip:
    """The clip of ``cards`` turned one after the other onto the pile (see
    the module docstring). ``gaps_ns``: the time from each card's settling to
    the next card's start (else ``look.still_frames``)."""
    scene, table = _camera(seed, look, (W, H))
    rng, tilt, sleeved = scene.rng, scene.tilt, scene.sleeved
    clip_cases = scene.cases()
    for _ in range(lead_frames):            # the camera is on before the first card
        scene.emit(table)
    for n, card in enumerate(cards):
        angle = rng.uniform(-15, 15) + (180 if rng.random() < 0.5 else 0)
        rest = (W // 2 + rng.randint(-28, 28), H // 2 + 10 + rng.randint(-22, 22))
        side = rng.choice([(-1, 0), (1, 0), (0, 1), (0, -1)])
        slide = rng.randint(*look.slide_frames)
        carried, passed = rng.random() < look.carry_p, rng.random() < look.pass_p
        sheen = rng.uniform(-1, 1) if sleeved else None
        covered = rng.randint(*look.cover_frames) if rng.random() < look.cover_p else 0
        scene.slide(table, faces[card], rest, angle, side, slide, carried, sheen)
        table, _ = _paste(table, faces[card], _pose(rest, angle, tilt), sleeve=sheen)
        settle = len(scene.clip.frames)
        cases = dict(clip_cases, pile=n > 0, fingers=carried, cover=covered > 0,
                     fast=slide <= 5, turned=abs(angle) > 90)
        if gaps_ns is not None and n < len(gaps_ns):
            still = max(6, round(gaps_ns[n] / FRAME_NS))
        else:
            still = rng.randint(*look.still_frames)
        hand_at = rng.randint(8, max(8, still - 8)) if passed and still >= 16 else None
        cases["hand over"] = hand_at is not None
        covered = min(covered, still - 1)
        scene.clip.reveals.append(Reveal(card, settle, settle * FRAME_NS, carried, passed,
                                         tuple(c for c in CASES if cases[c]),
                                         let_go_ns=(settle + covered) * FRAME_NS))
        scene.lie(table, rest, side, still, hand_at, covered)
    return scene.clip


def _camera(seed: int, look: Look, size: tuple[int, int]):
    """A clip's camera over its table (seeded): the scene (its colour cast,
    keystone, the lamp's glare, whether the cards are sleeved) and the felt."""
    rng = random.Random(seed)
    table = felt(seed, size)
    cast = np.array([1 + rng.uniform(-look.cast, look.cast) for _ in range(3)], np.float32)
    tilt = rng.uniform(0, look.tilt)
    glare = _glare(rng, size) if rng.random() < look.glare_p else None   # the lamp's, all along
    sleeved = rng.random() < look.sleeve_p
    return _Scene(Clip(), look, cast, glare, rng, tilt, sleeved), table


@dataclass
class _Scene:
    """A clip being rendered: its frames, how hard it is, its camera."""

    clip: Clip
    look: Look
    cast: np.ndarray
    glare: np.ndarray | None
    rng: random.Random
    tilt: float
    sleeved: bool

    def emit(self, img: np.ndarray) -> None:
        _emit(self.clip, img, self.look, self.cast, self.glare, self.rng)

    def cases(self) -> dict[str, bool]:
        """The hard cases every reveal of the clip meets (its camera's)."""
        return {"glare": self.glare is not None, "sleeve": self.sleeved, "tilt": self.tilt > 0.04,
                "cast": float(np.abs(self.cast - 1).max()) > 0.08}

    def slide(self, table, face, rest, angle, side, frames, carried, sheen) -> None:
        """The card sliding in from ``side`` to ``rest``, motion-blurred."""
        start = (rest[0] + side[0] * 200, rest[1] + side[1] * 150)
        for k in range(frames):
            u = 1 - (1 - k / frames) ** 2                # eases into place
            c = (start[0] + (rest[0] - start[0]) * u, start[1] + (rest[1] - start[1]) * u)
            quad = _pose(c, angle + (1 - u) * 25, self.tilt)
            img, _ = _paste(table, face, quad, sleeve=sheen)
            img = cv2.blur(img, (max(1, int(9 * (1 - u))) * 2 + 1, 1)) if u < 0.95 else img
            if carried:
                img = _hand(img, c[0] - side[0] * 70 - side[1] * 0, c[1] - side[1] * 75, 0)
            self.emit(img)

    def round(self, table, turns: list[_Turn], end: int, piles: dict) -> np.ndarray:
        """A seated round's frames up to ``end``: the cards sliding in
        (each blurred along its own path), each joining its player's pile
        on the frame it lands, the hands over them; the table after it."""
        for t in range(len(self.clip.frames), end):
            for turn in turns:
                if turn.land == t:
                    quad = _pose(turn.rest, turn.angle, self.tilt)
                    table, _ = _paste(table, turn.face, quad, sleeve=turn.sheen)
                    piles[turn.seat].append((turn.face, quad, turn.sheen))
            img = table
            for turn in turns:
                if turn.land - turn.slide <= t < turn.land:
                    img = self._sliding(img, turn, t - turn.land + turn.slide)
            for turn in turns:
                k = t - turn.land
                if 0 <= k < turn.covered + 3 and turn.covered:
                    img = self._fingertips(img, turn, max(0, k - turn.covered + 1) * 30)
                if turn.hand_at is not None and turn.hand_at <= k < turn.hand_at + 6:
                    img = _hand(img, turn.rest[0] - 160 + (k - turn.hand_at) * 64,
                                turn.rest[1] + 20, -10, ARM)
            self.emit(img)
        return table

    def _sliding(self, img, turn: _Turn, k: int) -> np.ndarray:
        """``turn``'s card ``k`` frames into its slide from its player's edge
        (as :meth:`slide`: eased, turning into place), blurred along its path
        only; her hand on it when she carries it in."""
        side, rest = turn.side, turn.rest
        start = (rest[0] + side[0] * 200, rest[1] + side[1] * 150)
        u = 1 - (1 - k / turn.slide) ** 2
        c = (start[0] + (rest[0] - start[0]) * u, start[1] + (rest[1] - start[1]) * u)
        img, mask = _paste(img, turn.face, _pose(c, turn.angle + (1 - u) * 25, self.tilt),
                           sleeve=turn.sheen)
        if u < 0.95:
            n = max(1, int(9 * (1 - u))) * 2 + 1
            along = (n, 1) if side[0] else (1, n)
            near = cv2.dilate(mask, np.ones(along[::-1], np.uint8)) > 0
            img[near] = cv2.blur(img, along)[near]
        if turn.carried:                # palm behind the card, fingers over it
            img = _hand(img, c[0] + side[0] * 60, c[1] + side[1] * 60,
                        math.degrees(math.atan2(-side[1], -side[0])), ARM)
        return img

    def _fingertips(self, img, turn: _Turn, back: float) -> np.ndarray:
        """Her fingertips 22 px onto the edge of the card she just turned
        (drawn ``back`` px away)."""
        side = np.array(turn.side, np.float32)
        edge = float(((_pose(turn.rest, turn.angle, self.tilt) - turn.rest) @ side).max())
        reach = edge + 92 - 22 + back
        return _hand(img, turn.rest[0] + side[0] * reach, turn.rest[1] + side[1] * reach,
                     math.degrees(math.atan2(-side[1], -side[0])), ARM)

    def sweep(self, bare, piles: dict, seats: dict, size) -> None:
        """A player (the round's winner) taking every card off the table:
        her hand onto each pile in turn, then drawing it off towards her
        edge (blurred); the bare felt a while after."""
        rng = self.rng
        winner = seats[rng.choice(sorted(seats))]
        side = _side(winner, size)
        away = np.array([winner[0] + side[0] * 260, winner[1] + side[1] * 220], np.float32)
        toward = math.degrees(math.atan2(-side[1], -side[0]))
        for player in [p for p in seats if piles[p]]:
            cards, piles[player] = piles[player], []
            table = bare
            for other in seats:          # the table without this pile
                for face, quad, sheen in piles[other]:
                    table, _ = _paste(table, face, quad, sleeve=sheen)
            centre = cards[-1][1].mean(axis=0)
            for k in range(7):
                u = max(0, k - 2) / 4                   # two frames to take hold, then away
                shift = (away - centre) * u
                img = table
                for face, quad, sheen in cards:
                    img, mask = _paste(img, face, quad + shift, sleeve=sheen)
                if u > 0:
                    near = cv2.dilate(mask, np.ones((9, 9), np.uint8)) > 0
                    img[near] = cv2.blur(img, (9, 9))[near]
                x, y = centre + shift + np.array(side, np.float32) * 60
                self.emit(_hand(img, x, y, toward, ARM))
        for _ in range(rng.randint(12, 24)):
            self.emit(bare)

    def lie(self, table, rest, side, still, hand_at, covered) -> None:
        """The card lying still: the flipper's fingertips on its edge for
        ``covered`` frames (then drawn back), a hand passing over it from
        ``hand_at``."""
        toward = math.degrees(math.atan2(-side[1], -side[0]))
        reach = (CARD_W if side[0] else CARD_H) / 2 + 92 - 22     # fingertips 22 px on it
        for k in range(still):
            img = table
            if k < covered + 3 and covered:
                back = max(0, k - covered + 1) * 30
                img = _hand(table, rest[0] + side[0] * (reach + back),
                            rest[1] + side[1] * (reach + back), toward)
            if hand_at is not None and hand_at <= k < hand_at + 6:
                x = rest[0] - 160 + (k - hand_at) * 64
                img = _hand(img, x, rest[1] + 20, -10)
            self.emit(img)


#: a seated game's frame (w, h) by its number of players: the camera sees the
#: whole table, each player's spot in front of her
SEAT_FRAMES = {2: (640, 480), 3: (640, 480), 4: (720, 540), 5: (800, 600), 6: (800, 600)}
#: a player's forearm behind her hand (pixels: past the frame's edge): a
#: hand reaching onto a spot so near the edge shows no palm alone, nor
#: fingertips alone (a block of them is a card's shape)
ARM = 400
#: the players round the table, in their order
PLAYERS = ("ana", "bo", "cy", "di", "ed", "flo")
#: the spots lie this far in from the frame's edge (a card turned any way
#: lies whole inside the frame) ...
SEAT_MARGIN = 130
#: ... and at least this many card lengths apart (the spotter gives each
#: point to the nearest spot: a card a little off its spot stays in it)
SEAT_APART = 1.6


def seat_spots(n: int) -> dict[str, tuple[int, int]]:
    """Where each of ``n`` players (2-6, :data:`PLAYERS`) turns her cards,
    ``{player: (x, y)}`` in the frame :data:`SEAT_FRAMES` gives: evenly round
    an ellipse SEAT_MARGIN in from its edges, the first player's at the
    bottom, or half a step on from there when that is what keeps the spots
    SEAT_APART card lengths apart (six players)."""
    w, h = SEAT_FRAMES[n]
    a, b = w / 2 - SEAT_MARGIN, h / 2 - SEAT_MARGIN
    for step in (0, 0.5):
        at = [math.pi / 2 + 2 * math.pi * (k + step) / n for k in range(n)]
        spots = [(round(w / 2 + a * math.cos(t)), round(h / 2 + b * math.sin(t))) for t in at]
        if min(math.dist(p, q) for i, p in enumerate(spots) for q in spots[:i]) \
                >= SEAT_APART * CARD_H:
            return dict(zip(PLAYERS, spots))
    raise ValueError(f"no room for {n} players' spots")


def _side(spot, size) -> tuple[int, int]:
    """The frame's edge nearest ``spot`` (a unit step towards it): where its
    player sits, whose hands come from there."""
    (x, y), (w, h) = spot, size
    away = {(-1, 0): x, (1, 0): w - x, (0, -1): y, (0, 1): h - y}
    return min(away, key=away.get)


def _facing(spot, size) -> float:
    """The angle a card lies at upright for the player at ``spot`` (the one
    at the bottom: 0; facing her across the table: 180)."""
    return math.degrees(math.atan2(spot[1] - size[1] / 2, spot[0] - size[0] / 2)) - 90


def teach_frames(seats: dict[str, tuple[int, int]], face: np.ndarray, seed: int = 0,
                 look: Look = Look(), size: tuple[int, int] | None = None) -> dict[str, np.ndarray]:
    """The host teaching the seats before the game (as
    ``companion.camera.seats.teach_seat`` is given them): for each player, a
    frame of the table :func:`render_rounds` shows (the same seed, look and
    size: its felt, light and camera) with one card (``face``) lying square
    to her on her spot."""
    size = size or SEAT_FRAMES[len(seats)]
    scene, table = _camera(seed, look, size)
    out = {}
    for player, spot in seats.items():
        quad = _pose(spot, _facing(spot, size), scene.tilt)
        scene.emit(_paste(table, face, quad, sleeve=0.0 if scene.sleeved else None)[0])
        out[player] = scene.clip.frames[-1]
    return out


@dataclass
class _Turn:
    """One player's card of a seated round, as it will be rendered."""

    seat: str
    face: np.ndarray
    rest: tuple[int, int]        # where it comes to lie
    angle: float
    side: tuple[int, int]        # the edge its player sits at
    slide: int                   # frames it slides for ...
    land: int                    # ... up to this one (its first frame in place)
    carried: bool
    sheen: float | None
    covered: int = 0             # frames her fingertips stay on it
    hand_at: int | None = None   # frames after it landed that a hand passes over it


def render_rounds(rounds: list[dict[str, str]], faces: dict[str, np.ndarray],
                  seats: dict[str, tuple[int, int]], seed: int = 0, look: Look = Look(),
                  lead_frames: int = 10, size: tuple[int, int] | None = None) -> Clip:
    """The clip of a seated game (Chomp!): each round ``{player: card}``,
    every player turning her card at once onto her own spot (``seats``,
    :func:`seat_spots`; ``size``: the frame's, else :data:`SEAT_FRAMES`').
    Each card slides in from its player's edge of the frame, the round's
    cards landing within ``look.unison_frames`` of each other, with the
    hard cases of :func:`render_reveals` (a hand carrying it, fingertips
    left on it, a hand passing over it, glare, cast, keystone, sleeves,
    upside down, fast), onto her pile of the rounds before; after a round
    (``look.sweep_p``) a player's hand takes every card off the table, pile
    by pile, and the next round is turned onto the bare felt. One
    :class:`Reveal` a card (``seat``: its player's), round by round in the
    order of each round's players."""
    size = size or SEAT_FRAMES[len(seats)]
    scene, table = _camera(seed, look, size)
    bare, rng, clip_cases = table, scene.rng, scene.cases()
    piles: dict[str, list] = {p: [] for p in seats}     # each spot's cards: (face, quad, sheen)
    for _ in range(lead_frames):
        scene.emit(table)
    for n, cards in enumerate(rounds):
        turns = []
        for player, card in cards.items():
            spot = seats[player]
            turns.append(_Turn(
                player, faces[card],
                (spot[0] + rng.randint(-10, 10), spot[1] + rng.randint(-10, 10)),
                _facing(spot, size) + rng.uniform(-15, 15) + (180 if rng.random() < 0.5 else 0),
                _side(spot, size), rng.randint(*look.slide_frames), 0,
                rng.random() < look.carry_p, rng.uniform(-1, 1) if scene.sleeved else None))
        start, spread = len(scene.clip.frames), rng.randint(0, look.unison_frames)
        for turn in turns:
            turn.land = start + max(t.slide for t in turns) + rng.randint(0, spread)
        end = max(t.land for t in turns) + rng.randint(*look.still_frames)
        for turn, card in zip(turns, cards.values()):
            still = end - turn.land
            if rng.random() < look.cover_p:
                turn.covered = min(rng.randint(*look.cover_frames), still - 1)
            if rng.random() < look.pass_p and still >= 16:
                turn.hand_at = rng.randint(8, still - 8)
            upside = abs((turn.angle + 180) % 360 - 180) > 90
            cases = dict(clip_cases, pile=bool(piles[turn.seat]), fingers=turn.carried,
                         cover=turn.covered > 0, fast=turn.slide <= 5, turned=upside)
            cases["hand over"] = turn.hand_at is not None
            scene.clip.reveals.append(Reveal(card, turn.land, turn.land * FRAME_NS, turn.carried,
                                             turn.hand_at is not None,
                                             tuple(c for c in CASES if cases[c]), turn.seat,
                                             (turn.land + turn.covered) * FRAME_NS))
        table = scene.round(table, turns, end, piles)
        if n < len(rounds) - 1 and rng.random() < look.sweep_p:
            scene.sweep(bare, piles, seats, size)
            table = bare
    return scene.clip


#: each game's pairs of faces that share their art (and differ in the corner)
SHARED = {"chope": [("table:red", "table:orange"), ("food:laksa", "food:satay")],
          "chomp": [("little-fish", "big-fish")],
          "hawker": [("you-tiao", "rojak"), ("egg", "flour")]}


def game_deck(game: str) -> dict[str, tuple[int, str]]:
    """``{face: (copies, pile)}`` of the cards a game turns face up: Chope!'s
    deck, Chomp!'s creatures, Hawker Wars' Dishes, Black Market ingredients
    and Action/Event cards (the rules' own data)."""
    from companion.games import get_game

    if game == "hawker":
        import json

        data = json.loads((Path(__file__).parents[2] / "companion/games/data/hawker.json")
                          .read_text(encoding="utf-8"))
        out = {k: (v["copies"], "dish") for k, v in data["dishes"].items()}
        out.update({k: (v["copies"], "market") for k, v in data["ingredients"].items()})
        out.update({k: (n, "action") for k, n in {**data["actions"], **data["events"]}.items()})
        return out
    deck = get_game(game).setup(["a", "b", "c"], {})["deck"]
    counts = deck if isinstance(deck, dict) else {c: deck.count(c) for c in deck}
    return {k: (n, "deck") for k, n in counts.items()}


def deals(game: str, reveals: int, seed: int = 0, per_clip: int = 19) -> list[list[tuple]]:
    """Clips of ``per_clip`` reveals (``reveals`` in all), each a new game:
    ``[(card, the faces the tracker still allows), ...]``. The piles are
    shuffled; Hawker Wars turns a Dish, a Black Market card or an Action
    at random; the allowed faces are those left in the pile turned."""
    rng = random.Random(seed)
    deck = game_deck(game)
    out: list[list[tuple]] = []
    while sum(map(len, out)) < reveals:
        piles: dict[str, list[str]] = {}
        for face, (copies, pile) in deck.items():
            piles.setdefault(pile, []).extend([face] * copies)
        for cards in piles.values():
            rng.shuffle(cards)
        clip = []
        for _ in range(min(per_clip, reveals - sum(map(len, out)))):
            pile = rng.choice(sorted(p for p, c in piles.items() if c))
            clip.append((piles[pile][-1], tuple(sorted(set(piles[pile])))))
            piles[pile].pop()
        out.append(clip)
    return out


def deals_seated(game: str, reveals: int, seed: int = 0, players=(3, 5),
                 rounds: int = 5) -> list[list[dict[str, tuple]]]:
    """Seated games (Chomp!) of up to ``rounds`` rounds, ``reveals`` cards in
    all (the last game's last round whole: a few more at most), each a new
    game of ``players`` players (a count, or the range each game's is drawn
    from; :data:`PLAYERS`): the deck dealt out, each player's share
    shuffled into her own pile, and each round every player's top card:
    ``[{player: (card, the faces the tracker still allows her: those left
    in her pile)}, ...]`` a round."""
    rng = random.Random(seed)
    deck = [face for face, (copies, _) in game_deck(game).items() for _ in range(copies)]
    out: list[list[dict[str, tuple]]] = []
    left = reveals
    while left > 0:
        n = players if isinstance(players, int) else rng.randint(*players)
        cards = list(deck)
        rng.shuffle(cards)
        piles = {p: cards[k::n] for k, p in enumerate(PLAYERS[:n])}
        game_rounds = []
        for _ in range(min(rounds, -(-left // n), min(map(len, piles.values())))):
            game_rounds.append({p: (pile[-1], tuple(sorted(set(pile))))
                                for p, pile in piles.items()})
            for pile in piles.values():
                pile.pop()
        left -= n * len(game_rounds)
        out.append(game_rounds)
    return out


def _glare(rng: random.Random, size: tuple[int, int] = (W, H)) -> np.ndarray:
    """A soft spot of the lamp's light (added to every frame), towards the
    middle of a frame of ``size``."""
    w, h = size
    spot = np.zeros((h, w), np.float32)
    r = rng.randint(18, 40)
    x = rng.randint(150 * w // W, 330 * w // W)
    cv2.circle(spot, (x, rng.randint(110 * h // H, 250 * h // H)), r, 1.0, -1)
    return (cv2.GaussianBlur(spot, (0, 0), r / 2) * 110)[:, :, None]


def _emit(clip: Clip, img: np.ndarray, look: Look, cast, glare, rng: random.Random) -> None:
    i = len(clip.frames)
    gain = 1 + look.light * math.sin(i / 45.0) + rng.uniform(-look.flicker, look.flicker)
    out = img.astype(np.float32)
    out *= cast * gain
    if glare is not None:
        out += glare * gain          # the lamp's reflection dims with the lamp
    clip.frames.append(np.clip(out, 0, 255, out=out).astype(np.uint8))
    clip.times.append(i * FRAME_NS)


__all__ = ["CASES", "FPS", "FRAME_NS", "PLAYERS", "SEAT_FRAMES", "SHARED", "Clip", "Look",
           "Reveal", "deals", "deals_seated", "draw_faces", "felt", "game_deck", "photo_of",
           "render_reveals", "render_rounds", "seat_spots", "teach_frames"]
