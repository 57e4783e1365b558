"""The table session (issue #4): log, undo/redo, versions, races, resume, history.

Written against a small fake game defined here ("tally") so that it does not
depend on the real trackers; a few tests at the end use the real Chope! when
its tracker is importable.
"""

from __future__ import annotations

import csv
import io
import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from companion import games
from companion.races.edges import Edge
from companion.record.gamefile import GameFileError, rejudge_race, replay_lines
from companion.games import Game, RaceReason, RaceRequest, RulesError, rank_by
from companion.table.session import TableSession, effective_events
from companion.record.store import StaleVersion, Store

from tests.kit.helpers import MS, S, Clock, press, run


class Tally(Game):
    """A toy tracker: points, and cards that ask for races.

    ``point`` adds points; ``flip`` of a ``table`` card asks for an
    unannounced first-press race among the others (reason ``chope``), a
    ``mynah`` for an unannounced last-press race (``siam``), a ``reveal``
    for an announced first-press race (``chomp``). A race winner scores 1, a
    loser loses 1. The first to ``target`` points wins.
    """

    name = "tally"
    title = "Tally"
    min_players = 2
    max_players = 4
    score_unit = "tallies"
    race_reasons = (
        RaceReason("chope", "first-press", "Chope!", winner="{winner} chopes the {card}"),
        RaceReason("siam", "last-press", "Siam!", loser="{loser} pays for the {card}"),
        RaceReason("chomp", "first-press", "Chomp!", announced=True,
                   winner="{winner} chomps first", nobody="Nobody chomps"),
    )
    SECRETS = ("kaya-toast-secret", "otah-secret")

    def default_options(self):
        return {"target": 1000, "reject_races": False}

    def _setup(self, players, options):
        return {"players": players, "scores": {p: 0 for p in players}, "turn": 0,
                "pending": None, "target": options["target"],
                "reject": options["reject_races"], "cards": 0, "secrets": {}}

    def _apply(self, s, ev):
        t = ev["type"]
        players = s["players"]
        if s["pending"] is not None:
            if t != "race":
                raise RulesError("a race is pending: log its outcome first", "race")
            if s["reject"]:
                raise RulesError("this table refuses every race", "race")
            req = self.race_request(s)
            for key in ("winner", "loser"):
                who = ev.get(key)
                if who is not None and who not in req.eligible:
                    raise RulesError(f"{who!r} cannot be the {key}", "race")
            if ev.get("winner"):
                s["scores"][ev["winner"]] += 1
            if ev.get("loser"):
                s["scores"][ev["loser"]] -= 1
            s["pending"] = None
            return s
        if t == "point":
            p, n = ev.get("player"), ev.get("n")
            if p not in players:
                raise RulesError(f"no player {p!r}", "point")
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 3:
                raise RulesError("n must be 1 to 3", "point")
            s["scores"][p] += n
        elif t == "flip":
            card = ev.get("card")
            if card not in ("plain", "table", "mynah", "reveal"):
                raise RulesError(f"unknown card {card!r}", "flip")
            s["cards"] += 1
            if card != "plain":
                s["pending"] = {"card": card, "flipper": players[s["turn"]]}
        elif t == "race":
            raise RulesError("no race is pending", "race")
        elif t == "secret":                 # a hidden card, dealt to one player
            if ev.get("player") not in players or ev.get("card") not in self.SECRETS:
                raise RulesError("a secret card goes to a player", "secret")
            s["secrets"][ev["player"]] = ev["card"]
            return s
        else:
            raise RulesError(f"unknown event {t!r}", "format")
        s["turn"] = (s["turn"] + 1) % len(players)
        return s

    def race_request(self, s):
        pend = s["pending"]
        if pend is None:
            return None
        players = tuple(s["players"])
        info = {"card": pend["card"]}
        if pend["card"] == "table":
            return RaceRequest("first-press", tuple(p for p in players if p != pend["flipper"]),
                               "chope", players=players, info=info, flipper=pend["flipper"])
        if pend["card"] == "mynah":
            return RaceRequest("last-press", players, "siam", players=players, info=info)
        return RaceRequest("first-press", players, "chomp", announced=True, players=players,
                           info=info)

    def legal_events(self, s):
        req = self.race_request(s)
        if req is not None:
            key = "winner" if req.kind == "first-press" else "loser"
            return [{"type": "race", "reason": req.reason, key: p} for p in req.eligible] + [
                {"type": "race", "reason": req.reason}]
        return ([{"type": "point", "player": p, "n": n} for p in s["players"] for n in (1, 2, 3)]
                + [{"type": "flip", "card": c} for c in ("plain", "table", "mynah", "reveal")])

    def scores(self, s):
        return dict(s["scores"])

    def current_player(self, s):
        return None if self.finished(s) else s["players"][s["turn"]]

    def finished(self, s):
        return max(s["scores"].values()) >= s["target"]

    def ranking(self, s):
        return rank_by(list(s["players"]), lambda p: s["scores"][p])

    def public_view(self, s):
        return {"scores": dict(s["scores"]), "pending": s["pending"], "cards": s["cards"],
                "dealt": sorted(s["secrets"])}

    def private_view(self, s, player):
        return {"secret": s["secrets"].get(player)}

    def private_events(self, s, player):
        if player in s["secrets"] or s["pending"] is not None:
            return []
        return [{"type": "secret", "player": player, "card": c} for c in self.SECRETS]

    def public_event(self, ev):
        return {k: v for k, v in ev.items() if k != "card"} if ev["type"] == "secret" else ev


@pytest.fixture(autouse=True, scope="module")
def tally_registered():
    games.register_game(Tally, replace=True)
    try:
        yield
    finally:
        games.unregister_game("tally")


PLAYERS = [{"name": "ana", "buzzer": "b1"}, {"name": "bo", "buzzer": "b2"},
           {"name": "cy", "buzzer": "b3"}]


def make(store=None, options=None, **settings_):
    clock = Clock()
    store = store or Store(":memory:")
    s = TableSession(store, clock=clock, settings=settings_ or None)
    s.new_game("tally", PLAYERS, options or {})
    return s, clock


def logged(s):
    return [e for _, e in s.store.events(s.game_id)]


def fold(setup, events):
    """The state a list of effective events gives, applied one by one."""
    g = games.get_game("tally")
    st_ = setup
    for ev in events:
        st_ = g.apply(st_, ev)
    return st_


# ---------------------------------------------------------------------------
# logging, rejection, versions


def test_log_appends_durably_and_versions_are_event_ids():
    s, _ = make()
    assert s.version == 0
    upd = s.log({"type": "point", "player": "bo", "n": 2}, expected_version=0)
    assert upd["type"] == "state" and upd["id"] == s.version
    assert s.store.events(s.game_id) == [(upd["id"], {"type": "point", "player": "bo", "n": 2})]
    assert s.snapshot()["scores"]["bo"] == 2
    assert s.snapshot()["version"] == upd["id"]
    assert upd["data"]["line"] and upd["data"]["event"]["type"] == "point"


def test_refused_event_changes_nothing_and_is_not_logged():
    s, _ = make()
    s.log({"type": "point", "player": "bo", "n": 1})
    before, version = s.state, s.version
    with pytest.raises(RulesError, match="n must be 1 to 3"):
        s.log({"type": "point", "player": "bo", "n": 9})
    with pytest.raises(RulesError):
        s.log({"no": "type"})
    with pytest.raises(RulesError, match="nothing to redo"):
        s.redo()
    assert s.state == before and s.version == version
    assert len(logged(s)) == 1


def test_stale_version_is_rejected_with_a_clear_message_and_nothing_is_appended():
    s, _ = make()
    v0 = s.version
    s.log({"type": "point", "player": "ana", "n": 1}, expected_version=v0)
    with pytest.raises(StaleVersion, match="refresh") as exc:
        s.log({"type": "point", "player": "ana", "n": 1}, expected_version=v0)
    assert exc.value.expected == v0 and exc.value.current == s.version
    assert len(logged(s)) == 1
    with pytest.raises(StaleVersion):
        s.undo(expected_version=v0)
    assert len(logged(s)) == 1 and s.snapshot()["scores"]["ana"] == 1


def test_two_consoles_logging_at_once_exactly_one_wins_per_version(tmp_path):
    store = Store(tmp_path / "t.db")
    s, _ = make(store)
    rounds, n_threads = 15, 4
    barrier = threading.Barrier(n_threads)
    wins: dict[int, list[int]] = {}
    stale: list[int] = []
    lock = threading.Lock()

    def console(k):
        for _ in range(rounds):
            barrier.wait()
            v = s.version
            barrier.wait()          # everyone has read the same version
            try:
                s.log({"type": "point", "player": "ana", "n": 1, "console": k}, v)
                with lock:
                    wins.setdefault(v, []).append(k)
            except StaleVersion:
                with lock:
                    stale.append(k)
    threads = [threading.Thread(target=console, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == rounds and all(len(w) == 1 for w in wins.values())
    assert len(stale) == rounds * (n_threads - 1)
    evs = logged(s)
    assert len(evs) == rounds       # never a card logged twice
    assert s.snapshot()["scores"]["ana"] == rounds
    store.close()


# ---------------------------------------------------------------------------
# undo / redo (property tests)

op = st.one_of(
    st.tuples(st.just("point"), st.sampled_from(["ana", "bo", "cy"]), st.integers(1, 3)),
    st.just(("undo",)), st.just(("redo",)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=30))
def test_undo_redo_equal_a_replay_of_the_effective_events(ops):
    s, _ = make()
    setup = s.replay.states[0]
    eff: list[dict] = []
    undone: list[dict] = []
    accepted = 0
    for o in ops:
        if o[0] == "point":
            ev = {"type": "point", "player": o[1], "n": o[2]}
            s.log(ev, expected_version=s.version)
            eff.append(ev)
            undone.clear()
            accepted += 1
        elif o[0] == "undo":
            if eff:
                s.undo(s.version)
                undone.append(eff.pop())
                accepted += 1
            else:
                with pytest.raises(RulesError):
                    s.undo(s.version)
        else:
            if undone:
                s.redo(s.version)
                eff.append(undone.pop())
                accepted += 1
            else:
                with pytest.raises(RulesError):
                    s.redo(s.version)
        assert s.state == fold(setup, eff)
    log = logged(s)
    assert len(log) == accepted                     # the undo is logged, nothing deleted
    assert effective_events(log) == eff
    assert replay_lines(s.export_game().splitlines()).state == s.state
    again = TableSession(s.store, clock=s.clock)
    assert again.resume() and again.state == s.state and again.version == s.version
    assert again.snapshot()["can_redo"] == bool(undone)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ana", "bo", "cy"]), st.integers(1, 3)),
                min_size=1, max_size=15))
def test_undo_then_the_same_event_is_the_identity(points):
    s, _ = make()
    for p, n in points:
        s.log({"type": "point", "player": p, "n": n})
    before = s.state
    last = logged(s)[-1]
    s.undo()
    assert s.snapshot()["can_redo"]
    s.log(last)
    assert s.state == before
    assert not s.snapshot()["can_redo"]           # a new event clears the redo stack
    s.undo()
    s.redo()
    assert s.state == before


def test_undo_of_the_winning_event_reopens_the_game_in_the_history():
    s, _ = make(options={"target": 3})
    s.log({"type": "point", "player": "bo", "n": 3})
    assert s.snapshot()["finished"]
    info = s.store.game_info(s.game_id)
    assert info["finished"] and info["summary"]["ranking"][0] == ["bo"]
    with pytest.raises(RulesError, match="over"):
        s.log({"type": "point", "player": "ana", "n": 1})
    s.undo()
    assert not s.store.game_info(s.game_id)["finished"]
    s.redo()
    assert s.store.game_info(s.game_id)["finished"]


def test_a_failed_append_rolls_the_state_back(mocker):
    s, _ = make()
    s.log({"type": "point", "player": "bo", "n": 1})
    before, n = s.state, len(s.replay.events)
    mocker.patch.object(s.store, "append", side_effect=OSError("disk gone"))
    with pytest.raises(OSError):
        s.log({"type": "point", "player": "bo", "n": 2})
    with pytest.raises(OSError):
        s.undo()
    assert s.state == before and len(s.replay.events) == n


# ---------------------------------------------------------------------------
# resume


def test_resume_after_restart_equals_a_replay_of_the_log(tmp_path):
    path = tmp_path / "table.db"
    s, clock = make(Store(path))
    for p, n in [("ana", 1), ("bo", 2), ("cy", 3)]:
        s.log({"type": "point", "player": p, "n": n})
    s.undo()
    s.log({"type": "flip", "card": "table"})          # cy flips: ana and bo race
    clock.advance(200)
    press(s, clock, "b2")
    run(s, clock, 100)
    assert logged(s)[-1]["type"] == "race"
    snap = s.snapshot()
    s.store.close()                                   # the power cut

    store = Store(path)
    again = TableSession(store, clock=Clock(5 * S))   # a new boot: the clock restarted
    assert again.resume()
    assert again.state == s.state and again.version == s.version
    assert again.state == replay_lines(again.export_game().splitlines()).state
    snap2 = again.snapshot()
    for key in ("scores", "version", "players", "view", "ranking", "current_player",
                "last_event", "can_undo", "can_redo"):
        assert snap2[key] == snap[key], key
    assert snap2["race"]["phase"] == "decided" and snap2["race"]["verdict"]["winner"] == "bo"
    store.close()


def test_resume_with_no_game_and_resume_of_an_older_game(tmp_path):
    store = Store(tmp_path / "t.db")
    assert TableSession(store).resume() is False
    s, _ = make(store)
    first = s.game_id
    s.log({"type": "point", "player": "ana", "n": 1})
    second = s.new_game("tally", ["x", "y"])
    t = TableSession(store)
    assert t.resume() and t.game_id == second
    assert t.resume(first) and t.game_id == first and t.snapshot()["scores"]["ana"] == 1
    assert store.current_game() == first


def test_an_interrupted_race_comes_back_as_interrupted_and_can_be_rerun(tmp_path):
    path = tmp_path / "t.db"
    s, clock = make(Store(path))
    s.log({"type": "flip", "card": "reveal"})
    s.start_race(3000)
    run(s, clock, 3100)
    press(s, clock, "b2")                             # bo presses, then the power goes
    s.store.close()

    store = Store(path)
    again = TableSession(store, clock=Clock(2 * S))
    again.resume()
    race = again.snapshot()["race"]
    assert race["phase"] == "interrupted" and race["reason"] == "chomp"
    assert [o["player"] for o in race["order"]] == ["bo"]
    view = again.start_race(1000)                     # the host re-runs it
    assert view["phase"] == "countdown"
    assert store.load_live_race(again.game_id)[1]["edges"] == []
    store.close()


def test_resume_repairs_derived_data_and_names_an_event_the_tracker_refuses():
    store = Store(":memory:")
    s, _ = make(store, options={"target": 2})
    gid = s.game_id
    store.append(gid, {"type": "point", "player": "ana", "n": 2})   # written, then a crash
    store.save_live_race(gid, 0, {"reason": "chope", "spec": {}, "edges": []})
    again = TableSession(store)
    assert again.resume() and again.snapshot()["finished"]
    assert store.game_info(gid)["finished"]           # the end was recorded on resume
    assert store.load_live_race(gid) is None          # a stale live race is dropped
    assert again.snapshot()["race"] is None
    store.append(gid, {"type": "point", "player": "zed", "n": 1})
    from companion.table.session import ResumeError
    with pytest.raises(ResumeError, match="cannot be replayed: event"):
        TableSession(store).resume()


# ---------------------------------------------------------------------------
# races: unannounced (burst claiming)


def test_a_logged_card_takes_the_burst_recorded_before_it():
    s, clock = make()
    updates = []
    s.subscribe(updates.append)
    clock.advance(1000)
    t_bo = press(s, clock, "b2")                  # the card is flipped; bo is first
    clock.advance(0, us=800)
    press(s, clock, "b3")                         # cy 0.8 ms later
    run(s, clock, 2000)                           # the host logs it 2 s later
    assert [u["data"]["player"] for u in updates
            if u["type"] == "press" and u["data"]["pressed"]] == ["bo", "cy"]
    s.log({"type": "flip", "card": "table"})      # ana flipped: bo and cy are eligible
    run(s, clock, 50)
    race = logged(s)[-1]
    assert race["type"] == "race" and race["reason"] == "chope"
    assert race["winner"] == "bo" and race["spec"]["arm_ns"] == t_bo
    assert race["false_starts"] == [] and race["announced"] is False
    rejudge_race(race)                              # the record re-judges to itself
    assert s.snapshot()["scores"]["bo"] == 1
    assert s.snapshot()["race"]["phase"] == "decided"
    assert any(u["type"] == "state" and u["id"] == s.version for u in updates)


def test_the_flipper_pressing_first_is_ineligible_and_cannot_win():
    s, clock = make()
    press(s, clock, "b1")                         # ana (the flipper) slaps first
    clock.advance(0, us=500)
    press(s, clock, "b3")
    run(s, clock, 500)
    s.log({"type": "flip", "card": "table"})
    run(s, clock, 50)
    race = logged(s)[-1]
    assert race["winner"] == "cy" and race["ineligible"] == ["ana"]
    rejudge_race(race)


def test_a_burst_older_than_the_claim_window_is_not_taken():
    s, clock = make()
    press(s, clock, "b2")                         # a stray press long before
    run(s, clock, 12_000)
    s.log({"type": "flip", "card": "table"})
    assert s.snapshot()["race"]["phase"] == "live"
    run(s, clock, 400)
    press(s, clock, "b3")
    run(s, clock, 60)
    race = logged(s)[-1]
    assert race["winner"] == "cy"
    assert race["spec"]["arm_ns"] == clock.t - 60 * MS - 400 * MS


def test_a_burst_already_used_by_a_race_is_not_taken_again():
    s, clock = make()
    press(s, clock, "b2")
    run(s, clock, 300)
    s.log({"type": "flip", "card": "table"})      # ana flips; bo takes it
    run(s, clock, 100)
    assert logged(s)[-1]["winner"] == "bo"
    s.log({"type": "flip", "card": "table"})      # bo flips: the old burst is not his race
    assert s.snapshot()["race"]["phase"] == "live"
    assert s.snapshot()["race"]["order"] == []
    run(s, clock, 5_100)                          # nobody presses: the deadline decides
    race = logged(s)[-1]
    assert race["type"] == "race" and race["winner"] is None
    rejudge_race(race)


def test_last_press_race_waits_for_the_slow_player():
    s, clock = make()
    press(s, clock, "b1")
    clock.advance(0, us=300)
    press(s, clock, "b2")
    run(s, clock, 800)
    s.log({"type": "flip", "card": "mynah"})
    run(s, clock, 1_700)                          # cy is 2.5 s late: a new "burst", same race
    assert s.snapshot()["race"]["phase"] == "live"
    press(s, clock, "b3")
    run(s, clock, 60)
    race = logged(s)[-1]
    assert race["reason"] == "siam" and race["loser"] == "cy"
    rejudge_race(race)
    assert s.snapshot()["scores"]["cy"] == -1


def test_last_press_race_a_player_who_never_presses_loses_at_the_deadline():
    s, clock = make()
    press(s, clock, "b1")
    press(s, clock, "b3")
    run(s, clock, 500)
    s.log({"type": "flip", "card": "mynah"})
    run(s, clock, 4_400)
    assert s.snapshot()["race"]["phase"] == "live"
    run(s, clock, 200)
    race = logged(s)[-1]
    assert race["loser"] == "bo" and race["no_edge"] == ["bo"]


def test_undoing_an_automatic_race_does_not_bring_it_straight_back():
    s, clock = make()
    press(s, clock, "b2")
    run(s, clock, 300)
    s.log({"type": "flip", "card": "table"})
    run(s, clock, 100)
    n = len(logged(s))
    s.undo()                                       # the host disputes the race
    run(s, clock, 200)
    assert len(logged(s)) == n + 1                 # only the undo was logged
    assert s.snapshot()["race"]["phase"] == "pending"
    s.undo()                                       # ... and the card: it was a mynah
    s.log({"type": "flip", "card": "mynah"})       # the same burst becomes the mynah's
    assert s.snapshot()["race"]["phase"] == "live"
    assert [o["player"] for o in s.snapshot()["race"]["order"]] == ["bo"]


# ---------------------------------------------------------------------------
# races: announced


def test_announced_race_countdown_false_start_and_verdict_logged():
    s, clock = make()
    updates = []
    s.subscribe(updates.append)
    s.log({"type": "flip", "card": "reveal"})
    assert s.snapshot()["race"]["phase"] == "pending"
    view = s.start_race(3000)
    go = clock.t + 3000 * MS
    assert view["phase"] == "countdown" and view["go_ns"] == go and view["go_in_ms"] == 3000
    run(s, clock, 1000)
    press(s, clock, "b2")                          # bo jumps the gun
    run(s, clock, 2000)
    phases = [u["data"]["phase"] for u in updates if u["type"] == "race"]
    assert phases[0] == "countdown" and "live" in phases
    clock.advance(0, us=200_000)
    press(s, clock, "b3")                          # cy 200 ms after GO
    clock.advance(0, us=50_000)
    press(s, clock, "b1")
    run(s, clock, 100)
    race = logged(s)[-1]
    assert race["reason"] == "chomp" and race["announced"] is True
    assert race["winner"] == "cy" and race["false_starts"] == ["bo"]
    assert race["spec"]["arm_ns"] == go
    rejudge_race(race)
    st_ = s.stats()["players"]
    assert st_["cy"]["reaction_us"]["best"] == 200_000
    assert st_["cy"]["races_won"] == 1 and st_["bo"]["races_won"] == 0
    assert st_["bo"]["reaction_us"]["count"] == 0      # a false start is no reaction


def test_virtual_buzzer_is_marked_in_the_race_record():
    s, clock = make()
    s.log({"type": "flip", "card": "reveal"})
    s.start_race(0)
    clock.advance(120)
    s.virtual_press("ana")
    run(s, clock, 100)
    race = logged(s)[-1]
    assert race["winner"] == "ana" and race["virtual"] is True
    assert race["virtual_players"] == ["ana"]
    rejudge_race(race)
    with pytest.raises(RulesError):
        s.virtual_press("nobody")


def test_start_race_needs_a_race_and_a_game():
    s, _ = make()
    with pytest.raises(RulesError, match="no race"):
        s.start_race()
    empty = TableSession(Store(":memory:"))
    with pytest.raises(RulesError, match="no game"):
        empty.start_race()
    assert empty.snapshot()["game"] is None
    empty.tick()                                   # nothing to do, no crash


def test_auto_start_runs_announced_races_by_themselves():
    s, clock = make(auto_start=True, countdown_ms=500)
    s.log({"type": "flip", "card": "reveal"})
    assert s.snapshot()["race"]["phase"] == "countdown"


def test_a_verdict_the_game_refuses_is_a_fault_not_a_crash():
    s, clock = make(options={"reject_races": True})
    updates = []
    s.subscribe(updates.append)
    s.log({"type": "flip", "card": "reveal"})
    n = len(logged(s))
    s.start_race(0)
    clock.advance(10)
    press(s, clock, "b2")
    run(s, clock, 100)
    assert len(logged(s)) == n                     # nothing logged
    faults = s.snapshot()["faults"]
    assert faults[-1]["fault"] == "race-rejected" and "refuses" in faults[-1]["message"]
    assert any(u["type"] == "fault" for u in updates)
    race = s.snapshot()["race"]
    assert race["phase"] == "decided" and "refuses" in race["error"]
    run(s, clock, 100)                             # ticking on is fine


def test_a_stuck_buzzer_is_a_fault_and_unknown_buzzers_are_ignored():
    s, clock = make(stuck_ms=1000)
    s.feed_edge(Edge("b9", True, clock.t))
    assert s.unknown_edges == 1
    s.feed_edge(Edge("b1", True, clock.t))
    run(s, clock, 1100)
    assert s.snapshot()["faults"][-1] == {"player": "ana", "fault": "stuck",
                                         "t_ns": s.snapshot()["faults"][-1]["t_ns"]}


def test_tick_is_cheap_when_idle(mocker):
    s, clock = make()
    poll = mocker.spy(s.referee, "poll")
    for _ in range(100):
        clock.advance(5)
        s.tick()
    assert poll.call_count == 0
    press(s, clock, "b1", hold_ms=5)              # a tap shorter than the debounce
    run(s, clock, 50)
    assert poll.call_count >= 1


# ---------------------------------------------------------------------------
# subscribers and SSE catch-up


def test_subscribers_get_state_updates_with_log_ids_and_transient_ones_without():
    s, clock = make()
    got, bad = [], []
    unsub = s.subscribe(got.append)

    def broken(update):
        bad.append(update)
        raise RuntimeError("a dead socket")
    s.subscribe(broken)
    s.log({"type": "point", "player": "cy", "n": 1})
    press(s, clock, "b1")
    states = [u for u in got if u["type"] == "state"]
    assert states[-1]["id"] == s.version and states[-1]["data"]["scores"]["cy"] == 1
    presses = [u for u in got if u["type"] == "press"]
    assert presses and all(u["id"] is None and u["version"] == s.version for u in presses)
    assert len(bad) == len(got)
    unsub()
    s.log({"type": "point", "player": "cy", "n": 1})
    assert len(got) == len(bad) - 1


def test_a_subscriber_may_call_back_into_the_session():
    s, _ = make()
    seen = []

    def echo(update):
        seen.append(update["type"])
        if update["type"] == "state" and update["data"]["event"] == {
                "type": "point", "player": "ana", "n": 1}:
            s.log({"type": "point", "player": "bo", "n": 1})
    s.subscribe(echo)
    s.log({"type": "point", "player": "ana", "n": 1})
    assert s.snapshot()["scores"]["bo"] == 1 and seen.count("state") == 2


def test_updates_since_replays_from_the_log():
    s, _ = make()
    a = s.log({"type": "point", "player": "ana", "n": 1})["id"]
    s.log({"type": "point", "player": "bo", "n": 1})
    s.undo()
    assert s.updates_since(s.version) == []
    [upd] = s.updates_since(a)
    assert upd["id"] == s.version and upd["type"] == "state"
    assert [m["type"] for m in upd["data"]["missed"]] == ["point", "undo"]
    assert upd["data"]["scores"] == s.snapshot()["scores"]
    assert s.updates_since(0) is None
    assert s.updates_since(10 ** 9) is None
    old = s.version
    s.new_game("tally", ["x", "y"])
    assert s.updates_since(old) is None             # from another game: send a snapshot


# ---------------------------------------------------------------------------
# history: stats, export, import, CSV


def _play_a_game(s, clock):
    s.log({"type": "point", "player": "ana", "n": 3})
    s.log({"type": "flip", "card": "reveal"})
    s.start_race(1000)
    run(s, clock, 1000)
    clock.advance(0, us=150_000)
    press(s, clock, "b2")
    run(s, clock, 100)
    s.log({"type": "point", "player": "bo", "n": 3})
    s.log({"type": "point", "player": "bo", "n": 1})   # undone: must not count
    s.undo()
    s.log({"type": "point", "player": "ana", "n": 2})  # ana reaches 5


def test_stats_export_import_and_csv():
    s, clock = make(options={"target": 5})
    _play_a_game(s, clock)
    assert s.snapshot()["finished"]
    first = s.game_id
    s.new_game("tally", PLAYERS, {"target": 5})
    s.log({"type": "point", "player": "cy", "n": 2})   # an unfinished game
    stats = s.stats()
    assert stats["games"] == 2 and stats["finished"] == 1
    ana, bo = stats["players"]["ana"], stats["players"]["bo"]
    assert ana["wins"] == 1 and ana["points"] == 5 and ana["games"] == 2
    assert bo["wins"] == 0 and bo["points"] == 4 and bo["races_won"] == 1
    assert bo["reaction_us"]["count"] == 1 and bo["reaction_us"]["mean"] == 150_000
    assert stats["players"]["cy"]["points"] == 0      # unfinished games score nothing

    text = s.export_game(first)
    lines = text.splitlines()
    assert json.loads(lines[0])["game"] == "tally"
    assert [json.loads(x)["type"] for x in lines[1:]].count("undo") == 1   # the audit trail
    rep = replay_lines(lines)
    assert rep.summary()["scores"] == {"ana": 5, "bo": 4, "cy": 0}

    new = s.import_game(text)
    assert new not in (first, s.game_id) and s.store.current_game() == s.game_id
    info = s.store.game_info(new)
    assert info["source"] == "import" and info["finished"]
    assert info["players"] == s.store.game_info(first)["players"]
    assert s.export_game(new).splitlines()[1:] == lines[1:]
    assert s.stats()["players"]["ana"]["wins"] == 2

    rows = list(csv.DictReader(io.StringIO(s.export_csv())))
    assert len(rows) == 3 * 3
    r = next(r for r in rows if r["game_id"] == str(first) and r["player"] == "ana")
    assert r["score"] == "5" and r["rank"] == "1" and r["won"] == "1" and r["status"] == "finished"
    r = next(r for r in rows if r["game_id"] == str(first) and r["player"] == "bo")
    assert r["races_won"] == "1" and r["mean_reaction_us"] == "150000"
    assert {r["status"] for r in rows if r["game_id"] == str(s.game_id)} == {"playing"}


def test_import_refuses_a_bad_file_and_stores_nothing():
    s, _ = make()
    s.log({"type": "point", "player": "ana", "n": 1})
    text = s.export_game()
    n = len(s.history())
    bad = text + json.dumps({"type": "point", "player": "zed", "n": 1}) + "\n"
    with pytest.raises(GameFileError, match="line 3"):
        s.import_game(bad)
    tampered = text.replace('"n": 1', '"n": 7')
    with pytest.raises(GameFileError):
        s.import_game(tampered)
    assert len(s.history()) == n


def test_a_tampered_race_record_is_refused_on_import():
    s, clock = make()
    s.log({"type": "flip", "card": "reveal"})
    s.start_race(0)
    clock.advance(5)
    press(s, clock, "b2")
    run(s, clock, 100)
    text = s.export_game()
    assert s.import_game(text)
    forged = text.replace('"winner": "bo"', '"winner": "cy"')
    assert forged != text
    with pytest.raises(GameFileError, match="does not match its edges"):
        s.import_game(forged)


def test_players_colours_and_buzzers():
    s, clock = make()
    snap = s.snapshot()
    assert [p["buzzer"] for p in snap["players"]] == ["b1", "b2", "b3"]
    assert all(p["colour"].startswith("#") for p in snap["players"])
    s.set_player("ana", colour="teal", buzzer="b7")
    v = s.version
    s.feed_edge(Edge("b7", True, clock.t))
    assert s.referee.level("ana") and s.version == v
    assert TableSession(s.store).resume() and s.store.game_info(s.game_id)["players"][0] == {
        "name": "ana", "colour": "teal", "buzzer": "b7"}
    with pytest.raises(RulesError, match="same buzzer"):
        s.set_player("bo", buzzer="b7")
    with pytest.raises(RulesError):
        s.new_game("tally", ["solo"])
    with pytest.raises(RulesError, match="unknown game"):
        s.new_game("nope", ["a", "b"])


def test_host_snapshot_offers_legal_events_and_undo():
    s, _ = make()
    h = s.host_snapshot()
    assert h["undo"] is None and h["redo"] is None and h["legal_events"]
    s.log(h["legal_events"][0], h["version"])
    h = s.host_snapshot()
    assert h["undo"] and h["log"][-1]["id"] == s.version
    s.log({"type": "flip", "card": "table"})
    h = s.host_snapshot()
    assert h["race_request"]["reason"] == "chope"
    assert all(e["type"] == "race" for e in h["legal_events"])


# ---------------------------------------------------------------------------
# the real Chope! tracker, when it is there


def _chope():
    try:
        return games.get_game("chope")
    except Exception:
        return None


@pytest.mark.skipif(_chope() is None, reason="the Chope! tracker is not importable yet")
def test_real_chope_game_logs_and_resumes(tmp_path):
    import random
    path = tmp_path / "chope.db"
    store = Store(path)
    s = TableSession(store, clock=Clock())
    s.new_game("chope", ["ana", "bo", "cy"])
    rng = random.Random(4)
    for _ in range(60):
        legal = s.legal_events()
        if not legal:
            break
        s.log(rng.choice(legal), expected_version=s.version)
        if rng.random() < 0.1:
            s.undo()
    snap = s.snapshot()
    store.close()
    again = TableSession(Store(path), clock=Clock())
    assert again.resume()
    assert again.snapshot()["view"] == snap["view"]
    assert replay_lines(again.export_game().splitlines()).summary()["scores"] == snap["scores"]


@pytest.mark.skipif(_chope() is None, reason="the Chope! tracker is not importable yet")
def test_real_chope_table_card_takes_the_burst_and_the_mynah_waits_for_the_last(tmp_path):
    store = Store(tmp_path / "chope.db")
    clock = Clock()
    s = TableSession(store, clock=clock)
    s.new_game("chope", PLAYERS)
    press(s, clock, "b3")                          # cy slaps the table card first
    clock.advance(0, us=2_000)
    press(s, clock, "b2")
    run(s, clock, 2_000)
    s.log({"type": "flip", "card": "table:blue"}, expected_version=s.version)
    run(s, clock, 60)
    race = logged(s)[-1]
    assert race["type"] == "race" and race["reason"] == "chope" and race["winner"] == "cy"
    rejudge_race(race)
    assert s.state["race"] is None or not s.state["race"]
    assert s.snapshot()["race"]["phase"] == "decided" and not s.snapshot()["faults"]
    run(s, clock, 3_000)
    press(s, clock, "b1")                          # a Mynah: ana and bo slap, cy dithers
    press(s, clock, "b2")
    run(s, clock, 1_000)
    s.log({"type": "flip", "card": "mynah"}, expected_version=s.version)
    run(s, clock, 1_000)
    assert s.snapshot()["race"]["phase"] == "live"
    press(s, clock, "b3")
    run(s, clock, 60)
    race = logged(s)[-1]
    assert race["reason"] == "siam" and race["loser"] == "cy"
    rejudge_race(race)
    snap = s.snapshot()
    assert not snap["faults"]
    store.close()
    again = TableSession(Store(tmp_path / "chope.db"), clock=Clock())
    assert again.resume() and again.snapshot()["view"] == snap["view"]
    assert replay_lines(again.export_game().splitlines()).summary()["scores"] == snap["scores"]


def test_the_verdict_reaches_subscribers_before_the_race_is_logged(mocker):
    """The pages hear the verdict the moment the hold ends; the durable
    append of the race event (a disk sync) follows, then the new state."""
    s, clock = make()
    order = []
    s.subscribe(lambda u: order.append(("update", u["type"], (u["data"] or {}).get("phase"))))
    append = s.store.append

    def spy(*args, **kw):
        order.append(("append",))
        return append(*args, **kw)

    mocker.patch.object(s.store, "append", side_effect=spy)
    s.log({"type": "flip", "card": "reveal"})
    s.start_race(0)
    run(s, clock, 10)
    order.clear()
    press(s, clock, "b3")
    run(s, clock, 100)
    decided = order.index(("update", "race", "decided"))
    appended = order.index(("append",))
    assert decided < appended
    assert ("update", "state", None) in order[appended:]
    assert logged(s)[-1]["winner"] == "cy"


def test_a_stuck_buzzer_fault_is_recorded_and_still_shown_after_a_restart(tmp_path):
    path = tmp_path / "table.db"
    s, clock = make(Store(path), stuck_ms=1000)
    s.feed_edge(Edge("b2", True, clock.t))
    run(s, clock, 1100)
    stuck = s.snapshot()["faults"][-1]
    assert stuck["player"] == "bo" and stuck["fault"] == "stuck"
    s.store.close()
    with Store(path) as store:
        assert [f["fault"] for f in store.faults(s.game_id)] == ["stuck"]
        again = TableSession(store, clock=clock)
        assert again.resume()
        assert again.snapshot()["faults"] == [stuck]


# ---------------------------------------------------------------------------
# the contract with buzzer sources (issue #8): ButtonEdge, faults, status


def test_a_button_edge_names_a_buzzer_and_the_session_seats_its_player():
    from types import SimpleNamespace
    from companion.races.edges import ButtonEdge
    s, clock = make()
    presses = []
    s.subscribe(lambda u: presses.append(u["data"]["player"]) if u["type"] == "press" else None)
    s.feed_edge(ButtonEdge("b2", True, clock.t))
    assert s.referee.level("bo") and presses == ["bo"]
    s.feed_edge(SimpleNamespace(buzzer="b3", pressed=True, t_ns=clock.t))   # any .buzzer
    assert presses == ["bo", "cy"]
    s.feed_edge(Edge("b1", True, clock.t))                  # the old Edge: player = buzzer id
    assert presses == ["bo", "cy", "ana"]
    s.feed_edge(ButtonEdge("b9", True, clock.t))            # nobody sits at b9
    s.feed_edge(SimpleNamespace(buzzer="b1", pressed=True, t_ns=1.5))   # not an edge
    s.feed_edge("b1")
    assert s.unknown_edges == 3 and presses == ["bo", "cy", "ana"]


def test_a_source_fault_is_recorded_published_and_shown_after_a_restart(tmp_path):
    from types import SimpleNamespace
    path = tmp_path / "t.db"
    s, clock = make(Store(path))
    updates = []
    s.subscribe(updates.append)
    s.source_fault(SimpleNamespace(kind="disconnected", message="the Pico went away",
                                   buzzer=None, t_ns=clock.t))
    s.source_fault(SimpleNamespace(kind="gap", message="3 frames lost", buzzer="b2",
                                   t_ns=None))
    faults = s.snapshot()["faults"]
    assert faults[-2] == {"player": None, "fault": "disconnected", "t_ns": clock.t,
                          "message": "the Pico went away"}
    assert faults[-1]["player"] == "bo" and faults[-1]["buzzer"] == "b2"
    assert faults[-1]["t_ns"] == clock.t                      # stamped now when unknown
    assert [u["data"]["fault"] for u in updates if u["type"] == "fault"] == [
        "disconnected", "gap"]
    s.store.close()
    with Store(path) as store:
        again = TableSession(store, clock=clock)
        assert again.resume()
        assert again.snapshot()["faults"] == faults


def test_the_source_status_is_kept_for_the_snapshot_and_published():
    from types import SimpleNamespace
    s, _ = make()
    assert s.snapshot()["buzzers"] is None
    assert TableSession(Store(":memory:")).snapshot()["buzzers"] is None
    updates = []
    s.subscribe(updates.append)
    s.source_status(SimpleNamespace(source="pico", connected=True, precision_ns=1_000,
                                    error_bound_ns=45_500, detail="/dev/ttyACM0"))
    want = {"source": "pico", "connected": True, "precision_us": 1.0,
            "error_bound_us": 45.5, "detail": "/dev/ttyACM0", "away": False}
    assert s.snapshot()["buzzers"] == want
    assert [u["data"] for u in updates if u["type"] == "buzzers"] == [want]
    s.source_status(SimpleNamespace(source="gpio", connected=False, precision_ns=1,
                                    error_bound_ns=None, detail=""))
    assert s.snapshot()["buzzers"]["error_bound_us"] is None
    assert s.host_snapshot()["buzzers"]["connected"] is False


# ---------------------------------------------------------------------------
# the clock thread sleeps until something is due


def _assert_deadline_ahead(s, clock):
    at = s.next_deadline()
    assert at is None or at > clock.t, (at, clock.t)
    return at


def test_next_deadline_is_none_when_nothing_is_due():
    assert TableSession(Store(":memory:")).next_deadline() is None     # no game
    s, clock = make(stuck_ms=1000)
    assert s.next_deadline() is None                       # a game, no race, no press
    s.feed_edge(Edge("b1", True, clock.t))                 # held: the stuck check is due
    assert s.next_deadline() == clock.t + 1000 * MS
    s.feed_edge(Edge("b1", False, clock.t + 200 * MS))     # released within the debounce...
    clock.advance(300)
    s.tick()
    assert s.next_deadline() is None                       # ...settled: nothing to wait for


def test_next_deadline_follows_the_countdown_and_the_race_and_is_never_in_the_past():
    s, clock = make()
    s.log({"type": "flip", "card": "reveal"})
    assert s.next_deadline() is None                       # pending: waits for the host
    s.start_race(2000)
    go = clock.t + 2000 * MS
    assert s.next_deadline() == go                         # GO is due
    for _ in range(2100 // 7):
        clock.advance(7)
        s.tick()
        _assert_deadline_ahead(s, clock)
    press(s, clock, "b3")
    seen = set()
    for _ in range(200 // 3):
        clock.advance(3)
        s.tick()
        seen.add(_assert_deadline_ahead(s, clock))
    assert logged(s)[-1]["winner"] == "cy"
    clock.advance(100)
    s.tick()
    assert s.next_deadline() is None


def test_a_deadline_left_undone_by_a_failure_is_retried_later_not_spun_on(mocker):
    s, clock = make()
    s.log({"type": "flip", "card": "reveal"})
    s.start_race(0)
    press(s, clock, "b2", hold_ms=5)
    mocker.patch.object(s.referee, "poll")                 # a broken poll does nothing
    at = s.next_deadline()
    clock.t = at + 1
    s.tick()
    again = s.next_deadline()
    assert again > clock.t                                 # not the same past deadline
    clock.t = again
    s.tick()
    assert s.next_deadline() > clock.t


# ---------------------------------------------------------------------------
# the live race is persisted off the edge path


def test_a_press_causes_no_synchronous_store_write(mocker):
    s, clock = make()
    s.log({"type": "flip", "card": "mynah"})               # a last-press race, armed now
    row = s.store.load_live_race(s.game_id)
    assert row is not None and row[1]["edges"] == []       # written once, at arming
    writes = []
    real = s.store._write

    def spy(fn):
        writes.append(threading.current_thread())
        return real(fn)
    mocker.patch.object(s.store, "_write", side_effect=spy)
    sync = mocker.spy(s.store, "save_live_race")
    me = threading.current_thread()
    for buzzer in ("b1", "b2"):
        s.feed_edge(Edge(buzzer, True, clock.t))
        assert me not in writes                            # the press returned unwritten
        clock.advance(30)
        s.tick()
    assert me not in writes and sync.call_count == 0
    assert s.store.flush(timeout_s=10)
    assert writes and all(t is not me for t in writes)     # the background writer wrote
    edges = s.store.load_live_race(s.game_id)[1]["edges"]
    assert [e["player"] for e in edges if e["edge"] == "press"] == ["ana", "bo"]


def test_a_failed_background_write_is_a_fault_on_the_page(mocker):
    from companion.record.store import StoreError
    s, clock = make()
    s.log({"type": "flip", "card": "mynah"})
    real = s.store._write
    me = threading.current_thread()

    def disk_full(fn):
        if threading.current_thread() is not me:
            raise StoreError("write failed: database or disk is full")
        return real(fn)
    mocker.patch.object(s.store, "_write", side_effect=disk_full)
    s.feed_edge(Edge("b1", True, clock.t))
    assert s.store.flush(timeout_s=10)
    f = s.snapshot()["faults"][-1]
    assert f["fault"] == "store" and "could not save the live race" in f["message"]
    assert "disk is full" in f["message"]


# ---------------------------------------------------------------------------
# the page needs no per-game wording


def test_race_views_carry_the_games_title_and_verdict_words():
    s, clock = make()
    snap = s.snapshot()
    assert snap["score_unit"] == "tallies" and snap["game_title"] == "Tally"
    assert TableSession(Store(":memory:")).snapshot()["score_unit"] is None
    updates = []
    s.subscribe(updates.append)
    s.log({"type": "flip", "card": "table"})           # ana flips: bo and cy race
    race = s.snapshot()["race"]
    assert race["title"] == "Chope!" and race["phase"] == "live" and race["text"] is None
    press(s, clock, "b2")
    run(s, clock, 100)
    live = [u["data"] for u in updates if u["type"] == "race" and u["data"]["phase"] == "decided"]
    assert live and live[-1]["text"] == "bo chopes the table"
    decided = s.snapshot()["race"]                     # now from the log
    assert decided["phase"] == "decided" and decided["text"] == "bo chopes the table"
    assert decided["title"] == "Chope!"
    s.log({"type": "flip", "card": "reveal"})
    assert s.snapshot()["race"]["title"] == "Chomp!"
    assert s.snapshot()["race"]["phase"] == "pending"
    s.log({"type": "race", "reason": "chomp"})         # the host saw nobody chomp
    assert s.snapshot()["race"]["text"] == "Nobody chomps"


def test_an_interrupted_race_keeps_its_title(tmp_path):
    path = tmp_path / "t.db"
    s, clock = make(Store(path))
    s.log({"type": "flip", "card": "mynah"})
    press(s, clock, "b1")
    s.store.close()
    with Store(path) as store:
        again = TableSession(store, clock=Clock())
        again.resume()
        race = again.snapshot()["race"]
        assert race["phase"] == "interrupted" and race["title"] == "Siam!"
        assert [o["player"] for o in race["order"]] == ["ana"]


# ---------------------------------------------------------------------------
# a player's private page


def test_a_private_event_is_logged_from_its_players_page_and_stays_private():
    s, _ = make()
    public = []
    s.subscribe(public.append)
    page = s.private_snapshot("ana")
    assert page["player"] == "ana" and page["view"] == {"secret": None}
    assert page["version"] == s.version
    secret = {"type": "secret", "player": "ana", "card": "kaya-toast-secret"}
    assert secret in page["events"]
    answer = s.log_private("ana", secret, expected_version=s.version)
    assert answer["private"]["view"] == {"secret": "kaya-toast-secret"}
    assert s.private_snapshot("ana")["events"] == []          # one secret card each
    assert s.private_snapshot("bo")["view"] == {"secret": None}
    assert logged(s)[-1] == secret                             # the log keeps the truth
    wire = json.dumps(public) + json.dumps(s.snapshot()) + json.dumps(s.host_snapshot()) \
        + json.dumps(s.updates_since(1) or []) + json.dumps({k: v for k, v in answer.items()
                                                             if k != "private"})
    assert "kaya-toast" not in wire
    [state] = [u for u in public if u["type"] == "state"]
    assert state["data"]["event"] == {"type": "secret", "player": "ana"}


def test_a_player_may_log_only_their_own_private_events():
    s, _ = make()
    bo_card = {"type": "secret", "player": "bo", "card": "otah-secret"}
    with pytest.raises(RulesError, match="not one of their events"):
        s.log_private("ana", bo_card)                      # someone else's card
    with pytest.raises(RulesError, match="not one of their events"):
        s.log_private("ana", {"type": "point", "player": "ana", "n": 3})
    with pytest.raises(RulesError, match="no player"):
        s.private_snapshot("zed")
    with pytest.raises(RulesError, match="no player"):
        s.log_private("zed", bo_card)
    with pytest.raises(RulesError, match="'type'"):
        s.log_private("bo", ["not", "an", "event"])
    v = s.version
    s.log_private("bo", bo_card, expected_version=v)
    with pytest.raises(StaleVersion):
        s.log_private("ana", {"type": "secret", "player": "ana", "card": "otah-secret"},
                      expected_version=v)
    with pytest.raises(RulesError, match="no game"):
        TableSession(Store(":memory:")).private_snapshot("ana")
