"""A table's seat in a convention: its pairing from the league, and what its
pages are told.

The league publishes each table's pairing, retained, on
``<prefix>/_league/<table>/pairing`` (:mod:`.convention`); the table
receives it on its publisher's own connection
(:meth:`~companion.league.publisher.LeaguePublisher.listen`) and shows it on
its scoreboard and host console as a *notice*: the round, the game and the
players in seat order, and whether the game being played is that pairing.
A table that starts another game, or other players, is told so (a warning:
its result will not count) on every page, the host console included.

:func:`seat_notice` is pure (the words for a pairing and the table's game);
:class:`TableSeat` wires it to the session and the pages.
"""

from __future__ import annotations

import logging
from typing import Callable

from .convention import same_players
from .topics import LeagueError, loads

log = logging.getLogger(__name__)

#: The notice's key on the table's pages.
NOTICE_KEY = "league"


def check_pairing(msg: dict, table: str) -> dict:
    """A pairing message for ``table``, checked; LeagueError if it is not one."""
    ok = (msg.get("table") == table and isinstance(msg.get("round"), int)
          and isinstance(msg.get("rounds"), int) and isinstance(msg.get("game"), str)
          and isinstance(msg.get("players"), list) and len(msg["players"]) <= 32
          and all(isinstance(p, str) and 0 < len(p) <= 64 for p in msg["players"])
          and isinstance(msg.get("floor"), int))
    if not ok:
        raise LeagueError(f"not a pairing for table {table}")
    return msg


def seat_notice(pairing: dict | None, state: dict) -> dict | None:
    """What the table's pages say of its pairing, given its public state
    (``game``, ``game_id``, ``title``, ``players``, ``finished``): None
    without a pairing, else ``{"key", "level" (info | warn), "title", "text"}``."""
    if not pairing:
        return None
    head = f"Round {pairing['round']} of {pairing['rounds']}"
    title, seats = pairing.get("title") or pairing["game"], ", ".join(pairing["players"])

    def say(level: str, text: str, top: str | None = None) -> dict:
        return {"key": NOTICE_KEY, "level": level, "title": top or f"{head} · {title}",
                "text": text}

    gid = state.get("game_id")
    if pairing.get("done"):          # until the table plays on after the night
        last = pairing.get("counted_game") or pairing["floor"]
        if isinstance(gid, int) and isinstance(last, int) and gid > last:
            return None
        return say("info", "The convention is over: the final standings are on the league "
                           "screen.", "Convention over")
    if not pairing["players"]:
        return say("info", "No pod at this table this round.", head)
    if pairing.get("counted"):
        return say("info", f"{seats}: the result is counted. The next round is seated when "
                           f"every table has finished.")
    names = [p.get("name") for p in state.get("players") or [] if isinstance(p, dict)]
    if not (isinstance(gid, int) and gid > pairing["floor"] and state.get("game")):
        return say("info", f"Start {title} with {seats} (in this seat order).")
    if state.get("game") == pairing["game"] and same_players(pairing["players"], names):
        return say("info", f"{seats}: finished, the result is on its way to the league."
                   if state.get("finished") else f"{seats}: playing.")
    playing = state.get("title") or state.get("game")
    return say("warn", f"This table is playing {playing} with {', '.join(map(str, names))}, "
                       f"but round {pairing['round']} seats {seats} here for {title}: this "
                       f"game's result will not count. Start {title} with {seats}.",
               f"{head}: not this table's pairing")


class TableSeat:
    """Listens for the table's pairing and keeps its pages' notice current.

    ``session``: the table's session (its state updates re-check the
    game); ``publisher``: the table's
    :class:`~companion.league.publisher.LeaguePublisher` (its connection
    and table id); ``show(notice | None)``: puts the notice on the pages."""

    def __init__(self, session, publisher, show: Callable[[dict | None], None]):
        self.session, self.publisher, self.show = session, publisher, show
        self.pairing: dict | None = None
        self.notice: dict | None = None
        self._unsubscribe = None

    def start(self) -> "TableSeat":
        self._unsubscribe = self.session.subscribe(self._on_update)
        self.publisher.listen(self.publisher.topics.pairing(self.publisher.table_id),
                              self.on_pairing)
        return self

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def on_pairing(self, payload: bytes) -> None:
        """A pairing arrived (an empty payload clears it)."""
        try:
            self.pairing = check_pairing(loads(payload), self.publisher.table_id) \
                if payload else None
        except LeagueError as exc:
            log.warning("league: ignored a pairing: %s", exc)
            return
        self._refresh(self.session.snapshot())

    def _on_update(self, update: dict) -> None:
        if self.pairing is not None and update.get("type") == "state" and \
                isinstance(update.get("data"), dict):
            self._refresh(update["data"])

    def _refresh(self, state: dict) -> None:
        notice = seat_notice(self.pairing, state)
        if notice != self.notice:
            self.notice = notice
            try:
                self.show(notice)
            except Exception:
                log.exception("league: cannot show the pairing")


__all__ = ["NOTICE_KEY", "TableSeat", "check_pairing", "seat_notice"]
