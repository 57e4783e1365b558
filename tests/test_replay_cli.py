"""`companion replay`: good files, bad files, and the printed final state."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from companion.cli import main
from companion.record.gamefile import FORMAT, replay_lines

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def replay(path):
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", str(path), "--compact"], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.jsonl")))
def test_example_games_replay_to_a_finished_game(name):
    code, out, err = replay(EXAMPLES / f"{name}.jsonl")
    assert code == 0, err
    final = json.loads(out)
    assert final["game"] == name and final["finished"] is True
    assert set(final["scores"]) == set(final["players"])
    ranked = [p for group in final["ranking"] for p in group]
    assert sorted(ranked) == sorted(final["players"])
    best = max(final["scores"].values())
    assert all(final["scores"][p] == best for p in final["ranking"][0])
    assert final["current_player"] is None or final["current_player"] in final["players"]


def write(tmp_path, lines):
    p = tmp_path / "game.jsonl"
    p.write_text("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))
    return p


HEAD = {"format": FORMAT, "version": 1, "game": "chope", "players": ["ana", "bo"], "options": {}}


def test_illegal_event_exits_2_naming_line_and_rule(tmp_path):
    p = write(tmp_path, [HEAD, {"type": "flip", "card": "food:laksa"}, {"type": "flip", "card": "unicorn"}])
    code, out, err = replay(p)
    assert code == 2 and out == ""
    assert "line 3" in err and "illegal event" in err


def test_too_many_cards_of_a_kind_is_illegal(tmp_path):
    flips = [{"type": "flip", "card": "mynah"}, {"type": "race", "reason": "siam", "winner": None,
              "loser": None, "tied": ["ana", "bo"], "false_starts": [], "ineligible": []}] * 9
    code, _, err = replay(write(tmp_path, [{**HEAD, "options": {"mynahs": 8}}, *flips]))
    assert code == 2 and "line 18" in err


@pytest.mark.parametrize("lines, message", [
    ([], "line 1: empty file"),
    (["{oops"], "line 1: not JSON"),
    ([{**HEAD, "format": "other"}], "line 1: not a game file"),
    ([{**HEAD, "version": 9}], "line 1: unsupported version 9"),
    ([{**HEAD, "game": "snap"}], "line 1: unknown game 'snap'"),
    ([{**HEAD, "players": ["solo"]}], "line 1: Chope! is for 2 to 6 players"),
    ([HEAD, "[1]"], "line 2: illegal event: an event must be a JSON object"),
    ([HEAD, {"type": "undo"}], "line 2: illegal event: nothing to undo"),
    ([HEAD, "[" * 100_000 + "]" * 100_000], "line 2: not JSON (nested too deeply)"),
    ([{**HEAD, "game": "chomp", "options": {"counts": 5}}], "line 1: 'counts' must map"),
    ([HEAD, {"type": "flip", "card": "table:red"},
      {"type": "race", "reason": "chope", "winner": None, "tied": [],
       "spec": {"kind": "first-press", "players": ["ana"]},
       "edges": [{"player": "zed", "edge": "press", "t_ns": 1}]}],
     "line 3: illegal event: race record is malformed: edge from unknown player 'zed'"),
    ([HEAD, {"type": "flip", "card": "table:red"},
      {"type": "race", "reason": "chope", "spec": {"kind": "first-press", "players": ["ana"]},
       "edges": 7}], "line 3: illegal event: race record is malformed"),
])
def test_bad_files_exit_2(tmp_path, lines, message):
    code, _, err = replay(write(tmp_path, lines))
    assert code == 2 and message in err


def test_missing_file_exits_2(tmp_path):
    code, _, err = replay(tmp_path / "nope.jsonl")
    assert code == 2 and "nope.jsonl" in err


def test_undo_and_redo_in_a_file(tmp_path):
    base = [HEAD, {"type": "flip", "card": "food:laksa"}]
    plain = replay_lines(json.dumps(l) for l in base)
    undone = replay_lines(json.dumps(l) for l in base + [
        {"type": "flip", "card": "food:satay"}, {"type": "undo"}])
    assert undone.game.public_view(undone.state) == plain.game.public_view(plain.state)
    redone = replay_lines(json.dumps(l) for l in base + [
        {"type": "flip", "card": "food:satay"}, {"type": "undo"}, {"type": "redo"}])
    assert len(redone.events) == 2


def test_a_race_whose_verdict_does_not_match_its_edges_is_refused(tmp_path):
    spec = {"kind": "first-press", "players": ["ana", "bo"], "eligible": ["bo"], "arm_ns": 0,
            "deadline_ns": None, "tie_window_ns": 0, "debounce_ns": 20_000_000,
            "lockout_ns": None}
    edges = [{"player": "bo", "edge": "press", "t_ns": 5_000_000}]
    race = {"type": "race", "reason": "chope", "spec": spec, "edges": edges, "winner": "bo",
            "loser": None, "tied": [], "false_starts": [], "ineligible": []}
    flip = {"type": "flip", "card": "table:red"}
    code, out, _ = replay(write(tmp_path, [HEAD, flip, race]))
    assert code == 0
    code, _, err = replay(write(tmp_path, [HEAD, flip, {**race, "winner": None, "tied": ["bo"]}]))
    assert code == 2 and "does not match its edges" in err
