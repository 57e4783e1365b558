"""HTTPS on the LAN (issue 33, the last part; docs/web.md "HTTPS on the LAN"):
the table's own certificate authority and its server certificate
(companion/tablecert.py), and the table served over TLS inside the gate's
waitress channel (companion/tlsserve.py): real sockets, an ``ssl`` client
that trusts the table's CA only, a live stream, each phone's own address
seen by the caps and the PIN lockout, and bytes that are not TLS closed."""

from __future__ import annotations

import datetime
import http.client
import json
import os
import socket
import ssl
import stat

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from companion.serving import Limits
from companion.tablecert import (CA_DAYS, SERVER_DAYS, CertError, TableCA, machine_names,
                                 tls_dir_for)
from companion.tableconfig import TableConfig, add_arguments
from tests.kit.helpers import wait_for
from tests.kit.web import PIN, https_conn, start_table, table_tls

NOW = datetime.datetime(2025, 3, 1, 20, 0, tzinfo=datetime.timezone.utc)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# -- the CA and the server certificate -----------------------------------------

def test_the_ca_is_made_once_beside_the_store_its_key_private(tmp_path):
    folder = tls_dir_for(tmp_path / "companion.db")
    assert folder == tmp_path / "companion.db-tls"
    ca = TableCA.at(folder, now=NOW)
    assert mode(folder) == 0o700
    assert mode(folder / "ca.key") == 0o600
    assert mode(folder / "ca.crt") == 0o644                # public: phones install it
    basic = ca.cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert basic.critical and basic.value.ca and basic.value.path_length == 0
    usage = ca.cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign and not usage.digital_signature
    assert ca.cert.not_valid_after_utc - NOW == datetime.timedelta(days=CA_DAYS)
    assert isinstance(ca.key, ec.EllipticCurvePrivateKey)
    again = TableCA.at(folder)                           # the next start: the same CA
    assert again.cert == ca.cert
    assert b"PRIVATE" not in again.pem() and again.pem().startswith(b"-----BEGIN CERTIFICATE")


def test_a_ca_key_left_readable_is_made_private_again(tmp_path):
    folder = tmp_path / "t.db-tls"
    TableCA.at(folder)
    os.chmod(folder / "ca.key", 0o644)
    TableCA.at(folder)
    assert mode(folder / "ca.key") == 0o600


def test_a_damaged_ca_key_is_refused_with_the_way_out(tmp_path):
    folder = tmp_path / "t.db-tls"
    TableCA.at(folder)
    (folder / "ca.key").write_text("not a key")
    with pytest.raises(CertError, match="move the folder aside"):
        TableCA.at(folder)


def test_the_server_certificate_names_every_address_and_the_hostname(tmp_path):
    ca = TableCA.at(tmp_path / "t.db-tls", now=NOW)
    issued = ca.server_cert(["192.168.1.20", "127.0.0.1"], ["pi", "pi.local"], now=NOW)
    cert = issued.cert
    assert issued.made and mode(issued.key_file) == 0o600
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(i) for i in san.get_values_for_type(x509.IPAddress)} == {"192.168.1.20",
                                                                         "127.0.0.1"}
    assert san.get_values_for_type(x509.DNSName) == ["pi", "pi.local"]
    assert cert.issuer == ca.cert.subject
    cert.verify_directly_issued_by(ca.cert)              # raises if not signed by the CA
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert cert.not_valid_before_utc < NOW                # a phone a little behind accepts it
    assert cert.not_valid_after_utc - NOW == datetime.timedelta(days=SERVER_DAYS)
    assert SERVER_DAYS <= 398                             # iOS: 825 at most; the web: 398


def test_the_certificate_is_kept_while_it_covers_the_names(tmp_path):
    ca = TableCA.at(tmp_path / "t.db-tls", now=NOW)
    first = ca.server_cert(["192.168.1.20"], ["pi", "pi.local"], now=NOW)
    later = NOW + datetime.timedelta(days=100)
    same = ca.server_cert(["192.168.1.20"], ["pi.local"], now=later)
    assert not same.made and same.cert.serial_number == first.cert.serial_number


def test_a_new_lan_address_gets_a_new_certificate(tmp_path):
    ca = TableCA.at(tmp_path / "t.db-tls", now=NOW)
    first = ca.server_cert(["192.168.1.20"], ["pi", "pi.local"], now=NOW)
    moved = ca.server_cert(["192.168.1.37"], ["pi", "pi.local"], now=NOW)
    assert moved.made and moved.cert.serial_number != first.cert.serial_number
    assert "192.168.1.37" in TableCA.names_of(moved.cert)
    assert TableCA.names_of(moved.cert) >= {"pi", "pi.local"}


def test_a_certificate_near_its_end_or_from_another_ca_is_made_again(tmp_path):
    ca = TableCA.at(tmp_path / "t.db-tls", now=NOW)
    first = ca.server_cert(["192.168.1.20"], ["pi"], now=NOW)
    late = NOW + datetime.timedelta(days=SERVER_DAYS - 10)
    renewed = ca.server_cert(["192.168.1.20"], ["pi"], now=late)
    assert renewed.made and renewed.cert.not_valid_after_utc > first.cert.not_valid_after_utc
    other = TableCA.at(tmp_path / "other.db-tls")        # a new CA: the old cert is not its
    (tmp_path / "other.db-tls" / "server.crt").write_bytes(
        (tmp_path / "t.db-tls" / "server.crt").read_bytes())
    (tmp_path / "other.db-tls" / "server.key").write_bytes(
        (tmp_path / "t.db-tls" / "server.key").read_bytes())
    mine = other.server_cert(["192.168.1.20"], ["pi"])
    assert mine.made and mine.cert.issuer == other.cert.subject


def test_the_machine_names_are_the_lan_address_loopback_and_the_hostname():
    ips, dns = machine_names("0.0.0.0", "192.168.1.20")
    name = socket.gethostname().split(".")[0]
    assert ips[0] == "192.168.1.20" and "127.0.0.1" in ips
    if name != "localhost":
        assert dns[:2] == [name, f"{name}.local"]
    assert machine_names("10.0.0.5")[0] == ["10.0.0.5", "127.0.0.1"]


def test_serve_has_https_off_by_default_and_on_with_the_option():
    import argparse

    parser = add_arguments(argparse.ArgumentParser())
    plain = TableConfig.from_args(parser.parse_args([]))
    assert plain.https is False and plain.port == 8080
    on = TableConfig.from_args(parser.parse_args(["--https", "--https-port", "9443"]))
    assert on.https is True and on.https_port == 9443


def test_https_needs_a_store_file(tmp_path):
    from companion.app import TableServer

    t = TableServer(port=0, db_path=":memory:", pin=PIN, short_pin=True, source="mock",
                    https=True, https_port=0)
    try:
        with pytest.raises(ValueError, match="--db"):
            t.open()
    finally:
        t.close()


# -- the table served over HTTPS ---------------------------------------------------

@pytest.fixture
def table(tmp_path):
    t = start_table(tmp_path, https=True, limits=Limits(header_timeout_s=1.0))
    yield t
    t.close()


def csrf_post(conn, path: str, payload: dict):
    """A JSON POST on ``conn`` as a page makes it (its cookie and CSRF token
    fetched first); the response, unread."""
    conn.request("GET", "/api/csrf")
    r = conn.getresponse()
    cookie, token = r.getheader("Set-Cookie").split(";")[0], json.loads(r.read())["csrf"]
    conn.request("POST", path, body=json.dumps(payload), headers={
        "Cookie": cookie, "X-CSRF-Token": token, "Content-Type": "application/json"})
    return conn.getresponse()


def get(conn, path, headers=None):
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    return r.status, r.read()


def test_the_table_answers_over_https_verified_against_its_ca(table):
    c = https_conn(table)
    status, body = get(c, "/")
    assert status == 200 and b"<html" in body
    status, body = get(c, "/api/state")
    assert status == 200 and json.loads(body)["game"] == "chope"
    assert c.sock.version() in ("TLSv1.2", "TLSv1.3")
    c.close()
    plain = http.client.HTTPConnection("127.0.0.1", table.port, timeout=10)
    assert get(plain, "/")[0] == 200                      # plain HTTP still answers
    plain.close()


def test_a_client_that_does_not_trust_the_table_is_refused(table):
    stranger = ssl.create_default_context()              # the system's CAs only
    with socket.create_connection(("127.0.0.1", table.https_port), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            stranger.wrap_socket(raw, server_hostname="127.0.0.1")
    c = https_conn(table)
    assert get(c, "/")[0] == 200                          # and the table serves on
    c.close()


def read_events(resp, want: set[str]) -> list[str]:
    """The event names of the stream, read until every one of ``want`` came."""
    seen = []
    while not want <= set(seen):
        line = resp.fp.readline()
        assert line, f"the stream ended after {seen}"
        if line.startswith(b"event: "):
            seen.append(line[7:].strip().decode())
    return seen


def test_the_live_stream_works_over_https(table):
    c = https_conn(table)
    c.request("GET", "/events")
    stream = c.getresponse()
    assert stream.status == 200
    assert stream.getheader("Content-Type").startswith("text/event-stream")
    assert read_events(stream, {"snapshot"})[0] == "snapshot"
    # a press made over HTTPS too reaches the open stream
    p = https_conn(table)
    r = csrf_post(p, "/api/press", {"player": "Bo"})
    assert r.status == 200, r.read()
    r.read()
    assert "press" in read_events(stream, {"press", "heartbeat"})
    p.close()
    c.close()


def held_still(sock, polls: int = 100, some: bool = True):
    """A condition: bytes wait in ``sock``'s receive queue (any count, none
    too, unless ``some``) and their count has not changed for ``polls``
    polls in a row (the sender is stuck on the reader's window, or done)."""
    import fcntl
    import struct
    import termios

    last = [-1, 0]

    def cond() -> bool:
        n = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0]
        last[:] = [n, last[1] + 1] if n == last[0] and (n > 0 or not some) else [n, 0]
        return last[1] >= polls
    return cond


def test_an_answer_of_many_records_arrives_whole_through_a_narrow_socket(tmp_path):
    """render.js (over 50 KB: four TLS records) through a 4 KB send buffer
    and a reader with a 4 KB window: the socket takes a record in pieces,
    waitress is told a record's bytes went only once all of it did, and the
    phone gets every byte in order, twice on one connection, the last
    record too when the connection closes after it (the phone reads only
    once the table is stuck on its window)."""
    from pathlib import Path

    import companion.web

    t = start_table(tmp_path, https=True, limits=Limits(send_buffer=4096))
    try:
        want = (Path(companion.web.__file__).parent / "static/js/render.js").read_bytes()
        assert len(want) > 3 * 16 * 1024
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.settimeout(10)
        raw.connect(("127.0.0.1", t.https_port))
        s = table_tls(t).wrap_socket(raw, server_hostname="127.0.0.1")
        s.sendall(b"GET /static/js/render.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  b"GET /static/js/render.js HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Connection: close\r\n\r\n")
        wait_for(held_still(s))            # the table has sent all the windows take
        got = b""
        while chunk := s.recv(4096):
            got += chunk
            wait_for(held_still(s, 10, some=False))     # and again, to the end
        s.close()
        answers = got.split(b"HTTP/1.1 200 OK\r\n")[1:]
        assert len(answers) == 2
        for answer in answers:
            assert answer.split(b"\r\n\r\n", 1)[1] == want
    finally:
        t.close()


def wrong_pin(table, source: str) -> int:
    """One wrong PIN from ``source`` over HTTPS: the status."""
    c = https_conn(table, source)
    try:
        r = csrf_post(c, "/api/host/login", {"pin": "999999"})
        r.read()
        return r.status
    finally:
        c.close()


def test_the_pin_lockout_sees_each_phones_own_address_over_https(table):
    """Five wrong PINs lock 127.0.0.2 out; 127.0.0.3 (another phone) is not:
    the app sees the socket's address, not one proxy's."""
    assert [wrong_pin(table, "127.0.0.2") for _ in range(5)] == [401] * 5
    assert wrong_pin(table, "127.0.0.2") == 429
    assert wrong_pin(table, "127.0.0.3") == 401


def tls_socket(table, source: str) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", table.https_port), timeout=10,
                                   source_address=(source, 0))
    return table_tls(table).wrap_socket(raw, server_hostname="127.0.0.1")


def test_the_per_address_cap_counts_each_phone_over_https(tmp_path):
    t = start_table(tmp_path, https=True, limits=Limits(per_address=2))
    try:
        held = [tls_socket(t, "127.0.0.2") for _ in range(2)]
        wait_for(lambda: t.gate.open_count("127.0.0.2") == 2)
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            extra = tls_socket(t, "127.0.0.2")            # closed unanswered: no handshake
            extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert extra.recv(100) == b""
            raise ConnectionError("closed")
        assert t.gate.refused["per_address"] == 1
        other = https_conn(t, "127.0.0.3")                # another phone is let in
        assert get(other, "/api/state")[0] == 200
        other.close()
        for s in held:
            s.close()
    finally:
        t.close()


def test_plain_http_on_the_https_port_is_told_and_closed(table):
    with socket.create_connection(("127.0.0.1", table.https_port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ") and b"https://" in answer
    assert table.gate.refused["tls"] == 1


@pytest.mark.parametrize("garbage", [
    b"\x16\x03\x01\x00\x05hello" + os.urandom(200),           # a handshake record of nonsense
    b"\x16\x03\x03\xff\xff" + b"\x00" * 64,                     # a record longer than any
    b"\x16" + os.urandom(3000),
])
def test_a_garbled_handshake_is_closed_and_the_table_serves_on(table, garbage):
    with socket.create_connection(("127.0.0.1", table.https_port), timeout=10) as s:
        s.sendall(garbage)
        try:
            while s.recv(4096):
                pass                                       # an alert, then the end
        except ConnectionResetError:
            pass
    wait_for(lambda: table.gate.refused["tls"] == 1)
    c = https_conn(table)
    assert get(c, "/")[0] == 200
    c.close()


def test_a_handshake_that_never_ends_is_cut_like_a_slow_request(table):
    with socket.create_connection(("127.0.0.1", table.https_port), timeout=10) as s:
        s.sendall(b"\x16\x03\x01\x02\x00\x01")              # the start of a ClientHello, then nothing
        wait_for(lambda: table.gate.refused["slow"] == 1)
        s.settimeout(10)
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
    assert table.gate.open_count("127.0.0.1") == 0


def test_a_new_address_gets_a_certificate_for_it_while_serving(table):
    """A new DHCP lease: the keeper makes a certificate for the new address
    and the next connection is served with it."""
    keeper = table.keeper
    ips, dns = keeper.ips, keeper.dns
    ctx = table_tls(table)

    def handshake(name: str) -> None:
        with socket.create_connection(("127.0.0.1", table.https_port), timeout=10) as raw:
            ctx.wrap_socket(raw, server_hostname=name).close()

    with pytest.raises(ssl.SSLCertVerificationError):
        handshake("10.77.0.9")
    keeper.names = lambda: (["10.77.0.9", *ips], dns)
    assert keeper.refresh() is True
    handshake("10.77.0.9")
    assert keeper.refresh() is False                      # nothing changed since


# -- the pages a phone meets ---------------------------------------------------------

def test_the_trust_page_and_the_ca_certificate_are_on_plain_http(table):
    c = http.client.HTTPConnection("127.0.0.1", table.port, timeout=10)
    status, der = get(c, "/ca.crt")
    assert status == 200
    assert x509.load_der_x509_certificate(der) == table.keeper.ca.cert
    status, page = get(c, "/ca")
    assert status == 200
    text = page.decode()
    from companion.tablecert import fingerprint
    assert fingerprint(table.keeper.ca.cert) in text
    assert "Encryption & credentials > Install a certificate" in text
    assert "Certificate Trust Settings" in text
    assert table.secure_urls[0] in text                    # then the https page
    status, join = get(c, "/join")                         # every phone joins on plain HTTP
    assert status == 200 and table.urls[0].startswith("http://")
    assert table.urls[0] in join.decode() and f"{table.plain_urls[0]}ca" in join.decode()
    status, fr = get(c, "/ca?lang=fr")
    assert status == 200 and "Faire confiance à la table" in fr.decode()
    c.close()


def test_without_https_there_is_no_trust_page(tmp_path):
    t = start_table(tmp_path)
    try:
        c = http.client.HTTPConnection("127.0.0.1", t.port, timeout=10)
        assert get(c, "/ca")[0] == 404 and get(c, "/ca.crt")[0] == 404
        status, join = get(c, "/join")
        assert status == 200 and b"trust-once" not in join
        assert t.services.trust_url is None
        assert t.keeper is None and t.urls[0].startswith("http://")
        c.close()
    finally:
        t.close()


def test_the_start_up_text_says_where_a_phone_trusts_the_table(table):
    from companion.tablecert import fingerprint

    text = table.banner()
    assert f"    {table.urls[0]}" in text and table.urls[0].startswith("http://")
    assert table.secure_urls[0].startswith("https://") and table.secure_urls[0] in text
    assert f"{table.plain_urls[0]}ca" in text
    assert fingerprint(table.keeper.ca.cert) in text


def test_the_console_shows_the_https_address_and_where_a_phone_trusts_the_table(table):
    from tests.kit.web import http_host_login

    cookie, _ = http_host_login(table.port, PIN)
    c = http.client.HTTPConnection("127.0.0.1", table.port, timeout=10)
    status, page = get(c, "/host", {"Cookie": cookie})
    c.close()
    text = page.decode()
    assert status == 200 and 'id="trust-line"' in text
    assert f'href="{table.plain_urls[0]}ca"' in text and f"<code>{table.urls[0]}</code>" in text


def test_a_plain_page_names_the_https_origin_a_trusting_phone_goes_on_to(table):
    """On plain HTTP every page carries the https origin for the host the
    phone asked for (its script tries it: static/js/secure.js) and the
    Content-Security-Policy lets it connect there; on https, nothing."""
    c = http.client.HTTPConnection("127.0.0.1", table.port, timeout=10)
    for host in ("192.0.2.7:8080", "vm.local", "[fe80::1]:80"):
        c.request("GET", "/", headers={"Host": host})
        r = c.getresponse()
        page = r.read().decode()
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        origin = f"https://{name}:{table.https_port}"
        assert f'<meta name="tc-secure-origin" content="{origin}">' in page, host
        assert f"connect-src 'self' {origin};" in r.getheader("Content-Security-Policy")
        assert "js/secure.js" in page
    c.close()
    s = https_conn(table)
    s.request("GET", "/")
    r = s.getresponse()
    assert b"tc-secure-origin" not in r.read()
    assert "connect-src 'self';" in r.getheader("Content-Security-Policy")
    s.close()


def test_a_phone_that_never_reads_is_cut_over_https_as_over_http(tmp_path):
    """The gate's slow-reader caps see through TLS: four pipelined GETs of
    render.js (200 KB) over TLS to a reader with a 1 KB window that never
    reads: the connection is cut (output over the cap, or not moving), no
    worker thread is left waiting for it, and the table serves on."""
    t = start_table(tmp_path, https=True, limits=Limits(
        outbuf_cap=32 * 1024, drain_timeout_s=1.0, send_buffer=4096))
    try:
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        raw.bind(("127.0.0.2", 0))
        raw.settimeout(10)
        raw.connect(("127.0.0.1", t.https_port))
        s = table_tls(t).wrap_socket(raw, server_hostname="127.0.0.1")
        s.sendall(b"GET /static/js/render.js HTTP/1.1\r\nHost: t\r\n\r\n" * 4)
        wait_for(lambda: t.gate.refused["slow_reader"] + t.gate.refused["stalled"] >= 1)
        wait_for(lambda: t.gate.in_flight("127.0.0.2") == 0
                 and t.gate.open_count("127.0.0.2") == 0)
        assert t.gate.open_count("127.0.0.2") == 0
        s.close()
        c = https_conn(t)
        assert get(c, "/api/state")[0] == 200
        c.close()
    finally:
        t.close()
