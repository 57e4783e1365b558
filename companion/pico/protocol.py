"""The Pico link's wire format: a pure codec from bytes to frames and faults.

No port, clock or thread here (pyserial's ``serial.threaded.Protocol`` and
pynmea2 are the model): :class:`Decoder` takes whatever bytes arrived and
gives back the frames they complete, plus a :class:`LinkFault` for each thing
that was wrong (a corrupt frame, a gap in sequence numbers, a frame of
another protocol version). Garbage never becomes a frame: a frame must
COBS-decode, carry this protocol's version, a known type with exactly its
payload length, and a matching CRC.

A frame on the wire::

    COBS( version:u8 | type:u8 | seq:u16 | payload | crc16:u16 ) 0x00

Integers are little-endian. ``crc16`` is CRC-16/CCITT-FALSE (polynomial
0x1021, initial value 0xFFFF: ``binascii.crc_hqx(data, 0xFFFF)``) over
everything before it. ``seq`` counts the sender's frames (mod 2**16) so a
lost frame is seen as a gap. A wire frame whose length is a multiple of 64
gets a second 0x00 (an empty frame, ignored): a full-speed USB packet is 64
bytes, and a transfer that ends exactly on a packet boundary can wait on the
host for a zero-length packet that never comes.

The firmware (``firmware/boxproto.py``) implements the same format in
MicroPython; ``tests/vectors/pico_frames.json`` holds known-answer frames
both test suites check.

>>> wire = encode(SyncReply(seq=7, token=42, tick=1_000_000))
>>> d = Decoder()
>>> d.feed(wire)
[SyncReply(seq=7, token=42, tick=1000000)]
>>> d.feed(b"\\x13\\x37garbage\\x00")
[LinkFault(kind='corrupt', message='not a valid COBS frame (9 bytes)', count=1)]
"""

from __future__ import annotations

import struct
from binascii import crc_hqx
from typing import NamedTuple

from cobs.cobs import DecodeError as _CobsError
from cobs.cobs import decode as _cobs_decode
from cobs.cobs import encode as _cobs_encode

#: The protocol this companion speaks; a box that says another is refused.
PROTOCOL_VERSION = 1
#: Longest frame body (header, payload, CRC) either side sends.
MAX_BODY = 250
#: Longest run of bytes without a delimiter the decoder buffers before it
#: gives up on it as garbage (a COBS frame of MAX_BODY is MAX_BODY + 2).
MAX_WIRE = MAX_BODY + 8
CRC_INIT = 0xFFFF
USB_PACKET = 64

# -- frame types: the Pico's (0x01..) and the host's (0x41..) -------------------
HELLO = 0x01
EDGES = 0x02
HEARTBEAT = 0x03
FAULT = 0x04
SYNC_REPLY = 0x05
ACK = 0x06
TRIAL = 0x07
SYNC_HELD = 0x09          # firmware 1.2 on: the four-timestamp sync reply
HELLO_REQUEST = 0x41
SYNC_REQUEST = 0x42
SET_LEDS = 0x43
SET_CUE = 0x44
CONFIG = 0x45
PULSE = 0x46
CERTIFY = 0x47
SYNC_HELD_REQUEST = 0x49  # firmware 1.2 on: a sync request answered with SYNC_HELD

# -- what each sampled input is (HELLO's pin list) -------------------------------
ROLE_BUZZER = 1
ROLE_SELFTEST_IN = 2
ROLE_TEST_OUT = 3
ROLE_CUE = 4
ROLE_MARK = 5
ROLES = {ROLE_BUZZER: "buzzer", ROLE_SELFTEST_IN: "selftest-in", ROLE_TEST_OUT: "test-out",
         ROLE_CUE: "cue", ROLE_MARK: "mark"}

# -- FAULT codes ------------------------------------------------------------------
F_OVERFLOW = 1      # the PIO FIFO overflowed: changes were lost
F_STUCK = 2         # a buzzer held longer than the stuck time
F_TX_DROPPED = 3    # frames dropped because the host was not reading
F_TIMEBASE = 4      # the counter extension lost track (a stall over half a wrap)
F_BAD_COMMAND = 5   # a host command the firmware could not use
F_RX_CORRUPT = 6    # corrupt frames from the host
F_CLEARED = 7       # a stuck buzzer was released
FAULT_NAMES = {F_OVERFLOW: "overflow", F_STUCK: "stuck", F_TX_DROPPED: "tx-dropped",
               F_TIMEBASE: "timebase", F_BAD_COMMAND: "bad-command",
               F_RX_CORRUPT: "rx-corrupt", F_CLEARED: "cleared"}
NO_INPUT = 0xFF

# -- ACK status ---------------------------------------------------------------------
ACK_OK = 0
ACK_BAD_ARGS = 1
ACK_UNKNOWN = 2

# -- CONFIG flags ---------------------------------------------------------------------
CONFIG_RAW = 0x01   # report every sampled change (no debounce at the box)

#: Edge records one EDGES frame carries at most.
MAX_RECORDS = 16


class LinkFault(NamedTuple):
    """Something wrong on the link: ``kind`` is ``corrupt``, ``gap`` or
    ``version``; ``count`` is how many frames it cost (a gap's missed frames)."""

    kind: str
    message: str
    count: int = 1


# -- messages ---------------------------------------------------------------------


class Input(NamedTuple):
    """One sampled input of the box: its bit in the pin word, role, number
    (buzzer 1..6; 0 otherwise) and Pico GPIO."""

    bit: int
    role: int
    number: int
    gpio: int


class Hello(NamedTuple):
    """The box introduces itself (at boot and on request)."""

    seq: int
    protocol: int
    firmware: tuple[int, int, int]
    tick_hz: int
    boot_id: int
    tick: int                 # the box's 64-bit counter now
    flags: int                # CONFIG flags in force
    debounce_us: int
    stuck_ms: int
    inputs: tuple[Input, ...]
    leds: tuple[tuple[int, int], ...]   # (buzzer number, gpio)
    piezo: int | None


class Edges(NamedTuple):
    """Pin changes: ``records`` of ``(tick_lo32, changed, levels)``; every
    input whose bit is set in ``changed`` changed at that tick; ``levels``
    has a bit set for each input now active (a buzzer pressed, an output on)."""

    seq: int
    records: tuple[tuple[int, int, int], ...]


class Heartbeat(NamedTuple):
    seq: int
    tick: int                 # 64-bit
    levels: int
    overflows: int
    tx_dropped: int
    rx_corrupt: int


class Fault(NamedTuple):
    seq: int
    code: int
    input: int                # input bit, or NO_INPUT
    tick_lo: int
    count: int


class SyncReply(NamedTuple):
    seq: int
    token: int
    tick: int                 # 64-bit: when the box handled the request


class SyncHeld(NamedTuple):
    """The four-timestamp sync reply (firmware 1.2): ``tick`` is the box's
    64-bit tick when it read the request (t2), and ``held_us`` how long it
    held it before the reply went out (t3 - t2, on the box's microsecond
    timer); the Pi knows t1 (sent) and t4 (received), so the reply's wait
    in the box's loop and USB queue is taken out of the round trip."""

    seq: int
    token: int
    tick: int
    held_us: int


class Ack(NamedTuple):
    seq: int
    acked_seq: int
    acked_type: int
    status: int
    tick: int                 # the box's stamp of the command's effect (0: none)


class TrialMark(NamedTuple):
    """The fairness driver's trial ``trial`` starts: input bit ``first``
    pulled low, then ``second`` ``separation_ns`` later; ``tick``: the box's
    counter before it drove them. Sent before the trial's stamps and after
    every earlier trial's, so the Pi frames each trial's stamps by these
    (:func:`companion.pico.certificate.judge`), never by time."""

    seq: int
    trial: int
    first: int
    second: int
    separation_ns: int
    tick: int                 # 64-bit


class HelloRequest(NamedTuple):
    seq: int


class SyncRequest(NamedTuple):
    seq: int
    token: int


class SyncHeldRequest(NamedTuple):
    """A sync request a box of firmware 1.2 on answers with :class:`SyncHeld`
    (an older box would count it corrupt: the Pi asks by HELLO's firmware)."""

    seq: int
    token: int


class SetLeds(NamedTuple):
    seq: int
    mask: int                 # bit i: buzzer i+1's LED is set by this command
    on: int


class SetCue(NamedTuple):
    seq: int
    on: int
    at_tick: int              # 0: now; else when the box's counter reaches it


class Config(NamedTuple):
    seq: int
    flags: int
    debounce_us: int
    stuck_ms: int


class Pulse(NamedTuple):
    seq: int
    width_us: int
    gap_us: int
    count: int


class Certify(NamedTuple):
    """The fairness driver (firmware/boxpio.py): ``count`` trials of every
    ordered pair of the buzzer inputs whose bits are set in ``bits``, in
    turn (trial k drives the k-th pair mod their number, pairs ordered
    (first, second) by first then second), the second pulled low
    ``separation_ns`` after the first (to the box's system clock cycle);
    each trial announced by a :class:`TrialMark`, acked when done. A box
    older than firmware 1.1 drops it as corrupt (its CERTIFY was 6 bytes)."""

    seq: int
    separation_ns: int
    count: int
    bits: int


_HEADER = struct.Struct("<BBH")
_EDGE1 = struct.Struct("<BBHBIHH")        # a whole one-record edges frame, CRC aside
_HELLO_FIXED = struct.Struct("<BBBBIIQBIIB")
_RECORD = struct.Struct("<IHH")

#: type -> (message class, payload struct or None for a variable payload)
_FIXED: dict[int, tuple[type, struct.Struct | None]] = {
    HELLO: (Hello, None),
    EDGES: (Edges, None),
    HEARTBEAT: (Heartbeat, struct.Struct("<QHIII")),
    FAULT: (Fault, struct.Struct("<BBII")),
    SYNC_REPLY: (SyncReply, struct.Struct("<IQ")),
    ACK: (Ack, struct.Struct("<HBBQ")),
    TRIAL: (TrialMark, struct.Struct("<IBBIQ")),
    SYNC_HELD: (SyncHeld, struct.Struct("<IQI")),
    SYNC_HELD_REQUEST: (SyncHeldRequest, struct.Struct("<I")),
    HELLO_REQUEST: (HelloRequest, struct.Struct("<")),
    SYNC_REQUEST: (SyncRequest, struct.Struct("<I")),
    SET_LEDS: (SetLeds, struct.Struct("<BB")),
    SET_CUE: (SetCue, struct.Struct("<BQ")),
    CONFIG: (Config, struct.Struct("<BII")),
    PULSE: (Pulse, struct.Struct("<IIB")),
    CERTIFY: (Certify, struct.Struct("<IHB")),
}
TYPE_OF = {cls: t for t, (cls, _) in _FIXED.items()}
TYPE_NAMES = {HELLO: "hello", EDGES: "edges", HEARTBEAT: "heartbeat", FAULT: "fault",
              SYNC_REPLY: "sync-reply", ACK: "ack", TRIAL: "trial",
              HELLO_REQUEST: "hello-request",
              SYNC_REQUEST: "sync-request", SET_LEDS: "set-leds", SET_CUE: "set-cue",
              CONFIG: "config", PULSE: "pulse", CERTIFY: "certify",
              SYNC_HELD: "sync-held", SYNC_HELD_REQUEST: "sync-held-request"}


class ProtocolError(ValueError):
    """A message that cannot be encoded (a field out of range)."""


# -- encoding ---------------------------------------------------------------------


def payload_of(msg) -> bytes:
    """The payload bytes of a message (no header, no CRC)."""
    t = TYPE_OF.get(type(msg))
    if t is None:
        raise ProtocolError(f"not a Pico link message: {msg!r}")
    try:
        if t == HELLO:
            return _hello_payload(msg)
        if t == EDGES:
            if not 0 < len(msg.records) <= MAX_RECORDS:
                raise ProtocolError(f"an edges frame carries 1 to {MAX_RECORDS} records")
            return bytes([len(msg.records)]) + b"".join(_RECORD.pack(*r) for r in msg.records)
        return _FIXED[t][1].pack(*msg[1:])
    except (struct.error, TypeError) as exc:
        raise ProtocolError(f"{TYPE_NAMES[t]}: {exc}") from None


def _hello_payload(h: Hello) -> bytes:
    inputs = sorted(h.inputs)
    if [i.bit for i in inputs] != list(range(len(inputs))):
        raise ProtocolError("hello inputs must be bits 0, 1, 2... in order")
    out = bytearray(_HELLO_FIXED.pack(h.protocol, *h.firmware, h.tick_hz, h.boot_id, h.tick,
                                      h.flags, h.debounce_us, h.stuck_ms, len(inputs)))
    for i in inputs:
        out += bytes((i.role, i.number, i.gpio))
    out.append(len(h.leds))
    for number, gpio in h.leds:
        out += bytes((number, gpio))
    out.append(NO_INPUT if h.piezo is None else h.piezo)
    return bytes(out)


def frame_body(msg, version: int = PROTOCOL_VERSION) -> bytes:
    """Header, payload and CRC of ``msg``: what COBS then wraps."""
    if not 0 <= msg.seq <= 0xFFFF:
        raise ProtocolError(f"seq {msg.seq} is not a 16-bit number")
    body = _HEADER.pack(version, TYPE_OF[type(msg)], msg.seq) + payload_of(msg)
    if len(body) + 2 > MAX_BODY:
        raise ProtocolError(f"frame of {len(body) + 2} bytes; at most {MAX_BODY}")
    return body + crc_hqx(body, CRC_INIT).to_bytes(2, "little")


def wrap(body: bytes) -> bytes:
    """COBS-encode a frame body and delimit it; never a multiple of 64 bytes."""
    wire = _cobs_encode(body) + b"\x00"
    if len(wire) % USB_PACKET == 0:
        wire += b"\x00"
    return wire


def encode(msg, version: int = PROTOCOL_VERSION) -> bytes:
    """The bytes that carry ``msg`` on the wire."""
    return wrap(frame_body(msg, version))


#: mpremote's interrupt: the box leaves its loop for the REPL when it reads
#: these two bytes, wherever they fall (firmware/boxcore.py), so the Pi
#: never sends them.
INTERRUPT = b"\r\x03"


def next_command_seq(seq: int) -> int:
    """The sequence number after ``seq`` for a command to the box: one with
    no CR byte (a CR in the header would be followed by the payload's first
    byte or a COBS code, either of which can be Ctrl-C)."""
    seq = (seq + 1) & 0xFFFF
    while seq & 0xFF == 0x0D or seq >> 8 == 0x0D:
        seq = (seq + 1) & 0xFFFF
    return seq


def _no_cr(value: int, nbytes: int) -> int:
    """The least value >= ``value`` with no CR in its ``nbytes`` low bytes."""
    for i in range(nbytes):
        if (value >> 8 * i) & 0xFF == 0x0D:
            value = ((value >> 8 * i) + 1) << 8 * i
    return value


def _nudge(msg, k: int):
    """The same command but for a harmless amount (the ``k``-th time), with
    no CR byte left in its numbers: another token; a cue at most 65 ms
    later (the box stamps when it really sounded, and the race is armed at
    that stamp); a little more debounce, stuck time or pulse. For a payload
    that holds CR, Ctrl-C, or whose CRC keeps making them."""
    if isinstance(msg, (SyncRequest, SyncHeldRequest)):
        return msg._replace(token=_no_cr((msg.token + k) & 0xFFFF_FFFF, 4) & 0xFFFF_FFFF)
    if isinstance(msg, SetCue) and msg.at_tick:
        return msg._replace(at_tick=_no_cr(msg.at_tick + k - 1, 3))
    if isinstance(msg, Config):
        return msg._replace(debounce_us=_no_cr(msg.debounce_us + k - 1, 4),
                            stuck_ms=_no_cr(msg.stuck_ms + k - 1, 4) if msg.stuck_ms else 0)
    if isinstance(msg, Pulse):
        return msg._replace(width_us=_no_cr(msg.width_us + k - 1, 4),
                            gap_us=_no_cr(msg.gap_us + k - 1, 4))
    return msg


def encode_command(msg, next_seq):
    """``(msg, wire)`` for a command to the box: a leading delimiter (so no
    stray byte before it, a modem probe's CR, joins its first byte) and
    never CR, Ctrl-C anywhere: another ``seq`` from ``next_seq()`` when the
    CRC or header makes them, a nudged payload (:func:`_nudge`) when the
    payload does. The ``msg`` returned is the one sent."""
    first = msg
    for attempt in range(64):
        wire = b"\x00" + encode(msg)
        if INTERRUPT not in wire:
            return msg, wire
        msg = msg._replace(seq=next_seq())
        if attempt % 4 == 3:
            msg = _nudge(first._replace(seq=msg.seq), attempt // 4 + 1)
    raise ValueError(f"cannot send {msg!r} without CR, Ctrl-C")


# -- decoding ---------------------------------------------------------------------


def parse_body(body: bytes):
    """One frame body (COBS already undone) as a message, or a LinkFault."""
    n = len(body)
    if n < 6:
        return LinkFault("corrupt", f"frame too short ({n} bytes)")
    if crc_hqx(body[:-2], CRC_INIT) != body[-2] | body[-1] << 8:
        return LinkFault("corrupt", f"CRC mismatch ({n} bytes)")
    version, t, seq = _HEADER.unpack_from(body)
    if version != PROTOCOL_VERSION:
        return LinkFault("version", f"a frame of protocol {version}; this companion speaks "
                                    f"{PROTOCOL_VERSION}")
    entry = _FIXED.get(t)
    if entry is None:
        return LinkFault("corrupt", f"unknown frame type 0x{t:02x}")
    cls, st = entry
    payload = body[4:-2]
    if st is not None:
        if len(payload) != st.size:
            return LinkFault("corrupt", f"{TYPE_NAMES[t]} frame with a {len(payload)}-byte "
                                        f"payload; expected {st.size}")
        return cls(seq, *st.unpack(payload))
    if t == EDGES:
        return _parse_edges(seq, payload)
    return _parse_hello(seq, payload)


def _parse_edges(seq: int, p: bytes):
    if not p or len(p) != 1 + 8 * p[0] or not 0 < p[0] <= MAX_RECORDS:
        return LinkFault("corrupt", f"edges frame with a bad record count ({len(p)} bytes)")
    recs = tuple(_RECORD.iter_unpack(p[1:]))
    for _, changed, _ in recs:
        if not changed:
            return LinkFault("corrupt", "edges frame with a record that changes nothing")
    return Edges(seq, recs)


def _parse_hello(seq: int, p: bytes):
    bad = LinkFault("corrupt", f"hello frame of a bad shape ({len(p)} bytes)")
    k = _HELLO_FIXED.size
    if len(p) < k + 2:
        return bad
    (proto, ma, mi, pa, tick_hz, boot_id, tick, flags, debounce_us, stuck_ms,
     n_in) = _HELLO_FIXED.unpack_from(p)
    if len(p) < k + 3 * n_in + 1:
        return bad
    inputs = tuple(Input(i, p[k + 3 * i], p[k + 3 * i + 1], p[k + 3 * i + 2])
                   for i in range(n_in))
    k += 3 * n_in
    n_led = p[k]
    k += 1
    if len(p) != k + 2 * n_led + 1:
        return bad
    leds = tuple((p[k + 2 * i], p[k + 2 * i + 1]) for i in range(n_led))
    piezo = p[-1]
    return Hello(seq, proto, (ma, mi, pa), tick_hz, boot_id, tick, flags, debounce_us, stuck_ms,
                 inputs, leds, None if piezo == NO_INPUT else piezo)


class Decoder:
    """Bytes in, frames and :class:`LinkFault` values out, in order.

    Keeps a partial frame between calls, checks each frame (COBS, CRC,
    version, type, length) and the sequence numbers: a jump is one ``gap``
    fault counting the frames missed. A HELLO starts the count afresh (the
    box restarted or was asked to introduce itself). Counters ``frames``,
    ``corrupt`` and ``missed`` keep the totals.
    """

    def __init__(self):
        self._partial = b""
        self._next_seq: int | None = None
        self.frames = 0
        self.corrupt = 0
        self.missed = 0

    def reset(self) -> None:
        """Forget the partial frame and the sequence (a new connection)."""
        self._partial = b""
        self._next_seq = None

    def feed(self, data: bytes) -> list:
        out: list = []
        if self._partial:
            data = self._partial + data
        chunks = data.split(b"\x00")
        tail = chunks.pop()
        if len(tail) > MAX_WIRE:
            self.corrupt += 1
            out.append(LinkFault("corrupt", f"{len(tail)} bytes without a frame delimiter"))
            tail = b""
        self._partial = tail
        for chunk in chunks:
            if not chunk:
                continue        # the padding after a 64-byte frame, or a resync
            try:
                body = _cobs_decode(chunk)
            except _CobsError:
                msg = LinkFault("corrupt", f"not a valid COBS frame ({len(chunk)} bytes)")
            else:
                # the common frame, one edge record, checked and unpacked in one go
                if (len(body) == 15 and body[1] == EDGES and body[0] == PROTOCOL_VERSION
                        and body[4] == 1 and crc_hqx(body[:13], CRC_INIT) == body[13] | body[14] << 8):
                    _, _, seq, _, tick, changed, levels = _EDGE1.unpack_from(body)
                    if changed and seq == self._next_seq:
                        self._next_seq = (seq + 1) & 0xFFFF
                        self.frames += 1
                        out.append(Edges(seq, ((tick, changed, levels),)))
                        continue
                msg = parse_body(body)
            if type(msg) is LinkFault:
                if msg.kind == "corrupt":
                    self.corrupt += 1
                out.append(msg)
                continue
            seq = msg.seq
            expect = self._next_seq
            if expect is not None and seq != expect and type(msg) is not Hello:
                missed = (seq - expect) & 0xFFFF
                self.missed += missed
                out.append(LinkFault("gap", f"{missed} frame(s) missing before seq {seq}",
                                     missed))
            self._next_seq = (seq + 1) & 0xFFFF
            self.frames += 1
            out.append(msg)
        return out


__all__ = [n for n in dir() if not n.startswith("_")]
