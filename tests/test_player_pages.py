"""Private player pages (docs/web.md, "Private player pages"): the secret
links, the page, the player's own events and buzzer, and the wire checks
that no other page, answer, stream or export carries a player's hidden
cards (docs/rules-notes.md, "Hidden information: what the tracker knows").

The strongest check is non-interference: two tables play the same public
game while one player draws different hidden cards; everything any other
phone can fetch (the scoreboard, /api/state, the public stream, another
player's page, JSON and stream, the host's endpoints without the login)
must be byte for byte the same at both tables, apart from clocks and
per-browser tokens."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
import time

import pytest

from tests.kit.helpers import wait_for
from tests.kit.web import (ANA_A, ANA_B, BO, AppTable, csrf, draw, log_own,
                           private_hawker as hawker)


def read_frames(resp, want_state: int, timeout: float = 5.0) -> list[tuple[str, dict]]:
    """SSE frames (kind, payload) of a streamed test-client response, until
    ``want_state`` log updates (state or snapshot) arrived; heartbeats dropped."""
    out, buf, states = [], b"", 0
    deadline = time.monotonic() + timeout
    it = iter(resp.response)
    while states < want_state and time.monotonic() < deadline:
        buf += next(it)
        while b"\n\n" in buf:
            raw, buf = buf.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in raw.decode().splitlines() if ": " in line)
            if "event" not in fields or fields["event"] == "heartbeat":
                continue
            out.append((fields["event"], json.loads(fields["data"])))
            states += fields["event"] in ("state", "snapshot")
    # what is left in the same chunk (the private frame after the last state)
    while b"\n\n" in buf:
        raw, buf = buf.split(b"\n\n", 1)
        fields = dict(line.split(": ", 1) for line in raw.decode().splitlines() if ": " in line)
        if fields.get("event") not in (None, "heartbeat"):
            out.append((fields["event"], json.loads(fields["data"])))
    return out


def drain_private(resp, timeout=0.3) -> list[tuple[str, dict]]:
    """Frames arriving within ``timeout`` (the stream heartbeats every 50 ms)."""
    out, buf = [], b""
    it = iter(resp.response)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            buf += next(it)
        except StopIteration:
            break
        while b"\n\n" in buf:
            raw, buf = buf.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in raw.decode().splitlines() if ": " in line)
            if fields.get("event") not in (None, "heartbeat"):
                out.append((fields["event"], json.loads(fields["data"])))
    return out


VOLATILE = re.compile(r'"(\w*_ns|created|finished_at|csrf|pub_ns|now_ns|t_ns)":\s*("[^"]*"|-?\d+|null)')


def norm(text: str, secrets: dict[str, str] = {}) -> str:
    """Clocks, per-browser CSRF tokens and the table's own secrets out."""
    text = VOLATILE.sub(lambda m: f'"{m.group(1)}":0', text)
    text = re.sub(r'name="csrf-token" content="[^"]*"', 'name="csrf-token" content=""', text)
    text = re.sub(r'name="csrf_token" value="[^"]*"', 'name="csrf_token" value=""', text)
    for who, s in secrets.items():
        text = text.replace(s, f"<secret of {who}>")
    return text


# ---------------------------------------------------------------------------
# the links


def test_each_player_gets_a_256_bit_secret_link_that_is_stored_only_hashed(app_tables, tmp_path):
    t = app_tables()
    links = hawker(t)
    assert set(links) == {"ana", "bo"} and links["ana"] != links["bo"]
    for secret in links.values():
        assert len(base64.urlsafe_b64decode(secret + "=")) == 32      # 256 bits
        row = t.store.find_player_link(hashlib.sha256(secret.encode()).hexdigest())
        assert row and not row["revoked"] and secret not in json.dumps(row)
    assert t.links() == links                    # the console shows the same links again
    body = t.host.get("/api/host/player-links").json
    assert all(p["qr"].startswith("data:image/svg+xml") and p["state"] == "valid" for p in body["players"])
    assert body["hidden_information"] is True
    t.store.flush()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("t.db*") if not p.name.endswith("secret"))
    for secret in links.values():
        assert secret.encode() not in raw          # the database holds no secret


def test_the_console_asking_for_the_links_again_encodes_no_qr_code_again(app_tables, mocker):
    """The console asks for the links at each new version of the table: the
    same links are not encoded again (segno tries its eight masks each
    time), and a reissued link gets its own new code."""
    import segno

    t = app_tables()
    hawker(t)
    links = lambda: {p["player"]: p for p in t.host.get("/api/host/player-links").json["players"]}
    first = links()
    make = mocker.spy(segno, "make")
    for _ in range(3):
        assert links() == first
    assert make.call_count == 0
    t.host.post("/api/host/player-links/reissue", json={"player": "ana"})
    again = links()
    assert make.call_count == 1 and again["ana"]["qr"] != first["ana"]["qr"]
    assert again["bo"]["qr"] == first["bo"]["qr"]


def test_only_the_logged_in_host_sees_or_changes_the_links(app_tables):
    t = app_tables()
    hawker(t)
    assert t.phone.get("/api/host/player-links").status_code == 401
    for path in ("/api/host/player-links", "/api/host/player-links/reissue",
                 "/api/host/player-links/revoke"):
        r = t.phone.post(path, json={"player": "ana"}, headers=csrf(t.phone))
        assert r.status_code == 401 and "url" not in r.get_data(as_text=True)
        assert t.host.client.post(path, json={"player": "ana"}).status_code == 403   # no CSRF token
    r = t.host.post("/api/host/player-links/revoke", json={"player": "zed"})
    assert r.status_code == 400 and r.json["field"] == "player"


def test_a_wrong_revoked_or_stale_link_gets_404_and_no_data(app_tables):
    t = app_tables()
    links = hawker(t)
    ana = t.phone_for(links["ana"])
    assert log_own(ana, links["ana"], draw("ana", "ingredient", ANA_A[0])).status_code == 200

    def closed(secret):
        page = t.phone.get(f"/p/{secret}")
        api = t.phone.get(f"/api/p/{secret}/state")
        stream = t.phone.get(f"/api/p/{secret}/events")
        assert page.status_code == api.status_code == stream.status_code == 404
        assert set(api.json) == {"error", "rule"}          # nothing but why
        assert api.json["rule"] == ("link" if "/" not in secret else None)   # None: no such route
        for r in (page, api, stream):
            text = r.get_data(as_text=True)
            assert "Egg" not in text and "hand" not in text and "egg" not in text
        r = t.phone.post(f"/api/p/{secret}/event", headers=csrf(t.phone),
                         json={"event": draw("ana", "action", ANA_A[1])})
        assert r.status_code == 404
        r = t.phone.post(f"/api/p/{secret}/press", headers=csrf(t.phone), json={"pressed": True})
        assert r.status_code == 404

    closed("x" * 43)
    closed(links["ana"][:-1] + ("A" if links["ana"][-1] != "A" else "B"))
    closed("not-a-secret")
    closed("../" + links["ana"])
    t.host.post("/api/host/player-links/revoke", json={"player": "ana"})
    closed(links["ana"])
    assert t.links()["bo"] == links["bo"]                  # others keep theirs
    assert "ana" not in t.links()                         # revoked stays revoked ...
    states = {p["player"]: p["state"] for p in t.host.get("/api/host/player-links").json["players"]}
    assert states == {"ana": "revoked", "bo": "valid"}
    t.host.post("/api/host/player-links/reissue", json={"player": "ana"})   # ... until reissued
    new = t.links()["ana"]
    assert new != links["ana"] and t.phone.get(f"/api/p/{new}/state").status_code == 200
    closed(links["ana"])
    t.host.post("/api/host/player-links/reissue", json={"player": "bo"})
    assert t.phone.get(f"/api/p/{links['bo']}/state").status_code == 404   # reissue revokes

    # a new game with the same players keeps the links; with others, none work
    hawker(t)
    assert t.phone.get(f"/api/p/{new}/state").json["private"]["view"]["hand"] == []
    hawker(t, ("ana", "bo", "cy"))
    closed(new)
    assert set(t.links()) == {"ana", "bo", "cy"}


def test_a_link_logs_only_its_own_players_events(app_tables):
    t = app_tables()
    links = hawker(t)
    ana = t.phone_for(links["ana"])
    before = t.session.version
    r = log_own(ana, links["ana"], draw("bo", "ingredient", BO[0]))      # bo's draw, ana's link
    assert r.status_code == 400 and r.json["rule"] == "private"
    assert "not one of their events" in r.json["error"]
    r = log_own(ana, links["ana"], {"type": "dish", "card": "you-tiao"})  # a host event
    assert r.status_code == 400 and r.json["rule"] == "private"
    r = log_own(ana, links["ana"], {"type": "draw", "player": "ana", "pile": "ingredient", "count": 4})
    assert r.status_code == 400 and r.json["rule"] == "private"         # the cardless form is the host's
    r = ana.post(f"/api/p/{links['ana']}/event", json={"event": "draw"}, headers=csrf(ana))
    assert r.status_code == 400 and r.json["field"] == "event"
    r = ana.post(f"/api/p/{links['ana']}/event", json={"event": draw("ana", "ingredient", ANA_A[0])})
    assert r.status_code == 403 and r.json["rule"] == "csrf"
    assert t.session.version == before
    r = log_own(ana, links["ana"], draw("ana", "ingredient", ANA_A[0]), expected=before - 1)
    assert r.status_code == 409 and t.session.version == before           # stale page
    assert log_own(ana, links["ana"], draw("ana", "ingredient", ANA_A[0]), before).status_code == 200


def test_the_page_shows_the_hand_and_logs_a_draw(app_tables):
    t = app_tables()
    links = hawker(t)
    ana = t.phone_for(links["ana"])
    html = ana.get(f"/p/{links['ana']}")
    assert html.headers["Cache-Control"] == "no-store"
    assert html.headers["Referrer-Policy"] == "no-referrer"
    page = html.get_data(as_text=True)
    assert "js/player.js" in page and "css/player.css" in page and 'id="my-buzzer"' in page
    st = ana.get(f"/api/p/{links['ana']}/state").json
    assert st["player"] == "ana" and st["demo"] is True
    events, labels = st["private"]["events"], st["private"]["labels"]
    assert events and all(e["player"] == "ana" and e["type"] == "draw" for e in events)
    i = events.index(draw("ana", "ingredient", ["chili", "egg", "egg", "flour"]))
    assert labels[i]["text"] == "Egg, Egg, Flour, Chili"
    assert labels[i]["detail"] == "ana draws 4 Ingredient cards"
    r = log_own(ana, links["ana"], events[i], st["state"]["version"])
    assert r.status_code == 200 and r.json["ok"]
    assert r.json["private"]["view"]["hand"] == ["egg", "egg", "flour", "chili"]
    assert r.json["state"]["view"]["players"][0]["hand"] == 4
    assert r.json["event"] == {"type": "draw", "player": "ana", "pile": "ingredient",
                                        "count": 4}
    assert "hand" not in json.dumps(r.json["state"]["view"]["players"][0]).replace('"hand": 4', "")


def test_the_private_stream_carries_only_its_players_snapshot_and_ends_when_revoked(app_tables):
    t = app_tables()
    links = hawker(t)
    ana, bo = t.phone_for(links["ana"]), t.phone_for(links["bo"])
    s = ana.get(f"/api/p/{links['ana']}/events", buffered=False)
    try:
        assert s.mimetype == "text/event-stream" and "no-store" in s.headers["Cache-Control"]
        first = read_frames(s, 1)
        kinds = [k for k, _ in first]
        assert kinds[:2] == ["snapshot", "private"]
        assert first[1][1]["data"]["player"] == "ana"
        log_own(bo, links["bo"], draw("bo", "ingredient", BO[0]))
        got = read_frames(s, 1)
        assert [k for k, _ in got][0] == "state"
        assert got[0][1]["data"]["event"] == {"type": "draw", "player": "bo",
                                              "pile": "ingredient", "count": 4}
        for kind, msg in got:
            if kind == "private":                  # ana's own, and bo's cards not in it
                assert msg["data"]["player"] == "ana" and msg["data"]["view"]["hand"] == []
                assert "copycat-stall" not in json.dumps(msg["data"]["view"])
        log_own(ana, links["ana"], draw("ana", "ingredient", ANA_A[0]))
        got = read_frames(s, 1)
        mine = [m for k, m in got if k == "private"]
        assert mine and mine[-1]["data"]["view"]["hand"] == ["egg", "egg", "flour", "chili"]
        t.host.post("/api/host/player-links/revoke", json={"player": "ana"})
        tail = drain_private(s)
        assert tail and tail[-1][0] == "gone" and all(k != "private" for k, _ in tail)
    finally:
        s.close()
    assert t.app.extensions["companion"].broker.count == 0


@pytest.mark.parametrize("action", ["revoke", "reissue"])
def test_issue20_revoking_a_link_ends_its_open_stream_at_once(app_tables, action):
    """Issue 20, 6: a revoked link's open stream ended only at its next
    heartbeat (14 s later on a real table); revoking wakes it now."""
    import threading

    t = app_tables()
    links = hawker(t)
    t.app.extensions["companion"].broker.heartbeat_s = 3600.0  # the old code's wait: an hour
    ana = t.phone_for(links["ana"])
    s = ana.get(f"/api/p/{links['ana']}/events", buffered=False)
    try:
        assert [k for k, _ in read_frames(s, 1)][:2] == ["snapshot", "private"]
        got: list = []
        reader = threading.Thread(target=lambda: got.extend(drain_private(s, timeout=600.0)),
                                  daemon=True)
        t.host.post(f"/api/host/player-links/{action}", json={"player": "ana"})
        reader.start()
        assert wait_for(lambda: not reader.is_alive()), "the stream is still open"   # it ended
        assert got and got[-1][0] == "gone", got
    finally:
        s.close()


def test_issue20_a_table_from_a_copy_of_the_store_opens_none_of_its_links(app_tables, tmp_path):
    """Issue 20, 6: a table started from a copy of the store (so with
    another server key) showed the copied links as "stale", yet they still
    opened pages."""
    import sqlite3

    t = app_tables("original")
    links = hawker(t)
    copy = tmp_path / "copy.db"
    dst = sqlite3.connect(copy)
    t.store.conn.backup(dst)
    dst.close()
    c = AppTable(copy)
    try:
        states = {p["player"]: p["state"]
                  for p in c.host.get("/api/host/player-links").json["players"]}
        assert states == {"ana": "stale", "bo": "stale"}
        for secret in links.values():
            assert c.phone.get(f"/p/{secret}").status_code == 404
            assert c.phone.get(f"/api/p/{secret}/state").status_code == 404
            assert c.phone.get(f"/api/p/{secret}/events").status_code == 404
        fresh = c.links()                          # reissued under the copy's key
        assert set(fresh) == {"ana", "bo"} and not set(fresh.values()) & set(links.values())
        assert c.phone.get(f"/api/p/{fresh['ana']}/state").status_code == 200
        assert t.phone.get(f"/api/p/{links['ana']}/state").status_code == 200   # the original's
    finally:
        c.close()


def test_the_buzzer_on_the_page_presses_for_its_player_in_demo_mode_only(app_tables):
    t = app_tables()
    links = hawker(t)
    ana = t.phone_for(links["ana"])
    seen = []
    t.session.subscribe(seen.append)
    for pressed in (True, False):
        time.sleep(0.05)                                 # past the 20 ms debounce
        r = ana.post(f"/api/p/{links['ana']}/press", json={"pressed": pressed}, headers=csrf(ana))
        assert r.status_code == 200 and r.json["player"] == "ana"
    presses = [u["data"] for u in seen if u["type"] == "press"]
    assert [(p["player"], p["pressed"], p["virtual"]) for p in presses] == [
        ("ana", True, True), ("ana", False, True)]
    r = ana.post(f"/api/p/{links['ana']}/press", json={"pressed": "yes"}, headers=csrf(ana))
    assert r.status_code == 400
    r = ana.post(f"/api/p/{links['ana']}/press", json={"player": "bo", "pressed": True},
                 headers=csrf(ana))
    assert r.json["player"] == "ana"                     # the link decides who presses
    quiet = app_tables("quiet", demo=False)
    ql = hawker(quiet)
    qa = quiet.phone_for(ql["ana"])
    assert 'id="my-buzzer"' not in qa.get(f"/p/{ql['ana']}").get_data(as_text=True)
    r = qa.post(f"/api/p/{ql['ana']}/press", json={"pressed": True}, headers=csrf(qa))
    assert r.status_code == 404 and r.json["rule"] == "demo"


def test_a_forged_sequence_on_the_scoreboard_cannot_silence_a_players_own_buzzer(app_tables):
    """Issue 31: the scoreboard's press shared the player's sequence counter,
    so one press with seq 2^62 made every later press of Ana's, from her own
    page too, a silent no-op answered 200. Each page's numbers are its own."""
    t = app_tables()
    links = hawker(t)
    ana, guest = t.phone_for(links["ana"]), t.app.test_client()
    seen = []
    t.session.subscribe(seen.append)
    for k, pressed in enumerate((True, False)):     # a guest's scoreboard, numbers far ahead
        r = guest.post("/api/press", json={"player": "ana", "pressed": pressed, "seq": 2**62 + k,
                                           "page": "evil"}, headers=csrf(guest))
        assert r.status_code == 200
        time.sleep(0.05)                    # past the 20 ms debounce
    seq = int(time.time() * 1e6)
    for k, pressed in enumerate((True, False)):     # Ana's own page, its own id
        r = ana.post(f"/api/p/{links['ana']}/press", headers=csrf(ana),
                     json={"pressed": pressed, "seq": seq + k, "page": "Ana-phone_1"})
        assert r.status_code == 200
        time.sleep(0.05)
    presses = [(u["data"]["player"], u["data"]["pressed"]) for u in seen if u["type"] == "press"]
    assert presses == [("ana", True), ("ana", False)] * 2
    # the guest's own page is the only one its number stalls
    r = guest.post("/api/press", json={"player": "ana", "pressed": True, "seq": 5, "page": "evil"},
                   headers=csrf(guest))
    assert r.status_code == 200 and len([u for u in seen if u["type"] == "press"]) == 4
    for bad in ("", "x" * 33, "a b", 7, ["p"]):
        r = guest.post("/api/press", json={"player": "ana", "pressed": True, "page": bad},
                       headers=csrf(guest))
        assert r.status_code == 400 and r.json["field"] == "page", bad


# ---------------------------------------------------------------------------
# on the wire: nothing another phone can fetch depends on a hidden card


def everything_others_see(t: AppTable, links: dict, streams: dict) -> dict[str, str]:
    """Every answer a phone without ana's link can get, normalised."""
    out = {}
    secrets = {k: v for k, v in links.items()}
    out["/"] = t.phone.get("/").get_data(as_text=True)
    out["/api/state"] = t.phone.get("/api/state").get_data(as_text=True)
    out["/join"] = t.phone.get("/join").get_data(as_text=True)
    bo = t.phone_for(links["bo"])
    out["bo page"] = bo.get(f"/p/{links['bo']}").get_data(as_text=True)
    out["bo state"] = bo.get(f"/api/p/{links['bo']}/state").get_data(as_text=True)
    for path in ("/api/host/state", f"/api/host/export/{t.session.game_id}", "/api/host/export.csv",
                 "/api/host/player-links", "/api/host/stats", "/host"):
        r = t.phone.get(path)
        out[path] = f"{r.status_code} {r.get_data(as_text=True)}"
    for name, resp in streams.items():
        frames = read_frames(resp, 1) if name.endswith("new") else drain_private(resp, 0.4)
        out[name] = json.dumps([(k, m) for k, m in frames], sort_keys=True)
    return {k: norm(v, secrets) for k, v in out.items()}


def play_hawker(t: AppTable, ana_cards) -> tuple[dict, dict]:
    links = hawker(t)
    ana, bo = t.phone_for(links["ana"]), t.phone_for(links["bo"])
    streams = {"public stream": t.phone.get("/events", buffered=False),
               "bo stream": bo.get(f"/api/p/{links['bo']}/events", buffered=False)}
    for s in streams.values():
        read_frames(s, 1)
    assert log_own(ana, links["ana"], draw("ana", "ingredient", ana_cards[0])).status_code == 200
    assert log_own(ana, links["ana"], draw("ana", "action", ana_cards[1])).status_code == 200
    assert log_own(bo, links["bo"], draw("bo", "ingredient", BO[0])).status_code == 200
    assert log_own(bo, links["bo"], draw("bo", "action", BO[1])).status_code == 200
    streams["public stream new"] = t.phone.get("/events", buffered=False)
    streams["bo stream new"] = bo.get(f"/api/p/{links['bo']}/events", buffered=False)
    try:
        seen = everything_others_see(t, links, streams)
    finally:
        for s in streams.values():
            s.close()
    return seen, links


def test_no_other_phone_ever_carries_a_hawker_hand(app_tables):
    a, links_a = play_hawker(app_tables("a"), ANA_A)
    b, _ = play_hawker(app_tables("b"), ANA_B)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], f"{key} depends on ana's hidden cards"
    # and directly: ana's hand in any of its shapes is nowhere in them
    for text in a.values():
        for shape in ('"egg", "egg"', '"egg","egg"', '"family-recipe"]', "Family Recipe, ",
                      '"hand": ["chili"', '"hand":["egg"'):
            assert shape not in text
    assert '"hand":["meat-seafood","water","spices","spices","copycat-stall"]' in a["bo state"] \
        or '"spices","spices"' in a["bo state"]                     # bo sees his own
    assert a["/api/host/export/1"].startswith("401")


def test_ana_sees_her_own_hand_so_the_check_above_can_fail(app_tables):
    t = app_tables()
    links = hawker(t)
    ana = t.phone_for(links["ana"])
    log_own(ana, links["ana"], draw("ana", "ingredient", ANA_A[0]))
    log_own(ana, links["ana"], draw("ana", "action", ANA_A[1]))
    view = ana.get(f"/api/p/{links['ana']}/state").json["private"]["view"]
    assert view["hand"] == ["egg", "egg", "flour", "chili", "family-recipe"]
    export = t.host.get(f"/api/host/export/{t.session.game_id}").get_data(as_text=True)
    assert '"cards": ["chili", "egg", "egg", "flour"]' in export or '"flour"' in export


def play_chope(t: AppTable, food: str) -> dict:
    t.session.new_game("chope", [{"name": n} for n in ("ana", "bo")], {"favourite_food": True})
    links = t.links()
    ana, bo = t.phone_for(links["ana"]), t.phone_for(links["bo"])
    streams = {"public stream": t.phone.get("/events", buffered=False),
               "bo stream": bo.get(f"/api/p/{links['bo']}/events", buffered=False)}
    for s in streams.values():
        read_frames(s, 1)
    labels = ana.get(f"/api/p/{links['ana']}/state").json["private"]
    assert {"type": "favourite", "player": "ana", "food": food} in labels["events"]
    i = labels["events"].index({"type": "favourite", "player": "ana", "food": food})
    assert labels["labels"][i]["text"] == {"laksa": "Laksa", "satay": "Satay"}[food]
    assert log_own(ana, links["ana"], labels["events"][i]).status_code == 200
    assert log_own(bo, links["bo"], {"type": "favourite", "player": "bo",
                                     "food": "chicken-rice"}).status_code == 200
    assert ana.get(f"/api/p/{links['ana']}/state").json["private"]["view"]["favourite"] == food
    try:
        return everything_others_see(t, links, streams)
    finally:
        for s in streams.values():
            s.close()


def test_no_other_phone_ever_carries_a_chope_favourite(app_tables):
    a = play_chope(app_tables("a"), "laksa")
    b = play_chope(app_tables("b"), "satay")
    for key in a:
        assert a[key] == b[key], f"{key} depends on ana's My Favourite card"
    for text in a.values():
        assert '"food":"laksa"' not in text.replace(" ", "") and '"favourite":"laksa"' not in text
    assert '"favourite":"chicken-rice"' in a["bo state"].replace(" ", "")


# ---------------------------------------------------------------------------
# the store


def test_a_version_3_store_migrates_to_player_links(tmp_path):
    from companion.record.store import MIGRATIONS, SCHEMA_VERSION, Store

    path = tmp_path / "v3.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:3]:
        step(conn)
    conn.execute("PRAGMA user_version = 3")
    conn.execute("INSERT INTO games (game, players, options, created) VALUES ('chope', '[]', '{}', 0)")
    conn.execute("COMMIT")
    conn.close()
    with Store(path) as s:
        assert s.migrated_from == 3 and s.schema_version() == SCHEMA_VERSION >= 4
        row = s.add_player_link(1, "ana", ["bo", "ana"], "n1", "a" * 64)
        assert row["seats"] == ["ana", "bo"] and not row["revoked"]
        again = s.add_player_link(1, "ana", ["ana", "bo"], "n2", "b" * 64)
        assert s.find_player_link("a" * 64)["revoked"]          # the newer one replaces it
        assert s.player_links(["bo", "ana"]) == {"ana": again}
        assert s.revoke_player_links(["ana", "bo"], "ana") == 1
        assert s.player_links(["ana", "bo"])["ana"]["revoked"]
        assert s.find_player_link("c" * 64) is None


def test_the_host_console_has_the_player_links_section(app_tables):
    t = app_tables()
    hawker(t)
    html = t.host.get("/host").get_data(as_text=True)
    assert 'id="player-links"' in html and "js/player-links.js" in html


def test_the_host_console_offers_no_event_that_shows_a_hidden_hand(app_tables):
    """The host is usually a player too: the console's buttons (which cooks,
    trades and discards it offers) must not depend on a hand that only its
    player logged, or a button like "cook Chicken Rice with egg, egg" tells
    the host what Ana holds."""
    offered = []
    for name, cards in (("a", ANA_A), ("b", ANA_B)):
        t = app_tables(name)
        links = play_hawker(t, cards)[1]
        t.session.log({"type": "event_check", "event": None})
        ana = t.phone_for(links["ana"])          # ana's turn: she draws, then may cook
        assert log_own(ana, links["ana"], draw("ana", "ingredient", ["wildcard", "water"])) \
            .status_code == 200
        assert log_own(ana, links["ana"], draw("ana", "action", ["copycat-stall"])) \
            .status_code == 200
        state = t.host.get("/api/host/state").json
        assert any(e["type"] == "cook" for e in state["legal_events"])
        offered.append((state["legal_events"], state.get("legal_labels")))
    assert offered[0] == offered[1]
