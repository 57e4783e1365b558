"""The host's slips (issue 29, G): two cards logged the other way round than
they were turned, or a forgotten card logged after the next one (across a
turn too), are noticed where the presses say the order is unlikely, and the
host console offers the swap in one tap; the races are judged again after
it. Through a real Chope! TableSession (a clock the test moves, an
in-memory store) and through the host's HTTP endpoint. Each failed on the
code before: the log order was trusted as the flip order."""

from __future__ import annotations

import pytest

from companion.games import RulesError
from tests.kit.chopetable import ChopeTable
from tests.kit.web import HostClient, make_app


def swapped_log() -> ChopeTable:
    """Blue Table turned at 0 (Cy 0.33, Bo 0.42, Dee 0.55), Green Table at
    2.3 (Dee 2.75, Bo 2.9); the host logs Green at 3.2, then Blue at 3.8."""
    t = ChopeTable()
    for who, sec in [("cy", 0.33), ("bo", 0.42), ("dee", 0.55), ("dee", 2.75), ("bo", 2.9)]:
        t.slam(who, sec)
    t.log(3.2, {"type": "flip", "card": "table:green"})
    t.log(3.8, {"type": "flip", "card": "table:blue"})
    truth = {"table:green": "dee", "table:blue": "cy"}
    for sec in (8.0, 12.0, 16.0):
        t.until(sec)
        if t.s.snapshot().get("reorder"):
            break
        t.answer_truly(truth)
    return t


def test_a_swapped_log_is_offered_and_one_tap_gives_each_table_its_own_slams():
    t = swapped_log()
    offer = t.s.snapshot()["reorder"]
    assert offer is not None, t.events()
    assert offer["cards"] == ["table:blue", "table:green"]      # "Blue ... before Green?"
    assert offer["lines"] == ["flip Blue Table", "flip Green Table"]
    assert t.s.host_snapshot()["reorder"] == offer
    before = len(t.s.store.events(t.s.game_id))
    done = t.s.reorder(offer["events"])
    assert done["swapped"] is True
    t.until(24.0)
    assert t.flips() == ["table:blue", "table:green"]
    assert t.winners() == ["cy", "dee"]
    stored = [e["type"] for _, e in t.s.store.events(t.s.game_id)][before:]
    assert stored[:stored.index("flip")] == ["undo"] * stored.index("flip")   # append-only
    assert t.s.snapshot()["reorder"] is None
    with pytest.raises(RulesError):                  # the offer is gone: a second tap
        t.s.reorder(offer["events"])


def test_a_declined_swap_keeps_the_log_and_is_not_offered_again():
    t = swapped_log()
    offer = t.s.snapshot()["reorder"]
    flips, version = t.flips(), t.s.version
    assert t.s.reorder(offer["events"], accept=False) == {"swapped": False, "order": None}
    assert t.flips() == flips and t.s.version == version
    assert t.s.snapshot()["reorder"] is None


def test_a_forgotten_bust_logged_after_the_next_turns_table_is_offered_and_fixed():
    """Ana flips Laksa (logged), then a second Laksa: a bust, her turn ends
    (the host forgets to log it). Bo flips the Blue Table; Ana slams it
    first (2.8), Cy 3.0, Dee 3.1. The host logs Blue at 3.3, then the
    forgotten Laksa at 3.9: logged so, Ana turned the Blue Table and may not
    chope it, and it went to Cy without a question."""
    t = ChopeTable()
    t.log(0.0, {"type": "flip", "card": "food:laksa"})
    for who, sec in [("ana", 2.8), ("cy", 3.0), ("dee", 3.1)]:
        t.slam(who, sec)
    t.log(3.3, {"type": "flip", "card": "table:blue"})
    t.log(3.9, {"type": "flip", "card": "food:laksa"})
    t.until(9.0)
    offer = t.s.snapshot()["reorder"]
    assert offer is not None and offer["cards"] == ["food:laksa", "table:blue"], t.events()
    t.s.reorder(offer["events"])
    t.until(16.0)
    assert t.flips() == ["food:laksa", "food:laksa", "table:blue"]
    assert t.winners() == ["ana"]
    assert t.s.game.current_player(t.s.state) == "bo"     # Bo's turn goes on


def test_cards_logged_in_their_order_are_not_offered_a_swap():
    t = ChopeTable()
    t.slam("cy", 0.33)
    t.slam("bo", 0.42)
    t.log(0.9, {"type": "flip", "card": "table:blue"})
    t.slam("dee", 2.75)
    t.slam("bo", 2.9)
    t.log(3.2, {"type": "flip", "card": "table:green"})
    t.until(12.0)
    assert t.winners() == ["cy", "dee"]
    assert t.s.snapshot()["reorder"] is None


# -- the host's endpoint -------------------------------------------------------


@pytest.fixture
def host_table():
    t = swapped_log()
    app = make_app(t.s, DEMO=True)
    return t, HostClient(app.test_client()), app


def test_the_console_swaps_the_cards_with_one_post(host_table):
    t, host, _ = host_table
    state = host.get("/api/host/state").json
    offer = state["reorder"]
    assert offer["cards"] == ["table:blue", "table:green"]
    r = host.post("/api/host/reorder", json={"events": offer["events"], "accept": True,
                                             "expected_version": state["version"]})
    assert r.status_code == 200, r.json
    assert r.json["reorder"]["swapped"] is True
    t.until(24.0)
    assert t.flips() == ["table:blue", "table:green"]
    assert t.winners() == ["cy", "dee"]
    assert host.get("/api/host/state").json["reorder"] is None


def test_the_swap_endpoint_refuses_a_stale_console_a_bad_body_and_no_login(host_table):
    t, host, app = host_table
    state = host.get("/api/host/state").json
    offer = state["reorder"]
    stale = host.post("/api/host/reorder", json={"events": offer["events"],
                                                 "expected_version": state["version"] - 3})
    assert stale.status_code == 409 and stale.json["rule"] == "version"
    for bad in ({"events": [1]}, {"events": offer["events"], "accept": "yes"},
                {"events": offer["events"], "extra": 1}, {"events": [True, False]}):
        r = host.post("/api/host/reorder", json=bad)
        assert r.status_code == 400, (bad, r.json)
    gone = host.post("/api/host/reorder", json={"events": [offer["events"][0], 99999]})
    assert gone.status_code == 400 and gone.json["rule"] == "reorder"
    phone = app.test_client()          # no PIN: refused
    assert phone.post("/api/host/reorder", json={"events": offer["events"]}).status_code in (401, 403)
    assert t.s.snapshot()["reorder"] == offer       # nothing changed


@pytest.mark.parametrize("crash_at", [1, 2, 3])
def test_a_crash_between_the_swaps_undos_loses_no_card_and_logs_none_twice(crash_at):
    """The swap undoes the log's tail one event at a time; each undo saves
    the queue that stands once it is done, in its own transaction. Before,
    the undos were saved first and the two cards queued after them: a kill
    in between lost both (acknowledged as logged)."""
    from companion.record.eventlog import effective_events

    t = swapped_log()
    offer = t.s.snapshot()["reorder"]
    store, real = t.s.store, t.s.store.append
    undos = []

    def dies_at_an_undo(game_id, event, *args, **kw):
        if event.get("type") == "undo":
            undos.append(event)
            if len(undos) == crash_at:
                raise SystemExit("killed")      # nothing of this transaction is written
        return real(game_id, event, *args, **kw)

    store.append = dies_at_an_undo
    try:
        t.s.reorder(offer["events"])
    except SystemExit:
        pass
    store.append = real
    logged = [e["card"] for e in effective_events([e for _, e in store.events(t.s.game_id)])
              if e.get("type") == "flip"]
    queued = [q["event"]["card"] for q in store.load_queued(t.s.game_id) or ()
              if q["event"].get("type") == "flip"]
    assert sorted(logged + queued) == ["table:blue", "table:green"], (logged, queued)
