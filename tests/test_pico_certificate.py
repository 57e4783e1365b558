"""The host console shows the Pico box's last fairness certificate with its
date (companion/pico/certificate.py, GET /api/host/certificate): what
``python -m hardware.selftest --real --fairness`` kept is what the host sees."""

from __future__ import annotations

import json
import os
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


def _doc(**changes) -> dict:
    doc = {"date": "2026-12-01T20:00:00+00:00", "where": "/dev/buzzerbox",
           "fair_separation_us": 1.0,
           "rows": [{"separation_ns": 1_000, "trials": 1_000, "min_us": 0.9, "mean_us": 1.0,
                     "max_us": 1.1, "sd_us": 0.05, "ordered": 1.0}]}
    doc.update(changes)
    return doc


@pytest.mark.parametrize("doc", [
    _doc(date=None), _doc(date=[]), _doc(date="yesterday"), _doc(where=7),
    _doc(rows=None), _doc(rows="1 us"), _doc(rows=[]), _doc(rows=[None]),
    _doc(rows=[dict(_doc()["rows"][0], trials="1000")]),
    _doc(rows=[dict(_doc()["rows"][0], ordered=None)]),
    _doc(fair_separation_us="1"), _doc(fair_separation_us=[1]),
    # forged: 0.001 us and 10^9 trials, no box resolves or runs that
    _doc(fair_separation_us=0.001, rows=[dict(_doc()["rows"][0], separation_ns=1,
                                              trials=10**9)]),
    # a fair separation its own rows do not give
    _doc(fair_separation_us=0.3),
    [], "certificate", None,
], ids=lambda d: json.dumps(d)[:60])
def test_a_certificate_of_the_wrong_shape_is_no_certificate_and_the_console_loads(
        host, state_home, doc):
    """Issue 31: a value of the wrong type made the console answer 500 on
    every load, and a forged '0.001 us, 10^9 trials' was shown as is."""
    path = F.certificate_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    assert host.get("/api/host/certificate").json == {"certificate": None}
    r = host.get("/host")
    assert r.status_code == 200 and 'id="certificate"' not in r.get_data(as_text=True)


def test_the_good_shape_is_shown(host, state_home):
    path = F.certificate_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_doc()))
    assert host.get("/api/host/certificate").json["certificate"]["fair_separation_us"] == 1.0


def test_a_huge_file_or_a_fifo_at_the_path_is_no_certificate(host, state_home):
    """A 20 MB file took over 8 s to refuse; a FIFO hung the console."""
    path = F.certificate_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_doc(where="x" * 20_000_000)))
    assert host.get("/api/host/certificate").json == {"certificate": None}
    path.unlink()
    os.mkfifo(path)                         # nobody ever writes to it
    assert host.get("/api/host/certificate").json == {"certificate": None}
    assert host.get("/host").status_code == 200
