"""The buzzer box pin map: which GPIO each buzzer, LED and cue is wired to.

One file, ``hardware/pinmap.toml``, is the source of truth; ``wiring.md``
mirrors it and a copy ships inside the package (``companion/buzzers/pinmap.toml``)
so an installed companion finds it too. Numbers are BCM GPIO numbers for the
box on the Pi's header; the ``[pico]`` table is the other box, a Raspberry Pi
Pico's GP numbers (``firmware/boxconfig.py`` mirrors it; a test checks).

>>> pm = load_pinmap()
>>> pm.slots[0].button, pm.slots[0].led
(17, 27)
>>> pm.for_players(["ana", "bo"])["bo"].slot
2
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: BCM GPIO numbers a Pi's 40-pin header exposes.
GPIO_RANGE = range(0, 28)
#: Pins kept free for common add-ons (and why), refused unless allowed.
RESERVED = {
    0: "ID EEPROM (ID_SD)", 1: "ID EEPROM (ID_SC)",
    2: "I2C1 SDA", 3: "I2C1 SCL",
    7: "SPI0 CE1", 8: "SPI0 CE0", 9: "SPI0 MISO", 10: "SPI0 MOSI", 11: "SPI0 SCLK",
    14: "UART TXD", 15: "UART RXD",
}
MAX_PLAYERS = 6
LED_KINDS = ("digital", "pwm")
PIEZO_KINDS = ("active", "tonal")
#: The Pico's GPIOs on its edge pins (GP23 to GP25 and GP29 are on-board).
PICO_GPIOS = tuple(range(0, 23)) + (26, 27, 28)
#: The ten inputs the Pico's PIO samples in one instruction, in bit order.
PICO_SAMPLED = ("button 1", "button 2", "button 3", "button 4", "button 5", "button 6",
                "selftest_in", "test_out", "cue_led", "sync_mark")
#: Environment variable naming a pin map file to use instead of the default.
ENV_VAR = "COMPANION_PINMAP"


class PinMapError(ValueError):
    """A pin map that cannot be used."""


class PinMapDuplicate(PinMapError):
    """Two functions share one pin."""


class PinMapBadNumber(PinMapError):
    """A pin number that is not a GPIO of the 40-pin header."""


class PinMapReserved(PinMapError):
    """A pin kept free for I2C, SPI, UART or the ID EEPROM."""


@dataclass(frozen=True)
class Slot:
    """One buzzer: its slot number (1-based), button pin and LED pin."""

    slot: int
    button: int
    led: int | None = None


@dataclass(frozen=True)
class PicoPins:
    """The Pico box: GP numbers of its buttons, LEDs, cue and self-test.

    ``buttons``, ``selftest_in``, ``test_out``, ``cue_led`` and
    ``sync_mark`` are sampled together by one PIO instruction, so they are
    ten consecutive GPIOs in that order (:meth:`sampled`)."""

    buttons: tuple[int, ...]
    leds: tuple[int, ...]
    selftest_in: int
    test_out: int
    cue_led: int
    sync_mark: int
    piezo: int | None = None

    def sampled(self) -> tuple[int, ...]:
        return (*self.buttons, self.selftest_in, self.test_out, self.cue_led, self.sync_mark)

    def pins(self) -> dict[int, str]:
        """Every Pico GPIO in use and what it is for."""
        out = {g: f"buzzer {i} button" for i, g in enumerate(self.buttons, 1)}
        out.update({g: f"buzzer {i} led" for i, g in enumerate(self.leds, 1)})
        out.update({self.selftest_in: "self-test input", self.test_out: "test output",
                    self.cue_led: "cue led", self.sync_mark: "sync mark"})
        if self.piezo is not None:
            out[self.piezo] = "cue piezo"
        return out


@dataclass(frozen=True)
class PinMap:
    """A validated pin map."""

    slots: tuple[Slot, ...]
    cue_led: int | None = None
    piezo: int | None = None
    piezo_kind: str = "active"
    led_kind: str = "digital"
    source: str = "<pinmap>"
    pico: PicoPins | None = None

    def for_players(self, players) -> dict[str, Slot]:
        """Give the players slots in order (the first player gets slot 1)."""
        players = list(players)
        if len(players) > len(self.slots):
            raise PinMapError(f"{len(players)} players but the pin map {self.source} "
                              f"has only {len(self.slots)} buzzer slots")
        if len(set(players)) != len(players):
            raise PinMapError("player names must be distinct")
        return dict(zip(players, self.slots))

    def pins(self) -> dict[int, str]:
        """Every pin in use and what it is for, e.g. ``{17: "slot 1 button"}``."""
        out: dict[int, str] = {}
        for s in self.slots:
            out[s.button] = f"slot {s.slot} button"
            if s.led is not None:
                out[s.led] = f"slot {s.slot} led"
        if self.cue_led is not None:
            out[self.cue_led] = "cue led"
        if self.piezo is not None:
            out[self.piezo] = "cue piezo"
        return out


def default_pinmap_path() -> Path:
    """The pin map to use: ``$COMPANION_PINMAP``, else ``hardware/pinmap.toml``
    of the source tree this package runs from, else the copy in the package."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2] / "hardware" / "pinmap.toml"
    if repo.is_file():
        return repo
    return packaged_pinmap_path()


def packaged_pinmap_path() -> Path:
    """The copy of the pin map shipped inside the package."""
    return Path(str(resources.files(__package__).joinpath("pinmap.toml")))


def load_pinmap(path: str | os.PathLike | None = None) -> PinMap:
    """Read and validate a pin map file (the default one if ``path`` is None)."""
    path = Path(path) if path is not None else default_pinmap_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PinMapError(f"cannot read pin map {path}: {exc.strerror or exc}") from None
    return parse_pinmap(text, source=str(path))


def parse_pinmap(text: str, source: str = "<pinmap>") -> PinMap:
    """Validate the text of a pin map; a :class:`PinMapError` names what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PinMapError(f"{source}: not valid TOML: {exc}") from None

    def where(what):
        return f"{source}: {what}"

    led_kind = _parse_top_level(data, where)
    take = _HeaderPins(_parse_allow_reserved(data, where), where).take
    slots = _parse_players(data.get("player", []), take, where)
    cue_led, piezo, piezo_kind = _parse_cue(data.get("cue", {}), take, where)
    pico = _parse_pico(data["pico"], where) if "pico" in data else None
    return PinMap(slots, cue_led, piezo, piezo_kind, led_kind, source, pico)


def _parse_top_level(data, where) -> str:
    """Known keys only, schema 1; the LED kind."""
    known = {"schema", "led_kind", "allow_reserved", "player", "cue", "pico"}
    extra = sorted(set(data) - known)
    if extra:
        raise PinMapError(where(f"unknown key(s) {extra}"))
    if data.get("schema", 1) != 1:
        raise PinMapError(where(f"unsupported schema {data.get('schema')!r} "
                                f"(this companion reads 1)"))
    led_kind = data.get("led_kind", "digital")
    if led_kind not in LED_KINDS:
        raise PinMapError(where(f"led_kind must be one of {LED_KINDS}, not {led_kind!r}"))
    return led_kind


def _parse_allow_reserved(data, where) -> set[int]:
    """The reserved pins the map may use anyway."""
    allow = data.get("allow_reserved", [])
    if not isinstance(allow, list):
        raise PinMapError(where("allow_reserved must be a list of GPIO numbers"))
    allowed = set()
    for n in allow:
        _check_number(n, where("allow_reserved"))
        allowed.add(n)
    return allowed


class _HeaderPins:
    """Hands out header pins: each a real GPIO, used once, not reserved unless allowed."""

    def __init__(self, allowed: set[int], where):
        self.allowed, self.where = allowed, where
        self.used: dict[int, str] = {}

    def take(self, value, what, optional=False):
        where = self.where
        if value is None and optional:
            return None
        _check_number(value, where(what))
        if value in RESERVED and value not in self.allowed:
            raise PinMapReserved(where(
                f"{what} uses GPIO{value}, kept free for {RESERVED[value]}; choose another "
                f"pin or list {value} in allow_reserved"))
        if value in self.used:
            raise PinMapDuplicate(where(f"GPIO{value} is used twice: {self.used[value]} "
                                        f"and {what}"))
        self.used[value] = what
        return value


def _parse_players(players, take, where) -> tuple[Slot, ...]:
    """The ``[[player]]`` tables: one buzzer each, slots numbered 1, 2, 3... in order."""
    if not isinstance(players, list) or not players:
        raise PinMapError(where("no [[player]] tables: at least one buzzer is needed"))
    if len(players) > MAX_PLAYERS:
        raise PinMapError(where(f"{len(players)} [[player]] tables; at most {MAX_PLAYERS}"))
    slots = []
    for i, entry in enumerate(players, 1):
        if not isinstance(entry, dict):
            raise PinMapError(where(f"player entry {i} must be a table"))
        extra = sorted(set(entry) - {"slot", "button", "led"})
        if extra:
            raise PinMapError(where(f"player entry {i}: unknown key(s) {extra}"))
        slot = entry.get("slot", i)
        if slot != i or isinstance(slot, bool):
            raise PinMapError(where(f"player entry {i} has slot {slot!r}; slots must be "
                                    f"numbered 1, 2, 3... in order"))
        if "button" not in entry:
            raise PinMapError(where(f"slot {i} has no button pin"))
        button = take(entry["button"], f"slot {i} button")
        led = take(entry.get("led"), f"slot {i} led", optional=True)
        slots.append(Slot(i, button, led))
    return tuple(slots)


def _parse_cue(cue, take, where) -> tuple[int | None, int | None, str]:
    """The ``[cue]`` table: its LED pin, piezo pin and piezo kind."""
    if not isinstance(cue, dict):
        raise PinMapError(where("[cue] must be a table"))
    extra = sorted(set(cue) - {"led", "piezo", "piezo_kind"})
    if extra:
        raise PinMapError(where(f"[cue]: unknown key(s) {extra}"))
    cue_led = take(cue.get("led"), "cue led", optional=True)
    piezo = take(cue.get("piezo"), "cue piezo", optional=True)
    piezo_kind = cue.get("piezo_kind", "active")
    if piezo_kind not in PIEZO_KINDS:
        raise PinMapError(where(f"[cue] piezo_kind must be one of {PIEZO_KINDS}, "
                                f"not {piezo_kind!r}"))
    return cue_led, piezo, piezo_kind


def _parse_pico(table, where) -> PicoPins:
    """The ``[pico]`` table: GP numbers, each once, the sampled ten in a row."""
    if not isinstance(table, dict):
        raise PinMapError(where("[pico] must be a table"))
    keys = {"buttons", "leds", "selftest_in", "test_out", "cue_led", "sync_mark", "piezo"}
    extra = sorted(set(table) - keys)
    if extra:
        raise PinMapError(where(f"[pico]: unknown key(s) {extra}"))
    missing = sorted(keys - {"piezo"} - set(table))
    if missing:
        raise PinMapError(where(f"[pico]: missing {missing}"))
    used: dict[int, str] = {}

    def gp(value, what):
        if isinstance(value, bool) or not isinstance(value, int):
            raise PinMapBadNumber(where(f"[pico] {what}: {value!r} is not a GP number"))
        if value not in PICO_GPIOS:
            raise PinMapBadNumber(where(f"[pico] {what}: GP{value} is not on the Pico's edge "
                                        f"pins (GP0 to GP22, GP26 to GP28)"))
        if value in used:
            raise PinMapDuplicate(where(f"[pico] GP{value} is used twice: {used[value]} "
                                        f"and {what}"))
        used[value] = what
        return value

    buttons, leds = table["buttons"], table["leds"]
    if not isinstance(buttons, list) or len(buttons) != 6:
        raise PinMapError(where("[pico] buttons must list 6 GP numbers (the box has 6 buzzers)"))
    if not isinstance(leds, list) or len(leds) != len(buttons):
        raise PinMapError(where("[pico] leds must list one GP number per button"))
    pins = PicoPins(tuple(gp(b, f"button {i}") for i, b in enumerate(buttons, 1)),
                    tuple(gp(b, f"led {i}") for i, b in enumerate(leds, 1)),
                    gp(table["selftest_in"], "selftest_in"), gp(table["test_out"], "test_out"),
                    gp(table["cue_led"], "cue_led"), gp(table["sync_mark"], "sync_mark"),
                    gp(table["piezo"], "piezo") if table.get("piezo") is not None else None)
    s = pins.sampled()
    if list(s) != list(range(s[0], s[0] + len(s))):
        raise PinMapError(where("[pico] the sampled inputs (" + ", ".join(PICO_SAMPLED) + ") "
                                f"must be ten consecutive GPIOs in that order, not {list(s)}: "
                                f"the PIO reads them in one instruction"))
    return pins


def _check_number(value, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PinMapBadNumber(f"{what}: {value!r} is not a GPIO number (an integer, BCM numbering)")
    if value not in GPIO_RANGE:
        raise PinMapBadNumber(f"{what}: GPIO{value} does not exist on the 40-pin header "
                              f"(GPIO{GPIO_RANGE.start} to GPIO{GPIO_RANGE.stop - 1})")
