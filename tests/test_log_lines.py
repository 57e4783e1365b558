"""The log shows the event as the tracker read it (issue 31, item 9): an
event that leaves out what the tracker takes from the state (a Hawker Wars
draw without its player or pile, a race verdict without its reason) is kept
and shown completed, never "None draws 1 Action card" or "race (None) won
by bo". The state was right before; the line and the stored event were not."""

from __future__ import annotations

from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.web import HAWKER_SETUP


def test_a_draw_without_player_or_pile_is_logged_as_the_draw_due():
    s = TableSession(Store(":memory:"))
    s.new_game("hawker", [{"name": "ana"}, {"name": "bo"}])
    for ev in HAWKER_SETUP:
        s.log(ev)
    update = s.log({"type": "draw"})
    line = update["data"]["line"]
    assert line.startswith("ana draws") and "None" not in line, line
    stored = s.store.events(s.game_id)[-1][1]
    assert stored["player"] == "ana" and stored["pile"] == "ingredient"
    assert "None" not in s.host_snapshot()["log"][-1]["line"]


def test_a_race_verdict_without_its_reason_is_logged_with_the_races():
    s = TableSession(Store(":memory:"))
    s.new_game("chope", [{"name": "ana", "buzzer": "b1"}, {"name": "bo", "buzzer": "b2"}])
    s.log({"type": "flip", "card": "table:red"})
    s.cancel_race()                         # the host logs the verdict by hand
    update = s.log({"type": "race", "winner": "bo"})
    assert "None" not in update["data"]["line"], update["data"]["line"]
    assert s.store.events(s.game_id)[-1][1]["reason"] == "chope"
