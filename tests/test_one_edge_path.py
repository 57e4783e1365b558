"""Exactly one path from any edge to a verdict (issue 19): a phone's virtual
press and a buzzer pin's press both go through the buzzer pipeline's queue
and drain, the session's feed_edge and the race desk, on the real table
(``companion serve`` in a thread, mock pins, waitress, SQLite)."""

from __future__ import annotations

import inspect

from companion.races.desk import RaceDesk
from companion.races.edges import VirtualEdge
from tests.kit.helpers import wait_for


def _post(app, path, body):
    """A page's POST (with its CSRF token) to the running table's app."""
    client = app.test_client()
    token = client.get("/api/csrf").json["csrf"]
    r = client.post(path, json=body, headers={"X-CSRF-Token": token})
    assert r.status_code == 200, r.json
    return r.json


def test_a_phone_press_and_a_pin_press_take_the_same_calls(live_server, monkeypatch):
    t = live_server
    paths = []
    real = RaceDesk.feed

    def spy(self, e, virtual=False):
        names = [f.function for f in inspect.stack()[1:12]]
        paths.append((e.player, e.pressed, virtual, names))
        return real(self, e, virtual)
    monkeypatch.setattr(RaceDesk, "feed", spy)
    seen = []
    feed = t.session.feed_edge
    monkeypatch.setattr(t.session, "feed_edge", lambda edge: (seen.append(edge), feed(edge)))

    _post(t.app, "/api/press", {"player": "Ana", "pressed": True, "seq": 1})
    t.source.press("Bo")
    assert wait_for(lambda: any(p[0] == "Bo" for p in paths))
    ana = next(p for p in paths if p[0] == "Ana")
    bo = next(p for p in paths if p[0] == "Bo")
    assert ana[2] is True and bo[2] is False             # the phone's is marked virtual
    for who in (ana, bo):                                # ... and both came the same way
        assert "feed_edge" in who[3] and "_drain" in who[3], who
    assert any(isinstance(x, VirtualEdge) and x.seq == 1 for x in seen)
