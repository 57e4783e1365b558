"""The edge-source seam: the registry, the one place a source is chosen
(flag > COMPANION_SOURCE > auto-detection in the order pico, gpio, mock), the
sink through which a source reports edges, faults and its status, and the
clear one-line refusal of GPIO buzzers where there is no GPIO."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from companion.buzzers import base
from companion.buzzers.base import (ENV_VAR, EdgeSource, NoSource, SourceError, SourceFault,
                                    SourceStatus, SourceUnavailable, choose_source, open_source,
                                    register_source, source_class, source_names)
from companion.buzzers.mock import ClockedMockFactory, MockSource
from companion.buzzers.pipeline import Pipeline, RefereeConsumer
from companion.races.edges import ButtonEdge, Edge
from companion.races.referee import FIRST_PRESS, MS, RaceSpec, Referee
from tests.kit.helpers import fake_distribution

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def registry(monkeypatch):
    """Each test may register sources: the registry is restored after it,
    and neither the environment nor this machine's hardware decides."""
    saved = dict(base._REGISTRY)
    monkeypatch.setattr(base, "_ERRORS", {})
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr("companion.buzzers.gpio.on_a_pi", lambda: False)
    yield base._REGISTRY
    base._REGISTRY.clear()
    base._REGISTRY.update(saved)


class Tapper(EdgeSource):
    """A source a test drives: ``tap`` emits, ``trouble`` reports a fault,
    ``unplug``/``replug`` report the connection."""

    name = "tapper"
    precision_ns = 1_000_000
    present = False

    def __init__(self, buzzers, pinmap=None, *, port: str = "/dev/null", **options):
        super().__init__(buzzers, pinmap, **options)
        self.port = port
        self.connected = True

    @classmethod
    def detect(cls) -> bool:
        return cls.present

    def tap(self, buzzer: str, t_ns: int) -> None:
        self._emit(ButtonEdge(buzzer, True, t_ns))
        self._emit(ButtonEdge(buzzer, False, t_ns + 80 * MS))

    def trouble(self, kind: str, message: str, buzzer=None, t_ns=None) -> None:
        self._report_fault(SourceFault(kind, message, buzzer, t_ns))

    def status(self) -> SourceStatus:
        return SourceStatus(self.name, self.connected, self.precision_ns,
                            error_bound_ns=250_000, detail=self.port)

    def unplug(self) -> None:
        self.connected = False
        self._report_status(self.status())


# ---------------------------------------------------------------------------
# The registry


def test_the_built_in_sources_are_registered():
    assert {"gpio", "mock", "pico", "none"} <= set(source_names())
    assert source_class("mock") is MockSource
    assert source_class("none") is NoSource


def test_a_registered_class_is_opened_by_name_with_its_options():
    register_source("tapper", Tapper)
    src = open_source("tapper", ["1", "2"], port="/dev/ttyACM0")
    assert isinstance(src, Tapper) and src.buzzers == ("1", "2") and src.port == "/dev/ttyACM0"
    src.close()


def test_a_lazy_source_is_imported_only_when_chosen(monkeypatch):
    register_source("later", "tests_no_such_module:Source")     # nothing imported yet
    assert "later" in source_names()
    with pytest.raises(SourceUnavailable, match="later"):
        source_class("later")


def test_a_missing_pico_module_leaves_every_other_source_working():
    register_source("pico", "companion.buzzers.no_such_pico_module:PicoSource")
    with pytest.raises(SourceUnavailable, match="try --source mock"):
        open_source("pico", ["1"])
    assert choose_source(None) == "mock"        # auto skips it, no error
    src = open_source(None, ["1", "2"])
    assert isinstance(src, MockSource)
    src.close()


def test_the_built_in_sources_are_found_in_their_modules_without_importing_them():
    """No list names them: each module of companion/buzzers that declares an
    EdgeSource subclass with a `name` is read (not imported: pico's serial
    library loads only when chosen), and subclasses of subclasses count."""
    assert base.declared_sources() == {
        "none": "companion.buzzers.base:NoSource", "gpio": "companion.buzzers.gpio:GpioSource",
        "mock": "companion.buzzers.mock:MockSource", "pico": "companion.buzzers.pico:PicoSource"}


def test_a_source_module_dropped_into_the_package_is_found_by_name(tmp_path):
    (tmp_path / "line.py").write_text(
        "from companion.buzzers.base import EdgeSource\n"
        "import no_such_serial_library\n"
        "class LineSource(EdgeSource):\n    name = 'line'\n    precision_ns = 1_000_000\n"
        "class FastLine(LineSource):\n    name = 'fastline'\n"
        "class NotASource:\n    name = 'nope'\n")
    (tmp_path / "broken.py").write_text("class (:\n")
    found = base.declared_sources(tmp_path, "extra")
    assert found == {"fastline": "extra.line:FastLine", "line": "extra.line:LineSource"}
    assert "SyntaxError" in base.source_errors()["extra.broken"]


@pytest.fixture
def source_distribution(tmp_path, monkeypatch):
    """A distribution declaring buzzer sources in the companion.sources
    entry-point group (a .dist-info on sys.path, as pip would leave it)."""
    fake_distribution(tmp_path, "tc-tap-source", {"tc_tap_source": (
        "from companion.buzzers.base import NoSource\n"
        "class TapSource(NoSource):\n    name = 'tap'\n")}, {base.ENTRY_POINT_GROUP: {
            "tap": "tc_tap_source:TapSource", "gone": "tc_no_such_module:Source",
            "mock": "tc_tap_source:TapSource"}})
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(base, "_entry_points_read", False)
    yield
    sys.modules.pop("tc_tap_source", None)


def test_an_entry_point_source_is_opened_by_name(source_distribution):
    assert {"tap", "gone"} <= set(source_names())
    assert source_class("mock") is MockSource              # a taken name keeps its source
    src = open_source("tap", ["1"])
    assert type(src).__name__ == "TapSource"
    src.close()
    with pytest.raises(SourceUnavailable, match="gone"):
        source_class("gone")                               # recorded, not a crash
    assert "tc_no_such_module" in base.source_errors()["gone"]
    assert choose_source(None) in ("mock", "none")


@pytest.mark.parametrize("name, cls", [("", Tapper), ("two words", Tapper),
                                       ("x", "no_colon_here"), ("x", dict)])
def test_bad_registrations_are_refused(name, cls):
    with pytest.raises(SourceError):
        register_source(name, cls)


def test_an_unknown_source_names_the_known_ones():
    with pytest.raises(SourceError, match="unknown source 'carrier-pigeon'.*gpio.*mock"):
        open_source("carrier-pigeon", ["1"])


def test_a_source_refuses_bad_buzzer_ids_and_unknown_options():
    with pytest.raises(SourceError, match="distinct"):
        Tapper(["1", "1"])
    with pytest.raises(SourceError, match="non-empty"):
        Tapper(["1", ""])
    with pytest.raises(SourceError, match="no option baud"):
        Tapper(["1"], baud=9600)


# ---------------------------------------------------------------------------
# Choosing: flag > environment > auto-detection


def test_the_flag_beats_the_environment(monkeypatch):
    register_source("tapper", Tapper)
    monkeypatch.setenv(ENV_VAR, "tapper")
    assert choose_source("mock") == "mock"


def test_the_environment_beats_auto_detection(monkeypatch):
    register_source("tapper", Tapper)
    monkeypatch.setenv(ENV_VAR, "tapper")
    assert choose_source(None) == "tapper"
    assert choose_source("auto") == "tapper"      # "auto" is no choice: the variable decides


def test_an_unknown_name_in_the_environment_is_an_error(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "smoke")
    with pytest.raises(SourceError, match="unknown source 'smoke'"):
        choose_source(None)


def test_auto_detection_tries_pico_then_gpio_then_mock(monkeypatch):
    class Pico(Tapper):
        name = "pico"

    class Gpio(Tapper):
        name = "gpio"

    register_source("pico", Pico)
    register_source("gpio", Gpio)
    assert choose_source(None) == "mock"            # neither present: mock pins
    Gpio.present = True
    assert choose_source(None) == "gpio"
    Pico.present = True
    assert choose_source(None) == "pico"            # a Pico plugged into a Pi wins
    assert choose_source("gpio") == "gpio"          # unless asked otherwise


def test_a_detect_that_raises_is_skipped():
    class Broken(Tapper):
        name = "pico"

        @classmethod
        def detect(cls):
            raise OSError("no /dev/serial")

    register_source("pico", Broken)
    assert choose_source(None) == "mock"


# ---------------------------------------------------------------------------
# No GPIO here: one clear line


def test_gpio_where_there_is_none_is_one_line_suggesting_mock():
    with pytest.raises(SourceUnavailable) as info:
        open_source("gpio", ["1"])
    message = str(info.value)
    assert "\n" not in message and "--source mock" in message


def _one_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1, text
    return lines[0]


def test_companion_serve_source_gpio_without_gpio(capsys, tmp_path):
    from companion.cli import main

    rc = main(["serve", "--source", "gpio", "--host", "127.0.0.1", "--port", "0",
               "--db", str(tmp_path / "t.db"), "--pin", "123456"])
    out = capsys.readouterr()
    assert rc == 2
    line = _one_line(out.out + out.err)
    assert line.startswith("companion serve: ") and "--source mock" in line


def test_companion_buzz_source_gpio_without_gpio():
    from companion.cli import main

    out, err = io.StringIO(), io.StringIO()
    rc = main(["buzz", "--source", "gpio"], stdin=io.StringIO(""), stdout=out, stderr=err)
    assert rc == 2
    line = _one_line(out.getvalue() + err.getvalue())
    assert line.startswith("companion buzz: ") and "--source mock" in line


@pytest.mark.skipif(os.path.exists("/dev/gpiochip0"), reason="this machine has GPIO")
def test_the_real_command_says_it_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPIOZERO_PIN_FACTORY", ENV_VAR)}
    p = subprocess.run([sys.executable, "-m", "companion", "serve", "--source", "gpio",
                        "--port", "0", "--db", str(tmp_path / "t.db")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "--source mock" in _one_line(p.stdout + p.stderr)


# ---------------------------------------------------------------------------
# The sink: edges, faults and status reach the consumer


def test_a_bare_callable_sink_takes_the_edges():
    got = []
    src = Tapper(["1"])
    src.start(got.append)
    src.tap("1", 5 * MS)
    assert got == [ButtonEdge("1", True, 5 * MS), ButtonEdge("1", False, 85 * MS)]
    src.close()


def test_a_fault_and_the_status_reach_a_referee_consumer():
    src = Tapper(["1", "2"], port="/dev/ttyACM0")
    heard = []
    consumer = RefereeConsumer(Referee(src.buzzers), clock=lambda: 0,
                               on_source_fault=heard.append)
    pipe = Pipeline(src, consumer).start(thread=False)
    src.trouble("gap", "sequence 17 after 15: 1 frame lost", t_ns=9 * MS)
    src.unplug()
    assert heard == []                     # the source's thread only queued them
    pipe.pump(10 * MS)
    assert heard == [SourceFault("gap", "sequence 17 after 15: 1 frame lost", None, 9 * MS)]
    assert consumer.source_faults == heard
    assert consumer.status == SourceStatus("tapper", False, 1_000_000, 250_000, "/dev/ttyACM0")
    assert pipe.source_status == consumer.status and pipe.faults == heard
    pipe.close()


def test_faults_and_edges_arrive_in_the_order_they_were_reported():
    src = Tapper(["1", "2"])
    order = []

    class Consumer:
        clock = staticmethod(lambda: 0)

        def feed_edge(self, edge):
            order.append(("edge", edge.buzzer, edge.pressed))

        def tick(self, now_ns=None):
            pass

        def next_deadline(self):
            return None

        def source_fault(self, fault):
            order.append(("fault", fault.buzzer, fault.kind))

    pipe = Pipeline(src, Consumer()).start(thread=False)
    src.tap("1", MS)
    src.trouble("stuck", "held 12 s at the box", buzzer="2")
    src._emit(ButtonEdge("2", False, 3 * MS))
    pipe.pump(4 * MS)
    assert order == [("edge", "1", True), ("edge", "1", False), ("fault", "2", "stuck"),
                     ("edge", "2", False)]
    pipe.close()


def test_a_source_fault_reaches_the_table_session(tmp_path):
    from companion.record.store import Store
    from companion.table.session import TableSession

    store = Store(tmp_path / "t.db")
    try:
        session = TableSession(store)
        session.new_game("chope", [{"name": "Ana", "buzzer": "1"}, {"name": "Bo", "buzzer": "2"}])
        src = Tapper(["1", "2"])
        pipe = Pipeline(src, session).start(thread=False)
        src.trouble("disconnected", "the buzzer box went away", buzzer="2")
        pipe.pump()
        faults = session.snapshot()["faults"]
        assert any("the buzzer box went away" in str(f) for f in faults), faults
        pipe.close()
    finally:
        store.close()


def test_a_consumer_without_fault_handling_still_runs(caplog):
    src = Tapper(["1"])
    ref = Referee(src.buzzers)

    class Bare:                     # feed_edge, tick, next_deadline, clock: nothing more
        clock = staticmethod(lambda: 0)

        def feed_edge(self, edge):
            ref.feed(Edge(edge.buzzer, edge.pressed, edge.t_ns))

        def tick(self, now_ns=None):
            ref.poll(now_ns or 0)

        def next_deadline(self):
            return ref.next_deadline()

    pipe = Pipeline(src, Bare()).start(thread=False)
    pipe.call(ref.start, RaceSpec(FIRST_PRESS, src.buzzers, arm_ns=0))
    src.trouble("corrupt", "bad CRC")
    src.tap("1", 2 * MS)
    pipe.pump(200 * MS)
    assert ref.race.verdict.winner == "1"
    assert "bad CRC" in caplog.text and pipe.faults[0].kind == "corrupt"
    pipe.close()


# ---------------------------------------------------------------------------
# Buzzer ids and player names are distinct types


def test_a_button_edge_is_not_an_edge():
    b = ButtonEdge("2", True, 7)
    assert b != Edge("2", True, 7)
    assert b.as_edge("Bo") == Edge("Bo", True, 7)
    assert ButtonEdge.from_json(b.to_json()) == b
    assert b.to_json() == {"buzzer": "2", "edge": "press", "t_ns": 7}
    with pytest.raises(ValueError, match="'buzzer'"):
        ButtonEdge.from_json({"player": "2", "edge": "press", "t_ns": 7})
    with pytest.raises(ValueError, match="t_ns"):
        ButtonEdge.from_json({"buzzer": "2", "edge": "press", "t_ns": 1.5})


def test_mock_pins_emit_button_edges_on_their_clock():
    f = ClockedMockFactory(start_ns=10 * MS)
    src = open_source("mock", ["1", "2"], pin_factory=f)
    got = []
    try:
        src.start(got.append)
        src.press("2", 12 * MS)
        assert got == [ButtonEdge("2", True, 12 * MS)]
        assert src.status().source == "mock" and src.status().connected
    finally:
        src.close()
        f.close()
        f.reset()
