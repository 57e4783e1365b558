"""A Chope! table on a clock the test moves: a real TableSession over an
in-memory store, four players on buzzers b1 to b4, its events placed at
seconds from the first flip and ticked like the pipeline's thread between
them (the race judge's and the host's-slips tests)."""

from __future__ import annotations

from companion.races.edges import Edge
from companion.record.eventlog import effective_events
from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.helpers import MS, Clock, S

PLAYERS = [{"name": n, "buzzer": f"b{i + 1}"} for i, n in enumerate(["ana", "bo", "cy", "dee"])]
BUZZER = {p["name"]: p["buzzer"] for p in PLAYERS}


class ChopeTable:
    """A Chope! table whose events happen at given seconds from the first flip."""

    def __init__(self):
        self.clock = Clock()
        self.t0 = self.clock.t + S
        self.s = TableSession(Store(":memory:"), clock=self.clock)
        self.s.new_game("chope", PLAYERS)

    def at(self, sec: float) -> int:
        return self.t0 + round(sec * S)

    def until(self, sec: float) -> None:
        """Tick like the pipeline's thread up to ``sec``."""
        end = self.at(sec)
        while True:
            due = self.s.next_deadline()
            step = min(end, due if due is not None and due > self.clock.t else end,
                       self.clock.t + 5 * MS)
            self.clock.t = max(self.clock.t, step)
            self.s.tick()
            if self.clock.t >= end:
                return

    def slam(self, player: str, sec: float) -> None:
        self.until(sec)
        self.s.feed_edge(Edge(BUZZER[player], True, self.at(sec)))
        self.s.feed_edge(Edge(BUZZER[player], False, self.at(sec) + 80 * MS))

    def log(self, sec: float, event: dict) -> dict:
        self.until(sec)
        return self.s.log(event)

    def events(self) -> list[dict]:
        """The game's effective log (undone events taken out)."""
        return effective_events(e for _, e in self.s.store.events(self.s.game_id))

    def races(self) -> list[dict]:
        """Every race event logged, undone or not."""
        return [e for _, e in self.s.store.events(self.s.game_id) if e.get("type") == "race"]

    def flips(self) -> list[str]:
        """The cards turned, in the effective log's order."""
        return [e["card"] for e in self.events() if e.get("type") == "flip"]

    def winners(self) -> list[str | None]:
        """Each effective race's winner, in order."""
        return [e.get("winner") for e in self.events() if e.get("type") == "race"]

    def answer_truly(self, truth: dict) -> bool:
        """:func:`answer_truly` at this table."""
        return answer_truly(self.s, truth)


def answer_truly(session: TableSession, truth: dict) -> bool:
    """The host answers the question ``session`` asks about a card, if any,
    with the truth (``truth``: card id -> its first slammer): the choice
    naming that player, or no race when none does; True if there was a
    question."""
    race = session.snapshot().get("race") or {}
    if not race.get("confirm"):
        return False
    pick = next((c for c in race.get("choices") or ()
                 if c.get("player") == truth.get(race.get("card"))), None)
    if pick is None:
        session.confirm_race(False)
    else:
        session.confirm_race(True, pick["t_ns"])
    return True
