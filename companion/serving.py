"""Serving a WSGI app on waitress until told to stop: the table and the league alike.

The table (:class:`companion.app.TableServer`) and the league screen
(:class:`companion.league.app.LeagueServer`) each build their own services,
then serve them the same way: one waitress server on its own socket map,
run in this thread (``companion serve``) or a background one (tests), stopped
from any thread, and run from a terminal until SIGINT or SIGTERM.
:class:`Served` is that shared part; :func:`serve_until_signalled` is the
command-line loop around it.

Stopping goes through waitress's public trigger, in this order (see
:meth:`Served.stop`): the live pages are ended (:meth:`Served._end_streams`,
else a worker thread would sit in a stream until its heartbeat); the
listener is closed; the requests still running finish; then every
connection is closed and the trigger taken out of the map, so
``server.run()`` returns. The trigger itself is closed only after the worker
threads are shut down: a worker ends each request by pulling the trigger,
and a pull on a closed trigger is the "Bad file descriptor" traceback a
stop with pages open used to print (or, worse, a write to whatever file
took the descriptor's number).

Both servers open their connections through a :class:`Gate` (the second
half of this module): per-address caps on connections and requests in
flight, slow requests and slow readers cut, output that cannot be
delivered never holding a worker thread, and the worker threads' queue
shared fairly between addresses with the machine's own connections first.
What the table's caps mean to a phone: :mod:`companion.web.limits`; the
league's: :func:`companion.league.app.hall_limits`.
"""

from __future__ import annotations

import signal
import socket
import struct
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Callable

from waitress import wasyncore
from waitress.channel import ClientDisconnected, HTTPChannel


class Served:
    """A waitress server (``self.server``, made by the subclass with
    ``map=self._socket_map``) run, stopped and released in one way.

    A subclass calls :meth:`_init_serving` in ``__init__`` and may override
    the hooks: :meth:`_run_starts` / :meth:`_run_ends` (around serving: the
    table's buzzer pipeline), :meth:`_end_streams` (on stop: close the live
    streams), and :meth:`_close_dispatchers` (on stop, in the serving thread,
    once the running requests have finished)."""

    #: the background thread's name (:meth:`start`)
    thread_name = "waitress"
    #: on stop, how long the requests still running may take to finish
    drain_s = 3.0

    host: str
    port: int

    def _init_serving(self) -> None:
        self.server = None
        self._socket_map: dict = {}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- hooks ---------------------------------------------------------------
    def _run_starts(self) -> None:
        """Just before serving (in the serving thread)."""

    def _run_ends(self) -> None:
        """Serving ended, before waitress's workers are shut down."""

    def _end_streams(self) -> None:
        """On stop, before the connections close: end every live stream."""

    # -- running -------------------------------------------------------------
    def run(self) -> None:
        """Serve until :meth:`stop`."""
        self._run_starts()
        try:
            if not self._stopping.is_set():
                self.server.run()       # returns once every dispatcher of the map is closed
        finally:
            self._run_ends()
            self.server.task_dispatcher.shutdown(timeout=3)
            self._close_trigger()

    def start(self):
        """Serve in a background thread (tests); returns once listening."""
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask :meth:`run` to return; safe from any thread (not from a signal
        handler: :func:`serve_until_signalled`'s handler calls it from a new
        thread). Ends the live streams, stops accepting, lets the running
        requests finish (at most :attr:`drain_s`), then closes the
        connections."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._end_streams()
        server = self.server
        if server is None:
            return
        if not self._pull(self._close_listeners):
            return
        self._wait_until_idle(server.task_dispatcher, self.drain_s)
        self._pull(self._close_dispatchers)

    def _pull(self, thunk: Callable[[], None]) -> bool:
        """Run ``thunk`` in the serving thread; False if the trigger is closed."""
        try:
            self.server.trigger.pull_trigger(thunk)
        except (OSError, AttributeError):       # closed, or the server already released
            return False
        return True

    @staticmethod
    def _wait_until_idle(dispatcher, timeout_s: float) -> None:
        """Wait until no worker thread runs a request and none is queued."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with dispatcher.lock:
                if dispatcher.active_count <= 0 and not dispatcher.queue:
                    return
            time.sleep(0.01)

    def _close_listeners(self) -> None:
        """Close the listening sockets: no new connections (serving thread)."""
        trigger = getattr(self.server, "trigger", None)
        for dispatcher in list(self._socket_map.values()):
            if dispatcher is not trigger and not isinstance(dispatcher, HTTPChannel):
                self._close_listener(dispatcher)

    @staticmethod
    def _close_listener(listener) -> None:
        """Close a listening socket but not the trigger (waitress's own
        ``close`` of its server closes the trigger with it)."""
        try:
            if isinstance(listener, wasyncore.dispatcher):
                wasyncore.dispatcher.close(listener)
            else:
                listener.close()
        except OSError:
            pass

    def _close_dispatchers(self) -> None:
        """Close the listener and every connection, and take the trigger out
        of the map without closing it (run in the serving thread, or when
        nothing serves): ``server.run()`` returns when its map is empty, and
        :meth:`run` closes the trigger once the workers are gone."""
        trigger = getattr(self.server, "trigger", None)
        for dispatcher in list(self._socket_map.values()):
            if dispatcher is trigger:
                continue
            if not isinstance(dispatcher, HTTPChannel):
                self._close_listener(dispatcher)
                continue
            try:
                dispatcher.handle_close()        # also wakes a worker waiting to write
            except OSError:
                pass
        self._socket_map.clear()

    def _close_trigger(self) -> None:
        """Close the trigger once no worker thread is left to pull it (one
        still stuck in a request keeps it open: a pull must never hit a
        closed, perhaps reused, descriptor)."""
        server = self.server
        if server is not None and not server.task_dispatcher.threads:
            server.trigger.close()

    def _release_server(self) -> None:
        """Stop, wait for the serving thread, and release a socket that was
        opened but never served. The caller then closes its own services."""
        self.stop()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self.server is not None and self._socket_map:   # opened but never run
            self._close_dispatchers()
            self.server.task_dispatcher.shutdown(timeout=1)
            self._close_trigger()

    @property
    def url(self) -> str:
        """The address this machine reaches the server at."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"http://{host}:{self.port}"


def serve_until_signalled(served, prog: str, host: str, port: int,
                          errors: tuple[type[BaseException], ...],
                          print_fn: Callable[[str], None], banner: Callable[[], str]) -> int:
    """Open ``served``, print its ``banner()``, serve until SIGINT/SIGTERM,
    then close it. 0 on a clean stop; 2 if it cannot start: the port cannot
    be bound, or :meth:`open` raised one of ``errors`` (said on one line
    after ``prog``, e.g. ``companion serve: ...``)."""
    try:
        served.open()
    except OSError as exc:
        print_fn(f"{prog}: cannot listen on {host}:{port}: {exc.strerror or exc}")
        served.close()
        return 2
    except errors as exc:
        print_fn(f"{prog}: {exc}")
        served.close()
        return 2
    print_fn(banner())

    def on_signal(signum, frame):
        # the handler runs on the serving (main) thread, perhaps inside
        # waitress's trigger lock: stop from another thread
        threading.Thread(target=served.stop, name=f"{served.thread_name}-stop",
                         daemon=True).start()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        served.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        served.close()
    print_fn(f"{prog}: stopped.")
    return 0


# ---------------------------------------------------------------------------
# The gate: what one address may take of a server (the table and the league)
#
# waitress accepts connections on one thread and hands whole requests to a
# pool of worker threads. Left alone, one guest can hold every socket it is
# willing to keep (waitress stops accepting at ``connection_limit``, for the
# host too), keep them by trickling a header line now and then, and hold a
# worker thread for as long as it does not read: waitress's ``write_soon``
# waits (in the worker) for a connection's queued output to fall under its
# high watermark. :class:`Gate` closes all of that through waitress's public
# extension points (``channel_class``, the dispatcher's ``queue``) and a
# subclass of its channel.

#: The machine's own addresses: the Pi's kiosk browser, a terminal on it (on
#: the league machine: its projector). Only these are trusted; any other
#: loopback address (127.0.0.77) is a guest.
TRUSTED = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})

#: The environ key the gate sets: "guest", "reserve" or "trusted".
BAND_KEY = "companion.band"

#: What :attr:`Gate.refused` counts, by kind.
REFUSALS = ("per_address", "guests", "in_flight", "slow", "idle_cut",
            "slow_reader", "stalled", "pipelined", "tls")


#: Output that has not moved for this long does not keep a connection from
#: being cut as idle when the guests' share is full (a reader that stopped).
IDLE_OUTPUT_S = 1.0


def trusted(addr: str | None) -> bool:
    """True for the machine's own address (never for 127.0.0.77 and the like)."""
    return addr in TRUSTED


@dataclass(frozen=True)
class Limits:
    """The caps (the table's: docs/web.md, "Limits"; the league's:
    :func:`companion.league.app.hall_limits`)."""

    per_address: int = 16
    guests: int = 200
    reserve: int = 32
    #: one request at a time on each open connection (browsers do not
    #: pipeline), so as many as ``per_address``: one phone may hold two
    #: sites' six each (the table's http and https ports: the page moving to
    #: https, or two tabs) and the live page of a tab just reloaded, which
    #: counts until the server notices it gone (8 refused a page's script so)
    in_flight_per_address: int = 16
    header_timeout_s: float = 10.0
    request_timeout_s: float = 30.0
    idle_timeout_s: float = 30.0
    cleanup_interval_s: int = 5
    #: output waiting on one connection (not yet taken by its socket) at
    #: which a further write cuts the connection instead of waiting for the
    #: reader: what the guests can make the server hold is at most
    #: connections x (this + one response)
    outbuf_cap: int = 256 * 1024
    #: output waiting with not a byte taken for this long: the reader is
    #: gone (or never reads), the connection is cut
    drain_timeout_s: float = 10.0
    #: requests read and waiting on one connection at most (a browser sends
    #: the next only after the last answer): past it the connection is cut
    pipelined: int = 4
    #: the kernel's send buffer of each connection (``SO_SNDBUF``; Linux
    #: keeps twice this): what a reader that stopped holds in the kernel
    send_buffer: int = 128 * 1024

    def waitress_options(self, threads: int) -> dict:
        """The adjustments for :func:`waitress.create_server`: waitress's own
        limit above ours (so it never stops accepting), short idle timeout,
        frequent clean-up, bounded headers and bodies (the send buffer is
        set on each connection the gate admits)."""
        return {
            "connection_limit": self.guests + self.reserve + 16,
            "channel_timeout": max(1, int(self.idle_timeout_s)),
            "cleanup_interval": max(1, int(self.cleanup_interval_s)),
            "max_request_header_size": 32 * 1024,
            "max_request_body_size": 2 * 1024 * 1024,
            # waitress never waits for it: a gated channel cuts at outbuf_cap
            "outbuf_high_watermark": max(1 << 20, 2 * self.outbuf_cap),
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
        #: what was refused or cut, by kind (tests, the benchmark, the log)
        self.refused = dict.fromkeys(REFUSALS, 0)

    def count(self, kind: str) -> None:
        """One more refusal (or cut) of ``kind``."""
        with self._lock:
            self.refused[kind] = self.refused.get(kind, 0) + 1

    # -- connections (waitress's thread) -----------------------------------
    def admit(self, addr: str) -> str | None:
        """The band of a new connection from ``addr``, or None: refuse it.

        When the guests' share is full an idle guest connection (nothing
        being answered) is cut to make room before the reserve is touched,
        and when the reserve is full too an idle one there is cut: no idle
        guest socket keeps the host (or anyone) out (issue 20, 2). The
        machine's own address never takes a slot."""
        for _ in range(3):
            band, victim = self._take(addr)
            if victim is None:
                return band
            victim.cut()        # outside the lock: its release frees the slot
            self.count("idle_cut")
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
        """The connection in ``band`` to cut first, or None: an idle one
        (``channel.cuttable()``), from the address holding the most
        connections (a phone holds a few, a flood many), the longest idle
        first."""
        channels = self._channels
        peers = [peer for peer in channels if self._bands.get(peer) == band]
        peers.sort(key=lambda peer: (self._open.get(peer[0], 0), -channels[peer].last_activity),
                   reverse=True)
        for peer in peers:
            if channels[peer].cuttable():
                return channels[peer]
        return None

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
    def install(self, server, mixin: type | None = None) -> None:
        """Make ``server`` (from :func:`waitress.create_server`, one listener)
        open its connections through this gate, and its worker threads take
        their tasks from a :class:`FairQueue`. ``mixin``: see
        :meth:`channel_factory`."""
        server.channel_class = self.channel_factory(mixin)
        FairQueue.install(server.task_dispatcher)

    def channel_factory(self, mixin: type | None = None):
        """waitress's channel factory: admits a connection here, then opens
        a :func:`gated channel <_gated_channel_class>` counted in its band.
        ``mixin``: a class put before the gated channel (the TLS layer of
        :mod:`companion.tlsserve`)."""
        channel_class = _gated_channel_class(self, mixin)

        def accept(server, sock, addr, adj, map=None):
            return self._accept(channel_class, server, sock, addr, adj, map)

        accept.channel_class = channel_class
        return accept

    def _accept(self, channel_class, server, sock, addr, adj, map=None):
        """A new connection: refused (503 and closed) over a cap, else a channel."""
        band = self.admit(addr[0])
        if band is None:
            _refuse(sock, "too many connections: this address has too many open, or the "
                          "server is full; retry shortly"
                    if channel_class.speaks_plain_http else None)
            return None
        channel = None
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.limits.send_buffer)
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


class FairQueue:
    """waitress's queue of tasks waiting for a worker thread
    (``ThreadedTaskDispatcher.queue``: each task is a connection with a
    request to answer), shared fairly: the machine's own connections and
    reserve ones (the host's way in) first, in order; then the guests', one
    task per address in turn. An address with a hundred tasks waiting makes
    a new phone (or the host on one) wait for one of its tasks, not a
    hundred. Used under the dispatcher's lock, as waitress uses its deque."""

    def __init__(self):
        self.first: deque = deque()
        self.guests: OrderedDict[str, deque] = OrderedDict()
        self.size = 0

    @classmethod
    def install(cls, dispatcher) -> None:
        """Give ``dispatcher`` (waitress's) a fair queue, keeping its tasks."""
        with dispatcher.lock:
            if isinstance(dispatcher.queue, cls):
                return
            fair = cls()
            for task in dispatcher.queue:
                fair.append(task)
            dispatcher.queue = fair

    def append(self, task) -> None:
        if getattr(task, "band", "guest") != "guest":
            self.first.append(task)
        else:
            addr = getattr(task, "addr", None)
            key = addr[0] if addr else "?"
            line = self.guests.get(key)
            if line is None:
                line = self.guests[key] = deque()
            line.append(task)
        self.size += 1

    def popleft(self):
        if self.first:
            task = self.first.popleft()
        elif self.guests:
            key, line = self.guests.popitem(last=False)
            task = line.popleft()
            if line:
                self.guests[key] = line          # its next task: after every other address's
        else:
            raise IndexError("pop from an empty queue")
        self.size -= 1
        return task

    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        yield from self.first
        for line in self.guests.values():
            yield from line


class OutputCapped(HTTPChannel):
    """waitress's channel whose output never holds a worker thread.

    waitress queues a response's bytes on the connection and, past its
    high watermark, makes the worker thread wait until the reader takes
    them (in ``write_soon``, and between two pipelined requests): a
    reader that never reads holds that thread for good. Here a write
    finding :attr:`Limits.outbuf_cap` bytes already waiting cuts the
    connection instead (``ClientDisconnected``: the worker is free at
    once), and so does output that has not moved for
    :attr:`Limits.drain_timeout_s` (checked by waitress's loop, at least
    every second). A cut connection is closed by waitress's thread with
    a reset, so the kernel drops what it still held for it too."""

    gate: Gate
    sent_at: float
    cut_reason: str | None = None      # why the gate cuts it (set from any thread)
    aborted = False                    # closed by the gate (waitress's thread)

    def write_soon(self, data):
        if data and self.total_outbufs_len >= self.gate.limits.outbuf_cap:
            self.doom("slow_reader")
            raise ClientDisconnected
        if not self.total_outbufs_len:
            self.sent_at = self.gate.clock()     # output starts waiting now
        return super().write_soon(data)

    def _flush_outbufs_below_high_watermark(self):
        """waitress waits here, in the worker thread, for the reader;
        never wait: a connection over the cap is cut."""
        if self.total_outbufs_len > self.gate.limits.outbuf_cap:
            self.doom("slow_reader")

    def send(self, data, do_close=True):
        sent = super().send(data, do_close)
        if sent:
            self.sent_at = self.gate.clock()
        return sent

    def stalled(self) -> str | None:
        """Why to cut it: output waits and none has moved for a while
        (waitress's thread). Before saying so, one more try to send: the
        reader may have taken some while this thread was busy elsewhere."""
        if not self.total_outbufs_len or not self._waited_too_long():
            return None
        self._flush_exception(self._flush_some_if_lockable)
        if self.total_outbufs_len and self._waited_too_long():
            return "stalled"
        return None

    def _waited_too_long(self) -> bool:
        return self.gate.clock() - self.sent_at > self.gate.limits.drain_timeout_s

    def doom(self, reason: str) -> None:
        """Have waitress's thread cut this connection (any thread): no
        more is written or read; the loop closes it at once."""
        self._condemn(reason)
        self.connected = False               # the worker's next write: disconnected
        try:
            self.server.pull_trigger()
        except (OSError, AttributeError):    # the server is stopping
            pass

    def abort(self, reason: str) -> None:
        """Close now with a reset (waitress's thread only)."""
        self._condemn(reason)
        self.aborted = True
        self.handle_close()

    def _condemn(self, reason: str) -> None:
        """Count the cut once, and make the close a reset: the kernel drops
        what it still holds for the reader instead of trying to deliver it."""
        if self.cut_reason is None:
            self.cut_reason = reason
            self.gate.count(reason)
        self.will_close = True
        self.reset_on_close()

    def reset_on_close(self) -> None:
        """Close with a reset (``SO_LINGER`` 0), dropping what is unsent."""
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (OSError, AttributeError):
            pass

    def writable(self):
        return not self.aborted and super().writable()


class GatedChannel(OutputCapped):
    """waitress's channel, counted per address, timed per request, cut
    past :attr:`Limits.pipelined` requests waiting, and never making a
    worker thread wait for a reader (:class:`OutputCapped`). The gate is a
    class attribute: :func:`_gated_channel_class` makes one class per gate."""

    _counted = False
    _started: float | None = None
    #: the gate answers a refused connection with a plain-text 503
    speaks_plain_http = True

    def __init__(self, server, sock, addr, adj, map=None, band="guest"):
        self.band, self._peer = band, addr
        self.sent_at = self.gate.clock()
        super().__init__(server, sock, addr, adj, map=map)

    def add_channel(self, map=None):
        super().add_channel(map)
        self._counted = True
        self.gate.opened(self._peer, self.band, self)

    def cuttable(self) -> bool:
        """Idle: nothing being answered, no output on its way (output that
        has not moved for :data:`IDLE_OUTPUT_S` is not on its way), and no
        request waiting unread (a phone's, just connected): cutting it
        loses no answer anyone is taking."""
        if not self.connected or self.will_close or self.requests:
            return False
        if self.total_outbufs_len and self.gate.clock() - self.sent_at < IDLE_OUTPUT_S:
            return False
        return not self.unread()

    def unread(self) -> bool:
        """Bytes wait in the kernel for waitress to read them."""
        try:
            return bool(self.socket.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except (OSError, AttributeError):        # nothing there (EAGAIN), or gone
            return False

    def cut(self) -> None:
        """Close now (waitress's own thread: the gate admits there); output
        a stopped reader left waiting is dropped with a reset."""
        if self.total_outbufs_len:
            self.reset_on_close()
        self.will_close = True
        self.handle_close()

    def del_channel(self, map=None):
        super().del_channel(map)
        if self._counted:
            self._counted = False
            self.gate.release(self._peer, self.band)

    def received(self, data):
        """Read ``data`` (waitress's thread); a request head at a time
        when it may hold more than :attr:`Limits.pipelined` requests, so
        a pipelining flood is cut after a few, not parsed whole."""
        if data.count(b"\r\n\r\n") + len(self.requests) <= self.gate.limits.pipelined:
            return self._receive(data)
        start = 0
        while start < len(data) and not self.aborted:
            end = data.find(b"\r\n\r\n", start)
            end = len(data) if end < 0 else end + 4
            self._receive(data[start:end])
            start = end
        return True

    def _receive(self, data):
        if self.request is None and data:
            self._started = self.gate.clock()
        try:
            return super().received(data)
        finally:
            if self.request is None:
                self._started = None
            if len(self.requests) > self.gate.limits.pipelined and not self.aborted:
                self.abort("pipelined")

    def readable(self):
        if self.aborted:
            return False
        reason = self.cut_reason or self.stalled()
        if reason is not None:
            self.abort(reason)
            return False
        started = self._started
        if started is not None and not self.will_close:
            req = self.request
            limit = (self.gate.limits.request_timeout_s
                     if req is not None and req.headers_finished
                     else self.gate.limits.header_timeout_s)
            if self.gate.clock() - started > limit:
                self.gate.count("slow")
                self.will_close = True       # writable() -> handle_close()
                return False
        return super().readable()


def _gated_channel_class(gate: Gate, mixin: type | None = None) -> type:
    """waitress's channel class for connections through ``gate`` (with
    ``mixin`` before it)."""
    if mixin is None:
        return type("GatedChannel", (GatedChannel,), {"gate": gate})
    return type(f"Gated{mixin.__name__}", (mixin, GatedChannel), {"gate": gate})


def _refuse(sock: socket.socket, message: str | None) -> None:
    """Answer 503 (best effort, never blocking; None: no answer, a TLS
    listener's client could not read one) and close."""
    try:
        if message is not None:
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


__all__ = ["BAND_KEY", "FairQueue", "Gate", "Limits", "REFUSALS", "Served", "TRUSTED",
           "serve_until_signalled", "trusted"]
