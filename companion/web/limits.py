"""Connection and request caps: no phone can take the table down.

waitress accepts connections on one thread and hands whole requests to a
pool of worker threads. Left alone, one guest can hold every socket it is
willing to keep (waitress stops accepting at ``connection_limit``, for the
host too) and keep them forever by trickling a header line now and then.
:class:`Gate` closes that, through waitress's public extension points:

* **open connections**: a guest address may hold :attr:`Limits.per_address`
  connections, and all guests together :attr:`Limits.guests`. Past either,
  a new connection is answered ``503`` and closed at once (waitress itself
  never reaches its own limit, so it never stops accepting: the host's
  connection is always taken). The Pi's own address (``127.0.0.1``, ``::1``)
  is never counted against a guest cap; :attr:`Limits.reserve` connections
  beyond the guests' share are kept for it and for a logged-in host on a
  phone (a request on such a *reserve* connection is served only to the
  host and to the routes whose policy says ``reserve``:
  :mod:`companion.web.policy`). When the guests' share is full, a new
  connection first cuts an *idle* guest connection (nothing being answered:
  from the address holding the most, the longest idle), so idle guest
  sockets never fill the reserve; a reserve connection is opened only when
  every guest connection is busy, and when the reserve is full an idle one
  there is cut too (issue 20, 2).
* **requests in flight**: a guest address may have
  :attr:`Limits.in_flight_per_address` requests being answered at once
  (live pages included); more get ``503`` with ``Retry-After`` before the
  app runs. A browser opens at most 6 connections to a site, so a real
  phone never meets this.
* **slow requests**: a request must arrive whole (headers within
  :attr:`Limits.header_timeout_s` of its first byte, the body within
  :attr:`Limits.request_timeout_s`), else the connection is closed; a
  keep-alive connection with nothing to do is closed after
  :attr:`Limits.idle_timeout_s` (waitress's ``channel_timeout``).

The channel class is waitress's own :class:`waitress.channel.HTTPChannel`
with its documented hooks (``add_channel``/``del_channel``, ``readable``,
``received``) extended; the server is told to use it through its
``channel_class`` attribute (as waitress's own tests and WebTest do).
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

#: The Pi's own addresses: the kiosk browser, a terminal on the Pi. Only
#: these are trusted; any other loopback address (127.0.0.77) is a guest.
TRUSTED = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})

#: The environ key the gate sets: "guest", "reserve" or "trusted".
BAND_KEY = "companion.band"


def trusted(addr: str | None) -> bool:
    """True for the Pi's own address (never for 127.0.0.77 and the like)."""
    return addr in TRUSTED


@dataclass(frozen=True)
class Limits:
    """The caps (docs/web.md, "Limits")."""

    per_address: int = 16
    guests: int = 200
    reserve: int = 32
    in_flight_per_address: int = 8
    header_timeout_s: float = 10.0
    request_timeout_s: float = 30.0
    idle_timeout_s: float = 30.0
    cleanup_interval_s: int = 5

    def waitress_options(self, threads: int) -> dict:
        """The adjustments for :func:`waitress.create_server`: waitress's own
        limit above ours (so it never stops accepting), short idle timeout,
        frequent clean-up, bounded headers and bodies."""
        return {
            "connection_limit": self.guests + self.reserve + 16,
            "channel_timeout": max(1, int(self.idle_timeout_s)),
            "cleanup_interval": max(1, int(self.cleanup_interval_s)),
            "max_request_header_size": 32 * 1024,
            "max_request_body_size": 2 * 1024 * 1024,
            "outbuf_high_watermark": 1 << 20,
            "backlog": 1024,
        }


_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s")


def _refusal(message: str) -> bytes:
    body = message.encode() + b"\n"
    return _REFUSAL % (len(body), body)


class Gate:
    """Counts open connections and requests in flight per address and
    refuses what is over a cap. One per server; thread-safe."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic):
        self.limits = limits or Limits()
        self.clock = clock
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}          # guest address -> open connections
        self._guests = 0                         # guest connections in the guests' share
        self._reserve = 0                        # connections in the reserve
        self._bands: dict[tuple, str] = {}       # (addr, port) -> band
        self._channels: dict[tuple, object] = {}  # (addr, port) -> a guest's channel
        self._in_flight: dict[str, int] = {}
        #: what was refused, by kind (tests, the benchmark, the log)
        self.refused = {"per_address": 0, "guests": 0, "in_flight": 0, "slow": 0,
                        "idle_cut": 0}

    # -- connections (waitress's thread) -----------------------------------
    def admit(self, addr: str) -> str | None:
        """The band of a new connection from ``addr``, or None: refuse it.

        When the guests' share is full an idle guest connection (nothing
        being answered) is cut to make room before the reserve is touched,
        and when the reserve is full too an idle one there is cut: no idle
        guest socket keeps the host (or anyone) out (issue 20, 2). The Pi's
        own address never takes a slot."""
        for _ in range(3):
            band, victim = self._take(addr)
            if victim is None:
                return band
            victim.cut()        # outside the lock: its release frees the slot
            with self._lock:
                self.refused["idle_cut"] += 1
        return None

    def _take(self, addr: str) -> tuple[str | None, object | None]:
        """(band, None) with the slot counted; (None, an idle connection to
        cut first); or (None, None): refused."""
        lim = self.limits
        with self._lock:
            if trusted(addr):
                return "trusted", None
            n = self._open.get(addr, 0)
            if n >= lim.per_address:
                self.refused["per_address"] += 1
                return None, None
            if self._guests < lim.guests:
                self._guests += 1
                band = "guest"
            else:
                victim = self._idlest("guest")
                if victim is None and self._reserve >= lim.reserve:
                    victim = self._idlest("reserve")
                if victim is not None:
                    return None, victim
                if self._reserve >= lim.reserve:
                    self.refused["guests"] += 1
                    return None, None
                self._reserve += 1
                band = "reserve"
            self._open[addr] = n + 1
            return band, None

    def _idlest(self, band: str):
        """The connection in ``band`` to cut first, or None: one with nothing
        being answered, from the address holding the most connections (a
        phone holds a few, a flood many), the longest idle first."""
        best, best_key = None, None
        for peer, channel in self._channels.items():
            if self._bands.get(peer) != band or not channel.cuttable():
                continue
            key = (self._open.get(peer[0], 0), -channel.last_activity)
            if best_key is None or key > best_key:
                best, best_key = channel, key
        return best

    def opened(self, addr: tuple, band: str, channel=None) -> None:
        with self._lock:
            self._bands[tuple(addr[:2])] = band
            if channel is not None and band != "trusted":
                self._channels[tuple(addr[:2])] = channel

    def release(self, addr: tuple, band: str) -> None:
        """A connection admitted in ``band`` has closed."""
        host = addr[0]
        with self._lock:
            self._bands.pop(tuple(addr[:2]), None)
            self._channels.pop(tuple(addr[:2]), None)
            if band == "trusted":
                return
            n = self._open.get(host, 0) - 1
            if n > 0:
                self._open[host] = n
            else:
                self._open.pop(host, None)
            if band == "guest":
                self._guests -= 1
            else:
                self._reserve -= 1

    def open_count(self, addr: str | None = None) -> int:
        with self._lock:
            if addr is None:
                return self._guests + self._reserve
            return self._open.get(addr, 0)

    # -- requests (worker threads) ------------------------------------------
    def wrap(self, app):
        """The WSGI app behind the request cap; sets ``environ["companion.band"]``."""
        gate = self

        def gated(environ, start_response):
            addr = environ.get("REMOTE_ADDR") or "?"
            try:
                port = int(environ.get("REMOTE_PORT") or 0)
            except ValueError:
                port = 0
            if trusted(addr):
                environ[BAND_KEY] = "trusted"
                return app(environ, start_response)
            with gate._lock:
                environ[BAND_KEY] = gate._bands.get((addr, port), "guest")
                n = gate._in_flight.get(addr, 0)
                if n >= gate.limits.in_flight_per_address:
                    gate.refused["in_flight"] += 1
                    refuse = True
                else:
                    gate._in_flight[addr] = n + 1
                    refuse = False
            if refuse:
                body = (b'{"error": "too many requests at once from this address: retry '
                        b'shortly", "rule": "capacity"}\n')
                start_response("503 Service Unavailable", [
                    ("Content-Type", "application/json"), ("Retry-After", "1"),
                    ("Content-Length", str(len(body)))])
                return [body]
            done = _Once(lambda: gate._done(addr))
            try:
                result = app(environ, start_response)
            except BaseException:
                done()
                raise
            return _Closing(result, done)

        return gated

    def _done(self, addr: str) -> None:
        with self._lock:
            n = self._in_flight.get(addr, 0) - 1
            if n > 0:
                self._in_flight[addr] = n
            else:
                self._in_flight.pop(addr, None)

    def in_flight(self, addr: str) -> int:
        with self._lock:
            return self._in_flight.get(addr, 0)

    # -- waitress -----------------------------------------------------------
    def install(self, server) -> None:
        """Make ``server`` (from :func:`waitress.create_server`, one listener)
        open its connections through this gate."""
        server.channel_class = self.channel_factory()

    def channel_factory(self):
        """waitress's channel factory: admits a connection here, then opens
        a :func:`gated channel <_gated_channel_class>` counted in its band."""
        channel_class = _gated_channel_class(self)

        def accept(server, sock, addr, adj, map=None):
            return self._accept(channel_class, server, sock, addr, adj, map)

        accept.channel_class = channel_class
        return accept

    def _accept(self, channel_class, server, sock, addr, adj, map=None):
        """A new connection: refused (503 and closed) over a cap, else a channel."""
        band = self.admit(addr[0])
        if band is None:
            _refuse(sock, "too many connections: this address has too many open, or the "
                          "table is full; retry shortly")
            return None
        channel = None
        try:
            channel = channel_class(server, sock, addr, adj, map=map, band=band)
        except BaseException:
            if not getattr(channel, "_counted", False):
                self.release(addr, band)
            try:
                sock.close()
            except OSError:
                pass
            raise
        return channel


def _gated_channel_class(gate: Gate):
    """waitress's :class:`~waitress.channel.HTTPChannel`, counted in ``gate``
    per address and timed per request (imported late: waitress is needed only
    to serve)."""
    from waitress.channel import HTTPChannel

    class GatedChannel(HTTPChannel):
        """waitress's channel, counted per address and timed per request."""

        _counted = False
        _started: float | None = None

        def __init__(self, server, sock, addr, adj, map=None, band="guest"):
            self.band, self._peer = band, addr
            super().__init__(server, sock, addr, adj, map=map)

        def add_channel(self, map=None):
            super().add_channel(map)
            self._counted = True
            gate.opened(self._peer, self.band, self)

        def cuttable(self) -> bool:
            """Nothing being answered or sent: cutting it loses no answer."""
            return (self.connected and not self.will_close and not self.requests
                    and not self.total_outbufs_len)

        def cut(self) -> None:
            """Close now (waitress's own thread: the gate admits there)."""
            self.will_close = True
            self.handle_close()

        def del_channel(self, map=None):
            super().del_channel(map)
            if self._counted:
                self._counted = False
                gate.release(self._peer, self.band)

        def received(self, data):
            if self.request is None and data:
                self._started = gate.clock()
            try:
                return super().received(data)
            finally:
                if self.request is None:
                    self._started = None

        def readable(self):
            started = self._started
            if started is not None and not self.will_close:
                req = self.request
                limit = (gate.limits.request_timeout_s
                         if req is not None and req.headers_finished
                         else gate.limits.header_timeout_s)
                if gate.clock() - started > limit:
                    gate.refused["slow"] += 1
                    self.will_close = True       # writable() -> handle_close()
                    return False
            return super().readable()

    return GatedChannel


def _refuse(sock: socket.socket, message: str) -> None:
    """Answer 503 (best effort, never blocking) and close."""
    try:
        sock.setblocking(False)
        sock.send(_refusal(message))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class _Once:
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self):
        fn, self.fn = self.fn, None
        if fn is not None:
            fn()


class _Closing:
    """A WSGI body that runs ``done`` when the server closes it (also for a
    stream that ends early: a live page that went away)."""

    def __init__(self, result, done):
        self.result, self.done = result, done

    def __iter__(self):
        return iter(self.result)

    def close(self):
        try:
            close = getattr(self.result, "close", None)
            if close is not None:
                close()
        finally:
            self.done()


__all__ = ["Gate", "Limits", "TRUSTED", "BAND_KEY", "trusted"]
