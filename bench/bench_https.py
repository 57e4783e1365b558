"""HTTPS on the LAN (issue 33, ``companion serve --https``): what TLS inside the
gate's waitress channel costs, on loopback, against the same table's plain
HTTP (waitress, 16 threads, mock buzzers, the demo Chope! game):

* ``https_handshake_ms_p50`` / ``_p95``: a new connection's TCP connect and
  TLS handshake (ECDSA P-256, TLS 1.3), verified against the table's CA,
  over 100 connections;
* ``https_state_ms_p50`` / ``http_state_ms_p50``: ``GET /api/state`` on a
  kept-alive connection, 300 requests each;
* ``https_big_page_mb_s`` / ``http_big_page_mb_s``: ``/static/js/render.js``
  (the biggest page, 52 KB) fetched 200 times on one connection;
* ``https_sse_first_event_ms_p50``: a live page opened over HTTPS (a new
  connection, handshake included) until its first event arrives, 20 pages.

    python -m bench https
"""

from __future__ import annotations

import http.client
import socket
import statistics
import tempfile
import time
from pathlib import Path

from tests.kit.web import https_conn, start_table, table_tls

HANDSHAKES = 100
REQUESTS = 300
BIG = "/static/js/render.js"
BIG_TIMES = 200
PAGES = 20


def _ms(samples: list[float], q: float) -> float:
    samples = sorted(samples)
    return samples[min(len(samples) - 1, int(q * len(samples)))] * 1000


def _handshakes(table) -> list[float]:
    ctx = table_tls(table)
    out = []
    for _ in range(HANDSHAKES):
        t0 = time.perf_counter()
        raw = socket.create_connection(("127.0.0.1", table.https_port), timeout=10)
        s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        out.append(time.perf_counter() - t0)
        s.close()
    return out


def _requests(conn, path: str, times: int) -> tuple[list[float], int]:
    out, size = [], 0
    for _ in range(times):
        t0 = time.perf_counter()
        conn.request("GET", path)
        r = conn.getresponse()
        size += len(r.read())
        assert r.status == 200, r.status
        out.append(time.perf_counter() - t0)
    return out, size


def _first_events(table) -> list[float]:
    """Each page closed before the next opens, and let go by the table (it
    notices a closed page at its next heartbeat: the live-page cap)."""
    from tests.kit.helpers import wait_for

    broker = table.services.broker
    out = []
    for _ in range(PAGES):
        wait_for(lambda: broker.count == 0)
        t0 = time.perf_counter()
        c = https_conn(table)
        c.request("GET", "/events")
        r = c.getresponse()
        while not r.fp.readline().startswith(b"event: "):
            pass
        out.append(time.perf_counter() - t0)
        r.close()                       # the response holds the socket open too
        c.close()
    return out


def run():
    with tempfile.TemporaryDirectory() as tmp:
        table = start_table(Path(tmp), https=True)
        try:
            hs = _handshakes(table)
            yield "https_handshake_ms_p50", _ms(hs, 0.5), "ms (connect + TLS 1.3, loopback)"
            yield "https_handshake_ms_p95", _ms(hs, 0.95), "ms"
            secure = https_conn(table)
            plain = http.client.HTTPConnection("127.0.0.1", table.port, timeout=10)
            for name, conn in (("https", secure), ("http", plain)):
                times, _ = _requests(conn, "/api/state", REQUESTS)
                yield f"{name}_state_ms_p50", _ms(times, 0.5), "ms (GET /api/state, kept alive)"
            for name, conn in (("https", secure), ("http", plain)):
                times, size = _requests(conn, BIG, BIG_TIMES)
                yield f"{name}_big_page_mb_s", size / sum(times) / 1e6, f"MB/s ({BIG})"
            secure.close()
            plain.close()
            firsts = _first_events(table)
            yield ("https_sse_first_event_ms_p50", statistics.median(firsts) * 1000,
                   "ms (new connection to the first live event)")
        finally:
            table.close()
