"""The host console shows the Pico box's last fairness certificate with its
date (companion/pico/certificate.py, GET /api/host/certificate): what
``python -m hardware.selftest --real --fairness`` kept is what the host sees."""

from __future__ import annotations

import random

import pytest

from hardware import fairness as F


@pytest.fixture
def state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path


def kept(rows=None):
    rows = rows or [F.certify_separation(500, 50, random.Random(1)),
                    F.certify_separation(1_000, 50, random.Random(2))]
    F.save(rows, "/dev/buzzerbox, firmware 1.0.0")
    return rows


def test_the_certificate_route_needs_the_login(client, state_home):
    kept()
    assert client.get("/api/host/certificate").status_code == 401


def test_no_certificate_yet_is_null_and_no_card(host, state_home):
    assert host.get("/api/host/certificate").json == {"certificate": None}
    assert 'id="certificate"' not in host.get("/host").get_data(as_text=True)


def test_the_last_certificate_is_served_with_its_date_and_shown_on_the_console(host, state_home):
    rows = kept()
    cert = host.get("/api/host/certificate").json["certificate"]
    assert cert["date"].startswith("20") and cert["date"].endswith("+00:00")
    assert cert["where"] == "/dev/buzzerbox, firmware 1.0.0"
    assert cert["fair_separation_us"] == F.fair_separation_us(rows)
    assert [r["separation_ns"] for r in cert["rows"]] == [500, 1_000]
    assert cert["rows"][1]["trials"] == 50 and cert["rows"][1]["ordered"] == rows[1].ordered
    html = host.get("/host").get_data(as_text=True)
    assert 'id="certificate"' in html
    assert f'datetime="{cert["date"]}"' in html
    assert cert["date"][:10] in html and "/dev/buzzerbox" in html
    assert "1 µs</td>" in html


def test_a_newer_certificate_replaces_the_older(host, state_home):
    kept()
    first = host.get("/api/host/certificate").json["certificate"]
    bad = [F.Row(1_000, 10, -0.2, 0.5, 1.0, 0.3, 0.9)]       # not always right
    F.save(bad, "/dev/ttyACM1, firmware 1.1.0")
    cert = host.get("/api/host/certificate").json["certificate"]
    assert cert["where"].startswith("/dev/ttyACM1") and cert["fair_separation_us"] is None
    assert first["where"] != cert["where"]
    assert "No separation" in host.get("/host").get_data(as_text=True)


def test_a_damaged_certificate_file_is_not_shown(host, state_home):
    path = F.certificate_path()
    path.parent.mkdir(parents=True)
    path.write_text('{"date": "2025-01-01", "rows": [{"separation_ns": 1}]}')
    assert host.get("/api/host/certificate").json == {"certificate": None}
    path.write_text("not json")
    assert host.get("/api/host/certificate").json == {"certificate": None}
