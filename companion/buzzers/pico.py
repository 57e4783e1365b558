"""Buzzers on a Raspberry Pi Pico box, over USB serial: the ``pico`` source.

The box (``firmware/``) samples every buzzer at once in a PIO state machine,
stamps each change with its own microsecond counter and streams the changes
as frames (:mod:`companion.pico.protocol`). This source reads them
(:mod:`companion.pico.transport`), keeps the box's clock on the Pi's
(:mod:`companion.pico.clocksync`: NTP-style exchanges eight times a second,
fitted for offset and drift) and emits :class:`~companion.races.edges.ButtonEdge`
values on the Pi's monotonic clock. Stamps come from the box's ticks through
one monotone map, so two edges of one box keep the order of their ticks
(equal ticks, equal stamps): clock sync error never changes who won.

It reports, as :class:`~companion.buzzers.base.SourceFault`: ``corrupt``
frames (dropped and counted), ``gap`` (missing sequence numbers, frames the
box dropped because nobody read), ``overflow`` (the box lost changes; a
buzzer whose change was lost gets its new level without an invented edge),
``stuck`` / ``cleared`` buzzers, ``disconnected``, ``incompatible``; and its
status with the clock's error bound. After an unplug it reopens the port
with a back-off and finds the box again by its USB ids (or the udev name
``/dev/buzzerbox``). A box whose firmware speaks another protocol is refused
with the command that updates it.

The box drives the announced-race cue and the buzzers' LEDs itself
(``drives_cue``, ``drives_leds``): :meth:`PicoSource.send_cue` schedules a
cue step on the box's own clock, and the box's stamp of the cue pin's edge
comes back as a :class:`~companion.buzzers.base.CueStamp` on the same clock
as the presses, so the table arms the race at the GO the box really sounded.

    companion serve --source pico          # or auto-detected when a Pico is plugged in

>>> PicoSource.detect() in (True, False)
True
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from typing import Callable

from ..races.edges import BuzzerId, ButtonEdge
from ..pico import certificate
from ..pico import protocol as P
from ..pico.clocksync import ClockSync, SlewedClock
from ..pico.lease import LeaseServer
from ..pico.transport import SerialLink, default_port
from .base import (CueStamp, EdgeSource, SourceError, SourceFault, SourceStatus,
                   SourceUnavailable)

log = logging.getLogger(__name__)

#: The firmware major version this companion works with.
FIRMWARE_MAJOR = 1
#: How to put matching firmware on the box (docs/pico.md).
UPDATE_HINT = ("update the box's firmware from this companion's source tree: "
               "companion pico flash   (mpremote on the box's named port, even while the "
               "table runs; docs/pico.md)")
MS = 1_000_000
S = 1_000_000_000
#: How long after opening the port to wait for the box's own hello before
#: asking for one (the box must be running its loop, Ctrl-C off, first).
HELLO_WAIT_S = 1.5
#: After asking a port found by USB ids for its hello, how long to wait for
#: it before trying the next Pico.
NO_HELLO_S = 1.0
#: The first firmware that answers SYNC_HELD_REQUEST (the four-timestamp
#: sync); an older one gets the plain SYNC_REQUEST.
HELD_SYNC_FIRMWARE = (1, 2, 0)
#: Frames of another protocol version, and nothing else, before a box is
#: refused (one alone is damage on the line).
VERSION_FRAMES = 3


#: changed-mask -> bit number, for masks with one bit set
_SINGLE_BIT = {1 << b: b for b in range(16)}


class _NoLink:
    """The link of an offline source: sends nothing."""

    path = "offline"

    def write(self, data):
        return None

    def where(self):
        return None

    def drop(self):
        pass

    def close(self):
        pass


class IncompatibleFirmware(SourceUnavailable):
    """The box runs firmware this companion cannot talk to."""


class PicoSource(EdgeSource):
    """Buzzer edges from a Pico box on USB serial.

    ``buzzers`` (ids) take the box's buzzer inputs in order (first id,
    buzzer 1). ``port``: a path, a callable giving the path now, or None to
    find the box by USB ids (each Pico in turn until one says HELLO).
    ``debounce_us`` is the box's leading-edge debounce (the referee's
    default window: the referee does the same again,
    and debouncing twice equals once); ``raw=True`` reports every sampled
    change (the timing self-test's bounce measurements). ``connect_timeout_s``
    is how long the constructor waits for the box to say hello.
    """

    name = "pico"
    precision_ns = 1_000            # one tick of the box's 1 MHz counter
    drives_cue = True
    drives_leds = True
    #: ask for a cue step this long ahead (at most): plenty for USB and the
    #: box's loop, so the box sounds it on its own clock at the asked time
    cue_lead_ns = 200 * MS

    def __init__(self, buzzers, pinmap=None, *, port=None, debounce_us: int = 20_000,
                 stuck_ms: int = 0, raw: bool = False, sync_hz: float = 8.0,
                 connect_timeout_s: float = 3.0, clock: Callable[[], int] = time.monotonic_ns,
                 backoff_s: tuple[float, float] = (0.05, 2.0)):
        super().__init__(buzzers, pinmap)
        if port is None and not default_port():         # $COMPANION_PICO_PORT counts
            raise SourceUnavailable("no Raspberry Pi Pico on USB (vendor id 2e8a, MicroPython "
                                    "0005); plug in the buzzer box, name its port in "
                                    "COMPANION_PICO_PORT, or use --source mock")
        self._setup(clock, debounce_us, stuck_ms, raw, sync_hz)
        # found by USB ids: a port that never says HELLO (a second Pico
        # running other MicroPython code) is passed over for the next one
        self._searching = port is None
        self._not_box: set[str] = set()
        if port is None:
            port = lambda: default_port(self._not_box)  # noqa: E731
        self.link = SerialLink(port, self._bytes, self._state, clock=clock,
                               backoff_s=backoff_s)
        # `companion pico` and the self-test ask for the port here (pico/lease.py)
        self.lease = LeaseServer(self._lend, self._give_back)
        self.link.start()
        self._syncer = threading.Thread(target=self._sync_loop, name="pico-sync", daemon=True)
        self._syncer.start()
        if not self._hello_ev.wait(connect_timeout_s) or self.refused:
            why = self.refused or (f"the buzzer box at {self.link.where() or 'no port'} did not "
                                   f"say hello within {connect_timeout_s:g} s")
            self.close()
            if self.refused:
                raise IncompatibleFirmware(why)
            raise SourceUnavailable(f"{why}; is the firmware on it? {UPDATE_HINT}")

    def _setup(self, clock, debounce_us, stuck_ms, raw, sync_hz) -> None:
        if len(self.buzzers) > 6:
            raise SourceError(f"a Pico box has 6 buzzers; {len(self.buzzers)} ids given")
        self.clock = clock
        self.debounce_us = debounce_us
        self.stuck_ms = stuck_ms
        self.raw = raw
        self.sync_period_s = 1.0 / sync_hz
        self.decoder = P.Decoder()
        self.sync: ClockSync | None = None
        self.map: SlewedClock | None = None
        self.hello: P.Hello | None = None
        self.refused: str | None = None
        self.levels: dict[int, bool] = {}      # input bit -> active, as last reported
        self.held: set[BuzzerId] = set()
        self.bit_buzzer: dict[int, BuzzerId] = {}
        self.role: dict[int, int] = {}
        self.cue_edges: list[tuple[int, bool]] = []          # (t_ns, on)
        self.test_edges: list[tuple[int, int, bool]] = []    # (tick, bit, level)
        self.faults: list[SourceFault] = []
        self.counters = {"frames": 0, "corrupt": 0, "gap": 0, "overflow": 0, "edges": 0,
                         "early": 0}
        self._seq = itertools.count()
        self._tokens: dict[int, int] = {}                     # token -> sent_ns
        self._acks: dict[int, threading.Event] = {}
        self._ack_result: dict[int, P.Ack] = {}
        self._cues: dict[int, tuple[bool, int | None]] = {}  # cue seq -> (on, asked-for ns)
        self._early: list[ButtonEdge | tuple] = []            # records before the first sync
        self._lock = threading.RLock()
        self._hello_ev = threading.Event()
        self._stop = threading.Event()
        self._connected = False
        self._connected_at = 0
        self._prev_hello: P.Hello | None = None
        self._last_status = 0
        self._box_counters = (0, 0)
        self._skip_stale = False
        self._version_frames = 0
        # a CERTIFY run's stream: trial markers and the presses after each
        self._certifying: list[certificate.Marker | tuple[int, int]] | None = None
        self.lease: LeaseServer | None = None
        self._away: str | None = None            # who has the box (an update, the self-test)

    @classmethod
    def offline(cls, buzzers, hello: P.Hello, *, clock: Callable[[], int] = time.monotonic_ns,
                raw: bool = False) -> "PicoSource":
        """A source with no port, for replaying a recorded stream and for
        benchmarks: give it bytes with :meth:`feed`. ``hello`` is the box's."""
        src = cls.__new__(cls)
        EdgeSource.__init__(src, buzzers)
        src.setup_offline(hello, clock=clock, raw=raw)
        return src

    def setup_offline(self, hello: P.Hello, *, clock: Callable[[], int], raw: bool) -> None:
        """Set up a source built without ``__init__`` (:meth:`offline`): no
        port, connected, and ``hello`` already said by the box."""
        self._setup(clock, 20_000, 0, raw, 8.0)
        self.link = _NoLink()
        self._connected = True
        self._hello(hello)

    def feed(self, data: bytes, t_ns: int) -> None:
        """Bytes from the box that arrived at Pi time ``t_ns`` (what the
        link's reader thread does with every chunk)."""
        self._bytes(data, t_ns)

    # -- detection ------------------------------------------------------------------

    @classmethod
    def detect(cls) -> bool:
        """A Pico is plugged in (USB ids 2e8a:0005, or the udev link), or
        ``$COMPANION_PICO_PORT`` names one."""
        return bool(default_port())

    # -- the link's side (its threads) -------------------------------------------------

    def _state(self, connected: bool, detail: str) -> None:
        # Nothing is sent before the box's hello: until its main.py has
        # turned Ctrl-C off, a 0x03 in a frame would stop it. The box repeats
        # its hello while nobody talks to it; if none comes, ask for one
        # after HELLO_WAIT_S (_sync_loop). A loss is reported before the
        # status says so, so whoever sees the status also finds the fault.
        if not connected:
            self._hello_ev.clear()
            if self._away is None:          # lent out is not lost: the status says where
                if self.lease is not None:
                    self.lease.quiet()      # nothing to lend until the port is back
                self._fault(SourceFault("disconnected", f"buzzer box lost ({detail}); "
                                                        f"reconnecting", t_ns=self.clock()))
        elif self.lease is not None:
            self.lease.listen(detail)        # asks for this port reach this table
        with self._lock:
            self._connected = connected
            self._connected_at = self.clock()
            self.decoder.reset()
            # a port just opened first gives what the box's USB kept from
            # before (up to 256 stale bytes, usually starting mid-frame):
            # up to the first delimiter is not a fault, and nothing but a
            # hello counts until the box has said one on this connection
            self._skip_stale = connected
            self._version_frames = 0
            if connected:
                self.refused = None         # another box, or the same one updated
            if self.hello is not None:
                self._prev_hello = self.hello
            self.hello = None
            # reported under the lock the change was made under: whoever reads
            # the status after it (status() takes the lock) finds it reported
            # too (a loaded CI run once read "disconnected" while the last
            # status reported still said connected)
            if not connected:
                self._status(force=True)

    def _bytes(self, data: bytes, t_ns: int) -> None:
        with self._lock:
            if self._skip_stale:
                i = data.find(b"\x00")
                if i < 0:
                    return
                self._skip_stale = False
                data = data[i + 1:]
            msgs = self.decoder.feed(data)
            sync, cmap = self.sync, self.map
            fast = (sync is not None and sync.synced and cmap.segments
                    and self.hello is not None and not self.refused
                    and self._certifying is None)
            if fast:
                # the hot path, inlined: one edge record of one buzzer. Same
                # steps as _edges -> _input (extend, map, level check, emit).
                ref = sync.ref_tick or 0
                hi = ref & ~0xFFFF_FFFF
                seg_tick, seg_ns, seg_rate = cmap.segments[-1]
                single, bit_buzzer, levels = _SINGLE_BIT, self.bit_buzzer, self.levels
                held, sink, n_edges, n_frames = self.held, self._sink, 0, 0
            for msg in msgs:
                try:
                    if fast and type(msg) is P.Edges and len(msg.records) == 1:
                        tick_lo, changed, lv = msg.records[0]
                        bit = single.get(changed)
                        buzzer = bit_buzzer.get(bit)
                        if buzzer is not None:
                            n_frames += 1
                            level = bool(lv & changed)
                            if levels.get(bit, False) != level:
                                tick = hi | tick_lo
                                d = tick - ref
                                if d > 0x7FFF_FFFF:
                                    tick -= 1 << 32
                                elif d < -0x8000_0000:
                                    tick += 1 << 32
                                t = (seg_ns + (((tick - seg_tick) * seg_rate) >> 32)
                                     if tick >= seg_tick else cmap.to_ns(tick))
                                levels[bit] = level
                                if level:
                                    held.add(buzzer)
                                else:
                                    held.discard(buzzer)
                                n_edges += 1
                                if sink is not None:
                                    sink.edge(ButtonEdge(buzzer, level, t))
                            continue
                    self._message(msg, t_ns)
                except Exception:       # a bug here must not kill the reader
                    log.exception("handling %r failed", msg)
            if fast:
                self.counters["frames"] += n_frames
                self.counters["edges"] += n_edges

    def _message(self, msg, t_ns: int) -> None:
        kind = type(msg)
        if kind is P.LinkFault:
            if msg.kind == "version":
                # one such frame is damage; only a box that says nothing else
                # on this connection speaks another protocol
                self._version_frames += 1
                if self._version_frames >= VERSION_FRAMES and self.hello is None:
                    self._refuse(f"the buzzer box speaks another protocol ({msg.message}); "
                                 f"{UPDATE_HINT}")
                    return
                self.counters["corrupt"] += msg.count
                self._fault(SourceFault("corrupt", f"buzzer box link: {msg.message}",
                                        t_ns=t_ns))
                return
            self.counters[msg.kind] = self.counters.get(msg.kind, 0) + msg.count
            self._fault(SourceFault(msg.kind, f"buzzer box link: {msg.message}", t_ns=t_ns))
            return
        if kind is not P.Hello and (self.hello is None or self.refused):
            self.counters["stale"] = self.counters.get("stale", 0) + 1
            return                       # not from a box this source has accepted
        self.counters["frames"] += 1
        if kind is P.Edges:
            self._edges(msg)
        elif kind is P.SyncReply:
            self._sync_reply(msg, t_ns)
        elif kind is P.SyncHeld:
            self._sync_held(msg, t_ns)
        elif kind is P.Heartbeat:
            self._heartbeat(msg)
        elif kind is P.Fault:
            self._box_fault(msg)
        elif kind is P.Ack:
            self._ack(msg)
        elif kind is P.TrialMark:
            with self._lock:
                if self._certifying is not None:
                    self._certifying.append(certificate.Marker(*msg[1:]))
        elif kind is P.Hello:
            self._hello(msg)

    def _ack(self, ack: P.Ack) -> None:
        with self._lock:
            cue = self._cues.pop(ack.acked_seq, None) if ack.acked_type == P.SET_CUE else None
            ev = self._acks.pop(ack.acked_seq, None)
            if ev is not None:           # somebody waits for this one
                self._ack_result[ack.acked_seq] = ack
            stamp = None
            if (cue is not None and ack.status == P.ACK_OK and ack.tick
                    and self.map is not None and self.sync is not None and self.sync.synced):
                stamp = CueStamp(cue[0], self.map.to_ns(ack.tick), cue[1])
        if ev is not None:
            ev.set()
        if stamp is not None:
            self._report_cue(stamp)

    def _refuse(self, why: str) -> None:
        """Refuse this box until a compatible hello or another connection;
        the link stays open (the box is not reset over and over) and nothing
        it sends reaches the table meanwhile."""
        first = self.refused != why
        self.refused = why
        self.hello = None
        if first:
            self._fault(SourceFault("incompatible", why))
            self._status(force=True)
        self._hello_ev.set()

    def _hello(self, h: P.Hello) -> None:
        if h.protocol != P.PROTOCOL_VERSION or h.firmware[0] != FIRMWARE_MAJOR:
            self._refuse(f"the buzzer box runs firmware {'.'.join(map(str, h.firmware))} "
                         f"(protocol {h.protocol}); this companion needs firmware "
                         f"{FIRMWARE_MAJOR}.x (protocol {P.PROTOCOL_VERSION}): {UPDATE_HINT}")
            return
        self.refused = None
        self._version_frames = 0
        prev = self.hello or self._prev_hello
        restarted = prev is None or h.boot_id != prev.boot_id
        self.hello = h
        self.role = {i.bit: i.role for i in h.inputs}
        numbers = {i.number: i.bit for i in h.inputs if i.role == P.ROLE_BUZZER}
        self.bit_buzzer = {numbers[n]: b for n, b in enumerate(self.buzzers, 1) if n in numbers}
        if len(self.bit_buzzer) < len(self.buzzers):
            self._refuse(f"the buzzer box has {len(numbers)} buzzer inputs; "
                         f"{len(self.buzzers)} buzzers were asked for")
            return
        if restarted or self.sync is None or self.sync.tick_hz != h.tick_hz:
            self.sync = ClockSync(h.tick_hz)
            self.map = SlewedClock(self.sync)
            self._tokens.clear()
        self.sync.note_tick(h.tick)
        flags = P.CONFIG_RAW if self.raw else 0
        self._send(P.Config(0, flags, 0 if self.raw else self.debounce_us, self.stuck_ms))
        self._hello_ev.set()
        self._status(force=True)
        for _ in range(4):                   # a quick first fix of the clock
            self._send_sync()

    def _sync_reply(self, r: P.SyncReply, t_ns: int) -> None:
        sent = self._tokens.pop(r.token, None)
        if sent is None or self.sync is None:
            return
        first = not self.sync.synced
        if self.sync.add_exchange(sent, r.tick, t_ns):
            self.map.update(r.tick)
        if first and self.sync.synced:
            self._flush_early()
        self._status()

    def _sync_held(self, r: P.SyncHeld, t_ns: int) -> None:
        """A four-timestamp reply: t1 sent, t2 ``r.tick``, t3 = t2 + held,
        t4 ``t_ns``. The exchange is t1, t2 and t4 less the hold: what the
        box's loop and queue added to the way back no longer biases the
        midpoint (the hold is on the box's microsecond timer: at its 100 ppm
        a 1 ms hold is off by 0.1 us)."""
        sent = self._tokens.get(r.token)
        held_ns = r.held_us * 1_000
        if sent is None or self.sync is None or held_ns > t_ns - sent:
            self.counters["sync_refused"] = self.counters.get("sync_refused", 0) + 1
            self._tokens.pop(r.token, None)
            return
        self._sync_reply(P.SyncReply(r.seq, r.token, r.tick), t_ns - held_ns)

    def _heartbeat(self, h: P.Heartbeat) -> None:
        if self.sync is None:
            return
        self.sync.note_tick(h.tick)
        over, dropped = h.overflows, h.tx_dropped
        old_over, old_dropped = self._box_counters
        self._box_counters = (over, dropped)
        if dropped > old_dropped:
            self._fault(SourceFault("gap", f"the buzzer box dropped {dropped - old_dropped} "
                                           f"frame(s): the Pi was not reading"))
        # a level that changed with no edge seen (lost while unplugged): set it, no edge
        for bit, buzzer in self.bit_buzzer.items():
            now = bool(h.levels >> bit & 1)
            if self.levels.get(bit, False) != now and self.sync.synced:
                self.levels[bit] = now
                self._set_held(buzzer, now)
                self._fault(SourceFault("gap", f"buzzer {buzzer} changed to "
                                               f"{'pressed' if now else 'released'} unseen",
                                        buzzer=buzzer))

    def _box_fault(self, f: P.Fault) -> None:
        buzzer = self.bit_buzzer.get(f.input)
        t_ns = self._to_ns(f.tick_lo) if self.sync is not None and self.sync.synced else None
        if f.code == P.F_OVERFLOW:
            self.counters["overflow"] += 1
            if buzzer is not None:
                now = bool(f.count)
                self.levels[f.input] = now
                self._set_held(buzzer, now)
                msg = (f"buzzer {buzzer}'s change was lost in an overflow; it is now "
                       f"{'pressed' if now else 'released'} (no edge reported)")
            elif f.input != P.NO_INPUT:
                self.levels[f.input] = bool(f.count)
                return
            else:
                msg = f"the buzzer box's sample queue overflowed ({f.count} word(s) lost)"
            self._fault(SourceFault("overflow", msg, buzzer=buzzer, t_ns=t_ns))
        elif f.code == P.F_STUCK:
            self._fault(SourceFault("stuck", f"buzzer {buzzer} held over {f.count} ms",
                                    buzzer=buzzer, t_ns=t_ns))
        elif f.code == P.F_CLEARED:
            self._fault(SourceFault("cleared", f"buzzer {buzzer} released", buzzer=buzzer,
                                    t_ns=t_ns))
        else:
            name = P.FAULT_NAMES.get(f.code, f"code {f.code}")
            self._fault(SourceFault(name, f"buzzer box fault: {name} ({f.count})", t_ns=t_ns))

    # -- edges --------------------------------------------------------------------------

    def _to_ns(self, tick_lo: int) -> int:
        return self.map.to_ns(self.sync.extend(tick_lo))

    def _edges(self, e: P.Edges) -> None:
        sync = self.sync
        if sync is None:
            return
        if not sync.synced:
            if len(self._early) < 256:
                self._early.append(e)
            self.counters["early"] += 1
            return
        extend, to_ns, single = sync.extend, self.map.to_ns, _SINGLE_BIT
        for tick_lo, changed, levels in e.records:
            tick = extend(tick_lo)
            t_ns = to_ns(tick)
            bit = single.get(changed)
            if bit is not None:                # the common case: one input changed
                self._input(bit, bool(levels & changed), tick, t_ns)
                continue
            bit = 0
            while changed >> bit:
                if changed >> bit & 1:
                    self._input(bit, bool(levels >> bit & 1), tick, t_ns)
                bit += 1

    def _flush_early(self) -> None:
        early, self._early = self._early, []
        for e in early:
            self._edges(e)

    def _input(self, bit: int, level: bool, tick: int, t_ns: int) -> None:
        if self._certifying is not None and bit in self.bit_buzzer:
            # the fairness driver's doing, not a player's: kept, never emitted
            if level:
                self._certifying.append((tick, bit))
            self.levels[bit] = level
            return
        buzzer = self.bit_buzzer.get(bit)
        if buzzer is not None:
            levels = self.levels
            if levels.get(bit, False) == level:
                return                         # no change from what was reported
            levels[bit] = level
            if level:
                self.held.add(buzzer)
            else:
                self.held.discard(buzzer)
            self.counters["edges"] += 1
            sink = self._sink
            if sink is not None:
                sink.edge(ButtonEdge(buzzer, level, t_ns))
            return
        role = self.role.get(bit)
        self.levels[bit] = level
        if role == P.ROLE_CUE:
            self.cue_edges.append((t_ns, level))
            del self.cue_edges[:-100]
        elif role in (P.ROLE_TEST_OUT, P.ROLE_SELFTEST_IN):
            self.test_edges.append((tick, bit, level))
            del self.test_edges[:-10_000]

    def _set_held(self, buzzer: BuzzerId, level: bool) -> None:
        if level:
            self.held.add(buzzer)
        else:
            self.held.discard(buzzer)

    # -- the clock -----------------------------------------------------------------------

    def _send_sync(self) -> None:
        token = next(self._seq) & 0xFFFF_FFFF
        with self._lock:
            h = self.hello
            ask = (P.SyncHeldRequest if h is not None and h.firmware >= HELD_SYNC_FIRMWARE
                   else P.SyncRequest)
            msg, wire = P.encode_command(ask(self._next_seq(), token), self._next_seq)
            t = self.link.write(wire)
            if t is not None:
                self._tokens[msg.token] = t
                if len(self._tokens) > 64:
                    self._tokens.pop(next(iter(self._tokens)))

    def _sync_loop(self) -> None:
        asked = None
        while not self._stop.wait(self.sync_period_s):
            if not self._connected or self.refused:
                continue
            if self.hello is not None:
                self._send_sync()
            elif (self.clock() - self._connected_at > HELLO_WAIT_S * S
                  and asked != self._connected_at):
                asked = self._connected_at
                self._send(P.HelloRequest(0))
            elif (self._searching and asked == self._connected_at
                  and self.clock() - self._connected_at > (HELLO_WAIT_S + NO_HELLO_S) * S):
                if self.link.path:                # asked, and still nothing: not the box
                    self._not_box.add(self.link.path)
                if default_port(self._not_box) in self._not_box:
                    self._not_box.clear()         # none said hello: round again
                self._connected_at = self.clock()
                self.link.drop()

    # -- commands ------------------------------------------------------------------------

    _tx_seq = 0

    def _next_seq(self) -> int:
        self._tx_seq = P.next_command_seq(self._tx_seq)
        return self._tx_seq

    def _send(self, msg) -> int | None:
        with self._lock:
            msg, wire = P.encode_command(msg._replace(seq=self._next_seq()), self._next_seq)
            t = self.link.write(wire)
        return msg.seq if t is not None else None

    def command(self, msg, timeout_s: float = 1.0, cue: tuple | None = None) -> P.Ack | None:
        """Send a command and wait for the box's ACK (None: no answer).
        ``cue``: (on, asked-for ns) of a cue command, whose stamp is also
        reported through the sink."""
        with self._lock:
            msg, wire = P.encode_command(msg._replace(seq=self._next_seq()), self._next_seq)
            ev = self._acks[msg.seq] = threading.Event()
            if cue is not None:
                self._note_cue(msg.seq, cue)
            if self.link.write(wire) is None:
                self._acks.pop(msg.seq, None)
                self._cues.pop(msg.seq, None)
                return None
        if not ev.wait(timeout_s):
            self._acks.pop(msg.seq, None)
            return None
        return self._ack_result.pop(msg.seq, None)

    def _note_cue(self, seq: int, cue: tuple) -> None:
        # the box keeps one scheduled cue: an older one it never fired is
        # never acked, so only the latest few are remembered
        self._cues[seq] = cue
        while len(self._cues) > 8:
            self._cues.pop(next(iter(self._cues)))

    def _led_bits(self, on: dict[str, bool]) -> tuple[int, int]:
        mask = bits = 0
        for buzzer, lit in on.items():
            try:
                n = self.buzzers.index(BuzzerId(buzzer))
            except ValueError:
                raise SourceError(f"no buzzer {buzzer!r} on this box; its buzzers are "
                                  f"{', '.join(self.buzzers)}") from None
            mask |= 1 << n
            bits |= (1 << n) if lit else 0
        return mask, bits

    def set_leds(self, on: dict[str, bool]) -> bool:
        """Light (True) or darken the LEDs of the named buzzers; True when
        the box confirmed."""
        ack = self.command(P.SetLeds(0, *self._led_bits(on)))
        return ack is not None and ack.status == P.ACK_OK

    def send_leds(self, on: dict[str, bool]) -> bool:
        """:meth:`set_leds` without waiting for the box (the feedback's way:
        the pipeline thread never blocks). False: the link is down."""
        if not on:
            return True
        return self._send(P.SetLeds(0, *self._led_bits(on))) is not None

    def _cue_tick(self, at_ns: int | None) -> int | None:
        """The box tick for Pi time ``at_ns`` (0: now); None when a time
        ahead cannot be kept (the clock is not synchronised yet)."""
        if at_ns is None:
            return 0
        synced = self.sync is not None and self.sync.synced
        if not synced:
            return 0 if at_ns <= self.clock() else None
        return max(1, self.sync.to_tick(at_ns))

    def cue(self, on: bool, at_ns: int | None = None, timeout_s: float = 2.0) -> int | None:
        """Switch the cue (LED and piezo) now or at Pi time ``at_ns`` (the box
        fires it on its own clock). Returns the Pi time the box stamped the
        cue's edge, on the same clock as the presses, or None. The stamp is
        also reported through the sink (a :class:`CueStamp`)."""
        with self._lock:
            at_tick = self._cue_tick(at_ns)
        if at_tick is None:
            at_tick = 0                     # no clock yet: as soon as it arrives
        wait = timeout_s + max(0, (at_ns or 0) - self.clock()) / S
        ack = self.command(P.SetCue(0, 1 if on else 0, at_tick), wait, cue=(bool(on), at_ns))
        if ack is None or ack.status != P.ACK_OK or not ack.tick:
            return None
        with self._lock:
            return self.map.to_ns(ack.tick)

    def send_cue(self, on: bool, at_ns: int | None = None) -> bool:
        """Schedule the cue on the box's clock at Pi time ``at_ns`` (None or
        past: now) and return at once; the box's stamp of it comes through
        the sink as a :class:`CueStamp`. False: not sent (no link, or a time
        ahead while the clock is not synchronised: ask again at that time)."""
        with self._lock:
            if not self._connected or self.hello is None or self.refused:
                return False
            at_tick = self._cue_tick(at_ns)
            if at_tick is None:
                return False
            msg, wire = P.encode_command(P.SetCue(self._next_seq(), 1 if on else 0, at_tick),
                                         self._next_seq)
            self._note_cue(msg.seq, (bool(on), at_ns))
            if self.link.write(wire) is None:
                self._cues.pop(msg.seq, None)
                return False
            return True

    def certify_run(self, separation_ns: int, per_pair: int, bits
                    ) -> tuple[list, int] | None:
        """Run the box's fairness driver: ``per_pair`` trials of every
        ordered pair of input ``bits`` (buzzers), in turn, the second pulled
        low ``separation_ns`` after the first (the box must be in raw mode:
        ``raw=True``). Returns the box's stream in the order it came, each
        trial's :class:`~companion.pico.certificate.Marker` and the presses
        after it as (tick, input bit), and the box's counter when it said it
        was done; None if the box did not do it (firmware before 1.1). The
        ack comes after every trial's frames, so nothing is waited for.
        Those presses never reach the sink."""
        mask = sum(1 << b for b in bits)
        pairs = len(list(bits)) * (len(list(bits)) - 1)
        with self._lock:
            self._certifying = []
        try:
            ack = self.command(P.Certify(0, separation_ns, per_pair, mask),
                               timeout_s=5 + per_pair * pairs * (0.004 + separation_ns / 1e9))
            with self._lock:
                stream = self._certifying
        finally:
            with self._lock:
                self._certifying = None
        if ack is None or ack.status != P.ACK_OK:
            return None
        return stream, ack.tick

    def certify(self, separation_ns: int, per_pair: int, bits=(0, 1)) -> list[int | None] | None:
        """:meth:`certify_run` judged: each trial's stamped separation
        (second - first, in ticks; 0: a tie, negative: the wrong order,
        None: the trial lost or spoiled); None if the box did not do it."""
        run = self.certify_run(separation_ns, per_pair, bits)
        if run is None:
            return None
        asked = certificate.trials(certificate.ordered_pairs(bits), separation_ns, per_pair)
        return list(certificate.judge(asked, run[0], self.hello.tick_hz, bits, run[1]).stamped)

    def pulse(self, width_us: int, gap_us: int, count: int) -> bool:
        """Pulse the self-test output (``hardware/selftest.py``)."""
        ack = self.command(P.Pulse(0, width_us, gap_us, count))
        return ack is not None and ack.status == P.ACK_OK

    # -- lent out: an update or the self-test has the box ------------------------------

    def _lend(self, who: str) -> str | None:
        """Let go of the port for ``who`` (pico/lease.py): the path that was
        open, or None if it could not be closed (then it is kept)."""
        path = self.link.path or "the box's port"
        self._away = who
        if not self.link.pause():
            self._away = None
            self.link.resume()
            return None
        log.warning("buzzer box away for an update: %s has %s", who, path)
        self._status(force=True)
        return path

    def _give_back(self) -> None:
        """The lease ended: open the port again (the box says hello, the
        clock carries on if it did not restart)."""
        if self._away is None:
            return
        log.warning("buzzer box back from %s", self._away)
        self._away = None
        self.link.resume()
        self._status(force=True)

    @property
    def away(self) -> str | None:
        """Who has the box now (``companion pico flash (pid 123)``), or None."""
        return self._away

    # -- the seam ------------------------------------------------------------------------

    def start(self, sink) -> None:
        """Report to ``sink``; a buzzer already held is sent as a press now."""
        super().start(sink)
        now = self.clock()
        with self._lock:
            for buzzer in sorted(self.held):
                self._emit(ButtonEdge(buzzer, True, now))

    def now_ns(self) -> int:
        return self.clock()

    def error_bound_ns(self) -> int | None:
        with self._lock:
            return None if self.map is None else self.map.error_bound_ns()

    def status(self) -> SourceStatus:
        h = self.hello
        bound = self.error_bound_ns()
        if h is None:
            detail = f"{self.link.path or 'no port'}: waiting for the box"
        else:
            fw = ".".join(map(str, h.firmware))
            sync = "not synced yet" if bound is None else f"clock within {bound / 1000:.0f} us"
            detail = f"{self.link.path}, firmware {fw}, protocol {h.protocol}, {sync}"
        if self.refused:
            detail = self.refused
        away = self._away
        if away is not None:
            detail = f"away for an update: {away} has the box; it comes back after"
        return SourceStatus(self.name, self._connected and h is not None and not self.refused
                            and away is None, self.precision_ns, bound, detail,
                            away=away is not None)

    def _status(self, force: bool = False) -> None:
        now = self.clock()
        if force or now - self._last_status >= S:
            self._last_status = now
            self._report_status(self.status())

    def _fault(self, fault: SourceFault) -> None:
        if len(self.faults) < 1000:
            self.faults.append(fault)
        self._report_fault(fault)

    def close(self) -> None:
        self._stop.set()
        if self.lease is not None:
            self.lease.close()
        super().close()
        self.link.close()
