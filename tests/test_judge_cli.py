"""`companion judge`, to the letter of the race kinds' contract (docs/rules-notes.md, "Races")."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from companion.cli import main


def run(args, lines):
    out, err = io.StringIO(), io.StringIO()
    text = "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines)
    code = main(["judge", *args], stdin=io.StringIO(text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_judge_prints_the_contract_fields():
    code, out, err = run(["first-press", "--players", "A,B,C"], [
        {"player": "B", "edge": "press", "t_ns": 1_500_000},
        {"player": "A", "edge": "press", "t_ns": 1_000_000},
    ])
    assert code == 0, err
    v = json.loads(out)
    assert v["winner"] == "A" and v["loser"] is None and v["tied"] == []
    assert v["order"] == [{"player": "A", "t_ns": 1_000_000, "offset_ns": 0, "offset_us": 0.0},
                          {"player": "B", "t_ns": 1_500_000, "offset_ns": 500_000,
                           "offset_us": 500.0}]
    assert v["false_starts"] == [] and v["ineligible"] == []


def test_judge_options_reach_the_referee():
    code, out, _ = run(["first-press", "--players", "A,B,C", "--eligible", "B,C",
                        "--arm-ns", "2000000", "--tie-window-us", "100", "--debounce-ms", "5",
                        "--lockout-ms", "50"], [
        {"player": "A", "edge": "press", "t_ns": 3_000_000},
        {"player": "B", "edge": "press", "t_ns": 1_000_000},
        {"player": "C", "edge": "press", "t_ns": 4_000_000},
        {"player": "C", "edge": "release", "t_ns": 4_050_000},
    ])
    v = json.loads(out)
    assert code == 0
    assert v["ineligible"] == ["A"] and v["false_starts"] == ["B"] and v["winner"] == "C"


def test_judge_last_press_deadline():
    code, out, _ = run(["last-press", "--players", "A,B", "--deadline-ns", "10"], [
        {"player": "A", "edge": "press", "t_ns": 5}, {"player": "B", "edge": "press", "t_ns": 11}])
    assert code == 0 and json.loads(out)["loser"] == "B"


def test_judge_first_release():
    code, out, _ = run(["first-release", "--players", "A,B", "--arm-ns", "100"], [
        {"player": "A", "edge": "press", "t_ns": 1}, {"player": "B", "edge": "press", "t_ns": 2},
        {"player": "B", "edge": "release", "t_ns": 500_000_000}])
    assert code == 0 and json.loads(out)["loser"] == "B"


@pytest.mark.parametrize("line, message", [
    ("not json", "line 2: not JSON"),
    ({"player": "Z", "edge": "press", "t_ns": 1}, "line 2: unknown player 'Z'"),
    ({"player": "A", "edge": "hold", "t_ns": 1}, "line 2: 'edge' must be 'press' or 'release'"),
    ({"player": "A", "edge": "press"}, "line 2: 't_ns' must be an integer"),
    ({"player": "A", "edge": "press", "t_ns": -4}, "line 2: 't_ns' must not be negative"),
    ({"player": "A", "edge": "press", "t_ns": 1.5}, "line 2: 't_ns' must be an integer"),
    ([1, 2], "line 2: an edge must be a JSON object"),
    ("[" * 100_000 + "]" * 100_000, "line 2: not JSON (nested too deeply)"),
    ('{"player": "A", "edge": "press", "t_ns": ' + "9" * 5000 + "}", "line 2: not JSON"),
])
def test_judge_bad_input_exits_2_naming_line_and_problem(line, message):
    code, out, err = run(["first-press", "--players", "A,B"],
                         [{"player": "A", "edge": "press", "t_ns": 1}, line])
    assert code == 2 and out == ""
    assert message in err


def test_judge_unknown_option_exits_2(capsys):
    code, out, err = run(["first-press", "--players", "A", "--fast"], [])
    assert code == 2
    assert "unrecognized arguments: --fast" in capsys.readouterr().err


def test_judge_bad_spec_exits_2():
    code, _, err = run(["first-press", "--players", "A,B", "--eligible", "Q"], [])
    assert code == 2 and "eligible player(s) ['Q']" in err


def test_judge_as_a_real_command():
    proc = subprocess.run([sys.executable, "-m", "companion", "judge", "last-press",
                           "--players", "A,B"], input='{"player":"A","edge":"press","t_ns":7}\n',
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)["loser"] == "B"


def test_serve_settings_parse_and_refuse_unknown_names():
    from companion.tableconfig import parse_settings

    assert parse_settings(["tie_window_us=500", "lockout-ms=none", "auto_start=yes"]) == {
        "tie_window_us": 500, "lockout_ms": None, "auto_start": True}
    with pytest.raises(ValueError, match="NAME one of"):
        parse_settings(["tie_window=5"])
    with pytest.raises(ValueError, match="whole number"):
        parse_settings(["hold_ms=fast"])


@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])
def test_judge_names_a_line_that_is_not_utf8_under_every_locale(locale):
    """Issue 9, item 8: bytes that are not UTF-8 exit 2 naming the line, never a traceback."""
    import os
    import subprocess
    import sys

    data = b'{"player":"A","edge":"press","t_ns":1}\n\xff\n'
    p = subprocess.run([sys.executable, "-m", "companion", "judge", "first-press",
                        "--players", "A,B"], input=data, capture_output=True, timeout=60,
                       env=dict(os.environ, LC_ALL=locale, PYTHONUTF8="0" if locale == "C" else "1"))
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 2, err
    assert "line 2" in err and "not UTF-8" in err and "Traceback" not in err
    assert p.stdout == b""
