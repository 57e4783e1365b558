"""The camera at the table: frames in, cards logged through the table's one way in.

:class:`CameraWatcher` takes a source's frames (:meth:`CameraWatcher.frame`,
any thread), spots each card that comes to rest (:mod:`companion.camera.flips`),
recognises it among the faces taught at this table
(:mod:`companion.camera.recognise`), narrowed to the cards the tracker says
can still be drawn (:func:`drawable`), and:

* at ``threshold`` or above, logs the game's draw event for it
  (``{"type": "flip", "card": ...}``) with ``session.log(event,
  seen_ns=flip)``: the host's ``log``, through the same way in
  (the pipeline's ``call``), with the card's flip time as its log time, so
  its race is armed there and judged with a lag of ~0;
* below it, keeps a :class:`Question` with the two or three likeliest faces
  (:attr:`CameraWatcher.questions`; :meth:`CameraWatcher.answer` logs the one
  the host taps, at the same flip time).

In a game where everyone turns a card at once onto her own spot
(``Game.seat_draw``: Chomp!'s ``turn``), the spots are the seats taught at the
table (:mod:`companion.camera.seats`): a card settling on a player's spot is
recognised among the cards that player's pile can hold, and logged as her
``turn``; with no seats taught, the camera logs nothing and asks nothing (the
console asks the host to teach them).

A log the tracker refuses (the host logged that card by hand already) is
counted in :attr:`refused`, never raised: the camera never blocks the game.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from ..games import RulesError
from .flips import Settled, Spotter
from .recognise import Look, rank
from .seats import Seat, SeatSpotter

log = logging.getLogger(__name__)

#: the share of the evidence a face must have to be logged without asking
THRESHOLD = 0.9


def drawable(game, state, seat: str | None = None) -> dict[str, dict]:
    """``{card: its draw event}`` for every card the tracker says can come
    next (``Game.chance_outcomes``), or with ``seat``, that player can turn
    onto her spot next (the game's ``seat_draw`` events among its
    ``host_events``); while a race or a choice is still open, the cards that
    can come once it is settled (its first outcome)."""
    for _ in range(4):
        if seat is None:
            found = {e["card"]: e for e, _p in game.chance_outcomes(state)
                     if isinstance(e, dict) and game.is_draw(e)
                     and isinstance(e.get("card"), str)}
        else:
            found = {e["card"]: e for e in game.host_events(state)
                     if isinstance(e, dict) and e.get("type") == game.seat_draw
                     and e.get("player") == seat and isinstance(e.get("card"), str)}
        if found:
            return found
        nxt = (game.race_outcomes(state) if game.race_request(state) is not None
               else game.decisions(state))
        if not nxt:
            return {}
        try:
            state = game.apply(state, nxt[0])
        except RulesError:
            return {}
    return {}


@dataclass
class Question:
    """A card the camera was not sure of: the likeliest faces, for one tap."""

    id: int
    t_ns: int
    choices: list = field(default_factory=list)     # [(card, share)], likeliest first
    seat: str | None = None                         # whose spot it lies on

    def to_json(self) -> dict:
        return {"id": self.id, "t_ns": self.t_ns, "seat": self.seat,
                "choices": [{"card": c, "p": round(p, 3)} for c, p in self.choices]}


class CameraWatcher:
    """The camera's eye on one table's reveal spot (see the module docstring).
    ``taught``: ``{face name: Look}`` (:mod:`companion.camera.faces`);
    ``seats``: ``{player: Seat}`` (:mod:`companion.camera.seats`)."""

    def __init__(self, session, taught: dict[str, Look], threshold: float = THRESHOLD,
                 spotter: Spotter | None = None, on_logged=None, max_questions: int = 5,
                 seats: dict[str, Seat] | None = None):
        self.session = session
        self.taught = taught
        self.threshold = threshold
        self.spotter = spotter or Spotter(sure=self._sure)
        self.seats: dict[str, Seat] = dict(seats or {})
        self._seated: SeatSpotter | None = None
        self._ranked = None                 # (face, its ranking) the spotter last asked of
        self.questions: list[Question] = []
        self.logged: list[tuple[int, str, float]] = []     # (flip t_ns, card, share)
        self.refused = 0
        self._ids = 0
        self._lock = threading.Lock()
        #: called after each log: ``on_logged(t_ns, card, share, update, auto, seat)``
        self.on_logged = on_logged
        self.max_questions = max_questions

    def set_seats(self, seats: dict[str, Seat]) -> None:
        """The seats taught now: the spots are looked at afresh."""
        with self._lock:
            self.seats = dict(seats)
            self._seated = None

    def reset(self) -> None:
        """Look at the spot (or the spots) afresh: what lies there now is
        the pile, no new card (after teaching)."""
        with self._lock:
            self.spotter = Spotter(sure=self._sure)
            self._seated = None

    def frame(self, frame) -> None:
        """One frame from the source (its ``t_ns`` and ``image``)."""
        game = self.session.game
        with self._lock:
            if game is not None and game.seat_draw is not None:
                here = {p: self.seats[p] for p in self.session.names if p in self.seats}
                if not here:
                    return                  # whose card is whose: teach the seats first
                if self._seated is None or self._seated.seats != here:
                    self._seated = SeatSpotter(here, sure=self._sure)
                found = self._seated.feed(frame.t_ns, frame.image)
            else:
                one = self.spotter.feed(frame.t_ns, frame.image)
                found = [] if one is None else [one]
        for settled in found:
            self.settled(settled)

    def _sure(self, face, seat: str | None = None) -> bool:
        """The spotter's question one frame short of still: is this face
        already sure (its likeliest drawable face at the threshold)?"""
        game = self.session.game
        if game is None:
            return False
        can = drawable(game, self.session.state, seat)
        ranked = rank(face, self.taught, can if can else None)
        self._ranked = (face, ranked)
        return bool(ranked) and ranked[0][1] >= self.threshold and ranked[0][0] in can

    def settled(self, card: Settled) -> None:
        """A card came to rest: log it, or ask."""
        s = self.session
        game, state = s.game, s.state
        if game is None:
            return
        can = drawable(game, state, card.seat)
        asked, self._ranked = self._ranked, None
        ranked = (asked[1] if asked is not None and asked[0] is card.face
                  else rank(card.face, self.taught, can if can else None))
        if ranked and ranked[0][1] >= self.threshold and ranked[0][0] in can:
            self._log(can[ranked[0][0]], card.t_ns, ranked[0][1], seat=card.seat)
            return
        self._ids += 1
        self.questions.append(Question(self._ids, card.t_ns, ranked[:3], card.seat))
        del self.questions[:-self.max_questions]      # the oldest go: the game moved on

    def answer(self, question_id: int, card: str) -> dict | None:
        """The host's tap on a question: log ``card`` at the flip time seen
        (KeyError: no such question; RulesError, the question kept: the
        tracker refuses that card now)."""
        q = self._question(question_id)
        game = self.session.game
        event = drawable(game, self.session.state, q.seat).get(card)
        if event is None:                   # the tracker will say why it refuses it
            event = ({"type": "flip", "card": card} if q.seat is None
                     else {"type": game.seat_draw, "player": q.seat, "card": card})
        out = self._log(event, q.t_ns, 1.0, auto=False, seat=q.seat)
        self.questions.remove(q)
        return out

    def dismiss(self, question_id: int) -> None:
        """The host's "none of these": forget the question, log nothing."""
        self.questions.remove(self._question(question_id))

    def _question(self, question_id: int) -> Question:
        q = next((x for x in list(self.questions) if x.id == question_id), None)
        if q is None:
            raise KeyError(f"no camera question {question_id}")
        return q

    def _log(self, event: dict, t_ns: int, share: float, auto: bool = True,
             seat: str | None = None) -> dict | None:
        try:
            out = self.session.log(dict(event), seen_ns=t_ns)
        except RulesError as exc:
            self.refused += 1
            log.info("camera: %s refused: %s", event, exc)
            if not auto:
                raise
            return None
        self.logged.append((t_ns, event["card"], share))
        if self.on_logged is not None:
            self.on_logged(t_ns, event["card"], share, out, auto, seat)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"questions": [q.to_json() for q in self.questions],
                "logged": len(self.logged), "refused": self.refused}


__all__ = ["CameraWatcher", "Question", "THRESHOLD", "drawable"]
