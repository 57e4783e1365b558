# The buzzer box's side of the link: COBS framing, CRC-16, frames (MicroPython).
#
# The same format as companion/pico/protocol.py on the Pi (read its
# docstring for the layout); tests/vectors/pico_frames.json holds known-answer
# frames that both implementations are tested against. Runs unchanged under
# CPython and the MicroPython unix port, so the tests run it for real.
#
#   COBS( version:u8 | type:u8 | seq:u16 | payload | crc16:u16 ) 0x00
#
# CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), little-endian integers.

import struct

PROTOCOL_VERSION = 1
MAX_BODY = 250
USB_PACKET = 64

HELLO = 0x01
EDGES = 0x02
HEARTBEAT = 0x03
FAULT = 0x04
SYNC_REPLY = 0x05
ACK = 0x06
TRIAL = 0x07
SYNC_HELD = 0x09          # firmware 1.2: token, tick at the request's receipt, held us
HELLO_REQUEST = 0x41
SYNC_REQUEST = 0x42
SET_LEDS = 0x43
SET_CUE = 0x44
CONFIG = 0x45
PULSE = 0x46
CERTIFY = 0x47
SYNC_HELD_REQUEST = 0x49  # firmware 1.2: a sync request answered with SYNC_HELD

ROLE_BUZZER = 1
ROLE_SELFTEST_IN = 2
ROLE_TEST_OUT = 3
ROLE_CUE = 4
ROLE_MARK = 5

F_OVERFLOW = 1
F_STUCK = 2
F_TX_DROPPED = 3
F_TIMEBASE = 4
F_BAD_COMMAND = 5
F_RX_CORRUPT = 6
F_CLEARED = 7
NO_INPUT = 0xFF

ACK_OK = 0
ACK_BAD_ARGS = 1
ACK_UNKNOWN = 2

CONFIG_RAW = 0x01
MAX_RECORDS = 16

# payload sizes of the host's commands (the only frames the box decodes)
COMMAND_SIZES = {HELLO_REQUEST: 0, SYNC_REQUEST: 4, SET_LEDS: 2, SET_CUE: 9, CONFIG: 9,
                 PULSE: 9, CERTIFY: 7, SYNC_HELD_REQUEST: 4}


def _crc_table():
    t = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        t.append(c & 0xFFFF)
    return t


_CRC = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE of ``data`` (the Pi's binascii.crc_hqx(data, 0xFFFF))."""
    tab = _CRC
    for b in data:
        crc = ((crc << 8) & 0xFF00) ^ tab[(crc >> 8) ^ b]
    return crc


def cobs_encode(src):
    """COBS: ``src`` with no zero byte left in it, one byte longer (up to 254)."""
    out = bytearray(len(src) + len(src) // 254 + 2)
    code_at = 0
    code = 1
    o = 1
    last = len(src) - 1
    for i in range(len(src)):
        b = src[i]
        if b == 0:
            out[code_at] = code
            code_at = o
            o += 1
            code = 1
        else:
            out[o] = b
            o += 1
            code += 1
            if code == 0xFF and i < last:
                out[code_at] = code
                code_at = o
                o += 1
                code = 1
    out[code_at] = code
    return bytes(out[:o])


def cobs_decode(src):
    """Undo COBS; None if ``src`` is not a valid COBS frame."""
    out = bytearray()
    i = 0
    n = len(src)
    while i < n:
        code = src[i]
        if code == 0 or i + code > n:
            return None
        i += 1
        end = i + code - 1
        for j in range(i, end):
            if src[j] == 0:
                return None
        out.extend(src[i:end])
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


class Framer:
    """Builds the box's frames, numbering them."""

    def __init__(self):
        self.seq = 0

    def frame(self, ftype, payload, seq=None):
        """A frame numbered next, or ``seq`` (one :meth:`reserve` gave)."""
        if seq is None:
            seq = self.reserve()
        body = bytearray(struct.pack("<BBH", PROTOCOL_VERSION, ftype, seq))
        body.extend(payload)
        c = crc16(body)
        body.append(c & 0xFF)
        body.append(c >> 8)
        return wrap(body)

    def reserve(self):
        """The next sequence number, for a frame built later (sync_held)."""
        seq = self.seq
        self.seq = (seq + 1) & 0xFFFF
        return seq

    def hello(self, fw, tick_hz, boot_id, tick, flags, debounce_us, stuck_ms, inputs, leds, piezo):
        p = bytearray(struct.pack("<BBBBIIQBIIB", PROTOCOL_VERSION, fw[0], fw[1], fw[2],
                                  tick_hz, boot_id, tick, flags, debounce_us, stuck_ms,
                                  len(inputs)))
        for role, number, gpio in inputs:
            p.extend(bytes((role, number, gpio)))
        p.append(len(leds))
        for number, gpio in leds:
            p.extend(bytes((number, gpio)))
        p.append(NO_INPUT if piezo is None else piezo)
        return self.frame(HELLO, p)

    def edges(self, records):
        """``records``: a list of (tick_lo32, changed, levels), 1 to MAX_RECORDS."""
        p = bytearray(1 + 8 * len(records))
        p[0] = len(records)
        k = 1
        for tick, changed, levels in records:
            struct.pack_into("<IHH", p, k, tick & 0xFFFFFFFF, changed, levels)
            k += 8
        return self.frame(EDGES, p)

    def heartbeat(self, tick, levels, overflows, tx_dropped, rx_corrupt):
        return self.frame(HEARTBEAT, struct.pack("<QHIII", tick, levels, overflows,
                                                 tx_dropped, rx_corrupt))

    def fault(self, code, input_bit, tick_lo, count):
        return self.frame(FAULT, struct.pack("<BBII", code, input_bit, tick_lo & 0xFFFFFFFF,
                                             count))

    def sync_reply(self, token, tick):
        return self.frame(SYNC_REPLY, struct.pack("<IQ", token, tick))

    def sync_held(self, seq, token, tick, held_us):
        """Built as it goes out (``held_us``: from reading the request to
        now), under the ``seq`` reserved when it was queued."""
        return self.frame(SYNC_HELD, struct.pack("<IQI", token, tick, held_us), seq)

    def ack(self, acked_seq, acked_type, status, tick):
        return self.frame(ACK, struct.pack("<HBBQ", acked_seq, acked_type, status, tick))

    def trial(self, k, first, second, separation_ns, tick):
        """The fairness driver's trial ``k`` starts: input bit ``first``
        then ``second``, ``separation_ns`` apart; ``tick``: the counter
        before it is driven (the Pi frames the trial's stamps by these)."""
        return self.frame(TRIAL, struct.pack("<IBBIQ", k, first, second, separation_ns, tick))


def wrap(body):
    """COBS and the delimiter; a second zero when the frame is 64n bytes long."""
    wire = cobs_encode(body) + b"\x00"
    if len(wire) % USB_PACKET == 0:
        wire += b"\x00"
    return wire


def parse_command(body):
    """A host frame body as (type, seq, payload), or a string saying what is wrong."""
    n = len(body)
    if n < 6:
        return "short"
    if crc16(memoryview(body)[:n - 2]) != body[n - 2] | body[n - 1] << 8:
        return "crc"
    if body[0] != PROTOCOL_VERSION:
        return "version"
    size = COMMAND_SIZES.get(body[1])
    if size is None:
        return "type"
    if n - 6 != size:
        return "length"
    return body[1], body[2] | body[3] << 8, bytes(body[4:n - 2])


class Unframer:
    """Splits the host's bytes on zeros; feed() returns complete commands
    and counts the corrupt ones (never raises on garbage)."""

    def __init__(self, limit=MAX_BODY + 8):
        self.buf = bytearray()
        self.limit = limit
        self.corrupt = 0

    def feed(self, data):
        out = []
        for b in data:
            if b != 0:
                if len(self.buf) < self.limit:
                    self.buf.append(b)
                else:
                    self.buf = bytearray(b"\xff" * (self.limit + 1))  # poisoned until 0
                continue
            if not self.buf:
                continue
            chunk = self.buf
            self.buf = bytearray()
            body = cobs_decode(chunk) if len(chunk) <= self.limit else None
            cmd = parse_command(body) if body is not None else "cobs"
            if isinstance(cmd, str):
                self.corrupt += 1
            else:
                out.append(cmd)
        return out
