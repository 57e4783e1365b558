"""Event shapes (issue 20, items 3 and 4): every event is checked by type
against its game's declared shapes (:attr:`Game.event_shapes`,
:mod:`companion.games.shapes`) before the rules see it, so a wrong type is a
400 with a message, never a 500 nor a silent acceptance; every event the
console offers (``host_events``) is one the server accepts; a stale player
page gets 409."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kit.web import ANA_A, HostClient, draw, log_own, make_app
from tests.kit.web import private_hawker as hawker

GAMES = ("chope", "chopote", "chomp", "hawker", "tropichaos")
PLAYERS = ["ana", "bo", "cy"]
#: how many offered events are logged to reach each state a test probes
DEPTHS = (0, 4, 10)


def test_every_game_declares_a_shape_of_known_kinds_for_every_event_it_offers():
    from companion.games import get_game
    from companion.games.shapes import check_declared

    for name in GAMES:
        game = get_game(name)
        check_declared(game.event_shapes)
        for depth, state in states(game):
            for ev in game.host_events(state) + game.legal_events(state):
                if ev["type"] != "race":
                    assert ev["type"] in game.event_shapes, (name, ev)
                    assert set(ev) - {"type"} <= set(game.event_shapes[ev["type"]]), (name, ev)
                game.check_shape(ev)        # what the game offers fits its own shape


def states(game, players=PLAYERS):
    """(depth, state) at each of :data:`DEPTHS`: the first offered event the
    tracker takes, again and again."""
    state, out, logged = game.setup(players, {}), [], 0
    for depth in range(max(DEPTHS) + 1):
        if depth in DEPTHS:
            out.append((depth, state))
        state, ok = step(game, state)
        if not ok:
            break
        logged += 1
    return out


def step(game, state):
    for ev in game.host_events(state) + game.legal_events(state):
        try:
            return game.apply(state, ev), True
        except Exception:  # noqa: BLE001 - the next offer, then
            continue
    return state, False


def prefix(game, depth: int) -> list[dict]:
    """The events that reach :func:`states`' state at ``depth``."""
    state, out = game.setup(PLAYERS, {}), []
    for _ in range(depth):
        for ev in game.host_events(state) + game.legal_events(state):
            try:
                state = game.apply(state, ev)
            except Exception:  # noqa: BLE001
                continue
            out.append(ev)
            break
    return out


@pytest.fixture
def table(session):
    app = make_app(session, DEMO=True, PLAYERS=PLAYERS)
    host = HostClient(app.test_client())
    yield session, host
    app.extensions["companion"].close()


def start(session, name: str, depth: int = 0) -> None:
    session.new_game(name, [{"name": p} for p in PLAYERS], {})
    for ev in prefix(session.game, depth):
        session.log(ev)


def post(host, session, event):
    return host.post("/api/host/event", json={"event": event,
                                              "expected_version": session.version})


# ---------------------------------------------------------------------------
# item 3: types


def test_a_list_for_a_stall_or_a_dish_card_is_a_400_with_a_message_not_a_500(table):
    session, host = table
    start(session, "hawker")
    before = session.version
    for bad in ([], {}, ["malay"], 3, None):
        r = post(host, session, {"type": "choose_stall", "player": "ana", "stall": bad})
        assert r.status_code == 400 and "'stall' must be one of" in r.json["error"], r.json
    for p, stall in (("ana", "malay"), ("bo", "chinese"), ("cy", "indian")):
        assert post(host, session, {"type": "choose_stall", "player": p,
                                    "stall": stall}).status_code == 200
    r = post(host, session, {"type": "dish", "card": ["nasi-lemak"]})
    assert r.status_code == 400 and "'card' must be a text" in r.json["error"], r.json
    assert session.version == before + 3


@pytest.mark.parametrize("key,bad", [("tied", 0), ("tied", {}), ("false_starts", 0),
                                     ("ineligible", {}), ("winner", ["bo"]), ("reason", 1)])
def test_a_race_verdict_with_a_wrong_type_is_refused(table, key, bad):
    session, host = table
    start(session, "chope")
    session.log({"type": "flip", "card": "table:red"})
    verdict = session.game.race_outcomes(session.state)[0]
    before, state = session.version, session.state
    r = post(host, session, dict(verdict, **{key: bad}))
    assert r.status_code == 400 and repr(key) in r.json["error"] and r.json["rule"] == "format"
    assert session.version == before and session.state == state
    assert post(host, session, verdict).status_code == 200


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 70) | st.floats(allow_nan=False)
                    | st.text(max_size=12) | st.sampled_from(["ana", "bo", "egg", "malay"]),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@st.composite
def bodies(draw_, game):
    """An event of a type ``game`` offers, keys from its shape, each either
    an offered value or any JSON value."""
    depth = draw_(st.sampled_from(DEPTHS))
    state = dict(states(game)).get(depth)
    offered = game.host_events(state) if state is not None else []
    base = draw_(st.sampled_from(offered)) if offered else {"type": "race"}
    event = {"type": base["type"]}
    shape = getattr(game, "event_shapes", {}).get(base["type"], {})
    for key in sorted((set(base) | set(shape)) - {"type"}):
        choice = draw_(st.sampled_from(["keep", "any", "drop"]))
        if choice == "keep" and key in base:
            event[key] = base[key]
        elif choice == "any":
            event[key] = draw_(JSON)
    return depth, event


@pytest.mark.parametrize("name", GAMES)
def test_generated_bodies_get_2xx_or_a_4xx_with_a_message_and_leave_the_state(session, name):
    from companion.games import get_game

    app = make_app(session, DEMO=True, PLAYERS=PLAYERS)
    host = HostClient(app.test_client())
    game = get_game(name)
    try:
        @settings(max_examples=40, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(bodies(game))
        def throw(body):
            depth, event = body
            start(session, name, depth)
            before, state = session.version, session.state
            r = post(host, session, event)
            assert r.status_code < 500, (event, r.status_code)
            if r.status_code >= 400:
                assert r.json["error"], event
                assert session.version == before and session.state == state, event
        throw()
    finally:
        app.extensions["companion"].close()


def test_a_stale_player_page_gets_409_not_400(app_tables):
    t = app_tables()
    links = hawker(t)
    ana = t.phone_for(links["ana"])
    seen = t.session.version
    host_draw = {"type": "draw", "player": "ana", "pile": "ingredient", "count": 4}
    assert t.host.post("/api/host/event", json={"event": host_draw,
                                                "expected_version": seen}).status_code == 200
    r = log_own(ana, links["ana"], draw("ana", "ingredient", ANA_A[0]), seen)
    assert r.status_code == 409, r.json
    assert "refresh" in r.json["error"] and t.session.version == seen + 1


# ---------------------------------------------------------------------------
# item 4: what the console offers, the server takes


def shapes_offered(game, state) -> list[dict]:
    """One offered event of each type and set of keys."""
    seen, out = set(), []
    for ev in game.host_events(state):
        key = (ev["type"], frozenset(ev))
        if key not in seen:
            seen.add(key)
            out.append(ev)
    return out


@pytest.mark.parametrize("name,options", [(g, {}) for g in GAMES] + [
    ("hawker", {"draws": "private"})])
def test_every_event_shape_the_console_offers_is_accepted(table, name, options):
    session, host = table
    session.new_game(name, [{"name": p} for p in PLAYERS], options)
    for _ in range(12):
        for ev in shapes_offered(session.game, session.state):
            r = post(host, session, ev)
            assert r.status_code == 200, (name, ev, r.json)
            line = r.json["state"]["log"][-1]["line"]
            assert "None" not in line, (ev, line)
            assert host.post("/api/host/undo", json={
                "expected_version": session.version}).status_code == 200
        offered = session.game.host_events(session.state)
        if not offered:
            break
        assert post(host, session, offered[0]).status_code == 200


def test_a_cardless_draw_without_a_count_reads_without_none():
    from companion.games import get_game

    line = get_game("hawker").describe({"type": "draw", "player": "ana", "pile": "ingredient"})
    assert "None" not in line and line == "ana draws Ingredient cards"
