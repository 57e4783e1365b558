"""The league page's live stream to a hall of spectators (``/api/live``).

A convention's league screen is watched from hundreds of phones. Each
stored message becomes a small Server-Sent Event (``event``, ``state``,
``game``, ``status``, ``convention``: the page then fetches what changed),
with a ``heartbeat`` every 15 s. The first event, ``hello``, tells the page
how often it may refetch the view (``refresh_ms``: longer in a fuller
hall), and the view itself is made once per change (:class:`ViewCache`).

One thread, the hub's, writes every notice to every page: notices that
arrive together are written together (one write per page, not one per
notice), straight into the page's waitress connection (its socket when
nothing is waiting to go out, else ``channel.write_soon``; the channel is
reached through the documented ``waitress.client_disconnected`` callable of
the request), so a notice costs one socket write per page and no thread
wake-ups. Each page's
worker thread only waits for its stream to end. A page whose connection
holds more than :data:`MAX_BACKLOG` unsent bytes (a phone that stopped
reading) is ended; its page reconnects and reloads. One address holds at
most ``per_address`` pages (the machine's own, the projector, any number),
so no one phone fills the hall. Served by anything but
waitress (Flask's test client), a page falls back to a queue read by its
own worker thread.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from typing import Callable, Iterator

from ..serving import trusted

log = logging.getLogger(__name__)

#: Unsent bytes a page's connection may hold before its stream is ended.
MAX_BACKLOG = 256 * 1024
#: Notices written together at most (a burst is split into writes this big).
BATCH = 256
#: After a notice, how long the hub waits for the next before writing (a
#: table's event and its new state arrive together: one write per page
#: for both, not two).
COALESCE_S = 0.003
#: A page refetches the league view at most this often (ms) per open page,
#: and at least every 250 ms: 500 pages each every 2 s.
REFRESH_MS_PER_PAGE = 4
RESYNC = b"event: resync\ndata: {}\n\n"
_STOP = object()


def _heartbeat() -> bytes:
    return (f'event: heartbeat\ndata: {{"pub_ns":{time.monotonic_ns()}}}\n\n').encode()


class Page:
    """One open live page: its waitress connection (None: a queue instead)
    and the address it was opened from."""

    __slots__ = ("channel", "chunked", "queue", "ended", "ready", "addr")

    def __init__(self, channel, chunked: bool, queue_size: int, addr: str | None = None):
        self.channel, self.chunked, self.addr = channel, chunked, addr
        self.queue: queue.Queue = queue.Queue(queue_size)
        self.ended = threading.Event()
        self.ready = False                # the hello (and the headers) are written

    def offer(self, data) -> None:
        """The queue path: a page that cannot keep up is told to reload."""
        try:
            self.queue.put_nowait(data)
        except queue.Full:
            try:
                while True:
                    self.queue.get_nowait()
            except queue.Empty:
                pass
            self.queue.put_nowait(RESYNC if data is not None else None)


class Hub:
    """Fan-out of the league's notices to the open pages (see the module doc)."""

    def __init__(self, queue_size: int = 256, max_clients: int = 500,
                 heartbeat_s: float = 15.0, max_backlog: int = MAX_BACKLOG,
                 per_address: int | None = None):
        self.queue_size, self.max_clients, self.heartbeat_s = queue_size, max_clients, heartbeat_s
        self.max_backlog = max_backlog
        #: live pages one address may hold (None: no cap); the machine's own: any
        self.per_address = per_address
        self.refused_address = 0          # pages refused for their address's cap
        self._pages: set[Page] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        self.ended_slow = 0               # pages ended for not reading
        self.version = 0                  # notices published so far: the view's version
        self._thread = threading.Thread(target=self._run, daemon=True, name="league-hub")
        self._thread.start()

    # -- the league's side ---------------------------------------------------
    def publish(self, kind: str, data: dict) -> None:
        """Queue a notice for every page (any thread; never blocks)."""
        with self._lock:
            self.version += 1
        self._out.put((f"event: {kind}\ndata: "
                       f"{json.dumps({**data, 'pub_ns': time.monotonic_ns()}, separators=(',', ':'))}"
                       "\n\n").encode())

    def _run(self) -> None:
        while True:
            try:
                first = self._out.get(timeout=self.heartbeat_s)
            except queue.Empty:
                first = _heartbeat()
            frames, stop = [], first is _STOP
            if not stop:
                frames.append(first)
            while not stop and len(frames) < BATCH:
                try:
                    item = self._out.get(timeout=COALESCE_S) if len(frames) == 1 \
                        else self._out.get_nowait()
                except queue.Empty:
                    break
                stop = item is _STOP
                if not stop:
                    frames.append(item)
            if frames:
                self._deliver(b"".join(frames))
            if stop:
                return

    def _deliver(self, data: bytes) -> None:
        with self._lock:
            pages = list(self._pages)
        chunk = b"%x\r\n%b\r\n" % (len(data), data)   # HTTP/1.1: waitress chunks the body
        for page in pages:
            if page.channel is None:
                page.offer(data)
            elif page.ready:
                self._write(page, chunk if page.chunked else data)

    def _write(self, page: Page, data: bytes) -> None:
        """One page's write. Only this thread writes to a ready page, and
        waitress's loop only sends what its buffer holds: with nothing
        waiting there, the socket takes the bytes directly (no lock); else
        they queue behind the rest (``write_soon``), unless too much is
        waiting already."""
        ch = page.channel
        try:
            waiting = ch.total_outbufs_len
            if waiting > self.max_backlog:
                self.ended_slow += 1
                raise ConnectionError("not reading")
            sent = 0
            if not waiting:
                try:
                    sent = ch.socket.send(data)
                except (BlockingIOError, InterruptedError):
                    sent = 0
            if sent < len(data):
                ch.write_soon(data[sent:])
        except Exception:                 # gone, too slow, or closing: end its stream
            self._end(page)

    def _end(self, page: Page) -> None:
        with self._lock:
            self._pages.discard(page)
        page.ended.set()
        page.offer(None)

    def _drop_gone(self) -> None:
        """With the lock held: end the pages whose phone has hung up (waitress
        saw the connection close; the hub would only notice at its next write,
        up to a heartbeat later), so a full hall makes room for a new page."""
        gone = [p for p in self._pages if p.channel is not None and not p.channel.connected]
        for page in gone:
            self._pages.discard(page)
            page.ended.set()

    # -- the pages' side -------------------------------------------------------
    def connect(self, environ: dict | None = None) -> Page | None:
        """A page for this request (None if the hall is full or closing, or
        its address holds its :attr:`per_address` pages)."""
        environ = environ or {}
        channel = getattr(environ.get("waitress.client_disconnected"), "__self__", None)
        if not all(hasattr(channel, a) for a in ("write_soon", "total_outbufs_len",
                                                  "outbuf_lock", "socket", "connected")):
            channel = None
        addr = environ.get("REMOTE_ADDR")
        with self._lock:
            if len(self._pages) >= self.max_clients or self._over_address_cap(addr):
                self._drop_gone()
            if self._closed or len(self._pages) >= self.max_clients:
                return None
            if self._over_address_cap(addr):
                self.refused_address += 1
                return None
            page = Page(channel, environ.get("SERVER_PROTOCOL") == "HTTP/1.1", self.queue_size,
                        addr)
            self._pages.add(page)
            return page

    def _over_address_cap(self, addr: str | None) -> bool:
        """With the lock held: ``addr`` holds its :attr:`per_address` pages."""
        if self.per_address is None or trusted(addr):
            return False
        return sum(1 for p in self._pages if p.addr == addr) >= self.per_address

    def stream(self, page: Page) -> Iterator[bytes]:
        try:
            refresh = max(250, REFRESH_MS_PER_PAGE * self.count)
            yield f'retry: 2000\n\nevent: hello\ndata: {{"refresh_ms":{refresh}}}\n\n'.encode()
            if page.channel is not None:
                # the hello and the headers are out: from now on the hub writes
                # to this connection itself; this thread only waits for the end
                page.ready = True
                page.ended.wait()
                return
            while True:
                try:
                    item = page.queue.get(timeout=self.heartbeat_s)
                except queue.Empty:
                    yield _heartbeat()
                    continue
                if item is None:
                    return
                yield item
        finally:
            with self._lock:
                self._pages.discard(page)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._pages)

    def close(self) -> None:
        """End every stream and the hub's thread."""
        with self._lock:
            self._closed = True
            pages = list(self._pages)
        for page in pages:
            self._end(page)
        self._out.put(_STOP)


class ViewCache:
    """The league view made once per change for every page that asks (a
    notice sends the whole hall to fetch it at once): ``get(version)``
    rebuilds it only when ``version`` (:attr:`Hub.version`) moved."""

    def __init__(self, make: Callable[[], bytes]):
        self.make = make
        self._lock = threading.Lock()
        self._version: int | None = None
        self._body = b""

    def get(self, version: int) -> tuple[int, bytes]:
        with self._lock:
            if version != self._version:
                self._body, self._version = self.make(), version
            return self._version, self._body


__all__ = ["Hub", "MAX_BACKLOG", "Page", "ViewCache"]
