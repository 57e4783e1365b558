"""The synthetic seated rounds (tests/kit/cardscenes.py ``render_rounds``:
Chomp!'s cards turned at once, each onto its player's spot) played through
the seats' spotter (companion/camera/seats.py)."""

from __future__ import annotations

import math

import pytest

cv2 = pytest.importorskip("cv2")

from companion.camera.recognise import Look, find_card, rank, straighten  # noqa: E402
from companion.camera.seats import Seat, SeatSpotter  # noqa: E402
from tests.kit.cardscenes import (FRAME_NS, SEAT_APART, CARD_H, Look as Scene,  # noqa: E402
                                  draw_faces, photo_of, render_rounds,
                                  seat_spots, teach_frames)

CREATURES = ["shark", "seal", "big-fish", "little-fish", "eel"]


@pytest.fixture(scope="module")
def faces():
    return draw_faces(CREATURES, seed=1, shared=[("little-fish", "big-fish")])


@pytest.fixture(scope="module")
def looks(faces):
    out = {}
    for name, face in faces.items():
        photo = photo_of(face)
        out[name] = Look.of(straighten(photo, find_card(photo)))
    return out


def _play(clip, spots, face, seed):
    """The clip through a SeatSpotter of the seats taught from its teach frames."""
    seated = {p: Seat.of(find_card(img)) for p, img in teach_frames(spots, face, seed=seed).items()}
    spotter = SeatSpotter(seated)
    return [s for img, t in zip(clip.frames, clip.times) for s in spotter.feed(t, img)]


def test_the_spots_of_two_to_six_players_lie_apart():
    for n in range(2, 7):
        spots = list(seat_spots(n).values())
        assert len(spots) == n
        assert min(math.dist(p, q) for i, p in enumerate(spots) for q in spots[:i]) \
            >= SEAT_APART * CARD_H


@pytest.mark.slow   # a rendered seated clip (4 s): the full suite and CI run it
def test_four_cards_turned_at_once_are_four_flips_each_on_its_seat_and_face(faces, looks):
    spots = seat_spots(4)
    cards = {"ana": "shark", "bo": "little-fish", "cy": "big-fish", "di": "seal"}
    clip = render_rounds([cards], faces, spots, seed=4, look=Scene(carry_p=0.5, cover_p=0.5))
    lands = [r.settle_frame for r in clip.reveals]
    assert max(lands) - min(lands) <= 8 and {r.seat for r in clip.reveals} == set(cards)
    got = _play(clip, spots, faces["eel"], seed=4)
    assert sorted(s.seat for s in got) == sorted(cards)
    for s in got:
        truth = next(r for r in clip.reveals if r.seat == s.seat)
        assert abs(s.t_ns - truth.t_ns) <= 2 * FRAME_NS, (s.seat, s.t_ns, truth)
        assert rank(s.face, looks, CREATURES)[0][0] == truth.card, s.seat


@pytest.mark.slow   # a rendered seated clip (4 s): the full suite and CI run it
def test_a_hand_taking_the_cards_away_between_rounds_is_no_flip(faces):
    spots = seat_spots(3)
    rounds = [{"ana": "shark", "bo": "seal", "cy": "eel"},
              {"ana": "big-fish", "bo": "little-fish", "cy": "seal"}]
    clip = render_rounds(rounds, faces, spots, seed=2,
                         look=Scene(sweep_p=1, carry_p=0, pass_p=0, cover_p=0))
    assert not any("pile" in r.cases for r in clip.reveals)     # the first round's went
    got = _play(clip, spots, faces["eel"], seed=2)
    assert len(got) == 6, [(s.seat, s.t_ns // FRAME_NS) for s in got]
