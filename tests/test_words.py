"""The words a new host read wrong on the phones (issue 33, "The words and
console items above fixed, each with a test"): each line as the page gets
it (the log's line, the page's JSON, the league's and the command's words)."""

from __future__ import annotations

from companion.record.store import Store
from companion.table.session import TableSession
from tests.kit.moments import hawker_at_food_poisoning


# -- 1. Hawker Wars: Food Poisoning's log line and its banner -------------------

def test_food_poisoning_log_line_says_how_many_cards_the_loser_gives_up():
    """It read "cy let go first and loses  cards": the log words a race from
    the event alone, and the stake was only in the live race's info."""
    s = hawker_at_food_poisoning(Store(":memory:"), ["ana", "bo", "cy"])
    s.cancel_race()                              # the host logs the verdict by hand
    update = s.log({"type": "race", "loser": "cy"})
    assert update["data"]["line"] == "Food Poisoning! cy let go first and loses 2 cards"
    assert s.host_snapshot()["log"][-1]["line"].endswith("cy let go first and loses 2 cards")
    pending = s.host_snapshot()["view"]["pending"]
    assert (pending["kind"], pending["count"]) == ("lose", 2)   # the banner's "2 cards"


# -- 2. Chomp!: the Bad Chomp in an Ink Out ----------------------------------------

def test_a_bad_chomp_in_an_ink_out_says_the_bad_chomp_and_its_cost():
    """It read "Ink Out! Nobody" after cy's Bad Chomp cost cy 2 cards: the
    log's race line left out the penalties."""
    s = TableSession(Store(":memory:"))
    s.new_game("chomp", [{"name": n} for n in ("ana", "bo", "cy")])
    s.log({"type": "reveal", "cards": {"ana": "octopus", "bo": "seal", "cy": "plankton"}})
    s.cancel_race()
    update = s.log({"type": "race", "reason": "ink-out", "winner": None, "loser": None,
                    "tied": [], "false_starts": [], "ineligible": ["cy"]})
    assert update["data"]["line"] == (
        "Ink Out! nobody chomps; Bad Chomp: cy put their turned card and the top card "
        "of their pile in the centre")
    assert s.host_snapshot()["log"][-1]["line"] == update["data"]["line"]


# -- 3. The league screen: a game's place in its pod -------------------------------

def test_convention_standings_give_each_place_with_its_pod_size_not_a_fraction():
    """The standings read "1/3 2/3" (a fraction, like the points beside it):
    each place now comes as its round, place and pod size for the page to
    word ("1st of 3", "1er sur 3")."""
    from companion.league.convention import Convention
    from companion.league.store import LeagueStore
    from tests.kit.league import convention_result, plan

    store = LeagueStore(":memory:")
    conv = Convention(store, plan(), send=lambda t, p: None).open()
    pod = conv.current.pods[0]
    convention_result(store, pod.table, 1, [[p] for p in pod.players])
    conv.sweep()
    by_name = {s["name"]: s["places"] for s in conv.view()["standings"]}
    assert by_name[pod.players[1]] == [{"round": 1, "place": 2, "of": 3}]
    store.close()


# -- 4. The league commands: `--tables 2`, and a broker started as root ------------

def test_tables_given_as_a_number_are_that_many_tables(tmp_path):
    """`league serve --tables 2` seated one table called "2": a number
    alone is that many tables, named as `league config` names them."""
    from companion.league.__main__ import build_parser, main, table_ids

    assert table_ids("2") == ["t1", "t2"]
    assert table_ids("2,") == ["2"] and table_ids("t1,t3") == ["t1", "t3"]
    assert main(["config", "--out", str(tmp_path / "b"), "--tables", "3"]) == 0
    acl = (tmp_path / "b" / "acl").read_text()
    assert "user t1\n" in acl and "user t3\n" in acl and "user 3\n" not in acl
    args = build_parser().parse_args(["serve", "--broker", "mqtt://x:1", "--db", "l.db",
                                      "--player-names", "a,b,c,d", "--game", "chope",
                                      "--tables", "2"])
    assert table_ids(args.tables) == ["t1", "t2"]
    err = []

    class W:
        def write(self, s):
            err.append(s)
    assert main(["config", "--out", str(tmp_path / "c"), "--tables", "0"], stderr=W()) == 2
    assert "1 to 1000" in "".join(err)


def test_a_broker_config_made_without_run_as_starts_as_root(capsys):
    """Written by root without --run-as, mosquitto (started as root) dropped
    to its own user and could not open root's 0600 password file ("Unable
    to open pwfile"); the league now logs in."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    import pytest

    from companion.league.__main__ import main
    from tests.kit.mosquitto import MOSQUITTO, Mosquitto, free_port

    if not Path(MOSQUITTO).exists():
        pytest.skip("Debian's mosquitto is not installed")
    # a directory every user can enter (pytest's own are closed to others)
    root = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    root.chmod(0o755)
    port = free_port()
    try:
        assert main(["config", "--out", str(root / "broker"), "--tables", "2",
                     "--port", str(port), "--bind", "127.0.0.1"]) == 0
        said = capsys.readouterr().out
        assert "warning" not in said
        files = {"conf": root / "broker" / "mosquitto.conf"}
        broker = Mosquitto(files, port).start()
        try:
            assert login_works(port, "league", (root / "broker/secrets/league.password"))
        finally:
            broker.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if os.geteuid() == 0:
        assert "runs as 'mosquitto'" in said or "runs as 'root'" in said


def login_works(port: int, user: str, password_file) -> bool:
    """A client logs in to the broker on ``port`` (CONNACK success)."""
    import threading

    import paho.mqtt.client as mqtt

    done, result = threading.Event(), []
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"{user}-probe")
    client.username_pw_set(user, password_file.read_text().splitlines()[0])

    def on_connect(c, userdata, flags, reason_code, properties=None):
        result.append(not reason_code.is_failure)
        done.set()
    client.on_connect = on_connect
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        done.wait(30)
    finally:
        client.loop_stop()
        client.disconnect()
    return result == [True]
