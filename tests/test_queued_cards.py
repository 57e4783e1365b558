"""Cards logged while a race is open are queued behind it (companion/table/
queued.py) only when the tracker can be shown to take them once the races on
the way have an outcome. Issue 31: with the search's budget spent (six Table
cards queued behind an open race, four players), an unknown event type or a
card that does not exist was queued with 200 "queued" and shown on every
phone's waiting list."""

from __future__ import annotations

import pytest

from companion.games import RulesError
from tests.kit.chopetable import ChopeTable

TABLES = ["table:blue", "table:green", "table:red"] * 2


@pytest.fixture
def busy():
    """Red Table flipped, nobody slammed yet (its race open), six more Table
    cards logged behind it: queued."""
    t = ChopeTable()
    t.log(0.0, {"type": "flip", "card": "table:red"})
    for k, card in enumerate(TABLES):
        out = t.log(0.1 + 0.05 * k, {"type": "flip", "card": card})
        assert out["type"] == "queued", out
    return t


@pytest.mark.parametrize("event, why", [
    ({"type": "explode"}, "unknown Chope! event 'explode'"),
    ({"type": "flip", "card": "table:nonexistent"}, "no 'table:nonexistent' card"),
])
def test_an_event_the_tracker_can_never_take_is_refused_not_queued(busy, event, why):
    waiting = busy.s.snapshot()["queued"]
    assert len(waiting) == len(TABLES)
    with pytest.raises(RulesError, match=why):
        busy.s.log(event)
    assert busy.s.snapshot()["queued"] == waiting      # nothing added to any phone's list


def test_a_card_that_can_follow_is_still_queued_behind_a_long_queue(busy):
    out = busy.s.log({"type": "flip", "card": "food:laksa"})
    assert out["type"] == "queued"
    assert busy.s.snapshot()["queued"][-1] == "flip Laksa"
