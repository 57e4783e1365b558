"""HTTPS on waitress, inside the table's own waitress channel (``companion
serve --https``; docs/web.md, "HTTPS on the LAN").

waitress speaks no TLS; its maintainers answer "run it behind a reverse
proxy" (Pylons/waitress issue 459). A proxy in front would make every phone
one address, the proxy's: the gate's per-address caps
(:class:`companion.serving.Gate`, counted when a connection is accepted)
and the PIN lockouts (``request.remote_addr``) would then hold every phone
together. So the TLS is done here, in the channel the gate already opens
for each connection: :class:`TLSChannel` comes before waitress's channel
and turns the bytes the socket gives into the bytes waitress parses, and
the bytes waitress sends into TLS records. The peer's address is the
socket's, as for plain HTTP.

It uses the standard library's ``ssl`` with memory buffers
(``SSLContext.wrap_bio``), as asyncio does, not an ``SSLSocket``: the
socket stays a plain non-blocking one, so what ``poll`` says about it is
true (an ``SSLSocket`` can hold decrypted bytes that ``poll`` does not see,
the classic stall of TLS under asyncore), and every byte read is decrypted
at once and handed to waitress. The handshake is made in waitress's own
thread as bytes come; a connection that has not finished it within the
gate's header timeout is closed (a slow handshake is a slow request).

A worker thread writing a response and waitress's thread reading the next
request may touch a connection's TLS state at once; one lock per
connection keeps them apart. A TLS record's plaintext is reported sent to
waitress only once its whole record has left, so waitress closes nothing
with a record half sent, and the gate's slow-reader caps see the phone's
pace as they do over plain HTTP.

Bytes that are not a TLS handshake (``http://`` typed at the https port)
are answered with a plain-text 400 naming the right scheme, then closed; a
handshake that fails (garbage, an old protocol, a phone that does not trust
the table) is closed. Both are counted in the gate's ``refused["tls"]``.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from errno import EAGAIN, ECONNABORTED, ECONNRESET, ENOTCONN, EPIPE, ESHUTDOWN, EWOULDBLOCK
from typing import Callable

from .tablecert import TableCA

log = logging.getLogger(__name__)

#: The most plaintext put in one TLS record (the protocol's own maximum).
TLS_RECORD = 16 * 1024
#: The first byte of a TLS handshake record.
_HANDSHAKE = 0x16
_AGAIN = (EAGAIN, EWOULDBLOCK)
_GONE = (ECONNRESET, ENOTCONN, ESHUTDOWN, ECONNABORTED, EPIPE)

_NOT_TLS = (b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s")
_NOT_TLS_BODY = b"This port speaks HTTPS: open the same address with https://\n"


def server_context(cert_file, key_file) -> ssl.SSLContext:
    """The server's TLS settings: TLS 1.2 and 1.3 only, HTTP/1.1."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.options |= ssl.OP_NO_COMPRESSION
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.load_cert_chain(cert_file, key_file)
    return ctx


class TLSChannel:
    """The TLS layer of a gated waitress channel (placed before it: see
    :meth:`companion.serving.Gate.channel_factory`). ``tls_keeper`` is a
    class attribute (:func:`tls_mixin` makes one class per keeper); each
    connection takes the keeper's context of the moment."""

    tls_keeper: "CertKeeper"
    #: the gate's refusals (a plain-text 503) would be garbage to a TLS client
    speaks_plain_http = False

    def __init__(self, server, sock, addr, adj, map=None, band="guest"):
        self._tls_lock = threading.Lock()
        self._tls_in, self._tls_out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = self.tls_keeper.context.wrap_bio(self._tls_in, self._tls_out,
                                                     server_side=True)
        self._raw = bytearray()      # TLS bytes the socket has not taken yet
        self._plain_due = 0          # plaintext whose record is in _raw, not yet reported sent
        self._tls_up = self._tls_seen = False
        super().__init__(server, sock, addr, adj, map=map, band=band)
        self._tls_since = self.gate.clock()

    # -- reading (waitress's thread) ----------------------------------------
    def handle_read(self):
        try:
            raw = self.socket.recv(self.adj.recv_bytes)
        except OSError as exc:
            if exc.errno not in _AGAIN:
                self.handle_close()
            return
        if not raw:                             # the phone closed it
            self.handle_close()
            return
        if not self._tls_seen:
            self._tls_seen = True
            if raw[0] != _HANDSHAKE:
                self._not_tls()
                return
        try:
            plain, ended = self._decrypt(raw)
        except ssl.SSLError as exc:
            self._failed(exc)
            return
        if plain:
            self.last_activity = time.time()
            self.received(plain)
        if ended:
            self.handle_close()

    def _decrypt(self, raw: bytes) -> tuple[bytes, bool]:
        """Feed ``raw`` to TLS: the plaintext it completes, and whether the
        phone said it is done (close_notify). Handshake answers and session
        tickets are queued for the socket and sent."""
        out, ended = [], False
        with self._tls_lock:
            self._tls_in.write(raw)
            if not self._tls_up:
                try:
                    self._tls.do_handshake()
                    self._tls_up = True
                except ssl.SSLWantReadError:
                    pass
                finally:
                    self._raw += self._tls_out.read()
            while self._tls_up:
                try:
                    chunk = self._tls.read(TLS_RECORD * 4)
                except ssl.SSLWantReadError:
                    break
                except ssl.SSLZeroReturnError:
                    ended = True
                    break
                if not chunk:
                    break
                out.append(chunk)
            self._raw += self._tls_out.read()
            self._send_raw()
        return b"".join(out), ended

    def _not_tls(self) -> None:
        """Plain HTTP (or anything else) on the https port: say so, close."""
        self.gate.count("tls")
        try:
            self.socket.send(_NOT_TLS % (len(_NOT_TLS_BODY), _NOT_TLS_BODY))
        except OSError:
            pass
        self.will_close = True
        self.handle_close()

    def _failed(self, exc: ssl.SSLError) -> None:
        """A handshake or record that TLS refuses: its alert sent if the
        socket takes it, then closed."""
        log.debug("TLS from %s refused: %s", self.addr[0] if self.addr else "?", exc)
        self.gate.count("tls")
        with self._tls_lock:
            self._raw += self._tls_out.read()
            self._send_raw()
        self.will_close = True
        self.handle_close()

    def readable(self):
        if (not self._tls_up and not self.will_close
                and self.gate.clock() - self._tls_since > self.gate.limits.header_timeout_s):
            self.gate.count("slow")           # a handshake that never ends: a slow request
            self.will_close = True
            return False
        return super().readable()

    # -- writing (any thread) ------------------------------------------------
    def send(self, data, do_close=True):
        """waitress's socket write: ``data`` encrypted, at most one record at a
        time; how much plaintext has gone out whole (0 until its record has)."""
        with self._tls_lock:
            state = self._send_raw()
            if state == "sent" and self._plain_due:
                done, self._plain_due = self._plain_due, 0
                return done
            if state == "sent" and self._tls_up and data:
                chunk = bytes(data[:TLS_RECORD])
                self._tls.write(chunk)
                self._raw += self._tls_out.read()
                state = self._send_raw()
                if state == "sent":
                    return len(chunk)
                self._plain_due = len(chunk)
        if state == "gone" and do_close:
            self.handle_close()
        return 0

    def _send_raw(self) -> str:
        """Give the socket what it takes of the queued TLS bytes (under the
        lock): "sent" (none left), "wait" (the socket is full) or "gone"."""
        while self._raw:
            try:
                n = self.socket.send(self._raw)
            except OSError as exc:
                if exc.errno in _AGAIN:
                    return "wait"
                if exc.errno in _GONE or self.socket is None:
                    return "gone"
                raise
            if not n:
                return "wait"
            del self._raw[:n]
            self.sent_at = self.gate.clock()    # the reader is taking output
        return "sent"

    def writable(self):
        return (bool(self._raw) and not self.aborted) or super().writable()

    def handle_write(self):
        if self._raw and not self._plain_due:   # handshake answers, tickets
            with self._tls_lock:
                state = self._send_raw()
            if state == "gone":
                self.handle_close()
                return
        super().handle_write()

    def unread(self) -> bool:
        """Bytes wait in the kernel, or a handshake is under way."""
        return (not self._tls_up and self._tls_seen) or super().unread()


def tls_mixin(keeper: "CertKeeper") -> type:
    """A :class:`TLSChannel` for ``keeper`` (the gate puts it before its channel)."""
    return type("TableTLSChannel", (TLSChannel,), {"tls_keeper": keeper})


class CertKeeper:
    """The table's server certificate, kept for the names the machine has:
    :meth:`refresh` makes a new one when the names changed (a new DHCP
    lease), in a new ``context`` that the connections that follow take (a
    context in use is never changed under the serving thread). ``names()``
    gives ``(ips, dns)``."""

    def __init__(self, ca: TableCA, names: Callable[[], tuple[list, list]]):
        self.ca, self.names = ca, names
        self.ips, self.dns = names()
        self.issued = ca.server_cert(self.ips, self.dns)
        self.context = server_context(self.issued.cert_file, self.issued.key_file)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh(self) -> bool:
        """Check the names; True if a new certificate was made and loaded."""
        ips, dns = self.names()
        if (ips, dns) == (self.ips, self.dns):
            return False
        self.ips, self.dns = ips, dns
        issued = self.ca.server_cert(ips, dns)
        if not issued.made:
            self.issued = issued
            return False
        self.context = server_context(issued.cert_file, issued.key_file)
        self.issued = issued
        log.info("new server certificate for %s", ", ".join(ips + dns))
        return True

    def watch(self, every_s: float, then: Callable[[], None] | None = None) -> None:
        """:meth:`refresh` every ``every_s`` in a background thread, calling
        ``then`` after a new certificate (the join URLs follow the address)."""
        def loop():
            while not self._stop.wait(every_s):
                try:
                    if self.refresh() and then is not None:
                        then()
                except (OSError, ValueError, ssl.SSLError):
                    log.exception("the table's certificate could not be renewed")
        self._thread = threading.Thread(target=loop, name="companion-cert", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None


def add_https_listener(server, socket_map: dict, app, gate, keeper: CertKeeper, host: str,
                       port: int, **adjustments):
    """A second listener on ``server``'s ``socket_map`` for HTTPS on ``port``
    (0: a free one), serving ``app`` with ``server``'s worker threads and
    trigger, its connections opened through ``gate`` with TLS. Returns the
    listener (``effective_port``)."""
    from waitress.adjustments import Adjustments
    from waitress.server import TcpWSGIServer

    adj = Adjustments(host=host, port=port, url_scheme="https", **adjustments)
    listener = TcpWSGIServer(app, socket_map, dispatcher=server.task_dispatcher, adj=adj)
    own = listener.trigger                      # one trigger for the whole map:
    listener.trigger = server.trigger           # the serving loop's stop pulls it
    own.close()
    gate.install(listener, mixin=tls_mixin(keeper))
    return listener


__all__ = ["CertKeeper", "TLSChannel", "TLS_RECORD", "add_https_listener", "server_context",
           "tls_mixin"]
