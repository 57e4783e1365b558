"""TLS tested, not only parsed (issue 24): a CA and a server certificate made
here with ``openssl``, Mosquitto listening with TLS (``config --tls-cert
--tls-key``), the table and the league connecting with ``mqtts://`` and
the CA file; a broker whose certificate another CA signed is refused."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from companion.league.app import LeagueServer
from companion.league.publisher import LeaguePublisher
from companion.league.topics import LeagueError
from tests.kit.helpers import wait_for
from tests.kit.league import SERVED, Table
from tests.kit.mosquitto import MOSQUITTO, Broker

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(not Path(MOSQUITTO).exists() or OPENSSL is None,
                                reason="needs Debian's mosquitto and openssl")


def make_ca(root: Path, name: str) -> tuple[Path, Path]:
    root.mkdir(parents=True, exist_ok=True)
    key, crt = root / f"{name}.key", root / f"{name}.crt"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(crt), "-days", "2", "-subj", f"/CN={name}"],
                   check=True, capture_output=True)
    return key, crt


def make_server_cert(root: Path, ca_key: Path, ca_crt: Path) -> tuple[Path, Path]:
    key, csr, crt = root / "server.key", root / "server.csr", root / "server.crt"
    subprocess.run([OPENSSL, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    ext = root / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    subprocess.run([OPENSSL, "x509", "-req", "-in", str(csr), "-CA", str(ca_crt), "-CAkey",
                    str(ca_key), "-CAcreateserial", "-out", str(crt), "-days", "2",
                    "-extfile", str(ext)], check=True, capture_output=True)
    return key, crt


@pytest.fixture
def pki(tmp_path):
    ca_key, ca_crt = make_ca(tmp_path / "pki", "league-ca")
    key, crt = make_server_cert(tmp_path / "pki", ca_key, ca_crt)
    _, other_ca = make_ca(tmp_path / "other", "someone-else")
    return {"ca": ca_crt, "cert": crt, "key": key, "other_ca": other_ca}


@pytest.fixture
def broker(tmp_path, pki):
    b = Broker(tmp_path / "broker", ["t1", "t2"], tls={"cert": pki["cert"], "key": pki["key"]}).start()
    yield b
    b.stop()


# paho leaves the socket of a refused TLS handshake to the garbage collector
@pytest.mark.filterwarnings("ignore::ResourceWarning",
                            "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_table_and_the_league_talk_over_tls_and_a_wrong_ca_is_refused(tmp_path, broker, pki):
    assert "certfile" in broker.files["conf"].read_text()
    league = LeagueServer(broker.url, tmp_path / "league.db", broker.creds("league"),
                          host="127.0.0.1", port=0, ca_file=str(pki["ca"]),
                          heartbeat_s=1.0, **SERVED).open().start()
    t1, t2 = Table(tmp_path, broker, "t1"), Table(tmp_path, broker, "t2")
    try:
        assert wait_for(lambda: league.subscriber.connected, timeout=15), (
            league.subscriber.status())
        t1.pub = LeaguePublisher(t1.session, t1.store, broker.url, "t1", t1.creds,
                                 reconnect_s=(1, 1), ca_file=str(pki["ca"])).start()
        t2.pub = LeaguePublisher(t2.session, t2.store, broker.url, "t2", t2.creds,
                                 reconnect_s=(1, 1), ca_file=str(pki["other_ca"])).start()
        for t in (t1, t2):
            t.session.new_game("chope", ["ana", "bo"])
            t.session.log({"type": "flip", "card": "food:laksa"})
        assert t1.pub.delivered(15), t1.pub.status()
        assert league.store.event_ids("t1") == t1.ids()
        # t2 trusts another CA: the broker's certificate is refused, nothing goes out
        assert wait_for(lambda: t2.pub.status()["error"] is not None, timeout=15)
        assert "certificate" in t2.pub.status()["error"]
        assert not t2.pub.status()["connected"] and t2.pub.status()["acked"] == 0
        assert league.store.event_ids("t2") == []
        # and a plain mqtt:// connection to the TLS listener gets nowhere
        plain = Table(tmp_path / "plain", broker, "t2")
        plain.pub = LeaguePublisher(plain.session, plain.store,
                                    f"mqtt://127.0.0.1:{broker.port}", "t2", plain.creds,
                                    reconnect_s=(1, 1)).start()
        plain.session.new_game("chope", ["ana", "bo"])
        assert not plain.pub.flush(3) and plain.pub.status()["acked"] == 0
        plain.close()
    finally:
        t1.close()
        t2.close()
        league.close()


def test_a_ca_file_is_only_for_mqtts_and_must_be_readable(tmp_path):
    from companion.league.client import mqtt_client
    from companion.league.topics import BrokerURL

    with pytest.raises(LeagueError, match="mqtts"):
        mqtt_client(BrokerURL.parse("mqtt://h:1"), None, "x", (1, 1), ca_file="ca.pem")
    with pytest.raises(LeagueError, match="CA file"):
        mqtt_client(BrokerURL.parse("mqtts://h:1"), None, "x", (1, 1),
                    ca_file=str(tmp_path / "missing.pem"))
