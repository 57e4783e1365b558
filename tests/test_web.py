"""The web edge through Flask's test client (and, at the end, the real
waitress server): every route, the PIN and its rate limit, CSRF, the rules'
refusals as JSON with the state unchanged, escaping, and the live stream."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import signal
import subprocess
import sys
import time

import pytest

from companion.web import auth
from companion.web.sse import Broker
from tests.kit.helpers import wait_for
from tests.kit.web import PIN, HostClient, make_app

EVIL = '<img src=x onerror="alert(1)">'


@contextlib.contextmanager
def table_on(db):
    """A store and a resumed session on ``db`` (a restart of the table)."""
    from companion.record.store import Store
    from companion.table.session import TableSession

    store = Store(db)
    try:
        session = TableSession(store)
        session.resume()
        yield session
    finally:
        store.close()


def chope(session, names=("ana", "bo", "cy")):
    session.new_game("chope", [{"name": n} for n in names])
    return session


def chomp(session, names=("ana", "bo", "cy")):
    session.new_game("chomp", [{"name": n} for n in names])
    return session


def read_events(resp, want: int, timeout: float = 5.0) -> list[tuple[str, dict, str | None]]:
    """Parse SSE frames from a streamed test-client response."""
    out, buf = [], b""
    deadline = time.monotonic() + timeout
    it = iter(resp.response)
    while len(out) < want and time.monotonic() < deadline:
        buf += next(it)
        while b"\n\n" in buf:
            raw, buf = buf.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in raw.decode().splitlines()
                          if ": " in line)
            if "event" in fields:
                out.append((fields["event"], json.loads(fields["data"]), fields.get("id")))
    return out


# ---------------------------------------------------------------------------
# the scoreboard


def test_scoreboard_is_served_with_every_file_local(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert 'name="viewport"' in html and 'color-scheme' in html
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert refs and all(ref.startswith("/") or ref.startswith("data:") for ref in refs), refs
    for ref in refs:
        if ref.startswith("/static/"):
            with client.get(ref) as res:     # static files are streamed: close them
                assert res.status_code == 200, ref
    assert "http://" not in re.sub(r"<code>.*?</code>", "", html.split("<script id")[0])


def test_api_state_is_public_and_has_the_scoreboard_keys(client, session):
    chope(session)
    r = client.get("/api/state")
    assert r.status_code == 200
    s = r.json
    for key in ("game", "players", "scores", "current_player", "race"):
        assert key in s
    assert s["game"] == "chope" and s["current_player"] == "ana"
    assert [p["name"] for p in s["players"]] == ["ana", "bo", "cy"]


def test_scoreboard_without_a_game_says_so(client):
    assert "Waiting for the host" in client.get("/").get_data(as_text=True)


def test_player_name_with_html_is_shown_escaped(client, host, session):
    r = host.post("/api/host/new-game", {"game": "chope", "players": [
        {"name": EVIL}, {"name": "bo"}]})
    assert r.status_code == 200, r.json
    for page in ("/", "/host"):
        html = client.get(page).get_data(as_text=True)
        assert EVIL not in html
        assert "&lt;img src=x onerror=" in html or "\\u003cimg" in html
    assert client.get("/api/state").json["players"][0]["name"] == EVIL   # JSON keeps it as data


def test_join_page_has_a_qr_code(client):
    html = client.get("/join").get_data(as_text=True)
    assert "<svg" in html and "http://" in html


def test_security_headers(client):
    r = client.get("/")
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert r.headers["X-Content-Type-Options"] == "nosniff"


# ---------------------------------------------------------------------------
# PIN, session cookie, CSRF


def test_host_console_asks_for_the_pin(client):
    html = client.get("/host").get_data(as_text=True)
    assert 'name="pin"' in html and 'name="csrf_token"' in html
    assert client.get("/api/host/state").status_code == 401


def test_login_with_the_right_pin_opens_the_console(client):
    client.get("/host")
    with client.session_transaction() as s:
        token = s["csrf"]
    r = client.post("/host/login", data={"pin": PIN, "csrf_token": token})
    assert r.status_code == 302
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    html = client.get("/host").get_data(as_text=True)
    assert "Log out" in html and "Start the new game" in html
    assert client.get("/api/host/state").status_code == 200


def test_wrong_pin_is_refused(client):
    client.get("/host")
    with client.session_transaction() as s:
        token = s["csrf"]
    r = client.post("/host/login", data={"pin": "0000", "csrf_token": token})
    assert r.status_code == 401 and "Wrong PIN" in r.get_data(as_text=True)
    assert client.get("/api/host/state").status_code == 401


def test_pin_attempts_are_rate_limited_per_client_ip(app):
    limit = app.config["LOGIN_LIMIT"]
    c = app.test_client()
    token = c.get("/api/csrf").json["csrf"]
    hdr = {"X-CSRF-Token": token}
    for _ in range(limit):
        assert c.post("/api/host/login", json={"pin": "0000"}, headers=hdr).status_code == 401
    r = c.post("/api/host/login", json={"pin": PIN}, headers=hdr)   # even the right one
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.0.0.9"
    tok = other.get("/api/csrf").json["csrf"]
    r = other.post("/api/host/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 200


def test_pin_is_compared_in_constant_time(mocker):
    spy = mocker.spy(auth.hmac, "compare_digest")
    assert auth.pin_matches("1234", "1234") and not auth.pin_matches("1235", "1234")
    assert spy.call_count == 2
    assert not auth.pin_matches(None, "1234")


def test_rate_limiter_window_slides():
    now = [0.0]
    rl = auth.RateLimiter(2, 10, clock=lambda: now[0])
    assert rl.hit("a") and rl.hit("a") and not rl.hit("a")
    assert rl.blocked("a") == 10
    now[0] = 10.5
    assert rl.blocked("a") == 0 and rl.hit("a")


def test_every_state_changing_route_needs_the_csrf_token(app, host):
    posts = sorted({r.rule for r in app.url_map.iter_rules() if "POST" in r.methods})
    assert "/api/host/event" in posts and "/api/press" in posts and "/host/login" in posts
    for rule in posts:
        url = rule.replace("<int:game_id>", "1")
        r = host.client.post(url, json={})
        assert r.status_code == 403, rule
        assert r.json["rule"] == "csrf"
        r = host.client.post(url, json={}, headers={"X-CSRF-Token": "forged"})
        assert r.status_code == 403, rule


def test_host_endpoints_need_the_login(client):
    token = client.get("/api/csrf").json["csrf"]
    for url in ("/api/host/event", "/api/host/undo", "/api/host/redo", "/api/host/race",
                "/api/host/new-game", "/api/host/press", "/api/host/race/cancel"):
        r = client.post(url, json={}, headers={"X-CSRF-Token": token})
        assert r.status_code == 401, url
    for url in ("/api/host/state", "/api/host/games", "/api/host/join", "/api/host/stats",
                "/api/host/export.csv"):
        assert client.get(url).status_code == 401, url


def test_logout_ends_the_host_session(host):
    assert host.post("/api/host/logout").status_code == 200
    assert host.get("/api/host/state").status_code == 401


def test_the_host_session_slides_on_with_pages_and_calls_not_with_static_files(host):
    """A logged-in host's session cookie is signed again (its expiry moved
    on) by a page or an API call, but not by each script and style the page
    loads; and it still works after them."""
    name = auth.COOKIE_CONFIG["SESSION_COOKIE_NAME"]
    sets = lambda r: [h for h in r.headers.getlist("Set-Cookie") if h.startswith(name + "=")]
    assert sets(host.get("/api/host/state")) != []
    for path in ("/static/js/render.js", "/static/css/app.css"):
        r = host.get(path)
        assert r.status_code == 200 and sets(r) == [], path
        r.close()
    assert sets(host.get("/host")) != []
    assert host.get("/api/host/state").status_code == 200


def test_a_new_pin_epoch_logs_everybody_out(app, host):
    app.extensions["companion"].pin_epoch = "changed"
    assert host.get("/api/host/state").status_code == 401


def test_secret_key_is_kept_next_to_the_database(tmp_path):
    db = tmp_path / "k.db"
    with table_on(db) as s1, table_on(db) as s2:
        a = make_app(s1, PIN="1")
        b = make_app(s2, PIN="1")
        try:
            assert a.secret_key == b.secret_key and len(a.secret_key) >= 32
            assert (tmp_path / "k.db-secret").stat().st_mode & 0o077 == 0
        finally:
            a.extensions["companion"].close()
            b.extensions["companion"].close()


def test_the_app_needs_the_session_it_serves():
    from companion.web import create_app

    with pytest.raises(TypeError, match="session"):
        create_app({"PIN": "1"})


# ---------------------------------------------------------------------------
# the host's events: legal, illegal, stale, undo


def test_host_logs_a_card(host, session, client):
    chope(session)
    r = host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"},
                                      "expected_version": 0})
    assert r.status_code == 200, r.json
    assert r.json["update"]["type"] == "state" and r.json["update"]["id"] == session.version
    s = client.get("/api/state").json
    assert s["view"]["face_up"] == ["food:laksa"] and s["version"] == session.version


def test_host_state_lists_the_legal_events_with_labels(host, session):
    chope(session)
    s = host.get("/api/host/state").json
    assert {"type": "flip", "card": "food:laksa"} in s["legal_events"]
    assert len(s["legal_labels"]) == len(s["legal_events"])
    assert "laksa" in s["legal_labels"][s["legal_events"].index(
        {"type": "flip", "card": "food:laksa"})].lower()


@pytest.mark.parametrize("event, words", [
    ({"type": "teleport"}, "teleport"),
    ({"type": "flip", "card": "food:pizza"}, "pizza"),
    ({"type": "keep", "card": "food:laksa"}, ""),
    ({"type": "stop"}, ""),
])
def test_an_illegal_event_is_refused_with_the_rules_message_and_nothing_changes(
        host, session, client, event, words):
    chope(session)
    before = client.get("/api/state").json
    r = host.post("/api/host/event", {"event": event})
    assert 400 <= r.status_code < 500
    assert r.json["error"] and words in r.json["error"]
    assert "rule" in r.json
    after = client.get("/api/state").json
    before.pop("now_ns"), after.pop("now_ns")
    assert after == before


def test_an_event_against_an_old_version_is_refused(host, session):
    chope(session)
    assert host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"},
                                         "expected_version": 0}).status_code == 200
    version = session.version
    r = host.post("/api/host/event", {"event": {"type": "flip", "card": "food:satay"},
                                      "expected_version": 0})
    assert r.status_code == 409 and "refresh" in r.json["error"]
    assert session.version == version


@pytest.mark.parametrize("body", ['[1, 2]', '"flip"', '{"event": "flip"}', '{"event": {}}',
                                  '{not json', '{"event": {"type": "stop"}, "expected_version": "3"}'])
def test_bad_json_is_a_400(host, session, body):
    chope(session)
    r = host.client.post("/api/host/event", data=body, content_type="application/json",
                         headers=host.headers())
    assert r.status_code == 400 and r.json["error"]
    assert session.version == 0


def test_an_event_without_a_game_is_refused(host):
    r = host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"}})
    assert r.status_code == 409 and "new game" in r.json["error"]


def test_undo_and_redo(host, session):
    chope(session)
    host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"}})
    r = host.post("/api/host/undo", {"expected_version": session.version})
    assert r.status_code == 200 and r.json["state"]["view"]["face_up"] == []
    assert r.json["state"]["redo"]
    r = host.post("/api/host/redo")
    assert r.status_code == 200 and r.json["state"]["view"]["face_up"] == ["food:laksa"]
    r = host.post("/api/host/redo")
    assert r.status_code == 400 and "nothing to redo" in r.json["error"]


@pytest.mark.parametrize("players, words", [
    ([{"name": "ana", "colour": "red;background:url(x)"}, {"name": "bo"}], "colour"),
    ([{"name": "ana"}], "2 to 6"),
    ([{"name": ""}, {"name": "bo"}], "name"),
    ("ana,bo", "list"),
    ([{"name": "ana"}, {"name": "ana"}], "same name"),
])
def test_new_game_input_is_checked(host, players, words):
    r = host.post("/api/host/new-game", {"game": "chope", "players": players})
    assert r.status_code == 400 and words in r.json["error"], r.json


def test_new_game_with_an_unknown_game_or_option(host):
    r = host.post("/api/host/new-game", {"game": "monopoly", "players": ["a", "b"]})
    assert r.status_code == 400 and "monopoly" in r.json["error"]
    r = host.post("/api/host/new-game", {"game": "chope", "players": ["a", "b"],
                                         "options": {"warp_drive": True}})
    assert r.status_code == 400 and "warp_drive" in r.json["error"]


def test_new_game_with_colours_and_buzzers(host, session):
    r = host.post("/api/host/new-game", {"game": "chomp", "players": [
        {"name": "ana", "colour": "#ff0000", "buzzer": "1"},
        {"name": "bo", "colour": "teal", "buzzer": "2"}], "options": {}})
    assert r.status_code == 200, r.json
    assert session.players[0] == {"name": "ana", "colour": "#ff0000", "buzzer": "1"}
    assert r.json["state"]["game"] == "chomp"


def test_games_lists_the_trackers(host):
    g = host.get("/api/host/games").json
    assert g["chope"]["title"] == "Chope!" and g["chomp"]["min_players"] == 2
    assert "favourite_food" in g["chope"]["options"]


# ---------------------------------------------------------------------------
# races and virtual buzzers


def reveal(session):
    """A Chomp! reveal where bo (Seal) may chomp cy's Little Fish."""
    legal = session.legal_events()
    want = {"ana": "shark", "bo": "seal", "cy": "little-fish"}
    ev = next((e for e in legal if e["cards"] == want), legal[0])
    session.log(ev)
    return ev


def test_an_announced_race_is_started_and_decided(host, session):
    chomp(session)
    reveal(session)
    r = host.post("/api/host/race", {"countdown_ms": 0})
    assert r.status_code == 200, r.json
    assert r.json["race"]["phase"] == "live"
    eligible = r.json["race"]["eligible"]
    assert host.post("/api/host/press", {"player": eligible[0], "pressed": True}).status_code == 200

    def decided():                         # the press is judged once its hold has passed
        session.tick()
        return host.get("/api/host/state").json["race"]["phase"] == "decided"
    assert wait_for(decided, 5)
    race = host.get("/api/host/state").json["race"]
    assert race["phase"] == "decided" and race["verdict"]["winner"] == eligible[0]
    assert race["virtual"] is True


def test_no_race_to_start_is_a_400(host, session):
    chope(session)
    r = host.post("/api/host/race", {"countdown_ms": 0})
    assert r.status_code == 400 and "no race" in r.json["error"]
    assert host.post("/api/host/race", {"countdown_ms": -5}).status_code == 400


def test_cancel_race(host, session):
    chomp(session)
    reveal(session)
    host.post("/api/host/race", {"countdown_ms": 3000})
    assert host.post("/api/host/race/cancel").status_code == 200
    assert session.host_snapshot()["race"]["phase"] == "pending"


def test_virtual_press_on_the_scoreboard_in_demo_mode(client, session):
    chope(session)
    token = client.get("/api/csrf").json["csrf"]
    r = client.post("/api/press", json={"player": "bo", "pressed": True},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 200 and r.json["accuracy"] == "ms"
    r = client.post("/api/press", json={"player": "zed"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 400 and "zed" in r.json["error"]
    r = client.post("/api/press", json={"player": "bo", "pressed": "yes"},
                    headers={"X-CSRF-Token": token})
    assert r.status_code == 400


def test_virtual_presses_are_rate_limited(app, client, session):
    chope(session)
    token = client.get("/api/csrf").json["csrf"]
    codes = [client.post("/api/press", json={"player": "bo", "pressed": i % 2 == 0},
                         headers={"X-CSRF-Token": token}).status_code
             for i in range(app.config["PRESS_LIMIT"] + 3)]
    assert codes.count(429) >= 3 and codes[0] == 200


def test_virtual_press_is_off_outside_demo_mode(tmp_path):
    with table_on(tmp_path / "x.db") as session:
        app = make_app(session, DEMO=False)
        _virtual_press_is_off(app)


def _virtual_press_is_off(app):
    try:
        chope(app.extensions["companion"].session)
        c = app.test_client()
        token = c.get("/api/csrf").json["csrf"]
        r = c.post("/api/press", json={"player": "bo"}, headers={"X-CSRF-Token": token})
        assert r.status_code == 404 and "demo" in r.json["error"]
        assert "Virtual buzzers" not in c.get("/").get_data(as_text=True)
    finally:
        app.extensions["companion"].close()


# ---------------------------------------------------------------------------
# join, history, errors


def test_join_gives_the_urls_and_a_qr_code(host):
    j = host.get("/api/host/join").json
    assert j["urls"] and j["qr_svg"].startswith("<svg")
    html = host.get("/host").get_data(as_text=True)
    assert "<svg" in html and j["urls"][0] in html


def test_export_and_import(host, session):
    chope(session)
    host.post("/api/host/event", {"event": {"type": "flip", "card": "food:laksa"}})
    r = host.get(f"/api/host/export/{session.game_id}")
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson"
    text = r.get_data(as_text=True)
    assert '"food:laksa"' in text
    r = host.client.post("/api/host/import", data=text, content_type="application/x-ndjson",
                         headers=host.headers())
    assert r.status_code == 200 and r.json["game_id"] != session.game_id
    r = host.client.post("/api/host/import", data="not a game", headers=host.headers())
    assert r.status_code == 400 and "line 1" in r.json["error"]
    csv = host.get("/api/host/export.csv")
    assert csv.status_code == 200 and csv.get_data(as_text=True).startswith("game_id,")
    assert host.get("/api/host/stats").json["games"] == 2
    assert host.get("/api/host/export/999").status_code in (400, 404)


def test_unknown_api_route_is_a_json_404(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and "error" in r.json


# ---------------------------------------------------------------------------
# live updates (SSE)


def test_events_start_with_a_snapshot_then_send_updates(client, session):
    chope(session)
    r = client.get("/events", buffered=False)
    try:
        assert r.mimetype == "text/event-stream"
        assert r.headers["Cache-Control"].startswith("no-cache")
        (kind, msg, eid), = read_events(r, 1)
        assert kind == "snapshot" and eid == "0" and msg["data"]["game"] == "chope"
        session.log({"type": "flip", "card": "food:laksa"})
        (kind, msg, eid), = read_events(r, 1)
        assert kind == "state" and eid == str(session.version)
        assert msg["data"]["view"]["face_up"] == ["food:laksa"]
        assert isinstance(msg["pub_ns"], int) and isinstance(msg["now_ns"], int)
    finally:
        r.close()
    assert session.version and client.application.extensions["companion"].broker.count == 0


def test_events_replay_from_last_event_id(client, session):
    chope(session)
    first = session.log({"type": "flip", "card": "food:laksa"})["id"]
    session.log({"type": "flip", "card": "food:satay"})
    r = client.get("/events", headers={"Last-Event-ID": str(first)}, buffered=False)
    try:
        (kind, msg, eid), = read_events(r, 1)
        assert kind == "state" and eid == str(session.version)
        missed = msg["data"]["missed"]
        assert len(missed) == 1 and "satay" in missed[0]["line"].lower()
    finally:
        r.close()
    r = client.get(f"/events?last_id={session.version}", buffered=False)
    try:
        session.log({"type": "stop"})
        (kind, msg, eid), = read_events(r, 1)     # up to date: no snapshot, just the news
        assert kind == "state" and msg["data"]["event"] == {"type": "stop"}
    finally:
        r.close()


def test_secret_favourite_cards_never_reach_the_phones(client, session):
    """Chope!'s My Favourite cards stay secret until the end: not in a live
    update, not in a Last-Event-ID replay, not in the public state."""
    seen = []
    session.subscribe(seen.append)
    session.new_game("chope", [{"name": n} for n in ("ana", "bo")], {"favourite_food": True})
    first = session.log({"type": "favourite", "player": "ana", "food": "laksa"})["id"]
    session.log({"type": "favourite", "player": "bo", "food": "satay"})
    for update in seen:
        event = (update.get("data") or {}).get("event") or {}
        assert "food" not in event, update
    assert [u["data"]["event"] for u in seen if u["type"] == "state"][-1] == {
        "type": "favourite", "player": "bo"}
    r = client.get("/events", headers={"Last-Event-ID": str(first)}, buffered=False)
    try:
        (kind, msg, _), = read_events(r, 1)
        assert kind == "state" and "food" not in msg["data"]["event"]
        assert "satay" not in json.dumps(msg["data"]["missed"])
    finally:
        r.close()
    players = client.get("/api/state").json["view"]["players"]
    assert all(p["favourite"] is None for p in players)


def test_events_with_an_unknown_last_event_id_get_a_snapshot(client, session):
    chope(session)
    r = client.get("/events", headers={"Last-Event-ID": "99999"}, buffered=False)
    try:
        (kind, _, _), = read_events(r, 1)
        assert kind == "snapshot"
    finally:
        r.close()


def test_a_stream_closed_before_it_started_unregisters(client, app):
    r = client.get("/events", buffered=False)
    assert app.extensions["companion"].broker.count == 1
    r.close()
    assert app.extensions["companion"].broker.count == 0


class FakeSession:
    version, game_id = 0, 1

    def __init__(self):
        self.subs = []

    def subscribe(self, fn):
        self.subs.append(fn)
        return lambda: self.subs.remove(fn)

    def snapshot(self):
        return {"game": "x", "game_id": 1, "version": self.version}

    def updates_since(self, last_id):
        return None

    def publish(self, update):
        for fn in self.subs:
            fn(update)


def frames(gen, n):
    out = []
    for chunk in gen:
        out += [f for f in chunk.decode().split("\n\n") if f.strip()]
        if len(out) >= n:
            break
    return out


def test_broker_heartbeat_and_close():
    s = FakeSession()
    b = Broker(s, heartbeat_s=0.05)
    c = b.connect()
    gen = b.stream(c)
    got = frames(gen, 3)
    assert got[0] == "retry: 2000" and "event: snapshot" in got[1]
    assert "event: heartbeat" in frames(gen, 1)[0]
    b.close()
    assert list(gen) == [] and b.count == 0 and s.subs == []
    assert b.connect() is None


def test_broker_gives_a_slow_page_a_snapshot_instead_of_a_backlog():
    s = FakeSession()
    b = Broker(s, queue_size=3)
    c = b.connect()
    gen = b.stream(c)
    frames(gen, 2)
    for i in range(1, 10):
        s.version = i
        s.publish({"id": i, "type": "state", "version": i, "data": {"game_id": 1}})
    got = frames(gen, 1)
    assert "event: snapshot" in got[0] and '"version":9' in got[0]
    b.drop_all()
    assert list(gen) == [] and b.count == 0


def test_broker_skips_updates_the_snapshot_already_has():
    s = FakeSession()
    b = Broker(s)
    c = b.connect()
    s.publish({"id": 1, "type": "state", "version": 1, "data": {"game_id": 1}})   # queued ...
    s.publish({"id": None, "type": "race", "version": 1, "data": {}})
    s.version = 2                                                                   # ... then the page's snapshot
    s.publish({"id": None, "type": "press", "version": 2, "data": {}})
    gen = b.stream(c)
    got = frames(gen, 3)
    assert "event: snapshot" in got[1] and "event: press" in got[2]
    b.close()


def test_broker_limits_the_number_of_streams():
    b = Broker(FakeSession(), max_clients=2)
    assert b.connect() and b.connect() and b.connect() is None


# ---------------------------------------------------------------------------
# the real server


def sse_lines(conn_resp, until: str, timeout: float = 5.0) -> str:
    buf = ""
    deadline = time.monotonic() + timeout
    while until not in buf and time.monotonic() < deadline:
        chunk = conn_resp.fp.readline()
        if not chunk:
            break
        buf += chunk.decode()
    return buf


def test_live_server_streams_a_mock_buzzer_verdict(live_server):
    t = live_server
    assert t.session.game.name == "chope"
    conn = http.client.HTTPConnection("127.0.0.1", t.port, timeout=5)
    try:
        conn.request("GET", "/events")
        resp = conn.getresponse()
        assert resp.status == 200
        assert "event: snapshot" in sse_lines(resp, "event: snapshot")
        t.session.log({"type": "flip", "card": "table:red"})    # a chope race starts
        t.source.press("Bo")
        t.source.release("Bo")
        text = sse_lines(resp, '"winner":"Bo"')
        assert "event: press" in text and '"winner":"Bo"' in text
        assert t.session.snapshot()["race"]["verdict"]["winner"] == "Bo"
        assert "event: heartbeat" in sse_lines(resp, "event: heartbeat", timeout=3)
    finally:
        conn.close()


def test_table_banner_shows_urls_qr_and_pin(tmp_path):
    from companion.app import TableServer

    t = TableServer(host="127.0.0.1", port=0, db_path=str(tmp_path / "b.db"), pin="97531",
              short_pin=True, source="none", demo=True)
    t.open()
    try:
        text = t.banner()
        assert f"http://127.0.0.1:{t.port}/" in text and "PIN: 97531" in text
        assert "▀" in text or "█" in text     # the QR code
        assert "millisecond" in text
    finally:
        t.close()


def test_join_urls_name_the_ip_and_the_mdns_host(monkeypatch):
    from companion.web import join

    monkeypatch.setattr(join, "lan_ip", lambda: "192.168.1.20")
    monkeypatch.setattr(join.socket, "gethostname", lambda: "tablepi")
    assert join.join_urls("0.0.0.0", 8080) == ["http://192.168.1.20:8080/",
                                               "http://tablepi.local:8080/"]
    assert join.join_urls("0.0.0.0", 80)[0] == "http://192.168.1.20/"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_stops_cleanly_on_a_signal_with_live_pages_open(tmp_path, sig):
    """Ctrl-C (or systemd's SIGTERM) with phones on the live page: exit 0,
    "stopped" said, and nothing on stderr (waitress used to print "Bad file
    descriptor" tracebacks: workers pulled its trigger after it was closed)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1", "--port", "0",
         "--db", str(tmp_path / "s.db"), "--pin", "135790", "--source", "mock"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pages = []
    try:
        out = ""
        deadline = time.monotonic() + 20
        while "Ctrl-C stops." not in out and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            out += line
        assert "PIN: 135790" in out and "Demo mode" in out, out
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", out).group(1))
        for _ in range(6):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            pages.append(conn)
            conn.request("GET", "/events")
            assert "snapshot" in sse_lines(conn.getresponse(), "snapshot")   # live
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=15)
        assert proc.returncode == 0
        assert "stopped" in stdout
        assert stderr == ""
    finally:
        for conn in pages:
            conn.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_a_request_ending_as_the_server_stops_never_pulls_a_closed_trigger(live_server, caplog):
    """A worker ends each request by pulling waitress's trigger; one that was
    descheduled just before that pull (here: held 0.3 s in it) must still
    find the trigger open when the stop closes the connections. It used to
    be closed at once: "Bad file descriptor" in pull_trigger, on stderr."""
    import threading

    t = live_server
    trigger = t.server.trigger
    real_pull = trigger.pull_trigger
    pulling = threading.Event()

    closed_when_pulled = []

    def slow_pull(thunk=None):
        if thunk is None:                  # a worker's "I wrote something" (a stop has one)
            pulling.set()
            time.sleep(0.3)
            closed_when_pulled.append(trigger._closed)
        real_pull(thunk)

    trigger.pull_trigger = slow_pull
    caplog.set_level("WARNING", logger="waitress")
    statuses = []

    stopped = threading.Event()

    def get():
        conn = http.client.HTTPConnection("127.0.0.1", t.port, timeout=5)
        conn.request("GET", "/api/state")
        response = conn.getresponse()
        response.read()
        statuses.append(response.status)
        stopped.wait(5)                    # the connection stays open: the worker pulls
        conn.close()

    request = threading.Thread(target=get)
    request.start()
    assert pulling.wait(5)                 # the worker has written the response
    t.stop()
    stopped.set()
    request.join(5)
    assert statuses == [200]
    # closed, its descriptor may already be another file's: the write lands there
    assert closed_when_pulled and True not in closed_when_pulled
    assert not [r for r in caplog.records if r.name.startswith("waitress")], caplog.text


def test_host_client_helper_logs_in(client):
    h = HostClient(client)
    assert h.get("/api/host/state").status_code == 200


def test_a_login_survives_a_restart_with_the_same_pin_but_not_a_new_pin(tmp_path):
    db = str(tmp_path / "r.db")
    with table_on(db) as session:
        first = make_app(session, PIN=PIN)
        c = first.test_client()
        HostClient(c)
        cookie = c.get_cookie("companion").value
        first.extensions["companion"].close()
    for pin, status in ((PIN, 200), ("1111", 401)):
        with table_on(db) as session:
            again = make_app(session, PIN=pin)
            try:
                c2 = again.test_client()
                c2.set_cookie("companion", cookie)
                assert c2.get("/api/host/state").status_code == status
            finally:
                again.extensions["companion"].close()


def test_one_phone_cannot_take_every_live_stream(app):
    broker = app.extensions["companion"].broker
    mine = [broker.connect("192.0.2.7") for _ in range(6)]
    assert all(mine) and broker.connect("192.0.2.7") is None      # the seventh page waits
    other = broker.connect("192.0.2.8")
    assert other is not None                                        # other phones still join
    local = [broker.connect("127.0.0.1") for _ in range(10)]
    assert all(local)                                               # the Pi itself is exempt
    for c in mine + [other] + local:
        broker.disconnect(c)


def test_hostile_json_bodies_get_a_4xx_not_a_500(client, host, app):
    deep = "[" * 100_000 + "]" * 100_000
    anon = app.test_client()
    token = anon.get("/api/csrf").json["csrf"]
    for c, headers, url in ((anon, {"X-CSRF-Token": token}, "/api/host/login"),
                            (host.client, host.headers(), "/api/host/event"),
                            (host.client, host.headers(), "/api/host/new-game")):
        r = c.post(url, data=deep, headers={**headers, "Content-Type": "application/json"})
        assert r.status_code == 400 and "nested too deeply" in r.json["error"], (url, r.json)


def test_a_game_id_past_64_bits_is_unknown_not_a_crash(host):
    r = host.get(f"/api/host/export/{2**70}")
    assert r.status_code == 404
