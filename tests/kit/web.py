"""The web app under test: the host PIN, the app serving a session, a test
client logged in to the host console, and the whole table (``companion
serve``) in a thread. conftest.py's fixtures are built from these."""

from __future__ import annotations

import jinja2

from tests.kit.moments import hawker_setup

PIN = "2468"


class SharedTemplates(jinja2.BytecodeCache):
    """A Jinja bytecode cache kept in memory for the whole test process:
    :func:`share_templates` gives it to every Flask app the tests make. The
    suite opens hundreds of tables, each app compiling the same templates
    again (6 % of the Python CPU of the heaviest browser tests, py-spy);
    Jinja checks each template's source against its checksum, so a changed
    template is compiled again. The product opens one app per process and
    has no use for it."""

    def __init__(self):
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        code = self.code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


def share_templates() -> None:
    """Every Flask app made from here on in this process compiles each
    template once for all (:class:`SharedTemplates`)."""
    from flask import Flask

    Flask.jinja_options = {**Flask.jinja_options, "bytecode_cache": SharedTemplates()}


def http_host_login(port: int, pin: str, source: str = "127.0.0.1",
                    timeout: float = 10) -> tuple[str, str]:
    """(cookie, csrf) of a host logged in over real HTTP from ``source`` (the
    Pi's own address by default; a guest's to be a host on a phone)."""
    import http.client
    import json

    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                   source_address=(source, 0))
    try:
        c.request("GET", "/api/csrf")
        r = c.getresponse()
        cookie, csrf = r.getheader("Set-Cookie").split(";")[0], json.loads(r.read())["csrf"]
        c.request("POST", "/api/host/login", body=json.dumps({"pin": pin}), headers={
            "Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        assert r.status == 200, body
        return r.getheader("Set-Cookie").split(";")[0], json.loads(body)["csrf"]
    finally:
        c.close()


def table_tls(table):
    """An ``ssl`` client context that trusts ``table``'s CA only (hostnames checked)."""
    import ssl

    return ssl.create_default_context(cafile=str(table.keeper.ca.cert_file))


def https_conn(table, source: str = "127.0.0.1", timeout: float = 10):
    """An HTTPS connection to ``table`` from ``source`` (a loopback alias: a
    guest), verifying the table's certificate for 127.0.0.1."""
    import http.client

    return http.client.HTTPSConnection("127.0.0.1", table.https_port, timeout=timeout,
                                       source_address=(source, 0), context=table_tls(table))


def make_app(session, **config):
    """The web app serving ``session`` (as ``companion.app`` assembles it)."""
    from companion.web import create_app

    return create_app({"PIN": PIN, "TESTING": True, **config}, session=session)


class HostClient:
    """A test client logged in to the host console, sending its CSRF token."""

    def __init__(self, client):
        self.client = client
        self.csrf = client.get("/api/csrf").json["csrf"]
        r = client.post("/api/host/login", json={"pin": PIN}, headers=self.headers())
        assert r.status_code == 200, r.json
        self.csrf = r.json["csrf"]

    def headers(self) -> dict:
        return {"X-CSRF-Token": self.csrf}

    def post(self, url, json=None, **kw):
        return self.client.post(url, json=json if json is not None else {},
                                headers=self.headers(), **kw)

    def get(self, url, **kw):
        return self.client.get(url, **kw)


def start_table(tmp_path, settings=None, host="127.0.0.1", players=("Ana", "Bo", "Cy"),
                https=False, limits=None, **config):
    """The whole table (``companion serve``) running in a thread; ``config``:
    the web app's (a heartbeat every second unless ``SSE_HEARTBEAT_S`` says);
    ``host``: the address it listens on ("0.0.0.0": the LAN's too);
    ``players``: the mock buzzers' names (the demo game's players);
    ``https``: HTTPS too, on a free port (``table.https_port``); ``limits``:
    the gate's :class:`~companion.serving.Limits`."""
    from companion.app import TableServer

    table = TableServer(host=host, port=0, db_path=str(tmp_path / "live.db"), pin=PIN,
                  short_pin=True, players=list(players), source="mock", demo=True, threads=16,
                  config={"SSE_HEARTBEAT_S": 1.0, **config}, settings=settings,
                  https=https, https_port=0, limits=limits)
    table.open()
    table.start()
    return table


# -- a table with its app, a host and bare phones (the private pages' tests) -----

HAWKER_SETUP = hawker_setup(["ana", "bo"])
ANA_A = (["chili", "egg", "egg", "flour"], ["family-recipe"])
ANA_B = (["meat-seafood", "rice-noodles", "chili", "wildcard"], ["price-inflation"])
BO = (["meat-seafood", "water", "spices", "spices"], ["copycat-stall"])


class AppTable:
    """A table on its own temporary file: store, session, app, a host and
    a bare phone (a fresh test client: no login)."""

    def __init__(self, path, demo=True):
        from companion.record.store import Store
        from companion.table.session import TableSession

        self.store = Store(path)
        self.session = TableSession(self.store)
        self.session.resume()
        self.app = make_app(self.session, DEMO=demo, SSE_HEARTBEAT_S=0.05)
        self.host = HostClient(self.app.test_client())
        self.phone = self.app.test_client()

    def links(self) -> dict[str, str]:
        r = self.host.post("/api/host/player-links")
        assert r.status_code == 200, r.json
        return {p["player"]: p["url"].rsplit("/p/", 1)[1] for p in r.json["players"] if p["url"]}

    def phone_for(self, secret: str):
        """A phone that opened ``secret``'s page (and so has its CSRF cookie)."""
        c = self.app.test_client()
        assert c.get(f"/p/{secret}").status_code == 200
        return c

    def close(self):
        self.app.extensions["companion"].close()
        self.store.close()


def csrf(client) -> dict:
    return {"X-CSRF-Token": client.get("/api/csrf").json["csrf"]}


def log_own(client, secret, event, expected=None):
    return client.post(f"/api/p/{secret}/event", json={"event": event, "expected_version": expected},
                       headers=csrf(client))


def draw(player, pile, cards):
    """A private draw in the tracker's canonical form (cards in card order)."""
    from companion.games.hawker import cards_list

    counts: dict = {}
    for c in cards:
        counts[c] = counts.get(c, 0) + 1
    return {"type": "draw", "player": player, "pile": pile, "cards": cards_list(counts)}


STALLS = {"ana": "malay", "bo": "chinese", "cy": "indian"}


def private_hawker(t: "AppTable", players=("ana", "bo")) -> dict[str, str]:
    t.session.new_game("hawker", [{"name": n} for n in players], {"draws": "private"})
    for ev in HAWKER_SETUP:
        if ev["type"] == "choose_stall" and ev["player"] == "bo":
            for p in players[2:]:
                t.session.log({"type": "choose_stall", "player": p, "stall": STALLS[p]})
        t.session.log(ev)
    return t.links()
