"""The Pico link's codec (companion/pico/protocol.py): known-answer frames
shared with the firmware's tests, corrupt input, sequence gaps, and a
Hypothesis fuzz: garbage never becomes a frame, damage never invents an edge."""

from __future__ import annotations

import json
import random
from binascii import crc_hqx
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.pico import protocol as P
from companion.pico.protocol import Decoder, LinkFault

VECTORS = json.loads((Path(__file__).parent / "vectors" / "pico_frames.json").read_text())
BY_NAME = {v: k for k, v in P.TYPE_NAMES.items()}


def message_from_json(vec: dict):
    """A vector's fields as the codec's message (lists back to tuples)."""
    cls = P._FIXED[BY_NAME[vec["type"]]][0]
    f = dict(vec["fields"])
    if cls is P.Hello:
        f["firmware"] = tuple(f["firmware"])
        f["inputs"] = tuple(P.Input(*i) for i in f["inputs"])
        f["leds"] = tuple(tuple(x) for x in f["leds"])
    if cls is P.Edges:
        f["records"] = tuple(tuple(r) for r in f["records"])
    return cls(**f)


FRAMES = VECTORS["frames"]


# ---------------------------------------------------------------------------
# Known answers


def test_the_crc_is_ccitt_false_with_its_published_check_value():
    for v in VECTORS["crc16_ccitt_false"]:
        assert crc_hqx(bytes.fromhex(v["data"]), P.CRC_INIT) == v["crc"]
    assert VECTORS["crc16_ccitt_false"][0]["crc"] == 0x29B1     # the catalogue's check


@pytest.mark.parametrize("vec", FRAMES, ids=[v["name"] for v in FRAMES])
def test_known_frames_encode_to_the_vector_bytes(vec):
    assert P.encode(message_from_json(vec)).hex() == vec["wire"]


@pytest.mark.parametrize("vec", FRAMES, ids=[v["name"] for v in FRAMES])
def test_known_frames_decode_to_the_vector_fields(vec):
    assert Decoder().feed(bytes.fromhex(vec["wire"])) == [message_from_json(vec)]


def test_every_frame_type_has_a_vector():
    assert {v["type"] for v in FRAMES} == set(P.TYPE_NAMES.values())


def test_a_frame_of_64_bytes_gets_a_second_delimiter_and_none_is_a_multiple_of_64():
    padded = [v for v in FRAMES if "64" in v["name"]]
    assert padded and all(bytes.fromhex(v["wire"]).endswith(b"\x00\x00") for v in padded)
    for v in FRAMES:
        assert len(bytes.fromhex(v["wire"])) % 64 != 0


@pytest.mark.parametrize("vec", VECTORS["bad"], ids=[v["name"] for v in VECTORS["bad"]])
def test_damaged_frames_give_their_fault_and_no_frame(vec):
    d = Decoder()
    out = d.feed(bytes.fromhex(vec["wire"]) + b"\x00")
    assert [type(o) for o in out] == [LinkFault]
    assert out[0].kind == vec["fault"]


# ---------------------------------------------------------------------------
# The stream


def _stream(n=50, start=0):
    msgs = [P.Edges((start + i) & 0xFFFF, ((1000 * i, 1 << (i % 6), 1 << (i % 6)),))
            for i in range(n)]
    return msgs, b"".join(P.encode(m) for m in msgs)


def test_frames_split_anywhere_across_reads_come_out_whole_and_in_order():
    msgs, wire = _stream()
    d = Decoder()
    got = []
    rng = random.Random(1)
    i = 0
    while i < len(wire):
        k = rng.randint(1, 9)
        got += d.feed(wire[i:i + k])
        i += k
    assert got == msgs and d.frames == 50 and d.corrupt == 0


def test_a_missing_frame_is_a_gap_fault_counting_what_was_lost():
    msgs, _ = _stream(10)
    d = Decoder()
    out = d.feed(b"".join(P.encode(m) for i, m in enumerate(msgs) if i not in (4, 5, 6)))
    gaps = [o for o in out if isinstance(o, LinkFault)]
    assert gaps == [LinkFault("gap", "3 frame(s) missing before seq 7", 3)]
    assert [o for o in out if not isinstance(o, LinkFault)] == [m for i, m in enumerate(msgs)
                                                                 if i not in (4, 5, 6)]
    assert d.missed == 3


def test_the_sequence_wraps_at_65536_without_a_gap():
    msgs, wire = _stream(6, start=65533)
    out = Decoder().feed(wire)
    assert out == msgs


def test_a_hello_restarts_the_sequence_without_a_gap():
    d = Decoder()
    d.feed(P.encode(P.Heartbeat(500, 1, 0, 0, 0, 0)))
    hello = message_from_json(FRAMES[0])
    out = d.feed(P.encode(hello) + P.encode(P.Heartbeat(1, 2, 0, 0, 0, 0)))
    assert out == [hello, P.Heartbeat(1, 2, 0, 0, 0, 0)]


def test_after_garbage_the_next_delimiter_resynchronises():
    msgs, wire = _stream(3)
    d = Decoder()
    out = d.feed(b"\x01\x02garbage" + wire)
    # garbage with no delimiter of its own swallows the first frame, no more
    assert out[0].kind == "corrupt" and out[1:] == msgs[1:]
    out = d.feed(b"\x01\x02garbage\x00" + _stream(3, start=3)[1])
    assert out[0].kind == "corrupt" and len(out) == 4


def test_a_run_without_delimiter_is_dropped_not_buffered_forever():
    d = Decoder()
    out = d.feed(b"\x55" * 5000)
    assert out[0].kind == "corrupt" and "without a frame delimiter" in out[0].message
    msgs, wire = _stream(2)
    assert d.feed(b"\x00" + wire)[-2:] == msgs


def test_edges_that_change_nothing_are_refused():
    body = P._HEADER.pack(1, P.EDGES, 0) + bytes([1]) + P._RECORD.pack(5, 0, 1)
    out = Decoder().feed(P.wrap(body + crc_hqx(body, 0xFFFF).to_bytes(2, "little")))
    assert out[0].kind == "corrupt" and "changes nothing" in out[0].message


@pytest.mark.parametrize("msg, what", [
    (P.SyncRequest(70000, 1), "16-bit"),
    (P.SetLeds(0, 256, 0), "set-leds"),
    (P.Edges(0, ()), "1 to 16"),
    (P.Edges(0, ((1, 1, 1),) * 17), "1 to 16"),
])
def test_messages_out_of_range_are_refused_with_a_clear_error(msg, what):
    with pytest.raises(P.ProtocolError, match=what):
        P.encode(msg)


# ---------------------------------------------------------------------------
# Fuzz


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=600))
def test_garbage_never_becomes_a_frame(data):
    d = Decoder()
    out = d.feed(data) + d.feed(b"\x00")
    for o in out:
        # anything accepted must be a well-formed frame that really is in the input
        if not isinstance(o, LinkFault):
            assert P.encode(o)[:-1].rstrip(b"\x00") in data


def _damage(wire: bytes, ops) -> bytes:
    b = bytearray(wire)
    for kind, pos, val in ops:
        if not b:
            break
        pos %= len(b)
        if kind == "flip":
            b[pos] ^= 1 << (val % 8)
        elif kind == "drop":
            del b[pos]
        else:
            b.insert(pos, val)
    return bytes(b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["flip", "drop", "insert"]),
                          st.integers(0, 10_000), st.integers(0, 255)), max_size=12),
       st.integers(1, 16))
def test_bit_flips_dropped_and_inserted_bytes_never_invent_an_edge(ops, chunk):
    msgs, wire = _stream(30)
    damaged = _damage(wire, ops)
    d = Decoder()
    out = []
    for i in range(0, len(damaged), chunk):
        out += d.feed(damaged[i:i + chunk])
    out += d.feed(b"\x00")
    sent = set(msgs)
    for o in out:
        assert isinstance(o, LinkFault) or o in sent
    got = [o for o in out if not isinstance(o, LinkFault)]
    # what survives is in order, and what was lost is accounted for
    assert got == sorted(got, key=lambda m: m.seq)
    if ops:
        assert len(got) + d.missed + d.corrupt >= len(msgs) - 1 or d.corrupt > 0
    else:
        assert got == msgs
